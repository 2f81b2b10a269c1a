"""32-bit float fields of ONNX messages read bit for bit from their protobuf wire bytes.

Python's protobuf hands a ``float`` field out as a Python float (a C double): the float-to-double
conversion sets the quiet bit of a signalling NaN (0x7f800001 becomes 0x7fc00001), so
``AttributeProto.f``, ``.floats`` and ``TensorProto.float_data`` cannot be trusted to keep every
bit. The serialized message holds the stored 4 bytes unchanged; these functions read them.
Every other field conform copies is exact through Python (integers, doubles, raw_data bytes).
"""
from __future__ import annotations

import struct

import numpy as np

# field numbers (onnx/onnx.proto)
ATTRIBUTE_F, ATTRIBUTE_FLOATS = 2, 7
TENSOR_FLOAT_DATA = 4

_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5


class WireError(ValueError):
    """Bytes that are not a well-formed protobuf message."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise WireError("truncated or overlong varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def float32_field(message_bytes: bytes, field: int) -> bytes:
    """The little-endian 4-byte words of every value of float field ``field`` (packed or not),
    in order, exactly as stored."""
    out = bytearray()
    pos, n = 0, len(message_bytes)
    while pos < n:
        key, pos = _varint(message_bytes, pos)
        number, kind = key >> 3, key & 7
        if kind == _VARINT:
            _, pos = _varint(message_bytes, pos)
        elif kind == _FIXED64:
            pos += 8
        elif kind == _FIXED32:
            if number == field:
                out += message_bytes[pos:pos + 4]
            pos += 4
        elif kind == _LEN:
            length, pos = _varint(message_bytes, pos)
            if number == field:
                if length % 4:
                    raise WireError(f"packed float field {field} of {length} bytes")
                out += message_bytes[pos:pos + length]
            pos += length
        else:
            raise WireError(f"wire type {kind} (groups are not used by onnx)")
        if pos > n:
            raise WireError("truncated message")
    return bytes(out)


def attribute_floats(attribute) -> bytes:
    """The stored bytes of ``value_float`` (one word) or ``value_floats`` (an AttributeProto)."""
    field = ATTRIBUTE_F if attribute.name == "value_float" else ATTRIBUTE_FLOATS
    words = float32_field(attribute.SerializeToString(), field)
    if attribute.name == "value_float":
        # an f that was never set is absent from the wire (proto3 default 0.0)
        return words[-4:] if words else struct.pack("<f", 0.0)
    return words


def tensor_float_data(tensor) -> np.ndarray:
    """``TensorProto.float_data`` as float32 values with every bit kept (flat)."""
    return np.frombuffer(float32_field(tensor.SerializeToString(), TENSOR_FLOAT_DATA), dtype="<f4")
