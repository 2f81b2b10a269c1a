"""AveragePool (ops/averagepool.py, ops/pool.py): the checks, the kernel against the reference bit
for bit (the stated fold per window, then one division, both count_include_pad rules), against
onnxruntime (float32: the same bits on every tested case; float16: within the order bound, the
largest ULP distance asserted), the validator and run."""
from __future__ import annotations

import itertools
import pathlib

import numpy as np
import onnx
import pytest
from onnx import helper

import sonnx
from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import averagepool as ap
from sonnx.ops import pool
from sonnx.semantics.tensor import from_numpy, to_numpy

from .conftest import assert_same_bits

TYPES = sorted(ap.TYPE_SETS[ap.LATEST])
ONNX_TYPE = {"float": 1, "float16": 10, "double": 11, "bfloat16": 16}
UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def example(name: str, version: int) -> tuple[list, dict]:
    """A call AveragePool accepts (tests/ops/test_every_operator.py): (1, 2, 4, 4), 2x2, stride 2."""
    x = (np.arange(32) - 16).astype(np.float64).astype(dtypes.numpy_dtype(name)).reshape(1, 2, 4, 4)
    return [x], {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 0, 0]}


def bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(UINT[x.dtype.itemsize])


def model(elem: str, shape, attrs: dict, opset: int = 22, out_shape=None) -> onnx.ModelProto:
    node = helper.make_node("AveragePool", ["x"], ["y"], **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", ONNX_TYPE[elem], shape)],
                          [helper.make_tensor_value_info("y", ONNX_TYPE[elem], out_shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset < 21 else 10
    return m


def ids(e) -> set[str]:
    return {v.requirement for v in e.value.violations}


@pytest.mark.req("AVERAGEPOOL-R1", "AVERAGEPOOL-R2", "AVERAGEPOOL-R3")
class TestChecks:
    @pytest.mark.parametrize("bad,rule", [({"pads": [2, 0, 0, 0]}, "AVERAGEPOOL-R1"), ({"auto_pad": "SAME_UPPER"}, "AVERAGEPOOL-R1"),
                                          ({"count_include_pad": 2}, "AVERAGEPOOL-R3"), ({"strides": [0, 1]}, "AVERAGEPOOL-R1")])
    def test_refusals(self, bad, rule):
        [x], attrs = example("float", 22)
        with pytest.raises(ProfileViolation) as e:
            ap.averagepool(x, **{**attrs, **bad})
        assert ids(e) == {rule}

    def test_versions(self):
        [x], attrs = example("float", 22)
        for extra, first in (({"count_include_pad": 0}, 7), ({"ceil_mode": 0}, 10), ({"dilations": [1, 1]}, 19)):
            with pytest.raises(ProfileViolation, match="opset"):
                ap.averagepool(x, **attrs, **extra, opset=first - 1)
            ap.averagepool(x, **attrs, **extra, opset=first)
        with pytest.raises(ProfileViolation) as e:
            ap.averagepool(x.astype(dtypes.numpy_dtype("bfloat16")), **attrs, opset=19)
        assert ids(e) == {"AVERAGEPOOL-R2"}

    def test_omitted_pads(self):
        [x], attrs = example("float", 22)
        with pytest.raises(TypeError):
            ap.averagepool(x, kernel_shape=[2, 2], strides=[2, 2])


CASES = [
    ((2, 3, 7, 6), dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1], ceil_mode=1)),
    ((1, 2, 9), dict(kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1)),
    ((2, 2, 6, 6), dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])),
    ((1, 2, 5, 6), dict(kernel_shape=[2, 3], strides=[1, 2], pads=[1, 1, 0, 1], dilations=[2, 1])),
    ((1, 1, 5, 5), dict(kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0], ceil_mode=1)),
    ((1, 2, 4, 4, 4), dict(kernel_shape=[2, 2, 2], strides=[2, 1, 2], pads=[1, 0, 0, 0, 1, 1])),
]


@pytest.mark.req("AVERAGEPOOL-R4")
class TestValues:
    @pytest.mark.parametrize("name", TYPES)
    @pytest.mark.parametrize("case,include", list(itertools.product(range(len(CASES)), (0, 1))))
    def test_kernel_and_reference_agree_bit_for_bit(self, name, case, include):
        shape, attrs = CASES[case]
        x = (np.random.default_rng(case).standard_normal(shape) * 3).astype(dtypes.numpy_dtype(name))
        y = ap.averagepool(x, **attrs, count_include_pad=include)
        r = to_numpy(ap.averagepool_reference(from_numpy(x), **attrs, count_include_pad=include))
        assert np.array_equal(bits(y), bits(r))

    def test_count_rules(self):
        """1-D, ones, kernel 3, pads 1: the edge windows hold 2 inputs; count_include_pad 1
        divides them by 3, 0 by 2."""
        x = np.ones((1, 1, 4), np.float32)
        attrs = dict(kernel_shape=[3], strides=[1], pads=[1, 1])
        assert ap.averagepool(x, **attrs, count_include_pad=0).ravel().tolist() == [1, 1, 1, 1]
        got = ap.averagepool(x, **attrs, count_include_pad=1).ravel().tolist()
        assert got == [np.float32(2 / 3), 1, 1, np.float32(2 / 3)]

    def test_ceil_overhang_not_counted(self):
        """d = 5, kernel 2, stride 2, ceil_mode: the last window (taps 4, 5) reaches beyond the
        end pad (0); count_include_pad 1 counts only tap 4."""
        x = np.arange(5, dtype=np.float32).reshape(1, 1, 5)
        y = ap.averagepool(x, kernel_shape=[2], strides=[2], pads=[0, 0], ceil_mode=1, count_include_pad=1)
        assert y.ravel().tolist() == [0.5, 2.5, 4.0]

    @pytest.mark.parametrize("name", TYPES)
    @pytest.mark.parametrize("include", (0, 1))
    def test_signed_zeros_and_padding(self, name, include):
        """Zeros of both signs, infinities and NaN next to padding: the kernel (padding filled
        with -0 and added) gives the reference's bits (padding taps left out)."""
        rng = np.random.default_rng(11)
        pick = rng.integers(0, 6, (2, 3, 6, 5))
        table = np.array([-0.0, 0.0, -0.0, 1.0, np.inf, -np.inf])
        x = table[pick].astype(dtypes.numpy_dtype(name))
        x[0, 0, 0, 0] = np.nan
        attrs = dict(kernel_shape=[3, 2], strides=[2, 1], pads=[2, 1, 2, 1], ceil_mode=1, count_include_pad=include)
        y = ap.averagepool(x, **attrs)
        r = to_numpy(ap.averagepool_reference(from_numpy(x), **attrs))
        assert_same_bits(y, r)
        assert np.signbit(y.astype(np.float64)[y == 0]).any()      # some window of -0 averaged to -0

    def test_window_order_fold(self):
        x = np.array([[[1e8, 1.0, -1e8, 1.0]]], np.float32)
        assert ap.averagepool(x, kernel_shape=[4], strides=[1], pads=[0, 0]).item() == 0.25


@pytest.mark.req("AVERAGEPOOL-R4")
@pytest.mark.parametrize("name", ["float", "float16"])
def test_onnxruntime(name):
    """float32: onnxruntime sums each window in window order in float32: the same bits on every
    case. float16: onnxruntime accumulates wider; within the order bound, ULP distance asserted."""
    import onnxruntime as ort
    worst = 0
    for (shape, attrs), include in itertools.product(CASES, (0, 1)):
        kw = dict(attrs, count_include_pad=include)
        x = np.random.default_rng(1).standard_normal(shape).astype(dtypes.numpy_dtype(name))
        y = ap.averagepool(x, **kw)
        m = model(name, shape, kw, out_shape=y.shape)
        theirs = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        assert ap.order_bound_comparison(theirs, [x], kw) == ""
        if name == "float":
            assert np.array_equal(bits(theirs), bits(y)), (shape, kw)
        worst = max(worst, pool.ulp_distance(theirs, y))
    assert worst <= {"float": 0, "float16": 256}[name], worst


@pytest.mark.req("AVERAGEPOOL-R1")
class TestValidate:
    @pytest.mark.parametrize("opset", [1, 7, 10, 11, 19, 22])
    def test_one_node_model_conforms_and_runs(self, opset):
        [x], attrs = example("float", opset)
        y = ap.averagepool(x, **attrs, opset=opset)
        m = model("float", x.shape, attrs, opset=opset, out_shape=y.shape)
        report = sonnx.validate(m)
        assert report.conforms, [(f.rule, f.message) for f in report.findings]
        assert_same_bits(sonnx.run(m, {"x": x})["y"], y)

    def test_auto_pad_is_a_finding(self):
        [x], attrs = example("float", 22)
        m = model("float", x.shape, {**attrs, "auto_pad": "SAME_LOWER"}, out_shape=(1, 2, 2, 2))
        assert "AVERAGEPOOL-R1" in {f.rule for f in sonnx.validate(m).findings}


# ---------------------------------------------------------------- PyTorch exports shipped with onnx
PYTORCH = pathlib.Path(onnx.__file__).parent / "backend" / "test" / "data" / "pytorch-converted"
# the one-node exports (test_AvgPool1d* wrap the node in Unsqueeze/Squeeze, outside the profile)
TORCH_AVGPOOL = sorted(p.name for p in PYTORCH.glob("test_AvgPool*") if (p / "model.onnx").is_file()
                              and [n.op_type for n in onnx.load(p / "model.onnx").graph.node] == ["AveragePool"])


@pytest.mark.req("AVERAGEPOOL-R1", "AVERAGEPOOL-R4")
@pytest.mark.parametrize("name", TORCH_AVGPOOL)
def test_pytorch_exports_shipped_with_onnx(name):
    """The AveragePool models PyTorch exported for onnx's backend tests: the one-node ones
    conform and run; their expected outputs (PyTorch's) are within the order bound and, measured,
    the same bits (PyTorch sums these windows in window order too)."""
    from onnx import numpy_helper
    model = onnx.load(PYTORCH / name / "model.onnx")
    report = sonnx.validate(model)
    assert report.conforms, [(f.rule, f.message) for f in report.findings]
    data = PYTORCH / name / "test_data_set_0"
    x = numpy_helper.to_array(onnx.load_tensor(str(data / "input_0.pb")))
    want = numpy_helper.to_array(onnx.load_tensor(str(data / "output_0.pb")))
    got = sonnx.run(model, {model.graph.input[0].name: x})[model.graph.output[0].name]
    kw = {a.name: helper.get_attribute_value(a) for a in model.graph.node[0].attribute}
    assert ap.order_bound_comparison(want, [x], kw) == ""
    assert pool.ulp_distance(want, got) == 0
