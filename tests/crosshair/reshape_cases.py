"""Harnesses of Reshape (ops/reshape.py), a structural operator: reshape_reference against its
declared contract (the resolved shape, and every element by multi-index bit for bit:
RESHAPE-R4) with symbolic integer data and a symbolic choice among target shapes holding 0 and
-1 entries, and on float edge values (NaN, both zeros, infinities, subnormals); its refusals
(RESHAPE-R2: a symbolic two-entry shape and allowzero on a (2, 3) input, against an independent
statement of the resolution).

Witnesses: "the shape is kept" (false for a target other than the input's shape), "never NaN"
(false for a NaN: the data is moved, NaN included), "accepts all" (false: (4, 4) is refused).
Mutants (mutants/reshape_*.py): a 0 entry copying the input's last dimension instead of the one
at its index; the copy in reverse order.
"""
from __future__ import annotations

import math
from typing import Callable

import icontract

from sonnx.errors import ProfileViolation
from sonnx.ops import reshape as reshape_op
from sonnx.semantics.tensor import TensorValue, size

from .common import Case, Harness, Mutant, named, unwrapped
from .moves import choice_moves, typed_cases

# input shape -> target shapes the moves harness chooses among (symbolically), 0 and -1 included
TARGETS = {
    (2, 3): ((3, 2), (0, -1), (-1,), (6, 1), (1, -1, 2)),
    (2, 3, 2): ((0, 0, 2), (4, -1), (-1, 2, 0), (12,), (2, 6)),
}

FALSE_CLAIMS: dict[str, Callable] = {          # (result, shape, data) -> bool
    "shape kept": lambda r, shape, data: r.shape == shape,
    "never NaN": lambda r, shape, data: not any(math.isnan(v) for v in r.data),
}


# x: the data (moves.py); k: which target of TARGETS[shape]
_moves_case = choice_moves(reshape_op.reshape_reference, "reshape", "shape", TARGETS.__getitem__, FALSE_CLAIMS, fixed={"allowzero": 0})
int_case, float_case = typed_cases(_moves_case)


# -- refusals (RESHAPE-R2) ---------------------------------------------------------------------
IN_SHAPE = (2, 3)


def refusal_spec(s0: int, s1: int, allowzero: int, outcome) -> bool:
    """Independent statement for a (2, 3) input and the target (s0, s1): accepted exactly when no
    entry is below -1, not both are -1, allowzero=1 meets no 0, and after a 0 copies the input's
    dimension at its index, a -1 divides 6 out of the other entry or the product is 6."""
    kind, got = outcome
    shape = [s0, s1]
    ok = min(shape) >= -1 and shape != [-1, -1] and not (allowzero == 1 and 0 in shape)
    if ok:
        full = [IN_SHAPE[i] if s == 0 else s for i, s in enumerate(shape)]
        if -1 in full:
            other = full[1 - full.index(-1)]
            ok = other > 0 and 6 % other == 0
            want = tuple(6 // other if s == -1 else s for s in full) if ok else None
        else:
            ok = full[0] * full[1] == 6
            want = tuple(full)
    if ok:
        return kind == "ok" and got.shape == want
    return kind == "refused" and got == frozenset({"RESHAPE-R2"})


def refusal_case(*, budget: float = 10.0, claim: str = "spec") -> Case:
    def build() -> Callable:
        kernel = unwrapped(reshape_op.reshape_reference)
        if claim == "spec":
            def post(s0, s1, allowzero, result):
                return refusal_spec(s0, s1, allowzero, result)
        elif claim == "accepts all":          # witness: false, (4, 4) is refused
            def post(result):
                return result[0] == "ok"
        else:
            raise ValueError(claim)

        @icontract.require(lambda s0, s1, allowzero: -3 <= s0 <= 7 and -3 <= s1 <= 7 and 0 <= allowzero <= 1)
        @icontract.ensure(post)
        def refusal(s0: int, s1: int, allowzero: int) -> tuple:
            try:
                return ("ok", kernel(TensorValue("int32", IN_SHAPE, [1] * 6), (s0, s1), allowzero))
            except ProfileViolation as e:
                return ("refused", frozenset(v.requirement for v in e.violations))
        return named(refusal, "reshape_refusal" if claim == "spec" else f"reshape_{claim.replace(' ', '_')}")

    return Case("shapes" if claim == "spec" else claim.replace(" ", "-"), build, budget, exhaustive=True)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "reshape-moves", ("RESHAPE-R4",),
        cases=(int_case("int32", (2, 3)), int_case("int32", (2, 3, 2)),
               *(float_case(t, (2, 3)) for t in ("float16", "bfloat16", "float", "double"))),
        witnesses=(int_case("int32", (2, 3), claim="shape kept", exhaustive=False),
                   float_case("double", (2, 3), claim="never NaN")),
        what="reshape_reference on int32 symbolic data and float edge values, every listed target "
             "(0 and -1 entries): the resolved shape, every element by multi-index bit for bit"),
    Harness(
        "reshape-refusals", ("RESHAPE-R2",),
        cases=(refusal_case(),),
        witnesses=(refusal_case(claim="accepts all", budget=4.0),),
        what="reshape_reference refuses exactly the two-entry targets of a (2, 3) input that do not "
             "resolve (RESHAPE-R2), for allowzero 0 and 1, and gives the resolved shape otherwise"),
)


def _mutant(name: str, requirements: tuple[str, ...], targets: tuple[str, ...], known_bug: tuple[str, tuple]) -> Mutant:
    return Mutant(name, f"tests.crosshair.mutants.{name}", requirements, targets, known_bug)


MUTANTS: tuple[Mutant, ...] = (
    # (2, 3, 2) to (0, 0, 2): the mutant copies the last dimension (2) for each 0: (2, 2, 2), refused
    # as a size mismatch; (2, 3) to (0, -1): (3, 2) instead of (2, 3)
    _mutant("reshape_zero_copies_last", ("RESHAPE-R2", "RESHAPE-R4"),
            ("reshape-moves/int32.2x3", "reshape-refusals/shapes"),
            ("reshape-moves/int32.2x3", ((0, 1, 2, 3, 4, 5), 1))),
    # any target of (2, 3): x = 0..5 comes out 5..0
    _mutant("reshape_reversed_copy", ("RESHAPE-R4",), ("reshape-moves/int32.2x3",),
            ("reshape-moves/int32.2x3", ((0, 1, 2, 3, 4, 5), 0))),
)
