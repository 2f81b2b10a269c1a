"""k loop one short: the sum over k stops at K - 2, so the last product A'[i, K-1] * B'[K-1, j]
never reaches Y (for K = 1, Y is alpha * 0 + beta * C)."""
from ._gemm_base import make_kernel

KERNELS = {"gemm_reference": make_kernel(k_loop=lambda k: range(k - 1))}    # MUTANT: range(k)
