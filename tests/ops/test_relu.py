"""Relu (ops/relu.py): the numpy kernel against the reference kernel and the reference against
the element's spec, on edge values, drawn arrays and every float16/bfloat16 value; ONNX's node
case; onnxruntime and onnx.reference with their known differences (spec/relu.md); refusals."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import sonnx
from sonnx import dtypes
from sonnx.ops import relu as relu_op
from sonnx.ops.kernel import clear_memos
from sonnx.ops.signature import TensorSig
from sonnx.semantics.tensor import from_numpy, to_numpy

from .conftest import assert_same_bits, edge_values
from .test_elementwise import _bit_pattern_arrays, _onnx_cases, onnx_cases

TYPES = sorted(relu_op.TYPE_SETS[relu_op.LATEST])
FLOATS = [t for t in TYPES if dtypes.is_float(t)]
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def reference(x: np.ndarray) -> np.ndarray:
    return to_numpy(relu_op.relu_reference(from_numpy(x)))


def bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(UINT[x.dtype.itemsize])


def every_half(name: str) -> np.ndarray:
    return np.arange(2**16, dtype=np.uint16).view(dtypes.numpy_dtype(name))


def with_payload_nans(name: str) -> np.ndarray:
    """Edge values plus NaNs of both signs with a payload (bits below the quiet bit set)."""
    x = edge_values(name)
    if not dtypes.is_float(name):
        return x
    u = UINT[x.dtype.itemsize]
    nan = np.array([np.nan], np.float64).astype(x.dtype).view(u)[0]
    sign = u(1) << u(8 * x.dtype.itemsize - 1)
    extra = np.array([nan | u(1), (nan | u(3)) | sign, nan | sign], u).view(x.dtype)
    return np.concatenate([x, extra])


# ---------------------------------------------------------------- values
@pytest.mark.req("RELU-R1", "RELU-R3")
class TestValues:
    @pytest.mark.parametrize("name", TYPES)
    def test_reference_meets_the_element_spec_on_edge_values(self, name):
        x = with_payload_nans(name)
        y = relu_op.relu_reference(from_numpy(x))
        assert y.shape == x.shape and y.dtype == name
        bad = [(v, r) for v, r in zip(from_numpy(x).data, y.data) if not relu_op.result_ok(name, v, r)]
        assert bad == []

    @pytest.mark.parametrize("name", TYPES)
    def test_fast_equals_reference_on_edge_values(self, name):
        x = with_payload_nans(name)
        assert_same_bits(sonnx.relu(x), reference(x))

    @pytest.mark.parametrize("name", FLOATS)
    def test_a_nan_is_returned_bit_for_bit(self, name):
        """The kernel's promise beyond the spec's "NaN gives NaN": the input NaN itself."""
        x = with_payload_nans(name)
        nan = np.isnan(x.astype(np.float64))
        assert nan.sum() >= 4
        assert np.array_equal(bits(sonnx.relu(x))[nan], bits(x)[nan])

    @pytest.mark.parametrize("name", FLOATS)
    def test_every_zero_result_is_plus_zero(self, name):
        x = with_payload_nans(name)
        y = sonnx.relu(x).astype(np.float64)
        assert (y >= 0).sum() + np.isnan(y).sum() == y.size
        assert not np.signbit(y[y == 0]).any()

    def test_the_spec_page_examples(self):
        x = np.array([-2, -0.0, 0.0, 0.5, np.inf, -np.inf, np.nan, 1e-45, -1e-45], np.float32)
        want = np.array([0, 0, 0, 0.5, np.inf, 0, np.nan, 1e-45, 0], np.float32)
        assert_same_bits(sonnx.relu(x), want)
        assert_same_bits(reference(x), want)
        assert not np.signbit(sonnx.relu(x)[:3]).any()
        ints = np.array([-128, -1, 0, 1, 127], np.int8)
        assert_same_bits(sonnx.relu(ints), np.array([0, 0, 0, 1, 127], np.int8))
        for name in ("int8", "int16", "int32", "int64"):      # the integer minimum gives 0
            lo = np.iinfo(dtypes.numpy_dtype(name)).min
            assert sonnx.relu(np.array([lo], dtypes.numpy_dtype(name)))[0] == 0

    def test_the_element_spec_can_fail(self):
        """result_ok rejects -0 for -0, 0 for a NaN, -1 for -1, x for +inf's 0, a wrapped value."""
        ok = relu_op.result_ok
        assert not ok("float", -0.0, -0.0)
        assert not ok("float", 0.0, -0.0)
        assert not ok("float", float("nan"), 0.0)
        assert not ok("float", -1.0, -1.0)
        assert not ok("float", 2.0, 0.0)
        assert not ok("float", -1.0, float("nan"))
        assert not ok("float", float("inf"), 0.0)
        assert not ok("int8", -128, -128)
        assert not ok("int8", 5, 0)
        assert ok("float", -0.0, 0.0) and ok("float", float("nan"), float("nan")) and ok("int8", -128, 0)

    def test_fast_equals_reference_on_drawn_arrays(self):
        @settings(max_examples=200, deadline=None)
        @given(data=st.data())
        def check(data):
            name = data.draw(st.sampled_from(TYPES))
            shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
            x = data.draw(_bit_pattern_arrays(name, shape))
            y = sonnx.relu(x)
            assert y.shape == x.shape and y.dtype == x.dtype
            assert_same_bits(y, reference(x))
        check()

    @pytest.mark.parametrize("name", ["float16", "bfloat16"])
    def test_every_half_value(self, name):
        """All 65536 bit patterns: kernel = reference, the reference meets the spec, and the
        result is the input (x > 0 or NaN) or +0, bit for bit."""
        x = every_half(name)
        y = sonnx.relu(x)
        assert_same_bits(y, reference(x))
        with np.errstate(invalid="ignore"):     # casting bfloat16 NaNs warns
            wide = x.astype(np.float64)
        keep = (wide > 0) | np.isnan(wide)
        assert np.array_equal(bits(y)[keep], bits(x)[keep])
        assert (bits(y)[~keep] == 0).all()
        data = from_numpy(x).data
        assert all(relu_op.result_ok(name, v, r) for v, r in zip(data, from_numpy(y).data))

    def test_result_is_a_fresh_array_of_the_same_shape(self):
        x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
        x0 = x.copy()
        y = sonnx.relu(x)
        assert isinstance(y, np.ndarray) and y.shape == (2, 3) and not np.shares_memory(x, y)
        assert np.array_equal(x, x0)
        scalar = sonnx.relu(np.array(-2.0))
        assert type(scalar) is np.ndarray and scalar.shape == () and scalar.dtype == np.float64
        assert_same_bits(scalar, reference(np.array(-2.0)))

    def test_views_and_byte_order_are_values_not_layouts(self):
        x = (np.arange(12, dtype=np.int32) - 6).reshape(3, 4).T      # non-contiguous view
        assert_same_bits(sonnx.relu(x), reference(np.ascontiguousarray(x)))
        big = np.arange(-3, 3, dtype=">f4")
        y = sonnx.relu(big)
        assert y.dtype == np.dtype(np.float32)
        assert_same_bits(y, reference(big.astype(np.float32)))

    def test_onnx_ships_one_relu_case(self):
        assert onnx_cases("Relu", same_shape=True) == ["test_relu"]

    def test_onnx_node_case(self):
        case = _onnx_cases()["test_relu"]
        for inputs, outputs in case.data_sets:
            got = sonnx.relu(*inputs, opset=case.model.opset_import[0].version)
            assert_same_bits(got, np.asarray(outputs[0]))

    @pytest.mark.parametrize("name", TYPES)
    def test_a_model_of_the_operator_conforms(self, name):
        report = sonnx.validate(_model([2, 3], name))
        assert report.error is None and report.findings == [] and report.conforms


# ---------------------------------------------------------------- other implementations
def _model(shape, elem: str = "float", opset: int = 14, **attrs):
    from onnx import TensorProto, helper
    t = getattr(TensorProto, elem.upper())
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu", **attrs)], "g",
                              [helper.make_tensor_value_info("x", t, shape)],
                              [helper.make_tensor_value_info("y", t, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _onnxruntime(x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    model = _model(list(x.shape), dtypes.name_of(x.dtype))
    try:
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime has no CPU kernel for some types
        if "NOT_IMPLEMENTED" in str(exc) or "Could not find an implementation" in str(exc):
            pytest.skip(f"onnxruntime has no CPU Relu for {dtypes.name_of(x.dtype)}")
        raise
    return sess.run(None, {"x": x})[0]


def _onnx_reference(x: np.ndarray) -> np.ndarray:
    from onnx.reference import ReferenceEvaluator
    with np.errstate(invalid="ignore"):
        return ReferenceEvaluator(_model(list(x.shape), dtypes.name_of(x.dtype))).run(None, {"x": x})[0]


def _compare(theirs: np.ndarray, x: np.ndarray, minus_zero: str) -> None:
    """``theirs`` equals sonnx.relu(x) bit for bit (a NaN matching any NaN) except at -0, where
    it is ``minus_zero`` ("-0" or "+0") as spec/relu.md records."""
    ours = sonnx.relu(x)
    neg_zero = bits(x) == bits(np.array([-0.0]).astype(x.dtype))[0]
    if dtypes.is_float(dtypes.name_of(x.dtype)):
        assert neg_zero.any()
        want = np.array([-0.0 if minus_zero == "-0" else 0.0]).astype(x.dtype)
        assert (bits(theirs)[neg_zero] == bits(want)[0]).all()
    assert_same_bits(theirs[~neg_zero], ours[~neg_zero])


# onnxruntime 1.32 CPU keeps -0 in every float type it runs; spec/relu.md "Where other
# implementations differ"
@pytest.mark.req("RELU-R3")
@pytest.mark.parametrize("name", TYPES)
def test_agrees_with_onnxruntime_except_minus_zero(name):
    x = with_payload_nans(name)
    _compare(_onnxruntime(x), x, "-0")


@pytest.mark.req("RELU-R3")
@pytest.mark.parametrize("name", ["float16"])
def test_agrees_with_onnxruntime_on_every_half_value(name):
    x = every_half(name)
    _compare(_onnxruntime(x), x, "-0")


@pytest.mark.req("RELU-R3")
def test_onnxruntime_float16_nans_lose_their_payload_keep_their_sign():
    """spec/relu.md's table: onnxruntime's float16 Relu gives the default quiet NaN of the input's
    sign; sonnx.relu returns the input NaN itself. Both are NaN, which is all RELU-R3 asks."""
    x = np.array([0x7E01, 0xFE03, 0x7E00, 0xFE00], np.uint16).view(np.float16)
    assert np.array_equal(bits(_onnxruntime(x)), np.array([0x7E00, 0xFE00, 0x7E00, 0xFE00], np.uint16))
    assert np.array_equal(bits(sonnx.relu(x)), bits(x))


# onnx.reference is np.maximum(x, 0): -0 kept in float16 only (numpy's float16 loop)
@pytest.mark.req("RELU-R3")
@pytest.mark.parametrize("name", TYPES)
def test_agrees_with_onnx_reference_except_float16_minus_zero(name):
    x = with_payload_nans(name)
    _compare(_onnx_reference(x), x, "-0" if name == "float16" else "+0")


@pytest.mark.req("RELU-R3")
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_agrees_with_onnx_reference_on_every_half_value(name):
    x = every_half(name)
    _compare(_onnx_reference(x), x, "-0" if name == "float16" else "+0")


@pytest.mark.req("RELU-R3")
def test_the_comparison_can_fail():
    """_compare catches a kernel that keeps -0 when +0 is expected, and a wrong value elsewhere."""
    x = with_payload_nans("float")
    kept = np.where(bits(x) == bits(np.array([-0.0], np.float32))[0], x, sonnx.relu(x))
    with pytest.raises(AssertionError):
        _compare(kept, x, "+0")
    wrong = sonnx.relu(x).copy()
    wrong[np.isnan(x)] = 0
    with pytest.raises(AssertionError):
        _compare(wrong, x, "+0")


# ---------------------------------------------------------------- refusals
@pytest.mark.req("RELU-R1", "RELU-R2", "RELU-R4", "PROF-R2")
class TestRefusals:
    @staticmethod
    def refused(x, **kw) -> sonnx.ProfileViolation:
        with pytest.raises(sonnx.ProfileViolation) as info:
            sonnx.relu(x, **kw)
        assert isinstance(info.value, ValueError)
        return info.value

    def test_type_set_follows_the_opset(self):
        """Every numeric type at every opset: accepted exactly when the version in force has it."""
        for opset in range(1, 29):
            allowed = relu_op.TYPE_SETS[relu_op.OPERATOR.since_version(opset)]
            for name in sorted(dtypes.NUMERIC_TYPES):
                x = np.ones(3, dtypes.numpy_dtype(name))
                if name in allowed:
                    assert sonnx.relu(x, opset=opset).dtype == x.dtype
                else:
                    assert self.refused(x, opset=opset).requirement == "RELU-R2", (opset, name)

    def test_refusals_say_what_to_do(self):
        assert "drop the node" in str(self.refused(np.ones(3, np.uint8)))
        assert "opset 14" in str(self.refused(np.ones(3, np.int8), opset=13))

    @pytest.mark.parametrize("dt", [np.bool_, np.complex64, object, "U3", ml_dtypes.float8_e4m3fn,
                                    np.longdouble, "datetime64[s]", np.uint64])
    def test_non_profile_element_types_are_refused(self, dt):
        assert self.refused(np.zeros(2, dtype=dt)).requirement == "RELU-R2"

    def test_sparse_input_is_refused(self):
        from onnx import SparseTensorProto
        err = self.refused(SparseTensorProto())
        assert err.requirement == "RELU-R1" and "dense" in str(err)
        found = relu_op.OPERATOR.constraints((TensorSig(None, None, sparse=True),), {}, 14)
        assert [v.requirement for v in found] == ["RELU-R1"]

    @pytest.mark.parametrize("shape", [(0,), (2, 0)])
    def test_empty_tensors_are_refused(self, shape):
        assert self.refused(np.ones(shape, np.float32)).requirement == "PROF-R2"
        with pytest.raises(sonnx.ProfileViolation) as info:
            relu_op.relu_reference(from_numpy(np.ones(shape, np.float32)))
        assert info.value.requirement == "PROF-R2"

    def test_reference_refuses_what_the_kernel_refuses(self):
        with pytest.raises(sonnx.ProfileViolation) as info:
            relu_op.relu_reference(from_numpy(np.ones(3, np.uint8)))
        assert info.value.requirement == "RELU-R2"

    @pytest.mark.parametrize("bad", [[1.0, -2.0], 3.0, np.float32(2), None, "abc"])
    def test_non_arrays_raise_type_error(self, bad):
        with pytest.raises(TypeError, match="sonnx.relu: X must be a numpy.ndarray"):
            sonnx.relu(bad)

    def test_masked_arrays_raise_type_error(self):
        with pytest.raises(TypeError, match="mask"):
            sonnx.relu(np.ma.masked_array([1.0, -2.0], mask=[0, 1]))

    @pytest.mark.parametrize("opset", ["14", None, 14.0, True])
    def test_a_non_integer_opset_raises_type_error(self, opset):
        with pytest.raises(TypeError, match="sonnx.relu: opset must be an integer"):
            sonnx.relu(np.ones(2, np.float32), opset=opset)

    @pytest.mark.parametrize("opset", [0, 29, 10**9])
    def test_an_opset_outside_the_range_is_refused(self, opset):
        assert self.refused(np.ones(2, np.float32), opset=opset).requirement == "PROF-R3"

    def test_refusals_are_not_remembered(self):
        """The memo keeps accepted calls only: a refused signature is refused every time, and
        an accepted one stays accepted after a refusal (the verdict of a fresh process)."""
        clear_memos()
        for _ in range(2):
            assert self.refused(np.ones(2, np.int8), opset=13).requirement == "RELU-R2"
            assert sonnx.relu(np.ones(2, np.int8), opset=14).dtype == np.int8
            assert sonnx.relu(np.ones(2, np.int8), opset=np.int64(14)).dtype == np.int8
            assert self.refused(np.ones(2, np.int8), opset=np.int64(13)).requirement == "RELU-R2"

    def test_consumed_inputs_of_relu_1_is_refused(self):
        sig = TensorSig((2, 3), "float")
        found = relu_op.OPERATOR.constraints((sig,), {"consumed_inputs": (0,)}, 1)
        assert [v.requirement for v in found] == ["RELU-R4"] and "opset 6" in found[0].message
        assert relu_op.OPERATOR.constraints((sig,), {}, 1) == []

    def test_the_validator_reports_the_operators_rules(self):
        rules = lambda m: [f.rule for f in sonnx.validate(m).findings]   # noqa: E731
        assert rules(_model([2, 3], opset=1, consumed_inputs=[0])) == ["RELU-R4"]
        assert rules(_model([2, 3], opset=1)) == []
        assert rules(_model([2, 3], opset=6)) == []
        assert rules(_model([2, 3], "int8", opset=13)) == ["ONNX-INFERENCE", "RELU-R2"]
        assert rules(_model([2, 3], "int8", opset=14)) == []
        assert rules(_model([2, 3], "uint8")) == ["ONNX-INFERENCE", "RELU-R2"]
        assert rules(_model(["N", 3])) == ["PROF-R2"] * 2

    def test_unknown_dimensions_are_left_to_prof_r2(self):
        for shape in [("N", 3), (None, 3), None]:
            assert relu_op.OPERATOR.constraints((TensorSig(shape, "float"),), {}, 14) == []


@pytest.mark.req("RELU-R1", "RELU-R3")
def test_onnx_ships_a_pytorch_relu_model_that_conforms_and_runs():
    """onnx's backend data holds PyTorch's exported ReLU: it conforms, and sonnx.relu gives its
    expected output on its test data."""
    from pathlib import Path

    import onnx
    from onnx import numpy_helper
    folder = Path(onnx.__file__).parent / "backend" / "test" / "data" / "pytorch-converted" / "test_ReLU"
    report = sonnx.validate(folder / "model.onnx")
    assert report.findings == [] and report.conforms
    sets = sorted(folder.glob("test_data_set_*"))
    assert sets
    for data in sets:
        x = numpy_helper.to_array(onnx.load_tensor(str(data / "input_0.pb")))
        y = numpy_helper.to_array(onnx.load_tensor(str(data / "output_0.pb")))
        assert_same_bits(sonnx.relu(x), y)


# ---------------------------------------------------------------- any argument
def _verdict(x, opset) -> tuple:
    """What one call gives: ("ok", shape, dtype), ("refused", IDs) or ("TypeError", message)."""
    try:
        with np.errstate(all="ignore"):
            y = sonnx.relu(x, opset=opset)
    except sonnx.ProfileViolation as e:
        return ("refused", tuple(v.requirement for v in e.violations))
    except TypeError as e:
        assert str(e).startswith("sonnx.relu:"), e
        return ("TypeError", str(e))
    assert type(y) is np.ndarray and y.shape == np.shape(x)
    return ("ok", y.shape, y.dtype)


@pytest.mark.req("RELU-R1", "RELU-R2", "PROF-R3")
def test_any_argument_gives_a_result_or_a_clear_refusal_whatever_came_before():
    """Any x and any opset (test_arguments.py's odd values: wrong types, masked arrays, matrices,
    huge ints, failing reprs): a result, ProfileViolation or a sonnx TypeError, never another
    exception; and each call of a random sequence gets the verdict of a fresh process (the memo
    keeps accepted calls only; remembering a call before checking it makes this fail)."""
    from .test_arguments import any_value, arrays

    opsets = st.one_of(st.integers(-2, 30), any_value)

    @settings(max_examples=150, deadline=None)
    @given(calls=st.lists(st.tuples(st.one_of(arrays, any_value), opsets), min_size=1, max_size=6))
    def check(calls):
        calls = calls + calls           # every call again, after the others: the memo at work
        clear_memos()
        seen = [_verdict(x, o) for x, o in calls]
        for (x, o), verdict in zip(calls, seen):
            clear_memos()
            assert _verdict(x, o) == verdict
    check()
