"""Gemm's harnesses: the reference kernel over a grid of (M, K, N) with both transposes and C
present or absent, integers symbolic and on edge values, floats on edge and tie values with
alpha/beta, the refusals, the index helpers, and the numpy kernel against the reference.

The grid of (M, K, N): every dimension in 1..3, square and not. Each case fixes one point;
trans_a, trans_b and "C present" are symbolic booleans of the harness (CrossHair takes every
branch), so one case covers the eight layouts of that point: A stored (M, K) or (K, M), B stored
(K, N) or (N, K), C absent or (M, N).
"""
from __future__ import annotations

import math
from typing import Callable

import icontract
import numpy as np

from sonnx.ops import registry
from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import gemm as gemm_op
from sonnx.ops.registry import operator
from sonnx.semantics.tensor import TensorValue, from_numpy, size
from sonnx.semantics.values import int_range

from .common import (Case, Harness, Mutant, case_name, declared_post, mutant,
                     named, pick, resolve, unwrapped, within)
from .edges import float_edges, int_edges, product_ties

GEMM = operator("Gemm")
# the declared contracts of the index helpers, as shipped (a mutant may replace the functions
# under test, never the spec)
SHIPPED_INDEX = {"a_index": gemm_op.a_index, "b_index": gemm_op.b_index}
GEMM_GRID: tuple[tuple[int, int, int], ...] = ((1, 1, 1), (1, 3, 1), (2, 1, 3), (3, 2, 2), (3, 3, 3))
GEMM_SIGNED = ("int32", "int64")
GEMM_UNSIGNED = ("uint32", "uint64")


def mkn_tag(mkn: tuple[int, int, int]) -> str:
    return "x".join(map(str, mkn))


def gemm_operands(dtype: str, mkn, ta: bool, tb: bool, has_c: bool, a, b, c):
    """A, B, C as the kernel gets them for the layout (ta, tb, has_c): flat data ``a`` (M*K
    values), ``b`` (K*N), ``c`` (M*N), stored row-major in the transposed shapes when asked."""
    m, k, n = mkn
    ta_, tb_ = (True if ta else False), (True if tb else False)    # branch: concrete flags
    A = TensorValue(dtype, (k, m) if ta_ else (m, k), list(a))
    B = TensorValue(dtype, (n, k) if tb_ else (k, n), list(b))
    C = TensorValue(dtype, (m, n), list(c)) if has_c else None
    return A, B, C, ta_, tb_


def _exact_sums(A, B, C, ta: bool, tb: bool) -> list[int]:
    """The exact integer value of every Y[i, j] (no wrap), by explicit 2-D indexing."""
    m, k = (A.shape[1], A.shape[0]) if ta else A.shape
    n = B.shape[0] if tb else B.shape[1]

    def at(t, r, col, ncols):
        return t.data[r * ncols + col]
    out = []
    for i in range(m):
        for j in range(n):
            s = 0
            for l in range(k):
                x = at(A, l, i, m) if ta else at(A, i, l, k)
                y = at(B, j, l, k) if tb else at(B, l, j, n)
                s += x * y
            out.append(s + (C.data[i * n + j] if C is not None else 0))
    return out


# -- integer Gemm (alpha = beta = 1, GEMM-R6) ------------------------------------------------
def gemm_int_case(dtype: str, mkn: tuple[int, int, int], *, budget: float = 6.0, edges: bool = False,
                  exhaustive: bool = False, claim: str = "spec") -> Case:
    """a, b, c are the flat data of A, B, C (free symbolic ints in T's range, or indexes into T's
    edge values when ``edges``); the postcondition is gemm_reference's declared contract."""
    m, k, n = mkn
    lo, hi = int_range(dtype)
    table = int_edges(dtype)

    def build() -> Callable:
        kernel = unwrapped(GEMM.reference)

        def values(xs) -> list[int]:
            return [table[i] for i in xs] if edges else list(xs)

        def operands(ta, tb, has_c, a, b, c):
            return gemm_operands(dtype, mkn, ta, tb, has_c, values(a), values(b), values(c))

        if claim == "spec":
            def post(ta, tb, has_c, a, b, c, result):
                A, B, C, ta_, tb_ = operands(ta, tb, has_c, a, b, c)
                return result.shape == (m, n) and declared_post(
                    GEMM.reference, a=A, b=B, c=C, alpha=1.0, beta=1.0,
                    trans_a=ta_, trans_b=tb_, result=result)
        elif claim == "never wraps":          # witness: false, some sum leaves T's range
            def post(ta, tb, has_c, a, b, c, result):
                A, B, C, ta_, tb_ = operands(ta, tb, has_c, a, b, c)
                return result.data == _exact_sums(A, B, C, ta_, tb_)
        elif claim == "C ignored":            # witness: false, C reaches the result
            def post(ta, tb, has_c, a, b, c, result):
                A, B, _, ta_, tb_ = operands(ta, tb, has_c, a, b, c)
                return result.data == unwrapped(GEMM.reference)(A, B, None, trans_a=ta_,
                                                                         trans_b=tb_).data
        else:
            raise ValueError(claim)

        @icontract.require(lambda a, b, c: len(a) == m * k and len(b) == k * n and len(c) == m * n)
        @icontract.require(lambda a, b, c: within(a + b + c, 0, len(table) - 1) if edges
                           else within(a + b + c, lo, hi))
        @icontract.ensure(post)
        def harness(ta: bool, tb: bool, has_c: bool, a: tuple, b: tuple, c: tuple) -> TensorValue:
            A, B, C, ta_, tb_ = operands(ta, tb, has_c, a, b, c)
            return kernel(A, B, C, trans_a=ta_, trans_b=tb_)
        return named(harness, f"gemm_{dtype}_{mkn_tag(mkn)}{'_edges' if edges else ''}",
                      a=m * k, b=k * n, c=m * n)

    tag = f"{dtype}.{mkn_tag(mkn)}{'.edges' if edges else ''}"
    return Case(case_name(tag, claim), build, budget, exhaustive)


# -- float Gemm ------------------------------------------------------------------------------
# alpha and beta: float32 values (GEMM-R5), including 0 (alpha * inf is NaN), a power of two,
# and one whose products round (float32(0.1))
GEMM_SCALARS = (1.0, -0.5, 0.0, float(np.float32(0.1)))


def _fold_descending(A, B, C, alpha, beta, ta, tb, dtype) -> list[float]:
    """The exact-mode value with the k loop DESCENDING (a wrong order, for a witness), in numpy
    scalars of the accumulation type."""
    acc = dtypes.numpy_dtype(gemm_op.accumulation_type(dtype)).type
    out = dtypes.numpy_dtype(dtype)
    m, k = (A.shape[1], A.shape[0]) if ta else A.shape
    n = B.shape[0] if tb else B.shape[1]
    ys = []
    with np.errstate(all="ignore"):
        for i in range(m):
            for j in range(n):
                s = acc(0.0)
                for l in reversed(range(k)):
                    x = A.data[l * m + i] if ta else A.data[i * k + l]
                    y = B.data[j * k + l] if tb else B.data[l * n + j]
                    s = s + acc(x) * acc(y)
                r = acc(alpha) * s
                if C is not None:
                    r = r + acc(beta) * acc(C.data[i * n + j])
                ys.append(float(np.array(r).astype(out)))
    return ys


def gemm_float_case(dtype: str, mkn: tuple[int, int, int], *, budget: float = 6.0,
                    table: str = "edges", exhaustive: bool = False, claim: str = "spec") -> Case:
    """ia, ib, ic index the edge values of ``dtype`` (``pick``: CrossHair branches over the
    choices), ial and ibe index GEMM_SCALARS; the postcondition is gemm_reference's declared
    contract (the fold of GEMM-R7 in numpy's IEEE scalars, NaN-aware, signed zeros)."""
    m, k, n = mkn
    values_table = {"edges": float_edges, "ties": product_ties}[table](dtype)

    def build() -> Callable:
        kernel = unwrapped(GEMM.reference)

        def operands(ta, tb, has_c, ia, ib, ic):
            vals = [[pick(values_table, i) for i in xs] for xs in (ia, ib, ic)]
            return gemm_operands(dtype, mkn, ta, tb, has_c, *vals)

        if claim == "spec":
            def post(ta, tb, has_c, ia, ib, ic, ial, ibe, result):
                A, B, C, ta_, tb_ = operands(ta, tb, has_c, ia, ib, ic)
                return result.shape == (m, n) and declared_post(
                    GEMM.reference, a=A, b=B, c=C, alpha=pick(GEMM_SCALARS, ial),
                    beta=pick(GEMM_SCALARS, ibe), trans_a=ta_, trans_b=tb_, result=result)
        elif claim == "order irrelevant":     # witness: false, summing k downwards differs
            def post(ta, tb, has_c, ia, ib, ic, ial, ibe, result):
                A, B, C, ta_, tb_ = operands(ta, tb, has_c, ia, ib, ic)
                other = _fold_descending(A, B, C, pick(GEMM_SCALARS, ial), pick(GEMM_SCALARS, ibe),
                                         ta_, tb_, dtype)
                return all(x == y or (x != x and y != y) for x, y in zip(result.data, other))
        else:
            raise ValueError(claim)

        @icontract.require(lambda ia, ib, ic: len(ia) == m * k and len(ib) == k * n and len(ic) == m * n)
        @icontract.require(lambda ia, ib, ic: within(ia + ib + ic, 0, len(values_table) - 1))
        @icontract.require(lambda ial, ibe: within((ial, ibe), 0, len(GEMM_SCALARS) - 1))
        @icontract.ensure(post)
        def harness(ta: bool, tb: bool, has_c: bool, ia: tuple, ib: tuple, ic: tuple,
                    ial: int, ibe: int) -> TensorValue:
            A, B, C, ta_, tb_ = operands(ta, tb, has_c, ia, ib, ic)
            return kernel(A, B, C, alpha=pick(GEMM_SCALARS, ial), beta=pick(GEMM_SCALARS, ibe),
                          trans_a=ta_, trans_b=tb_)
        return named(harness, f"gemm_{dtype}_{mkn_tag(mkn)}_{table}", ia=m * k, ib=k * n, ic=m * n)

    tag = f"{dtype}.{mkn_tag(mkn)}{'' if table == 'edges' else '.' + table}"
    return Case(case_name(tag, claim), build, budget, exhaustive)


# -- refusals (GEMM-R1, GEMM-R3, GEMM-R4, GEMM-R6) -------------------------------------------
# shapes as stored; with the right transposes (2, 3) x (3, 2) is 2 x 2 and (3, 2) x (3, 2) is 2 x 2
GEMM_A_SHAPES = ((2, 3), (3, 2), (3,), (1, 2, 3))
GEMM_B_SHAPES = ((3, 2), (2, 3), (3,))
GEMM_C_SHAPES = (None, (2, 2), (3, 3), (2,), (1, 2), (2, 1), (1, 1), (1,), (), (2, 2, 1), (4,))
GEMM_TYPES = ("float", "bfloat16", "int32", "uint64", "int8")
GEMM_ATTRS = (1.0, 2.0)
_GEMM_ONE = {"float": 1.0, "bfloat16": 1.0, "int32": 1, "uint64": 1, "int8": 1}


def _gemm_refusal_spec(sa, sb, sc, ta, tb, type_a, type_b, type_c, alpha, beta, outcome) -> bool:
    """Independent statement of the refusals, from the shapes as a reader would check them:
    R1 rank 2 and K of A' equals K of B'; R4 (only when R1 holds) C absent or exactly (M, N);
    R3 one type from Gemm-13's set; R6 integer T with alpha or beta not 1."""
    kind, ids = outcome
    numeric = registry.type_set("Gemm", 13)
    types = [type_a, type_b] + ([type_c] if sc is not None else [])
    r3 = any(t not in numeric for t in types) or len(set(types)) > 1
    r1 = len(sa) != 2 or len(sb) != 2
    if not r1:
        m, ka = (sa[1], sa[0]) if ta else sa
        kb, n = (sb[1], sb[0]) if tb else sb
        r1 = ka != kb
    r4 = not r1 and sc is not None and tuple(sc) != (m, n)
    r6 = type_a in numeric and not dtypes.is_float(type_a) and (alpha != 1.0 or beta != 1.0)
    if not (r1 or r3 or r4 or r6):
        return kind == "ok" and ids.shape == (m, n)
    return (kind == "refused" and ("GEMM-R1" in ids) == r1 and ("GEMM-R3" in ids) == r3
            and ("GEMM-R4" in ids) == r4 and ("GEMM-R6" in ids) == r6)


def gemm_refusal_case(part: str, *, budget: float = 25.0, claim: str = "spec") -> Case:
    """``part="shapes"``: every (A, B, C) shape of the tables with both transposes, type float;
    ``part="types"``: A (2, 3) x B (3, 2) with C absent or (2, 2), every triple of types and
    alpha, beta in {1, 2}. The postcondition is the independent spec above; the kernel's answer
    is ("ok", result) or ("refused", the requirement IDs of the ProfileViolation)."""

    def build() -> Callable:
        kernel = unwrapped(GEMM.reference)
        sizes = ((len(GEMM_A_SHAPES), len(GEMM_B_SHAPES), len(GEMM_C_SHAPES), 2, 2) if part == "shapes"
                 else (len(GEMM_TYPES), len(GEMM_TYPES), len(GEMM_TYPES) + 1, 2, 2))

        def inputs(*idx):
            # one branch per value (as ``pick``): every later step sees concrete ints
            i0, i1, i2, i3, i4 = (pick(range(s), i) for i, s in zip(idx, sizes))
            if part == "shapes":
                sa, sb, sc = GEMM_A_SHAPES[i0], GEMM_B_SHAPES[i1], GEMM_C_SHAPES[i2]
                return sa, sb, sc, i3, i4, "float", "float", "float", 1.0, 1.0
            tc = i2 - 1                       # i2 == 0: C absent
            return ((2, 3), (3, 2), None if tc < 0 else (2, 2), False, False, GEMM_TYPES[i0],
                    GEMM_TYPES[i1], GEMM_TYPES[max(tc, 0)], GEMM_ATTRS[i3], GEMM_ATTRS[i4])

        if claim == "spec":
            def post(i0, i1, i2, i3, i4, result):
                return _gemm_refusal_spec(*inputs(i0, i1, i2, i3, i4), result)
        elif claim == "accepts all":          # witness: false, something is refused
            def post(result):
                return result[0] == "ok"
        elif claim == "C broadcasts":         # witness: false, a broadcastable C is refused (R4)
            def post(result):
                return result[0] == "ok" or "GEMM-R4" not in result[1]
        else:
            raise ValueError(claim)

        @icontract.require(lambda i0, i1, i2, i3, i4: (0 <= i0) & (i0 < sizes[0]) & (0 <= i1) & (i1 < sizes[1])
                           & (0 <= i2) & (i2 < sizes[2]) & (0 <= i3) & (i3 < 2) & (0 <= i4) & (i4 < 2))
        @icontract.ensure(post)
        def refusal(i0: int, i1: int, i2: int, i3: int, i4: int) -> tuple:
            sa, sb, sc, ta, tb, type_a, type_b, type_c, alpha, beta = inputs(i0, i1, i2, i3, i4)
            ta, tb = (True if ta else False), (True if tb else False)
            a = TensorValue(type_a, sa, [_GEMM_ONE[type_a]] * size(sa))
            b = TensorValue(type_b, sb, [_GEMM_ONE[type_b]] * size(sb))
            c = None if sc is None else TensorValue(type_c, sc, [_GEMM_ONE[type_c]] * size(sc))
            try:
                return ("ok", kernel(a, b, c, alpha=alpha, beta=beta, trans_a=ta, trans_b=tb))
            except ProfileViolation as e:
                return ("refused", frozenset(v.requirement for v in e.violations))
        return named(refusal, f"gemm_refusal_{part}" if claim == "spec"
                     else f"gemm_{part}_{claim.replace(' ', '_')}")

    return Case(case_name(part, claim), build, budget, exhaustive=(claim == "spec"))


# -- index helpers ---------------------------------------------------------------------------
_INDEX_BOUND = 1 << 20


def gemm_index_case(which: str, *, claim: str = "spec") -> Case:
    """a_index / b_index on symbolic dimensions (1 .. 2**20), in-bounds indices and both
    transpose flags: the declared contract (in bounds; divmod recovers row and column of the
    stored matrix)."""

    def build() -> Callable:
        fn = unwrapped(resolve(f"sonnx.ops.gemm:{which}"))
        if claim == "spec":
            def post(t, rows, cols, r, s, result):
                kw = ({"ta": t, "m": rows, "k": cols, "i": r, "l": s} if which == "a_index"
                      else {"tb": t, "k": rows, "n": cols, "l": r, "j": s})
                return declared_post(SHIPPED_INDEX[which], result=result, **kw)
        elif claim == "transpose ignored":    # witness: false, the flag moves the element
            def post(t, rows, cols, r, s, result):
                return result == fn(not t, rows, cols, r, s)
        else:
            raise ValueError(claim)

        # (rows, cols, r, s) = (m, k, i, l) for a_index, (k, n, l, j) for b_index
        @icontract.require(lambda rows, cols: 0 < rows <= _INDEX_BOUND and 0 < cols <= _INDEX_BOUND)
        @icontract.require(lambda rows, cols, r, s: 0 <= r < rows and 0 <= s < cols)
        @icontract.ensure(post)
        def index_checked(t: bool, rows: int, cols: int, r: int, s: int) -> int:
            return fn(True if t else False, rows, cols, r, s)
        return named(index_checked, f"gemm_{which}" if claim == "spec"
                     else f"gemm_{which}_{claim.replace(' ', '_')}")

    return Case(case_name(which, claim), build, 6.0, exhaustive=(claim == "spec"))


# -- sonnx.gemm(mode="exact") against the reference (sampled) --------------------------------
def gemm_fast_case(dtype: str, mkn: tuple[int, int, int], *, claim: str = "spec",
                   budget: float = 6.0) -> Case:
    """sonnx.gemm (mode="exact": the compiled fold, then numpy) bit for bit against
    gemm_reference, both transposes, C present or absent. Compiled and numpy code is concrete:
    CrossHair realizes the inputs when it builds the arrays, so each path is a sample, not a
    proof."""
    m, k, n = mkn
    is_float = dtypes.is_float(dtype)
    table = float_edges(dtype) if is_float else int_edges(dtype)
    scalars = GEMM_SCALARS if is_float else (1.0,)

    def build() -> Callable:
        fast, ref = GEMM.kernel, unwrapped(GEMM.reference)

        def arrays(ta, tb, has_c, ia, ib, ic):
            npdt = dtypes.numpy_dtype(dtype)

            def arr(idx, shape):
                x = np.array([pick(table, i) for i in idx], dtype=np.float64 if is_float else npdt)
                return x.astype(npdt).reshape(shape)
            a = arr(ia, (k, m) if ta else (m, k))
            b = arr(ib, (n, k) if tb else (k, n))
            return a, b, (arr(ic, (m, n)) if has_c else None)

        def flags(ta, tb, has_c):
            return (True if ta else False), (True if tb else False), (True if has_c else False)

        if claim == "spec":
            def post(ta, tb, has_c, ia, ib, ic, ial, ibe, result):
                ta, tb, has_c = flags(ta, tb, has_c)
                a, b, c = arrays(ta, tb, has_c, ia, ib, ic)
                expected = ref(from_numpy(a), from_numpy(b), None if c is None else from_numpy(c),
                               alpha=pick(scalars, ial), beta=pick(scalars, ibe),
                               trans_a=ta, trans_b=tb)
                got = from_numpy(result)
                return got.shape == expected.shape and got.dtype == expected.dtype and all(
                    (x != x and y != y) or (x == y and (not is_float or math.copysign(1, x) == math.copysign(1, y)))
                    for x, y in zip(got.data, expected.data))
        elif claim == "never wraps":          # witness: false, an integer sum leaves T's range
            def post(ta, tb, has_c, ia, ib, ic, result):
                ta, tb, has_c = flags(ta, tb, has_c)
                a, b, c = arrays(ta, tb, has_c, ia, ib, ic)
                exact = (a.T if ta else a).astype(object) @ (b.T if tb else b).astype(object)
                if c is not None:
                    exact = exact + c.astype(object)
                return result.astype(object).tolist() == exact.tolist()
        else:
            raise ValueError(claim)

        @icontract.require(lambda ia, ib, ic: len(ia) == m * k and len(ib) == k * n and len(ic) == m * n)
        @icontract.require(lambda ia, ib, ic: within(ia + ib + ic, 0, len(table) - 1))
        @icontract.require(lambda ial, ibe: within((ial, ibe), 0, len(scalars) - 1))
        @icontract.ensure(post)
        def fast_vs_reference(ta: bool, tb: bool, has_c: bool, ia: tuple, ib: tuple, ic: tuple,
                              ial: int, ibe: int) -> np.ndarray:
            ta, tb, has_c = flags(ta, tb, has_c)
            a, b, c = arrays(ta, tb, has_c, ia, ib, ic)
            return fast(a, b, c, alpha=pick(scalars, ial), beta=pick(scalars, ibe), trans_a=ta,
                        trans_b=tb, mode="exact")
        return named(fast_vs_reference, f"gemm_exact_{dtype}_{mkn_tag(mkn)}", ia=m * k, ib=k * n,
                     ic=m * n)

    tag = f"{dtype}.{mkn_tag(mkn)}"
    return Case(case_name(tag, claim), build, budget)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "gemm-signed", ("GEMM-R1", "GEMM-R3", "GEMM-R7"),
        # no branch on the data (wrap is a %): 8 paths per case, the layouts; all explored
        cases=(*(gemm_int_case(t, g, budget=4.0 if g != (3, 3, 3) else 10.0, exhaustive=True)
                 for t in GEMM_SIGNED for g in GEMM_GRID),
               *(gemm_int_case(t, g, edges=True, budget=4.0, exhaustive=True)
                 for t in GEMM_SIGNED for g in ((1, 3, 1), (2, 1, 3)))),
        witnesses=(gemm_int_case("int32", (2, 1, 3), claim="never wraps"),
                   gemm_int_case("int64", (1, 3, 1), claim="C ignored")),
        what="gemm_reference on int32/int64 (alpha = beta = 1): wrapped sum of products, "
             "transA/transB, C present or absent, grid of (M, K, N), edge values"),
    Harness(
        "gemm-unsigned", ("GEMM-R1", "GEMM-R3", "GEMM-R7"),
        cases=(*(gemm_int_case(t, g, budget=4.0 if g != (3, 3, 3) else 10.0, exhaustive=True)
                 for t in GEMM_UNSIGNED for g in GEMM_GRID),
               *(gemm_int_case(t, g, edges=True, budget=4.0, exhaustive=True)
                 for t in GEMM_UNSIGNED for g in ((1, 3, 1), (2, 1, 3)))),
        witnesses=(gemm_int_case("uint64", (1, 3, 1), edges=True, claim="never wraps"),),
        what="gemm_reference on uint32/uint64 (alpha = beta = 1): wrapped sum of products, "
             "transA/transB, C present or absent, grid of (M, K, N), edge values"),
    Harness(
        "gemm-float", ("GEMM-R1", "GEMM-R3", "GEMM-R7"),
        # every path is concrete after the picks (20 edge values per element, 4 alphas, 4 betas,
        # 8 layouts): far too many to exhaust, so each case is a budget's worth of paths
        cases=(gemm_float_case("float16", (1, 1, 1), budget=6.0),
               gemm_float_case("float16", (1, 3, 1), table="ties", budget=6.0),
               gemm_float_case("float16", (3, 2, 2), budget=6.0),
               gemm_float_case("bfloat16", (1, 1, 1), budget=4.0),
               gemm_float_case("bfloat16", (2, 1, 3), budget=6.0),
               gemm_float_case("float", (1, 1, 1), budget=4.0),
               gemm_float_case("float", (1, 3, 1), budget=6.0),
               gemm_float_case("double", (1, 1, 1), budget=4.0),
               gemm_float_case("double", (1, 3, 1), table="ties", budget=6.0),
               gemm_float_case("double", (3, 3, 3), budget=6.0)),
        witnesses=(gemm_float_case("double", (1, 3, 1), table="ties", claim="order irrelevant"),),
        what="gemm_reference on float16/bfloat16/float/double edge values and ties: ascending "
             "accumulation in float32/float64, alpha/beta rounding, one final rounding to T, NaN, "
             "infinities, signed zeros, subnormals, overflow"),
    Harness(
        "gemm-refusals", ("GEMM-R1", "GEMM-R3", "GEMM-R4", "GEMM-R6"),
        cases=(gemm_refusal_case("shapes", budget=25.0), gemm_refusal_case("types", budget=25.0)),
        witnesses=(gemm_refusal_case("shapes", claim="C broadcasts", budget=6.0),
                   gemm_refusal_case("types", claim="accepts all", budget=6.0)),
        what="gemm_reference refuses ranks other than 2 and disagreeing inner dimensions (R1), C "
             "of any shape but (M, N), broadcastable ones included (R4), mixed or non-Gemm types "
             "(R3), integer alpha/beta other than 1 (R6), and accepts the rest"),
    Harness(
        "gemm-index", ("GEMM-R1",),
        cases=(gemm_index_case("a_index"), gemm_index_case("b_index")),
        witnesses=(gemm_index_case("a_index", claim="transpose ignored"),
                   gemm_index_case("b_index", claim="transpose ignored")),
        what="gemm.a_index / b_index on symbolic dimensions up to 2**20: in bounds, divmod "
             "recovers the row and column of the stored (possibly transposed) matrix"),
    Harness(
        "gemm-exact", ("GEMM-R7",),
        cases=(gemm_fast_case("int32", (2, 1, 3)), gemm_fast_case("uint64", (1, 3, 1)),
               gemm_fast_case("float16", (1, 3, 1)), gemm_fast_case("bfloat16", (2, 1, 3)),
               gemm_fast_case("float", (3, 2, 2)), gemm_fast_case("double", (1, 3, 1))),
        witnesses=(gemm_fast_case("int64", (1, 3, 1), claim="never wraps"),),
        what="sonnx.gemm(mode=\"exact\") (floats: the compiled fold, numpy; integers: the proved C) equals gemm_reference bit for bit",
        mode="sampled"),
)

MUTANTS: tuple[Mutant, ...] = (
    # A stored (2, 3) with transA: A'[1, 0] is at flat 1, the mutant reads flat 3
    mutant("gemm_transpose_index", ("GEMM-R1",), ("gemm-index/a_index", "gemm-signed/int32.3x2x2"),
           ("gemm-index/a_index", (True, 2, 3, 1, 0))),
    # A (2, 3) x B (3, 2) with C of shape (2,): must be refused with GEMM-R4
    mutant("gemm_c_broadcast", ("GEMM-R4",), ("gemm-refusals/shapes",),
           ("gemm-refusals/shapes", (0, 0, 3, 0, 0))),
    # 1 x 3 x 1 float, no C, all ones (edge value 7), alpha = beta = 1: Y = 3, the mutant keeps
    # the last term, 1 (integer T no longer goes through _add: intloops.dot_wrap)
    mutant("gemm_sum_overwrites", ("GEMM-R7",), ("gemm-float/float.1x3x1", "gemm-float/float16.1x1x1"),
           ("gemm-float/float.1x3x1", (False, False, False, (7, 7, 7), (7, 7, 7), (0,), 0, 0))),
    # int32 edge values: max * 2 wraps to -2, the mutant clamps to max
    mutant("gemm_saturation", ("GEMM-R7",), ("gemm-signed/int32.1x3x1.edges", "gemm-unsigned/uint32.1x3x1"),
           ("gemm-signed/int32.1x3x1.edges", (False, False, False, (10, 3, 3), (5, 3, 3), (3,)))),
)
