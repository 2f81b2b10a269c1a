"""Gemm: the exact kernel against the reference, the fast kernel against the error bound, the
constraints (one test per violation path), ONNX's node cases, onnxruntime and onnx.reference."""
from __future__ import annotations

import functools
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import sonnx
from sonnx.ops import registry
from sonnx import dtypes
from sonnx.ops import gemm as gemm_op
from sonnx.ops.gemm import bound as gemm_bound
from sonnx.ops.signature import TensorSig
from sonnx.semantics.tensor import FULL_CONTRACTS, TensorValue, from_numpy, to_numpy

from .conftest import assert_same_bits
from .matrix import edge_operands, float_bits, ids, random_operands, sig

ALL_TYPES = sorted(registry.type_set("Gemm", 13))
FLOATS = [t for t in ALL_TYPES if dtypes.is_float(t)]
INTS = [t for t in ALL_TYPES if not dtypes.is_float(t)]


def reference(a, b, c=None, **kw) -> np.ndarray:
    return to_numpy(gemm_op.gemm_reference(from_numpy(a), from_numpy(b),
                                           None if c is None else from_numpy(c), **kw))


def example(name: str, version: int) -> tuple[list, dict]:
    """Gemm's call for test_every_operator.py: A (2, 3), B (3, 2), and C (2, 2) where the version
    requires it (C is optional only from Gemm-11); attributes at their defaults."""
    dt = dtypes.numpy_dtype(name)
    a = (np.arange(6) - 3).reshape(2, 3).astype(np.float64).astype(dt) if not name.startswith("u") \
        else np.arange(6).reshape(2, 3).astype(dt)
    b = np.arange(1, 7).reshape(3, 2).astype(np.float64).astype(dt)
    c = np.ones((2, 2), dt) if version < 11 else None
    return [a, b, c], {}


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


@pytest.mark.req("GEMM-R1", "PROF-R2")
def test_unknown_dimensions_are_left_to_prof_r2():
    """The constraints compare static shapes only and leave PROF-R2 to the profile: the kernels
    (and the validator, where each tensor is defined) report it."""
    for a, b, c in [(("M", 4), (4, 5), None), ((3, None), (4, 5), None), (None, (4, 5), None),
                    ((3, 4), (4, 5), (3, "N")), ((3, 4), (4, 0), None)]:
        assert ids(gemm_op.constraints(sig(a), sig(b), None if c is None else sig(c))) == []
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.gemm(np.ones((0, 4), np.float32), np.ones((4, 5), np.float32))
    assert e.value.requirement == "PROF-R2"
    with pytest.raises(sonnx.ProfileViolation) as e:
        gemm_op.gemm_reference(TensorValue("float", (2, 0), []), TensorValue("float", (0, 3), []))
    assert [v.requirement for v in e.value.violations] == ["PROF-R2", "PROF-R2"]


@pytest.mark.req("GEMM-R1")
def test_reference_checks_its_constraints_once_per_call(monkeypatch):
    calls = []
    checked = gemm_op.constraints
    monkeypatch.setattr(gemm_op, "constraints", lambda *a, **k: calls.append(1) or checked(*a, **k))
    gemm_op.gemm_reference(TensorValue("float", (1, 2), [1.0, 2.0]), TensorValue("float", (2, 1), [3.0, 4.0]))
    assert len(calls) == (2 if FULL_CONTRACTS else 1)     # the precondition repeats it for CrossHair


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
def test_element_type_without_a_version_or_unknown():
    # every type of every version: test_every_operator.py
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
    assert "nn.Linear" in v.message and "(8, 32)" in v.message and "numpy.broadcast_to" in v.message
    # the ways out that work (issue 15): sonnx conform, or torch.addmm with an (M, N) buffer;
    # not "fold the expansion" (torch still exports an (N) bias) nor an Expand node
    assert "sonnx conform" in v.message and "torch.addmm(bias_mn" in v.message
    assert "fold the expansion" not in v.message


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
    # an input or an opset of the wrong Python type: test_every_operator.py
    x = np.ones((2, 2), np.float32)
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


def assert_within_bound(y, a, b, c, *, alpha=1.0, beta=1.0, trans_a=False, trans_b=False, acc=None):
    """GEMM-R7's fast-mode bound, checked exactly (rationals) against the real-number result Y*
    (sonnx.ops.gemm.bound, shared with ``sonnx run --compare``).

    ``acc`` overrides the accumulation type: other implementations that accumulate in T itself
    are held to the same bound with acc = T.
    """
    bad = gemm_bound.outside_bound(y, a, b, c, alpha=alpha, beta=beta, trans_a=trans_a,
                                   trans_b=trans_b, acc=acc, limit=3)
    assert not bad, bad


# ---------------------------------------------------------------- exact kernel == reference, bit for bit
@pytest.mark.req("GEMM-R7", "GEMM-R1", "GEMM-R3")
@pytest.mark.parametrize("name", ALL_TYPES)
@pytest.mark.parametrize("ta, tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("with_c", [False, True])
def test_exact_equals_reference_random(name, ta, tb, with_c):
    rng = np.random.default_rng(hash((name, ta, tb, with_c)) % 2**32)
    a, b, c = random_operands(rng, name, 5, 7, 3, ta, tb, with_c)
    scalars = [(1.0, 1.0)] if name in INTS else [(1.0, 1.0), (0.25, -1.5), (float(np.float32(0.1)), 3.0)]
    for alpha, beta in scalars:
        kw = dict(alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)
        assert_same_bits(sonnx.gemm(a, b, c, **kw), reference(a, b, c, **kw))


@pytest.mark.req("GEMM-R7", "GEMM-R3")
@pytest.mark.parametrize("name", ALL_TYPES)
def test_exact_equals_reference_on_edge_values(name):
    a, b, c = edge_operands(name)
    scalars = [(1.0, 1.0)] if name in INTS else [(1.0, 1.0), (-0.5, 2.0), (0.0, -0.0),
                                                       (np.float32(3.0e38), np.float32(1e-30))]
    for alpha, beta in scalars:
        for cc in (None, c):
            assert_same_bits(sonnx.gemm(a, b, cc, alpha=alpha, beta=beta),
                             reference(a, b, cc, alpha=alpha, beta=beta))
        at, bt = a.T.copy(), b.T.copy()         # stored transposed: A' and B' are a and b again
        assert_same_bits(sonnx.gemm(at, bt, c, trans_a=True, trans_b=True, alpha=alpha, beta=beta),
                         reference(at, bt, c, trans_a=True, trans_b=True, alpha=alpha, beta=beta))


@pytest.mark.req("GEMM-R7")
def test_exact_mode_order_and_no_fma_witnesses():
    f = np.float32
    # ascending order: 1 + 2^-24 rounds back to 1 (tie, even) twice; any other order gives 1 + 2^-23
    a = np.array([[1.0, 2.0**-24, 2.0**-24]], f)
    b = np.ones((3, 1), f)
    assert sonnx.gemm(a, b)[0, 0] == 1.0 and reference(a, b)[0, 0] == 1.0
    # separate rounding: (1+2^-23)^2 rounds to 1+2^-22 and cancels exactly; an FMA would keep 2^-46
    a = np.array([[-1.0, 1.0 + 2.0**-23]], f)
    b = np.array([[1.0 + 2.0**-22], [1.0 + 2.0**-23]], f)
    assert sonnx.gemm(a, b)[0, 0] == 0.0 and reference(a, b)[0, 0] == 0.0
    # float16 accumulates in float32: 2048 + 1 + 1 is exact there, then rounds once to 2050
    h = np.float16
    a = np.array([[2048.0, 1.0, 1.0]], h)
    b = np.ones((3, 1), h)
    assert sonnx.gemm(a, b)[0, 0] == 2050.0 and reference(a, b)[0, 0] == 2050.0
    # s starts at +0: a sum of -0 products is +0 (IEEE: -0 + +0 = +0 in round-to-nearest)
    a = np.array([[-0.0, -0.0]], f)
    b = np.array([[1.0], [1.0]], f)
    assert not np.signbit(sonnx.gemm(a, b)[0, 0]) and not np.signbit(reference(a, b)[0, 0])
    # beta * C is added to alpha * s: -0 * 1 + -0 = -0 only when s was -0, which it never is
    assert not np.signbit(sonnx.gemm(a, b, np.array([[-0.0]], f))[0, 0])


@pytest.mark.req("GEMM-R7", "GEMM-R3")
@pytest.mark.parametrize("name", FLOATS)
def test_exact_equals_reference_larger_shapes(name):
    """Shapes that give the compiled fold several row blocks, a partial block, vector loops and
    their tails (33 x 20 x 19), with C and alpha/beta."""
    rng = np.random.default_rng(33)
    a, b, c = random_operands(rng, name, 33, 20, 19, False, True, True)
    kw = dict(alpha=float(np.float32(0.75)), beta=-2.0, trans_b=True)
    assert_same_bits(sonnx.gemm(a, b, c, **kw), reference(a, b, c, **kw))


@pytest.mark.req("GEMM-R7", "GEMM-R6")
@pytest.mark.parametrize("name", INTS)
def test_integer_wrap_around(name):
    dt = dtypes.numpy_dtype(name)
    info = np.iinfo(dt)
    a = np.array([[info.max, info.max], [info.min, 1]], dt)
    b = np.array([[info.max, 2], [1, info.max]], dt)
    c = np.array([[1, info.max], [info.min, 0]], dt)
    bits = dtypes.bits(name)
    exact = (a.astype(object) @ b.astype(object) + c.astype(object))
    expected = np.array([[int(x) % 2**bits for x in row] for row in exact], dtype=object)
    if info.min < 0:
        expected = np.where(expected >= 2 ** (bits - 1), expected - 2**bits, expected)
    expected = expected.astype(dt)
    for mode in ("exact", "fast"):
        assert_same_bits(sonnx.gemm(a, b, c, mode=mode), expected)
    assert_same_bits(reference(a, b, c), expected)


@pytest.mark.req("GEMM-R7", "GEMM-R3")
def test_layouts_do_not_matter():
    """Non-contiguous, Fortran-ordered and byte-swapped inputs give the same bits."""
    rng = np.random.default_rng(7)
    for name in ("float", "float16", "double", "int32", "uint64"):
        a, b, c = random_operands(rng, name, 6, 9, 5)
        want = sonnx.gemm(a, b, c)
        assert_same_bits(sonnx.gemm(np.asfortranarray(a), np.asfortranarray(b), np.asfortranarray(c)), want)
        big = np.zeros((12, 18), a.dtype)
        big[::2, ::2] = a
        assert_same_bits(sonnx.gemm(big[::2, ::2], b, c), want)
        swapped = [x.astype(x.dtype.newbyteorder(">" if x.dtype.byteorder in "=<" else "<")) for x in (a, b, c)]
        out = sonnx.gemm(*swapped)
        assert out.dtype.isnative
        assert_same_bits(out, want)


@st.composite
def gemm_cases(draw, names=tuple(ALL_TYPES)):
    name = draw(st.sampled_from(names))
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    ta, tb, with_c = draw(st.booleans()), draw(st.booleans()), draw(st.booleans())
    if dtypes.is_float(name):
        def arr(shape):
            return draw(st.one_of(float_bits(name, shape),
                                  hnp.arrays(np.float64, shape, elements=st.floats(-1e4, 1e4, width=16))
                                  .map(lambda x, dt=dtypes.numpy_dtype(name): x.astype(dt))))
        f32 = st.floats(width=32, allow_nan=True, allow_infinity=True)
        alpha = draw(st.one_of(st.just(1.0), f32))
        beta = draw(st.one_of(st.just(1.0), f32))
    else:
        def arr(shape):
            return draw(hnp.arrays(dtypes.numpy_dtype(name), shape))
        alpha = beta = 1.0
    a = arr((k, m) if ta else (m, k))
    b = arr((n, k) if tb else (k, n))
    c = arr((m, n)) if with_c else None
    return a, b, c, dict(alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)


@pytest.mark.req("GEMM-R7", "GEMM-R1", "GEMM-R3")
@settings(max_examples=300, deadline=None)
@given(gemm_cases())
def test_exact_equals_reference_property(case):
    a, b, c, kw = case
    assert_same_bits(sonnx.gemm(a, b, c, **kw), reference(a, b, c, **kw))


@pytest.mark.req("GEMM-R7")
@settings(max_examples=100, deadline=None)
@given(gemm_cases(tuple(INTS)))
def test_integer_fast_equals_exact_property(case):
    a, b, c, kw = case
    assert_same_bits(sonnx.gemm(a, b, c, mode="fast", **kw), sonnx.gemm(a, b, c, **kw))


# ---------------------------------------------------------------- fast mode: within the bound
@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("name", FLOATS)
def test_fast_and_exact_within_bound(name):
    rng = np.random.default_rng(11)
    for ta, tb, with_c, (alpha, beta), (m, k, n) in [
            (False, False, False, (1.0, 1.0), (6, 40, 5)),
            (True, False, True, (0.25, -1.5), (4, 64, 7)),
            (False, True, True, (float(np.float32(0.1)), 3.0), (5, 33, 6)),
            (True, True, True, (-2.0, 0.5), (3, 17, 3))]:
        a, b, c = random_operands(rng, name, m, k, n, ta, tb, with_c)
        kw = dict(alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)
        for mode in ("fast", "exact"):
            assert_within_bound(sonnx.gemm(a, b, c, mode=mode, **kw), a, b, c, **kw)


@pytest.mark.req("GEMM-R7")
def test_fast_float32_bound_at_blas_sizes():
    """Sizes where BLAS blocks and vectorises; Y* and S from float64 (their own error, at most
    2 K u64 S, is added to the allowance)."""
    rng = np.random.default_rng(3)
    m, k, n = 96, 700, 80
    a, b, c = random_operands(rng, "float", m, k, n)
    y = sonnx.gemm(a, b, c, alpha=0.5, beta=2.0, mode="fast").astype(np.float64)
    a64, b64, c64 = (x.astype(np.float64) for x in (a, b, c))
    star = 0.5 * (a64 @ b64) + 2.0 * c64
    s = 0.5 * (np.abs(a64) @ np.abs(b64)) + 2.0 * np.abs(c64)
    u = 2.0**-24
    bound = (k + 2) * u / (1 - (k + 2) * u) * s + (0.5 * k + 2) * 2.0**-149 + 2 * k * 2.0**-53 * s
    assert np.all(np.abs(y - star) <= bound)


# ---------------------------------------------------------------- ONNX's own node cases
@functools.lru_cache(maxsize=1)
def _gemm_node_cases():
    from onnx.backend.test.case.node import collect_testcases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [c for c in collect_testcases(None) if c.name.startswith("test_gemm_")]
    return {c.name[len("test_gemm_"):]: c for c in cases}


def _attrs(node):
    from onnx import helper
    got = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    return dict(alpha=float(np.float32(got.get("alpha", 1.0))), beta=float(np.float32(got.get("beta", 1.0))),
                trans_a=bool(got.get("transA", 0)), trans_b=bool(got.get("transB", 0)))


CONFORMANT_CASES = ["default_no_bias", "default_matrix_bias"]
BROADCAST_CASES = ["default_zero_bias", "default_scalar_bias", "default_single_elem_vector_bias",
                   "default_vector_bias", "transposeA", "transposeB", "alpha", "beta", "all_attributes"]


@pytest.mark.req("GEMM-R7", "GEMM-R1")
def test_onnx_node_cases_conformant():
    """ONNX's expected outputs come from numpy's float32 BLAS (np.dot, then alpha and beta in
    float32), not from the exact-mode order, so they are not our bits: both ours (exact and
    fast) and ONNX's are checked against the real-number result with the spec's bound."""
    cases = _gemm_node_cases()
    assert set(cases) == set(CONFORMANT_CASES) | set(BROADCAST_CASES)
    for name in CONFORMANT_CASES:
        case = cases[name]
        (inputs, (expected,)) = case.data_sets[0]
        kw = _attrs(case.model.graph.node[0])
        c = inputs[2] if len(inputs) > 2 else None
        for mode in ("exact", "fast"):
            y = sonnx.gemm(*inputs[:2], c, mode=mode, **kw)
            assert y.dtype == expected.dtype and y.shape == expected.shape
            assert_within_bound(y, inputs[0], inputs[1], c, **kw)
        assert_within_bound(expected, inputs[0], inputs[1], c, **kw)
        np.testing.assert_allclose(sonnx.gemm(*inputs[:2], c, **kw), expected, rtol=1e-6, atol=0)


@pytest.mark.req("GEMM-R4")
@pytest.mark.parametrize("name", BROADCAST_CASES)
def test_onnx_node_cases_with_broadcast_c_refused(name):
    case = _gemm_node_cases()[name]
    (inputs, _) = case.data_sets[0]
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.gemm(*inputs, **_attrs(case.model.graph.node[0]))
    assert e.value.requirement == "GEMM-R4"


# ---------------------------------------------------------------- onnxruntime and onnx.reference
# Which types run (onnxruntime 1.31 CPU, onnx 1.23 reference), recorded by the tests below:
ORT_TYPES = ["double", "float", "float16"]          # bfloat16 and the integers: NOT_IMPLEMENTED
ONNX_REFERENCE_TYPES = ALL_TYPES                    # all eight


def _model(name, shapes, kw, with_c):
    from onnx import TensorProto, helper
    code = getattr(TensorProto, name.upper())
    ins = ["a", "b"] + (["c"] if with_c else [])
    node = helper.make_node("Gemm", ins, ["y"], alpha=kw["alpha"], beta=kw["beta"],
                            transA=int(kw["trans_a"]), transB=int(kw["trans_b"]))
    graph = helper.make_graph([node], "gemm",
                              [helper.make_tensor_value_info(x, code, s) for x, s in zip(ins, shapes)],
                              [helper.make_tensor_value_info("y", code, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _runs(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    for ta, tb, with_c, (alpha, beta) in [(False, False, True, (1.0, 1.0)), (True, False, False, (0.5, 1.0)),
                                          (False, True, True, (-1.25, 0.75)), (True, True, True, (2.0, -1.0))]:
        if name in INTS:
            alpha = beta = 1.0
        a, b, c = random_operands(rng, name, 5, 24, 4, ta, tb, with_c)
        if name in INTS:   # small enough that no sum overflows: see test_onnx_reference_integer_overflow
            a, b, c = (None if x is None else (x % 1024).astype(x.dtype) for x in (a, b, c))
        kw = dict(alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)
        inputs = [a, b] + ([c] if with_c else [])
        yield _model(name, [x.shape for x in inputs], kw, with_c), inputs, kw


def _check_other(name, y, inputs, kw):
    a, b = inputs[:2]
    c = inputs[2] if len(inputs) > 2 else None
    assert y.dtype == dtypes.numpy_dtype(name) and y.shape == (a.shape[1] if kw["trans_a"] else a.shape[0],
                                                                b.shape[0] if kw["trans_b"] else b.shape[1])
    if name in INTS:   # the integer result is defined exactly (wrap-around), whoever computes it
        assert_same_bits(y, sonnx.gemm(a, b, c, **kw))
    else:              # a float result is bounded: the other side may accumulate in T itself
        assert_within_bound(y, a, b, c, acc=name if name in ("float16", "bfloat16") else None, **kw)
        assert_within_bound(sonnx.gemm(a, b, c, **kw), a, b, c, **kw)


@pytest.mark.req("GEMM-R7", "GEMM-R3")
@pytest.mark.parametrize("name", ALL_TYPES)
def test_against_onnxruntime(name):
    ort = pytest.importorskip("onnxruntime")
    for model, inputs, kw in _runs(name):
        try:
            sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        except Exception as exc:   # noqa: BLE001 -- onnxruntime raises its own exception types
            assert name not in ORT_TYPES, f"onnxruntime no longer runs Gemm({name}): {exc}"
            assert "NOT_IMPLEMENTED" in str(exc)
            return
        assert name in ORT_TYPES, f"onnxruntime now runs Gemm({name}): add it to ORT_TYPES"
        (y,) = sess.run(None, dict(zip("abc", inputs)))
        _check_other(name, y, inputs, kw)


@pytest.mark.req("GEMM-R7", "GEMM-R3")
@pytest.mark.parametrize("name", ONNX_REFERENCE_TYPES)
def test_against_onnx_reference(name):
    from onnx.reference import ReferenceEvaluator
    for model, inputs, kw in _runs(name):
        with np.errstate(all="ignore"):
            (y,) = ReferenceEvaluator(model).run(None, dict(zip("abc", inputs)))
        _check_other(name, y, inputs, kw)


@pytest.mark.req("GEMM-R6", "GEMM-R7")
def test_onnx_reference_integer_overflow():
    """Why GEMM-R6 and the wrap-around semantics are needed: onnx.reference computes integer Gemm
    as np.dot(a, b) * alpha + c * beta with float alpha and beta, i.e. the sum in float64, then
    casts back, so an overflowing int32 sum is not wrapped; the profile's result wraps."""
    from onnx.reference import ReferenceEvaluator
    a = np.array([[2**30 + 7]], np.int32)
    b = np.array([[1]], np.int32)
    c = np.array([[2**30]], np.int32)
    model = _model("int32", [a.shape, b.shape, c.shape],
                   dict(alpha=1.0, beta=1.0, trans_a=False, trans_b=False), True)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (theirs,) = ReferenceEvaluator(model).run(None, {"a": a, "b": b, "c": c})
    ours = sonnx.gemm(a, b, c)
    assert ours[0, 0] == -2**31 + 7             # 2^31 + 7 wraps around in int32
    assert theirs[0, 0] != ours[0, 0]


# ---------------------------------------------------------------- its CrossHair cases (tests/crosshair)
@pytest.mark.req("GEMM-R1", "GEMM-R4")
def test_gemm_grid_and_refusal_tables_cover_what_the_campaign_claims():
    from tests.crosshair import gemm_cases as G
    from tests.crosshair import harnesses as H
    # (M, K, N) each in 1..3, square and not; C tables include the broadcastable shapes
    assert all(1 <= d <= 3 for g in G.GEMM_GRID for d in g)
    assert any(len(set(g)) > 1 for g in G.GEMM_GRID) and (3, 3, 3) in G.GEMM_GRID
    assert {(2,), (1, 2), (2, 1), (1, 1), (1,), ()} <= set(G.GEMM_C_SHAPES) and None in G.GEMM_C_SHAPES
    for name in ("gemm-signed", "gemm-unsigned"):
        assert all(c.exhaustive for c in H.harness(name).cases), name
    assert all(c.exhaustive for c in H.harness("gemm-index").cases + H.harness("gemm-refusals").cases)
    assert H.harness("gemm-exact").mode == "sampled"
