"""JSON output against its schema (spec/validate-report.schema.json) and SARIF output against the
official SARIF 2.1.0 schema (tests/validate/schemas/, see its README), both with jsonschema."""
from __future__ import annotations

import json
import pathlib

import onnx
import pytest
from onnx import helper

from sonnx import requirements
from sonnx.cli import main

from . import models as M

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "spec" / "validate-report.schema.json").read_text())
SARIF_SCHEMA = json.loads((ROOT / "tests" / "validate" / "schemas" / "sarif-schema-2.1.0.json").read_text())


def check(instance, schema=SCHEMA):
    """Validate ``instance`` against ``schema`` with jsonschema, in the draft the schema
    declares ($schema); every error is reported, not the first one only."""
    import jsonschema
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    errors = sorted(validator(schema).iter_errors(instance), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


@pytest.fixture
def paths(tmp_path):
    out = []
    then = helper.make_graph([helper.make_node("Mul", ["x", "b"], ["t"])], "then", [], [M.vi("t", [2, 3])])
    other = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["e"])], "else", [], [M.vi("e", [2, 3])])
    models = {
        "ok": M.mul([2, 3], [2, 3]),
        "bcast": M.mul([2, 3], [3]),
        "gemm": M.gemm([2, 3], [3, 4], [4]),
        "sym": M.mul(["N", 3], ["N", 3]),
        "if": M.model([helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
                      [M.vi("x", [2, 3]), M.vi("b", [3]), M.vi("c", [], onnx.TensorProto.BOOL)],
                      [M.vi("y", [2, 3])]),
    }
    for name, m in models.items():
        p = tmp_path / f"{name}.onnx"
        onnx.save(m, p)
        out.append(str(p))
    missing = str(tmp_path / "missing.onnx")
    return out + [missing]


@pytest.mark.req("MUL-R4", "GEMM-R4", "PROF-R1", "PROF-R2")
def test_json_matches_schema(paths, capsys):
    assert main(["validate", "--format", "json", *paths]) == 2
    doc = json.loads(capsys.readouterr().out)
    check(doc, SCHEMA)
    statuses = [m["status"] for m in doc["models"]]
    assert statuses == ["conforms", "violations", "violations", "violations", "violations", "unreadable"]
    known = requirements.load()
    for m in doc["models"]:
        for f in m["findings"]:
            assert f["rule"] in known or f["kind"] == "onnx"
    if_findings = doc["models"][4]["findings"]
    assert [(f["rule"], f["location"]) for f in if_findings] == [
        ("PROF-R1", "main/If_0"), ("MUL-R4", "main/If_0:then_branch/Mul_0")]


@pytest.mark.req("MUL-R4", "GEMM-R4")
def test_sarif_structure(paths, capsys):
    main(["validate", "--format", "sarif", *paths])
    log = json.loads(capsys.readouterr().out)
    check(log, SARIF_SCHEMA)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert set(requirements.load()) <= set(ids) and "ONNX-CHECKER" in ids
    assert run["results"]
    for res in run["results"]:
        assert ids[res["ruleIndex"]] == res["ruleId"] and res["level"] == "error"
        assert res["message"]["text"]
        loc = res["locations"][0]
        assert loc["physicalLocation"]["artifactLocation"]["uri"].endswith(".onnx")
        assert loc["logicalLocations"][0]["fullyQualifiedName"].startswith("main")
    assert {r["ruleId"] for r in run["results"]} == {"MUL-R4", "GEMM-R4", "PROF-R2", "PROF-R1"}
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is False and "no such file" in inv["toolExecutionNotifications"][0]["message"]["text"]


@pytest.mark.req("MUL-R4")
def test_partial_runs_match_both_schemas(paths, capsys):
    main(["validate", "--format", "json", "--select", "MUL", *paths])
    check(json.loads(capsys.readouterr().out))
    main(["validate", "--format", "sarif", "--ignore", "PROF,ONNX", *paths])
    check(json.loads(capsys.readouterr().out), SARIF_SCHEMA)


@pytest.mark.req("MUL-R4")
@pytest.mark.parametrize("fault", ["extra key", "bad status", "rule pattern", "sarif level", "sarif version"])
def test_the_schema_checks_catch_a_planted_fault(paths, capsys, fault):
    """Each check fails on a document bent the way a broken renderer would bend it."""
    fmt = "sarif" if fault.startswith("sarif") else "json"
    main(["validate", "--format", fmt, *paths])
    doc = json.loads(capsys.readouterr().out)
    if fault == "extra key":
        doc["models"][0]["verdict"] = "ok"
    elif fault == "bad status":
        doc["models"][0]["status"] = "fine"
    elif fault == "rule pattern":
        doc["models"][1]["findings"][0]["rule"] = "mul r4"
    elif fault == "sarif level":
        doc["runs"][0]["results"][0]["level"] = "fatal"
    else:
        doc["version"] = "2.0.0"
    with pytest.raises(AssertionError):
        check(doc, SARIF_SCHEMA if fmt == "sarif" else SCHEMA)
