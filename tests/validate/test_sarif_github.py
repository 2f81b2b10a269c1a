"""SARIF as GitHub code scanning takes it. Besides the SARIF 2.1.0 schema (test_formats.py),
GitHub applies rules of its own, which the SARIF multitool's GitHub ruleset names; the checks
below are written here from their descriptions:

- GH1001: every result has a location whose physicalLocation gives artifactLocation.uri;
- GH1003: that physicalLocation has a region with a startLine (>= 1);
- GH1004: arrays within GitHub's default limits (runs, rules and results per run, locations
  per result);
- GH1005: the uri is a relative reference or a file: URI;
- GH1006: an absolute file: URI lies below the checkout (invocations[].workingDirectory);
- GH1007: every result message has its text, fully formatted;
- GH2012: every rule has shortDescription, fullDescription and help text;
and from GitHub's documentation of the rule and result properties it reads: a rule's ``name``
is an identifier, ``helpUri`` leads to the rule's page, ``properties.tags`` a list of strings,
``precision`` and ``problem.severity`` one of their values, and ``partialFingerprints`` (which
the upload action cannot compute for a binary file) present on every result.
"""
from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path

import onnx
import pytest
from onnx import helper

from sonnx.cli import main
from sonnx.validate import formats, validate

from . import models as M
from .test_formats import SARIF_SCHEMA, check

ROOT = Path(__file__).resolve().parents[2]
LIMITS = {"runs": 5, "rules": 1000, "results": 1000, "locations": 10}
PRECISIONS = {"very-high", "high", "medium", "low"}
SEVERITIES = {"error", "warning", "recommendation"}


BASE = "https://example.org/sonnx/blob/main/"


def github_problems(log: dict, root: Path = ROOT, base: str | None = None) -> list[str]:
    """Every way ``log`` breaks a rule GitHub code scanning applies (empty: accepted); ``base``:
    the --help-base the log was made with, under which each helpUri must name a page of
    ``root``."""
    bad: list[str] = []
    if len(log.get("runs", [])) > LIMITS["runs"]:
        bad.append("GH1004 runs")
    for run in log.get("runs", []):
        rules = run["tool"]["driver"].get("rules", [])
        results = run.get("results", [])
        if len(rules) > LIMITS["rules"] or len(results) > LIMITS["results"]:
            bad.append("GH1004 rules or results")
        checkouts = [inv["workingDirectory"]["uri"] for inv in run.get("invocations", [])
                     if "workingDirectory" in inv]
        for r in rules:
            for key in ("shortDescription", "fullDescription", "help"):
                if not str(r.get(key, {}).get("text", "")).strip():
                    bad.append(f"GH2012 {r['id']}: no {key}")
            if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", r.get("name", "")):
                bad.append(f"rule {r['id']}: name {r.get('name')!r} is not an identifier")
            if "helpUri" in r:
                # format "uri" in SARIF's schema (the upload action checks formats): absolute
                if not re.match(r"https?://[^/\s]+/", r["helpUri"]):
                    bad.append(f"rule {r['id']}: helpUri {r['helpUri']!r} is not an absolute URI")
                elif not r["helpUri"].startswith(base or "\0") or \
                        not (root / r["helpUri"][len(base):].split("#")[0]).is_file():
                    bad.append(f"rule {r['id']}: helpUri {r['helpUri']!r} leads to no page")
            else:
                page = re.search(r"Stated in (\S+) of the sonnx repository\.$", r.get("help", {}).get("text", ""))
                if not (page and (root / page.group(1)).is_file()):
                    bad.append(f"rule {r['id']}: no helpUri, and the help text names no page")
            props = r.get("properties", {})
            tags = props.get("tags")
            if not (isinstance(tags, list) and tags and all(isinstance(t, str) for t in tags)):
                bad.append(f"rule {r['id']}: tags {tags!r}")
            if props.get("precision") not in PRECISIONS:
                bad.append(f"rule {r['id']}: precision {props.get('precision')!r}")
            if props.get("problem.severity") not in SEVERITIES:
                bad.append(f"rule {r['id']}: problem.severity {props.get('problem.severity')!r}")
        for i, res in enumerate(results):
            if not res.get("message", {}).get("text"):
                bad.append(f"GH1007 result {i}: no message text")
            fp = res.get("partialFingerprints")
            if not (isinstance(fp, dict) and fp and all(isinstance(v, str) and v for v in fp.values())):
                bad.append(f"result {i}: no partialFingerprints")
            locations = res.get("locations") or []
            if not locations:
                bad.append(f"GH1001 result {i}: no location")
            if len(locations) > LIMITS["locations"]:
                bad.append(f"GH1004 result {i}: locations")
            for loc in locations:
                phys = loc.get("physicalLocation", {})
                uri = phys.get("artifactLocation", {}).get("uri")
                if not uri:
                    bad.append(f"GH1001 result {i}: no artifactLocation.uri")
                    continue
                if not isinstance(phys.get("region", {}).get("startLine"), int) or \
                        phys["region"]["startLine"] < 1:
                    bad.append(f"GH1003 result {i}: no region.startLine")
                scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", uri)
                if scheme and scheme.group(1) != "file":
                    bad.append(f"GH1005 result {i}: {uri} is not a file path")
                if scheme and scheme.group(1) == "file" and not any(uri.startswith(c) for c in checkouts):
                    bad.append(f"GH1006 result {i}: {uri} lies below no workingDirectory")
    return bad


def _models(tmp_path: Path) -> list[str]:
    """Models with findings of several rules, in a folder below the current directory."""
    d = tmp_path / "models"
    d.mkdir()
    bad_attrs = M.gemm([2, 3], [3, 4], [2, 4], transA=2, transB=3)   # two GEMM-R5 at one node
    for name, m in {"bcast": M.mul([2, 3], [3]), "gemm": M.gemm([2, 3], [3, 4], [4]),
                    "sym": M.mul(["N", 3], ["N", 3]), "attrs": bad_attrs,
                    "ok": M.mul([2, 3], [2, 3])}.items():
        onnx.save(m, d / f"{name}.onnx")
    return sorted(str(p.relative_to(tmp_path)) for p in d.iterdir())


def _sarif(args, capsys) -> dict:
    main(["validate", "--format", "sarif", *args])
    return json.loads(capsys.readouterr().out)


@pytest.mark.req("MUL-R4", "GEMM-R4", "GEMM-R5", "PROF-R2")
def test_sonnx_sarif_meets_the_github_rules(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = _models(tmp_path)
    for args, base in ((paths, None), ([os.path.abspath(p) for p in paths], BASE)):
        log = _sarif(args + (["--help-base", base] if base else []), capsys)
        check(log, SARIF_SCHEMA)
        assert github_problems(log, base=base) == []
        assert all(("helpUri" in r) == bool(base) for r in log["runs"][0]["tool"]["driver"]["rules"])
        results = log["runs"][0]["results"]
        assert {r["ruleId"] for r in results} >= {"MUL-R4", "GEMM-R4", "GEMM-R5", "PROF-R2"}
        # the region is line 1 of the model file; the message says where in the model
        assert {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results} == {1}
        assert all(re.match(r"(mul \(Mul-13\)|gemm \(Gemm(-13)?\)|tensor \w+): ", r["message"]["text"])
                   for r in results), [r["message"]["text"][:40] for r in results]
        fps = [r["partialFingerprints"][formats.FINGERPRINT_KEY] for r in results]
        assert len(set(fps)) == len(fps)     # two GEMM-R5 at one node stay two alerts
    assert log["runs"][0]["invocations"][0]["workingDirectory"]["uri"] == f"file://{tmp_path}/"


PLANTS = {
    "no region": (lambda log: log["runs"][0]["results"][0]["locations"][0]["physicalLocation"].pop("region"), "GH1003"),
    "line 0": (lambda log: log["runs"][0]["results"][0]["locations"][0]["physicalLocation"].update(region={"startLine": 0}), "GH1003"),
    "no uri": (lambda log: log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"].pop("uri"), "GH1001"),
    "no locations": (lambda log: log["runs"][0]["results"][0].pop("locations"), "GH1001"),
    "web uri": (lambda log: log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"].update(uri="https://x/m.onnx"), "GH1005"),
    "outside checkout": (lambda log: log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"].update(uri="file:///elsewhere/m.onnx"), "GH1006"),
    "empty message": (lambda log: log["runs"][0]["results"][0]["message"].update(text=""), "GH1007"),
    "no help": (lambda log: log["runs"][0]["tool"]["driver"]["rules"][0].pop("help"), "GH2012"),
    "too many results": (lambda log: log["runs"][0]["results"].extend(log["runs"][0]["results"][:1] * 1001), "GH1004"),
    "sentence name": (lambda log: log["runs"][0]["tool"]["driver"]["rules"][0].update(name="Profile operators only"), "not an identifier"),
    "relative helpUri": (lambda log: log["runs"][0]["tool"]["driver"]["rules"][0].update(helpUri="spec/profile.md"), "not an absolute URI"),
    "helpUri to nothing": (lambda log: log["runs"][0]["tool"]["driver"]["rules"][0].update(helpUri=BASE + "spec/none.md"), "leads to no page"),
    "no helpUri, no page": (lambda log: [r.pop("helpUri") and r["help"].update(text="x") for r in log["runs"][0]["tool"]["driver"]["rules"][:1]], "names no page"),
    "no tags": (lambda log: log["runs"][0]["tool"]["driver"]["rules"][0]["properties"].pop("tags"), "tags"),
    "bad precision": (lambda log: log["runs"][0]["tool"]["driver"]["rules"][0]["properties"].update(precision="certain"), "precision"),
    "bad severity": (lambda log: log["runs"][0]["tool"]["driver"]["rules"][0]["properties"].update({"problem.severity": "fatal"}), "problem.severity"),
    "no fingerprint": (lambda log: log["runs"][0]["results"][0].pop("partialFingerprints"), "partialFingerprints"),
}


@pytest.mark.req("MUL-R4")
@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_the_github_checks_catch_a_planted_fault(tmp_path, capsys, monkeypatch, plant):
    monkeypatch.chdir(tmp_path)
    log = _sarif([os.path.abspath(p) for p in _models(tmp_path)] + ["--help-base", BASE], capsys)
    assert github_problems(log, base=BASE) == []
    bend, caught_as = PLANTS[plant]
    bend(log)
    found = github_problems(copy.deepcopy(log), base=BASE)
    assert any(caught_as in p for p in found), found


def _mlp(extra_front: bool = False, rename_other: bool = False) -> onnx.ModelProto:
    """Relu -> Gemm (its C of shape (N,): GEMM-R4); the variants change the model elsewhere:
    a node inserted in front (every later node's index shifts), another node renamed."""
    f = onnx.TensorProto.FLOAT
    nodes = [helper.make_node("Relu", ["x"], ["h"], name="act2" if rename_other else "act"),
             helper.make_node("Gemm", ["h", "w", "b"], ["y"], name="/fc2/Gemm")]
    inits = [helper.make_tensor("w", f, [3, 4], [0.0] * 12), helper.make_tensor("b", f, [4], [0.0] * 4)]
    if extra_front:
        nodes.insert(0, helper.make_node("Relu", ["x"], ["unused"], name="probe"))
    return M.model(nodes, [M.vi("x", [2, 3])], [M.vi("y", [2, 4])], initializers=inits)


def _gemm_fingerprint(model, fingerprint=formats.fingerprint) -> str:
    (f,) = [f for f in validate(model).findings if f.rule == "GEMM-R4"]
    return fingerprint(f)


def _unstable(fingerprint) -> list[str]:
    """The edits, unrelated to the finding, that change its fingerprint."""
    base = _gemm_fingerprint(_mlp(), fingerprint)
    edits = {"again": _mlp(), "node inserted in front": _mlp(extra_front=True),
             "other node renamed": _mlp(rename_other=True)}
    return [name for name, m in edits.items() if _gemm_fingerprint(m, fingerprint) != base]


@pytest.mark.req("GEMM-R4")
def test_fingerprints_are_stable_across_runs_and_unrelated_edits():
    assert _unstable(formats.fingerprint) == []
    # another problem at the same node is another alert
    (fa,) = [f for f in validate(_mlp()).findings if f.rule == "GEMM-R4"]
    other = type(fa)(**{**fa.__dict__, "message": "Gemm input C has shape (5,); x"})
    assert formats.fingerprint(other) != formats.fingerprint(fa)


@pytest.mark.req("GEMM-R4")
def test_the_stability_check_catches_a_fingerprint_made_of_positions():
    """Planted: a fingerprint of the node's index (what a line number would be) moves when a
    node is inserted in front; one of the whole message too would move with any shape text."""
    by_index = lambda f: f"{f.rule}/{f.node_index}"   # noqa: E731
    assert _unstable(by_index) == ["node inserted in front"]


@pytest.mark.req("MUL-R4")
def test_help_base_must_be_an_absolute_folder_url(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = _models(tmp_path)
    for bad in ("spec/", "https://example.org/sonnx", "ftp://example.org/", "https://x.org/a b/"):
        assert main(["validate", "--format", "sarif", "--help-base", bad, *paths]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and "is not an absolute http(s) URL" in err
