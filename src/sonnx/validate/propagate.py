"""The validator's own shape propagation for a profile model (docs/validate.md, "Shapes of a
profile model"): when every node is a profile operator of the default domain, every type a node
reads is static and nothing calls a subgraph or a function, each node's result is computed by its
operator's record (the constraint function accepts the operands, then ``output_shape`` gives the
shape; the element type is the first operand's, as sonnx.run plans it) and compared with what the
model declares.

It only ever decides "onnx's strict shape inference would accept this model and infer exactly
these types": anything it cannot decide (a foreign operator, a subgraph, a function, a dimension
that is not a number, a constraint that refuses the operands, an operator whose record has no
``output_shape``, a declaration that disagrees) returns None, and the caller runs onnx's inference,
which then reports what it reports today. So a verdict is never weakened: this path produces no
finding of its own, and takes a model only where inference would have produced none."""
from __future__ import annotations

from ..ops.registry import operators
from ..ops.signature import TensorSig
from ..profile import DEFAULT_DOMAINS
from . import types as _types
from .types import elem_name

_INT, _FLOAT = 2, 1      # onnx.AttributeProto.INT, FLOAT (the only kinds read here)
_TENSOR = "tensor_type"


def _declared(tp) -> TensorSig | None:
    """A declared tensor type as a signature, or None unless it is a dense tensor of known
    element type and a shape whose every dimension is a number."""
    if tp.WhichOneof("value") != _TENSOR:
        return None
    tt = tp.tensor_type
    if not tt.HasField("shape") or not tt.elem_type:
        return None
    dims = []
    for d in tt.shape.dim:
        if d.WhichOneof("value") != "dim_value" or d.dim_value < 0:
            return None
        dims.append(d.dim_value)
    try:
        return TensorSig(tuple(dims), elem_name(tt.elem_type))
    except Exception:  # an element type code onnx does not know: inference judges it
        return None


class Types(dict):
    """value name -> entry, and ``unread``: the node results and the initializers (other than
    graph inputs) that no node of the main graph reads (the graph rules' liveness needs them,
    graph.findings; collected here, where each name is read anyway, rather than decoded
    again: kept as what is still unread, a set that stays small, rather than every name read);
    ``distinct``: each distinct entry once (the walker registers them, and judges PROF-R2
    once per entry, without a pass over every value)."""
    unread: set[str]
    distinct: list[tuple]


def profile_types(model, max_opset: int) -> dict[str, tuple] | None:
    """See _profile_types; anything unexpected in the model (text that is not UTF-8, a field
    out of range) leaves the decision to onnx's inference, which reports it."""
    try:
        return _profile_types(model, max_opset)
    except Exception:
        return None


def _profile_types(model, max_opset: int) -> dict[str, tuple] | None:
    """Every value of the main graph -> its entry (signature, None), when the model's shapes
    follow from its declarations through the profile's operators and agree with every
    declaration; else None (the caller then runs onnx's shape inference). Equal entries are
    one object (the walker memoizes on their identities). ``max_opset``: the newest
    default-domain opset onnx's inference knows (beyond it onnx refuses, and so must we)."""
    if model.functions or any(o.domain not in DEFAULT_DOMAINS for o in model.opset_import):
        return None
    opset = next((o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS), None)
    if opset is None or not 1 <= opset <= max_opset:
        return None
    g = model.graph
    if g.sparse_initializer:
        return None
    ops = operators()
    interned: dict[tuple, tuple] = {}
    intern = lambda sig: interned.setdefault((sig, None), (sig, None))  # noqa: E731
    types = Types()
    unread = types.unread = set()
    for t in g.initializer:
        if t.data_location == 1 or any(d < 0 for d in t.dims):  # external data, bad dims: onnx's
            return None
        types[t.name] = intern(TensorSig(tuple(t.dims), elem_name(t.data_type)))
        unread.add(t.name)
    for vi in g.input:
        sig = _declared(vi.type)
        if sig is None or (vi.name in types and types[vi.name][0] != sig):
            return None       # an initializer and its input that disagree: inference reports it
        types[vi.name] = intern(sig)
        unread.discard(vi.name)   # an initializer that is a graph input needs no reader
    if "" in types:
        return None           # a value named '': an absent optional input would read it
    # The loop below is the hot path of a large model: a node's result is decided once per
    # distinct (operator, domain, operand entries, attributes), keyed by the entries' identities.
    # Each protobuf field is read once per node, in the cheapest form upb offers (a slice of a
    # repeated field, an index rather than unpacking: measured, about 0.5 s less at 1M nodes).
    memo: dict[tuple, tuple | None] = _types.memo_table()
    get = types.__getitem__
    read, define = unread.difference_update, unread.add
    for node in g.node:
        outs = node.output
        if len(outs) != 1:
            return None                             # onnx's checker and inference judge it
        inputs = node.input[:]
        try:
            key = (node.op_type, node.domain, _attributes(node) if node.attribute else (),
                   *map(id, map(get, inputs)))      # an input absent or not yet defined: KeyError
        except KeyError:
            return None                             # onnx's checker and inference judge it
        got = memo.get(key, memo)
        if got is memo:
            got = memo[key] = _decide(ops, node, types, key[2], opset, intern)
        out = outs[0]
        if got is None or not out or out in types:
            return None       # undecided, no result name, or a second definition: onnx's
        types[out] = got
        read(inputs)
        define(out)
    for coll in (g.value_info, g.output):
        for vi in coll:
            if vi.name not in types or _declared(vi.type) != types[vi.name][0]:
                return None    # undeclared, partial or different: inference decides
    types.distinct = list(interned.values())
    return types


def _decide(ops, node, types, akey, opset: int, intern) -> tuple | None:
    """A node's result entry by its operator's record (None: not decided here)."""
    record = ops.get(node.op_type)
    # an operator with constant inputs (Operator.constant_inputs) is judged by their values,
    # which this memo (keyed by signatures) does not see: the walker reads them, after onnx's
    # inference
    if record is None or node.domain not in DEFAULT_DOMAINS or record.output_shape is None \
            or akey is None or record.constant_inputs:
        return None
    sig = _result(record, tuple(types[name][0] for name in node.input), dict(akey), opset)
    return None if sig is None else intern(sig)


def _attributes(node) -> tuple | None:
    """The node's INT and FLOAT attributes as a sorted tuple, or None when it has any other
    kind (a subgraph, a string, a list...: not decided here)."""
    attrs = {}
    for a in node.attribute:
        if a.type == _INT:
            attrs[a.name] = a.i
        elif a.type == _FLOAT:
            attrs[a.name] = a.f
        else:
            return None
    return tuple(sorted(attrs.items()))


def _result(record, sigs: tuple[TensorSig, ...], attrs: dict, opset: int) -> TensorSig | None:
    """One node's result signature by its operator's record, or None when the record cannot
    give it (operands its constraint function refuses, wrong arity, a rule that fails)."""
    if not record.required <= len(sigs) <= len(record.inputs) or record.since_version(opset) is None:
        return None
    if record.constraints(sigs, attrs, opset):
        return None
    names = record.kernel_attributes
    given = {**{k: v for k, v in record.attributes.items() if v is not None}, **attrs}
    keywords = {names[k]: v for k, v in given.items() if k in names}
    try:
        shape = tuple(record.output_shape([s.shape for s in sigs], keywords))
    except Exception:
        return None
    if not all(isinstance(d, int) and d >= 0 for d in shape):
        return None
    return TensorSig(shape, sigs[0].elem_type)

