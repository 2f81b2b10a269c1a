"""ONNX element types, their numpy counterparts, and the type set of each operator version.

Element types are named as in the ONNX operator docs (``tensor(float)`` -> ``"float"``),
which is also ``TensorProto.DataType`` lower-cased. Each operator's type sets live in its module
(sonnx/ops/<op>.py, copied from the onnx schemas); ``tests/test_dtypes.py`` checks them against
the schemas in the installed onnx package.
"""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# name -> (is_float, bits, signed); numpy_dtype(name) is its numpy dtype. The table holds no
# numpy object: the validator reads it, and `sonnx validate` starts without numpy (issue 28)
_TYPES: dict[str, tuple[bool, int, bool]] = {
    "float16": (True, 16, True), "bfloat16": (True, 16, True), "float": (True, 32, True), "double": (True, 64, True),
    **{f"{'' if signed else 'u'}int{bits}": (False, bits, signed) for signed in (True, False) for bits in (8, 16, 32, 64)},
}
NUMERIC_TYPES = frozenset(_TYPES)


@lru_cache(maxsize=1)
def _numpy_types() -> dict[str, np.dtype]:
    """ONNX name -> numpy dtype (bfloat16: ml_dtypes'), made on the first call."""
    import ml_dtypes
    import numpy as np
    return {name: np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else
                           {"float": "float32", "double": "float64"}.get(name, name))
            for name in _TYPES}


@lru_cache(maxsize=1)
def _by_numpy_name() -> dict[str, str]:
    return {dt.name: name for name, dt in _numpy_types().items()}


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
    import numpy as np
    dt = np.dtype(dtype)
    native = dt.newbyteorder("=") if dt.byteorder not in ("|", "=") else dt
    return _by_numpy_name().get(native.name, native.name)


def numpy_dtype(name: str) -> np.dtype:
    return _numpy_types()[name]


def is_float(name: str) -> bool:
    return _TYPES[name][0]


def bits(name: str) -> int:
    return _TYPES[name][1]


def is_signed(name: str) -> bool:
    return _TYPES[name][2]


def name_of_tensor_proto(elem_type: int) -> str:
    """ONNX name of a ``TensorProto.DataType`` code (e.g. 1 -> "float")."""
    from .onnx_proto import TensorProto   # not onnx's package: `sonnx validate` starts without it

    try:
        return TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"unknown({elem_type})"
