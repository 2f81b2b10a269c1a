"""ONNX Transpose under the SONNX profile: Y = X with its axes permuted (spec/transpose.md).

A structural operator: it moves elements and computes none. For a permutation p of 0..r-1,
Y has the shape (d[p0], ..., d[p(r-1)]) and Y[j0, ..., j(r-1)] = X[i] where i[p[k]] = j[k],
every bit kept (NaN payloads, -0), so exact and fast modes give the same bits.
Checks: TRANSPOSE-R1 (perm written, a list of r distinct integers in [0, r)), TRANSPOSE-R2
(dense, one element type of the version's type set, no cast). Requirements:
src/sonnx/ops/transpose.toml. Proof: proofs/transpose.mlw. Tests: tests/ops/test_transpose.py,
tests/crosshair/transpose_cases.py.

Decisions (spec/transpose.md says why):
- an omitted perm is refused (TRANSPOSE-R1), not read as ONNX's default (the axes reversed):
  GR4 wants every attribute that decides the result written in the model; the finding says
  which perm to write, and `sonnx conform` writes the default explicitly;
- negative entries are refused: ONNX's schemas state no negative axes for perm (onnxruntime
  refuses them too), so the profile reads none;
- the type sets are those of onnx's schemas restricted to the element types the profile
  defines (sonnx.dtypes): bool, strings, complex, the 8-, 4- and 2-bit types are refused;
- the numpy kernel returns a new C-contiguous array in this machine's byte order, never a view.
"""
from __future__ import annotations

import itertools

import icontract
from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import ProfileViolation, Violation, raise_if_any, wrong_type
from ..semantics.tensor import FULL_CONTRACTS, TensorValue, flat_index
from . import kernel
from .registry import ConformRule, Operator
from .signature import TensorSig, dense_and_typed, tensor_shape_violations

OP = "Transpose"
PREFIX = "TRANSPOSE"
LATEST = 25
_INTS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
_FROM_1 = dtypes.IEEE_FLOATS | _INTS
_FROM_13 = _FROM_1 | {"bfloat16"}
# since_version -> element types: onnx's schema of that version, restricted to the profile's
# element types (dtypes.NUMERIC_TYPES); tests/ops/test_transpose.py compares them with the schemas
TYPE_SETS = {1: _FROM_1, 13: _FROM_13, 21: _FROM_13, 23: _FROM_13, 24: _FROM_13, 25: _FROM_13}

# ONNX attribute -> keyword of the numpy kernel (sonnx.run passes the node's perm as ``perm``)
KERNEL_ATTRIBUTES = {"perm": "perm"}


def _is_int(v: object) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


# req: TRANSPOSE-R1
def is_permutation(perm: tuple[int, ...], rank: int) -> bool:
    """``perm`` lists each of 0..rank-1 exactly once (proofs/transpose.mlw, is_perm)."""
    return len(perm) == rank and sorted(perm) == list(range(rank))


# req: TRANSPOSE-R3
def output_shape(shape: tuple[int, ...], perm: tuple[int, ...]) -> tuple[int, ...]:
    """Y's shape: Y's axis k is X's axis perm[k]."""
    return tuple(shape[p] for p in perm)


# req: TRANSPOSE-R3
def source_index(perm: tuple[int, ...], j: tuple[int, ...]) -> tuple[int, ...]:
    """The multi-index of X read for Y's ``j``: i[perm[k]] = j[k] (proofs/transpose.mlw, src)."""
    i = [0] * len(perm)
    for k, p in enumerate(perm):
        i[p] = j[k]
    return tuple(i)


# req: TRANSPOSE-R1, TRANSPOSE-R2
def constraints(x: TensorSig, *, opset: int, perm: object = None) -> list[Violation]:
    """Every violation of TRANSPOSE-R1 and R2 of a Transpose node with input ``x`` under
    ``opset``; ``perm`` is the node's attribute (None when the node does not write it). The perm
    is judged against the rank when the rank is known (an unknown shape is PROF-R2's)."""
    version, refused = kernel.version_in_force(OP, opset, "TRANSPOSE-R2")
    if version is None:
        return refused
    found = dense_and_typed(OP, version, [("'data'", x)], dense_rule="TRANSPOSE-R2", type_rule="TRANSPOSE-R2",
                            hint=_type_hint)
    found.extend(_perm_violations(x, version, perm))
    return found


def _perm_violations(x: TensorSig, version: int, perm: object) -> list[Violation]:
    rank = None if x.sparse or x.shape is None else len(x.shape)
    if perm is None:
        written = "" if rank is None else f": for this rank-{rank} input, perm={list(range(rank))[::-1]}"
        return [Violation("TRANSPOSE-R1", f"{OP}-{version} does not write its perm attribute; the profile reads "
                                          "no default for an attribute that decides the result: write it "
                                          f"(ONNX's default reverses the axes{written}; `sonnx conform` "
                                          "writes it)")]
    if not isinstance(perm, (list, tuple, np.ndarray)) or not all(_is_int(p) for p in perm):
        return [Violation("TRANSPOSE-R1", f"{OP}-{version} has perm={perm!r}; perm must be a list of "
                                          "integers (INTS)")]
    perm = tuple(int(p) for p in perm)
    if rank is None:
        return []
    if not is_permutation(perm, rank):
        why = (f"it has {len(perm)} entries for an input of rank {rank}" if len(perm) != rank else
               "it repeats an axis" if len(set(perm)) != rank else
               f"an entry lies outside [0, {rank - 1}]")
        return [Violation("TRANSPOSE-R1", f"{OP}-{version} has perm={list(perm)}, not a permutation of "
                                          f"0..{rank - 1}: {why}")]
    return []


def _type_hint(elem: str) -> str:
    if elem == "bfloat16":
        return "; bfloat16 needs Transpose-13: import opset 13 or later"
    return "; the profile defines no other element type"


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """The registry's constraint function: (input signatures, attributes, opset)."""
    return constraints(sigs[0], opset=opset, perm=attrs.get("perm"))


# ---------------------------------------------------------------- reference kernel
def _violations(x: TensorValue, perm: object) -> list[Violation]:
    sig = TensorSig(x.shape, x.dtype)
    return tensor_shape_violations(OP, [("'data'", sig)]) + constraints(sig, opset=LATEST, perm=perm)


def _refusal(x: TensorValue, perm: object) -> ProfileViolation:
    return ProfileViolation(_violations(x, perm))




def _every_element_moved(x: TensorValue, perm: tuple[int, ...], y: TensorValue) -> bool:
    """TRANSPOSE-R3 stated by multi-index, as proofs/transpose.mlw's transpose_elements: X's
    element at i is Y's at j = (i[perm[0]], ..., i[perm[r-1]]), bit for bit."""
    for ix in itertools.product(*(range(d) for d in x.shape)):
        j = tuple(ix[p] for p in perm)
        if not kernel.same_bits(x.dtype, x.data[flat_index(x.shape, ix)], y.data[flat_index(y.shape, j)]):
            return False
    return True


# req: TRANSPOSE-R1, TRANSPOSE-R2, TRANSPOSE-R3
# The body checks the requirements itself, so that they hold with contracts off; the same
# precondition is attached for CrossHair (SONNX_CONTRACTS=full).
@icontract.require(lambda x, perm: not _violations(x, perm), "TRANSPOSE-R1, TRANSPOSE-R2, PROF-R2", error=_refusal,
                   enabled=FULL_CONTRACTS)
@icontract.require(lambda x: kernel.well_formed(x), enabled=FULL_CONTRACTS)
@icontract.ensure(lambda x, perm, result: result.dtype == x.dtype and len(result.data) == len(x.data))
@icontract.ensure(lambda x, perm, result: result.shape == tuple(x.shape[p] for p in perm))
@icontract.ensure(lambda x, perm, result: _every_element_moved(x, perm, result), enabled=FULL_CONTRACTS)
def transpose_reference(x: TensorValue, perm: tuple[int, ...]) -> TensorValue:
    """The reference kernel: Y's shape is output_shape(X's shape, perm) and, for every Y index j
    in row-major order, y[flat(j)] = x[flat(source_index(perm, j))] (module Copy of
    proofs/transpose.mlw)."""
    raise_if_any(_violations(x, perm))
    perm = tuple(int(p) for p in perm)
    shape = output_shape(x.shape, perm)
    return TensorValue(x.dtype, shape, _move(x.data, x.shape, perm, shape))


# req: TRANSPOSE-R3
def _move(data: list, xshape: tuple[int, ...], perm: tuple[int, ...], shape: tuple[int, ...]) -> list:
    """Y's flat data in row-major order of Y: the same objects as X's (so the same bits)."""
    y: list = []
    for j in itertools.product(*(range(d) for d in shape)):
        y.append(data[flat_index(xshape, source_index(perm, j))])
    return y


# ---------------------------------------------------------------- numpy kernel
_accepted = kernel.AcceptedCalls()


# req: TRANSPOSE-R1, TRANSPOSE-R2
def check(x: object, perm: object, opset: object = LATEST) -> tuple[int, ...]:
    """Every check of the kernel's arguments (TypeError or ProfileViolation); the perm as a tuple."""
    if not isinstance(perm, (list, tuple)) or not all(_is_int(p) for p in perm):
        raise wrong_type("transpose", "perm", "a list or tuple of integers", perm, "")
    version, sigs = kernel.arguments("transpose", opset, [("data", x)])
    kernel.refuse(OP, sigs, constraints(sigs[0][1], opset=version, perm=perm))
    return tuple(int(p) for p in perm)


# req: TRANSPOSE-R3
@kernel.entry      # nothing is rounded; guarded as every kernel, for one calling convention
def transpose(x: np.ndarray, *, perm, opset: int = LATEST) -> np.ndarray:
    """ONNX Transpose of an array: a new array whose axis k is x's axis perm[k], every bit kept
    (NaN payloads, -0).

    ``perm`` has no default (the profile reads none: TRANSPOSE-R1) and must list each of
    0..rank-1 once. The result is a C-contiguous copy in this machine's byte order, never a
    view of x. Raises ``sonnx.ProfileViolation`` (a ValueError naming the requirement) for what
    the profile refuses: a perm that is not a permutation of the axes, an element type outside
    the version's type set (bool, strings, ...), an empty or oversized tensor, an opset outside
    the known range (PROF-R3). Raises TypeError for a non-array input, a perm that is not a list
    of integers, a non-integer opset.
    """
    return _apply(x, kernel.checked(_accepted, check, x, perm, opset))


# req: TRANSPOSE-R3
def _apply(x: np.ndarray, perm: tuple[int, ...]) -> np.ndarray:
    """The move of an accepted call: numpy's transpose (a view with permuted strides) copied
    into a new C-order array in native byte order (the same values, so the same bits)."""
    view = np.transpose(x, perm)
    y = np.empty(view.shape, dtype=x.dtype.newbyteorder("="))
    np.copyto(y, view, casting="equiv")
    return y


# req: TRANSPOSE-R1, TRANSPOSE-R3
def bind(x: np.ndarray, *, perm, opset: int = LATEST):
    """``transpose`` checked once now for arrays like ``x`` (the same refusals): a function of
    the array alone, for the caller to run under fpenv.guarded (see gemm.bind)."""
    p = check(x, perm, opset)
    return lambda a: _apply(a, p)


# req: TRANSPOSE-R1
def default_perm(inputs: tuple) -> list[int] | str:
    """ONNX's default perm for the node's input (conform writes it, ConformRule.defaults): the
    axes reversed, (r-1, ..., 0) for an input of rank r."""
    x = inputs[0] if inputs else None
    if x is None:
        return "the input's rank is unknown, and the default (the axes reversed) depends on it"
    return list(reversed(range(len(x))))


def result_shape(shapes, keywords) -> tuple[int, ...]:
    """Y's shape from X's and the kernel's ``perm`` (the executor plans with it)."""
    return output_shape(tuple(shapes[0]), tuple(int(p) for p in keywords["perm"]))


OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="structural", type_sets=TYPE_SETS, inputs=("data",), optional=(),
    attributes={"perm": None}, constraints=node_constraints, reference=transpose_reference,
    kernel=transpose, bind=bind, spec="spec/transpose.md", proofs=("proofs/transpose.mlw",),
    kernel_attributes=KERNEL_ATTRIBUTES, output_shape=result_shape, comparison="bits",
    theories=("proofs/tensor.mlw",),
    conform=ConformRule(rule="TRANSPOSE-R1", defaults={"perm": lambda inputs, attrs, opset, constants: default_perm(inputs)}))
