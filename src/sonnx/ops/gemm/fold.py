"""The exact-mode accumulation of Gemm (GEMM-R7): the compiled fold, or a numpy fold without it.

``fold(ap, bp)`` returns S with ``S[i, j] = (...((0 + ap[i,0]*bp[0,j]) + ap[i,1]*bp[1,j]) ...)``:
l ascending, every product and every sum rounded to nearest even in the arrays' float type.
It is the inner loop of ``gemm_reference`` and of ``Impl.gemm`` in proofs/gemm.mlw, run for
many (i, j) at once.

The compiled fold (gemm/fold_ir.py, machine code made by llvmlite, the extra
``pip install sonnx[fast-exact]``) packs A' into panels of MR rows and B' into panels of NR
columns, padded with zeros to whole panels (the padding only fills rows and columns of S that
are cut off: no real element ever sees it), and keeps an MR x NR tile of S in vector registers
while l runs over a block of K; between blocks the partial sums wait in S. Why it gives the
reference's bits:
- each S[i, j] lives in one lane of one register, in one thread, and receives exactly the
  operations ``s = s + a*b`` for l ascending, the blocks of K in ascending order;
- the code has only separately rounded multiplies and adds (no fast-math flags, so LLVM may
  neither reorder nor contract them into a fused multiply-add; tests check inputs where an FMA
  would differ, and that the machine code has no FMA instruction).
Large products split their row panels among plain Python threads (the compiled code is called
through ctypes, which releases the GIL); that cannot change any element's value. Not OpenMP
(numba's ``prange`` was tried: its OpenMP backend kills a child process that forks after a
parallel call); threads started per call survive fork and concurrent callers.

Without llvmlite the numpy fold below gives the same bits, K passes over S, and says once that
it is slower.
"""
from __future__ import annotations

import os
import threading
import warnings
from typing import Callable, NamedTuple

from ...deferred import numpy as np  # imported on first use: the validator needs no numpy

from ...errors import SlowKernelWarning

# products smaller than this (M*K*N) run on one thread: starting threads would cost more
PARALLEL_WORK = 1 << 22
# K block: a panel of B' (KC x NR) stays in the level-1 cache while the row panels pass over it
KC = 256
# row chunk: the part of A' (KC columns) that should stay in the level-2 cache
MC_BYTES = 256 << 10
# set to 1 to use the numpy fold even when the compiled one is available (tests, comparisons)
FORCE_NUMPY_ENV = "SONNX_NUMPY_FOLD"

SLOW_WARNING = ("sonnx: the compiled exact Gemm kernel is unavailable (llvmlite is not "
                "installed); exact mode uses a bit-exact numpy fold that is many "
                "times slower. Install it with: pip install sonnx[fast-exact]")

_FOLD: list = []    # [kernels or None], once decided (a plain global: CrossHair bypasses caches)
_LOCK = threading.Lock()
_warned: list = []


# req: GEMM-R7
def _compiled():
    """The compiled kernels (``{dtype: Kernel}``, made at the first call in about 0.2-0.3 s with
    the import of llvmlite, nothing on disk), or None when llvmlite is missing or the numpy
    fold is forced."""
    if not _FOLD:
        with _LOCK:
            if not _FOLD:
                kernels = None
                if os.environ.get(FORCE_NUMPY_ENV) != "1":
                    try:
                        from .fold_ir import compile_folds
                        kernels = compile_folds()[0]
                    except ImportError:
                        kernels = None
                _FOLD.append(kernels)
    return _FOLD[0]


# req: GEMM-R7
def numpy_fold(ap: np.ndarray, bp: np.ndarray) -> np.ndarray:
    """The same fold with numpy, one l at a time over all (i, j): a rounded product array, then a
    rounded sum; two separate ufunc calls can never be fused, and float32 stays float32."""
    m, k = ap.shape
    s = np.zeros((m, bp.shape[1]), dtype=ap.dtype)
    p = np.empty_like(s)
    with np.errstate(all="ignore"):         # overflow and NaN are IEEE results here, not errors
        for l in range(k):
            np.multiply(ap[:, l:l + 1], bp[l], out=p)
            np.add(s, p, out=s)
    return s


def _padded(x: np.ndarray, rows: int) -> np.ndarray:
    """x (R, C), C-contiguous, with zero rows added up to ``rows`` rows (x itself when none)."""
    if x.shape[0] == rows and x.flags.c_contiguous and x.flags.aligned:
        return x
    out = np.zeros((rows, x.shape[1]), x.dtype)
    out[:x.shape[0]] = x
    return out


# req: GEMM-R7
def fold(ap: np.ndarray, bp: np.ndarray, threads: int | None = None) -> np.ndarray:
    """S = the ascending fold of products, for float32 or float64 ``ap`` (M, K), ``bp`` (K, N).
    ``threads``: how many threads share the work (default: one per core for large products);
    they take the column panels of B', or the row panels of A' when there are too few columns."""
    # GEMM-R7: the exact-mode accumulation (l ascending, separately rounded, no FMA)
    if ap.dtype != bp.dtype or ap.dtype not in (np.float32, np.float64):
        raise TypeError(f"fold: float32 or float64 operands of one type, got {ap.dtype}, {bp.dtype}")
    if ap.ndim != 2 or bp.ndim != 2 or ap.shape[1] != bp.shape[0]:
        raise ValueError(f"fold: inner dimensions differ: {ap.shape} x {bp.shape}")
    kernels = _compiled()
    if 0 in ap.shape or 0 in bp.shape:         # nothing to run: the empty sums are +0
        return np.zeros((ap.shape[0], bp.shape[1]), ap.dtype)
    if kernels is None:
        if not _warned:
            _warned.append(True)
            warnings.warn(SLOW_WARNING, SlowKernelWarning, stacklevel=2)
        return numpy_fold(ap, bp)
    return _fold_compiled(kernel_for(kernels[ap.dtype], bp.shape[1]), ap, bp, None, threads)


def kernel_for(kern, n: int):
    """The compiled kernel for B' (K, N): ``kern`` or one of its narrower variants, whichever
    issues the fewest vector operations per step over B''s column panels, zero padding included
    (a panel's vectors, plus about half of one for its broadcasts of A' and its loop), the
    narrowest of equals. Which one runs changes only the time, never a bit: every variant gives
    each element its own ascending fold."""
    return min((kern,) + tuple(kern.narrow), key=lambda v: (-(-n // v.nr) * (2 * v.nvec + 1), v.nr))


def _copied(s: np.ndarray, fresh: bool) -> np.ndarray:
    return s if fresh else s.copy()


class PackedB(NamedTuple):
    """B' (K, N) packed once for the compiled fold (``FixedB.packed``): what ``fold`` would pack
    on every call, kept for a B' that does not change (a model's weights)."""

    kern: object                # the compiled Kernel of B's type
    bpk: np.ndarray             # (column panels, K, NR), the last panel padded with zeros
    n: int


class FixedB:
    """A fixed B' (K, N) for many folds ``fold_fixed(ap)``, the same S as ``fold(ap, bp)`` bit
    for bit: B' packed now when the compiled fold is in use (else the numpy fold reads bp)."""

    def __init__(self, bp: np.ndarray):
        if bp.dtype not in (np.float32, np.float64) or bp.ndim != 2:
            raise TypeError(f"FixedB: a float32 or float64 matrix, got {bp.dtype} of rank {bp.ndim}")
        self.bp = np.ascontiguousarray(bp)
        kernels = _compiled()
        self.packed = None
        if kernels is not None and 0 not in bp.shape:
            k, n = bp.shape
            kern = kernel_for(kernels[bp.dtype], n)
            self.packed = PackedB(kern, _pack_b(kern, self.bp, 0, -(-n // kern.nr)), n)
            self._b_address = self.packed.bpk.ctypes.data
        # M -> the padded A' and S buffers of a one-thread fold (_fold_one), reused from call to
        # call; one caller at a time (another thread meanwhile takes the general path)
        self._scratch: dict = {}
        self._lock = threading.Lock()

    def fold(self, ap: np.ndarray, threads: int | None = None,
             finish: Callable[[np.ndarray, bool], np.ndarray] = _copied) -> np.ndarray:
        """finish(fold(ap, B'), fresh): ``ap`` (M, K) of B's type (the caller's guarantee, as a
        bound kernel's). ``finish`` makes the result from S (M, N) given as a new array
        (``fresh``: it may work in place) or as a view of a kept buffer that the next call
        overwrites (it must not return it): by default a copy of a view."""
        packed = self.packed
        if packed is None or 0 in ap.shape:
            return finish(fold(ap, self.bp, threads), True)
        k, n = self.bp.shape
        if threads is None and ap.shape[0] * k * n < PARALLEL_WORK and self._lock.acquire(blocking=False):
            try:
                return self._fold_one(ap, finish)
            finally:
                self._lock.release()
        return finish(_fold_compiled(packed.kern, ap, self.bp, packed.bpk, threads), True)

    # req: GEMM-R7
    def _fold_one(self, ap: np.ndarray, finish: Callable[[np.ndarray, bool], np.ndarray]) -> np.ndarray:
        """_fold_compiled on one thread (the same calls of the compiled fold over the same
        panels: the same bits), without its per-call allocations where padding needs buffers:
        the padded rows of A' and the padded S are kept (their pads stay zero: only the first M
        rows of A' are written, and S is zeroed before each fold) and S's first N columns
        given to ``finish`` as a view; the machine addresses are read once."""
        kern, bpk = self.packed.kern, self.packed.bpk
        m, k = ap.shape
        n = self.bp.shape[1]
        cpan = bpk.shape[0]
        sc = self._scratch.get(m)
        if sc is None:
            if len(self._scratch) >= 4:         # a caller with ever new M: keep a few
                self._scratch.clear()
            rows, cols = -(-m // kern.mr) * kern.mr, cpan * kern.nr
            apk = np.zeros((rows, k), ap.dtype) if rows != m else None
            s = np.zeros((rows, cols), ap.dtype) if cols != n else None
            sc = self._scratch[m] = (apk, None if apk is None else apk.ctypes.data,
                                     s, None if s is None else s.ctypes.data, rows // kern.mr)
        apk, a_address, s, s_address, rpan = sc
        if apk is None:                         # no padding: A' read in place, as _padded does
            if not (ap.flags.c_contiguous and ap.flags.aligned):
                ap = np.ascontiguousarray(ap)
            a_address = ap.ctypes.data
        else:
            apk[:m] = ap
        if s is None:                           # S has N columns: the result itself
            out = np.zeros((rpan * kern.mr, n), ap.dtype)
            s_address = out.ctypes.data
        else:
            s.fill(0)
        chunk = max(1, MC_BYTES // (KC * kern.mr * ap.itemsize))
        for p in range(0, rpan, chunk):
            kern.fold(a_address, self._b_address, s_address, k, cpan, p, min(rpan, p + chunk), 0, cpan, KC)
        if s is None:
            return finish(out if out.shape[0] == m else out[:m], True)
        return finish(s[:m, :n], False)


def _pack_b(kern, bp: np.ndarray, q0: int, q1: int, bpk: np.ndarray | None = None) -> np.ndarray:
    """B' (contiguous, K x N) by panels of NR columns, each KC x NR block contiguous (in L1 while
    the rows pass), for the column panels q0 .. q1-1 of ``bpk`` (made when None: every panel);
    the compiled pack copies whole panels, the last partial one (if any) is padded here."""
    k, n = bp.shape
    nr = kern.nr
    cpan = -(-n // nr)
    if bpk is None:
        bpk = np.empty((cpan, k, nr), bp.dtype)
    full = n // nr
    if q0 < min(q1, full):
        kern.pack(bp.ctypes.data, bpk.ctypes.data, k, n, q0, min(q1, full))
    if full < cpan and q0 <= full < q1:
        bpk[full] = 0
        bpk[full, :, :n - full * nr] = bp[:, full * nr:]
    return bpk


# req: GEMM-R7
def _fold_compiled(kern, ap: np.ndarray, bp: np.ndarray, bpk: np.ndarray | None,
                   threads: int | None) -> np.ndarray:
    """The compiled fold of ap (M, K) by bp (K, N), both non-empty and of one float type; ``bpk``:
    bp already packed (_pack_b), or None to pack it here (each thread its own panels)."""
    m, k = ap.shape
    n = bp.shape[1]
    mr, nr = kern.mr, kern.nr
    rpan, cpan = -(-m // mr), -(-n // nr)       # row panels of A', column panels of B'
    apk = _padded(ap, rpan * mr)                # read in place: MR rows stream in parallel
    prepacked = bpk is not None
    if not prepacked:
        if not (bp.flags.c_contiguous and bp.flags.aligned):
            bp = np.require(bp, requirements="CA")
        bpk = np.empty((cpan, k, nr), bp.dtype)
    s = np.zeros((rpan * mr, cpan * nr), ap.dtype)
    if threads is None:
        threads = (os.cpu_count() or 1) if m * k * n >= PARALLEL_WORK else 1
    threads = max(1, threads)

    def pack(q0, q1):
        if not prepacked:
            _pack_b(kern, bp, q0, q1, bpk)

    def run(p0, p1, q0, q1):
        # by chunks of row panels: a chunk's KC-column slice of A' stays in L2 while the B'
        # panels pass over it (each chunk runs its own K blocks, in ascending order)
        chunk = max(1, MC_BYTES // (KC * mr * ap.itemsize))
        for p in range(p0, p1, chunk):
            kern.fold(apk.ctypes.data, bpk.ctypes.data, s.ctypes.data, k, cpan,
                      p, min(p1, p + chunk), q0, q1, KC)

    if threads == 1:                            # no thread: the same work, in one call
        pack(0, cpan)
        run(0, rpan, 0, cpan)
    else:
        def columns(q0, q1):                    # a thread packs the panels it multiplies
            pack(q0, q1)
            run(0, rpan, q0, q1)

        if cpan >= threads:                     # threads share the column panels
            step = -(-cpan // threads)
            work = [(columns, (q, min(cpan, q + step))) for q in range(0, cpan, step)]
        else:                                   # too few columns: they share the row panels
            pack(0, cpan)
            step = -(-rpan // threads)
            work = [(run, (p, min(rpan, p + step), 0, cpan)) for p in range(0, rpan, step)]
        workers = [threading.Thread(target=f, args=a) for f, a in work[1:]]
        for w in workers:
            w.start()
        work[0][0](*work[0][1])
        for w in workers:
            w.join()
    if s.shape != (m, n):
        s = np.ascontiguousarray(s[:m, :n])
    return s
