"""The profile's rules applied to one node: each operator's own constraint function is called on
the signatures of the node's inputs; this module only reads attributes and adapts arguments.
No rule is decided here (see sonnx.ops.mul, sonnx.ops.gemm, sonnx.profile)."""
from __future__ import annotations

from typing import Callable, Sequence

import onnx

from .. import dtypes
from ..errors import Violation
from ..ops.signature import TensorSig

_INT, _FLOAT = onnx.AttributeProto.INT, onnx.AttributeProto.FLOAT


def attributes(node: onnx.NodeProto) -> dict[str, int | float]:
    """The node's INT and FLOAT attributes (the only kinds Mul and Gemm have)."""
    out: dict[str, int | float] = {}
    for a in node.attribute:
        if a.type == _INT:
            out[a.name] = a.i
        elif a.type == _FLOAT:
            out[a.name] = a.f
    return out


def _mul(sigs: Sequence[TensorSig | None], attrs: dict, opset: int) -> list[Violation]:
    from ..ops import mul
    a, b = sigs
    return mul.constraints(a, b, opset=opset, broadcast=attrs.get("broadcast"))


def _gemm(sigs: Sequence[TensorSig | None], attrs: dict, opset: int) -> list[Violation]:
    from ..ops import gemm  # lands separately; a missing module is reported by OperatorRules
    a, b, c = (list(sigs) + [None])[:3]
    return gemm.constraints(a, b, c, opset=opset, alpha=attrs.get("alpha", 1.0),
                            beta=attrs.get("beta", 1.0), trans_a=attrs.get("transA", 0),
                            trans_b=attrs.get("transB", 0), broadcast=attrs.get("broadcast"))


# operator -> (constraint adapter, number of inputs required, number allowed)
OPERATORS: dict[str, tuple[Callable[..., list[Violation]], int, int]] = {
    "Mul": (_mul, 2, 2),
    "Gemm": (_gemm, 2, 3),
}


def gemm_available() -> bool:
    try:
        from ..ops import gemm  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name != "sonnx.ops.gemm":
            raise
        return False
    return True


class OperatorRules:
    """Calls the constraint function of a node's operator, memoized: the functions are pure,
    and a large model repeats few distinct (operator, opset, signatures, attributes) keys."""

    def __init__(self) -> None:
        self._memo: dict[tuple, list[Violation]] = {}

    def check(self, op: str, sigs: tuple[TensorSig | None, ...], attrs: dict[str, int | float],
              opset: int) -> list[Violation]:
        fn, lo, hi = OPERATORS[op]
        if not lo <= len(sigs) <= hi:
            return []  # wrong arity: the ONNX checker reports it
        key = (op, opset, sigs, tuple(sorted(attrs.items())) if attrs else ())
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = fn(sigs, attrs, opset)
        return got


def op_version(op: str, domain: str, opset: int | None) -> int | None:
    """The version of the operator in force under ``opset`` (None when unknown)."""
    if opset is None:
        return None
    if op in OPERATORS and domain in ("", "ai.onnx"):
        return dtypes.since_version(op, opset)
    try:
        return onnx.defs.get_schema(op, opset, domain).since_version
    except Exception:
        return None
