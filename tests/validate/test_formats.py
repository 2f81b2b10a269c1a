"""JSON output against its schema (spec/validate-report.schema.json) and SARIF 2.1.0 structure."""
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


def check(instance, schema, root=SCHEMA, where="$"):
    """The subset of JSON Schema the report schema uses (jsonschema is not a dependency)."""
    import re
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].split("/")[-1]]
    if "const" in schema:
        assert instance == schema["const"], where
    if "enum" in schema:
        assert instance in schema["enum"], where
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        py = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
              "integer": int}
        assert any(isinstance(instance, py[t]) and not (t == "integer" and isinstance(instance, bool))
                   for t in types), (where, instance)
    if isinstance(instance, dict):
        for key in schema.get("required", []):
            assert key in instance, (where, key)
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is False:
            assert set(instance) <= set(props), (where, set(instance) - set(props))
        for k, v in instance.items():
            if k in props:
                check(v, props[k], root, f"{where}.{k}")
            elif isinstance(schema.get("additionalProperties"), dict):
                check(v, schema["additionalProperties"], root, f"{where}.{k}")
    if isinstance(instance, list) and "items" in schema:
        for i, v in enumerate(instance):
            check(v, schema["items"], root, f"{where}[{i}]")
    if isinstance(instance, str):
        if "pattern" in schema:
            assert re.search(schema["pattern"], instance), (where, instance)
        assert len(instance) >= schema.get("minLength", 0), where
    if isinstance(instance, int) and "minimum" in schema:
        assert instance >= schema["minimum"], where


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
