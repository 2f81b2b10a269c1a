"""Integer accumulation saturating instead of wrapping: every product and partial sum of an
integer Gemm is clamped to T's min or max where the profile reduces it modulo 2^bits."""


def wrap(x, bits, signed):
    lo = -(1 << (bits - 1)) if signed else 0
    hi = lo + (1 << bits) - 1
    return min(max(x, lo), hi)          # MUTANT: clamps where the profile wraps


PATCHES = {"sonnx.semantics.intloops:wrap": wrap}
