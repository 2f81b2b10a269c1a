"""What an operator's constraint function sees of a tensor: shape, element type, sparsity.

The kernels build it from numpy arrays (kernel.sig_of_array), the validator from a graph's
inferred types, and both hand it to the same constraint function.
"""
from __future__ import annotations

from dataclasses import dataclass

from typing import Callable

from .. import dtypes
from ..errors import Violation
from ..profile import Dim, shape_violations
from . import registry


@dataclass(frozen=True)
class TensorSig:
    shape: tuple[Dim, ...] | None      # None: rank unknown; a dim may be None or a symbol
    elem_type: str | None              # ONNX element type name; None: unknown
    sparse: bool = False



@dataclass(frozen=True)
class NotConstant:
    """The value the validator passes for an operator's constant input (Operator.constant_inputs)
    that has no constant value in the model: ``why`` says what it is instead."""
    why: str


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
