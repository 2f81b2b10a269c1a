"""Harnesses of GlobalAveragePool (ops/globalaveragepool.py): the numpy kernel against the
plain-Python reference (the stated fold from the first element, each addition rounded in T, one
division by T(count)) on planes drawn from values whose sums are ties or signed zeros
(edges.sum_ties), every value compared with its zero's sign (sampled: the numpy kernel is not
symbolic).

Witness: "the average of a plane of zeros is +0" (false: a plane of -0 averages to -0).
Mutant (mutants/globalaveragepool_zero_start.py): the fold started at +0 (a start value
added), which turns a sum of -0 into +0.
"""
from __future__ import annotations

import math
from typing import Callable

import icontract
import numpy as np

from sonnx import dtypes
from sonnx.ops import globalaveragepool as gap_op
from sonnx.semantics.tensor import from_numpy
from sonnx.semantics.values import same_value

from .common import Case, Harness, Mutant, case_name, named, pick, unwrapped, within
from .edges import sum_ties

SHAPE = (1, 2, 3)        # two planes of three


def table_of(dtype: str) -> list[float]:
    """sum_ties with -0 first: the sampler's first draws (index 0) are then planes of -0."""
    ties = sum_ties(dtype)
    return [-0.0] + [v for v in ties if not (v == 0 and math.copysign(1.0, v) < 0)]


def fast_case(dtype: str, *, claim: str = "spec") -> Case:
    table = table_of(dtype)
    n = math.prod(SHAPE)

    def array(ix):
        npdt = dtypes.numpy_dtype(dtype)
        return np.array([pick(table, i) for i in ix], dtype=np.float64).astype(npdt).reshape(SHAPE)

    def build() -> Callable:
        fast, ref = gap_op.OPERATOR.kernel, unwrapped(gap_op.globalaveragepool_reference)
        if claim == "spec":
            def post(ix, result):
                expected = ref(from_numpy(array(ix)))
                got = from_numpy(result)
                return got.shape == expected.shape and all(
                    same_value(dtype, x, y) for x, y in zip(got.data, expected.data))
        elif claim == "zeros average to +0":
            def post(ix, result):
                return all(v != 0 or math.copysign(1.0, v) > 0 for v in from_numpy(result).data)
        else:
            raise ValueError(claim)

        @icontract.require(lambda ix: len(ix) == n)
        @icontract.require(lambda ix: within(ix, 0, len(table) - 1))
        @icontract.ensure(post)
        def fast_vs_reference(ix: tuple) -> np.ndarray:
            return fast(array(ix))
        return named(fast_vs_reference, f"globalaveragepool_fast_{dtype}", ix=n)

    return Case(case_name(dtype, claim), build, 8.0)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "globalaveragepool-fold", ("GLOBALAVERAGEPOOL-R3",),
        cases=(fast_case("float"), fast_case("float16"), fast_case("double")),
        witnesses=(fast_case("float", claim="zeros average to +0"),),
        what="sonnx's numpy GlobalAveragePool equals the reference fold divided once, on sum ties and "
             "signed zeros",
        mode="sampled"),
)


def _mutant(name: str, requirements: tuple[str, ...], targets: tuple[str, ...], known_bug: tuple[str, tuple]) -> Mutant:
    return Mutant(name, f"tests.crosshair.mutants.{name}", requirements, targets, known_bug)


MUTANTS: tuple[Mutant, ...] = (
    # the first plane all -0 (index 0 of table_of): the reference gives -0, the mutant +0
    _mutant("globalaveragepool_zero_start", ("GLOBALAVERAGEPOOL-R3",), ("globalaveragepool-fold/float",),
            ("globalaveragepool-fold/float", ((0, 0, 0, 1, 1, 1),))),
)
