"""Harnesses of Flatten (ops/flatten.py), the structural operator: flatten_reference against its
declared contract (the 2-D shape, and every element by multi-index bit for bit: FLATTEN-R3) with
symbolic integer data and a symbolic axis over every legal value, and on float edge values (NaN,
both zeros, infinities, subnormals); its refusals (FLATTEN-R1: exactly the axes outside [-r, r]
of Flatten-25); the numpy kernel against the reference (sampled).

Witnesses: "Y has d0 rows" (false for an axis other than 1), "Y has one row" (false for an
axis above 0) and "never NaN" (false for a NaN: the data is moved, NaN included).
Mutants (mutants/flatten_*.py): the copy in column-major order, the shape split one dimension
late.
"""
from __future__ import annotations

import math
from typing import Callable

import icontract
import numpy as np

from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import flatten as flatten_op
from sonnx.semantics.tensor import TensorValue, from_numpy, size
from sonnx.semantics.values import same_value

from .common import Case, Harness, Mutant, case_name, declared_post, named, pick, shape_tag, unwrapped, within
from .edges import float_edges, int_edges
from .moves import typed_cases

SHAPES = ((), (4,), (2, 3), (3, 2), (2, 1, 3), (2, 3, 2))

FALSE_CLAIMS: dict[str, Callable] = {          # (result, shape, data) -> bool
    "rows are the first dimension": lambda r, shape, data: r.shape[0] == (shape[0] if shape else 1),
    "one row": lambda r, shape, data: r.shape[0] == 1,
    "never NaN": lambda r, shape, data: not any(math.isnan(v) for v in r.data),
}


def _moves_case(dtype: str, shape: tuple[int, ...], tag: str, values: Callable, bounds: tuple[int, int],
                claim: str, budget: float, exhaustive: bool) -> Case:
    """x: the flat data (or indexes into a table, as ``values`` reads them), each within
    ``bounds``; axis: any legal value, [-r, r]. The postcondition is flatten_reference's declared
    contract, or a false claim."""
    n, r = size(shape), len(shape)
    lo, hi = bounds

    def build() -> Callable:
        kernel = unwrapped(flatten_op.flatten_reference)
        if claim == "spec":
            def post(x, axis, result):
                return declared_post(flatten_op.flatten_reference, x=TensorValue(dtype, shape, values(x)),
                                     axis=axis, result=result)
        else:
            holds = FALSE_CLAIMS[claim]

            def post(x, axis, result):
                return holds(result, shape, values(x))

        @icontract.require(lambda x: len(x) == n)
        @icontract.require(lambda x: within(x, lo, hi))
        @icontract.require(lambda axis: -r <= axis <= r)
        @icontract.ensure(post)
        def harness(x: tuple, axis: int) -> TensorValue:
            return kernel(TensorValue(dtype, shape, values(x)), axis)
        return named(harness, f"flatten_{tag}", x=n)

    return Case(case_name(tag, claim), build, budget, exhaustive)


int_case, float_case = typed_cases(_moves_case)


# -- refusals (FLATTEN-R1) ---------------------------------------------------------------------
REFUSAL_SHAPES = ((), (3,), (2, 3), (2, 1, 3))


def refusal_spec(shape, axis, outcome) -> bool:
    """Independent statement: Flatten-25 accepts exactly the axes in [-r, r], with the shape
    (product before, product from) of the normalised axis; refuses the others with FLATTEN-R1."""
    kind, got = outcome
    r = len(shape)
    if -r <= axis <= r:
        a = axis + r if axis < 0 else axis
        return kind == "ok" and got.shape == (math.prod(shape[:a]), math.prod(shape[a:]))
    return kind == "refused" and got == frozenset({"FLATTEN-R1"})


def refusal_case(*, budget: float = 10.0, claim: str = "spec") -> Case:
    def build() -> Callable:
        kernel = unwrapped(flatten_op.flatten_reference)
        if claim == "spec":
            def post(s, axis, result):
                return refusal_spec(REFUSAL_SHAPES[s], axis, result)
        elif claim == "accepts all":          # witness: false, an axis beyond the rank is refused
            def post(result):
                return result[0] == "ok"
        else:
            raise ValueError(claim)

        @icontract.require(lambda s, axis: 0 <= s < len(REFUSAL_SHAPES) and -6 <= axis <= 6)
        @icontract.ensure(post)
        def refusal(s: int, axis: int) -> tuple:
            shape = REFUSAL_SHAPES[s]
            try:
                return ("ok", kernel(TensorValue("int32", shape, [1] * size(shape)), axis))
            except ProfileViolation as e:
                return ("refused", frozenset(v.requirement for v in e.violations))
        return named(refusal, "flatten_refusal" if claim == "spec" else f"flatten_{claim.replace(' ', '_')}")

    return Case("axes" if claim == "spec" else claim.replace(" ", "-"), build, budget, exhaustive=True)


# -- the numpy kernel against the reference (sampled) -----------------------------------------
def fast_case(dtype: str, shape: tuple[int, ...], *, claim: str = "spec") -> Case:
    """sonnx.ops.flatten.flatten against flatten_reference, shape and every value (a NaN
    matching any NaN: from_numpy reads through binary64, the payload bits are the unit tests')."""
    n, r = size(shape), len(shape)
    is_float = dtypes.is_float(dtype)
    table = float_edges(dtype) if is_float else int_edges(dtype)

    def array(ix):
        npdt = dtypes.numpy_dtype(dtype)
        return np.array([table[i] for i in ix], dtype=np.float64 if is_float else npdt).astype(npdt).reshape(shape)

    def build() -> Callable:
        fast, ref = flatten_op.OPERATOR.kernel, unwrapped(flatten_op.flatten_reference)
        if claim == "spec":
            def post(ix, axis, result):
                expected = ref(from_numpy(array(ix)), axis)
                got = from_numpy(result)
                return got.shape == expected.shape and all(
                    same_value(dtype, x, y) for x, y in zip(got.data, expected.data))
        elif claim == "one row":
            def post(ix, axis, result):
                return result.shape[0] == 1
        else:
            raise ValueError(claim)

        @icontract.require(lambda ix: len(ix) == n)
        @icontract.require(lambda ix: within(ix, 0, len(table) - 1))
        @icontract.require(lambda axis: -r <= axis <= r)
        @icontract.ensure(post)
        def fast_vs_reference(ix: tuple, axis: int) -> np.ndarray:
            # a concrete axis: the kernel's memo hashes it (a symbolic key forks on every lookup)
            return fast(array(ix), axis=pick(range(-r, r + 1), axis + r))
        return named(fast_vs_reference, f"flatten_fast_{dtype}_{shape_tag(shape)}", ix=n)

    return Case(case_name(f"{dtype}.{shape_tag(shape)}", claim), build, 6.0)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "flatten-moves", ("FLATTEN-R3",),
        cases=(*(int_case("int32", s) for s in SHAPES),
               int_case("int8", (2, 3, 2), budget=10.0),
               *(float_case(t, (2, 3)) for t in ("float16", "bfloat16", "float", "double"))),
        witnesses=(int_case("int32", (2, 3, 2), claim="rows are the first dimension", exhaustive=False),
                   int_case("int32", (2, 3), claim="one row", exhaustive=False),
                   float_case("double", (2, 3), claim="never NaN")),
        what="flatten_reference on int32/int8 symbolic data and float edge values, every legal axis: "
             "the 2-D shape, every element at its split index bit for bit"),
    Harness(
        "flatten-refusals", ("FLATTEN-R1",),
        cases=(refusal_case(),),
        witnesses=(refusal_case(claim="accepts all", budget=4.0),),
        what="flatten_reference refuses exactly the axes outside [-r, r] (FLATTEN-R1) and gives the "
             "shape of the normalised axis otherwise"),
    Harness(
        "flatten-fast", ("FLATTEN-R3",),
        cases=(fast_case("int8", (2, 3)), fast_case("float16", (2, 3)), fast_case("bfloat16", (2, 1, 3))),
        witnesses=(fast_case("int8", (2, 3), claim="one row"),),
        what="sonnx's numpy Flatten equals flatten_reference",
        mode="sampled"),
)


def _mutant(name: str, requirements: tuple[str, ...], targets: tuple[str, ...], known_bug: tuple[str, tuple]) -> Mutant:
    return Mutant(name, f"tests.crosshair.mutants.{name}", requirements, targets, known_bug)


MUTANTS: tuple[Mutant, ...] = (
    # (2, 3) with axis 1: x = 0, 1, 2, 3, 4, 5 lands as 0, 3, 1, 4, 2, 5
    _mutant("flatten_column_major", ("FLATTEN-R3",), ("flatten-moves/int32.2x3", "flatten-moves/int32.2x3x2"),
            ("flatten-moves/int32.2x3", ((0, 1, 2, 3, 4, 5), 1))),
    # (2, 3) with axis 1: the shape (2, 3), the mutant gives (6, 1)
    _mutant("flatten_axis_off_by_one", ("FLATTEN-R3",), ("flatten-moves/int32.2x3", "flatten-refusals/axes"),
            ("flatten-moves/int32.2x3", ((0, 1, 2, 3, 4, 5), 1))),
)
