"""Integer accumulation saturating instead of wrapping: every product and partial sum of an
integer Gemm is clamped to T's min or max where the profile reduces it modulo 2^bits."""
from ._gemm_base import make_kernel


def saturate(x, bits, signed):
    lo = -(1 << (bits - 1)) if signed else 0
    hi = lo + (1 << bits) - 1
    return min(max(x, lo), hi)          # MUTANT: clamps where the profile wraps


KERNELS = {"gemm_reference": make_kernel(wrap=saturate)}
