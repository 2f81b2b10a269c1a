"""OpenVINO IR (v10/v11 XML) -> the same findings as for an ONNX model.

The XML is parsed by defusedxml with every DTD refused (so no entity, no entity expansion and no
external reference can ever be read); the weights file (.bin) is never opened: shapes and sizes
come from the XML alone. The IR is read as OpenVINO reads it: the tensors' shapes and element
types are those of the Parameters' and Consts' `shape` and `element_type`, carried through every
layer by OpenVINO's own shape rules (sonnx/ops/openvino_shapes.py) with the inputs in the order OpenVINO
takes them (the document order of the <input> ports); every port's dims and precision is a
declaration that must agree with what is computed. Each layer that maps onto a profile operator
is judged by that operator's own constraint function from the registry (sonnx/ops/registry.py)
on the computed TensorSig of each input, with attributes translated as the operator's record
says (``Operator.openvino``: sonnx/ops/openvino_ir.py); the
model-level rules are the profile's own (PROF-R2 is profile.shape_violations). Decisions:
spec/openvino.md.

A malformed IR (not XML, a DTD, not a <net>, an unknown IR version, missing or duplicate
layers, ports or edges, a missing or unknown element type or shape, a port that contradicts
what OpenVINO computes) is ``reader.Unreadable``: exit 2.
"""
from __future__ import annotations

import os
import re
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Callable

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as defused_fromstring

from ..errors import Violation
from ..ops.registry import operators
from ..ops.openvino_ir import IRError, IRLayer
from ..ops.signature import TensorSig
from ..profile import Dim, shape_violations
from ..ops import openvino_shapes as shapes
from .. import text
from . import reader, rules
from .report import Finding, Report

IR_VERSIONS = frozenset({10, 11})
STRUCTURAL = frozenset({"Parameter", "Const", "Result"})  # carry tensors, compute nothing
# A layer's `version` attribute: opset1 .. opset17, the opsets OpenVINO 2026.4 defines
# (tests/validate/test_openvino_runtime.py checks the installed package has no later one).
# opset17 holds only its new operations and Parameter: OpenVINO's reader refuses a Multiply,
# Const or Result of opset17 (measured; tests/validate/test_openvino_oracle.py).
MAX_OV_OPSET = 17
OPSET_VERSIONS = frozenset(f"opset{n}" for n in range(1, MAX_OV_OPSET + 1))
LAST_OPSET = {"Parameter": MAX_OV_OPSET}     # every other layer sonnx reads: opset16


def known_version(layer_type: str, version: str) -> bool:
    last = LAST_OPSET.get(layer_type, MAX_OV_OPSET - 1)
    return version in OPSET_VERSIONS and int(version[len("opset"):]) <= last
# The default-domain opset the IR is judged under (version 14 of the element-wise and unary
# operators, 13 of the matrix product), the
# versions whose type sets hold every numeric type OpenVINO's operations accept (the same
# versions are in force up to opset 28). spec/openvino.md.
IR_OPSET = 14
MAX_XML_BYTES = 1 << 30   # an IR's XML holds no weights; 1 GiB is far above any real network
# IR version 10 is read by OpenVINO with the legacy precisions: it puts a Convert behind an f16
# Parameter and before a Result of any type but f32 and i32 (measured with 2026.4.1), casts the
# XML does not show. A v10 file whose inputs and outputs are all of these types is read as
# written (tests/validate/test_openvino_oracle.py); any other is refused by PROF-R1.
V10_UNCAST = frozenset({"f32", "i32"})

# OpenVINO's element types: the name a Parameter's or Const's `element_type` must spell exactly
# (OpenVINO refuses " f32 " or "FP32" there) -> (the port `precision` spelling OpenVINO's
# serializer writes, the ONNX type name or None when ONNX has none, bits per element).
# `dynamic` and `undefined` are no type a tensor can be judged on: not listed, so malformed.
ELEMENT_TYPES: dict[str, tuple[str, str | None, int | None]] = {
    "boolean": ("BOOL", "bool", 8), "bf16": ("BF16", "bfloat16", 16),
    "f16": ("FP16", "float16", 16), "f32": ("FP32", "float", 32), "f64": ("FP64", "double", 64),
    "i4": ("I4", "int4", 4), "i8": ("I8", "int8", 8), "i16": ("I16", "int16", 16),
    "i32": ("I32", "int32", 32), "i64": ("I64", "int64", 64),
    "u1": ("BIN", None, 1), "u2": ("U2", None, 2), "u3": ("U3", None, 3), "u4": ("U4", "uint4", 4),
    "u6": ("U6", None, 6), "u8": ("U8", "uint8", 8), "u16": ("U16", "uint16", 16),
    "u32": ("U32", "uint32", 32), "u64": ("U64", "uint64", 64), "nf4": ("NF4", None, 4),
    "f8e4m3": ("F8E4M3", "float8e4m3fn", 8), "f8e5m2": ("F8E5M2", "float8e5m2", 8),
    "f4e2m1": ("F4E2M1", None, 4), "f8e8m0": ("F8E8M0", None, 8),
    "string": ("STRING", "string", None),   # no fixed width: its layout is in the weights file
}
PRECISIONS = {ov: onnx for ov, (_, onnx, _) in ELEMENT_TYPES.items() if onnx is not None}
# a port's `precision`: the element type's name or the serializer's spelling (FP32, BOOL, BIN)
_PORT_PRECISIONS = {**{ov: ov for ov in ELEMENT_TYPES},
                    **{port: ov for ov, (port, _, _) in ELEMENT_TYPES.items()}}
_INT = re.compile(r"-?[0-9]{1,20}\Z")   # a bounded literal: never int() of a 10,000-digit string
_DYNAMIC_DIM = re.compile(r"(?:\?|-1|[0-9]{0,20}\.\.[0-9]{0,20})\Z")   # -1, ?, and a..b intervals


class MalformedIR(reader.Unreadable):
    """The XML is not an OpenVINO IR that can be judged."""


def element_type(ov_type: str | None) -> str | None:
    """The ONNX name of an OpenVINO element type (a key of ELEMENT_TYPES); None when none."""
    if ov_type is None:
        return None
    onnx = PRECISIONS.get(ov_type)
    return onnx or f"{text.neutral(ov_type)[:40]} (OpenVINO element type, no ONNX counterpart)"


@dataclass(frozen=True)
class Port:
    id: int
    dims: tuple[Dim, ...]
    precision: str                # an OpenVINO element type name (a key of ELEMENT_TYPES)
    names: str | None = None     # the tensor names OpenVINO keeps on an output port


@dataclass(frozen=True)
class Value:
    """A tensor as OpenVINO computes it: shape and OpenVINO element type."""
    shape: tuple[Dim, ...]
    type: str


@dataclass
class Layer:
    id: int
    name: str
    type: str
    version: str
    data: dict[str, str]
    inputs: list[Port]            # in document order: the order OpenVINO gives the operands
    outputs: list[Port]

    @property
    def where(self) -> str:
        return f"layer {self.id} '{self.name}' ({self.type})"


def _layers() -> dict[str, IRLayer]:
    """The IR layer mapping, read from the registry: each operator's record lists the IR layer
    types that read as it (``Operator.openvino``)."""
    return {row.type: row._replace(op=op.name) for op in operators().values() for row in op.openvino}


LAYERS = _layers()


def _read(fn, layer: Layer, ins: list, shown: str):
    """A row's shape rule or operand translation; an attribute it cannot read is malformed."""
    try:
        return fn(layer, ins, shown)
    except IRError as e:
        raise MalformedIR(str(e)) from None


def _int(value: str | None, what: str) -> int:
    if value is None or not _INT.match(value.strip()):
        raise MalformedIR(f"{what} is {'missing' if value is None else repr(text.neutral(value[:40]))}, "
                          "not an integer")
    return int(value)


def _dim(raw: str | None, what: str) -> Dim:
    """A dimension of a Parameter's `shape`: an integer, or dynamic (-1, ?, an interval a..b)."""
    s = (raw or "").strip()
    if _INT.match(s) and int(s) >= 0:
        return int(s)
    if _DYNAMIC_DIM.match(s):
        # dynamic: PROF-R2 reports it where it is defined
        return shapes.DYNAMIC if s in ("-1", "?") else s
    raise MalformedIR(f"{what} has the dimension {text.neutral(s[:40])!r}; an IR dimension is a "
                      "non-negative integer, -1, ? or an interval a..b")


def _port_dim(raw: str | None, what: str) -> Dim:
    """A port's <dim>: an integer, -1 when dynamic (OpenVINO refuses ? and intervals there)."""
    s = (raw or "").strip()
    if _INT.match(s) and int(s) >= -1:
        return shapes.DYNAMIC if int(s) == -1 else int(s)
    raise MalformedIR(f"{what} has the dimension {text.neutral(s[:40])!r}; a port dimension is a "
                      "non-negative integer or -1")


def _element_type(raw: str | None, what: str) -> str:
    if raw is None or raw not in ELEMENT_TYPES:
        said = "no element_type" if raw is None else f"element_type={text.neutral(raw)[:40]!r}"
        raise MalformedIR(f"{what} has {said}; OpenVINO's element types are "
                          f"{', '.join(ELEMENT_TYPES)} (spelled exactly so; dynamic and undefined "
                          "leave the type open, which cannot be judged)")
    return raw


def _ports(layer: ET.Element, kind: str, where: str) -> list[Port]:
    section = layer.findall(kind)
    if len(section) > 1:
        raise MalformedIR(f"{where} has {len(section)} <{kind}> sections")
    out, seen = [], set()
    for p in (section[0].findall("port") if section else []):
        pid = _int(p.get("id"), f"{where}: a port id")
        if pid in seen:
            raise MalformedIR(f"{where} has two ports with id {pid}")
        seen.add(pid)
        dims = tuple(_port_dim(d.text, f"{where}: port {pid}") for d in p.findall("dim"))
        raw = p.get("precision")
        if raw not in _PORT_PRECISIONS:
            said = "no precision" if raw is None else f"precision={text.neutral(raw)[:40]!r}"
            raise MalformedIR(f"{where}: port {pid} has {said}; a port's precision is an "
                              "OpenVINO element type (f32 or FP32, boolean or BOOL, ...)")
        out.append(Port(pid, dims, _PORT_PRECISIONS[raw], p.get("names")))
    return out


def parse(data: bytes, shown: str) -> tuple[int, list[Layer], list[tuple[int, int, int, int]]]:
    """(IR version, layers, edges (from-layer, from-port, to-layer, to-port)); MalformedIR."""
    try:
        root = defused_fromstring(data, forbid_dtd=True, forbid_entities=True,
                                  forbid_external=True)
    except DefusedXmlException as exc:
        raise MalformedIR(f"{shown}: refused XML ({type(exc).__name__}: a DTD, an entity or an "
                          "external reference); an OpenVINO IR has none") from None
    except ET.ParseError as exc:
        raise MalformedIR(f"{shown}: not well-formed XML ({exc})") from None
    if root.tag != "net":
        raise MalformedIR(f"{shown}: the XML root is <{text.neutral(str(root.tag))[:40]}>, not "
                          "<net>: not an OpenVINO IR")
    version = root.get("version")
    if version is None or not _INT.match(version.strip()) or int(version) not in IR_VERSIONS:
        raise MalformedIR(f"{shown}: IR version {text.neutral(str(version))[:20]!r}; sonnx reads "
                          "IR versions 10 and 11 (re-save the model with openvino.save_model)")
    sections = {tag: root.findall(tag) for tag in ("layers", "edges")}
    for tag, found in sections.items():
        if len(found) != 1:
            raise MalformedIR(f"{shown}: the <net> has {len(found)} <{tag}> sections, not one")
    layers, ids = [], set()
    for el in sections["layers"][0].findall("layer"):
        lid = _int(el.get("id"), f"{shown}: a layer id")
        if lid in ids:
            raise MalformedIR(f"{shown}: two layers have the id {lid}")
        ids.add(lid)
        name, kind = el.get("name"), el.get("type")
        for key, value in (("type", kind), ("name", name), ("version", el.get("version"))):
            if value is None:      # each is mandatory to OpenVINO's reader
                raise MalformedIR(f"{shown}: layer {lid} has no {key}")
        where = f"{shown}: layer {lid} '{text.neutral(name)}' ({text.neutral(kind)})"
        data_els = el.findall("data")
        if len(data_els) > 1:   # OpenVINO reads the first and ignores the others
            raise MalformedIR(f"{where} has {len(data_els)} <data> sections")
        data = dict(data_els[0].attrib) if data_els else {}
        layers.append(Layer(lid, name, kind, el.get("version"), data,
                            _ports(el, "input", where), _ports(el, "output", where)))
    edges = []
    for e in sections["edges"][0].findall("edge"):
        edges.append(tuple(_int(e.get(k), f"{shown}: the {k} of an edge")
                           for k in ("from-layer", "from-port", "to-layer", "to-port")))
    return int(version), layers, edges


def connect(layers: list[Layer], edges, shown: str) -> tuple[dict[tuple[int, int], tuple[int, int]], list[Layer]]:
    """((to-layer, to-port) -> (from-layer, from-port), the layers in an order where each comes
    after those feeding it). Every input port has exactly one edge, from an existing output
    port; the graph has no cycle."""
    by_id = {layer.id: layer for layer in layers}
    feeds: dict[tuple[int, int], tuple[int, int]] = {}
    succs: dict[int, list[int]] = {layer.id: [] for layer in layers}
    for fl, fp, tl, tp in edges:
        src, dst = by_id.get(fl), by_id.get(tl)
        out = next((p for p in src.outputs if p.id == fp), None) if src else None
        inp = next((p for p in dst.inputs if p.id == tp), None) if dst else None
        if out is None or inp is None:
            end = f"output port {fp} of layer {fl}" if out is None else f"input port {tp} of layer {tl}"
            raise MalformedIR(f"{shown}: the edge {fl}:{fp} -> {tl}:{tp} names {end}, which does "
                              "not exist")
        if (tl, tp) in feeds:
            raise MalformedIR(f"{shown}: input port {tp} of layer {tl} has two incoming edges")
        feeds[(tl, tp)] = (fl, fp)
        succs[fl].append(tl)
    for layer in layers:
        for p in layer.inputs:
            if (layer.id, p.id) not in feeds:
                raise MalformedIR(f"{shown}: input port {p.id} of layer {layer.id} "
                                  f"'{text.neutral(layer.name)}' has no incoming edge")
    return feeds, _ordered(layers, succs, shown)


def _ordered(layers: list[Layer], succs: dict[int, list[int]], shown: str) -> list[Layer]:
    """Kahn's algorithm, ties in file order (iterative: a deep IR cannot exhaust the stack)."""
    waiting = {layer.id: 0 for layer in layers}
    for targets in succs.values():
        for t in targets:
            waiting[t] += 1
    by_id = {layer.id: layer for layer in layers}
    ready = [layer.id for layer in reversed(layers) if waiting[layer.id] == 0]
    order = []
    while ready:
        lid = ready.pop()
        order.append(by_id[lid])
        for t in reversed(succs[lid]):
            waiting[t] -= 1
            if waiting[t] == 0:
                ready.append(t)
    if len(order) != len(layers):
        stuck = next(layer.id for layer in layers if waiting[layer.id] > 0)
        raise MalformedIR(f"{shown}: the edges form a cycle through layer {stuck}")
    return order


def _shape(dims) -> str:
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def _same_dims(declared: tuple[Dim, ...], computed: tuple[Dim, ...]) -> bool:
    """A port's dims agree with the computed shape: equal static dimensions, and dynamic where
    the computed one is dynamic (-1 on a port stands for any dynamic dimension)."""
    return len(declared) == len(computed) and all(
        (isinstance(d, int) and d == c) if isinstance(c, int) else not isinstance(d, int)
        for d, c in zip(declared, computed))


def _declared(port: Port) -> Value:
    return Value(port.dims, port.precision)


def _agrees(port: Port, value: Value, what: str, computed: str, shown: str) -> None:
    """Every port is a declaration of the tensor OpenVINO computes there; OpenVINO itself ignores
    it, so a contradiction leaves the file saying two things: malformed (spec/openvino.md)."""
    if not _same_dims(port.dims, value.shape):
        raise MalformedIR(f"{shown}: {what} declares the dims {_shape(port.dims)} but {computed} "
                          f"{_shape(value.shape)}")
    if port.precision != value.type:
        raise MalformedIR(f"{shown}: {what} declares the element type {port.precision} but "
                          f"{computed} {value.type}")


def _source(layer: Layer, shown: str) -> Value:
    """The tensor a Parameter or Const defines: its `shape` and `element_type`, which OpenVINO
    uses (and not its port); both must be given."""
    where = f"{shown}: {layer.where}"
    etype = _element_type(layer.data.get("element_type"), where)
    written = layer.data.get("shape")
    if written is None:
        raise MalformedIR(f"{where} has no shape" + (" (OpenVINO would read it as a scalar, "
                                                     "whatever its port says)"
                                                     if layer.type == "Parameter" else ""))
    written = written.strip()
    dims = tuple(_dim(d, f"{where}: its shape") for d in written.split(",")) if written else ()
    for key in ("offset", "size"):
        # OpenVINO reads both as unsigned 64-bit integers where a Parameter has them too
        if key in layer.data and _int(layer.data[key], f"{where}: its {key}") < 0:
            raise MalformedIR(f"{where} has {key}={layer.data[key].strip()}; a byte count is not negative")
    if layer.type == "Const":
        if not all(isinstance(d, int) for d in dims):
            raise MalformedIR(f"{where} has the shape {_shape(dims)}; a Const's shape is static")
        bits = ELEMENT_TYPES[etype][2]
        if bits is None:
            raise MalformedIR(f"{where} holds {etype} values, whose layout is in the weights file "
                              "(never read by sonnx); no profile operator takes them")
        size = _int(layer.data.get("size"), f"{where}: its size")
        _int(layer.data.get("offset"), f"{where}: its offset")
        count = 1
        for d in dims:
            count *= d
        if size != (count * bits + 7) // 8:
            raise MalformedIR(f"{where} holds {count} element(s) of {etype} but says size={size} bytes")
    return Value(dims, etype)


def _structure(layer: Layer, shown: str) -> None:
    """Port counts of the layers whose meaning sonnx relies on."""
    mapped = LAYERS.get(layer.type)
    n_in = mapped.inputs if mapped else {"Parameter": 0, "Const": 0, "Result": 1}.get(layer.type)
    n_out = 0 if layer.type == "Result" else 1
    if n_in is not None and (len(layer.inputs) != n_in or len(layer.outputs) != n_out):
        raise MalformedIR(f"{shown}: {layer.where} has {len(layer.inputs)} input and "
                          f"{len(layer.outputs)} output port(s); it needs {n_in} and {n_out}")


def _finding(rule: str, message: str, layer: Layer, tensor: str | None = None) -> Finding:
    op = LAYERS.get(layer.type)
    return Finding(rule, f"{layer.where}: {message}", graph="main", node_index=layer.id,
                   node_name=layer.name or None, op_type=layer.type,
                   domain=layer.version or None, op_version=op.version if op else None, tensor=tensor)


def _admission(layer: Layer, registry) -> list[Finding]:
    """PROF-R1: the layer type is Parameter, Const, Result or mapped onto a registered operator,
    with a known version."""
    mapped = LAYERS.get(layer.type)
    known = known_version(layer.type, layer.version)
    last = LAST_OPSET.get(layer.type, MAX_OV_OPSET - 1)
    if layer.type in STRUCTURAL:
        return [] if known else [_finding(
            "PROF-R1", f"layer version {text.neutral(layer.version)!r} is not opset1 to "
            f"opset{last}, the opsets in which OpenVINO defines {layer.type}", layer)]
    if mapped and mapped.op in registry and known:
        return []
    listed = ", ".join(sorted(t for t, m in LAYERS.items() if m.op in registry))
    if mapped and mapped.op in registry:
        why = (f"has the version {text.neutral(layer.version)!r}, not opset1 to opset{last}, the "
               f"opsets in which OpenVINO defines {layer.type}")
    elif mapped:
        why = f"maps onto ONNX {mapped.op}, which is not a profile operator (yet)"
    elif layer.type == "Convert":   # a cast; usually the decompression of f16 weights
        why = ("is not in the SONNX profile (an explicit cast; openvino.save_model stores "
               "weights as f16 behind Convert layers unless given compress_to_fp16=False)")
    else:
        why = "is not in the SONNX profile"
    return [_finding("PROF-R1", f"layer type {text.neutral(layer.type)} {why}; the profile admits "
                     f"Parameter, Const, Result and {listed} (opset1 to opset{last})", layer)]


def infer(layers: list[Layer], feeds, order: list[Layer], shown: str,
          on_layer: Callable[[Layer, list[Value], Value | None], None] | None = None
          ) -> dict[tuple[int, int], Value]:
    """The tensor at every output port, (layer id, port id) -> Value, as OpenVINO computes it;
    every port's declaration is checked against it (MalformedIR). ``on_layer`` sees each mapped
    layer with its operands and its computed output (None: OpenVINO would refuse the layer)."""
    values: dict[tuple[int, int], Value] = {}
    for layer in order:
        _structure(layer, shown)
        operands = []
        for p in layer.inputs:
            fl, fp = feeds[(layer.id, p.id)]
            value = values[(fl, fp)]
            _agrees(p, value, f"{layer.where}: input port {p.id}",
                    f"the edge {fl}:{fp} -> {layer.id}:{p.id} brings", shown)
            operands.append(value)
        mapped = LAYERS.get(layer.type)
        computed: Value | None = None
        if layer.type in ("Parameter", "Const"):
            computed = _source(layer, shown)
            _agrees(layer.outputs[0], computed, f"{layer.where}: output port {layer.outputs[0].id}",
                    "its shape and element_type say", shown)
        elif mapped is not None:
            shape = _read(mapped.shape, layer, [v.shape for v in operands], shown)
            types = {v.type for v in operands}
            if shape is not None and len(types) == 1:
                computed = Value(shape, types.pop())
                _agrees(layer.outputs[0], computed, f"{layer.where}: output port "
                        f"{layer.outputs[0].id}", "OpenVINO computes", shown)
            if on_layer is not None:
                on_layer(layer, operands, computed)
        for p in layer.outputs:
            # what OpenVINO cannot compute (a layer outside the profile, or one it refuses,
            # which is reported) goes on as its port declares
            values[(layer.id, p.id)] = computed if computed is not None else _declared(p)
    return values


def _legacy_cast(layer: Layer, value: Value) -> list[Finding]:
    """PROF-R1 on a Parameter or Result of an IR v10 that OpenVINO reads with a cast (above)."""
    if value.type in V10_UNCAST:
        return []
    return [_finding("PROF-R1", f"IR version 10 with a {layer.type} of element type {value.type}: "
                     "OpenVINO reads it with its legacy precisions and inserts a Convert (a cast) "
                     "there; re-save the model as IR version 11 with openvino.save_model", layer)]


def check(layers: list[Layer], feeds, order: list[Layer], shown: str, ir_version: int = 11
          ) -> list[Finding]:
    """Every finding of the profile on a connected IR, layer by layer in file order."""
    registry = operators()
    memo = rules.OperatorRules()
    judged: dict[int, list[Finding]] = {}

    def judge(layer: Layer, operands: list[Value], computed: Value | None) -> None:
        mapped = LAYERS[layer.type]
        if mapped.op not in registry:
            return
        sigs = [TensorSig(v.shape, element_type(v.type)) for v in operands]
        args, attrs, note = _read(mapped.rule_inputs, layer, sigs, shown)
        vs: list[Violation] = memo.check(mapped.op, tuple(args), attrs, IR_OPSET)
        if computed is None and not vs:   # a safety net: what OpenVINO refuses never conforms
            raise MalformedIR(f"{shown}: {layer.where}: OpenVINO cannot compute it from "
                              + ", ".join(f"{_shape(v.shape)} {v.type}" for v in operands))
        judged[layer.id] = [_finding(v.requirement, note + v.message, layer) for v in vs]

    values = infer(layers, feeds, order, shown, judge)
    found: list[Finding] = []
    for layer in layers:
        found.extend(_admission(layer, registry))
        if ir_version == 10 and layer.type == "Parameter":
            found.extend(_legacy_cast(layer, values[(layer.id, layer.outputs[0].id)]))
        elif ir_version == 10 and layer.type == "Result":
            found.extend(_legacy_cast(layer, values[feeds[(layer.id, layer.inputs[0].id)]]))
        for p in layer.outputs:
            name = p.names or f"{layer.name}:{p.id}"
            for v in shape_violations(values[(layer.id, p.id)].shape, f"output port {p.id}"):
                found.append(_finding(v.requirement, v.message, layer, tensor=name))
        found.extend(judged.get(layer.id, []))
    return found


def validate_ir(path: str | os.PathLike) -> Report:
    """The report on one IR file (the .bin beside it is never opened)."""
    shown = text.shown_path(path)
    report = Report(source=shown, path=os.fsdecode(path))
    t = time.perf_counter()
    try:
        data = reader.read_bytes(path, kind="an OpenVINO IR", limit=MAX_XML_BYTES)
        report.timings["load"] = time.perf_counter() - t
        t = time.perf_counter()
        version, layers, edges = parse(data, shown)
        feeds, order = connect(layers, edges, shown)
        report.findings = check(layers, feeds, order, shown, version)
    except reader.Unreadable as exc:
        report.error = str(exc)
        report.findings = []
        return report
    except RecursionError:
        report.error = f"{shown}: XML nested too deeply to read"
        return report
    except Exception as exc:  # a defect of ours must not hide behind a traceback or a verdict
        report.error = f"{shown}: could not validate ({type(exc).__name__}: {exc})"
        return report
    report.nodes = len(layers)
    report.timings["rules"] = time.perf_counter() - t
    return report
