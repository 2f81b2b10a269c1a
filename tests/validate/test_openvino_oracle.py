"""Differential oracle: OpenVINO's own reader (Core().read_model, then the shape and element type
it infers at each operation) against the tensors sonnx computes for the same IR, layer by layer,
on every IR example (examples/openvino/, written by OpenVINO's converter) and on IR files
OpenVINO writes itself here; the IR files the other tests write are compared in
test_openvino.py's judge(). As tests/validate/test_openvino_runtime.py runs sonnx.mul beside
OpenVINO's Multiply, and test_soundness.py the ONNX side beside onnxruntime."""
from __future__ import annotations

import pathlib

import pytest

from sonnx.validate import validate

from . import openvino_oracle as oracle
from .openvino_ir import binary, layer, net, unary

if not oracle.AVAILABLE:
    pytest.skip("openvino (dev extra) is not installed: the oracle cannot run", allow_module_level=True)

import openvino as ov  # noqa: E402
import openvino.opset1 as ops  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples" / "openvino").glob("*.xml"))


@pytest.mark.req("PROF-R2", "MUL-R4", "ADD-R4")
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_is_computed_as_openvino_computes_it(path):
    data = path.read_bytes()
    theirs, ours, compared = oracle.compare(data)
    assert theirs.refused is None and not isinstance(ours, str), (theirs.refused, ours)
    # every layer sonnx computes was compared; every operation OpenVINO builds, unless the IR
    # holds one outside the profile (sonnx computes nothing there or behind it: PROF-R1)
    assert compared == len(ours) > 0
    if all(kind in oracle.OV_TYPES for kind, _, _ in theirs.ops.values()):
        assert compared == len(theirs.ops)
    why = oracle.must_not_conform(theirs)
    if why is not None:
        assert not validate(path).conforms, why


def _written_by_openvino(tmp_path, model) -> bytes:
    ov.save_model(model, str(tmp_path / "m.xml"), compress_to_fp16=False)
    return (tmp_path / "m.xml").read_bytes()


def _chain(a_shape, b_shape, ta, tb, etype):
    """Parameter a, Const-free MatMul with the transposes, then Add of a Parameter, then ReLU."""
    t = getattr(ov.Type, etype)
    a, b = ops.parameter(a_shape, t, name="a"), ops.parameter(b_shape, t, name="b")
    prod = ops.matmul(a, b, ta, tb, name="mm")
    c = ops.parameter(list(prod.get_output_partial_shape(0).to_shape()), t, name="c")
    out = ops.relu(ops.add(prod, c, name="add"), name="relu")
    return ov.Model([ops.result(out, name="out")], [a, b, c])


CHAINS = [((2, 3), (3, 4), False, False), ((3, 2), (3, 4), True, False), ((2, 3), (4, 3), False, True),
          ((3, 2), (4, 3), True, True), ((3,), (3, 4), False, False), ((2, 3), (3,), False, False),
          ((3,), (3, 4), True, False), ((5, 2, 3), (3, 4), False, False),
          ((1, 2, 3), (5, 4, 3), False, True), ((7,), (2, 7, 4), False, False)]


@pytest.mark.req("MATMUL-R1", "MATMUL-R3")
@pytest.mark.parametrize("a,b,ta,tb", CHAINS)
@pytest.mark.parametrize("etype", ["f32", "i32", "u8"])
def test_matmul_chains_openvino_writes(tmp_path, a, b, ta, tb, etype):
    """MatMul's transposes, rank-1 operands and batches, as OpenVINO itself writes them."""
    data = _written_by_openvino(tmp_path, _chain(list(a), list(b), ta, tb, etype))
    theirs, ours, compared = oracle.compare(data)
    assert not isinstance(ours, str), ours
    assert compared == len(theirs.ops) == 7
    (tmp_path / "m.xml").write_bytes(data)
    r = validate(tmp_path / "m.xml")
    why = oracle.must_not_conform(theirs)
    assert r.conforms == (why is None), (why, r.findings)


VERSIONED = {"Multiply": lambda v: binary("Multiply", [2], [2], version=v),
             "Add": lambda v: binary("Add", [2], [2], version=v),
             "Subtract": lambda v: binary("Subtract", [2], [2], version=v),
             "MatMul": lambda v: binary("MatMul", [2, 2], [2, 2], version=v),
             "ReLU": lambda v: unary("ReLU", [2]).replace(b'type="ReLU" version="opset1"',
                                                          f'type="ReLU" version="{v}"'.encode()),
             "Parameter": lambda v: unary("ReLU", [2]).replace(b'type="Parameter" version="opset1"',
                                                               f'type="Parameter" version="{v}"'.encode()),
             "Result": lambda v: unary("ReLU", [2]).replace(b'type="Result" version="opset1"',
                                                            f'type="Result" version="{v}"'.encode()),
             "Const": lambda v: net([layer(0, "Const", data={"element_type": "f32", "shape": "2", "offset": 0,
                                                             "size": 8}, outputs=[[2]], version=v),
                                     layer(1, "Result", inputs=[[2]])], [(0, 0, 1, 0)])}


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("kind", sorted(VERSIONED))
def test_layer_versions_are_those_openvino_reads(tmp_path, kind):
    """A layer of opsetN conforms exactly where OpenVINO's reader knows the layer in opsetN
    (OpenVINO 2026.4's opset17 holds Parameter but no Multiply, Const or Result)."""
    for n in range(1, 20):
        data = VERSIONED[kind](f"opset{n}")
        (tmp_path / "m.xml").write_bytes(data)
        refused = oracle.openvino_reading(data).refused is not None
        assert validate(tmp_path / "m.xml").conforms == (not refused), (kind, n)


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("etype", ["f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64", "u8", "u16",
                                   "u32", "u64"])
def test_ir_v10_is_refused_where_openvino_adds_a_cast(tmp_path, etype):
    """IR version 10: sonnx's PROF-R1 on a Parameter or Result stands exactly where OpenVINO's
    reader inserts a Convert at the model's boundary (its legacy precisions)."""
    data = unary("ReLU", [2], etype=etype).replace(b'version="11"', b'version="10"', 1)
    (tmp_path / "m.xml").write_bytes(data)
    theirs = oracle.openvino_reading(data)
    casts = sum(kind == "Convert" for kind, _, _ in theirs.ops.values())
    r = validate(tmp_path / "m.xml")
    legacy = [f for f in r.findings if "IR version 10" in f.message]
    assert bool(legacy) == bool(casts), (casts, r.findings)
    oracle.compare(data)
