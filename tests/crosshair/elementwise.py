"""Harnesses of a same-shape element-wise operator (Mul, Add, ...), from one description of it.

``harnesses(op)`` gives the five groups every such operator gets: integers signed and unsigned
(symbolic values on the grid of shapes, and each type's edge values), floats (edge values, ties,
NaN, infinities, signed zeros, subnormals, overflow), refusals (R1 different shapes, R3 mixed or
non-numeric types, R4 broadcastable shapes), and the numpy kernel against the reference. Each
group has a witness: a deliberately false claim ("the int8 result never wraps") that CrossHair
must refute, or the group's silence is no evidence.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import icontract
import numpy as np

from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.semantics.tensor import TensorValue, from_numpy, size
from sonnx.semantics.values import int_range, same_value

from .common import Case, Harness, case_name, declared_post, named, pick, shape_tag, unwrapped, within
from .edges import FLOATS, SHAPES, SIGNED, UNSIGNED, float_edges, int_edges


@dataclass(frozen=True)
class Elementwise:
    """One same-shape operator as the campaign sees it."""
    name: str                          # ONNX op_type, e.g. "Mul"
    prefix: str                        # its requirement IDs: MUL-R1, ...
    type_set: frozenset[str]           # the latest version's element types
    reference: Callable                # (a, b) -> TensorValue, with its declared contract
    fast: Callable                     # (a, b) -> np.ndarray, the numpy kernel
    exact: Callable                    # the unrounded, unwrapped operation (x, y) -> value
    ties: Callable[[str], list[float]]  # values of T whose results include exact ties
    result: str                        # "product", "sum": for the descriptions

    @classmethod
    def of(cls, op, *, exact: Callable, ties: Callable[[str], list[float]], result: str) -> "Elementwise":
        """From the operator's registry record (sonnx.ops.registry.Operator)."""
        return cls(op.name, op.prefix, frozenset(op.type_sets[max(op.type_sets)]), op.reference,
                   op.kernel, exact, ties, result)

    def req(self, n: int) -> str:
        return f"{self.prefix}-R{n}"

    @property
    def tag(self) -> str:
        return self.name.lower()


# -- values: integers and floats -------------------------------------------------------------
def _values_case(op: Elementwise, dtype: str, shape: tuple[int, ...], tag: str, values: Callable,
                 bounds: tuple[int, int], claim: str, false_claims: dict[str, Callable],
                 budget: float, exhaustive: bool) -> Case:
    """a, b are the flat data of A and B, or indexes into a table, as ``values`` reads them, each
    within ``bounds``; the postcondition is the reference's declared contract, or one of
    ``false_claims`` (about every element: (result, x, y) -> bool) for a witness."""
    n = size(shape)
    lo, hi = bounds

    def build() -> Callable:
        kernel = unwrapped(op.reference)
        if claim == "spec":
            def post(a, b, result):
                return result.shape == shape and declared_post(
                    op.reference, a=TensorValue(dtype, shape, values(a)),
                    b=TensorValue(dtype, shape, values(b)), result=result)
        else:
            holds = false_claims[claim]

            def post(a, b, result):
                return all(holds(r, x, y) for r, x, y in zip(result.data, values(a), values(b)))

        @icontract.require(lambda a, b: len(a) == n and len(b) == n)
        @icontract.require(lambda a, b: within(a + b, lo, hi))
        @icontract.ensure(post)
        def harness(a: tuple, b: tuple) -> TensorValue:
            return kernel(TensorValue(dtype, shape, values(a)), TensorValue(dtype, shape, values(b)))
        return named(harness, f"{op.tag}_{tag}", a=n, b=n)

    return Case(case_name(tag, claim), build, budget, exhaustive)


def int_case(op: Elementwise, dtype: str, shape: tuple[int, ...], *, budget: float = 6.0,
             edges: bool = False, exhaustive: bool = False, claim: str = "spec") -> Case:
    """Free symbolic ints in T's range, or indexes into T's edge values when ``edges``; witness:
    "never wraps" (false: a result leaves T's range)."""
    table = int_edges(dtype)

    def values(xs) -> list[int]:
        return [table[i] for i in xs] if edges else list(xs)

    return _values_case(op, dtype, shape, f"{dtype}.{shape_tag(shape)}{'.edges' if edges else ''}",
                        values, (0, len(table) - 1) if edges else int_range(dtype), claim,
                        {"never wraps": lambda r, x, y: r == op.exact(x, y)}, budget, exhaustive)


def float_case(op: Elementwise, dtype: str, shape: tuple[int, ...], *, budget: float = 6.0,
               claim: str = "spec", ties: bool = False, exhaustive: bool = False) -> Case:
    """Indexes into the edge values (or the tie values) of ``dtype``: CrossHair branches over the
    choices; the declared contract says exact result, RNE, NaN-aware, signed zeros. Witness:
    "never rounds" (false: some finite result is not the exact one)."""
    table = op.ties(dtype) if ties else float_edges(dtype)

    def values(xs) -> list[float]:
        return [pick(table, i) for i in xs]

    return _values_case(op, dtype, shape, f"{dtype}.{shape_tag(shape)}{'.ties' if ties else ''}",
                        values, (0, len(table) - 1), claim,
                        {"never rounds": lambda r, x, y: math.isnan(r) or math.isinf(r) or r == op.exact(x, y)},
                        budget, exhaustive)


# -- refusals (R1, R3, R4) -------------------------------------------------------------------
REFUSAL_SHAPES = ((), (1,), (3,), (1, 3), (2, 3), (3, 2), (2, 1, 3))
REFUSAL_TYPES = ("float", "int8", "uint64", "bool")
_ONE = {"float": 1.0, "int8": 1, "uint64": 1, "bool": True}


def refusal_spec(op: Elementwise, sa, sb, ta, tb, outcome) -> bool:
    """Independent statement of the refusals: numpy's broadcasting rule decides R4 vs R1."""
    kind, ids = outcome
    r3 = ta != tb or ta not in op.type_set or tb not in op.type_set
    if sa == sb:
        r1 = r4 = False
    else:
        try:
            np.broadcast_shapes(sa, sb)
            r1, r4 = False, True
        except ValueError:
            r1, r4 = True, False
    if not (r1 or r3 or r4):
        return kind == "ok" and ids.shape == sa
    return (kind == "refused" and (op.req(1) in ids) == r1 and (op.req(3) in ids) == r3
            and (op.req(4) in ids) == r4)


def refusal_case(op: Elementwise, *, budget: float = 25.0, claim: str = "spec") -> Case:
    def build() -> Callable:
        kernel = unwrapped(op.reference)
        if claim == "spec":
            def post(sa, sb, ta, tb, result):
                return refusal_spec(op, REFUSAL_SHAPES[sa], REFUSAL_SHAPES[sb], REFUSAL_TYPES[ta],
                                    REFUSAL_TYPES[tb], result)
        elif claim == "accepts all":          # witness: false, something is refused
            def post(result):
                return result[0] == "ok"
        elif claim == "never broadcasts":     # witness: false, a broadcastable pair is refused
            def post(result):
                return result[0] == "ok" or op.req(4) not in result[1]
        else:
            raise ValueError(claim)

        @icontract.require(lambda sa, sb: 0 <= sa < len(REFUSAL_SHAPES) and 0 <= sb < len(REFUSAL_SHAPES))
        @icontract.require(lambda ta, tb: 0 <= ta < len(REFUSAL_TYPES) and 0 <= tb < len(REFUSAL_TYPES))
        @icontract.ensure(post)
        def refusal(sa: int, sb: int, ta: int, tb: int) -> tuple:
            shape_a, shape_b = REFUSAL_SHAPES[sa], REFUSAL_SHAPES[sb]
            type_a, type_b = REFUSAL_TYPES[ta], REFUSAL_TYPES[tb]
            a = TensorValue(type_a, shape_a, [_ONE[type_a]] * size(shape_a))
            b = TensorValue(type_b, shape_b, [_ONE[type_b]] * size(shape_b))
            try:
                return ("ok", kernel(a, b))
            except ProfileViolation as e:
                return ("refused", frozenset(v.requirement for v in e.violations))
        return named(refusal, f"{op.tag}_refusal" if claim == "spec" else f"{op.tag}_{claim.replace(' ', '_')}")

    return Case("pairs" if claim == "spec" else claim.replace(" ", "-"), build, budget, exhaustive=True)


# -- the numpy kernel against the reference (sampled) ----------------------------------------
def fast_case(op: Elementwise, dtype: str, shape: tuple[int, ...], *, claim: str = "spec") -> Case:
    """The numpy kernel bit for bit against the reference. numpy's C loop is concrete code:
    CrossHair realizes the inputs when it builds the arrays, so each path is a sample."""
    n = size(shape)
    is_float = dtypes.is_float(dtype)
    table = float_edges(dtype) if is_float else int_edges(dtype)

    def arrays(ia, ib):
        npdt = dtypes.numpy_dtype(dtype)
        a = np.array([table[i] for i in ia], dtype=np.float64 if is_float else npdt)
        b = np.array([table[i] for i in ib], dtype=np.float64 if is_float else npdt)
        return a.astype(npdt).reshape(shape), b.astype(npdt).reshape(shape)

    def build() -> Callable:
        fast, ref = op.fast, unwrapped(op.reference)
        if claim == "spec":
            def post(ia, ib, result):
                a, b = arrays(ia, ib)
                expected = ref(from_numpy(a), from_numpy(b))
                got = from_numpy(result)
                return got.shape == expected.shape and all(
                    same_value(dtype, x, y) for x, y in zip(got.data, expected.data))
        elif claim == "never wraps":          # witness: false, an integer result wraps
            def post(ia, ib, result):
                return all(int(r) == op.exact(table[x], table[y])
                           for r, x, y in zip(result.reshape(-1).tolist(), ia, ib))
        else:
            raise ValueError(claim)

        @icontract.require(lambda ia, ib: len(ia) == n and len(ib) == n)
        @icontract.require(lambda ia, ib: within(ia + ib, 0, len(table) - 1))
        @icontract.ensure(post)
        def fast_vs_reference(ia: tuple, ib: tuple) -> np.ndarray:
            with np.errstate(all="ignore"):
                return fast(*arrays(ia, ib))
        return named(fast_vs_reference, f"{op.tag}_fast_{dtype}_{shape_tag(shape)}", ia=n, ib=n)

    return Case(case_name(f"{dtype}.{shape_tag(shape)}", claim), build, 6.0)


# -- the five groups -------------------------------------------------------------------------
def harnesses(op: Elementwise) -> tuple[Harness, ...]:
    """Every harness of the same-shape operator ``op``, named ``<op>-signed`` etc."""
    r1, r3, r4 = op.req(1), op.req(3), op.req(4)
    ref = op.reference.__name__
    return (
        Harness(
            f"{op.tag}-signed", (r1, r3),
            # wrap may branch once per element: 2**size paths, all of them explored for int8
            # and small shapes (int64 at size 6: the solver's queries are slower; budget only)
            cases=(*(int_case(op, t, s, budget=4.0 if size(s) <= 4 else 20.0,
                              exhaustive=size(s) <= 4 or t == "int8")
                     for t in ("int8", "int64") for s in SHAPES),
                   *(int_case(op, t, (), edges=True, budget=3.0, exhaustive=True) for t in SIGNED)),
            witnesses=(int_case(op, "int8", (2, 3), claim="never wraps"),),
            what=f"{ref} on int8..int64: wrap-around, range and shape, grid of shapes, "
                 "edge values"),
        Harness(
            f"{op.tag}-unsigned", (r1, r3),
            cases=(*(int_case(op, t, s, budget=3.0, exhaustive=True) for t in ("uint8", "uint64")
                     for s in SHAPES),
                   *(int_case(op, t, (), edges=True, budget=3.0, exhaustive=True) for t in UNSIGNED)),
            witnesses=(int_case(op, "uint8", (3, 2), claim="never wraps"),),
            what=f"{ref} on uint8..uint64: wrap-around, range and shape, grid of shapes, "
                 "edge values"),
        Harness(
            f"{op.tag}-float", (r1, r3),
            # scalar: all 20 x 20 edge-value pairs (exhaustive); larger shapes: a budget's worth
            cases=(*(float_case(op, t, (), budget=20.0, exhaustive=True) for t in FLOATS),
                   *(float_case(op, t, (), ties=True, budget=8.0, exhaustive=True)
                     for t in ("float16", "bfloat16")),
                   *(float_case(op, t, s, budget=4.0) for t in ("float16", "float") for s in SHAPES[1:])),
            witnesses=(float_case(op, "float16", (2, 3), claim="never rounds"),),
            what=f"{ref} on float16/bfloat16/float/double edge values: NaN, infinities, "
                 f"signed zeros, subnormals, {op.result}s that tie, overflow"),
        Harness(
            f"{op.tag}-refusals", (r1, r3, r4),
            cases=(refusal_case(op),),
            witnesses=(refusal_case(op, claim="accepts all", budget=6.0),
                       refusal_case(op, claim="never broadcasts", budget=6.0)),
            what=f"{ref} refuses different shapes (R1), broadcastable shapes (R4) and "
                 "mixed or non-numeric types (R3), and accepts the rest"),
        Harness(
            f"{op.tag}-fast", (r1, r3),
            cases=(fast_case(op, "int8", (2, 3)), fast_case(op, "uint16", (3,)),
                   fast_case(op, "float16", (2, 3)), fast_case(op, "bfloat16", (2,))),
            witnesses=(fast_case(op, "int8", (2, 3), claim="never wraps"),),
            what=f"sonnx.{op.fast.__name__} (numpy) equals {ref} bit for bit",
            mode="sampled"),
    )
