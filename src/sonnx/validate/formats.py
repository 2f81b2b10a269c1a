"""Report renderings: short text for a terminal, JSON (schema: spec/validate-json-schema.md and
spec/validate-report.schema.json) and SARIF 2.1.0 for CI systems."""
from __future__ import annotations

import json
import os
from typing import Sequence

from ..colour import paint
from .report import ONNX_CATEGORIES, Report
from ..text import neutral, path_uri

JSON_SCHEMA_ID = "sonnx-validate-report/1"


def _version() -> str:
    import sonnx  # at call time: sonnx/__init__ sets __version__ after importing this package
    return sonnx.__version__


def _configuration() -> dict:
    from ..qualification import configuration
    return configuration()


TEXT_PER_RULE = 10  # findings shown per rule and model in text output; JSON and SARIF hold all


def _title(rule: str) -> str:
    if rule in ONNX_CATEGORIES:
        return ONNX_CATEGORIES[rule][0]
    from .. import requirements     # on first use: a conforming model's text report never reads it
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


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _next_step(reports: Sequence[Report], not_checked: Sequence[str]) -> str | None:
    """The last line: what to do now, for the worst status among the models."""
    if any(r.findings for r in reports):
        return ("next: fix the findings (each rule's fix is under it); `sonnx conform MODEL -o OUT "
                "[--dim NAME=SIZE]` rewrites what it can without changing an output bit; -v shows "
                "every finding's own advice")
    if any(r.error is not None for r in reports) or not_checked:
        return None   # nothing to run yet: the error, or the not-checked line, says what is missing
    return "next: `sonnx run MODEL --input NAME=FILE` runs it with sonnx's kernels"


def _rule_lines(found: list, verbosity: int, colour: bool) -> list[str]:
    """A rule's findings. Default: each finding's problem on one line (at most TEXT_PER_RULE),
    then the rule's fix once: the advice of its first finding. -v: every message whole."""
    if verbosity < 0:
        return []
    if verbosity > 0:  # the long form: full location and message, every finding
        return ["    " + neutral(f"{f.location}" + (f" ({f.op_type}-{f.op_version})"
                                                   if f.op_type and f.op_version else "") +
                                 f": {f.message}") for f in found]
    # names, paths and messages quoting them are untrusted: one finding, one line
    lines = ["    " + neutral(f"{f.where}: {f.problem}") for f in found[:TEXT_PER_RULE]]
    if len(found) > TEXT_PER_RULE:
        lines.append(f"    ... and {len(found) - TEXT_PER_RULE} more (--format json lists all)")
    advice = found[0].advice
    if advice:
        differs = any(f.advice != advice for f in found[1:])
        note = (" (the first finding's; -v gives each finding its own)" if differs else "")
        lines.append("    " + paint("fix:", "note", colour) + " " + neutral(advice) + note)
    return lines


def to_text(reports: Sequence[Report], not_checked: Sequence[str] = (), *, colour: bool = False,
            verbosity: int = 0, **_) -> str:
    """One line per model, then its findings grouped by rule: one line per finding (its
    problem), the rule's fix once, and a last line saying the next step. ``verbosity`` -1
    (-q): only the models that do not conform, findings counted per rule; 1 (-v): every
    finding with its whole message, and the time taken. ``colour`` adds ANSI styles around
    our own words, after escaping, so that a name in a model can never carry an escape
    sequence to the terminal."""
    lines: list[str] = []
    for r in reports:
        status = _model_status(r, not_checked)
        if status == "unreadable":
            lines.append(f"{neutral(r.source)}: {paint('ERROR (not validated)', 'bad', colour)}: "
                         f"{neutral(r.error or '')}")
            continue
        detail = _count(r.nodes, "node") + (
            f", {sum(r.timings.values()):.3f} s" if verbosity > 0 else "")
        if status in ("conforms", "partial"):
            if verbosity >= 0:
                said = ("conforms to the SONNX profile" if status == "conforms" else
                        f"no violation of the rules checked (not a conformance verdict: "
                        f"{len(not_checked)} rule(s) not checked)")
                lines.append(f"{neutral(r.source)}: "
                             f"{paint(said, 'good' if status == 'conforms' else 'note', colour)}"
                             f" ({detail})")
            continue
        groups = r.by_rule()
        head = f"{_count(len(r.findings), 'violation')} of {_count(len(groups), 'rule')}"
        lines.append(f"{neutral(r.source)}: {paint(head, 'bad', colour)} ({detail})")
        for rule, found in groups.items():
            lines.append(f"  {paint(f'[{rule}]', 'rule', colour)} {neutral(_title(rule))}: {len(found)}")
            lines += _rule_lines(found, verbosity, colour)
    bad = sum(1 for r in reports if r.status == "violations")
    err = sum(1 for r in reports if r.status == "unreadable")
    if len(reports) > 1:
        ok_word = "with no violation of the rules checked" if not_checked else "conform"
        lines.append(f"{len(reports)} models: {len(reports) - bad - err} {ok_word}, {bad} with "
                     f"violations, {err} not readable")
    if not_checked:
        lines.append(paint(_not_checked_line(not_checked), "note", colour))
    step = _next_step(reports, not_checked)
    if step and verbosity >= 0:
        lines.append(step)
    return "".join(line + "\n" for line in lines)


def to_json_obj(reports: Sequence[Report], not_checked: Sequence[str] = ()) -> dict:
    """``not_checked`` (the rules --select/--ignore left out) is always present; when it is
    not empty, "conforms" is false and a model without finding has the status "partial"."""
    models = []
    for r in reports:
        model = r.as_dict()
        model["status"] = _model_status(r, not_checked)
        # which bytes were judged: the file and every external-data file its tensors name
        if r.path is not None:
            from .. import model_files
            model["files"] = model_files.identity(r.path)
        models.append(model)
    return {"schema": JSON_SCHEMA_ID,
            # the configuration identity (versions, rule-set and registry hashes): which
            # qualified configuration judged (docs/qualification.md)
            "tool": {"name": "sonnx", "version": _version(), "configuration": _configuration()},
            "conforms": all(r.conforms for r in reports) and not not_checked,
            "not_checked": list(not_checked),
            "models": models}


def to_json(reports: Sequence[Report], not_checked: Sequence[str] = (), **_) -> str:
    return json.dumps(to_json_obj(reports, not_checked), indent=2) + "\n"


FINGERPRINT_KEY = "sonnxNodeIdentity/v1"


def help_page(rule: str) -> str:
    """The page of the repository that states ``rule``: spec/<operator>.md, spec/profile.md
    for the profile-wide rules and the ONNX categories."""
    prefix = rule.split("-")[0].lower()
    return f"spec/{'profile' if prefix in ('prof', 'onnx') else prefix}.md"


def rule_name(rule: str, title: str) -> str:
    """A rule's SARIF ``name``: an identifier (CamelCase, letters and digits), the operator
    first, so that the operators' rules of one title stay apart: PROF-R2 -> ProfileStaticShapes
    (an operator's PREFIX-R1 "Same shape" -> PrefixSameShape)."""
    words = "".join(ch if ch.isalnum() else " " for ch in title.replace("'", "")).split()
    head = {"PROF": "Profile", "ONNX": "Onnx"}.get(rule.split("-")[0], rule.split("-")[0].capitalize())
    camel = "".join(w[0].upper() + w[1:].lower() for w in words)
    return camel if camel.startswith(head) else head + camel


def _descriptor(rid: str, title: str, full: str, help_text: str, tags: list[str],
                help_base: str | None) -> dict:
    """helpUri must be an absolute URI (SARIF's schema, which GitHub's upload enforces) and the
    package has no public address: with ``help_base`` (--help-base, the browse URL of the sonnx
    repository) it is the rule's spec page there; without, help.text names the page."""
    page = help_page(rid)
    d = {"id": rid, "name": rule_name(rid, title),
         "shortDescription": {"text": title},
         "fullDescription": {"text": full},
         "help": {"text": f"{help_text} Stated in {page} of the sonnx repository."},
         "properties": {"tags": tags, "precision": "very-high", "problem.severity": "error"},
         "defaultConfiguration": {"level": "error"}}
    if help_base:
        d["helpUri"] = help_base + page
    return d


def _rule_descriptors(used: list[str], help_base: str | None = None) -> list[dict]:
    """Every rule, whether found or not (a SARIF consumer learns the whole rule set). precision
    "very-high": a finding is a decided fact about the model, never a heuristic."""
    from .. import requirements
    out = []
    for rid, req in requirements.load().items():
        d = _descriptor(rid, req.title, req.statement, f"{req.statement} Rationale: {req.rationale}",
                        ["sonnx", "profile" if rid.startswith("PROF-") else rid.split("-")[0].lower()],
                        help_base)
        d["properties"]["source"] = req.source
        out.append(d)
    for rid, (title, text) in ONNX_CATEGORIES.items():
        out.append(_descriptor(rid, title, text, text, ["sonnx", "onnx"], help_base))
    known = {d["id"] for d in out}
    for rid in used:  # cannot happen with a consistent registry; keeps the log valid regardless
        if rid not in known:
            out.append(_descriptor(rid, rid, rid, rid, ["sonnx"], help_base))
    return out


def help_base_problem(url: str) -> str | None:
    """Why ``url`` cannot be --help-base (None when it can): an absolute http(s) URL of a
    folder, so that base + "spec/mul.md" is the page."""
    import urllib.parse
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or not url.endswith("/") \
            or parts.query or parts.fragment or not url.isprintable() or " " in url:
        return (f"--help-base {url!r} is not an absolute http(s) URL ending in '/' (the browse URL "
                "of the sonnx repository's root, e.g. https://host/org/sonnx/blob/main/)")
    return None


def fingerprint(f) -> str:
    """A finding's identity in the model, stable across runs and across edits elsewhere in the
    model: the rule, the graph path, the node's name (``<op_type>_<index>`` for an unnamed
    node, which an inserted node before it would shift), the tensor, and the problem (two
    findings of one rule at one node stay apart). Never the file's path, time or line."""
    import hashlib
    who = "\x1f".join([f.rule, f.graph, f.node_label or "", f.tensor or "", f.problem])
    return hashlib.sha256(who.encode("utf-8", "surrogatepass")).hexdigest()


def to_sarif_obj(reports: Sequence[Report], not_checked: Sequence[str] = (),
                 help_base: str | None = None) -> dict:
    """SARIF 2.1.0, as GitHub code scanning takes it (tests/validate/test_sarif_github.py). A
    binary model has no lines: every result's region is line 1 of the model file, and where
    in the model is said by the message (it starts with the node) and logicalLocations.
    Rules left out by select/ignore are disabled in the invocation's
    ruleConfigurationOverrides (SARIF's own way to say a rule was not run) and named in a
    warning notification."""
    used = list(dict.fromkeys(f.rule for r in reports for f in r.findings))
    rules = _rule_descriptors(used, help_base)
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
                "message": {"text": f"{f.where}: {f.message}"},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri[id(r)]},
                                                    "region": {"startLine": 1}},
                               "logicalLocations": [logical]}],
                "partialFingerprints": {FINGERPRINT_KEY: fingerprint(f)},
                "properties": {k: v for k, v in f.as_dict().items()
                               if k in ("graph", "node_index", "node_name", "op_type", "domain",
                                        "op_version", "tensor") and v is not None},
            })
    invocation: dict = {"executionSuccessful": not notifications,
                        "toolExecutionNotifications": notifications}
    if any(u.startswith("file://") for u in uri.values()):
        # an absolute file URI is accepted by GitHub only below the checkout path: say where
        # the run was (run from the repository root with relative paths to avoid the question)
        invocation["workingDirectory"] = {"uri": path_uri(os.getcwd()).rstrip("/") + "/"}
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
            "tool": {"driver": {"name": "sonnx", "version": _version(), "rules": rules,
                                **({"informationUri": help_base + "README.md"} if help_base else {})}},
            "invocations": [invocation],
            "artifacts": [{"location": {"uri": uri[id(r)]}} for r in reports],
            "results": results,
        }],
    }


def to_sarif(reports: Sequence[Report], not_checked: Sequence[str] = (), help_base: str | None = None,
             **_) -> str:
    return json.dumps(to_sarif_obj(reports, not_checked, help_base), indent=2) + "\n"


FORMATS = {"text": to_text, "json": to_json, "sarif": to_sarif}
