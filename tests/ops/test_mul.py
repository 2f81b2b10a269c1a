"""Mul: the fast kernel against the reference, the constraints, ONNX's node cases, onnxruntime."""
from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import sonnx
from sonnx import dtypes
from sonnx.ops import mul as mul_op
from sonnx.ops.signature import TensorSig
from sonnx.semantics.tensor import from_numpy, to_numpy

from .conftest import assert_same_bits, cross

ALL_TYPES = sorted(dtypes.type_set("Mul", 14))
FLOATS = [t for t in ALL_TYPES if dtypes.is_float(t)]
INTS = [t for t in ALL_TYPES if not dtypes.is_float(t)]


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return to_numpy(mul_op.mul_reference(from_numpy(a), from_numpy(b)))


# ---------------------------------------------------------------- fast == reference
@pytest.mark.req("MUL-R1", "MUL-R3")
@pytest.mark.parametrize("name", ALL_TYPES)
def test_fast_equals_reference_on_edge_values(name):
    a, b = cross(name)
    assert_same_bits(sonnx.mul(a, b), reference(a, b))
    assert_same_bits(sonnx.mul(b, a), reference(b, a))


@pytest.mark.req("MUL-R3")
def test_integer_extremes_wrap():
    assert sonnx.mul(np.array([-128], np.int8), np.array([-1], np.int8))[0] == -128
    assert reference(np.array([-128], np.int8), np.array([-1], np.int8))[0] == -128
    big = np.array([2**64 - 1, 2**63], np.uint64)
    two = np.array([2, 2], np.uint64)
    assert sonnx.mul(big, two).tolist() == [2**64 - 2, 0]
    assert reference(big, two).tolist() == [2**64 - 2, 0]
    assert sonnx.mul(np.array([2**31 - 1], np.int32), np.array([2], np.int32))[0] == -2


@pytest.mark.req("MUL-R3")
def test_float_special_values():
    f = np.float32
    out = sonnx.mul(np.array([np.inf, 0.0, -0.0, np.nan, 3e38, 1e-45], f),
                    np.array([0.0, -1.0, -1.0, 1.0, 10.0, 0.5], f))
    assert np.isnan(out[0]) and np.isnan(out[3])
    assert out[1] == 0 and np.signbit(out[1])
    assert out[2] == 0 and not np.signbit(out[2])
    assert out[4] == np.inf
    assert out[5] == 0.0  # 1e-45 * 0.5 is a tie between 0 and the smallest subnormal: even wins


@pytest.mark.req("MUL-R3")
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_every_half_precision_value(name):
    """All 65536 bit patterns of a 16-bit float against a handful of multipliers."""
    dt = dtypes.numpy_dtype(name)
    a = np.arange(2**16, dtype=np.uint16).view(dt)
    for m in [1.0, -1.0, 0.5, 3.0, 1.0 / 3.0, 1e-3, 255.0]:
        b = np.full(a.shape, m, dtype=np.float64).astype(dt)
        assert_same_bits(sonnx.mul(a, b), reference(a, b))


def _bit_pattern_arrays(name: str, shape):
    dt = dtypes.numpy_dtype(name)
    if dtypes.is_float(name):
        uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
        return hnp.arrays(uint, shape).map(lambda x: x.view(dt))
    return hnp.arrays(dt, shape)


@st.composite
def _pairs(draw):
    name = draw(st.sampled_from(ALL_TYPES))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
    return draw(_bit_pattern_arrays(name, shape)), draw(_bit_pattern_arrays(name, shape))


@pytest.mark.req("MUL-R1", "MUL-R3")
@settings(max_examples=300, deadline=None)
@given(_pairs())
def test_fast_equals_reference_property(pair):
    a, b = pair
    c = sonnx.mul(a, b)
    assert c.shape == a.shape and c.dtype == a.dtype
    assert_same_bits(c, reference(a, b))


# ---------------------------------------------------------------- result properties
@pytest.mark.req("MUL-R1")
def test_result_is_a_fresh_array_of_the_same_shape():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 2, dtype=np.float32)
    a0, b0 = a.copy(), b.copy()
    c = sonnx.mul(a, b)
    assert isinstance(c, np.ndarray) and c.shape == (2, 3) and c.flags.c_contiguous
    assert np.array_equal(a, a0) and np.array_equal(b, b0)
    scalar = sonnx.mul(np.array(2.0), np.array(3.0))
    assert type(scalar) is np.ndarray and scalar.shape == () and scalar == 6.0


@pytest.mark.req("MUL-R1", "MUL-R3")
def test_views_and_byte_order_are_values_not_layouts():
    a = np.arange(12, dtype=np.int32).reshape(3, 4).T            # non-contiguous view
    b = np.arange(12, dtype=">i4").reshape(4, 3)                  # big-endian, same type
    c = sonnx.mul(a, b)
    assert c.dtype == np.dtype(np.int32)
    assert c.tolist() == (a.astype(np.int64) * b.astype(np.int64)).tolist()


# ---------------------------------------------------------------- refusals
def _violation(a, b, **kw) -> sonnx.ProfileViolation:
    with pytest.raises(sonnx.ProfileViolation) as info:
        sonnx.mul(a, b, **kw)
    assert isinstance(info.value, ValueError)
    return info.value


@pytest.mark.req("MUL-R4")
@pytest.mark.parametrize("shape_b", [(3,), (1, 3), (), (2, 1), (1,), (1, 1, 3)])
def test_broadcastable_shapes_are_refused(shape_b):
    err = _violation(np.ones((2, 3), np.float32), np.ones(shape_b, np.float32))
    assert err.requirement == "MUL-R4"
    assert "broadcast" in str(err) and "expand" in str(err)


@pytest.mark.req("MUL-R4")
def test_legacy_broadcast_attribute_is_refused():
    sig = TensorSig((2, 3), "float")
    found = mul_op.constraints(sig, sig, opset=6, broadcast=1)
    assert [v.requirement for v in found] == ["MUL-R4"]
    assert mul_op.constraints(sig, sig, opset=6, broadcast=0) == []


@pytest.mark.req("MUL-R1")
@pytest.mark.parametrize("shape_b", [(3, 2), (4,), (2, 3, 2), (2, 4)])
def test_incompatible_shapes_are_refused(shape_b):
    err = _violation(np.ones((2, 3), np.float32), np.ones(shape_b, np.float32))
    assert err.requirement == "MUL-R1"


@pytest.mark.req("MUL-R3")
@pytest.mark.parametrize("a_type,b_type", [(np.float32, np.float64), (np.int32, np.float32),
                                           (np.int8, np.uint8), (np.int32, np.int64)])
def test_mixed_element_types_are_refused_not_cast(a_type, b_type):
    err = _violation(np.ones(3, a_type), np.ones(3, b_type))
    assert err.requirement == "MUL-R3" and "cast" in str(err)


@pytest.mark.req("MUL-R3")
@pytest.mark.parametrize("dt", [np.bool_, np.complex64, np.complex128, object, "U3", "S3",
                                ml_dtypes.float8_e4m3fn, np.float128 if hasattr(np, "float128") else np.longdouble,
                                "datetime64[s]"])
def test_non_profile_element_types_are_refused(dt):
    a = np.zeros(2, dtype=dt)
    err = _violation(a, a.copy())
    assert err.requirement == "MUL-R3"


@pytest.mark.req("MUL-R3")
def test_type_set_follows_the_opset():
    i8 = np.ones(3, np.int8)
    assert _violation(i8, i8, opset=13).requirement == "MUL-R3"
    bf = np.ones(3, ml_dtypes.bfloat16)
    assert _violation(bf, bf, opset=7).requirement == "MUL-R3"
    assert sonnx.mul(bf, bf, opset=13).dtype == bf.dtype
    i32 = np.ones(3, np.int32)
    assert _violation(i32, i32, opset=1).requirement == "MUL-R3"


@pytest.mark.req("MUL-R2")
def test_sparse_inputs_are_refused():
    from onnx import SparseTensorProto
    err = _violation(SparseTensorProto(), np.ones(3, np.float32))
    assert err.requirement == "MUL-R2" and "dense" in str(err)
    sig = TensorSig(None, None, sparse=True)
    assert [v.requirement for v in mul_op.constraints(sig, TensorSig((3,), "float"))] == ["MUL-R2"]


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 0)])
def test_empty_tensors_are_refused(shape):
    err = _violation(np.ones(shape, np.float32), np.ones(shape, np.float32))
    assert err.requirement == "PROF-R2"


@pytest.mark.req("PROF-R2", "MUL-R1")
def test_unknown_dimensions_are_refused_by_the_constraint():
    found = mul_op.constraints(TensorSig(("N", 3), "float"), TensorSig((2, 3), "float"))
    assert [v.requirement for v in found] == ["PROF-R2"]
    found = mul_op.constraints(TensorSig(None, "float"), TensorSig((2, 3), "float"))
    assert [v.requirement for v in found] == ["PROF-R2"]


@pytest.mark.req("MUL-R1", "MUL-R3")
def test_all_violations_are_reported_together():
    err = _violation(np.ones((2, 3), np.float32), np.ones((4,), np.float64))
    assert [v.requirement for v in err.violations] == ["MUL-R3", "MUL-R1"]


@pytest.mark.parametrize("bad", [[1.0, 2.0], 3.0, np.float32(2), None, "abc", (1, 2)])
def test_non_arrays_raise_type_error(bad):
    with pytest.raises(TypeError, match="numpy.ndarray"):
        sonnx.mul(bad, np.ones(2, np.float32))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        sonnx.mul(np.ones(2, np.float32), bad)


def test_masked_arrays_raise_type_error():
    m = np.ma.masked_array([1.0, 2.0], mask=[0, 1])
    with pytest.raises(TypeError, match="mask"):
        sonnx.mul(m, m)


@pytest.mark.req("MUL-R1")
def test_reference_refuses_what_the_kernel_refuses():
    a = from_numpy(np.ones((2, 3), np.float32))
    b = from_numpy(np.ones((3,), np.float32))
    with pytest.raises(sonnx.ProfileViolation) as info:
        mul_op.mul_reference(a, b)
    assert info.value.requirement == "MUL-R4"


# ---------------------------------------------------------------- ONNX's own node cases
def _onnx_mul_cases():
    from onnx.backend.test.case.node import collect_testcases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases(None)
    return {c.name: c for c in cases
            if len(c.model.graph.node) == 1 and c.model.graph.node[0].op_type == "Mul"}


ONNX_CASES = _onnx_mul_cases()
SAME_SHAPE = sorted(n for n in ONNX_CASES if n != "test_mul_bcast")


def test_onnx_ships_the_expected_mul_cases():
    assert len(SAME_SHAPE) == 8 and "test_mul_bcast" in ONNX_CASES


@pytest.mark.req("MUL-R1", "MUL-R3")
@pytest.mark.parametrize("name", SAME_SHAPE)
def test_onnx_node_case_same_shape(name):
    case = ONNX_CASES[name]
    opset = case.model.opset_import[0].version
    for inputs, outputs in case.data_sets:
        got = sonnx.mul(*inputs, opset=opset)
        assert_same_bits(got, np.asarray(outputs[0]))


@pytest.mark.req("MUL-R4")
def test_onnx_node_case_bcast_is_refused():
    inputs, _ = ONNX_CASES["test_mul_bcast"].data_sets[0]
    assert _violation(*inputs).requirement == "MUL-R4"


# ---------------------------------------------------------------- onnxruntime
def _ort_mul(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper
    elem = getattr(TensorProto, name.upper())
    graph = helper.make_graph(
        [helper.make_node("Mul", ["A", "B"], ["C"])], "mul",
        [helper.make_tensor_value_info("A", elem, a.shape), helper.make_tensor_value_info("B", elem, b.shape)],
        [helper.make_tensor_value_info("C", elem, a.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {"A": a, "B": b})[0]


@pytest.mark.req("MUL-R3")
@pytest.mark.parametrize("name", ALL_TYPES)
def test_agrees_with_onnxruntime(name):
    a, b = cross(name)
    try:
        expected = _ort_mul(name, a, b)
    except Exception as exc:  # onnxruntime has no CPU kernel for some types
        if "NOT_IMPLEMENTED" in str(exc) or "Could not find an implementation" in str(exc):
            pytest.skip(f"onnxruntime has no CPU Mul for {name}")
        raise
    assert_same_bits(sonnx.mul(a, b), expected)
