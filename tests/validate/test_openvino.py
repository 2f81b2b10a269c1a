"""`sonnx validate model.xml`: OpenVINO IR judged by the registry's own constraint functions
(spec/openvino.md); malformed IR is a read error (exit 2), never a traceback."""
from __future__ import annotations

import json

import onnx
import pytest

from sonnx.cli import main
from sonnx.ops.registry import operators
from sonnx.ops.signature import TensorSig
from sonnx.validate import openvino, validate
from sonnx.validate.formats import FORMATS

from . import models as M
from . import openvino_oracle as oracle
from .openvino_ir import binary, layer, net, parameter, unary
from .test_formats import SARIF_SCHEMA, check


def judge(tmp_path, data: bytes, name: str = "model.xml"):
    """sonnx's report on the IR; where openvino is installed, OpenVINO reads the same file and
    the tensors sonnx computes must be the ones OpenVINO computes, layer by layer (the
    differential oracle of test_openvino_oracle.py, on every IR file these tests write)."""
    path = tmp_path / name
    path.write_bytes(data)
    if oracle.AVAILABLE:
        oracle.compare(data)
    return validate(path)


def rules_of(report) -> list[str]:
    assert report.error is None, report.error
    return [f.rule for f in report.findings]


def registry_says(op: str, sigs, attrs=None) -> list:
    """What the operator's own constraint function says of these signatures, as the IR reader
    calls it (opset openvino.IR_OPSET)."""
    return operators()[op].constraints(tuple(sigs), attrs or {}, openvino.IR_OPSET)


ELEMENTWISE = [("Multiply", "Mul"), ("Add", "Add"), ("Subtract", "Sub")]
SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((8, 1, 6, 1), (7, 1, 5)), ((2, 3), (3, 2)),
          ((2, 3), (1, 3)), ((4,), (4,))]


# ------------------------------------------------------------------ element-wise layers
@pytest.mark.req("MUL-R1", "MUL-R4", "ADD-R1", "ADD-R4", "SUB-R1", "SUB-R4")
@pytest.mark.parametrize("kind,op", ELEMENTWISE)
@pytest.mark.parametrize("a,b", SHAPES)
@pytest.mark.parametrize("mode", ["numpy", "none", None])
def test_elementwise_verdicts_are_the_registry_functions(tmp_path, kind, op, a, b, mode):
    from sonnx.ops.elementwise import broadcast_shape
    out = broadcast_shape(a, b) if (mode != "none" and broadcast_shape(a, b)) else a
    data = None if mode is None else {"auto_broadcast": mode}
    r = judge(tmp_path, binary(kind, list(a), list(b), list(out), data=data))
    want = registry_says(op, [TensorSig(a, "float"), TensorSig(b, "float")])
    assert [(f.rule, f.message.split(": ", 1)[1]) for f in r.findings] == \
        [(v.requirement, v.message) for v in want]
    # the verdict the profile gives on shapes alone: equal static shapes conform
    assert r.conforms == (a == b)
    if a != b:
        prefix = operators()[op].prefix
        expected = f"{prefix}-R4" if broadcast_shape(a, b) else f"{prefix}-R1"
        assert [f.rule for f in r.findings] == [expected]


@pytest.mark.req("MUL-R1", "MUL-R4")
def test_no_second_copy_of_a_rule(tmp_path, monkeypatch):
    """Planted fault: with Mul's constraint function replaced in the registry, the IR's verdicts
    change with it (a broadcast passes): the IR reader decides no rule itself. A shape mismatch
    OpenVINO refuses to compute becomes a read error (the reader's safety net), never "conforms"."""
    import dataclasses
    from sonnx.ops import registry
    bcast = binary("Multiply", [2, 3], [3], [2, 3])
    clash = binary("Multiply", [2, 3], [3, 2], [2, 3], data={"auto_broadcast": "none"})
    assert rules_of(judge(tmp_path, bcast)) == ["MUL-R4"] and rules_of(judge(tmp_path, clash)) == ["MUL-R1"]
    table = dict(registry.operators())
    table["Mul"] = dataclasses.replace(table["Mul"], constraints=lambda sigs, attrs, opset: [])
    monkeypatch.setattr(openvino, "operators", lambda: table)
    monkeypatch.setattr(openvino.rules, "operators", lambda: table)
    assert judge(tmp_path, bcast).conforms
    # a shape OpenVINO cannot compute is never called conformant, even with the rule gone
    assert "OpenVINO cannot compute it from (2, 3) f32, (3, 2) f32" in judge(tmp_path, clash).error


@pytest.mark.req("MUL-R4", "ADD-R4", "SUB-R4")
@pytest.mark.parametrize("kind,op", ELEMENTWISE)
def test_pdpd_is_read_as_broadcast_1_and_refused_whatever_the_shapes(tmp_path, kind, op):
    r = judge(tmp_path, binary(kind, [2, 3], [2, 3], data={"auto_broadcast": "pdpd"}))
    want = registry_says(op, [TensorSig((2, 3), "float")] * 2, {"broadcast": 1})
    assert [f.rule for f in r.findings] == [v.requirement for v in want] == [f"{operators()[op].prefix}-R4"]
    assert "auto_broadcast='pdpd'" in r.findings[0].message


@pytest.mark.req("MUL-R4")
def test_the_two_seed_examples(tmp_path):
    """Seed 001: 256x56 by 256x56 with none conforms; 8x1x6x1 by 7x1x5 (numpy) is MUL-R4."""
    assert judge(tmp_path, binary("Multiply", [256, 56], [256, 56],
                                  data={"auto_broadcast": "none"})).conforms
    r = judge(tmp_path, binary("Multiply", [8, 1, 6, 1], [7, 1, 5], [8, 7, 6, 5],
                               data={"auto_broadcast": "numpy"}))
    assert rules_of(r) == ["MUL-R4"] and "(8, 7, 6, 5)" in r.findings[0].message


# ------------------------------------------------------------------ element types
@pytest.mark.req("MUL-R3")
@pytest.mark.parametrize("etype,onnx_name", sorted(openvino.PRECISIONS.items()))
def test_element_types_map_onto_onnx_names(tmp_path, etype, onnx_name):
    r = judge(tmp_path, binary("Multiply", [2], [2], etypes=(etype, etype)))
    want = registry_says("Mul", [TensorSig((2,), onnx_name)] * 2)
    assert rules_of(r) == [v.requirement for v in want]
    assert r.conforms == (onnx_name in operators()["Mul"].type_sets[14])


@pytest.mark.req("MUL-R3")
def test_an_element_type_without_onnx_counterpart_is_named(tmp_path):
    r = judge(tmp_path, binary("Multiply", [2], [2], etypes=("nf4", "nf4")))
    assert rules_of(r) == ["MUL-R3", "MUL-R3"]
    assert "nf4 (OpenVINO element type, no ONNX counterpart)" in r.findings[0].message


@pytest.mark.req("MUL-R3")
def test_mixed_element_types_are_refused_never_cast(tmp_path):
    r = judge(tmp_path, binary("Multiply", [2], [2], etypes=("f32", "i32")))
    assert rules_of(r) == ["MUL-R3"] and "different element types" in r.findings[0].message


def test_port_precision_spellings(tmp_path):
    """A port's precision is read as OpenVINO reads it: the element type's name or the
    serializer's upper-case spelling; what OpenVINO refuses (fp32, bool, spaces) is malformed."""
    assert openvino.element_type("f32") == "float" and openvino.element_type("boolean") == "bool"
    assert openvino.element_type(None) is None
    for spelling in ("FP32", "f32"):
        assert judge(tmp_path, unary("ReLU", [2]).replace(b'"FP32"', f'"{spelling}"'.encode())).conforms
    for spelling in ("fp32", "Fp32", " FP32", "float", ""):
        r = judge(tmp_path, unary("ReLU", [2]).replace(b'"FP32"', f'"{spelling}"'.encode(), 1))
        assert r.status == "unreadable" and "a port's precision is an OpenVINO element type" in r.error


# ------------------------------------------------------------------ model-level rules
@pytest.mark.req("PROF-R1")
def test_a_layer_outside_the_profile_is_named_by_id_and_name(tmp_path):
    r = judge(tmp_path, binary("Power", [2, 3], [2, 3]))
    (f,) = r.findings
    assert f.rule == "PROF-R1" and f.node_index == 2 and f.node_name == "op"
    assert f.op_type == "Power" and f.domain == "opset1"
    assert f.message.startswith("layer 2 'op' (Power): layer type Power is not in the SONNX profile")


@pytest.mark.req("PROF-R1")
def test_a_convert_layer_is_refused_with_the_way_out(tmp_path):
    data = net([parameter(0, [2], "f16", "a"), layer(1, "Convert", data={"destination_type": "f32"},
                                                    inputs=[[2]], outputs=[[2]], in_precisions=["FP16"]),
                layer(2, "Result", inputs=[[2]])], [(0, 0, 1, 0), (1, 1, 2, 0)])
    r = judge(tmp_path, data)
    assert rules_of(r) == ["PROF-R1"] and "compress_to_fp16=False" in r.findings[0].message


@pytest.mark.req("PROF-R1")
def test_a_mapped_layer_whose_operator_is_not_registered_is_refused(tmp_path, monkeypatch):
    monkeypatch.setitem(openvino.LAYERS, "Power", openvino.LAYERS["Multiply"]._replace(op="Pow"))
    r = judge(tmp_path, binary("Power", [2, 3], [2, 3]))
    assert rules_of(r) == ["PROF-R1"]
    assert "maps onto ONNX Pow, which is not a profile operator (yet)" in r.findings[0].message


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("version", ["extension", "opset0", "", "opset1x", "opset18", "opset99"])
def test_a_layer_version_that_is_no_opset_is_refused(tmp_path, version):
    r = judge(tmp_path, binary("Multiply", [2], [2], version=version))
    assert rules_of(r) == ["PROF-R1"] and r.findings[0].node_index == 2


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("dim", [-1, "?", "1..10", "..5", 0])
def test_dynamic_or_empty_dims_are_refused_where_defined(tmp_path, dim):
    r = judge(tmp_path, binary("Multiply", [dim, 3], [dim, 3]))
    assert rules_of(r) == ["PROF-R2"] * 3       # a, b and the product: each where it is defined
    assert [f.node_index for f in r.findings] == [0, 1, 2]
    assert r.findings[0].tensor == "a:0"


@pytest.mark.req("PROF-R2")
def test_a_tensor_over_the_element_limit_is_refused(tmp_path):
    r = judge(tmp_path, binary("Multiply", [65536, 65536], [65536, 65536]))
    assert rules_of(r) == ["PROF-R2"] * 3 and "more than the profile's limit" in r.findings[0].message


# ------------------------------------------------------------------ MatMul and ReLU
@pytest.mark.req("MATMUL-R1", "MATMUL-R4")
@pytest.mark.parametrize("ta,tb,a,b", [
    (False, False, (2, 3), (3, 4)), (False, True, (2, 3), (4, 3)), (True, False, (3, 2), (3, 4)),
    (True, True, (3, 2), (4, 3)), (False, False, (2, 3), (4, 3)), (False, True, (2, 3), (3, 4)),
    (False, False, (5, 2, 3), (5, 3, 4))])
def test_matmul_is_judged_on_the_operands_the_product_uses(tmp_path, ta, tb, a, b):
    eff_a = a[:-2] + (a[-1], a[-2]) if ta else a
    eff_b = b[:-2] + (b[-1], b[-2]) if tb else b
    ok = eff_a[-1] == eff_b[-2]
    out = list(eff_a[:-1] + eff_b[-1:]) if ok else [2, 4]
    r = judge(tmp_path, binary("MatMul", list(a), list(b), out,
                               data={"transpose_a": str(ta).lower(), "transpose_b": str(tb).lower()}))
    want = registry_says("MatMul", [TensorSig(eff_a, "float"), TensorSig(eff_b, "float")])
    assert rules_of(r) == [v.requirement for v in want]
    if ok and len(a) == 2:
        assert r.conforms, r.findings


@pytest.mark.req("RELU-R2")
@pytest.mark.parametrize("etype", ["f32", "boolean", "u8"])
def test_relu_is_judged_by_the_registry(tmp_path, etype):
    r = judge(tmp_path, unary("ReLU", [2, 3], etype=etype))
    want = registry_says("Relu", [TensorSig((2, 3), openvino.PRECISIONS[etype])])
    assert rules_of(r) == [v.requirement for v in want]


# ------------------------------------------------------------------ output formats, CLI
@pytest.mark.req("MUL-R4")
def test_every_output_format_names_the_layer(tmp_path, capsys):
    bad = tmp_path / "bcast.xml"
    bad.write_bytes(binary("Multiply", [2, 3], [3], [2, 3]))
    for fmt in FORMATS:
        assert main(["validate", "--format", fmt, str(bad)]) == 1
        out = capsys.readouterr().out
        if fmt == "text":
            assert "[MUL-R4]" in out and "    op (Multiply-1): layer 2 'op' (Multiply)" in out
        elif fmt == "json":
            (f,) = json.loads(out)["models"][0]["findings"]
            check(json.loads(out))
            assert (f["node_index"], f["node_name"], f["op_type"]) == (2, "op", "Multiply")
        else:
            sarif = json.loads(out)
            check(sarif, SARIF_SCHEMA)
            (res,) = sarif["runs"][0]["results"]
            assert res["ruleId"] == "MUL-R4"
            assert res["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "main/op"


def test_a_folder_yields_onnx_and_ir_models(tmp_path, capsys):
    onnx.save(M.mul([2, 3], [2, 3]), tmp_path / "a.onnx")
    (tmp_path / "b.xml").write_bytes(binary("Multiply", [2, 3], [3], [2, 3]))
    assert main(["validate", "--format", "json", str(tmp_path)]) == 1
    models = json.loads(capsys.readouterr().out)["models"]
    assert [(m["source"].rsplit("/", 1)[1], m["status"]) for m in models] == \
        [("a.onnx", "conforms"), ("b.xml", "violations")]


# ------------------------------------------------------------------ malformed IR: exit 2
GOOD = binary("Multiply", [2, 3], [2, 3])
P = [parameter(0, [2, 3], name="a"), parameter(1, [2, 3], name="b")]
RESULT = layer(3, "Result", inputs=[[2, 3]])
MUL = layer(2, "Multiply", inputs=[[2, 3], [2, 3]], outputs=[[2, 3]])
EDGES = [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)]
BOMB = (b'<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY a "aaaaaaaaaa">'
        + b"".join(b'<!ENTITY %c "&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;">' % ((98 + i,) + (97 + i,) * 10)
                   for i in range(8))
        + b']><net version="11"><layers>&i;</layers><edges/></net>')
MALFORMED = {
    "truncated": (GOOD[: len(GOOD) // 2], "not well-formed XML"),
    "entity bomb": (BOMB, "refused XML"),
    "external entity": (b'<?xml version="1.0"?><!DOCTYPE net [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                        b'<net version="11"><layers/><edges/></net>', "refused XML"),
    "DTD alone": (b'<!DOCTYPE net SYSTEM "http://example.invalid/net.dtd"><net version="11"/>',
                  "refused XML"),
    "not a net": (b"<testsuites/>", "not <net>"),
    "IR version 9": (net(P + [MUL, RESULT], EDGES, version="9"), "IR version '9'"),
    "IR version text": (net(P + [MUL, RESULT], EDGES, version="eleven"), "IR version 'eleven'"),
    "no edges section": (GOOD.replace(b"<edges>", b"<x>").replace(b"</edges>", b"</x>"),
                         "0 <edges> sections"),
    "missing edge": (net(P + [MUL, RESULT], EDGES[1:]), "input port 0 of layer 2 'multiply_2' has no incoming edge"),
    "edge to no port": (net(P + [MUL, RESULT], EDGES + [(0, 0, 2, 7)]), "input port 7 of layer 2, which does not exist"),
    "edge from no layer": (net(P + [MUL, RESULT], [(9, 0, 2, 0)] + EDGES[1:]), "output port 0 of layer 9"),
    "two edges into a port": (net(P + [MUL, RESULT], EDGES + [(1, 0, 2, 0)]), "has two incoming edges"),
    "inconsistent dims": (net(P + [layer(2, "Multiply", inputs=[[2, 4], [2, 3]], outputs=[[2, 3]]), RESULT],
                              EDGES), "input port 0 declares the dims (2, 4) but the edge 0:0 -> 2:0 brings (2, 3)"),
    "duplicate layer id": (net(P + [MUL, RESULT, RESULT], EDGES), "two layers have the id 3"),
    "duplicate port id": (GOOD.replace(b'<port id="1"', b'<port id="0"'), "two ports with id 0"),
    "cycle": (net([layer(0, "Relu", inputs=[[2]], outputs=[[2]]), layer(1, "Relu", inputs=[[2]], outputs=[[2]])],
                  [(0, 1, 1, 0), (1, 1, 0, 0)]), "cycle"),
    "bad dim": (GOOD.replace(b"<dim>3</dim>", b"<dim>three</dim>"), "'three'"),
    "huge dim": (GOOD.replace(b"<dim>3</dim>", b"<dim>" + b"9" * 5000 + b"</dim>"), "dimension"),
    "bad layer id": (GOOD.replace(b'layer id="2"', b'layer id="two"'), "a layer id is 'two'"),
    "no type": (GOOD.replace(b'type="Multiply" ', b""), "layer 2 has no type"),
    "parameter shape": (GOOD.replace(b'shape="2,3"', b'shape="2,4"', 1), "output port 0 declares the dims (2, 3) but its shape and element_type say (2, 4)"),
    "const size": (net([layer(0, "Const", data={"element_type": "f32", "shape": "2", "offset": 0, "size": 7},
                              outputs=[[2]]), layer(1, "Result", inputs=[[2]])], [(0, 0, 1, 0)]),
                   "says size=7 bytes"),
    "const without size": (net([layer(0, "Const", data={"element_type": "f32", "shape": "2"}, outputs=[[2]]),
                                layer(1, "Result", inputs=[[2]])], [(0, 0, 1, 0)]), "is missing"),
    "parameter without type": (GOOD.replace(b' element_type="f32"', b"", 1), "has no element_type"),
    "one input port": (net(P[:1] + [layer(2, "Multiply", inputs=[[2, 3]], outputs=[[2, 3]]), RESULT],
                           [(0, 0, 2, 0), (2, 1, 3, 0)]), "it needs 2 and 1"),
    "auto_broadcast": (binary("Multiply", [2, 3], [2, 3], data={"auto_broadcast": "explicit"}),
                       "auto_broadcast='explicit'"),
    "transpose flag": (binary("MatMul", [2, 3], [3, 4], [2, 4], data={"transpose_a": "maybe"}),
                       "transpose_a='maybe', not a boolean"),
    "output contradicts": (binary("Multiply", [2, 3], [2, 3], [3, 2]), "output port 2 declares the dims (3, 2) but OpenVINO computes (2, 3)"),
    "output type contradicts": (binary("Multiply", [2], [2], out_type="i32"),
                                "output port 2 declares the element type i32 but OpenVINO computes f32"),
    "two layers sections": (GOOD.replace(b"<edges>", b"<layers/><edges>"), "2 <layers> sections"),
    "not UTF-8": (GOOD.replace(b'name="op"', b'name="\xff\xfe"'), "not well-formed XML"),
    "empty": (b"", "empty file, not an OpenVINO IR"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_ir_is_a_read_error(tmp_path, capsys, case):
    data, said = MALFORMED[case]
    path = tmp_path / "bad.xml"
    path.write_bytes(data)
    r = validate(path)
    assert r.status == "unreadable" and said in r.error, r.error
    assert "could not validate" not in r.error
    for fmt in FORMATS:
        assert main(["validate", "--format", fmt, str(path)]) == 2
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err and err.startswith("sonnx validate: ")


def test_the_weights_file_is_never_opened(tmp_path, monkeypatch):
    import builtins
    opened = []
    real = builtins.open
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: opened.append(str(f)) or real(f, *a, **k))
    (tmp_path / "model.bin").write_bytes(b"\0" * 8)
    data = net([layer(0, "Const", data={"element_type": "f32", "shape": "2", "offset": 0, "size": 8},
                      outputs=[[2]]), layer(1, "Result", inputs=[[2]])], [(0, 0, 1, 0)])
    assert judge(tmp_path, data).conforms
    assert not [p for p in opened if p.endswith(".bin")] and any(p.endswith(".xml") for p in opened)
