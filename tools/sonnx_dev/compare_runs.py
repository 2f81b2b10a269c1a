"""Same commit, same verdicts: compare two result files of one evidence step, item by item.

    python -m sonnx_dev.compare_runs A.json B.json      (PYTHONPATH=src:tools; both crosshair.json
                                                         or both proofs.json)

Exit 0: every verdict identical; 1: some verdict differs (each is listed); 2: the files cannot
be compared (unreadable, different kinds, or made on different inputs: their input hashes
differ, so a difference would say nothing about determinism). Iteration counts, prover steps
and counterexamples are compared too and listed, but only verdicts decide the exit status:
they are what a certifier re-runs."""
from __future__ import annotations

import json
import sys


def _crosshair(s: dict) -> tuple[dict, dict]:
    v, d = {"campaign ok": s.get("ok"), "hang guards hit": tuple(s.get("hang_guard_hit", []))}, {}
    for h in s.get("harnesses", []):
        v[f"harness {h['name']}"] = h.get("result")
        for c in h.get("cases", []):
            key = f"case {h['name']}/{c['case']}"
            v[key] = (c.get("verdict"), c.get("status"), c.get("ok"))
            d[key] = (c.get("iterations"), c.get("spec_reached"), c.get("confirmed_paths"))
    for w in s.get("witnesses", []):
        key = f"witness {w['harness']}/{w['name']}"
        cx = w.get("counterexample") or {}
        v[key] = (w.get("refuted"), w.get("hang_guard_hit"), cx.get("replayed"))
        d[key] = (w.get("iterations"), cx.get("args"))
    for m in s.get("mutants", []):
        v[f"mutant {m['name']}"] = (m.get("caught"), m.get("caught_by"))
        for t in m.get("targets", []):
            key = f"mutant {m['name']}/{t['case']}"
            v[key] = (t.get("caught"), t.get("hang_guard_hit"))
            d[key] = (t.get("iterations"), (t.get("counterexample") or {}).get("args"))
    return v, d


def _proofs(s: dict) -> tuple[dict, dict]:
    v = {"proofs ok": s.get("ok"), "hang guards hit": tuple(map(str, s.get("hang_guard_hit", []))),
         "assumptions": tuple(sorted(a.get("at", "") for a in s.get("assumptions", [])))}
    d = {}
    for f, rc in (s.get("replay") or {}).items():
        v[f"replay {f}"] = rc
    for g in s.get("goals", []):
        key = f"goal {g['file']}:{g['theory']}.{g['goal']}"
        v[key] = (g.get("prover"), g.get("result"))
        d[key] = g.get("steps")
    for g in (s.get("python_frontend") or {}).get("vcs", []):
        key = f"vc {g['file']}:{g['goal']}:{g.get('vc')}"
        v[key] = (g.get("prover"), g.get("result"))
        d[key] = g.get("steps")
    return v, d


KINDS = {"crosshair": _crosshair, "proofs": _proofs}


def kind_of(s: dict) -> str | None:
    if s.get("tool") == "crosshair":
        return "crosshair"
    if "goals" in s and "replay" in s:
        return "proofs"
    return None


def compare(a: dict, b: dict) -> tuple[list[str], list[str], int]:
    """(verdicts that differ, details that differ, number of items compared); ValueError when
    the two cannot be compared."""
    ka, kb = kind_of(a), kind_of(b)
    if ka is None or ka != kb:
        raise ValueError(f"not two results of one step (kinds {ka} and {kb})")
    ha, hb = (x.get("inputs", {}).get("sha256") for x in (a, b))
    if not ha or ha != hb:
        raise ValueError(f"made on different inputs ({ha} and {hb}): not the same tree")
    (va, da), (vb, db) = KINDS[ka](a), KINDS[kb](b)
    verdicts = [f"{k}: {va.get(k)!r} vs {vb.get(k)!r}" for k in sorted(set(va) | set(vb)) if va.get(k) != vb.get(k)]
    details = [f"{k}: {da.get(k)!r} vs {db.get(k)!r}" for k in sorted(set(da) | set(db)) if da.get(k) != db.get(k)]
    return verdicts, details, len(set(va) | set(vb))


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        a, b = (json.loads(open(p, encoding="utf-8").read()) for p in argv)
        verdicts, details, n = compare(a, b)
    except (OSError, ValueError, AttributeError, KeyError, TypeError) as exc:
        print(f"compare_runs: cannot compare: {exc}", file=sys.stderr)
        return 2
    print(f"{kind_of(a)}: {n} items compared; verdicts different: {len(verdicts)}; "
          f"iterations/steps/counterexamples different: {len(details)}")
    for line in verdicts:
        print(f"  VERDICT {line}")
    for line in details:
        print(f"  detail  {line}")
    return 1 if verdicts else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
