"""A generator of hostile OpenVINO IR, deterministic from a seed: well-formed IR (the examples,
and small networks of every profile layer) with one to three edits a hostile or careless writer
makes: ports that lie about dims or rank (alone, or together with every port the edge feeds, so
the file agrees with itself and only the computation disagrees), element types and precisions
that disagree, missing and odd attributes, spaces in types, odd dimensions, input ports out of
id order, duplicate ids, dangling and duplicated edges, missing shapes, renamed layers, other
IR versions.

test_openvino_hostile.py judges each file with sonnx and with OpenVINO's reader as the oracle.
"""
from __future__ import annotations

import math
import pathlib
import random
import xml.etree.ElementTree as ET

from .openvino_ir import binary, layer, net, parameter, port_precision, unary

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples" / "openvino").glob("*.xml"))

ETYPES = ("f32", "f16", "f64", "bf16", "i8", "i32", "i64", "u8", "u16", "boolean", "u1", "nf4",
          "string", "dynamic", "undefined", "f8e4m3", "i4")
ODD_ETYPES = (" f32 ", "f32 ", " f32", "F32", "FP32", "float", "", "f 32")
PRECISIONS = ("FP32", "f32", "fp32", "Fp32", "I32", "i32", "U8", "FP16", "f16", "BOOL", "boolean",
              "bool", "BIN", "FP64", "UNSPECIFIED", "dynamic", " FP32", "")
SHAPES = ("2,3", "3,2", "2, 3", " 2,3 ", "02,3", "+2,3", "-1,3", "?,3", "1..3,3", "", "2,3,",
          "0,3", "2", "3", "1,3", "2,1", "1", "4,2,3", "2,3,1", "99999999999,3", "x")
DIMS = ("-1", "0", "?", "+2", " 2 ", "02", "1", "2", "3", "4", "99999999999", "1..3", "-2", "")
MODES = ("numpy", "none", "pdpd", "NUMPY", "None", " numpy", "explicit", "", "Numpy")
FLAGS = ("true", "false", "1", "0", "True", "TRUE", " true", "yes", "", "2")
VERSIONS = ("opset1", "opset8", "opset13", "opset17", "opset18", "opset99", "", "extension")
TYPES = ("Add", "Multiply", "Subtract", "MatMul", "ReLU", "Relu", "Divide", "Convert")


def _const(lid: int, dims, etype: str = "f32", name: str | None = None, offset: int = 0) -> str:
    bits = {"f32": 32, "i32": 32, "u8": 8, "f16": 16}[etype]
    size = (math.prod(dims) * bits + 7) // 8
    return layer(lid, "Const", name=name or f"c{lid}", outputs=[dims], precision=port_precision(etype),
                 data={"element_type": etype, "shape": ",".join(map(str, dims)), "offset": offset,
                       "size": size})


def _chain(etype: str, ta: bool, tb: bool) -> bytes:
    """a (2,3) x b (3,1) -> MatMul (2,1) -> Add with a Const (2,1) -> ReLU -> Result: the issue's
    network, with the transposes written into the operands."""
    a, b = ([3, 2] if ta else [2, 3]), ([1, 3] if tb else [3, 1])
    prec = port_precision(etype)
    layers = [parameter(0, a, etype, "a"), parameter(1, b, etype, "b"),
              layer(2, "MatMul", name="mm", inputs=[a, b], outputs=[[2, 1]], precision=prec,
                    data={"transpose_a": str(ta).lower(), "transpose_b": str(tb).lower()}),
              _const(3, [2, 1], etype, "bias"),
              layer(4, "Add", name="add", inputs=[[2, 1], [2, 1]], outputs=[[2, 1]], precision=prec,
                    data={"auto_broadcast": "numpy"}),
              layer(5, "ReLU", name="relu", inputs=[[2, 1]], outputs=[[2, 1]], precision=prec),
              layer(6, "Result", name="out", inputs=[[2, 1]], precision=prec)]
    return net(layers, [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 4, 0), (3, 0, 4, 1), (4, 2, 5, 0),
                        (5, 1, 6, 0)])


def bases() -> list[bytes]:
    """Well-formed IR to start from: every example, and small networks of each profile layer."""
    out = [p.read_bytes() for p in EXAMPLES]
    for etype in ("f32", "i32", "u8", "f16"):
        for kind in ("Add", "Multiply", "Subtract"):
            out.append(binary(kind, [2, 3], [2, 3], etypes=(etype, etype), data={"auto_broadcast": "numpy"}))
        out.append(binary("MatMul", [2, 3], [3, 4], [2, 4], etypes=(etype, etype)))
        out.append(unary("ReLU", [2, 3], etype=etype))
        for ta in (False, True):
            for tb in (False, True):
                out.append(_chain(etype, ta, tb))
    return out


# ------------------------------------------------------------------ edits on the XML tree
def _layers(root):
    return root.findall("./layers/layer")


def _edges(root):
    return root.findall("./edges/edge")


def _ports(root):
    return [(lay, p) for lay in _layers(root) for p in lay.iter("port")]


def _set_dims(port, dims) -> None:
    for d in port.findall("dim"):
        port.remove(d)
    for value in dims:
        ET.SubElement(port, "dim").text = str(value)


def _fed_by(root, lay, port) -> list:
    """The input ports an output port feeds (through the edges)."""
    by_id = {x.get("id"): x for x in _layers(root)}
    out = []
    for e in _edges(root):
        if e.get("from-layer") == lay.get("id") and e.get("from-port") == port.get("id"):
            dst = by_id.get(e.get("to-layer"))
            if dst is not None:
                out += [p for p in dst.findall("./input/port") if p.get("id") == e.get("to-port")]
    return out


def _output_ports(root):
    return [(lay, p) for lay in _layers(root) for p in lay.findall("./output/port")]


def _new_dims(rng: random.Random, dims: list[str]) -> list[str]:
    choice = rng.randrange(4)
    if choice == 0 and dims:                       # one dimension changed
        dims = list(dims)
        dims[rng.randrange(len(dims))] = str(rng.choice((1, 2, 3, 4, 5)))
        return dims
    if choice == 1:                                # one more axis (a rank lie)
        return dims + [str(rng.choice((1, 2, 4)))]
    if choice == 2 and dims:                       # one axis fewer
        return dims[:-1]
    return list(reversed(dims))


def port_lie(root, rng):
    lay, p = rng.choice(_ports(root))
    _set_dims(p, _new_dims(rng, [d.text or "" for d in p.findall("dim")]))


def consistent_lie(root, rng):
    """An output port and every input port it feeds claim the same other dims: the file agrees
    with itself, only what OpenVINO computes disagrees."""
    outs = [(lay, p) for lay, p in _output_ports(root) if lay.get("type") != "Parameter"] or _output_ports(root)
    lay, p = rng.choice(outs)
    dims = _new_dims(rng, [d.text or "" for d in p.findall("dim")])
    for q in [p] + _fed_by(root, lay, p):
        _set_dims(q, dims)


def retype(root, rng):
    """A Parameter's or Const's element_type changed; sometimes its ports follow it."""
    sources = [x for x in _layers(root) if x.get("type") in ("Parameter", "Const")]
    lay = rng.choice(sources)
    data = lay.find("data")
    etype = rng.choice(ETYPES)
    if data is not None:
        data.set("element_type", etype)
    if rng.random() < 0.6:
        out = lay.find("./output/port")
        if out is not None:
            prec = port_precision(etype) if etype not in ("dynamic", "undefined") else "UNSPECIFIED"
            for q in [out] + _fed_by(root, lay, out):
                q.set("precision", prec)


def precision(root, rng):
    _, p = rng.choice(_ports(root))
    value = rng.choice(PRECISIONS)
    if value == "" and rng.random() < 0.5:
        p.attrib.pop("precision", None)
    else:
        p.set("precision", value)


def odd_attribute(root, rng):
    lay = rng.choice(_layers(root))
    data = lay.find("data")
    if data is None:
        data = ET.SubElement(lay, "data")
    key, values = rng.choice((("element_type", ODD_ETYPES), ("shape", SHAPES),
                              ("auto_broadcast", MODES), ("transpose_a", FLAGS),
                              ("transpose_b", FLAGS), ("size", ("0", "7", "24", "48", "-1", "x")),
                              ("offset", ("0", "8", "-4", "x"))))
    data.set(key, rng.choice(values))


def missing_attribute(root, rng):
    lay = rng.choice(_layers(root))
    data = lay.find("data")
    if data is not None and data.attrib and rng.random() < 0.8:
        del data.attrib[rng.choice(sorted(data.attrib))]
    elif data is not None:
        lay.remove(data)
    else:
        lay.attrib.pop(rng.choice(("version", "name", "type")), None)


def odd_dim(root, rng):
    _, p = rng.choice(_ports(root))
    dims = p.findall("dim")
    if dims:
        rng.choice(dims).text = rng.choice(DIMS)


def port_order(root, rng):
    two = [x for x in _layers(root) if len(x.findall("./input/port")) >= 2]
    if two:
        section = rng.choice(two).find("input")
        ports = section.findall("port")
        for p in ports:
            section.remove(p)
        for p in reversed(ports):
            section.append(p)


def duplicate_id(root, rng):
    lays = _layers(root)
    if rng.random() < 0.5 and len(lays) > 1:
        a, b = rng.sample(lays, 2)
        a.set("id", b.get("id"))
    else:
        lay = rng.choice(lays)
        ports = list(lay.iter("port"))
        if len(ports) > 1:
            a, b = rng.sample(ports, 2)
            a.set("id", b.get("id"))


def edge_edit(root, rng):
    edges_el = root.find("edges")
    edges = _edges(root)
    kind = rng.randrange(5)
    if kind == 0 and edges:
        edges_el.remove(rng.choice(edges))                       # a port left unfed
    elif kind == 1 and edges:
        edges_el.append(ET.fromstring(ET.tostring(rng.choice(edges))))   # a duplicate
    elif kind == 2 and edges:
        rng.choice(edges).set(rng.choice(("from-layer", "to-layer", "from-port", "to-port")),
                              str(rng.choice((7, 9, 99, -1))))   # dangling
    elif kind == 3 and edges:                                    # fed from another output
        e = rng.choice(edges)
        lay, p = rng.choice(_output_ports(root))
        e.set("from-layer", lay.get("id") or "")
        e.set("from-port", p.get("id") or "")
    elif edges:                                                  # two edges swap sources
        a, b = rng.sample(edges, 2) if len(edges) > 1 else (edges[0], edges[0])
        for k in ("from-layer", "from-port"):
            va, vb = a.get(k), b.get(k)
            a.set(k, vb or "")
            b.set(k, va or "")


def parameter_shape(root, rng):
    """A Parameter's or Const's shape attribute changed or removed, its port left alone."""
    sources = [x for x in _layers(root) if x.get("type") in ("Parameter", "Const")]
    data = rng.choice(sources).find("data")
    if data is not None:
        if rng.random() < 0.3:
            data.attrib.pop("shape", None)
        else:
            data.set("shape", rng.choice(SHAPES))


def rename(root, rng):
    lay = rng.choice([x for x in _layers(root) if x.get("type") not in ("Parameter", "Const", "Result")]
                     or _layers(root))
    if rng.random() < 0.7:
        lay.set("type", rng.choice(TYPES))
    else:
        lay.set("version", rng.choice(VERSIONS))


def net_version(root, rng):
    root.set("version", rng.choice(("10", "11", "9", "12", " 11")))


EDITS = (port_lie, consistent_lie, consistent_lie, retype, retype, precision, odd_attribute,
         missing_attribute, odd_dim, port_order, port_order, duplicate_id, edge_edit,
         parameter_shape, rename, net_version)


def generate(count: int, seed: int) -> list[tuple[str, bytes]]:
    """``count`` hostile IR files, (the edits made, the XML), the same for the same seed."""
    rng = random.Random(seed)
    starts = bases()
    out = []
    for case in range(count):
        root = ET.fromstring(starts[case % len(starts)])
        done = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            edit = rng.choice(EDITS)
            edit(root, rng)
            done.append(edit.__name__)
        out.append(("+".join(done), b'<?xml version="1.0"?>\n' + ET.tostring(root)))
    return out
