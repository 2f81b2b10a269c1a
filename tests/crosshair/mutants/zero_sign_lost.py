"""A zero result loses its sign: the rounding to T returns +0.0 for every zero, so -0 + -0 gives
+0 (and -1 * 0 gives +0) where IEEE 754 keeps the sign."""
from sonnx.semantics.floats import round_to as _shipped


def round_to(name, x):
    r = _shipped(name, x)
    return 0.0 if r == 0 else r         # MUTANT: should keep the sign of a zero


PATCHES = {"sonnx.semantics.floats:round_to": round_to}
