"""Judge each requirement: is it covered as its registry entry demands, and is each link green?

Inputs are read, never kept by hand: the registry, the links found in the sources
(links.py), the proof status in the Why3 sessions (proofs.py), the JUnit XML of the last test
run (junit.py), the CrossHair campaign summary (crosshair.py), the reviewed fingerprints
(baseline.py) and the recorded justifications of known gaps (spec/trace-justifications.toml).
"""
from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import requirements as registry_mod
from . import baseline, junit, links as links_mod

JUSTIFICATIONS = Path("spec") / "trace-justifications.toml"
DEFECT_KINDS = ("uncovered", "orphan", "failing", "not run", "unproved", "suspect")


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
    suspect: list[str] = field(default_factory=list)
    defects: list[Defect] = field(default_factory=list)

    @property
    def state(self) -> str:
        if any(d.kind != "suspect" for d in self.defects):
            return "defect"
        if self.defects:
            return "suspect"
        return "ok"


@dataclass
class Matrix:
    rows: list[Row]
    orphans: list[Defect]
    inputs: dict

    @property
    def defects(self) -> list[Defect]:
        return [d for r in self.rows for d in r.defects] + self.orphans

    def as_dict(self) -> dict:
        rows = []
        for r in self.rows:
            d = asdict(r)
            d["state"] = r.state
            rows.append(d)
        return {"schema": "sonnx-trace/1", "inputs": self.inputs, "requirements": rows,
                "orphans": [asdict(o) for o in self.orphans],
                "summary": {"requirements": len(self.rows),
                            "ok": sum(r.state == "ok" for r in self.rows),
                            "suspect": sum(r.state == "suspect" for r in self.rows),
                            "defect": sum(r.state == "defect" for r in self.rows),
                            "defects": len(self.defects)}}


def _justifications(root: Path) -> dict[tuple[str, str], str]:
    path = root / JUSTIFICATIONS
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {(g["id"], g["kind"]): g["justification"] for g in data.get("gap", [])}


def _proof_statuses(root: Path, replayed: Path) -> dict[tuple[str, str], dict]:
    """(file, declaration) -> status, prover, time, and where the status comes from.

    The replay summary of the last `tools/prove` run (build/evidence/proofs.json) is preferred;
    without it, the status recorded in the committed Why3 sessions is used, and said so.
    """
    import json

    from . import proofs
    if replayed.exists():
        records, source = json.loads(replayed.read_text(encoding="utf-8"))["goals"], "replay"
    else:
        records, source = proofs.summary(root)["goals"], "session (not replayed)"
    out: dict[tuple[str, str], dict] = {}
    if source != "replay":
        # the Python front-end has no session: without a replay its proof was simply not run
        for rel in proofs.PY_FILES:
            if (root / rel).exists():
                for name in proofs.parse_py(root / rel):
                    out[(rel, name)] = {"file": rel, "goal": name, "status": "not replayed",
                                        "prover": "", "time": None, "source": source}
    for r in records:
        key = (r["file"], r["goal"].split("'vc")[0])
        entry = out.setdefault(key, {"file": key[0], "goal": key[1], "status": "proved",
                                     "prover": set(), "time": 0.0, "source": source})
        if r["result"] != "valid":
            entry["status"] = "unproved" if r["result"] == "not proved" else r["result"]
        entry["prover"].update(p for p in r["prover"].split(",") if p)
        entry["time"] = round(entry["time"] + float(r.get("time") or 0), 2)
    for entry in out.values():
        entry["prover"] = ",".join(sorted(entry["prover"]))
    return out


def _crosshair_results(path: Path) -> list[dict]:
    """One entry per harness of the campaign summary, with its requirement IDs and a status:
    confirmed (every case confirmed over all paths), no counterexample, or the failure.
    Witnesses and mutants of a harness ride along: an unrefuted witness or a surviving mutant
    makes the harness's evidence void."""
    from . import crosshair
    if not path.exists():
        return []
    summary = crosshair.load_summary(path)
    out = []
    for h in summary["harnesses"]:
        witnesses = [w for w in summary["witnesses"] if w["harness"] == h["name"]]
        if h["result"] != "ok":
            status = f"failed ({h['result']})"
        elif not witnesses or not all(w["refuted"] for w in witnesses):
            status = "failed (witness not refuted)"
        elif h["confirmed_over_all_paths"] == h["cases_total"]:
            status = "confirmed"
        else:
            status = "no counterexample"
        out.append({"harness": h["name"], "requirements": h["requirements"], "status": status,
                    "mode": h.get("mode", ""), "confirmed_cases": h["confirmed_over_all_paths"],
                    "cases": h["cases_total"], "spec_reached": h.get("spec_reached")})
    for m in summary["mutants"]:
        out.append({"harness": f"mutant {m['name']}", "requirements": m["requirements"],
                    "status": "confirmed" if m["caught"] else "failed (mutant survived)",
                    "mode": "mutant", "confirmed_cases": int(m["caught"]), "cases": 1,
                    "spec_reached": None})
    return out


def build(root: Path, *, junit_path: Path | None = None, crosshair_path: Path | None = None,
          proofs_path: Path | None = None, registry: dict | None = None) -> Matrix:
    registry = registry if registry is not None else registry_mod.load()
    junit_path = junit_path or root / "build" / "evidence" / "junit.xml"
    crosshair_path = crosshair_path or root / "build" / "evidence" / "crosshair.json"
    proofs_path = proofs_path or root / "build" / "evidence" / "proofs.json"
    found = links_mod.collect(root)
    tests = junit.read(junit_path)
    proof_status = _proof_statuses(root, proofs_path)
    proof_source = next(iter(proof_status.values()), {}).get("source", "no proof status found")
    harnesses = _crosshair_results(crosshair_path)
    justified = _justifications(root)
    suspects = baseline.suspects(baseline.fingerprints(root, registry, found), baseline.load(root))

    rows = []
    for rid, req in registry.items():
        row = Row(rid, req.title, req.statement, list(req.verification))
        row.spec = [{"path": s.path, "line": s.line} for s in found.of(rid, "spec")]
        row.code = [{"path": s.path, "line": s.line, "name": s.name} for s in found.of(rid, "code")]
        for s in found.of(rid, "proof"):
            st = proof_status.get((s.path, s.name), {})
            row.proof.append({"path": s.path, "line": s.line, "goal": s.name,
                              "status": st.get("status", "missing"), "prover": st.get("prover", ""),
                              "time": st.get("time"), "source": st.get("source", "")})
        seen_tests = set()
        for s in found.of(rid, "test"):
            if s.name in seen_tests:
                continue
            seen_tests.add(s.name)
            out = junit.outcome_of(s.name, tests)
            row.test.append({"test": s.name, "path": s.path, "line": s.line, "status": out.status,
                             "passed": out.passed, "failed": out.failed, "skipped": out.skipped,
                             "failures": out.failures[:5]})
        for h in harnesses:
            if rid in h.get("requirements", []):
                row.crosshair.append(h)

        # coverage: spec and code always, the rest as the registry entry demands
        demanded = ["spec", "code", *req.verification]
        present = {"spec": row.spec, "code": row.code, "proof": row.proof, "test": row.test,
                   "crosshair": row.crosshair}
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
            elif p["status"] != "proved":
                row.defects.append(Defect("unproved", rid, f"{p['path']}:{p['goal']} is {p['status']}"))
        for t in row.test:
            if t["status"] == "failed":
                row.defects.append(Defect("failing", rid, f"{t['test']}: {t['failed']} failed case(s)"))
            elif t["status"] == "not run" and "test" in req.verification:
                row.defects.append(Defect("not run", rid, f"{t['test']} has no result in {junit_path.name}"))
        for h in row.crosshair:
            if h.get("status") not in ("confirmed", "no counterexample"):
                row.defects.append(Defect("failing", rid, f"CrossHair {h.get('harness')}: {h.get('status')}"))
        row.suspect = suspects.get(rid, [])
        for reason in row.suspect:
            row.defects.append(Defect("suspect", rid, reason))
        rows.append(row)

    orphans = [Defect("orphan", rid, "named in " + ", ".join(f"{s.path}:{s.line}" for s in sites[:3]))
               for rid, sites in sorted(found.mentions.items()) if rid not in registry]
    inputs = {"junit": str(junit_path.relative_to(root)) if junit_path.is_relative_to(root) else str(junit_path),
              "junit_found": junit_path.exists(),
              "crosshair": str(crosshair_path.relative_to(root)) if crosshair_path.is_relative_to(root) else str(crosshair_path),
              "crosshair_found": crosshair_path.exists(),
              "proofs": proof_source}
    return Matrix(rows, orphans, inputs)
