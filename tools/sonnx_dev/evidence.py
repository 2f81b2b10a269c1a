"""The certification evidence bundle: run every check, keep every log, fingerprint every file.

`tools/evidence` calls ``main`` (a development tool: it runs the checkout's own tools, so it
lives under tools/ and is not shipped in the wheel). The bundle folder is emptied first, so that everything in it
was made by this run. Each step is a command of the project's own; its output is shown as it
runs, each line with the elapsed time, and kept under build/evidence/logs/. The bundle ends
with manifest.json (the machine, every installed package, BLAS, CPU, the commit and whether
the tree differs from it, each step's input hash), summary.json (each step's verdict),
index.html (opens on the verdicts, links the rest) and SHA256SUMS of exactly these files.

The CrossHair campaign (two processes at a time) runs beside the steps after it, the tests (one
process) among them, and is waited for before the trace, which reads every step's output: on
two cores that saves the time of the shorter of the two (issue 28, CI time). No step reads
another's output before the trace, and every verdict is bounded by steps or iterations, never
by the clock, so running them side by side changes no verdict; each keeps its own log and its
own time in summary.json, and its lines are shown as they come, prefixed with its name.
"""
from __future__ import annotations

import datetime
import hashlib
import html
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from sonnx.trace.inputs import STEP_GLOBS, step_inputs

ROOT = Path(__file__).resolve().parents[2]   # tools/sonnx_dev/evidence.py
OUT = ROOT / "build" / "evidence"
# steps that run beside the ones after them, up to the first step of JOIN_BEFORE (or the end)
BESIDE = ("crosshair",)
JOIN_BEFORE = ("trace",)
PYTEST_SUMMARY = re.compile(r"^=*\s*(\d+ (passed|failed|error|errors|skipped|deselected)\b.*?)\s*=*$")


def _steps(py: str, out: Path) -> list[tuple[str, list[str], dict[str, str]]]:
    """(name, command, extra environment); exit 0 is success for every step."""
    examples = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").glob("*.onnx"))
    return [
        ("prove", ["tools/prove"], {}),
        # the C kernels: extracted from the proofs, equal to the committed C, built, no FMA
        ("extract-c", ["tools/extract-c"], {}),
        ("crosshair", ["tools/crosshair"], {}),
        ("test", ["tools/test"], {"SONNX_JUNIT": str(out / "junit.xml")}),
        # the examples include models built to be refused: the check is that each verdict is
        # the expected one, which examples/expected.json records and the step compares
        ("validate", [py, "-m", "sonnx_dev.examples", *examples], {}),
        ("trace", [py, "-m", "sonnx.cli", "trace", "--format", "html,md,json,csv,reqif,lobster", "--output-dir", str(out / "trace"),
                   "--junit", str(out / "junit.xml"), "--proofs", str(out / "proofs.json"),
                   "--crosshair", str(out / "crosshair.json")], {}),
        # the tool qualification kit (DO-330 TQL-5) of validate and trace, from the trace and
        # the test results just written (docs/qualification.md)
        ("qualification", [py, "-m", "sonnx_dev.qualification", "--bundle", str(out)], {}),
    ]


def _run(name: str, cmd: list[str], env: dict[str, str], log: Path, t_start: float,
         quiet_after: float = 60.0) -> tuple[int, float]:
    """Run one step, showing each output line with the time elapsed since the run began, and a
    "still running" line whenever the step has been silent for ``quiet_after`` seconds."""
    t0 = time.monotonic()
    last = [t0]
    done = threading.Event()

    def heartbeat() -> None:
        while not done.wait(quiet_after / 4):
            if time.monotonic() - last[0] >= quiet_after:
                print(f"{time.monotonic() - t_start:7.1f}s {name} | (still running, "
                      f"{time.monotonic() - t0:.0f} s in this step)", flush=True)
                last[0] = time.monotonic()

    with log.open("w", encoding="utf-8") as fh:
        try:
            proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, bufsize=1, env={**os.environ, **env})
        except OSError as exc:
            fh.write(f"cannot start {cmd[0]}: {exc}\n")
            print(f"  {name} | cannot start {cmd[0]}: {exc}", flush=True)
            return 127, time.monotonic() - t0
        assert proc.stdout is not None
        watcher = threading.Thread(target=heartbeat, daemon=True)
        watcher.start()
        for line in proc.stdout:
            last[0] = time.monotonic()
            fh.write(line)
            print(f"{time.monotonic() - t_start:7.1f}s {name} | {line}", end="", flush=True)
        rc = proc.wait()
        done.set()
        watcher.join()
    return rc, time.monotonic() - t0


def _version(cmd: list[str]) -> str:
    venv = ROOT / ".venv" / "bin" / cmd[0]
    exe = str(venv) if venv.exists() else shutil.which(cmd[0])
    if exe is None:
        return "not found"
    try:
        out = subprocess.run([exe, *cmd[1:]], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"error: {exc}"
    text = (out.stdout or out.stderr).strip().splitlines()
    return f"{text[0] if text else '?'} ({exe})"


def _blas() -> dict:
    """The BLAS numpy was built with, and the one loaded in this process (threadpoolctl)."""
    import numpy as np
    try:
        build = np.show_config(mode="dicts").get("Build Dependencies", {})
    except TypeError:                   # numpy < 1.25 has no mode="dicts"
        build = {}
    try:
        from threadpoolctl import threadpool_info
        np.ones((2, 2)) @ np.ones((2, 2))         # make sure the BLAS library is loaded
        loaded = [{k: v for k, v in i.items() if k in ("user_api", "internal_api", "version",
                                                      "num_threads", "architecture", "filepath")}
                  for i in threadpool_info()]
    except ImportError:
        loaded = "threadpoolctl not installed"
    return {"numpy_build": build, "loaded": loaded}


def _cpu() -> dict:
    info: dict = {"cores": os.cpu_count(), "machine": platform.machine()}
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return info
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("model name", "flags") and key not in info:
            info[key] = value.strip().split() if key == "flags" else value.strip()
    return info


def packages() -> dict[str, str]:
    """Every distribution installed in this interpreter's environment, name -> version."""
    from importlib import metadata
    out = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            out[name] = dist.version
    return dict(sorted(out.items(), key=lambda kv: kv[0].lower()))


def git_state(root: Path = ROOT) -> dict:
    """The commit, and whether the tree differs from it: modified, staged or untracked files
    (ignored ones, such as build/, do not count)."""
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        except OSError:
            return None
        return out.stdout if out.returncode == 0 else None
    status = git("status", "--porcelain", "--untracked-files=all")
    changes = status.splitlines() if status is not None else []
    return {"commit": (git("rev-parse", "HEAD") or "unknown").strip(),
            "dirty": True if status is None else bool(changes), "changes": changes[:200]}


TOOL_VERSIONS = (("why3", ["why3", "--version"]), ("z3", ["z3", "--version"]), ("cvc4", ["cvc4", "--version"]),
                 ("cvc5", ["cvc5", "--version"]), ("gappa", ["gappa", "--version"]), ("gcc", ["gcc", "--version"]),
                 ("binutils", ["objdump", "--version"]))


def trace_standing(out: Path) -> dict | None:
    """The trace's summary and the rows that are not plain green, from the bundle's trace.json."""
    try:
        data = json.loads((out / "trace" / "trace.json").read_text(encoding="utf-8"))
        rows = [(r["id"], r["state"], r["title"]) for r in data["requirements"] if r["state"] != "ok"]
        return {"summary": data["summary"], "rows": rows}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def manifest(started: str) -> dict:
    pkgs = packages()
    return {
        "date_utc": started,
        "git": git_state(),
        "python": sys.version,
        "platform": platform.platform(),
        "cpu": _cpu(),
        "jit": {name: pkgs.get(name, "not installed") for name in ("llvmlite",)},   # the exact fold's compiler
        "blas": _blas(),
        "packages": pkgs,
        # every program whose output is evidence: the provers, Gappa (the float lemmas), gcc and
        # binutils (the extracted C kernels are compiled, and their object code checked for FMA)
        "tools": {name: _version(cmd) for name, cmd in TOOL_VERSIONS},
        "inputs": {step: step_inputs(ROOT, step) for step in STEP_GLOBS},
    }


def sha256sums(folder: Path) -> str:
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "SHA256SUMS"):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        lines.append(f"{digest}  {path.relative_to(folder).as_posix()}")
    return "\n".join(lines) + "\n"


def index_html(results: list[dict], man: dict, out: Path) -> str:
    e = html.escape
    ok = all(r["verdict"] == "pass" for r in results)
    rows = "".join(
        f"<tr><td>{e(r['step'])}</td><td class='{'ok' if r['verdict'] == 'pass' else 'bad'}'>{e(r['verdict'])}</td>"
        f"<td>{r['exit_code']}</td><td>{r['seconds']} s</td>"
        f"<td><a href='logs/{e(r['step'])}.log'>log</a></td></tr>" for r in results)
    links = [(p, p) for p in ("trace/trace.html", "trace/trace.md", "trace/sonnx.reqif", "trace/lobster.conf",
                              "qualification/tor.md", "qualification/limitations.md", "qualification/configuration.json",
                              "junit.xml", "proofs.json",
                              "crosshair.json", "validate/examples.txt", "manifest.json", "summary.json",
                              "SHA256SUMS") if p == "SHA256SUMS" or (out / p).exists()]
    git = man["git"]
    standing = trace_standing(out)
    if standing is None:
        trace = "<p class='bad'>No trace summary in this bundle (trace/trace.json missing or unreadable).</p>"
        partial = 0
    else:
        sm = standing["summary"]
        partial = sm.get("partial", 0)
        # a partial row is not a failure (a reviewed gap), but it is not "covered" either: say so here
        trace = (f"<h2>Requirements</h2><p>{sm['requirements']} requirements: "
                 f"<span class='ok'>{sm['ok']} covered</span>, {partial} partial (a part not proved as "
                 f"stated, with a reviewed justification), {sm['suspect']} suspect, "
                 f"<span class='{'bad' if sm['defect'] else 'ok'}'>{sm['defect']} with defects</span>.</p>"
                 + ("<ul>" + "".join(f"<li><a href='trace/trace.html#{e(rid)}'>{e(rid)}</a> {e(state)}: {e(title)}</li>"
                                     for rid, state, title in standing["rows"]) + "</ul>" if standing["rows"] else ""))
    headline = ("FAILED" if not ok else
                f"every step passed; {partial} requirement(s) partial" if partial else "every step passed")
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>SONNX evidence</title>"
            "<style>body{font-family:system-ui,sans-serif;margin:2rem}td,th{padding:.3rem .8rem;"
            "border-bottom:1px solid #ddd;text-align:left}.ok{color:#0d6b2c;font-weight:600}"
            ".bad{color:#9b1c1c;font-weight:600}</style></head><body>"
            f"<h1>SONNX evidence: <span class='{'ok' if ok else 'bad'}'>{e(headline)}</span></h1>"
            f"<p>commit {e(git['commit'])}{' (tree differs from it)' if git['dirty'] else ''}, {e(man['date_utc'])}</p>"
            f"<table><tr><th>step</th><th>verdict</th><th>exit</th><th>time</th><th></th></tr>{rows}</table>"
            + trace +
            "<h2>Files</h2><ul>" + "".join(f"<li><a href='{e(p)}'>{e(t)}</a></li>" for p, t in links)
            + "</ul><p>Check the bundle with <code>sha256sum -c SHA256SUMS</code> in this folder.</p>"
            "</body></html>\n")


def pytest_summary(log: Path) -> str | None:
    """The last pytest summary line of a log ("N passed, M skipped in T s"), if any."""
    if not log.exists():
        return None
    found = None
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        m = PYTEST_SUMMARY.match(line.strip())
        if m:
            found = m.group(1)
    return found


def byte_compile(root: Path = ROOT) -> None:
    """Compile src/, tools/ and tests/ into Python's bytecode cache once, before the steps.
    Every test and CrossHair process imports sonnx anew; where PYTHONDONTWRITEBYTECODE is set
    (this project's CI machines set it) none of them writes the cache, so each compiled the
    same sources again, about 0.1 s of CPU per process. A cache entry is used only while its
    source file is unchanged (size and modification time), so this changes no verdict."""
    import compileall
    for folder in ("src", "tools", "tests"):
        compileall.compile_dir(root / folder, quiet=2, workers=1)


def run(steps: list[tuple[str, list[str], dict[str, str]]], out: Path) -> int:
    """Empty ``out``, run ``steps`` in order, write the bundle; 1 when any step failed."""
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    shutil.rmtree(out, ignore_errors=True)
    if out.exists():
        print(f"evidence: cannot empty {out}", file=sys.stderr)
        return 2
    (out / "logs").mkdir(parents=True)
    man = manifest(started)      # before the steps: the inputs they are run on
    t_start = time.monotonic()
    byte_compile()
    results: list[dict | None] = [None] * len(steps)
    beside: list[threading.Thread] = []

    def one(n: int, name: str, cmd: list[str], env: dict[str, str]) -> None:
        rc, secs = _run(name, cmd, env, out / "logs" / f"{name}.log", t_start)
        verdict = "pass" if rc == 0 else "FAIL"
        results[n - 1] = {"step": name, "command": cmd, "exit_code": rc, "verdict": verdict,
                          "seconds": round(secs, 1)}
        print(f"[{n}/{len(steps)}] {name}: {verdict} (exit {rc}, {secs:.1f} s, "
              f"{time.monotonic() - t_start:.0f} s in all)", flush=True)

    def join() -> None:
        for t in beside:
            t.join()
        beside.clear()

    for n, (name, cmd, env) in enumerate(steps, 1):
        if name in JOIN_BEFORE:
            join()
        if name in BESIDE:
            print(f"[{n}/{len(steps)}] {name}: {' '.join(cmd)} (beside the next steps)", flush=True)
            t = threading.Thread(target=one, args=(n, name, cmd, env), name=name)
            beside.append(t)
            t.start()
            continue
        print(f"[{n}/{len(steps)}] {name}: {' '.join(cmd)}", flush=True)
        one(n, name, cmd, env)
    join()
    results = [r or {"step": steps[i][0], "command": steps[i][1], "exit_code": None,
                     "verdict": "FAIL", "seconds": None} for i, r in enumerate(results)]
    (out / "manifest.json").write_text(json.dumps(man, indent=1) + "\n", encoding="utf-8")
    summary = {"commit": man["git"]["commit"], "dirty": man["git"]["dirty"], "steps": results,
               "seconds": round(time.monotonic() - t_start, 1)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out / "index.html").write_text(index_html(results, man, out), encoding="utf-8")
    (out / "SHA256SUMS").write_text(sha256sums(out), encoding="utf-8")
    tests = pytest_summary(out / "logs" / "test.log")
    if tests:
        print(tests)            # unprefixed, for CI to count the tests
    failed = [r["step"] for r in results if r["verdict"] != "pass"]
    where = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    print(f"evidence: {where}/ written in {summary['seconds']} s; "
          + (f"FAILED steps: {', '.join(failed)}" if failed else "every step passed"))
    return 1 if failed else 0


def main() -> int:
    return run(_steps(sys.executable, OUT), OUT)


if __name__ == "__main__":
    sys.exit(main())
