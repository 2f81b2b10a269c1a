"""Unsqueeze (ops/unsqueeze.py): type sets against onnx's schemas, the axes rules of every version
(written, constant, in range of the output's rank, once), the kernels against each other, onnx.reference
and onnxruntime bit for bit (NaN payloads and -0 included) for every version and type, the copy
(never a view), and the validator and run on one-node models (axes as attribute and as a
constant initializer input)."""
from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import contextlib

import sonnx
from sonnx.ops import kernel
from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import registry
from sonnx.ops import unsqueeze as unsqueeze_op
from sonnx.ops.kernel import clear_memos
from sonnx.ops.registry import operators
from sonnx.ops.signature import NotConstant, TensorSig
from sonnx.semantics.tensor import TensorValue, from_numpy, to_numpy

from .test_flatten import assert_bits, values

_accepted = contextlib.nullcontext
OPSETS = (1, 11, 13, 21, 23, 24, 25)          # one opset per Unsqueeze version
TYPES = sorted(unsqueeze_op.TYPE_SETS[unsqueeze_op.LATEST])


def example(name: str, version: int) -> tuple[list, dict]:
    """A call Unsqueeze accepts at ``version`` on type ``name`` (tests/ops/test_every_operator.py):
    a (2, 3) input unsqueezed at axes (1, 3) (the axes are always written: UNSQUEEZE-R1)."""
    n = 6
    x = (np.arange(n) - n // 2 if dtypes.is_float(name) or dtypes.is_signed(name) else np.arange(n))
    data = x.astype(np.float64).astype(dtypes.numpy_dtype(name)).reshape(2, 3)
    if version >= unsqueeze_op.AXES_INPUT_FROM:          # the axes input, a constant int64 initializer
        return [data, np.array([1, 3], dtype=np.int64)], {}
    return [data, None], {"axes": [1, 3]}          # the attribute


def expected_verdict(shape: tuple[int, ...], axes: tuple[int, ...], version: int) -> bool:
    """UNSQUEEZE-R2 stated independently of the module: accepted exactly when every axis is in the
    version's range for the output's rank and no output position is named twice."""
    r = len(shape) + len(axes)
    lo = -r if version >= 11 else 0
    if not axes or any(not lo <= a <= r - 1 for a in axes):
        return False
    pos = [a % r for a in axes]
    return len(set(pos)) == len(pos)


def inserted(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """The output shape stated independently: np.expand_dims with every axis at once."""
    return np.expand_dims(np.zeros(shape), tuple(axes)).shape


def node_model(elem: str, shape, axes, opset: int = unsqueeze_op.LATEST, *, as_graph_input: bool = False,
               axes_type: int = TensorProto.INT64, out_shape=None) -> onnx.ModelProto:
    """One Unsqueeze node: axes as the attribute before opset 13, as an initializer input from 13
    (also listed as a graph input with ``as_graph_input``); ``axes`` None: no axes at all."""
    code = getattr(TensorProto, elem.upper())
    x = helper.make_tensor_value_info("x", code, list(shape))
    inputs, inits, attrs, graph_inputs = ["x"], [], {}, [x]
    if axes is not None and opset >= 13:
        inputs.append("axes")
        inits.append(numpy_helper.from_array(np.array(axes, dtype=helper.tensor_dtype_to_np_dtype(axes_type)), "axes"))
        if as_graph_input:
            graph_inputs.append(helper.make_tensor_value_info("axes", axes_type, [len(axes)]))
    elif axes is not None:
        attrs["axes"] = list(axes)
    if out_shape is None:
        try:
            out_shape = list(unsqueeze_op.output_shape(tuple(shape), axes or ()))
        except Exception:
            out_shape = None
    y = helper.make_tensor_value_info("y", code, out_shape)
    node = helper.make_node("Unsqueeze", inputs, ["y"], **attrs)
    graph = helper.make_graph([node], "unsqueeze", graph_inputs, [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def call(x, axes=None, opset=unsqueeze_op.LATEST, kernel=None, **keywords):
    """The kernel with ``axes`` (a list or tuple here) in the form the version takes: a 1-D int64
    array from opset 13 (ONNX's axes input), the list before (ONNX's attribute)."""
    if isinstance(axes, (list, tuple)) and opset >= 13:
        axes = np.array(axes, dtype=np.int64)
    return (kernel or unsqueeze_op.unsqueeze)(x, axes=axes, opset=opset, **keywords)


def ids(err: ProfileViolation) -> set[str]:
    return {v.requirement for v in err.violations}


# ---------------------------------------------------------------- type sets
@pytest.mark.req("UNSQUEEZE-R3")
class TestTypes:
    @pytest.mark.parametrize("version", sorted(unsqueeze_op.TYPE_SETS))
    def test_type_set_is_the_schemas_restricted_to_the_profile_types(self, version):
        schema = onnx.defs.get_schema("Unsqueeze", version)
        assert schema.since_version == version
        allowed = {s[len("tensor("):-1] for s in schema.type_constraints[0].allowed_type_strs}
        assert unsqueeze_op.TYPE_SETS[version] == allowed & dtypes.NUMERIC_TYPES
        assert registry.type_set("Unsqueeze", version) == unsqueeze_op.TYPE_SETS[version]

    def test_every_schema_version_is_known(self):
        seen = {onnx.defs.get_schema("Unsqueeze", v).since_version for v in range(1, onnx.defs.onnx_opset_version() + 1)}
        assert seen == set(unsqueeze_op.TYPE_SETS)

    @pytest.mark.parametrize("opset", OPSETS)
    @pytest.mark.parametrize("name", sorted(dtypes.NUMERIC_TYPES))
    def test_kernel_accepts_exactly_the_version_set(self, opset, name):
        x = values(name, (2, 3))
        version = registry.since_version("Unsqueeze", opset)
        if name in unsqueeze_op.TYPE_SETS[version]:
            assert call(x, axes=[1], opset=opset).shape == (2, 1, 3)
        else:
            with pytest.raises(ProfileViolation) as e:
                call(x, axes=[1], opset=opset)
            assert ids(e.value) == {"UNSQUEEZE-R3"}

    @pytest.mark.parametrize("elem", ["bool", "string", "complex64", "float8e4m3fn", "int4", "uint2"])
    def test_types_outside_the_profile_are_refused(self, elem):
        found = unsqueeze_op.constraints(TensorSig((2, 1), elem), opset=25, axes=(1,))
        assert [v.requirement for v in found] == ["UNSQUEEZE-R3"]

    def test_bool_array_refused_by_the_kernel(self):
        with pytest.raises(ProfileViolation) as e:
            call(np.ones((2, 3), bool), axes=[1])
        assert ids(e.value) == {"UNSQUEEZE-R3"}

    def test_sparse_and_unknown_type_refused(self):
        assert [v.requirement for v in unsqueeze_op.constraints(TensorSig(None, None, sparse=True), opset=25, axes=(0,))] \
            == ["UNSQUEEZE-R3"]
        assert [v.requirement for v in unsqueeze_op.constraints(TensorSig((1,), None), opset=25, axes=(0,))] == ["UNSQUEEZE-R3"]

    def test_no_unsqueeze_before_opset_1(self):
        assert [v.requirement for v in unsqueeze_op.constraints(TensorSig((1,), "float"), opset=0, axes=(0,))] \
            == ["UNSQUEEZE-R3"]


# ---------------------------------------------------------------- axes
@pytest.mark.req("UNSQUEEZE-R1", "UNSQUEEZE-R2")
class TestAxes:
    @pytest.mark.parametrize("opset", (1, 11, 13, 25))
    @pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 1, 3)], ids=str)
    def test_single_axes_and_pairs_accepted_exactly_as_stated(self, opset, shape):
        version = registry.since_version("Unsqueeze", opset)
        x = values("float", shape)
        r = len(shape)
        candidates = [(a,) for a in range(-r - 3, r + 3)] + list(itertools.product(range(-r - 3, r + 3), repeat=2))
        for axes in candidates:
            if expected_verdict(shape, axes, version):
                y = call(x, axes=axes, opset=opset)
                assert y.shape == inserted(shape, axes), axes
            else:
                with pytest.raises(ProfileViolation) as e:
                    call(x, axes=axes, opset=opset)
                assert ids(e.value) == {"UNSQUEEZE-R2"}, axes

    def test_negative_axis_before_11_names_the_way_out(self):
        with pytest.raises(ProfileViolation) as e:
            call(values("float", (2, 3)), axes=[-1], opset=1)
        assert "opset 11" in str(e.value)

    @pytest.mark.parametrize("opset", (1, 11, 13, 25))
    def test_omitted_axes_refused(self, opset):
        found = unsqueeze_op.constraints(TensorSig((3,), "float"), opset=opset, axes=None)
        assert [v.requirement for v in found] == ["UNSQUEEZE-R1"]

    def test_not_constant_and_malformed_axes_refused(self):
        x = TensorSig((2, 3), "float")
        for axes, sig in [(NotConstant("graph input 'a'"), TensorSig((1,), "int64")), ((0,), TensorSig((1,), "int32")),
                          ((0,), TensorSig((1, 1), "int64")), ((), TensorSig((0,), "int64"))]:
            found = unsqueeze_op.constraints(x, opset=13, axes=axes, axes_sig=sig)
            assert [v.requirement for v in found] == ["UNSQUEEZE-R1"], axes
        assert [v.requirement for v in unsqueeze_op.constraints(x, opset=13, axes=(0,), axes_sig=TensorSig((1,), "int64"),
                                                              axes_attribute=(0,))] == ["UNSQUEEZE-R1"]

    @pytest.mark.parametrize("axes", [[1.0], [True], "1", 1, (1,), [1]])
    def test_non_array_axes_are_a_type_error_from_13(self, axes):
        with pytest.raises(TypeError):
            unsqueeze_op.unsqueeze(values("float", (2, 1)), axes, opset=13)
        with _accepted() if isinstance(axes, (list, tuple)) and type(axes[0]) is int else pytest.raises(TypeError):
            unsqueeze_op.unsqueeze(values("float", (2, 1)), axes, opset=11)

    @pytest.mark.parametrize("axes", [None, np.array([1.0]), np.array([1], np.int32), np.array([[1]]), np.array([True])])
    def test_omitted_or_malformed_axes_arrays_are_refused(self, axes):
        with pytest.raises(ProfileViolation) as e:
            unsqueeze_op.unsqueeze(values("float", (2, 1)), axes)
        assert ids(e.value) == {"UNSQUEEZE-R1"}

    def test_list_axes_accepted_before_13(self):
        assert unsqueeze_op.unsqueeze(values("float", (2, 1)), [1], opset=11).shape == unsqueeze_op.unsqueeze(
            values("float", (2, 1)), np.array([1]), opset=13).shape

    def test_data_required_opset_keyword_only(self):
        with pytest.raises(TypeError):
            unsqueeze_op.unsqueeze()
        with pytest.raises(TypeError):
            unsqueeze_op.unsqueeze(values("float", (2, 3)), np.array([1]), 13)

    def test_numpy_axes(self):
        x = values("int8", (2, 4))
        assert call(x, axes=np.array([1], np.int64)).shape == (2, 1, 4)
        assert call(x, axes=(np.int32(-2),)).shape == (2, 1, 4)

    def test_memo_keeps_verdicts(self):
        clear_memos()
        x = values("float", (3, 2))
        assert call(x, axes=(0,)).shape == (1, 3, 2)
        assert call(x, axes=(0,)).shape == (1, 3, 2)
        with pytest.raises(ProfileViolation):
            call(x, axes=(3,))
        assert call(x, axes=(0, 3)).shape == (1, 3, 2, 1)


# ---------------------------------------------------------------- values
SHAPES = (((), (0,)), ((5,), (0, 2)), ((2, 3), (1,)), ((2, 1, 3), (4, 0, 2)), ((2, 3, 4), (-1,)))


@pytest.mark.req("UNSQUEEZE-R4")
class TestValues:
    @pytest.mark.parametrize("name", TYPES)
    @pytest.mark.parametrize("shape,axes", SHAPES, ids=str)
    def test_kernel_reference_and_numpy_agree(self, name, shape, axes):
        x = values(name, shape, seed=len(shape))
        y = call(x, axes=axes)
        expected = np.expand_dims(x, tuple(axes))
        assert_bits(y, expected)
        ref = unsqueeze_op.unsqueeze_reference(from_numpy(x), axes)
        assert ref.shape == expected.shape and ref.dtype == name
        assert all(kernel.same_bits(name, p, q) for p, q in zip(ref.data, from_numpy(x).data))
        assert unsqueeze_op._every_element_moved(from_numpy(x), axes, ref)

    def test_element_check_catches_a_wrong_order(self):
        x = from_numpy(np.arange(6, dtype=np.int32).reshape(2, 3))
        wrong = TensorValue("int32", (2, 1, 3), list(np.arange(6).reshape(2, 3).T.reshape(-1).tolist()))
        assert not unsqueeze_op._every_element_moved(x, (1,), wrong)

    def test_result_is_a_copy_never_a_view(self):
        x = values("float", (2, 4))
        kept = x.copy()
        y = call(x, axes=[1])
        assert not np.shares_memory(x, y) and y.flags.c_contiguous and y.flags.writeable
        y[...] = 7.0
        assert_bits(x, kept)

    @pytest.mark.parametrize("name", ["float", "int16", "bfloat16"])
    def test_strided_and_byte_swapped_inputs(self, name):
        base = values(name, (4, 3))
        for x in (base.T, base[::-1, ::2], np.asfortranarray(base)):
            assert_bits(call(x, axes=[1]), np.ascontiguousarray(x).reshape(x.shape[0], 1, x.shape[1]))
        if name != "bfloat16":
            swapped = base.astype(base.dtype.newbyteorder(">"))
            y = call(swapped, axes=[1])
            assert y.dtype == base.dtype
            assert_bits(y, base.reshape(4, 1, 3))

    def test_bind_gives_the_same_bits(self):
        x = values("double", (2, 4))
        fn = unsqueeze_op.bind(x, np.array([-2]), opset=13)
        assert_bits(fn(x), x.reshape(2, 1, 4))
        with pytest.raises(ProfileViolation):
            unsqueeze_op.bind(x, axes=(-2,), opset=1)

    def test_reference_refuses_like_the_kernel(self):
        x = from_numpy(values("float", (2, 3)))
        with pytest.raises(ProfileViolation) as e:
            unsqueeze_op.unsqueeze_reference(x, (3,))
        assert ids(e.value) == {"UNSQUEEZE-R2"}
        assert to_numpy(unsqueeze_op.unsqueeze_reference(x, (1,))).shape == (2, 1, 3)


# ---------------------------------------------------------------- other implementations
def _cases():
    for opset in OPSETS:
        version = registry.since_version("Unsqueeze", opset)
        for name in sorted(unsqueeze_op.TYPE_SETS[version]):
            yield pytest.param(opset, name, id=f"{opset}-{name}")


@pytest.mark.req("UNSQUEEZE-R4")
@pytest.mark.parametrize("opset,name", list(_cases()))
def test_agrees_with_onnx(opset, name):
    """onnx.reference and onnxruntime give the same shape and bits as sonnx, NaN payloads and -0
    included, for every version, every type of its set and several axes of a rank-2 input."""
    from onnx.reference import ReferenceEvaluator
    shape = (3, 2)
    x = values(name, shape, seed=opset)
    for axes in ((0,), (2,), (0, 3), (3, 0), (1, 2)) + (((-1,), (-4, 1), (-1, -2)) if opset >= 11 else ()):
        model = node_model(name, shape, axes, opset)
        ours = call(x, axes=axes, opset=opset)
        assert_bits(onnxruntime_output(model, x, ours.shape), ours)
        try:
            theirs = ReferenceEvaluator(model).run(None, {"x": x})[0]
        except Exception:       # numpy.exceptions.AxisError
            theirs = None
        if theirs is None or theirs.shape != ours.shape:
            # onnx.reference's Unsqueeze-1/-11 inserts the axes one by one in list order, so a
            # later axis is read in the partly unsqueezed shape: (3, 0) fails there
            # (spec/unsqueeze.md, divergences); onnxruntime and ONNX's text agree with sonnx
            assert opset < 13 and one_by_one(shape, axes) != ours.shape, axes
            continue
        assert_bits(theirs, ours)


def one_by_one(shape: tuple[int, ...], axes) -> tuple[int, ...] | None:
    """The shape onnx.reference's Unsqueeze-1/-11 computes: each axis inserted in turn into the
    partly unsqueezed shape (None where numpy refuses an axis)."""
    y = np.zeros(shape)
    try:
        for a in axes:
            y = np.expand_dims(y, a)
    except Exception:
        return None
    return y.shape


def onnxruntime_output(model: onnx.ModelProto, x: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    """onnxruntime's output; bfloat16 goes in and out as raw 16-bit patterns (see test_flatten)."""
    from .test_flatten import _onnxruntime
    return _onnxruntime(model, x, out_shape)


# ---------------------------------------------------------------- validate, run
@pytest.mark.req("UNSQUEEZE-R1", "UNSQUEEZE-R2", "UNSQUEEZE-R3", "UNSQUEEZE-R4")
class TestValidate:
    def test_registered(self):
        op = operators()["Unsqueeze"]
        assert op is unsqueeze_op.OPERATOR and op.kind == "structural" and op.prefix == "UNSQUEEZE"
        assert op.constant_inputs == {"axes": "axes"}

    @pytest.mark.parametrize("opset", OPSETS)
    def test_one_node_model_conforms_and_runs(self, opset):
        model = node_model("float", (3, 4), (0, -2) if opset >= 11 else (0, 2), opset)
        report = sonnx.validate(model)
        assert report.conforms, [str(f) for f in report.findings]
        x = values("float", (3, 4))
        for mode in ("exact", "fast"):
            assert_bits(sonnx.run(model, {"x": x}, mode=mode)["y"], x.reshape(1, 3, 1, 4))

    @pytest.mark.parametrize("opset", (11, 13))
    def test_omitted_axes_is_a_finding(self, opset):
        report = sonnx.validate(node_model("float", (1, 3), None, opset, out_shape=[1, 3]))
        assert "UNSQUEEZE-R1" in [f.rule for f in report.findings]

    def test_axes_as_graph_input_is_a_finding(self):
        report = sonnx.validate(node_model("float", (1, 3), (0,), 13, as_graph_input=True))
        assert [f.rule for f in report.findings] == ["UNSQUEEZE-R1"]
        assert "graph input 'axes'" in report.findings[0].message

    def test_axes_computed_by_a_node_is_a_finding(self):
        model = node_model("float", (1, 3), (0,), 13)
        g = model.graph
        g.initializer[0].name = "axes0"
        g.node.insert(0, helper.make_node("Relu", ["axes0"], ["axes"]))
        report = sonnx.validate(model)
        assert "UNSQUEEZE-R1" in [f.rule for f in report.findings]
        assert any("computed by a node" in f.message for f in report.findings)

    def test_constant_node_axes_conform_then_run(self):
        """A Constant node feeding the axes (as exporters write it) is refused, named with the way
        out; `sonnx conform` stores it as an initializer, and the result conforms and runs."""
        from sonnx.conform.api import conform
        model = node_model("float", (1, 3), (0,), 13)
        g = model.graph
        value = g.initializer.pop()
        g.node.insert(0, helper.make_node("Constant", [], ["axes"], value=value))
        report = sonnx.validate(model)
        assert {f.rule for f in report.findings} == {"PROF-R1", "UNSQUEEZE-R1"}
        assert any("sonnx conform" in f.message for f in report.findings if f.rule == "UNSQUEEZE-R1")
        fixed, record = conform(model, check=True)
        assert record["conforms"] and [r["kind"] for r in record["rewrites"]] == ["constant-to-initializer"]
        x = values("float", (1, 3))
        assert_bits(sonnx.run(fixed, {"x": x})["y"], call(x, (0,)))

    def test_openvino_layer_not_mapped_yet(self, tmp_path):
        """spec/unsqueeze.md: the IR layer is refused as outside the profile (its axes Const's values
        are in the weights file, which the reader never opens), one finding, no traceback."""
        from tests.validate.openvino_ir import binary
        path = tmp_path / "m.xml"
        path.write_bytes(binary("Unsqueeze", [1, 3], [1], out=[1, 1, 3], etypes=("f32", "i64")))
        report = sonnx.validate(str(path))
        assert report.error is None and [f.rule for f in report.findings] == ["PROF-R1"]
        assert "Unsqueeze" in report.findings[0].message

    @pytest.mark.parametrize("opset", (11, 13))
    def test_onnx_reference_with_sonnx_ops(self, opset):
        """onnx.reference running sonnx's kernel (sonnx.onnx_reference.new_ops): the axes reach it
        as the attribute (opset 11) and as the initializer input (opset 13), same bits."""
        import sonnx.onnx_reference
        from onnx.reference import ReferenceEvaluator
        x = values("double", (1, 3))
        ev = ReferenceEvaluator(node_model("double", (1, 3), (0, 3), opset), new_ops=sonnx.onnx_reference.new_ops())
        assert_bits(ev.run(None, {"x": x})[0], call(x, (0, 3), opset))

    def test_int32_axes_is_a_finding(self):
        report = sonnx.validate(node_model("float", (1, 3), (0,), 13, axes_type=TensorProto.INT32))
        assert "UNSQUEEZE-R1" in [f.rule for f in report.findings]

    @pytest.mark.parametrize("axes,opset", [((3,), 25), ((-1,), 1), ((-4,), 13), ((0, -4), 13)])
    def test_bad_axes_are_findings(self, axes, opset):
        report = sonnx.validate(node_model("float", (1, 3), axes, opset))
        assert "UNSQUEEZE-R2" in [f.rule for f in report.findings], [str(f) for f in report.findings]

    def test_type_outside_the_version_is_a_finding(self):
        report = sonnx.validate(node_model("bfloat16", (1, 3), (0,), 11))
        assert "UNSQUEEZE-R3" in [f.rule for f in report.findings]

    def test_compare_with_onnxruntime(self, tmp_path):
        from sonnx.cli import main
        model = node_model("float", (3, 4), (0, 2), 13)
        path = tmp_path / "unsqueeze.onnx"
        onnx.save(model, path)
        np.save(tmp_path / "x.npy", values("float", (3, 4)))
        assert main(["run", str(path), "--input", f"x={tmp_path / 'x.npy'}", "--compare", "onnxruntime",
                     "-o", str(tmp_path / "out")]) == 0


@pytest.mark.req("UNSQUEEZE-R1", "UNSQUEEZE-R2", "UNSQUEEZE-R3", "UNSQUEEZE-R4")
def test_spec_block_is_generated_from_the_data():
    """spec/unsqueeze.md's requirements block is the data file's requirements, one line each."""
    from sonnx import requirements
    text = (Path(__file__).parents[2] / "spec" / "unsqueeze.md").read_text(encoding="utf-8")
    block = text.split("<!-- generated: requirements -->\n", 1)[1].split("<!-- end generated -->", 1)[0]
    expected = "".join(f"- **[{r.id}] {r.title}.** {r.statement}\n"
                       for r in requirements.load().values() if r.id.startswith("UNSQUEEZE-"))
    assert block == expected
