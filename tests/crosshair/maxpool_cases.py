"""Harnesses of MaxPool (ops/maxpool.py): maxpool_reference against its declared contract
(MAXPOOL-R4 stated by is_window_max for every window: the first NaN, else the greatest element
with -0 < +0, the result one of the window's elements bit for bit) on symbolic data drawn from a
table of the values where the rule is easiest to get wrong (both zeros, +-1, infinities, NaN),
over a 1-D window with padding at both ends and a 2-D window.

Witness: "never NaN" (false: a NaN propagates).
Mutant (mutants/maxpool_minus_zero_wins.py): the running maximum kept on a tie of zeros, so
max(-0, +0) is -0 (onnxruntime's behaviour).
"""
from __future__ import annotations

import math
from typing import Callable

import icontract

from sonnx.ops import maxpool as maxpool_op
from sonnx.semantics.tensor import TensorValue, size

from .common import Case, Harness, Mutant, case_name, declared_post, named, pick, unwrapped, within

TABLE = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan]
GEOMETRIES = {   # tag -> (shape, attributes)
    "1d-padded": ((1, 1, 3), dict(kernel_shape=[2], strides=[1], pads=[1, 1])),
    "2d": ((1, 1, 2, 2), dict(kernel_shape=[2, 2], strides=[1, 1], pads=[0, 0, 0, 0])),
}


def window_case(dtype: str, tag: str, *, claim: str = "spec", budget: float = 8.0, exhaustive: bool = True) -> Case:
    shape, attrs = GEOMETRIES[tag]
    n = size(shape)

    def build() -> Callable:
        kernel = unwrapped(maxpool_op.maxpool_reference)

        def x_of(ix):
            return TensorValue(dtype, shape, [pick(TABLE, i) for i in ix])

        if claim == "spec":
            def post(ix, result):
                return declared_post(maxpool_op.maxpool_reference, x=x_of(ix), result=result, dilations=None,
                                     ceil_mode=None, **attrs)
        elif claim == "never NaN":
            def post(ix, result):
                return not any(math.isnan(v) for v in result.data)
        else:
            raise ValueError(claim)

        @icontract.require(lambda ix: len(ix) == n)
        @icontract.require(lambda ix: within(ix, 0, len(TABLE) - 1))
        @icontract.ensure(post)
        def harness(ix: tuple) -> TensorValue:
            return kernel(x_of(ix), **attrs)
        return named(harness, f"maxpool_{dtype}_{tag}", ix=n)

    return Case(case_name(f"{dtype}.{tag}", claim), build, budget, exhaustive)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "maxpool-window", ("MAXPOOL-R4",),
        cases=(window_case("float", "1d-padded"), window_case("double", "1d-padded"),
               window_case("float16", "2d", budget=20.0, exhaustive=False)),
        witnesses=(window_case("float", "1d-padded", claim="never NaN", exhaustive=False),),
        what="maxpool_reference on zeros of both signs, +-1, infinities and NaN, a padded 1-D window and "
             "a 2-D one: every window's result is its first NaN, else its greatest element with -0 < +0"),
)


def _mutant(name: str, requirements: tuple[str, ...], targets: tuple[str, ...], known_bug: tuple[str, tuple]) -> Mutant:
    return Mutant(name, f"tests.crosshair.mutants.{name}", requirements, targets, known_bug)


MUTANTS: tuple[Mutant, ...] = (
    # x = (-0, +0, 1): the window (x0, x1) gives +0; the mutant keeps -0
    _mutant("maxpool_minus_zero_wins", ("MAXPOOL-R4",), ("maxpool-window/float.1d-padded",),
            ("maxpool-window/float.1d-padded", ((1, 0, 2),))),
)
