"""ONNX Squeeze under the SONNX profile: Y = X without the named dimensions of size 1
(spec/squeeze.md).

A structural operator: it moves elements and computes none. Y has X's shape with the dimensions
listed in ``axes`` removed (each of them 1) and holds X's elements in the same row-major order,
every bit kept (NaN payloads, -0), so exact and fast modes give the same bits.
Checks: SQUEEZE-R1 (axes written and constant: the attribute before Squeeze-13, a constant int64
1-D initializer input from Squeeze-13), SQUEEZE-R2 (axes in range for the rank and version, no
axis twice, each named dimension 1), SQUEEZE-R3 (dense, one element type of the version's type
set, no cast). Requirements: src/sonnx/ops/squeeze.toml. Proof: proofs/squeeze.mlw.
Tests: tests/ops/test_squeeze.py, tests/crosshair/squeeze_cases.py.

Decisions (spec/squeeze.md says why):
- omitted axes ("remove every dimension of size 1") are refused (SQUEEZE-R1), and the message
  states the axes that reading would remove, for the author to write: GR4 wants what decides the
  result written, and the output's rank would otherwise follow from the input's shape alone;
- axes fed by a graph input or computed by a node are refused: the output's shape must be static;
- the numpy kernel returns a new C-contiguous array, never a view of its argument.
"""
from __future__ import annotations

import itertools

import icontract
from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import ProfileViolation, Violation, raise_if_any, wrong_type
from ..semantics.tensor import FULL_CONTRACTS, TensorValue, flat_index, size
from . import kernel
from .registry import ConformRule, NodeEdit, Operator
from .signature import TensorSig, dense_and_typed, tensor_shape_violations

OP = "Squeeze"
PREFIX = "SQUEEZE"
LATEST = 25
_INTS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
_UP_TO_11 = dtypes.IEEE_FLOATS | _INTS
_FROM_13 = _UP_TO_11 | {"bfloat16"}
# since_version -> element types: onnx's schema of that version restricted to the profile's
# element types (dtypes.NUMERIC_TYPES); tests/ops/test_squeeze.py compares them with the schemas
TYPE_SETS = {1: _UP_TO_11, 11: _UP_TO_11, 13: _FROM_13, 21: _FROM_13, 23: _FROM_13, 24: _FROM_13, 25: _FROM_13}
NEGATIVE_AXES_FROM = 11      # Squeeze-1 reads axes in [0, r-1]; Squeeze-11 on in [-r, r-1]
AXES_INPUT_FROM = 13         # before: the attribute axes; from 13: the optional input axes
AXES_INPUT = "input:axes"    # the key under which the validator passes the axes input's value

KERNEL_ATTRIBUTES = {"axes": "axes"}      # the attribute (before 13) -> the kernel's keyword
CONSTANT_INPUTS = {"axes": "axes"}        # the input (from 13) -> the kernel's keyword


# req: SQUEEZE-R2
def axes_range(rank: int, version: int) -> tuple[int, int]:
    """The axis values Squeeze-``version`` accepts on an input of ``rank``."""
    return (-rank if version >= NEGATIVE_AXES_FROM else 0), rank - 1


# req: SQUEEZE-R2
def normalise(axes, rank: int) -> tuple[int, ...]:
    """A negative axis counts from the end: a + r (proofs/squeeze.mlw)."""
    return tuple(a + rank if a < 0 else a for a in axes)


# req: SQUEEZE-R4
def output_shape(shape: tuple[int, ...], axes) -> tuple[int, ...]:
    """Y's shape: X's ``shape`` without the (accepted) ``axes``."""
    gone = set(normalise(axes, len(shape)))
    return tuple(d for k, d in enumerate(shape) if k not in gone)


def _ones(shape) -> list[int]:
    return [k for k, d in enumerate(shape) if d == 1]


# req: SQUEEZE-R1, SQUEEZE-R2, SQUEEZE-R3
def constraints(x: TensorSig, *, opset: int, axes: object = None, axes_sig: TensorSig | None = None,
                axes_attribute: object = None) -> list[Violation]:
    """Every violation of SQUEEZE-R1..R3 of a Squeeze node with input ``x`` under ``opset``.
    ``axes``: the axes in force (the attribute before Squeeze-13, the input's constant value from
    13; None when the node gives none; NotConstant when the input has no constant value);
    ``axes_sig``: the axes input's signature (from 13); ``axes_attribute``: an axes attribute
    written on a Squeeze-13 or later node (which has none)."""
    version, refused = kernel.version_in_force(OP, opset, "SQUEEZE-R3")
    if version is None:
        return refused
    found = dense_and_typed(OP, version, [("'data'", x)], dense_rule="SQUEEZE-R3", type_rule="SQUEEZE-R3",
                            hint=_type_hint)
    if version >= AXES_INPUT_FROM and axes_attribute is not None:
        found.append(Violation("SQUEEZE-R1", f"{OP}-{version} has an axes attribute; from Squeeze-13 the "
                                             "axes are the second input (a constant int64 initializer)"))
    found.extend(_axes_violations(x, version, axes, axes_sig))
    return found


def _axes_violations(x: TensorSig, version: int, axes: object, axes_sig: TensorSig | None) -> list[Violation]:
    where = "attribute" if version < AXES_INPUT_FROM else "input"
    known = not x.sparse and x.shape is not None and all(isinstance(d, int) for d in x.shape)
    if axes is None:
        said = (f" (here that would be axes={_ones(x.shape)}: write them)" if known else "")
        return [Violation("SQUEEZE-R1", f"{OP}-{version} gives no axes; the profile reads no default that "
                                        "decides the result's shape, so 'every dimension of size 1' is "
                                        f"refused: write the axes {where}{said}; `sonnx conform` writes "
                                        "them for a static shape")]
    found = kernel.axes_form_violations(OP, version, "SQUEEZE-R1", axes, axes_sig, AXES_INPUT_FROM)
    if found:
        return found
    if not known:
        return []
    rank = len(x.shape)
    lo, hi = axes_range(rank, version)
    out = [a for a in axes if not lo <= a <= hi]
    if out:
        extra = ("; a negative axis needs Squeeze-11: import opset 11 or later"
                 if version < NEGATIVE_AXES_FROM and all(-rank <= a < 0 for a in out) else "")
        return [Violation("SQUEEZE-R2", f"{OP}-{version} has axes={list(axes)}: {out} outside [{lo}, {hi}] "
                                        f"for an input of rank {rank}{extra}")]
    norm = normalise(axes, rank)
    if len(set(norm)) != len(norm):
        return [Violation("SQUEEZE-R2", f"{OP}-{version} has axes={list(axes)}, naming one dimension twice "
                                        f"(normalised: {list(norm)})")]
    not_one = [a for a in norm if x.shape[a] != 1]
    if not_one:
        return [Violation("SQUEEZE-R2", f"{OP}-{version} has axes={list(axes)} but the input's dimension(s) "
                                        f"{not_one} of shape {tuple(x.shape)} are not 1; only dimensions of "
                                        f"size 1 can be removed (size-1 dimensions here: {_ones(x.shape)})")]
    return []


def _type_hint(elem: str) -> str:
    if elem == "bfloat16":
        return "; bfloat16 needs Squeeze-13: import opset 13 or later"
    return "; the profile defines no other element type"


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """The registry's constraint function: (input signatures, attributes, opset). The validator
    passes the axes input's constant value under AXES_INPUT (registry: constant_inputs)."""
    return kernel.axes_node_constraints(OP, "SQUEEZE-R3", constraints, AXES_INPUT_FROM, AXES_INPUT,
                                        sigs, attrs, opset)


# ---------------------------------------------------------------- reference kernel
def _violations(x: TensorValue, axes: object) -> list[Violation]:
    sig = TensorSig(x.shape, x.dtype)
    return tensor_shape_violations(OP, [("'data'", sig)]) + constraints(sig, opset=LATEST, axes=axes)


def _refusal(x: TensorValue, axes: object) -> ProfileViolation:
    return ProfileViolation(_violations(x, axes))




def _every_element_moved(x: TensorValue, axes, y: TensorValue) -> bool:
    """SQUEEZE-R4 by multi-index, as proofs/squeeze.mlw's squeeze_elements: X's element at
    (i0, ..., i(r-1)) is Y's at the same index without the removed positions (each 0)."""
    gone = set(normalise(axes, len(x.shape)))
    for ix in itertools.product(*(range(d) for d in x.shape)):
        at = tuple(i for k, i in enumerate(ix) if k not in gone)
        if not kernel.same_bits(x.dtype, x.data[flat_index(x.shape, ix)], y.data[flat_index(y.shape, at)]):
            return False
    return True


# req: SQUEEZE-R1, SQUEEZE-R2, SQUEEZE-R3, SQUEEZE-R4
# The body checks the requirements itself, so that they hold with contracts off; the same
# precondition is attached for CrossHair (SONNX_CONTRACTS=full).
@icontract.require(lambda x, axes: not _violations(x, axes), "SQUEEZE-R1..R3, PROF-R2", error=_refusal,
                   enabled=FULL_CONTRACTS)
@icontract.require(lambda x: kernel.well_formed(x), enabled=FULL_CONTRACTS)
@icontract.ensure(lambda x, axes, result: result.dtype == x.dtype and size(result.shape) == size(x.shape)
                  and len(result.shape) == len(x.shape) - len(axes) and len(result.data) == len(x.data))
@icontract.ensure(lambda x, axes, result: result.shape == output_shape(x.shape, axes))
@icontract.ensure(lambda x, axes, result: _every_element_moved(x, axes, result), enabled=FULL_CONTRACTS)
def squeeze_reference(x: TensorValue, axes: tuple[int, ...]) -> TensorValue:
    """The reference kernel: Y's shape is output_shape(X's shape, axes) and y[k] = x[k] for
    every flat row-major k (module Copy of proofs/squeeze.mlw)."""
    raise_if_any(_violations(x, axes))
    shape = output_shape(x.shape, axes)
    return TensorValue(x.dtype, shape, _move(x.data, size(shape)))


# req: SQUEEZE-R4
_move = kernel.row_major_copy      # the copy loop, proved by this operator's module Copy


# ---------------------------------------------------------------- numpy kernel
_accepted = kernel.AcceptedCalls()


def axes_argument(axes: object, opset: object) -> tuple[int, ...] | None:
    """The kernel's ``axes`` as a tuple of ints (kernel.axes_argument: a 1-D int64 array from
    Squeeze-13 on, also a list of integers before; None when omitted, SQUEEZE-R1's to refuse)."""
    return kernel.axes_argument(OP, "squeeze", "SQUEEZE-R1", axes, opset, AXES_INPUT_FROM)


# req: SQUEEZE-R1, SQUEEZE-R2, SQUEEZE-R3
def check(x: object, axes: tuple[int, ...], opset: object = LATEST) -> tuple[int, ...]:
    """Every check of the kernel's arguments (TypeError or ProfileViolation); Y's shape."""
    version, sigs = kernel.arguments("squeeze", opset, [("data", x)])
    kernel.refuse(OP, sigs, constraints(sigs[0][1], opset=version, axes=axes))
    return output_shape(sigs[0][1].shape, axes)


# req: SQUEEZE-R4
@kernel.entry      # nothing is rounded; guarded as every kernel, for one calling convention
def squeeze(data: np.ndarray, axes: np.ndarray | None = None, *, opset: int = LATEST) -> np.ndarray:
    """ONNX Squeeze of an array: a new array of data's shape without the dimensions ``axes``
    (each of size 1), holding data's elements in row-major order, every bit kept.

    ``axes``: from opset 13 a 1-D int64 array (ONNX's axes input), before a list of integers
    (ONNX's attribute); it has no default (None is refused: SQUEEZE-R1); a negative axis counts
    from the end from opset 11 on. The result is a C-contiguous copy in this machine's byte order, never a view. Raises
    ``sonnx.ProfileViolation`` (a ValueError naming the requirement) for what the profile
    refuses: an axis out of range or named twice, a named dimension that is not 1, an element
    type outside the version's type set, a sparse input, an empty or oversized tensor, an opset
    outside the known range. Raises TypeError for a non-array input, non-integer axes or opset.
    """
    a = axes_argument(axes, opset)
    return _apply(data, kernel.checked(_accepted, check, data, a, opset))


# req: SQUEEZE-R4
def _apply(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The move of an accepted call: a C-order copy in native byte order, reshaped."""
    y = np.empty(shape, dtype=x.dtype.newbyteorder("="))
    np.copyto(y.reshape(x.shape), x, casting="equiv")
    return y


# req: SQUEEZE-R1, SQUEEZE-R4
def bind(x: np.ndarray, axes: np.ndarray | None = None, *, opset: int = LATEST):
    """``squeeze`` checked once now for arrays like ``x``: a function of the array alone."""
    shape = check(x, axes_argument(axes, opset), opset)
    return lambda a: _apply(a, shape)


def result_shape(shapes, keywords) -> tuple[int, ...]:
    """Y's shape from X's and the kernel's ``axes`` (the executor plans with it)."""
    axes = keywords["axes"]
    return output_shape(tuple(shapes[0]), tuple(int(a) for a in axes))


# req: SQUEEZE-R1
def default_axes(inputs: tuple) -> list[int] | str:
    """ONNX's reading of omitted axes for the node's input, which conform writes: every dimension
    of size 1. Needs a static shape (a symbolic dimension may be 1) holding at least one 1 (the
    profile refuses empty axes)."""
    x = inputs[0] if inputs else None
    if x is None or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in x):
        return "the input's shape is not static, and which of its dimensions are 1 decides the axes"
    ones = _ones(x)
    if not ones:
        return f"the input {tuple(x)} has no dimension of size 1, so the node removes nothing"
    return ones


# req: SQUEEZE-R1
def explicit_axes(node, shapes, value, opset, fresh):
    """conform's rewrite of a Squeeze-13-or-later node without its axes input
    (ConformRule.node_rewrite): the axes ONNX reads (default_axes) stored as a constant int64
    initializer given as input 1. Before Squeeze-13 the attribute is written instead
    (ConformRule.defaults); a node with axes is left alone."""
    version = OPERATOR.since_version(opset)
    if version is None or version < AXES_INPUT_FROM or (len(node.input) > 1 and node.input[1]) or not node.input:
        return None
    axes = default_axes((shapes.get(node.input[0]),))
    if isinstance(axes, str):
        return f"{OP}-{version} has no axes input and conform cannot write ONNX's reading of it: {axes}"
    name = fresh(f"{node.output[0] or node.input[0]}_axes")
    return NodeEdit(detail=f"{OP}-{version} had no axes input; ONNX's reading, every dimension of size 1 of "
                           f"{tuple(shapes[node.input[0]])}, stored as the int64 initializer '{name}' = {axes} "
                           "and given as its axes",
                    initializers=((name, np.array(axes, dtype=np.int64)),), inputs={1: name})


OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="structural", type_sets=TYPE_SETS, inputs=("data", "axes"), optional=("axes",),
    attributes={"axes": None}, constraints=node_constraints, reference=squeeze_reference,
    kernel=squeeze, bind=bind, spec="spec/squeeze.md", proofs=("proofs/squeeze.mlw",),
    kernel_attributes=KERNEL_ATTRIBUTES, constant_inputs=CONSTANT_INPUTS, output_shape=result_shape,
    comparison="bits", theories=("proofs/tensor.mlw",),
    # conform writes the axes ONNX reads when they are omitted: the attribute before Squeeze-13,
    # the constant input from 13 on
    conform=ConformRule(rule="SQUEEZE-R1", node_rewrite=explicit_axes,
                        defaults={"axes": lambda inputs, attrs, opset, constants: default_axes(inputs)}))
