"""GEMM-R7's fast-mode error bound (spec/gemm.md), checked exactly on rationals.

One source of truth for "is this Gemm/MatMul result within the profile's bound": the operator
tests (tests/ops/test_gemm.py), the end-to-end tests and ``sonnx run --compare`` call it.
Y* is the real-number result alpha * A'B' + beta * C of the given (finite) operands; with u and
eta the unit roundoff and smallest subnormal of the accumulation type, gamma = (K+2)u/(1-(K+2)u),
S = |alpha| sum |a b| + |beta| |c|, an element y is within the bound when

    |y - Y*| <= u_T |Y*| + (1 + u_T) (gamma S + (|alpha| K + 2) eta) + eta_T / 2

(u_T, eta_T of the result type T; 0 when T is the accumulation type itself).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .. import dtypes
from ..semantics.floats import FORMATS
from .gemm import accumulation_type


def _format(name: str) -> tuple[Fraction, Fraction]:
    p, emin, _ = FORMATS[name]
    return Fraction(1, 2**p), Fraction(2) ** (emin - p + 1)     # unit roundoff u, smallest subnormal


def outside_bound(y, a, b, c=None, *, alpha=1.0, beta=1.0, trans_a=False, trans_b=False,
                  acc: str | None = None, limit: int | None = None) -> list[tuple]:
    """The elements of ``y`` outside GEMM-R7's bound of the operands, as (i, j, y_ij, Y*_ij,
    bound) (floats, for messages); a non-finite y_ij is outside. At most ``limit`` of them.

    ``acc`` overrides the accumulation type: an implementation that accumulates in T itself is
    held to the same bound with acc = T. The operands must be finite (the bound is stated for
    real numbers): ValueError otherwise.
    """
    name = dtypes.name_of(a.dtype)
    acc = acc or accumulation_type(name)
    u, eta = _format(acc)
    u_t, eta_t = (Fraction(0), Fraction(0)) if acc == name else _format(name)
    ap = (a.T if trans_a else a).astype(np.float64)
    bp = (b.T if trans_b else b).astype(np.float64)
    for what, x in (("A", ap), ("B", bp), ("C", None if c is None else c.astype(np.float64))):
        if x is not None and not np.all(np.isfinite(x)):
            raise ValueError(f"operand {what} holds an infinity or a NaN; GEMM-R7's bound is stated "
                             "for finite operands")
    m, k = ap.shape
    n = bp.shape[1]
    al, be = Fraction(float(alpha)), Fraction(float(beta))
    gamma = (k + 2) * u / (1 - (k + 2) * u)
    fa = [[Fraction(x) for x in row] for row in ap.tolist()]
    fb = [[Fraction(x) for x in col] for col in bp.T.tolist()]
    yy = y.astype(np.float64)
    out = []
    for i in range(m):
        row = fa[i]
        for j in range(n):
            col = fb[j]
            products = [x * z for x, z in zip(row, col)]
            exact = al * sum(products)
            s = abs(al) * sum(abs(p) for p in products)
            if c is not None:
                cij = Fraction(float(c[i, j]))
                exact += be * cij
                s += abs(be) * abs(cij)
            e_acc = gamma * s + (abs(al) * k + 2) * eta
            bound = u_t * abs(exact) + (1 + u_t) * e_acc + eta_t / 2
            if not (math.isfinite(yy[i, j]) and abs(Fraction(yy[i, j]) - exact) <= bound):
                out.append((i, j, float(yy[i, j]), float(exact), float(bound)))
                if limit is not None and len(out) >= limit:
                    return out
    return out
