"""Each reason conform gives for a finding it leaves ("why_not_rewritten") is the real one: an
empty tensor is called empty, an unknown rank names its cause and advises no pin, a pin is
advised only for a name --dim accepts, a malformed model is called malformed."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import sonnx

F = TensorProto.FLOAT


def why(model, dims=None) -> dict:
    """(rule, tensor or node index) -> reason, for the findings conform leaves."""
    _, report = sonnx.conform(model, dims, check=False)
    return {(f["rule"], f["tensor"] if f["tensor"] is not None else f["node_index"]):
            f["why_not_rewritten"] for f in report["findings"]}


def make(nodes, inputs, outputs, inits=(), opset=14):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


PIN_WORDS = ("--dim", "without a name", "pin")


@pytest.mark.req("PROF-R2")
def test_an_empty_initializer_is_called_empty():
    m = make([helper.make_node("Add", ["x", "e"], ["y"])], [helper.make_tensor_value_info("x", F, [2, 0])],
             [helper.make_tensor_value_info("y", F, [2, 0])],
             [numpy_helper.from_array(np.zeros((2, 0), np.float32), "e")])
    reasons = why(m)
    for tensor in ("e", "x", "y"):
        r = reasons[("PROF-R2", tensor)]
        assert "empty" in r and not any(w in r for w in PIN_WORDS), (tensor, r)


@pytest.mark.req("PROF-R2")
def test_an_unknown_rank_names_its_cause_and_advises_no_pin():
    m = make([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Relu", ["z"], ["w"])],
             [helper.make_tensor_value_info("x", F, None), helper.make_tensor_value_info("z", F, ["batch", 3])],
             [helper.make_tensor_value_info("y", F, None), helper.make_tensor_value_info("w", F, ["batch", 3])])
    for dims in (None, {"batch": 2}):
        r = why(m, dims)[("PROF-R2", "y")]
        assert "rank is unknown" in r and "'x'" in r and "batch" not in r, r
    # the named dimension still gets its pin
    assert "--dim batch=SIZE" in why(m)[("PROF-R2", "z")]


@pytest.mark.req("PROF-R2")
def test_a_pin_is_advised_only_for_a_name_of_the_file():
    m = make([helper.make_node("Mul", ["x", "k"], ["y"])], [helper.make_tensor_value_info("x", F, [None, 3])],
             [helper.make_tensor_value_info("y", F, [None, 3])],
             [numpy_helper.from_array(np.ones(3, np.float32), "k")])
    reasons = why(m)
    assert "no name" in reasons[("PROF-R2", "y")] and "--dim NAME" not in reasons[("PROF-R2", "y")]
    r4 = reasons[("MUL-R4", 0)]
    assert "no name --dim could pin" in r4 and "re-export" in r4
    named = make([helper.make_node("Mul", ["x", "k"], ["y"])], [helper.make_tensor_value_info("x", F, ["unk__6", 3])],
                 [helper.make_tensor_value_info("y", F, ["unk__6", 3])],
                 [numpy_helper.from_array(np.ones(3, np.float32), "k")])
    reasons = why(named)
    assert "unk__6" in reasons[("MUL-R4", 0)] and "--dim" in reasons[("MUL-R4", 0)]
    assert "pin its symbolic dimension(s) unk__6" in reasons[("PROF-R2", "y")]


@pytest.mark.req("MUL-R4")
def test_a_rank_forced_broadcast_of_a_graph_input_is_not_promised_a_rewrite():
    m = make([helper.make_node("Mul", ["x", "z"], ["y"])],
             [helper.make_tensor_value_info("x", F, ["a", "b", 4]), helper.make_tensor_value_info("z", F, [4])],
             [helper.make_tensor_value_info("y", F, ["a", "b", 4])])
    r = why(m)[("MUL-R4", 0)]
    assert "'z' is a graph input" in r and "conform stores" not in r


@pytest.mark.req("MUL-R4")
def test_a_legacy_consumed_inputs_is_named():
    m = make([helper.make_node("Mul", ["x", "k"], ["y"], consumed_inputs=[0, 0])],
             [helper.make_tensor_value_info("x", F, [2])], [helper.make_tensor_value_info("y", F, [2])],
             [numpy_helper.from_array(np.ones(2, np.float32), "k")], opset=1)
    r = why(m)[("MUL-R4", 0)]
    assert "consumed_inputs" in r and "opset 6" in r


@pytest.mark.req("PROF-R2")
def test_an_initializer_without_a_name():
    # onnx's checker refuses it; validate says so, conform keeps it untouched and calls the
    # model malformed rather than promising a rewrite
    m = make([helper.make_node("Mul", ["x", "x"], ["y"])], [helper.make_tensor_value_info("x", F, [2])],
             [helper.make_tensor_value_info("y", F, [2])], [numpy_helper.from_array(np.ones(2, np.float32), "")])
    report = sonnx.validate(m)
    assert [f.rule for f in report.findings] == ["ONNX-CHECKER"] and "name" in report.findings[0].message
    out, rep = sonnx.conform(m, check=False)
    assert rep["exit_code"] == 1 and [t.name for t in out.graph.initializer] == [""]
    (r,) = [f["why_not_rewritten"] for f in rep["findings"]]
    assert "not valid ONNX" in r


@pytest.mark.req("PROF-R1")
def test_a_constant_whose_output_has_no_name_is_not_made_a_nameless_initializer():
    c = helper.make_node("Constant", [], [""], value=numpy_helper.from_array(np.ones(3, np.float32)))
    m = make([c, helper.make_node("Relu", ["x"], ["y"])], [helper.make_tensor_value_info("x", F, [3])],
             [helper.make_tensor_value_info("y", F, [3])])
    out, rep = sonnx.conform(m, check=False)
    # not made an initializer; with no named result it is a dead node (PROF-R4), removed
    assert not out.graph.initializer and "constant-to-initializer" not in [r["kind"] for r in rep["rewrites"]]
    assert [r["kind"] for r in rep["rewrites"]] == ["remove-dead-node"]
    assert [n.op_type for n in out.graph.node] == ["Relu"]
