"""conform keeps every bit of a Constant: each attribute kind becomes an initializer holding the
very bit patterns stored in the file (signalling NaNs, NaN payloads, -0, subnormals, integer
extremes), or is refused with its reason. The models are built from protobuf wire bytes,
because Python's protobuf quiets a signalling NaN on the way through a Python float."""
from __future__ import annotations

import struct

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import sonnx
from sonnx.conform import rewrite, wire

F32_BITS = [0x7F800001, 0xFF800001, 0x7FA00000, 0x7FC12345, 0xFFFFFFFF, 0x80000000, 0x00000000,
            0x00000001, 0x807FFFFF, 0x7F800000, 0x3F800000]       # sNaNs, payload NaNs, -0, ...
F16_BITS = [0x7C01, 0xFC01, 0x7E55, 0x8000, 0x0001, 0x83FF, 0x7C00, 0x3C00]
BF16_BITS = [0x7F81, 0xFF81, 0x7FC1, 0x8000, 0x0001, 0x807F, 0x3F80]
F64_BITS = [0x7FF0000000000001, 0xFFF0000000000001, 0x7FF8DEADBEEF0001, 0x8000000000000000,
            0x0000000000000001, 0x3FF0000000000000]
I64 = [-2**63, 2**63 - 1, 0, -1, 1]


# ---------------------------------------------------------------- wire-level builders
def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def key(field: int, kind: int) -> bytes:
    return varint(field << 3 | kind)


def ld(field: int, payload: bytes) -> bytes:
    return key(field, 2) + varint(len(payload)) + payload


def words(bits: list[int]) -> bytes:
    return struct.pack(f"<{len(bits)}I", *bits)


def float_attribute(name: str, bits: list[int], packed: bool = True) -> onnx.AttributeProto:
    if name == "value_float":
        body = key(2, 5) + words(bits) + key(20, 0) + varint(onnx.AttributeProto.FLOAT)
    elif packed:
        body = ld(7, words(bits)) + key(20, 0) + varint(onnx.AttributeProto.FLOATS)
    else:
        body = b"".join(key(7, 5) + words([b]) for b in bits) + key(20, 0) + varint(onnx.AttributeProto.FLOATS)
    a = onnx.AttributeProto()
    a.ParseFromString(ld(1, name.encode()) + body)
    return a


def float_data_tensor(bits: list[int]) -> onnx.TensorProto:
    """A float32 tensor with its values in the typed field float_data (packed)."""
    t = onnx.TensorProto()
    t.ParseFromString(key(1, 0) + varint(len(bits)) + key(2, 0) + varint(TensorProto.FLOAT)
                      + ld(4, words(bits)))
    return t


def constant_model(attr: onnx.AttributeProto, elem: int, shape: list) -> onnx.ModelProto:
    node = helper.make_node("Constant", [], ["k"])
    node.attribute.append(attr)
    g = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("k", elem, shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    back = onnx.ModelProto()
    back.ParseFromString(m.SerializeToString())      # as read from a file
    return back


def initializer_bits(t: onnx.TensorProto, width: int) -> list[int]:
    raw = t.raw_data
    assert raw, "conform stores the converted value in raw_data"
    return list(np.frombuffer(raw, dtype=f"<u{width}"))


def converted(model: onnx.ModelProto) -> tuple[onnx.TensorProto | None, rewrite.Log]:
    log = rewrite.Log()
    rewrite.constants_to_initializers(model, log)
    inits = {t.name: t for t in model.graph.initializer}
    return inits.get("k"), log


# ---------------------------------------------------------------- the builders are honest
@pytest.mark.req("PROF-R1")
def test_the_wire_builders_hold_signalling_nans():
    a = float_attribute("value_float", [0x7F800001])
    assert struct.pack("<I", 0x7F800001) in a.SerializeToString()
    # and Python's protobuf quiets it on the way out: the fault conform must not inherit
    assert struct.unpack("<I", struct.pack("<f", a.f))[0] == 0x7FC00001


# ---------------------------------------------------------------- float attributes
@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("bits", [[b] for b in F32_BITS])
def test_value_float_keeps_every_bit(bits):
    t, log = converted(constant_model(float_attribute("value_float", bits), TensorProto.FLOAT, []))
    assert t is not None and list(t.dims) == [] and t.data_type == TensorProto.FLOAT
    assert initializer_bits(t, 4) == bits
    assert not log.blockers


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("packed", [True, False])
def test_value_floats_keeps_every_bit(packed):
    model = constant_model(float_attribute("value_floats", F32_BITS, packed), TensorProto.FLOAT,
                           [len(F32_BITS)])
    t, _ = converted(model)
    assert list(t.dims) == [len(F32_BITS)] and initializer_bits(t, 4) == F32_BITS


@pytest.mark.req("PROF-R1")
def test_empty_value_floats_is_an_empty_vector():
    t, _ = converted(constant_model(float_attribute("value_floats", []), TensorProto.FLOAT, [0]))
    assert list(t.dims) == [0] and t.raw_data == b""


# ---------------------------------------------------------------- integer attributes
@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("v", I64)
def test_value_int_is_exact(v):
    t, _ = converted(constant_model(helper.make_attribute("value_int", v), TensorProto.INT64, []))
    assert t.data_type == TensorProto.INT64 and list(t.dims) == []
    assert list(np.frombuffer(t.raw_data, "<i8")) == [v]


@pytest.mark.req("PROF-R1")
def test_value_ints_is_exact():
    t, _ = converted(constant_model(helper.make_attribute("value_ints", I64), TensorProto.INT64, [5]))
    assert list(t.dims) == [5] and list(np.frombuffer(t.raw_data, "<i8")) == I64


# ---------------------------------------------------------------- value (a tensor)
def _tensor_cases():
    f16 = np.array(F16_BITS, np.uint16)
    cases = {
        "float raw": (TensorProto.FLOAT, words(F32_BITS), None),
        "float16 raw": (TensorProto.FLOAT16, f16.tobytes(), None),
        "float16 int32_data": (TensorProto.FLOAT16, None, ("int32_data", F16_BITS)),
        "bfloat16 raw": (TensorProto.BFLOAT16, np.array(BF16_BITS, np.uint16).tobytes(), None),
        "bfloat16 int32_data": (TensorProto.BFLOAT16, None, ("int32_data", BF16_BITS)),
        "double raw": (TensorProto.DOUBLE, np.array(F64_BITS, np.uint64).tobytes(), None),
        "double double_data": (TensorProto.DOUBLE, None, (
            "double_data", [struct.unpack("<d", struct.pack("<Q", b))[0] for b in F64_BITS])),
        "int64 int64_data": (TensorProto.INT64, None, ("int64_data", I64)),
        "uint64 uint64_data": (TensorProto.UINT64, None, ("uint64_data", [0, 2**64 - 1, 2**63])),
        "int8 int32_data": (TensorProto.INT8, None, ("int32_data", [-128, 127, 0])),
    }
    return cases


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("case", sorted(_tensor_cases()))
def test_value_tensor_is_copied_as_stored(case):
    elem, raw, typed = _tensor_cases()[case]
    t = onnx.TensorProto(data_type=elem)
    if raw is not None:
        t.raw_data = raw
        n = len(raw) // {TensorProto.FLOAT: 4, TensorProto.DOUBLE: 8}.get(elem, 2)
    else:
        getattr(t, typed[0]).extend(typed[1])
        n = len(typed[1])
    t.dims.append(n)
    stored = t.SerializeToString()
    got, _ = converted(constant_model(helper.make_attribute("value", t), elem, [n]))
    got_copy = onnx.TensorProto()
    got_copy.CopyFrom(got)
    got_copy.ClearField("name")
    assert got_copy.SerializeToString() == stored     # every field, every byte


@pytest.mark.req("PROF-R1")
def test_value_tensor_in_float_data_keeps_signalling_nans():
    t = float_data_tensor(F32_BITS)
    got, _ = converted(constant_model(helper.make_attribute("value", t), TensorProto.FLOAT,
                                      [len(F32_BITS)]))
    assert list(wire.tensor_float_data(got).view("<u4")) == F32_BITS
    assert list(rewrite.stored_array(got).view(np.uint32)) == F32_BITS


# ---------------------------------------------------------------- refused, with the reason
@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("attr", [
    helper.make_attribute("value_string", b"hello"),
    helper.make_attribute("value_strings", [b"a", b"b"]),
    helper.make_attribute("value", helper.make_tensor("s", TensorProto.STRING, [1], [b"x"])),
])
@pytest.mark.req("PROF-R1")
def test_strings_are_refused_with_the_reason(attr):
    t, log = converted(constant_model(attr, TensorProto.STRING, None))
    assert t is None
    (b,) = log.blockers
    assert b.rule == "PROF-R1" and "string" in b.reason and "element type" in b.reason


@pytest.mark.req("PROF-R1")
def test_sparse_value_is_refused_with_the_reason():
    values = helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])
    indices = helper.make_tensor("i", TensorProto.INT64, [1], [0])
    attr = helper.make_attribute("sparse_value", helper.make_sparse_tensor(values, indices, [3]))
    t, log = converted(constant_model(attr, TensorProto.FLOAT, [3]))
    assert t is None and "sparse" in log.blockers[0].reason


# ---------------------------------------------------------------- end to end
@pytest.mark.req("PROF-R1")
def test_conform_stores_a_signalling_nan_constant_bit_for_bit():
    model = constant_model(float_attribute("value_floats", F32_BITS), TensorProto.FLOAT,
                           [len(F32_BITS)])
    out, report = sonnx.conform(model)
    (t,) = [t for t in out.graph.initializer if t.name == "k"]
    assert initializer_bits(t, 4) == F32_BITS
    assert report["check"]["status"] == "passed", report["check"]


@pytest.mark.req("MUL-R4")
def test_a_broadcast_constant_in_float_data_is_expanded_bit_for_bit():
    k = float_data_tensor([0x7F800001, 0x80000000, 0x00000001])
    k.name = "k"
    g = helper.make_graph([helper.make_node("Mul", ["x", "k"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [k])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    out, report = sonnx.conform(model, check=False)
    (t,) = [t for t in out.graph.initializer if list(t.dims) == [2, 3]]
    assert initializer_bits(t, 4) == [0x7F800001, 0x80000000, 0x00000001] * 2
    assert report["validate"]["conforms"]


# ---------------------------------------------------------------- the tests bite
@pytest.mark.req("PROF-R1")
def test_a_python_float_path_is_caught(monkeypatch):
    # planted fault: the attribute read through Python floats, as conform did before issue 26
    monkeypatch.setattr(rewrite.wire, "attribute_floats", lambda a: np.array(
        [a.f] if a.name == "value_float" else list(a.floats), dtype=np.float32).tobytes())
    t, _ = converted(constant_model(float_attribute("value_float", [0x7F800001]), TensorProto.FLOAT, []))
    assert initializer_bits(t, 4) == [0x7FC00001]      # quieted: what the tests above refuse
