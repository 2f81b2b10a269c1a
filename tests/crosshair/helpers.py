"""Harnesses of the helpers every kernel relies on: integer wrap-around, the flat index of a
multi-index, and rounding to a float format. The function under test is looked up when a case
is built (a mutant may have replaced it); the spec is the contract the shipped function declares,
bound here when this module loads.
"""
from __future__ import annotations

import math
from typing import Callable

import icontract

from sonnx.semantics.floats import round_to as shipped_round_to
from sonnx.semantics.tensor import flat_index as shipped_flat_index
from sonnx.semantics.tensor import size, unravel_index

from .common import Case, Harness, case_name, declared_post, named, resolve, shape_tag, unwrapped, within
from .edges import SHAPES


def wrap_case(bits: int, signed: bool, *, claim: str = "spec") -> Case:
    """intloops.wrap (another engineer's file) contract-checked through a wrapper, over the
    whole range of products of two values of the type."""
    lo = -(1 << (bits - 1)) if signed else 0
    hi = lo + (1 << bits) - 1
    bound = 1 << (2 * bits)

    def build() -> Callable:
        wrap = resolve("sonnx.semantics.intloops:wrap")
        if claim == "spec":
            def post(x, result):
                return lo <= result <= hi and (result - x) % (1 << bits) == 0
        elif claim == "identity":             # witness: false, wrap changes some product
            def post(x, result):
                return result == x
        else:
            raise ValueError(claim)

        @icontract.require(lambda x: -bound <= x <= bound)
        @icontract.ensure(post)
        def wrap_checked(x: int) -> int:
            return wrap(x, bits, signed)
        return named(wrap_checked, f"wrap_{'i' if signed else 'u'}{bits}")

    tag = f"{'int' if signed else 'uint'}{bits}"
    return Case(tag if claim == "spec" else f"{tag}.{claim}", build, 4.0, exhaustive=(claim == "spec"))


def index_case(shape: tuple[int, ...], *, claim: str = "spec") -> Case:
    """flat_index over every in-bounds multi-index of ``shape``: its declared contract, and
    unravel_index inverts it (together: a bijection onto 0 .. size-1)."""
    def build() -> Callable:
        fi = unwrapped(resolve("sonnx.semantics.tensor:flat_index"))
        if claim == "spec":
            def post(index, result):
                return (declared_post(shipped_flat_index, shape=shape, index=tuple(index), result=result)
                        and unravel_index(shape, result) == tuple(index))
        elif claim == "never last":           # witness: false, the last offset is reached
            def post(result):
                return result != size(shape) - 1
        else:
            raise ValueError(claim)

        @icontract.require(lambda index: len(index) == len(shape)
                           and within((i - d for i, d in zip(index, shape)), -(1 << 30), -1)
                           and within(index, 0, 1 << 30))
        @icontract.ensure(post)
        def index_checked(index: tuple) -> int:
            return fi(shape, tuple(index))
        return named(index_checked, f"flat_index_{shape_tag(shape)}", index=len(shape))

    return Case(case_name(shape_tag(shape), claim), build, 4.0, exhaustive=(claim == "spec"))


def round_case(name: str, *, claim: str = "spec") -> Case:
    """round_to on a symbolic double: its declared contract (independent RNE rule)."""
    def build() -> Callable:
        rt = unwrapped(resolve("sonnx.semantics.floats:round_to"))
        if claim == "spec":
            def post(x, result):
                return declared_post(shipped_round_to, name=name, x=x, result=result)
        elif claim == "identity":             # witness: false, some double is not a value of T
            def post(x, result):
                return result == x or math.isnan(x)
        else:
            raise ValueError(claim)

        @icontract.ensure(post)
        def round_checked(x: float) -> float:
            return rt(name, x)
        return named(round_checked, f"round_to_{name}")

    return Case(name if claim == "spec" else f"{name}.{claim}", build, 5.0)


def harnesses(same_shape: str, rounding: str) -> tuple[Harness, ...]:
    """The helpers' harnesses, claimed for the requirements the caller names: ``same_shape``
    (an R1-like "element i of the result comes from element i of each operand") for the flat
    index, ``rounding`` (the arithmetic of a result element) for wrap and round_to. This module
    names no operator: the operator whose cases module registers these harnesses says which of
    its requirements they support (today Mul's, tests/crosshair/mul_cases.py)."""
    return (
        Harness(
            "wrap", (rounding,),
            cases=tuple(wrap_case(b, s) for b in (8, 16, 32, 64) for s in (True, False)),
            witnesses=(wrap_case(8, True, claim="identity"),),
            what="intloops.wrap (through a wrapper): in range and congruent modulo 2**bits"),
        Harness(
            "flat-index", (same_shape,),
            cases=tuple(index_case(s) for s in SHAPES),
            witnesses=(index_case((2, 1, 2), claim="never last"),),
            what="tensor.flat_index: in range, sum-of-strides offset, inverted by unravel_index"),
        Harness(
            "round-to", (rounding,),
            cases=tuple(round_case(t) for t in ("float16", "bfloat16", "float")),
            witnesses=(round_case("float16", claim="identity"),),
            what="floats.round_to on symbolic doubles against the independent RNE rule",
            mode="sampled"),
    )
