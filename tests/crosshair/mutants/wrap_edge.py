"""Wrong wrap edge: `r > m // 2` instead of `>=`, so the int8 product 128 stays 128 (out of range)."""
from ._base import make_kernel


def wrap(x, bits, signed):
    m = 2 ** bits
    r = x % m
    if signed and r > m // 2:          # MUTANT: should be >=
        r = r - m
    return r


KERNELS = {"mul_reference": make_kernel(wrap=wrap)}
