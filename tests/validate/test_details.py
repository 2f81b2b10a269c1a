"""Exact details the other tests leave loose (each was a surviving mutant of mutmut's run):
SARIF rule descriptors, finding locations, declaration texts, escapes, nested scopes."""
from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from sonnx import requirements
from sonnx.validate import formats, validate
from sonnx.validate.report import ONNX_CATEGORIES, Report
from sonnx.text import neutral, path_uri

from . import models as M


def test_sarif_rule_descriptors_are_exact():
    rules = formats.to_sarif_obj([Report("m.onnx")])["runs"][0]["tool"]["driver"]["rules"]
    reqs = requirements.load()
    assert [r["id"] for r in rules] == list(reqs) + list(ONNX_CATEGORIES)
    for r in rules[:len(reqs)]:
        req = reqs[r["id"]]
        page = "profile" if req.id.startswith("PROF-") else req.id.split("-")[0].lower()
        assert r == {"id": req.id, "name": formats.rule_name(req.id, req.title),
                     "shortDescription": {"text": req.title},
                     "fullDescription": {"text": req.statement},
                     "help": {"text": f"{req.statement} Rationale: {req.rationale} "
                                      f"Stated in spec/{page}.md of the sonnx repository."},
                     "properties": {"tags": ["sonnx", page], "precision": "very-high",
                                    "problem.severity": "error", "source": req.source},
                     "defaultConfiguration": {"level": "error"}}
    for r in rules[len(reqs):]:
        title, text = ONNX_CATEGORIES[r["id"]]
        assert r == {"id": r["id"], "name": formats.rule_name(r["id"], title),
                     "shortDescription": {"text": title},
                     "fullDescription": {"text": text},
                     "help": {"text": f"{text} Stated in spec/profile.md of the sonnx repository."},
                     "properties": {"tags": ["sonnx", "onnx"], "precision": "very-high",
                                    "problem.severity": "error"},
                     "defaultConfiguration": {"level": "error"}}


def test_text_titles_of_onnx_categories():
    m = M.mul([2, 3], [2, 3])
    m.graph.output[0].type.tensor_type.elem_type = TensorProto.UNDEFINED
    out = formats.to_text([validate(m)])
    assert "[ONNX-IR] ONNX IR and loaders: 1" in out
    assert formats.to_json([Report("m.onnx")]).endswith("}\n")


@pytest.mark.req("MUL-R4")
def test_nested_subgraph_reads_outer_names():
    inner = helper.make_graph([helper.make_node("Mul", ["x", "b"], ["t"], name="deep")], "inner", [],
                              [M.vi("t", [2, 3])])
    inner_else = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["e"])], "ie", [],
                                   [M.vi("e", [2, 3])])
    nested = helper.make_node("If", ["cond"], ["t2"], name="If_1", then_branch=inner,
                              else_branch=inner_else)
    then = helper.make_graph([nested], "then", [], [M.vi("t2", [2, 3])])
    other = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["e2"])], "else", [],
                              [M.vi("e2", [2, 3])])
    node = helper.make_node("If", ["cond"], ["y"], name="If_0", then_branch=then, else_branch=other)
    m = M.model([node], [M.vi("x", [2, 3]), M.vi("b", [3]), M.vi("cond", [], TensorProto.BOOL)],
                [M.vi("y", [2, 3])])
    found = [f for f in validate(m).findings if f.rule == "MUL-R4"]
    assert [(f.graph, f.node_name) for f in found] == [("main/If_0:then_branch/If_1:then_branch", "deep")]


def test_loadability_findings_are_located():
    m = M.gemm([2, 3], [3, 4], [2, 4])
    m.graph.node[0].attribute.append(helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT))
    (f,) = [f for f in validate(m).findings if f.rule == "ONNX-IR"]
    assert (f.graph, f.node_index, f.node_name, f.op_type, f.domain, f.tensor) == \
        ("main", 0, "gemm", "Gemm", "", None)
    m = M.mul([2, 3], [2, 3])
    m.graph.output[0].type.tensor_type.elem_type = TensorProto.UNDEFINED
    (f,) = [f for f in validate(m).findings if f.rule == "ONNX-IR"]
    assert (f.graph, f.node_index, f.tensor) == ("main", None, "c")


def test_onnx_findings_name_their_node():
    m = M.mul([2, 3], [2, 3])
    m.graph.node[0].attribute.append(helper.make_attribute("foo", 1))
    (f,) = [f for f in validate(m).findings if f.rule == "ONNX-CHECKER"]
    assert (f.graph, f.node_name, f.op_type) == ("main", "mul", "Mul")
    assert f.message.startswith("the ONNX checker rejects the model: ")
    assert f.message.endswith("; fix the model so that onnx accepts it")
    (f,) = validate(M.mul([2, 3], [2, 3], out_shape=[3])).findings
    assert (f.rule, f.graph, f.node_name, f.op_type) == ("ONNX-INFERENCE", "main", "mul", "Mul")
    m = M.mul([2, 3], [2, 3])
    m.graph.node[0].name = ""
    m.graph.node[0].attribute.append(helper.make_attribute("foo", 1))
    (f,) = [f for f in validate(m).findings if f.rule == "ONNX-CHECKER"]
    assert (f.node_name, f.op_type) == (None, "Mul")


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("second,shown", [
    (helper.make_tensor_value_info("b", TensorProto.FLOAT, None), "value_info: float (no shape)"),
    (helper.make_tensor_value_info("b", TensorProto.FLOAT, [None, 3]), "value_info: float[?,3]"),
    (helper.make_tensor_value_info("b", TensorProto.UNDEFINED, [2, 3]), "value_info: undefined[2,3]"),
    (helper.make_sparse_tensor_value_info("b", TensorProto.FLOAT, [2, 3]), "value_info: sparse float[2,3]"),
    (helper.make_value_info("b", helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3]))), "value_info: sequence"),
])
def test_declarations_are_described_exactly(second, shown):
    m = M.mul([2, 3], [2, 3])
    m.graph.value_info.append(second)
    (f,) = [f for f in validate(m).findings if "declared with different types" in f.message]
    assert f"(graph input: float[2,3]; {shown})" in f.message
    assert (f.graph, f.tensor) == ("main", "b")


def test_escapes():
    assert neutral("\x85") == "\\x85"                       # C1 control
    assert neutral("a\u2029b\u2028") == "a\\u2029b\\u2028"  # paragraph and line separators
    assert neutral("\U000e0001") == "\\U000e0001"            # an astral format character
    assert neutral("\ud800") == "\\ud800"                    # a lone surrogate


def test_path_uris():
    assert path_uri("dir/a b.onnx") == "dir/a%20b.onnx"
    assert path_uri("/x/y.onnx") == "file:///x/y.onnx"
    assert path_uri("c:d") == "c%3Ad"


def test_sarif_result_and_notification_are_exact():
    good = validate(M.mul([2, 3], [3]))
    good.path = "dir/m.onnx"
    bad = Report("gone.onnx", error="gone.onnx: no such file", path="gone.onnx")
    log = formats.to_sarif_obj([good, bad])
    run = log["runs"][0]
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert run["tool"]["driver"]["name"] == "sonnx" and run["tool"]["driver"]["version"]
    index = [r["id"] for r in run["tool"]["driver"]["rules"]].index("MUL-R4")
    f = good.findings[0]
    assert run["results"] == [{
        "ruleId": "MUL-R4", "ruleIndex": index, "level": "error",
        "message": {"text": f"mul (Mul-13): {f.message}"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": "dir/m.onnx"},
                                            "region": {"startLine": 1}},
                       "logicalLocations": [{"fullyQualifiedName": "main/mul", "kind": "function",
                                             "name": "mul"}]}],
        "partialFingerprints": {formats.FINGERPRINT_KEY: formats.fingerprint(f)},
        "properties": {"graph": "main", "node_index": 0, "node_name": "mul", "op_type": "Mul",
                       "domain": "", "op_version": 13}}]
    assert run["invocations"] == [{"executionSuccessful": False, "toolExecutionNotifications": [
        {"level": "error", "message": {"text": "gone.onnx: no such file"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "gone.onnx"}}}]}]}]
    assert run["artifacts"] == [{"location": {"uri": "dir/m.onnx"}}, {"location": {"uri": "gone.onnx"}}]
    tensor = Report("t.onnx", findings=[validate(M.mul(["N", 3], ["N", 3])).findings[0]])
    (res,) = formats.to_sarif_obj([tensor])["runs"][0]["results"]
    assert res["locations"][0]["logicalLocations"] == [
        {"fullyQualifiedName": "main/tensor:a", "kind": "variable", "name": "a"}]
    assert res["properties"] == {"graph": "main", "tensor": "a"}


def test_text_summary_of_several_models():
    ok, bad = Report("ok.onnx", nodes=1), validate(M.mul([2, 3], [3]))
    gone = Report("gone.onnx", error="gone.onnx: no such file")
    lines = formats.to_text([ok, bad, gone]).splitlines()
    assert lines[0] == "ok.onnx: conforms to the SONNX profile (1 node)"
    assert lines[1] == "<ModelProto>: 1 violation of 1 rule (1 node)"
    assert lines[2].startswith("  [MUL-R4] No broadcasting: 1")
    assert lines[3] == "    mul (Mul-13): Mul inputs have shapes (2, 3) and (3,), which would need broadcasting"
    assert lines[4].startswith("    fix: the profile forbids it: give both inputs the shape (2, 3)")
    assert lines[5] == "gone.onnx: ERROR (not validated): gone.onnx: no such file"
    assert lines[6] == "3 models: 1 conform, 1 with violations, 1 not readable"
    assert lines[7].startswith("next: fix the findings") and len(lines) == 8


def test_cli_error_paths(tmp_path, capsys):
    from sonnx.cli import main
    p = tmp_path / "m.onnx"
    onnx.save(M.mul([2, 3], [2, 3]), p)
    assert main(["validate", str(p), "-o", str(tmp_path / "no" / "dir.json")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("sonnx validate: cannot write ") and "No such file" in err
    assert main(["validate", "--format", "json", str(tmp_path / "gone.onnx")]) == 2
    out, err = capsys.readouterr()
    assert err == f"sonnx validate: {tmp_path / 'gone.onnx'}: no such file\n"
    assert main(["validate", str(tmp_path / "gone.onnx")]) == 2
    out, err = capsys.readouterr()
    assert "no such file" in err and "no such file" in out   # the error on stderr in every format
    assert main(["validate", str(p), "-o", "-"]) == 0
    assert "conforms to the SONNX profile (1 node)\nnext: " in capsys.readouterr()[0]


def _int_gemm(opset=13, **attrs):
    i32 = TensorProto.INT32
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="g", **attrs)
    return M.model([node], [M.vi(n, [2, 2], i32) for n in "abc"], [M.vi("y", [2, 2], i32)], opset=opset)


@pytest.mark.req("GEMM-R6", "GEMM-R3")
def test_integer_gemm_attributes_and_opset_reach_the_rules():
    assert validate(_int_gemm()).conforms                                   # defaults are 1
    assert [f.rule for f in validate(_int_gemm(beta=2.0)).findings] == ["GEMM-R6"]
    assert validate(_int_gemm(opset=9)).conforms                            # Gemm-9 has int32
    assert "GEMM-R3" in [f.rule for f in validate(_int_gemm(opset=7)).findings]  # Gemm-7 has not


@pytest.mark.req("PROF-R1", "PROF-R3")
def test_functions_never_called_are_judged_in_their_own_graph():
    body = [helper.make_node("Sigmoid", ["p"], ["r"], name="sigmoid")]
    fn = helper.make_function("local", "Unused", ["p"], ["r"], body,
                              opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx", 13)])
    m = M.mul([2, 3], [2, 3])
    m.functions.append(fn)
    found = [(f.rule, f.graph, f.node_name) for f in validate(m).findings]
    assert ("PROF-R1", "function:local::Unused", "sigmoid") in found
    assert ("PROF-R3", "function:local::Unused", None) in found


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("where", ["output", "value_info"])
def test_a_declaration_that_is_not_static_is_found_where_inference_is(where):
    m = M.mul([2, 3], [2, 3])
    if where == "output":
        m.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "N"
    else:
        m.graph.value_info.append(M.vi("c", ["N", 3]))
        m.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "N"
    r = validate(m)
    shown = "graph output" if where == "output" else "value_info"
    assert any(f.rule == "PROF-R2" and f.message.startswith(f"{shown} 'c' (as declared) has dimension 0 = 'N'")
               and (f.graph, f.tensor) == ("main", "c") for f in r.findings), r.findings


def test_undefined_initializer_type_is_located():
    m = M.mul([2, 3], [2, 3])
    t = m.graph.initializer.add(name="w", data_type=TensorProto.UNDEFINED, dims=[1])
    del t  # an unused initializer is enough
    found = [f for f in validate(m).findings if f.rule == "ONNX-IR"]
    assert [(f.graph, f.tensor) for f in found] == [("main", "w")]
    assert found[0].message.startswith("initializer 'w' has element type UNDEFINED (0)")


def test_attribute_reference_inside_a_function_subgraph_is_allowed():
    gemm = helper.make_node("Gemm", ["p", "p"], ["t"], name="g")
    gemm.attribute.append(helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT))
    then = helper.make_graph([gemm], "then", [], [M.vi("t", [2, 2])])
    other = helper.make_graph([helper.make_node("Gemm", ["p", "p"], ["e"])], "else", [],
                              [M.vi("e", [2, 2])])
    body = [helper.make_node("If", ["c"], ["r"], then_branch=then, else_branch=other)]
    fn = helper.make_function("local", "F", ["p", "c"], ["r"], body,
                              opset_imports=[helper.make_opsetid("", 13)], attributes=["alpha"])
    call = helper.make_node("F", ["x", "cond"], ["y"], domain="local", name="call", alpha=1.0)
    m = M.model([call], [M.vi("x", [2, 2]), M.vi("cond", [], TensorProto.BOOL)], [M.vi("y", [2, 2])],
                functions=[fn], extra_imports=[helper.make_opsetid("local", 1)])
    assert "ONNX-IR" not in [f.rule for f in validate(m).findings]
