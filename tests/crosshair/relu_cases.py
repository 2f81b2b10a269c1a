"""Harnesses of Relu (ops/relu.py), the one unary operator: relu_reference against its declared
contract on signed integers (symbolic values on the grid of shapes, each type's edge values)
and on the float types' edge values (NaN, infinities, both zeros, subnormals); its refusals
(RELU-R2: a type outside Relu-14's set); the numpy kernel against the reference (sampled).

Witnesses: "returns its input" (false for a negative integer), "never changes a zero's sign"
(false for -0: the +0 path is reached) and "never gives NaN" (false for a NaN: the NaN path is
reached).
"""
from __future__ import annotations

import math
from typing import Callable

import icontract
import numpy as np

from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import relu as relu_op
from sonnx.semantics.tensor import TensorValue, from_numpy, size
from sonnx.semantics.values import int_range, same_value

from .common import (Case, Harness, Mutant, case_name, declared_post, mutant,
                     named, pick, shape_tag, unwrapped, within)
from .edges import FLOATS, SHAPES, SIGNED, float_edges, int_edges

FALSE_CLAIMS: dict[str, Callable] = {          # (result, x) -> bool about every element
    "returns its input": lambda r, x: r == x,
    "never changes a zero's sign": lambda r, x: x != 0 or math.copysign(1.0, r) == math.copysign(1.0, x),
    "never gives NaN": lambda r, x: not math.isnan(r),
}


def _values_case(dtype: str, shape: tuple[int, ...], tag: str, values: Callable, bounds: tuple[int, int],
                 claim: str, budget: float, exhaustive: bool) -> Case:
    """x is the flat data of X, or indexes into a table, as ``values`` reads them, each within
    ``bounds``; the postcondition is relu_reference's declared contract, or a false claim."""
    n = size(shape)
    lo, hi = bounds

    def build() -> Callable:
        kernel = unwrapped(relu_op.relu_reference)
        if claim == "spec":
            def post(x, result):
                return result.shape == shape and declared_post(
                    relu_op.relu_reference, x=TensorValue(dtype, shape, values(x)), result=result)
        else:
            holds = FALSE_CLAIMS[claim]

            def post(x, result):
                return all(holds(r, v) for r, v in zip(result.data, values(x)))

        @icontract.require(lambda x: len(x) == n)
        @icontract.require(lambda x: within(x, lo, hi))
        @icontract.ensure(post)
        def harness(x: tuple) -> TensorValue:
            return kernel(TensorValue(dtype, shape, values(x)))
        return named(harness, f"relu_{tag}", x=n)

    return Case(case_name(tag, claim), build, budget, exhaustive)


def int_case(dtype: str, shape: tuple[int, ...], *, edges: bool = False, budget: float = 4.0,
             exhaustive: bool = True, claim: str = "spec") -> Case:
    """Free symbolic ints in T's range, or indexes into T's edge values (its minimum included)."""
    table = int_edges(dtype)

    def values(xs) -> list[int]:
        return [table[i] for i in xs] if edges else list(xs)

    return _values_case(dtype, shape, f"{dtype}.{shape_tag(shape)}{'.edges' if edges else ''}", values,
                        (0, len(table) - 1) if edges else int_range(dtype), claim, budget, exhaustive)


def float_case(dtype: str, shape: tuple[int, ...], *, budget: float = 4.0, exhaustive: bool = False,
               claim: str = "spec") -> Case:
    """Indexes into the edge values of ``dtype``: NaN, both infinities, both zeros, subnormals."""
    table = float_edges(dtype)

    def values(xs) -> list[float]:
        return [pick(table, i) for i in xs]

    return _values_case(dtype, shape, f"{dtype}.{shape_tag(shape)}", values, (0, len(table) - 1), claim,
                        budget, exhaustive)


# -- refusals (RELU-R2) ------------------------------------------------------------------------
REFUSAL_SHAPES = ((), (1,), (2, 3), (2, 1, 3))
REFUSAL_TYPES = ("float", "bfloat16", "int8", "int64", "uint8", "uint64", "bool")
_ONE = {"float": 1.0, "bfloat16": 1.0, "int8": 1, "int64": 1, "uint8": 1, "uint64": 1, "bool": True}


def refusal_spec(shape, dtype, outcome) -> bool:
    """Independent statement: refused with RELU-R2 exactly when T is not a signed integer or a
    float type (Relu-14); otherwise accepted, with X's shape."""
    kind, got = outcome
    allowed = dtype in ("float16", "bfloat16", "float", "double", "int8", "int16", "int32", "int64")
    if allowed:
        return kind == "ok" and got.shape == shape and got.dtype == dtype
    return kind == "refused" and got == frozenset({"RELU-R2"})


def refusal_case(*, budget: float = 10.0, claim: str = "spec") -> Case:
    def build() -> Callable:
        kernel = unwrapped(relu_op.relu_reference)
        if claim == "spec":
            def post(s, t, result):
                return refusal_spec(REFUSAL_SHAPES[s], REFUSAL_TYPES[t], result)
        elif claim == "accepts all":          # witness: false, an unsigned type is refused
            def post(result):
                return result[0] == "ok"
        else:
            raise ValueError(claim)

        @icontract.require(lambda s, t: 0 <= s < len(REFUSAL_SHAPES) and 0 <= t < len(REFUSAL_TYPES))
        @icontract.ensure(post)
        def refusal(s: int, t: int) -> tuple:
            shape, dtype = REFUSAL_SHAPES[s], REFUSAL_TYPES[t]
            try:
                return ("ok", kernel(TensorValue(dtype, shape, [_ONE[dtype]] * size(shape))))
            except ProfileViolation as e:
                return ("refused", frozenset(v.requirement for v in e.violations))
        return named(refusal, "relu_refusal" if claim == "spec" else f"relu_{claim.replace(' ', '_')}")

    return Case("types" if claim == "spec" else claim.replace(" ", "-"), build, budget, exhaustive=True)


# -- the numpy kernel against the reference (sampled) -----------------------------------------
def fast_case(dtype: str, shape: tuple[int, ...], *, claim: str = "spec") -> Case:
    """sonnx.relu bit for bit (a NaN matching any NaN) against relu_reference; numpy's C loop (or
    the proved C kernel, for the types Relu's record makes it the default) is concrete code, so
    each path is a sample."""
    n = size(shape)
    is_float = dtypes.is_float(dtype)
    table = float_edges(dtype) if is_float else int_edges(dtype)

    def array(ix):
        npdt = dtypes.numpy_dtype(dtype)
        return np.array([table[i] for i in ix], dtype=np.float64 if is_float else npdt).astype(npdt).reshape(shape)

    def build() -> Callable:
        fast, ref = relu_op.OPERATOR.kernel, unwrapped(relu_op.relu_reference)
        if claim == "spec":
            def post(ix, result):
                expected = ref(from_numpy(array(ix)))
                got = from_numpy(result)
                return got.shape == expected.shape and all(
                    same_value(dtype, x, y) for x, y in zip(got.data, expected.data))
        elif claim == "returns its input":    # witness: false, a negative value gives 0
            def post(ix, result):
                return all(same_value(dtype, r, table[i]) for r, i in zip(from_numpy(result).data, ix))
        else:
            raise ValueError(claim)

        @icontract.require(lambda ix: len(ix) == n)
        @icontract.require(lambda ix: within(ix, 0, len(table) - 1))
        @icontract.ensure(post)
        def fast_vs_reference(ix: tuple) -> np.ndarray:
            return fast(array(ix))
        return named(fast_vs_reference, f"relu_fast_{dtype}_{shape_tag(shape)}", ix=n)

    return Case(case_name(f"{dtype}.{shape_tag(shape)}", claim), build, 6.0)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "relu-int", ("RELU-R1", "RELU-R3"),
        # one branch per element (x <= 0 or not): 2**size paths, all explored
        cases=(*(int_case(t, s) for t in ("int8", "int64") for s in SHAPES),
               *(int_case(t, (), edges=True, budget=2.0) for t in SIGNED)),
        witnesses=(int_case("int8", (2, 3), claim="returns its input", exhaustive=False),),
        what="relu_reference on int8..int64: the input or 0, in range, shape kept; grid of shapes, "
             "edge values (the minimum gives 0)"),
    Harness(
        "relu-float", ("RELU-R1", "RELU-R3"),
        cases=(*(float_case(t, (), budget=6.0, exhaustive=True) for t in FLOATS),
               *(float_case(t, s) for t in ("float16", "float") for s in SHAPES[1:])),
        witnesses=(float_case("float", (), claim="never changes a zero's sign"),
                   float_case("bfloat16", (2,), claim="never gives NaN")),
        what="relu_reference on float16/bfloat16/float/double edge values: NaN kept, -0 and +0 give "
             "+0, infinities, subnormals (no flush)"),
    Harness(
        "relu-refusals", ("RELU-R2",),
        cases=(refusal_case(),),
        witnesses=(refusal_case(claim="accepts all", budget=4.0),),
        what="relu_reference refuses unsigned integers and bool (RELU-R2) and accepts the rest"),
    Harness(
        "relu-fast", ("RELU-R1", "RELU-R3"),
        cases=(fast_case("int8", (2, 3)), fast_case("float16", (2, 3)), fast_case("bfloat16", (2,)),
               fast_case("double", (3,))),
        witnesses=(fast_case("int8", (2, 3), claim="returns its input"),),
        what="sonnx.relu equals relu_reference bit for bit (numpy on int8/float16/bfloat16; on double "
             "the proved C entry point its record makes the default)",
        mode="sampled"),
)

# Relu: -0 kept as -0, a NaN turned into 0, unsigned integers accepted
MUTANTS: tuple[Mutant, ...] = (
    mutant("relu_minus_zero_kept", ("RELU-R3",), ("relu-float/float.scalar", "relu-float/float16.scalar"),
           ("relu-float/float.scalar", ((1,),))),                                   # -0 gives +0
    mutant("relu_nan_to_zero", ("RELU-R3",), ("relu-float/double.scalar", "relu-float/float16.scalar"),
           ("relu-float/double.scalar", ((19,),))),                                  # NaN gives NaN
    mutant("relu_unsigned_accepted", ("RELU-R2",), ("relu-refusals/types",),
           ("relu-refusals/types", (0, 4))),                                         # uint8: RELU-R2
)
