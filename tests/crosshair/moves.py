"""The case builders the structural operators' harnesses share (Flatten, Pad, Reshape, Squeeze,
Transpose, Unsqueeze): their reference kernels move elements and compute none, so one harness
shape serves them all. The data ``x`` is a tuple of symbolic integers, either the elements
themselves (an integer type, each within the type's range) or indexes into the float edge table
of the type (NaN, both zeros, infinities, subnormals), read by ``values``; the postcondition is
the reference kernel's declared contract (``claim="spec"``) or a false claim that a witness must
see refuted.

- ``typed_cases(moves)`` gives an operator's ``int_case`` and ``float_case`` from its case
  builder ``moves(dtype, shape, tag, values, bounds, claim, budget, exhaustive)``;
- ``choice_moves(...)`` is that builder for a kernel whose one other argument is a value chosen
  among a shape's legal ones (Squeeze's and Unsqueeze's axes lists, Reshape's targets,
  Transpose's permutations): a symbolic index ``k`` picks it.
Flatten (a symbolic axis read as it is) and Pad (a symbolic constant too) write their own
builder and share only ``typed_cases``.
"""
from __future__ import annotations

from typing import Callable

import icontract

from sonnx.semantics.tensor import TensorValue, size
from sonnx.semantics.values import int_range

from .common import Case, case_name, declared_post, named, pick, shape_tag, unwrapped, within
from .edges import float_edges


def typed_cases(moves: Callable, default_budget: float = 6.0) -> tuple[Callable, Callable]:
    """(int_case, float_case) over ``moves``: integer data exhaustive by default (the paths are
    few), float data sampled by default (an edge table is large)."""
    def int_case(dtype: str, shape: tuple[int, ...], *, budget: float = default_budget,
                 exhaustive: bool = True, claim: str = "spec") -> Case:
        return moves(dtype, shape, f"{dtype}.{shape_tag(shape)}", list, int_range(dtype), claim, budget,
                     exhaustive)

    def float_case(dtype: str, shape: tuple[int, ...], *, budget: float = default_budget,
                   exhaustive: bool = False, claim: str = "spec") -> Case:
        table = float_edges(dtype)

        def values(xs) -> list[float]:
            return [pick(table, i) for i in xs]

        return moves(dtype, shape, f"{dtype}.{shape_tag(shape)}", values, (0, len(table) - 1), claim,
                     budget, exhaustive)

    return int_case, float_case


def choice_moves(reference: Callable, stem: str, keyword: str, choices_of: Callable,
                 false_claims: dict[str, Callable], fixed: dict | None = None) -> Callable:
    """The case builder of ``reference(x, **{keyword: choice}, **fixed)`` where the choice is
    one of ``choices_of(shape)`` (every one legal), picked by a symbolic index ``k``. A false
    claim is ``false_claims[claim](result, shape, data)``."""
    extra = dict(fixed or {})

    def moves(dtype: str, shape: tuple[int, ...], tag: str, values: Callable, bounds: tuple[int, int],
              claim: str, budget: float, exhaustive: bool) -> Case:
        n, choices = size(shape), choices_of(shape)
        lo, hi = bounds

        def build() -> Callable:
            kernel = unwrapped(reference)
            if claim == "spec":
                def post(x, k, result):
                    return declared_post(reference, x=TensorValue(dtype, shape, values(x)),
                                         **{keyword: pick(choices, k)}, **extra, result=result)
            else:
                holds = false_claims[claim]

                def post(x, k, result):
                    return holds(result, shape, values(x))

            @icontract.require(lambda x: len(x) == n)
            @icontract.require(lambda x: within(x, lo, hi))
            @icontract.require(lambda k: 0 <= k < len(choices))
            @icontract.ensure(post)
            def harness(x: tuple, k: int) -> TensorValue:
                return kernel(TensorValue(dtype, shape, values(x)), **{keyword: pick(choices, k)}, **extra)
            return named(harness, f"{stem}_{tag}", x=n)

        return Case(case_name(tag, claim), build, budget, exhaustive)

    return moves
