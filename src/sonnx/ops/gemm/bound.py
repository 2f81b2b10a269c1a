"""GEMM-R7's fast-mode error bound (spec/gemm.md): a vectorised float64 check that only ever
accepts, and the exact check on rationals for everything it does not accept.

One source of truth for "is this Gemm/MatMul result within the profile's bound": the operator
tests (tests/ops/test_gemm.py), the end-to-end tests and ``sonnx run --compare`` call it.
Y* is the real-number result alpha * A'B' + beta * C of the given (finite) operands; with u and
eta the unit roundoff and smallest subnormal of the accumulation type, gamma = (K+2)u/(1-(K+2)u),
S = |alpha| sum |a b| + |beta| |c|, an element y is within the bound when

    |y - Y*| <= u_T |Y*| + (1 + u_T) (gamma S + (|alpha| K + 2) eta) + eta_T / 2

(u_T, eta_T of the result type T; 0 when T is the accumulation type itself).

``outside_bound_exact`` decides this for every element with Fractions (exact, about 12 us per
product: hours for a large layer). ``outside_bound`` gives the same answer in seconds: a float64
screen (``_screen``) accepts the elements it can prove within the bound, and only the others go
to the exact check, element by element, in the same row-major order. The screen is sound by the
argument below; it may leave an element to the exact check (near the bound, overflow, huge or
tiny magnitudes), never accept one the exact check refuses (tests/ops/test_gemm_bound.py).

Why the screen is sound (float64, round to nearest even: every call runs under fpenv.guarded;
u64 = 2^-53, tiny = 2^-1074, g = gamma_K of float64 = K u64 / (1 - K u64)):
1. D = sum_l a_l b_l and T = sum_l |a_l b_l| are folded by numpy in ascending l, one rounded
   multiply and one rounded add per term (separate ufunc calls: no FMA). Each term takes at most
   K roundings, and a product may underflow with an absolute error of at most tiny/2 (a sum
   never does: a subnormal sum is exact), so with P = sum a b and Q = sum |a b| (exact):
   |D - P| <= g Q + K tiny and |T - Q| <= g Q + K tiny (Higham, Accuracy and Stability, 3.1).
   Hence Q <= (T + K tiny) / (1 - g) and Q >= (T - K tiny) / (1 + g).
2. Yh = alpha D + beta c in float64: |Yh - Y*| <= |alpha| (g Q + K tiny) + 2 u64 (|alpha D| +
   |beta c|) + 2 tiny =: E (alpha and beta are float32 values, exact in float64).
3. The bound is increasing in |Y*| and in S, so it is at least its value at |Y*| >= |Yh| - E
   and S >= |alpha| Q_low + |beta c|: that value is Blow.
4. |y - Y*| <= |y - Yh| + E. The element is accepted when the computed (|y - Yh| + E) <= Blow
   after every computed quantity above has been moved the safe way by a relative 2^-40 (the
   few float64 operations that compute E and Blow from D and T err by at most 8 u64 = 2^-50
   relative, plus an absolute tiny each, covered by an absolute 2^-1000).
Overflow of float64 (an infinity or NaN in Blow or the left side) is never accepted.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

import numpy as np

from ... import dtypes, fpenv
from ...semantics.floats import FORMATS
from . import accumulation_type


def _format(name: str) -> tuple[Fraction, Fraction]:
    p, emin, _ = FORMATS[name]
    return Fraction(1, 2**p), Fraction(2) ** (emin - p + 1)     # unit roundoff u, smallest subnormal


def _as_float(x: Fraction) -> float:
    """x rounded to a float for a message; beyond double's range an infinity of its sign."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


class _Operands:
    """The operands as float64 matrices A' (M, K), B' (K, N), C (M, N) or None, and the constants
    of the bound; ValueError for a non-finite operand."""

    def __init__(self, a, b, c, alpha, beta, trans_a, trans_b, acc):
        name = dtypes.name_of(a.dtype)
        self.acc = acc or accumulation_type(name)
        self.u, self.eta = _format(self.acc)
        self.u_t, self.eta_t = (Fraction(0), Fraction(0)) if self.acc == name else _format(name)
        self.ap = (a.T if trans_a else a).astype(np.float64)
        self.bp = (b.T if trans_b else b).astype(np.float64)
        self.c = None if c is None else c.astype(np.float64)
        for what, x in (("A", self.ap), ("B", self.bp), ("C", self.c)):
            if x is not None and not np.all(np.isfinite(x)):
                raise ValueError(f"operand {what} holds an infinity or a NaN; GEMM-R7's bound is stated "
                                 "for finite operands")
        self.m, self.k = self.ap.shape
        self.n = self.bp.shape[1]
        self.alpha, self.beta = float(alpha), float(beta)
        self.gamma = (self.k + 2) * self.u / (1 - (self.k + 2) * self.u)

    def exact(self, y: np.ndarray, i: int, j: int) -> tuple | None:
        """The element (i, j) judged on rationals: None when within the bound, else (i, j, y_ij,
        Y*_ij, bound) as floats (for messages)."""
        al, be = Fraction(self.alpha), Fraction(self.beta)
        products = [Fraction(x) * Fraction(z) for x, z in zip(self.ap[i].tolist(), self.bp[:, j].tolist())]
        exact = al * sum(products)
        s = abs(al) * sum(abs(p) for p in products)
        if self.c is not None:
            cij = Fraction(float(self.c[i, j]))
            exact += be * cij
            s += abs(be) * abs(cij)
        e_acc = self.gamma * s + (abs(al) * self.k + 2) * self.eta
        bound = self.u_t * abs(exact) + (1 + self.u_t) * e_acc + self.eta_t / 2
        yij = float(y[i, j])
        if math.isfinite(yij) and abs(Fraction(yij) - exact) <= bound:
            return None
        return (i, j, yij, _as_float(exact), _as_float(bound))


# a screen of at least this many products (M*K*N) reports its progress, in tenths
PROGRESS_WORK = 1 << 26
UP, DOWN = 1 + 2.0 ** -40, 1 - 2.0 ** -40      # the relative margins of point 4 (module docstring)
ABS = 2.0 ** -1000                             # and the absolute one
TINY = 2.0 ** -1074


@fpenv.guarded     # the soundness argument is about round to nearest even, subnormals kept
def _sums(op: _Operands, progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """D and T of point 1 (module docstring): the operands' part of the screen, the O(MKN) work,
    computed once for every result judged against the same operands. ``progress(percent)`` is
    called at each tenth of a large product."""
    m, k, n = op.m, op.k, op.n
    at = np.ascontiguousarray(op.ap.T)            # row l: column l of A', contiguous
    aat, abp = np.abs(at), np.abs(op.bp)
    d = np.zeros((m, n))
    t = np.zeros((m, n))
    p = np.empty((m, n))
    tenths = progress is not None and m * k * n >= PROGRESS_WORK
    next_tenth = 1
    with np.errstate(all="ignore"):               # overflow gives inf/NaN: then not accepted
        for l in range(k):                        # point 1: ascending l, separately rounded
            np.multiply(at[l][:, None], op.bp[l], out=p)
            np.add(d, p, out=d)
            np.multiply(aat[l][:, None], abp[l], out=p)
            np.add(t, p, out=t)
            while tenths and next_tenth <= 10 and (l + 1) * 10 >= next_tenth * k:
                progress(10 * next_tenth)
                next_tenth += 1
    return d, t


@fpenv.guarded
def _screen(op: _Operands, y: np.ndarray, d: np.ndarray, t: np.ndarray) -> np.ndarray:
    """A boolean (M, N) array: True where the element of ``y`` (float64) is proved within the
    bound (module docstring, points 2-4, from _sums' D and T); False leaves it to the exact
    check."""
    k = op.k
    with np.errstate(all="ignore"):               # overflow gives inf/NaN: then not accepted
        g = k * 2.0 ** -53 / (1 - k * 2.0 ** -53) * UP
        q_high = (t + k * TINY) / (1 - g) * UP
        q_low = np.maximum((t - k * TINY) / (1 + g) * DOWN, 0.0)
        al, be = abs(op.alpha), abs(op.beta)
        yh = op.alpha * d                          # point 2
        size = np.abs(yh)
        if op.c is not None:
            bc = op.beta * op.c
            yh = yh + bc
            size = size + np.abs(bc)
        err = (al * (g * q_high + k * TINY) + 2.0 ** -52 * size + 2 * TINY) * UP + ABS
        s_low = al * q_low                         # point 3
        if op.c is not None:
            s_low = s_low + be * np.abs(op.c)
        s_low = s_low * DOWN
        gamma, eta = float(op.gamma) * DOWN, float(op.eta)         # eta: a power of two, exact
        u_t, eta_t = float(op.u_t), float(op.eta_t)                 # likewise (or 0)
        y_low = np.maximum(np.abs(yh) * DOWN - err, 0.0)
        b_low = (u_t * y_low + (1 + u_t) * (gamma * s_low + (al * k + 2) * eta) + eta_t / 2) * DOWN - ABS
        lhs = (np.abs(y - yh) * UP + err) * UP + ABS  # point 4
        # an infinite b_low is no lower bound of the (finite) bound: float64 overflowed
        return np.isfinite(b_low) & (lhs <= b_low)      # NaN compares False: not accepted


def _checked(op: _Operands, y: np.ndarray, candidates, limit: int | None) -> list[tuple]:
    out = []
    for i, j in candidates:
        bad = op.exact(y, int(i), int(j))
        if bad is not None:
            out.append(bad)
            if limit is not None and len(out) >= limit:
                break
    return out


def outside_bound(y, a, b, c=None, *, alpha=1.0, beta=1.0, trans_a=False, trans_b=False,
                  acc: str | None = None, limit: int | None = None,
                  progress: Callable[[int], None] | None = None) -> list[tuple]:
    """The elements of ``y`` outside GEMM-R7's bound of the operands, as (i, j, y_ij, Y*_ij,
    bound) (floats, for messages), in row-major order; a non-finite y_ij is outside. At most
    ``limit`` of them. The same list as ``outside_bound_exact``: the float64 screen accepts
    what it proves within the bound, the exact check judges the rest.

    ``acc`` overrides the accumulation type: an implementation that accumulates in T itself is
    held to the same bound with acc = T. The operands must be finite (the bound is stated for
    real numbers): ValueError otherwise. ``progress(percent)``: called at each tenth of the
    screen of a large product.
    """
    return outside_bounds([y], a, b, c, alpha=alpha, beta=beta, trans_a=trans_a, trans_b=trans_b,
                          acc=acc, limit=limit, progress=progress)[0]


def _as_f64(y) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.asarray(y).astype(np.float64)


def outside_bounds(ys, a, b, c=None, *, alpha=1.0, beta=1.0, trans_a=False, trans_b=False,
                   acc: str | None = None, limit: int | None = None,
                   progress: Callable[[int], None] | None = None) -> list[list[tuple]]:
    """``outside_bound`` for several results of the same operands (onnxruntime's and sonnx's
    own, say), one list per result: the screen's sums of the operands, its O(MKN) part, are
    computed once for all of them."""
    op = _Operands(a, b, c, alpha, beta, trans_a, trans_b, acc)
    d, t = _sums(op, progress)
    out = []
    for y in ys:
        y64 = _as_f64(y)
        left = np.argwhere(~_screen(op, y64, d, t))    # row-major order
        out.append(_checked(op, y64, left, limit))
    return out


def outside_bound_exact(y, a, b, c=None, *, alpha=1.0, beta=1.0, trans_a=False, trans_b=False,
                        acc: str | None = None, limit: int | None = None) -> list[tuple]:
    """``outside_bound`` with every element judged on rationals (the reference the screen is
    tested against; slow: about 12 us per product)."""
    op = _Operands(a, b, c, alpha, beta, trans_a, trans_b, acc)
    return _checked(op, _as_f64(y), ((i, j) for i in range(op.m) for j in range(op.n)), limit)
