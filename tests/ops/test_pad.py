"""Pad (ops/pad.py): type sets against onnx's schemas, the rules of every version (pads, mode,
constant, axes), the kernels against each other, onnx.reference and onnxruntime bit for bit
(NaN payloads and -0 of the data and of the constant) for every version and type, the copy
(never a view), and the validator, conform and run on one-node models (pads, constant and axes
as attributes and as constant initializer inputs)."""
from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import sonnx
from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import kernel
from sonnx.ops import pad as pad_op
from sonnx.ops import registry
from sonnx.ops.kernel import clear_memos
from sonnx.ops.registry import operators
from sonnx.ops.signature import NotConstant, TensorSig
from sonnx.semantics.tensor import from_numpy

from .conftest import assert_same_bits
from .test_transpose import assert_bits, values

OPSETS = (1, 2, 11, 13, 18, 19, 21, 23, 24, 25)      # one opset per Pad version
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def example(name: str, version: int) -> tuple[list, dict]:
    """A call Pad accepts at ``version`` on type ``name`` (tests/ops/test_every_operator.py): a
    (2, 3) input padded by (1, 0) before and (0, 2) after with the constant 0 (always written:
    PAD-R3); from Pad-11 pads and constant_value are inputs, axes stay absent."""
    n = 6
    x = (np.arange(n) - n // 2 if dtypes.is_float(name) or dtypes.is_signed(name) else np.arange(n))
    data = x.astype(np.float64).astype(dtypes.numpy_dtype(name)).reshape(2, 3)
    if version >= pad_op.INPUTS_FROM:
        return [data, np.array([1, 0, 0, 2], np.int64), np.zeros((), dtypes.numpy_dtype(name)), None], {}
    return [data, None, None, None], {pad_op.PADS_ATTRIBUTE[version]: [1, 0, 0, 2], "value": 0.0, "mode": "constant"}


def call(x, pads, c=None, axes=None, opset=pad_op.LATEST, **keywords):
    """The kernel with ``pads`` (and ``axes``) as lists, in the form the version takes: int64
    arrays and the constant as a 0-d array of x's type from opset 11; before, the attribute
    forms, ``c`` as the value attribute."""
    if opset >= 11:
        return pad_op.pad(x, np.array(pads, np.int64), None if c is None else np.array(c, x.dtype),
                          None if axes is None else np.array(axes, np.int64), opset=opset, **keywords)
    return pad_op.pad(x, list(pads), value=None if c is None else float(c), opset=opset, **keywords)


def ids(err: ProfileViolation) -> set[str]:
    return {v.requirement for v in err.violations}


def expected_pad(x: np.ndarray, begins, ends, c: np.ndarray) -> np.ndarray:
    """Y stated independently of the module, element by element: Y[o] = X[o - b] inside X,
    else c (the constant's bits, as an array of one element)."""
    shape = tuple(d + b + e for d, b, e in zip(x.shape, begins, ends))
    u = UINT[x.dtype.itemsize]
    xb = x.copy().view(u)          # a 0-d copy stays 0-d (ascontiguousarray would make it 1-d)
    y = np.empty(shape, u)
    for o in itertools.product(*(range(d) for d in shape)):
        i = tuple(oa - b for oa, b in zip(o, begins))
        inside = all(0 <= ia < d for ia, d in zip(i, x.shape))
        y[o] = xb[i] if inside else np.asarray(c, x.dtype).reshape(()).view(u)
    return y.view(x.dtype)


def node_model(elem: str, shape, pads, c=0, opset: int = pad_op.LATEST, *, axes=None, mode="constant",
               graph_input: tuple[str, ...] = (), out_shape=None, c_type: str | None = None) -> onnx.ModelProto:
    """One Pad node: pads and value as attributes before opset 11, as initializers from 11 (a
    name in ``graph_input`` is also listed as a graph input); ``c`` None: no constant at all."""
    code = getattr(TensorProto, elem.upper())
    x = helper.make_tensor_value_info("x", code, list(shape))
    inputs, inits, attrs, graph_inputs = ["x"], [], {}, [x]
    if mode is not None:
        attrs["mode"] = mode
    if opset >= 11:
        given = {"pads": None if pads is None else np.array(pads, np.int64),
                 "c": None if c is None else np.array(c, dtypes.numpy_dtype(c_type or elem)),
                 "axes": None if axes is None else np.array(axes, np.int64)}
        for name in ("pads", "c", "axes"):
            if given[name] is None:
                inputs.append("")
                continue
            inputs.append(name)
            inits.append(numpy_helper.from_array(given[name], name))
            if name in graph_input:
                graph_inputs.append(helper.make_tensor_value_info(
                    name, helper.np_dtype_to_tensor_dtype(given[name].dtype), list(given[name].shape)))
        while inputs[-1] == "":
            inputs.pop()
    else:
        if pads is not None:
            attrs[pad_op.PADS_ATTRIBUTE[opset if opset < 2 else 2]] = list(pads)
        if c is not None:
            attrs["value"] = float(c)
    if out_shape is None:
        try:
            out_shape = list(pad_op.output_shape(tuple(shape), pads, axes))
        except Exception:
            out_shape = None
    y = helper.make_tensor_value_info("y", code, out_shape)
    node = helper.make_node("Pad", inputs, ["y"], **attrs)
    graph = helper.make_graph([node], "pad", graph_inputs, [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


# ---------------------------------------------------------------- type sets
@pytest.mark.req("PAD-R5")
class TestTypes:
    @pytest.mark.parametrize("version", sorted(pad_op.TYPE_SETS))
    def test_type_set_is_the_schemas_restricted_to_the_profile_types(self, version):
        schema = onnx.defs.get_schema("Pad", version)
        assert schema.since_version == version
        allowed = {s[len("tensor("):-1] for s in schema.type_constraints[0].allowed_type_strs}
        assert pad_op.TYPE_SETS[version] == allowed & dtypes.NUMERIC_TYPES
        assert registry.type_set("Pad", version) == pad_op.TYPE_SETS[version]

    def test_every_schema_version_is_known(self):
        seen = {onnx.defs.get_schema("Pad", v).since_version for v in range(1, onnx.defs.onnx_opset_version() + 1)}
        assert seen == set(pad_op.TYPE_SETS) == set(OPSETS)

    @pytest.mark.parametrize("opset", OPSETS)
    @pytest.mark.parametrize("name", sorted(dtypes.NUMERIC_TYPES))
    def test_kernel_accepts_exactly_the_version_set(self, opset, name):
        x = values(name, (2, 3))
        version = registry.since_version("Pad", opset)
        if name in pad_op.TYPE_SETS[version]:
            assert call(x, [1, 0, 0, 2], 0, opset=opset).shape == (3, 5)
        else:
            with pytest.raises(ProfileViolation) as e:
                call(x, [1, 0, 0, 2], 0, opset=opset)
            assert ids(e.value) == {"PAD-R5"}

    @pytest.mark.parametrize("elem", ["bool", "string", "complex64", "float8e4m3fn", "int4", "uint2"])
    def test_types_outside_the_profile_are_refused(self, elem):
        found = pad_op.constraints(TensorSig((2, 1), elem), opset=25, pads=(0, 0, 0, 0), constant=True,
                                   constant_sig=TensorSig((), elem))
        assert [v.requirement for v in found] == ["PAD-R5"]

    def test_bool_array_refused_by_the_kernel(self):
        with pytest.raises(ProfileViolation) as e:
            pad_op.pad(np.ones((2, 1), bool), np.zeros(4, np.int64), np.array(False))
        assert ids(e.value) == {"PAD-R5"}

    def test_sparse_and_unknown_type_refused(self):
        for x in (TensorSig(None, None, sparse=True), TensorSig((1,), None)):
            assert "PAD-R5" in [v.requirement for v in pad_op.constraints(x, opset=25, pads=(0, 0), constant=True,
                                                                            constant_sig=TensorSig((), "float"))]

    def test_integer_type_before_11_names_the_way_out(self):
        with pytest.raises(ProfileViolation) as e:
            call(values("int32", (2, 2)), [0, 0, 0, 0], 0, opset=2)
        assert "opset 11" in str(e.value)


# ---------------------------------------------------------------- pads, mode, constant, axes
@pytest.mark.req("PAD-R1")
class TestPads:
    @pytest.mark.parametrize("opset", (2, 11, 25))
    def test_pads_accepted_exactly_when_of_length_2r_and_non_negative(self, opset):
        x = values("float", (2, 3))
        for pads in itertools.product((-1, 0, 2), repeat=4):
            if min(pads) >= 0:
                assert call(x, pads, 0.0, opset=opset).shape == (2 + pads[0] + pads[2], 3 + pads[1] + pads[3])
            else:
                with pytest.raises(ProfileViolation) as e:
                    call(x, pads, 0.0, opset=opset)
                assert ids(e.value) == {"PAD-R1"} and "crop" in str(e.value)
        for pads in ([0, 0], [0, 0, 0], [1] * 6, []):
            with pytest.raises(ProfileViolation) as e:
                call(x, pads, 0.0, opset=opset)
            assert ids(e.value) == {"PAD-R1"} and "needs" in str(e.value)

    def test_rank_0_takes_empty_pads(self):
        x = np.array(3.5, np.float32)
        assert_bits(call(x, [], 1.0), x)

    @pytest.mark.parametrize("pads", [None, np.array([0.0, 0, 0, 0]), np.array([0, 0, 0, 0], np.int32),
                                      np.zeros((2, 2), np.int64), np.array([True] * 4)])
    def test_omitted_or_malformed_pads_arrays_are_refused(self, pads):
        with pytest.raises(ProfileViolation) as e:
            pad_op.pad(values("float", (2, 3)), pads, np.array(0, np.float32))
        assert ids(e.value) == {"PAD-R1"}

    @pytest.mark.parametrize("pads", [[0, 0, 0, 0], (0, 0, 0, 0), [1.0, 0, 0, 0], "0"])
    def test_non_array_pads_are_a_type_error_from_11(self, pads):
        with pytest.raises(TypeError, match=r"^sonnx\.pad: pads must be"):
            pad_op.pad(values("float", (2, 3)), pads, np.array(0, np.float32))

    def test_not_constant_and_malformed_pads_refused_by_the_constraints(self):
        x, c = TensorSig((1, 3), "float"), TensorSig((), "float")
        for pads, sig in [(NotConstant("graph input 'p'"), TensorSig((4,), "int64")),
                          ((0, 0, 0, 0), TensorSig((4,), "int32")), ((0, 0, 0, 0), TensorSig((2, 2), "int64")),
                          (None, None), ((0.5, 0, 0, 0), TensorSig((4,), "int64"))]:
            found = pad_op.constraints(x, opset=13, pads=pads, pads_sig=sig, constant=True, constant_sig=c)
            assert [v.requirement for v in found] == ["PAD-R1"], pads

    def test_negative_pads_refused_without_the_rank_or_the_axes(self):
        """The length needs the padded axes; a negative entry does not: it crops whatever the rank,
        so it is refused when the rank is unknown or the axes are not read (the length is not)."""
        for x in (TensorSig(None, "float"), TensorSig((2, 3), "float")):
            found = pad_op.constraints(x, opset=13, pads=(0, -1, 0, 0), pads_sig=TensorSig((4,), "int64"))
            assert [v.requirement for v in found] == ["PAD-R1"] and "crop" in found[0].message, x
        unknown = pad_op.constraints(TensorSig(None, "float"), opset=13, pads=(0, 0, 0), pads_sig=TensorSig((3,), "int64"))
        assert unknown == []     # three pads are wrong for every rank, but only the rank says so (PROF-R2 refuses an unknown rank)
        axes = pad_op.constraints(TensorSig((2, 3), "float"), opset=18, pads=(-1, 0), pads_sig=TensorSig((2,), "int64"),
                                  axes=NotConstant("graph input 'a'"), axes_sig=TensorSig((1,), "int64"))
        assert [v.requirement for v in axes] == ["PAD-R4", "PAD-R1"], axes

    def test_memo_keeps_verdicts(self):
        clear_memos()
        x = values("float", (2, 3))
        for _ in range(2):
            assert call(x, [0, 1, 0, 1], 0.0).shape == (2, 5)
            with pytest.raises(ProfileViolation):
                call(x, [0, -1, 0, 1], 0.0)


@pytest.mark.req("PAD-R2")
class TestMode:
    @pytest.mark.parametrize("opset", (2, 11, 25))
    def test_constant_written_or_omitted_is_accepted(self, opset):
        x = values("float", (2, 3))
        assert_bits(call(x, [1, 1, 1, 1], 0.0, opset=opset, pad_mode="constant"), call(x, [1, 1, 1, 1], 0.0, opset=opset))

    @pytest.mark.parametrize("mode", ["edge", "reflect", "wrap", "CONSTANT", "", 0])
    def test_every_other_mode_is_refused(self, mode):
        with pytest.raises(ProfileViolation) as e:
            call(values("float", (2, 3)), [1, 1, 1, 1], 0.0, pad_mode=mode)
        assert ids(e.value) == {"PAD-R2"}
        if mode in ("edge", "reflect", "wrap"):
            assert "constant mode only" in str(e.value)


@pytest.mark.req("PAD-R3")
class TestConstant:
    @pytest.mark.parametrize("opset", (1, 2, 11, 25))
    @pytest.mark.parametrize("name", ["float", "float16", "int8"])
    def test_omitted_constant_is_plus_zero(self, opset, name):
        if name == "int8" and opset < 11:
            return                                   # no integer type before Pad-11 (TestTypes)
        x = values(name, (2, 3))
        y = call(x, [1, 1, 1, 1], None, opset=opset)
        assert_bits(y, expected_pad(x, (1, 1), (1, 1), np.zeros((), x.dtype)))
        assert not np.signbit(y[0, 0])

    @pytest.mark.parametrize("c", [np.array(0, np.float64), np.array([0, 0], np.float32), np.zeros((1, 1), np.float32),
                                   np.array(0, np.int32)])
    def test_constant_of_another_type_or_size_is_refused(self, c):
        with pytest.raises(ProfileViolation) as e:
            pad_op.pad(values("float", (2, 3)), np.array([1, 1, 1, 1]), c)
        assert ids(e.value) == {"PAD-R3"}

    def test_constant_of_shape_1_is_accepted(self):
        x = values("float", (2, 3))
        assert_bits(pad_op.pad(x, np.array([1, 1, 1, 1]), np.array([2.5], np.float32)),
                    pad_op.pad(x, np.array([1, 1, 1, 1]), np.array(2.5, np.float32)))

    @pytest.mark.parametrize("name,value,accepted", [
        ("float16", 0.5, True), ("float16", 65504.0, True), ("float16", float(np.float32(0.1)), False),
        ("float16", 2.0 ** -24, True), ("float16", 2.0 ** -25, False), ("float", float(np.float32(0.1)), True),
        ("double", float(np.float32(0.1)), True), ("float", 0.1, False), ("float", float("nan"), False),
        ("double", float("inf"), True), ("float16", -0.0, True), ("float16", 1e5, False)])
    def test_value_attribute_must_be_exact_in_t(self, name, value, accepted):
        x = values(name, (2, 2))
        if accepted:
            y = call(x, [1, 0, 0, 0], value, opset=2)
            assert_bits(y, expected_pad(x, (1, 0), (0, 0), np.array(value, dtypes.numpy_dtype(name))))
        else:
            with pytest.raises(ProfileViolation) as e:
                call(x, [1, 0, 0, 0], value, opset=2)
            assert ids(e.value) == {"PAD-R3"}

    def test_value_given_to_a_version_that_has_an_input_is_a_type_error(self):
        with pytest.raises(TypeError, match=r"^sonnx\.pad: value must be None"):
            pad_op.pad(values("float", (2, 3)), np.zeros(4, np.int64), np.array(0, np.float32), value=0.0)
        with pytest.raises(TypeError, match=r"^sonnx\.pad: constant_value must be None"):
            pad_op.pad(values("float", (2, 3)), [0, 0, 0, 0], np.array(0, np.float32), opset=2)

    def test_not_constant_constant_is_refused(self):
        found = pad_op.constraints(TensorSig((2, 3), "float"), opset=11, pads=(0, 0, 0, 0),
                                   pads_sig=TensorSig((4,), "int64"), constant=NotConstant("graph input 'c'"),
                                   constant_sig=TensorSig((), "float"))
        assert [v.requirement for v in found] == ["PAD-R3"] and "graph input 'c'" in found[0].message


@pytest.mark.req("PAD-R4")
class TestAxes:
    @pytest.mark.parametrize("opset", (18, 25))
    def test_axes_pad_the_named_dimensions_only(self, opset):
        x = values("float", (2, 3, 4))
        for axes in itertools.chain.from_iterable(itertools.permutations(range(-3, 3), k) for k in (1, 2)):
            norm = [a % 3 for a in axes]
            pads = [1 + k for k in range(len(axes))] + [2 * k for k in range(len(axes))]
            if len(set(norm)) != len(norm):
                with pytest.raises(ProfileViolation) as e:
                    call(x, pads, 0.0, axes, opset=opset)
                assert ids(e.value) == {"PAD-R4"}
                continue
            b, e_ = [0, 0, 0], [0, 0, 0]
            for k, a in enumerate(norm):
                b[a], e_[a] = pads[k], pads[k + len(axes)]
            assert_bits(call(x, pads, -0.0, axes, opset=opset), expected_pad(x, b, e_, np.array(-0.0, np.float32)))

    def test_axes_out_of_range_or_before_18_are_refused(self):
        x = values("float", (2, 3))
        for axes, opset in [([2], 25), ([-3], 25), ([0], 13)]:
            with pytest.raises(ProfileViolation) as e:
                call(x, [1, 1], 0.0, axes, opset=opset)
            assert ids(e.value) == {"PAD-R4"}, (axes, opset)

    def test_int32_axes_accepted_other_arrays_refused(self):
        x = values("float", (2, 3))
        c = np.array(0, np.float32)
        assert pad_op.pad(x, np.array([1, 1]), c, np.array([1], np.int32)).shape == (2, 5)
        for axes in (np.array([1.0]), np.array([[1]]), np.array([True])):
            with pytest.raises(ProfileViolation) as e:
                pad_op.pad(x, np.array([1, 1]), c, axes)
            assert ids(e.value) == {"PAD-R4"}
        with pytest.raises(TypeError, match=r"^sonnx\.pad: axes must be"):
            pad_op.pad(x, np.array([1, 1]), c, [1])

    def test_not_constant_axes_refused(self):
        found = pad_op.constraints(TensorSig((2, 3), "float"), opset=18, pads=(1, 1), pads_sig=TensorSig((2,), "int64"),
                                   constant=True, constant_sig=TensorSig((), "float"),
                                   axes=NotConstant("graph input 'a'"), axes_sig=TensorSig((1,), "int64"))
        assert [v.requirement for v in found] == ["PAD-R4"]


# ---------------------------------------------------------------- values
SHAPES = ((), (5,), (2, 3), (2, 1, 3), (1, 2, 2, 3))


@pytest.mark.req("PAD-R6")
class TestValues:
    @pytest.mark.parametrize("name", sorted(pad_op.TYPE_SETS[pad_op.LATEST]))
    @pytest.mark.parametrize("shape", SHAPES, ids=str)
    def test_kernel_reference_and_statement_agree(self, name, shape):
        x = values(name, shape, seed=len(shape))
        c = values(name, (4,), seed=7).reshape(-1)[:1]            # a NaN with a payload for float types
        r = len(shape)
        for pads in [(0,) * 2 * r, tuple(range(2 * r)), tuple(reversed(range(2 * r)))]:
            expected = expected_pad(x, pads[:r], pads[r:], c)
            assert_bits(call(x, pads, c.reshape(())), expected)
            ref = pad_op.pad_reference(from_numpy(x), pads, from_numpy(c.reshape(())).data[0])
            assert ref.shape == expected.shape and ref.dtype == name
            assert all(kernel.same_bits(name, p, q) for p, q in zip(ref.data, from_numpy(expected).data))

    def test_element_check_catches_a_wrong_move(self):
        x = from_numpy(values("float", (2, 2)))
        y = pad_op.pad_reference(x, (1, 0, 0, 1), 0.0)
        assert pad_op._every_element_placed(x, (1, 0, 0, 1), 0.0, y)
        for wrong in (pad_op.pad_reference(x, (0, 1, 1, 0), 0.0), pad_op.pad_reference(x, (1, 0, 0, 1), -0.0)):
            assert not pad_op._every_element_placed(x, (1, 0, 0, 1), 0.0, wrong)

    def test_result_is_a_copy_never_a_view(self):
        x = values("float", (2, 3))
        y = call(x, [0, 0, 0, 0], 0.0)
        assert y.flags.c_contiguous and not np.shares_memory(x, y)

    @pytest.mark.parametrize("name", ["float", "double", "float16", "int64", "uint16"])
    def test_strided_and_byte_swapped_inputs_and_constants(self, name):
        x = values(name, (4, 6))[::2, ::3]
        c = values(name, (4,), seed=3)[:1].reshape(())
        expected = expected_pad(np.ascontiguousarray(x), (1, 2), (2, 1), c)
        swapped = x.astype(x.dtype.newbyteorder("S"))
        for data, const in [(x, c), (swapped, c.astype(c.dtype.newbyteorder("S")))]:
            y = pad_op.pad(data, np.array([1, 2, 2, 1]), const)
            assert y.dtype.isnative
            assert_bits(y, expected)

    def test_bind_gives_the_same_bits_and_keeps_each_constant(self):
        x = values("float", (2, 3))
        for c in (0.0, -0.0, float("nan")):
            f = pad_op.bind(x, np.array([1, 1, 1, 1]), np.array(c, np.float32))
            assert_bits(f(x), call(x, [1, 1, 1, 1], c))
        # the memo knows -0.0 == 0.0: the constant is no part of the remembered plan
        assert_bits(call(x, [1, 0, 0, 0], 0.0)[0], np.zeros(3, np.float32))
        assert_bits(call(x, [1, 0, 0, 0], -0.0)[0], np.full(3, -0.0, np.float32))

    def test_reference_refuses_like_the_kernel(self):
        x = from_numpy(values("float", (2, 3)))
        with pytest.raises(ProfileViolation) as e:
            pad_op.pad_reference(x, (1, -1, 0, 0), 0.0)
        assert ids(e.value) == {"PAD-R1"}


# ---------------------------------------------------------------- other implementations
def _cases():
    for opset in OPSETS:
        version = registry.since_version("Pad", opset)
        for name in sorted(pad_op.TYPE_SETS[version]):
            yield pytest.param(opset, name, id=f"{opset}-{name}")


def _ort_runs(opset: int, name: str) -> bool:
    """Where onnxruntime has a Pad kernel: none for Pad-1, float and double for Pad-2, and no
    bfloat16, int16 or uint16 at any version (test_onnxruntime_refuses_where_it_has_no_kernel
    shows the refusals)."""
    return opset >= 2 and name not in ("bfloat16", "int16", "uint16") and (opset >= 11 or name in ("float", "double"))


def _constants(name: str, opset: int) -> list[np.ndarray]:
    dt = dtypes.numpy_dtype(name)
    if opset < 11:       # the value attribute: exact float32 values T holds (PAD-R3); None: omitted
        return [None] + [np.array(v, dt) for v in (0.0, -0.0, 1.5, -np.inf)]
    return [None, np.array(0, dt), values(name, (4,), seed=5)[:1].reshape(()),
            values(name, (4,), seed=5)[1:2].reshape(())]


@pytest.mark.req("PAD-R6")
@pytest.mark.parametrize("opset,name", list(_cases()))
def test_agrees_with_onnx(opset, name):
    """onnx.reference and onnxruntime (where it has a kernel) give the same shape and bits as
    sonnx, NaN payloads and -0 of the data and of the constant included, for every version and
    every type of its set, with pads on every axis, and with axes from 18; an omitted constant
    is +0 in all three."""
    from onnx.reference import ReferenceEvaluator
    shape = (2, 1, 3)
    x = values(name, shape, seed=opset)
    cases = [((1, 0, 2, 0, 3, 1), None), ((0, 0, 0, 0, 0, 0), None)]
    if opset >= 18:
        cases.append(((2, 1, 0, 3), (-1, 0)))
    for (pads, axes), c in itertools.product(cases, _constants(name, opset)):
        model = node_model(name, shape, pads, c, opset, axes=axes)
        ours = call(x, pads, c, axes, opset=opset)
        assert_bits(ReferenceEvaluator(model).run(None, {"x": x})[0], ours)
        if _ort_runs(opset, name) and name == "float16":
            # onnxruntime has no float16 Pad kernel: it casts to float and back, which keeps
            # every value but not a NaN's low payload bits (test_onnxruntime_float16_nan_payloads)
            assert_same_bits(_onnxruntime(model, x), ours)
        elif _ort_runs(opset, name):
            assert_bits(_onnxruntime(model, x), ours)


@pytest.mark.req("PAD-R6")
@pytest.mark.parametrize("opset,name", [(1, "float"), (2, "float16"), (13, "bfloat16"), (25, "bfloat16"),
                                        (11, "int16"), (25, "uint16")])
def test_onnxruntime_refuses_where_it_has_no_kernel(opset, name):
    """The cases test_agrees_with_onnx cannot compare with onnxruntime, shown to be its refusal
    (no kernel), not a difference of values."""
    model = node_model(name, (2, 3), (1, 0, 0, 1), 0.0, opset)
    with pytest.raises(Exception, match="NOT_IMPLEMENTED|INVALID_GRAPH|MLDataType"):
        _onnxruntime(model, values(name, (2, 3)))


@pytest.mark.req("PAD-R1")
def test_negative_pads_onnx_reference_refuses_and_onnxruntime_crops():
    """Why the profile refuses negative pads (spec/pad.md): onnx.reference raises, onnxruntime
    crops; sonnx refuses with PAD-R1."""
    from onnx.reference import ReferenceEvaluator
    x = values("float", (2, 3))
    model = node_model("float", (2, 3), (0, -1, 0, 0), 0.0, 13, out_shape=[2, 2])
    with pytest.raises(ValueError):
        ReferenceEvaluator(model).run(None, {"x": x})
    assert_bits(_onnxruntime(model, x), np.ascontiguousarray(x[:, 1:]))
    with pytest.raises(ProfileViolation) as e:
        call(x, (0, -1, 0, 0), 0.0)
    assert ids(e.value) == {"PAD-R1"}


@pytest.mark.req("PAD-R6")
def test_onnxruntime_float16_nan_payloads():
    """The divergence spec/pad.md states: onnxruntime's float16 Pad (a float round trip) drops a
    NaN's low payload bit where sonnx and onnx.reference keep it."""
    from onnx.reference import ReferenceEvaluator
    x = np.array([0x7E01, 0xFE03, 0x3C00], np.uint16).view(np.float16).reshape(1, 3)
    model = node_model("float16", (1, 3), (0, 1, 0, 0), 0.0, 13)
    ours = call(x, (0, 1, 0, 0), 0.0, opset=13)
    assert ours.view(np.uint16).tolist() == [[0, 0x7E01, 0xFE03, 0x3C00]]
    assert_bits(ReferenceEvaluator(model).run(None, {"x": x})[0], ours)
    assert _onnxruntime(model, x).view(np.uint16).tolist() == [[0, 0x7E00, 0xFE00, 0x3C00]]


def _onnxruntime(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


# ---------------------------------------------------------------- validate, conform, run
@pytest.mark.req("PAD-R1", "PAD-R2", "PAD-R3", "PAD-R4", "PAD-R5", "PAD-R6")
class TestValidate:
    def test_registered(self):
        op = operators()["Pad"]
        assert op is pad_op.OPERATOR and op.kind == "structural" and op.prefix == "PAD"

    @pytest.mark.parametrize("opset", OPSETS)
    def test_one_node_model_conforms_and_runs(self, opset):
        model = node_model("float", (1, 2, 3, 3), (0, 0, 1, 1, 0, 0, 1, 1), -0.0, opset)
        report = sonnx.validate(model)
        assert report.conforms, [str(f) for f in report.findings]
        x = values("float", (1, 2, 3, 3))
        for mode in ("exact", "fast"):
            assert_bits(sonnx.run(model, {"x": x}, mode=mode)["y"],
                        expected_pad(x, (0, 0, 1, 1), (0, 0, 1, 1), np.array(-0.0, np.float32)))

    @pytest.mark.parametrize("c", [2.0, None])      # None: no constant_value, an empty input name before axes
    def test_axes_model_conforms_and_runs(self, c):
        model = node_model("float", (1, 2, 3, 3), (1, 1, 1, 1), c, 18, axes=(-2, -1))
        if c is None:
            # the graph rule PROF-R5 refuses an input written as '' before a named one: with axes,
            # the constant must be written (0 here); ONNX's reading of '' (+0) is what runs below
            assert [f.rule for f in sonnx.validate(model).findings] == ["PROF-R5"]
            return
        assert sonnx.validate(model).conforms
        x = values("float", (1, 2, 3, 3))
        want = np.array(0.0 if c is None else c, np.float32)
        assert_bits(sonnx.run(model, {"x": x})["y"], expected_pad(x, (0, 0, 1, 1), (0, 0, 1, 1), want))

    @pytest.mark.parametrize("model,rule", [
        (lambda: node_model("float", (2, 3), (1, 0, -1, 0), 0.0), "PAD-R1"),
        (lambda: node_model("float", (2, 3), (1, 0, 1, 0), 0.0, graph_input=("pads",)), "PAD-R1"),
        (lambda: node_model("float", (2, 3), None, 0.0, 2), "PAD-R1"),
        (lambda: node_model("float", (2, 3), (1, 0, 1, 0), 0.0, mode="reflect"), "PAD-R2"),
        (lambda: node_model("float", (2, 3), (1, 0, 1, 0), 0.0, 11, mode="edge"), "PAD-R2"),
        (lambda: node_model("float", (2, 3), (1, 0, 1, 0), 0.0, graph_input=("c",)), "PAD-R3"),
        (lambda: node_model("float", (2, 3), (1, 0, 1, 0), 0.0, c_type="double"), "PAD-R3"),
        (lambda: node_model("float16", (2, 3), (1, 0, 1, 0), float(np.float32(0.1)), 2), "PAD-R3"),
        (lambda: node_model("float", (2, 3), (1, 1), 0.0, 18, axes=(1, -1)), "PAD-R4"),
        (lambda: node_model("float", (2, 3), (1, 1), 0.0, 18, axes=(1,), graph_input=("axes",)), "PAD-R4"),
        (lambda: node_model("int32", (2, 3), (1, 0, 1, 0), 0.0, 2), "PAD-R5"),
        (lambda: node_model("bfloat16", (2, 3), (1, 0, 1, 0), 0.0, 11), "PAD-R5")])
    def test_refusals_are_findings_of_the_rule(self, model, rule):
        report = sonnx.validate(model())
        assert rule in [f.rule for f in report.findings], [str(f) for f in report.findings]
        assert all(f.rule.startswith(("PAD-", "PROF-", "ONNX-")) for f in report.findings)

    def test_constant_node_feeding_pads_and_constant_conforms_after_conform(self):
        """A Constant-made pads and constant_value (as exporters write them): refused as they are,
        accepted once `sonnx conform` has stored them as initializers."""
        from sonnx.conform.api import conform
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3])
        nodes = [helper.make_node("Constant", [], ["p"], value=numpy_helper.from_array(np.array([0, 1, 1, 0, 1, 1], np.int64))),
                 helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array(0, np.float32))),
                 helper.make_node("Pad", ["x", "p", "c"], ["y"], mode="constant")]
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 5])
        model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 13)])
        assert not sonnx.validate(model).conforms
        rewritten, record = conform(model)
        assert record["findings"] == [] and sonnx.validate(rewritten).conforms
        xv = values("float", (1, 2, 3))
        assert_bits(sonnx.run(rewritten, {"x": xv})["y"], expected_pad(xv, (0, 1, 1), (0, 1, 1), np.array(0, np.float32)))

    def test_the_dynamo_exporters_pad_conforms_and_runs(self):
        """PyTorch's dynamo exporter writes F.pad(x, (1, 2, 0, 1)) on a (1, 2, 3, 3) input as
        Pad(x, pads) with an int64 initializer and no constant_value (measured with torch 2.x,
        opset 20; rebuilt here): it conforms, and the constant is +0."""
        model = node_model("float", (1, 2, 3, 3), (0, 0, 0, 1, 0, 0, 1, 2), None, 20)
        assert list(model.graph.node[0].input) == ["x", "pads"]
        assert sonnx.validate(model).conforms
        x = values("float", (1, 2, 3, 3))
        assert_bits(sonnx.run(model, {"x": x})["y"], expected_pad(x, (0, 0, 0, 1), (0, 0, 1, 2), np.float32(0)))

    @pytest.mark.parametrize("mode", ["exact", "fast"])
    def test_run_compare_onnxruntime_from_the_command_line(self, mode, tmp_path):
        """`sonnx run --compare onnxruntime` on a Pad around the spatial axes: 0 ULP, exit 0."""
        model = tmp_path / "p.onnx"
        onnx.save(node_model("float", (1, 2, 3, 3), (0, 0, 1, 2, 0, 0, 2, 1), 0.0, 13), str(model))
        np.save(tmp_path / "x.npy", values("float", (1, 2, 3, 3)))
        src = str(Path(sonnx.__file__).resolve().parents[1])
        p = subprocess.run([sys.executable, "-m", "sonnx", "run", str(model), "--input", f"x={tmp_path / 'x.npy'}",
                            "--mode", mode, "--compare", "onnxruntime", "-o", str(tmp_path / "out")],
                           capture_output=True, text=True, env={**os.environ, "PYTHONPATH": src})
        assert p.returncode == 0, p.stdout + p.stderr
        assert "max 0 ulp" in p.stdout


@pytest.mark.req("PAD-R3", "PAD-R6")
@pytest.mark.parametrize("name", ["test_ConstantPad2d", "test_ZeroPad2d"])
def test_onnx_backend_pytorch_models_run_to_their_expected_outputs(name):
    """onnx's pytorch-converted ConstantPad2d (Pad-2, value 2.0) and ZeroPad2d (value 0.0), exported
    by PyTorch long ago: they conform, and sonnx run gives their stored outputs bit for bit."""
    folder = Path(onnx.__file__).parent / "backend" / "test" / "data" / "pytorch-converted" / name
    model = onnx.load(folder / "model.onnx")
    assert sonnx.validate(model).conforms
    sets = sorted(folder.glob("test_data_set_*"))
    assert sets
    for data in sets:
        x = numpy_helper.to_array(onnx.load_tensor(data / "input_0.pb"))
        y = numpy_helper.to_array(onnx.load_tensor(data / "output_0.pb"))
        assert_bits(sonnx.run(model, {model.graph.input[0].name: x})[model.graph.output[0].name], y)


@pytest.mark.req("PAD-R1", "PAD-R2", "PAD-R3", "PAD-R4", "PAD-R5", "PAD-R6")
def test_spec_block_is_generated_from_the_data():
    """spec/pad.md's requirements block is the data file's requirements, one line each."""
    from sonnx import requirements
    text = (Path(__file__).parents[2] / "spec" / "pad.md").read_text(encoding="utf-8")
    block = text.split("<!-- generated: requirements -->\n", 1)[1].split("<!-- end generated -->", 1)[0]
    expected = "".join(f"- **[{r.id}] {r.title}.** {r.statement}\n"
                       for r in requirements.load().values() if r.id.startswith("PAD-"))
    assert block == expected
