"""The profile's graph rules on the main graph as written (spec/profile.md, "Graph rules"):

* PROF-R4 no dead computation: every node contributes to a graph output, and every initializer
  is read by such a node (or is itself a graph input or output);
* PROF-R5 no empty input name: an absent optional input is left off the end of a node's input
  list, never written as '' (mid-list or trailing);
* PROF-R6 acyclic and in topological order: every input a node reads is a graph input, an
  initializer or the output of an earlier node.

Run on every model, right after onnx's checker, whichever way the shapes are decided (onnx's
inference or the validator's own propagation, propagate.py): the rules depend on the graph's
structure alone. Each pass of the validator is iterative and linear in the number of node
inputs and outputs (no recursion: a 1M-node chain or a cycle cannot exhaust the stack or hang);
topological_order, for sonnx conform, is n log n (a heap keeps the written order).
Subgraphs (If/Loop/Scan) and function bodies are refused by PROF-R1 and not judged here, but
the names they read from the main graph count as read."""
from __future__ import annotations

from .. import onnx_proto as onnx  # onnx's classes and checker without its package start-up

from .report import Finding, node_label

_GRAPH, _GRAPHS = onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS
_SHOWN = 8   # names quoted in one message


def outer_reads(node: onnx.NodeProto) -> list[str]:
    """Every name read inside ``node``'s subgraphs (an over-approximation of what they read from
    the enclosing graph: names are unique across scopes in ONNX, so a local name cannot be taken
    for a main-graph value)."""
    names: list[str] = []
    stack = [a for a in node.attribute if a.type in (_GRAPH, _GRAPHS)]
    while stack:
        a = stack.pop()
        for g in ([a.g] if a.type == _GRAPH else list(a.graphs)):
            for n in g.node:
                names.extend(n.input)
                stack.extend(x for x in n.attribute if x.type in (_GRAPH, _GRAPHS))
    return names


def _quoted(names) -> str:
    names = list(names)
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return ", ".join(f"'{n}'" for n in names[:_SHOWN]) + more


def _finding(rule: str, message: str, index: int, node: onnx.NodeProto,
             tensor: str | None = None) -> Finding:
    return Finding(rule, message, graph="main", node_index=index, node_name=node.name or None,
                   op_type=node.op_type, domain=node.domain, tensor=tensor)


def producers(g: onnx.GraphProto) -> dict[str, int]:
    """Output name -> index of the (first) node that writes it ('' excluded)."""
    out: dict[str, int] = {}
    for index, node in enumerate(g.node):
        for name in node.output:
            if name and name not in out:
                out[name] = index
    return out


def live_nodes(g: onnx.GraphProto, made: dict[str, int] | None = None) -> bytearray:
    """1 for every node of ``g`` some graph output depends on, else 0: a work list from the
    graph outputs back through each live node's inputs (and the names its subgraphs read),
    whatever the nodes' order. ``made``: producers(g), when the caller has it."""
    made = producers(g) if made is None else made
    live = bytearray(len(g.node))
    work = [made[o.name] for o in g.output if o.name in made]
    while work:
        index = work.pop()
        if live[index]:
            continue
        live[index] = 1
        node = g.node[index]
        reads = list(node.input)
        if node.attribute:
            reads += outer_reads(node)
        for name in reads:
            k = made.get(name)
            if k is not None and not live[k]:
                work.append(k)
    return live


def _cyclic(g: onnx.GraphProto, made: dict[str, int]) -> bytearray:
    """1 for every node on a cycle or downstream of one (Kahn's algorithm: what never becomes
    ready), else 0."""
    n = len(g.node)
    waiting = [0] * n
    readers: list[list[int]] = [[] for _ in range(n)]
    for index, node in enumerate(g.node):
        for name in set(node.input):
            k = made.get(name)
            if k is not None:
                waiting[index] += 1
                readers[k].append(index)
    ready = [i for i in range(n) if waiting[i] == 0]
    stuck = bytearray(b"\x01" * n)
    while ready:
        i = ready.pop()
        stuck[i] = 0
        for r in readers[i]:
            waiting[r] -= 1
            if waiting[r] == 0:
                ready.append(r)
    return stuck


def topological_order(g: onnx.GraphProto) -> list[int] | None:
    """The node indices in an order where every node comes after the producers of its inputs,
    keeping the written order wherever it already is one (a stable Kahn's algorithm, smallest
    ready index first); None when the nodes form a cycle."""
    import heapq
    made = producers(g)
    n = len(g.node)
    waiting = [0] * n
    readers: list[list[int]] = [[] for _ in range(n)]
    for index, node in enumerate(g.node):
        reads = set(node.input)
        if node.attribute:
            reads.update(outer_reads(node))
        for name in reads:
            k = made.get(name)
            if k is not None and k != index:
                waiting[index] += 1
                readers[k].append(index)
            elif k == index:
                return None     # a node reading its own output
    ready = [i for i in range(n) if waiting[i] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for r in readers[i]:
            waiting[r] -= 1
            if waiting[r] == 0:
                heapq.heappush(ready, r)
    return order if len(order) == n else None


def _clean(g: onnx.GraphProto, given: set[str]) -> bool:
    """True when a checked graph (sorted, every name defined once) of nodes with one result each
    has no empty input name, every node's result is read or is a graph output, and every
    initializer is read or is a graph input. In an acyclic
    graph that means no dead node: a dead node's readers are all dead, and following them ends
    at a node whose result nobody reads. So: the results read (node inputs and graph outputs
    that are no graph input or initializer) number as many as the nodes."""
    read: set[str] = {o.name for o in g.output}
    results = 0
    for node in g.node:
        read.update(node.input)
        results += len(node.output)
        if node.attribute:
            read.update(outer_reads(node))
    if results != len(g.node) or "" in read:
        return False
    return _all_read(g, given, read)


def _all_read(g: onnx.GraphProto, given: set[str], read: set[str]) -> bool:
    """For a graph in order whose nodes have one result each and read no '': every result is
    read or is a graph output (``read``: the names read and the graph outputs), and so is every
    named initializer that is no graph input."""
    inputs = {vi.name for vi in g.input}
    return len(read) - len(read & given) == len(g.node) and \
        all(t.name in read or t.name in inputs or not t.name for t in g.initializer)


def findings(model: onnx.ModelProto, *, checked: bool = False,
             unread: set[str] | None = None) -> list[Finding]:
    """PROF-R4, PROF-R5 and PROF-R6 on ``model``'s main graph. ``checked``: onnx's checker
    accepted the model, so its main graph is in topological order (the checker refuses any
    other) and every name is defined once; then, when every node has one result, a single pass
    reading the input names decides all three rules (about 2.5 s at 1M nodes) and the general
    passes below run only when it finds something to report. ``unread``: the node results and
    initializers (no graph input) that no node reads, from the validator's propagation
    (propagate.Types.unread), which took the model only if its nodes are in order, each with
    one new result, no input named '' and no subgraph: then nothing is dead when each of them
    is a graph output, decided without reading a name again."""
    g = model.graph
    given = {vi.name for vi in g.input}
    given.update(t.name for t in g.initializer)
    given.update(s.values.name for s in g.sparse_initializer)
    if unread is not None and not unread.difference(o.name for o in g.output):
        return []
    if checked and unread is None and _clean(g, given):
        return []
    found: list[Finding] = []
    known = set(given)
    known.discard("")
    read: set[str] = {o.name for o in g.output}   # what the graph outputs and the nodes read
    later: list[tuple[int, str]] = []      # (node, input) read before any node wrote it
    resultless = False
    # one forward pass: what each node reads was defined before it (PROF-R6), and is named (R5)
    for index, node in enumerate(g.node):
        inputs = tuple(node.input)     # each name decoded once, then set operations in C
        read.update(inputs)
        if not known.issuperset(inputs) or "" in known:
            for k, name in enumerate(inputs):
                if not name:
                    found.append(_empty_input(index, node, k))
                elif name not in known:
                    later.append((index, name))
        if node.attribute:
            read.update(outer_reads(node))
        outputs = tuple(node.output)
        known.update(outputs)
        if not any(outputs):
            resultless = True       # a node with no result contributes to nothing
    known.discard("")
    made: dict[str, int] | None = None
    # req: PROF-R6
    if later:
        made = producers(g)
        order = [(i, name) for i, name in later if name in made and made[name] >= i]
        stuck = _cyclic(g, made) if order else b""
        for i, name in order:
            k = made[name]
            node, producer = g.node[i], g.node[k]
            by = node_label(producer.name or None, producer.op_type, k)
            if stuck[k]:
                # k is on a cycle or after one (Kahn's algorithm never reaches it)
                msg = (f"node reads '{name}', which node '{by}' (index {k}) computes, and the "
                       f"nodes '{name}' depends on form a cycle: no order computes it before it "
                       "is read; fix: break the cycle in the source model (the profile's graphs "
                       "are acyclic)")
            else:
                msg = (f"node reads '{name}' before node '{by}' (index {k}) computes it: the "
                       "nodes are not in topological order; fix: list every node after the "
                       "producers of its inputs (sonnx conform sorts them, no bit changes)")
            found.append(_finding("PROF-R6", msg, i, node, tensor=name))
    # req: PROF-R4
    # in an acyclic graph a dead node exists only if some node has no result that is read or
    # is a graph output (follow a dead node's readers: they end at such a node), so when every
    # result is read the work list below is not needed
    unread = known.difference(read, given)
    if not unread and not later and not resultless:
        live = bytearray(b"\x01" * len(g.node))
    else:
        live = live_nodes(g, made if made is not None else producers(g))
        read = {o.name for o in g.output}
        for index, node in enumerate(g.node):
            if live[index]:
                read.update(node.input)
                if node.attribute:
                    read.update(outer_reads(node))
    if not all(live):
        readers: dict[str, list[int]] = {}
        for index, node in enumerate(g.node):
            if not live[index]:
                for name in node.input:
                    readers.setdefault(name, []).append(index)
        for index, node in enumerate(g.node):
            if live[index]:
                continue
            results = [o for o in node.output if o]
            dead_readers = sorted({r for o in results for r in readers.get(o, ())})
            if dead_readers:
                why = (f"its result(s) {_quoted(results)} are read only by node(s) that reach no "
                       "graph output either (" + _quoted(
                           node_label(g.node[r].name or None, g.node[r].op_type, r)
                           for r in dead_readers) + ")")
            else:
                why = f"no node reads its result(s) {_quoted(results)} and none is a graph output"
            found.append(_finding("PROF-R4", f"dead node: {why}; fix: remove it (sonnx conform "
                                  "removes dead nodes, no output bit changes)", index, node))
        read.update(readers)
        for index, node in enumerate(g.node):   # names the dead nodes' subgraphs read
            if not live[index] and node.attribute:
                read.update(outer_reads(node))
    inputs = {vi.name for vi in g.input}
    for t in g.initializer:
        # req: PROF-R4
        # (a nameless initializer is malformed ONNX: the checker's finding)
        if t.name and t.name not in read and t.name not in inputs:
            found.append(Finding("PROF-R4", f"initializer '{t.name}' is read by no node and is "
                                 "no graph output: it takes no part in any result; fix: remove it "
                                 "(sonnx conform removes unused initializers)", graph="main",
                                 tensor=t.name))
    return found


def _read_as_zero(node: onnx.NodeProto, k: int) -> bool:
    """Whether the operator's record says ONNX reads input k, omitted, as a scalar zero."""
    from ..ops import registry

    if node.domain not in ("", "ai.onnx") or node.op_type not in registry.operators():
        return False
    op = registry.operator(node.op_type)
    return k < len(op.inputs) and op.inputs[k] in op.omitted_as_zero


def _empty_input(index: int, node: onnx.NodeProto, k: int) -> Finding:
    # req: PROF-R5
    trailing = not any(node.input[k + 1:])
    where = "at the end of its input list" if trailing else "before a named input"
    if trailing:
        advice = ("fix: leave an absent optional input off the end of the input list (sonnx "
                  "conform drops trailing empty names, no bit changes)")
    elif _read_as_zero(node, k):
        advice = ("fix: sonnx conform writes the scalar zero ONNX reads for this omitted input "
                  "(no bit changes), or re-export the node with the value given")
    else:
        advice = ("fix: re-export the node with every input before its last named one given a "
                  "tensor")
    return _finding("PROF-R5", f"{node.op_type} input {k} is written as the empty name '' "
                    f"({where}), ONNX's spelling of an omitted optional input; {advice}", index, node)
