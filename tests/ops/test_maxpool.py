"""MaxPool (ops/maxpool.py, ops/pool.py): the window rule of every version, the kernels against
each other, onnx.reference and onnxruntime bit for bit (and onnxruntime's divergences on NaN and
signed zeros asserted as they are), the refusals with their IDs, and the validator and run on
one-node models and a MaxPool -> Flatten -> Gemm net."""
from __future__ import annotations

import itertools
import math
import pathlib

import numpy as np
import onnx
import pytest
from onnx import helper

import sonnx
from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import maxpool as mp
from sonnx.ops import pool
from sonnx.ops.signature import TensorSig
from sonnx.semantics.tensor import from_numpy, to_numpy

from .conftest import assert_same_bits

OPSETS = (1, 8, 10, 11, 12, 22)
TYPES = sorted(mp.TYPE_SETS[mp.LATEST])
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
ONNX_TYPE = {"float": 1, "uint8": 2, "int8": 3, "float16": 10, "double": 11, "bfloat16": 16}


def example(name: str, version: int) -> tuple[list, dict]:
    """A call MaxPool accepts at ``version`` on type ``name`` (tests/ops/test_every_operator.py):
    a (1, 2, 4, 4) input, 2x2 windows, stride 2, no pads (the three written: MAXPOOL-R1)."""
    n = 32
    x = (np.arange(n) - n // 2 if dtypes.is_float(name) or dtypes.is_signed(name) else np.arange(n))
    x = x.astype(np.float64).astype(dtypes.numpy_dtype(name)).reshape(1, 2, 4, 4)
    return [x], {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 0, 0]}


def bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(UINT[x.dtype.itemsize])


def assert_bits(got: np.ndarray, expected: np.ndarray) -> None:
    """Same dtype, shape and every bit: NaN payloads and signs compared."""
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, expected.dtype, got.shape)
    assert np.array_equal(bits(got), bits(expected))


def values(name: str, shape, seed: int = 0, specials: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = dtypes.numpy_dtype(name)
    if dtypes.is_float(name):
        x = rng.standard_normal(shape) * 4
        if specials:
            pick = rng.integers(0, 12, shape)
            x = np.where(pick == 0, 0.0, np.where(pick == 1, -0.0, x))
            x = np.where(pick == 2, np.inf, np.where(pick == 3, -np.inf, x))
        return x.astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)


def model(elem: str, shape, attrs: dict, opset: int = 22, out_shape=None, outputs=("y",)) -> onnx.ModelProto:
    node = helper.make_node("MaxPool", ["x"], list(outputs), **attrs)
    outs = [helper.make_tensor_value_info(outputs[0], ONNX_TYPE[elem], out_shape)]
    if len(outputs) > 1:
        outs.append(helper.make_tensor_value_info(outputs[1], onnx.TensorProto.INT64, out_shape))
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", ONNX_TYPE[elem], shape)], outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset < 21 else 10
    return m


def ids(err: ProfileViolation) -> set[str]:
    return {v.requirement for v in err.violations}


def _ort(m: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, {"x": x})[0]


def _onnx_ref(m: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(m).run(None, {"x": x})[0]


# ---------------------------------------------------------------- types
@pytest.mark.req("MAXPOOL-R2")
class TestTypes:
    @pytest.mark.parametrize("opset", OPSETS)
    @pytest.mark.parametrize("name", sorted(dtypes.NUMERIC_TYPES))
    def test_kernel_accepts_exactly_the_version_set(self, opset, name):
        [x], attrs = example(name, opset)
        if name in mp.TYPE_SETS[opset]:
            assert mp.maxpool(x, **attrs, opset=opset).dtype == x.dtype
        else:
            with pytest.raises(ProfileViolation) as e:
                mp.maxpool(x, **attrs, opset=opset)
            assert "MAXPOOL-R2" in ids(e.value)

    def test_the_way_out_is_named(self):
        [x], attrs = example("int8", 12)
        with pytest.raises(ProfileViolation, match="import opset 12"):
            mp.maxpool(x, **attrs, opset=11)

    def test_sparse_refused(self):
        found, _ = mp.constraints(TensorSig(None, None, sparse=True), opset=22,
                                  attrs=example("float", 22)[1])
        assert [v.requirement for v in found] == ["MAXPOOL-R2"]


# ---------------------------------------------------------------- window attributes
@pytest.mark.req("MAXPOOL-R1")
class TestWindow:
    @pytest.mark.parametrize("omit", ["kernel_shape", "strides", "pads"])
    def test_omitted_geometry_refused(self, omit):
        attrs = example("float", 22)[1]
        del attrs[omit]
        found, _ = mp.constraints(TensorSig((1, 2, 4, 4), "float"), opset=22, attrs=attrs)
        assert [v.requirement for v in found] == ["MAXPOOL-R1"] and omit in found[0].message

    def test_kernel_requires_the_three_written(self):
        x = example("float", 22)[0][0]
        with pytest.raises(TypeError):
            mp.maxpool(x, kernel_shape=[2, 2], strides=[2, 2])          # pads: no default

    @pytest.mark.parametrize("mode", ["SAME_UPPER", "SAME_LOWER", "VALID", b"SAME_UPPER"])
    def test_auto_pad_refused_with_advice(self, mode):
        [x], attrs = example("float", 22)
        with pytest.raises(ProfileViolation, match="write the pads") as e:
            mp.maxpool(x, **attrs, auto_pad=mode)
        assert ids(e.value) == {"MAXPOOL-R1"}

    @pytest.mark.parametrize("mode", ["NOTSET", b"NOTSET"])
    def test_auto_pad_notset_accepted(self, mode):
        [x], attrs = example("float", 22)
        assert_bits(mp.maxpool(x, **attrs, auto_pad=mode), mp.maxpool(x, **attrs))

    @pytest.mark.parametrize("bad", [
        {"kernel_shape": [0, 2]}, {"strides": [0, 1]}, {"pads": [-1, 0, 0, 0]}, {"dilations": [0, 1]},
        {"kernel_shape": [2]}, {"pads": [0, 0]}, {"ceil_mode": 2}, {"kernel_shape": [5, 1]},
        {"pads": [2, 0, 0, 0]},      # kernel 2 with 2 padding rows in front: a window of padding only
    ])
    def test_out_of_range_refused(self, bad):
        [x], attrs = example("float", 22)
        with pytest.raises(ProfileViolation) as e:
            mp.maxpool(x, **{**attrs, **bad})
        assert ids(e.value) == {"MAXPOOL-R1"}

    def test_dilation_skipping_the_input_refused(self):
        """d = 1, kernel 2, dilation 3, pad 1 in front: taps -1 and 2, neither in the input."""
        x = np.ones((1, 1, 1), np.float32)
        with pytest.raises(ProfileViolation, match="padding only"):
            mp.maxpool(x, kernel_shape=[2], strides=[1], pads=[1, 2], dilations=[3])

    def test_dilations_and_ceil_mode_need_version_10(self):
        [x], attrs = example("float", 8)
        for extra in ({"dilations": [1, 1]}, {"ceil_mode": 0}):
            with pytest.raises(ProfileViolation, match="opset"):
                mp.maxpool(x, **attrs, **extra, opset=8)
            mp.maxpool(x, **attrs, **extra, opset=10)

    def test_rank_must_match_the_kernel(self):
        with pytest.raises(ProfileViolation, match="rank"):
            mp.maxpool(np.zeros((2, 4), np.float32), kernel_shape=[2], strides=[1], pads=[0, 0])

    @pytest.mark.parametrize("bad", [2.0, [2.0, 2.0], "2", [True, 2]])
    def test_wrong_python_types(self, bad):
        [x], attrs = example("float", 22)
        with pytest.raises(TypeError, match=r"^sonnx\.maxpool: kernel_shape must be") as e:
            mp.maxpool(x, **{**attrs, "kernel_shape": bad})
        if isinstance(bad, list):           # the wrong element is in the message, not just "tuple"
            assert repr(tuple(bad)) in str(e.value) or repr(bad) in str(e.value), e.value

    @pytest.mark.parametrize("d,k,s,e,pb,pe", list(itertools.product((1, 2, 5, 7, 8), (1, 2, 3), (1, 2, 3), (1, 2),
                                                                       (0, 1, 2), (0, 1, 2))))
    @pytest.mark.parametrize("ceil", (0, 1))
    def test_output_length_is_onnx_references(self, d, k, s, e, pb, pe, ceil):
        """pool.out_length against onnx.reference's own MaxPool formula (op_max_pool.py),
        restated here from its code, on every small case; onnxruntime on the accepted ones."""
        span = d + pb + pe - ((k - 1) * e + 1)
        if span < 0:
            assert pool.out_length(d, k, s, e, pb, pe, ceil) == 0
            return
        want = int(np.ceil(span / s + 1)) if ceil else int(np.floor(span / s + 1))
        if ceil and (want - 1) * s >= d + pb:
            want -= 1
        assert pool.out_length(d, k, s, e, pb, pe, ceil) == want


# ---------------------------------------------------------------- options
@pytest.mark.req("MAXPOOL-R3")
class TestOptions:
    def test_storage_order_zero_only(self):
        [x], attrs = example("float", 22)
        mp.maxpool(x, **attrs, storage_order=0)
        with pytest.raises(ProfileViolation) as e:
            mp.maxpool(x, **attrs, storage_order=1)
        assert ids(e.value) == {"MAXPOOL-R3"}
        with pytest.raises(ProfileViolation, match="no storage_order"):
            mp.maxpool(x, **attrs, storage_order=0, opset=1)

    def test_indices_output_refused(self):
        assert mp.output_violations(1, 22) == []
        assert [v.requirement for v in mp.output_violations(2, 22)] == ["MAXPOOL-R3"]


# ---------------------------------------------------------------- values
CASES = [  # (shape, attributes)
    ((2, 3, 7, 6), dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1], dilations=[1, 2], ceil_mode=1)),
    ((1, 2, 9), dict(kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1)),
    ((1, 1, 5, 5), dict(kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0], ceil_mode=1)),
    ((2, 2, 6, 6), dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])),
    ((1, 2, 4, 5, 6), dict(kernel_shape=[2, 2, 3], strides=[2, 1, 2], pads=[0, 1, 1, 1, 0, 1], dilations=[1, 2, 1])),
    ((3, 1, 8, 8), dict(kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0])),
]


@pytest.mark.req("MAXPOOL-R4")
class TestValues:
    @pytest.mark.parametrize("name", TYPES)
    @pytest.mark.parametrize("case", range(len(CASES)))
    def test_kernel_and_reference_agree_bit_for_bit(self, name, case):
        shape, attrs = CASES[case]
        x = values(name, shape, seed=case, specials=True)
        y = mp.maxpool(x, **attrs)
        assert_bits(y, to_numpy(mp.maxpool_reference(from_numpy(x), **attrs)))

    @pytest.mark.parametrize("name", ["float16", "bfloat16", "float", "double"])
    @pytest.mark.parametrize("case", range(len(CASES)))
    def test_nan_inputs_take_the_window_fold_with_the_same_bits(self, name, case):
        """An input holding NaNs (payloads and signs varied) goes through the tap fold; the key
        path serves the others: both against the reference, and the fold alone on NaN-free data
        gives the key path's bits."""
        shape, attrs = CASES[case]
        x = values(name, shape, seed=case + 7, specials=True)
        nans = np.random.default_rng(case).random(shape) < 0.15
        width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]
        raw = x.view(width).copy()
        payload = np.array([0x7E01, 0x7FC00003, 0x7FF8000000000005][[2, 4, 8].index(x.itemsize)]
                           if name != "bfloat16" else 0x7FC1, dtype=width)
        raw[nans] = payload | (np.arange(nans.sum()) % 2).astype(width) << (8 * x.itemsize - 1)
        xn = raw.view(x.dtype)
        # the reference reads through binary64: a bfloat16 NaN's low payload bits come back
        # changed by ml_dtypes' conversion, so there a NaN matches any NaN
        same = assert_same_bits if name == "bfloat16" else assert_bits
        same(mp.maxpool(xn, **attrs), to_numpy(mp.maxpool_reference(from_numpy(xn), **attrs)))
        g = mp.check(x, attrs["kernel_shape"], attrs["strides"], attrs["pads"], attrs.get("dilations"),
                     attrs.get("ceil_mode"), None, None)
        assert_bits(mp._fold(x, g), mp.maxpool(x, **attrs))

    def test_every_window_holds_by_the_stated_rule(self):
        for shape, attrs in CASES:
            x = values("float", shape, specials=True)
            y = mp.maxpool(x, **attrs)
            ref = mp.maxpool_reference(from_numpy(x), **attrs)
            assert mp._every_window(from_numpy(x), attrs["kernel_shape"], attrs["strides"], attrs["pads"],
                                    attrs.get("dilations"), attrs.get("ceil_mode"), from_numpy(y))
            assert len(ref.data) == y.size

    def test_the_rule_check_catches_a_wrong_window(self):
        """is_window_max, the contract, refuses a planted wrong result (so it can fail)."""
        assert mp.is_window_max([1.0, 3.0, 2.0], 3.0)
        assert not mp.is_window_max([1.0, 3.0, 2.0], 2.0)
        assert not mp.is_window_max([-0.0, 0.0], -0.0)
        assert not mp.is_window_max([1.0, math.nan], 1.0)

    @pytest.mark.parametrize("name", ["float16", "float", "double", "bfloat16"])
    def test_signed_zeros(self, name):
        dt = dtypes.numpy_dtype(name)
        x = np.array([[[-0.0, 0.0, -0.0, -0.0, 0.0, -0.0, -1.0, -0.0]]], dt)
        y = mp.maxpool(x, kernel_shape=[2], strides=[2], pads=[0, 0])
        assert list(np.signbit(y.astype(np.float64)).ravel()) == [False, True, False, True]

    def test_first_nan_in_window_order_bits_kept(self):
        a = np.array([0x7FC00001], np.uint32).view(np.float32)[0]
        b = np.array([0xFFC00002], np.uint32).view(np.float32)[0]
        x = np.array([[[[1.0, b], [a, 5.0]]]], np.float32)   # window order: (0,0), (0,1), (1,0), (1,1)
        y = mp.maxpool(x, kernel_shape=[2, 2], strides=[1, 1], pads=[0, 0, 0, 0])
        assert bits(y).ravel().tolist() == [0xFFC00002]
        x2 = np.array([[[[1.0, 7.0], [a, b]]]], np.float32)
        assert bits(mp.maxpool(x2, kernel_shape=[2, 2], strides=[1, 1], pads=[0, 0, 0, 0])).ravel().tolist() == [0x7FC00001]

    def test_padding_never_selected(self):
        """-inf inputs next to padding: the result is the input's -inf (padding is not a value);
        int8 at its minimum with padding: the input's minimum."""
        x = np.full((1, 1, 3), -np.inf, np.float32)
        y = mp.maxpool(x, kernel_shape=[2], strides=[1], pads=[1, 1])
        assert_bits(y, np.full((1, 1, 4), -np.inf, np.float32))
        xi = np.array([[[-128, -128, 5]]], np.int8)
        assert mp.maxpool(xi, kernel_shape=[2], strides=[1], pads=[1, 1], opset=12).ravel().tolist() == [-128, -128, 5, 5]

    def test_strided_and_byte_swapped_inputs(self):
        x = values("float", (2, 3, 8, 10), specials=True)
        attrs = CASES[3][1]
        want = mp.maxpool(np.ascontiguousarray(x[:, :, ::2, ::2]), **attrs)
        assert_bits(mp.maxpool(x[:, :, ::2, ::2], **attrs), want)
        swapped = x.astype(x.dtype.newbyteorder(">"))
        assert_bits(mp.maxpool(swapped, **attrs), mp.maxpool(x, **attrs))

    def test_bind_gives_the_same_bits(self):
        shape, attrs = CASES[0]
        x = values("double", shape, specials=True)
        assert_bits(mp.bind(x, **attrs)(x), mp.maxpool(x, **attrs))

    def test_reference_refuses_like_the_kernel(self):
        x = from_numpy(np.zeros((1, 1, 4), np.float32))
        with pytest.raises(ProfileViolation) as e:
            mp.maxpool_reference(x, kernel_shape=[2], strides=[1], pads=[2, 0])
        assert ids(e.value) == {"MAXPOOL-R1"}


# ---------------------------------------------------------------- against onnx and onnxruntime
def _cases():
    for case, (shape, attrs) in enumerate(CASES):
        for name in ("float", "double", "float16", "int8", "uint8"):
            yield case, name


@pytest.mark.req("MAXPOOL-R4")
@pytest.mark.parametrize("case,name", list(_cases()))
def test_agrees_with_onnx(case, name):
    """Finite values without -0: onnx.reference (float types) and onnxruntime give our bits.
    (NaN and signed zeros: see test_onnxruntime_divergences.)"""
    shape, attrs = CASES[case]
    x = values(name, shape, seed=case)
    if dtypes.is_float(name):
        x[x == 0] = 1
    y = mp.maxpool(x, **attrs)
    m = model(name, shape, attrs, opset=22 if name in ("float", "double", "float16") else 12, out_shape=y.shape)
    if dtypes.is_float(name):           # onnx.reference pads an integer input with NaN: it fails
        assert_bits(_onnx_ref(m, x), y)
    assert_bits(_ort(m, x), y)


# onnxruntime 1.23.2's CPU MaxPool (measured): it starts each window at -FLT_MAX and keeps the
# running maximum with `>`, so a NaN is never selected, a window of NaN or -inf alone gives
# -FLT_MAX, and +0 never replaces an earlier -0. window (2 taps) -> onnxruntime's result
DIVERGENCE_ORT = [
    ((np.nan, 1.0), 1.0),
    ((0.0, np.nan), 0.0),
    ((np.nan, np.nan), -3.4028234663852886e38),
    ((-np.inf, -np.inf), -3.4028234663852886e38),
    ((-np.inf, np.nan), -3.4028234663852886e38),
    ((-0.0, 0.0), "-0"),
    ((0.0, -0.0), 0.0),
]


def _shown(v: float):
    if math.isnan(v):
        return "nan"
    return "-0" if v == 0 and math.copysign(1, v) < 0 else float(v)


@pytest.mark.req("MAXPOOL-R4")
def test_onnxruntime_divergences():
    """What onnxruntime gives on NaN, -inf and signed zeros, asserted as it is (the spec page's
    divergence list), beside the profile's result for the same window."""
    x = np.array([[[v for window, _ in DIVERGENCE_ORT for v in window]]], np.float32)
    attrs = dict(kernel_shape=[2], strides=[2], pads=[0, 0])
    ours = mp.maxpool(x, **attrs).ravel()
    theirs = _ort(model("float", x.shape, attrs, out_shape=(1, 1, len(DIVERGENCE_ORT))), x).ravel()
    assert [_shown(float(v)) for v in theirs] == [want for _, want in DIVERGENCE_ORT]
    assert [_shown(float(v)) for v in ours] == ["nan", "nan", "nan", -math.inf, "nan", 0.0, 0.0]


# ---------------------------------------------------------------- validator and run
@pytest.mark.req("MAXPOOL-R1", "MAXPOOL-R3")
class TestValidate:
    @pytest.mark.parametrize("opset", OPSETS)
    def test_one_node_model_conforms_and_runs(self, opset):
        [x], attrs = example("float", opset)
        y = mp.maxpool(x, **attrs, opset=opset)
        m = model("float", x.shape, attrs, opset=opset, out_shape=y.shape)
        report = sonnx.validate(m)
        assert report.conforms, [(f.rule, f.message) for f in report.findings]
        assert_same_bits(sonnx.run(m, {"x": x})["y"], y)

    def test_indices_output_is_a_finding(self):
        [x], attrs = example("float", 22)
        m = model("float", x.shape, attrs, out_shape=(1, 2, 2, 2), outputs=("y", "i"))
        assert "MAXPOOL-R3" in {f.rule for f in sonnx.validate(m).findings}

    def test_auto_pad_is_a_finding(self):
        m = model("float", (1, 2, 4, 4), {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 0, 0],
                                         "auto_pad": "VALID"}, out_shape=(1, 2, 2, 2))
        assert "MAXPOOL-R1" in {f.rule for f in sonnx.validate(m).findings}

    def test_omitted_pads_is_a_finding(self):
        m = model("float", (1, 2, 4, 4), {"kernel_shape": [2, 2], "strides": [2, 2]}, out_shape=(1, 2, 2, 2))
        assert {f.rule for f in sonnx.validate(m).findings} == {"MAXPOOL-R1"}

    def test_maxpool_flatten_gemm_net_runs_and_compares(self):
        """MaxPool -> Flatten -> Gemm (the tail of a LeNet): validates, and runs with the bits of
        onnxruntime for the MaxPool and Flatten (Gemm compared by sonnx's own policy)."""
        rng = np.random.default_rng(3)
        w = rng.standard_normal((18, 4)).astype(np.float32)
        b = rng.standard_normal((2, 4)).astype(np.float32)       # C at the result's shape (GEMM's rule)
        nodes = [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0]),
                 helper.make_node("Flatten", ["p"], ["f"], axis=1),
                 helper.make_node("Gemm", ["f", "w", "b"], ["y"], alpha=1.0, beta=1.0, transA=0, transB=0)]
        g = helper.make_graph(nodes, "net", [helper.make_tensor_value_info("x", 1, (2, 2, 6, 6))],
                              [helper.make_tensor_value_info("y", 1, (2, 4))],
                              [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(b, "b")])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        report = sonnx.validate(m)
        assert report.conforms, [(f.rule, f.message) for f in report.findings]
        x = rng.standard_normal((2, 2, 6, 6)).astype(np.float32)
        got = sonnx.run(m, {"x": x})["y"]
        pooled = mp.maxpool(x, kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0])
        want = sonnx.gemm(pooled.reshape(2, 18), w, b, alpha=1.0, beta=1.0, trans_a=0, trans_b=0)
        assert_same_bits(got, want)
        import onnxruntime as ort
        theirs = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        assert np.allclose(theirs, got, rtol=1e-5, atol=1e-5)
        from sonnx.run.comparison import compare
        verdicts = {n.op_type: n.status for n in compare(m, {"x": x}).nodes}
        assert verdicts["MaxPool"] == "within" and verdicts["Flatten"] == "within", verdicts

    def test_run_compare_reports_onnxruntimes_nan_divergence(self):
        """run --compare holds MaxPool to bits: onnxruntime's dropped NaN is reported."""
        from sonnx.run.comparison import compare
        x = np.array([[[1.0, np.nan, 2.0, 3.0]]], np.float32)
        attrs = dict(kernel_shape=[2], strides=[2], pads=[0, 0])
        m = model("float", x.shape, attrs, out_shape=(1, 1, 2))
        [node] = compare(m, {"x": x}).nodes
        assert node.status == "outside", (node.status, node.detail)


# ---------------------------------------------------------------- PyTorch exports shipped with onnx
PYTORCH = pathlib.Path(onnx.__file__).parent / "backend" / "test" / "data" / "pytorch-converted"
# the one-node exports (test_AvgPool1d* wrap the node in Unsqueeze/Squeeze, outside the profile)
TORCH_MAXPOOL = sorted(p.name for p in PYTORCH.glob("test_MaxPool*") if (p / "model.onnx").is_file()
                              and [n.op_type for n in onnx.load(p / "model.onnx").graph.node] == ["MaxPool"])


@pytest.mark.req("MAXPOOL-R1", "MAXPOOL-R4")
@pytest.mark.parametrize("name", TORCH_MAXPOOL)
def test_pytorch_exports_shipped_with_onnx(name):
    """The MaxPool models PyTorch exported for onnx's backend tests (1-D to 3-D, strides,
    padding, dilation): those whose only node is MaxPool conform, and sonnx.run gives the
    expected output the test data set holds, bit for bit."""
    from onnx import numpy_helper
    model = onnx.load(PYTORCH / name / "model.onnx")
    report = sonnx.validate(model)
    assert report.conforms, [(f.rule, f.message) for f in report.findings]
    data = PYTORCH / name / "test_data_set_0"
    x = numpy_helper.to_array(onnx.load_tensor(str(data / "input_0.pb")))
    want = numpy_helper.to_array(onnx.load_tensor(str(data / "output_0.pb")))
    got = sonnx.run(model, {model.graph.input[0].name: x})[model.graph.output[0].name]
    assert_bits(got, want)
