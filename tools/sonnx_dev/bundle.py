"""Check an evidence bundle (what tools/evidence writes) and compare two.

    tools/bundle verify DIR          the bundle is intact and its verdicts are the ones this
                                     checkout's judge gives on its evidence
    tools/bundle compare DIR_A DIR_B  same steps, same verdicts, same requirement states

verify: (1) every file listed in SHA256SUMS has its hash and no file is unlisted; (2)
manifest.json and summary.json name the same commit, and summary's step verdicts match their
exit codes; (3) when this checkout is at the bundle's commit with no local change, `sonnx
trace` is run again on the bundle's junit.xml, proofs.json and crosshair.json into a temporary
folder and every requirement's state and the summary must equal trace/trace.json's (at another
commit this part is reported "not re-judged", exit 1: a certifier checks out the commit first).

compare: the steps' verdicts, the trace summary, each requirement's state, and, through
compare_runs, each proof goal's and CrossHair case's verdict. Iteration counts and times may
differ; they are not verdicts.

Exit 0: holds / same; 1: a check failed or a verdict differs (each listed); 2: not a bundle.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from . import compare_runs
from .evidence import ROOT, git_state


class NotABundle(ValueError):
    pass


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NotABundle(f"{path}: unreadable ({exc})") from None
    if not isinstance(data, dict):
        raise NotABundle(f"{path}: not a JSON object")
    return data


def hash_problems(folder: Path) -> list[str]:
    """Files whose SHA-256 is not the one SHA256SUMS lists, files it does not list, files gone."""
    sums = folder / "SHA256SUMS"
    if not sums.is_file():
        raise NotABundle(f"{folder}: no SHA256SUMS (not an evidence bundle)")
    listed = {}
    for n, line in enumerate(sums.read_text(encoding="utf-8").splitlines(), 1):
        digest, sep, rel = line.partition("  ")
        if not sep or len(digest) != 64:
            return [f"SHA256SUMS line {n} is malformed: {line[:80]!r}"]
        listed[rel] = digest
    problems = []
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != "SHA256SUMS"}
    for rel, digest in sorted(listed.items()):
        path = folder / rel
        if rel not in present:
            problems.append(f"{rel}: listed in SHA256SUMS but missing")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            problems.append(f"{rel}: changed since the run (SHA-256 differs from SHA256SUMS)")
    problems += [f"{rel}: not listed in SHA256SUMS (added after the run)" for rel in sorted(present - set(listed))]
    return problems


def _states(trace: dict) -> dict[str, str]:
    return {r["id"]: r["state"] for r in trace.get("requirements", [])}


def record_problems(folder: Path) -> list[str]:
    man, summ = _json(folder / "manifest.json"), _json(folder / "summary.json")
    problems = []
    commit = man.get("git", {}).get("commit")
    if summ.get("commit") != commit:
        problems.append(f"summary.json names commit {summ.get('commit')}, manifest.json {commit}")
    for s in summ.get("steps", []):
        if (s.get("exit_code") == 0) != (s.get("verdict") == "pass"):
            problems.append(f"step {s.get('step')}: verdict {s.get('verdict')!r} with exit code {s.get('exit_code')}")
    return problems


def remake(folder: Path, root: Path) -> dict | str:
    """This checkout's `sonnx trace` on the bundle's evidence: the JSON report, or why not."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "trace.json"
        cmd = [sys.executable, "-m", "sonnx.cli", "trace", "--root", str(root), "--format", "json", "-o", str(out),
               "--junit", str(folder / "junit.xml"), "--proofs", str(folder / "proofs.json"),
               "--crosshair", str(folder / "crosshair.json")]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=root, timeout=3600,
                           env={**os.environ, "PYTHONPATH": str(root / "src")})
        if not out.exists():
            return f"the trace could not be re-made: {p.stderr.strip()[:300]}"
        return _json(out)


def rejudge(folder: Path, root: Path = ROOT, make=remake) -> list[str]:
    """Run this checkout's trace judge on the bundle's evidence; the differences from trace.json."""
    recorded = _json(folder / "trace" / "trace.json")
    again = make(folder, root)
    if isinstance(again, str):
        return [again]
    problems = []
    if again.get("summary") != recorded.get("summary"):
        problems.append(f"trace summary re-judged {again.get('summary')} vs recorded {recorded.get('summary')}")
    a, b = _states(again), _states(recorded)
    problems += [f"{rid}: re-judged {a.get(rid)} vs recorded {b.get(rid)}" for rid in sorted(set(a) | set(b))
                 if a.get(rid) != b.get(rid)]
    return problems


def verify(folder: Path, root: Path = ROOT, make=remake) -> tuple[list[str], list[str]]:
    """(problems, notes)."""
    problems = hash_problems(folder) + record_problems(folder)
    notes = []
    commit = _json(folder / "manifest.json").get("git", {}).get("commit")
    here = git_state(root)
    if here["commit"] != commit or here["dirty"]:
        problems.append(f"not re-judged: this checkout is at {here['commit'][:12]}"
                        f"{' with local changes' if here['dirty'] else ''}, the bundle was made at "
                        f"{str(commit)[:12]}: check out that commit and verify again")
    else:
        problems += rejudge(folder, root, make)
        notes.append(f"re-judged with this checkout's sonnx trace at {commit[:12]}: same states")
    return problems, notes


def compare(a: Path, b: Path) -> list[str]:
    diffs = []
    sa, sb = _json(a / "summary.json"), _json(b / "summary.json")
    va = {s["step"]: s.get("verdict") for s in sa.get("steps", [])}
    vb = {s["step"]: s.get("verdict") for s in sb.get("steps", [])}
    diffs += [f"step {k}: {va.get(k)} vs {vb.get(k)}" for k in sorted(set(va) | set(vb)) if va.get(k) != vb.get(k)]
    ta, tb = _json(a / "trace" / "trace.json"), _json(b / "trace" / "trace.json")
    if ta.get("summary") != tb.get("summary"):
        diffs.append(f"trace summary {ta.get('summary')} vs {tb.get('summary')}")
    xa, xb = _states(ta), _states(tb)
    diffs += [f"{rid}: {xa.get(rid)} vs {xb.get(rid)}" for rid in sorted(set(xa) | set(xb)) if xa.get(rid) != xb.get(rid)]
    for name in ("proofs.json", "crosshair.json"):
        ra, rb = a / name, b / name
        if ra.exists() != rb.exists():
            diffs.append(f"{name}: present in only one bundle")
        elif ra.exists():
            try:
                verdicts, _, _ = compare_runs.compare(_json(ra), _json(rb))
            except ValueError as exc:
                diffs.append(f"{name}: {exc}")
            else:
                diffs += [f"{name}: {v}" for v in verdicts]
    return diffs


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    try:
        if len(argv) == 2 and argv[0] == "verify":
            folder = Path(argv[1])
            problems, notes = verify(folder)
            for line in notes:
                print(f"bundle: {line}")
            for line in problems:
                print(f"  {line}")
            print(f"bundle {folder}: " + (f"{len(problems)} problem(s)" if problems else "intact, same verdicts"))
            return 1 if problems else 0
        if len(argv) == 3 and argv[0] == "compare":
            diffs = compare(Path(argv[1]), Path(argv[2]))
            for line in diffs:
                print(f"  DIFFERS {line}")
            print(f"bundles {argv[1]} and {argv[2]}: " + (f"{len(diffs)} difference(s)" if diffs else "same verdicts"))
            return 1 if diffs else 0
    except NotABundle as exc:
        print(f"bundle: {exc}", file=sys.stderr)
        return 2
    print("usage: tools/bundle verify DIR | tools/bundle compare DIR_A DIR_B", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
