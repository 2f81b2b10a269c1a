"""The suite every same-shape element-wise operator gets (ops/elementwise.py): its numpy kernel
against its reference kernel and the reference against the element's spec, on edge values, on
drawn arrays and on every float16/bfloat16 value; its refusals; ONNX's node cases; onnxruntime.

An operator joins with two short classes at the end of this file (its values, its refusals),
each carrying the operator's requirement IDs as literal markers, which the trace reads.
``test_every_elementwise_operator_has_the_suite`` fails when a registered operator built on the
element-wise layer has no classes here.
"""
from __future__ import annotations

import os
import warnings
from functools import lru_cache

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import sonnx
from sonnx import dtypes
from sonnx.ops import add as add_op, div as div_op, elementwise, mul as mul_op, sub as sub_op
from sonnx.ops.registry import Operator, operator, operators
from sonnx.ops.signature import TensorSig
from sonnx.semantics.tensor import FULL_CONTRACTS, from_numpy, to_numpy

from .conftest import assert_same_bits, cross

HALF_FORMATS = {  # name: (dtype, precision p with the hidden bit, emin of the normals, largest finite)
    "float16": (np.float16, 11, -14, 65504.0),
    "bfloat16": (ml_dtypes.bfloat16, 8, -126, float.fromhex("0x1.FEp127")),
}
# Every 127th bit pattern of x (516 values: each exponent, varied significands, both signs)
# against all 65536 y in CI; SONNX_HALF_STRIDE=1 runs all 2^32 pairs per format (minutes).
STRIDE = int(os.environ.get("SONNX_HALF_STRIDE", "127"))


def round_once(v: np.ndarray, p: int, emin: int, vmax: float) -> np.ndarray:
    """RNE of float64 values to precision p with gradual underflow below 2^emin, written with
    integer rounding (np.rint of an exactly scaled value), independent of numpy's half types."""
    out = v.copy()
    fin = np.isfinite(v) & (v != 0)
    w = v[fin]
    _, e = np.frexp(w)                              # w = m * 2^e, 0.5 <= |m| < 1
    q = np.maximum(e - p, emin - p + 1)             # exponent of the quantum (fixed below 2^emin)
    r = np.ldexp(np.rint(np.ldexp(w, -q)), q)       # scaling by 2^-q is exact; rint ties to even
    r = np.where(np.abs(r) > vmax, np.copysign(np.inf, w), r)
    r = np.where(r == 0, np.copysign(0.0, w), r)    # an underflow to zero keeps the sign
    out[fin] = r
    return out


def half_mismatches(kernel, wide_op, name: str, round_fn=round_once, stride: int = STRIDE) -> list:
    """The pairs (x, y) where ``kernel`` differs from ``wide_op`` in float64 rounded once to the
    16-bit format ``name`` (at most 10); x runs over every stride-th bit pattern, y over all."""
    dt, p, emin, vmax = HALF_FORMATS[name]
    every = np.arange(65536, dtype=np.uint16).view(dt)
    with np.errstate(all="ignore"):
        wide = every.astype(np.float64)
        bad: list[tuple[float, float]] = []
        for i in range(0, 65536, stride):
            got = kernel(np.repeat(every[i:i + 1], 65536), every)
            want = round_fn(wide_op(wide[i], wide), p, emin, vmax).astype(dt)
            same = got.view(np.uint16) == want.view(np.uint16)
            nans = np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
            bad += [(float(every[i]), float(every[k])) for k in np.nonzero(~(same | nans))[0][:3]]
            if len(bad) >= 10:
                break
    return bad


@lru_cache(maxsize=1)
def _onnx_cases() -> dict:
    from onnx.backend.test.case.node import collect_testcases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases(None)
    return {c.name: c for c in cases if len(c.model.graph.node) == 1}


def onnx_cases(op: str, same_shape: bool) -> list[str]:
    """ONNX's node cases of ``op`` whose inputs have (or have not) one shape."""
    out = []
    for name, case in _onnx_cases().items():
        if case.model.graph.node[0].op_type == op:
            shapes = {np.asarray(x).shape for x in case.data_sets[0][0]}
            if (len(shapes) == 1) == same_shape:
                out.append(name)
    return sorted(out)


def _bit_pattern_arrays(name: str, shape):
    dt = dtypes.numpy_dtype(name)
    if dtypes.is_float(name):
        uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
        return hnp.arrays(uint, shape).map(lambda x: x.view(dt))
    return hnp.arrays(dt, shape)


class Suite:
    """An operator's class sets ``op`` (its registry record) and the element spec."""

    op: Operator

    @property
    def all_types(self) -> list[str]:
        return sorted(self.op.type_sets[self.op.versions[-1]])

    def pytest_generate_tests(self, metafunc):
        # the parameters come from the operator's record: its type sets, ONNX's cases of it
        if "name" in metafunc.fixturenames:
            metafunc.parametrize("name", self.all_types)
        if "half" in metafunc.fixturenames:
            metafunc.parametrize("half", sorted(HALF_FORMATS))
        if "case" in metafunc.fixturenames:
            metafunc.parametrize("case", onnx_cases(self.op.name, same_shape="refused" not in metafunc.function.__name__))

    def kernel(self, a, b, **kw):
        return self.op.kernel(a, b, **kw)

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return to_numpy(self.op.reference(from_numpy(a), from_numpy(b)))

    def refused(self, a, b, **kw) -> sonnx.ProfileViolation:
        with pytest.raises(sonnx.ProfileViolation) as info:
            self.kernel(a, b, **kw)
        assert isinstance(info.value, ValueError)
        return info.value

    def rid(self, k: int) -> str:
        return f"{self.op.prefix}-R{k}"


class Values(Suite):
    """R1 and R3: what the kernels compute. ``element_spec(T, x, y, r)`` is the operator's
    statement of one result (e.g. mul.product_ok); ``wide`` its numpy function, exact or
    innocuously double-rounded in float64 for 16-bit floats."""

    element_spec = staticmethod(lambda dtype, x, y, r: False)
    wide = staticmethod(lambda x, y: None)

    def test_reference_meets_the_element_spec_on_edge_values(self, name):
        a, b = cross(name)
        c = self.op.reference(from_numpy(a), from_numpy(b))
        ta, tb = from_numpy(a), from_numpy(b)
        bad = [(x, y, r) for x, y, r in zip(ta.data, tb.data, c.data) if not self.element_spec(name, x, y, r)]
        assert bad == []

    def test_fast_equals_reference_on_edge_values(self, name):
        a, b = cross(name)
        assert_same_bits(self.kernel(a, b), self.reference(a, b))
        assert_same_bits(self.kernel(b, a), self.reference(b, a))

    def test_fast_equals_reference_on_drawn_arrays(self):
        # a function of its own per operator: hypothesis refuses one test method run from
        # several classes (its examples database would mix them)
        @settings(max_examples=200, deadline=None)
        @given(data=st.data())
        def check(data):
            name = data.draw(st.sampled_from(self.all_types))
            shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
            a, b = data.draw(_bit_pattern_arrays(name, shape)), data.draw(_bit_pattern_arrays(name, shape))
            c = self.kernel(a, b)
            assert c.shape == a.shape and c.dtype == a.dtype
            assert_same_bits(c, self.reference(a, b))
        check()

    def test_every_half_value_against_the_reference(self, half):
        """All 65536 bit patterns of a 16-bit float against a handful of other operands."""
        dt = dtypes.numpy_dtype(half)
        a = np.arange(2**16, dtype=np.uint16).view(dt)
        for m in [1.0, -1.0, 0.5, 3.0, 1.0 / 3.0, 1e-3, 255.0, 0.0, -0.0]:
            b = np.full(a.shape, m, dtype=np.float64).astype(dt)
            assert_same_bits(self.kernel(a, b), self.reference(a, b))

    def test_every_half_pair_is_rounded_once(self, half):
        assert half_mismatches(self.kernel, self.wide, half) == []

    def test_the_half_pair_check_can_fail(self):
        """With bfloat16's minimum exponent off by one the check's rounding differs on subnormal
        results: the same loop must then report mismatches."""
        def wrong(v, p, emin, vmax):
            return round_once(v, p, emin + 1, vmax)
        assert half_mismatches(self.kernel, self.wide, "bfloat16", wrong, stride=1)

    def test_result_is_a_fresh_array_of_the_same_shape(self):
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        b = np.full((2, 3), 2, dtype=np.float32)
        a0, b0 = a.copy(), b.copy()
        c = self.kernel(a, b)
        assert isinstance(c, np.ndarray) and c.shape == (2, 3) and c.flags.c_contiguous
        assert np.array_equal(a, a0) and np.array_equal(b, b0)
        scalar = self.kernel(np.array(2.0), np.array(3.0))
        assert type(scalar) is np.ndarray and scalar.shape == ()
        assert_same_bits(scalar, self.reference(np.array(2.0), np.array(3.0)))

    def test_views_and_byte_order_are_values_not_layouts(self):
        a = np.arange(12, dtype=np.int32).reshape(3, 4).T            # non-contiguous view
        b = np.arange(12, dtype=">i4").reshape(4, 3)                  # big-endian, same type
        c = self.kernel(a, b)
        assert c.dtype == np.dtype(np.int32)
        assert_same_bits(c, self.reference(np.ascontiguousarray(a), b.astype(np.int32)))

    def test_onnx_node_case(self, case):
        model = _onnx_cases()[case].model
        for inputs, outputs in _onnx_cases()[case].data_sets:
            got = self.kernel(*inputs, opset=model.opset_import[0].version)
            assert_same_bits(got, np.asarray(outputs[0]))

    def test_a_model_of_the_operator_conforms(self, name):
        """End to end through the validator: one node of every type of the latest version."""
        report = sonnx.validate(_model(self.op.name, [2, 3], [2, 3], name))
        assert report.error is None and report.findings == [] and report.conforms

    def test_agrees_with_onnxruntime(self, name):
        a, b = cross(name)
        try:
            expected = _onnxruntime(self.op.name, name, a, b)
        except Exception as exc:  # onnxruntime has no CPU kernel for some types
            if "NOT_IMPLEMENTED" in str(exc) or "Could not find an implementation" in str(exc):
                pytest.skip(f"onnxruntime has no CPU {self.op.name} for {name}")
            raise
        assert_same_bits(self.kernel(a, b), expected)


def _onnxruntime(op: str, name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    import onnxruntime as ort
    from onnx import TensorProto, helper
    elem = getattr(TensorProto, name.upper())
    graph = helper.make_graph(
        [helper.make_node(op, ["A", "B"], ["C"])], op.lower(),
        [helper.make_tensor_value_info("A", elem, a.shape), helper.make_tensor_value_info("B", elem, b.shape)],
        [helper.make_tensor_value_info("C", elem, a.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {"A": a, "B": b})[0]


def _model(op: str, shape_a, shape_b, elem: str = "float", opset: int = 14, **attrs):
    from onnx import TensorProto, helper
    t = getattr(TensorProto, elem.upper())
    graph = helper.make_graph([helper.make_node(op, ["a", "b"], ["c"], name=op.lower(), **attrs)], "g",
                              [helper.make_tensor_value_info("a", t, shape_a),
                               helper.make_tensor_value_info("b", t, shape_b)],
                              [helper.make_tensor_value_info("c", t, shape_a)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


class Refusals(Suite):
    """R1..R4 and PROF-R2: what the kernels, the reference and the constraints refuse."""

    @pytest.mark.parametrize("shape_b", [(3,), (1, 3), (), (2, 1), (1,), (1, 1, 3)])
    def test_broadcastable_shapes_are_refused(self, shape_b):
        err = self.refused(np.ones((2, 3), np.float32), np.ones(shape_b, np.float32))
        assert err.requirement == self.rid(4)
        assert "broadcast" in str(err) and "expand" in str(err)

    @pytest.mark.parametrize("shape_b", [(3, 2), (4,), (2, 3, 2), (2, 4)])
    def test_incompatible_shapes_are_refused(self, shape_b):
        assert self.refused(np.ones((2, 3), np.float32), np.ones(shape_b, np.float32)).requirement == self.rid(1)

    def test_legacy_broadcast_attribute_is_refused(self):
        """Versions 1 and 6 have a ``broadcast`` attribute; the profile accepts only 0 (absent)."""
        sig = TensorSig((2, 3), "float")
        for opset in (1, 6):
            found = self.op.constraints((sig, sig), {"broadcast": 1}, opset)
            assert [v.requirement for v in found] == [self.rid(4)]
            assert self.op.constraints((sig, sig), {"broadcast": 0}, opset) == []
            assert self.op.constraints((sig, sig), {}, opset) == []

    def test_legacy_consumed_inputs_attribute_is_refused(self):
        """Version 1 has an in-place hint ``consumed_inputs``; the spec page allows no attribute."""
        sig = TensorSig((2, 3), "float")
        for value in ((0,), (0, 1), ()):
            found = self.op.constraints((sig, sig), {"consumed_inputs": value}, 1)
            assert [v.requirement for v in found] == [self.rid(4)]
            assert "consumed_inputs" in found[0].message and "remove it" in found[0].message

    def test_onnx_node_case_refused(self, case):
        inputs, _ = _onnx_cases()[case].data_sets[0]
        assert self.refused(*inputs).requirement in (self.rid(1), self.rid(4))

    @pytest.mark.parametrize("a_type,b_type", [(np.float32, np.float64), (np.int32, np.float32),
                                               (np.int8, np.uint8), (np.int32, np.int64)])
    def test_mixed_element_types_are_refused_not_cast(self, a_type, b_type):
        err = self.refused(np.ones(3, a_type), np.ones(3, b_type))
        assert err.requirement == self.rid(3) and "cast" in str(err)

    @pytest.mark.parametrize("dt", [np.bool_, np.complex64, np.complex128, object, "U3", "S3",
                                    ml_dtypes.float8_e4m3fn, np.longdouble, "datetime64[s]"])
    def test_non_profile_element_types_are_refused(self, dt):
        a = np.zeros(2, dtype=dt)
        assert self.refused(a, a.copy()).requirement == self.rid(3)

    def test_type_set_follows_the_opset(self):
        """Every numeric type at every opset: accepted exactly when the version in force has it."""
        for opset in range(1, 29):
            allowed = self.op.type_sets[self.op.since_version(opset)]
            for name in sorted(dtypes.NUMERIC_TYPES):
                x = np.ones(3, dtypes.numpy_dtype(name))
                if name in allowed:
                    assert self.kernel(x, x, opset=opset).dtype == x.dtype
                else:
                    assert self.refused(x, x, opset=opset).requirement == self.rid(3), (opset, name)

    def test_sparse_inputs_are_refused(self):
        from onnx import SparseTensorProto
        err = self.refused(SparseTensorProto(), np.ones(3, np.float32))
        assert err.requirement == self.rid(2) and "dense" in str(err)
        found = self.op.constraints((TensorSig(None, None, sparse=True), TensorSig((3,), "float")), {}, 14)
        assert [v.requirement for v in found] == [self.rid(2)]

    @pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 0)])
    def test_empty_tensors_are_refused(self, shape):
        assert self.refused(np.ones(shape, np.float32), np.ones(shape, np.float32)).requirement == "PROF-R2"
        with pytest.raises(sonnx.ProfileViolation) as info:
            self.op.reference(from_numpy(np.ones(shape, np.float32)), from_numpy(np.ones(shape, np.float32)))
        assert info.value.requirement == "PROF-R2"

    def test_unknown_dimensions_are_left_to_prof_r2(self):
        """The constraints compare static shapes only: an unknown or symbolic shape is PROF-R2's,
        which the validator reports where the tensor is defined."""
        for shape in [("N", 3), (None, 3), None]:
            assert self.op.constraints((TensorSig(shape, "float"), TensorSig((2, 3), "float")), {}, 14) == []

    def test_all_violations_are_reported_together(self):
        err = self.refused(np.ones((2, 3), np.float32), np.ones((4,), np.float64))
        assert [v.requirement for v in err.violations] == [self.rid(3), self.rid(1)]

    @pytest.mark.parametrize("bad", [[1.0, 2.0], 3.0, np.float32(2), None, "abc", (1, 2)])
    def test_non_arrays_raise_type_error(self, bad):
        with pytest.raises(TypeError, match="numpy.ndarray"):
            self.kernel(bad, np.ones(2, np.float32))
        with pytest.raises(TypeError, match="numpy.ndarray"):
            self.kernel(np.ones(2, np.float32), bad)

    def test_masked_arrays_raise_type_error(self):
        m = np.ma.masked_array([1.0, 2.0], mask=[0, 1])
        with pytest.raises(TypeError, match="mask"):
            self.kernel(m, m)

    def test_the_validator_reports_the_operators_rules(self):
        rules = lambda m: [f.rule for f in sonnx.validate(m).findings]   # noqa: E731
        assert rules(_model(self.op.name, [2, 3], [3])) == [self.rid(4)]
        # onnx's own inference refuses the shapes first; the operator's rule is still reported
        assert rules(_model(self.op.name, [2, 3], [3, 2])) == ["ONNX-INFERENCE", self.rid(1)]
        assert rules(_model(self.op.name, [2, 3], [2, 3], "int8", opset=13)) == [
            "ONNX-INFERENCE", self.rid(3), self.rid(3)]
        assert rules(_model(self.op.name, [2, 3], [2, 3], opset=6, broadcast=1)) == [self.rid(4)]
        assert rules(_model(self.op.name, [2, 3], [2, 3], opset=1, consumed_inputs=[0])) == [self.rid(4)]
        assert rules(_model(self.op.name, ["N", 3], ["N", 3])) == ["PROF-R2"] * 3

    def test_reference_checks_its_constraints_once_per_call(self, monkeypatch):
        calls = []
        checked = elementwise.constraints
        monkeypatch.setattr(elementwise, "constraints", lambda *a, **k: calls.append(1) or checked(*a, **k))
        x = from_numpy(np.ones((2, 3), np.float32))
        self.op.reference(x, x)
        assert len(calls) == (2 if FULL_CONTRACTS else 1)     # the precondition repeats it for CrossHair

    def test_reference_refuses_what_the_kernel_refuses(self):
        a, b = from_numpy(np.ones((2, 3), np.float32)), from_numpy(np.ones((3,), np.float32))
        with pytest.raises(sonnx.ProfileViolation) as info:
            self.op.reference(a, b)
        assert info.value.requirement == self.rid(4)


def test_every_elementwise_operator_has_the_suite():
    built_here = {op.name for op in operators().values() if op.reference.__module__ == elementwise.__name__}
    assert built_here == {c.op.name for c in Values.__subclasses__()} == {c.op.name for c in Refusals.__subclasses__()}
    assert "Mul" in built_here


# ---------------------------------------------------------------- the operators
@pytest.mark.req("MUL-R1", "MUL-R3")
class TestMulValues(Values):
    op = operator("Mul")
    element_spec = staticmethod(mul_op.product_ok)
    wide = staticmethod(np.multiply)    # a product of two 16-bit floats is exact in float64


@pytest.mark.req("MUL-R1", "MUL-R2", "MUL-R3", "MUL-R4", "PROF-R2")
class TestMulRefusals(Refusals):
    op = operator("Mul")


@pytest.mark.req("ADD-R1", "ADD-R3")
class TestAddValues(Values):
    op = operator("Add")
    element_spec = staticmethod(add_op.sum_ok)
    # a sum of two float16 values is exact in float64; for bfloat16 it may be rounded once there
    # first, which is innocuous before the rounding to the 8-bit precision (53 >= 2 * 8 + 2)
    wide = staticmethod(np.add)


@pytest.mark.req("ADD-R1", "ADD-R2", "ADD-R3", "ADD-R4", "PROF-R2")
class TestAddRefusals(Refusals):
    op = operator("Add")


@pytest.mark.req("SUB-R1", "SUB-R3")
class TestSubValues(Values):
    op = operator("Sub")
    element_spec = staticmethod(sub_op.difference_ok)
    # as for Add: a difference of two float16 values is exact in float64, one of two bfloat16
    # values at worst rounded once there, innocuous before the rounding to T (53 >= 2 * 8 + 2)
    wide = staticmethod(np.subtract)

    def test_the_spec_page_examples(self):
        """spec/sub.md's table: A - B, not B - A; x - x = +0; -0 - +0 = -0; inf - inf = NaN."""
        a = np.array([5, 6, 12, np.inf, -0.0, 0.0, 1.5, -3e38], dtype=np.float32)
        b = np.array([3, 3, 5, np.inf, 0.0, -0.0, 1.5, 3e38], dtype=np.float32)
        want = np.array([2, 3, 7, np.nan, -0.0, 0.0, 0.0, -np.inf], dtype=np.float32)
        assert_same_bits(self.kernel(a, b), want)
        assert_same_bits(self.reference(a, b), want)
        ints = self.kernel(np.array([-128, 127], np.int8), np.array([1, -1], np.int8))
        assert_same_bits(ints, np.array([127, -128], np.int8))

    def test_the_element_spec_rejects_the_swapped_and_the_sign_lost(self):
        """difference_ok can fail: b - a, a zero of the wrong sign, a wrapped value off by one."""
        assert not sub_op.difference_ok("float", 5.0, 3.0, -2.0)
        assert not sub_op.difference_ok("float", -0.0, 0.0, 0.0)
        assert not sub_op.difference_ok("float", 1.5, 1.5, -0.0)
        assert not sub_op.difference_ok("float", np.inf, np.inf, np.inf)
        assert not sub_op.difference_ok("int8", -128, 1, -129)
        assert not sub_op.difference_ok("uint8", 0, 1, 254)
        assert sub_op.difference_ok("uint8", 0, 1, 255)


@pytest.mark.req("SUB-R1", "SUB-R2", "SUB-R3", "SUB-R4", "PROF-R2")
class TestSubRefusals(Refusals):
    op = operator("Sub")


def _nonzero_divisor(b: np.ndarray) -> np.ndarray:
    """B with every integer 0 replaced by 1: Div refuses an integer zero divisor (DIV-R5, tested
    in test_div.py), and the shared suite draws integers freely. Floats are left as they are:
    x / 0 is IEEE's, and tested here."""
    b = np.asarray(b)
    if dtypes.is_float(dtypes.name_of(b.dtype)):
        return b
    return np.where(b == 0, np.ones_like(b), b)


@pytest.mark.req("DIV-R1", "DIV-R3", "DIV-R5")
class TestDivValues(Values):
    op = operator("Div")
    element_spec = staticmethod(div_op.quotient_ok)
    # the float64 quotient of two 16-bit floats is rounded once there; innocuous before the
    # rounding to T, since 53 >= 2 * 11 + 2 (Figueroa 1995)
    wide = staticmethod(np.divide)

    def kernel(self, a, b, **kw):
        return self.op.kernel(a, _nonzero_divisor(b), **kw)

    def reference(self, a, b):
        return to_numpy(self.op.reference(from_numpy(a), from_numpy(_nonzero_divisor(b))))

    def test_reference_meets_the_element_spec_on_edge_values(self, name):
        a, b = cross(name)
        b = _nonzero_divisor(b)
        c = self.op.reference(from_numpy(a), from_numpy(b))
        ta, tb = from_numpy(a), from_numpy(b)
        bad = [(x, y, r) for x, y, r in zip(ta.data, tb.data, c.data) if not self.element_spec(name, x, y, r)]
        assert bad == []

    def test_agrees_with_onnxruntime(self, name):
        a, b = cross(name)
        b = _nonzero_divisor(b)      # onnxruntime's integer division by zero is a crash,
        if dtypes.is_signed(name) and not dtypes.is_float(name):   # and so is its int64 INT_MIN / -1
            b = np.where((a == np.iinfo(a.dtype).min) & (b == -1), np.ones_like(b), b)
        try:
            expected = _onnxruntime(self.op.name, name, a, b)
        except Exception as exc:  # onnxruntime has no CPU kernel for some types
            if "NOT_IMPLEMENTED" in str(exc) or "Could not find an implementation" in str(exc):
                pytest.skip(f"onnxruntime has no CPU {self.op.name} for {name}")
            raise
        assert_same_bits(self.kernel(a, b), expected)

    def test_the_element_spec_rejects_floored_and_wrong_signs(self):
        """quotient_ok can fail: a floored integer quotient, a zero divisor, a zero or an
        infinity of the wrong sign, a quotient not rounded to nearest."""
        assert not div_op.quotient_ok("int8", -7, 2, -4)
        assert div_op.quotient_ok("int8", -7, 2, -3)
        assert not div_op.quotient_ok("int8", 1, 0, 0)
        assert div_op.quotient_ok("int8", -128, -1, -128)
        assert not div_op.quotient_ok("float", -0.0, 5.0, 0.0)
        assert not div_op.quotient_ok("float", 1.0, -0.0, np.inf)
        assert not div_op.quotient_ok("float", 1.0, 3.0, float(np.nextafter(np.float32(1 / 3), np.float32(1))))


@pytest.mark.req("DIV-R1", "DIV-R2", "DIV-R3", "DIV-R4", "PROF-R2")
class TestDivRefusals(Refusals):
    op = operator("Div")


@pytest.mark.req("ADD-R1", "ADD-R3")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bound_add_takes_the_c_entry_chosen_once_with_the_same_bits(dtype, monkeypatch):
    """A bound float Add calls the proved C entry resolved at bind time (no per-call record
    lookup), on a read-only constant operand too, with the bits of the unbound kernel; an operand
    in the other byte order goes through the unbound path (numpy's ufunc), never the C on
    swapped bytes."""
    from sonnx import c_kernels
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 50)).astype(dtype)
    b = rng.standard_normal((3, 50)).astype(dtype)
    b.flags.writeable = False                      # as a graph constant
    bound = operator("Add").bind(a, b)
    monkeypatch.setattr(c_kernels, "default_entry", lambda *args: pytest.fail("looked up per call"))
    got = bound(a, b)
    monkeypatch.undo()
    assert_same_bits(got, sonnx.add(a, b))
    swapped = b.astype(b.dtype.newbyteorder(">" if b.dtype.byteorder != ">" else "<"))
    assert_same_bits(bound(a, swapped), sonnx.add(a, b))
