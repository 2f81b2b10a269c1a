"""Harnesses of Transpose (ops/transpose.py), a structural operator: transpose_reference against
its declared contract (the permuted shape, and every element by multi-index bit for bit:
TRANSPOSE-R3) with symbolic integer data and a symbolic choice among every permutation of the
rank, and on float edge values (NaN, both zeros, infinities, subnormals); its refusals
(TRANSPOSE-R1: exactly the perms that are not permutations of 0..r-1, among every list of
length 0..3 with entries in [-1, 3]); the numpy kernel against the reference (sampled).

Witnesses: "Y has X's shape" (false for a perm that moves a dimension) and "never NaN" (false for
a NaN: the data is moved, NaN included).
Mutant (mutants/transpose_inverse_perm.py): the source index read through the inverse
permutation (right for every perm that is its own inverse, wrong for a 3-cycle).
"""
from __future__ import annotations

import itertools
import math
from typing import Callable

import icontract
import numpy as np

from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import transpose as transpose_op
from sonnx.semantics.tensor import TensorValue, from_numpy, size
from sonnx.semantics.values import same_value

from .common import Case, Harness, Mutant, case_name, named, pick, shape_tag, unwrapped, within
from .edges import float_edges, int_edges
from .moves import choice_moves, typed_cases

SHAPES = ((), (4,), (2, 3), (2, 1, 3), (2, 3, 2))

FALSE_CLAIMS: dict[str, Callable] = {          # (result, shape, data) -> bool
    "shape kept": lambda r, shape, data: r.shape == shape,
    "never NaN": lambda r, shape, data: not any(math.isnan(v) for v in r.data),
}


def _perms(r: int) -> list[tuple[int, ...]]:
    return list(itertools.permutations(range(r)))


# x: the data (moves.py); k: which permutation of the rank (every one)
_moves_case = choice_moves(transpose_op.transpose_reference, "transpose", "perm", lambda shape: _perms(len(shape)), FALSE_CLAIMS)
int_case, float_case = typed_cases(_moves_case)


# -- refusals (TRANSPOSE-R1) -------------------------------------------------------------------
REFUSAL_SHAPES = ((), (3,), (2, 3), (2, 1, 3))
CANDIDATES = tuple(c for k in range(4) for c in itertools.product(range(-1, 4), repeat=k))


def refusal_spec(shape, perm, outcome) -> bool:
    """Independent statement: Transpose-25 accepts exactly the perms that hold each of 0..r-1
    once, with the shape (d[perm[0]], ...); refuses the others with TRANSPOSE-R1."""
    kind, got = outcome
    r = len(shape)
    if len(perm) == r and set(perm) == set(range(r)):
        return kind == "ok" and got.shape == tuple(shape[p] for p in perm)
    return kind == "refused" and got == frozenset({"TRANSPOSE-R1"})


def refusal_case(*, budget: float = 10.0, claim: str = "spec") -> Case:
    def build() -> Callable:
        kernel = unwrapped(transpose_op.transpose_reference)
        if claim == "spec":
            def post(s, c, result):
                return refusal_spec(REFUSAL_SHAPES[s], pick(CANDIDATES, c), result)
        elif claim == "accepts all":          # witness: false, a repeated axis is refused
            def post(result):
                return result[0] == "ok"
        else:
            raise ValueError(claim)

        @icontract.require(lambda s, c: 0 <= s < len(REFUSAL_SHAPES) and 0 <= c < len(CANDIDATES))
        @icontract.ensure(post)
        def refusal(s: int, c: int) -> tuple:
            shape = REFUSAL_SHAPES[s]
            try:
                return ("ok", kernel(TensorValue("int32", shape, [1] * size(shape)), pick(CANDIDATES, c)))
            except ProfileViolation as e:
                return ("refused", frozenset(v.requirement for v in e.violations))
        return named(refusal, "transpose_refusal" if claim == "spec" else f"transpose_{claim.replace(' ', '_')}")

    return Case("perms" if claim == "spec" else claim.replace(" ", "-"), build, budget, exhaustive=True)


# -- the numpy kernel against the reference (sampled) -----------------------------------------
def fast_case(dtype: str, shape: tuple[int, ...], *, claim: str = "spec") -> Case:
    """sonnx.ops.transpose.transpose against transpose_reference, shape and every value (a NaN
    matching any NaN: from_numpy reads through binary64, the payload bits are the unit tests')."""
    n, perms = size(shape), _perms(len(shape))
    is_float = dtypes.is_float(dtype)
    table = float_edges(dtype) if is_float else int_edges(dtype)

    def array(ix):
        npdt = dtypes.numpy_dtype(dtype)
        return np.array([table[i] for i in ix], dtype=np.float64 if is_float else npdt).astype(npdt).reshape(shape)

    def build() -> Callable:
        fast, ref = transpose_op.OPERATOR.kernel, unwrapped(transpose_op.transpose_reference)
        if claim == "spec":
            def post(ix, p, result):
                expected = ref(from_numpy(array(ix)), pick(perms, p))
                got = from_numpy(result)
                return got.shape == expected.shape and all(
                    same_value(dtype, x, y) for x, y in zip(got.data, expected.data))
        elif claim == "shape kept":
            def post(ix, p, result):
                return result.shape == shape
        else:
            raise ValueError(claim)

        @icontract.require(lambda ix: len(ix) == n)
        @icontract.require(lambda ix: within(ix, 0, len(table) - 1))
        @icontract.require(lambda p: 0 <= p < len(perms))
        @icontract.ensure(post)
        def fast_vs_reference(ix: tuple, p: int) -> np.ndarray:
            # a concrete perm: the kernel's memo hashes it (a symbolic key forks on every lookup)
            return fast(array(ix), perm=pick(perms, p))
        return named(fast_vs_reference, f"transpose_fast_{dtype}_{shape_tag(shape)}", ix=n)

    return Case(case_name(f"{dtype}.{shape_tag(shape)}", claim), build, 6.0)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "transpose-moves", ("TRANSPOSE-R3",),
        cases=(*(int_case("int32", s) for s in SHAPES),
               int_case("int8", (2, 1, 3), budget=10.0),
               *(float_case(t, (2, 3)) for t in ("float16", "bfloat16", "float", "double"))),
        witnesses=(int_case("int32", (2, 3), claim="shape kept", exhaustive=False),
                   float_case("double", (2, 3), claim="never NaN")),
        what="transpose_reference on int32/int8 symbolic data and float edge values, every permutation: "
             "the permuted shape, every element at its permuted index bit for bit"),
    Harness(
        "transpose-refusals", ("TRANSPOSE-R1",),
        cases=(refusal_case(),),
        witnesses=(refusal_case(claim="accepts all", budget=4.0),),
        what="transpose_reference refuses exactly the perms that are not permutations of 0..r-1 "
             "(TRANSPOSE-R1) and gives the permuted shape otherwise"),
    Harness(
        "transpose-fast", ("TRANSPOSE-R3",),
        cases=(fast_case("int8", (2, 3)), fast_case("float16", (2, 1, 3)), fast_case("bfloat16", (2, 3, 2))),
        witnesses=(fast_case("int8", (2, 3), claim="shape kept"),),
        what="sonnx's numpy Transpose equals transpose_reference",
        mode="sampled"),
)


def _mutant(name: str, requirements: tuple[str, ...], targets: tuple[str, ...], known_bug: tuple[str, tuple]) -> Mutant:
    return Mutant(name, f"tests.crosshair.mutants.{name}", requirements, targets, known_bug)


MUTANTS: tuple[Mutant, ...] = (
    # (2, 3, 2) with perm (1, 2, 0) (index 3 of the permutations of 3): a 3-cycle, the inverse
    # permutation reads the wrong element (and the wrong shape's strides)
    _mutant("transpose_inverse_perm", ("TRANSPOSE-R3",), ("transpose-moves/int32.2x3x2",),
            ("transpose-moves/int32.2x3x2", (tuple(range(12)), 3))),
)
