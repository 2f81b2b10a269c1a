"""What a value of an element type is, and when two results are the same: the helpers every
contract, harness and test states the semantics with (no numpy in the decisions)."""
from __future__ import annotations

import math

from .. import dtypes
from . import floats


def int_range(dtype: str) -> tuple[int, int]:
    """The values of an integer type: [-2**(bits-1), 2**(bits-1)) or [0, 2**bits)."""
    n = dtypes.bits(dtype)
    lo = -(1 << (n - 1)) if dtypes.is_signed(dtype) else 0
    return lo, lo + (1 << n) - 1


# req: @rounding
def is_element_of(dtype: str, v) -> bool:
    """``v`` is a value of element type ``dtype`` (NaN and the infinities included for floats)."""
    if dtypes.is_float(dtype):
        return isinstance(v, float) and (math.isnan(v) or math.isinf(v) or floats.is_value_of(dtype, v))
    lo, hi = int_range(dtype)
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def same_value(dtype: str, x, y) -> bool:
    """``x`` and ``y`` are the same value of ``dtype``: equal, with a zero's sign compared for
    floats and any NaN equal to any NaN (the profile does not fix NaN payloads)."""
    if dtypes.is_float(dtype):
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)
    return x == y
