"""The profile's rules applied to one node: the registered operator's own constraint function
(sonnx/ops/registry.py) is called on the signatures of the node's inputs; this module only reads
attributes. No rule is decided here (see sonnx/ops/<op>.py and sonnx.profile)."""
from __future__ import annotations

import onnx

from ..errors import Violation
from ..ops.registry import operators
from ..ops.signature import TensorSig

_INT, _FLOAT, _INTS = onnx.AttributeProto.INT, onnx.AttributeProto.FLOAT, onnx.AttributeProto.INTS
_STRING = onnx.AttributeProto.STRING


def attributes(node: onnx.NodeProto) -> dict[str, int | float | str | tuple[int, ...]]:
    """The node's INT, FLOAT, INTS and STRING attributes (the kinds the profile's operators
    have; INTS: window shapes, and the legacy consumed_inputs of version 1 of some, which their
    own rules refuse; STRING: a mode such as auto_pad, decoded as UTF-8, undecodable bytes kept
    as bytes for the operator's rule to refuse)."""
    out: dict[str, int | float | str | bytes | tuple[int, ...]] = {}
    for a in node.attribute:
        if a.type == _INT:
            out[a.name] = a.i
        elif a.type == _FLOAT:
            out[a.name] = a.f
        elif a.type == _INTS:
            out[a.name] = tuple(a.ints)
        elif a.type == _STRING:
            try:
                out[a.name] = a.s.decode("utf-8")
            except UnicodeDecodeError:
                out[a.name] = a.s
    return out


class OperatorRules:
    """Calls the constraint function of a node's operator, memoized: the functions are pure,
    and a large model repeats few distinct (operator, opset, signatures, attributes) keys."""

    def __init__(self) -> None:
        self._memo: dict[tuple, list[Violation]] = {}

    def check(self, op: str, sigs: tuple[TensorSig | None, ...], attrs: dict[str, int | float],
              opset: int) -> list[Violation]:
        operator = operators()[op]
        if not operator.required <= len(sigs) <= len(operator.inputs):
            return []  # wrong arity: the ONNX checker reports it
        key = (op, opset, sigs, tuple(sorted(attrs.items())) if attrs else ())
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = operator.constraints(sigs, attrs, opset)
        return got


def op_version(op: str, domain: str, opset: int | None) -> int | None:
    """The version of the operator in force under ``opset`` (None when unknown)."""
    if opset is None:
        return None
    if op in operators() and domain in ("", "ai.onnx"):
        return operators()[op].since_version(opset)
    try:
        return onnx.defs.get_schema(op, opset, domain).since_version
    except Exception:
        return None
