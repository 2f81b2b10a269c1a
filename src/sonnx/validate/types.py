"""ONNX TypeProto <-> the TensorSig that the operators' constraint functions read."""
from __future__ import annotations

from .. import onnx_proto as onnx  # onnx's classes and checker without its package start-up
TensorProto = onnx.TensorProto

from .. import dtypes
from ..ops.signature import TensorSig

UNKNOWN = TensorSig(shape=None, elem_type=None)
_NON_TENSOR = {"sequence_type": "sequence", "map_type": "map", "optional_type": "optional",
               "opaque_type": "opaque"}


def elem_name(code: int) -> str | None:
    return None if code == TensorProto.UNDEFINED else dtypes.name_of_tensor_proto(code)


def _dim(d) -> int | str | None:
    which = d.WhichOneof("value")
    if which == "dim_value":
        return d.dim_value
    if which == "dim_param":
        return d.dim_param or None
    return None


def convert(tp: onnx.TypeProto) -> tuple[TensorSig, str | None]:
    """(signature, non-tensor kind): kind names a sequence/map/optional type, else None."""
    which = tp.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        tt = getattr(tp, which)
        shape = tuple(_dim(d) for d in tt.shape.dim) if tt.HasField("shape") else None
        return TensorSig(shape, elem_name(tt.elem_type), which == "sparse_tensor_type"), None
    if which is None:
        return UNKNOWN, None
    return UNKNOWN, _NON_TENSOR.get(which, which)


class TypeCache:
    """Converts each distinct TypeProto once (a 100k-node chain has a handful of types; a
    serialized TypeProto is a cheap, exact key) and interns the results, so that equal entries
    are the same object and ``id(entry)`` is a cheap key for memoizing rule results."""

    def __init__(self) -> None:
        self._by_bytes: dict[bytes, tuple[TensorSig, str | None]] = {}
        self._interned: dict[tuple[TensorSig, str | None], tuple[TensorSig, str | None]] = {}

    def intern(self, entry: tuple[TensorSig, str | None]) -> tuple[TensorSig, str | None]:
        return self._interned.setdefault(entry, entry)

    def __call__(self, tp: onnx.TypeProto) -> tuple[TensorSig, str | None]:
        key = tp.SerializeToString()
        got = self._by_bytes.get(key)
        if got is None:
            got = self._by_bytes[key] = self.intern(convert(tp))
        return got


def type_proto_of(sig: TensorSig, kind: str | None = None) -> onnx.TypeProto | None:
    """A TypeProto carrying what ``sig`` knows (for inferring a subgraph or a function body)."""
    if kind is not None:
        return None
    code = getattr(TensorProto, (sig.elem_type or "undefined").upper(), TensorProto.UNDEFINED)
    if not isinstance(code, int):
        code = TensorProto.UNDEFINED
    shape = None if sig.shape is None else [d if isinstance(d, (int, str)) else None for d in sig.shape]
    if sig.sparse:
        return onnx.helper.make_sparse_tensor_type_proto(code, shape)
    return onnx.helper.make_tensor_type_proto(code, shape)


def initializer_sig(t: onnx.TensorProto) -> TensorSig:
    return TensorSig(tuple(t.dims), elem_name(t.data_type))


def sparse_initializer_sig(s: onnx.SparseTensorProto) -> TensorSig:
    return TensorSig(tuple(s.dims), elem_name(s.values.data_type), sparse=True)


def memo_table() -> dict:
    """A new memo of verdicts keyed by signature (operator, opset, operand entries, attributes):
    the propagation's, the walker's and the operator rules'. A plain dict: the constraint
    functions are pure functions of that key, so a repeated signature has the same verdict.
    tests/validate/test_own_shapes.py replaces it by a table that remembers nothing and requires
    the same findings."""
    return {}
