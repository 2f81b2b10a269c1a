"""ONNX element types, their numpy counterparts, and the type set of each operator version.

Element types are named as in the ONNX operator docs (``tensor(float)`` -> ``"float"``),
which is also ``TensorProto.DataType`` lower-cased. Each operator's type sets live in its module
(sonnx/ops/<op>.py, copied from the onnx schemas); ``tests/test_dtypes.py`` checks them against
the schemas in the installed onnx package.
"""
from __future__ import annotations

from functools import lru_cache

import ml_dtypes
import numpy as np

# name -> (numpy dtype, is_float, bits, signed)
_TYPES: dict[str, tuple[np.dtype, bool, int, bool]] = {
    "float16": (np.dtype(np.float16), True, 16, True),
    "bfloat16": (np.dtype(ml_dtypes.bfloat16), True, 16, True),
    "float": (np.dtype(np.float32), True, 32, True),
    "double": (np.dtype(np.float64), True, 64, True),
    "int8": (np.dtype(np.int8), False, 8, True),
    "int16": (np.dtype(np.int16), False, 16, True),
    "int32": (np.dtype(np.int32), False, 32, True),
    "int64": (np.dtype(np.int64), False, 64, True),
    "uint8": (np.dtype(np.uint8), False, 8, False),
    "uint16": (np.dtype(np.uint16), False, 16, False),
    "uint32": (np.dtype(np.uint32), False, 32, False),
    "uint64": (np.dtype(np.uint64), False, 64, False),
}
NUMERIC_TYPES = frozenset(_TYPES)
_BY_NUMPY_NAME = {dt.name: name for name, (dt, *_rest) in _TYPES.items()}

# Groups the operators' type sets are written with (each operator module holds its own table)
IEEE_FLOATS = frozenset({"float16", "float", "double"})
WIDE_INTS = frozenset({"int32", "int64", "uint32", "uint64"})
NARROW_INTS = frozenset({"int8", "int16", "uint8", "uint16"})
# since_version -> element types of ONNX's binary arithmetic operators (they share them)
ARITHMETIC_TYPE_SETS = {
    1: IEEE_FLOATS,
    6: IEEE_FLOATS | WIDE_INTS,
    7: IEEE_FLOATS | WIDE_INTS,
    13: IEEE_FLOATS | WIDE_INTS | {"bfloat16"},
    14: IEEE_FLOATS | WIDE_INTS | {"bfloat16"} | NARROW_INTS,
}


@lru_cache(maxsize=256)  # dtype.name formats a string each time; kernels call this per call
def name_of(dtype: np.dtype) -> str:
    """ONNX name of a numpy dtype; non-profile dtypes keep their numpy name (e.g. "bool")."""
    dt = np.dtype(dtype)
    native = dt.newbyteorder("=") if dt.byteorder not in ("|", "=") else dt
    return _BY_NUMPY_NAME.get(native.name, native.name)


def numpy_dtype(name: str) -> np.dtype:
    return _TYPES[name][0]


def is_float(name: str) -> bool:
    return _TYPES[name][1]


def bits(name: str) -> int:
    return _TYPES[name][2]


def is_signed(name: str) -> bool:
    return _TYPES[name][3]


def name_of_tensor_proto(elem_type: int) -> str:
    """ONNX name of a ``TensorProto.DataType`` code (e.g. 1 -> "float")."""
    from onnx import TensorProto

    try:
        return TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"unknown({elem_type})"
