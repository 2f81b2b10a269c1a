"""IEEE 754 rounding to nearest, ties to even, written out in plain Python.

The reference kernels compute a product exactly in Python's double (it is exact for
float16, bfloat16 and float32 operands) and round it once with ``round_to``. Writing the
rounding here, rather than calling numpy, keeps the reference independent of the code
it is used to check.
"""
from __future__ import annotations

import math
from fractions import Fraction

import icontract

from .tensor import FULL_CONTRACTS

# name -> (precision p in bits including the hidden one, emin, emax)
FORMATS = {
    "float16": (11, -14, 15),
    "bfloat16": (8, -126, 127),
    "float": (24, -126, 127),
    "double": (53, -1022, 1023),
}


# ---------------------------------------------------------------- the rounding rule, as a spec
# An independent statement of IEEE 754 round-to-nearest-even on exact rationals (Fraction), used
# by the contracts below and in mul.py. It shares no step with ``round_to``: no frexp, ldexp or
# round(); it says what the result is, not how to compute it.

def is_negative(v: float) -> bool:
    """The sign bit of ``v`` (set for -0.0 and -inf, as for any negative value)."""
    return math.copysign(1.0, v) < 0


def max_finite(name: str) -> Fraction:
    """The largest finite value of format ``name``: (2**p - 1) * 2**(emax - p + 1)."""
    p, _, emax = FORMATS[name]
    return Fraction(2**p - 1) * Fraction(2) ** (emax - p + 1)


def _binade(v: Fraction) -> int:
    """The e with 2**e <= |v| < 2**(e+1), for v != 0 (exact, on integers)."""
    n, d = abs(v.numerator), v.denominator
    e = n.bit_length() - d.bit_length()
    if (n << max(-e, 0)) < (d << max(e, 0)):
        e -= 1
    return e


def quantum(name: str, v: Fraction) -> Fraction:
    """The spacing of the values of ``name`` in the binade of ``v`` (fixed below 2**emin)."""
    p, emin, _ = FORMATS[name]
    e = emin if v == 0 else max(_binade(v), emin)
    return Fraction(2) ** (e - p + 1)


def is_value_of(name: str, r: float) -> bool:
    """``r`` is a finite value of format ``name``: a multiple of its binade's quantum, not above max."""
    if math.isnan(r) or math.isinf(r):
        return False
    v = Fraction(r)
    return abs(v) <= max_finite(name) and (v / quantum(name, v)).denominator == 1


# req: @rounding
def is_rounded(name: str, exact: Fraction, r: float) -> bool:
    """``r`` is ``exact`` rounded to nearest, ties to even, in format ``name`` (IEEE 754 RNE).

    Overflow: |exact| at or above max + half an ulp of max rounds to a signed infinity. Otherwise
    r is a value of the format, a multiple of the quantum q of exact's binade, at most q/2 away,
    and an even multiple on a tie. A zero result keeps the sign of a non-zero ``exact``.
    """
    p, _, emax = FORMATS[name]
    overflow = Fraction(2) ** emax * (2 - Fraction(1, 2**p))
    if abs(exact) >= overflow:
        return math.isinf(r) and (r > 0) == (exact > 0)
    if not is_value_of(name, r):
        return False
    if exact == 0:
        return r == 0
    if r == 0 and (math.copysign(1.0, r) > 0) != (exact > 0):
        return False
    q = quantum(name, exact)
    k = Fraction(r) / q
    dist = abs(exact - Fraction(r))
    return k.denominator == 1 and (dist < q / 2 or (dist == q / 2 and k.numerator % 2 == 0))


def _round_to_ok(name: str, x: float, result: float) -> bool:
    if math.isnan(x):
        return math.isnan(result)
    if math.isnan(result) or math.copysign(1.0, result) != math.copysign(1.0, x):
        return False
    if math.isinf(x):
        return result == x
    return is_rounded(name, Fraction(x), result)


# req: @rounding
@icontract.require(lambda name: name in FORMATS, enabled=FULL_CONTRACTS)
@icontract.ensure(lambda name, x, result: _round_to_ok(name, x, result),
                  "RNE in the format: nearest value, ties to even, overflow to inf, sign kept",
                  enabled=FULL_CONTRACTS)
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
