"""Why3 proof evidence: requirement annotations, session statuses, summary.

Conventions (see proofs/README.md):
- a comment ``(* req: MUL-R1, MUL-R4 *)`` (optionally followed by `` -- prose``) on the
  line(s) immediately before a declaration (lemma, goal, let, let rec, predicate,
  function) names the requirements that declaration verifies or implements;
- sessions live in ``proofs/<stem>/why3session.xml`` beside ``proofs/<stem>.mlw``;
- Python files proved through Why3's Python front-end are listed in PY_FILES and proved
  with ``why3 prove`` (Why3 1.5.1 sessions cannot be built for them without the IDE).

Used by tools/prove (``python -m sonnx.trace.proofs summary``) and by the trace tool.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

MLW_FILES = ["proofs/tensor.mlw", "proofs/mul.mlw"]
PY_FILES = ["src/sonnx/ops/intloops.py"]
PROVERS = {  # session prover -> (name, version, alternative) of proofs/why3.conf
    "z3": ("Z3", "5.4.0", "pip"),
    "z3noauto": ("Z3", "5.4.0", "noauto"),
    "cvc5": ("CVC5", "1.0.3", ""),
}
REQ_RE = re.compile(r"\(\*\s*req:\s*((?:(?:MUL|GEMM|PROF)-R\d+\s*,?\s*)+)(?:--.*?)?\*\)", re.S)
ID_RE = re.compile(r"(?:MUL|GEMM|PROF)-R\d+")
DECL_RE = re.compile(
    r"^\s*(?:let\s+rec\s+lemma|let\s+lemma|let\s+rec\s+ghost|let\s+ghost\s+function|"
    r"let\s+ghost\s+predicate|let\s+rec\s+function|let\s+function|let\s+predicate|"
    r"let\s+rec|let\s+ghost|let|lemma|goal|predicate|function|axiom|val\s+function|"
    r"val\s+predicate|val\s+ghost|val\s+constant|val)\s+([A-Za-z_][\w']*)"
)
MODULE_RE = re.compile(r"^\s*(?:module|theory)\s+(\w+)")
HEADER = ('<?xml version="1.0" encoding="UTF-8"?>\n'
          '<!DOCTYPE why3session PUBLIC "-//Why3//proof session v5//EN"\n'
          '"http://why3.lri.fr/why3session.dtd">\n')


def parse_goals(mlw_path) -> list[dict]:
    """Declarations of a WhyML file, each with module, kind, name, line, req IDs.

    Also marks assumptions: ``axiom``s, and ``val``s that carry an ``ensures``
    (their specification is assumed, not proved)."""
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
        head = line.split()[0:3]
        kind = " ".join(w for w in head if w in ("let", "rec", "lemma", "goal", "predicate",
                                                   "function", "axiom", "val", "ghost",
                                                   "constant"))
        ids = _preceding_req(lines, n)
        entry = {"module": module, "kind": kind, "name": d.group(1), "goal": d.group(1),
                 "line": n + 1, "req": ids, "requirements": ids}
        if kind.startswith("axiom"):
            entry["assumption"] = True
        elif kind.startswith("val"):
            body = _decl_text(lines, n)
            entry["assumption"] = "ensures" in body
        out.append(entry)
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


def _decl_text(lines, n) -> str:
    """The declaration starting at line n, up to the next blank line or declaration."""
    text = [lines[n]]
    for line in lines[n + 1:]:
        if not line.strip() or DECL_RE.match(line) or MODULE_RE.match(line):
            break
        text.append(line)
    return "\n".join(text)


def read_session(session_dir) -> list[dict]:
    """Top-level goals of a session: theory, goal, proved, provers, time (sum of leaves)."""
    root = ET.parse(Path(session_dir) / "why3session.xml").getroot()
    provers = {p.get("id"): _prover_key(p) for p in root.findall("prover")}
    out = []
    for th in root.iter("theory"):
        for g in th.findall("goal"):
            used, time, ok = set(), 0.0, _proved(g)
            for pr in g.iter("proof"):
                used.add(provers.get(pr.get("prover"), "?"))
                r = pr.find("result")
                if r is not None:
                    time += float(r.get("time", "0"))
            out.append({"theory": th.get("name"), "goal": g.get("name"),
                        "proved": ok, "provers": sorted(used), "time": round(time, 2)})
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


def summary(repo_root, replay: dict | None = None, py_results: list | None = None) -> dict:
    """Join annotations and session statuses for every proof file of the repository."""
    root = Path(repo_root)
    records, assumptions, ok = [], [], True
    for rel in MLW_FILES:
        decls = parse_goals(root / rel)
        by_name = {(d["module"], d["name"]): d for d in decls}
        for d in decls:
            if d.get("assumption"):
                assumptions.append({"file": rel, "module": d["module"], "name": d["name"],
                                    "kind": d["kind"], "line": d["line"]})
        sess = root / rel[:-4]
        goals = read_session(sess) if (sess / "why3session.xml").exists() else []
        if not goals:
            ok = False
        for g in goals:
            d = by_name.get((g["theory"], _decl_of_goal(g["goal"])), {})
            result = "valid" if g["proved"] else "not proved"
            if replay is not None and replay.get(rel, 1) != 0:
                result = result if not g["proved"] else "valid (replay failed)"
            ok &= result == "valid"
            records.append({"file": rel, "theory": g["theory"], "goal": g["goal"],
                            "req": d.get("req", []), "prover": ",".join(g["provers"]),
                            "result": result, "time": g["time"]})
    py = list(py_results or [])
    return {"ok": bool(ok), "goals": records, "assumptions": assumptions,
            "replay": replay or {},
            # Python front-end VCs are reported, not gating: see proofs/README.md
            "python_frontend": {"vcs": py, "proved": sum(r["result"] == "valid" for r in py),
                                "total": len(py)}}


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

def prove_py(repo_root, rel, provers=("z3", "cvc5"), timelimit=10) -> list[dict]:
    """Prove a Python-subset file with ``why3 prove -a split_vc``, once per prover; a VC
    counts as proved when one prover proves it. One record per VC (file line, kind)."""
    root = Path(repo_root)
    reqs = parse_py(root / rel)
    vcs: dict[tuple, dict] = {}
    failure = None
    for prover in provers:
        cmd = ["why3", "-C", "proofs/why3.conf", "prove", "-P", prover, "-t", str(timelimit),
               "-a", "split_vc", rel]
        p = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
        if p.returncode != 0:
            failure = f"{prover}: rc={p.returncode} " + (p.stderr.strip().splitlines() or [""])[-1]
        pat = (r'File "[^"]*", line (\d+), characters (\d+)-(\d+):\n(?:Sub-goal (.*?) of )?'
               r'[Gg]oal (\S+)\.\nProver result is: (\w+)[^(\n]*\(([\d.]+)s')
        for m in re.finditer(pat, p.stdout):
            line, c0, c1, kind, goal, status, t = m.groups()
            rec = vcs.setdefault((int(line), c0, c1, kind or goal),
                                 {"valid": False, "prover": "", "time": 0.0})
            if status == "Valid" and not rec["valid"]:
                rec.update(valid=True, prover=prover, time=float(t))
    out = []
    for (line, c0, c1, kind), r in sorted(vcs.items()):
        fn = _py_function_at(root / rel, line)
        out.append({"file": rel, "theory": "python", "goal": f"{fn}: {kind} (line {line}:{c0})",
                    "req": reqs.get(fn, []), "prover": r["prover"],
                    "result": "valid" if r["valid"] else "not proved", "time": r["time"]})
    if failure or not out:
        out.append({"file": rel, "theory": "python", "goal": "(why3 prove)", "req": [],
                    "prover": ",".join(provers), "result": f"failed {failure}", "time": 0})
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
    rows = [f'{"file":18} {"theory":22} {"goal":34} {"req":18} {"prover":14} {"result":12} time']
    for g in s["goals"]:
        rows.append(f'{g["file"][-18:]:18} {g["theory"][:22]:22} {g["goal"][:34]:34} '
                    f'{",".join(g["req"])[:18]:18} {g["prover"][:14]:14} {g["result"][:12]:12} {g["time"]}')
    n_ok = sum(g["result"] == "valid" for g in s["goals"])
    py = s.get("python_frontend", {})
    for g in py.get("vcs", []):
        if g["result"] != "valid":
            rows.append(f'  python front-end, NOT PROVED (not gating): {g["file"]} {g["goal"]}')
    rows.append(f'python front-end: {py.get("proved", 0)}/{py.get("total", 0)} VCs proved')
    rows.append(f'{n_ok}/{len(s["goals"])} goals valid; assumptions beyond the stdlib: '
                + (", ".join(f'{a["module"]}.{a["name"]}' for a in s["assumptions"]) or "none"))
    return "\n".join(rows)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path.cwd()
    if argv[:1] == ["build"]:
        return build_session(root, argv[1])
    if argv[:1] == ["summary"]:
        replay = json.loads(argv[1]) if len(argv) > 1 else None
        py = [r for rel in PY_FILES for r in prove_py(root, rel)]
        s = summary(root, replay, py)
        out = root / "build" / "evidence" / "proofs.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(s, indent=1) + "\n")
        print(table(s))
        print(f"written {out.relative_to(root)}")
        return 0 if s["ok"] else 1
    print("usage: python -m sonnx.trace.proofs build proofs/X.mlw | summary ['{replay json}']")
    return 2


if __name__ == "__main__":
    sys.exit(main())
