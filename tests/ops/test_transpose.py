"""Transpose (ops/transpose.py): type sets against onnx's schemas, the perm rule, the kernels
against each other, numpy, onnx.reference and onnxruntime bit for bit (NaN payloads and -0
included), the copy (never a view), and the validator and run on one-node models.
"""
from __future__ import annotations

import itertools
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
from sonnx.ops import registry
from sonnx.ops import transpose as transpose_op
from sonnx.ops.kernel import clear_memos
from sonnx.ops.registry import operators
from sonnx.ops.signature import TensorSig
from sonnx.semantics.tensor import TensorValue, from_numpy, to_numpy

OPSETS = (1, 13, 21, 23, 24, 25)          # one opset per Transpose version
TYPES = sorted(transpose_op.TYPE_SETS[transpose_op.LATEST])
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SHAPES = ((), (5,), (2, 3), (2, 3, 4), (1, 2, 1, 3), (2, 1, 3, 2, 2))


def example(name: str, version: int) -> tuple[list, dict]:
    """A call Transpose accepts at ``version`` on type ``name`` (tests/ops/test_every_operator.py):
    a (2, 3, 2) input with perm (2, 0, 1) (the perm is always written: TRANSPOSE-R1)."""
    n = 12
    x = (np.arange(n) - n // 2 if dtypes.is_float(name) or dtypes.is_signed(name) else np.arange(n))
    return [x.astype(np.float64).astype(dtypes.numpy_dtype(name)).reshape(2, 3, 2)], {"perm": (2, 0, 1)}


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


def node_model(elem: str, shape, perm: object, opset: int = transpose_op.LATEST, out_shape=None) -> onnx.ModelProto:
    code = getattr(TensorProto, elem.upper())
    x = helper.make_tensor_value_info("x", code, list(shape))
    if out_shape is None:
        ok = isinstance(perm, (list, tuple)) and sorted(perm) == list(range(len(shape)))
        out_shape = [shape[p] for p in perm] if ok else list(shape)[::-1]
    y = helper.make_tensor_value_info("y", code, out_shape)
    attrs = {} if perm is None else {"perm": list(perm)}
    node = helper.make_node("Transpose", ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "transpose", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def ids(err: ProfileViolation) -> set[str]:
    return {v.requirement for v in err.violations}


# ---------------------------------------------------------------- type sets
@pytest.mark.req("TRANSPOSE-R2")
class TestTypes:
    @pytest.mark.parametrize("version", sorted(transpose_op.TYPE_SETS))
    def test_type_set_is_the_schemas_restricted_to_the_profile_types(self, version):
        schema = onnx.defs.get_schema("Transpose", version)
        assert schema.since_version == version
        allowed = {s[len("tensor("):-1] for s in schema.type_constraints[0].allowed_type_strs}
        assert transpose_op.TYPE_SETS[version] == allowed & dtypes.NUMERIC_TYPES
        assert registry.type_set("Transpose", version) == transpose_op.TYPE_SETS[version]

    def test_every_schema_version_is_known(self):
        seen = {onnx.defs.get_schema("Transpose", v).since_version for v in range(1, onnx.defs.onnx_opset_version() + 1)}
        assert seen == set(transpose_op.TYPE_SETS)

    @pytest.mark.parametrize("opset", OPSETS)
    @pytest.mark.parametrize("name", sorted(dtypes.NUMERIC_TYPES))
    def test_kernel_accepts_exactly_the_version_set(self, opset, name):
        x = values(name, (2, 3))
        version = registry.since_version("Transpose", opset)
        if name in transpose_op.TYPE_SETS[version]:
            assert transpose_op.transpose(x, perm=(1, 0), opset=opset).shape == (3, 2)
        else:
            with pytest.raises(ProfileViolation) as e:
                transpose_op.transpose(x, perm=(1, 0), opset=opset)
            assert ids(e.value) == {"TRANSPOSE-R2"}

    @pytest.mark.parametrize("elem", ["bool", "string", "complex64", "float8e4m3fn", "int4", "uint2"])
    def test_types_outside_the_profile_are_refused(self, elem):
        found = transpose_op.constraints(TensorSig((2, 3), elem), opset=25, perm=[1, 0])
        assert [v.requirement for v in found] == ["TRANSPOSE-R2"]

    def test_bool_array_refused_by_the_kernel(self):
        with pytest.raises(ProfileViolation) as e:
            transpose_op.transpose(np.ones((2, 3), bool), perm=[1, 0])
        assert ids(e.value) == {"TRANSPOSE-R2"}

    def test_sparse_and_unknown_type_refused(self):
        assert [v.requirement for v in transpose_op.constraints(TensorSig(None, None, sparse=True), opset=25,
                                                                perm=[0])] == ["TRANSPOSE-R2"]
        assert [v.requirement for v in transpose_op.constraints(TensorSig((2,), None), opset=25, perm=[0])] \
            == ["TRANSPOSE-R2"]

    def test_bfloat16_before_13_names_the_way_out(self):
        found = transpose_op.constraints(TensorSig((2,), "bfloat16"), opset=12, perm=[0])
        assert [v.requirement for v in found] == ["TRANSPOSE-R2"] and "opset 13" in found[0].message


# ---------------------------------------------------------------- perm
@pytest.mark.req("TRANSPOSE-R1")
class TestPerm:
    @pytest.mark.parametrize("rank", range(5))
    def test_accepted_exactly_on_permutations(self, rank):
        """Every perm of length 0..4 with entries in [-1, 4]: accepted iff a permutation."""
        shape = tuple(range(2, 2 + rank))
        x = values("float", shape)
        for n in range(5):
            for perm in itertools.product(range(-1, 5), repeat=n):
                found = transpose_op.constraints(TensorSig(shape, "float"), opset=25, perm=list(perm))
                if sorted(perm) == list(range(rank)):
                    assert found == [], perm
                else:
                    assert [v.requirement for v in found] == ["TRANSPOSE-R1"], perm
        for perm in itertools.permutations(range(rank)):
            assert transpose_op.transpose(x, perm=perm).shape == tuple(shape[p] for p in perm)

    @pytest.mark.parametrize("perm,why", [((0, 0, 1), "repeats"), ((0, 1), "2 entries"), ((0, 1, 2, 3), "4 entries"),
                                          ((0, 1, 3), "outside [0, 2]"), ((-1, 0, 1), "outside [0, 2]")])
    def test_refusals_say_why(self, perm, why):
        with pytest.raises(ProfileViolation) as e:
            transpose_op.transpose(values("float", (2, 3, 4)), perm=perm)
        assert ids(e.value) == {"TRANSPOSE-R1"} and why in str(e.value)

    def test_omitted_perm_refused_with_the_perm_to_write(self):
        found = transpose_op.constraints(TensorSig((2, 3, 4), "float"), opset=25, perm=None)
        assert [v.requirement for v in found] == ["TRANSPOSE-R1"]
        assert "perm=[2, 1, 0]" in found[0].message

    @pytest.mark.parametrize("perm", [[1.0, 0.0], [True, False], "10", 1, [np.float32(1), 0]])
    def test_non_integer_perm(self, perm):
        assert [v.requirement for v in transpose_op.constraints(TensorSig((2, 3), "float"), opset=25, perm=perm)] \
            == ["TRANSPOSE-R1"]
        with pytest.raises(TypeError):
            transpose_op.transpose(values("float", (2, 3)), perm=perm)

    def test_perm_is_keyword_only_and_required(self):
        with pytest.raises(TypeError):
            transpose_op.transpose(values("float", (2, 3)))      # no default perm
        with pytest.raises(TypeError):
            transpose_op.transpose(values("float", (2, 3)), (1, 0))

    def test_numpy_integer_perm(self):
        assert transpose_op.transpose(values("int8", (2, 3, 4)), perm=[np.int64(2), np.int32(0), 1]).shape == (4, 2, 3)

    def test_memo_keeps_verdicts(self):
        clear_memos()
        x = values("float", (2, 3))
        assert transpose_op.transpose(x, perm=(1, 0)).shape == (3, 2)
        assert transpose_op.transpose(x, perm=(1, 0)).shape == (3, 2)
        with pytest.raises(ProfileViolation):
            transpose_op.transpose(x, perm=(1, 1))
        assert transpose_op.transpose(x, perm=(0, 1)).shape == (2, 3)


# ---------------------------------------------------------------- values
@pytest.mark.req("TRANSPOSE-R3")
class TestValues:
    @pytest.mark.parametrize("name", TYPES)
    @pytest.mark.parametrize("shape", SHAPES, ids=str)
    def test_kernel_reference_and_numpy_agree(self, name, shape):
        x = values(name, shape, seed=len(shape))
        perms = list(itertools.permutations(range(len(shape))))
        for perm in perms[:: max(1, len(perms) // 12)]:
            y = transpose_op.transpose(x, perm=perm)
            assert_bits(y, x.transpose(perm).copy(order="C"))
            ref = transpose_op.transpose_reference(from_numpy(x), perm)
            assert ref.shape == y.shape and ref.dtype == name
            assert all(kernel.same_bits(name, p, q) for p, q in zip(ref.data, from_numpy(y).data))
            assert transpose_op._every_element_moved(from_numpy(x), perm, ref)

    def test_element_check_catches_a_wrong_move(self):
        x = from_numpy(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
        right = transpose_op.transpose_reference(x, (2, 0, 1))
        assert transpose_op._every_element_moved(x, (2, 0, 1), right)
        # the inverse permutation's data in the right shape: a classic slip
        wrong = TensorValue("int32", right.shape, np.arange(24).reshape(2, 3, 4).transpose(1, 2, 0).reshape(-1).tolist())
        assert not transpose_op._every_element_moved(x, (2, 0, 1), wrong)

    def test_same_bits_tells_nan_payloads_and_zero_signs(self):
        assert not kernel.same_bits("double", 0.0, -0.0)
        p = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]
        assert not kernel.same_bits("double", math.nan, p) and kernel.same_bits("double", p, p)

    def test_result_is_a_copy_never_a_view(self):
        x = values("float", (2, 3, 4))
        kept = x.copy()
        for perm in ((0, 1, 2), (2, 1, 0)):           # the identity too: still a copy
            y = transpose_op.transpose(x, perm=perm)
            assert not np.shares_memory(x, y) and y.flags.c_contiguous and y.flags.writeable
            y[...] = 7.0
            assert_bits(x, kept)

    @pytest.mark.parametrize("name", ["float", "int16", "bfloat16"])
    def test_strided_and_byte_swapped_inputs(self, name):
        base = values(name, (4, 3, 2))
        for x in (base.transpose(2, 0, 1), base[::-1, :, ::2], np.asfortranarray(base)):
            assert_bits(transpose_op.transpose(x, perm=(1, 2, 0)), np.ascontiguousarray(x.transpose(1, 2, 0)))
        if name != "bfloat16":
            swapped = base.astype(base.dtype.newbyteorder(">"))
            y = transpose_op.transpose(swapped, perm=(2, 0, 1))
            assert y.dtype == base.dtype                       # this machine's byte order
            assert_bits(y, base.transpose(2, 0, 1))

    def test_bind_gives_the_same_bits(self):
        x = values("double", (2, 3, 4))
        fn = transpose_op.bind(x, perm=(0, 2, 1), opset=13)
        assert_bits(fn(x), np.ascontiguousarray(x.transpose(0, 2, 1)))
        with pytest.raises(ProfileViolation):
            transpose_op.bind(x, perm=(0, 2), opset=13)

    def test_reference_refuses_like_the_kernel(self):
        x = from_numpy(values("float", (2, 3)))
        with pytest.raises(ProfileViolation) as e:
            transpose_op.transpose_reference(x, (0, 0))
        assert ids(e.value) == {"TRANSPOSE-R1"}
        assert to_numpy(transpose_op.transpose_reference(x, (1, 0))).shape == (3, 2)


# ---------------------------------------------------------------- other implementations
def _cases():
    for opset in OPSETS:
        version = registry.since_version("Transpose", opset)
        for name in sorted(transpose_op.TYPE_SETS[version]):
            yield pytest.param(opset, name, id=f"{opset}-{name}")


@pytest.mark.req("TRANSPOSE-R3")
@pytest.mark.parametrize("opset,name", list(_cases()))
def test_agrees_with_onnx(opset, name):
    """onnx.reference and onnxruntime give the same shape and bits as sonnx, NaN payloads and -0
    included, for every version, every type of its set and every perm of a rank-4 input (the
    NHWC <-> NCHW pair among them)."""
    from onnx.reference import ReferenceEvaluator
    shape = (2, 3, 1, 4)
    x = values(name, shape, seed=opset)
    for perm in itertools.permutations(range(4)):
        model = node_model(name, shape, perm, opset)
        ours = transpose_op.transpose(x, perm=perm, opset=opset)
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


# ---------------------------------------------------------------- validate, run
@pytest.mark.req("TRANSPOSE-R1", "TRANSPOSE-R2", "TRANSPOSE-R3")
class TestValidate:
    def test_registered(self):
        op = operators()["Transpose"]
        assert op is transpose_op.OPERATOR and op.kind == "structural" and op.prefix == "TRANSPOSE"

    @pytest.mark.parametrize("opset", OPSETS)
    def test_one_node_model_conforms_and_runs(self, opset):
        model = node_model("float", (1, 4, 5, 3), (0, 3, 1, 2), opset)      # NHWC -> NCHW
        report = sonnx.validate(model)
        assert report.conforms, [str(f) for f in report.findings]
        x = values("float", (1, 4, 5, 3))
        for mode in ("exact", "fast"):
            assert_bits(sonnx.run(model, {"x": x}, mode=mode)["y"], np.ascontiguousarray(x.transpose(0, 3, 1, 2)))

    def test_omitted_perm_is_a_finding(self):
        report = sonnx.validate(node_model("float", (2, 3), None))
        assert [f.rule for f in report.findings] == ["TRANSPOSE-R1"]

    @pytest.mark.parametrize("perm", [(0, 0, 1), (0, 1), (0, 1, 3)])
    def test_bad_perm_is_a_finding(self, perm):
        report = sonnx.validate(node_model("float", (2, 3, 4), perm))
        assert "TRANSPOSE-R1" in [f.rule for f in report.findings]

    @pytest.mark.parametrize("mode", ["exact", "fast"])
    def test_run_compare_onnxruntime_from_the_command_line(self, mode, tmp_path):
        """`sonnx run --compare onnxruntime` on an NHWC -> NCHW Transpose: 0 ULP, exit 0."""
        import subprocess
        import sys
        model = tmp_path / "t.onnx"
        onnx.save(node_model("float", (1, 4, 5, 3), (0, 3, 1, 2), 13), str(model))
        np.save(tmp_path / "x.npy", values("float", (1, 4, 5, 3)))
        src = str(Path(sonnx.__file__).resolve().parents[1])
        p = subprocess.run([sys.executable, "-m", "sonnx", "run", str(model), "--input", f"x={tmp_path / 'x.npy'}",
                            "--mode", mode, "--compare", "onnxruntime", "-o", str(tmp_path / "out")],
                           capture_output=True, text=True, env={**__import__("os").environ, "PYTHONPATH": src})
        assert p.returncode == 0, p.stdout + p.stderr
        assert "max 0 ulp" in p.stdout

    def test_type_outside_the_version_is_a_finding(self):
        report = sonnx.validate(node_model("bfloat16", (2, 3), (1, 0), 12))
        assert "TRANSPOSE-R2" in [f.rule for f in report.findings]


@pytest.mark.req("TRANSPOSE-R1", "TRANSPOSE-R2", "TRANSPOSE-R3")
def test_spec_block_is_generated_from_the_data():
    """spec/transpose.md's requirements block is the data file's requirements, one line each."""
    from sonnx import requirements
    text = (Path(__file__).parents[2] / "spec" / "transpose.md").read_text(encoding="utf-8")
    block = text.split("<!-- generated: requirements -->\n", 1)[1].split("<!-- end generated -->", 1)[0]
    expected = "".join(f"- **[{r.id}] {r.title}.** {r.statement}\n"
                       for r in requirements.load().values() if r.id.startswith("TRANSPOSE-"))
    assert block == expected
