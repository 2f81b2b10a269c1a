"""Flatten (ops/flatten.py): type sets against onnx's schemas, the axis rule of every version,
the kernels against each other, onnx.reference and onnxruntime bit for bit (NaN payloads and -0
included), the copy (never a view), and the validator and run on one-node models and on an MLP
exported from PyTorch with a Flatten at its input.

The MLP models in test_flatten_data/ were exported with torch 2.13.0+cpu (onnx 1.23.2) from
nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 4)) after
torch.manual_seed(0), input (2, 3, 4), ``torch.onnx.export(..., dynamo=False,
opset_version=13 / 17, input_names=["x"], output_names=["y"])``: Flatten(axis=1), Gemm, Relu,
Gemm. The dynamo exporter (opset 18) writes a Reshape instead of the Flatten (PROF-R1).
"""
from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import sonnx
from sonnx.ops import kernel
from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import flatten as flatten_op
from sonnx.ops import registry
from sonnx.ops.registry import operators
from sonnx.ops.kernel import clear_memos
from sonnx.ops.signature import TensorSig
from sonnx.semantics.tensor import TensorValue, from_numpy, to_numpy

DATA = Path(__file__).parent / "test_flatten_data"
OPSETS = (1, 9, 11, 13, 21, 23, 24, 25)          # one opset per Flatten version
TYPES = sorted(flatten_op.TYPE_SETS[flatten_op.LATEST])
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SHAPES = ((), (5,), (2, 3), (2, 3, 4), (1, 2, 1, 3))


def example(name: str, version: int) -> tuple[list, dict]:
    """A call Flatten accepts at ``version`` on type ``name`` (tests/ops/test_every_operator.py):
    a (2, 3, 2) input flattened at axis 1 (the axis is always written: FLATTEN-R1)."""
    n = 12
    x = (np.arange(n) - n // 2 if dtypes.is_float(name) or dtypes.is_signed(name) else np.arange(n))
    return [x.astype(np.float64).astype(dtypes.numpy_dtype(name)).reshape(2, 3, 2)], {"axis": 1}


def bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(UINT[x.dtype.itemsize])


def assert_bits(got: np.ndarray, expected: np.ndarray) -> None:
    """Same dtype (byte order aside), shape and every bit: NaN payloads and signs compared."""
    assert got.dtype.newbyteorder("=") == expected.dtype.newbyteorder("="), (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    native = expected.astype(expected.dtype.newbyteorder("="))
    assert np.array_equal(bits(got.astype(got.dtype.newbyteorder("="))), bits(native))


def values(name: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Random bit patterns of ``name`` (every NaN payload, -0 and subnormal possible), with
    NaNs of both signs with payloads and both zeros planted for float types."""
    n = math.prod(shape)
    dt = dtypes.numpy_dtype(name)
    raw = np.random.default_rng(seed).integers(0, 2**63, size=n, dtype=np.uint64)
    x = raw.astype(UINT[dt.itemsize]).view(dt).copy()
    if dtypes.is_float(name) and n >= 4:
        u = UINT[dt.itemsize]
        sign = u(1) << u(8 * dt.itemsize - 1)
        nan = np.array([np.nan], np.float64).astype(dt).view(u)[0]
        x.view(u)[:4] = np.array([nan | u(1), nan | u(3) | sign, sign, u(1)], u)   # NaNs, -0, subnormal
    return x.reshape(shape)


def node_model(elem: str, shape, axis: object = 1, opset: int = flatten_op.LATEST, out_shape=None) -> onnx.ModelProto:
    code = getattr(TensorProto, elem.upper())
    x = helper.make_tensor_value_info("x", code, list(shape))
    if out_shape is None:
        a = axis + len(shape) if isinstance(axis, int) and axis < 0 else axis
        a = a if isinstance(a, int) and 0 <= a <= len(shape) else 1
        out_shape = [math.prod(shape[:a]), math.prod(shape[a:])]
    y = helper.make_tensor_value_info("y", code, out_shape)
    attrs = {} if axis is None else {"axis": axis}
    node = helper.make_node("Flatten", ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "flatten", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def ids(err: ProfileViolation) -> set[str]:
    return {v.requirement for v in err.violations}


# ---------------------------------------------------------------- type sets
@pytest.mark.req("FLATTEN-R2")
class TestTypes:
    @pytest.mark.parametrize("version", sorted(flatten_op.TYPE_SETS))
    def test_type_set_is_the_schemas_restricted_to_the_profile_types(self, version):
        schema = onnx.defs.get_schema("Flatten", version)
        assert schema.since_version == version
        allowed = {s[len("tensor("):-1] for s in schema.type_constraints[0].allowed_type_strs}
        assert flatten_op.TYPE_SETS[version] == allowed & dtypes.NUMERIC_TYPES
        assert registry.type_set("Flatten", version) == flatten_op.TYPE_SETS[version]

    def test_every_schema_version_is_known(self):
        seen = {onnx.defs.get_schema("Flatten", v).since_version for v in range(1, onnx.defs.onnx_opset_version() + 1)}
        assert seen == set(flatten_op.TYPE_SETS)

    @pytest.mark.parametrize("opset", OPSETS)
    @pytest.mark.parametrize("name", sorted(dtypes.NUMERIC_TYPES))
    def test_kernel_accepts_exactly_the_version_set(self, opset, name):
        x = values(name, (2, 3))
        version = registry.since_version("Flatten", opset)
        if name in flatten_op.TYPE_SETS[version]:
            assert flatten_op.flatten(x, axis=1, opset=opset).shape == (2, 3)
        else:
            with pytest.raises(ProfileViolation) as e:
                flatten_op.flatten(x, axis=1, opset=opset)
            assert ids(e.value) == {"FLATTEN-R2"}

    @pytest.mark.parametrize("elem", ["bool", "string", "complex64", "float8e4m3fn", "int4", "uint2"])
    def test_types_outside_the_profile_are_refused(self, elem):
        found = flatten_op.constraints(TensorSig((2, 3), elem), opset=25, axis=1)
        assert [v.requirement for v in found] == ["FLATTEN-R2"]

    def test_bool_array_refused_by_the_kernel(self):
        with pytest.raises(ProfileViolation) as e:
            flatten_op.flatten(np.ones((2, 3), bool), axis=1)
        assert ids(e.value) == {"FLATTEN-R2"}

    def test_sparse_and_unknown_type_refused(self):
        assert [v.requirement for v in flatten_op.constraints(TensorSig(None, None, sparse=True), opset=25, axis=1)] \
            == ["FLATTEN-R2"]
        assert [v.requirement for v in flatten_op.constraints(TensorSig((2,), None), opset=25, axis=0)] == ["FLATTEN-R2"]

    def test_no_flatten_before_opset_1(self):
        assert [v.requirement for v in flatten_op.constraints(TensorSig((2,), "float"), opset=0, axis=0)] == ["FLATTEN-R2"]


# ---------------------------------------------------------------- axis
@pytest.mark.req("FLATTEN-R1")
class TestAxis:
    @pytest.mark.parametrize("opset", (1, 9, 11, 25))
    @pytest.mark.parametrize("rank", range(5))
    def test_accepted_exactly_in_the_version_range(self, opset, rank):
        shape = tuple(range(2, 2 + rank))
        x = values("float", shape)
        lo = -rank if opset >= 11 else 0
        for axis in range(-rank - 2, rank + 3):
            if lo <= axis <= rank:
                a = axis + rank if axis < 0 else axis
                y = flatten_op.flatten(x, axis=axis, opset=opset)
                assert y.shape == (math.prod(shape[:a]), math.prod(shape[a:]))
            else:
                with pytest.raises(ProfileViolation) as e:
                    flatten_op.flatten(x, axis=axis, opset=opset)
                assert ids(e.value) == {"FLATTEN-R1"}, axis

    def test_negative_axis_before_11_names_the_way_out(self):
        with pytest.raises(ProfileViolation) as e:
            flatten_op.flatten(values("float", (2, 3)), axis=-1, opset=9)
        assert "opset 11" in str(e.value)

    def test_omitted_axis_refused(self):
        found = flatten_op.constraints(TensorSig((2, 3), "float"), opset=25, axis=None)
        assert [v.requirement for v in found] == ["FLATTEN-R1"]
        assert "axis=1" in found[0].message

    @pytest.mark.parametrize("axis", [1.0, True, "1"])
    def test_non_integer_axis(self, axis):
        assert [v.requirement for v in flatten_op.constraints(TensorSig((2, 3), "float"), opset=25, axis=axis)] \
            == ["FLATTEN-R1"]
        with pytest.raises(TypeError):
            flatten_op.flatten(values("float", (2, 3)), axis=axis)

    def test_axis_is_keyword_only_and_required(self):
        with pytest.raises(TypeError):
            flatten_op.flatten(values("float", (2, 3)))      # no default axis
        with pytest.raises(TypeError):
            flatten_op.flatten(values("float", (2, 3)), 1)

    def test_numpy_integer_axis(self):
        assert flatten_op.flatten(values("int8", (2, 3, 4)), axis=np.int64(2)).shape == (6, 4)

    def test_memo_keeps_verdicts(self):
        clear_memos()
        x = values("float", (2, 3))
        assert flatten_op.flatten(x, axis=1).shape == (2, 3)
        assert flatten_op.flatten(x, axis=1).shape == (2, 3)
        with pytest.raises(ProfileViolation):
            flatten_op.flatten(x, axis=3)
        assert flatten_op.flatten(x, axis=0).shape == (1, 6)


# ---------------------------------------------------------------- values
@pytest.mark.req("FLATTEN-R3")
class TestValues:
    @pytest.mark.parametrize("name", TYPES)
    @pytest.mark.parametrize("shape", SHAPES, ids=str)
    def test_kernel_reference_and_numpy_reshape_agree(self, name, shape):
        x = values(name, shape, seed=len(shape))
        for axis in range(-len(shape), len(shape) + 1):
            y = flatten_op.flatten(x, axis=axis)
            a = axis + len(shape) if axis < 0 else axis
            expected = x.reshape(math.prod(shape[:a]), math.prod(shape[a:]))
            assert_bits(y, expected)
            ref = flatten_op.flatten_reference(from_numpy(x), axis)
            assert ref.shape == expected.shape and ref.dtype == name
            assert all(kernel.same_bits(name, p, q) for p, q in zip(ref.data, from_numpy(x).data))
            assert flatten_op._every_element_moved(from_numpy(x), axis, ref)

    def test_element_check_catches_a_column_major_copy(self):
        x = from_numpy(np.arange(6, dtype=np.int32).reshape(2, 3))
        wrong = TensorValue("int32", (2, 3), list(np.arange(6).reshape(2, 3).T.reshape(-1).tolist()))
        assert not flatten_op._every_element_moved(x, 1, wrong)

    def test_same_bits_tells_nan_payloads_and_zero_signs(self):
        assert not kernel.same_bits("double", 0.0, -0.0)
        p = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]
        assert not kernel.same_bits("double", math.nan, p) and kernel.same_bits("double", p, p)

    def test_result_is_a_copy_never_a_view(self):
        x = values("float", (2, 3, 4))
        kept = x.copy()
        y = flatten_op.flatten(x, axis=1)
        assert not np.shares_memory(x, y) and y.flags.c_contiguous and y.flags.writeable
        y[...] = 7.0
        assert_bits(x, kept)

    @pytest.mark.parametrize("name", ["float", "int16", "bfloat16"])
    def test_strided_and_byte_swapped_inputs(self, name):
        base = values(name, (4, 3, 2))
        for x in (base.transpose(2, 0, 1), base[::-1, :, ::2], np.asfortranarray(base)):
            assert_bits(flatten_op.flatten(x, axis=2), np.ascontiguousarray(x).reshape(math.prod(x.shape[:2]), -1))
        if name != "bfloat16":
            swapped = base.astype(base.dtype.newbyteorder(">"))
            y = flatten_op.flatten(swapped, axis=1)
            assert y.dtype == base.dtype                       # this machine's byte order
            assert_bits(y, base.reshape(4, 6))

    def test_bind_gives_the_same_bits(self):
        x = values("double", (2, 3, 4))
        fn = flatten_op.bind(x, axis=-2, opset=13)
        assert_bits(fn(x), x.reshape(2, 12))
        with pytest.raises(ProfileViolation):
            flatten_op.bind(x, axis=-2, opset=9)

    def test_reference_refuses_like_the_kernel(self):
        x = from_numpy(values("float", (2, 3)))
        with pytest.raises(ProfileViolation) as e:
            flatten_op.flatten_reference(x, 5)
        assert ids(e.value) == {"FLATTEN-R1"}
        assert to_numpy(flatten_op.flatten_reference(x, 0)).shape == (1, 6)


# ---------------------------------------------------------------- other implementations
def _cases():
    for opset in OPSETS:
        version = registry.since_version("Flatten", opset)
        for name in sorted(flatten_op.TYPE_SETS[version]):
            yield pytest.param(opset, name, id=f"{opset}-{name}")


@pytest.mark.req("FLATTEN-R3")
@pytest.mark.parametrize("opset,name", list(_cases()))
def test_agrees_with_onnx(opset, name):
    """onnx.reference and onnxruntime give the same shape and bits as sonnx, NaN payloads and -0
    included, for every version, every type of its set and every axis of a rank-3 input."""
    from onnx.reference import ReferenceEvaluator
    shape = (2, 3, 4)
    x = values(name, shape, seed=opset)
    lo = -3 if opset >= 11 else 0
    for axis in range(lo, 4):
        model = node_model(name, shape, axis, opset)
        ours = flatten_op.flatten(x, axis=axis, opset=opset)
        assert_bits(ReferenceEvaluator(model).run(None, {"x": x})[0], ours)
        assert_bits(_onnxruntime(model, x, ours.shape), ours)


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
@pytest.mark.req("FLATTEN-R1", "FLATTEN-R2", "FLATTEN-R3")
class TestValidate:
    def test_registered(self):
        op = operators()["Flatten"]
        assert op is flatten_op.OPERATOR and op.kind == "structural" and op.prefix == "FLATTEN"

    @pytest.mark.parametrize("opset", OPSETS)
    def test_one_node_model_conforms_and_runs(self, opset):
        model = node_model("float", (2, 3, 4), 2, opset)
        report = sonnx.validate(model)
        assert report.conforms, [str(f) for f in report.findings]
        x = values("float", (2, 3, 4))
        for mode in ("exact", "fast"):
            assert_bits(sonnx.run(model, {"x": x}, mode=mode)["y"], x.reshape(6, 4))

    def test_omitted_axis_is_a_finding(self):
        report = sonnx.validate(node_model("float", (2, 3), None))
        assert [f.rule for f in report.findings] == ["FLATTEN-R1"]

    @pytest.mark.parametrize("axis,opset", [(4, 25), (-1, 9), (-4, 13)])
    def test_axis_out_of_range_is_a_finding(self, axis, opset):
        # ONNX's own inference rejects the same axes (its ranges are the ones FLATTEN-R1 states)
        report = sonnx.validate(node_model("float", (2, 3, 4), axis, opset))
        assert [f.rule for f in report.findings] == ["ONNX-INFERENCE", "FLATTEN-R1"]

    @pytest.mark.parametrize("axis,opset", [(3, 25), (-3, 11), (0, 1)])
    def test_axis_at_the_ends_conforms(self, axis, opset):
        assert sonnx.validate(node_model("float", (2, 3, 4), axis, opset)).conforms

    def test_type_outside_the_version_is_a_finding(self):
        report = sonnx.validate(node_model("int8", (2, 3), 1, 8))
        assert "FLATTEN-R2" in [f.rule for f in report.findings]

    @pytest.mark.parametrize("path", sorted(DATA.glob("mlp_flatten_*.onnx")), ids=lambda p: p.name)
    def test_exported_mlp_conforms_after_conform_and_runs(self, path):
        from sonnx.conform.api import conform
        raw = sonnx.validate(str(path))
        assert set(raw.rules()) == {"GEMM-R4"}            # only the biases of shape (N,)
        assert [n.op_type for n in onnx.load(str(path)).graph.node] == ["Flatten", "Gemm", "Relu", "Gemm"]
        fixed, record = conform(str(path), check=False)
        assert record["conforms"]
        x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
        y = sonnx.run(fixed, {"x": x})["y"]
        import onnxruntime as ort
        expected = ort.InferenceSession(fixed.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        assert y.shape == (2, 4)
        # Gemm's exact mode may differ from onnxruntime's within GEMM-R7's bound; fast is BLAS
        np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.req("FLATTEN-R1", "FLATTEN-R2", "FLATTEN-R3")
def test_spec_block_is_generated_from_the_data():
    """spec/flatten.md's requirements block is the data file's requirements, one line each."""
    from sonnx import requirements
    text = (Path(__file__).parents[2] / "spec" / "flatten.md").read_text(encoding="utf-8")
    block = text.split("<!-- generated: requirements -->\n", 1)[1].split("<!-- end generated -->", 1)[0]
    expected = "".join(f"- **[{r.id}] {r.title}.** {r.statement}\n"
                       for r in requirements.load().values() if r.id.startswith("FLATTEN-"))
    assert block == expected
