"""MatMul: the constraints (one test per refusal path), the kernels bit for bit against Gemm with
alpha = 1 and no C and against the reference, the fast mode against Gemm's error bound, ONNX's
node cases, onnxruntime and onnx.reference, and a MatMul model through the validator."""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import sonnx
from sonnx.ops import registry
from sonnx import dtypes
from sonnx.ops import gemm as gemm_op
from sonnx.ops import matmul as matmul_op
from sonnx.ops.signature import TensorSig
from sonnx.semantics.tensor import TensorValue, from_numpy, to_numpy

from .conftest import assert_same_bits
from .test_arguments import _array, any_value, fresh_state
from .matrix import edge_operands, float_bits, ids, random_operands, sig
from .test_gemm import assert_within_bound

ALL_TYPES = sorted(registry.type_set("MatMul", 13))
FLOATS = [t for t in ALL_TYPES if dtypes.is_float(t)]
INTS = [t for t in ALL_TYPES if not dtypes.is_float(t)]


def reference(a, b) -> np.ndarray:
    return to_numpy(matmul_op.matmul_reference(from_numpy(a), from_numpy(b)))


def gemm_reference(a, b) -> np.ndarray:
    return to_numpy(gemm_op.gemm_reference(from_numpy(a), from_numpy(b), None))


def refused(a_shape, b_shape, elem=np.float32) -> list[str]:
    """The IDs of the kernel's and the reference's refusal (they must agree)."""
    a, b = np.ones(a_shape, elem), np.ones(b_shape, elem)
    with pytest.raises(sonnx.ProfileViolation) as kernel:
        sonnx.matmul(a, b)
    with pytest.raises(sonnx.ProfileViolation) as ref:
        matmul_op.matmul_reference(from_numpy(a), from_numpy(b))
    assert ids(kernel.value.violations) == ids(ref.value.violations)
    return ids(kernel.value.violations)


# ---------------------------------------------------------------- constraints: every refusal path
@pytest.mark.req("MATMUL-R1", "MATMUL-R3", "MATMUL-R4")
def test_conformant_signatures_have_no_violation():
    for opset, types in ((1, ("float16", "float", "double")), (8, ("double",)),
                         (9, ("int32", "uint64", "float")), (13, ALL_TYPES), (21, ALL_TYPES)):
        for t in types:
            assert matmul_op.constraints(sig((3, 4), t), sig((4, 5), t), opset=opset) == []
    assert matmul_op.constraints(sig((1, 1)), sig((1, 1))) == []


@pytest.mark.req("MATMUL-R1")
@pytest.mark.parametrize("a, b", [((3, 4), (5, 6)), ((3, 4), (3, 4)), ((1, 2), (1, 2)), ((4, 3), (4, 3))])
def test_inner_dimension_mismatch(a, b):
    found = matmul_op.constraints(sig(a), sig(b))
    assert ids(found) == ["MATMUL-R1"]
    assert f"A is {a[0]} x {a[1]} and B is {b[0]} x {b[1]}" in found[0].message
    assert "transpose" in found[0].message
    assert refused(a, b) == ["MATMUL-R1"]


@pytest.mark.req("MATMUL-R1")
def test_rank_one_operands_are_not_promoted():
    """ONNX promotes a vector to a matrix (and drops the added dimension from the result); the
    profile refuses it and says which matrix to store instead."""
    a_vec = matmul_op.constraints(sig((4,)), sig((4, 5)))
    assert ids(a_vec) == ["MATMUL-R1"] and "the matrix (1, 4)" in a_vec[0].message
    b_vec = matmul_op.constraints(sig((3, 4)), sig((4,)))
    assert ids(b_vec) == ["MATMUL-R1"] and "the matrix (4, 1)" in b_vec[0].message
    assert ids(matmul_op.constraints(sig((4,)), sig((4,)))) == ["MATMUL-R1", "MATMUL-R1"]
    assert refused((4,), (4, 5)) == ["MATMUL-R1"]
    assert refused((3, 4), (4,)) == ["MATMUL-R1"]
    assert refused((4,), (4,)) == ["MATMUL-R1", "MATMUL-R1"]


@pytest.mark.req("MATMUL-R1")
def test_rank_zero_and_batched_operands_refused():
    scalar = matmul_op.constraints(sig(()), sig((1, 1)))
    assert ids(scalar) == ["MATMUL-R1"] and "Mul" in scalar[0].message
    # same batch on both sides: nothing is broadcast, but batched MatMul is outside the profile
    batched = matmul_op.constraints(sig((2, 3, 4)), sig((2, 4, 5)))
    assert ids(batched) == ["MATMUL-R1", "MATMUL-R1"]
    assert "(batch * M, K), as the model's input (a Reshape node is not in" in batched[0].message
    assert "one rank-2 MatMul per matrix" in batched[1].message
    assert ids(matmul_op.constraints(sig((1, 2, 3, 4)), sig((1, 2, 4, 5)))) == ["MATMUL-R1"] * 2
    assert refused((2, 3, 4), (2, 4, 5)) == ["MATMUL-R1", "MATMUL-R1"]


@pytest.mark.req("MATMUL-R4", "MATMUL-R1")
@pytest.mark.parametrize("a, b, expected", [
    ((2, 3, 4), (4, 5), ["MATMUL-R1", "MATMUL-R4"]),                 # B reused for both matrices of A
    ((3, 4), (2, 4, 5), ["MATMUL-R1", "MATMUL-R4"]),                 # A reused
    ((2, 1, 3, 4), (3, 4, 5), ["MATMUL-R1", "MATMUL-R1", "MATMUL-R4"]),   # (2, 1) against (3,)
    ((1, 3, 4), (2, 4, 5), ["MATMUL-R1", "MATMUL-R1", "MATMUL-R4"]),      # 1 against 2
    ((4,), (2, 4, 5), ["MATMUL-R1", "MATMUL-R1", "MATMUL-R4"]),      # promoted vector against a stack
    ((2, 3, 4), (2, 4, 5), ["MATMUL-R1", "MATMUL-R1"]),              # equal batches: no broadcast
])
def test_broadcast_batches_refused(a, b, expected):
    found = matmul_op.constraints(sig(a), sig(b))
    assert ids(found) == expected
    if "MATMUL-R4" in expected:
        assert "which ONNX would broadcast" in found[-1].message
        assert f"{a[:-2] if len(a) > 1 else ()} and {b[:-2] if len(b) > 1 else ()}" in found[-1].message
    assert refused(a, b) == expected


@pytest.mark.req("MATMUL-R1", "MATMUL-R4", "PROF-R2")
def test_unknown_dimensions_are_left_to_prof_r2():
    """Only static sizes are compared; symbolic or unknown ones are PROF-R2's (reported by the
    kernels and, where each tensor is defined, by the validator)."""
    for a, b in [(("M", 4), (4, 5)), ((3, None), (4, 5)), (None, (4, 5)), ((3, 4), (None, 5)),
                 (("B", 3, 4), ("B", 4, 5))]:
        assert "MATMUL-R4" not in ids(matmul_op.constraints(sig(a), sig(b)))
        assert "MATMUL-R1" not in ids(matmul_op.constraints(sig(a), sig(b))) or len(a or ()) != 2
    assert ids(matmul_op.constraints(sig(("B", 3, 4)), sig((4, 5)))) == ["MATMUL-R1", "MATMUL-R4"]
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.matmul(np.ones((0, 4), np.float32), np.ones((4, 5), np.float32))
    assert e.value.requirement == "PROF-R2"
    with pytest.raises(sonnx.ProfileViolation) as e:
        matmul_op.matmul_reference(TensorValue("float", (2, 0), []), TensorValue("float", (0, 3), []))
    assert ids(e.value.violations) == ["PROF-R2", "PROF-R2"]


@pytest.mark.req("MATMUL-R2")
@pytest.mark.parametrize("sparse_a", [True, False])
def test_sparse_inputs_refused(sparse_a):
    sparse, dense = TensorSig(None, None, sparse=True), sig((3, 4) if sparse_a else (4, 5))
    operands = (sparse, dense) if sparse_a else (dense, sparse)
    assert ids(matmul_op.constraints(*operands)) == ["MATMUL-R2"]
    # an object of a scipy.sparse module is what sig_of_array takes for a sparse matrix
    fake = type("FakeSparse", (), {"__module__": "scipy.sparse._csr"})()
    x = np.ones((3, 3), np.float32)
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.matmul(fake, x) if sparse_a else sonnx.matmul(x, fake)
    assert e.value.requirement == "MATMUL-R2"


@pytest.mark.req("MATMUL-R3")
def test_element_types_per_version_say_which_version_has_them():
    # every type of every version accepted or refused: test_every_operator.py
    msg = matmul_op.constraints(sig((2, 3), "int64"), sig((3, 2), "int64"), opset=8)[0].message
    assert "MatMul-1" in msg and "integer MatMul needs MatMul-9" in msg
    msg = matmul_op.constraints(sig((2, 3), "bfloat16"), sig((3, 2), "bfloat16"), opset=12)[0].message
    assert "MatMul-9" in msg and "bfloat16 needs MatMul-13" in msg
    x = np.ones((2, 2), np.int32)
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.matmul(x, x, opset=8)
    assert e.value.requirement == "MATMUL-R3"
    assert_same_bits(sonnx.matmul(x, x, opset=9), np.full((2, 2), 2, np.int32))
    x8 = np.ones((2, 2), np.int8)
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.matmul(x8, x8)
    assert e.value.requirement == "MATMUL-R3"


@pytest.mark.req("MATMUL-R3")
def test_mixed_element_types_refused_never_cast():
    found = matmul_op.constraints(sig((2, 3), "float"), sig((3, 2), "double"))
    assert ids(found) == ["MATMUL-R3"] and "never casts" in found[0].message
    for ta, tb in [(np.float32, np.float64), (np.int32, np.int64), (np.float16, np.float32),
                   (np.uint32, np.int32)]:
        with pytest.raises(sonnx.ProfileViolation) as e:
            sonnx.matmul(np.ones((2, 3), ta), np.ones((3, 2), tb))
        assert e.value.requirement == "MATMUL-R3"


@pytest.mark.req("MATMUL-R1", "MATMUL-R3")
def test_bad_arguments():
    # an input or an opset of the wrong Python type, an opset out of range: test_every_operator.py
    x = np.ones((2, 2), np.float32)
    with pytest.raises(TypeError, match="masked"):
        sonnx.matmul(np.ma.masked_array(x), x)
    for mode in (None, 1, b"exact"):
        with pytest.raises(TypeError, match="^sonnx.matmul: mode"):
            sonnx.matmul(x, x, mode=mode)
    with pytest.raises(ValueError, match="^sonnx.matmul: unknown mode") as e:
        sonnx.matmul(x, x, mode="fastest")
    assert not isinstance(e.value, sonnx.ProfileViolation)
    with pytest.raises(TypeError):
        sonnx.matmul(x, x, 13)          # opset and mode are keyword-only


@st.composite
def matmul_calls(draw) -> dict:
    """An accepted call with, now and then, anything at all for one argument (test_arguments'
    values: arrays of every dtype, shape and kind, numbers of every type, strings, objects)."""
    dt = draw(st.sampled_from([np.float32, np.float16, np.int64]))
    call = {"a": _array(dt, (2, 3), "plain"), "b": _array(dt, (3, 4), "plain"),
            "mode": draw(st.sampled_from(["exact", "fast"])), "opset": draw(st.sampled_from([9, 13, 28]))}
    odd = draw(st.sampled_from([None, "a", "b", "mode", "opset"]))
    if odd is not None:
        call[odd] = draw(any_value)
    return call


def _verdict(call: dict) -> tuple:
    """What one call gives, as a comparable value; fails on any other outcome."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # a warning is not a verdict either
        try:
            out = sonnx.matmul(call["a"], call["b"], mode=call["mode"], opset=call["opset"])
        except sonnx.ProfileViolation as e:
            return ("refused", tuple(ids(e.violations)), str(e))
        except TypeError as e:
            assert str(e).startswith("sonnx.matmul: "), f"a TypeError not raised by sonnx: {e!r}"
            return ("TypeError", str(e))
        except ValueError as e:
            assert str(e).startswith("sonnx.matmul: unknown mode"), repr(e)
            return ("ValueError", str(e))
    assert type(out) is np.ndarray
    return ("ok", out.dtype.str, out.shape, out.tobytes())


@pytest.mark.req("MATMUL-R1", "MATMUL-R3")
@settings(max_examples=150, deadline=None)
@given(st.lists(matmul_calls(), min_size=2, max_size=6))
def test_any_argument_gives_the_verdict_of_a_fresh_process(calls):
    """Any value for any argument gives a result, ProfileViolation, or a TypeError/ValueError
    saying sonnx.matmul (never a traceback from inside, never sonnx.gemm's name), and the same
    verdict as in a fresh state whatever was called before (the memos of MatMul and Gemm)."""
    seen = [_verdict(c) for c in calls]
    for call, first in zip(calls, seen):
        fresh_state()
        assert _verdict(call) == first


@pytest.mark.req("MATMUL-R1", "MATMUL-R3", "MATMUL-R4")
def test_all_violations_reported_at_once():
    found = ids(matmul_op.constraints(sig((2, 3, 4), "float"), sig((4,), "double")))
    assert found == ["MATMUL-R3", "MATMUL-R1", "MATMUL-R1", "MATMUL-R4"]


@pytest.mark.req("MATMUL-R1", "MATMUL-R3")
def test_verdicts_do_not_depend_on_earlier_calls():
    """The memo of accepted calls never turns a refusal into an acceptance or back."""
    from sonnx.ops.kernel import clear_memos
    x = np.ones((2, 3), np.float32)
    y = np.ones((3, 2), np.float32)
    first = sonnx.matmul(x, y)
    for _ in range(2):
        with pytest.raises(sonnx.ProfileViolation):
            sonnx.matmul(x, x)
        with pytest.raises(sonnx.ProfileViolation):
            sonnx.matmul(x, y, opset=29)
        with pytest.raises(TypeError):
            sonnx.matmul(x, y, opset=13.0)
        assert_same_bits(sonnx.matmul(x, y), first)
    clear_memos()
    assert_same_bits(sonnx.matmul(x, y), first)


# ---------------------------------------------------------------- MatMul is Gemm(alpha = 1, no C)
def _all_agree(a, b) -> np.ndarray:
    """sonnx.matmul (exact) against sonnx.gemm with alpha = 1 and no C, the MatMul reference and
    Gemm's reference: the same bits everywhere."""
    y = sonnx.matmul(a, b)
    assert_same_bits(y, sonnx.gemm(a, b))
    assert_same_bits(y, sonnx.gemm(a, b, alpha=np.float32(1.0), trans_a=False, trans_b=False, mode="exact"))
    assert_same_bits(y, reference(a, b))
    assert_same_bits(y, gemm_reference(a, b))
    return y


@pytest.mark.req("MATMUL-R5", "MATMUL-R1", "MATMUL-R3")
@pytest.mark.parametrize("name", ALL_TYPES)
def test_exact_equals_gemm_and_reference_random(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    for m, k, n in [(1, 1, 1), (5, 7, 3), (3, 1, 4), (1, 9, 1)]:
        a, b, _ = random_operands(rng, name, m, k, n, with_c=False)
        y = _all_agree(a, b)
        assert y.shape == (m, n) and y.dtype == a.dtype


@pytest.mark.req("MATMUL-R5", "MATMUL-R3")
@pytest.mark.parametrize("name", ALL_TYPES)
def test_exact_equals_gemm_and_reference_on_edge_values(name):
    """NaN, infinities, -0, subnormals, extremes (float); min, max, -1 (integers: wrap-around),
    mixed in every output element; also each operand alone against a column of ones."""
    a, b, _ = edge_operands(name)
    _all_agree(a, b)
    _all_agree(b.T.copy(), a.T.copy())
    ones = np.ones((a.shape[1], 1), a.dtype)
    _all_agree(a, ones)


@pytest.mark.req("MATMUL-R5")
def test_exact_mode_witnesses():
    f = np.float32
    cases = [
        # ascending order: 1 + 2^-24 rounds back to 1 twice; any other order gives 1 + 2^-23
        (np.array([[1.0, 2.0**-24, 2.0**-24]], f), np.ones((3, 1), f), 1.0),
        # separate rounding: (1+2^-23)^2 rounds to 1+2^-22 and cancels; an FMA would keep 2^-46
        (np.array([[-1.0, 1.0 + 2.0**-23]], f), np.array([[1.0 + 2.0**-22], [1.0 + 2.0**-23]], f), 0.0),
        # float16 accumulates in float32: 2048 + 1 + 1 is exact there, then rounds once to 2050
        (np.array([[2048.0, 1.0, 1.0]], np.float16), np.ones((3, 1), np.float16), 2050.0),
        # bfloat16 likewise: 256 + 1 + 1 = 258 in float32, a bfloat16 value (256 + 1 is not)
        (np.array([[256.0, 1.0, 1.0]], dtypes.numpy_dtype("bfloat16")),
         np.ones((3, 1), dtypes.numpy_dtype("bfloat16")), 258.0),
        # double: 1 + 2^-53 + 2^-53 stays 1 in ascending order
        (np.array([[1.0, 2.0**-53, 2.0**-53]]), np.ones((3, 1)), 1.0),
    ]
    for a, b, want in cases:
        y = _all_agree(a, b)
        assert float(y[0, 0]) == want, (a, y)
    # s starts at +0: a dot product of negative zeros is +0 (Gemm's alpha = 1 keeps it +0)
    y = _all_agree(np.array([[-0.0, -0.0]], f), np.ones((2, 1), f))
    assert y[0, 0] == 0 and not np.signbit(y[0, 0])
    # 1 * -0 would be -0, but s is +0 + -0 = +0; inf * 0 is NaN; inf - inf is NaN
    for row, col in [([np.inf, 1.0], [0.0, 1.0]), ([np.inf, -np.inf], [1.0, 1.0])]:
        assert np.isnan(_all_agree(np.array([row], f), np.array(col, f).reshape(2, 1))[0, 0])
    # overflow to infinity in the accumulation type, subnormal products kept (no flush to zero)
    big = np.finfo(f).max
    assert _all_agree(np.array([[big, big]], f), np.ones((2, 1), f))[0, 0] == np.inf
    tiny = np.finfo(f).smallest_subnormal
    assert _all_agree(np.array([[tiny, tiny]], f), np.ones((2, 1), f))[0, 0] == 2 * tiny


@pytest.mark.req("MATMUL-R5", "MATMUL-R3")
@pytest.mark.parametrize("name", INTS)
def test_integer_wrap_around(name):
    dt = dtypes.numpy_dtype(name)
    info = np.iinfo(dt)
    a = np.array([[info.max, info.max], [info.min, 1]], dt)
    b = np.array([[info.max, 2], [1, info.max]], dt)
    bits = dtypes.bits(name)
    exact = a.astype(object) @ b.astype(object)
    wrapped = [[int(x) % 2**bits for x in row] for row in exact]
    if info.min < 0:
        wrapped = [[x - 2**bits if x >= 2 ** (bits - 1) else x for x in row] for row in wrapped]
    expected = np.array(wrapped, dtype=object).astype(dt)
    for mode in ("exact", "fast"):
        assert_same_bits(sonnx.matmul(a, b, mode=mode), expected)
    assert_same_bits(_all_agree(a, b), expected)


@pytest.mark.req("MATMUL-R5", "MATMUL-R3")
@pytest.mark.parametrize("name", FLOATS)
def test_exact_equals_gemm_larger_shapes(name):
    """Several row panels, partial panels, vector tails and K across a block boundary (300 > 256)
    of the compiled fold; Gemm's own tests cover it in depth, here MatMul must reach it."""
    rng = np.random.default_rng(5)
    a, b, _ = random_operands(rng, name, 33, 300, 19, with_c=False)
    y = sonnx.matmul(a, b)
    assert_same_bits(y, sonnx.gemm(a, b))
    assert_same_bits(y[:3, :5], reference(a[:3], b[:, :5]))


@pytest.mark.req("MATMUL-R5")
def test_layouts_do_not_matter():
    """Fortran order, strided views and byte-swapped operands give the same bits (and a native
    result)."""
    rng = np.random.default_rng(7)
    for name in ("float", "float16", "double", "int32", "uint64"):
        a, b, _ = random_operands(rng, name, 6, 9, 5, with_c=False)
        want = sonnx.matmul(a, b)
        for x, y in [(np.asfortranarray(a), np.asfortranarray(b)), (np.repeat(a, 2, axis=1)[:, ::2], b.T.copy().T),
                     (a, b.byteswap().view(b.dtype.newbyteorder()))]:
            out = sonnx.matmul(x, y)
            assert out.dtype.isnative
            assert_same_bits(out, want)


@st.composite
def matmul_cases(draw, names=tuple(ALL_TYPES)):
    name = draw(st.sampled_from(names))
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    if dtypes.is_float(name):
        def arr(shape):
            return draw(st.one_of(float_bits(name, shape),
                                  hnp.arrays(np.float64, shape, elements=st.floats(-1e4, 1e4, width=16))
                                  .map(lambda x, dt=dtypes.numpy_dtype(name): x.astype(dt))))
    else:
        def arr(shape):
            return draw(hnp.arrays(dtypes.numpy_dtype(name), shape))
    return arr((m, k)), arr((k, n))


@pytest.mark.req("MATMUL-R5", "MATMUL-R1", "MATMUL-R3")
@settings(max_examples=200, deadline=None)
@given(matmul_cases())
def test_exact_equals_gemm_and_reference_property(case):
    _all_agree(*case)


@pytest.mark.req("MATMUL-R5")
@settings(max_examples=60, deadline=None)
@given(matmul_cases(tuple(INTS)))
def test_integer_fast_equals_exact_property(case):
    assert_same_bits(sonnx.matmul(*case, mode="fast"), sonnx.matmul(*case))


# ---------------------------------------------------------------- fast mode: Gemm's bound
@pytest.mark.req("MATMUL-R5")
@pytest.mark.parametrize("name", FLOATS)
def test_fast_and_exact_within_gemm_bound(name):
    rng = np.random.default_rng(11)
    for m, k, n in [(6, 40, 5), (4, 64, 7), (5, 33, 6), (1, 1, 1)]:
        a, b, _ = random_operands(rng, name, m, k, n, with_c=False)
        for mode in ("fast", "exact"):
            y = sonnx.matmul(a, b, mode=mode)
            assert y.dtype == a.dtype and y.shape == (m, n)
            assert_within_bound(y, a, b, None)
        assert_same_bits(sonnx.matmul(a, b, mode="fast"), sonnx.gemm(a, b, mode="fast"))


# ---------------------------------------------------------------- ONNX's own node cases
@functools.lru_cache(maxsize=1)
def _node_cases():
    import importlib

    import onnx.backend.test.case.node as node_cases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        importlib.import_module("onnx.backend.test.case.node.matmul")
    return {c.name[len("test_matmul_"):]: c for c in node_cases._NodeTestCases
            if c.name.startswith("test_matmul_")}


CONFORMANT_CASES = ["2d"]
# the others, with the IDs their shapes call for (batch dims: all but the last two)
REFUSED_CASES = {"3d": ["MATMUL-R1", "MATMUL-R1"], "4d": ["MATMUL-R1", "MATMUL-R1"],
                 "bcast": ["MATMUL-R1", "MATMUL-R1", "MATMUL-R4"],          # (3, 1) against (1, 2)
                 "1d_3d": ["MATMUL-R1", "MATMUL-R1", "MATMUL-R4"],          # () against (2,)
                 "4d_1d": ["MATMUL-R1", "MATMUL-R1", "MATMUL-R4"],          # (1, 2) against ()
                 "1d_1d": ["MATMUL-R1", "MATMUL-R1"]}


@pytest.mark.req("MATMUL-R5", "MATMUL-R1")
def test_onnx_node_cases_conformant():
    """ONNX's expected output comes from numpy's float32 matmul (BLAS), not from the exact-mode
    order: ours (both modes) and theirs are checked against Gemm's bound, and the validator
    accepts the case's model."""
    cases = _node_cases()
    assert set(cases) == set(CONFORMANT_CASES) | set(REFUSED_CASES)
    for name in CONFORMANT_CASES:
        case = cases[name]
        (a, b), (expected,) = case.data_sets[0]
        for mode in ("exact", "fast"):
            y = sonnx.matmul(a, b, mode=mode)
            assert y.dtype == expected.dtype and y.shape == expected.shape
            assert_within_bound(y, a, b, None)
        assert_within_bound(expected, a, b, None)
        np.testing.assert_allclose(sonnx.matmul(a, b), expected, rtol=1e-6, atol=0)
        report = sonnx.validate(case.model)
        assert report.conforms, report.findings


@pytest.mark.req("MATMUL-R1", "MATMUL-R4")
@pytest.mark.parametrize("name", sorted(REFUSED_CASES))
def test_onnx_node_cases_refused(name):
    case = _node_cases()[name]
    (a, b), _ = case.data_sets[0]
    with pytest.raises(sonnx.ProfileViolation) as e:
        sonnx.matmul(a, b)
    assert ids(e.value.violations) == REFUSED_CASES[name]
    found = [f.rule for f in sonnx.validate(case.model).findings if f.rule.startswith("MATMUL")]
    assert found == REFUSED_CASES[name]


# ---------------------------------------------------------------- onnxruntime and onnx.reference
# Which types run (onnxruntime CPU, onnx.reference), recorded by the tests below
ORT_TYPES = ["double", "float", "float16", "int32", "int64", "uint32", "uint64"]   # bfloat16: NOT_IMPLEMENTED
ONNX_REFERENCE_TYPES = ALL_TYPES


def _model(name, a_shape, b_shape, opset=13):
    from onnx import TensorProto, helper
    code = getattr(TensorProto, name.upper())
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"], name="matmul")], "matmul",
                              [helper.make_tensor_value_info("a", code, a_shape),
                               helper.make_tensor_value_info("b", code, b_shape)],
                              [helper.make_tensor_value_info("y", code, (a_shape[0], b_shape[1]))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _operands(name):
    rng = np.random.default_rng(sum(map(ord, name)) + 1)
    for m, k, n in [(5, 24, 4), (1, 3, 1), (16, 100, 9)]:
        a, b, _ = random_operands(rng, name, m, k, n, with_c=False)
        if name in INTS:   # small enough that no sum overflows: onnx.reference does not wrap
            a, b = ((x % 1024).astype(x.dtype) for x in (a, b))
        yield a, b


def _ulps(x: np.ndarray, y: np.ndarray) -> int:
    """The largest distance in units in the last place between two float arrays of one type
    (on the ordered integer line of the bit patterns; NaN excluded by the callers)."""
    uint = {2: np.int64, 4: np.int64, 8: object}[x.dtype.itemsize]
    bits = 8 * x.dtype.itemsize

    def line(v):
        u = v.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]).astype(object)
        return np.array([int(w) if w < 2 ** (bits - 1) else 2 ** (bits - 1) - int(w) for w in u.ravel()],
                        dtype=uint)
    return int(max(abs(int(p) - int(q)) for p, q in zip(line(x), line(y))))


ULPS_SEEN: dict[str, int] = {}


@pytest.mark.req("MATMUL-R5", "MATMUL-R3")
@pytest.mark.parametrize("name", ALL_TYPES)
def test_against_onnxruntime(name):
    """Integers: the same bits. Floats: onnxruntime (which may accumulate float16 in float16)
    and both our modes within Gemm's bound; the largest distance between our exact result and
    onnxruntime's is measured in ULPs of T and printed (pytest -s), not asserted."""
    ort = pytest.importorskip("onnxruntime")
    for a, b in _operands(name):
        try:
            sess = ort.InferenceSession(_model(name, a.shape, b.shape).SerializeToString(),
                                        providers=["CPUExecutionProvider"])
        except Exception as exc:   # noqa: BLE001 -- onnxruntime raises its own exception types
            assert name not in ORT_TYPES, f"onnxruntime no longer runs MatMul({name}): {exc}"
            assert "NOT_IMPLEMENTED" in str(exc)
            return
        assert name in ORT_TYPES, f"onnxruntime now runs MatMul({name}): add it to ORT_TYPES"
        (y,) = sess.run(None, {"a": a, "b": b})
        assert y.dtype == a.dtype and y.shape == (a.shape[0], b.shape[1])
        ours = sonnx.matmul(a, b)
        if name in INTS:
            assert_same_bits(y, ours)
            assert_same_bits(sonnx.matmul(a, b, mode="fast"), ours)
            continue
        assert_within_bound(y, a, b, None, acc=name if name == "float16" else None)
        assert_within_bound(ours, a, b, None)
        assert_within_bound(sonnx.matmul(a, b, mode="fast"), a, b, None)
        ULPS_SEEN[name] = max(ULPS_SEEN.get(name, 0), _ulps(ours, y))
    print(f"MatMul({name}): exact vs onnxruntime, max {ULPS_SEEN.get(name, 0)} ULP")


@pytest.mark.req("MATMUL-R5", "MATMUL-R3")
@pytest.mark.parametrize("name", ONNX_REFERENCE_TYPES)
def test_against_onnx_reference(name):
    from onnx.reference import ReferenceEvaluator
    for a, b in _operands(name):
        with np.errstate(all="ignore"):
            (y,) = ReferenceEvaluator(_model(name, a.shape, b.shape)).run(None, {"a": a, "b": b})
        assert y.dtype == a.dtype and y.shape == (a.shape[0], b.shape[1])
        if name in INTS:
            assert_same_bits(y, sonnx.matmul(a, b))
        else:
            assert_within_bound(y, a, b, None, acc=name if name in ("float16", "bfloat16") else None)


# ---------------------------------------------------------------- a MatMul model, end to end
@pytest.mark.req("MATMUL-R1", "MATMUL-R3", "MATMUL-R5", "PROF-R1")
def test_matmul_model_validates_and_runs_bit_exact():
    """Linear(bias=False) as the TorchScript exporter writes it (MatMul with a weight initializer)
    followed by an Add of an (M, N) bias: the model conforms, and running its nodes with the
    kernels gives the reference's bits and onnxruntime's values within the bound."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(2026)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    bias = rng.standard_normal((4, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="linear"),
         helper.make_node("Add", ["h", "bias"], ["y"], name="bias")], "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, (4, 8))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, (4, 3))],
        initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "bias")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    report = sonnx.validate(model)
    assert report.conforms, report.findings
    h = sonnx.matmul(x, w)
    assert_same_bits(h, reference(x, w))
    y = sonnx.add(h, bias)
    ort = pytest.importorskip("onnxruntime")
    (theirs,) = ort.InferenceSession(model.SerializeToString(),
                                     providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(y, theirs, rtol=1e-5, atol=1e-5)
    # the same layer with a vector bias (the usual export) is refused by Add's no-broadcast rule
    model.graph.initializer[1].CopyFrom(numpy_helper.from_array(bias[0], "bias"))
    assert "ADD-R4" in [f.rule for f in sonnx.validate(model).findings]


@pytest.mark.req("MATMUL-R1", "MATMUL-R2", "MATMUL-R3", "MATMUL-R4")
def test_validator_applies_matmul_rules():
    from onnx import TensorProto, helper

    def run(a_shape, b_shape, elem=TensorProto.FLOAT, opset=13, sparse_b=False):
        b_info = (helper.make_sparse_tensor_value_info("b", elem, b_shape) if sparse_b
                  else helper.make_tensor_value_info("b", elem, b_shape))
        graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")], "g",
                                  [helper.make_tensor_value_info("a", elem, a_shape), b_info],
                                  [helper.make_tensor_value_info("y", elem, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        return sorted({f.rule for f in sonnx.validate(model).findings if f.rule.startswith("MATMUL")})

    assert run((2, 3), (3, 4)) == []
    assert run((2, 3), (4, 4)) == ["MATMUL-R1"]
    assert run((3,), (3, 4)) == ["MATMUL-R1"]
    assert run((2, 2, 3), (3, 4)) == ["MATMUL-R1", "MATMUL-R4"]
    assert run((2, 3), (3, 4), TensorProto.INT32, opset=8) == ["MATMUL-R3"]
    assert run((2, 3), (3, 4), TensorProto.BFLOAT16, opset=12) == ["MATMUL-R3"]
    assert run((2, 3), (3, 4), TensorProto.INT8) == ["MATMUL-R3"]
    assert run((2, 3), (3, 4), sparse_b=True) == ["MATMUL-R2"]


# ---------------------------------------------------------------- its CrossHair cases (tests/crosshair)
@pytest.mark.req("MATMUL-R1", "MATMUL-R4", "MATMUL-R5")
def test_matmul_harnesses_cover_what_the_campaign_claims():
    """MatMul's cases run on Gemm's grid; the refusal tables hold every rank from 1 to 4 and
    broadcastable batches; integer and refusal cases must exhaust their paths; its mutants bend
    Gemm's shared code (the k order) and MatMul's own (the Gemm arguments, R4)."""
    from tests.crosshair import harnesses as H
    from tests.crosshair import matmul_cases as MM
    assert {h.name for h in H.HARNESSES if h.name.startswith("matmul-")} == {
        "matmul-int", "matmul-float", "matmul-refusals", "matmul-exact"}
    assert {len(s) for s in MM.MATMUL_A_SHAPES} == {1, 2, 3, 4} and (3,) in MM.MATMUL_B_SHAPES
    assert all(c.exhaustive for c in H.harness("matmul-int").cases + H.harness("matmul-refusals").cases)
    assert H.harness("matmul-exact").mode == "sampled"
    assert {"matmul_k_descending", "matmul_transposed", "matmul_broadcast_accepted"} <= {
        m.name for m in H.MUTANTS}


# ---------------------------------------------------------------- conform: rank-1 operands
def _rank1_model(case: str, m: int = 7, k: int = 5, opset: int = 13, elem=np.float32):
    """A one-MatMul model with a rank-1 operand: ``case`` "A" (x (K,) @ W (K, M)), "B-input"
    (W (M, K) @ x (K,), the `[128,5] x [5]` of issue 29), "B-constant" (x (M, K) @ v (K,))."""
    import onnx
    from onnx import helper, numpy_helper
    code = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(elem))
    rng = np.random.default_rng(k)
    w = rng.standard_normal((m, k)).astype(elem)
    if case == "A":
        names, init, x, out = ["x", "w"], [numpy_helper.from_array(w.T.copy(), "w")], (k,), [m]
    elif case == "B-input":
        names, init, x, out = ["w", "x"], [numpy_helper.from_array(w, "w")], (k,), [m]
    else:
        names, init, x, out = ["x", "v"], [numpy_helper.from_array(w[0].copy(), "v")], (m, k), [m]
    graph = helper.make_graph([helper.make_node("MatMul", names, ["y"])], "mm",
                              [helper.make_tensor_value_info("x", code, list(x))],
                              [helper.make_tensor_value_info("y", code, out)], init)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8), w, x


@pytest.mark.req("MATMUL-R1", "MATMUL-R5")
@pytest.mark.parametrize("opset", (5, 9, 13, 14, 25))
@pytest.mark.parametrize("case", ["A", "B-input", "B-constant"])
def test_conform_writes_out_the_rank_one_promotion(case, opset):
    """MATMUL-R1 refuses the rank-1 operand and says conform writes the promotion out; conform
    does (a constant stored as the matrix, another reshaped by a Reshape node, the product
    reshaped back), the result conforms, and sonnx runs it with the bits of the rank-2 product
    ONNX's promotion defines, in exact and fast mode."""
    from sonnx.conform.api import conform
    model, w, x_shape = _rank1_model(case, opset=opset)
    report = sonnx.validate(model)
    assert [f.rule for f in report.findings] == ["MATMUL-R1"]
    assert "sonnx conform" in report.findings[0].message
    fixed, record = conform(model, check=False)
    assert record["conforms"], record["findings"]
    assert [r["kind"] for r in record["rewrites"]] == ["node-rewrite"]
    assert "no bit changed" in record["rewrites"][0]["detail"]
    ops = [n.op_type for n in fixed.graph.node]
    assert ops == (["MatMul", "Reshape"] if case == "B-constant" else ["Reshape", "MatMul", "Reshape"])
    x = np.random.default_rng(1).standard_normal(x_shape).astype(np.float32)
    x.reshape(-1)[:2] = [-0.0, np.inf]
    if case == "A":
        expected = sonnx.matmul(x.reshape(1, -1), np.ascontiguousarray(w.T)).reshape(-1)
    elif case == "B-input":
        expected = sonnx.matmul(w, x.reshape(-1, 1)).reshape(-1)
    else:
        expected = sonnx.matmul(x, w[0].reshape(-1, 1)).reshape(-1)
    for mode in ("exact", "fast"):
        got = sonnx.run(fixed, {"x": x}, mode=mode)["y"]
        if mode == "exact":
            assert_same_bits(got, expected)
        assert got.shape == expected.shape


@pytest.mark.req("MATMUL-R1")
def test_conform_rank_one_bit_check_against_onnxruntime():
    """conform's own bit check (onnxruntime running the original and the rewritten model): an
    A of rank 1 passes; for a B of rank 1, onnxruntime's rank-1 path (a GEMV) and its matrix
    path (a GEMM with N = 1) give NaNs of different signs on the check's edge inputs, so the
    check reports the difference and conform exits 1 (measured, onnxruntime 1.32.0): the
    rewrite is the promotion ONNX defines, and the report says which output bit differs."""
    from sonnx.conform.api import conform
    _, record = conform(_rank1_model("A")[0])
    assert record["check"]["status"] == "passed" and record["exit_code"] == 0
    _, record = conform(_rank1_model("B-input")[0])
    assert record["conforms"]
    firsts = [r.get("first_difference") for o in record["check"]["outputs"] for r in o["by_seed"]
              if not r.get("identical", True)]
    assert record["check"]["status"] == "failed" and firsts
    assert all("nan" in d["original"] and "nan" in d["rewritten"] for d in firsts if d), firsts


@pytest.mark.req("MATMUL-R1")
def test_conform_leaves_what_it_cannot_write_out_with_a_reason():
    """Two vectors (a scalar result), a symbolic dimension and an opset before Reshape-5 stay
    refused, each with conform's reason; nothing is rewritten."""
    import onnx
    from onnx import helper, numpy_helper
    from sonnx.conform.api import conform
    for x_shape, out, opset in (([5], [], 13), (["n", 5], ["n"], 13), ([3, 5], [3], 4)):
        graph = helper.make_graph([helper.make_node("MatMul", ["x", "v"], ["y"])], "mm",
                                  [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x_shape)],
                                  [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, out)],
                                  [numpy_helper.from_array(np.ones(5, np.float32), "v")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
        fixed, record = conform(model, check=False)
        assert record["rewrites"] == [] and not record["conforms"]
        why = [f["why_not_rewritten"] for f in record["findings"] if f["rule"] == "MATMUL-R1"]
        assert why and all("conform writes out" in w for w in why), why
