"""The proof step's driver (tools/prove): runs Why3, a development tool not shipped in the
wheel. It replays every session of proofs/ under the step budgets recorded in it, proves the
Python front-end files, lists the assumptions from Why3's view, and writes
build/evidence/proofs.json; reading, summarising and judging what Why3 answered is
sonnx.trace.proofs (shipped with the read-only trace).

    python -m sonnx_dev.prove run                  # the proof step (tools/prove)
    python -m sonnx_dev.prove replay proofs/X.mlw  # one session, replayed as the step does it
    python -m sonnx_dev.prove remove proofs/X.mlw "GOAL'vc=LEMMA, LEMMA" ...  # after build: those
                                     # goals through Why3's remove of the lemmas, split, proved by z3
    python -m sonnx_dev.prove build proofs/X.mlw [PROVERS]   # build a session without the IDE
                                     # PROVERS: keys of sonnx.trace.proofs.PROVERS, tried in order,
                                     # e.g. z3,cvc5,z3noauto,bitwuzla,cvc5fpexp (the half-precision files)
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
import xml.etree.ElementTree as ET
from pathlib import Path

from sonnx.trace import proof_assumptions as A
from sonnx.trace import proofs
from sonnx.trace.inputs import result_path, step_inputs
from sonnx.trace.proofs import (HEADER, LIB_FILES, PROVERS, PY_FILES, Why3OutputError, _keyed,
                                _proved, parse_py, parse_replay, parse_why3_json, summary, table)

# Verdicts come from prover steps. Why3 1.5.1's `why3 replay --use-steps` does not give the
# provers a step limit: it runs each attempt with the time command of the config (`%S` is 0 and
# the `command_steps` line is never used; seen with `--debug=call_prover`), so a replay bounded
# only by the session's time limit ran cvc5 for 28 s and 1 M resource units on a goal recorded
# at 14,233. replay_session therefore replays with a config of its own, written next to the
# copy (steps_config): every prover that counts steps is run with its `command_steps` line and a
# fixed budget, STEP_MARGIN times the largest step count that prover recorded in the session
# (STEP_FLOOR at least), which cvc5 (`--rlimit`), Z3 (`rlimit=`) and Bitwuzla (the callback)
# honour on every machine. Wall clock is only a hang guard: the session's per-attempt time
# limit (why3server kills an attempt after it; reported as "hang guard hit", never as a
# verdict) and HANG_GUARD_S over a whole `why3 replay`. Gappa counts no steps: it keeps its
# time command (its goals are decided in well under a second).
HANG_GUARD_S = int(os.environ.get("SONNX_PROOF_HANG_GUARD", "3600"))
STEP_MARGIN = 2
STEP_FLOOR = 100_000


def step_budgets(session_xml: Path) -> dict[tuple[str, str, str], int]:
    """(name, version, alternative) -> the step budget of that prover in this session."""
    root = ET.parse(session_xml).getroot()
    ids = {p.get("id"): (p.get("name"), p.get("version"), p.get("alternative") or "")
           for p in root.findall("prover")}
    most: dict[tuple[str, str, str], int] = {}
    for pr in root.iter("proof"):
        res = pr.find("result")
        if res is not None and res.get("status") == "valid" and pr.get("prover") in ids:
            key = ids[pr.get("prover")]
            most[key] = max(most.get(key, 0), int(float(res.get("steps", "0"))))
    return {k: max(STEP_FLOOR, STEP_MARGIN * s) for k, s in most.items()}


def steps_config(root: Path, session_xml: Path, out: Path) -> dict[tuple[str, str, str], int]:
    """Write ``out``: proofs/why3.conf with every step-counting prover's `command` replaced by its
    `command_steps`, the budget of step_budgets written in for `%S`; `loadpath` made absolute
    (Why3 resolves it against the config's folder). Returns the budgets."""
    budgets = step_budgets(session_xml)
    text = (Path(root) / "proofs" / "why3.conf").read_text(encoding="utf-8")
    blocks = re.split(r"(?m)^(?=\[)", text)
    for i, block in enumerate(blocks):
        steps = re.search(r'(?m)^command_steps = "(.*)"$', block)
        if not block.startswith("[prover]") or not steps:
            continue
        field = {k: (re.search(rf'(?m)^{k} = "(.*)"$', block) or [None, ""])[1]
                 for k in ("name", "version", "alternative")}
        budget = budgets.get((field["name"], field["version"], field["alternative"]), STEP_FLOOR)
        cmd = steps.group(1).replace("%S", str(budget))
        blocks[i] = re.sub(r'(?m)^command = ".*"$', lambda _m: f'command = "{cmd}"', block, count=1)
    text = "".join(blocks).replace('loadpath = "lib"', f'loadpath = "{Path(root).resolve() / "proofs" / "lib"}"')
    out.write_text(text, encoding="utf-8")
    return budgets



def jobs() -> int:
    """How many why3 processes run at once: SONNX_PROOF_JOBS, else the machine's CPUs."""
    raw = os.environ.get("SONNX_PROOF_JOBS", "")
    if raw:
        if not raw.isdigit() or int(raw) < 1:
            raise SystemExit(f"prove: SONNX_PROOF_JOBS={raw!r} is not a positive integer")
        return int(raw)
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))

def fresh_work(root: Path, work: Path) -> Path:
    """``work`` emptied and holding a copy of every proofs/*.mlw of ``root``: the load path a
    replay reads (`use gemm.X` across files), so that the committed proofs/ is never written."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for f in (Path(root) / "proofs").glob("*.mlw"):
        shutil.copy2(f, work / f.name)
    return work


def focus(session_xml: Path, only: set[str]) -> None:
    """Keep the proof attempts of the top-level goals named in ``only`` (a goal's name without
    its "'vc" suffix) and strip every other goal's attempts (its transformations and subgoals
    stay), in place: `why3 replay` then runs the
    attempts of those goals alone. The goals stay in the session and their statements keep
    every earlier lemma as a hypothesis, proved or not, exactly as in a whole replay; what is
    left out is only the re-running of the other goals' attempts. For the planted-fault tests
    (tests/trace/proof_plants.py), which ask whether given goals still replay, not the rest."""
    text = session_xml.read_text(encoding="utf-8")
    tree = ET.ElementTree(ET.fromstring(text.encode("utf-8")))
    named = set()
    for th in tree.getroot().iter("theory"):
        for g in th.findall("goal"):
            name = g.get("name", "").split("'vc")[0]
            named.add(name)
            if name not in only:
                # only the attempts go: the goal tree stays whole, since why3shapes.gz holds the
                # goals' shapes in the order of that tree (removing subgoals shifts them, and
                # Why3 then pairs the remaining attempts with other goals)
                for node in [g, *g.iter("goal")]:
                    for pr in node.findall("proof"):
                        node.remove(pr)
                    node.set("proved", "false")
                for tr in g.iter("transf"):
                    tr.set("proved", "false")
    if not only or only - named:
        raise ValueError(f"focus: no such top-level goal in {session_xml}: {sorted(only - named) or 'none named'}")
    head = text.split("<why3session", 1)[0]       # the XML declaration and Why3's DOCTYPE
    session_xml.write_text(head + ET.tostring(tree.getroot(), encoding="unicode") + "\n", encoding="utf-8")


def replay_session(root, rel: str, work: Path, hang_guard: int = HANG_GUARD_S,
                   only: set[str] | None = None) -> dict:
    """`why3 replay` of proofs/<stem>/ on a copy in ``work`` under the step budgets of
    steps_config (replay rewrites the session's times and shapes: the committed proofs/ stays
    untouched). ``only``: replay the attempts of these top-level goals alone (focus), under
    the budgets of the whole session."""
    root, stem = Path(root), Path(rel).stem
    sess = root / "proofs" / stem
    t0 = time.monotonic()
    if not (sess / "why3session.xml").is_file():
        return {"status": "missing", "rc": None, "failures": {}, "seconds": 0.0,
                "tail": [f"missing session proofs/{stem}/why3session.xml"]}
    (work / stem).mkdir(parents=True, exist_ok=True)
    for f in sess.iterdir():
        if f.name in ("why3session.xml", "why3shapes.gz"):
            shutil.copy2(f, work / stem / f.name)
    conf = work / f"{stem}.why3.conf"
    steps_config(root, work / stem / "why3session.xml", conf)
    if only is not None:
        focus(work / stem / "why3session.xml", set(only))
    cmd = ["why3", "-C", str(conf), "replay", "-L", str(work), str(work / stem)]
    try:
        p = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=hang_guard)
        rep = parse_replay(p.stdout + p.stderr, p.returncode)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        rep = parse_replay(out, None)
    rep["seconds"] = round(time.monotonic() - t0, 1)
    return rep



PY_PROVERS = ("cvc5", "z3", "z3noauto")  # tried in this order, each on what is still open
# Step budgets per VC (cvc5 resource units, z3 rlimit): the verdict. The largest VC of
# intloops.py takes about 0.66 M cvc5 units; the budgets leave room without being a clock.
PY_STEPS = {"cvc5": 5_000_000, "z3": 20_000_000, "z3noauto": 20_000_000}
PY_HANG_GUARD = 300                        # seconds per VC: only a hang guard ("Timeout")



def _run_py(root, rel, prover, timelimit, lines=None):
    """One ``why3 prove --json`` run under the prover's step budget (``-s``; ``-t`` only as
    a hang guard); returns (records keyed by _keyed, error or None)."""
    cmd = ["why3", "-C", "proofs/why3.conf", "prove", "--json", "-P", prover,
           "-s", str(PY_STEPS[prover]), "-t", str(timelimit), "-a", "split_vc"]
    for line in sorted(lines or ()):
        cmd += ["-g", f"{rel}:{line}"]
    p = subprocess.run(cmd + [rel], cwd=root, capture_output=True, text=True)
    try:
        recs = _keyed(parse_why3_json(p.stdout))
    except Why3OutputError as e:
        return {}, f"{prover}: {e}"
    all_valid = all(r["answer"] == "Valid" for r in recs.values())
    # why3 prove: 0 = every goal valid, 2 = some goal not valid, anything else = an error
    if p.returncode not in (0, 2) or (p.returncode == 0) != all_valid or not recs:
        err = (p.stderr.strip().splitlines() or [""])[-1]
        return recs, f"{prover}: rc={p.returncode}, {len(recs)} VCs, {err}"
    return recs, None


def prove_py(repo_root, rel, provers=PY_PROVERS, timelimit=PY_HANG_GUARD) -> list[dict]:
    """Prove a Python-subset file with ``why3 prove --json -a split_vc``: the first prover
    on every VC, each further prover only on the lines that still have an unproved VC.
    One record per VC (function, explanation, line:chars), valid when one prover proves
    it; plus a ``failed`` record when why3's output cannot be fully accounted for."""
    root = Path(repo_root)
    reqs = parse_py(root / rel)
    vcs, errors = {}, []
    for n, prover in enumerate(provers):
        open_lines = {k[0] for k, v in vcs.items() if not v["valid"]}
        if n and not open_lines:
            break
        recs, err = _run_py(root, rel, prover, timelimit, open_lines if n else None)
        if err:
            errors.append(err)
        if n == 0:
            for k in recs:
                vcs[k] = {"valid": False, "prover": "", "time": 0.0, "steps": 0, "attempts": {},
                          "hang": False}
        elif set(recs) != {k for k in vcs if k[0] in open_lines}:
            errors.append(f"{prover}: the VCs of lines {sorted(open_lines)} differ from the first run")
        for k, r in recs.items():
            v = vcs.get(k)
            if v is None:
                continue
            v["attempts"][prover] = f'{r["answer"]} ({r["time"]}s, {r["steps"]} steps)'
            v["hang"] |= r["answer"].startswith("Timeout")   # the hang guard, not a verdict
            if r["answer"] == "Valid" and not v["valid"]:
                v.update(valid=True, prover=prover, time=r["time"], steps=r["steps"])
    out = []
    for (line, c0, c1, expl, nth), v in sorted(vcs.items()):
        fn = _py_function_at(root / rel, line)
        vc = f"{expl} (line {line}:{c0}-{c1}{f', #{nth}' if nth > 1 else ''})"
        out.append({"file": rel, "theory": "python", "goal": fn, "vc": vc,
                    "req": reqs.get(fn, []), "prover": v["prover"],
                    "result": "valid" if v["valid"] else "hang guard hit" if v["hang"] else "not proved",
                    "time": v["time"], "steps": v["steps"], "attempts": v["attempts"]})
    if errors or not out:
        out.append({"file": rel, "theory": "python", "goal": "(why3 prove)", "vc": "", "req": [],
                    "prover": ",".join(provers), "result": "failed: " + "; ".join(errors or ["no VC"]),
                    "time": 0})
    return out


def _py_function_at(path, line) -> str:
    name = "?"
    for n, text in enumerate(Path(path).read_text().splitlines(), 1):
        m = re.match(r"def\s+(\w+)", text)
        if m:
            name = m.group(1)
        if n >= line:
            break
    return name



# --- session construction (developer tool, not used by CI) ------------------------

def build_session(repo_root, rel, provers=("z3", "cvc5", "z3noauto"), timelimit=10):
    """Create proofs/<stem>/why3session.xml without the IDE: stub, split_vc on every
    goal, then for every leaf the first prover of ``provers`` that proves it."""
    root = Path(repo_root)
    sess = root / rel[:-4]
    sess.mkdir(exist_ok=True)
    xml = sess / "why3session.xml"
    xml.write_text(HEADER + '<why3session shape_version="6">\n<file format="whyml">\n'
                   f'<path name=".."/><path name="{Path(rel).name}"/>\n</file>\n</why3session>\n')
    _replay(root, sess, force=True)
    tree = ET.parse(xml)
    for th in tree.getroot().iter("theory"):
        for g in th.findall("goal"):
            if g.find("transf") is None:
                ET.SubElement(g, "transf", {"name": "split_vc"})
    _write(tree, xml)
    _replay(root, sess, force=True)
    for pid, key in enumerate(provers):
        tree = ET.parse(xml)
        r = tree.getroot()
        for p in r.findall("prover"):
            r.remove(p)
        for i, k in enumerate(provers):
            name, ver, alt = PROVERS[k]
            attrs = {"id": str(i), "name": name, "version": ver, "timelimit": str(timelimit),
                     "steplimit": "0", "memlimit": "2000"}
            if alt:
                attrs["alternative"] = alt
            r.insert(i, ET.Element("prover", attrs))
        for leaf in _leaves(r):
            if not _proved(leaf):
                for pr in leaf.findall("proof"):
                    leaf.remove(pr)
                pr = ET.SubElement(leaf, "proof", {"prover": str(pid)})
                ET.SubElement(pr, "result", {"status": "unknown", "time": "0"})
        _write(tree, xml)
        _replay(root, sess, force=True)
    return _keep_valid_and_replay(root, sess, ("why3session.xml.bak", "why3shapes.gz", "why3shapes", "why3shapes.bak"))


def _keep_valid_and_replay(root: Path, sess: Path, junk: tuple[str, ...]) -> int:
    """The end of a build: drop the attempts that are not valid (the replay then fails only on
    unproved leaves), replay once more without forcing, remove ``junk``; the replay's code."""
    xml = sess / "why3session.xml"
    tree = ET.parse(xml)
    for leaf in _leaves(tree.getroot()):
        for pr in leaf.findall("proof"):
            res = pr.find("result")
            if res is None or res.get("status") != "valid":
                leaf.remove(pr)
    _write(tree, xml)
    rc = _replay(root, sess, force=False)
    for name in junk:
        (sess / name).unlink(missing_ok=True)
    return rc


def remove_then_prove(repo_root, rel, removals: dict[str, str], prover="z3", timelimit=10) -> int:
    """In the session of ``rel`` built by build_session, replace the split of each top goal named
    in ``removals`` by Why3's ``remove`` transformation of the hypotheses listed there (its
    ``arg1``, comma-separated names of lemmas), then split_vc, then ``prover`` on every leaf
    (its prover id must already be in the session). Removing hypotheses can only make a goal
    harder: nothing is assumed by it; it keeps quantified facts the goal does not need away
    from the prover (proofs/narrow_c.mlw's kernels)."""
    root = Path(repo_root)
    sess = root / rel[:-4]
    xml = sess / "why3session.xml"
    tree = ET.parse(xml)
    for g in tree.getroot().iter("goal"):
        if g.get("name") in removals:
            for t in g.findall("transf"):
                g.remove(t)
            ET.SubElement(g, "transf", {"name": "remove", "arg1": removals[g.get("name")]})
    _write(tree, xml)
    _replay(root, sess, force=True)
    tree = ET.parse(xml)
    for g in tree.getroot().iter("goal"):
        if g.get("name") in removals:
            for sub in g.find("transf").findall("goal"):
                if sub.find("transf") is None:
                    ET.SubElement(sub, "transf", {"name": "split_vc"})
    _write(tree, xml)
    _replay(root, sess, force=True)
    tree = ET.parse(xml)
    r = tree.getroot()
    name, ver, alt = PROVERS[prover]
    pid = next(p.get("id") for p in r.findall("prover") if (p.get("name"), p.get("version"),
                                                             p.get("alternative") or "") == (name, ver, alt))
    for leaf in _leaves(r):
        if not _proved(leaf):
            for pr in leaf.findall("proof"):
                leaf.remove(pr)
            pr = ET.SubElement(leaf, "proof", {"prover": pid})
            ET.SubElement(pr, "result", {"status": "unknown", "time": "0"})
    _write(tree, xml)
    _replay(root, sess, force=True)
    return _keep_valid_and_replay(root, sess, ("why3session.xml.bak", "why3shapes.gz.bak", "why3shapes.bak"))


def _leaves(r):
    return [g for g in r.iter("goal") if g.find("transf") is None]


def _write(tree, xml):
    ET.indent(tree, " ")
    body = ET.tostring(tree.getroot(), encoding="unicode")
    Path(xml).write_text(HEADER + body + "\n")


def _replay(root, sess, force):
    cmd = ["why3", "-C", "proofs/why3.conf", "replay", "-L", "proofs"]
    cmd += (["-f"] if force else []) + [str(sess.relative_to(root))]
    # `z3` in proofs/why3.conf is Z3 5.4 from the venv, as tools/prove puts it first on PATH:
    # without this a session built from a plain shell records the system z3 4.8 under the 5.4
    # label, and its step counts then fail tools/prove's replay
    env = dict(os.environ, PATH=f"{Path(root) / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
    sys.stderr.write(p.stdout[-300:] + p.stderr[-300:])
    return p.returncode



def _assumptions(root: Path) -> dict:
    try:
        found = A.find(root, proofs.mlw_files() + LIB_FILES, frozenset(LIB_FILES))
        reviewed = A.load_reviewed(root)
        stdlib = A.tomllib.loads((root / A.REVIEWED).read_text(encoding="utf-8")).get("stdlib_props", {})
        found["problems"] = A.check(found, reviewed, stdlib)
    except (RuntimeError, ValueError, OSError) as e:
        found = {"assumptions": [], "stdlib_props": {}, "problems": [f"assumptions not checked: {e}"]}
    return found


def run(root) -> int:
    """The proof step (tools/prove): replay every session under its recorded step budgets,
    list the assumptions from Why3's view and check them, prove the Python front-end files,
    write build/evidence/proofs.json. A line per session / file as it finishes."""
    root = Path(root)
    inputs = step_inputs(root, "proofs")          # what this run reads, hashed before it starts
    t0 = time.monotonic()
    work = fresh_work(root, root / "build" / "proofs-replay")
    said = threading.Lock()

    def say(lines: list[str]) -> None:
        with said:                                   # one job's lines together
            for line in lines:
                print(line, flush=True)

    def replay(rel: str) -> dict:
        rep = replay_session(root, rel, work)
        say([f"prove: [{time.monotonic() - t0:6.1f}s] {rel}: replay {rep['status']} "
             f"({rep['seconds']} s)"]
            + [f"    {line}" for line in ([f"{g}: {w}" for g, w in rep["failures"].items()]
                                         or ([] if rep["status"] == "ok" else rep["tail"]))])
        return rep

    def assumptions() -> dict:
        assumed = _assumptions(root)
        say([f"prove: [{time.monotonic() - t0:6.1f}s] assumptions (from Why3's view): "
             f"{len(assumed['assumptions'])} listed, {len(assumed['problems'])} problem(s)"]
            + [f"    {p}" for p in assumed["problems"]])
        return assumed

    def front_end(rel: str) -> list[dict]:
        t1 = time.monotonic()
        recs = prove_py(root, rel)
        say([f"prove: [{time.monotonic() - t0:6.1f}s] {rel}: "
             f"{sum(r['result'] == 'valid' for r in recs)}/{len(recs)} VCs valid "
             f"({time.monotonic() - t1:.1f} s)"])
        return recs

    # The jobs are independent processes (why3 and its provers) and every verdict is decided by
    # prover steps, so running them side by side changes no verdict, only the wall time; the
    # longest jobs first (the Python front end, then the sessions in the order listed).
    with ThreadPoolExecutor(max_workers=jobs()) as pool:
        py_jobs = [pool.submit(front_end, rel) for rel in PY_FILES]
        replay_jobs = {rel: pool.submit(replay, rel) for rel in proofs.mlw_files()}
        assumed_job = pool.submit(assumptions)
        replays = {rel: job.result() for rel, job in replay_jobs.items()}
        assumed = assumed_job.result()
        py = [r for job in py_jobs for r in job.result()]
    s = summary(root, replays, py, assumed)
    s["inputs"] = inputs
    s["budgets"] = {"sessions": f"per session and prover: {STEP_MARGIN} x its largest recorded step count, "
                                f"at least {STEP_FLOOR} (prover's own step limit)",
                    "python_frontend_steps": PY_STEPS,
                    "hang_guard_seconds": {"replay": HANG_GUARD_S, "python_vc": PY_HANG_GUARD}}
    s["hang_guard_hit"] = sorted({f'{g["file"]} {g["goal"]}' for g in s["goals"]
                                  if g["result"] == "hang guard hit"})
    s["seconds"] = round(time.monotonic() - t0, 1)
    out = result_path(root, "proofs.json")     # build/recheck/ when a sealed bundle is in build/evidence/
    out.write_text(json.dumps(s, indent=1) + "\n")
    print(table(s))
    print(f"written {out.relative_to(root)} in {s['seconds']} s: {'OK' if s['ok'] else 'FAILED'}")
    return 0 if s["ok"] else 1


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path.cwd()
    if argv[:1] == ["build"]:
        if len(argv) > 2:
            return build_session(root, argv[1], provers=tuple(argv[2].split(",")))
        return build_session(root, argv[1])
    if argv[:1] == ["remove"] and len(argv) >= 3:
        # remove proofs/X.mlw GOAL=LEMMA,LEMMA ... : after build, see remove_then_prove
        return remove_then_prove(root, argv[1], dict(a.split("=", 1) for a in argv[2:]))
    if argv[:1] == ["run"]:
        return run(root)
    if argv[:1] == ["replay"] and len(argv) == 2:
        return replay_one(root, argv[1])
    print("usage: python -m sonnx_dev.prove build proofs/X.mlw [PROVER,...] | replay proofs/X.mlw | run")
    return 2


def replay_one(root: Path, rel: str) -> int:
    """One session replayed as tools/prove replays it (a copy of proofs/ under build/, the step
    budgets of steps_config): a line with the status, then each failed goal. Exit 0 when ok."""
    if not (root / rel).is_file() or not rel.endswith(".mlw"):
        print(f"prove replay: {rel} is not a .mlw file under this folder (run from the repository root)",
              file=sys.stderr)
        return 2
    rep = replay_session(root, rel, fresh_work(root, root / "build" / "proofs-replay-one"))
    print(f"{rel}: replay {rep['status']} ({rep['seconds']} s)")
    for line in ([f"{g}: {w}" for g, w in rep["failures"].items()]
                 or ([] if rep["status"] == "ok" else rep["tail"])):
        print(f"    {line}")
    return 0 if rep["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
