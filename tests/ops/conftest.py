"""Helpers shared by the operator tests."""
from __future__ import annotations

import numpy as np

from sonnx import dtypes

_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def assert_same_bits(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal dtype, shape and bits; a NaN matches any NaN (IEEE 754 leaves payloads open)."""
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    a = np.ascontiguousarray(actual).reshape(-1)
    e = np.ascontiguousarray(expected).reshape(-1)
    if dtypes.is_float(dtypes.name_of(a.dtype)):
        nan_a = np.isnan(a.astype(np.float64))
        nan_e = np.isnan(e.astype(np.float64))
        assert np.array_equal(nan_a, nan_e), f"NaN positions differ: {np.flatnonzero(nan_a != nan_e)[:10]}"
        a, e = a[~nan_a], e[~nan_e]
    ua = a.view(_UINT_OF_SIZE[a.dtype.itemsize])
    ue = e.view(_UINT_OF_SIZE[e.dtype.itemsize])
    bad = np.flatnonzero(ua != ue)
    assert bad.size == 0, f"{bad.size} elements differ, first at {bad[:5]}: {a[bad[:5]]} vs {e[bad[:5]]}"


def edge_values(name: str) -> np.ndarray:
    """The values where a product's or a sum's semantics is easiest to get wrong, for one type
    (1 + eps/2 and (1 + eps) + 3eps/2 are ties of a sum; eps/2 is below 1's ulp)."""
    dt = dtypes.numpy_dtype(name)
    if dtypes.is_float(name):
        import ml_dtypes
        info = ml_dtypes.finfo(dt)
        tiny_sub = float(info.smallest_subnormal)
        vals = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -3.0, 1.0 / 3.0, float(info.max), -float(info.max),
                float(info.smallest_normal), -float(info.smallest_normal), tiny_sub, -tiny_sub,
                tiny_sub * 3, float(info.eps), 1.0 + float(info.eps), -1.0 - float(info.eps),
                float(info.eps) / 2, 3 * float(info.eps) / 2, np.inf, -np.inf, np.nan,
                float(np.sqrt(float(info.max))) * 1.5, float(np.sqrt(float(info.smallest_normal)))]
        return np.array(vals, dtype=np.float64).astype(dt)
    info = np.iinfo(dt)
    vals = {0, 1, 2, 3, info.max, info.max - 1, info.min, info.min + 1, info.max // 2, info.max // 2 + 1}
    if info.min < 0:
        vals |= {-1, -2, -3}
    return np.array(sorted(vals), dtype=dt)


def cross(name: str) -> tuple[np.ndarray, np.ndarray]:
    """All pairs of edge values, as two flat arrays of the same shape."""
    v = edge_values(name)
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.reshape(-1).copy(), b.reshape(-1).copy()
