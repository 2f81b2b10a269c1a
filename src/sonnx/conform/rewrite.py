"""The rewrites of ``sonnx conform``: each one changes how the model is written, never what it
computes (no value is rounded, cast or reordered; a broadcast is replaced by the very tensor
numpy/ONNX broadcasting would have read). What cannot be rewritten that way is recorded as a
``Blocker`` with the reason, for the report.

Only the main graph is rewritten: a subgraph belongs to If/Loop/Scan, which the profile refuses
(PROF-R1) and no rewrite removes.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import numpy_helper

from ..dimnames import DIM, declarations, dims_of, pinnable_names, symbolic_names  # noqa: F401 (pinnable_names: conform's name for it)
from ..ops import pool, registry
from . import wire



class ConformError(ValueError):
    """Bad input (a --dim that cannot apply, an unreadable model): exit 2, one line."""


@dataclass
class Rewrite:
    kind: str                      # pin-dim | constant-to-initializer | materialise-broadcast |
    requirement: str               # node-rewrite | declare-output-shape | remove-value-info |
    #                                write-default | explicit-pads
    detail: str
    node_index: int | None = None
    node_name: str | None = None
    op_type: str | None = None
    tensor: str | None = None

    def as_dict(self) -> dict:
        node = None if self.node_index is None else {
            "graph": "main", "index": self.node_index, "name": self.node_name or None,
            "op_type": self.op_type}
        return {"kind": self.kind, "requirement": self.requirement, "node": node,
                "tensor": self.tensor, "detail": self.detail}


@dataclass
class Blocker:
    """Why a requirement stays broken at one node or tensor: no rewrite keeps every bit."""
    rule: str
    reason: str
    node_index: int | None = None
    tensor: str | None = None
    about: str | None = None       # when set, only a finding whose message names it is meant


@dataclass
class Log:
    rewrites: list[Rewrite] = field(default_factory=list)
    blockers: list[Blocker] = field(default_factory=list)
    renamed: set[str] = field(default_factory=set)   # tensors whose stored value/shape changed


# ---------------------------------------------------------------- --dim


def parse_dims(specs: list[str] | None) -> dict[str, int]:
    """``["batch=2", ...]`` -> {"batch": 2}; ConformError for anything else."""
    out: dict[str, int] = {}
    for spec in specs or ():
        m = DIM.match(spec.strip()) if isinstance(spec, str) else None
        if m is None:
            raise ConformError(f"--dim {spec!r}: expected NAME=SIZE with a positive integer SIZE "
                               "(e.g. --dim batch=2)")
        name, size = m.group(1).strip(), int(m.group(2))
        if size <= 0:
            raise ConformError(f"--dim {spec!r}: the size must be a positive integer (the "
                               "profile's dimensions are static and positive)")
        if size > 2**31 - 1:
            raise ConformError(f"--dim {spec!r}: the size is over 2^31 - 1")
        if name in out and out[name] != size:
            raise ConformError(f"--dim {name} is given twice with different sizes "
                               f"({out[name]} and {size})")
        out[name] = size
    return out


def check_dims(dims: dict[str, int]) -> dict[str, int]:
    """The API's ``dims`` argument: names to positive ints (ConformError otherwise)."""
    if not isinstance(dims, dict):
        raise ConformError(f"dims must be a dict of dimension names to sizes, got {type(dims).__name__}")
    return parse_dims([f"{k}={v}" if isinstance(k, str) and type(v) is int else f"{k!r}={v!r}"
                       for k, v in dims.items()])


def pin_dims(model: onnx.ModelProto, dims: dict[str, int], log: Log) -> None:
    """Replace each named symbolic dimension of ``dims`` by its size, in every declaration of the
    main graph. A name the model does not hold is an error (a typo must not pass silently)."""
    g = model.graph
    present = symbolic_names(g)
    missing = [n for n in dims if n not in present]
    if missing:
        have = ", ".join(present) if present else "none"
        raise ConformError(f"--dim {missing[0]}: the model has no symbolic dimension of that name "
                           f"(its named dimensions: {have})")
    inits = {t.name for t in g.initializer}
    for name, size in dims.items():
        where = []
        for what, vi in declarations(g):
            for axis, d in enumerate(dims_of(vi)):
                if d.WhichOneof("value") == "dim_param" and d.dim_param == name:
                    d.dim_value = size          # clears dim_param (a oneof)
                    where.append(f"{what} '{vi.name}' axis {axis}")
        log.rewrites.append(Rewrite("pin-dim", "PROF-R2", f"symbolic dimension '{name}' pinned to "
                                    f"{size} in {len(where)} declaration(s): " + ", ".join(where[:6])
                                    + (" ..." if len(where) > 6 else "")))
    # what --dim cannot pin: graph inputs with an unnamed dynamic or still symbolic dimension
    for vi in g.input:
        if vi.name in inits:
            continue
        if vi.type.WhichOneof("value") == "tensor_type" and not vi.type.tensor_type.HasField("shape"):
            log.blockers.append(Blocker("PROF-R2", f"graph input '{vi.name}' has no shape at all; "
                                        "--dim pins named dimensions only: re-export with a static "
                                        "input shape", tensor=vi.name))
        for axis, d in enumerate(dims_of(vi)):
            which = d.WhichOneof("value")
            if which == "dim_param" and d.dim_param:
                log.blockers.append(Blocker("PROF-R2", f"graph input '{vi.name}' axis {axis} is the "
                                            f"symbolic dimension '{d.dim_param}': pin it with --dim "
                                            f"{d.dim_param}=SIZE", tensor=vi.name))
            elif which != "dim_value":
                log.blockers.append(Blocker("PROF-R2", f"graph input '{vi.name}' axis {axis} is dynamic "
                                            "and has no name, so --dim cannot pin it: re-export with "
                                            "a static shape, or name the axis (dynamic_axes / "
                                            "dynamic_shapes) and pin that name", tensor=vi.name))


# ---------------------------------------------------------------- Constant -> initializer
_STRING_REASON = ("its value is a string: strings are no element type of the profile's operators, "
                  "so an initializer of it would be refused as well (PROF-R2/-R3 of its consumer); "
                  "remove the string from the model (conform keeps it as it is)")


def _constant_tensor(node: onnx.NodeProto) -> tuple[onnx.TensorProto | None, str]:
    """The Constant's value as a TensorProto holding exactly the same bits (None, reason).

    Float attributes are read from their wire bytes (conform/wire.py: a Python float would
    quiet a signalling NaN); integers are exact Python ints; a ``value`` tensor is copied as a
    message, every field and byte as stored."""
    if len(node.attribute) != 1:
        return None, f"the Constant has {len(node.attribute)} attributes, not one value"
    a = node.attribute[0]
    name = node.output[0]
    if not name:
        return None, ("its output has no name (nothing can read it), and an initializer must have "
                      "one: remove the node from the model")
    if a.ref_attr_name:
        return None, "its value refers to a function attribute (ref_attr_name)"
    if a.name == "value":
        if a.t.data_type == onnx.TensorProto.STRING:
            return None, _STRING_REASON
        t = onnx.TensorProto()
        t.CopyFrom(a.t)
        t.name = name
        return t, ""
    if a.name in ("value_float", "value_floats"):
        words = wire.attribute_floats(a)
        dims = [] if a.name == "value_float" else [len(words) // 4]
        return _raw_tensor(name, onnx.TensorProto.FLOAT, dims, words), ""
    if a.name == "value_int":
        return _raw_tensor(name, onnx.TensorProto.INT64, [], struct.pack("<q", a.i)), ""
    if a.name == "value_ints":
        return _raw_tensor(name, onnx.TensorProto.INT64, [len(a.ints)],
                           struct.pack(f"<{len(a.ints)}q", *a.ints)), ""
    if a.name in ("value_string", "value_strings"):
        return None, _STRING_REASON
    if a.name == "sparse_value":
        return None, ("its value is a sparse tensor: an initializer of it would still be sparse "
                      "(PROF-R2); densify it in the exporter (e.g. x.to_dense()), conform does not "
                      "choose a dense layout for you")
    return None, f"its attribute '{a.name}' is not a value conform knows"


def _raw_tensor(name: str, data_type: int, dims: list[int], raw: bytes) -> onnx.TensorProto:
    """A tensor stored as its little-endian bytes (raw_data: ONNX's byte order, every bit)."""
    t = onnx.TensorProto(name=name, data_type=data_type, dims=dims)
    t.raw_data = raw
    return t


def stored_array(t: onnx.TensorProto) -> np.ndarray:
    """An initializer's values with every bit kept: numpy_helper, except for float32 values in
    the typed field float_data, which it reads through Python floats (quieting signalling NaNs)."""
    if t.data_type == onnx.TensorProto.FLOAT and not t.HasField("raw_data") and len(t.float_data):
        return wire.tensor_float_data(t).astype(np.float32).reshape(tuple(t.dims))
    return numpy_helper.to_array(t)


def constants_to_initializers(model: onnx.ModelProto, log: Log) -> None:
    g = model.graph
    keep = []
    new_inits = []
    for index, node in enumerate(g.node):
        if node.op_type != "Constant" or node.domain not in ("", "ai.onnx") or len(node.output) != 1:
            keep.append(node)
            continue
        t, why = _constant_tensor(node)
        if t is None:
            log.blockers.append(Blocker("PROF-R1", f"this Constant node cannot become an "
                                        f"initializer: {why}", node_index=index))
            keep.append(node)
            continue
        new_inits.append(t)
        log.rewrites.append(Rewrite("constant-to-initializer", "PROF-R1",
                                    f"Constant node stored as the initializer '{t.name}' "
                                    f"(shape {tuple(t.dims)}, {_elem(t.data_type)}), same values",
                                    index, node.name, node.op_type, t.name))
    if new_inits:
        del g.node[:]
        g.node.extend(keep)
        g.initializer.extend(new_inits)
        # before IR 4 every initializer is also a graph input; listing the new ones as inputs
        # would make them overridable, so the model is raised to IR 4 instead
        # (initializer_inputs_to_constants, which runs next)


# ---------------------------------------------------------------- Identity, inference Dropout
def _dropout_refusal(node: onnx.NodeProto, version: int, g: onnx.GraphProto, read: set[str],
                     outputs: set[str]) -> str | None:
    """Why this Dropout is not a copy of its input at inference (None: it is). Versions 1 and 6
    state the mode in ``is_test`` (default 0: training); 7 and 10 have no mode in the graph
    (inference: a copy, the scaling is done in training); from 12 the optional input
    ``training_mode`` must be absent or a constant false (``ratio`` and ``seed`` then do
    nothing). The mask output must not be read: conform writes no tensor for it."""
    if version < 7:
        is_test = next((a.i for a in node.attribute if a.name == "is_test"), 0)
        if not is_test:
            return (f"Dropout-{version} has is_test=0 (its default), which is training mode: a "
                    "random mask is applied; export in inference mode (is_test=1, or opset 7+)")
    elif version >= 12 and len(node.input) > 2 and node.input[2]:
        name = node.input[2]
        inits = {t.name: t for t in g.initializer}
        if name not in inits or name in {vi.name for vi in g.input}:
            return (f"its training_mode input '{name}' is not a constant (a graph input or a "
                    "computed tensor may be true at run time): make it a constant false, or drop it")
        try:
            value = numpy_helper.to_array(inits[name])
        except Exception:
            return f"its training_mode initializer '{name}' cannot be read"
        if value.dtype != np.bool_ or value.size != 1 or bool(value.reshape(-1)[0]):
            return (f"its training_mode '{name}' is not a single false: Dropout then applies a "
                    "random mask (training)")
    if len(node.output) > 1 and node.output[1] and (node.output[1] in read or node.output[1] in outputs):
        return (f"its mask output '{node.output[1]}' is read (or is a graph output): conform "
                "writes no tensor for it")
    return None


def _kept_name(x: str, y: str, outputs: set[str]) -> tuple[str, str]:
    """(name that disappears, name that stays) when a copy ``y = x`` is removed: a graph
    output's name always stays (the producer of x then writes y; its readers read y)."""
    return (x, y) if y in outputs else (y, x)


def remove_copies(model: onnx.ModelProto, log: Log) -> None:
    """Identity nodes and inference-mode Dropout nodes compute a copy of their first input: the
    node is removed and its readers read the input instead. When the removed output is a graph
    output, its name stays: the input's producer writes that name instead (the interface does
    not change); when the input itself is a graph input, initializer or graph output (it cannot
    be renamed), the node stays and the reason is reported."""
    g = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        return
    blocked: dict[str, str] = {}        # output name -> why the node stays
    for _ in range(len(g.node) + 1):            # one removal per pass: names change under it
        read = {i for n in g.node for i in n.input} | \
            {i for sub in _subgraphs(g) for n in sub.node for i in n.input}
        outputs = {o.name for o in g.output}
        fixed = {vi.name for vi in g.input} | {t.name for t in g.initializer} | outputs
        done = False
        for index, node in enumerate(g.node):
            if node.op_type not in registry.COPY_OPERATORS or node.domain not in ("", "ai.onnx") \
                    or len(node.input) < 1 or not node.input[0] or not node.output or not node.output[0]:
                continue
            if node.output[0] in blocked:
                continue
            try:
                version = onnx.defs.get_schema(node.op_type, opset, "").since_version
            except Exception:
                continue    # no such version: onnx's checker reports it
            x, y = node.input[0], node.output[0]
            why = _dropout_refusal(node, version, g, read, outputs) if node.op_type == "Dropout" else None
            if why is None and y in outputs and x in fixed:
                why = (f"its output '{y}' is a graph output and its input '{x}' is a graph input, "
                       "initializer or graph output, so no producer can write the output's name")
            if why is not None:
                blocked[y] = f"this {node.op_type} cannot be removed: {why}"
                continue
            old, new = _kept_name(x, y, outputs)
            del g.node[index]
            for n in list(g.node) + [n for sub in _subgraphs(g) for n in sub.node]:
                for k, name in enumerate(n.input):
                    if name == old:
                        n.input[k] = new
                for k, name in enumerate(n.output):
                    if name == old:
                        n.output[k] = new
            keep = [vi for vi in g.value_info if vi.name not in (old, new)]
            del g.value_info[:]
            g.value_info.extend(keep)
            log.renamed.add(old)
            kind = "remove-identity" if node.op_type == "Identity" else "remove-dropout"
            what = ("a copy of its input" if node.op_type == "Identity" else
                    f"Dropout-{version} in inference mode: a copy of its input")
            log.rewrites.append(Rewrite(kind, "PROF-R1", f"{node.op_type} removed ({what}); "
                                        + (f"the producer of '{x}' now writes the graph output "
                                           f"'{y}' (same name, same values)" if old == x else
                                           f"its readers read '{x}' instead of '{y}'"),
                                        index, node.name, node.op_type, new))
            done = True
            break
        if not done:
            break
    # located in the final graph (a removal moves the nodes after it)
    for index, node in enumerate(g.node):
        if node.output and node.output[0] in blocked and node.op_type in registry.COPY_OPERATORS:
            log.blockers.append(Blocker("PROF-R1", blocked[node.output[0]], index))


# ---------------------------------------------------------------- IR < 4 initializer inputs
IR_CONSTANT_INITIALIZERS = 4   # the first IR version where an initializer need not be an input


def initializer_inputs_to_constants(model: onnx.ModelProto, log: Log) -> None:
    """An IR < 4 model lists every initializer as a graph input too (the IR-3 rule). onnxruntime,
    the runtime that reads the file, treats them as constants at IR < 4 (feeding one fails:
    "Invalid input name"), so sonnx does the same: the entries are dropped from the graph inputs
    and the model's IR version raised to 4, the lowest where initializers need not be inputs
    (every opset an IR-3 model may import, 1 to 8, is valid at IR 4 as well). Also done for an
    IR < 4 model that has no such entry but gained initializers from Constant nodes (they must
    not become inputs). The interface changes: the report names the inputs removed."""
    if not 0 < model.ir_version < IR_CONSTANT_INITIALIZERS:
        return
    g = model.graph
    inits = {t.name for t in g.initializer}
    if not inits:
        return
    dropped = [vi.name for vi in g.input if vi.name in inits]
    if dropped:
        keep = [vi for vi in g.input if vi.name not in inits]
        del g.input[:]
        g.input.extend(keep)
    before = model.ir_version
    model.ir_version = IR_CONSTANT_INITIALIZERS
    names = ", ".join(f"'{n}'" for n in dropped[:8]) + (" ..." if len(dropped) > 8 else "")
    log.rewrites.append(Rewrite(
        "initializer-inputs-to-constants", "PROF-R1",
        f"IR version {before} raised to {IR_CONSTANT_INITIALIZERS}; " +
        (f"the interface changed: {len(dropped)} initializer(s) no longer listed as graph inputs "
         f"({names}); they were constants already for onnxruntime, which refuses to feed them at "
         f"IR {before}" if dropped else
         "no initializer is listed as a graph input (the initializers made from Constant nodes "
         "stay constants)")))


def _elem(code: int) -> str:
    return onnx.helper.tensor_dtype_to_string(code).replace("TensorProto.", "").lower()


# ---------------------------------------------------------------- broadcasts
def expanded(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The tensor that broadcasting ``array`` to ``shape`` reads, stored: same dtype, same values
    (the one place values are produced; tests/conform plants faults here)."""
    return np.broadcast_to(array, shape).copy()


def inferred_types(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    """Every main-graph tensor's type as onnx infers it now, declarations of intermediate values
    aside (a stale value_info must not steer a rewrite); initializers as stored."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.value_info[:]
    try:
        probe = onnx.shape_inference.infer_shapes(probe, strict_mode=False, data_prop=True)
    except Exception:
        pass
    out: dict[str, onnx.TypeProto] = {}
    for coll in (probe.graph.value_info, probe.graph.output, probe.graph.input):
        for vi in coll:
            out[vi.name] = vi.type
    for t in probe.graph.initializer:
        out[t.name] = onnx.helper.make_tensor_type_proto(t.data_type, list(t.dims))
    return out


def shapes(model: onnx.ModelProto) -> dict[str, tuple]:
    """Every tensor's shape as onnx infers it now (inferred_types): name -> dims (int, str or
    None), or None when it is no tensor of known rank."""
    out: dict[str, tuple] = {}
    for name, tp in inferred_types(model).items():
        tt = tp.tensor_type
        if tp.WhichOneof("value") != "tensor_type" or not tt.HasField("shape"):
            out[name] = None
            continue
        out[name] = tuple(d.dim_value if d.WhichOneof("value") == "dim_value"
                          else (d.dim_param or None) for d in tt.shape.dim)
    return out


def _shape_text(shape: tuple) -> str:
    inner = ", ".join(str(d) if isinstance(d, (int, str)) and d != "" else "?" for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def _static(shape) -> bool:
    return shape is not None and all(isinstance(d, int) and d > 0 for d in shape)


def _broadcasts_to(src: tuple, dst: tuple) -> bool:
    if len(src) > len(dst):
        return False
    return all(s == d or s == 1 for s, d in zip(reversed(src), reversed(dst)))


def _producer(g: onnx.GraphProto) -> dict[str, tuple[int, onnx.NodeProto]]:
    return {o: (i, n) for i, n in enumerate(g.node) for o in n.output if o}


def _computed_reason(name: str, producers: dict, graph_inputs: set[str], inits: set[str]) -> str:
    if name in graph_inputs:
        what = (f"'{name}' is a graph input" + (" (its initializer is only a default the caller may "
                "override)" if name in inits else ""))
    elif name in producers:
        i, n = producers[name]
        what = f"'{name}' is computed by the {n.op_type} node {n.name or f'{n.op_type}_{i}'}"
    else:
        what = f"'{name}' is not a constant of the model"
    return (f"a broadcast of a computed tensor: {what}, so there is no constant to store expanded; "
            "making it the full shape needs an Expand or Tile node, which the profile refuses "
            "(PROF-R1): change the model so that it computes the full shape itself")


def _unpinned_reason(op: str, what: str, name: str, out: tuple, constant: bool, producers: dict,
                     graph_inputs: set[str], inits: set[str], pinnable: list[str]) -> str:
    """Why a broadcast to a result whose shape is not static stays: what --dim can do about it."""
    if not constant:
        return (f"{op} input {what} is broadcast to the result {_shape_text(out)}: "
                + _computed_reason(name, producers, graph_inputs, inits))
    head = (f"{op} input {what} '{name}' would be broadcast to the result, whose shape "
            f"{_shape_text(out)} is not static: ")
    named = [d for d in out if isinstance(d, str) and d in pinnable]
    if named:
        return (head + "pin its symbolic dimensions (" + ", ".join(dict.fromkeys(named)) + ") with "
                "--dim NAME=SIZE, then conform stores the expanded constant")
    if pinnable:
        return (head + "its dimensions have no name in the file; pin the model's symbolic "
                "dimensions (" + ", ".join(pinnable) + ") with --dim NAME=SIZE if the result's "
                "shape follows from them, then conform stores the expanded constant")
    return (head + "its dimensions have no name --dim could pin: re-export with static input "
            "shapes, then conform stores the expanded constant")


def node_rewrites(model: onnx.ModelProto, log: Log) -> None:
    """The nodes whose record's ``conform`` has a ``node_rewrite`` (sonnx.ops.registry): each
    such node is rewritten as the record computes it (new initializers, nodes around it, inputs
    and outputs renamed), or a Blocker records why not. A constant the rewrite replaced is
    removed once nothing reads it."""
    g = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    hooks = {name: op.conform for name, op in registry.operators().items()
             if op.conform is not None and op.conform.node_rewrite is not None}
    if opset is None or not any(n.op_type in hooks and n.domain in ("", "ai.onnx") for n in g.node):
        return
    sh = shapes(model)
    graph_inputs = {vi.name for vi in g.input}
    inits = {t.name: t for t in g.initializer}
    taken = set(inits) | graph_inputs | {o.name for o in g.output} | {vi.name for vi in g.value_info} | \
        {x for n in g.node for x in list(n.input) + list(n.output)}

    def value(name: str):
        t = inits.get(name)
        return None if t is None or name in graph_inputs else stored_array(t)

    def fresh(stem: str) -> str:
        new, k = stem, 1
        while new in taken:
            k += 1
            new = f"{stem}_{k}"
        taken.add(new)
        return new

    replaced: set[str] = set()
    nodes: list[onnx.NodeProto] = []
    for index, node in enumerate(list(g.node)):
        rule = hooks.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        edit = None if rule is None else rule.node_rewrite(node, sh, value, opset, fresh)
        if isinstance(edit, str):
            log.blockers.append(Blocker(rule.rule, edit, index, None))
        if edit is None or isinstance(edit, str):
            nodes.append(node)
            continue
        for name, array in edit.initializers:
            t = numpy_helper.from_array(np.ascontiguousarray(array), name)
            g.initializer.append(t)
            inits[name] = t
        for pos, name in sorted(edit.inputs.items()):
            while len(node.input) < pos:            # an omitted optional input before it
                node.input.append("")
            if pos == len(node.input):              # an optional input the node omits
                node.input.append(name)
                continue
            if node.input[pos] in inits:
                replaced.add(node.input[pos])
            node.input[pos] = name
        for pos, name in edit.outputs.items():
            node.output[pos] = name
        nodes.extend(edit.before)
        nodes.append(node)
        nodes.extend(edit.after)
        log.rewrites.append(Rewrite("node-rewrite", rule.rule, edit.detail, index, node.name, node.op_type,
                                    None))
    del g.node[:]
    g.node.extend(nodes)
    read = {i for n in g.node for i in n.input} | {o.name for o in g.output}
    read |= {i for sub in _subgraphs(g) for n in sub.node for i in n.input}
    unread = {n for n in replaced if n not in read}
    if unread:
        keep = [t for t in g.initializer if t.name not in unread]
        del g.initializer[:]
        g.initializer.extend(keep)
        keep_in = [vi for vi in g.input if vi.name not in unread]
        del g.input[:]
        g.input.extend(keep_in)


def _attribute_value(a: onnx.AttributeProto):
    value = onnx.helper.get_attribute_value(a)
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _int_list(value) -> bool:
    """An INTS attribute as onnx reads it (or absent)."""
    return value is None or (isinstance(value, (list, tuple)) and all(type(v) is int for v in value))


def _shown(value) -> str:
    return str(list(value)) if isinstance(value, (list, tuple)) else repr(value)


def explicit_attributes(model: onnx.ModelProto, log: Log) -> None:
    """What a record's ``conform`` says a node leaves implicit, written out
    (sonnx.ops.registry.ConformRule): an auto_pad SAME_UPPER, SAME_LOWER or VALID as the pads
    it means for the static input shape (pool.auto_pads; auto_pad removed), then each omitted
    attribute of ``defaults`` with ONNX's default for it. ONNX reads the same values either
    way, so no bit changes (the bit check runs both models); what cannot be written is a
    Blocker with the reason."""
    g = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    rules = {name: op.conform for name, op in registry.operators().items()
             if op.conform is not None and (op.conform.defaults or op.conform.auto_pad)}
    if opset is None or not any(n.op_type in rules and n.domain in ("", "ai.onnx") for n in g.node):
        return
    sh = shapes(model)
    graph_inputs = {vi.name for vi in g.input}
    inits = {t.name: t for t in g.initializer}

    def _constant(name: str):
        t = inits.get(name) if name and name not in graph_inputs else None
        if t is None:
            return None
        try:
            return stored_array(t)
        except (ValueError, TypeError):     # unreadable: the validator reports the initializer
            return None

    for index, node in enumerate(g.node):
        rule = rules.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if rule is None:
            continue
        try:
            schema = onnx.defs.get_schema(node.op_type, opset, "")
        except Exception:
            continue    # no such version: the validator reports it
        version = schema.since_version
        attrs = {a.name: _attribute_value(a) for a in node.attribute}
        inputs = tuple(sh.get(i) if i else None for i in node.input)
        constants = tuple(_constant(i) for i in node.input)
        written: dict[str, object] = {}
        mode = attrs.get("auto_pad") if rule.auto_pad else None
        pads_from_auto = isinstance(mode, str) and mode != "NOTSET"

        def write(name: str, value) -> None:
            node.attribute.append(onnx.helper.make_attribute(name, value,
                                                             attr_type=schema.attributes[name].type))
            written[name] = value

        for name, default in rule.defaults.items():
            if name in attrs or name not in schema.attributes or (pads_from_auto and name == "pads"):
                continue
            value = default(inputs, {**attrs, **written}, opset, constants) if callable(default) else default
            if value is None:
                continue
            if isinstance(value, str):
                log.blockers.append(Blocker(rule.rule, f"{node.op_type}-{version} omits {name} and conform "
                                            f"cannot write ONNX's default for it: {value}", index,
                                            about=name))
                continue
            write(name, value)
            log.rewrites.append(Rewrite("write-default", rule.rule,
                                        f"{node.op_type}-{version} omitted {name}; ONNX's default "
                                        f"{name}={_shown(value)} written (ONNX reads that very value)",
                                        index, node.name, node.op_type, None))
        if not pads_from_auto:
            continue
        have = {**attrs, **written}
        x = inputs[0] if inputs else None
        if "pads" in have:
            why = "it writes pads as well, which ONNX forbids beside auto_pad: remove one of them"
        elif not _static(x) or len(x) < 3:
            why = (f"the pads it means depend on the input's spatial shape, which is not static "
                   f"({'unknown' if x is None else _shape_text(x)}): pin the symbolic dimensions "
                   "with --dim NAME=SIZE")
        elif not isinstance(have.get("kernel_shape"), (list, tuple)):
            why = "it does not write kernel_shape, which the pads depend on"
        elif not all(_int_list(have.get(k)) for k in ("kernel_shape", "strides", "dilations")) or \
                type(have.get("ceil_mode", 0)) is not int:
            why = ("kernel_shape, strides or dilations is not a list of integers, or ceil_mode not an "
                   "integer (the validator says which)")
        else:
            pads = pool.auto_pads(mode, tuple(x[2:]), tuple(have["kernel_shape"]), have.get("strides"),
                                  have.get("dilations"), have.get("ceil_mode", 0))
            why = pads if isinstance(pads, str) else None
        if why is not None:
            log.blockers.append(Blocker(rule.rule, f"{node.op_type}-{version} has auto_pad={mode}; conform "
                                        f"does not write its pads: {why}", index))
            continue
        keep = [a for a in node.attribute if a.name != "auto_pad"]
        del node.attribute[:]
        node.attribute.extend(keep)
        write("pads", list(pads))
        log.rewrites.append(Rewrite("explicit-pads", rule.rule,
                                    f"{node.op_type}-{version} auto_pad={mode} on input {_shape_text(x)} "
                                    f"written as pads={list(pads)} (ONNX's formula), auto_pad removed",
                                    index, node.name, node.op_type, None))


def materialise_broadcasts(model: onnx.ModelProto, log: Log) -> None:
    """The operands a record's ``conform`` names (sonnx.ops.registry.ConformRule) that are
    constants of a shape broadcast to the node's result: each gets an initializer of the full shape (one per source and target shape, shared
    by the nodes that need it; the original is removed once nothing reads it)."""
    g = model.graph
    sh = shapes(model)
    graph_inputs = {vi.name for vi in g.input}
    inits = {t.name: t for t in g.initializer}
    constants = {n for n in inits if n not in graph_inputs}
    producers = _producer(g)
    pinnable = symbolic_names(g)
    taken = set(inits) | graph_inputs | {o.name for o in g.output} | set(producers) | \
        {vi.name for vi in g.value_info} | {i for n in g.node for i in n.input}
    made: dict[tuple[str, tuple], str] = {}
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)

    def full(name: str, target: tuple) -> str:
        key = (name, target)
        if key not in made:
            new = f"{name}_{'x'.join(map(str, target))}"
            k = 1
            while new in taken:
                k += 1
                new = f"{name}_{'x'.join(map(str, target))}_{k}"
            taken.add(new)
            src = inits[name]
            t = numpy_helper.from_array(expanded(stored_array(src), target), new)
            if t.data_type != src.data_type:     # never a cast: refuse rather than convert
                raise RuntimeError(f"materialising '{name}' changed its type")
            g.initializer.append(t)
            inits[new] = t
            made[key] = new
        return made[key]

    for index, node in enumerate(g.node):
        op = node.op_type
        record = registry.operators().get(op)
        if node.domain not in ("", "ai.onnx") or record is None or record.conform is None:
            continue
        rule = record.conform.rule
        version = registry.since_version(op, opset) if opset is not None else None
        if version is None or version < 7:
            # before version 7 a broadcast follows the legacy broadcast/axis attributes, not
            # numpy's rule: storing numpy's expansion could change the result
            if version is not None and any(a.name == "broadcast" and a.i for a in node.attribute):
                log.blockers.append(Blocker(rule, f"{op}-{version} broadcasts by its legacy "
                                            "broadcast/axis attributes, not by numpy's rule; conform "
                                            "does not rewrite it: import opset 7 or later",
                                            index, None, about="broadcast="))
            if version is not None and any(a.name == "consumed_inputs" for a in node.attribute):
                log.blockers.append(Blocker(rule, f"{op}-{version} carries the legacy in-place hint "
                                            "consumed_inputs; conform removes no attribute (it would "
                                            "be a change of operator version): import opset 6 or later",
                                            index, None, about="consumed_inputs"))
            continue
        out = sh.get(node.output[0]) if node.output else None
        if not record.required <= len(node.input) <= len(record.inputs):
            continue
        # the operands the record says conform may expand, when the node has them
        operands = [(pos, what) for pos, what in record.conform.operands
                    if pos < len(node.input) and node.input[pos]]
        for pos, what in operands:
            name = node.input[pos]
            src = sh.get(name)
            if src is None or (out is not None and src == out):
                continue
            if not _static(out):
                if out is not None and src is not None and len(src) != len(out) or \
                        (out is not None and any(isinstance(s, int) and isinstance(o, int) and s != o
                                                 for s, o in zip(src, out))):
                    log.blockers.append(Blocker(rule, _unpinned_reason(
                        op, what, name, out, name in constants, producers, graph_inputs, set(inits),
                        pinnable), index, name))
                continue
            if not _static(src) or not _broadcasts_to(src, out):
                continue    # not a broadcast to the result: R1 (or onnx) reports it
            if name not in constants:
                log.blockers.append(Blocker(rule, f"{op} input {what} of shape {src} is broadcast to "
                                            f"{out}: " + _computed_reason(name, producers, graph_inputs,
                                                                          set(inits)), index, name))
                continue
            try:
                new = full(name, out)
            except (ValueError, TypeError, RuntimeError) as exc:   # a malformed initializer
                log.blockers.append(Blocker(rule, f"{op} input {what} '{name}' cannot be read as an "
                                            f"array of shape {src} ({' '.join(str(exc).split())[:120]}); "
                                            "conform stores nothing it cannot read exactly",
                                            index, name))
                continue
            node.input[pos] = new
            log.renamed.add(name)
            log.rewrites.append(Rewrite("materialise-broadcast", rule,
                                        f"{op} input {what} '{name}' of shape {src} stored expanded "
                                        f"to {out} as '{new}' (numpy.broadcast_to(...).copy(), "
                                        f"same element type {_elem(inits[new].data_type)})",
                                        index, node.name, op, new))
    # the originals nothing reads any more are removed; a lone copy takes the original's name
    # (one pass over the graph for all of them: a model may have thousands)
    read = {i for n in g.node for i in n.input} | {o.name for o in g.output}
    read |= {i for sub in _subgraphs(g) for n in sub.node for i in n.input}
    copies_of: dict[str, list[str]] = {}
    for (src, _), new in made.items():
        copies_of.setdefault(src, []).append(new)
    unread = {n for n in copies_of if n not in read}
    if not unread:
        return
    back = {copies_of[n][0]: n for n in unread if len(copies_of[n]) == 1}
    keep = [t for t in g.initializer if t.name not in unread]
    del g.initializer[:]
    g.initializer.extend(keep)
    keep_in = [vi for vi in g.input if vi.name not in unread]   # IR < 4: also a graph input
    if len(keep_in) != len(g.input):
        del g.input[:]
        g.input.extend(keep_in)
    for t in g.initializer:
        if t.name in back:
            t.name = back[t.name]
    for n in g.node:
        for k, i in enumerate(n.input):
            if i in back:
                n.input[k] = back[i]
    for r in log.rewrites:
        if r.tensor in back:
            r.detail = r.detail.replace(f" as '{r.tensor}'", " under the same name")
            r.tensor = back[r.tensor]


def _subgraphs(g: onnx.GraphProto):
    stack = [g]
    while stack:
        cur = stack.pop()
        for n in cur.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    stack.append(a.g)
                    yield a.g
                elif a.type == onnx.AttributeProto.GRAPHS:
                    stack.extend(a.graphs)
                    yield from a.graphs


# ---------------------------------------------------------------- declarations
def _type_key(tp: onnx.TypeProto):
    if tp.WhichOneof("value") != "tensor_type":
        return ("other", tp.SerializeToString())
    tt = tp.tensor_type
    dims = None if not tt.HasField("shape") else tuple(
        d.dim_value if d.WhichOneof("value") == "dim_value" else (d.dim_param or None)
        for d in tt.shape.dim)
    return (tt.elem_type, dims)


def tidy_declarations(model: onnx.ModelProto, log: Log) -> None:
    """Drop value_info entries that disagree with what onnx infers now or that name a rewritten
    or vanished tensor (the dynamo exporter declares initializers there too), and give graph
    outputs the static shape onnx infers where they declare none."""
    g = model.graph
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.value_info[:]
    try:
        probe = onnx.shape_inference.infer_shapes(probe, strict_mode=False, data_prop=True)
        inferred = {vi.name: vi.type for vi in list(probe.graph.value_info) + list(probe.graph.output)}
    except Exception:
        inferred = None
    existing = ({t.name for t in g.initializer} | {vi.name for vi in g.input}
                | {o for n in g.node for o in n.output})
    init_types = {t.name: onnx.helper.make_tensor_type_proto(t.data_type, list(t.dims))
                  for t in g.initializer}
    keep = []
    for vi in g.value_info:
        why = None
        if vi.name not in existing:
            why = "it names a tensor the rewritten model no longer has"
        elif vi.name in init_types:
            if _type_key(init_types[vi.name]) != _type_key(vi.type):
                why = ("it declares a tensor conform rewrote, with its old shape"
                       if vi.name in log.renamed else
                       f"it declares {_shown_type(vi.type)}, its initializer holds "
                       f"{_shown_type(init_types[vi.name])}")
        elif inferred is not None and vi.name not in init_types:
            got = inferred.get(vi.name)
            if got is not None and _type_key(got) != _type_key(vi.type):
                why = (f"it declares {_shown_type(vi.type)} where onnx now infers "
                       f"{_shown_type(got)}")
        if why is None:
            keep.append(vi)
        else:
            log.rewrites.append(Rewrite("remove-value-info", "PROF-R2",
                                        f"stale value_info entry for '{vi.name}' removed: {why}",
                                        tensor=vi.name))
    if len(keep) != len(g.value_info):
        del g.value_info[:]
        g.value_info.extend(keep)
    if inferred is None:
        return
    for vi in g.output:
        got = inferred.get(vi.name)
        if got is None or vi.type.WhichOneof("value") != "tensor_type":
            continue
        k_dec, k_inf = _type_key(vi.type), _type_key(got)
        if k_inf[1] is None or not _static(k_inf[1]) or k_dec == k_inf:
            continue
        dec = k_dec[1]
        if dec is not None and (len(dec) != len(k_inf[1]) or any(
                isinstance(d, int) and d != i for d, i in zip(dec, k_inf[1]))):
            continue    # a real disagreement: the validator reports it, conform does not choose
        if k_dec[0] not in (0, k_inf[0]):
            continue
        before = _shown_type(vi.type)
        vi.type.tensor_type.elem_type = k_inf[0]
        shape = vi.type.tensor_type.shape
        shape.ClearField("dim")
        for d in k_inf[1]:
            shape.dim.add().dim_value = d
        log.rewrites.append(Rewrite("declare-output-shape", "PROF-R2",
                                    f"graph output '{vi.name}' declared {before}; now the shape "
                                    f"onnx infers, {_shown_type(vi.type)}", tensor=vi.name))


def _shown_type(tp: onnx.TypeProto) -> str:
    elem, dims = _type_key(tp)
    if elem == "other":
        return "a non-tensor type"
    return f"{_elem(elem) if elem else 'undefined'} {dims if dims is not None else '(no shape)'}"
