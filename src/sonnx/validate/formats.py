"""Report renderings: short text for a terminal, JSON (schema: spec/validate-json-schema.md and
spec/validate-report.schema.json) and SARIF 2.1.0 for CI systems."""
from __future__ import annotations

import json
from typing import Sequence

from .. import requirements
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


def to_text(reports: Sequence[Report]) -> str:
    lines: list[str] = []
    for r in reports:
        if r.error is not None:
            lines.append(f"{r.source}: ERROR (not validated): {r.error}")
            continue
        if not r.findings:
            lines.append(f"{r.source}: conforms to the SONNX profile ({r.nodes} nodes)")
            continue
        groups = r.by_rule()
        lines.append(f"{r.source}: {len(r.findings)} violation(s) of {len(groups)} rule(s) "
                     f"({r.nodes} nodes)")
        for rule, found in groups.items():
            lines.append(f"  [{rule}] {_title(rule)}: {len(found)}")
            for f in found[:TEXT_PER_RULE]:
                where = f.location
                op = f" ({f.op_type}-{f.op_version})" if f.op_type and f.op_version else (
                    f" ({f.op_type})" if f.op_type else "")
                lines.append(f"    {where}{op}: {f.message}")
            if len(found) > TEXT_PER_RULE:
                lines.append(f"    ... and {len(found) - TEXT_PER_RULE} more (--format json lists all)")
    bad = sum(1 for r in reports if r.status == "violations")
    err = sum(1 for r in reports if r.status == "unreadable")
    if len(reports) > 1:
        lines.append(f"{len(reports)} models: {len(reports) - bad - err} conform, {bad} with "
                     f"violations, {err} not readable")
    # names, paths and messages quoting them are untrusted: one finding stays one line
    return "\n".join(map(neutral, lines)) + "\n"


def to_json_obj(reports: Sequence[Report]) -> dict:
    return {"schema": JSON_SCHEMA_ID,
            "tool": {"name": "sonnx", "version": _version()},
            "conforms": all(r.conforms for r in reports),
            "models": [r.as_dict() for r in reports]}


def to_json(reports: Sequence[Report]) -> str:
    return json.dumps(to_json_obj(reports), indent=2) + "\n"


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


def to_sarif_obj(reports: Sequence[Report]) -> dict:
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
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "sonnx", "version": _version(),
                                "rules": rules}},
            "invocations": [{"executionSuccessful": not notifications,
                             "toolExecutionNotifications": notifications}],
            "artifacts": [{"location": {"uri": uri[id(r)]}} for r in reports],
            "results": results,
        }],
    }


def to_sarif(reports: Sequence[Report]) -> str:
    return json.dumps(to_sarif_obj(reports), indent=2) + "\n"


FORMATS = {"text": to_text, "json": to_json, "sarif": to_sarif}
