"""A small tensor value for the reference kernels: element type, shape, flat row-major data.

It is the Python image of the Why3 model in proofs/tensor.mlw (shape + data), with no numpy
inside, so that the reference kernels stay plain loops a reader can hold beside the proofs.
"""
from __future__ import annotations

import os
from typing import NamedTuple

import icontract
from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes


# Per-element contracts (the full spec at every element) cost far more than the kernels they
# check; they are attached only with SONNX_CONTRACTS=full (set by the CrossHair runner, and by
# anyone who wants them enforced at run time). Shape, type and refusal contracts are always on.
FULL_CONTRACTS = os.environ.get("SONNX_CONTRACTS", "") == "full"


class TensorValue(NamedTuple):
    dtype: str                 # ONNX element type name, e.g. "float", "int8"
    shape: tuple[int, ...]
    data: list                 # row-major; Python int for integer types, float otherwise


# req: @same-shape
@icontract.ensure(lambda shape, result: result == _product_of(shape), "number of elements")
def size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _product_of(dims) -> int:
    # spec of size(): the product, folded from the right (the code folds from the left)
    return dims[0] * _product_of(dims[1:]) if len(dims) else 1


def _in_bounds(shape: tuple[int, ...], index: tuple[int, ...]) -> bool:
    return len(index) == len(shape) and all(0 <= i < d for i, d in zip(index, shape))


def _offset_spec(shape: tuple[int, ...], index: tuple[int, ...]) -> int:
    # row-major offset as a sum of index * stride, stride = product of the later dimensions
    return sum(index[k] * _product_of(shape[k + 1:]) for k in range(len(shape)))


# a same-shape operator: the element at a multi-index of its operands and result is found at
# the same flat offset
@icontract.require(lambda shape, index: _in_bounds(shape, index))
@icontract.ensure(lambda shape, result: 0 <= result < _product_of(shape))
@icontract.ensure(lambda shape, index, result: result == _offset_spec(shape, index))
def flat_index(shape: tuple[int, ...], index: tuple[int, ...]) -> int:
    """Row-major flat offset of ``index`` in a tensor of ``shape`` (Horner form, as in
    proofs/tensor.mlw)."""
    off = 0
    for k in range(len(shape)):
        off = off * shape[k] + index[k]
    return off


@icontract.require(lambda shape, flat: all(d > 0 for d in shape) and 0 <= flat < _product_of(shape))
@icontract.ensure(lambda shape, result: _in_bounds(shape, result))
@icontract.ensure(lambda shape, flat, result: _offset_spec(shape, result) == flat)
def unravel_index(shape: tuple[int, ...], flat: int) -> tuple[int, ...]:
    """The multi-index whose row-major flat offset in ``shape`` is ``flat``."""
    idx = [0] * len(shape)
    for k in reversed(range(len(shape))):
        idx[k] = flat % shape[k]
        flat //= shape[k]
    return tuple(idx)


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
