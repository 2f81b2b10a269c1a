"""Judge each requirement: is it covered as its registry entry demands, and is each link green?

Inputs are read, never kept by hand: the registry, the links found in the sources
(links.py) and the declared supports (spec/trace-supports.toml), the proof replay summary or
the Why3 sessions (proofs.py), the JUnit XML of the last test run (junit.py), the CrossHair
campaign summary (crosshair.py), the reviewed fingerprints (baseline.py), the recorded
justifications of known gaps and skips (``[[gap]]``/``[[skip]]`` of the requirement data files,
and spec/trace-justifications.toml for those of no one operator) and the reviewed claims of
what each requirement's evidence establishes (claims.py, the data files' ``[[claim]]``): a row
whose claims declare a part not proved is *partial*, never plain green.

Nothing unclear is green: a result file made on another tree (its recorded input hash is not
that of the judged tree, see inputs.py) is stale; a tool's own "not ok" is a defect; a test or
goal that reaches no row is a defect; a malformed file is an EvidenceError (exit 2).
"""
from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import requirements as registry_mod
from . import baseline, claims as claims_mod, crosshair, junit, links as links_mod, running as running_mod
from .files import read_json_object
from .inputs import step_inputs

JUSTIFICATIONS = Path("spec") / "trace-justifications.toml"
# Each judgement the trace makes, with what it is required to catch: the defect kinds, then the
# state "partial". The qualification kit makes one Tool Operational Requirement of each
# (tools/sonnx_dev/qualification.py, docs/qualification.md).
JUDGEMENTS = {
    "uncovered": "a kind of link the requirement demands (spec, code, proof, test, crosshair) is missing and no reviewed gap justifies it",
    "orphan": "an ID or @family named in the sources, or given a [[claim]], is not in the registry",
    "failing": "a linked test failed, errored or was rerun, a CrossHair harness found a counterexample or ran nothing, a mutant survived, or a campaign says ok: false",
    "not run": "a linked test has no result, or a goal has no replay",
    "skipped": "a linked test case was skipped without a reviewed skip",
    "unproved": "a linked proof goal (every VC and subgoal) is not proved, its replay failed, or the proof summary says ok: false",
    "stale": "a result file was made on another tree (its recorded input hash is not the judged tree's)",
    "unlinked": "a test or proof goal names no requirement and is declared for none, or a failing test reaches no row",
    "claim": "a requirement's [[claim]] parts are missing or wrong (unlinked evidence, an unproved part without a gap, a gap file missing or not naming it)",
    "wg": "a requirement has no working-group cross-reference",
    "suspect": "a requirement's statement, entry, claims, goals, what they use, or code sites differ from the reviewed baseline",
    "partial": "a row whose claims declare a part not proved as stated is partial, never ok (exit 1 with --no-partial)",
}
DEFECT_KINDS = tuple(k for k in JUDGEMENTS if k != "partial")
SCHEMA = "sonnx-trace/5"
GREEN = ("proved", "passed", "confirmed", "no counterexample")


def wg_text(w: dict) -> str:
    """One working-group cross-reference of a row as every format writes it in full:
    ``relation document#tag: reason``."""
    return f"{w['relation']} {w['ref']}" + (f": {w['reason']}" if w.get("reason") else "")


class EvidenceError(ValueError):
    """An evidence file that cannot be judged (malformed, wrong kind, not a regular file)."""


@dataclass
class Defect:
    kind: str          # one of DEFECT_KINDS
    requirement: str
    detail: str


@dataclass
class Row:
    id: str
    title: str
    statement: str
    verification: list[str]
    spec: list[dict] = field(default_factory=list)
    code: list[dict] = field(default_factory=list)
    proof: list[dict] = field(default_factory=list)
    test: list[dict] = field(default_factory=list)
    crosshair: list[dict] = field(default_factory=list)
    justified: list[dict] = field(default_factory=list)
    claims: list[dict] = field(default_factory=list)     # the parts of its [[claim]] entries
    suspect: list[str] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)
    defects: list[Defect] = field(default_factory=list)
    source: str = ""        # the documents the requirement comes from (its data entry's `source`)
    wg: list[dict] = field(default_factory=list)    # its working-group cross-references {ref, relation, reason}
    # the code that runs for it: how the default engine's is checked, the proved engine's C entry
    # points (running.py)
    running: dict = field(default_factory=dict)

    @property
    def state(self) -> str:
        if any(d.kind != "suspect" for d in self.defects):
            return "defect"
        if self.defects:
            return "suspect"
        if any(c["gap"] for c in self.claims):
            return "partial"
        return "ok"


@dataclass
class Matrix:
    rows: list[Row]
    orphans: list[Defect]
    inputs: dict
    evidence: list[Defect] = field(default_factory=list)   # defects of no single row

    @property
    def defects(self) -> list[Defect]:
        return [d for r in self.rows for d in r.defects] + self.orphans + self.evidence

    def as_dict(self) -> dict:
        rows = []
        for r in self.rows:
            d = asdict(r)
            d["state"] = r.state
            rows.append(d)
        return {"schema": SCHEMA, "inputs": self.inputs, "requirements": rows,
                "orphans": [asdict(o) for o in self.orphans],
                "evidence": [asdict(d) for d in self.evidence],
                "summary": {"requirements": len(self.rows),
                            "ok": sum(r.state == "ok" for r in self.rows),
                            "partial": sum(r.state == "partial" for r in self.rows),
                            "suspect": sum(r.state == "suspect" for r in self.rows),
                            "defect": sum(r.state == "defect" for r in self.rows),
                            "defects": len(self.defects)}}


def _justifications(root: Path) -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    """Reviewed gaps (``[[gap]] id, kind, justification``) and reviewed skips (``[[skip]] case,
    justification``: a test case, ``classname::name[params]``, that is skipped on purpose): an
    operator's in its data file, those of no one operator in spec/trace-justifications.toml."""
    path = root / JUSTIFICATIONS
    gaps: list[dict] = []
    skips: list[dict] = []
    try:
        if path.exists():
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            gaps += data.get("gap", [])
            skips += data.get("skip", [])
    except tomllib.TOMLDecodeError as exc:
        raise EvidenceError(f"{path}: malformed ({type(exc).__name__}: {exc})") from None
    try:
        data = registry_mod.tables(root)
    except ValueError as exc:
        raise EvidenceError(str(exc)) from None
    gaps += data["gap"]
    skips += data["skip"]
    try:
        return ({(g["id"], g["kind"]): g["justification"] for g in gaps},
                {s["case"]: s["justification"] for s in skips})
    except (KeyError, TypeError) as exc:
        raise EvidenceError(f"a [[gap]] or [[skip]] entry is malformed ({type(exc).__name__}: {exc})") from None


def _read_json(path: Path, kind: str) -> dict:
    try:
        return read_json_object(path, kind)
    except ValueError as exc:
        raise EvidenceError(str(exc)) from None


def _fresh(root: Path, step: str, recorded: object) -> bool:
    """Whether a result file's recorded inputs are those of the judged tree."""
    if isinstance(recorded, dict):
        recorded = recorded.get("sha256")
    return isinstance(recorded, str) and recorded == step_inputs(root, step)["sha256"]


def _proof_records(root: Path, replayed: Path) -> tuple[list[dict], str, list[Defect]]:
    """The goal records (file, theory, goal, req, result) and where they come from.

    The replay summary of the last `tools/prove` run (build/evidence/proofs.json) is preferred;
    without it, the status recorded in the committed Why3 sessions is used, and said so (the
    Python front-end has no session: without a replay it was simply not run).
    """
    from . import proofs
    problems: list[Defect] = []
    if not replayed.exists():
        records = list(proofs.summary(root)["goals"])
        for rel in proofs.PY_FILES:
            if (root / rel).exists():
                records += [{"file": rel, "theory": "python", "goal": name, "req": ids,
                             "result": "not replayed", "prover": "", "time": None}
                            for name, ids in proofs.parse_py(root / rel).items()]
        return records, "session (not replayed)", problems
    data = _read_json(replayed, "proof")
    records, replay = data.get("goals"), data.get("replay", {})
    if not isinstance(records, list) or not isinstance(replay, dict) or not isinstance(data.get("ok"), bool):
        raise EvidenceError(f"{replayed}: a proof summary needs ok (bool), goals (list), replay (object)")
    if data["ok"] is not True:
        problems.append(Defect("unproved", "-", f"{replayed.name} says ok=false"))
    failed_replays = {f: rc for f, rc in replay.items() if rc != 0}
    for f, rc in sorted(failed_replays.items()):
        problems.append(Defect("unproved", "-", f"replay of {f} exited with {rc}"))
    out = []
    for r in records:
        if not (isinstance(r, dict) and all(isinstance(r.get(k), str) for k in ("file", "theory", "goal", "result"))
                and isinstance(r.get("req", []), list) and isinstance(r.get("time") or 0, (int, float))):
            raise EvidenceError(f"{replayed}: a goal record needs file, theory, goal, result (strings), "
                                "req (list) and time (number)")
        result = r["result"]
        if r["file"] in failed_replays and result == "valid":
            result = f"replay exit {failed_replays[r['file']]}"
        out.append({**r, "req": r.get("req", []), "result": result})
    if not _fresh(root, "proofs", data.get("inputs")):
        problems.append(Defect("stale", "-", f"{replayed.name} was made on another tree (its inputs differ)"))
        out = [{**r, "result": "stale"} for r in out]
    return out, "replay", problems


def _aggregate(records: list[dict], key) -> dict[tuple, dict]:
    """Records grouped by ``key(record)``: proved only when every record (every VC, every
    subgoal of a split) is valid."""
    out: dict[tuple, dict] = {}
    for r in records:
        entry = out.setdefault(key(r), {"status": "proved", "prover": set(), "time": 0.0})
        if r["result"] != "valid":
            entry["status"] = "unproved" if r["result"] == "not proved" else r["result"]
        entry["prover"].update(p for p in str(r.get("prover") or "").split(",") if p)
        entry["time"] = round(entry["time"] + float(r.get("time") or 0), 2)
    for entry in out.values():
        entry["prover"] = ",".join(sorted(entry["prover"]))
    return out


def _decl(r: dict) -> str:
    return r["goal"].split("'vc")[0]


def _crosshair_results(root: Path, path: Path) -> tuple[list[dict], list[Defect]]:
    if not path.exists():
        return [], []
    try:
        summary = crosshair.load_summary(path)
        entries = crosshair.judge(summary)
    except (KeyError, TypeError, AttributeError) as exc:
        raise EvidenceError(f"{path}: malformed CrossHair summary ({type(exc).__name__}: {exc})") from None
    except ValueError as exc:
        raise EvidenceError(str(exc)) from None
    problems = []
    if summary["ok"] is not True:
        listed = summary.get("problems") or ["no problem listed"]
        problems.append(Defect("failing", "-", f"{path.name} says ok=false: {'; '.join(map(str, listed))[:300]}"))
    if not _fresh(root, "crosshair", summary.get("inputs")):
        problems.append(Defect("stale", "-", f"{path.name} was made on another tree (its inputs differ)"))
        entries = [{**e, "status": "stale"} for e in entries]
    return entries, problems


def _tests(root: Path, path: Path) -> tuple[dict, list[Defect], bool]:
    if not path.exists():
        return {}, [], False
    try:
        report = junit.parse(path)
    except junit.JUnitError as exc:
        raise EvidenceError(str(exc)) from None
    if not _fresh(root, "tests", report.inputs):
        return report.cases, [Defect("stale", "-", f"{path.name} was made on another tree (its inputs differ)")], True
    return report.cases, [], False


def build(root: Path, *, junit_path: Path | None = None, crosshair_path: Path | None = None,
          proofs_path: Path | None = None, registry: dict | None = None) -> Matrix:
    """The matrix of ``root``. EvidenceError when an evidence file cannot be judged."""
    registry = registry if registry is not None else registry_mod.load()
    junit_path = junit_path or root / "build" / "evidence" / "junit.xml"
    crosshair_path = crosshair_path or root / "build" / "evidence" / "crosshair.json"
    proofs_path = proofs_path or root / "build" / "evidence" / "proofs.json"
    try:
        found = links_mod.collect(root, registry=registry)
    except ValueError as exc:       # spec/trace-supports.toml malformed
        raise EvidenceError(str(exc)) from None
    tests, evidence, tests_stale = _tests(root, junit_path)
    records, proof_source, problems = _proof_records(root, proofs_path)
    evidence += problems
    harnesses, problems = _crosshair_results(root, crosshair_path)
    evidence += problems
    by_decl = _aggregate(records, lambda r: (r["file"], _decl(r)))
    declared_goals = found.declared_goals
    unmarked = [r for r in records if not r["req"]]
    by_theory_decl = _aggregate(unmarked, lambda r: (r["file"], f"{r['theory']}.{_decl(r)}"))
    justified, skips = _justifications(root)
    try:
        claimed = claims_mod.load(root)
        texts = baseline.site_texts(root, registry, found)
    except ValueError as exc:       # a data file's [[claim]] malformed
        raise EvidenceError(str(exc)) from None
    reviewed = baseline.load(root)
    suspects = baseline.suspects(baseline.fingerprints(texts), reviewed)
    diffs = baseline.diffs(root, texts, reviewed, baseline.load_sources(root))

    rows = []
    proved_c, default_c = running_mod.proved_entries(), running_mod.default_entries()
    for rid, req in registry.items():
        row = Row(rid, req.title, req.statement, list(req.verification), source=req.source,
                  wg=[w.as_dict() for w in getattr(req, "wg", ())])
        if not row.wg:      # every requirement says what it is of the working group's texts
            row.defects.append(Defect("wg", rid, "no working-group cross-reference ([[requirement.wg]] "
                                                 "in its data file: refines, departs or none, with the reason)"))
        row.spec = [{"path": s.path, "line": s.line} for s in found.of(rid, "spec")]
        row.code = [{"path": s.path, "line": s.line, "name": s.name} for s in found.of(rid, "code")]
        for s in found.of(rid, "proof"):
            st = by_decl.get((s.path, s.name), {})
            row.proof.append({"path": s.path, "line": s.line, "goal": s.name, "declared": False,
                              "status": st.get("status", "missing"), "prover": st.get("prover", ""),
                              "time": st.get("time"), "source": proof_source})
        for (file, goal), st in sorted(by_theory_decl.items()):
            if any(d["path"] == file and rid in d["supports"] and fnmatch.fnmatchcase(goal, d["pattern"])
                   for d in declared_goals):
                row.proof.append({"path": file, "line": 0, "goal": goal, "declared": True,
                                  "status": st["status"], "prover": st["prover"], "time": st["time"],
                                  "source": proof_source})
        seen_tests = set()
        for s in found.of(rid, "test") + found.of(rid, "test-declared"):
            if s.name in seen_tests:
                continue
            seen_tests.add(s.name)
            full = junit.outcome_of(s.name, tests)
            out = full.without(set(skips))
            row.justified += [{"kind": "skip", "justification": f"{c}: {skips[c]}"}
                              for c in full.skips if c in skips and s.kind == "test"]
            status = "stale" if tests_stale and out.status != "not run" else out.status
            # a tool test: declared as a support, or marked for @every (it tests what every row
            # relies on, not this requirement); counted apart in the reports
            same = [o for o in found.of(rid, "test") if o.name == s.name]
            tool = s.kind == "test-declared" or bool(same) and all((rid, o) in found.every_only for o in same)
            row.test.append({"test": s.name, "path": s.path, "line": s.line, "status": status,
                             "declared": s.kind == "test-declared", "tool": tool, "passed": out.passed,
                             "failed": out.failed, "skipped": out.skipped, "failures": out.failures[:5]})
        row.crosshair = [h for h in harnesses if rid in h.get("requirements", [])]
        row.running = running_mod.running(any(not t["tool"] for t in row.test), bool(row.crosshair),
                                          proved_c.get(rid, []), default_c.get(rid, []))

        # coverage: spec and code always, the rest as the registry entry demands; a declared
        # support never covers (only an explicit marker does), it can only turn the row red
        demanded = ["spec", "code", *req.verification]
        present = {"spec": row.spec, "code": row.code, "proof": [p for p in row.proof if not p["declared"]],
                   "test": [t for t in row.test if not t["declared"]], "crosshair": row.crosshair}
        for kind in demanded:
            if present[kind]:
                continue
            if (rid, kind) in justified:
                row.justified.append({"kind": kind, "justification": justified[(rid, kind)]})
            else:
                row.defects.append(Defect("uncovered", rid, f"no {kind} link"))
        for p in row.proof:
            if p["status"] == "not replayed":
                row.defects.append(Defect("not run", rid, f"{p['path']}:{p['goal']}: no replay summary"))
            elif p["status"] == "stale":
                continue                # one line per row, below
            elif p["status"] != "proved":
                row.defects.append(Defect("unproved", rid, f"{p['path']}:{p['goal']} is {p['status']}"))
        for t in row.test:
            if t["status"] == "failed":
                row.defects.append(Defect("failing", rid, f"{t['test']}: {t['failed']} failed case(s)"))
            elif t["status"] == "skipped":
                row.defects.append(Defect("skipped", rid, f"{t['test']}: {t['skipped']} skipped case(s)"))
            elif t["status"] == "stale":
                continue
            elif t["status"] == "not run" and "test" in req.verification:
                row.defects.append(Defect("not run", rid, f"{t['test']} has no result in {junit_path.name}"))
        for h in row.crosshair:
            if h["status"] not in GREEN and h["status"] != "stale":
                row.defects.append(Defect("failing", rid, f"CrossHair {h['harness']}: {h['status']}"))
        for kind, entries in (("proof", row.proof), ("test", row.test), ("CrossHair", row.crosshair)):
            n = sum(e["status"] == "stale" for e in entries)
            if n:
                row.defects.append(Defect("stale", rid, f"{n} {kind} result(s) made on another tree"))
        if rid not in claimed:
            row.defects.append(Defect("claim", rid, claims_mod.missing_entry(rid)))
        else:
            row.claims, problems = claims_mod.judge(
                root, rid, claimed[rid], {"proof": row.proof, "crosshair": row.crosshair, "test": row.test},
                "proof" in req.verification, crosshair_path.exists())
            row.defects += [Defect("claim", rid, p) for p in problems]
        row.suspect = suspects.get(rid, [])
        row.diffs = diffs.get(rid, {})
        for reason in row.suspect:
            row.defects.append(Defect("suspect", rid, reason))
        rows.append(row)

    # every test and goal reaches a row, and every failure with it
    evidence += [Defect("unlinked", "-", f"{t}: names no requirement and is declared for none")
                 for t in links_mod.unlinked_tests(root, found)]
    for (file, goal) in sorted(by_theory_decl):
        if not any(d["path"] == file and fnmatch.fnmatchcase(goal, d["pattern"]) for d in declared_goals):
            evidence.append(Defect("unlinked", "-", f"{file}:{goal}: goal names no requirement and is declared for none"))
    sites = [s.name for sites in found.sites.values() for s in sites if s.kind in ("test", "test-declared")]
    for (classname, func), out in sorted(tests.items()):
        if out.status in ("failed", "skipped") and not any(junit.matches(n, classname, func) for n in sites):
            evidence.append(Defect("failing" if out.failed else "skipped", "-",
                                   f"{classname}::{func} is {out.status} and reaches no row"))

    orphans = [Defect("orphan", rid, "named in " + ", ".join(f"{s.path}:{s.line}" for s in sites[:3]))
               for rid, sites in sorted(found.mentions.items()) if rid not in registry]
    orphans += [Defect("orphan", rid, "has a [[claim]] entry in a requirement data file")
                for rid in sorted(claimed) if rid not in registry]
    orphans += [Defect("orphan", token, f"unknown family {token}, named in "
                       + ", ".join(f"{s.path}:{s.line}" for s in sites[:3])
                       + f" (families: {registry_mod.family_help()})")
                for token, sites in sorted(found.unknown_families.items())]
    inputs = {"junit": _shown(junit_path, root), "junit_found": junit_path.exists(),
              "crosshair": _shown(crosshair_path, root), "crosshair_found": crosshair_path.exists(),
              "proofs": proof_source, **_made(root), "configuration": _configuration(root)}
    return Matrix(rows, orphans, inputs, evidence)


def _configuration(root: Path) -> dict:
    """The judging tool's configuration identity (sonnx.qualification), with the registry hash
    of the judged checkout when it has one."""
    from ..qualification import configuration
    own = (root / "src" / "sonnx").is_dir()
    return configuration(root if own else None)


def _made(root: Path) -> dict:
    """When and on which commit the matrix was made: every report says what it judged."""
    import datetime
    import subprocess
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=60)
        commit = out.stdout.strip() if out.returncode == 0 else None
        st = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True, timeout=60)
        dirty = bool(st.stdout.strip()) if st.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        commit, dirty = None, None
    return {"commit": commit, "dirty": dirty,
            "made_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
