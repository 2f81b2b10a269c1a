"""The validator at scale (issue 17): a long chain costs a constant number of rule evaluations,
type conversions and inferences, and Python memory linear in the nodes with a small constant.

Measured by counting (calls, tracemalloc bytes), never by the clock. tracemalloc sees Python's
own allocations only (objects, str, bytes): the per-node records this test guards against. The
protobuf (upb) and onnx C++ memory is measured by benchmarks/bench_validate.py (resident memory
of a subprocess), since it belongs to onnx's checker and inference rather than to our code.
"""
from __future__ import annotations

import tracemalloc

import onnx
from onnx import helper
import pytest

from sonnx.validate import propagate, rules, subinfer, types, validate
from sonnx.validate.walker import Walker

from . import models as M

SMALL, LARGE = 1500, 6000
# Python bytes per node at the peak of validate(path), measured 195 here (229 at 20k nodes):
# the file's bytes (46 per node) and the inferred model's bytes (about 90) while onnx infers,
# then one name -> type entry per value. A per-node record of a few fields (a tuple with the
# node's name, inputs and outputs) brings it to 504: the bound sits between the two.
PER_NODE_BOUND = 350


def _save_chain(n: int, tmp_path) -> str:
    path = str(tmp_path / f"chain{n}.onnx")
    onnx.save(M.chain(n), path)
    return path


def _python_peak(path: str) -> int:
    tracemalloc.start()
    try:
        report = validate(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.conforms and report.error is None, (report.error, report.findings[:3])
    return peak


def _per_node_peaks(tmp_path) -> tuple[float, float]:
    validate(M.chain(4))  # onnx's schema registry and sonnx's caches: built once per process
    small, large = (_save_chain(n, tmp_path) for n in (SMALL, LARGE))
    return _python_peak(small) / SMALL, _python_peak(large) / LARGE


@pytest.mark.req("PROF-R1", "PROF-R2", "MUL-R4", "GEMM-R4")
def test_a_long_chain_costs_a_constant_number_of_rule_evaluations(monkeypatch):
    counts = {"check": 0, "convert": 0, "infer_shapes": 0, "infer_body": 0, "result": 0}

    def counting(name, real):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(rules.OperatorRules, "check", counting("check", rules.OperatorRules.check))
    monkeypatch.setattr(types, "convert", counting("convert", types.convert))
    monkeypatch.setattr(onnx.shape_inference, "infer_shapes",
                        counting("infer_shapes", onnx.shape_inference.infer_shapes))
    monkeypatch.setattr(propagate, "_result", counting("result", propagate._result))
    monkeypatch.setattr(subinfer, "infer_body", counting("infer_body", subinfer.infer_body))
    for n in (SMALL, LARGE):
        for key in counts:
            counts[key] = 0
        report = validate(M.chain(n))
        assert report.conforms and report.nodes == n
        # Mul and Gemm on float[8, 8]: one evaluation each, whatever the length; one distinct
        # type, converted by each of the two passes that read declarations (declarations.py
        # and the walker); the main graph's shapes decided by the validator's own propagation
        # (onnx's inference not run: validate/propagate.py), which evaluates each operator's
        # constraints once and leaves the walker no node to re-check; no body re-inferred
        assert counts == {"check": 0, "convert": 2, "infer_shapes": 0, "infer_body": 0,
                          "result": 2}


def test_python_memory_is_linear_in_the_nodes_with_a_small_constant(tmp_path):
    small, large = _per_node_peaks(tmp_path)
    assert large <= PER_NODE_BOUND, f"{large:.0f} bytes per node at {LARGE} nodes"
    # linear: four times the nodes, at most about four times the memory (a quadratic cost
    # would give sixteen)
    assert large <= 1.15 * small, (small, large)


def test_a_per_node_record_is_caught(tmp_path, monkeypatch):
    """The planted fault: the walker keeps a small record of every node it judged."""
    real = Walker._walk_graph

    def keeping(self, g, *args, **kwargs):
        self._planted = [(n.name, tuple(n.input), tuple(n.output)) for n in g.node]
        return real(self, g, *args, **kwargs)

    monkeypatch.setattr(Walker, "_walk_graph", keeping)
    small, large = _per_node_peaks(tmp_path)
    assert large > PER_NODE_BOUND, f"planted per-node records not seen: {large:.0f} bytes per node"


def test_the_text_shortcut_does_not_hide_a_field_that_is_not_utf8(tmp_path):
    """The walk over text fields is skipped only when it cannot find anything. A file that
    decodes as UTF-8 as a whole is not enough: here an attribute's doc_string ends in the lead
    byte 0xC3 and the next byte, the tag of AttributeProto.type (0xA0), completes a valid pair."""
    gemm = helper.make_node("Gemm", ["x", "x", "x"], ["y"], name="g", transA=0)
    gemm.attribute[0].doc_string = "ok"
    data = M.model([gemm], [M.vi("x", [2, 2])], [M.vi("y", [2, 2])]).SerializeToString()
    at = data.index(b"ok")
    data = data[:at] + b"o\xc3" + data[at + 2:]
    assert data[at + 2] == 0xA0
    data.decode("utf-8")  # the whole file is valid UTF-8
    path = tmp_path / "utf8_across_fields.onnx"
    path.write_bytes(data)
    report = validate(str(path))
    assert [f.rule for f in report.findings] == ["ONNX-IR"]
    assert "model.graph.node[0].attribute[0].doc_string = 'o\\xc3'" in report.findings[0].message
