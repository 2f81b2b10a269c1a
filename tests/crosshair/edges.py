"""The grid the harnesses range over: shapes, element types, and each type's edge values."""
from __future__ import annotations

import math

from sonnx import dtypes
from sonnx.semantics.floats import FORMATS
from sonnx.semantics.values import int_range

SHAPES: tuple[tuple[int, ...], ...] = ((), (4,), (2, 3), (3, 2), (2, 1, 2))   # rank 0..3, non-square
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
FLOATS = ("float16", "bfloat16", "float", "double")


def int_edges(dtype: str) -> list[int]:
    """The ends of T's range and their neighbours, -1..2, and 2**(bits/2) and its neighbours
    (products just wrap there; sums wrap at the ends)."""
    lo, hi = int_range(dtype)
    mid = 1 << (dtypes.bits(dtype) // 2)
    vals = [lo, lo + 1, -1, 0, 1, 2, mid - 1, mid, mid + 1, hi - 1, hi]
    return sorted({v for v in vals if lo <= v <= hi})


def float_edges(dtype: str) -> list[float]:
    """Edge values of a float type: zeros, the subnormal and normal ends, max, infinities, NaN,
    values whose products are ties (1 + ulp, 1.5, 3) and overflow (sqrt(max) * 2)."""
    p, emin, emax = FORMATS[dtype]
    ulp1 = math.ldexp(1.0, 1 - p)
    tiny = math.ldexp(1.0, emin - p + 1)
    maxf = math.ldexp(float(2**p - 1), emax - p + 1)
    return [0.0, -0.0, tiny, -tiny, math.ldexp(1.0, emin), math.ldexp(1.0, emin) - tiny, 0.5,
            1.0, -1.0, 1.0 + ulp1, 1.0 + 3 * ulp1, 1.5, -3.0, 1.0 - ulp1 / 2,
            math.ldexp(1.0, emax // 2 + 1), maxf, -maxf, math.inf, -math.inf, math.nan]


def product_ties(dtype: str) -> list[float]:
    """Values whose pairwise products include exact ties in ``dtype`` (1.5 * (1 + ulp) is
    halfway between two neighbours), tiny ones rounding to zero, and ones that are exact."""
    p, emin, _ = FORMATS[dtype]
    ulp1 = math.ldexp(1.0, 1 - p)
    return [1.0 + ulp1, 1.5, -(1.0 + 3 * ulp1), 3.0, math.ldexp(1.0, emin - p + 1), 0.5]


def sum_ties(dtype: str) -> list[float]:
    """Values whose pairwise sums include exact ties in ``dtype`` (1 + ulp/2 is halfway between
    1 and 1 + ulp: even is below; (1 + ulp) + ulp/2: even is above; the same negated), sums
    that are exact, and -0.0 (-0 + -0 is -0, -0 + 0 is +0)."""
    p, _, _ = FORMATS[dtype]
    ulp1 = math.ldexp(1.0, 1 - p)
    return [1.0, 1.0 + ulp1, ulp1 / 2, -1.0, -(1.0 + ulp1), -ulp1 / 2, -0.0, 0.0]
