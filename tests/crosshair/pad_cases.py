"""Harnesses of Pad (ops/pad.py), a structural operator: pad_reference against its declared
contract (the padded shape, and every element by multi-index bit for bit: X's at o - b inside
X, the constant elsewhere: PAD-R6) with symbolic integer data and constant and a symbolic choice
among pads of the rank, and on float edge values (NaN, both zeros, infinities, subnormals) for
the data and the constant; its refusals (PAD-R1: exactly the pads of another length than 2r or
with a negative entry, among every list of length 0..4 with entries in [-1, 1]); the numpy
kernel against the reference (sampled).

Witnesses: "Y has X's shape" (false for a non-zero pad) and "never the constant's value at a
corner" (false: a corner of a padded Y is the constant).
Mutant (mutants/pad_pairs_interleaved.py): the pads read as (b_0, e_0, b_1, e_1, ...), the
layout of PyTorch's F.pad, instead of ONNX's (b_0, b_1, ..., e_0, e_1, ...).
"""
from __future__ import annotations

import itertools
from typing import Callable

import icontract
import numpy as np

from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import pad as pad_op
from sonnx.semantics.tensor import TensorValue, from_numpy, size
from sonnx.semantics.values import same_value

from .common import Case, Harness, Mutant, case_name, declared_post, named, pick, shape_tag, unwrapped, within
from .edges import float_edges, int_edges
from .moves import typed_cases

SHAPES = ((), (3,), (2, 3), (2, 1, 2))


def _pads(r: int) -> list[tuple[int, ...]]:
    """Every pads list of rank ``r`` with entries in {0, 1} (and a 2 on the first axis)."""
    return [p for p in itertools.product((0, 1), repeat=2 * r)] + ([(2,) + (0,) * (2 * r - 1)] if r else [])


FALSE_CLAIMS: dict[str, Callable] = {          # (result, shape, data, c) -> bool
    "shape kept": lambda r, shape, data, c: r.shape == shape,
    "corner is data": lambda r, shape, data, c: not r.data or r.data[0] != c or r.data[0] in data,
}


def _moves_case(dtype: str, shape: tuple[int, ...], tag: str, values: Callable, bounds: tuple[int, int],
                claim: str, budget: float, exhaustive: bool) -> Case:
    """x: the flat data (or indexes into a table, as ``values`` reads them), each within
    ``bounds``; k: the constant (read the same way); p: which pads of the rank (every one of
    _pads). The postcondition is pad_reference's declared contract, or a false claim."""
    n, pads = size(shape), _pads(len(shape))
    lo, hi = bounds

    def build() -> Callable:
        kernel = unwrapped(pad_op.pad_reference)
        if claim == "spec":
            def post(x, k, p, result):
                return declared_post(pad_op.pad_reference, x=TensorValue(dtype, shape, values(x)),
                                     pads=pick(pads, p), c=values((k,))[0], result=result)
        else:
            holds = FALSE_CLAIMS[claim]

            def post(x, k, p, result):
                return holds(result, shape, values(x), values((k,))[0])

        @icontract.require(lambda x: len(x) == n)
        @icontract.require(lambda x, k: within(x, lo, hi) & (lo <= k) & (k <= hi))
        @icontract.require(lambda p: 0 <= p < len(pads))
        @icontract.ensure(post)
        def harness(x: tuple, k: int, p: int) -> TensorValue:
            return kernel(TensorValue(dtype, shape, values(x)), pick(pads, p), values((k,))[0])
        return named(harness, f"pad_{tag}", x=n)

    return Case(case_name(tag, claim), build, budget, exhaustive)


int_case, float_case = typed_cases(_moves_case, 8.0)


# -- refusals (PAD-R1) --------------------------------------------------------------------------
REFUSAL_SHAPES = ((), (3,), (2, 3))
CANDIDATES = tuple(c for k in range(5) for c in itertools.product(range(-1, 2), repeat=k))


def refusal_spec(shape, pads, outcome) -> bool:
    """Independent statement: Pad-25 accepts exactly the pads of length 2r with no negative
    entry, with the shape (d_a + pads[a] + pads[a + r]); refuses the others with PAD-R1."""
    kind, got = outcome
    r = len(shape)
    if len(pads) == 2 * r and min(pads, default=0) >= 0:
        return kind == "ok" and got.shape == tuple(d + pads[a] + pads[a + r] for a, d in enumerate(shape))
    return kind == "refused" and got == frozenset({"PAD-R1"})


def refusal_case(*, budget: float = 10.0, claim: str = "spec") -> Case:
    def build() -> Callable:
        kernel = unwrapped(pad_op.pad_reference)
        if claim == "spec":
            def post(s, c, result):
                return refusal_spec(REFUSAL_SHAPES[s], pick(CANDIDATES, c), result)
        elif claim == "accepts all":          # witness: false, a negative pad is refused
            def post(result):
                return result[0] == "ok"
        else:
            raise ValueError(claim)

        @icontract.require(lambda s, c: 0 <= s < len(REFUSAL_SHAPES) and 0 <= c < len(CANDIDATES))
        @icontract.ensure(post)
        def refusal(s: int, c: int) -> tuple:
            shape = REFUSAL_SHAPES[s]
            try:
                return ("ok", kernel(TensorValue("int32", shape, [1] * size(shape)), pick(CANDIDATES, c), 0))
            except ProfileViolation as e:
                return ("refused", frozenset(v.requirement for v in e.violations))
        return named(refusal, "pad_refusal" if claim == "spec" else f"pad_{claim.replace(' ', '_')}")

    return Case("pads" if claim == "spec" else claim.replace(" ", "-"), build, budget, exhaustive=True)


# -- the numpy kernel against the reference (sampled) -----------------------------------------
def fast_case(dtype: str, shape: tuple[int, ...], *, claim: str = "spec") -> Case:
    """sonnx.ops.pad.pad against pad_reference, shape and every value (a NaN matching any NaN:
    from_numpy reads through binary64, the payload bits are the unit tests')."""
    n, pads = size(shape), _pads(len(shape))
    is_float = dtypes.is_float(dtype)
    table = float_edges(dtype) if is_float else int_edges(dtype)
    npdt = dtypes.numpy_dtype(dtype)

    def array(ix, sh):
        return np.array([table[i] for i in ix], dtype=np.float64 if is_float else npdt).astype(npdt).reshape(sh)

    def build() -> Callable:
        fast, ref = pad_op.OPERATOR.kernel, unwrapped(pad_op.pad_reference)
        if claim == "spec":
            def post(ix, k, p, result):
                c = from_numpy(array((k,), ())).data[0]
                expected = ref(from_numpy(array(ix, shape)), pick(pads, p), c)
                got = from_numpy(result)
                return got.shape == expected.shape and all(
                    same_value(dtype, x, y) for x, y in zip(got.data, expected.data))
        elif claim == "shape kept":
            def post(ix, k, p, result):
                return result.shape == shape
        else:
            raise ValueError(claim)

        @icontract.require(lambda ix: len(ix) == n)
        @icontract.require(lambda ix, k: within(ix, 0, len(table) - 1) & (0 <= k) & (k < len(table)))
        @icontract.require(lambda p: 0 <= p < len(pads))
        @icontract.ensure(post)
        def fast_vs_reference(ix: tuple, k: int, p: int) -> np.ndarray:
            # concrete pads: the kernel's memo hashes them (a symbolic key forks on every lookup)
            return fast(array(ix, shape), np.array(pick(pads, p), np.int64), array((k,), ()))
        return named(fast_vs_reference, f"pad_fast_{dtype}_{shape_tag(shape)}", ix=n)

    return Case(case_name(f"{dtype}.{shape_tag(shape)}", claim), build, 6.0)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "pad-moves", ("PAD-R6",),
        cases=(*(int_case("int32", s) for s in SHAPES),
               int_case("int8", (2, 1, 2), budget=10.0),
               *(float_case(t, (2, 1)) for t in ("float16", "bfloat16", "float", "double"))),
        witnesses=(int_case("int32", (2, 3), claim="shape kept", exhaustive=False),
                   int_case("int32", (3,), claim="corner is data", exhaustive=False)),
        what="pad_reference on int32/int8 symbolic data and constant, float edge values, every pads "
             "list of entries 0/1: the padded shape, X's element at o - b inside X and the constant "
             "elsewhere, bit for bit"),
    Harness(
        "pad-refusals", ("PAD-R1",),
        cases=(refusal_case(),),
        witnesses=(refusal_case(claim="accepts all", budget=4.0),),
        what="pad_reference refuses exactly the pads of another length than 2r or with a negative "
             "entry (PAD-R1) and gives the padded shape otherwise"),
    Harness(
        "pad-fast", ("PAD-R6",),
        cases=(fast_case("int8", (2, 3)), fast_case("float16", (2, 1, 2)), fast_case("bfloat16", (3,))),
        witnesses=(fast_case("int8", (2, 3), claim="shape kept"),),
        what="sonnx's numpy Pad equals pad_reference",
        mode="sampled"),
)


def _mutant(name: str, requirements: tuple[str, ...], targets: tuple[str, ...], known_bug: tuple[str, tuple]) -> Mutant:
    return Mutant(name, f"tests.crosshair.mutants.{name}", requirements, targets, known_bug)


# (2, 3) with pads (1, 1, 0, 0) (b = (1, 1), e = (0, 0)): read interleaved, b = (1, 0) and
# e = (1, 0), so X's elements land one column to the left of where ONNX puts them
_BUG_PADS = _pads(2).index((1, 1, 0, 0))

MUTANTS: tuple[Mutant, ...] = (
    _mutant("pad_pairs_interleaved", ("PAD-R6",), ("pad-moves/int32.2x3",),
            ("pad-moves/int32.2x3", (tuple(range(6)), -1, _BUG_PADS))),
)
