"""Why3 proof evidence: requirement annotations, session statuses, summary.

Conventions (see proofs/README.md):
- a comment ``(* req: MUL-R1, MUL-R4 *)`` (optionally followed by `` -- prose``) on the
  line(s) immediately before a declaration (lemma, goal, let, let rec, predicate,
  function) names the requirements that declaration verifies or implements;
- sessions live in ``proofs/<stem>/why3session.xml`` beside ``proofs/<stem>.mlw``;
- Python files proved through Why3's Python front-end are listed in PY_FILES and proved
  with ``why3 prove --json -a split_vc`` (Why3 1.5.1 sessions cannot be built for them
  without the IDE): every VC is one record in the summary and gates like a session goal.

Used by tools/prove (``python -m sonnx.trace.proofs summary``) and by the trace tool.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from ..requirements import ID_PATTERN

MLW_FILES = ["proofs/tensor.mlw", "proofs/mul.mlw", "proofs/gemm.mlw", "proofs/half.mlw"]
PY_FILES = ["src/sonnx/semantics/intloops.py"]
PROVERS = {  # session prover -> (name, version, alternative) of proofs/why3.conf
    "z3": ("Z3", "5.4.0", "pip"),
    "z3noauto": ("Z3", "5.4.0", "noauto"),
    "cvc5": ("CVC5", "1.0.3", ""),
}
REQ_RE = re.compile(rf"\(\*\s*req:\s*((?:{ID_PATTERN}\s*,?\s*)+)(?:--.*?)?\*\)", re.S)
ID_RE = re.compile(ID_PATTERN)
# A declaration: any sequence of the keywords let/rec/ghost/lemma/function/predicate/val/
# constant (e.g. `let rec ghost function dot`, `val ghost function f`, `let lemma l`), or
# goal/axiom, then the name. The name is the first word that is not such a keyword.
DECL_KEYWORDS = ("let", "rec", "ghost", "lemma", "function", "predicate", "val", "constant")
DECL_RE = re.compile(
    r"^\s*(?:(?:goal|axiom)|(?:(?:let|rec|ghost|lemma|function|predicate|val|constant)\b\s*)+)"
    r"\s+(?!(?:let|rec|ghost|lemma|function|predicate|val|constant|goal|axiom)\b)"
    r"([A-Za-z_][\w']*)"
)
MODULE_RE = re.compile(r"^\s*(?:module|theory)\s+(\w+)")
HEADER = ('<?xml version="1.0" encoding="UTF-8"?>\n'
          '<!DOCTYPE why3session PUBLIC "-//Why3//proof session v5//EN"\n'
          '"http://why3.lri.fr/why3session.dtd">\n')


def parse_goals(mlw_path) -> list[dict]:
    """Declarations of a WhyML file, each with module, kind, name, line, req IDs (the
    requirement annotations; what the proofs assume is listed from Why3's own view of the
    theories by sonnx.trace.proof_assumptions, not from this text scan)."""
    lines = Path(mlw_path).read_text().splitlines()
    out, module = [], None
    for n, line in enumerate(lines):
        m = MODULE_RE.match(line)
        if m:
            module = m.group(1)
            continue
        d = DECL_RE.match(line)
        if not d or line.lstrip().startswith("(*"):
            continue
        words = line.split()
        kind = " ".join(words[:next(i for i, w in enumerate(words)
                                    if w not in DECL_KEYWORDS + ("goal", "axiom")
                                    or (i and w in ("goal", "axiom")))])
        ids = _preceding_req(lines, n)
        out.append({"module": module, "kind": kind, "name": d.group(1), "goal": d.group(1),
                    "line": n + 1, "req": ids, "requirements": ids})
    return out


def _preceding_req(lines, n) -> list[str]:
    """IDs from the comment ending on the line just before line n."""
    j = n - 1
    if j < 0 or not lines[j].rstrip().endswith("*)"):
        return []
    k = j
    while k >= 0 and "(*" not in lines[k]:
        k -= 1
    text = "\n".join(lines[k:j + 1])
    m = REQ_RE.search(text)
    return ID_RE.findall(m.group(1)) if m else []


def read_session(session_dir) -> list[dict]:
    """Top-level goals of a session: theory, goal, proved, provers, time (sum of leaves),
    steps (sum of the recorded step counts: the budgets of a replay) and leaves (the names
    of the goals that carry proof attempts, as `why3 replay` names them in its report)."""
    root = ET.parse(Path(session_dir) / "why3session.xml").getroot()
    provers = {p.get("id"): _prover_key(p) for p in root.findall("prover")}
    out = []
    for th in root.iter("theory"):
        for g in th.findall("goal"):
            used, time, steps, ok = set(), 0.0, 0, _proved(g)
            for pr in g.iter("proof"):
                used.add(provers.get(pr.get("prover"), "?"))
                r = pr.find("result")
                if r is not None:
                    time += float(r.get("time", "0"))
                    steps += int(r.get("steps", "0"))
            leaves = [x.get("name") for x in g.iter("goal") if x.find("proof") is not None]
            out.append({"theory": th.get("name"), "goal": g.get("name"),
                        "proved": ok, "provers": sorted(used), "time": round(time, 2),
                        "steps": steps, "leaves": leaves})
    return out


def _prover_key(p) -> str:
    for k, (name, ver, alt) in PROVERS.items():
        if p.get("name") == name and p.get("version") == ver and (p.get("alternative") or "") == alt:
            return k
    return f'{p.get("name")} {p.get("version")} {p.get("alternative") or ""}'.strip()


def _proved(goal) -> bool:
    """A goal is proved by a valid, non-obsolete attempt or by a transformation whose
    subgoals are all proved (computed here, not trusted from the XML attribute)."""
    for pr in goal.findall("proof"):
        r = pr.find("result")
        if r is not None and r.get("status") == "valid" and pr.get("obsolete") != "true":
            return True
    for tr in goal.findall("transf"):
        subs = tr.findall("goal")
        if all(_proved(s) for s in subs):
            return True
    return False


def _decl_of_goal(goal_name: str) -> str:
    return goal_name.split("'vc")[0]


# --- replay ----------------------------------------------------------------------

# Verdicts come from prover steps: `why3 replay --use-steps` gives every recorded attempt the
# step count recorded in the session (+1) as its budget (z3 `rlimit`, cvc5 `--rlimit`), which
# does not depend on the machine's load. Wall clock is only a hang guard: the session's
# per-attempt time limit (why3server kills an attempt after it; reported as "hang guard hit",
# never as a verdict) and HANG_GUARD_S over a whole `why3 replay`.
HANG_GUARD_S = int(os.environ.get("SONNX_PROOF_HANG_GUARD", "3600"))
FAIL_RE = re.compile(r"^\s*goal '(?P<goal>.+?)', prover '(?P<prover>.+?)': (?P<what>.*)$", re.M)


def parse_replay(out: str, rc: int | None) -> dict:
    """The verdict of one `why3 replay` from its exit code and output: status ("ok",
    "obsolete", "failed", "hang guard hit", "error"), and per failed leaf goal the report.
    rc None = the hang guard stopped the replay."""
    out = out.replace("\r", "\n")
    failures = {m["goal"]: f'{m["prover"]}: {m["what"].strip()}' for m in FAIL_RE.finditer(out)}
    if rc is None:
        status = "hang guard hit"
    elif "obsolete" in out:
        status = "obsolete"            # Why3's own consistency check: the file no longer matches
    elif rc == 0 and "replay OK" in out and not failures:
        status = "ok"
    elif rc != 0 and failures:
        status = "failed"
    else:
        status = "error"               # nothing we can account for goal by goal
    return {"status": status, "rc": rc, "failures": failures,
            "tail": [ln for ln in out.splitlines() if ln.strip() and not ln.startswith("Progress")][-5:]}


def replay_session(root, rel: str, work: Path, hang_guard: int = HANG_GUARD_S) -> dict:
    """`why3 replay --use-steps` of proofs/<stem>/ on a copy in ``work`` (replay rewrites the
    session's times and shapes: the committed proofs/ stays untouched)."""
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
    cmd = ["why3", "-C", "proofs/why3.conf", "replay", "--use-steps", "-L", str(work), str(work / stem)]
    try:
        p = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=hang_guard)
        rep = parse_replay(p.stdout + p.stderr, p.returncode)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        rep = parse_replay(out, None)
    rep["seconds"] = round(time.monotonic() - t0, 1)
    return rep


def _goal_result(g: dict, rep: dict | None) -> str:
    """One top-level goal's verdict from the session and the replay report of its file."""
    if rep is None:                    # not replayed: what the session records
        return "valid" if g["proved"] else "not proved"
    if isinstance(rep, int):           # a bare exit code (older callers)
        rep = {"status": "ok" if rep == 0 else "error", "failures": {}}
    if rep["status"] in ("hang guard hit", "obsolete", "missing", "error"):
        return f'not proved (replay: {rep["status"]})' if rep["status"] != "hang guard hit" \
            else "hang guard hit"
    bad = [rep["failures"][leaf] for leaf in g.get("leaves", []) if leaf in rep["failures"]]
    if any(": Timeout" in b for b in bad):
        return "hang guard hit"        # why3server's time limit: not a verdict
    if bad:
        return "not proved: " + bad[0]
    return "valid" if g["proved"] else "not proved"


def summary(repo_root, replay: dict | None = None, py_results: list | None = None,
            assumptions: dict | None = None) -> dict:
    """Join annotations, session statuses and replay verdicts for every proof file.

    ``replay``: file -> replay report (parse_replay) or exit code; None = not replayed (the
    sessions' recorded state, for a quick look). ``ok`` holds only when every goal and VC is
    valid, every listed file was replayed "ok", and the assumptions check found no problem."""
    root = Path(repo_root)
    records, ok = [], True
    for rel in MLW_FILES:
        by_name = {(d["module"], d["name"]): d for d in parse_goals(root / rel)}
        sess = root / rel[:-4]
        goals = read_session(sess) if (sess / "why3session.xml").exists() else []
        rep = None if replay is None else replay.get(rel, {"status": "missing", "failures": {}})
        if not goals:
            ok = False
        for g in goals:
            d = by_name.get((g["theory"], _decl_of_goal(g["goal"])), {})
            result = _goal_result(g, rep)
            ok &= result == "valid"
            records.append({"file": rel, "theory": g["theory"], "goal": g["goal"],
                            "req": d.get("req", []), "prover": ",".join(g["provers"]),
                            "result": result, "time": g["time"], "steps": g["steps"]})
    if replay is not None:
        for rel in MLW_FILES:
            r = replay.get(rel)
            ok &= r == 0 if isinstance(r, int) else bool(r) and r.get("status") == "ok"
    py = list(py_results or [])
    # Python front-end VCs gate like session goals (one record per VC, goal = function)
    for r in py:
        ok &= r["result"] == "valid"
    records += py
    assumed = assumptions or {"assumptions": [], "problems": [], "stdlib_props": {}}
    ok &= not assumed.get("problems")
    # per-file exit code of `why3 replay`; -1 when there is none (hang guard, missing session)
    replay_rc = {rel: r if isinstance(r, int) else (-1 if r.get("rc") is None else r["rc"])
                 for rel, r in (replay or {}).items()}
    return {"ok": bool(ok), "goals": records,
            "assumptions": [dict(a, module=a["theory"]) for a in assumed["assumptions"]],
            "assumption_problems": list(assumed.get("problems", [])),
            "stdlib_props": assumed.get("stdlib_props", {}),
            "replay": replay_rc,
            "replay_status": {rel: r for rel, r in (replay or {}).items() if not isinstance(r, int)},
            "python_frontend": {"vcs": py, "proved": sum(r["result"] == "valid" for r in py),
                                "total": len(py), "gating": True}}


def session_statuses(repo_root) -> list[dict]:
    """One status per annotated declaration for the trace tool: file, goal (the
    declaration's name), status (proved / unproved / missing), prover, time. A
    declaration with several session goals (e.g. one per clone) is proved when all are."""
    root = Path(repo_root)
    out = []
    for rel in MLW_FILES:
        sess = root / rel[:-4]
        goals = read_session(sess) if (sess / "why3session.xml").exists() else []
        agg: dict[str, dict] = {}
        for g in goals:
            a = agg.setdefault(_decl_of_goal(g["goal"]),
                               {"file": rel, "goal": _decl_of_goal(g["goal"]), "status": "proved",
                                "prover": set(), "time": 0.0})
            if not g["proved"]:
                a["status"] = "unproved"
            a["prover"].update(g["provers"])
            a["time"] = round(a["time"] + g["time"], 2)
        for a in agg.values():
            a["prover"] = ",".join(sorted(a["prover"]))
            out.append(a)
    return out


# --- Python front-end -------------------------------------------------------------

PY_PROVERS = ("cvc5", "z3", "z3noauto")  # tried in this order, each on what is still open
# Step budgets per VC (cvc5 resource units, z3 rlimit): the verdict. The largest VC of
# intloops.py takes about 0.66 M cvc5 units; the budgets leave room without being a clock.
PY_STEPS = {"cvc5": 5_000_000, "z3": 20_000_000, "z3noauto": 20_000_000}
PY_HANG_GUARD = 300                        # seconds per VC: only a hang guard ("Timeout")


class Why3OutputError(ValueError):
    """`why3 prove --json` printed something that is not a well-formed goal record."""


def parse_why3_json(stdout: str) -> list[dict]:
    """The goal records of ``why3 prove --json`` (Why3 1.5.1 prints one JSON object per VC,
    a stream, not an array), in output order: line, chars, explanation, answer, time.

    Raises Why3OutputError on anything that is not such an object (stray text, a record
    without location or answer), so that no VC can be silently lost."""
    dec, i, out = json.JSONDecoder(), 0, []
    while True:
        while i < len(stdout) and stdout[i].isspace():
            i += 1
        if i >= len(stdout):
            return out
        try:
            o, i = dec.raw_decode(stdout, i)
        except json.JSONDecodeError as e:
            raise Why3OutputError(f"unreadable why3 output at char {i}: {stdout[i:i + 80]!r}") from e
        try:
            loc, res = o["term"]["loc"], o["prover-result"]
            rec = {"line": int(loc["line"]), "c0": int(loc["start-char"]),
                   "c1": int(loc["end-char"]),
                   "expl": "; ".join(o["term"].get("explanations") or []) or o["term"]["goal_name"],
                   "answer": " ".join(str(res["answer"]).split()), "time": float(res["time"]),
                   "steps": int(res.get("step") or 0)}
        except (KeyError, TypeError, ValueError) as e:
            raise Why3OutputError(f"why3 goal record without {e}: {json.dumps(o)[:200]}") from e
        out.append(rec)


def _keyed(recs: list[dict]) -> dict[tuple, dict]:
    """Records keyed by (line, c0, c1, explanation, n): n numbers VCs that share a location
    and explanation (e.g. one invariant preserved along both branches of an `if`), in
    output order, which is the order of split_vc and does not depend on the prover."""
    seen: dict[tuple, int] = {}
    out = {}
    for r in recs:
        k = (r["line"], r["c0"], r["c1"], r["expl"])
        seen[k] = seen.get(k, 0) + 1
        out[k + (seen[k],)] = r
    return out


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


def parse_py(path) -> dict[str, list[str]]:
    """Function name -> req IDs from a ``# req: ...`` comment just above its ``def``."""
    lines = Path(path).read_text().splitlines()
    out = {}
    for n, line in enumerate(lines):
        m = re.match(r"\s*def\s+(\w+)", line)
        if m:
            prev = lines[n - 1] if n else ""
            rm = re.match(r"\s*#\s*req:\s*(.*)", prev)
            out[m.group(1)] = ID_RE.findall(rm.group(1)) if rm else []
    return out


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
    tree = ET.parse(xml)  # drop failed attempts: replay then fails only on unproved leaves
    for leaf in _leaves(tree.getroot()):
        for pr in leaf.findall("proof"):
            res = pr.find("result")
            if res is None or res.get("status") != "valid":
                leaf.remove(pr)
    _write(tree, xml)
    rc = _replay(root, sess, force=False)
    for junk in ("why3session.xml.bak", "why3shapes.gz", "why3shapes", "why3shapes.bak"):
        (sess / junk).unlink(missing_ok=True)
    return rc


def _leaves(r):
    return [g for g in r.iter("goal") if g.find("transf") is None]


def _write(tree, xml):
    ET.indent(tree, " ")
    body = ET.tostring(tree.getroot(), encoding="unicode")
    Path(xml).write_text(HEADER + body + "\n")


def _replay(root, sess, force):
    cmd = ["why3", "-C", "proofs/why3.conf", "replay", "-L", "proofs"]
    cmd += (["-f"] if force else []) + [str(sess.relative_to(root))]
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    sys.stderr.write(p.stdout[-300:] + p.stderr[-300:])
    return p.returncode


def table(s: dict) -> str:
    rows = [f'{"file":18} {"theory":16} {"goal":40} {"req":18} {"prover":14} {"result":12} time']
    for g in s["goals"]:
        goal = f'{g["goal"]}: {g["vc"]}' if g.get("vc") else g["goal"]
        rows.append(f'{g["file"][-18:]:18} {g["theory"][:16]:16} {goal[:40]:40} '
                    f'{",".join(g["req"])[:18]:18} {g["prover"][:14]:14} {g["result"][:12]:12} {g["time"]}')
    for g in s["goals"]:
        if g["result"] != "valid":
            goal = f'{g["goal"]}: {g["vc"]}' if g.get("vc") else g["goal"]
            rows.append(f'NOT PROVED: {g["file"]} {g["theory"]} {goal} -- {g["result"]} '
                        + " ".join(f"[{p}: {a}]" for p, a in (g.get("attempts") or {}).items()))
    files: dict[str, list] = {}
    for g in s["goals"]:
        files.setdefault(g["file"], []).append(g)
    for f, gs in files.items():
        n = sum(g["result"] == "valid" for g in gs)
        rows.append(f'{f}: {n}/{len(gs)} {"VCs" if f.endswith(".py") else "goals"} proved, '
                    f'{round(sum(float(g["time"] or 0) for g in gs), 2)} s prover time')
    n_ok = sum(g["result"] == "valid" for g in s["goals"])
    rows.append(f'{n_ok}/{len(s["goals"])} goals valid; assumptions beyond the stdlib (Why3\'s view): '
                + (", ".join(f'{a["module"]}.{a["name"]} ({a["at"]})' for a in s["assumptions"]) or "none"))
    return "\n".join(rows)


LIB_FILES = ["proofs/lib/halffloat.mlw"]   # theories the drivers name: assumptions checked too


def _assumptions(root: Path) -> dict:
    from . import proof_assumptions as A
    try:
        found = A.find(root, MLW_FILES + LIB_FILES, frozenset(LIB_FILES))
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
    from .inputs import step_inputs
    root = Path(root)
    inputs = step_inputs(root, "proofs")          # what this run reads, hashed before it starts
    t0 = time.monotonic()
    work = root / "build" / "proofs-replay"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for f in (root / "proofs").glob("*.mlw"):
        shutil.copy2(f, work / f.name)
    replays = {}
    for rel in MLW_FILES:
        rep = replays[rel] = replay_session(root, rel, work)
        print(f"prove: [{time.monotonic() - t0:6.1f}s] {rel}: replay {rep['status']} "
              f"({rep['seconds']} s)", flush=True)
        for line in ([f"{g}: {w}" for g, w in rep["failures"].items()]
                     or ([] if rep["status"] == "ok" else rep["tail"])):
            print(f"    {line}", flush=True)
    assumed = _assumptions(root)
    print(f"prove: [{time.monotonic() - t0:6.1f}s] assumptions (from Why3's view): "
          f"{len(assumed['assumptions'])} listed, {len(assumed['problems'])} problem(s)", flush=True)
    for p in assumed["problems"]:
        print(f"    {p}", flush=True)
    py = []
    for rel in PY_FILES:
        t1 = time.monotonic()
        recs = prove_py(root, rel)
        py += recs
        print(f"prove: [{time.monotonic() - t0:6.1f}s] {rel}: {sum(r['result'] == 'valid' for r in recs)}"
              f"/{len(recs)} VCs valid ({time.monotonic() - t1:.1f} s)", flush=True)
    s = summary(root, replays, py, assumed)
    s["inputs"] = inputs
    s["budgets"] = {"sessions": "recorded steps + 1 per attempt (why3 replay --use-steps)",
                    "python_frontend_steps": PY_STEPS,
                    "hang_guard_seconds": {"replay": HANG_GUARD_S, "python_vc": PY_HANG_GUARD}}
    s["hang_guard_hit"] = sorted({f'{g["file"]} {g["goal"]}' for g in s["goals"]
                                  if g["result"] == "hang guard hit"})
    s["seconds"] = round(time.monotonic() - t0, 1)
    out = root / "build" / "evidence" / "proofs.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(s, indent=1) + "\n")
    print(table(s))
    print(f"written {out.relative_to(root)} in {s['seconds']} s: {'OK' if s['ok'] else 'FAILED'}")
    return 0 if s["ok"] else 1


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path.cwd()
    if argv[:1] == ["build"]:
        return build_session(root, argv[1])
    if argv[:1] == ["run"]:
        return run(root)
    print("usage: python -m sonnx.trace.proofs build proofs/X.mlw | run")
    return 2


if __name__ == "__main__":
    sys.exit(main())
