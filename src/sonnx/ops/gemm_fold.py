"""The exact-mode accumulation of Gemm (GEMM-R7), compiled with numba.

``fold(ap, bp)`` returns S with ``S[i, j] = (...((0 + ap[i,0]*bp[0,j]) + ap[i,1]*bp[1,j]) ...)``:
l ascending, every product and every sum rounded to nearest even in the arrays' float type.
It is the inner loop of ``gemm_reference`` and of ``Impl.gemm`` in proofs/gemm.mlw, run for
many (i, j) at once.

Why the compiled code gives the same bits as the reference:
- each S[i, j] is computed by one thread, in one sequence of operations, l ascending; the
  SIMD lanes of the j loop hold different elements, so no sum is ever reassociated;
- numba compiles without fast-math, so LLVM neither reorders nor contracts ``s + a * b``
  into a fused multiply-add (tests/ops/test_gemm.py checks inputs where an FMA would differ,
  and that the generated code has no FMA instruction).
Rows are taken four at a time so that each row of ``bp`` is loaded once for four rows of S.
Large products split their rows among plain Python threads (the kernel releases the GIL),
which cannot change any element's value. Not numba's ``prange``: its OpenMP backend kills a
child process that forks after a parallel call, and its fallback backend aborts on concurrent
calls; threads started per call have neither problem.
numba is imported on first use: validating models or running Mul never pays for it.
"""
from __future__ import annotations

import os
import threading

import numpy as np

# req: GEMM-R7
# how the fold is compiled; no fastmath: it would allow reassociation and FMA contraction
JIT_OPTIONS = {"nogil": True}
# products smaller than this (M*K*N) run on one thread: starting threads would cost more
PARALLEL_WORK = 1 << 22


# req: GEMM-R7
def python_fold():
    """The fold as a Python function, before compilation (tests compile it uncached to read its
    machine code: numba does not show the code of a function loaded from its disk cache)."""
    def _fold(ap, bp, s, r0, r1):       # rows r0 .. r1-1 of S
        k = ap.shape[1]
        n = bp.shape[1]
        for blk in range((r1 - r0 + 3) // 4):
            i0 = r0 + blk * 4
            if i0 + 4 <= r1:
                s0 = s[i0]
                s1 = s[i0 + 1]
                s2 = s[i0 + 2]
                s3 = s[i0 + 3]
                for j in range(n):
                    s0[j] = 0.0
                    s1[j] = 0.0
                    s2[j] = 0.0
                    s3[j] = 0.0
                for l in range(k):
                    a0 = ap[i0, l]
                    a1 = ap[i0 + 1, l]
                    a2 = ap[i0 + 2, l]
                    a3 = ap[i0 + 3, l]
                    b = bp[l]
                    for j in range(n):
                        bj = b[j]
                        s0[j] = s0[j] + a0 * bj
                        s1[j] = s1[j] + a1 * bj
                        s2[j] = s2[j] + a2 * bj
                        s3[j] = s3[j] + a3 * bj
            else:                               # the last rows, fewer than four
                for i in range(i0, r1):
                    si = s[i]
                    for j in range(n):
                        si[j] = 0.0
                    for l in range(k):
                        a = ap[i, l]
                        b = bp[l]
                        for j in range(n):
                            si[j] = si[j] + a * b[j]

    return _fold


# the only two specialisations: C-contiguous, aligned, writable float32 / float64 matrices
SIGNATURES = ["void(float32[:, ::1], float32[:, ::1], float32[:, ::1], int64, int64)",
              "void(float64[:, ::1], float64[:, ::1], float64[:, ::1], int64, int64)"]


_FOLD = []   # the compiled fold, once made (a plain global: CrossHair bypasses functools caches)


# req: GEMM-R7
def _compiled():
    """Both specialisations, compiled at the first call (about 1.5 s) or loaded from numba's
    disk cache (about 0.2 s); nothing is compiled later, whatever the arrays' layout."""
    if not _FOLD:
        from numba import njit
        try:
            fold_fn = njit(SIGNATURES, cache=True, **JIT_OPTIONS)(python_fold())
        except RuntimeError:    # numba finds no writable cache folder: compile in memory only
            fold_fn = njit(SIGNATURES, cache=False, **JIT_OPTIONS)(python_fold())
        _FOLD.append(fold_fn)
    return _FOLD[0]


# req: GEMM-R7
def fold(ap: np.ndarray, bp: np.ndarray, threads: int | None = None) -> np.ndarray:
    """S = the ascending fold of products, for float32 or float64 ``ap`` (M, K), ``bp`` (K, N).
    ``threads``: how many threads share the rows (default: one per core for large products)."""
    # GEMM-R7: the exact-mode accumulation (l ascending, separately rounded, no FMA)
    if ap.dtype != bp.dtype or ap.dtype not in (np.float32, np.float64):
        raise TypeError(f"fold: float32 or float64 operands of one type, got {ap.dtype}, {bp.dtype}")
    ap = np.require(ap, requirements="CAW")     # the layout of SIGNATURES (copies if needed)
    bp = np.require(bp, requirements="CAW")
    m, k = ap.shape
    n = bp.shape[1]
    if ap.shape[1] != bp.shape[0]:
        raise ValueError(f"fold: inner dimensions differ: {ap.shape} x {bp.shape}")
    s = np.empty((m, n), dtype=ap.dtype)
    kernel = _compiled()
    if threads is None:
        threads = (os.cpu_count() or 1) if m * k * n >= PARALLEL_WORK else 1
    step = -(-m // max(1, threads) // 4) * 4 or 4        # whole 4-row blocks per thread
    bounds = [(r, min(m, r + step)) for r in range(0, m, step)]
    workers = [threading.Thread(target=kernel, args=(ap, bp, s, r0, r1)) for r0, r1 in bounds[1:]]
    for w in workers:
        w.start()
    kernel(ap, bp, s, *bounds[0])
    for w in workers:
        w.join()
    return s
