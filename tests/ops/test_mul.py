"""Mul's own tests: values whose products are worth spelling out, and the ONNX cases of Mul.
Everything every element-wise operator gets (kernel against reference, refusals, ONNX node
cases, onnxruntime, every half-precision value) is in test_elementwise.py."""
from __future__ import annotations

import numpy as np
import pytest

import sonnx
from sonnx.semantics.tensor import from_numpy, to_numpy
from sonnx.ops import mul as mul_op

from .test_elementwise import onnx_cases


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return to_numpy(mul_op.mul_reference(from_numpy(a), from_numpy(b)))


@pytest.mark.req("MUL-R3")
def test_integer_extremes_wrap():
    assert sonnx.mul(np.array([-128], np.int8), np.array([-1], np.int8))[0] == -128
    assert reference(np.array([-128], np.int8), np.array([-1], np.int8))[0] == -128
    big = np.array([2**64 - 1, 2**63], np.uint64)
    two = np.array([2, 2], np.uint64)
    assert sonnx.mul(big, two).tolist() == [2**64 - 2, 0]
    assert reference(big, two).tolist() == [2**64 - 2, 0]
    assert sonnx.mul(np.array([2**31 - 1], np.int32), np.array([2], np.int32))[0] == -2


@pytest.mark.req("MUL-R3")
def test_float_special_values():
    f = np.float32
    out = sonnx.mul(np.array([np.inf, 0.0, -0.0, np.nan, 3e38, 1e-45], f),
                    np.array([0.0, -1.0, -1.0, 1.0, 10.0, 0.5], f))
    assert np.isnan(out[0]) and np.isnan(out[3])
    assert out[1] == 0 and np.signbit(out[1])
    assert out[2] == 0 and not np.signbit(out[2])
    assert out[4] == np.inf
    assert out[5] == 0.0  # 1e-45 * 0.5 is a tie between 0 and the smallest subnormal: even wins


def test_onnx_ships_the_expected_mul_cases():
    assert len(onnx_cases("Mul", same_shape=True)) == 8
    assert onnx_cases("Mul", same_shape=False) == ["test_mul_bcast"]
