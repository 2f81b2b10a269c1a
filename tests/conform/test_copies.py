"""conform removes Identity and inference-mode Dropout (a copy of the input): the graph
output names stay, the bit check passes, and what is not a copy (training mode, a read mask) is
refused with its reason. Planted faults in the removal are caught by the bit check or the
validator."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import sonnx
from sonnx.conform import rewrite

F = TensorProto.FLOAT


def vi(name, shape=(2, 3), elem=F):
    return helper.make_tensor_value_info(name, elem, list(shape))


def model(nodes, outputs=("y",), inits=(), opset=13, inputs=("x",), extra_inputs=()):
    g = helper.make_graph(nodes, "g", [vi(n) for n in inputs] + list(extra_inputs),
                          [vi(n) for n in outputs], initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def kinds(report):
    return [r["kind"] for r in report["rewrites"]]


def relu_copy_relu(op, opset, **attrs):
    return model([helper.make_node("Relu", ["x"], ["a"]),
                  helper.make_node(op, ["a"], ["b"], **attrs),
                  helper.make_node("Relu", ["b"], ["y"])], opset=opset)


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("op,opset,attrs", [("Identity", 13, {}), ("Identity", 6, {}),
                                             ("Identity", 21, {}),
                                             ("Dropout", 6, {"is_test": 1}), ("Dropout", 7, {}),
                                             ("Dropout", 10, {"ratio": 0.3}), ("Dropout", 12, {}),
                                             ("Dropout", 13, {"seed": 5}), ("Dropout", 22, {})])
def test_a_copy_between_nodes_is_removed(op, opset, attrs):
    m, report = sonnx.conform(relu_copy_relu(op, opset, **attrs))
    assert kinds(report) == ["remove-identity" if op == "Identity" else "remove-dropout"]
    assert [n.op_type for n in m.graph.node] == ["Relu", "Relu"]
    assert report["conforms"]
    if (op, opset) == ("Dropout", 6):
        # onnxruntime has no Dropout-6 kernel: the removal follows ONNX's is_test=1 (a copy),
        # but no bit was compared, so the verdict is "not checked", never "conforms"
        assert report["check"]["status"] == "not checked" and report["exit_code"] == 1
        assert "Dropout(6)" in report["check"]["reason"]
    else:
        assert report["exit_code"] == 0 and report["check"]["status"] == "passed"


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("op", ["Identity", "Dropout"])
def test_a_copy_into_a_graph_output_keeps_the_output_name(op):
    m, report = sonnx.conform(model([helper.make_node("Relu", ["x"], ["a"]),
                                     helper.make_node(op, ["a"], ["y"])]))
    assert [o.name for o in m.graph.output] == ["y"]
    assert [(n.op_type, list(n.output)) for n in m.graph.node] == [("Relu", ["y"])]
    assert "now writes the graph output 'y'" in report["rewrites"][0]["detail"]
    assert report["exit_code"] == 0 and report["check"]["status"] == "passed"


@pytest.mark.req("PROF-R1")
def test_a_copy_read_by_a_graph_output_and_a_node_keeps_both():
    # a is read by Relu and copied to the output y: the producer writes y, Relu reads y
    m, report = sonnx.conform(model([helper.make_node("Relu", ["x"], ["a"]),
                                     helper.make_node("Identity", ["a"], ["y"]),
                                     helper.make_node("Relu", ["a"], ["z"])], outputs=("y", "z")))
    assert [o.name for o in m.graph.output] == ["y", "z"]
    assert report["exit_code"] == 0 and report["check"]["status"] == "passed"


@pytest.mark.req("PROF-R1")
def test_graph_input_copied_to_graph_output_stays_with_its_reason():
    m, report = sonnx.conform(model([helper.make_node("Identity", ["x"], ["y"])]))
    assert kinds(report) == [] and report["exit_code"] == 1
    (f,) = report["findings"]
    assert f["rule"] == "PROF-R1" and "graph input" in f["why_not_rewritten"]


def _dropout12(training, opset=12, mask_out=False, as_input=False):
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "ratio")]
    extra = []
    if training is not None:
        inits.append(numpy_helper.from_array(np.array(training), "tm"))
        if as_input:
            extra.append(vi("tm", (), TensorProto.BOOL))
    ins = ["a", "ratio"] + (["tm"] if training is not None else [])
    outs = ["b", "mask"] if mask_out else ["b"]
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Dropout", ins, outs),
             helper.make_node("Relu", ["b"], ["y"])]
    return model(nodes, outputs=("y",) + (("mask",) if mask_out else ()), inits=inits, opset=opset,
                 extra_inputs=extra) if not mask_out else _with_mask_output(nodes, inits, opset)


def _with_mask_output(nodes, inits, opset):
    g = helper.make_graph(nodes, "g", [vi("x")], [vi("y"), vi("mask", elem=TensorProto.BOOL)],
                          initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("opset", [12, 13, 22])
def test_dropout_with_a_constant_false_training_mode_is_removed(opset):
    m, report = sonnx.conform(_dropout12(False, opset))
    # ratio and training_mode, read by the Dropout only, go with it (PROF-R4)
    assert kinds(report) == ["remove-dropout"] + ["remove-unused-initializer"] * 2
    assert report["exit_code"] == 0 and not m.graph.initializer
    assert report["check"]["status"] == "passed"


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("case,why", [
    (lambda: _dropout12(True), "not a single false"),
    (lambda: _dropout12(False, as_input=True), "not a constant"),
    (lambda: _dropout12(None, mask_out=True), "mask output 'mask' is read"),
    (lambda: relu_copy_relu("Dropout", 6), "is_test=0"),
])
def test_dropout_that_is_no_copy_stays_with_its_reason(case, why):
    _, report = sonnx.conform(case())
    assert "remove-dropout" not in kinds(report) and report["exit_code"] == 1
    reasons = [f["why_not_rewritten"] for f in report["findings"] if f["op_type"] == "Dropout"]
    assert reasons and why in reasons[0]


@pytest.mark.req("PROF-R1")
def test_planted_removal_that_drops_the_output_name_is_caught(monkeypatch):
    """Fault: the graph output's name replaced by the input's (readers rewritten the wrong way):
    nothing writes 'y' any more, and the rewritten model is refused."""
    monkeypatch.setattr(rewrite, "_kept_name", lambda x, y, outputs: (y, x))
    _, report = sonnx.conform(model([helper.make_node("Relu", ["x"], ["a"]),
                                     helper.make_node("Identity", ["a"], ["y"])]))
    assert report["exit_code"] == 1 and report["validate"]["rules"] == ["ONNX-CHECKER"]
    assert report["check"]["status"] == "failed"
    assert "Graph output (y) does not exist" in report["check"]["reason"]


@pytest.mark.req("PROF-R1")
def test_planted_removal_of_a_training_dropout_is_caught_by_the_bit_check(monkeypatch):
    """Fault: a training-mode Dropout removed as if it were a copy: onnxruntime applies the
    random mask in the original, so the bit check fails."""
    monkeypatch.setattr(rewrite, "_dropout_refusal", lambda *a: None)
    _, report = sonnx.conform(_dropout12(True))
    assert kinds(report) == ["remove-dropout"] + ["remove-unused-initializer"] * 2
    assert report["check"]["status"] == "failed" and report["exit_code"] == 1


@pytest.mark.req("PROF-R1")
def test_a_constant_shape_or_axes_input_becomes_an_initializer_whatever_reads_it():
    """The Constant -> initializer rewrite does not look at the consumer: Reshape's shape and
    Squeeze's axes (int64 inputs) are stored as initializers like any other Constant."""
    shape = numpy_helper.from_array(np.array([3, 2], np.int64))
    axes = numpy_helper.from_array(np.array([0], np.int64))
    g = helper.make_graph(
        [helper.make_node("Constant", [], ["shape"], value=shape),
         helper.make_node("Reshape", ["x", "shape"], ["r"]),
         helper.make_node("Constant", [], ["axes"], value=axes),
         helper.make_node("Unsqueeze", ["r", "axes"], ["u"]),
         helper.make_node("Squeeze", ["u", "axes"], ["y"])], "g",
        [vi("x")], [vi("y", (3, 2))])
    m, report = sonnx.conform(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                                                ir_version=8))
    assert kinds(report)[:2] == ["constant-to-initializer"] * 2
    assert {t.name for t in m.graph.initializer} == {"shape", "axes"}
    assert "Constant" not in [n.op_type for n in m.graph.node]
    assert report["check"]["status"] == "passed"


@pytest.mark.req("PROF-R1")
def test_dropout_whose_training_mode_is_a_constant_node_false_is_removed():
    """The Constant becomes an initializer first (constant-to-initializer), then it is read."""
    nodes = [helper.make_node("Constant", [], ["tm"],
                              value=numpy_helper.from_array(np.array(False))),
             helper.make_node("Relu", ["x"], ["a"]),
             helper.make_node("Dropout", ["a", "", "tm"], ["b"]),
             helper.make_node("Relu", ["b"], ["y"])]
    m, report = sonnx.conform(model(nodes, opset=13))
    assert kinds(report) == ["constant-to-initializer", "remove-dropout", "remove-unused-initializer"]
    assert report["exit_code"] == 0 and report["check"]["status"] == "passed"
