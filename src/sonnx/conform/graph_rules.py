"""The rewrites of ``sonnx conform`` for the profile's graph rules (spec/profile.md, "Graph
rules"), on the main graph; each changes how the model is written, never a value:

* sort-nodes (PROF-R6): an acyclic graph listed out of order is listed in a topological order
  (each node's computation is unchanged, only its place in the list); a cycle is left alone
  (no order exists) and stays a finding;
* drop-empty-inputs (PROF-R5): input names '' at the end of a node's input list are dropped
  (ONNX reads a trailing '' as an omitted input, so the node is the same node); a '' before a
  named input cannot be dropped (the inputs after it would move): where the operator's record
  says ONNX reads that omitted input as a scalar zero (``Operator.omitted_as_zero``), the zero is
  written as an initializer and named there (fill-omitted-input); otherwise it stays a finding;
* remove-dead-node, remove-unused-initializer (PROF-R4): nodes no graph output depends on are
  removed, then the initializers no node reads any more (unless they are graph inputs, part of
  the interface, or graph outputs). No output can change: none is computed from them.

The passes use the validator's own graph analysis (sonnx.validate.graph), so conform removes
exactly what the validator reports."""
from __future__ import annotations

import onnx

from .rewrite import Blocker, Log, Rewrite


def _graph_rules():
    from ..validate import graph    # on use: the validator's reader imports conform.rewrite
    return graph


def sort_nodes(model: onnx.ModelProto, log: Log) -> None:
    # req: PROF-R6
    g = model.graph
    if not any(f.rule == "PROF-R6" for f in _graph_rules().findings(model)):
        return
    order = _graph_rules().topological_order(g)
    if order is None:       # a cycle: no order exists
        for f in _graph_rules().findings(model):
            if f.rule == "PROF-R6":
                log.blockers.append(Blocker("PROF-R6", "the nodes form a cycle: no order lists "
                                            "every node after its inputs' producers, and "
                                            "breaking it would change what the model computes; "
                                            "fix the source model", f.node_index))
        return
    moved = sum(1 for k, i in enumerate(order) if k != i)
    nodes = [g.node[i] for i in order]
    copies = [onnx.NodeProto() for _ in nodes]
    for c, n in zip(copies, nodes):
        c.CopyFrom(n)
    del g.node[:]
    g.node.extend(copies)
    log.rewrites.append(Rewrite("sort-nodes", "PROF-R6",
                                f"the {len(order)} nodes listed in topological order ({moved} "
                                "moved; nodes already in order keep their relative order); no "
                                "node's computation changes"))


def drop_empty_inputs(model: onnx.ModelProto, log: Log) -> None:
    # req: PROF-R5
    for index, node in enumerate(model.graph.node):
        if "" not in node.input:
            continue
        names = list(node.input)
        while names and not names[-1]:
            names.pop()
        dropped = len(node.input) - len(names)
        if dropped:
            del node.input[:]
            node.input.extend(names)
            log.rewrites.append(Rewrite("drop-empty-inputs", "PROF-R5",
                                        f"{dropped} empty input name(s) '' dropped from the end "
                                        "of the input list (an omitted optional input either "
                                        "way)", index, node.name, node.op_type))
        if "" in names:
            names = _fill_zeros(model, index, node, names, log)
        if "" in names:
            log.blockers.append(Blocker("PROF-R5", "an empty input name before a named input "
                                        "cannot be dropped (the inputs after it would change "
                                        "places) and ONNX gives it no value conform could write: "
                                        "re-export the node with a tensor there", index))


def _fill_zeros(model: onnx.ModelProto, index: int, node: onnx.NodeProto, names: list[str],
                log: Log) -> list[str]:
    """Name a zero scalar initializer for each '' the operator reads as a scalar zero of another
    input's element type; the other '' stay. Returns the node's input names after the edit."""
    import numpy as np

    from ..ops import registry
    from .rewrite import inferred_types

    if node.domain not in ("", "ai.onnx") or node.op_type not in registry.operators():
        return names
    op = registry.operator(node.op_type)
    types = None
    taken = ({t.name for t in model.graph.initializer} | {i.name for i in model.graph.input}
             | {o for n in model.graph.node for o in n.output})
    for k, name in enumerate(names):
        source = op.omitted_as_zero.get(op.inputs[k]) if not name and k < len(op.inputs) else None
        if source is None or op.inputs.index(source) >= len(names):
            continue
        if types is None:
            types = inferred_types(model)
        tp = types.get(names[op.inputs.index(source)])
        elem = tp.tensor_type.elem_type if tp is not None and tp.HasField("tensor_type") else 0
        if not elem:
            continue                    # the type is unknown: nothing to write, the finding stays
        new, j = f"{node.name or node.op_type}_{op.inputs[k]}", 1
        while new in taken:
            j += 1
            new = f"{node.name or node.op_type}_{op.inputs[k]}_{j}"
        taken.add(new)
        size = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem)).itemsize
        # all bits zero: +0.0 for every float type (bfloat16 and the 8-bit floats included), 0
        # for the integers; raw bytes so that no type needs a numpy dtype of its own
        model.graph.initializer.append(onnx.helper.make_tensor(new, elem, [], bytes(size), raw=True))
        names[k] = new
        node.input[k] = new
        log.rewrites.append(Rewrite("fill-omitted-input", "PROF-R5",
                                    f"input {k} ({op.inputs[k]}), omitted as '' before a named "
                                    f"input, written as the scalar zero ONNX reads for it "
                                    f"({new}, the element type of {source})", index, node.name,
                                    node.op_type))
    return names


def remove_dead(model: onnx.ModelProto, log: Log) -> None:
    # req: PROF-R4
    g = model.graph
    graph = _graph_rules()
    if not any(f.rule == "PROF-R4" for f in graph.findings(model)):
        return
    if graph.topological_order(g) is None:
        for f in graph.findings(model):     # a cycle: PROF-R6 stays, and conform removes nothing
            if f.rule == "PROF-R4":
                log.blockers.append(Blocker("PROF-R4", "the graph has a cycle (PROF-R6): conform "
                                            "removes no node from it; break the cycle first",
                                            f.node_index, f.tensor))
        return
    live = graph.live_nodes(g)
    if not all(live):
        kept = []
        for index, node in enumerate(g.node):
            if live[index]:
                kept.append(node)
            else:
                log.rewrites.append(Rewrite(
                    "remove-dead-node", "PROF-R4",
                    f"dead node removed: no graph output depends on its result(s) "
                    f"{', '.join(repr(o) for o in node.output if o)}", index, node.name,
                    node.op_type))
        copies = []
        for n in kept:
            c = onnx.NodeProto()
            c.CopyFrom(n)
            copies.append(c)
        del g.node[:]
        g.node.extend(copies)
    read = {o.name for o in g.output} | {vi.name for vi in g.input}
    for node in g.node:
        read.update(node.input)
        if node.attribute:
            read.update(graph.outer_reads(node))
    unused = [t for t in g.initializer if t.name and t.name not in read]
    if unused:
        gone = {t.name for t in unused}
        keep = [t for t in g.initializer if t.name not in gone]
        copies = []
        for t in keep:
            c = onnx.TensorProto()
            c.CopyFrom(t)
            copies.append(c)
        del g.initializer[:]
        g.initializer.extend(copies)
        for t in unused:
            log.rewrites.append(Rewrite("remove-unused-initializer", "PROF-R4",
                                        f"initializer '{t.name}' removed: no node reads it and it "
                                        "is no graph input or output", tensor=t.name))
