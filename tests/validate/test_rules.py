"""Each profile rule through sonnx.validate, on small models onnx itself accepts."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from sonnx.ops import registry
from sonnx import profile
from sonnx.validate import validate

from . import models as M


def rules(report):
    return [f.rule for f in report.findings]


def requirement_rules(report):
    return [f.rule for f in report.findings if f.kind == "requirement"]


@pytest.mark.req("MUL-R1", "MUL-R3", "MUL-R4")
def test_same_shape_mul_conforms():
    r = validate(M.mul([2, 3], [2, 3]))
    assert r.conforms and r.status == "conforms" and r.exit_code == 0 and r.nodes == 1


@pytest.mark.req("MUL-R4")
@pytest.mark.parametrize("b_shape", [[3], [1, 3], [], [2, 1], [1]])
def test_broadcasting_mul_refused(b_shape):
    r = validate(M.mul([2, 3], b_shape))
    assert rules(r) == ["MUL-R4"]
    f = r.findings[0]
    assert (f.graph, f.node_index, f.node_name, f.op_type, f.op_version) == ("main", 0, "mul", "Mul", 13)
    assert "expand" in f.message


@pytest.mark.req("MUL-R4")
def test_mul6_broadcast_without_attribute_refused():
    assert rules(validate(M.mul([2, 3], [3], opset=6))) == ["MUL-R4"]


@pytest.mark.req("MUL-R4")
def test_mul6_broadcast_attribute_refused_even_same_shape():
    r = validate(M.mul([2, 3], [2, 3], opset=6, broadcast=1))
    assert rules(r) == ["MUL-R4"] and "broadcast=1" in r.findings[0].message
    assert validate(M.mul([2, 3], [2, 3], opset=6, broadcast=0)).conforms


@pytest.mark.req("MUL-R3")
def test_mixed_element_types_refused_with_all_findings():
    r = validate(M.mul([2, 3], [2, 3], b_elem=TensorProto.INT32))
    # onnx's strict type inference refuses it, and so does the Mul rule
    assert "ONNX-INFERENCE" in rules(r) and "MUL-R3" in rules(r)
    assert r.findings[0].node_name == "mul"


@pytest.mark.req("MUL-R3")
@pytest.mark.parametrize("opset,elem,ok", [(13, TensorProto.INT8, False), (14, TensorProto.INT8, True),
                                           (7, TensorProto.BFLOAT16, False), (13, TensorProto.BFLOAT16, True),
                                           (13, TensorProto.BOOL, False)])
def test_type_set_of_imported_version(opset, elem, ok):
    r = validate(M.mul([2, 3], [2, 3], opset=opset, elem=elem))
    assert ("MUL-R3" not in rules(r)) == ok, r.findings
    assert r.conforms == ok


@pytest.mark.req("GEMM-R4")
@pytest.mark.parametrize("c_shape", [[4], [1, 4], [2, 1], [1, 1], [], [3, 4]])
def test_gemm_broadcast_or_wrong_c_refused(c_shape):
    r = validate(M.gemm([2, 3], [3, 4], c_shape))
    assert "GEMM-R4" in requirement_rules(r)
    f = [f for f in r.findings if f.rule == "GEMM-R4"][0]
    assert (f.node_name, f.op_type, f.op_version) == ("gemm", "Gemm", 13)


@pytest.mark.req("GEMM-R1", "GEMM-R4")
def test_gemm_full_c_and_no_c_conform():
    assert validate(M.gemm([2, 3], [3, 4], [2, 4])).conforms
    assert validate(M.gemm([2, 3], [3, 4], None)).conforms
    assert validate(M.gemm([3, 2], [4, 3], [2, 4], transA=1, transB=1)).conforms


@pytest.mark.req("GEMM-R5")
def test_gemm6_broadcast_attribute_refused():
    r = validate(M.gemm([2, 3], [3, 4], [2, 4], opset=6, broadcast=1))
    assert "GEMM-R5" in rules(r)


@pytest.mark.req("PROF-R1")
def test_non_profile_operator_refused():
    m = M.model([helper.make_node("Sigmoid", ["x"], ["y"], name="sigmoid")], [M.vi("x", [2, 3])],
                [M.vi("y", [2, 3])])
    r = validate(m)
    assert rules(r) == ["PROF-R1"] and r.findings[0].op_version == 13


@pytest.mark.req("PROF-R1", "PROF-R3")
def test_ai_onnx_domain_is_the_default_domain():
    node = helper.make_node("Mul", ["a", "b"], ["c"], name="mul")
    m = M.model([node], [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("c", [2, 3])],
                opset_imports=[helper.make_opsetid("ai.onnx", 13)])
    assert validate(m).conforms
    # a node spelling its domain 'ai.onnx' is a profile operator; onnx's checker refuses it
    m.graph.node[0].domain = "ai.onnx"
    assert {f.rule for f in validate(m).findings} == {"ONNX-CHECKER"}


@pytest.mark.req("PROF-R1")
def test_custom_domain_mul_refused():
    node = helper.make_node("Mul", ["a", "b"], ["c"], name="mul", domain="com.acme")
    m = M.model([node], [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("c", [2, 3])],
                extra_imports=[helper.make_opsetid("com.acme", 1)])
    assert "PROF-R1" in rules(validate(m))


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("dim", ["N", None, -1, 0, 2**40])
def test_non_static_dims_refused(dim):
    r = validate(M.mul([dim, 3], [dim, 3]))
    assert set(rules(r)) == {"PROF-R2"}
    assert {f.tensor for f in r.findings} >= {"a", "b"}
    out = [f for f in r.findings if f.tensor == "c"]
    assert out and out[0].node_name == "mul"


@pytest.mark.req("PROF-R2", "MUL-R2")
def test_sparse_initializer_feeding_mul_is_mul_r2():
    m = M.model([helper.make_node("Mul", ["x", "s"], ["y"], name="m")], [M.vi("x", [2, 3])],
                [M.vi("y", [2, 3])], sparse=[M.sparse_tensor("s")])
    onnx.checker.check_model(m)  # the plain checker accepts it
    r = validate(m)
    assert "MUL-R2" in rules(r) and "PROF-R2" not in rules(r)


@pytest.mark.req("PROF-R2")
def test_unused_sparse_initializer_is_prof_r2():
    m = M.model([helper.make_node("Mul", ["x", "x"], ["y"], name="m")], [M.vi("x", [2, 3])],
                [M.vi("y", [2, 3])], sparse=[M.sparse_tensor("s")])
    r = validate(m)
    assert rules(r) == ["PROF-R2"] and r.findings[0].tensor == "s" and "sparse" in r.findings[0].message


@pytest.mark.req("GEMM-R2", "PROF-R1")
def test_sparse_constant_feeding_gemm_is_gemm_r2():
    k = helper.make_node("Constant", [], ["s"], sparse_value=M.sparse_tensor("s", (3, 4)), name="k")
    g = helper.make_node("Gemm", ["a", "s"], ["y"], name="gemm")
    m = M.model([k, g], [M.vi("a", [2, 3])], [M.vi("y", [2, 4])])
    r = validate(m)
    assert "PROF-R1" in rules(r) and "GEMM-R2" in rules(r)


@pytest.mark.req("MUL-R2")
def test_sparse_graph_input_type_refused():
    sp = helper.make_sparse_tensor_value_info("s", TensorProto.FLOAT, [2, 3])
    m = M.model([helper.make_node("Mul", ["x", "s"], ["y"], name="m")], [M.vi("x", [2, 3]), sp],
                [M.vi("y", [2, 3])])
    assert "MUL-R2" in rules(validate(m))


@pytest.mark.req("PROF-R3")
@pytest.mark.parametrize("imports,expect", [
    ([("", 13)], []),
    ([("", 13), ("ai.onnx", 13)], ["PROF-R3"]),
    ([("", 13), ("com.acme", 1), ("com.acme", 2)], ["PROF-R3"]),
    ([("", 0)], ["PROF-R3"]),
    ([("", profile.MAX_KNOWN_OPSET + 1)], ["PROF-R3"]),
])
def test_opset_imports(imports, expect):
    m = M.mul([2, 3], [2, 3])
    del m.opset_import[:]
    m.opset_import.extend(helper.make_opsetid(d, v) for d, v in imports)
    got = [f for f in validate(m).findings if f.rule == "PROF-R3"]
    assert [f.rule for f in got] == expect
    assert all(f.graph == "model" for f in got)


@pytest.mark.req("PROF-R3")
def test_missing_default_import():
    m = M.mul([2, 3], [2, 3])
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("com.acme", 1))
    r = validate(m)
    assert "PROF-R3" in rules(r) and r.exit_code == 1


@pytest.mark.req("PROF-R3", "MUL-R3", "GEMM-R3")
@pytest.mark.parametrize("opset", range(1, profile.MAX_KNOWN_OPSET + 1))
def test_known_opsets_map_to_versions_the_profile_knows(opset):
    for op in ("Mul", "Gemm"):
        schema = onnx.defs.get_schema(op, opset, "")
        assert registry.since_version(op, opset) == schema.since_version


@pytest.mark.req("MUL-R4", "PROF-R1")
def test_broadcast_inside_if_branch_refused():
    m = M.if_model([helper.make_node("Mul", ["x", "b"], ["t"], name="m1")],
                   [helper.make_node("Mul", ["x", "x"], ["e"], name="m2")],
                   extra_inputs=[M.vi("b", [3])])
    onnx.checker.check_model(m, full_check=True)  # onnx accepts it
    r = validate(m)
    assert rules(r) == ["PROF-R1", "MUL-R4"]
    f = r.findings[1]
    assert (f.graph, f.node_name, f.node_index) == ("main/If_0:then_branch", "m1", 0)
    assert f.location == "main/If_0:then_branch/m1"


@pytest.mark.req("PROF-R2", "PROF-R1")
def test_symbolic_dims_inside_subgraph_refused():
    m = M.if_model([helper.make_node("Mul", ["x", "x"], ["t"], name="m1")],
                   [helper.make_node("Mul", ["z", "z"], ["z2"], name="m2"),
                    helper.make_node("Mul", ["x", "x"], ["e"], name="m3")],
                   extra_inputs=[M.vi("z", ["N", 3])])
    r = validate(m)
    assert any(f.rule == "PROF-R2" and f.graph == "main/If_0:else_branch" and f.tensor == "z2"
               and f.node_name == "m2" and "'N'" in f.message for f in r.findings), r.findings


@pytest.mark.req("PROF-R1", "MUL-R4")
def test_loop_body_walked():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="id"),
         helper.make_node("Mul", ["carried", "b"], ["carried_out"], name="body_mul")],
        "body", [M.vi("iter", [], TensorProto.INT64), M.vi("cond_in", [], TensorProto.BOOL),
                 M.vi("carried", [2, 3])],
        [M.vi("cond_out", [], TensorProto.BOOL), M.vi("carried_out", [2, 3])])
    loop = helper.make_node("Loop", ["n", "c", "x"], ["y"], body=body, name="loop")
    m = M.model([loop], [M.vi("n", [], TensorProto.INT64), M.vi("c", [], TensorProto.BOOL),
                         M.vi("x", [2, 3]), M.vi("b", [3])], [M.vi("y", [2, 3])])
    r = validate(m)
    where = {(f.rule, f.graph, f.node_name) for f in r.findings}
    assert ("MUL-R4", "main/loop:body", "body_mul") in where
    assert ("PROF-R1", "main/loop:body", "id") in where
    assert ("PROF-R1", "main", "loop") in where


@pytest.mark.req("MUL-R4", "PROF-R1")
def test_broadcast_inside_local_function_refused():
    m = M.function_model([helper.make_node("Mul", ["p", "q"], ["r"], name="fm")], ["x", "b"],
                         [M.vi("x", [2, 3]), M.vi("b", [3])])
    onnx.checker.check_model(m, full_check=True)
    r = validate(m)
    assert rules(r) == ["PROF-R1", "MUL-R4"]
    assert "inline" in r.findings[0].message
    f = r.findings[1]
    assert (f.graph, f.node_name, f.node_index) == ("main/call:local::F", "fm", 0)


@pytest.mark.req("GEMM-R5", "PROF-R1")
def test_function_attribute_reference_resolved_at_call_site():
    tb = onnx.AttributeProto(name="transB", ref_attr_name="tb", type=onnx.AttributeProto.INT)
    body = helper.make_node("Gemm", ["p", "q"], ["r"], name="fg")
    body.attribute.append(tb)
    fn = helper.make_function("local", "G", ["p", "q"], ["r"], [body],
                              opset_imports=[helper.make_opsetid("", 13)], attributes=["tb"])
    call = helper.make_node("G", ["a", "w"], ["y"], domain="local", name="call", tb=1)
    m = M.model([call], [M.vi("a", [2, 3]), M.vi("w", [4, 3])], [M.vi("y", [2, 4])],
                functions=[fn], extra_imports=[helper.make_opsetid("local", 1)])
    r = validate(m)
    # with transB=1 from the call site the inner dimensions agree: only the call is refused
    assert rules(r) == ["PROF-R1"], r.findings


@pytest.mark.req("PROF-R1")
def test_uncalled_function_operators_checked():
    fn = helper.make_function("local", "Unused", ["p"], ["r"],
                              [helper.make_node("Sigmoid", ["p"], ["r"], name="fr")],
                              opset_imports=[helper.make_opsetid("", 13)])
    m = M.mul([2, 3], [2, 3])
    m.functions.append(fn)
    m.opset_import.append(helper.make_opsetid("local", 1))
    r = validate(m)
    assert [(f.rule, f.graph, f.node_name) for f in r.findings] == [
        ("PROF-R1", "function:local::Unused", "fr")]


@pytest.mark.req("MUL-R4", "GEMM-R4", "PROF-R1", "PROF-R2")
def test_every_violation_reported_not_just_the_first():
    nodes = [helper.make_node("Mul", ["a", "b"], ["c"], name="m_bcast"),
             helper.make_node("Gemm", ["c", "w", "bias"], ["d"], name="linear"),
             helper.make_node("Sigmoid", ["d"], ["y"], name="sigmoid")]
    w = numpy_helper.from_array(np.ones((3, 4), np.float32), "w")
    bias = numpy_helper.from_array(np.ones((4,), np.float32), "bias")
    m = M.model(nodes, [M.vi("a", [2, 3]), M.vi("b", [3])], [M.vi("y", [2, 4])],
                initializers=[w, bias])
    r = validate(m)
    assert [(f.rule, f.node_index) for f in r.findings] == [
        ("MUL-R4", 0), ("GEMM-R4", 1), ("PROF-R1", 2)]


@pytest.mark.req("PROF-R2")
def test_rule_results_do_not_repeat_tensor_findings():
    r = validate(M.mul(["N", 3], ["N", 3]))
    assert len(r.findings) == 3  # a, b, c: once each, where each is defined


def test_api_accepts_path_and_modelproto(tmp_path):
    m = M.mul([2, 3], [3])
    p = tmp_path / "m.onnx"
    onnx.save(m, p)
    a, b, c = validate(p), validate(str(p)), validate(m)
    assert a.findings == b.findings == c.findings and a.source == str(p) and c.source == "<ModelProto>"
    with pytest.raises(TypeError):
        validate(42)


def test_top_level_api():
    import sonnx
    assert sonnx.validate is validate and "validate" in sonnx.__all__
