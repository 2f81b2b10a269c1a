"""The certification evidence bundle: run every check, keep every log, fingerprint every file.

`tools/evidence` calls ``main``. Each step is a command of the project's own; its output is
shown as it runs and kept under build/evidence/logs/. The bundle ends with the tool versions,
the git commit and a SHA-256 manifest of every file in it.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "build" / "evidence"


def _steps(py: str) -> list[tuple[str, list[str], tuple[int, ...]]]:
    """(name, command, exit codes that count as success)."""
    examples = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").glob("*.onnx"))
    return [
        ("prove", ["tools/prove"], (0,)),
        ("crosshair", ["tools/crosshair"], (0,)),
        ("test", ["tools/test"], (0,)),
        # the examples include models built to be refused: the check is that each verdict is
        # the expected one, which examples/expected.json records and the step compares
        ("validate", [py, "-m", "sonnx.trace.examples", *examples], (0,)),
        ("trace", [py, "-m", "sonnx.cli", "trace", "--format", "html,md,json,csv",
                   "-o", str(OUT / "trace")], (0,)),
    ]


def _run(name: str, cmd: list[str], log: Path) -> tuple[int, float]:
    t0 = time.monotonic()
    with log.open("w", encoding="utf-8") as fh:
        env = {**os.environ, "SONNX_EVIDENCE_STEPS": "1"}  # tests: prove/crosshair are steps here
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1, env=env)
        assert proc.stdout is not None
        for line in proc.stdout:
            fh.write(line)
            print(f"  {name} | {line}", end="", flush=True)
        rc = proc.wait()
    return rc, time.monotonic() - t0


def _version(cmd: list[str]) -> str:
    exe = shutil.which(cmd[0]) or (str(ROOT / ".venv" / "bin" / cmd[0])
                                   if (ROOT / ".venv" / "bin" / cmd[0]).exists() else None)
    if exe is None:
        return "not found"
    try:
        out = subprocess.run([exe, *cmd[1:]], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"error: {exc}"
    text = (out.stdout or out.stderr).strip().splitlines()
    return f"{text[0] if text else '?'} ({exe})"


def versions() -> dict:
    from importlib import metadata
    pkgs = {}
    for name in ("numpy", "onnx", "onnxruntime", "ml_dtypes", "crosshair-tool", "icontract",
                 "hypothesis", "pytest", "z3-solver"):
        try:
            pkgs[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pkgs[name] = "not installed"
    venv_z3 = ROOT / ".venv" / "bin" / "z3"
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": pkgs,
        "why3": _version(["why3", "--version"]),
        "z3 (venv, used by the proofs)": _version([str(venv_z3), "--version"]),
        "z3 (system)": _version(["/usr/bin/z3", "--version"]) if Path("/usr/bin/z3").exists() else "not found",
        "cvc4": _version(["cvc4", "--version"]),
        "cvc5": _version(["cvc5", "--version"]),
    }


def git_state() -> dict:
    def git(*args: str) -> str:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""
    return {"commit": git("rev-parse", "HEAD") or "unknown",
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def manifest(folder: Path) -> str:
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "SHA256SUMS"):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        lines.append(f"{digest}  {path.relative_to(folder).as_posix()}")
    return "\n".join(lines) + "\n"


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "logs").mkdir(exist_ok=True)
    results = []
    steps = _steps(sys.executable)
    for n, (name, cmd, ok_codes) in enumerate(steps, 1):
        print(f"[{n}/{len(steps)}] {name}: {' '.join(cmd)}", flush=True)
        rc, secs = _run(name, cmd, OUT / "logs" / f"{name}.log")
        verdict = "pass" if rc in ok_codes else "FAIL"
        results.append({"step": name, "command": cmd, "exit_code": rc, "verdict": verdict,
                        "seconds": round(secs, 1)})
        print(f"[{n}/{len(steps)}] {name}: {verdict} (exit {rc}, {secs:.1f} s)", flush=True)
    summary = {"git": git_state(), "versions": versions(), "steps": results}
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (OUT / "SHA256SUMS").write_text(manifest(OUT), encoding="utf-8")
    failed = [r["step"] for r in results if r["verdict"] != "pass"]
    print(f"evidence: {OUT.relative_to(ROOT)}/ written; "
          + (f"FAILED steps: {', '.join(failed)}" if failed else "every step passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
