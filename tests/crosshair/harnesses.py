"""The CrossHair campaign, as data: harnesses, their reachability witnesses, planted mutants.

Nothing here runs CrossHair; ``runner.py`` analyses one harness (or witness set, or mutant) in
a process of its own and ``campaign.py`` drives them all. Every function built here is a
plain Python function with icontract contracts, so each counterexample CrossHair reports can
be replayed by calling it (``campaign.replay``).

How a harness is made
---------------------
A ``Harness`` is a named group of ``Case``s over one family of inputs (a dtype family, the
refusals, an index helper). A case's ``build(k)`` returns a function whose arguments are plain
ints, lists of ints or floats -- never a ``TensorValue`` or anything built through a checked
constructor: CrossHair drops a path silently when building an argument fails, so each harness
builds its tensors itself, from a fixed shape, inside its body. ``k`` is a ``Kernels`` object:
the functions under test, looked up by name, so that a mutant can replace one of them.

Its preconditions bound the inputs (lengths, ranges); its single postcondition is the spec,
written with the kernel's own declared contract (``declared_post``) plus what the harness adds.
Harness bodies call kernels through ``unwrapped`` (contract stripped) so the spec is evaluated
once, in the harness postcondition that the runner counts; helpers the kernel calls keep their
contracts, and the runner makes those enforced as at run time (a nested violation is an error).

Every harness has at least one ``witness``: a case with a deliberately FALSE postcondition
("the int8 product never wraps"). CrossHair must refute it, and the counterexample must replay;
otherwise the harness's paths do not reach the interesting part of the spec and its silence is
no evidence. ``exhaustive=True`` on a case means the campaign requires "Confirmed over all
paths" for it, not merely "no counterexample in the budget".

Adding Gemm (or any operator)
-----------------------------
1. Register the kernels under test in ``KERNELS`` (name -> "module:function"), e.g.
   ``"gemm_reference": "sonnx.ops.gemm:gemm_reference"``.
2. Append a ``Harness`` to ``HARNESSES``: name, requirement IDs (they must exist in
   spec/requirements.toml; test_campaign_config checks it), cases (one per shape/dtype point
   of the grid, built by a factory like ``int_case`` below, calling ``k.gemm_reference``), and
   at least one witness (e.g. "alpha never changes the result").
3. Plant mutants: a module ``tests/crosshair/mutants/<name>.py`` defining ``KERNELS = {...}``
   (replacement functions, by kernel name) and a docstring saying what is wrong; then append a
   ``Mutant(name, module, requirement IDs, targets)`` to ``MUTANTS``, ``targets`` naming the
   cases (``"harness/case"``) that must catch it. Gemm's planned ones: transpose index off,
   C broadcast silently accepted, k-loop one short.
``tools/crosshair`` picks the new entries up; nothing else lists them.
"""
from __future__ import annotations

import importlib
import inspect
import math
import typing
from dataclasses import dataclass, field
from typing import Callable

import icontract
import numpy as np

from sonnx import dtypes
from sonnx.errors import ProfileViolation
from sonnx.ops import mul as mul_op
from sonnx.ops.floats import FORMATS
from sonnx.ops.tensor import TensorValue, size

# ---------------------------------------------------------------- kernels under test
KERNELS: dict[str, str] = {
    "mul_reference": "sonnx.ops.mul:mul_reference",
    "mul_fast": "sonnx.ops.mul:mul",
    "flat_index": "sonnx.ops.tensor:flat_index",
    "unravel_index": "sonnx.ops.tensor:unravel_index",
    "wrap": "sonnx.ops.intloops:wrap",            # owned elsewhere: checked through wrappers here
    "round_to": "sonnx.ops.floats:round_to",
}


def _resolve(path: str):
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


class Kernels:
    """The functions under test, by name; ``overrides`` (a mutant's) replace some of them."""

    def __init__(self, overrides: dict[str, Callable] | None = None):
        self._overrides = dict(overrides or {})

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._overrides:
            return self._overrides[name]
        return _resolve(KERNELS[name])


def unwrapped(fn: Callable) -> Callable:
    """``fn`` without its icontract checker (a mutant without contracts comes back as is)."""
    while hasattr(fn, "__preconditions__") or hasattr(fn, "__postconditions__"):
        fn = fn.__wrapped__
    return fn


def declared_post(fn: Callable, **kwargs) -> bool:
    """Every postcondition declared on the real kernel ``fn`` holds for these arguments/result."""
    checker = icontract._checkers.find_checker(fn)
    if checker is None or not checker.__postconditions__:
        # the per-element contracts exist only with SONNX_CONTRACTS=full: without them the
        # harness would check nothing, so refuse to run rather than pass
        raise RuntimeError(f"{fn.__name__} declares no postcondition; run with SONNX_CONTRACTS=full")
    for contract in checker.__postconditions__:
        chosen = {k: kwargs[k] for k in contract.condition_args}
        if not contract.condition(**chosen):
            return False
    return True


# ---------------------------------------------------------------- the grid
SHAPES: tuple[tuple[int, ...], ...] = ((), (4,), (2, 3), (3, 2), (2, 1, 2))   # rank 0..3, non-square
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
FLOATS = ("float16", "bfloat16", "float", "double")


def shape_tag(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def int_edges(dtype: str) -> list[int]:
    lo, hi = mul_op.int_range(dtype)
    mid = 1 << (dtypes.bits(dtype) // 2)         # the square root of 2**bits: products just wrap
    vals = [lo, lo + 1, -1, 0, 1, 2, mid - 1, mid, mid + 1, hi - 1, hi]
    return sorted({v for v in vals if lo <= v <= hi})


def float_edges(dtype: str) -> list[float]:
    """Edge values of a float type: zeros, the subnormal and normal ends, max, infinities, NaN,
    values whose products are ties (1 + ulp, 1.5, 3) and overflow (sqrt(max) * 2)."""
    p, emin, emax = FORMATS[dtype]
    ulp1 = math.ldexp(1.0, 1 - p)
    tiny = math.ldexp(1.0, emin - p + 1)
    maxf = math.ldexp(float(2**p - 1), emax - p + 1)
    return [0.0, -0.0, tiny, -tiny, math.ldexp(1.0, emin), math.ldexp(1.0, emin) - tiny, 0.5,
            1.0, -1.0, 1.0 + ulp1, 1.0 + 3 * ulp1, 1.5, -3.0, 1.0 - ulp1 / 2,
            math.ldexp(1.0, emax // 2 + 1), maxf, -maxf, math.inf, -math.inf, math.nan]


# ---------------------------------------------------------------- campaign entries
@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Kernels], Callable]
    budget: float = 6.0              # CPU seconds for CrossHair on this case
    exhaustive: bool = False         # require "Confirmed over all paths"


@dataclass(frozen=True)
class Harness:
    name: str
    requirements: tuple[str, ...]
    cases: tuple[Case, ...]
    witnesses: tuple[Case, ...]
    what: str
    # "symbolic": CrossHair reasons over the inputs; "sampled": some step (numpy's C code,
    # math.frexp) makes it pick concrete values, so paths are samples, not proofs
    mode: str = "symbolic"


@dataclass(frozen=True)
class Mutant:
    name: str
    module: str
    requirements: tuple[str, ...]
    targets: tuple[str, ...]         # "harness/case" names that must catch it
    budget: float = 20.0


def pick(table: list, i: int):
    """table[i], chosen by comparing i with each position: CrossHair branches once per entry and
    every path then carries a concrete value (a symbolic index into a float table would give a
    symbolic real that each later math.frexp must realize, at a solver call each)."""
    for j, v in enumerate(table):
        if i == j:
            return v
    raise IndexError(i)


def within(values, lo: int, hi: int) -> bool:
    """lo <= v <= hi for every v, as one conjunction (``&``, no short circuit): CrossHair keeps it
    a single symbolic formula, where ``all(...)`` forks on every element and rarely gets
    through a long precondition."""
    ok = True
    for v in values:
        ok = ok & (lo <= v) & (v <= hi)
    return ok


def _named(fn: Callable, name: str, **lengths: int) -> Callable:
    """Name a built harness; ``lengths`` gives tuple arguments a fixed length in their type
    (``tuple[int, int, int]``): CrossHair then makes exactly that many symbolic ints, where a
    ``list[int]`` with a length precondition mostly fails to meet it."""
    fn.__name__ = fn.__qualname__ = name.replace(".", "_").replace("-", "_")
    hints = typing.get_type_hints(unwrapped(fn))   # no strings left for CrossHair to resolve
    for arg, n in lengths.items():
        hints[arg] = typing.Tuple[(int,) * n] if n else typing.Tuple[()]
    layer = fn
    while layer is not None:                       # the checker copied the dict: set every layer
        layer.__annotations__ = hints
        layer = getattr(layer, "__wrapped__", None)
    return fn


# -- integer products ------------------------------------------------------------------------
def int_case(dtype: str, shape: tuple[int, ...], *, budget: float = 6.0, edges: bool = False,
             exhaustive: bool = False, claim: str = "spec") -> Case:
    """a, b are the flat data (free symbolic ints in T's range, or indexes into T's edge values
    when ``edges``); the postcondition is mul_reference's declared contract, or a false claim."""
    n = size(shape)
    lo, hi = mul_op.int_range(dtype)
    table = int_edges(dtype)

    def build(k: Kernels) -> Callable:
        kernel = unwrapped(k.mul_reference)

        def values(xs: list[int]) -> list[int]:
            return [table[i] for i in xs] if edges else list(xs)

        if claim == "spec":
            def post(a, b, result):
                return result.shape == shape and declared_post(
                    mul_op.mul_reference, a=TensorValue(dtype, shape, values(a)),
                    b=TensorValue(dtype, shape, values(b)), result=result)
        elif claim == "never wraps":          # witness: false, a product leaves T's range
            def post(a, b, result):
                return all(
                    r == x * y for r, x, y in zip(result.data, values(a), values(b)))
        else:
            raise ValueError(claim)

        @icontract.require(lambda a, b: len(a) == n and len(b) == n)
        @icontract.require(lambda a, b: within(a + b, 0, len(table) - 1) if edges else within(a + b, lo, hi))
        @icontract.ensure(post)
        def harness(a: tuple, b: tuple) -> TensorValue:
            return kernel(TensorValue(dtype, shape, values(a)), TensorValue(dtype, shape, values(b)))
        return _named(harness, f"{dtype}_{shape_tag(shape)}{'_edges' if edges else ''}", a=n, b=n)

    tag = f"{dtype}.{shape_tag(shape)}{'.edges' if edges else ''}"
    return Case(tag if claim == "spec" else f"{tag}.{claim.replace(' ', '-')}", build, budget, exhaustive)


# -- float products --------------------------------------------------------------------------
def tie_values(dtype: str) -> list[float]:
    """Values whose pairwise products include exact ties in ``dtype`` (1.5 * (1 + ulp) is
    halfway between two neighbours), tiny ones rounding to zero, and ones that are exact."""
    p, emin, _ = FORMATS[dtype]
    ulp1 = math.ldexp(1.0, 1 - p)
    return [1.0 + ulp1, 1.5, -(1.0 + 3 * ulp1), 3.0, math.ldexp(1.0, emin - p + 1), 0.5]


def float_case(dtype: str, shape: tuple[int, ...], *, budget: float = 6.0,
               claim: str = "spec", ties: bool = False, exhaustive: bool = False) -> Case:
    """ia, ib index the edge values of ``dtype`` (CrossHair branches over the choices); the
    postcondition is mul_reference's declared contract (exact product, RNE, NaN-aware)."""
    n = size(shape)
    table = tie_values(dtype) if ties else float_edges(dtype)

    def build(k: Kernels) -> Callable:
        kernel = unwrapped(k.mul_reference)

        def values(xs: list[int]) -> list[float]:
            return [pick(table, i) for i in xs]

        if claim == "spec":
            def post(ia, ib, result):
                return result.shape == shape and declared_post(
                    mul_op.mul_reference, a=TensorValue(dtype, shape, values(ia)),
                    b=TensorValue(dtype, shape, values(ib)), result=result)
        elif claim == "never rounds":         # witness: false, some product is not exact in T
            def post(ia, ib, result):
                return all(
                    math.isnan(r) or math.isinf(r) or r == x * y
                    for r, x, y in zip(result.data, values(ia), values(ib)))
        else:
            raise ValueError(claim)

        @icontract.require(lambda ia, ib: len(ia) == n and len(ib) == n)
        @icontract.require(lambda ia, ib: within(ia + ib, 0, len(table) - 1))
        @icontract.ensure(post)
        def harness(ia: tuple, ib: tuple) -> TensorValue:
            return kernel(TensorValue(dtype, shape, values(ia)), TensorValue(dtype, shape, values(ib)))
        return _named(harness, f"{dtype}_{shape_tag(shape)}{'_ties' if ties else ''}", ia=n, ib=n)

    tag = f"{dtype}.{shape_tag(shape)}{'.ties' if ties else ''}"
    return Case(tag if claim == "spec" else f"{tag}.{claim.replace(' ', '-')}", build, budget,
                exhaustive)


# -- refusals (MUL-R1, MUL-R3, MUL-R4) -------------------------------------------------------
REFUSAL_SHAPES = ((), (1,), (3,), (1, 3), (2, 3), (3, 2), (2, 1, 3))
REFUSAL_TYPES = ("float", "int8", "uint64", "bool")
_ONE = {"float": 1.0, "int8": 1, "uint64": 1, "bool": True}


def _refusal_spec(sa, sb, ta, tb, outcome) -> bool:
    """Independent statement of the refusals: numpy's broadcasting rule decides R4 vs R1."""
    kind, ids = outcome
    numeric = dtypes.type_set("Mul", 14)
    r3 = ta != tb or ta not in numeric or tb not in numeric
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
    return (kind == "refused" and ("MUL-R1" in ids) == r1 and ("MUL-R3" in ids) == r3
            and ("MUL-R4" in ids) == r4)


def refusal_case(*, budget: float = 25.0, claim: str = "spec") -> Case:
    def build(k: Kernels) -> Callable:
        kernel = unwrapped(k.mul_reference)
        if claim == "spec":
            def post(sa, sb, ta, tb, result):
                return _refusal_spec(
                    REFUSAL_SHAPES[sa], REFUSAL_SHAPES[sb], REFUSAL_TYPES[ta], REFUSAL_TYPES[tb], result)
        elif claim == "accepts all":          # witness: false, something is refused
            def post(result):
                return result[0] == "ok"
        elif claim == "never broadcasts":     # witness: false, a broadcastable pair is refused
            def post(result):
                return result[0] == "ok" or "MUL-R4" not in result[1]
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
        return _named(refusal, "refusal" if claim == "spec" else claim.replace(" ", "_"))

    return Case("pairs" if claim == "spec" else claim.replace(" ", "-"), build, budget, exhaustive=True)


# -- scalar and index helpers ----------------------------------------------------------------
def wrap_case(bits: int, signed: bool, *, claim: str = "spec") -> Case:
    """intloops.wrap (another engineer's file) contract-checked through a wrapper, over the
    whole range of products of two values of the type."""
    lo = -(1 << (bits - 1)) if signed else 0
    hi = lo + (1 << bits) - 1
    bound = 1 << (2 * bits)

    def build(k: Kernels) -> Callable:
        wrap = k.wrap
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
        return _named(wrap_checked, f"wrap_{'i' if signed else 'u'}{bits}")

    tag = f"{'int' if signed else 'uint'}{bits}"
    return Case(tag if claim == "spec" else f"{tag}.{claim}", build, 4.0, exhaustive=(claim == "spec"))


def index_case(shape: tuple[int, ...], *, claim: str = "spec") -> Case:
    """flat_index over every in-bounds multi-index of ``shape``: its declared contract, and
    unravel_index inverts it (together: a bijection onto 0 .. size-1)."""
    from sonnx.ops import tensor

    def build(k: Kernels) -> Callable:
        fi = unwrapped(k.flat_index)
        if claim == "spec":
            def post(index, result):
                return (declared_post(tensor.flat_index, shape=shape, index=tuple(index), result=result)
                        and tensor.unravel_index(shape, result) == tuple(index))
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
        return _named(index_checked, f"flat_index_{shape_tag(shape)}", index=len(shape))

    tag = shape_tag(shape)
    return Case(tag if claim == "spec" else f"{tag}.{claim.replace(' ', '-')}", build, 4.0,
                exhaustive=(claim == "spec"))


def round_case(name: str, *, claim: str = "spec") -> Case:
    """round_to on a symbolic double: its declared contract (independent RNE rule)."""
    from sonnx.ops import floats

    def build(k: Kernels) -> Callable:
        rt = unwrapped(k.round_to)
        if claim == "spec":
            def post(x, result):
                return declared_post(floats.round_to, name=name, x=x, result=result)
        elif claim == "identity":             # witness: false, some double is not a value of T
            def post(x, result):
                return result == x or math.isnan(x)
        else:
            raise ValueError(claim)

        @icontract.ensure(post)
        def round_checked(x: float) -> float:
            return rt(name, x)
        return _named(round_checked, f"round_to_{name}")

    return Case(name if claim == "spec" else f"{name}.{claim}", build, 5.0)


# -- the fast kernel against the reference (sampled) -----------------------------------------
def fast_case(dtype: str, shape: tuple[int, ...], *, claim: str = "spec") -> Case:
    """sonnx.mul (numpy) bit for bit against mul_reference. numpy's C loop is concrete code:
    CrossHair realizes the inputs when it builds the arrays, so each path is a sample."""
    from sonnx.ops.tensor import from_numpy
    n = size(shape)
    is_float = dtypes.is_float(dtype)
    table = float_edges(dtype) if is_float else int_edges(dtype)

    def build(k: Kernels) -> Callable:
        fast, ref = k.mul_fast, unwrapped(k.mul_reference)

        def arrays(ia, ib):
            npdt = dtypes.numpy_dtype(dtype)
            a = np.array([table[i] for i in ia], dtype=np.float64 if is_float else npdt)
            b = np.array([table[i] for i in ib], dtype=np.float64 if is_float else npdt)
            return a.astype(npdt).reshape(shape), b.astype(npdt).reshape(shape)

        def same_bits(ia, ib, result) -> bool:
            a, b = arrays(ia, ib)
            expected = ref(from_numpy(a), from_numpy(b))
            got = from_numpy(result)
            return got.shape == expected.shape and all(
                (math.isnan(x) and math.isnan(y)) or (x == y and (not is_float or
                                                            math.copysign(1, x) == math.copysign(1, y)))
                for x, y in zip(got.data, expected.data))

        if claim == "spec":
            def post(ia, ib, result):
                return same_bits(ia, ib, result)
        elif claim == "never wraps":
            def post(ia, ib, result):
                return all(
                    int(r) == table[x] * table[y] for r, x, y in zip(result.reshape(-1).tolist(), ia, ib))
        else:
            raise ValueError(claim)

        @icontract.require(lambda ia, ib: len(ia) == n and len(ib) == n)
        @icontract.require(lambda ia, ib: within(ia + ib, 0, len(table) - 1))
        @icontract.ensure(post)
        def fast_vs_reference(ia: tuple, ib: tuple) -> np.ndarray:
            with np.errstate(all="ignore"):
                return fast(*arrays(ia, ib))
        return _named(fast_vs_reference, f"fast_{dtype}_{shape_tag(shape)}", ia=n, ib=n)

    tag = f"{dtype}.{shape_tag(shape)}"
    return Case(tag if claim == "spec" else f"{tag}.{claim.replace(' ', '-')}", build, 6.0)


# ---------------------------------------------------------------- the campaign
HARNESSES: tuple[Harness, ...] = (
    Harness(
        "mul-signed", ("MUL-R1", "MUL-R3"),
        # wrap branches once per element: 2**size paths, all of them explored (size 6: ~10 s)
        # (int64 at size 6: the solver's nonlinear queries are slower; budget only, not required)
        cases=(*(int_case(t, s, budget=4.0 if size(s) <= 4 else 20.0,
                          exhaustive=size(s) <= 4 or t == "int8")
                 for t in ("int8", "int64") for s in SHAPES),
               *(int_case(t, (), edges=True, budget=3.0, exhaustive=True) for t in SIGNED)),
        witnesses=(int_case("int8", (2, 3), claim="never wraps"),),
        what="mul_reference on int8..int64: wrap-around, range and shape, grid of shapes, edge values"),
    Harness(
        "mul-unsigned", ("MUL-R1", "MUL-R3"),
        cases=(*(int_case(t, s, budget=3.0, exhaustive=True) for t in ("uint8", "uint64") for s in SHAPES),
               *(int_case(t, (), edges=True, budget=3.0, exhaustive=True) for t in UNSIGNED)),
        witnesses=(int_case("uint8", (3, 2), claim="never wraps"),),
        what="mul_reference on uint8..uint64: wrap-around, range and shape, grid of shapes, edge values"),
    Harness(
        "mul-float", ("MUL-R1", "MUL-R3"),
        # scalar: all 20 x 20 edge-value pairs (exhaustive); larger shapes: a budget's worth
        cases=(*(float_case(t, (), budget=20.0, exhaustive=True) for t in FLOATS),
               *(float_case(t, (), ties=True, budget=8.0, exhaustive=True) for t in ("float16", "bfloat16")),
               *(float_case(t, s, budget=4.0) for t in ("float16", "float") for s in SHAPES[1:])),
        witnesses=(float_case("float16", (2, 3), claim="never rounds"),),
        what="mul_reference on float16/bfloat16/float/double edge values: NaN, infinities, "
             "signed zeros, subnormals, ties, overflow"),
    Harness(
        "mul-refusals", ("MUL-R1", "MUL-R3", "MUL-R4"),
        cases=(refusal_case(),),
        witnesses=(refusal_case(claim="accepts all", budget=6.0),
                   refusal_case(claim="never broadcasts", budget=6.0)),
        what="mul_reference refuses different shapes (R1), broadcastable shapes (R4) and mixed or "
             "non-numeric types (R3), and accepts the rest"),
    Harness(
        "wrap", ("MUL-R3",),
        cases=tuple(wrap_case(b, s) for b in (8, 16, 32, 64) for s in (True, False)),
        witnesses=(wrap_case(8, True, claim="identity"),),
        what="intloops.wrap (through a wrapper): in range and congruent modulo 2**bits"),
    Harness(
        "flat-index", ("MUL-R1",),
        cases=tuple(index_case(s) for s in SHAPES),
        witnesses=(index_case((2, 1, 2), claim="never last"),),
        what="tensor.flat_index: in range, sum-of-strides offset, inverted by unravel_index"),
    Harness(
        "round-to", ("MUL-R3",),
        cases=tuple(round_case(t) for t in ("float16", "bfloat16", "float")),
        witnesses=(round_case("float16", claim="identity"),),
        what="floats.round_to on symbolic doubles against the independent RNE rule",
        mode="sampled"),
    Harness(
        "mul-fast", ("MUL-R1", "MUL-R3"),
        cases=(fast_case("int8", (2, 3)), fast_case("uint16", (3,)), fast_case("float16", (2, 3)),
               fast_case("bfloat16", (2,))),
        witnesses=(fast_case("int8", (2, 3), claim="never wraps"),),
        what="sonnx.mul (numpy) equals mul_reference bit for bit",
        mode="sampled"),
)

MUTANTS: tuple[Mutant, ...] = (
    Mutant("wrap_edge", "tests.crosshair.mutants.wrap_edge", ("MUL-R3",),
           ("mul-signed/int8.scalar.edges", "mul-signed/int8.2x3")),
    Mutant("broadcast_accepted", "tests.crosshair.mutants.broadcast_accepted", ("MUL-R4",),
           ("mul-refusals/pairs",)),
    Mutant("saturation", "tests.crosshair.mutants.saturation", ("MUL-R3",),
           ("mul-unsigned/uint8.4", "mul-signed/int8.2x3")),
    Mutant("flat_off_by_one", "tests.crosshair.mutants.flat_off_by_one", ("MUL-R1",),
           ("mul-signed/int8.2x1x2",)),
    Mutant("index_stride", "tests.crosshair.mutants.index_stride", ("MUL-R1",),
           ("flat-index/2x3",)),
    Mutant("ties_away", "tests.crosshair.mutants.ties_away", ("MUL-R3",),
           ("mul-float/float16.scalar.ties",)),
)


def harness(name: str) -> Harness:
    for h in HARNESSES:
        if h.name == name:
            return h
    raise KeyError(f"no harness {name!r}; known: {', '.join(h.name for h in HARNESSES)}")


def mutant(name: str) -> Mutant:
    for m in MUTANTS:
        if m.name == name:
            return m
    raise KeyError(f"no mutant {name!r}; known: {', '.join(m.name for m in MUTANTS)}")


def find_case(target: str, witnesses: bool = False) -> tuple[Harness, Case]:
    hname, cname = target.split("/", 1)
    h = harness(hname)
    for c in (h.witnesses if witnesses else h.cases):
        if c.name == cname:
            return h, c
    raise KeyError(f"no case {target!r}")


def mutant_kernels(m: Mutant) -> Kernels:
    return Kernels(importlib.import_module(m.module).KERNELS)


def source_line(fn: Callable) -> int:
    return inspect.getsourcelines(unwrapped(fn))[1]
