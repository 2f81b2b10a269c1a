"""Report renderings: short text for a terminal, JSON (schema: spec/validate-json-schema.md and
spec/validate-report.schema.json) and SARIF 2.1.0 for CI systems."""
from __future__ import annotations

import json
from typing import Sequence

from .. import requirements
from ..colour import paint
from .report import ONNX_CATEGORIES, Report
from .text import neutral, path_uri

JSON_SCHEMA_ID = "sonnx-validate-report/1"


def _version() -> str:
    import sonnx  # at call time: sonnx/__init__ sets __version__ after importing this package
    return sonnx.__version__


TEXT_PER_RULE = 10  # findings shown per rule and model in text output; JSON and SARIF hold all


def _title(rule: str) -> str:
    if rule in ONNX_CATEGORIES:
        return ONNX_CATEGORIES[rule][0]
    req = requirements.load().get(rule)
    return req.title if req else rule


def _model_status(r: Report, not_checked: Sequence[str]) -> str:
    """A report's status as shown: "partial" when it has no finding but rules were left out
    (--select / --ignore), for then nothing was said about those rules."""
    return "partial" if not_checked and r.status == "conforms" else r.status


def _not_checked_line(not_checked: Sequence[str]) -> str:
    return (f"not checked ({len(not_checked)} rule(s) left out by select/ignore, from the command "
            f"line or [tool.sonnx.validate]): {', '.join(not_checked)}; no model is called "
            "conformant by this run")


def to_text(reports: Sequence[Report], not_checked: Sequence[str] = (), *, colour: bool = False,
            verbosity: int = 0) -> str:
    """One line per model, then its findings grouped by rule. ``verbosity`` -1 (-q): only the
    models that do not conform, findings counted per rule; 1 (-v): every finding, and the time
    taken. ``colour`` adds ANSI styles around our own words, after escaping, so that a name in
    a model can never carry an escape sequence to the terminal."""
    lines: list[str] = []
    for r in reports:
        status = _model_status(r, not_checked)
        if status == "unreadable":
            lines.append(f"{neutral(r.source)}: {paint('ERROR (not validated)', 'bad', colour)}: "
                         f"{neutral(r.error or '')}")
            continue
        if status in ("conforms", "partial"):
            if verbosity >= 0:
                said = ("conforms to the SONNX profile" if status == "conforms" else
                        f"no violation of the rules checked (not a conformance verdict: "
                        f"{len(not_checked)} rule(s) not checked)")
                timing = f", {sum(r.timings.values()):.3f} s" if verbosity > 0 else ""
                lines.append(f"{neutral(r.source)}: "
                             f"{paint(said, 'good' if status == 'conforms' else 'note', colour)}"
                             f" ({r.nodes} nodes{timing})")
            continue
        groups = r.by_rule()
        head = f"{len(r.findings)} violation(s) of {len(groups)} rule(s)"
        lines.append(f"{neutral(r.source)}: {paint(head, 'bad', colour)} ({r.nodes} nodes)")
        shown = None if verbosity > 0 else (0 if verbosity < 0 else TEXT_PER_RULE)
        for rule, found in groups.items():
            lines.append(f"  {paint(f'[{rule}]', 'rule', colour)} {neutral(_title(rule))}: {len(found)}")
            for f in found[:shown]:
                op = f" ({f.op_type}-{f.op_version})" if f.op_type and f.op_version else (
                    f" ({f.op_type})" if f.op_type else "")
                # names, paths and messages quoting them are untrusted: one finding, one line
                lines.append("    " + neutral(f"{f.location}{op}: {f.message}"))
            if shown and len(found) > shown:
                lines.append(f"    ... and {len(found) - shown} more (--format json lists all)")
    bad = sum(1 for r in reports if r.status == "violations")
    err = sum(1 for r in reports if r.status == "unreadable")
    if len(reports) > 1:
        ok_word = "with no violation of the rules checked" if not_checked else "conform"
        lines.append(f"{len(reports)} models: {len(reports) - bad - err} {ok_word}, {bad} with "
                     f"violations, {err} not readable")
    if not_checked:
        lines.append(paint(_not_checked_line(not_checked), "note", colour))
    return "".join(line + "\n" for line in lines)


def to_json_obj(reports: Sequence[Report], not_checked: Sequence[str] = ()) -> dict:
    """``not_checked`` (the rules --select/--ignore left out) is always present; when it is
    not empty, "conforms" is false and a model without finding has the status "partial"."""
    models = []
    for r in reports:
        model = r.as_dict()
        model["status"] = _model_status(r, not_checked)
        models.append(model)
    return {"schema": JSON_SCHEMA_ID,
            "tool": {"name": "sonnx", "version": _version()},
            "conforms": all(r.conforms for r in reports) and not not_checked,
            "not_checked": list(not_checked),
            "models": models}


def to_json(reports: Sequence[Report], not_checked: Sequence[str] = (), **_) -> str:
    return json.dumps(to_json_obj(reports, not_checked), indent=2) + "\n"


def _rule_descriptors(used: list[str]) -> list[dict]:
    out = []
    for rid, req in requirements.load().items():
        out.append({"id": rid, "name": req.title,
                    "shortDescription": {"text": req.title},
                    "fullDescription": {"text": req.statement},
                    "help": {"text": f"{req.statement} Rationale: {req.rationale}"},
                    "properties": {"source": req.source},
                    "defaultConfiguration": {"level": "error"}})
    for rid, (title, text) in ONNX_CATEGORIES.items():
        out.append({"id": rid, "name": title, "shortDescription": {"text": title},
                    "fullDescription": {"text": text}, "help": {"text": text},
                    "defaultConfiguration": {"level": "error"}})
    known = {d["id"] for d in out}
    for rid in used:  # cannot happen with a consistent registry; keeps the log valid regardless
        if rid not in known:
            out.append({"id": rid, "shortDescription": {"text": rid}})
    return out


def to_sarif_obj(reports: Sequence[Report], not_checked: Sequence[str] = ()) -> dict:
    """SARIF 2.1.0. Rules left out by select/ignore are disabled in the invocation's
    ruleConfigurationOverrides (SARIF's own way to say a rule was not run) and named in a
    warning notification."""
    used = list(dict.fromkeys(f.rule for r in reports for f in r.findings))
    rules = _rule_descriptors(used)
    index = {d["id"]: i for i, d in enumerate(rules)}
    results = []
    notifications = []
    uri = {id(r): path_uri(r.path if r.path is not None else r.source) for r in reports}
    for r in reports:
        if r.error is not None:
            notifications.append({"level": "error", "message": {"text": r.error},
                                  "locations": [{"physicalLocation": {
                                      "artifactLocation": {"uri": uri[id(r)]}}}]})
        for f in r.findings:
            logical = {"fullyQualifiedName": f.location,
                       "kind": "variable" if f.tensor else ("function" if f.node_label else "module")}
            name = f.tensor or f.node_label
            if name:
                logical["name"] = name
            results.append({
                "ruleId": f.rule, "ruleIndex": index[f.rule], "level": "error",
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri[id(r)]}},
                               "logicalLocations": [logical]}],
                "properties": {k: v for k, v in f.as_dict().items()
                               if k in ("graph", "node_index", "node_name", "op_type", "domain",
                                        "op_version", "tensor") and v is not None},
            })
    invocation: dict = {"executionSuccessful": not notifications,
                        "toolExecutionNotifications": notifications}
    if not_checked:
        invocation["toolExecutionNotifications"] = notifications + [
            {"level": "warning", "message": {"text": _not_checked_line(not_checked)}}]
        invocation["ruleConfigurationOverrides"] = [
            {"descriptor": {"id": rid, "index": index[rid]}, "configuration": {"enabled": False}}
            for rid in not_checked]
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "sonnx", "version": _version(),
                                "rules": rules}},
            "invocations": [invocation],
            "artifacts": [{"location": {"uri": uri[id(r)]}} for r in reports],
            "results": results,
        }],
    }


def to_sarif(reports: Sequence[Report], not_checked: Sequence[str] = (), **_) -> str:
    return json.dumps(to_sarif_obj(reports, not_checked), indent=2) + "\n"


FORMATS = {"text": to_text, "json": to_json, "sarif": to_sarif}
