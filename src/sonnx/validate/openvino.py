"""OpenVINO IR (v10/v11 XML) -> the same findings as for an ONNX model.

The XML is parsed by defusedxml with every DTD refused (so no entity, no entity expansion and no
external reference can ever be read); the weights file (.bin) is never opened: shapes and sizes
come from the XML alone. Each layer that maps onto a profile operator is judged by that
operator's own constraint function from the registry (sonnx/ops/registry.py), on the
TensorSig of each input port, with attributes translated by the table below; the model-level
rules are the profile's own (profile.operator_violations is not reused because the IR names
layers, not ONNX operators; PROF-R2 is profile.shape_violations). Decisions: spec/openvino.md.

A malformed IR (not XML, a DTD, not a <net>, an unknown IR version, missing or duplicate
layers, ports or edges, an edge whose two ports disagree) is ``reader.Unreadable``: exit 2.
"""
from __future__ import annotations

import os
import re
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as defused_fromstring

from ..errors import Violation
from ..ops.elementwise import broadcast_shape
from ..ops.registry import operators
from ..ops.signature import TensorSig
from ..profile import Dim, shape_violations
from . import reader, rules, text
from .report import Finding, Report

IR_VERSIONS = frozenset({10, 11})
# The IR's layer type -> the profile operator it is judged as (its ONNX name in the registry),
# with the OpenVINO operation version it has in every opset (none of them has a second one).
LAYERS = {
    "Multiply": ("Mul", 1),
    "Add": ("Add", 1),
    "Subtract": ("Sub", 1),
    "MatMul": ("MatMul", 1),
    "ReLU": ("Relu", 1),
}
STRUCTURAL = frozenset({"Parameter", "Const", "Result"})  # carry tensors, compute nothing
ELEMENTWISE = frozenset({"Multiply", "Add", "Subtract"})
# A layer's `version` attribute: opset1 .. opset17, the opsets OpenVINO 2026.4 defines
# (tests/validate/test_openvino_runtime.py checks the installed package has no later one).
MAX_OV_OPSET = 17
OPSET_VERSIONS = frozenset(f"opset{n}" for n in range(1, MAX_OV_OPSET + 1))
# The default-domain opset the IR is judged under: Mul/Add/Sub-14, MatMul-13, Relu-14, the
# versions whose type sets hold every numeric type OpenVINO's operations accept (the same
# versions are in force up to opset 28). spec/openvino.md.
IR_OPSET = 14
MAX_XML_BYTES = 1 << 30   # an IR's XML holds no weights; 1 GiB is far above any real network

# OpenVINO element type (Parameter/Const `element_type`, port `precision`) -> ONNX type name.
# Types with no ONNX counterpart keep an explicit name that no type set holds, so that the
# operator's own R3 refuses them with that name.
PRECISIONS = {
    "f16": "float16", "bf16": "bfloat16", "f32": "float", "f64": "double",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "boolean": "bool", "i4": "int4", "u4": "uint4", "string": "string",
    "f8e4m3": "float8e4m3fn", "f8e5m2": "float8e5m2",
}
# the upper-case spelling of port `precision` attributes (FP32, I64, BOOL, ...)
_PORT_SPELLING = {"fp16": "f16", "fp32": "f32", "fp64": "f64", "bool": "boolean"}
_ITEM_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i8": 8, "i16": 16, "i32": 32,
              "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64, "boolean": 8, "i4": 4,
              "u4": 4, "f8e4m3": 8, "f8e5m2": 8, "u1": 1}
_INT = re.compile(r"-?[0-9]{1,20}\Z")   # a bounded literal: never int() of a 10,000-digit string
_DYNAMIC_DIM = re.compile(r"(?:\?|-1|[0-9]{0,20}\.\.[0-9]{0,20})\Z")   # -1, ?, and a..b intervals


class MalformedIR(reader.Unreadable):
    """The XML is not an OpenVINO IR that can be judged."""


def element_type(precision: str | None) -> str | None:
    """The ONNX name of an OpenVINO element type; None when none is given."""
    if precision is None:
        return None
    key = precision.strip().lower()
    key = _PORT_SPELLING.get(key, key)
    if key in PRECISIONS:
        return PRECISIONS[key]
    return f"{text.neutral(key)[:40]} (OpenVINO element type, no ONNX counterpart)"


@dataclass(frozen=True)
class Port:
    id: int
    dims: tuple[Dim, ...]
    precision: str | None
    names: str | None = None     # the tensor names OpenVINO keeps on an output port


@dataclass
class Layer:
    id: int
    name: str
    type: str
    version: str
    data: dict[str, str]
    inputs: list[Port]
    outputs: list[Port]

    @property
    def where(self) -> str:
        return f"layer {self.id} '{self.name}' ({self.type})"


def _int(value: str | None, what: str) -> int:
    if value is None or not _INT.match(value.strip()):
        raise MalformedIR(f"{what} is {'missing' if value is None else repr(value[:40])}, "
                          "not an integer")
    return int(value)


def _dim(raw: str | None, what: str) -> Dim:
    s = (raw or "").strip()
    if _INT.match(s) and int(s) >= 0:
        return int(s)
    if _DYNAMIC_DIM.match(s):
        # dynamic (-1 in ports, ? in a Parameter's shape: the same): PROF-R2 reports it
        return "?" if s in ("-1", "?") else s
    raise MalformedIR(f"{what} has the dimension {text.neutral(s[:40])!r}; an IR dimension is a "
                      "non-negative integer, -1, ? or an interval a..b")


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
        dims = tuple(_dim(d.text, f"{where}: port {pid}") for d in p.findall("dim"))
        out.append(Port(pid, dims, p.get("precision"), p.get("names")))
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
        name, kind = el.get("name") or "", el.get("type")
        if kind is None:
            raise MalformedIR(f"{shown}: layer {lid} has no type")
        where = f"{shown}: layer {lid} '{text.neutral(name)}' ({text.neutral(kind)})"
        data_els = el.findall("data")
        data = dict(data_els[0].attrib) if data_els else {}
        layers.append(Layer(lid, name, kind, el.get("version") or "", data,
                            _ports(el, "input", where), _ports(el, "output", where)))
    edges = []
    for e in sections["edges"][0].findall("edge"):
        edges.append(tuple(_int(e.get(k), f"{shown}: the {k} of an edge")
                           for k in ("from-layer", "from-port", "to-layer", "to-port")))
    return int(version), layers, edges


def _connect(layers: list[Layer], edges, shown: str) -> dict[tuple[int, int], Port]:
    """(to-layer, to-port) -> the output port feeding it. Every input port has exactly one edge,
    from an existing output port with the same dims; the graph has no cycle."""
    by_id = {layer.id: layer for layer in layers}
    feeds: dict[tuple[int, int], Port] = {}
    preds: dict[int, set[int]] = {layer.id: set() for layer in layers}
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
        if inp.dims != out.dims:
            raise MalformedIR(f"{shown}: the edge {fl}:{fp} -> {tl}:{tp} joins ports with different "
                              f"dims ({_shape(out.dims)} and {_shape(inp.dims)})")
        feeds[(tl, tp)] = out
        preds[tl].add(fl)
    for layer in layers:
        for p in layer.inputs:
            if (layer.id, p.id) not in feeds:
                raise MalformedIR(f"{shown}: input port {p.id} of layer {layer.id} "
                                  f"'{text.neutral(layer.name)}' has no incoming edge")
    _acyclic(preds, shown)
    return feeds


def _acyclic(preds: dict[int, set[int]], shown: str) -> None:
    done: set[int] = set()
    for start in preds:      # iterative depth-first search: a deep IR cannot exhaust the stack
        stack, on_path = [(start, iter(preds[start]))], {start}
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                on_path.discard(node)
                done.add(node)
            elif nxt in on_path:
                raise MalformedIR(f"{shown}: the edges form a cycle through layer {nxt}")
            elif nxt not in done:
                on_path.add(nxt)
                stack.append((nxt, iter(preds[nxt])))


def _shape(dims) -> str:
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def _flag(layer: Layer, key: str, shown: str) -> bool:
    raw = layer.data.get(key, "false").strip().lower()
    if raw not in ("true", "false", "1", "0"):
        raise MalformedIR(f"{shown}: {layer.where} has {key}={text.neutral(raw)[:20]!r}, not a boolean")
    return raw in ("true", "1")


def _structure(layer: Layer, shown: str) -> None:
    """Port counts and declarations of the layers whose meaning sonnx relies on."""
    n_in = {"Parameter": 0, "Const": 0, "Result": 1, "ReLU": 1}.get(layer.type, 2)
    n_out = 0 if layer.type == "Result" else 1
    if layer.type in STRUCTURAL or layer.type in LAYERS:
        if len(layer.inputs) != n_in or len(layer.outputs) != n_out:
            raise MalformedIR(f"{shown}: {layer.where} has {len(layer.inputs)} input and "
                              f"{len(layer.outputs)} output port(s); it needs {n_in} and {n_out}")
    if layer.type in ELEMENTWISE:
        _broadcast_mode(layer, shown)
    if layer.type == "MatMul":
        _flag(layer, "transpose_a", shown)
        _flag(layer, "transpose_b", shown)
    if layer.type in ("Parameter", "Const"):
        port = layer.outputs[0]
        if "element_type" not in layer.data:
            raise MalformedIR(f"{shown}: {layer.where} has no element_type")
        if "shape" in layer.data:
            written = layer.data["shape"].strip()
            dims = tuple(_dim(d, f"{shown}: the shape of {layer.where}") for d in written.split(",")) \
                if written else ()
            if dims != port.dims:
                raise MalformedIR(f"{shown}: {layer.where} declares the shape {_shape(dims)} but "
                                  f"its output port has {_shape(port.dims)}")
    if layer.type == "Const":
        size = _int(layer.data.get("size"), f"{shown}: the size of {layer.where}")
        _int(layer.data.get("offset"), f"{shown}: the offset of {layer.where}")
        bits = _ITEM_BITS.get(layer.data["element_type"].strip().lower())
        port = layer.outputs[0]
        if bits is not None and all(isinstance(d, int) for d in port.dims):
            count = 1
            for d in port.dims:
                count *= d
            if size != (count * bits + 7) // 8:
                raise MalformedIR(f"{shown}: {layer.where} holds {count} element(s) of "
                                  f"{layer.data['element_type']} but says size={size} bytes")


def _elem(layer: Layer, port: Port) -> str | None:
    if port.precision is not None:
        return element_type(port.precision)
    return element_type(layer.data.get("element_type"))


def _result_shape(layer: Layer, sigs: list[TensorSig], mode: str) -> tuple | None:
    """The output shape an element-wise layer or Relu computes from static inputs, if known."""
    shapes = [s.shape for s in sigs]
    if not all(sh is not None and all(isinstance(d, int) for d in sh) for sh in shapes):
        return None
    if layer.type == "ReLU":
        return shapes[0]
    if shapes[0] == shapes[1]:
        return shapes[0]
    return broadcast_shape(shapes[0], shapes[1]) if mode == "numpy" else None


def _broadcast_mode(layer: Layer, shown: str) -> str:
    mode = layer.data.get("auto_broadcast", "numpy").strip().lower()   # numpy: the default
    if mode not in ("none", "numpy", "pdpd"):
        raise MalformedIR(f"{shown}: {layer.where} has auto_broadcast="
                          f"{text.neutral(mode)[:20]!r}; OpenVINO defines none, numpy and pdpd")
    return mode


def _rule_inputs(layer: Layer, sigs: list[TensorSig], shown: str) -> tuple[list, dict, str]:
    """(signatures, attributes, note) handed to the operator's constraint function. The
    meaning of auto_broadcast under R4 is decided in spec/openvino.md: none and numpy are
    judged on the shapes, pdpd is Mul-6's broadcast=1."""
    if layer.type in ELEMENTWISE:
        if _broadcast_mode(layer, shown) != "pdpd":
            return sigs, {}, ""
        return sigs, {"broadcast": 1}, ("auto_broadcast='pdpd' (axis-aligned broadcasting, "
                                        "ONNX Mul-6's broadcast=1) is read as broadcast=1: ")
    if layer.type == "MatMul":
        out = list(sigs)
        for i, key in enumerate(("transpose_a", "transpose_b")):
            sh = out[i].shape
            if _flag(layer, key, shown) and sh is not None and len(sh) >= 2:
                # judged as the product computes it: on the transposed operand
                out[i] = TensorSig(sh[:-2] + (sh[-1], sh[-2]), out[i].elem_type)
        return out, {}, ""
    return sigs, {}, ""


def _finding(rule: str, message: str, layer: Layer, tensor: str | None = None) -> Finding:
    op = LAYERS.get(layer.type)
    return Finding(rule, f"{layer.where}: {message}", graph="main", node_index=layer.id,
                   node_name=layer.name or None, op_type=layer.type,
                   domain=layer.version or None, op_version=op[1] if op else None, tensor=tensor)


def check(layers: list[Layer], feeds: dict[tuple[int, int], Port], shown: str) -> list[Finding]:
    """Every finding of the profile on a connected IR, layer by layer in file order."""
    found: list[Finding] = []
    registry = operators()
    memo = rules.OperatorRules()
    by_port = {}      # id(output Port) -> its layer, to name the element type's source
    for layer in layers:
        for p in layer.outputs:
            by_port[id(p)] = layer
    for layer in layers:
        _structure(layer, shown)
        mapped = LAYERS.get(layer.type)
        known_version = layer.version in OPSET_VERSIONS
        if layer.type not in STRUCTURAL and (mapped is None or mapped[0] not in registry
                                             or not known_version):
            listed = ", ".join(sorted(t for t, (op, _) in LAYERS.items() if op in registry))
            if mapped and mapped[0] in registry:
                why = f"has the version {text.neutral(layer.version)!r}, not opset1 to opset{MAX_OV_OPSET}"
            elif mapped:
                why = f"maps onto ONNX {mapped[0]}, which is not a profile operator (yet)"
            elif layer.type == "Convert":   # a cast; usually the decompression of f16 weights
                why = ("is not in the SONNX profile (an explicit cast; openvino.save_model stores "
                       "weights as f16 behind Convert layers unless given compress_to_fp16=False)")
            else:
                why = "is not in the SONNX profile"
            found.append(_finding("PROF-R1", f"layer type {layer.type} {why}; the profile admits "
                                  f"Parameter, Const, Result and {listed} (opset1 to opset{MAX_OV_OPSET})",
                                  layer))
        elif layer.type in STRUCTURAL and not known_version:
            found.append(_finding("PROF-R1", f"layer version {text.neutral(layer.version)!r} is not "
                                  f"opset1 to opset{MAX_OV_OPSET}", layer))
        for p in layer.outputs:
            name = p.names or f"{layer.name}:{p.id}"
            for v in shape_violations(p.dims, f"output port {p.id}"):
                found.append(_finding(v.requirement, v.message, layer, tensor=name))
        if mapped is None or mapped[0] not in registry:
            continue
        sigs = []
        for p in sorted(layer.inputs, key=lambda q: q.id):
            src = feeds[(layer.id, p.id)]
            sigs.append(TensorSig(p.dims, _elem(by_port[id(src)], src)))
        mode = _broadcast_mode(layer, shown) if layer.type in ELEMENTWISE else ""
        args, attrs, note = _rule_inputs(layer, sigs, shown)
        vs: list[Violation] = memo.check(mapped[0], tuple(args), attrs, IR_OPSET)
        for v in vs:
            found.append(_finding(v.requirement, note + v.message, layer))
        want = _result_shape(layer, sigs, mode) if layer.type != "MatMul" else None
        got = layer.outputs[0].dims
        if want is not None and all(isinstance(d, int) for d in got) and tuple(got) != want:
            raise MalformedIR(f"{shown}: {layer.where} computes the shape {_shape(want)} but its "
                              f"output port says {_shape(got)}")
        types = {sig.elem_type for sig in sigs}
        out_type = _elem(layer, layer.outputs[0])
        if len(types) == 1 and None not in types and out_type not in (None, *types):
            raise MalformedIR(f"{shown}: {layer.where} computes {types.pop()} but its output port "
                              f"says {out_type}")
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
        _version, layers, edges = parse(data, shown)
        feeds = _connect(layers, edges, shown)
        report.findings = check(layers, feeds, shown)
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
