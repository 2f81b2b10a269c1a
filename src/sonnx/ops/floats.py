"""IEEE 754 rounding to nearest, ties to even, written out in plain Python.

The reference kernels compute a product exactly in Python's double (it is exact for
float16, bfloat16 and float32 operands) and round it once with ``round_to``. Writing the
rounding here, rather than calling numpy, keeps the reference independent of the code
it is used to check.
"""
from __future__ import annotations

import math

# name -> (precision p in bits including the hidden one, emin, emax)
FORMATS = {
    "float16": (11, -14, 15),
    "bfloat16": (8, -126, 127),
    "float": (24, -126, 127),
    "double": (53, -1022, 1023),
}


def round_to(name: str, x: float) -> float:
    """The value of format ``name`` nearest to ``x`` (ties to even), as a Python float.

    Overflow gives a signed infinity; a zero result keeps the sign of ``x``; NaN stays NaN.
    """
    if name == "double" or math.isnan(x) or math.isinf(x) or x == 0.0:
        return x
    p, emin, emax = FORMATS[name]
    _, e = math.frexp(x)                   # x = m * 2**e with 0.5 <= |m| < 1
    q = max(e - 1, emin) - (p - 1)         # exponent of the last kept bit (subnormals: fixed)
    r = round(math.ldexp(x, -q))           # exact scaling; round() ties to even
    if r == 0:
        return math.copysign(0.0, x)
    y = math.ldexp(float(r), q)
    max_finite = math.ldexp(float(2**p - 1), emax - p + 1)
    if abs(y) > max_finite:
        return math.copysign(math.inf, x)
    return y
