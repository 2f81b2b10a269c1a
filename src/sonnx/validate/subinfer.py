"""Types inside subgraphs and model-local function bodies.

onnx's inference checks subgraphs and function bodies but keeps none of their intermediate
types, so each body is inferred again on its own: a small model whose inputs are the body's
formal inputs plus the outer-scope values it reads, typed from the enclosing scope (for a
function: from the call site). Only bodies are re-inferred; the main graph is inferred once.
"""
from __future__ import annotations

from typing import Callable, Iterable

from .. import onnx_proto as onnx  # onnx's classes and checker without its package start-up

from .types import type_proto_of

Lookup = Callable[[str], "tuple | None"]  # name -> (TensorSig, kind) or None


def _names_used_and_defined(nodes: Iterable[onnx.NodeProto], used: set[str], defined: set[str]) -> None:
    for n in nodes:
        used.update(n.input)
        defined.update(n.output)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                _graph_names(a.g, used, defined)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for g in a.graphs:
                    _graph_names(g, used, defined)


def _graph_names(g: onnx.GraphProto, used: set[str], defined: set[str]) -> None:
    defined.update(i.name for i in g.input)
    defined.update(t.name for t in g.initializer)
    defined.update(s.values.name for s in g.sparse_initializer)
    used.update(o.name for o in g.output)
    _names_used_and_defined(g.node, used, defined)


def free_names(g: onnx.GraphProto) -> list[str]:
    """Names a graph (with its nested subgraphs) reads from enclosing scopes."""
    used: set[str] = set()
    defined: set[str] = set()
    _graph_names(g, used, defined)
    used.discard("")
    return sorted(used - defined)


def infer_body(graph: onnx.GraphProto, outer: dict[str, onnx.TypeProto], *,
               ir_version: int, opset_import: Iterable[onnx.OperatorSetIdProto],
               functions: Iterable[onnx.FunctionProto]) -> dict[str, onnx.TypeProto]:
    """Every type onnx can infer inside ``graph`` given the types of the names it reads from
    outside (``outer``). Best effort: returns what is known, never raises."""
    mini = onnx.ModelProto(ir_version=ir_version or onnx.IR_VERSION)
    mini.opset_import.extend(opset_import)
    mini.functions.extend(functions)
    g = mini.graph
    g.name = graph.name or "body"
    g.input.extend(graph.input)
    for name, tp in outer.items():
        vi = g.input.add()
        vi.name = name
        vi.type.CopyFrom(tp)
    g.initializer.extend(graph.initializer)
    g.sparse_initializer.extend(graph.sparse_initializer)
    g.node.extend(graph.node)
    g.output.extend(graph.output)
    g.value_info.extend(graph.value_info)
    try:
        out = onnx.shape_inference.infer_shapes(mini, check_type=False, strict_mode=False,
                                                data_prop=True)
    except Exception:
        out = mini
    types: dict[str, onnx.TypeProto] = {}
    for coll in (out.graph.value_info, out.graph.output, out.graph.input):  # inputs win, as in Walker
        for vi in coll:
            if vi.HasField("type"):
                types[vi.name] = vi.type
    return types


def outer_types(names: Iterable[str], lookup: Lookup) -> dict[str, onnx.TypeProto]:
    out: dict[str, onnx.TypeProto] = {}
    for name in names:
        got = lookup(name)
        if got is None:
            continue
        tp = type_proto_of(*got)
        if tp is not None:
            out[name] = tp
    return out


def substitute_attributes(nodes: Iterable[onnx.NodeProto], call: onnx.NodeProto,
                          fn: onnx.FunctionProto) -> list[onnx.NodeProto]:
    """Copies of a function's nodes with attribute references (ref_attr_name) replaced by the
    call site's attribute, or the function's default, or dropped when neither is given."""
    given = {a.name: a for a in call.attribute}
    defaults = {a.name: a for a in fn.attribute_proto}
    out = []
    for n in nodes:
        if not any(a.ref_attr_name for a in n.attribute):
            out.append(n)
            continue
        c = onnx.NodeProto()
        c.CopyFrom(n)
        del c.attribute[:]
        for a in n.attribute:
            if not a.ref_attr_name:
                c.attribute.append(a)
                continue
            src = given.get(a.ref_attr_name) or defaults.get(a.ref_attr_name)
            if src is not None:
                new = c.attribute.add()
                new.CopyFrom(src)
                new.name = a.name
        out.append(c)
    return out
