"""What an operator's constraint function sees of a tensor: shape, element type, sparsity.

The kernels build it from numpy arrays, the validator from a graph's inferred types, and
both hand it to the same constraint function.
"""
from __future__ import annotations

from dataclasses import dataclass

from typing import Callable

import numpy as np

from .. import dtypes
from ..errors import Violation
from ..profile import Dim, shape_violations
from . import registry


@dataclass(frozen=True)
class TensorSig:
    shape: tuple[Dim, ...] | None      # None: rank unknown; a dim may be None or a symbol
    elem_type: str | None              # ONNX element type name; None: unknown
    sparse: bool = False


def _is_sparse(x: object) -> bool:
    module = type(x).__module__ or ""
    return module.startswith(("scipy.sparse", "sparse.")) or type(x).__name__ == "SparseTensorProto"


# req: @dense, @typed
def sig_of_array(x: object, op: str, what: str) -> TensorSig:
    """Signature of a kernel argument; TypeError for anything that is not a dense array.

    Sparse objects are let through as sparse signatures so that the constraint function
    reports them under their requirement ID.
    """
    if _is_sparse(x):
        return TensorSig(shape=None, elem_type=None, sparse=True)
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"sonnx.{op}: {what} is a masked array; its mask would be ignored. "
                        f"Pass numpy.ma.getdata(x) or fill the masked values first")
    if not isinstance(x, np.ndarray):
        raise TypeError(f"sonnx.{op}: {what} must be a numpy.ndarray, got {type(x).__name__}; "
                        f"wrap it with numpy.asarray(x, dtype=...) choosing the element type explicitly")
    return TensorSig(shape=tuple(int(d) for d in x.shape), elem_type=dtypes.name_of(x.dtype))


# req: @same-shape, @no-broadcast
def static_shape(t: TensorSig) -> bool:
    """A dense tensor whose every dimension is an integer (what shapes can be compared on)."""
    return not t.sparse and t.shape is not None and all(
        isinstance(d, int) and not isinstance(d, bool) for d in t.shape)


# req: PROF-R2
def tensor_shape_violations(op: str, inputs: list[tuple[str, TensorSig]]) -> list[Violation]:
    """PROF-R2 of a kernel's dense inputs (a sparse one is the operator's dense rule to refuse).
    The operators' constraints leave PROF-R2 out: the validator checks it where each tensor is
    defined, the kernels here."""
    return [v for what, t in inputs if not t.sparse for v in shape_violations(t.shape, f"{op} input {what}")]


# req: @dense, @typed
def dense_and_typed(op: str, version: int, inputs: list[tuple[str, TensorSig]], *, dense_rule: str,
                    type_rule: str, hint: Callable[[str], str] = lambda elem: "") -> list[Violation]:
    """The two rules every profile operator shares, under its own requirement IDs: inputs are
    dense (``dense_rule``), and all share one element type from the version's type set
    (``type_rule``); ``hint`` adds an operator-specific way out for a refused type."""
    found = [Violation(dense_rule, f"{op} input {what} is sparse; the profile accepts dense tensors "
                                   "only: densify it before the model (e.g. x.toarray())")
             for what, t in inputs if t.sparse]
    allowed = registry.type_set(op, version)
    for what, t in inputs:
        if t.sparse:
            continue
        if t.elem_type is None:
            found.append(Violation(type_rule, f"{op} input {what} has an unknown element type; "
                                              "declare one of: " + ", ".join(sorted(allowed))))
        elif t.elem_type not in allowed:
            found.append(Violation(type_rule, f"{op}-{version} input {what} has element type {t.elem_type}, "
                                              f"not in the type set of {op}-{version} "
                                              f"({', '.join(sorted(allowed))}){hint(t.elem_type)}"))
    typed = [(what, t.elem_type) for what, t in inputs if t.elem_type in allowed]
    if len({elem for _, elem in typed}) > 1:
        listed = ", ".join(f"{what}: {elem}" for what, elem in typed)
        found.append(Violation(type_rule, f"{op} inputs have different element types ({listed}); the "
                                          "profile never casts implicitly: give the inputs one element type "
                                          "(convert a constant operand's initializer, or an array with "
                                          ".astype; a Cast node is not in the profile)"))
    return found


# ---------------------------------------------------------------- memo of accepted calls
# A kernel's checks cost microseconds; a model calls a kernel with the same few signatures over
# and over. The memo remembers calls that were *accepted*, keyed by what the checks read: the
# exact type and shape/dtype of each array and the exact type and value of each other argument.
# The type is part of the key because equal values of different types get different verdicts
# (trans_a=1 is accepted, trans_a=1.0 refused, and 1 == 1.0 with one hash). Only the types
# below take part: their == is value equality, so equal keys mean the same verdict. Refusals
# are not remembered: they are recomputed (and their messages rebuilt) every time.
MEMO_SCALARS = frozenset({bool, int, float, str, type(None), np.bool_, np.float16, np.float32,
                          np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                          np.uint32, np.uint64})
# Each kernel builds its key inline (_memo_key in mul.py and gemm.py): it runs on every call,
# and a generic loop over the arguments would cost more than the checks it saves.
MEMO_SIZE = 1024     # bounded: a long-running caller with endless new shapes starts over


class AcceptedCalls(dict):
    """key -> what the kernel derived from the accepted call (its plan), for one kernel."""

    every: list["AcceptedCalls"] = []

    def __init__(self) -> None:
        super().__init__()
        AcceptedCalls.every.append(self)

    def remember(self, key: tuple | None, plan: object) -> None:
        if key is not None:
            if len(self) >= MEMO_SIZE:
                self.clear()
            self[key] = plan


def clear_memos() -> None:
    """Forget every accepted call (tests compare verdicts with those of a fresh process)."""
    for memo in AcceptedCalls.every:
        memo.clear()
