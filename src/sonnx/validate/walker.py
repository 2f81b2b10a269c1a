"""Walk a model graph by graph (main graph, If/Loop/Scan subgraphs, model-local function bodies)
and apply the profile's rules node by node. Every violation is kept, with its location."""
from __future__ import annotations

import dataclasses
from typing import Iterator

from .. import onnx_proto as onnx  # onnx's classes and checker without its package start-up

from ..errors import Violation
from ..ops.registry import operator_violations, operators
from ..profile import DEFAULT_DOMAINS, opset_import_violations, shape_violations
from ..ops.signature import TensorSig
from . import rules, subinfer
from . import types as _types
from .report import Finding, node_label
from .types import UNKNOWN, TypeCache, initializer_sig, sparse_initializer_sig

_GRAPH, _GRAPHS = onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS
Entry = tuple[TensorSig, "str | None"]  # (signature, non-tensor kind)
_UNKNOWN_ENTRY: Entry = (UNKNOWN, None)


class Scope:
    """Names visible in a graph: its own values, then the enclosing graphs' values."""

    __slots__ = ("values", "parent")

    def __init__(self, values: dict[str, Entry], parent: "Scope | None" = None):
        self.values = values
        self.parent = parent

    def lookup(self, name: str) -> Entry | None:
        s: Scope | None = self
        while s is not None:
            got = s.values.get(name)
            if got is not None:
                return got
            s = s.parent
        return None


def _default_version(imports) -> int | None:
    for o in imports:
        if o.domain in DEFAULT_DOMAINS:
            return o.version
    return None


class Walker:
    def __init__(self, model: onnx.ModelProto, types_known: bool = True,
                 pinnable: frozenset[str] = frozenset(), main_types: dict | None = None):
        self.model = model
        # the main graph's signatures when the validator's propagation computed them (onnx's
        # inference did not run, so value_info may not hold every type): reader.Loaded
        self.main_types = main_types
        self.pinnable = pinnable    # the names --dim pins (main graph, as written in the file)
        self.types_known = types_known
        self.findings: list[Finding] = []
        self.functions = {(f.domain, f.name): f for f in model.functions}
        self.rules = rules.OperatorRules()
        self.types = TypeCache()
        self._prof_r1: dict[tuple[str, str], list[Violation]] = {}
        self._versions: dict[tuple[str, str, int | None], int | None] = {}
        self._ok_ids: set[int] = set()
        self._memo: dict[tuple, list[Violation]] = _types.memo_table()
        self._keep: list = []
        self._sparse_used: set[str] = set()
        self._called: set[tuple[str, str]] = set()
        self._bodies: dict[tuple, tuple[str, list[Finding], int]] = {}  # call signature -> result
        self._stack: list[tuple[str, str]] = []
        self.nodes = 0

    # ------------------------------------------------------------ entry point
    def run(self) -> list[Finding]:
        m = self.model
        for v in opset_import_violations([(o.domain, o.version) for o in m.opset_import]):
            self.findings.append(Finding(v.requirement, v.message, graph="model"))
        for f in m.functions:
            where = f"model-local function {f.domain}::{f.name}"
            for v in opset_import_violations([(o.domain, o.version) for o in f.opset_import], where,
                                             require_default=False):
                self.findings.append(Finding(v.requirement, v.message, graph=f"function:{f.domain}::{f.name}"))
        opset = _default_version(m.opset_import)
        if self.main_types is not None:
            # already interned entries (propagate.py): register each distinct one once
            intern = self.types.intern
            for entry in self._main_distinct():
                intern(entry)
            types = self.main_types
        else:
            types = self._types_of(m.graph) if self.types_known else {}
        self._walk_graph(m.graph, "main", None, types, opset, check_inputs=True)
        for key, f in self.functions.items():
            if key not in self._called:  # never called: operators only, types are unknown
                g = onnx.GraphProto(node=f.node)
                self._walk_graph(g, f"function:{f.domain}::{f.name}", None, {},
                                 _default_version(f.opset_import) or opset,
                                 check_inputs=False, types_known=False)
        return self.findings

    # ------------------------------------------------------------ types
    def _types_of(self, g: onnx.GraphProto) -> dict[str, Entry]:
        # Declarations of one name must agree (declarations.py reports any that do not); should
        # they differ, the graph input, the type the caller feeds, is the one judged.
        conv = self.types
        out: dict[str, Entry] = {}
        for coll in (g.value_info, g.output, g.input):
            for vi in coll:
                out[vi.name] = conv(vi.type)
        return out

    def _convert_map(self, tps: dict[str, onnx.TypeProto]) -> dict[str, Entry]:
        conv = self.types
        return {name: conv(tp) for name, tp in tps.items()}

    # ------------------------------------------------------------ findings
    def _node_finding(self, v: Violation, ctx: tuple, tensor: str | None = None) -> None:
        path, index, node, version = ctx
        self.findings.append(Finding(v.requirement, v.message, graph=path, node_index=index,
                                     node_name=node.name or None, op_type=node.op_type,
                                     domain=node.domain, op_version=version, tensor=tensor))

    def _ctx(self, path: str, index: int, node: onnx.NodeProto, opset: int | None) -> tuple:
        return (path, index, node, self._version(node.op_type, node.domain, opset))

    def _tensor(self, name: str, entry: Entry, what: str, path: str, ctx: tuple | None,
                sparse_defs: list) -> None:
        """PROF-R2 for one tensor, at its definition (graph input, initializer, node output)."""
        sig, kind = entry
        if kind is not None:
            vs = [Violation("PROF-R2", f"{what} is a {kind}, not a tensor; the profile has dense "
                                       "tensors of static shape only")]
        elif sig.sparse:
            sparse_defs.append((name, what, ctx))  # judged once its consumers are known
            return
        elif id(entry) in self._ok_ids:
            return
        else:
            vs = shape_violations(sig.shape, what, self.pinnable if path == "main" else ())
            if not vs:
                self._ok_ids.add(id(self.types.intern(entry)))
                return
        for v in vs:
            if ctx is None:
                self.findings.append(Finding(v.requirement, v.message, graph=path, tensor=name))
            else:
                self._node_finding(v, ctx, tensor=name)

    def _op_violations(self, op: str, entries: list, attrs: dict, opset: int | None) -> list[Violation]:
        """The operator's own constraints (PROF-R2 is not one: it is reported where each tensor
        is defined)."""
        if any(e is None for e in entries[:operators()[op].required]):
            return []  # a required input is missing: the ONNX checker reports it
        sigs = tuple(None if e is None else e[0] for e in entries)
        return self.rules.check(op, sigs, attrs, opset or 0)

    # ------------------------------------------------------------ graphs
    def _walk_graph(self, g: onnx.GraphProto, path: str, parent: Scope | None,
                    types: dict[str, Entry], opset: int | None, *, check_inputs: bool,
                    types_known: bool | None = None) -> None:
        known = self.types_known if types_known is None else types_known
        values = types  # owned by this graph from here on
        intern = self.types.intern
        sparse_defs: list = []
        for t in g.initializer:
            values[t.name] = intern((initializer_sig(t), None))
        for s in g.sparse_initializer:
            values[s.values.name] = intern((sparse_initializer_sig(s), None))
        scope = Scope(values, parent)
        if known:
            inits = set()
            for t in g.initializer:
                inits.add(t.name)
                self._tensor(t.name, values[t.name], f"initializer '{t.name}'", path, None, sparse_defs)
            for s in g.sparse_initializer:
                inits.add(s.values.name)
                self._tensor(s.values.name, values[s.values.name], f"sparse initializer "
                             f"'{s.values.name}'", path, None, sparse_defs)
            if check_inputs:
                # an input with an initializer of the same name is a default the caller may
                # replace at run time: it is judged as the input it is, by its own declaration
                conv = self.types
                # before IR 4 every initializer is listed as an input and is a constant (as
                # onnxruntime reads it); the declaration is judged the same way either way
                held = ("is a default the caller may override" if self.model.ir_version >= 4 else
                        "makes it a constant: IR < 4 lists every initializer as an input")
                for vi in g.input:
                    what = (f"graph input '{vi.name}' (its initializer {held})"
                            if vi.name in inits else f"graph input '{vi.name}'")
                    self._tensor(vi.name, conv(vi.type) if vi.HasField("type") else _UNKNOWN_ENTRY,
                                 what, path, None, sparse_defs)
        self.nodes += len(g.node)
        if path == "main" and self.main_types is not None and self._decided_clean():
            return
        # The loop below is the hot path of a large model: profile operators whose inputs have
        # known entries go through a memo keyed by the interned entries' identities.
        vget = values.get
        profile_ops = operators()
        memo = self._memo
        ok_ids = self._ok_ids
        lookup = scope.lookup
        constants = None
        for index, node in enumerate(g.node):
            op = node.op_type
            if not (known and opset is not None and op in profile_ops
                    and node.domain in DEFAULT_DOMAINS):
                self._visit(node, index, path, scope, opset, known, sparse_defs)
                continue
            entries = []
            for name in node.input:
                if name:
                    e = vget(name)
                    entries.append(e if e is not None else (lookup(name) or _UNKNOWN_ENTRY))
                else:
                    entries.append(None)
            while entries and entries[-1] is None:
                entries.pop()
            if node.attribute:
                attrs = rules.attributes(node)
                akey = tuple(sorted(attrs.items()))
            else:
                attrs, akey = {}, ()
            const_inputs = profile_ops[op].constant_inputs
            if const_inputs:
                # an input whose value decides the result's shape: its constant value goes to
                # the constraint function with the attributes (Operator.constant_inputs)
                if constants is None:
                    constants = rules.Constants(g)
                for name, formal in zip(node.input, profile_ops[op].inputs):
                    if name and formal in const_inputs:
                        attrs["input:" + formal] = constants.value(name)
                akey = tuple(sorted(attrs.items()))
            key = (op, opset, tuple(map(id, entries)), akey)
            vs = memo.get(key)
            if vs is None:
                vs = memo[key] = self._op_violations(op, entries, attrs, opset)
                self._keep.append(entries)  # keeps the ids in the key valid
            # how many outputs the node names, for an operator that defines fewer than onnx's
            # schema has (the record's ``outputs`` check); not memoized: one count per node
            count_rule = profile_ops[op].outputs
            if count_rule is not None:
                vs = vs + count_rule(sum(1 for name in node.output if name), opset or 0)
            ctx = None
            if vs:
                ctx = self._ctx(path, index, node, opset)
                for v in vs:
                    self._node_finding(v, ctx)
                for name, e in zip(node.input, entries):
                    if e is not None and e[0].sparse:
                        self._sparse_used.add(name)
            for name in node.output:
                if name:
                    e = vget(name)
                    if e is not None and id(e) in ok_ids:
                        continue
                    self._tensor(name, e or _UNKNOWN_ENTRY, f"output '{name}' of {op} node "
                                 f"'{node_label(node.name, op, index)}'", path,
                                 ctx or self._ctx(path, index, node, opset), sparse_defs)
        for name, what, ctx in sparse_defs:
            if name not in self._sparse_used:
                v = Violation("PROF-R2", f"{what} is sparse; the profile's tensors are dense with a "
                                         "static shape: store it densified (e.g. x.toarray())")
                if ctx is None:
                    self.findings.append(Finding(v.requirement, v.message, graph=path, tensor=name))
                else:
                    self._node_finding(v, ctx, tensor=name)

    def _decided_clean(self) -> bool:
        """True when the main graph's nodes can have no finding: the propagation (propagate.py)
        took the model only after every node's constraint function accepted its operands (the
        same functions, operands and attributes this walker would call), so what remains per
        node is PROF-R2 on its result, which depends on the result's entry alone: when no
        distinct entry has a PROF-R2 violation, the node loop would report nothing."""
        return all(not shape_violations(e[0].shape, "a value") for e in self._main_distinct())

    def _main_distinct(self) -> list[Entry]:
        """Each distinct entry of main_types once (propagate.Types.distinct when it has it)."""
        distinct = getattr(self.main_types, "distinct", None)
        if distinct is None:
            distinct = list({id(e): e for e in self.main_types.values()}.values())
        return distinct

    def _version(self, op: str, domain: str, opset: int | None) -> int | None:
        key = (op, domain, opset)
        if key not in self._versions:
            self._versions[key] = rules.op_version(op, domain, opset)
        return self._versions[key]

    def _visit(self, node: onnx.NodeProto, index: int, path: str, scope: Scope,
               opset: int | None, known: bool, sparse_defs: list) -> None:
        """Any node other than a profile operator with known types (the slow, general path)."""
        op, domain = node.op_type, node.domain
        key = (domain, op)
        r1 = self._prof_r1.get(key)
        if r1 is None:
            r1 = self._prof_r1[key] = operator_violations(domain, op)
        ctx = self._ctx(path, index, node, opset)
        fn = self.functions.get(key)
        for v in r1:
            if fn is not None:
                v = Violation(v.requirement, f"{v.message} (it calls the model-local function "
                              f"{domain}::{op}: inline it with onnx.inliner.inline_local_functions "
                              "so that only profile operators remain)")
            self._node_finding(v, ctx)
        for a in node.attribute:
            if a.type == _GRAPH:
                self._walk_subgraph(a.g, f"{path}/{node_label(node.name, op, index)}:{a.name}",
                                    scope, opset, known)
            elif a.type == _GRAPHS:
                for k, sub in enumerate(a.graphs):
                    self._walk_subgraph(sub, f"{path}/{node_label(node.name, op, index)}:{a.name}[{k}]",
                                        scope, opset, known)
        if fn is not None:
            self._walk_call(node, index, fn, path, scope, known)
        if op == "Constant" and domain in DEFAULT_DOMAINS and node.output:
            # onnx infers a sparse Constant's output as a dense tensor: restore its sparseness
            for a in node.attribute:
                if a.name == "sparse_value" and a.type == onnx.AttributeProto.SPARSE_TENSOR:
                    scope.values[node.output[0]] = self.types.intern(
                        (sparse_initializer_sig(a.sparse_tensor), None))
        if known:
            for name in node.output:
                if name:
                    self._tensor(name, scope.values.get(name, _UNKNOWN_ENTRY),
                                 f"output '{name}' of {op} node '{node_label(node.name, op, index)}'",
                                 path, ctx, sparse_defs)

    # ------------------------------------------------------------ subgraphs and functions
    def _walk_subgraph(self, g: onnx.GraphProto, path: str, scope: Scope, opset: int | None,
                       known: bool) -> None:
        types: dict[str, Entry] = {}
        if known:
            formal = onnx.GraphProto()
            formal.CopyFrom(g)
            # A Loop-carried input is NOT typed from the Loop's initial value: its shape may
            # change from one iteration to the next, so only what the body declares (or onnx
            # infers for it) is known; an unknown shape there is a PROF-R2 finding.
            outer = subinfer.outer_types(subinfer.free_names(g), scope.lookup)
            imports = list(self.model.opset_import)
            tps = subinfer.infer_body(formal, outer, ir_version=self.model.ir_version,
                                      opset_import=imports, functions=self.model.functions)
            types = self._convert_map({k: v for k, v in tps.items() if k not in outer})
        self._walk_graph(g, path, scope, types, opset, check_inputs=True, types_known=known)

    def _walk_call(self, node: onnx.NodeProto, index: int, fn: onnx.FunctionProto, path: str,
                   scope: Scope, known: bool) -> None:
        key = (fn.domain, fn.name)
        self._called.add(key)
        if key in self._stack or len(self._stack) > 32:
            return  # recursive functions are refused by the ONNX checker
        sub = f"{path}/{node_label(node.name, node.op_type, index)}:{fn.domain}::{fn.name}"
        actual = [scope.lookup(a) if a else None for a in node.input[:len(fn.input)]]
        # A body's findings depend only on the call's signature: the types of its actual inputs,
        # its attributes (read through ref_attr_name) and whether types are known. The body is
        # walked once per signature; another call with it gets the same findings, relocated.
        attrs = tuple(a.SerializeToString() for a in node.attribute) if fn.attribute or \
            fn.attribute_proto else ()
        signature = (key, tuple(actual), attrs, known)
        done = self._bodies.get(signature)
        if done is not None:
            old_sub, findings, nodes = done
            self.nodes += nodes
            self.findings.extend(dataclasses.replace(f, graph=sub + f.graph[len(old_sub):])
                                 for f in findings)
            return
        first, nodes_before = len(self.findings), self.nodes
        self._stack.append(key)
        try:
            self._walk_body(node, fn, sub, actual, known)
        finally:
            self._stack.pop()
        self._bodies[signature] = (sub, self.findings[first:], self.nodes - nodes_before)

    def _walk_body(self, node: onnx.NodeProto, fn: onnx.FunctionProto, sub: str,
                   actual: list, known: bool) -> None:
        body = onnx.GraphProto(name=fn.name)
        body.node.extend(subinfer.substitute_attributes(fn.node, node, fn))
        for formal, e in zip(fn.input, actual):
            vi = body.input.add()
            vi.name = formal
            tp = e and subinfer.type_proto_of(*e)
            if tp is not None:
                vi.type.CopyFrom(tp)
        for o in fn.output:
            body.output.add().name = o
        opset = _default_version(fn.opset_import) or _default_version(self.model.opset_import)
        types: dict[str, Entry] = {}
        if known:
            tps = subinfer.infer_body(body, {}, ir_version=self.model.ir_version,
                                      opset_import=fn.opset_import,
                                      functions=self._reachable(fn.node))
            types = self._convert_map(tps)
        # the formal inputs are the caller's tensors, already checked where they are defined
        self._walk_graph(body, sub, None, types, opset, check_inputs=False, types_known=known)

    def _reachable(self, nodes) -> list[onnx.FunctionProto]:
        """The model-local functions ``nodes`` call, directly or not (inferring a body needs
        those only; copying every function into each body's model costs calls x functions)."""
        seen: dict[tuple[str, str], onnx.FunctionProto] = {}
        stack = list(nodes)
        while stack:
            n = stack.pop()
            for a in n.attribute:
                if a.type == _GRAPH:
                    stack.extend(a.g.node)
                elif a.type == _GRAPHS:
                    for g in a.graphs:
                        stack.extend(g.node)
            f = self.functions.get((n.domain, n.op_type))
            if f is not None and (f.domain, f.name) not in seen:
                seen[(f.domain, f.name)] = f
                stack.extend(f.node)
        return list(seen.values())


def iter_graphs(model: onnx.ModelProto) -> Iterator[onnx.GraphProto]:
    """Every graph of a model (main and nested), for tools and tests."""
    stack = [model.graph]
    while stack:
        g = stack.pop()
        yield g
        for n in g.node:
            for a in n.attribute:
                if a.type == _GRAPH:
                    stack.append(a.g)
                elif a.type == _GRAPHS:
                    stack.extend(a.graphs)
