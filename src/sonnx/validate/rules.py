"""The profile's rules applied to one node: the registered operator's own constraint function
(sonnx/ops/registry.py) is called on the signatures of the node's inputs; this module only reads
attributes. No rule is decided here (see sonnx/ops/<op>.py and sonnx.profile)."""
from __future__ import annotations

from .. import onnx_proto as onnx  # onnx's classes and checker without its package start-up

from ..errors import Violation
from ..ops.registry import operators
from ..ops.signature import NotConstant, TensorSig
from . import types as _types

_INT, _FLOAT, _INTS = onnx.AttributeProto.INT, onnx.AttributeProto.FLOAT, onnx.AttributeProto.INTS
_T = onnx.TensorProto
_INTEGER_TYPES = frozenset({_T.INT8, _T.INT16, _T.INT32, _T.INT64, _T.UINT8, _T.UINT16, _T.UINT32, _T.UINT64})
_FLOAT_TYPES = frozenset({_T.FLOAT16, _T.BFLOAT16, _T.FLOAT, _T.DOUBLE})
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


class Constants:
    """The values of one graph's constant inputs, for the operators whose record names inputs
    that must be constants (Operator.constant_inputs); built on first use."""

    def __init__(self, graph: onnx.GraphProto) -> None:
        self._graph = graph
        self._inits: dict[str, onnx.TensorProto] | None = None
        self._inputs: set[str] = set()

    def value(self, name: str) -> tuple[int, ...] | tuple[float, ...] | NotConstant:
        """The numbers held by initializer ``name`` (ints, or floats for a float initializer: a
        constant whose value decides the result, not its shape; the operator's rule judges its
        type from the signature), or NotConstant saying why there are none."""
        if self._inits is None:
            self._inits = {t.name: t for t in self._graph.initializer}
            self._inputs = {vi.name for vi in self._graph.input}
        if name in self._inputs:
            return NotConstant(f"graph input '{name}' (a value the caller may replace at run time)")
        t = self._inits.get(name)
        if t is None:
            return NotConstant(f"'{name}', computed by a node or defined outside this graph")
        if t.data_type not in _INTEGER_TYPES | _FLOAT_TYPES:
            return NotConstant(f"initializer '{name}' of element type "
                               f"{onnx.helper.tensor_dtype_to_np_dtype(t.data_type)}, not numbers")
        try:
            number = int if t.data_type in _INTEGER_TYPES else float
            return tuple(number(v) for v in onnx.numpy_helper.to_array(t).ravel())
        except Exception as exc:     # external data not found, malformed raw data
            return NotConstant(f"initializer '{name}', whose data cannot be read ({exc})")


class OperatorRules:
    """Calls the constraint function of a node's operator, memoized: the functions are pure,
    and a large model repeats few distinct (operator, opset, signatures, attributes) keys."""

    def __init__(self) -> None:
        self._memo: dict[tuple, list[Violation]] = _types.memo_table()

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
