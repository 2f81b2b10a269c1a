"""Render a trace matrix as HTML (for a person), Markdown, JSON (schema sonnx-trace/5), CSV, and
LOBSTER input files (lobster.py) for a certifier's own traceability report."""
from __future__ import annotations

import csv
import html
import io
import json

from . import lobster, reqif
from .matrix import GREEN, Matrix, Row, wg_text
from .running import cell as running_cell

_STATE_LABEL = {"ok": "covered", "partial": "partial", "suspect": "suspect", "defect": "defect"}


def _proof_cell(r: Row) -> str:
    if not r.proof:
        return "-"
    ok = sum(p["status"] == "proved" for p in r.proof)
    return f"{ok}/{len(r.proof)} proved"


def _count_tests(tests: list[dict]) -> str:
    if not tests:
        return "-"
    passed = sum(t["status"] == "passed" for t in tests)
    failed = sum(t["status"] == "failed" for t in tests)
    text = f"{passed}/{len(tests)} passed"
    return text + (f", {failed} failed" if failed else "")


def _test_cell(r: Row) -> str:
    """The tests of the requirement itself: those that name it (a marker)."""
    return _count_tests([t for t in r.test if not t.get("tool")])


def _support_cell(r: Row) -> str:
    """Tests of the tools the row relies on (the trace judge, the exporters, the evidence runner:
    declared in spec/trace-supports.toml, or marked for @every): they can turn the row red, but
    they test no part of it."""
    return _count_tests([t for t in r.test if t.get("tool")])


def wg_short(w: dict) -> str:
    """One working-group cross-reference, without its reason: ``relation document#tag``."""
    ref = w["ref"]
    path, _, tag = ref.partition("#")
    return f"{w['relation']} {path.rsplit('/', 1)[-1]}{'#' + tag if tag else ''}"


def _wg_cell(r: Row) -> str:
    return "; ".join(wg_short(w) for w in r.wg) or "-"


wg_full = wg_text


def _crosshair_cell(r: Row) -> str:
    if not r.crosshair:
        return "-"
    good = sum(h.get("status") in GREEN for h in r.crosshair)
    return f"{good}/{len(r.crosshair)} harnesses clean"


def _claims_cell(r: Row) -> str:
    """How many parts of the statement each kind of evidence establishes, gaps apart."""
    if not r.claims:
        return "-"
    counts: dict[str, int] = {}
    for c in r.claims:
        counts[c["level"]] = counts.get(c["level"], 0) + 1
    words = {"proof": "proved", "crosshair": "CrossHair only", "test": "tested only", "gap": "gap", "none": "no evidence"}
    return ", ".join(f"{counts[k]} {words[k]}" for k in words if k in counts)


def _issues_cell(r: Row) -> str:
    counts: dict[str, int] = {}
    for d in r.defects:
        counts[d.kind] = counts.get(d.kind, 0) + 1
    parts = [f"{n} {kind}" for kind, n in counts.items()]
    if r.justified:
        parts.append(f"{len(r.justified)} justified gap(s)")
    return ", ".join(parts) or "-"


def _cells(r: Row) -> list[str]:
    return [r.id, r.title, _STATE_LABEL[r.state], f"{len(r.spec)} tag(s)" if r.spec else "-",
            f"{len(r.code)} site(s)" if r.code else "-", _proof_cell(r), _test_cell(r),
            _crosshair_cell(r), _claims_cell(r), running_cell(r.running) if r.running else "-",
            _wg_cell(r), _support_cell(r), _issues_cell(r)]


# "Tests" counts the tests that verify the requirement (they name it); "Tool tests" those of
# the tools that merely support the row (spec/trace-supports.toml), shown apart.
HEADERS = ["ID", "Title", "State", "Spec", "Code", "Proof", "Tests", "CrossHair", "Claims",
           "Running code", "WG", "Tool tests", "Issues"]


def configuration_line(m: Matrix) -> str:
    """The judging tool's configuration identity, in one line (docs/qualification.md)."""
    conf = m.inputs.get("configuration") or {}
    if not conf:
        return ""
    return ("Configuration: " + ", ".join(f"{k} {v}" for k, v in conf.items()) + ".")


def to_json(m: Matrix) -> str:
    return json.dumps(m.as_dict(), indent=2, sort_keys=False) + "\n"


def to_csv(m: Matrix) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(HEADERS + ["Defects", "WG reasons"])
    for r in m.rows:
        w.writerow(_cells(r) + ["; ".join(f"{d.kind}: {d.detail}" for d in r.defects),
                                "; ".join(wg_full(w) for w in r.wg)])
    return buf.getvalue()


def md_text(text: str) -> str:
    """Text safe inside a Markdown table cell or list item: no line break, no bare ``|``."""
    return " ".join(str(text).replace("\\", "\\\\").replace("|", "\\|").split())


def to_markdown(m: Matrix) -> str:
    s = m.as_dict()["summary"]
    made = m.inputs.get("made_utc")
    out = ["# SONNX traceability matrix", "",
           *([f"Made {made} on commit {m.inputs.get('commit') or '(not a git checkout)'}"
              f"{' with local changes' if m.inputs.get('dirty') else ''}.", ""] if made else []),
           *([configuration_line(m), ""] if configuration_line(m) else []),
           f"{s['requirements']} requirements: {s['ok']} covered, {s['partial']} partial, {s['suspect']} suspect, "
           f"{s['defect']} with defects; {s['defects']} defect(s) in all.", "",
           "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    for r in m.rows:
        out.append("| " + " | ".join(md_text(c) for c in _cells(r)) + " |")
    defects = m.defects
    if defects:
        out += ["", "## Defects", ""] + [f"- **{md_text(d.kind)}** {md_text(d.requirement)}: {md_text(d.detail)}"
                                         for d in defects]
    changed = [(r.id, key, diff) for r in m.rows for key, diff in r.diffs.items()]
    if changed:
        out += ["", "## Changes since the last review", ""]
        for rid, key, diff in changed:      # indented code blocks: nothing in a diff can end them
            out += [f"{md_text(rid)} `{md_text(key)}`:", ""] + ["    " + line for line in diff.splitlines()] + [""]
    gaps = [(r.id, c) for r in m.rows for c in r.claims if c["gap"]]
    if gaps:
        out += ["", "## Partial: parts not proved as stated", ""]
        for rid, c in gaps:     # the justification itself, indented: nothing in it can end the block
            out += [f"- {md_text(rid)} (partial): {md_text(c['part'])} - see {md_text(c['gap'])}", ""]
            out += ["      " + line for line in (c.get("gap_text") or "(justification file missing)").splitlines()]
            out += [""]
    refs = [(r.id, w) for r in m.rows for w in r.wg]
    if refs:
        out += ["", "## Working-group cross-references", "",
                "Each requirement against the SONNX working group's documents (github.com/onnx/working-groups, "
                "safety-related-profile/, at the commit each \"none\" names):", ""]
        out += [f"- {md_text(rid)} {md_text(wg_full(w))}" for rid, w in refs]
    justified = [(r.id, j) for r in m.rows for j in r.justified]
    if justified:
        out += ["", "## Justified gaps", ""] + [f"- {md_text(rid)} has no {md_text(j['kind'])} link: "
                                                 f"{md_text(j['justification'])}" for rid, j in justified]
    return "\n".join(out) + "\n"


_CSS = """
pre{background:#f6f6f9;padding:.4rem;font-size:.8rem;overflow-x:auto}
body{font-family:system-ui,sans-serif;margin:2rem;color:#1d2330;max-width:1300px}
h1{font-size:1.5rem;margin-bottom:.2rem}.sub{color:#555;margin-top:0}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{border-bottom:1px solid #dde;padding:.45rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f4f8;position:sticky;top:0}
td:first-child{white-space:nowrap}
.state{font-weight:600;border-radius:4px;padding:.1rem .45rem;white-space:nowrap}
.ok{background:#dcf5e3;color:#0d6b2c}.suspect{background:#fff0cc;color:#8a5a00}
.partial{background:#e3e6ff;color:#2b3a9e}
.defect{background:#fde0e0;color:#9b1c1c}
.bad{color:#9b1c1c;font-weight:600}.good{color:#0d6b2c}
details summary{cursor:pointer;color:#2a4fb0}details p{margin:.3rem 0 .3rem 1rem;max-width:60rem}
ul.links{margin:.2rem 0 .2rem 1rem;padding:0;font-family:ui-monospace,monospace;font-size:.8rem}
.counts span{margin-right:1.2rem}
"""


def _status_class(status: str) -> str:
    return "good" if status in GREEN else "bad"


def _details(r: Row) -> str:
    e = html.escape
    parts = [f"<p>{e(r.statement)}</p>", f"<p>Needs: {e(', '.join(r.verification))}</p><ul class='links'>"]
    for s in r.spec:
        parts.append(f"<li>spec {e(s['path'])}:{s['line']}</li>")
    for c in r.code:
        parts.append(f"<li>code {e(c['path'])}:{c['line']} ({e(c['name'])})</li>")
    for p in r.proof:
        t = f", {p['time']} s" if p.get("time") is not None else ""
        parts.append(f"<li>proof {e(p['path'])} {e(p['goal'])}: <span class='{_status_class(p['status'])}'>"
                     f"{e(p['status'])}</span> {e(p.get('prover', ''))}{t}</li>")
    for t in r.test:
        parts.append(f"<li>{'tool test' if t.get('tool') else 'test'} {e(t['test'])}: <span class='{_status_class(t['status'])}'>{e(t['status'])}</span>"
                     f" ({t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped)</li>")
    for h in r.crosshair:
        parts.append(f"<li>crosshair {e(str(h.get('harness')))}: <span class='{_status_class(str(h.get('status')))}'>"
                     f"{e(str(h.get('status')))}</span></li>")
    for c in r.claims:
        shown = [f"{k}: {', '.join(c[k])}" for k in ("proof", "crosshair", "test") if c[k]]
        gap = f" <span class='partial'>gap: {e(c['gap'])}</span>" if c["gap"] else ""
        if c.get("gap_text"):
            gap += f"<pre>{e(c['gap_text'])}</pre>"
        parts.append(f"<li>claim ({e(c['level'])}) {e(c['part'])}: {e('; '.join(shown))}{gap}</li>")
    for w in r.wg:
        parts.append(f"<li>working group: {e(wg_full(w))}</li>")
    for j in r.justified:
        parts.append(f"<li>justified gap ({e(j['kind'])}): {e(j['justification'])}</li>")
    for d in r.defects:
        parts.append(f"<li class='bad'>{e(d.kind)}: {e(d.detail)}</li>")
    parts.append("</ul>")
    for key, diff in r.diffs.items():
        parts.append(f"<p>Changed since review: {e(key)}</p><pre>{e(diff)}</pre>")
    return "".join(parts)


def to_html(m: Matrix, title: str = "SONNX traceability matrix", context: str = "") -> str:
    e = html.escape
    s = m.as_dict()["summary"]
    if not context:
        inputs = m.inputs
        context = (f"Test results: {inputs['junit']}{'' if inputs['junit_found'] else ' (not found)'}; "
                   f"CrossHair: {inputs['crosshair']}{'' if inputs['crosshair_found'] else ' (not found)'}; "
                   f"proofs: {inputs.get('proofs', '')}. "
                   f"Made {inputs.get('made_utc') or '(date unknown)'} on commit {inputs.get('commit') or '(not a git checkout)'}"
                   f"{' with local changes' if inputs.get('dirty') else ''}. {configuration_line(m)}")
    rows = []
    for r in m.rows:
        cells = _cells(r)
        rows.append(
            f"<tr id='{e(r.id)}'>"
            f"<td><b><a href='#{e(r.id)}'>{e(cells[0])}</a></b></td>"
            f"<td><details><summary>{e(cells[1])}</summary>{_details(r)}</details></td>"
            f"<td><span class='state {r.state}'>{e(cells[2])}</span></td>"
            + "".join(f"<td>{e(c)}</td>" for c in cells[3:-1])
            + f"<td class='{'bad' if r.defects else ''}'>{e(cells[-1])}</td></tr>")
    orphans = "".join(f"<li class='bad'>{e(o.kind)} {e(o.requirement)}: {e(o.detail)}</li>"
                      for o in m.orphans + m.evidence)
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{e(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{e(title)}</h1><p class='sub'>{e(context)}</p>"
        f"<p class='counts'><span>{s['requirements']} requirements</span>"
        f"<span class='state ok'>{s['ok']} covered</span> <span class='state partial'>{s['partial']} partial</span> "
        f"<span class='state suspect'>{s['suspect']} suspect</span> "
        f"<span class='state defect'>{s['defect']} with defects</span></p>"
        f"<table><thead><tr>{''.join(f'<th>{h}</th>' for h in HEADERS)}</tr></thead><tbody>"
        + "".join(rows) + "</tbody></table>"
        + (f"<h2>Defects of no single row</h2><ul>{orphans}</ul>" if orphans else "")
        + "<p class='sub'>Click a title for the requirement text, every link and its status.</p>"
        "</body></html>\n")


RENDERERS = {"html": (to_html, "trace.html"), "md": (to_markdown, "trace.md"),
             "json": (to_json, "trace.json"), "csv": (to_csv, "trace.csv"),
             "reqif": (reqif.render, reqif.FILE)}
# formats made of several files (into --output-dir only): {format: (render -> {name: text}, names)}
MULTI_FILE = {"lobster": (lobster.render, tuple(lobster.FILES.values()))}
FORMATS = (*RENDERERS, *MULTI_FILE)


def file_names(fmt: str) -> tuple[str, ...]:
    return MULTI_FILE[fmt][1] if fmt in MULTI_FILE else (RENDERERS[fmt][1],)


def files(fmt: str, m: Matrix) -> dict[str, str]:
    """{file name: text} that format ``fmt`` writes into an output directory."""
    if fmt in MULTI_FILE:
        return MULTI_FILE[fmt][0](m)
    render, name = RENDERERS[fmt]
    return {name: render(m)}
