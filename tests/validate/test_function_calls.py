"""Model-local function bodies are judged once per distinct call signature (issue 11 item 9),
and every call site still gets its own findings."""
from __future__ import annotations

import onnx
import pytest
from onnx import helper

from sonnx.validate import subinfer, validate

from . import models as M


def test_one_body_walk_per_call_signature(monkeypatch):
    calls = []
    real = subinfer.infer_body
    monkeypatch.setattr(subinfer, "infer_body", lambda *a, **k: calls.append(1) or real(*a, **k))
    r = validate(M.many_functions(50, 500))
    assert len(calls) == 50  # one per function: every call of a function has the same signature
    assert r.nodes == 500 + 500  # the calls, and each call's body (one Mul)
    assert [f.rule for f in r.findings] == ["PROF-R1"] * 500


@pytest.mark.req("MUL-R4")
def test_every_call_site_gets_its_findings():
    body = [helper.make_node("Mul", ["p", "q"], ["r"], name="m")]
    fn = helper.make_function("local", "F", ["p", "q"], ["r"], body,
                              opset_imports=[helper.make_opsetid("", 13)])
    calls = [helper.make_node("F", ["x", "b"], ["y0"], domain="local", name="c0"),
             helper.make_node("F", ["y0", "b"], ["y1"], domain="local"),  # unnamed: F_1
             helper.make_node("F", ["y1", "y1"], ["y2"], domain="local", name="c2")]
    m = M.model(calls, [M.vi("x", [2, 3]), M.vi("b", [3])], [M.vi("y2", [2, 3])], functions=[fn],
                extra_imports=[helper.make_opsetid("local", 1)])
    r = validate(m)
    bcast = [f.graph for f in r.findings if f.rule == "MUL-R4"]
    # c0 and F_1 share a signature (float[2,3], float[3]); c2 does not, and conforms
    assert bcast == ["main/c0:local::F", "main/F_1:local::F"]


def test_thousand_functions_ten_thousand_calls_stay_fast():
    import time
    start = time.process_time()
    r = validate(M.many_functions(1000, 10000))
    assert r.nodes == 20000 and len(r.findings) == 10000
    assert time.process_time() - start < 20  # hang guard (34 s before the per-signature walk)


@pytest.mark.req("GEMM-R6")
@pytest.mark.parametrize("alphas,flagged", [((1.0, 2.0), ["main/c1:local::G"]),
                                            ((2.0, 1.0), ["main/c0:local::G"])])
def test_call_attributes_are_part_of_the_signature(alphas, flagged):
    i32 = onnx.TensorProto.INT32
    gemm = helper.make_node("Gemm", ["p", "p", "p"], ["r"], name="g")
    gemm.attribute.append(helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT))
    fn = helper.make_function("local", "G", ["p"], ["r"], [gemm],
                              opset_imports=[helper.make_opsetid("", 13)], attributes=["alpha"])
    calls = [helper.make_node("G", ["x"], [f"y{i}"], domain="local", name=f"c{i}", alpha=a)
             for i, a in enumerate(alphas)]
    m = M.model(calls, [M.vi("x", [2, 2], i32)], [M.vi(f"y{i}", [2, 2], i32) for i in range(2)],
                functions=[fn], extra_imports=[helper.make_opsetid("local", 1)])
    assert [f.graph for f in validate(m).findings if f.rule == "GEMM-R6"] == flagged
