"""MatMul's harnesses: matmul_reference (MatMul's checks, then gemm_reference with alpha = 1, no
C, no transposes) over Gemm's grid of (M, K, N), integers symbolic and on edge values, floats on
edge and tie values, the refusals of rank, batch broadcasting and types, and sonnx.matmul against
the reference. Built from gemm_cases' operands, edge tables and wrong-order fold: the spec of
every case is MatMul's declared contract (Gemm's exact-mode statement with alpha = 1, no C).
"""
from __future__ import annotations

import math
from typing import Callable

import icontract
import numpy as np

from sonnx.ops import registry
from sonnx import dtypes
from sonnx.ops.registry import operator
from sonnx.semantics.tensor import TensorValue, from_numpy, size
from sonnx.semantics.values import int_range

from .common import (Case, Harness, Mutant, case_name, declared_post, mutant,
                     named, outcome, pick, unwrapped, within)
from .edges import float_edges, int_edges, product_ties
from .gemm_cases import GEMM_GRID, _exact_sums, _fold_descending, gemm_operands, mkn_tag

MATMUL = operator("MatMul")


def _operands(dtype: str, mkn, a, b):
    """A (M, K) and B (K, N) from flat data: Gemm's layout with no transposes and no C."""
    A, B, _, _, _ = gemm_operands(dtype, mkn, False, False, False, a, b, ())
    return A, B


def matmul_case(dtype: str, mkn: tuple[int, int, int], *, table: str = "symbolic",
                budget: float = 4.0, exhaustive: bool = False, claim: str = "spec") -> Case:
    """``table="symbolic"``: a, b are free ints in T's range (integer T only); otherwise they
    index T's edge values (``int_edges``/``float_edges``) or the product ties. The postcondition
    is matmul_reference's declared contract."""
    m, k, n = mkn
    is_float = dtypes.is_float(dtype)
    values = {"symbolic": None, "ties": product_ties,
              "edges": float_edges if is_float else int_edges}[table]
    values = values(dtype) if values else None
    lo, hi = (0, len(values) - 1) if values else int_range(dtype)

    def build() -> Callable:
        kernel = unwrapped(MATMUL.reference)

        def operands(a, b):
            if values is None:
                return _operands(dtype, mkn, list(a), list(b))
            if not is_float:              # a symbolic index into ints: no branch (as gemm_int_case)
                return _operands(dtype, mkn, [values[i] for i in a], [values[i] for i in b])
            return _operands(dtype, mkn, [pick(values, i) for i in a], [pick(values, i) for i in b])

        if claim == "spec":
            def post(a, b, result):
                A, B = operands(a, b)
                return result.shape == (m, n) and declared_post(MATMUL.reference, a=A, b=B, result=result)
        elif claim == "never wraps":          # witness: false, some sum leaves T's range
            def post(a, b, result):
                A, B = operands(a, b)
                return result.data == _exact_sums(A, B, None, False, False)
        elif claim == "order irrelevant":     # witness: false, summing k downwards differs
            def post(a, b, result):
                A, B = operands(a, b)
                other = _fold_descending(A, B, None, 1.0, 1.0, False, False, dtype)
                return all(x == y or (x != x and y != y) for x, y in zip(result.data, other))
        else:
            raise ValueError(claim)

        @icontract.require(lambda a, b: len(a) == m * k and len(b) == k * n)
        @icontract.require(lambda a, b: within(a + b, lo, hi))
        @icontract.ensure(post)
        def harness(a: tuple, b: tuple) -> TensorValue:
            A, B = operands(a, b)
            return kernel(A, B)
        return named(harness, f"matmul_{dtype}_{mkn_tag(mkn)}_{table}", a=m * k, b=k * n)

    tag = f"{dtype}.{mkn_tag(mkn)}{'' if table == 'symbolic' else '.' + table}"
    return Case(case_name(tag, claim), build, budget, exhaustive)


# -- refusals (MATMUL-R1, MATMUL-R3, MATMUL-R4) ----------------------------------------------
# every rank from 1 to 4, K agreeing or not, batches equal, broadcastable or not
MATMUL_A_SHAPES = ((2, 3), (3, 2), (3,), (2, 2, 3), (1, 2, 3), (2, 1, 2, 3))
MATMUL_B_SHAPES = ((3, 2), (2, 3), (3,), (2, 3, 2), (3, 3, 2))
MATMUL_TYPES = ("float", "bfloat16", "int32", "uint64", "int8", "double")
_ONE = {"float": 1.0, "bfloat16": 1.0, "double": 1.0, "int32": 1, "uint64": 1, "int8": 1}


def _matmul_refusal_spec(sa, sb, type_a, type_b, outcome) -> bool:
    """Independent statement of the refusals, as a reader checks the shapes: R1 both rank 2 and
    the columns of A equal the rows of B; R4 the dimensions before the last two (none for a
    vector) differ in number or size; R3 one type of MatMul-13's set."""
    kind, found = outcome
    allowed = registry.type_set("MatMul", 13)
    r3 = type_a not in allowed or type_b not in allowed or type_a != type_b
    r1 = len(sa) != 2 or len(sb) != 2 or sa[1] != sb[0]
    batch_a = sa[:-2] if len(sa) >= 2 else ()
    batch_b = sb[:-2] if len(sb) >= 2 else ()
    r4 = batch_a != batch_b
    if not (r1 or r3 or r4):
        return kind == "ok" and found.shape == (sa[0], sb[1])
    return (kind == "refused" and ("MATMUL-R1" in found) == r1 and ("MATMUL-R3" in found) == r3
            and ("MATMUL-R4" in found) == r4)


def matmul_refusal_case(part: str, *, budget: float = 15.0, claim: str = "spec") -> Case:
    """``part="shapes"``: every (A, B) pair of the shape tables, type float; ``part="types"``:
    A (2, 3) x B (3, 2), every pair of types. The kernel's answer is ("ok", result) or
    ("refused", the requirement IDs of the ProfileViolation)."""

    def build() -> Callable:
        kernel = unwrapped(MATMUL.reference)
        sizes = ((len(MATMUL_A_SHAPES), len(MATMUL_B_SHAPES)) if part == "shapes"
                 else (len(MATMUL_TYPES), len(MATMUL_TYPES)))

        def inputs(i0, i1):
            i0, i1 = pick(range(sizes[0]), i0), pick(range(sizes[1]), i1)
            if part == "shapes":
                return MATMUL_A_SHAPES[i0], MATMUL_B_SHAPES[i1], "float", "float"
            return (2, 3), (3, 2), MATMUL_TYPES[i0], MATMUL_TYPES[i1]

        if claim == "spec":
            def post(i0, i1, result):
                return _matmul_refusal_spec(*inputs(i0, i1), result)
        elif claim == "accepts all":          # witness: false, something is refused
            def post(result):
                return result[0] == "ok"
        elif claim == "batches broadcast":    # witness: false, a broadcast batch is refused (R4)
            def post(result):
                return result[0] == "ok" or "MATMUL-R4" not in result[1]
        else:
            raise ValueError(claim)

        @icontract.require(lambda i0, i1: (0 <= i0) & (i0 < sizes[0]) & (0 <= i1) & (i1 < sizes[1]))
        @icontract.ensure(post)
        def refusal(i0: int, i1: int) -> tuple:
            sa, sb, type_a, type_b = inputs(i0, i1)
            return outcome(kernel, TensorValue(type_a, sa, [_ONE[type_a]] * size(sa)),
                           TensorValue(type_b, sb, [_ONE[type_b]] * size(sb)))
        return named(refusal, f"matmul_refusal_{part}" if claim == "spec"
                     else f"matmul_{part}_{claim.replace(' ', '_')}")

    return Case(case_name(part, claim), build, budget, exhaustive=(claim == "spec"))


# -- sonnx.matmul(mode="exact") against the reference (sampled) ------------------------------
def matmul_exact_case(dtype: str, mkn: tuple[int, int, int], *, budget: float = 6.0,
                      claim: str = "spec") -> Case:
    """sonnx.matmul (Gemm's compiled fold through gemm.run) bit for bit against matmul_reference,
    on edge values. Compiled and numpy code is concrete: each path is a sample, not a proof."""
    m, k, n = mkn
    is_float = dtypes.is_float(dtype)
    table = float_edges(dtype) if is_float else int_edges(dtype)

    def build() -> Callable:
        fast, ref = MATMUL.kernel, unwrapped(MATMUL.reference)

        def arrays(ia, ib):
            npdt = dtypes.numpy_dtype(dtype)

            def arr(idx, shape):
                x = np.array([pick(table, i) for i in idx], dtype=np.float64 if is_float else npdt)
                return x.astype(npdt).reshape(shape)
            return arr(ia, (m, k)), arr(ib, (k, n))

        if claim == "spec":
            def post(ia, ib, result):
                a, b = arrays(ia, ib)
                expected = ref(from_numpy(a), from_numpy(b))
                got = from_numpy(result)
                return got.shape == expected.shape and got.dtype == expected.dtype and all(
                    (x != x and y != y) or (x == y and (not is_float or math.copysign(1, x) == math.copysign(1, y)))
                    for x, y in zip(got.data, expected.data))
        elif claim == "never wraps":          # witness: false, an integer sum leaves T's range
            def post(ia, ib, result):
                a, b = arrays(ia, ib)
                return result.astype(object).tolist() == (a.astype(object) @ b.astype(object)).tolist()
        else:
            raise ValueError(claim)

        @icontract.require(lambda ia, ib: len(ia) == m * k and len(ib) == k * n)
        @icontract.require(lambda ia, ib: within(ia + ib, 0, len(table) - 1))
        @icontract.ensure(post)
        def fast_vs_reference(ia: tuple, ib: tuple) -> np.ndarray:
            return fast(*arrays(ia, ib), mode="exact")
        return named(fast_vs_reference, f"matmul_exact_{dtype}_{mkn_tag(mkn)}", ia=m * k, ib=k * n)

    return Case(case_name(f"{dtype}.{mkn_tag(mkn)}", claim), build, budget)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "matmul-int", ("MATMUL-R1", "MATMUL-R3", "MATMUL-R5"),
        # no branch on the data (wrap is a %): one path per case, explored
        cases=(*(matmul_case(t, g, budget=4.0 if g != (3, 3, 3) else 10.0, exhaustive=True)
                 for t in ("int32", "uint64") for g in GEMM_GRID),
               *(matmul_case(t, (1, 3, 1), table="edges", exhaustive=True)
                 for t in ("int64", "uint32"))),
        witnesses=(matmul_case("int32", (2, 1, 3), claim="never wraps"),
                   matmul_case("uint32", (1, 3, 1), table="edges", claim="never wraps")),
        what="matmul_reference on int32/int64/uint32/uint64: the wrapped sum of products of "
             "A (M, K) and B (K, N), grid of (M, K, N), symbolic values and edge values"),
    Harness(
        "matmul-float", ("MATMUL-R1", "MATMUL-R3", "MATMUL-R5"),
        # concrete after the picks (20 edge values per element): a budget's worth of paths each
        cases=(matmul_case("float16", (1, 1, 1), table="edges"),
               matmul_case("float16", (1, 3, 1), table="ties", budget=6.0),
               matmul_case("bfloat16", (2, 1, 3), table="edges", budget=6.0),
               matmul_case("float", (1, 3, 1), table="edges", budget=6.0),
               matmul_case("double", (1, 3, 1), table="ties", budget=6.0),
               matmul_case("double", (3, 2, 2), table="edges", budget=6.0)),
        witnesses=(matmul_case("double", (1, 3, 1), table="ties", claim="order irrelevant"),),
        what="matmul_reference on float16/bfloat16/float/double edge values and ties: ascending "
             "accumulation in float32/float64, one final rounding to T, NaN, infinities, signed "
             "zeros, subnormals, overflow"),
    Harness(
        "matmul-refusals", ("MATMUL-R1", "MATMUL-R3", "MATMUL-R4"),
        cases=(matmul_refusal_case("shapes"), matmul_refusal_case("types")),
        witnesses=(matmul_refusal_case("shapes", claim="batches broadcast", budget=6.0),
                   matmul_refusal_case("types", claim="accepts all", budget=6.0)),
        what="matmul_reference refuses ranks other than 2 and disagreeing inner dimensions (R1), "
             "batch dimensions ONNX would broadcast (R4), mixed or non-MatMul types (R3), and "
             "accepts the rest"),
    Harness(
        "matmul-exact", ("MATMUL-R5",),
        cases=(matmul_exact_case("int32", (2, 1, 3)), matmul_exact_case("float16", (1, 3, 1)),
               matmul_exact_case("float", (3, 2, 2)), matmul_exact_case("double", (1, 3, 1))),
        witnesses=(matmul_exact_case("int64", (1, 3, 1), claim="never wraps"),),
        what="sonnx.matmul(mode=\"exact\") (Gemm's compiled fold, numpy) equals matmul_reference "
             "bit for bit",
        mode="sampled"),
)

MUTANTS: tuple[Mutant, ...] = (
    # the products summed from the last to the first (Gemm's index helpers bent)
    # double ties: (1 + u)(1 + u) + (1 + u) 3 + (1 + u)(-(1 + 3u)) rounds differently backwards
    mutant("matmul_k_descending", ("MATMUL-R5",), ("matmul-float/double.1x3x1.ties",
                                                   "matmul-float/float16.1x3x1.ties"),
           ("matmul-float/double.1x3x1.ties", ((0, 0, 0), (0, 3, 2)))),
    # A (3, 2) = [[1, 0], ...] times B = [[0, 1], [0, 0]]: Y[0] is [0, 1]; with B^T it is [0, 0]
    mutant("matmul_transposed", ("MATMUL-R5",), ("matmul-int/int32.3x2x2", "matmul-int/int32.2x1x3"),
           ("matmul-int/int32.3x2x2", ((1, 0, 0, 0, 0, 0), (0, 1, 0, 0)))),
    # A (2, 2, 3) with B (3, 2): B would be reused for both matrices, must be R4 (and R1)
    mutant("matmul_broadcast_accepted", ("MATMUL-R4",), ("matmul-refusals/shapes",),
           ("matmul-refusals/shapes", (3, 0))),
)
