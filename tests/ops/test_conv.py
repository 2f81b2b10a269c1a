"""Conv (ops/conv.py): the kernels bit for bit against a plain float loop in the stated order
(CONV-R6) and against each other, order/FMA/bias/zero-sign witnesses, special values with
padding, onnx.reference and onnxruntime within the stated bound, every refusal with its ID,
the validator's findings and sonnx.run / run --compare on a Conv -> Relu -> Flatten -> Gemm net."""
from __future__ import annotations

import itertools
import math
import pathlib
from fractions import Fraction

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import sonnx
from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import conv as cv
from sonnx.ops.signature import TensorSig
from sonnx.semantics.tensor import from_numpy, to_numpy

from .conftest import assert_same_bits

FLOATS = ("float16", "float", "double", "bfloat16")
ONNX_TYPE = {"float": 1, "float16": 10, "double": 11, "bfloat16": 16}


def attrs2d(group=1, k=(3, 3), pads=(1, 1, 1, 1), strides=(1, 1), dilations=(1, 1)) -> dict:
    return {"group": group, "kernel_shape": list(k), "pads": list(pads), "strides": list(strides),
            "dilations": list(dilations)}


def example(name: str, version: int) -> tuple[list, dict]:
    """A call Conv accepts at ``version`` on type ``name`` (tests/ops/test_every_operator.py):
    X (1, 2, 4, 4), W (3, 2, 3, 3), B (3,), every deciding attribute written (CONV-R4)."""
    def vals(shape, offset):
        n = math.prod(shape)
        return ((np.arange(n) + offset - n // 2) % 7 - 3).astype(np.float64).astype(
            dtypes.numpy_dtype(name)).reshape(shape)
    return [vals((1, 2, 4, 4), 0), vals((3, 2, 3, 3), 1), vals((3,), 2)], attrs2d()


def keywords(attrs: dict) -> dict:
    return {cv.KERNEL_ATTRIBUTES[k]: v for k, v in attrs.items() if k in cv.KERNEL_ATTRIBUTES}


def ids(err: ProfileViolation) -> set[str]:
    return {v.requirement for v in err.violations}


def values(name: str, shape, seed: int = 0, specials: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 2
    if specials:
        pick = rng.integers(0, 10, shape)
        x = np.where(pick == 0, 0.0, np.where(pick == 1, -0.0, x))
    return x.astype(dtypes.numpy_dtype(name))


# ---------------------------------------------------------------- the plain loop (the oracle)
def plain_loop(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, *, group, kernel_shape, pads,
               strides, dilations) -> np.ndarray:
    """CONV-R6 written out with numpy scalars of the accumulation type (each scalar operation
    is one IEEE operation rounded in that type): s = +0.0, then s = s + W*Xpad over the group's
    channels and the kernel offsets in row-major order, then s + B[m], then one rounding to T.
    Written independently of ops/conv.py (its own index arithmetic and padding test)."""
    acc = np.float64 if x.dtype == np.float64 else np.float32
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    r = x.ndim - 2
    spatial = x.shape[2:]
    out = [(spatial[i] + pads[i] + pads[r + i] - dilations[i] * (kernel_shape[i] - 1) - 1) // strides[i] + 1
           for i in range(r)]
    y = np.empty((n, m, *out), acc)
    mg = m // group
    with np.errstate(all="ignore"):
        for ni, mi in itertools.product(range(n), range(m)):
            g = mi // mg
            for o in itertools.product(*map(range, out)):
                s = acc(0.0)
                for ci in range(cg):
                    for k in itertools.product(*map(range, kernel_shape)):
                        pos = [o[i] * strides[i] + k[i] * dilations[i] - pads[i] for i in range(r)]
                        inside = all(0 <= pos[i] < spatial[i] for i in range(r))
                        xv = acc(x[(ni, g * cg + ci, *pos)]) if inside else acc(0.0)
                        s = acc(s + acc(acc(w[(mi, ci, *k)]) * xv))
                if b is not None:
                    s = acc(s + acc(b[mi]))
                y[(ni, mi, *o)] = s
    return y.astype(x.dtype)


CASES = [  # (X shape, W shape, with B, attributes)
    ((1, 1, 5), (2, 1, 3), True, dict(group=1, kernel_shape=[3], pads=[1, 1], strides=[1], dilations=[1])),
    ((2, 3, 7), (4, 3, 2), False, dict(group=1, kernel_shape=[2], pads=[0, 2], strides=[2], dilations=[3])),
    ((1, 2, 4, 4), (3, 2, 3, 3), True, attrs2d()),
    ((2, 4, 6, 5), (6, 2, 3, 2), True, attrs2d(group=2, k=(3, 2), pads=(1, 0, 2, 1), strides=(2, 1),
                                               dilations=(1, 2))),
    ((1, 4, 5, 5), (4, 1, 3, 3), True, attrs2d(group=4)),                       # depthwise
    ((1, 4, 5, 5), (8, 1, 3, 3), False, attrs2d(group=4, strides=(2, 2))),      # depthwise, 2 per channel
    ((1, 3, 6, 6), (2, 3, 1, 1), True, attrs2d(k=(1, 1), pads=(0, 0, 0, 0))),   # 1x1
    ((1, 2, 3, 4, 4), (2, 2, 2, 2, 2), True, dict(group=1, kernel_shape=[2, 2, 2], pads=[1, 0, 1, 0, 1, 1],
                                                   strides=[1, 2, 1], dilations=[1, 1, 2])),
]


def _call(case, name, seed=0, specials=False):
    xs, ws, with_b, attrs = CASES[case]
    x = values(name, xs, seed, specials)
    w = values(name, ws, seed + 1, specials)
    b = values(name, (ws[0],), seed + 2, specials) if with_b else None
    return x, w, b, keywords(attrs)


# ---------------------------------------------------------------- exact mode
@pytest.mark.req("CONV-R6")
class TestExact:
    @pytest.mark.parametrize("name", FLOATS)
    @pytest.mark.parametrize("case", range(len(CASES)))
    def test_kernel_reference_and_plain_loop_agree_bit_for_bit(self, case, name):
        x, w, b, kw = _call(case, name, seed=case, specials=True)
        want = plain_loop(x, w, b, **kw)
        assert_same_bits(cv.conv(x, w, b, **kw), want)
        ref = cv.conv_reference(from_numpy(x), from_numpy(w), None if b is None else from_numpy(b), **kw)
        assert_same_bits(to_numpy(ref), want)
        assert_same_bits(cv.bind(x, w, b, **kw)(x, w, b), want)

    @pytest.mark.parametrize("name", ("float", "double"))
    def test_special_values_everywhere(self, name):
        """Inf, NaN, huge and subnormal values in X, W and B (overflow to inf, inf - inf)."""
        rng = np.random.default_rng(7)
        info = ml_dtypes.finfo(dtypes.numpy_dtype(name))
        pool = np.array([0.0, -0.0, 1.0, -3.0, np.inf, -np.inf, np.nan, float(info.max), float(info.smallest_subnormal),
                         float(info.smallest_normal), 0.5], dtypes.numpy_dtype(name))
        for case in (2, 3, 4):
            xs, ws, _, attrs = CASES[case]
            x, w, b = (rng.choice(pool, s) for s in (xs, ws, (ws[0],)))
            kw = keywords(attrs)
            want = plain_loop(x, w, b, **kw)
            assert_same_bits(cv.conv(x, w, b, **kw), want)
            assert_same_bits(to_numpy(cv.conv_reference(from_numpy(x), from_numpy(w), from_numpy(b), **kw)), want)

    def test_padded_positions_are_multiplied_as_plus_zero(self):
        """An infinite weight meets a padded +0.0 at the border: inf * 0 is NaN there; inside,
        inf * 1 is inf. A -1 weight on padding gives -0, which the +0.0 start absorbs."""
        x = np.ones((1, 1, 3), np.float32)
        w = np.array([[[np.inf, 1.0, 1.0]]], np.float32)
        y = cv.conv(x, w, None, group=1, kernel_shape=[3], pads=[1, 1], strides=[1], dilations=[1])
        assert math.isnan(y[0, 0, 0]) and y[0, 0, 1] == np.inf and y[0, 0, 2] == np.inf
        ref = cv.conv_reference(from_numpy(x), from_numpy(w), None, group=1, kernel_shape=[3], pads=[1, 1],
                                strides=[1], dilations=[1])
        assert_same_bits(to_numpy(ref), y)
        assert_same_bits(y, plain_loop(x, w, None, group=1, kernel_shape=[3], pads=[1, 1], strides=[1], dilations=[1]))
        w = np.array([[[np.nan, 0.0, 0.0]]], np.float32)
        y = cv.conv(np.zeros((1, 1, 3), np.float32), w, None, group=1, kernel_shape=[3], pads=[1, 1],
                    strides=[1], dilations=[1])
        assert np.isnan(y).all()            # a NaN weight reaches every output, padded or not

    @pytest.mark.parametrize("name", FLOATS)
    def test_signed_zeros(self, name):
        """Every product -0 (X = -0, W > 0): the sum starts at +0.0, so +0 + -0 = +0 (a fold
        starting from the first product would give -0); a -0 bias keeps +0."""
        dt = dtypes.numpy_dtype(name)
        x = np.full((1, 1, 2, 2), -0.0, dt)
        w = np.ones((1, 1, 2, 2), dt)
        for b in (None, np.array([-0.0], dt)):
            y = cv.conv(x, w, b, **keywords(attrs2d(k=(2, 2), pads=(0, 0, 0, 0))))
            assert y.shape == (1, 1, 1, 1) and y[0, 0, 0, 0] == 0 and not np.signbit(y[0, 0, 0, 0])

    def test_order_witness_channels_outer_kernel_inner(self):
        """Terms big, 1, -big, 0 in (c, k) row-major order give 0 in float32 (1 is lost in
        big + 1); the kernel-outer order (big, -big, 1, 0) would give 1."""
        big = np.float32(2.0 ** 25)
        x = np.ones((1, 2, 2), np.float32)
        w = np.array([[[big, 1.0], [-big, 0.0]]], np.float32)
        kw = dict(group=1, kernel_shape=[2], pads=[0, 0], strides=[1], dilations=[1])
        assert cv.conv(x, w, None, **kw)[0, 0, 0] == 0.0
        # within one channel, k ascending: 1, big, -big gives 0; descending would give 1
        w3 = np.array([[[1.0, big, -big]]], np.float32)
        assert cv.conv(np.ones((1, 1, 3), np.float32), w3, None, **(kw | {"kernel_shape": [3]}))[0, 0, 0] == 0.0

    def test_bias_added_after_the_fold(self):
        """Terms -big, 1 then B = big: ((0 - big) + 1) + big = 0 in float32; bias first would
        give (big - big) + 1 = 1."""
        big = np.float32(2.0 ** 25)
        y = cv.conv(np.ones((1, 1, 2), np.float32), np.array([[[-big, 1.0]]], np.float32), np.array([big], np.float32),
                    group=1, kernel_shape=[2], pads=[0, 0], strides=[1], dilations=[1])
        assert y[0, 0, 0] == 0.0

    @pytest.mark.parametrize("name", ("float", "double"))
    def test_no_fused_multiply_add(self, name):
        """Terms a*a then -a*a: separately rounded they cancel to 0; an FMA would leave the
        rounding error of a*a."""
        dt = dtypes.numpy_dtype(name)
        a = dt.type(1.0) + dt.type(ml_dtypes.finfo(dt).eps)
        y = cv.conv(np.array([[[a, a]]], dt), np.array([[[a, -a]]], dt), None, group=1, kernel_shape=[2],
                    pads=[0, 0], strides=[1], dilations=[1])
        assert Fraction(float(a)) ** 2 != Fraction(float(a * a))     # a*a is inexact: an FMA differs
        assert y[0, 0, 0] == 0 and not np.signbit(y[0, 0, 0])

    def test_half_types_accumulate_in_float32_and_round_once(self):
        """float16: 2048 + 1 + 1 is 2050 in float32, then rounded once to float16 (2050 is
        representable); a float16 accumulation would lose each 1 (2048 + 1 ties to 2048)."""
        x = np.ones((1, 1, 3), np.float16)
        w = np.array([[[2048.0, 1.0, 1.0]]], np.float16)
        y = cv.conv(x, w, None, group=1, kernel_shape=[3], pads=[0, 0], strides=[1], dilations=[1])
        assert y[0, 0, 0] == np.float16(2050.0)

    def test_strided_and_byte_swapped_inputs(self):
        x, w, b, kw = _call(3, "float", seed=5)
        want = cv.conv(x, w, b, **kw)
        xs = np.asfortranarray(x).astype(x.dtype.newbyteorder(">"))
        big = np.zeros((w.shape[0], w.shape[1] * 2) + w.shape[2:], np.float32)
        big[:, ::2] = w
        assert_same_bits(cv.conv(xs, big[:, ::2], b, **kw), want)

    def test_reference_refuses_like_the_kernel(self):
        [x, w, b], attrs = example("float", 22)
        kw = keywords(attrs) | {"group": 2}
        with pytest.raises(ProfileViolation) as e:
            cv.conv_reference(from_numpy(x), from_numpy(w), from_numpy(b), **kw)
        assert ids(e.value) == {"CONV-R1"}


# ---------------------------------------------------------------- fast mode
@pytest.mark.req("CONV-R6")
class TestFast:
    @pytest.mark.parametrize("name", FLOATS)
    @pytest.mark.parametrize("case", range(len(CASES)))
    def test_fast_within_the_bound(self, case, name):
        x, w, b, kw = _call(case, name, seed=10 + case)
        assert cv.outside_bound(cv.conv(x, w, b, **kw, mode="fast"), x, w, b, **kw) == []

    def test_the_bound_check_catches_a_wrong_element(self):
        x, w, b, kw = _call(3, "float", seed=1)
        y = cv.conv(x, w, b, **kw, mode="fast")
        y[1, 4, 2, 3] = np.nextafter(np.nextafter(y[1, 4, 2, 3], np.float32(np.inf)), np.float32(np.inf)) * 1.001
        bad = cv.outside_bound(y, x, w, b, **kw)
        assert [(n, m, o) for n, m, o, *_ in bad] == [(1, 4, 2 * 4 + 3)]
        good = cv.conv(x, w, b, **kw, mode="fast")
        # several results judged in one call, one reason each, in the order given
        reasons = cv.fast_bound_comparison([y, good, y], [x, w, b], kw)
        assert "CONV-R6" in reasons[0] and reasons[1] == "" and reasons[2] == reasons[0]

    def test_non_finite_operands_are_not_judged(self):
        """The bound is stated for finite operands: an infinite weight is a ValueError naming
        CONV-R6 (run --compare reports the node "not compared" with it), never a pass."""
        x = np.ones((1, 1, 3), np.float32)
        w = np.array([[[np.inf, 1.0, 1.0]]], np.float32)
        kw = dict(group=1, kernel_shape=[3], pads=[1, 1], strides=[1], dilations=[1])
        with pytest.raises(ValueError, match="CONV-R6"):
            cv.fast_bound_comparison([cv.conv(x, w, None, **kw)], [x, w], kw)

    def test_symbolic_batch_still_checks_the_rest(self):
        """A symbolic N (PROF-R2's to refuse) does not hide a wrong W or bias."""
        found = cv.constraints(TensorSig(("N", 4, 5, 5), "float"), TensorSig((4, 4, 3, 3), "float"),
                               TensorSig((2,), "float"), attrs=attrs2d(group=2))
        assert sorted(v.requirement for v in found) == ["CONV-R1", "CONV-R5"]

    def test_the_bound_check_sees_the_group_of_each_channel(self):
        """A result computed with the wrong group's channels is outside (channel 5 of group 1
        given group 0's weights)."""
        x, w, b, kw = _call(3, "float", seed=2)
        y = cv.conv(x, w, b, **kw)
        wrong = w.copy()
        wrong[5] = w[0]
        y2 = cv.conv(x, wrong, b, **kw)
        y[:, 5] = y2[:, 5]
        assert {m for _, m, *_ in cv.outside_bound(y, x, w, b, **kw)} == {5}


# ---------------------------------------------------------------- onnx.reference and onnxruntime
def model(elem: str, xs, ws, attrs: dict, with_b: bool, opset: int = 22, ys=None) -> onnx.ModelProto:
    inputs = [helper.make_tensor_value_info("x", ONNX_TYPE[elem], xs), helper.make_tensor_value_info("w", ONNX_TYPE[elem], ws)]
    if with_b:
        inputs.append(helper.make_tensor_value_info("b", ONNX_TYPE[elem], (ws[0],)))
    node = helper.make_node("Conv", ["x", "w"] + (["b"] if with_b else []), ["y"], **attrs)
    g = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", ONNX_TYPE[elem], ys)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset < 21 else 10
    return m


def _feeds(x, w, b):
    return {"x": x, "w": w} | ({"b": b} if b is not None else {})


def _ort(m, feeds):
    import onnxruntime as ort
    return ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def _onnx_ref(m, feeds):
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(m).run(None, feeds)[0]


@pytest.mark.req("CONV-R6")
class TestRuntimes:
    @pytest.mark.parametrize("name", ("float", "double"))
    @pytest.mark.parametrize("case", range(len(CASES)))
    def test_onnx_reference_within_the_bound(self, case, name):
        """onnx.reference sums with numpy's matmul (BLAS, another order): within CONV-R6's
        fast-mode bound of the exact result, not bit-equal in general."""
        x, w, b, kw = _call(case, name, seed=20 + case)
        xs, ws, with_b, attrs = CASES[case]
        theirs = _onnx_ref(model(name, xs, ws, attrs, with_b), _feeds(x, w, b))
        assert theirs.dtype == x.dtype and theirs.shape == cv.result_shape([xs, ws], kw)
        assert cv.outside_bound(theirs, x, w, b, **kw) == []

    @pytest.mark.parametrize("case", range(len(CASES)))
    def test_onnx_reference_float16_rounds_before_the_bias(self, case):
        """onnx.reference's float16 Conv rounds the fold to float16, then adds B in float16: two
        roundings to T where the profile has one (its bits, asserted as they are; outside the
        bound on some elements when B is present)."""
        x, w, b, kw = _call(case, "float16", seed=20 + case)
        xs, ws, with_b, attrs = CASES[case]
        theirs = _onnx_ref(model("float16", xs, ws, attrs, with_b), _feeds(x, w, b))
        folded = cv.conv(x, w, None, **kw)
        assert_same_bits(theirs, folded if b is None else folded + b.reshape((1, -1) + (1,) * (x.ndim - 2)))

    @pytest.mark.parametrize("name", ("float", "float16"))
    @pytest.mark.parametrize("case", range(len(CASES)))
    def test_onnxruntime_within_the_bound(self, case, name):
        """onnxruntime's CPU Conv (MLAS, its own order and blocking) is within the bound."""
        x, w, b, kw = _call(case, name, seed=20 + case)
        xs, ws, with_b, attrs = CASES[case]
        theirs = _ort(model(name, xs, ws, attrs, with_b), _feeds(x, w, b))
        assert theirs.dtype == x.dtype and theirs.shape == cv.result_shape([xs, ws], kw)
        assert cv.outside_bound(theirs, x, w, b, **kw) == []

    def test_onnxruntime_has_no_double_conv(self):
        """onnxruntime's CPU provider implements Conv for float and float16 only: a double Conv
        model does not load there (run --compare cannot judge it; sonnx runs it)."""
        [x, w, b], attrs = example("double", 22)
        m = model("double", x.shape, w.shape, attrs, True, ys=(1, 3, 4, 4))
        with pytest.raises(Exception, match="NOT_IMPLEMENTED"):
            _ort(m, _feeds(x, w, b))
        assert sonnx.validate(m).conforms

    def test_infinite_weight_on_padding_in_each_runtime(self):
        """The padded +0.0 times an infinite weight is NaN in the profile, in onnx.reference and
        in onnxruntime alike (both multiply the padding too: im2col)."""
        x = np.ones((1, 1, 3, 3), np.float32)
        w = np.ones((1, 1, 3, 3), np.float32)
        w[0, 0, 0, 0] = np.inf
        attrs = attrs2d()
        y = cv.conv(x, w, None, **keywords(attrs))
        m = model("float", x.shape, w.shape, attrs, False, ys=y.shape)
        for theirs in (_onnx_ref(m, {"x": x, "w": w}), _ort(m, {"x": x, "w": w})):
            assert_same_bits(theirs, y)

    def test_output_shape_matches_onnx(self):
        for case, (xs, ws, with_b, attrs) in enumerate(CASES):
            x, w, b, kw = _call(case, "float")
            y = cv.conv(x, w, b, **kw)
            assert y.shape == _ort(model("float", xs, ws, attrs, with_b), _feeds(x, w, b)).shape
            assert y.shape == cv.result_shape([xs, ws], kw)


@pytest.mark.req("CONV-R1")
def test_output_shape_matches_onnx():
    """The output shape formula (CONV-R1) against onnx's shape inference, strides and
    dilations that do not divide the padded extent included."""
    for d, k, s, dl, pb, pe in itertools.product((5, 7, 8), (1, 2, 3), (1, 2, 3), (1, 2), (0, 1), (0, 2)):
        if d + pb + pe < dl * (k - 1) + 1:
            continue
        attrs = dict(group=1, kernel_shape=[k], pads=[pb, pe], strides=[s], dilations=[dl])
        m = onnx.shape_inference.infer_shapes(model("float", (1, 1, d), (1, 1, k), attrs, False))
        dims = [x.dim_value for x in m.graph.output[0].type.tensor_type.shape.dim]
        assert tuple(dims) == (1, 1) + cv.output_spatial((d,), (k,), (pb, pe), (s,), (dl,))


# ---------------------------------------------------------------- refusals
@pytest.mark.req("CONV-R2", "CONV-R3")
class TestTypes:
    @pytest.mark.parametrize("opset", (1, 11, 22))
    @pytest.mark.parametrize("name", sorted(dtypes.NUMERIC_TYPES))
    def test_kernel_accepts_exactly_the_version_set(self, opset, name):
        [x, w, b], attrs = example(name if dtypes.is_float(name) else "float", opset)
        x, w, b = (a.astype(dtypes.numpy_dtype(name)) for a in (x, w, b))
        if name in cv.TYPE_SETS[opset]:
            assert cv.conv(x, w, b, **keywords(attrs), opset=opset).dtype == x.dtype
        else:
            with pytest.raises(ProfileViolation) as e:
                cv.conv(x, w, b, **keywords(attrs), opset=opset)
            assert "CONV-R3" in ids(e.value)

    def test_the_way_out_is_named(self):
        [x, w, b], attrs = example("bfloat16", 22)
        with pytest.raises(ProfileViolation, match="opset 22"):
            cv.conv(x, w, b, **keywords(attrs), opset=11)
        [x, w, b], attrs = example("float", 22)
        with pytest.raises(ProfileViolation, match="ConvInteger"):
            cv.conv(x.astype(np.int8), w.astype(np.int8), None, **keywords(attrs))

    def test_mixed_types_refused(self):
        [x, w, b], attrs = example("float", 22)
        with pytest.raises(ProfileViolation) as e:
            cv.conv(x, w.astype(np.float64), b, **keywords(attrs))
        assert "CONV-R3" in ids(e.value)
        with pytest.raises(ProfileViolation) as e:
            cv.conv(x, w, b.astype(np.float16), **keywords(attrs))
        assert "CONV-R3" in ids(e.value)

    def test_sparse_refused(self):
        [x, w, b], attrs = example("float", 22)
        found = cv.constraints(TensorSig(None, None, sparse=True), TensorSig(w.shape, "float"), None, attrs=attrs)
        assert [v.requirement for v in found] == ["CONV-R2"]


@pytest.mark.req("CONV-R4")
class TestAttributes:
    @pytest.mark.parametrize("omit", ["group", "kernel_shape", "pads", "strides", "dilations"])
    def test_each_omitted_attribute_refused(self, omit):
        [x, w, b], attrs = example("float", 22)
        del attrs[omit]
        found = cv.constraints(TensorSig(x.shape, "float"), TensorSig(w.shape, "float"), TensorSig(b.shape, "float"),
                               attrs=attrs)
        assert [v.requirement for v in found] == ["CONV-R4"] and omit in found[0].message
        kw = keywords(attrs) | {cv.KERNEL_ATTRIBUTES[omit]: None}
        with pytest.raises(ProfileViolation) as e:
            cv.conv(x, w, b, **kw)
        assert ids(e.value) == {"CONV-R4"}

    @pytest.mark.parametrize("mode", ["SAME_UPPER", "SAME_LOWER", "VALID", b"VALID"])
    def test_auto_pad_refused_with_advice(self, mode):
        [x, w, b], attrs = example("float", 22)
        found = cv.constraints(TensorSig(x.shape, "float"), TensorSig(w.shape, "float"), None,
                               attrs=attrs | {"auto_pad": mode})
        assert [v.requirement for v in found] == ["CONV-R4"] and "explicit pads" in found[0].message

    def test_auto_pad_notset_accepted(self):
        [x, w, b], attrs = example("float", 22)
        assert cv.constraints(TensorSig(x.shape, "float"), TensorSig(w.shape, "float"), None,
                              attrs=attrs | {"auto_pad": "NOTSET"}) == []

    @pytest.mark.parametrize("bad", [dict(group=0), dict(group=1.0), dict(strides=[0, 1]), dict(dilations=[1, -1]),
                                     dict(pads=[-1, 0, 0, 0]), dict(pads=[1, 1]), dict(strides=[1]),
                                     dict(kernel_shape=[3, 3, 3]), dict(kernel_shape=[3, 2]),
                                     dict(dilations=[1.5, 1])])
    def test_malformed_refused(self, bad):
        [x, w, b], attrs = example("float", 22)
        found = cv.constraints(TensorSig(x.shape, "float"), TensorSig(w.shape, "float"), None, attrs=attrs | bad)
        assert {v.requirement for v in found} == {"CONV-R4"}, found

    @pytest.mark.parametrize("bad", [dict(group="1"), dict(strides=5), dict(pads="0000")])
    def test_wrong_python_types(self, bad):
        [x, w, b], attrs = example("float", 22)
        with pytest.raises(TypeError, match="conv"):
            cv.conv(x, w, b, **(keywords(attrs) | bad))

    @pytest.mark.parametrize("name", ["kernel_shape", "pads", "strides", "dilations"])
    def test_a_1d_integer_array_is_the_same_attribute_as_its_list(self, name):
        [x, w, b], attrs = example("float", 22)
        listed = cv.conv(x, w, b, **keywords(attrs))
        as_array = cv.conv(x, w, b, **(keywords(attrs) | {cv.KERNEL_ATTRIBUTES[name]: np.array(attrs[name], np.int64)}))
        assert as_array.tobytes() == listed.tobytes() and as_array.dtype == listed.dtype

    @pytest.mark.parametrize("value", [np.array([1.0, 1.0]), np.array([True, True])])
    def test_an_array_of_floats_or_booleans_is_refused_as_its_list_is(self, value):
        [x, w, b], attrs = example("float", 22)
        for given in (value, value.tolist()):
            with pytest.raises(ProfileViolation) as e:
                cv.conv(x, w, b, **(keywords(attrs) | {"strides": given}))
            assert ids(e.value) == {"CONV-R4"}

    def test_a_2d_array_is_the_wrong_python_type(self):
        [x, w, b], attrs = example("float", 22)
        with pytest.raises(TypeError, match="strides must be a tuple of integers"):
            cv.conv(x, w, b, **(keywords(attrs) | {"strides": np.array([[1, 1]])}))

    def test_unknown_mode(self):
        [x, w, b], attrs = example("float", 22)
        with pytest.raises(ValueError):
            cv.conv(x, w, b, **keywords(attrs), mode="approximate")


@pytest.mark.req("CONV-R1", "CONV-R5")
class TestShapes:
    def _found(self, xs, ws, bs, **over):
        attrs = attrs2d() | over
        return [v.requirement for v in cv.constraints(TensorSig(xs, "float"), TensorSig(ws, "float"),
                                                      None if bs is None else TensorSig(bs, "float"), attrs=attrs)]

    def test_group_must_divide_channels(self):
        assert self._found((1, 3, 4, 4), (3, 1, 3, 3), None, group=2) == ["CONV-R1"]
        assert self._found((1, 4, 4, 4), (3, 2, 3, 3), None, group=2) == ["CONV-R1"]

    def test_w_channels_must_be_c_over_group(self):
        assert self._found((1, 4, 4, 4), (4, 4, 3, 3), None, group=2) == ["CONV-R1"]
        assert self._found((1, 4, 4, 4), (4, 2, 3, 3), None, group=2) == []

    def test_spatial_ranks_one_to_three_only(self):
        assert self._found((1, 1, 3, 3, 3, 3), (1, 1, 1, 1, 1, 1), None, kernel_shape=[1] * 4, pads=[0] * 8,
                           strides=[1] * 4, dilations=[1] * 4) == ["CONV-R1"]          # 4-D spatial
        assert self._found((1, 4), (1, 4), None, kernel_shape=[], pads=[], strides=[], dilations=[]) == ["CONV-R1"]

    def test_w_rank_must_be_x_rank(self):
        assert self._found((1, 2, 4, 4), (3, 2, 3), None) == ["CONV-R1"]

    def test_kernel_larger_than_padded_input(self):
        assert self._found((1, 2, 2, 2), (3, 2, 3, 3), None, pads=[0, 0, 0, 0]) == ["CONV-R1"]
        assert self._found((1, 2, 4, 4), (3, 2, 3, 3), None, pads=[0, 0, 0, 0], dilations=[2, 1]) == ["CONV-R1"]

    @pytest.mark.parametrize("bs", [(1,), (3, 1), (1, 3), (4,), ()])
    def test_bias_must_be_m(self, bs):
        assert self._found((1, 2, 4, 4), (3, 2, 3, 3), bs) == ["CONV-R5"]

    def test_bias_of_m_accepted(self):
        assert self._found((1, 2, 4, 4), (3, 2, 3, 3), (3,)) == []

    def test_kernel_refuses_a_wrong_bias(self):
        [x, w, b], attrs = example("float", 22)
        with pytest.raises(ProfileViolation) as e:
            cv.conv(x, w, b[:1], **keywords(attrs))
        assert ids(e.value) == {"CONV-R5"}


# ---------------------------------------------------------------- validator and run
def _net(rng, n=2):
    """Conv (pads 1) -> Relu -> Flatten -> Gemm, the weights initializers."""
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    cb = rng.standard_normal(4).astype(np.float32)
    g = rng.standard_normal((4 * 5 * 5, 3)).astype(np.float32)
    gb = rng.standard_normal((n, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "cb"], ["c"], **attrs2d(strides=(1, 1))),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Flatten", ["r"], ["f"], axis=1),
             helper.make_node("Gemm", ["f", "g", "gb"], ["y"], alpha=1.0, beta=1.0, transA=0, transB=0)]
    graph = helper.make_graph(nodes, "lenet-tail", [helper.make_tensor_value_info("x", 1, (n, 2, 5, 5))],
                              [helper.make_tensor_value_info("y", 1, (n, 3))],
                              [numpy_helper.from_array(a, k) for a, k in ((w, "w"), (cb, "cb"), (g, "g"), (gb, "gb"))])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, (w, cb, g, gb)


@pytest.mark.req("CONV-R1", "CONV-R4", "CONV-R5", "CONV-R6")
class TestValidate:
    @pytest.mark.parametrize("opset", (1, 11, 22))
    def test_one_node_model_conforms_and_runs(self, opset):
        [x, w, b], attrs = example("float", opset)
        y = cv.conv(x, w, b, **keywords(attrs), opset=opset)
        m = model("float", x.shape, w.shape, attrs, True, opset=opset, ys=y.shape)
        report = sonnx.validate(m)
        assert report.conforms, [(f.rule, f.message) for f in report.findings]
        assert_same_bits(sonnx.run(m, _feeds(x, w, b))["y"], y)

    @pytest.mark.parametrize("change,rule", [({"auto_pad": "SAME_UPPER"}, "CONV-R4"), ({"group": None}, "CONV-R4"),
                                             ({"pads": None}, "CONV-R4"), ({"group": 2}, "CONV-R1")])
    def test_findings(self, change, rule):
        attrs = {k: v for k, v in (attrs2d() | change).items() if v is not None}
        m = model("float", (1, 2, 4, 4), (3, 2, 3, 3), attrs, True, ys=(1, 3, 4, 4))
        assert rule in {f.rule for f in sonnx.validate(m).findings}

    def test_wrong_bias_is_a_finding(self):
        m = model("float", (1, 2, 4, 4), (3, 2, 3, 3), attrs2d(), False, ys=(1, 3, 4, 4))
        m.graph.input.append(helper.make_tensor_value_info("b", 1, (1, 3)))
        m.graph.node[0].input.append("b")
        assert "CONV-R5" in {f.rule for f in sonnx.validate(m).findings}

    def test_conv_relu_flatten_gemm_runs_and_compares(self):
        """The net validates; sonnx.run gives the bits of the kernels chained; run --compare
        judges onnxruntime's Conv within CONV-R6's bound."""
        rng = np.random.default_rng(4)
        m, (w, cb, g, gb) = _net(rng)
        report = sonnx.validate(m)
        assert report.conforms, [(f.rule, f.message) for f in report.findings]
        x = rng.standard_normal((2, 2, 5, 5)).astype(np.float32)
        got = sonnx.run(m, {"x": x})["y"]
        c = cv.conv(x, w, cb, **keywords(attrs2d()))
        want = sonnx.gemm(np.maximum(c, np.float32(0)).reshape(2, -1), g, gb, alpha=1.0, beta=1.0, trans_a=0, trans_b=0)
        assert_same_bits(got, want)
        from sonnx.run.comparison import compare
        verdicts = {n.op_type: (n.status, n.detail) for n in compare(m, {"x": x}).nodes}
        assert verdicts["Conv"][0] == "within", verdicts

    def test_sonnx_run_command_with_compare(self, tmp_path):
        """`sonnx run MODEL --input x=X.npy --compare onnxruntime -o DIR`: exit 0 (every node
        within its operator's bound), the output file holds sonnx.run's bits; the same model
        with a Conv whose bias has shape (1, M) exits 2 naming CONV-R5."""
        import subprocess
        import sys
        rng = np.random.default_rng(6)
        m, _ = _net(rng)
        x = rng.standard_normal((2, 2, 5, 5)).astype(np.float32)
        onnx.save(m, str(tmp_path / "net.onnx"))
        np.save(tmp_path / "x.npy", x)
        env = {"PYTHONPATH": str(pathlib.Path(sonnx.__file__).resolve().parents[1]), "PATH": "/usr/bin:/bin"}
        p = subprocess.run([sys.executable, "-m", "sonnx", "run", str(tmp_path / "net.onnx"), "--input",
                            f"x={tmp_path / 'x.npy'}", "--compare", "onnxruntime", "-o", str(tmp_path / "out")],
                           capture_output=True, text=True, env=env, timeout=600)
        assert p.returncode == 0, p.stdout + p.stderr
        assert_same_bits(np.load(tmp_path / "out" / "y.npy"), sonnx.run(m, {"x": x})["y"])
        bad = onnx.ModelProto()
        bad.CopyFrom(m)
        cb = next(i for i in bad.graph.initializer if i.name == "cb")
        cb.dims[:] = [1, 4]
        onnx.save(bad, str(tmp_path / "bad.onnx"))
        p = subprocess.run([sys.executable, "-m", "sonnx", "run", str(tmp_path / "bad.onnx"), "--input",
                            f"x={tmp_path / 'x.npy'}"], capture_output=True, text=True, env=env, timeout=600)
        assert p.returncode == 2 and "CONV-R5" in p.stdout + p.stderr, p.stdout + p.stderr

    def test_comparison_reports_a_conv_outside_the_bound(self):
        """The record's comparison (what run --compare applies to onnxruntime's Conv) reports a
        planted fault: the exact result scaled by 1.01."""
        rng = np.random.default_rng(5)
        x = rng.standard_normal((2, 2, 5, 5)).astype(np.float32)
        _, (w, cb, _, _) = _net(rng)
        kw = keywords(attrs2d())
        y = cv.conv(x, w, cb, **kw)
        within, outside = cv.OPERATOR.comparison([y, y * np.float32(1.01)], [x, w, cb], kw)
        assert within == "" and "CONV-R6" in outside


# ---------------------------------------------------------------- OpenVINO IR
def _ir(tmp_path, name: str, group: int, ws, attrs: dict, bias: bool = False) -> str:
    """The one-Conv ONNX model converted by OpenVINO's own converter and saved as IR (weights
    kept in float32: no Convert layer)."""
    import openvino as ov
    w = np.random.default_rng(0).standard_normal(ws).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")] + ([numpy_helper.from_array(np.ones(ws[0], np.float32), "b")] if bias else [])
    node = helper.make_node("Conv", ["x", "w"] + (["b"] if bias else []), ["y"], group=group, **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, (1, 4, 6, 6))],
                          [helper.make_tensor_value_info("y", 1, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(tmp_path / f"{name}.onnx"))
    xml = str(tmp_path / f"{name}.xml")
    ov.save_model(ov.convert_model(str(tmp_path / f"{name}.onnx")), xml, compress_to_fp16=False)
    return xml


@pytest.mark.req("CONV-R1", "CONV-R4")
class TestOpenVINO:
    @pytest.mark.parametrize("name,group,ws,attrs", [
        ("conv", 1, (3, 4, 3, 3), attrs2d(pads=(1, 0, 2, 1), strides=(2, 1), dilations=(1, 2))),
        ("grouped", 2, (4, 2, 3, 3), attrs2d()),
        ("depthwise", 4, (4, 1, 3, 3), attrs2d()),
    ])
    def test_convolution_layers_conform(self, tmp_path, name, group, ws, attrs):
        """Convolution and GroupConvolution (OpenVINO's own conversion of a Conv) are read as
        Conv, the output shape computed by OpenVINO's rule agreeing with the ports."""
        import xml.etree.ElementTree as ET
        xml = _ir(tmp_path, name, group, ws, {k: v for k, v in attrs.items() if k != "group"})
        types = [layer.get("type") for layer in ET.parse(xml).getroot().iter("layer")]
        assert ("GroupConvolution" if group > 1 else "Convolution") in types
        report = sonnx.validate(xml)
        assert report.conforms, [(f.rule, f.message) for f in report.findings]

    def test_auto_pad_in_the_ir_is_a_finding(self, tmp_path):
        attrs = {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [1, 1], "dilations": [1, 1]}
        report = sonnx.validate(_ir(tmp_path, "same", 1, (3, 4, 3, 3), attrs))
        assert [f.rule for f in report.findings] == ["CONV-R4"]

    def test_a_planted_group_mismatch_is_a_finding(self, tmp_path):
        """The IR's GroupConvolution filters edited to 3 groups (3, 2, 2, 3, 3) over a 4-channel
        input, the ports made to agree: refused (CONV-R1), so the group is read from the filters."""
        import xml.etree.ElementTree as ET
        xml = _ir(tmp_path, "grouped", 2, (4, 2, 3, 3), {k: v for k, v in attrs2d().items() if k != "group"})
        tree = ET.parse(xml)
        layers = {layer.get("type"): layer for layer in tree.getroot().iter("layer")}
        const, conv, result = layers["Const"], layers["GroupConvolution"], layers["Result"]
        const.find("data").set("shape", "3, 2, 2, 3, 3")
        const.find("data").set("size", str(3 * 2 * 2 * 3 * 3 * 4))
        for port in (const.find("output/port"), conv.findall("input/port")[1]):
            port.findall("dim")[0].text = "3"
        for port in (conv.find("output/port"), result.find("input/port")):
            port.findall("dim")[1].text = "6"
        tree.write(xml)
        rules = [f.rule for f in sonnx.validate(xml).findings]
        assert rules == ["CONV-R1"], rules

    def test_the_bias_becomes_a_broadcast_add(self, tmp_path):
        """OpenVINO's converter splits Conv's B into an Add of a (1, M, 1, 1) constant: that Add
        broadcasts, which the profile refuses (ADD-R4); the Convolution itself conforms."""
        report = sonnx.validate(_ir(tmp_path, "bias", 1, (3, 4, 3, 3),
                                    {k: v for k, v in attrs2d().items() if k != "group"}, bias=True))
        assert {f.rule for f in report.findings} == {"ADD-R4"}


# ---------------------------------------------------------------- LeNet-5 from both PyTorch exporters
LENET = pathlib.Path(__file__).parent / "test_conv_data"


@pytest.mark.req("CONV-R4", "CONV-R6")
def test_lenet5_from_both_pytorch_exporters():
    """LeNet-5 (test_conv_data/export_lenet5.py) as the TorchScript and the dynamo exporter
    write it: every Conv conforms as exported (both exporters write the five attributes); the
    only findings are the Linear biases' broadcast C (GEMM-R4), which conform repairs; the
    conformed models validate, run with the same output bits (the two exports hold the same
    weights), and onnxruntime's run is within every node's bound."""
    from sonnx.run.comparison import compare
    x = np.random.default_rng(1).standard_normal((1, 1, 28, 28)).astype(np.float32)
    outs = []
    for name in ("lenet5_torchscript_op18.onnx", "lenet5_dynamo_op18.onnx"):
        model = onnx.load(str(LENET / name))
        assert [n.op_type for n in model.graph.node].count("Conv") == 2
        assert {f.rule for f in sonnx.validate(model).findings} == {"GEMM-R4"}
        fixed, _ = sonnx.conform(model)
        report = sonnx.validate(fixed)
        assert report.conforms, [(f.rule, f.message) for f in report.findings]
        outs.append(sonnx.run(fixed, {"x": x})["y"])
        nodes = compare(fixed, {"x": x}).nodes
        assert [n.status for n in nodes] == ["within"] * len(nodes), [(n.op_type, n.status, n.detail) for n in nodes]
    assert_same_bits(outs[0], outs[1])


# ---------------------------------------------------------------- conform writes what was left implicit
def _implicit(auto_pad: str | None, rng, strides=(1, 1)):
    """Conv with only the attributes ONNX needs (no group, kernel_shape, dilations; pads or
    auto_pad as asked) -> Relu, on a 2x2x7x6 input."""
    w = numpy_helper.from_array(rng.standard_normal((3, 2, 3, 2)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b")
    attrs = {"strides": list(strides)} | ({"auto_pad": auto_pad} if auto_pad else {})
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", **attrs),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "implicit", [helper.make_tensor_value_info("x", 1, (2, 2, 7, 6))],
                          [helper.make_tensor_value_info("y", 1, None)], [w, b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


@pytest.mark.req("CONV-R4")
@pytest.mark.parametrize("auto_pad, strides", [(None, (1, 1)), ("SAME_UPPER", (1, 1)), ("SAME_LOWER", (2, 1)),
                                               ("VALID", (2, 2))])
def test_conform_writes_the_defaults_and_the_pads_auto_pad_means(auto_pad, strides):
    m = _implicit(auto_pad, np.random.default_rng(3), strides)
    assert "CONV-R4" in {f.rule for f in sonnx.validate(m).findings}
    fixed, report = sonnx.conform(m)
    assert report["check"]["status"] == "passed" and report["exit_code"] == 0, report["check"]
    assert sonnx.validate(fixed).conforms
    attrs = {a.name: helper.get_attribute_value(a) for a in fixed.graph.node[0].attribute}
    assert attrs["kernel_shape"] == [3, 2] and attrs["group"] == 1 and attrs["dilations"] == [1, 1]
    assert "auto_pad" not in attrs and len(attrs["pads"]) == 4
    kinds = {r["kind"] for r in report["rewrites"]}
    assert "write-default" in kinds and (auto_pad in (None, "NOTSET") or "explicit-pads" in kinds)
    if auto_pad == "SAME_LOWER":        # height 7, stride 2, kernel 3: total 2, begin 1, end 1
        assert attrs["pads"] == [1, 1, 1, 0]      # width 6, kernel 2, stride 1: total 1, the odd one at the begin
