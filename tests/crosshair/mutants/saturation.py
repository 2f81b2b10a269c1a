"""Saturation instead of wrap-around: an out-of-range product is clamped to T's min or max."""
from ._base import make_kernel


def saturate(x, bits, signed):
    lo = -(1 << (bits - 1)) if signed else 0
    hi = lo + (1 << bits) - 1
    return min(max(x, lo), hi)          # MUTANT: clamps where the profile wraps


KERNELS = {"mul_reference": make_kernel(wrap=saturate)}
