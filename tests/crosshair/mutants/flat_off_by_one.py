"""Off-by-one in the flat index: element i of C is A[i] * B[i - 1] (B[-1] for i = 0, silently)."""
from ._base import make_kernel

KERNELS = {"mul_reference": make_kernel(b_index=lambda i: i - 1)}    # MUTANT: should be i
