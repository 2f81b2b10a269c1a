"""Reshape (ops/reshape.py): type sets against onnx's schemas, the resolution of 0 and -1 and
allowzero against an independent statement, every refusal with its ID, the kernels against each
other, numpy, onnx.reference and onnxruntime bit for bit (NaN payloads and -0 included) for every
version and type, and the validator, conform and run (with --compare) on one-node models."""
from __future__ import annotations

import itertools
import math
import struct
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import sonnx
from sonnx.ops import kernel
from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import registry
from sonnx.ops import reshape as reshape_op
from sonnx.ops.kernel import clear_memos
from sonnx.ops.registry import operators
from sonnx.ops.signature import NotConstant, TensorSig
from sonnx.semantics.tensor import TensorValue, from_numpy, to_numpy

OPSETS = (1, 5, 13, 14, 19, 21, 23, 24, 25)          # one opset per Reshape version
TYPES = sorted(reshape_op.TYPE_SETS[reshape_op.LATEST])
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def example(name: str, version: int) -> tuple[list, dict]:
    """A call Reshape accepts at ``version`` on type ``name`` (tests/ops/test_every_operator.py):
    a (2, 3, 2) input reshaped to (3, 4) by (3, -1): the attribute for Reshape-1, the constant
    int64 input from Reshape-5 (no 0 entry, so allowzero decides nothing and stays omitted)."""
    n = 12
    x = (np.arange(n) - n // 2 if dtypes.is_float(name) or dtypes.is_signed(name) else np.arange(n))
    data = x.astype(np.float64).astype(dtypes.numpy_dtype(name)).reshape(2, 3, 2)
    if version >= reshape_op.SHAPE_INPUT_FROM:
        return [data, np.array([3, -1], dtype=np.int64)], {}
    return [data, None], {"shape": [3, -1]}


def bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(UINT[x.dtype.itemsize])


def assert_bits(got: np.ndarray, expected: np.ndarray) -> None:
    """Same dtype (byte order aside), shape and every bit: NaN payloads and signs compared."""
    assert got.dtype.newbyteorder("=") == expected.dtype.newbyteorder("="), (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    native = expected.astype(expected.dtype.newbyteorder("="))
    assert np.array_equal(bits(got.astype(got.dtype.newbyteorder("="))), bits(native))


def values(name: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Random bit patterns of ``name`` with NaNs of both signs with payloads, -0 and a subnormal
    planted for float types."""
    n = math.prod(shape)
    dt = dtypes.numpy_dtype(name)
    raw = np.random.default_rng(seed).integers(0, 2**63, size=n, dtype=np.uint64)
    x = raw.astype(UINT[dt.itemsize]).view(dt).copy()
    if dtypes.is_float(name) and n >= 4:
        u = UINT[dt.itemsize]
        sign = u(1) << u(8 * dt.itemsize - 1)
        nan = np.array([np.nan], np.float64).astype(dt).view(u)[0]
        x.view(u)[:4] = np.array([nan | u(1), nan | u(3) | sign, sign, u(1)], u)
    return x.reshape(shape)


def call(x: np.ndarray, shape, opset: int = reshape_op.LATEST, allowzero=None) -> np.ndarray:
    if opset >= reshape_op.SHAPE_INPUT_FROM:
        return reshape_op.reshape(x, np.array(shape, dtype=np.int64), allowzero=allowzero, opset=opset)
    return reshape_op.reshape(x, list(shape), opset=opset)


def node_model(elem: str, in_shape, shape, opset: int = reshape_op.LATEST, *, allowzero=None, out_shape=None,
               as_graph_input: bool = False, shape_type: int = TensorProto.INT64) -> onnx.ModelProto:
    """One Reshape node: the shape a constant initializer (from opset 5; a graph input with
    ``as_graph_input``), the attribute for opset 1-4."""
    code = getattr(TensorProto, elem.upper())
    x = helper.make_tensor_value_info("x", code, list(in_shape))
    if out_shape is None:
        out, _ = reshape_op.resolve(tuple(in_shape), tuple(shape), allowzero or 0)
        out_shape = list(out) if out is not None else None
    y = helper.make_tensor_value_info("y", code, out_shape)
    attrs = {} if allowzero is None else {"allowzero": allowzero}
    inits, inputs = [], [x]
    if opset >= reshape_op.SHAPE_INPUT_FROM:
        node = helper.make_node("Reshape", ["x", "shape"], ["y"], **attrs)
        if as_graph_input:
            inputs.append(helper.make_tensor_value_info("shape", TensorProto.INT64, [len(shape)]))
        else:
            inits.append(helper.make_tensor("shape", shape_type, [len(shape)], list(shape)))
    else:
        node = helper.make_node("Reshape", ["x"], ["y"], shape=list(shape), **attrs)
    graph = helper.make_graph([node], "reshape", inputs, [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def ids(err: ProfileViolation) -> set[str]:
    return {v.requirement for v in err.violations}


def expected_resolution(in_shape, shape, allowzero):
    """RESHAPE-R2 stated independently of the module: None when refused, else the shape."""
    n = math.prod(in_shape)
    if any(s < -1 for s in shape) or shape.count(-1) > 1 or (allowzero == 1 and 0 in shape):
        return None
    if any(s == 0 and i >= len(in_shape) for i, s in enumerate(shape)):
        return None
    out = [in_shape[i] if s == 0 else s for i, s in enumerate(shape)]
    if -1 in out:
        known = math.prod(s for s in out if s != -1)
        if known == 0 or n % known:
            return None
        out[out.index(-1)] = n // known
    return tuple(out) if math.prod(out) == n else None


# ---------------------------------------------------------------- type sets
@pytest.mark.req("RESHAPE-R3")
class TestTypes:
    @pytest.mark.parametrize("version", sorted(reshape_op.TYPE_SETS))
    def test_type_set_is_the_schemas_restricted_to_the_profile_types(self, version):
        schema = onnx.defs.get_schema("Reshape", version)
        assert schema.since_version == version
        allowed = {s[len("tensor("):-1] for s in schema.type_constraints[0].allowed_type_strs}
        assert reshape_op.TYPE_SETS[version] == allowed & dtypes.NUMERIC_TYPES

    def test_every_schema_version_is_known(self):
        seen = {onnx.defs.get_schema("Reshape", v).since_version for v in range(1, onnx.defs.onnx_opset_version() + 1)}
        assert seen == set(reshape_op.TYPE_SETS)

    @pytest.mark.parametrize("opset", OPSETS)
    @pytest.mark.parametrize("name", sorted(dtypes.NUMERIC_TYPES))
    def test_kernel_accepts_exactly_the_version_set(self, opset, name):
        x = values(name, (2, 3))
        version = registry.since_version("Reshape", opset)
        if name in reshape_op.TYPE_SETS[version]:
            assert call(x, (3, 2), opset).shape == (3, 2)
        else:
            with pytest.raises(ProfileViolation) as e:
                call(x, (3, 2), opset)
            assert ids(e.value) == {"RESHAPE-R3"}

    @pytest.mark.parametrize("elem", ["bool", "string", "complex64", "float8e4m3fn", "int4", "uint2"])
    def test_types_outside_the_profile_are_refused(self, elem):
        found = reshape_op.constraints(TensorSig((2, 3), elem), opset=25, shape=(6,))
        assert [v.requirement for v in found] == ["RESHAPE-R3"]

    def test_sparse_refused(self):
        found = reshape_op.constraints(TensorSig(None, None, sparse=True), opset=25, shape=(6,))
        assert [v.requirement for v in found] == ["RESHAPE-R3"]


# ---------------------------------------------------------------- the shape operand
@pytest.mark.req("RESHAPE-R1")
class TestShapeOperand:
    def test_not_constant_refused_with_the_way_out(self):
        found = reshape_op.constraints(TensorSig((2, 3), "float"), opset=13, shape=NotConstant("graph input 's'"))
        assert [v.requirement for v in found] == ["RESHAPE-R1"] and "sonnx conform" in found[0].message

    @pytest.mark.parametrize("opset", (1, 5, 25))
    def test_omitted_shape_refused(self, opset):
        found = reshape_op.constraints(TensorSig((2, 3), "float"), opset=opset, shape=None)
        assert [v.requirement for v in found] == ["RESHAPE-R1"]

    def test_shape_input_of_the_wrong_type_or_rank(self):
        x = TensorSig((2, 3), "float")
        for sig in (TensorSig((2,), "int32"), TensorSig((1, 2), "int64")):
            found = reshape_op.constraints(x, opset=13, shape=(3, 2), shape_sig=sig)
            assert [v.requirement for v in found] == ["RESHAPE-R1"]
        with pytest.raises(ProfileViolation) as e:
            reshape_op.reshape(values("float", (2, 3)), np.array([3, 2], np.int32))
        assert ids(e.value) == {"RESHAPE-R1"}

    @pytest.mark.parametrize("shape", [[3, 2], (3, 2), 6, "6", np.array([3.0, 2.0])])
    def test_non_array_shape_is_a_type_error_from_5(self, shape):
        with pytest.raises((TypeError, ProfileViolation)):
            reshape_op.reshape(values("float", (2, 3)), shape)

    def test_shape_attribute_after_5_and_consumed_inputs_refused(self):
        x = TensorSig((2, 3), "float")
        assert [v.requirement for v in reshape_op.node_constraints([x, TensorSig((2,), "int64")],
                {"input:shape": (3, 2), "shape": (3, 2)}, 13)] == ["RESHAPE-R1"]
        assert [v.requirement for v in reshape_op.node_constraints([x], {"shape": (3, 2), "consumed_inputs": (0,)}, 1)] \
            == ["RESHAPE-R1"]
        assert reshape_op.node_constraints([x], {"shape": (3, 2)}, 1) == []

    def test_memo_keeps_verdicts(self):
        clear_memos()
        x = values("float", (2, 3))
        assert call(x, (3, 2)).shape == (3, 2)
        assert call(x, (3, 2)).shape == (3, 2)
        with pytest.raises(ProfileViolation):
            call(x, (4, 2))
        assert call(x, (6,)).shape == (6,)


# ---------------------------------------------------------------- resolution of 0, -1, allowzero
@pytest.mark.req("RESHAPE-R2")
class TestResolve:
    @pytest.mark.parametrize("in_shape", [(2, 3, 4), (6,), (1, 1), (3, 0 + 1, 2)], ids=str)
    def test_every_short_shape_against_the_independent_statement(self, in_shape):
        """Every shape of length 0..3 over {-2, -1, 0, 1, 2, 3, 4, 6, 12, 24} with allowzero 0
        and 1: the module's verdict and shape are the independent statement's."""
        entries = (-2, -1, 0, 1, 2, 3, 4, 6, 12, 24)
        x = TensorSig(in_shape, "float")
        for length in range(4):
            for shape in itertools.product(entries, repeat=length):
                for allowzero in (0, 1):
                    want = expected_resolution(in_shape, list(shape), allowzero)
                    got, why = reshape_op.resolve(in_shape, shape, allowzero)
                    assert got == want, (in_shape, shape, allowzero, why)
                    found = reshape_op.constraints(x, opset=25, shape=shape, allowzero=allowzero)
                    assert (found == []) == (want is not None), (shape, allowzero, found)
                    assert all(v.requirement == "RESHAPE-R2" for v in found)
                    if want is not None:
                        assert call(values("float", in_shape), shape, allowzero=allowzero).shape == want
                        if all(s > 0 or s == -1 for s in shape):   # numpy's reading is the same
                            assert np.empty(in_shape).reshape(shape).shape == want

    @pytest.mark.parametrize("shape,why", [((-1, -1), "more than one -1"), ((5, -1), "not a multiple"),
                                           ((4, 4), "resolves to (4, 4)"), ((0, 0, 0, 0), "rank 3"),
                                           ((-3, 8), "below -1")])
    def test_refusals_say_why(self, shape, why):
        found = reshape_op.constraints(TensorSig((2, 3, 4), "float"), opset=13, shape=shape)
        assert [v.requirement for v in found] == ["RESHAPE-R2"] and why in found[0].message, found

    def test_minus_one_beside_a_zero_size_dimension(self):
        got, why = reshape_op.resolve((2, 3), (0, -1), 0)
        assert got == (2, 3)
        got, why = reshape_op.resolve((2, 3), (-1, 0), 1)
        assert got is None and "invalid" in why
        # a zero-size dimension cannot reach -1 under the profile (no empty input), but the
        # resolution still refuses it rather than divide by zero
        got, why = reshape_op.resolve((2, 3), (0, -1, 0), 0)
        assert got is None

    def test_allowzero_one_with_a_zero_is_refused(self):
        found = reshape_op.constraints(TensorSig((2, 3), "float"), opset=14, shape=(0, 3), allowzero=1)
        assert [v.requirement for v in found] == ["RESHAPE-R2"] and "empty tensor" in found[0].message

    @pytest.mark.parametrize("opset", (14, 19, 25))
    def test_omitted_allowzero_refused_only_where_it_decides(self, opset):
        x = TensorSig((2, 3, 4), "float")
        found = reshape_op.constraints(x, opset=opset, shape=(0, -1))
        assert [v.requirement for v in found] == ["RESHAPE-R2"]
        assert "write allowzero=0" in found[0].message and "(2, 12)" in found[0].message
        assert reshape_op.constraints(x, opset=opset, shape=(0, -1), allowzero=0) == []
        assert reshape_op.constraints(x, opset=opset, shape=(2, -1)) == []       # no 0: decides nothing
        assert reshape_op.constraints(x, opset=opset, shape=(2, -1), allowzero=1) == []

    @pytest.mark.parametrize("opset", (1, 5, 13))
    def test_before_14_zero_copies_and_allowzero_is_unknown(self, opset):
        x = TensorSig((2, 3, 4), "float")
        assert reshape_op.constraints(x, opset=opset, shape=(0, -1)) == []
        assert call(values("float", (2, 3, 4)), (0, -1), opset).shape == (2, 12)
        assert reshape_op.constraints(x, opset=opset, shape=(0, -1), allowzero=0) == []   # the only reading
        assert [v.requirement for v in reshape_op.constraints(x, opset=opset, shape=(0, -1), allowzero=1)] \
            == ["RESHAPE-R2"]

    @pytest.mark.parametrize("allowzero", [2, -1, 1.0, True, "0"])
    def test_allowzero_values(self, allowzero):
        found = reshape_op.constraints(TensorSig((2, 3), "float"), opset=25, shape=(6,), allowzero=allowzero)
        assert [v.requirement for v in found] == ["RESHAPE-R2"]

    def test_empty_shape_makes_a_scalar(self):
        assert call(values("float", (1, 1)), ()).shape == ()
        with pytest.raises(ProfileViolation):
            call(values("float", (2,)), ())


# ---------------------------------------------------------------- values
SHAPES = [((2, 3, 4), (4, -1)), ((2, 3, 4), (0, 0, 2, 2)), ((5,), (1, 5, 1)), ((1, 2, 1, 3), (-1,)), ((), (1, 1))]


@pytest.mark.req("RESHAPE-R4")
class TestValues:
    @pytest.mark.parametrize("name", TYPES)
    @pytest.mark.parametrize("in_shape,shape", SHAPES, ids=str)
    def test_kernel_reference_and_numpy_agree(self, name, in_shape, shape):
        x = values(name, in_shape, seed=len(in_shape))
        want = expected_resolution(in_shape, list(shape), 0)
        y = call(x, shape, allowzero=0)
        assert_bits(y, x.reshape(want))
        ref = reshape_op.reshape_reference(from_numpy(x), shape, 0)
        assert ref.shape == want and ref.dtype == name
        assert all(kernel.same_bits(name, p, q) for p, q in zip(ref.data, from_numpy(x).data))
        assert reshape_op._every_element_moved(from_numpy(x), ref)

    def test_element_check_catches_a_column_major_copy(self):
        x = from_numpy(np.arange(6, dtype=np.int32).reshape(2, 3))
        wrong = TensorValue("int32", (3, 2), np.arange(6).reshape(2, 3).T.reshape(-1).tolist())
        assert not reshape_op._every_element_moved(x, wrong)

    def test_same_bits_tells_nan_payloads_and_zero_signs(self):
        assert not kernel.same_bits("double", 0.0, -0.0)
        p = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]
        assert not kernel.same_bits("double", math.nan, p) and kernel.same_bits("double", p, p)

    def test_result_is_a_copy_never_a_view(self):
        x = values("float", (2, 3, 4))
        kept = x.copy()
        y = call(x, (6, 4))
        assert not np.shares_memory(x, y) and y.flags.c_contiguous and y.flags.writeable
        y[...] = 7.0
        assert_bits(x, kept)

    @pytest.mark.parametrize("name", ["float", "int16", "bfloat16"])
    def test_strided_and_byte_swapped_inputs(self, name):
        base = values(name, (4, 3, 2))
        for x in (base.transpose(2, 0, 1), base[::-1, :, ::2], np.asfortranarray(base)):
            assert_bits(call(x, (-1, 2)), np.ascontiguousarray(x).reshape(-1, 2))
        if name != "bfloat16":
            swapped = base.astype(base.dtype.newbyteorder(">"))
            y = call(swapped, (12, 2))
            assert y.dtype == base.dtype
            assert_bits(y, base.reshape(12, 2))

    def test_bind_gives_the_same_bits(self):
        x = values("double", (2, 3, 4))
        fn = reshape_op.bind(x, np.array([0, -1], np.int64), allowzero=0, opset=14)
        assert_bits(fn(x), x.reshape(2, 12))
        with pytest.raises(ProfileViolation):
            reshape_op.bind(x, np.array([0, -1], np.int64), opset=14)

    def test_reference_refuses_like_the_kernel(self):
        x = from_numpy(values("float", (2, 3)))
        with pytest.raises(ProfileViolation) as e:
            reshape_op.reshape_reference(x, (4, -1), 0)
        assert ids(e.value) == {"RESHAPE-R2"}
        assert to_numpy(reshape_op.reshape_reference(x, (-1,), 0)).shape == (6,)


# ---------------------------------------------------------------- other implementations
def _cases():
    for opset in OPSETS:
        version = registry.since_version("Reshape", opset)
        for name in sorted(reshape_op.TYPE_SETS[version]):
            yield pytest.param(opset, name, id=f"{opset}-{name}")


@pytest.mark.req("RESHAPE-R2", "RESHAPE-R4")
@pytest.mark.parametrize("opset,name", list(_cases()))
def test_agrees_with_onnx(opset, name):
    """onnx.reference and onnxruntime give the same shape and bits as sonnx, NaN payloads and -0
    included, for every version, every type of its set and shapes with 0 and -1 entries
    (from opset 5: neither runs Reshape-1, which is compared with numpy's reshape)."""
    from onnx.reference import ReferenceEvaluator
    in_shape = (2, 3, 4)
    x = values(name, in_shape, seed=opset)
    allowzero = 0 if opset >= reshape_op.ALLOWZERO_FROM else None
    for shape in ((4, -1), (0, -1), (0, 0, 2, 2), (-1,), (24, 1)):
        model = node_model(name, in_shape, shape, opset, allowzero=allowzero)
        ours = call(x, shape, opset, allowzero=allowzero)
        if opset >= reshape_op.SHAPE_INPUT_FROM:
            assert_bits(ReferenceEvaluator(model).run(None, {"x": x})[0], ours)
            assert_bits(_onnxruntime(model, x, ours.shape), ours)
        else:       # neither runs Reshape-1: numpy's C-order reshape, 0 copied by hand
            want = [in_shape[i] if s == 0 else s for i, s in enumerate(shape)]
            assert_bits(ours, x.reshape(want))


def _onnxruntime(model: onnx.ModelProto, x: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    """onnxruntime's output; bfloat16 (which its numpy bridge does not know) goes in and out as
    raw 16-bit patterns bound with the ONNX type, so every bit is compared."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    if x.dtype != dtypes.numpy_dtype("bfloat16"):
        return session.run(None, {"x": x})[0]
    out = np.zeros(out_shape, np.uint16)
    binding = session.io_binding()
    binding.bind_ortvalue_input("x", ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
        np.ascontiguousarray(x).view(np.uint16), TensorProto.BFLOAT16))
    binding.bind_ortvalue_output("y", ort.OrtValue.ortvalue_from_numpy_with_onnx_type(out, TensorProto.BFLOAT16))
    session.run_with_iobinding(binding)
    return out.view(x.dtype)


# ---------------------------------------------------------------- validate, conform, run
@pytest.mark.req("RESHAPE-R1", "RESHAPE-R2", "RESHAPE-R3", "RESHAPE-R4")
class TestValidate:
    def test_registered(self):
        op = operators()["Reshape"]
        assert op is reshape_op.OPERATOR and op.kind == "structural" and op.prefix == "RESHAPE"

    @pytest.mark.parametrize("opset", OPSETS)
    def test_one_node_model_conforms_and_runs(self, opset):
        allowzero = 0 if opset >= reshape_op.ALLOWZERO_FROM else None
        model = node_model("float", (2, 3, 4), (0, -1), opset, allowzero=allowzero)
        report = sonnx.validate(model)
        assert report.conforms, [str(f) for f in report.findings]
        x = values("float", (2, 3, 4))
        for mode in ("exact", "fast"):
            assert_bits(sonnx.run(model, {"x": x}, mode=mode)["y"], x.reshape(2, 12))

    def test_omitted_allowzero_with_a_zero_is_a_finding_stating_the_shape(self):
        report = sonnx.validate(node_model("float", (2, 3, 4), (0, -1), 14, out_shape=[2, 12]))
        assert [f.rule for f in report.findings] == ["RESHAPE-R2"]
        assert "(2, 12)" in report.findings[0].message

    def test_shape_as_graph_input_is_a_finding(self):
        report = sonnx.validate(node_model("float", (2, 3), (3, 2), 13, as_graph_input=True, out_shape=[3, 2]))
        assert [f.rule for f in report.findings] == ["RESHAPE-R1"]
        assert "graph input 'shape'" in report.findings[0].message

    def test_overridable_initializer_is_a_finding(self):
        """An initializer also listed as a graph input (IR < 4 style) is a default the caller
        may replace: not a constant."""
        model = node_model("float", (2, 3), (3, 2), 13)
        model.graph.input.append(helper.make_tensor_value_info("shape", TensorProto.INT64, [2]))
        report = sonnx.validate(model)
        assert "RESHAPE-R1" in [f.rule for f in report.findings]

    def test_shape_computed_by_a_node_is_a_finding(self):
        model = node_model("float", (2, 3), (3, 2), 13)
        g = model.graph
        g.initializer[0].name = "shape0"
        g.node.insert(0, helper.make_node("Relu", ["shape0"], ["shape"]))
        report = sonnx.validate(model)
        assert any(f.rule == "RESHAPE-R1" and "computed by a node" in f.message for f in report.findings)

    def test_constant_node_shape_conform_then_run(self):
        from sonnx.conform.api import conform
        model = node_model("float", (2, 3), (3, -1), 13)
        g = model.graph
        value = g.initializer.pop()
        g.node.insert(0, helper.make_node("Constant", [], ["shape"], value=value))
        report = sonnx.validate(model)
        assert {f.rule for f in report.findings} == {"PROF-R1", "RESHAPE-R1"}
        fixed, record = conform(model, check=True)
        assert record["conforms"], record
        x = values("float", (2, 3))
        assert_bits(sonnx.run(fixed, {"x": x})["y"], x.reshape(3, 2))

    def test_openvino_layer_not_mapped(self, tmp_path):
        """spec/reshape.md: the IR's Reshape layer is refused as outside the profile (its target
        is a Const whose values are in the weights file, which the reader never opens), one
        finding, no traceback."""
        from tests.validate.openvino_ir import binary
        path = tmp_path / "m.xml"
        path.write_bytes(binary("Reshape", [2, 3], [2], out=[3, 2], etypes=("f32", "i64"),
                                data={"special_zero": "false"}))
        report = sonnx.validate(str(path))
        assert report.error is None and [f.rule for f in report.findings] == ["PROF-R1"]
        assert "Reshape" in report.findings[0].message

    @pytest.mark.parametrize("opset", (1, 5, 14))
    def test_onnx_reference_with_sonnx_ops(self, opset):
        """onnx.reference running sonnx's kernel (sonnx.onnx_reference.new_ops): the shape reaches
        it as the attribute (opset 1) and as the initializer input (5 on), same bits."""
        import sonnx.onnx_reference
        from onnx.reference import ReferenceEvaluator
        x = values("double", (2, 3, 4))
        allowzero = 0 if opset >= 14 else None
        model = node_model("double", (2, 3, 4), (0, -1), opset, allowzero=allowzero)
        ev = ReferenceEvaluator(model, new_ops=sonnx.onnx_reference.new_ops())
        assert_bits(ev.run(None, {"x": x})[0], call(x, (0, -1), opset, allowzero=allowzero))

    def test_int32_shape_is_a_finding(self):
        report = sonnx.validate(node_model("float", (2, 3), (3, 2), 13, shape_type=TensorProto.INT32))
        assert "RESHAPE-R1" in [f.rule for f in report.findings]

    @pytest.mark.parametrize("shape,opset,allowzero", [((-1, -1), 13, None), ((4, 4), 25, None),
                                                       ((0, 3), 14, 1), ((0, -1), 14, 1), ((7, -1), 5, None)])
    def test_bad_shapes_are_findings(self, shape, opset, allowzero):
        report = sonnx.validate(node_model("float", (2, 3), shape, opset, allowzero=allowzero, out_shape=[6]))
        assert "RESHAPE-R2" in [f.rule for f in report.findings], [str(f) for f in report.findings]

    def test_type_outside_the_version_is_a_finding(self):
        report = sonnx.validate(node_model("int8", (2, 3), (6,), 1))
        assert "RESHAPE-R3" in [f.rule for f in report.findings]

    @pytest.mark.parametrize("opset", (5, 14, 25))
    def test_compare_with_onnxruntime(self, tmp_path, opset):
        from sonnx.cli import main
        model = node_model("float", (2, 3, 4), (0, 4, -1), opset, allowzero=0 if opset >= 14 else None)
        path = tmp_path / "reshape.onnx"
        onnx.save(model, path)
        np.save(tmp_path / "x.npy", values("float", (2, 3, 4)))
        assert main(["run", str(path), "--input", f"x={tmp_path / 'x.npy'}", "--compare", "onnxruntime",
                     "-o", str(tmp_path / "out")]) == 0


@pytest.mark.req("RESHAPE-R1", "RESHAPE-R2", "RESHAPE-R4")
@pytest.mark.parametrize("opset", (13, 18))
def test_exporter_shaped_mlp_conforms_after_conform_and_compares(tmp_path, opset):
    """An MLP as exporters write a Flatten-free input layer: a Constant node holds the target
    (0, -1) of a Reshape, then Gemm (bias (N,)) and Relu. validate names the Constant (PROF-R1),
    the Constant-fed shape (RESHAPE-R1); `sonnx conform` stores the Constant and the bias and,
    from opset 14, writes allowzero=0 (ONNX's default: RESHAPE-R2 refuses it omitted beside the
    0), and the result conforms and passes `sonnx run --compare onnxruntime`."""
    from sonnx.cli import main
    from sonnx.conform.api import conform
    rng = np.random.default_rng(0)
    w = rng.standard_normal((12, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)

    def model(allowzero):
        attrs = {} if allowzero is None else {"allowzero": allowzero}
        nodes = [helper.make_node("Constant", [], ["target"], value=numpy_helper.from_array(np.array([0, -1]), "t")),
                 helper.make_node("Reshape", ["x", "target"], ["flat"], **attrs),
                 helper.make_node("Gemm", ["flat", "w", "b"], ["h"]),
                 helper.make_node("Relu", ["h"], ["y"])]
        graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
                                  [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)

    raw = sonnx.validate(model(None))
    rules = {f.rule for f in raw.findings}
    assert {"PROF-R1", "RESHAPE-R1", "GEMM-R4"} <= rules
    fixed, record = conform(model(None), check=True)
    if opset >= 14:      # the allowzero omitted beside the 0: refused, and conform writes ONNX's default 0
        assert [r["requirement"] for r in record["rewrites"] if r["kind"] == "write-default"] == ["RESHAPE-R2"]
        [node] = [n for n in fixed.graph.node if n.op_type == "Reshape"]
        assert [(a.name, a.i) for a in node.attribute] == [("allowzero", 0)]
    assert record["conforms"] and record["check"]["status"] == "passed", record["findings"]
    path = tmp_path / "mlp.onnx"
    onnx.save(fixed, path)
    np.save(tmp_path / "x.npy", rng.standard_normal((2, 3, 4)).astype(np.float32))
    assert main(["run", str(path), "--input", f"x={tmp_path / 'x.npy'}", "--compare", "onnxruntime",
                 "-o", str(tmp_path / "out")]) == 0


@pytest.mark.req("RESHAPE-R1", "RESHAPE-R2", "RESHAPE-R3", "RESHAPE-R4")
def test_spec_block_is_generated_from_the_data():
    """spec/reshape.md's requirements block is the data file's requirements, one line each."""
    from sonnx import requirements
    text = (Path(__file__).parents[2] / "spec" / "reshape.md").read_text(encoding="utf-8")
    block = text.split("<!-- generated: requirements -->\n", 1)[1].split("<!-- end generated -->", 1)[0]
    expected = "".join(f"- **[{r.id}] {r.title}.** {r.statement}\n"
                       for r in requirements.load().values() if r.id.startswith("RESHAPE-"))
    assert block == expected
