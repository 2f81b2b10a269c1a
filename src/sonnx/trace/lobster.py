"""The trace matrix as LOBSTER input files (BMW's traceability tools), for a certifier's own report.

``sonnx-requirements.lobster`` (lobster-req-trace: every requirement with its statement, spec
location and sonnx's verdict), ``sonnx-code.lobster`` (lobster-imp-trace: the code sites that
name a requirement), ``sonnx-proofs.lobster``, ``sonnx-tests.lobster`` and
``sonnx-crosshair.lobster`` (lobster-act-trace: proof goals, tests and CrossHair harnesses with
their results) and ``lobster.conf`` (the policy: a requirement is covered when a proof goal or a
test reaches it; code, proofs, tests and harnesses trace to requirements).

LOBSTER judges links, not results: a failing test still counts as a link. So the export carries
sonnx's judgement in the form LOBSTER itself acts on: every defect sonnx found for a row is a
``messages`` entry of that requirement, and an item that has messages is never OK in LOBSTER
(``lobster-report`` marks it partial or missing, ``lobster-ci-report`` prints each message and
exits 1). A failed or missing result is likewise a message on the activity. A row that sonnx
calls partial (a part of its statement not proved, with a reviewed gap) carries the gap as a
justification, which LOBSTER shows as "justified", never as plain OK. Every link is kept.

This module writes JSON only; LOBSTER itself (AGPLv3) is never imported: the tests run it.
"""
from __future__ import annotations

import json
from collections import defaultdict

from .matrix import GREEN, Matrix, Row, wg_text

GENERATOR = "sonnx trace"
LEVEL_REQ, LEVEL_CODE, LEVEL_PROOF, LEVEL_TEST, LEVEL_CROSSHAIR = (
    "Requirements", "Code", "Proofs", "Tests", "CrossHair")
ACTIVITY_LEVELS = {LEVEL_PROOF: "Why3", LEVEL_TEST: "pytest", LEVEL_CROSSHAIR: "CrossHair"}  # level: framework
CONFIG = "lobster.conf"


def activity_file(level: str) -> str:
    return f"sonnx-{level.lower()}.lobster"


FILES = {LEVEL_REQ: "sonnx-requirements.lobster", LEVEL_CODE: "sonnx-code.lobster",
         **{level: activity_file(level) for level in ACTIVITY_LEVELS}, "config": CONFIG}


def _location(path: str | None, line: int | None) -> dict:
    if not path:
        return {"kind": "void"}
    return {"kind": "file", "file": path, "line": line if isinstance(line, int) and line >= 1 else None,
            "column": None}


def _req_tag(rid: str) -> str:
    return f"req {rid}"


def _file(schema: str, version: int, items: list[dict]) -> str:
    return json.dumps({"schema": schema, "version": version, "generator": GENERATOR, "data": items},
                      indent=2) + "\n"


def _requirement(r: Row) -> dict:
    spec = r.spec[0] if r.spec else {}
    item = {"tag": _req_tag(r.id), "location": _location(spec.get("path"), spec.get("line")),
            "name": r.id, "messages": [], "just_up": [], "just_down": [], "just_global": [],
            "framework": "sonnx", "kind": "requirement", "text": f"{r.title}. {r.statement}" + "".join(
                f"\nWG: {wg_text(w)}" for w in r.wg),
            "status": r.state}
    # sonnx's verdict travels as LOBSTER messages: an item with messages is never OK there
    item["messages"] = [f"sonnx trace: {d.kind}: {d.detail}" for d in r.defects]
    if r.state == "partial":
        item["just_global"] = [f"sonnx trace: partial: not proved as stated: {c['part']} "
                               f"(reviewed gap: {c['gap']}){': ' + c['gap_text'] if c.get('gap_text') else ''}"
                               for c in r.claims if c["gap"]]
    item["just_global"] += [f"sonnx trace: justified: no {j['kind']} link: {j['justification']}"
                            for j in r.justified]
    return item


def _grouped(m: Matrix, kind: str, key) -> dict:
    """The links of one kind, grouped by the evidence item they belong to: {key: (entry, [IDs])}."""
    out: dict = {}
    ids: dict = defaultdict(list)
    for r in m.rows:
        for e in getattr(r, kind):
            k = key(e)
            out.setdefault(k, e)
            if r.id not in ids[k]:
                ids[k].append(r.id)
    return {k: (out[k], ids[k]) for k in out}


def _activity(tag: str, location: dict, framework: str, kind: str, text: str, status: str,
              ids: list[str], detail: str = "") -> dict:
    good = status in GREEN
    return {"tag": tag, "location": location, "name": tag.split(" ", 1)[1],
            "messages": [] if good else [f"sonnx trace: {status}{': ' + detail if detail else ''}"],
            "just_up": [], "just_down": [], "just_global": [],
            "refs": [_req_tag(i) for i in ids], "framework": framework, "kind": kind, "text": text,
            "status": "ok" if good else "fail"}


def activities(m: Matrix) -> list[dict]:
    """Every proof goal, test and harness of the matrix as one item (its tag, result and the
    requirements it reaches); the ReqIF export (reqif.py) writes the same items."""
    items = []
    for (path, goal), (p, ids) in sorted(_grouped(m, "proof", lambda p: (p["path"], p["goal"])).items()):
        items.append(_activity(f"why3 {path}:{goal}", _location(path, p.get("line")), "Why3", "Proof goal",
                               f"goal {goal} of {path} ({p.get('prover') or 'no prover'}; {p.get('source', '')})",
                               p["status"], ids))
    for name, (t, ids) in sorted(_grouped(m, "test", lambda t: t["test"]).items()):
        detail = "; ".join(t.get("failures") or [])[:500]
        items.append(_activity(f"pytest {name}", _location(t.get("path"), t.get("line")), "pytest", "Test",
                               f"{name}: {t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped",
                               t["status"], ids, detail))
    for name, (h, ids) in sorted(_grouped(m, "crosshair", lambda h: str(h.get("harness"))).items()):
        items.append(_activity(f"crosshair {name}", _location(h.get("path"), h.get("line")), "CrossHair",
                               "Symbolic check", f"harness {name}", str(h.get("status")), ids))
    return items


def code_items(m: Matrix) -> list[dict]:
    """Every code site that names a requirement as one item; shared with the ReqIF export."""
    items = []
    for (path, line, name), (c, ids) in sorted(
            _grouped(m, "code", lambda c: (c["path"], c["line"], c["name"])).items()):
        items.append({"tag": f"python {path}:{line}:{name}", "location": _location(path, line), "name": name,
                      "messages": [], "just_up": [], "just_down": [], "just_global": [],
                      "refs": [_req_tag(i) for i in ids], "language": "Python", "kind": "Function"})
    return items


def _config() -> str:
    # a requirement is covered when a proof goal or a test reaches it (CrossHair alone is not
    # enough, as in sonnx's own "verification" field); code must name a requirement
    return "\n".join([
        f'requirements "{LEVEL_REQ}" {{',
        f'  source: "{FILES[LEVEL_REQ]}";',
        f'  requires: "{LEVEL_PROOF}" or "{LEVEL_TEST}";',
        "}", "",
        f'implementation "{LEVEL_CODE}" {{',
        f'  source: "{FILES[LEVEL_CODE]}";',
        f'  trace to: "{LEVEL_REQ}";',
        "}", "",
        *[line for level in ACTIVITY_LEVELS
          for line in (f'activity "{level}" {{', f'  source: "{activity_file(level)}";',
                       f'  trace to: "{LEVEL_REQ}";', "}", "")],
    ])


def render(m: Matrix) -> dict[str, str]:
    """{file name: text} of the LOBSTER inputs and policy for matrix ``m``."""
    acts = activities(m)
    out = {FILES[LEVEL_REQ]: _file("lobster-req-trace", 4, [_requirement(r) for r in m.rows]),
           FILES[LEVEL_CODE]: _file("lobster-imp-trace", 3, code_items(m))}
    for level, framework in ACTIVITY_LEVELS.items():
        out[activity_file(level)] = _file("lobster-act-trace", 3,
                                          [a for a in acts if a["framework"] == framework])
    out[CONFIG] = _config() + "\n"
    return out
