"""Generated models: a constant broadcast operand of Mul/Add/Sub or Gemm, of a random broadcastable
shape, element type and position. Whatever is drawn, conform must give a model that validates,
with every output bit equal to the original's under onnxruntime (the differential oracle), and
the materialised constant equal to numpy.broadcast_to of the original, in its own type."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import sonnx

TYPES = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.float16: TensorProto.FLOAT16,
         np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}


@st.composite
def elementwise_case(draw):
    out = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    # a broadcastable constant shape: a suffix of out with some dims set to 1
    k = draw(st.integers(0, len(out)))
    suffix = out[len(out) - k:]
    const = tuple(1 if draw(st.booleans()) else d for d in suffix)
    return (draw(st.sampled_from(["Mul", "Add", "Sub"])), out, const,
            draw(st.sampled_from(sorted(TYPES, key=str))), draw(st.booleans()), draw(st.integers(0, 99)))


@pytest.mark.req("MUL-R4", "ADD-R4", "SUB-R4")
@settings(max_examples=60, deadline=None)
@given(elementwise_case())
def test_generated_elementwise_broadcasts(case):
    op, out, const, dtype, const_first, seed = case
    rng = np.random.default_rng(seed)
    value = (rng.standard_normal(const) * 100).astype(dtype) if np.dtype(dtype).kind == "f" \
        else rng.integers(-1000, 1000, const).astype(dtype)
    code = TYPES[dtype]
    ins = ["k", "x"] if const_first else ["x", "k"]
    g = helper.make_graph([helper.make_node(op, ins, ["y"])], "g",
                          [helper.make_tensor_value_info("x", code, list(out))],
                          [helper.make_tensor_value_info("y", code, list(out))],
                          [numpy_helper.from_array(np.asarray(value), "k")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)
    got, report = sonnx.conform(m)
    assert report["conforms"], report["findings"]
    assert report["check"]["status"] == "passed", report["check"]
    (t,) = got.graph.initializer
    assert t.data_type == code and tuple(t.dims) == out
    assert numpy_helper.to_array(t).tobytes() == np.broadcast_to(value, out).astype(dtype).tobytes()


@st.composite
def gemm_case(draw):
    m, k, n = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    c = draw(st.sampled_from([(n,), (1, n), (m, 1), (1, 1), (1,), ()]))
    alpha = draw(st.sampled_from([1.0, 0.5, -2.0, 0.1]))
    beta = draw(st.sampled_from([1.0, 0.25, -1.0, 3.0]))
    return m, k, n, c, draw(st.booleans()), draw(st.booleans()), alpha, beta, \
        draw(st.sampled_from([np.float32, np.float64])), draw(st.integers(0, 99))


@pytest.mark.req("GEMM-R4")
@settings(max_examples=60, deadline=None)
@given(gemm_case())
def test_generated_gemm_broadcast_c(case):
    m, k, n, c_shape, ta, tb, alpha, beta, dtype, seed = case
    rng = np.random.default_rng(seed)
    code = TYPES[dtype]
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
    c = rng.standard_normal(c_shape).astype(dtype)
    g = helper.make_graph(
        [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=int(ta), transB=int(tb),
                          alpha=alpha, beta=beta)], "g",
        [helper.make_tensor_value_info("a", code, [k, m] if ta else [m, k])],
        [helper.make_tensor_value_info("y", code, [m, n])],
        [numpy_helper.from_array(b, "b"), numpy_helper.from_array(np.asarray(c), "c")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    got, report = sonnx.conform(model)
    assert report["conforms"], report["findings"]
    assert report["check"]["status"] == "passed", report["check"]
    full = next(t for t in got.graph.initializer if t.name == "c")
    assert tuple(full.dims) == (m, n) and full.data_type == code
