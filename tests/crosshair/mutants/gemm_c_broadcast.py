"""C broadcast silently accepted: a C of shape (N,), (1, N), (M, 1), (1, 1), (1,) or () is
repeated over (M, N) instead of refused with GEMM-R4 (the other checks are kept)."""
from sonnx.errors import raise_if_any

from ._gemm_base import make_kernel


def _check(found):
    raise_if_any([v for v in found if v.requirement != "GEMM-R4"])    # MUTANT: R4 dropped


def _c_index(c, i, j, n):
    # numpy's broadcasting rule for C against (M, N), written out
    shape = (1,) * (2 - len(c.shape)) + tuple(c.shape)
    return (i if shape[0] > 1 else 0) * shape[1] + (j if shape[1] > 1 else 0)


KERNELS = {"gemm_reference": make_kernel(check=_check, c_index=_c_index)}
