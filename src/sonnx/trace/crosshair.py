"""Reader of the CrossHair campaign's summary (build/evidence/crosshair.json).

The campaign itself lives in tests/crosshair/ (``tools/crosshair``); this module only reads what
it wrote, for the trace tool and the evidence bundle, and says per requirement what CrossHair
showed.
"""
from __future__ import annotations

import json
from pathlib import Path

SCHEMA = 1


def load_summary(path: str | Path) -> dict:
    """The summary as a dict; ValueError if it is not a CrossHair summary of a known schema."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("tool") != "crosshair" or data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not a CrossHair summary of schema {SCHEMA}")
    for key in ("harnesses", "witnesses", "mutants", "ok"):
        if key not in data:
            raise ValueError(f"{path}: no {key!r} in the summary")
    return data


def requirement_status(summary: dict) -> dict[str, dict]:
    """Per requirement ID: the harnesses naming it, whether all passed, how many of their cases
    were confirmed over all paths, and whether the mutants aimed at it were all caught."""
    out: dict[str, dict] = {}
    for h in summary["harnesses"]:
        for rid in h["requirements"]:
            r = out.setdefault(rid, {"harnesses": [], "ok": True, "confirmed_cases": 0,
                                     "cases": 0, "mutants": [], "mutants_caught": True})
            r["harnesses"].append(h["name"])
            r["ok"] = r["ok"] and h["result"] == "ok"
            r["confirmed_cases"] += h["confirmed_over_all_paths"]
            r["cases"] += h["cases_total"]
    for m in summary["mutants"]:
        for rid in m["requirements"]:
            r = out.setdefault(rid, {"harnesses": [], "ok": True, "confirmed_cases": 0,
                                     "cases": 0, "mutants": [], "mutants_caught": True})
            r["mutants"].append(m["name"])
            r["mutants_caught"] = r["mutants_caught"] and m["caught"]
    return out
