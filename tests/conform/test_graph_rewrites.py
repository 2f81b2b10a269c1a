"""conform's rewrites for the graph rules (sonnx/conform/graph_rules.py): dead nodes and unused
initializers removed (PROF-R4), trailing empty input names dropped (PROF-R5), nodes sorted
(PROF-R6); each checked bit for bit by onnxruntime (the bit check) and by the validator on the
result. A planted fault in the removal is caught."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import sonnx
from sonnx.validate import graph

F = TensorProto.FLOAT


def vi(name, shape=(2, 3)):
    return helper.make_tensor_value_info(name, F, list(shape))


def model(nodes, outputs=("y",), inits=(), inputs=("a", "b")):
    g = helper.make_graph(nodes, "g", [vi(n) for n in inputs], [vi(n) for n in outputs],
                          initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def kinds(report):
    return [r["kind"] for r in report["rewrites"]]


def _dead():
    w = numpy_helper.from_array(np.full((2, 3), 3.0, np.float32), "w")          # read by a dead node only
    keep = numpy_helper.from_array(np.full((2, 3), 2.0, np.float32), "keep")   # read by a live node
    return model([helper.make_node("Mul", ["a", "w"], ["d1"], name="d1"),
                  helper.make_node("Mul", ["a", "keep"], ["t"], name="live1"),
                  helper.make_node("Relu", ["d1"], ["d2"], name="d2"),
                  helper.make_node("Add", ["t", "b"], ["y"], name="live2")], inits=[w, keep])


@pytest.mark.req("PROF-R4")
def test_conform_removes_dead_nodes():
    before = sonnx.validate(_dead())
    assert {f.rule for f in before.findings} == {"PROF-R4"}
    out, report = sonnx.conform(_dead())
    assert kinds(report) == ["remove-dead-node", "remove-dead-node", "remove-unused-initializer"]
    assert [r["node"]["name"] for r in report["rewrites"][:2]] == ["d1", "d2"]
    assert report["rewrites"][2]["tensor"] == "w"
    assert [n.name for n in out.graph.node] == ["live1", "live2"]
    assert [t.name for t in out.graph.initializer] == ["keep"]
    assert report["check"]["status"] == "passed" and report["conforms"] and report["exit_code"] == 0
    assert sonnx.validate(out).conforms


@pytest.mark.req("PROF-R4")
def test_planted_live_node_removal_is_caught(monkeypatch):
    """A removal that takes a live node too (the liveness planted wrong) cannot pass: the
    rewritten model is refused, so conform exits 1."""
    def wrong(g, made=None):
        live = bytearray(len(g.node))
        live[-1] = 1            # only the last node is kept: its input 't' loses its producer
        return live
    monkeypatch.setattr(graph, "live_nodes", wrong)
    out, report = sonnx.conform(_dead())
    assert report["exit_code"] == 1 and not report["conforms"]
    assert report["check"]["status"] != "passed"


@pytest.mark.req("PROF-R5")
def test_conform_drops_trailing_empty_inputs():
    m = model([helper.make_node("Gemm", ["a", "b", ""], ["y"], transB=1)], outputs=(),
              inputs=("a", "b"))
    m.graph.output.append(vi("y", (2, 2)))
    assert [f.rule for f in sonnx.validate(m).findings] == ["PROF-R5"]
    out, report = sonnx.conform(m)
    assert kinds(report) == ["drop-empty-inputs"] and list(out.graph.node[0].input) == ["a", "b"]
    assert report["check"]["status"] == "passed" and report["exit_code"] == 0


@pytest.mark.req("PROF-R6")
def test_conform_sorts_nodes():
    m = model([helper.make_node("Add", ["t", "u"], ["y"], name="last"),
               helper.make_node("Relu", ["a"], ["t"], name="first"),
               helper.make_node("Mul", ["a", "b"], ["u"], name="second")])
    assert "PROF-R6" in {f.rule for f in sonnx.validate(m).findings}
    out, report = sonnx.conform(m)
    assert kinds(report) == ["sort-nodes"]
    assert [n.name for n in out.graph.node] == ["first", "second", "last"]
    assert report["check"]["status"] == "passed" and report["exit_code"] == 0
    # a cycle has no order: left as it is, with the reason
    cyc = model([helper.make_node("Mul", ["a", "u"], ["t"], name="m"),
                 helper.make_node("Relu", ["t"], ["u"], name="back"),
                 helper.make_node("Relu", ["t"], ["y"], name="out")], inputs=("a",))
    out, report = sonnx.conform(cyc, check=False)
    assert "sort-nodes" not in kinds(report) and report["exit_code"] == 1
    why = [f["why_not_rewritten"] for f in report["findings"] if f["rule"] == "PROF-R6"]
    assert why and all("form a cycle" in w for w in why)


def _pad_with_gap(elem: int, np_type, opset: int = 18):
    """Pad(x, pads, '', axes): the constant omitted before a named axes input (PROF-R5)."""
    x = helper.make_tensor_value_info("x", elem, [1, 2, 3])
    y = helper.make_tensor_value_info("y", elem, [1, 2, 5])
    inits = [numpy_helper.from_array(np.array([1, 1], np.int64), "pads"),
             numpy_helper.from_array(np.array([2], np.int64), "axes")]
    node = helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"], name="pad0")
    g = helper.make_graph([node], "g", [x], [y], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


@pytest.mark.req("PROF-R5", "PAD-R4")
@pytest.mark.parametrize("elem,np_type", [(TensorProto.FLOAT, np.float32),
                                          (TensorProto.DOUBLE, np.float64),
                                          (TensorProto.FLOAT16, np.float16),
                                          (TensorProto.INT32, np.int32)])
def test_conform_fills_an_omitted_pad_constant_with_zero(elem, np_type):
    m = _pad_with_gap(elem, np_type)
    finding = sonnx.validate(m).findings
    assert [f.rule for f in finding] == ["PROF-R5"] and "sonnx conform writes" in finding[0].message
    out, report = sonnx.conform(m)
    assert kinds(report) == ["fill-omitted-input"], report["rewrites"]
    assert report["check"]["status"] == "passed" and report["exit_code"] == 0
    name = out.graph.node[0].input[2]
    assert name and list(out.graph.node[0].input) == ["x", "pads", name, "axes"]
    zero = numpy_helper.to_array(next(t for t in out.graph.initializer if t.name == name))
    assert zero.shape == () and zero.dtype == np_type
    assert zero.tobytes() == bytes(zero.dtype.itemsize)         # +0, not -0
    assert sonnx.validate(out).conforms


@pytest.mark.req("PROF-R5")
def test_conform_fill_keeps_names_unique_and_leaves_gaps_it_cannot_fill():
    m = _pad_with_gap(TensorProto.FLOAT, np.float32)
    m.graph.initializer.append(numpy_helper.from_array(np.zeros(1, np.float32), "pad0_constant_value"))
    out, report = sonnx.conform(m)
    assert out.graph.node[0].input[2] == "pad0_constant_value_2"
    # a gap the record gives no value for: Pad's pads before a named constant (ONNX has no
    # default pads to write) stays a finding, with the reason
    m = _pad_with_gap(TensorProto.FLOAT, np.float32)
    m.graph.node[0].input[1] = ""
    m.graph.node[0].input[2] = "c"
    m.graph.initializer.append(numpy_helper.from_array(np.array(0, np.float32), "c"))
    out, report = sonnx.conform(m)
    assert "PROF-R5" in report["validate"]["rules"] and report["exit_code"] == 1
    why = [f["why_not_rewritten"] for f in report["findings"] if f["rule"] == "PROF-R5"]
    assert why and "no value conform could write" in why[0]


@pytest.mark.req("PROF-R5")
def test_conform_fill_writes_a_zero_the_runtime_reads_as_the_default(monkeypatch):
    """Planted: the fill writes a one instead of a zero; the bit check against onnxruntime
    catches it (the rewritten model pads with 1)."""
    import onnx

    from sonnx.conform import graph_rules

    real = onnx.helper.make_tensor

    def one(name, elem, dims, vals, raw=False):
        if raw and dims == [] and not any(vals):
            return numpy_helper.from_array(np.array(1, np.float32), name)
        return real(name, elem, dims, vals, raw=raw)
    monkeypatch.setattr(graph_rules.onnx.helper, "make_tensor", one)
    out, report = sonnx.conform(_pad_with_gap(TensorProto.FLOAT, np.float32))
    assert kinds(report) == ["fill-omitted-input"]
    assert report["check"]["status"] != "passed" and report["exit_code"] == 1
