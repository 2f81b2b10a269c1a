"""Why3 proof evidence: requirement annotations, session statuses, summary.

Conventions (see proofs/README.md):
- a comment ``(* req: PROF-R1, PROF-R2 *)`` (optionally followed by `` -- prose``) on the
  line(s) immediately before a declaration (lemma, goal, let, let rec, predicate,
  function) names the requirements that declaration verifies or implements (``@family``
  tokens too, see sonnx.requirements: the trace expands them);
- sessions live in ``proofs/<stem>/why3session.xml`` beside ``proofs/<stem>.mlw``;
- the theory files are the shared theories the records name (``theories``) then every registered operator's
  ``proofs`` (sonnx.ops.registry), each after the files it uses (``mlw_files``);
- Python files proved through Why3's Python front-end are listed in PY_FILES and proved
  with ``why3 prove --json -a split_vc`` (Why3 1.5.1 sessions cannot be built for them
  without the IDE): every VC is one record in the summary and gates like a session goal.

Used by the trace tool and by the proof step's driver (tools/sonnx_dev/prove.py, which runs Why3).
"""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from . import whyml
from ..requirements import FAMILY_RE, ID_PATTERN

PY_FILES = ["src/sonnx/semantics/intloops.py"]
PROVERS = {  # session prover -> (name, version, alternative) of proofs/why3.conf
    "z3": ("Z3", "5.4.0", "pip"),
    "z3noauto": ("Z3", "5.4.0", "noauto"),
    "cvc5": ("CVC5", "1.0.3", ""),
    "bitwuzla": ("Bitwuzla", "0.9.1", ""),       # the bitwuzla wheel, via tools/sonnx_dev/bitwuzla_why3.py
    "cvc5fpexp": ("CVC5", "1.0.3", "fpexp"),     # cvc5 --fp-exp: experimental FP formats (bfloat16)
    "cvc5ax": ("CVC5", "1.0.3", "axiomatic"),    # cvc5, ieee_float axiomatic (stdlib props as hypotheses)
    "gappa": ("Gappa", "1.4.1", ""),     # no step counter: its time limit is a hang guard only
}
REQ_RE = re.compile(rf"\(\*\s*req:\s*((?:(?:{ID_PATTERN}|{FAMILY_RE.pattern})\s*,?\s*)+)(?:--.*?)?\*\)", re.S)
ID_RE = re.compile(rf"{ID_PATTERN}|{FAMILY_RE.pattern}")      # an ID or a family token
HEADER = ('<?xml version="1.0" encoding="UTF-8"?>\n'
          '<!DOCTYPE why3session PUBLIC "-//Why3//proof session v5//EN"\n'
          '"http://why3.lri.fr/why3session.dtd">\n')


def mlw_files() -> list[str]:
    """The theory files of the proof step, each after the files it uses: the shared theories
    the operators' records name (``Operator.theories``, first use first), then every registered
    operator's own files (``Operator.proofs``); no list of files is kept here."""
    from ..ops import registry
    ops = list(registry.operators().values())
    shared = dict.fromkeys(f for op in ops for f in op.theories)
    return [*shared, *(f for op in ops for f in op.proofs)]


def parse_goals(mlw_path) -> list[dict]:
    """Declarations of a WhyML file (read by sonnx.trace.whyml), each with module, kind, name,
    line and the req IDs of its annotation. What the proofs assume is listed from Why3's own
    view of the theories by sonnx.trace.proof_assumptions, not from this text."""
    out = []
    for d in whyml.declarations(Path(mlw_path).read_text(encoding="utf-8")):
        m = REQ_RE.search(d.comment)
        ids = ID_RE.findall(m.group(1)) if m else []
        out.append({"module": d.module, "kind": d.kind, "name": d.name, "goal": d.name,
                    "line": d.line, "req": ids, "requirements": ids})
    return out


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
    records, ok, files = [], True, mlw_files()
    for rel in files:
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
        for rel in files:
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


# --- Python front-end -------------------------------------------------------------

class Why3OutputError(ValueError):
    """`why3 prove --json` printed something that is not a well-formed goal record."""


def parse_why3_json(stdout: str) -> list[dict]:
    """The goal records of ``why3 prove --json`` (Why3 1.5.1 prints one JSON object per VC,
    a stream, not an array), in output order: line, chars, explanation, answer, time.

    Raises Why3OutputError on anything that is not such an object (stray text, a record
    without location or answer), so that no VC can be silently lost."""
    dec, out, end = json.JSONDecoder(), [], 0
    # a loop over the non-blank characters, not `while True`: it ends whatever the decoder
    # returns; an object starts at the first one after the end of the object before it
    for m in re.finditer(r"\S", stdout):
        i = m.start()
        if i < end:
            continue
        try:
            o, end = dec.raw_decode(stdout, i)
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
    return out


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


def parse_py(path) -> dict[str, list[str]]:
    """Function name -> req IDs (and family tokens) from a ``# req: ...`` comment just above
    its ``def``."""
    lines = Path(path).read_text().splitlines()
    out = {}
    for n, line in enumerate(lines):
        m = re.match(r"\s*def\s+(\w+)", line)
        if m:
            prev = lines[n - 1] if n else ""
            rm = re.match(r"\s*#\s*req:\s*(.*)", prev)
            out[m.group(1)] = ID_RE.findall(rm.group(1)) if rm else []
    return out


def _label(g: dict) -> str:
    return f'{g["goal"]}: {g["vc"]}' if g.get("vc") else g["goal"]


def table(s: dict) -> str:
    """The goals as a text table; every cell printed whole (columns as wide as their
    widest cell), then the goals not proved, a line per file and the totals."""
    head = ("file", "theory", "goal", "req", "prover", "result", "time")
    cells = [head] + [(g["file"], g["theory"], _label(g),
                       ",".join(g["req"]), g["prover"], g["result"], str(g["time"])) for g in s["goals"]]
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    rows = [" ".join(c.ljust(w) for c, w in zip(cs, widths)).rstrip() for cs in cells]
    for g in s["goals"]:
        if g["result"] != "valid":
            rows.append(f'NOT PROVED: {g["file"]} {g["theory"]} {_label(g)} -- {g["result"]} '
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


