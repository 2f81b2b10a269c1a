"""Rounding ties away from zero instead of to even (a common hand-written rounding)."""
import math

from sonnx.semantics import floats


def round_to(name, x):
    if name == "double" or math.isnan(x) or math.isinf(x) or x == 0.0:
        return x
    p, emin, emax = floats.FORMATS[name]
    _, e = math.frexp(x)
    q = max(e - 1, emin) - (p - 1)
    s = math.ldexp(x, -q)
    r = math.copysign(math.floor(abs(s) + 0.5), s)        # MUTANT: ties away from zero
    if r == 0:
        return math.copysign(0.0, x)
    y = math.ldexp(float(r), q)
    if abs(y) > math.ldexp(float(2**p - 1), emax - p + 1):
        return math.copysign(math.inf, x)
    return y


PATCHES = {"sonnx.semantics.floats:round_to": round_to}
