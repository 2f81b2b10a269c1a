"""Harnesses of Squeeze (ops/squeeze.py), a structural operator: squeeze_reference against its
declared contract (the shape without the named dimensions, and every element by multi-index bit
for bit: SQUEEZE-R4) with symbolic integer data and a symbolic choice among the legal axes lists,
and on float edge values (NaN, both zeros, infinities, subnormals); its refusals (SQUEEZE-R2:
exactly the single axes out of [-r, r-1] or of a dimension other than 1, for Squeeze-25).

Witnesses: "the rank is kept" (false: a dimension goes), "never NaN" (false for a NaN: the data
is moved, NaN included), "accepts all" (false: an axis of size 3 is refused).
Mutant (mutants/squeeze_negative_axis_unread.py): a negative axis not read from the end.
"""
from __future__ import annotations

import math
from typing import Callable

import icontract

from sonnx.errors import ProfileViolation
from sonnx.ops import squeeze as squeeze_op
from sonnx.semantics.tensor import TensorValue, size

from .common import Case, Harness, Mutant, named, unwrapped
from .moves import choice_moves, typed_cases

# shape -> the axes lists tried (each legal for Squeeze-25), negative ones included
AXES = {
    (1,): ((0,), (-1,)),
    (2, 1, 3): ((1,), (-2,)),
    (1, 2, 1): ((0,), (2,), (0, 2), (-1, 0), (-3,)),
    (2, 1, 1, 2): ((1,), (2,), (1, 2), (-2, -3)),
}

FALSE_CLAIMS: dict[str, Callable] = {          # (result, shape, data) -> bool
    "rank kept": lambda r, shape, data: len(r.shape) == len(shape),
    "never NaN": lambda r, shape, data: not any(math.isnan(v) for v in r.data),
}


# x: the data (moves.py); k: which legal axes list of AXES[shape]
_moves_case = choice_moves(squeeze_op.squeeze_reference, "squeeze", "axes", AXES.__getitem__, FALSE_CLAIMS)
int_case, float_case = typed_cases(_moves_case)


# -- refusals (SQUEEZE-R2) ---------------------------------------------------------------------
REFUSAL_SHAPES = ((1,), (2, 1), (1, 3, 1))


def refusal_spec(shape, axis, outcome) -> bool:
    """Independent statement: Squeeze-25 accepts a single axis exactly when it is in [-r, r-1]
    and names a dimension of size 1, giving the shape without it; refuses the others with
    SQUEEZE-R2."""
    kind, got = outcome
    r = len(shape)
    if -r <= axis <= r - 1 and shape[axis % r] == 1:
        return kind == "ok" and got.shape == tuple(d for i, d in enumerate(shape) if i != axis % r)
    return kind == "refused" and got == frozenset({"SQUEEZE-R2"})


def refusal_case(*, budget: float = 10.0, claim: str = "spec") -> Case:
    def build() -> Callable:
        kernel = unwrapped(squeeze_op.squeeze_reference)
        if claim == "spec":
            def post(s, axis, result):
                return refusal_spec(REFUSAL_SHAPES[s], axis, result)
        elif claim == "accepts all":          # witness: false, an axis of size 3 is refused
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
        return named(refusal, "squeeze_refusal" if claim == "spec" else f"squeeze_{claim.replace(' ', '_')}")

    return Case("axes" if claim == "spec" else claim.replace(" ", "-"), build, budget, exhaustive=True)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "squeeze-moves", ("SQUEEZE-R4",),
        cases=(*(int_case("int32", s) for s in AXES),
               *(float_case(t, (2, 1, 3)) for t in ("float16", "bfloat16", "float", "double"))),
        witnesses=(int_case("int32", (1, 2, 1), claim="rank kept", exhaustive=False),
                   float_case("double", (2, 1, 3), claim="never NaN")),
        what="squeeze_reference on int32 symbolic data and float edge values, every listed axes "
             "choice: the shape without the named dimensions, every element by multi-index bit for bit"),
    Harness(
        "squeeze-refusals", ("SQUEEZE-R2",),
        cases=(refusal_case(),),
        witnesses=(refusal_case(claim="accepts all", budget=4.0),),
        what="squeeze_reference refuses exactly the single axes outside [-r, r-1] or naming a "
             "dimension other than 1 (SQUEEZE-R2) and gives the shape without the axis otherwise"),
)


def _mutant(name: str, requirements: tuple[str, ...], targets: tuple[str, ...], known_bug: tuple[str, tuple]) -> Mutant:
    return Mutant(name, f"tests.crosshair.mutants.{name}", requirements, targets, known_bug)


MUTANTS: tuple[Mutant, ...] = (
    # (2, 1, 3) with axes (-2,) (k = 1): the mutant keeps the rank-3 shape
    _mutant("squeeze_negative_axis_unread", ("SQUEEZE-R4",), ("squeeze-moves/int32.2x1x3",),
            ("squeeze-moves/int32.2x1x3", ((0, 1, 2, 3, 4, 5), 1))),
)
