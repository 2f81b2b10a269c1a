"""ONNX Unsqueeze under the SONNX profile: Y = X with dimensions of size 1 inserted
(spec/unsqueeze.md).

A structural operator: it moves elements and computes none. Y has rank r + k (k axes) and a
dimension of size 1 at each of the listed output positions, X's dimensions in order at the
others, and holds X's elements in the same row-major order,
every bit kept (NaN payloads, -0), so exact and fast modes give the same bits.
Checks: UNSQUEEZE-R1 (axes written and constant: the attribute before Unsqueeze-13, a constant int64
1-D initializer input from Unsqueeze-13), UNSQUEEZE-R2 (axes in range for the rank and version, no
axis twice), UNSQUEEZE-R3 (dense, one element type of the version's type
set, no cast). Requirements: src/sonnx/ops/unsqueeze.toml. Proof: proofs/unsqueeze.mlw.
Tests: tests/ops/test_unsqueeze.py, tests/crosshair/unsqueeze_cases.py.

Decisions (spec/unsqueeze.md says why):
- axes are required by every ONNX version; an empty list is refused (UNSQUEEZE-R1: it would
  make Unsqueeze an identity that nothing in a model needs);
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
from .registry import Operator
from .signature import TensorSig, dense_and_typed, tensor_shape_violations

OP = "Unsqueeze"
PREFIX = "UNSQUEEZE"
LATEST = 25
_INTS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
_UP_TO_11 = dtypes.IEEE_FLOATS | _INTS
_FROM_13 = _UP_TO_11 | {"bfloat16"}
# since_version -> element types: onnx's schema of that version restricted to the profile's
# element types (dtypes.NUMERIC_TYPES); tests/ops/test_unsqueeze.py compares them with the schemas
TYPE_SETS = {1: _UP_TO_11, 11: _UP_TO_11, 13: _FROM_13, 21: _FROM_13, 23: _FROM_13, 24: _FROM_13, 25: _FROM_13}
NEGATIVE_AXES_FROM = 11      # with R = r + k: Unsqueeze-1 reads axes in [0, R-1]; Unsqueeze-11 on in [-R, R-1]
AXES_INPUT_FROM = 13         # before: the attribute axes; from 13: the (required) input axes
AXES_INPUT = "input:axes"    # the key under which the validator passes the axes input's value

KERNEL_ATTRIBUTES = {"axes": "axes"}      # the attribute (before 13) -> the kernel's keyword
CONSTANT_INPUTS = {"axes": "axes"}        # the input (from 13) -> the kernel's keyword


# req: UNSQUEEZE-R2
def axes_range(rank: int, version: int) -> tuple[int, int]:
    """The axis values Unsqueeze-``version`` accepts for an output of ``rank`` (the input's rank
    plus the number of axes)."""
    return (-rank if version >= NEGATIVE_AXES_FROM else 0), rank - 1


# req: UNSQUEEZE-R2
def normalise(axes, rank: int) -> tuple[int, ...]:
    """A negative axis counts from the end of the output: a + R (proofs/unsqueeze.mlw)."""
    return tuple(a + rank if a < 0 else a for a in axes)


# req: UNSQUEEZE-R4
def output_shape(shape: tuple[int, ...], axes) -> tuple[int, ...]:
    """Y's shape: 1 at each of the (accepted) ``axes`` of the output, X's dimensions in order
    at the other positions."""
    out_rank = len(shape) + len(axes)
    new = set(normalise(axes, out_rank))
    rest = iter(shape)
    return tuple(1 if k in new else next(rest) for k in range(out_rank))


# req: UNSQUEEZE-R1, UNSQUEEZE-R2, UNSQUEEZE-R3
def constraints(x: TensorSig, *, opset: int, axes: object = None, axes_sig: TensorSig | None = None,
                axes_attribute: object = None) -> list[Violation]:
    """Every violation of UNSQUEEZE-R1..R3 of a Unsqueeze node with input ``x`` under ``opset``.
    ``axes``: the axes in force (the attribute before Unsqueeze-13, the input's constant value from
    13; None when the node gives none; NotConstant when the input has no constant value);
    ``axes_sig``: the axes input's signature (from 13); ``axes_attribute``: an axes attribute
    written on a Unsqueeze-13 or later node (which has none)."""
    version, refused = kernel.version_in_force(OP, opset, "UNSQUEEZE-R3")
    if version is None:
        return refused
    found = dense_and_typed(OP, version, [("'data'", x)], dense_rule="UNSQUEEZE-R3", type_rule="UNSQUEEZE-R3",
                            hint=_type_hint)
    if version >= AXES_INPUT_FROM and axes_attribute is not None:
        found.append(Violation("UNSQUEEZE-R1", f"{OP}-{version} has an axes attribute; from Unsqueeze-13 the "
                                             "axes are the second input (a constant int64 initializer)"))
    found.extend(_axes_violations(x, version, axes, axes_sig))
    return found


def _axes_violations(x: TensorSig, version: int, axes: object, axes_sig: TensorSig | None) -> list[Violation]:
    where = "attribute" if version < AXES_INPUT_FROM else "input"
    known = not x.sparse and x.shape is not None and all(isinstance(d, int) for d in x.shape)
    if axes is None:
        return [Violation("UNSQUEEZE-R1", f"{OP}-{version} gives no axes; ONNX requires them: write the "
                                          f"axes {where}")]
    found = kernel.axes_form_violations(OP, version, "UNSQUEEZE-R1", axes, axes_sig, AXES_INPUT_FROM)
    if found:
        return found
    if not known:
        return []
    rank = len(x.shape) + len(axes)
    lo, hi = axes_range(rank, version)
    out = [a for a in axes if not lo <= a <= hi]
    if out:
        extra = ("; a negative axis needs Unsqueeze-11: import opset 11 or later"
                 if version < NEGATIVE_AXES_FROM and all(-rank <= a < 0 for a in out) else "")
        return [Violation("UNSQUEEZE-R2", f"{OP}-{version} has axes={list(axes)}: {out} outside [{lo}, {hi}] "
                                          f"for an output of rank {rank} (the input's {len(x.shape)} plus "
                                          f"{len(axes)} axes){extra}")]
    norm = normalise(axes, rank)
    if len(set(norm)) != len(norm):
        return [Violation("UNSQUEEZE-R2", f"{OP}-{version} has axes={list(axes)}, naming one output dimension "
                                          f"twice (normalised: {list(norm)})")]
    return []


def _type_hint(elem: str) -> str:
    if elem == "bfloat16":
        return "; bfloat16 needs Unsqueeze-13: import opset 13 or later"
    return "; the profile defines no other element type"


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """The registry's constraint function: (input signatures, attributes, opset). The validator
    passes the axes input's constant value under AXES_INPUT (registry: constant_inputs)."""
    return kernel.axes_node_constraints(OP, "UNSQUEEZE-R3", constraints, AXES_INPUT_FROM, AXES_INPUT,
                                        sigs, attrs, opset)


# ---------------------------------------------------------------- reference kernel
def _violations(x: TensorValue, axes: object) -> list[Violation]:
    sig = TensorSig(x.shape, x.dtype)
    return tensor_shape_violations(OP, [("'data'", sig)]) + constraints(sig, opset=LATEST, axes=axes)


def _refusal(x: TensorValue, axes: object) -> ProfileViolation:
    return ProfileViolation(_violations(x, axes))




def _every_element_moved(x: TensorValue, axes, y: TensorValue) -> bool:
    """UNSQUEEZE-R4 by multi-index, as proofs/unsqueeze.mlw's unsqueeze_elements: X's element at
    (i0, ..., i(r-1)) is Y's at that index with a 0 inserted at each new position."""
    new = set(normalise(axes, len(x.shape) + len(axes)))
    for ix in itertools.product(*(range(d) for d in x.shape)):
        rest = iter(ix)
        at = tuple(0 if k in new else next(rest) for k in range(len(x.shape) + len(axes)))
        if not kernel.same_bits(x.dtype, x.data[flat_index(x.shape, ix)], y.data[flat_index(y.shape, at)]):
            return False
    return True


# req: UNSQUEEZE-R1, UNSQUEEZE-R2, UNSQUEEZE-R3, UNSQUEEZE-R4
# The body checks the requirements itself, so that they hold with contracts off; the same
# precondition is attached for CrossHair (SONNX_CONTRACTS=full).
@icontract.require(lambda x, axes: not _violations(x, axes), "UNSQUEEZE-R1..R3, PROF-R2", error=_refusal,
                   enabled=FULL_CONTRACTS)
@icontract.require(lambda x: kernel.well_formed(x), enabled=FULL_CONTRACTS)
@icontract.ensure(lambda x, axes, result: result.dtype == x.dtype and size(result.shape) == size(x.shape)
                  and len(result.shape) == len(x.shape) + len(axes) and len(result.data) == len(x.data))
@icontract.ensure(lambda x, axes, result: result.shape == output_shape(x.shape, axes))
@icontract.ensure(lambda x, axes, result: _every_element_moved(x, axes, result), enabled=FULL_CONTRACTS)
def unsqueeze_reference(x: TensorValue, axes: tuple[int, ...]) -> TensorValue:
    """The reference kernel: Y's shape is output_shape(X's shape, axes) and y[k] = x[k] for
    every flat row-major k (module Copy of proofs/unsqueeze.mlw)."""
    raise_if_any(_violations(x, axes))
    shape = output_shape(x.shape, axes)
    return TensorValue(x.dtype, shape, _move(x.data, size(shape)))


# req: UNSQUEEZE-R4
_move = kernel.row_major_copy      # the copy loop, proved by this operator's module Copy


# ---------------------------------------------------------------- numpy kernel
_accepted = kernel.AcceptedCalls()


def axes_argument(axes: object, opset: object) -> tuple[int, ...] | None:
    """The kernel's ``axes`` as a tuple of ints (kernel.axes_argument: a 1-D int64 array from
    Unsqueeze-13 on, also a list of integers before; None when omitted, UNSQUEEZE-R1's to refuse)."""
    return kernel.axes_argument(OP, "unsqueeze", "UNSQUEEZE-R1", axes, opset, AXES_INPUT_FROM)


# req: UNSQUEEZE-R1, UNSQUEEZE-R2, UNSQUEEZE-R3
def check(x: object, axes: tuple[int, ...], opset: object = LATEST) -> tuple[int, ...]:
    """Every check of the kernel's arguments (TypeError or ProfileViolation); Y's shape."""
    version, sigs = kernel.arguments("unsqueeze", opset, [("data", x)])
    kernel.refuse(OP, sigs, constraints(sigs[0][1], opset=version, axes=axes))
    return output_shape(sigs[0][1].shape, axes)


# req: UNSQUEEZE-R4
@kernel.entry      # nothing is rounded; guarded as every kernel, for one calling convention
def unsqueeze(data: np.ndarray, axes: np.ndarray | None = None, *, opset: int = LATEST) -> np.ndarray:
    """ONNX Unsqueeze of an array: a new array of data's shape with a dimension of size 1 at each
    of the output positions ``axes``, holding data's elements in row-major order, every bit kept.

    ``axes``: from opset 13 a 1-D int64 array (ONNX's axes input), before a list of integers
    (ONNX's attribute); it has no default (None is refused: UNSQUEEZE-R1); a negative axis counts
    from the end from opset 11 on. The result is a C-contiguous copy in this machine's byte order, never a view. Raises
    ``sonnx.ProfileViolation`` (a ValueError naming the requirement) for what the profile
    refuses: an axis out of range of the output's rank or named twice, an element
    type outside the version's type set, a sparse input, an empty or oversized tensor, an opset
    outside the known range. Raises TypeError for a non-array input, non-integer axes or opset.
    """
    a = axes_argument(axes, opset)
    return _apply(data, kernel.checked(_accepted, check, data, a, opset))


# req: UNSQUEEZE-R4
def _apply(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The move of an accepted call: a C-order copy in native byte order, reshaped."""
    y = np.empty(shape, dtype=x.dtype.newbyteorder("="))
    np.copyto(y.reshape(x.shape), x, casting="equiv")
    return y


# req: UNSQUEEZE-R1, UNSQUEEZE-R4
def bind(x: np.ndarray, axes: np.ndarray | None = None, *, opset: int = LATEST):
    """``unsqueeze`` checked once now for arrays like ``x``: a function of the array alone."""
    shape = check(x, axes_argument(axes, opset), opset)
    return lambda a: _apply(a, shape)


def result_shape(shapes, keywords) -> tuple[int, ...]:
    """Y's shape from X's and the kernel's ``axes`` (the executor plans with it)."""
    axes = keywords["axes"]
    return output_shape(tuple(shapes[0]), tuple(int(a) for a in axes))


OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="structural", type_sets=TYPE_SETS, inputs=("data", "axes"),
    # axes is required from Unsqueeze-13 but absent before: optional here, and its absence is
    # UNSQUEEZE-R1's to refuse for a version that needs it
    optional=("axes",),
    attributes={"axes": None}, constraints=node_constraints, reference=unsqueeze_reference,
    kernel=unsqueeze, bind=bind, spec="spec/unsqueeze.md", proofs=("proofs/unsqueeze.mlw",),
    kernel_attributes=KERNEL_ATTRIBUTES, constant_inputs=CONSTANT_INPUTS, output_shape=result_shape,
    comparison="bits", theories=("proofs/tensor.mlw",))
