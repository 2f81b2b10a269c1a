"""Gemm: the exact kernel against the reference, the fast kernel against the error bound, the
constraints (one test per violation path), ONNX's node cases, onnxruntime and onnx.reference."""
from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import sonnx
from sonnx import dtypes
from sonnx.ops import gemm as gemm_op
from sonnx.ops.signature import TensorSig
from sonnx.ops.tensor import from_numpy, to_numpy

from .conftest import assert_same_bits, edge_values

ALL_TYPES = sorted(dtypes.type_set("Gemm", 13))
FLOATS = [t for t in ALL_TYPES if dtypes.is_float(t)]
INTS = [t for t in ALL_TYPES if not dtypes.is_float(t)]


def reference(a, b, c=None, **kw) -> np.ndarray:
    return to_numpy(gemm_op.gemm_reference(from_numpy(a), from_numpy(b),
                                           None if c is None else from_numpy(c), **kw))


def sig(shape, elem="float", sparse=False) -> TensorSig:
    return TensorSig(shape, elem, sparse)


def ids(violations) -> list[str]:
    return [v.requirement for v in violations]


# ---------------------------------------------------------------- constraints: every violation path
@pytest.mark.req("GEMM-R1", "GEMM-R3", "GEMM-R4", "GEMM-R5", "GEMM-R6")
def test_conformant_signatures_have_no_violation():
    for opset in (1, 6, 7, 9, 11, 13, 21):
        for ta in (0, 1):
            for tb in (0, 1):
                a = sig((4, 3) if ta else (3, 4))
                b = sig((5, 4) if tb else (4, 5))
                assert gemm_op.constraints(a, b, sig((3, 5)), opset=opset, trans_a=ta, trans_b=tb,
                                           alpha=0.5, beta=-2.0) == []
    assert gemm_op.constraints(sig((3, 4)), sig((4, 5)), None, opset=11) == []
    assert gemm_op.constraints(sig((3, 4), "int64"), sig((4, 5), "int64"), None, opset=9 + 2) == []
    assert gemm_op.constraints(sig((3, 4)), sig((4, 5)), sig((3, 5)), opset=6, broadcast=0) == []


@pytest.mark.req("GEMM-R1")
@pytest.mark.parametrize("a, b, ta, tb", [
    ((3, 4), (5, 6), 0, 0),        # K 4 vs 5
    ((3, 4), (4, 5), 1, 0),        # A^T is 4 x 3, B is 4 x 5
    ((3, 4), (4, 5), 0, 1),        # B^T is 5 x 4
    ((3, 4), (5, 3), 1, 1),        # A^T 4 x 3, B^T 3 x 5: K agrees, no violation
])
def test_inner_dimension_mismatch(a, b, ta, tb):
    found = ids(gemm_op.constraints(sig(a), sig(b), None, trans_a=ta, trans_b=tb))
    if (a[0] if ta else a[1]) == (b[1] if tb else b[0]):
        assert found == []
    else:
        assert found == ["GEMM-R1"]


@pytest.mark.req("GEMM-R1")
def test_rank_other_than_two():
    assert ids(gemm_op.constraints(sig((3, 4, 1)), sig((4, 5)), None)) == ["GEMM-R1"]
    assert ids(gemm_op.constraints(sig((3, 4)), sig((4,)), None)) == ["GEMM-R1"]
    assert ids(gemm_op.constraints(sig(()), sig(()), None)) == ["GEMM-R1", "GEMM-R1"]
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.gemm(np.ones((2, 3, 4), np.float32), np.ones((4, 5), np.float32))
    assert e.value.requirement == "GEMM-R1"


@pytest.mark.req("GEMM-R1")
def test_static_positive_dimensions_reuse_prof_r2():
    assert ids(gemm_op.constraints(sig(("M", 4)), sig((4, 5)), None)) == ["PROF-R2"]
    assert ids(gemm_op.constraints(sig((3, None)), sig((4, 5)), None)) == ["PROF-R2"]
    assert ids(gemm_op.constraints(sig((3, 4)), sig((4, 0)), None)) == ["PROF-R2"]
    assert ids(gemm_op.constraints(sig(None), sig((4, 5)), None)) == ["PROF-R2"]
    assert ids(gemm_op.constraints(sig((3, 4)), sig((4, 5)), sig((3, "N")))) == ["PROF-R2"]
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.gemm(np.ones((0, 4), np.float32), np.ones((4, 5), np.float32))
    assert e.value.requirement == "PROF-R2"


@pytest.mark.req("GEMM-R2")
def test_sparse_inputs_refused():
    for which in range(3):
        s = [sig((3, 4)), sig((4, 5)), sig((3, 5))]
        s[which] = TensorSig(None, None, sparse=True)
        assert ids(gemm_op.constraints(*s)) == ["GEMM-R2"]

    class FakeSparse:  # what sig_of_array recognises as a scipy.sparse matrix
        __module__ = "scipy.sparse._csr"
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.gemm(FakeSparse(), np.ones((4, 5), np.float32))
    assert e.value.requirement == "GEMM-R2"


@pytest.mark.req("GEMM-R3")
def test_element_types_per_version():
    for opset, allowed in ((1, {"float16", "float", "double"}), (6, {"float16", "float", "double"}),
                           (7, {"float16", "float", "double"}),
                           (9, {"float16", "float", "double", "int32", "int64", "uint32", "uint64"}),
                           (11, {"float16", "float", "double", "int32", "int64", "uint32", "uint64"}),
                           (13, set(ALL_TYPES))):
        for t in sorted(dtypes.NUMERIC_TYPES | {"bool", "string", "complex64"}):
            one = sig((2, 2), t)
            found = ids(gemm_op.constraints(one, one, one, opset=opset))
            assert found == ([] if t in allowed else ["GEMM-R3"] * 3), (opset, t, found)
    assert ids(gemm_op.constraints(sig((2, 2)), sig((2, 2)), None, opset=0)) == ["GEMM-R3"]
    assert ids(gemm_op.constraints(sig((2, 2), None), sig((2, 2)), None)) == ["GEMM-R3"]


@pytest.mark.req("GEMM-R3")
def test_mixed_element_types_refused_never_cast():
    assert ids(gemm_op.constraints(sig((2, 2)), sig((2, 2), "double"), None)) == ["GEMM-R3"]
    assert ids(gemm_op.constraints(sig((2, 2)), sig((2, 2)), sig((2, 2), "float16"))) == ["GEMM-R3"]
    for a, b in ((np.float32, np.float64), (np.int32, np.int64), (np.float16, np.float32),
                 (np.int32, np.float32), (np.uint32, np.int32)):
        with pytest.raises(sonnx.ProfileViolation) as e:
            sonnx.gemm(np.ones((2, 2), a), np.ones((2, 2), b))
        assert e.value.requirement == "GEMM-R3"
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.gemm(np.ones((2, 2), np.int8), np.ones((2, 2), np.int8))
    assert e.value.requirement == "GEMM-R3"
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.gemm(np.ones((2, 2), np.bool_), np.ones((2, 2), np.bool_))
    assert e.value.requirement == "GEMM-R3"
    with pytest.raises(sonnx.ProfileViolation) as e:   # bfloat16 only from Gemm-13
        sonnx.gemm(np.ones((2, 2), ml_dtypes.bfloat16), np.ones((2, 2), ml_dtypes.bfloat16), opset=11)
    assert e.value.requirement == "GEMM-R3" and "opset 13" in str(e.value)


@pytest.mark.req("GEMM-R4")
@pytest.mark.parametrize("c_shape", [(5,), (1, 5), (3, 1), (1, 1), (1,), (), (5, 3), (3, 5, 1), (6, 5)])
def test_c_broadcast_refused(c_shape):
    assert ids(gemm_op.constraints(sig((3, 4)), sig((4, 5)), sig(c_shape))) == ["GEMM-R4"]
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.gemm(np.ones((3, 4), np.float32), np.ones((4, 5), np.float32), np.ones(c_shape, np.float32))
    assert e.value.requirement == "GEMM-R4"


@pytest.mark.req("GEMM-R4")
def test_linear_bias_message_says_how_to_fix():
    (v,) = gemm_op.constraints(sig((8, 16)), sig((32, 16)), sig((32,)), trans_b=1)
    assert v.requirement == "GEMM-R4"
    assert "nn.Linear" in v.message and "(8, 32)" in v.message and "numpy.tile" in v.message


@pytest.mark.req("GEMM-R5")
def test_attribute_values():
    a, b, c = sig((3, 4)), sig((4, 5)), sig((3, 5))
    for bad in (2, -1, True + 1, 0.5, "1", None):
        assert "GEMM-R5" in ids(gemm_op.constraints(a, b, c, trans_a=bad))
        assert "GEMM-R5" in ids(gemm_op.constraints(a, b, c, trans_b=bad))
    for opset in (1, 6):
        assert ids(gemm_op.constraints(a, b, c, opset=opset, broadcast=1)) == ["GEMM-R5"]
        assert ids(gemm_op.constraints(a, b, c, opset=opset, broadcast=None)) == []
    for opset in (7, 9, 11, 13):
        assert ids(gemm_op.constraints(a, b, c, opset=opset, broadcast=0)) == ["GEMM-R5"]
    for opset in (1, 6, 7, 9):
        assert ids(gemm_op.constraints(a, b, None, opset=opset)) == ["GEMM-R5"]
    assert ids(gemm_op.constraints(a, b, None, opset=11)) == []
    assert ids(gemm_op.constraints(a, b, c, alpha=0.1)) == ["GEMM-R5"]   # not a float32 value
    assert ids(gemm_op.constraints(a, b, c, alpha=float(np.float32(0.1)), beta=np.float32(0.3))) == []
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.gemm(np.ones((3, 4), np.float32), np.ones((4, 5), np.float32), trans_a=2)
    assert e.value.requirement == "GEMM-R5"
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.gemm(np.ones((3, 4), np.float32), np.ones((4, 5), np.float32), opset=7)
    assert e.value.requirement == "GEMM-R5"
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.gemm(np.ones((3, 4), np.float64), np.ones((4, 5), np.float64), beta=0.1)
    assert e.value.requirement == "GEMM-R5"


@pytest.mark.req("GEMM-R6")
@pytest.mark.parametrize("name", INTS)
def test_integer_alpha_beta_must_be_one(name):
    s = sig((2, 2), name)
    assert ids(gemm_op.constraints(s, s, s, alpha=2.0)) == ["GEMM-R6"]
    assert ids(gemm_op.constraints(s, s, s, beta=0.0)) == ["GEMM-R6"]
    assert ids(gemm_op.constraints(s, s, s, alpha=-1.0, beta=0.5)) == ["GEMM-R6", "GEMM-R6"]
    assert ids(gemm_op.constraints(s, s, s, alpha=1, beta=np.float32(1))) == []
    x = np.ones((2, 2), dtypes.numpy_dtype(name))
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.gemm(x, x, x, alpha=2.0)
    assert e.value.requirement == "GEMM-R6"
    with pytest.raises(sonnx.ProfileViolation) as e:
        gemm_op.gemm_reference(from_numpy(x), from_numpy(x), None, beta=0.5)
    assert e.value.requirement == "GEMM-R6"


@pytest.mark.req("GEMM-R3")
def test_bad_arguments():
    x = np.ones((2, 2), np.float32)
    for bad in ([[1.0, 2.0], [3.0, 4.0]], 1.0, np.float32(1.0), None):
        with pytest.raises(TypeError):
            sonnx.gemm(bad, x)
        with pytest.raises(TypeError):
            sonnx.gemm(x, bad) if bad is not None else sonnx.gemm(x, x, [[1.0]])
    with pytest.raises(TypeError):
        sonnx.gemm(np.ma.masked_array(x), x)
    with pytest.raises(TypeError):
        sonnx.gemm(x, x, alpha="1")
    with pytest.raises(ValueError, match="unknown mode") as e:
        sonnx.gemm(x, x, mode="fastest")
    assert not isinstance(e.value, sonnx.ProfileViolation)


@pytest.mark.req("GEMM-R1", "GEMM-R3", "GEMM-R4", "GEMM-R5")
def test_all_violations_reported_at_once():
    found = ids(gemm_op.constraints(sig((3, 4), "float"), sig((4, 5), "double"), sig((5,), "float"),
                                    trans_a=0, trans_b=3, opset=13))
    assert set(found) >= {"GEMM-R3", "GEMM-R5"}
    found = ids(gemm_op.constraints(sig((3, 4)), sig((4, 5)), sig((5,)), broadcast=1, opset=6))
    assert found == ["GEMM-R5", "GEMM-R4"]
