"""Reader of the CrossHair campaign's summary (build/evidence/crosshair.json).

The campaign itself lives in tests/crosshair/ (``tools/crosshair``); this module only reads what
it wrote, for the trace tool and the evidence bundle, and says per requirement what CrossHair
showed.
"""
from __future__ import annotations

from pathlib import Path

from .files import read_json_object

SCHEMA = 1


def load_summary(path: str | Path) -> dict:
    """The summary as a dict; ValueError if it is not a CrossHair summary of a known schema."""
    path = Path(path)
    data = read_json_object(path, "CrossHair")
    if data.get("tool") != "crosshair" or data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not a CrossHair summary of schema {SCHEMA}")
    for key, kind in (("harnesses", list), ("witnesses", list), ("mutants", list), ("ok", bool)):
        if not isinstance(data.get(key), kind):
            raise ValueError(f"{path}: {key!r} missing or not a {kind.__name__}")
    return data


def harness_status(h: dict, witnesses: list[dict]) -> str:
    """The verdict of one harness, judged from what it ran, not from its own flag alone:
    a harness that ran no case or no iteration, lost a case, or has a failing case failed."""
    cases = h["cases"]
    if h["result"] != "ok":
        return f"failed ({h['result']})"
    if h["cases_total"] <= 0 or h["iterations"] <= 0 or not cases:
        return f"failed (empty: {h['cases_total']} cases, {h['iterations']} iterations)"
    if len(cases) != h["cases_total"] or not all(c["ok"] is True for c in cases):
        return "failed (a case failed or is missing)"
    if not witnesses or not all(w["refuted"] is True for w in witnesses):
        return "failed (witness not refuted)"
    if h["confirmed_over_all_paths"] == h["cases_total"]:
        return "confirmed"
    return "no counterexample"


def judge(summary: dict) -> list[dict]:
    """One entry per harness and per planted mutant, with its requirement IDs and status:
    ``confirmed`` (every case confirmed over all paths), ``no counterexample``, or
    ``failed (...)``. Witnesses and mutants of a harness ride along: an unrefuted witness or
    a surviving mutant makes the evidence void."""
    out = []
    for entry in summary["harnesses"] + summary["mutants"]:
        if not (isinstance(entry["requirements"], list) and all(isinstance(r, str) for r in entry["requirements"])):
            raise TypeError(f"requirements of {entry['name']!r} is not a list of IDs")
    for h in summary["harnesses"]:
        witnesses = [w for w in summary["witnesses"] if w["harness"] == h["name"]]
        out.append({"harness": h["name"], "requirements": list(h["requirements"]),
                    "status": harness_status(h, witnesses), "mode": h.get("mode", ""),
                    "confirmed_cases": h["confirmed_over_all_paths"], "cases": h["cases_total"],
                    "spec_reached": h.get("spec_reached")})
    for m in summary["mutants"]:
        out.append({"harness": f"mutant {m['name']}", "requirements": list(m["requirements"]),
                    "status": "confirmed" if m["caught"] is True else "failed (mutant survived)",
                    "mode": "mutant", "confirmed_cases": int(m["caught"] is True), "cases": 1,
                    "spec_reached": None})
    return out
