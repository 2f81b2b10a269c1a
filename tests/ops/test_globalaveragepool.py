"""GlobalAveragePool (ops/globalaveragepool.py, ops/pool.py): the checks, the kernel against the
reference bit for bit (the stated fold, then one division), onnxruntime within the stated
order bound (the largest ULP distance reported), the validator and run."""
from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import helper

import sonnx
from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import globalaveragepool as gap
from sonnx.ops import pool
from sonnx.ops.signature import TensorSig
from sonnx.semantics.tensor import from_numpy, to_numpy

from .conftest import assert_same_bits

TYPES = sorted(gap.TYPE_SETS[gap.LATEST])
ONNX_TYPE = {"float": 1, "float16": 10, "double": 11, "bfloat16": 16}
UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def example(name: str, version: int) -> tuple[list, dict]:
    """A call GlobalAveragePool accepts (tests/ops/test_every_operator.py): a (1, 2, 3, 2) input."""
    x = (np.arange(12) - 6).astype(np.float64).astype(dtypes.numpy_dtype(name)).reshape(1, 2, 3, 2)
    return [x], {}


def bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(UINT[x.dtype.itemsize])


def model(elem: str, shape, opset: int = 22, out_shape=None, **attrs) -> onnx.ModelProto:
    node = helper.make_node("GlobalAveragePool", ["x"], ["y"], **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", ONNX_TYPE[elem], shape)],
                          [helper.make_tensor_value_info("y", ONNX_TYPE[elem], out_shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset < 21 else 10
    return m


@pytest.mark.req("GLOBALAVERAGEPOOL-R1", "GLOBALAVERAGEPOOL-R2")
class TestChecks:
    def test_rank_at_least_three(self):
        with pytest.raises(ProfileViolation) as e:
            gap.globalaveragepool(np.zeros((2, 3), np.float32))
        assert {v.requirement for v in e.value.violations} == {"GLOBALAVERAGEPOOL-R1"}

    def test_attribute_refused(self):
        assert [v.requirement for v in gap.constraints(TensorSig((1, 1, 2), "float"), opset=22,
                                                       attrs={"axis": 1})] == ["GLOBALAVERAGEPOOL-R1"]

    @pytest.mark.parametrize("opset,name,ok", [(1, "float", True), (1, "bfloat16", False), (22, "bfloat16", True),
                                               (22, "int32", False)])
    def test_type_sets(self, opset, name, ok):
        x = np.ones((1, 1, 2), dtypes.numpy_dtype(name))
        if ok:
            assert gap.globalaveragepool(x, opset=opset).dtype == x.dtype
        else:
            with pytest.raises(ProfileViolation) as e:
                gap.globalaveragepool(x, opset=opset)
            assert "GLOBALAVERAGEPOOL-R2" in {v.requirement for v in e.value.violations}


@pytest.mark.req("GLOBALAVERAGEPOOL-R3")
class TestValues:
    @pytest.mark.parametrize("name", TYPES)
    @pytest.mark.parametrize("shape", [(2, 3, 5, 7), (1, 2, 9), (1, 2, 3, 3, 3), (2, 1, 1, 1)])
    def test_kernel_and_reference_agree_bit_for_bit(self, name, shape):
        x = (np.random.default_rng(len(shape)).standard_normal(shape) * 3).astype(dtypes.numpy_dtype(name))
        y = gap.globalaveragepool(x)
        r = to_numpy(gap.globalaveragepool_reference(from_numpy(x)))
        assert y.shape == shape[:2] + (1,) * (len(shape) - 2)
        assert np.array_equal(bits(y), bits(r))

    def test_the_order_is_row_major_and_each_add_rounded(self):
        """float32 1e8, 1, -1e8, 1 (row-major): ((1e8 + 1) - 1e8) + 1 = 1 in float32 (1e8 + 1
        rounds to 1e8), so the sum is 1 and the average 0.25; an exact or reordered sum gives 0.5."""
        x = np.array([[[[1e8, 1.0], [-1e8, 1.0]]]], np.float32)
        assert gap.globalaveragepool(x).item() == 0.25
        x2 = np.array([[[[1e8, -1e8], [1.0, 1.0]]]], np.float32)
        assert gap.globalaveragepool(x2).item() == 0.5

    def test_no_start_value(self):
        """A plane of -0 gives -0 (a +0 start value would give +0)."""
        y = gap.globalaveragepool(np.full((1, 1, 2, 2), -0.0, np.float32))
        assert y.item() == 0 and math.copysign(1, y.item()) < 0

    def test_division_once_in_t(self):
        """float16, count 3: the sum 1 divided by 3 once, rounded in float16."""
        x = np.array([[[1.0, 0.0, 0.0]]], np.float16)
        assert bits(gap.globalaveragepool(x)).item() == np.float16(1 / 3).view(np.uint16)

    def test_special_values(self):
        x = np.array([[[np.inf, 1.0]], [[np.inf, -np.inf]], [[np.nan, 1.0]], [[65504.0, 65504.0]]], np.float16)
        y = gap.globalaveragepool(x.reshape(1, 4, 2)).ravel()
        assert y[0] == np.inf and np.isnan(y[1]) and np.isnan(y[2]) and y[3] == np.inf   # the sum overflows in T

    def test_bind_and_byte_order(self):
        x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float64)
        y = gap.globalaveragepool(x)
        assert np.array_equal(bits(gap.bind(x)(x)), bits(y))
        assert np.array_equal(bits(gap.globalaveragepool(x.astype(">f8"))), bits(y))


ORT_SHAPES = [(2, 3, 5, 7), (1, 4, 3, 3, 3), (2, 2, 50, 60), (1, 3, 17)]


@pytest.mark.req("GLOBALAVERAGEPOOL-R3")
@pytest.mark.parametrize("name,opset", [("float", 22), ("float16", 22)])      # onnxruntime has no double kernel
def test_onnxruntime_within_the_order_bound(name, opset):
    """onnxruntime sums in another order (Eigen's): not our bits, but within GLOBALAVERAGEPOOL-R3's bound for
    any order. The largest ULP distance measured with onnxruntime 1.23.2 (float: 30, float16: 58,
    on planes of up to 3,000 elements whose average is near 0) is held under a ceiling."""
    worst = 0
    for shape in ORT_SHAPES:
        x = np.random.default_rng(2).standard_normal(shape).astype(dtypes.numpy_dtype(name))
        y = gap.globalaveragepool(x, opset=opset)
        import onnxruntime as ort
        m = model(name, shape, opset=opset, out_shape=y.shape)
        theirs = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        assert gap.order_bound_comparison(theirs, [x], {}) == ""
        worst = max(worst, pool.ulp_distance(theirs, y))
        planted = theirs.copy()
        planted.reshape(-1)[0] = planted.reshape(-1)[0] + 100         # a fault the bound catches
        assert gap.order_bound_comparison(planted, [x], {}) != ""
    assert worst <= {"float": 64, "float16": 128}[name], worst


@pytest.mark.req("GLOBALAVERAGEPOOL-R1")
class TestValidate:
    @pytest.mark.parametrize("opset", [1, 22])
    def test_one_node_model_conforms_and_runs(self, opset):
        [x], _ = example("float", opset)
        y = gap.globalaveragepool(x, opset=opset)
        m = model("float", x.shape, opset=opset, out_shape=y.shape)
        report = sonnx.validate(m)
        assert report.conforms, [(f.rule, f.message) for f in report.findings]
        assert_same_bits(sonnx.run(m, {"x": x})["y"], y)

    def test_run_compare_judges_by_the_bound(self):
        from sonnx.run.comparison import compare
        x = np.random.default_rng(5).standard_normal((2, 3, 6, 6)).astype(np.float32)
        m = model("float", x.shape, out_shape=(2, 3, 1, 1))
        result = compare(m, {"x": x})
        assert all(n.status == "within" for n in result.nodes), [(n.status, n.detail) for n in result.nodes]
