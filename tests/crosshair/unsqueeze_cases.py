"""Harnesses of Unsqueeze (ops/unsqueeze.py), a structural operator: unsqueeze_reference against its
declared contract (the shape with dimensions 1 inserted, and every element by multi-index bit
for bit: UNSQUEEZE-R4) with symbolic integer data and a symbolic choice among the legal axes lists,
and on float edge values (NaN, both zeros, infinities, subnormals); its refusals (UNSQUEEZE-R2:
exactly the single axes out of [-R, R-1], R = r + 1, for Unsqueeze-25).

Witnesses: "the rank is kept" (false: a dimension comes), "never NaN" (false for a NaN: the data
is moved, NaN included), "accepts all" (false: an axis beyond the output's rank is refused).
Mutant (mutants/unsqueeze_input_rank.py): a negative axis read against the input's rank.
"""
from __future__ import annotations

import math
from typing import Callable

import icontract

from sonnx.errors import ProfileViolation
from sonnx.ops import unsqueeze as unsqueeze_op
from sonnx.semantics.tensor import TensorValue, size

from .common import Case, Harness, Mutant, named, unwrapped
from .moves import choice_moves, typed_cases

# shape -> the axes lists tried (each legal for Unsqueeze-25), negative ones included
AXES = {
    (): ((0,), (-1,), (0, 1)),
    (3,): ((0,), (1,), (-1,), (0, 2)),
    (2, 3): ((0,), (1,), (2,), (-1,), (3, 0), (-1, -2)),
    (2, 1, 3): ((1,), (-1,), (0, 4)),
}

FALSE_CLAIMS: dict[str, Callable] = {          # (result, shape, data) -> bool
    "rank kept": lambda r, shape, data: len(r.shape) == len(shape),
    "never NaN": lambda r, shape, data: not any(math.isnan(v) for v in r.data),
}


# x: the data (moves.py); k: which legal axes list of AXES[shape]
_moves_case = choice_moves(unsqueeze_op.unsqueeze_reference, "unsqueeze", "axes", AXES.__getitem__, FALSE_CLAIMS)
int_case, float_case = typed_cases(_moves_case)


# -- refusals (UNSQUEEZE-R2) ---------------------------------------------------------------------
REFUSAL_SHAPES = ((), (2,), (2, 3))


def refusal_spec(shape, axis, outcome) -> bool:
    """Independent statement: Unsqueeze-25 accepts a single axis exactly when it is in [-R, R-1]
    with R = r + 1, giving the shape with a 1 at position axis mod R; refuses the others with
    UNSQUEEZE-R2."""
    kind, got = outcome
    big = len(shape) + 1
    if -big <= axis <= big - 1:
        p = axis % big
        return kind == "ok" and got.shape == tuple(shape[:p]) + (1,) + tuple(shape[p:])
    return kind == "refused" and got == frozenset({"UNSQUEEZE-R2"})


def refusal_case(*, budget: float = 10.0, claim: str = "spec") -> Case:
    def build() -> Callable:
        kernel = unwrapped(unsqueeze_op.unsqueeze_reference)
        if claim == "spec":
            def post(s, axis, result):
                return refusal_spec(REFUSAL_SHAPES[s], axis, result)
        elif claim == "accepts all":          # witness: false, an axis beyond the output's rank is refused
            def post(result):
                return result[0] == "ok"
        else:
            raise ValueError(claim)

        @icontract.require(lambda s, axis: 0 <= s < len(REFUSAL_SHAPES) and -5 <= axis <= 5)
        @icontract.ensure(post)
        def refusal(s: int, axis: int) -> tuple:
            shape = REFUSAL_SHAPES[s]
            try:
                return ("ok", kernel(TensorValue("int32", shape, [1] * size(shape)), (axis,)))
            except ProfileViolation as e:
                return ("refused", frozenset(v.requirement for v in e.violations))
        return named(refusal, "unsqueeze_refusal" if claim == "spec" else f"unsqueeze_{claim.replace(' ', '_')}")

    return Case("axes" if claim == "spec" else claim.replace(" ", "-"), build, budget, exhaustive=True)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "unsqueeze-moves", ("UNSQUEEZE-R4",),
        cases=(*(int_case("int32", s) for s in AXES),
               *(float_case(t, (2, 3)) for t in ("float16", "bfloat16", "float", "double"))),
        witnesses=(int_case("int32", (2, 3), claim="rank kept", exhaustive=False),
                   float_case("double", (2, 3), claim="never NaN")),
        what="unsqueeze_reference on int32 symbolic data and float edge values, every listed axes "
             "choice: the shape with dimensions 1 inserted, every element by multi-index bit for bit"),
    Harness(
        "unsqueeze-refusals", ("UNSQUEEZE-R2",),
        cases=(refusal_case(),),
        witnesses=(refusal_case(claim="accepts all", budget=4.0),),
        what="unsqueeze_reference refuses exactly the single axes outside [-R, R-1] "
             "(UNSQUEEZE-R2) and gives the shape with the 1 inserted otherwise"),
)


def _mutant(name: str, requirements: tuple[str, ...], targets: tuple[str, ...], known_bug: tuple[str, tuple]) -> Mutant:
    return Mutant(name, f"tests.crosshair.mutants.{name}", requirements, targets, known_bug)


MUTANTS: tuple[Mutant, ...] = (
    # (2, 3) with axes (-1,) (k = 3): the mutant gives (2, 1, 3) instead of (2, 3, 1)
    _mutant("unsqueeze_input_rank", ("UNSQUEEZE-R4",), ("unsqueeze-moves/int32.2x3",),
            ("unsqueeze-moves/int32.2x3", ((0, 1, 2, 3, 4, 5), 3))),
)
