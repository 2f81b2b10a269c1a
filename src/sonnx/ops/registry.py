"""The profile's operators: each module in sonnx/ops declares one ``Operator`` record, and
``operators()`` below lists them, one explicit line each. Everything that needs the list of
operators (the profile's PROF-R1, the type sets, the validator, the requirement-ID pattern of
the trace) reads it here; no other list of operators exists.

A record, not a framework: no discovery, no base class, no hooks. The list is built on first
use because each operator module imports ``Operator`` from here.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

from ..errors import Violation


@dataclass(frozen=True, eq=False)
class Operator:
    name: str                                   # ONNX op_type, default domain
    prefix: str                                 # requirement-ID prefix, e.g. "MUL" (IDs PREFIX-R1, ...)
    # what the other layers may assume about its shape of computation: "elementwise" (same-shape
    # binary, one element function), "unary", "matrix" (Gemm-like fold), "structural" (moves
    # elements, no arithmetic); requirement families @kind:<kind> are built from it
    kind: str
    type_sets: Mapping[int, frozenset[str]]     # since_version -> allowed element types (onnx schemas)
    inputs: tuple[str, ...]                     # every input, in ONNX order
    optional: tuple[str, ...]                   # the trailing inputs that may be absent
    attributes: Mapping[str, Any]               # attribute -> default (None: absent unless given)
    # the node-level check: (input signatures, INT/FLOAT attributes, default-domain opset) ->
    # every violation of the operator's own requirements
    constraints: Callable[[Sequence[Any], Mapping[str, Any], int], list[Violation]]
    reference: Callable                         # plain-Python kernel over semantics.tensor.TensorValue
    kernel: Callable                            # the numpy kernel exported as sonnx.<name>
    spec: str                                   # e.g. "spec/mul.md"
    proofs: tuple[str, ...]                     # the operator's own .mlw files
    # the kernel with its checks done once: bind(*example_arrays, **kernel_keywords) -> a
    # function of the arrays alone, for arrays of the examples' shapes and types, to be run
    # under fpenv.guarded (sonnx.run.session plans a model with it)
    bind: Callable

    @property
    def versions(self) -> tuple[int, ...]:
        """The since-versions the profile knows, ascending."""
        return tuple(sorted(self.type_sets))

    def since_version(self, opset: int) -> int | None:
        """The version in force under a default-domain opset, or None if there is none yet."""
        found = [v for v in self.versions if v <= opset]
        return found[-1] if found else None

    @property
    def required(self) -> int:
        """How many inputs a node must have."""
        return len(self.inputs) - len(self.optional)


@lru_cache(maxsize=1)
def operators() -> dict[str, Operator]:
    """op_type -> Operator, in the order the profile lists them."""
    from . import add, gemm, matmul, mul, relu, sub
    listed = [
        mul.OPERATOR,
        gemm.OPERATOR,
        add.OPERATOR,
        sub.OPERATOR,
        relu.OPERATOR,
        matmul.OPERATOR,
    ]
    return {op.name: op for op in listed}


def operator(name: str) -> Operator:
    """The profile operator ``name`` (KeyError when it is not one)."""
    return operators()[name]
