"""Checks on the model as written, before onnx's inference rewrites its types.

* One declared type per tensor (PROF-R2): a name may be declared by a graph input, an
  initializer, value_info entries and a graph output; every declaration must state the same
  element type and the same shape (rank, and every dimension: the same integer or the same
  symbol). Nothing is ever picked silently: a disagreement is a finding. A subgraph's value_info
  or output naming an outer tensor is a declaration of that tensor too. Every declaration must
  itself be static (PROF-R2), even where onnx's inference would refine it.
* Loadable (ONNX-IR): what the ONNX IR or onnxruntime's loader refuses and onnx's checker lets
  through: an element type UNDEFINED (0) or unknown, external data that is missing or runs past
  the end of its file (sizes from the file system's metadata only; weights are never read); and
  an attribute reference (ref_attr_name) outside a function body, which the IR allows only in
  function bodies and onnxruntime loads with a silently wrong value.
"""
from __future__ import annotations

import os

from .. import onnx_proto as onnx  # onnx's classes and checker without its package start-up
TensorProto = onnx.TensorProto

from ..dimnames import pinnable_names
from ..profile import shape_violations
from .report import ONNX_IR, Finding, node_label
from .types import TypeCache, initializer_sig, sparse_initializer_sig

_GRAPH, _GRAPHS = onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS
_TENSOR, _TENSORS = onnx.AttributeProto.TENSOR, onnx.AttributeProto.TENSORS
_ELEM_TYPES = frozenset(TensorProto.DataType.values())
# element size in bits for the types whose size is fixed; STRING (variable) is absent
_BITS = {TensorProto.BOOL: 8, TensorProto.INT8: 8, TensorProto.UINT8: 8, TensorProto.INT16: 16,
         TensorProto.UINT16: 16, TensorProto.FLOAT16: 16, TensorProto.BFLOAT16: 16,
         TensorProto.INT32: 32, TensorProto.UINT32: 32, TensorProto.FLOAT: 32,
         TensorProto.INT64: 64, TensorProto.UINT64: 64, TensorProto.DOUBLE: 64,
         TensorProto.COMPLEX64: 64, TensorProto.COMPLEX128: 128}
for _name, _bits in (("FLOAT8E4M3FN", 8), ("FLOAT8E4M3FNUZ", 8), ("FLOAT8E5M2", 8),
                     ("FLOAT8E5M2FNUZ", 8), ("FLOAT8E8M0", 8), ("UINT4", 4), ("INT4", 4),
                     ("FLOAT4E2M1", 4), ("UINT2", 2), ("INT2", 2)):
    if hasattr(TensorProto, _name):
        _BITS[getattr(TensorProto, _name)] = _bits


def describe(entry) -> str:
    """A declared type as text: float[2,3], float[N,3], float (no shape), sequence."""
    sig, kind = entry
    if kind is not None:
        return kind
    elem = sig.elem_type or "undefined"
    prefix = "sparse " if sig.sparse else ""
    if sig.shape is None:
        return f"{prefix}{elem} (no shape)"
    return f"{prefix}{elem}[{','.join('?' if d is None else str(d) for d in sig.shape)}]"


def _scoped(decls: dict, path: str) -> dict:
    """The declarations of one graph as its subgraphs see them: each with the graph's path."""
    return {name: [(where, e, path) for where, e in found] for name, found in decls.items()}


class _Checker:
    def __init__(self, model: onnx.ModelProto, base_dir: str | None):
        self.model = model
        self.base_dir = base_dir
        self.types = TypeCache()
        self.findings: list[Finding] = []
        self.declared_static: list[Finding] = []  # PROF-R2 on declarations other than inputs
        self.pinnable = pinnable_names(model.graph)  # what --dim pins: main-graph names as written

    # ------------------------------------------------------------ graphs
    def run(self) -> list[Finding]:
        self._graph(self.model.graph, "main", None, in_function=False)
        for f in self.model.functions:
            path = f"function:{f.domain}::{f.name}"
            decls: dict[str, list] = {}
            for vi in getattr(f, "value_info", ()):  # FunctionProto.value_info: IR >= 10
                self._declare(decls, vi.name, "value_info", vi.type, path)
            self._agree(decls, path)
            self._nodes(f.node, path, _scoped(decls, path), in_function=True)
        return self.findings

    def _graph(self, g: onnx.GraphProto, path: str, outer: dict | None, *, in_function: bool) -> None:
        decls: dict[str, list] = {}
        local: set[str] = set()
        for vi in g.input:
            local.add(vi.name)
            self._declare(decls, vi.name, "graph input", vi.type, path)
        for t in g.initializer:
            local.add(t.name)
            decls.setdefault(t.name, []).append(("initializer", self.types.intern((initializer_sig(t), None))))
            self._elem_code(t.data_type, f"initializer '{t.name}'", path, t.name)
            self._external(t, path)
        for s in g.sparse_initializer:
            local.add(s.values.name)
            decls.setdefault(s.values.name, []).append(
                ("sparse initializer", self.types.intern((sparse_initializer_sig(s), None))))
            self._elem_code(s.values.data_type, f"sparse initializer '{s.values.name}'", path, s.values.name)
            self._external(s.values, path)
            self._external(s.indices, path)
        if outer:  # only an enclosing graph's names need telling apart (the main graph has none)
            for n in g.node:
                local.update(n.output)
        for vi in g.value_info:
            self._declare(decls, vi.name, "value_info", vi.type, path)
        for vi in g.output:
            self._declare(decls, vi.name, "graph output", vi.type, path)
        # a name this graph does not define is an outer tensor: its declarations here join the
        # outer ones (and are compared with them)
        scope = dict(outer or {})
        for name, found in decls.items():
            if name not in local and name in scope:
                found[:0] = [(f"{where} (in {scope_path})", e) for where, e, scope_path in scope[name]]
        self._agree(decls, path)
        scope.update(_scoped(decls, path))
        self._nodes(g.node, path, scope, in_function=in_function)

    def _nodes(self, nodes, path: str, scope: dict, *, in_function: bool) -> None:
        for index, n in enumerate(nodes):
            if not n.attribute:     # most nodes of a large model: nothing below to check
                continue
            label = node_label(n.name, n.op_type, index)
            for a in n.attribute:
                if a.ref_attr_name and not in_function:
                    self._finding(f"attribute '{a.name}' of node '{label}' refers to a function "
                                  f"attribute ('{a.ref_attr_name}') outside any function body, "
                                  "where nothing can supply it (onnxruntime silently reads a "
                                  "float attribute written so as 0): give the attribute its value",
                                  path, node=(index, n))
                if a.type == _GRAPH:
                    self._graph(a.g, f"{path}/{label}:{a.name}", scope, in_function=in_function)
                elif a.type == _GRAPHS:
                    for k, sub in enumerate(a.graphs):
                        self._graph(sub, f"{path}/{label}:{a.name}[{k}]", scope, in_function=in_function)
                elif a.type == _TENSOR:
                    self._external(a.t, path)
                elif a.type == _TENSORS:
                    for t in a.tensors:
                        self._external(t, path)

    # ------------------------------------------------------------ declarations
    def _declare(self, decls: dict, name: str, where: str, tp: onnx.TypeProto, path: str) -> None:
        entry = self.types(tp)
        decls.setdefault(name, []).append((where, entry))
        self._elem_types(tp, f"{where} '{name}'", path, name)
        sig, kind = entry
        if where != "graph input" and kind is None and not sig.sparse:
            # a declaration is a promise to the caller (outputs) or to tools (value_info): it
            # must be static too, even where onnx's inference refines it (graph inputs are
            # judged by the walker, as the definitions they are)
            pins = self.pinnable if path == "main" else frozenset()
            for v in shape_violations(sig.shape, f"{where} '{name}' (as declared)", pins):
                self.declared_static.append(Finding(v.requirement, v.message, graph=path, tensor=name))

    def _agree(self, decls: dict, path: str) -> None:
        for name, found in decls.items():
            distinct = list(dict.fromkeys(e for _, e in found))
            if len(distinct) < 2:
                continue
            listed = "; ".join(f"{where}: {describe(e)}" for where, e in found)
            self.findings.append(Finding(
                "PROF-R2", f"tensor '{name}' is declared with different types ({listed}); every "
                           "declaration of a name (graph input, initializer, value_info, graph "
                           "output) must give the same element type and shape: correct or "
                           "remove the wrong one (a value_info entry left stale by an exporter "
                           "or a hand edit: `sonnx conform` removes it)", graph=path, tensor=name))

    # ------------------------------------------------------------ loadable
    def _elem_types(self, tp: onnx.TypeProto, what: str, path: str, name: str) -> None:
        which = tp.WhichOneof("value")
        if which in ("tensor_type", "sparse_tensor_type"):
            self._elem_code(getattr(tp, which).elem_type, what, path, name)
        elif which in ("sequence_type", "optional_type"):
            self._elem_types(getattr(tp, which).elem_type, what, path, name)
        elif which == "map_type":
            self._elem_types(tp.map_type.value_type, what, path, name)

    def _elem_code(self, code: int, what: str, path: str, name: str) -> None:
        if code == TensorProto.UNDEFINED or code not in _ELEM_TYPES:
            shown = "UNDEFINED (0)" if code == TensorProto.UNDEFINED else f"{code}, not an ONNX type"
            self._finding(f"{what} has element type {shown}; a loader refuses it: declare the "
                          "tensor's element type", path, tensor=name)

    def _external(self, t: onnx.TensorProto, path: str) -> None:
        if t.data_location != TensorProto.EXTERNAL:
            return
        info = {e.key: e.value for e in t.external_data}
        what = f"external data of tensor '{t.name}'"
        location = info.get("location", "")
        if self.base_dir is None:
            return self._finding(f"{what} cannot be located from an in-memory model; validate the "
                                 "model file (its directory holds the data)", path, tensor=t.name)
        if not location or os.path.isabs(location) or ".." in location.replace("\\", "/").split("/"):
            return self._finding(f"{what} names the file '{location}'; it must be a relative path "
                                 "inside the model's directory", path, tensor=t.name)
        try:
            offset = int(info.get("offset", "0"))
            length = int(info["length"]) if "length" in info else None
        except ValueError:
            return self._finding(f"{what} has an offset or length that is not an integer", path,
                                 tensor=t.name)
        if offset < 0 or (length is not None and length < 0):
            return self._finding(f"{what} has a negative offset or length", path, tensor=t.name)
        expected = None
        if t.data_type in _BITS:
            count = 1
            for d in t.dims:
                count *= d
            expected = (count * _BITS[t.data_type] + 7) // 8
        if length is not None and expected is not None and length != expected:
            return self._finding(f"{what} has length {length} bytes, but its dims and element type "
                                 f"need {expected}", path, tensor=t.name)
        try:
            st = os.stat(os.path.join(self.base_dir, location))
        except (OSError, ValueError):
            return self._finding(f"{what} is in '{location}', which does not exist next to the model",
                                 path, tensor=t.name)
        needed = length if length is not None else expected
        if needed is not None and offset + needed > st.st_size:
            self._finding(f"{what} spans bytes {offset} to {offset + needed} of '{location}', past "
                          f"the end of that file ({st.st_size} bytes)", path, tensor=t.name)

    def _finding(self, message: str, path: str, *, tensor: str | None = None, node=None) -> None:
        if node is None:
            self.findings.append(Finding(ONNX_IR, message, graph=path, tensor=tensor))
            return
        index, n = node
        self.findings.append(Finding(ONNX_IR, message, graph=path, node_index=index,
                                     node_name=n.name or None, op_type=n.op_type, domain=n.domain))


def check(model: onnx.ModelProto, base_dir: str | None) -> tuple[list[Finding], list[Finding]]:
    """(findings, declared-shape findings) on the model as written; ``base_dir`` is the
    directory of the model file (None for an in-memory ModelProto, whose external data cannot
    be located). The second list holds PROF-R2 on value_info and graph-output declarations:
    the caller keeps those whose tensor has no PROF-R2 finding of its own already."""
    c = _Checker(model, base_dir)
    return c.run(), c.declared_static
