"""A small tensor value for the reference kernels: element type, shape, flat row-major data.

It is the Python image of the Why3 model in proofs/tensor.mlw (shape + data), with no numpy
inside, so that the reference kernels stay plain loops a reader can hold beside the proofs.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import dtypes


class TensorValue(NamedTuple):
    dtype: str                 # ONNX element type name, e.g. "float", "int8"
    shape: tuple[int, ...]
    data: list                 # row-major; Python int for integer types, float otherwise


def size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def from_numpy(x: np.ndarray) -> TensorValue:
    name = dtypes.name_of(x.dtype)
    flat = np.ascontiguousarray(x).reshape(-1)
    # float16/bfloat16/float32 values are exact in float64, so nothing is rounded here
    # (ml_dtypes flags the conversion of a NaN as "invalid"; the NaN itself is kept)
    with np.errstate(invalid="ignore"):
        data = flat.astype(np.float64).tolist() if dtypes.is_float(name) else flat.tolist()
    return TensorValue(name, tuple(int(d) for d in x.shape), data)


def to_numpy(t: TensorValue) -> np.ndarray:
    target = dtypes.numpy_dtype(t.dtype)
    if dtypes.is_float(t.dtype):
        # every value is representable in the target type, so the conversion is exact
        arr = np.array(t.data, dtype=np.float64).astype(target)
    else:
        arr = np.array(t.data, dtype=target)
    return arr.reshape(t.shape)
