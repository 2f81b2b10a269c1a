"""Harnesses of BatchNormalization (ops/batchnormalization.py): the numpy kernel against the
plain-Python reference (the stated sequence: d = sqrt(var + eps) once, then subtract, divide,
multiply, add, each rounded in T) on one channel of two elements and its four parameters, all
drawn from a table of values where the order of the operations shows (quotients that are not
exact, signed zeros, a negative variance, zero denominators), every value compared bit for bit
with its zero's sign (sampled: the numpy kernel is not symbolic).

Witness: "the result never depends on dividing before multiplying" stated as: equal to
(x - mean) * (scale / d) + B (false: the fold rounds differently).
Mutant (mutants/batchnormalization_reciprocal.py): the quotient computed as a multiplication by
the reciprocal 1 / d, as a runtime that precomputes 1 / sqrt(var + eps) does.
"""
from __future__ import annotations

import math
from typing import Callable

import icontract
import numpy as np

from sonnx import dtypes
from sonnx.ops import batchnormalization as bn_op
from sonnx.semantics.tensor import from_numpy
from sonnx.semantics.values import same_value

from .common import Case, Harness, Mutant, case_name, named, pick, unwrapped, within

SHAPE = (1, 1, 2)                       # one channel of two elements
# index 0 first: the sampler's first draws; 5 / 3 and 5 * (1 / 3) round differently in every T
TABLE = [5.0, 1.0, 9.0, 0.0, -0.0, 3.0, -2.5, 0.1, -1.0, 7.0, 1e-3, 2.0]


def fast_case(dtype: str, *, claim: str = "spec") -> Case:
    n = math.prod(SHAPE) + 4

    def arrays(ix):
        npdt = dtypes.numpy_dtype(dtype)
        vals = [pick(TABLE, i) for i in ix]
        x = np.array(vals[:2], dtype=np.float64).astype(npdt).reshape(SHAPE)
        return [x] + [np.array([v], dtype=np.float64).astype(npdt) for v in vals[2:]]

    def build() -> Callable:
        fast, ref = bn_op.OPERATOR.kernel, unwrapped(bn_op.batchnormalization_reference)
        if claim == "spec":
            def post(ix, result):
                expected = ref(*map(from_numpy, arrays(ix)), 0.0)
                got = from_numpy(result)
                return got.shape == expected.shape and all(
                    same_value(dtype, x, y) for x, y in zip(got.data, expected.data))
        elif claim == "a fold gives the same bits":
            def post(ix, result):
                x, s, b, m, v = (a.astype(np.float64) for a in arrays(ix))
                with np.errstate(all="ignore"):
                    d = np.sqrt(v)
                    folded = ((x - m) * (s / d) + b).astype(dtypes.numpy_dtype(dtype))
                return all(same_value(dtype, p, q) for p, q in zip(from_numpy(result).data,
                                                                    from_numpy(folded).data))
        else:
            raise ValueError(claim)

        @icontract.require(lambda ix: len(ix) == n)
        @icontract.require(lambda ix: within(ix, 0, len(TABLE) - 1))
        @icontract.ensure(post)
        def fast_vs_reference(ix: tuple) -> np.ndarray:
            x, s, b, m, v = arrays(ix)
            return fast(x, s, b, m, v, epsilon=0.0)
        return named(fast_vs_reference, f"batchnormalization_fast_{dtype}", ix=n)

    return Case(case_name(dtype, claim), build, 8.0)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "batchnormalization-sequence", ("BATCHNORMALIZATION-R5",),
        cases=(fast_case("float"), fast_case("float16"), fast_case("double"), fast_case("bfloat16")),
        witnesses=(fast_case("float", claim="a fold gives the same bits"),),
        what="sonnx's numpy BatchNormalization equals the reference's stated sequence (subtract, divide, "
             "multiply, add, each rounded in T; sqrt(var + eps) per channel) on values where the order shows",
        mode="sampled"),
)


def _mutant(name: str, requirements: tuple[str, ...], targets: tuple[str, ...], known_bug: tuple[str, tuple]) -> Mutant:
    return Mutant(name, f"tests.crosshair.mutants.{name}", requirements, targets, known_bug)


MUTANTS: tuple[Mutant, ...] = (
    # x = (5, 1), scale = 1, B = 0, mean = 0, var = 9: 5 / 3 and 5 * (1 / 3) differ in float
    _mutant("batchnormalization_reciprocal", ("BATCHNORMALIZATION-R5",), ("batchnormalization-sequence/float",),
            ("batchnormalization-sequence/float", ((0, 1, 1, 3, 3, 2),))),
)
