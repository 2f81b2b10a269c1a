"""ONNX Flatten under the SONNX profile: Y = X viewed as a 2-D matrix (spec/flatten.md).

A structural operator: it moves elements and computes none. Y has the shape
(d0 * ... * d(axis-1), d(axis) * ... * d(r-1)) and holds X's elements in the same row-major
order, every bit kept (NaN payloads, -0), so exact and fast modes give the same bits.
Checks: FLATTEN-R1 (the axis attribute written, an integer in range for the rank and the
version; a negative axis counts from the end), FLATTEN-R2 (dense, one element type of the
version's type set, no cast). Requirements: src/sonnx/ops/flatten.toml. Proof:
proofs/flatten.mlw. Tests: tests/ops/test_flatten.py, tests/crosshair/flatten_cases.py.

Decisions (spec/flatten.md says why):
- an omitted axis is refused (FLATTEN-R1), not read as ONNX's default 1: the working group's
  GR4 wants every attribute that decides the result written in the model (`sonnx conform`
  writes axis=1 explicitly);
- the type sets are those of onnx's schemas restricted to the element types the profile
  defines (sonnx.dtypes): bool, strings, complex, the 8-, 4- and 2-bit types are refused;
- the numpy kernel returns a new C-contiguous array in this machine's byte order, never a view
  of its argument: a caller who writes into Y does not change X.
"""
from __future__ import annotations

import itertools
import math

import icontract
from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import ProfileViolation, Violation, raise_if_any, wrong_type
from ..semantics.tensor import FULL_CONTRACTS, TensorValue, flat_index, size
from . import kernel
from .registry import ConformRule, Operator
from .signature import TensorSig, dense_and_typed, tensor_shape_violations

OP = "Flatten"
PREFIX = "FLATTEN"
LATEST = 25
_INTS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
_FROM_13 = dtypes.IEEE_FLOATS | _INTS | {"bfloat16"}
# since_version -> element types: onnx's schema of that version, restricted to the profile's
# element types (dtypes.NUMERIC_TYPES); tests/ops/test_flatten.py compares them with the schemas
TYPE_SETS = {
    1: dtypes.IEEE_FLOATS,
    9: dtypes.IEEE_FLOATS | _INTS,
    11: dtypes.IEEE_FLOATS | _INTS,
    13: _FROM_13,
    21: _FROM_13,
    23: _FROM_13,
    24: _FROM_13,
    25: _FROM_13,
}
NEGATIVE_AXIS_FROM = 11      # Flatten-1 and Flatten-9 read axis in [0, r]; Flatten-11 on in [-r, r]

# ONNX attribute -> keyword of the numpy kernel (sonnx.run passes the node's axis as ``axis``)
KERNEL_ATTRIBUTES = {"axis": "axis"}


# req: FLATTEN-R1
def axis_range(rank: int, version: int) -> tuple[int, int]:
    """The axis values Flatten-``version`` accepts on an input of ``rank``: [-r, r] from
    Flatten-11, [0, r] before."""
    return (-rank if version >= NEGATIVE_AXIS_FROM else 0), rank


# req: FLATTEN-R1
def normalise_axis(axis: int, rank: int) -> int:
    """A negative axis counts from the end: axis + r (proofs/flatten.mlw, normalised_axis)."""
    return axis + rank if axis < 0 else axis


# req: FLATTEN-R3
def output_shape(shape: tuple[int, ...], axis: int) -> tuple[int, int]:
    """Y's shape for X's ``shape`` and an accepted ``axis``: (product of the dimensions before
    the axis, product of the rest); an empty product is 1."""
    a = normalise_axis(axis, len(shape))
    return size(tuple(shape[:a])), size(tuple(shape[a:]))


# req: FLATTEN-R1, FLATTEN-R2
def constraints(x: TensorSig, *, opset: int, axis: object = None) -> list[Violation]:
    """Every violation of FLATTEN-R1 and R2 of a Flatten node with input ``x`` under ``opset``;
    ``axis`` is the node's attribute (None when the node does not write it). The axis is
    judged against the rank when the rank is known (an unknown shape is PROF-R2's to report)."""
    version, refused = kernel.version_in_force(OP, opset, "FLATTEN-R2")
    if version is None:
        return refused
    found = dense_and_typed(OP, version, [("'input'", x)], dense_rule="FLATTEN-R2", type_rule="FLATTEN-R2",
                            hint=_type_hint)
    found.extend(_axis_violations(x, version, axis))
    return found


def _axis_violations(x: TensorSig, version: int, axis: object) -> list[Violation]:
    if axis is None:
        return [Violation("FLATTEN-R1", f"{OP}-{version} does not write its axis attribute; the profile "
                                        "reads no default for an attribute that decides the result: "
                                        "write it (axis=1 is ONNX's default: onnx.helper.make_attribute"
                                        "('axis', 1), or export with the axis given; `sonnx conform` writes it)")]
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        return [Violation("FLATTEN-R1", f"{OP}-{version} has axis={axis!r} ({type(axis).__name__}); "
                                        "axis must be an integer attribute (INT)")]
    if x.sparse or x.shape is None:
        return []
    rank = len(x.shape)
    lo, hi = axis_range(rank, version)
    if not lo <= int(axis) <= hi:
        extra = ("; a negative axis needs Flatten-11: import opset 11 or later"
                 if axis < 0 and version < NEGATIVE_AXIS_FROM and -rank <= axis else "")
        return [Violation("FLATTEN-R1", f"{OP}-{version} has axis={int(axis)}, outside [{lo}, {hi}] for an "
                                        f"input of rank {rank}{extra}")]
    return []


def _type_hint(elem: str) -> str:
    if elem == "bfloat16":
        return "; bfloat16 needs Flatten-13: import opset 13 or later"
    if elem in _INTS:
        return "; integer types need Flatten-9: import opset 9 or later"
    return "; the profile defines no other element type"


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """The registry's constraint function: (input signatures, attributes, opset)."""
    return constraints(sigs[0], opset=opset, axis=attrs.get("axis"))


# ---------------------------------------------------------------- reference kernel
def _violations(x: TensorValue, axis: object) -> list[Violation]:
    sig = TensorSig(x.shape, x.dtype)
    return tensor_shape_violations(OP, [("'input'", sig)]) + constraints(sig, opset=LATEST, axis=axis)


def _refusal(x: TensorValue, axis: object) -> ProfileViolation:
    return ProfileViolation(_violations(x, axis))




def _every_element_moved(x: TensorValue, axis: int, y: TensorValue) -> bool:
    """FLATTEN-R3 stated by multi-index, as proofs/flatten.mlw's flatten_elements: X's element at
    (i0, ..., i(r-1)) is Y's at (row-major offset of (i0..i(a-1)) in the leading dims, offset of
    (i(a)..) in the trailing dims), bit for bit."""
    a = normalise_axis(axis, len(x.shape))
    lead, trail = tuple(x.shape[:a]), tuple(x.shape[a:])
    for ix in itertools.product(*(range(d) for d in x.shape)):
        at = (flat_index(lead, ix[:a]), flat_index(trail, ix[a:]))
        if not kernel.same_bits(x.dtype, x.data[flat_index(x.shape, ix)], y.data[flat_index(y.shape, at)]):
            return False
    return True


# req: FLATTEN-R1, FLATTEN-R2, FLATTEN-R3
# The body checks the requirements itself, so that they hold with contracts off; the same
# precondition is attached for CrossHair (SONNX_CONTRACTS=full).
@icontract.require(lambda x, axis: not _violations(x, axis), "FLATTEN-R1, FLATTEN-R2, PROF-R2", error=_refusal,
                   enabled=FULL_CONTRACTS)
@icontract.require(lambda x: kernel.well_formed(x), enabled=FULL_CONTRACTS)
@icontract.ensure(lambda x, axis, result: result.dtype == x.dtype and len(result.shape) == 2
                  and result.shape[0] * result.shape[1] == size(x.shape) and len(result.data) == len(x.data))
@icontract.ensure(lambda x, axis, result: result.shape == (
    math.prod(x.shape[:normalise_axis(axis, len(x.shape))]), math.prod(x.shape[normalise_axis(axis, len(x.shape)):])))
@icontract.ensure(lambda x, axis, result: _every_element_moved(x, axis, result), enabled=FULL_CONTRACTS)
def flatten_reference(x: TensorValue, axis: int) -> TensorValue:
    """The reference kernel: Y's shape is output_shape(X's shape, axis) and y[k] = x[k] for
    every flat row-major k (the loop of module Copy of proofs/flatten.mlw)."""
    raise_if_any(_violations(x, axis))
    shape = output_shape(x.shape, axis)
    return TensorValue(x.dtype, shape, _move(x.data, shape))


# req: FLATTEN-R3
def _move(data: list, shape: tuple[int, int]) -> list:
    """Y's flat data: y[k] = x[k] for every k, the same objects (so the same bits)."""
    n = shape[0] * shape[1]
    y: list = [None] * n
    for k in range(n):
        y[k] = data[k]
    return y


# ---------------------------------------------------------------- numpy kernel
_accepted = kernel.AcceptedCalls()


# req: FLATTEN-R1, FLATTEN-R2
def check(x: object, axis: object, opset: object = LATEST) -> tuple[int, int]:
    """Every check of the kernel's arguments (TypeError or ProfileViolation); Y's shape."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise wrong_type("flatten", "axis", "an integer", axis, "")
    version, sigs = kernel.arguments("flatten", opset, [("input", x)])
    kernel.refuse(OP, sigs, constraints(sigs[0][1], opset=version, axis=axis))
    return output_shape(sigs[0][1].shape, int(axis))


# req: FLATTEN-R3
@kernel.entry      # nothing is rounded; guarded as every kernel, for one calling convention
def flatten(x: np.ndarray, *, axis: int, opset: int = LATEST) -> np.ndarray:
    """ONNX Flatten of an array: a new 2-D array of shape (prod(shape[:axis]), prod(shape[axis:]))
    holding x's elements in row-major order, every bit kept (NaN payloads, -0).

    ``axis`` has no default (the profile reads none: FLATTEN-R1); a negative axis counts from the
    end from opset 11 on. The result is a C-contiguous copy in this machine's byte order, never
    a view of x. Raises ``sonnx.ProfileViolation`` (a ValueError naming the requirement) for
    what the profile refuses: an axis out of range, an element type outside the version's type
    set (bool, strings, ...), a sparse input, an empty or oversized tensor, an opset outside
    the known range (PROF-R3). Raises TypeError for a non-array input, a non-integer axis or
    opset.
    """
    return _apply(x, kernel.checked(_accepted, check, x, axis, opset))


# req: FLATTEN-R3
def _apply(x: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The move of an accepted call: a C-order copy (x's elements in row-major order, whatever
    x's strides), reshaped. Native byte order: the same values, so the same bits once read."""
    native = x.dtype.newbyteorder("=")
    y = np.empty(shape, dtype=native)
    np.copyto(y.reshape(x.shape), x, casting="equiv")
    return y


# req: FLATTEN-R1, FLATTEN-R3
def bind(x: np.ndarray, *, axis: int, opset: int = LATEST):
    """``flatten`` checked once now for arrays like ``x`` (the same refusals): a function of the
    array alone, for the caller to run under fpenv.guarded (see gemm.bind)."""
    shape = check(x, axis, opset)
    return lambda a: _apply(a, shape)


def result_shape(shapes, keywords) -> tuple[int, int]:
    """Y's shape from X's and the kernel's ``axis`` (the executor plans with it)."""
    return output_shape(tuple(shapes[0]), int(keywords["axis"]))


OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="structural", type_sets=TYPE_SETS, inputs=("input",), optional=(),
    attributes={"axis": None}, constraints=node_constraints, reference=flatten_reference,
    kernel=flatten, bind=bind, spec="spec/flatten.md", proofs=("proofs/flatten.mlw",),
    kernel_attributes=KERNEL_ATTRIBUTES, output_shape=result_shape, comparison="bits",
    theories=("proofs/tensor.mlw",),
    # conform writes an omitted axis as ONNX's default, 1 (every version)
    conform=ConformRule(rule="FLATTEN-R1", defaults={"axis": 1}))
