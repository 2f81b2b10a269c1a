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
   cases (``"harness/case"``) that must catch it. Gemm's (``gemm_*``, built on
   ``mutants/_gemm_base.py``): transpose index off, C broadcast silently accepted, k loop one
   short, integer accumulation saturating.
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
from sonnx.semantics.floats import FORMATS
from sonnx.semantics.tensor import TensorValue, size
from sonnx.semantics.values import int_range, same_value

# ---------------------------------------------------------------- kernels under test
KERNELS: dict[str, str] = {
    "mul_reference": "sonnx.ops.mul:mul_reference",
    "mul_fast": "sonnx.ops.mul:mul",
    "flat_index": "sonnx.semantics.tensor:flat_index",
    "unravel_index": "sonnx.semantics.tensor:unravel_index",
    "wrap": "sonnx.semantics.intloops:wrap",            # owned elsewhere: checked through wrappers here
    "round_to": "sonnx.semantics.floats:round_to",
    "gemm_reference": "sonnx.ops.gemm:gemm_reference",
    "gemm_fast": "sonnx.ops.gemm:gemm",           # the numpy kernels (mode="exact" here)
    "a_index": "sonnx.ops.gemm:a_index",
    "b_index": "sonnx.ops.gemm:b_index",
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
    lo, hi = int_range(dtype)
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
    lo, hi = int_range(dtype)
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
    from sonnx.semantics import tensor

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
    from sonnx.semantics import floats

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
    from sonnx.semantics.tensor import from_numpy
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
                same_value(dtype, x, y) for x, y in zip(got.data, expected.data))

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


# ================================================================ Gemm
# The grid of (M, K, N): every dimension in 1..3, square and not. Each case fixes one point;
# trans_a, trans_b and "C present" are symbolic booleans of the harness (CrossHair takes every
# branch), so one case covers the eight layouts of that point: A stored (M, K) or (K, M), B
# stored (K, N) or (N, K), C absent or (M, N).
GEMM_GRID: tuple[tuple[int, int, int], ...] = ((1, 1, 1), (1, 3, 1), (2, 1, 3), (3, 2, 2), (3, 3, 3))
GEMM_SIGNED = ("int32", "int64")
GEMM_UNSIGNED = ("uint32", "uint64")


def mkn_tag(mkn: tuple[int, int, int]) -> str:
    return "x".join(map(str, mkn))


def gemm_operands(dtype: str, mkn, ta: bool, tb: bool, has_c: bool, a, b, c):
    """A, B, C as the kernel gets them for the layout (ta, tb, has_c): flat data ``a`` (M*K
    values), ``b`` (K*N), ``c`` (M*N), stored row-major in the transposed shapes when asked."""
    m, k, n = mkn
    ta_, tb_ = (True if ta else False), (True if tb else False)    # branch: concrete flags
    A = TensorValue(dtype, (k, m) if ta_ else (m, k), list(a))
    B = TensorValue(dtype, (n, k) if tb_ else (k, n), list(b))
    C = TensorValue(dtype, (m, n), list(c)) if has_c else None
    return A, B, C, ta_, tb_


def _exact_sums(A, B, C, ta: bool, tb: bool) -> list[int]:
    """The exact integer value of every Y[i, j] (no wrap), by explicit 2-D indexing."""
    m, k = (A.shape[1], A.shape[0]) if ta else A.shape
    n = B.shape[0] if tb else B.shape[1]

    def at(t, r, col, ncols):
        return t.data[r * ncols + col]
    out = []
    for i in range(m):
        for j in range(n):
            s = 0
            for l in range(k):
                x = at(A, l, i, m) if ta else at(A, i, l, k)
                y = at(B, j, l, k) if tb else at(B, l, j, n)
                s += x * y
            out.append(s + (C.data[i * n + j] if C is not None else 0))
    return out


# -- integer Gemm (alpha = beta = 1, GEMM-R6) ------------------------------------------------
def gemm_int_case(dtype: str, mkn: tuple[int, int, int], *, budget: float = 6.0, edges: bool = False,
                  exhaustive: bool = False, claim: str = "spec") -> Case:
    """a, b, c are the flat data of A, B, C (free symbolic ints in T's range, or indexes into T's
    edge values when ``edges``); the postcondition is gemm_reference's declared contract."""
    m, k, n = mkn
    lo, hi = int_range(dtype)
    table = int_edges(dtype)

    def build(kern: Kernels) -> Callable:
        kernel = unwrapped(kern.gemm_reference)
        from sonnx.ops import gemm as gemm_op

        def values(xs) -> list[int]:
            return [table[i] for i in xs] if edges else list(xs)

        def operands(ta, tb, has_c, a, b, c):
            return gemm_operands(dtype, mkn, ta, tb, has_c, values(a), values(b), values(c))

        if claim == "spec":
            def post(ta, tb, has_c, a, b, c, result):
                A, B, C, ta_, tb_ = operands(ta, tb, has_c, a, b, c)
                return result.shape == (m, n) and declared_post(
                    gemm_op.gemm_reference, a=A, b=B, c=C, alpha=1.0, beta=1.0,
                    trans_a=ta_, trans_b=tb_, result=result)
        elif claim == "never wraps":          # witness: false, some sum leaves T's range
            def post(ta, tb, has_c, a, b, c, result):
                A, B, C, ta_, tb_ = operands(ta, tb, has_c, a, b, c)
                return result.data == _exact_sums(A, B, C, ta_, tb_)
        elif claim == "C ignored":            # witness: false, C reaches the result
            def post(ta, tb, has_c, a, b, c, result):
                A, B, _, ta_, tb_ = operands(ta, tb, has_c, a, b, c)
                return result.data == unwrapped(gemm_op.gemm_reference)(A, B, None, trans_a=ta_,
                                                                         trans_b=tb_).data
        else:
            raise ValueError(claim)

        @icontract.require(lambda a, b, c: len(a) == m * k and len(b) == k * n and len(c) == m * n)
        @icontract.require(lambda a, b, c: within(a + b + c, 0, len(table) - 1) if edges
                           else within(a + b + c, lo, hi))
        @icontract.ensure(post)
        def harness(ta: bool, tb: bool, has_c: bool, a: tuple, b: tuple, c: tuple) -> TensorValue:
            A, B, C, ta_, tb_ = operands(ta, tb, has_c, a, b, c)
            return kernel(A, B, C, trans_a=ta_, trans_b=tb_)
        return _named(harness, f"gemm_{dtype}_{mkn_tag(mkn)}{'_edges' if edges else ''}",
                      a=m * k, b=k * n, c=m * n)

    tag = f"{dtype}.{mkn_tag(mkn)}{'.edges' if edges else ''}"
    return Case(tag if claim == "spec" else f"{tag}.{claim.replace(' ', '-')}", build, budget, exhaustive)


# -- float Gemm ------------------------------------------------------------------------------
# alpha and beta: float32 values (GEMM-R5), including 0 (alpha * inf is NaN), a power of two,
# and one whose products round (float32(0.1))
GEMM_SCALARS = (1.0, -0.5, 0.0, float(np.float32(0.1)))


def _fold_descending(A, B, C, alpha, beta, ta, tb, dtype) -> list[float]:
    """The exact-mode value with the k loop DESCENDING (a wrong order, for a witness), in numpy
    scalars of the accumulation type."""
    from sonnx.ops.gemm import accumulation_type
    acc = dtypes.numpy_dtype(accumulation_type(dtype)).type
    out = dtypes.numpy_dtype(dtype)
    m, k = (A.shape[1], A.shape[0]) if ta else A.shape
    n = B.shape[0] if tb else B.shape[1]
    ys = []
    with np.errstate(all="ignore"):
        for i in range(m):
            for j in range(n):
                s = acc(0.0)
                for l in reversed(range(k)):
                    x = A.data[l * m + i] if ta else A.data[i * k + l]
                    y = B.data[j * k + l] if tb else B.data[l * n + j]
                    s = s + acc(x) * acc(y)
                r = acc(alpha) * s
                if C is not None:
                    r = r + acc(beta) * acc(C.data[i * n + j])
                ys.append(float(np.array(r).astype(out)))
    return ys


def gemm_float_case(dtype: str, mkn: tuple[int, int, int], *, budget: float = 6.0,
                    table: str = "edges", exhaustive: bool = False, claim: str = "spec") -> Case:
    """ia, ib, ic index the edge values of ``dtype`` (``pick``: CrossHair branches over the
    choices), ial and ibe index GEMM_SCALARS; the postcondition is gemm_reference's declared
    contract (the fold of GEMM-R7 in numpy's IEEE scalars, NaN-aware, signed zeros)."""
    m, k, n = mkn
    values_table = {"edges": float_edges, "ties": tie_values}[table](dtype)

    def build(kern: Kernels) -> Callable:
        kernel = unwrapped(kern.gemm_reference)
        from sonnx.ops import gemm as gemm_op

        def operands(ta, tb, has_c, ia, ib, ic):
            vals = [[pick(values_table, i) for i in xs] for xs in (ia, ib, ic)]
            return gemm_operands(dtype, mkn, ta, tb, has_c, *vals)

        if claim == "spec":
            def post(ta, tb, has_c, ia, ib, ic, ial, ibe, result):
                A, B, C, ta_, tb_ = operands(ta, tb, has_c, ia, ib, ic)
                return result.shape == (m, n) and declared_post(
                    gemm_op.gemm_reference, a=A, b=B, c=C, alpha=pick(GEMM_SCALARS, ial),
                    beta=pick(GEMM_SCALARS, ibe), trans_a=ta_, trans_b=tb_, result=result)
        elif claim == "order irrelevant":     # witness: false, summing k downwards differs
            def post(ta, tb, has_c, ia, ib, ic, ial, ibe, result):
                A, B, C, ta_, tb_ = operands(ta, tb, has_c, ia, ib, ic)
                other = _fold_descending(A, B, C, pick(GEMM_SCALARS, ial), pick(GEMM_SCALARS, ibe),
                                         ta_, tb_, dtype)
                return all(x == y or (x != x and y != y) for x, y in zip(result.data, other))
        else:
            raise ValueError(claim)

        @icontract.require(lambda ia, ib, ic: len(ia) == m * k and len(ib) == k * n and len(ic) == m * n)
        @icontract.require(lambda ia, ib, ic: within(ia + ib + ic, 0, len(values_table) - 1))
        @icontract.require(lambda ial, ibe: within((ial, ibe), 0, len(GEMM_SCALARS) - 1))
        @icontract.ensure(post)
        def harness(ta: bool, tb: bool, has_c: bool, ia: tuple, ib: tuple, ic: tuple,
                    ial: int, ibe: int) -> TensorValue:
            A, B, C, ta_, tb_ = operands(ta, tb, has_c, ia, ib, ic)
            return kernel(A, B, C, alpha=pick(GEMM_SCALARS, ial), beta=pick(GEMM_SCALARS, ibe),
                          trans_a=ta_, trans_b=tb_)
        return _named(harness, f"gemm_{dtype}_{mkn_tag(mkn)}_{table}", ia=m * k, ib=k * n, ic=m * n)

    tag = f"{dtype}.{mkn_tag(mkn)}{'' if table == 'edges' else '.' + table}"
    return Case(tag if claim == "spec" else f"{tag}.{claim.replace(' ', '-')}", build, budget, exhaustive)


# -- refusals (GEMM-R1, GEMM-R3, GEMM-R4, GEMM-R6) -------------------------------------------
# shapes as stored; with the right transposes (2, 3) x (3, 2) is 2 x 2 and (3, 2) x (3, 2) is 2 x 2
GEMM_A_SHAPES = ((2, 3), (3, 2), (3,), (1, 2, 3))
GEMM_B_SHAPES = ((3, 2), (2, 3), (3,))
GEMM_C_SHAPES = (None, (2, 2), (3, 3), (2,), (1, 2), (2, 1), (1, 1), (1,), (), (2, 2, 1), (4,))
GEMM_TYPES = ("float", "bfloat16", "int32", "uint64", "int8")
GEMM_ATTRS = (1.0, 2.0)
_GEMM_ONE = {"float": 1.0, "bfloat16": 1.0, "int32": 1, "uint64": 1, "int8": 1}


def _gemm_refusal_spec(sa, sb, sc, ta, tb, type_a, type_b, type_c, alpha, beta, outcome) -> bool:
    """Independent statement of the refusals, from the shapes as a reader would check them:
    R1 rank 2 and K of A' equals K of B'; R4 (only when R1 holds) C absent or exactly (M, N);
    R3 one type from Gemm-13's set; R6 integer T with alpha or beta not 1."""
    kind, ids = outcome
    numeric = dtypes.type_set("Gemm", 13)
    types = [type_a, type_b] + ([type_c] if sc is not None else [])
    r3 = any(t not in numeric for t in types) or len(set(types)) > 1
    r1 = len(sa) != 2 or len(sb) != 2
    if not r1:
        m, ka = (sa[1], sa[0]) if ta else sa
        kb, n = (sb[1], sb[0]) if tb else sb
        r1 = ka != kb
    r4 = not r1 and sc is not None and tuple(sc) != (m, n)
    r6 = type_a in numeric and not dtypes.is_float(type_a) and (alpha != 1.0 or beta != 1.0)
    if not (r1 or r3 or r4 or r6):
        return kind == "ok" and ids.shape == (m, n)
    return (kind == "refused" and ("GEMM-R1" in ids) == r1 and ("GEMM-R3" in ids) == r3
            and ("GEMM-R4" in ids) == r4 and ("GEMM-R6" in ids) == r6)


def gemm_refusal_case(part: str, *, budget: float = 25.0, claim: str = "spec") -> Case:
    """``part="shapes"``: every (A, B, C) shape of the tables with both transposes, type float;
    ``part="types"``: A (2, 3) x B (3, 2) with C absent or (2, 2), every triple of types and
    alpha, beta in {1, 2}. The postcondition is the independent spec above; the kernel's answer
    is ("ok", result) or ("refused", the requirement IDs of the ProfileViolation)."""

    def build(kern: Kernels) -> Callable:
        kernel = unwrapped(kern.gemm_reference)
        sizes = ((len(GEMM_A_SHAPES), len(GEMM_B_SHAPES), len(GEMM_C_SHAPES), 2, 2) if part == "shapes"
                 else (len(GEMM_TYPES), len(GEMM_TYPES), len(GEMM_TYPES) + 1, 2, 2))

        def inputs(*idx):
            # one branch per value (as ``pick``): every later step sees concrete ints
            i0, i1, i2, i3, i4 = (pick(range(s), i) for i, s in zip(idx, sizes))
            if part == "shapes":
                sa, sb, sc = GEMM_A_SHAPES[i0], GEMM_B_SHAPES[i1], GEMM_C_SHAPES[i2]
                return sa, sb, sc, i3, i4, "float", "float", "float", 1.0, 1.0
            tc = i2 - 1                       # i2 == 0: C absent
            return ((2, 3), (3, 2), None if tc < 0 else (2, 2), False, False, GEMM_TYPES[i0],
                    GEMM_TYPES[i1], GEMM_TYPES[max(tc, 0)], GEMM_ATTRS[i3], GEMM_ATTRS[i4])

        if claim == "spec":
            def post(i0, i1, i2, i3, i4, result):
                return _gemm_refusal_spec(*inputs(i0, i1, i2, i3, i4), result)
        elif claim == "accepts all":          # witness: false, something is refused
            def post(result):
                return result[0] == "ok"
        elif claim == "C broadcasts":         # witness: false, a broadcastable C is refused (R4)
            def post(result):
                return result[0] == "ok" or "GEMM-R4" not in result[1]
        else:
            raise ValueError(claim)

        @icontract.require(lambda i0, i1, i2, i3, i4: (0 <= i0) & (i0 < sizes[0]) & (0 <= i1) & (i1 < sizes[1])
                           & (0 <= i2) & (i2 < sizes[2]) & (0 <= i3) & (i3 < 2) & (0 <= i4) & (i4 < 2))
        @icontract.ensure(post)
        def refusal(i0: int, i1: int, i2: int, i3: int, i4: int) -> tuple:
            sa, sb, sc, ta, tb, type_a, type_b, type_c, alpha, beta = inputs(i0, i1, i2, i3, i4)
            ta, tb = (True if ta else False), (True if tb else False)
            a = TensorValue(type_a, sa, [_GEMM_ONE[type_a]] * size(sa))
            b = TensorValue(type_b, sb, [_GEMM_ONE[type_b]] * size(sb))
            c = None if sc is None else TensorValue(type_c, sc, [_GEMM_ONE[type_c]] * size(sc))
            try:
                return ("ok", kernel(a, b, c, alpha=alpha, beta=beta, trans_a=ta, trans_b=tb))
            except ProfileViolation as e:
                return ("refused", frozenset(v.requirement for v in e.violations))
        return _named(refusal, f"gemm_refusal_{part}" if claim == "spec"
                      else f"gemm_{part}_{claim.replace(' ', '_')}")

    return Case(part if claim == "spec" else f"{part}.{claim.replace(' ', '-')}", build, budget,
                exhaustive=(claim == "spec"))


# -- index helpers ---------------------------------------------------------------------------
_INDEX_BOUND = 1 << 20


def gemm_index_case(which: str, *, claim: str = "spec") -> Case:
    """a_index / b_index on symbolic dimensions (1 .. 2**20), in-bounds indices and both
    transpose flags: the declared contract (in bounds; divmod recovers row and column of the
    stored matrix)."""
    from sonnx.ops import gemm as gemm_op

    def build(kern: Kernels) -> Callable:
        fn = unwrapped(getattr(kern, which))
        if claim == "spec":
            def post(t, rows, cols, r, s, result):
                kw = ({"ta": t, "m": rows, "k": cols, "i": r, "l": s} if which == "a_index"
                      else {"tb": t, "k": rows, "n": cols, "l": r, "j": s})
                return declared_post(getattr(gemm_op, which), result=result, **kw)
        elif claim == "transpose ignored":    # witness: false, the flag moves the element
            def post(t, rows, cols, r, s, result):
                return result == fn(not t, rows, cols, r, s)
        else:
            raise ValueError(claim)

        # (rows, cols, r, s) = (m, k, i, l) for a_index, (k, n, l, j) for b_index
        @icontract.require(lambda rows, cols: 0 < rows <= _INDEX_BOUND and 0 < cols <= _INDEX_BOUND)
        @icontract.require(lambda rows, cols, r, s: 0 <= r < rows and 0 <= s < cols)
        @icontract.ensure(post)
        def index_checked(t: bool, rows: int, cols: int, r: int, s: int) -> int:
            return fn(True if t else False, rows, cols, r, s)
        return _named(index_checked, f"gemm_{which}" if claim == "spec"
                      else f"gemm_{which}_{claim.replace(' ', '_')}")

    return Case(which if claim == "spec" else f"{which}.{claim.replace(' ', '-')}", build, 6.0,
                exhaustive=(claim == "spec"))


# -- sonnx.gemm(mode="exact") against the reference (sampled) --------------------------------
def gemm_fast_case(dtype: str, mkn: tuple[int, int, int], *, claim: str = "spec",
                   budget: float = 6.0) -> Case:
    """sonnx.gemm (mode="exact": the compiled fold, then numpy) bit for bit against
    gemm_reference, both transposes, C present or absent. Compiled and numpy code is concrete:
    CrossHair realizes the inputs when it builds the arrays, so each path is a sample, not a
    proof."""
    from sonnx.semantics.tensor import from_numpy
    m, k, n = mkn
    is_float = dtypes.is_float(dtype)
    table = float_edges(dtype) if is_float else int_edges(dtype)
    scalars = GEMM_SCALARS if is_float else (1.0,)

    def build(kern: Kernels) -> Callable:
        fast, ref = kern.gemm_fast, unwrapped(kern.gemm_reference)

        def arrays(ta, tb, has_c, ia, ib, ic):
            npdt = dtypes.numpy_dtype(dtype)

            def arr(idx, shape):
                x = np.array([pick(table, i) for i in idx], dtype=np.float64 if is_float else npdt)
                return x.astype(npdt).reshape(shape)
            a = arr(ia, (k, m) if ta else (m, k))
            b = arr(ib, (n, k) if tb else (k, n))
            return a, b, (arr(ic, (m, n)) if has_c else None)

        def flags(ta, tb, has_c):
            return (True if ta else False), (True if tb else False), (True if has_c else False)

        if claim == "spec":
            def post(ta, tb, has_c, ia, ib, ic, ial, ibe, result):
                ta, tb, has_c = flags(ta, tb, has_c)
                a, b, c = arrays(ta, tb, has_c, ia, ib, ic)
                expected = ref(from_numpy(a), from_numpy(b), None if c is None else from_numpy(c),
                               alpha=pick(scalars, ial), beta=pick(scalars, ibe),
                               trans_a=ta, trans_b=tb)
                got = from_numpy(result)
                return got.shape == expected.shape and got.dtype == expected.dtype and all(
                    (x != x and y != y) or (x == y and (not is_float or math.copysign(1, x) == math.copysign(1, y)))
                    for x, y in zip(got.data, expected.data))
        elif claim == "never wraps":          # witness: false, an integer sum leaves T's range
            def post(ta, tb, has_c, ia, ib, ic, result):
                ta, tb, has_c = flags(ta, tb, has_c)
                a, b, c = arrays(ta, tb, has_c, ia, ib, ic)
                exact = (a.T if ta else a).astype(object) @ (b.T if tb else b).astype(object)
                if c is not None:
                    exact = exact + c.astype(object)
                return result.astype(object).tolist() == exact.tolist()
        else:
            raise ValueError(claim)

        @icontract.require(lambda ia, ib, ic: len(ia) == m * k and len(ib) == k * n and len(ic) == m * n)
        @icontract.require(lambda ia, ib, ic: within(ia + ib + ic, 0, len(table) - 1))
        @icontract.require(lambda ial, ibe: within((ial, ibe), 0, len(scalars) - 1))
        @icontract.ensure(post)
        def fast_vs_reference(ta: bool, tb: bool, has_c: bool, ia: tuple, ib: tuple, ic: tuple,
                              ial: int, ibe: int) -> np.ndarray:
            ta, tb, has_c = flags(ta, tb, has_c)
            a, b, c = arrays(ta, tb, has_c, ia, ib, ic)
            return fast(a, b, c, alpha=pick(scalars, ial), beta=pick(scalars, ibe), trans_a=ta,
                        trans_b=tb, mode="exact")
        return _named(fast_vs_reference, f"gemm_exact_{dtype}_{mkn_tag(mkn)}", ia=m * k, ib=k * n,
                      ic=m * n)

    tag = f"{dtype}.{mkn_tag(mkn)}"
    return Case(tag if claim == "spec" else f"{tag}.{claim.replace(' ', '-')}", build, budget)


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
    # ---- Gemm
    Harness(
        "gemm-signed", ("GEMM-R1", "GEMM-R3", "GEMM-R7"),
        # no branch on the data (wrap is a %): 8 paths per case, the layouts; all explored
        cases=(*(gemm_int_case(t, g, budget=4.0 if g != (3, 3, 3) else 10.0, exhaustive=True)
                 for t in GEMM_SIGNED for g in GEMM_GRID),
               *(gemm_int_case(t, g, edges=True, budget=4.0, exhaustive=True)
                 for t in GEMM_SIGNED for g in ((1, 3, 1), (2, 1, 3)))),
        witnesses=(gemm_int_case("int32", (2, 1, 3), claim="never wraps"),
                   gemm_int_case("int64", (1, 3, 1), claim="C ignored")),
        what="gemm_reference on int32/int64 (alpha = beta = 1): wrapped sum of products, "
             "transA/transB, C present or absent, grid of (M, K, N), edge values"),
    Harness(
        "gemm-unsigned", ("GEMM-R1", "GEMM-R3", "GEMM-R7"),
        cases=(*(gemm_int_case(t, g, budget=4.0 if g != (3, 3, 3) else 10.0, exhaustive=True)
                 for t in GEMM_UNSIGNED for g in GEMM_GRID),
               *(gemm_int_case(t, g, edges=True, budget=4.0, exhaustive=True)
                 for t in GEMM_UNSIGNED for g in ((1, 3, 1), (2, 1, 3)))),
        witnesses=(gemm_int_case("uint64", (1, 3, 1), edges=True, claim="never wraps"),),
        what="gemm_reference on uint32/uint64 (alpha = beta = 1): wrapped sum of products, "
             "transA/transB, C present or absent, grid of (M, K, N), edge values"),
    Harness(
        "gemm-float", ("GEMM-R1", "GEMM-R3", "GEMM-R7"),
        # every path is concrete after the picks (20 edge values per element, 4 alphas, 4 betas,
        # 8 layouts): far too many to exhaust, so each case is a budget's worth of paths
        cases=(gemm_float_case("float16", (1, 1, 1), budget=6.0),
               gemm_float_case("float16", (1, 3, 1), table="ties", budget=6.0),
               gemm_float_case("float16", (3, 2, 2), budget=6.0),
               gemm_float_case("bfloat16", (1, 1, 1), budget=4.0),
               gemm_float_case("bfloat16", (2, 1, 3), budget=6.0),
               gemm_float_case("float", (1, 1, 1), budget=4.0),
               gemm_float_case("float", (1, 3, 1), budget=6.0),
               gemm_float_case("double", (1, 1, 1), budget=4.0),
               gemm_float_case("double", (1, 3, 1), table="ties", budget=6.0),
               gemm_float_case("double", (3, 3, 3), budget=6.0)),
        witnesses=(gemm_float_case("double", (1, 3, 1), table="ties", claim="order irrelevant"),),
        what="gemm_reference on float16/bfloat16/float/double edge values and ties: ascending "
             "accumulation in float32/float64, alpha/beta rounding, one final rounding to T, NaN, "
             "infinities, signed zeros, subnormals, overflow"),
    Harness(
        "gemm-refusals", ("GEMM-R1", "GEMM-R3", "GEMM-R4", "GEMM-R6"),
        cases=(gemm_refusal_case("shapes", budget=25.0), gemm_refusal_case("types", budget=25.0)),
        witnesses=(gemm_refusal_case("shapes", claim="C broadcasts", budget=6.0),
                   gemm_refusal_case("types", claim="accepts all", budget=6.0)),
        what="gemm_reference refuses ranks other than 2 and disagreeing inner dimensions (R1), C "
             "of any shape but (M, N), broadcastable ones included (R4), mixed or non-Gemm types "
             "(R3), integer alpha/beta other than 1 (R6), and accepts the rest"),
    Harness(
        "gemm-index", ("GEMM-R1",),
        cases=(gemm_index_case("a_index"), gemm_index_case("b_index")),
        witnesses=(gemm_index_case("a_index", claim="transpose ignored"),
                   gemm_index_case("b_index", claim="transpose ignored")),
        what="gemm.a_index / b_index on symbolic dimensions up to 2**20: in bounds, divmod "
             "recovers the row and column of the stored (possibly transposed) matrix"),
    Harness(
        "gemm-exact", ("GEMM-R7",),
        cases=(gemm_fast_case("int32", (2, 1, 3)), gemm_fast_case("uint64", (1, 3, 1)),
               gemm_fast_case("float16", (1, 3, 1)), gemm_fast_case("bfloat16", (2, 1, 3)),
               gemm_fast_case("float", (3, 2, 2)), gemm_fast_case("double", (1, 3, 1))),
        witnesses=(gemm_fast_case("int64", (1, 3, 1), claim="never wraps"),),
        what="sonnx.gemm(mode=\"exact\") (compiled fold, numpy) equals gemm_reference bit for bit",
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
    Mutant("gemm_transpose_index", "tests.crosshair.mutants.gemm_transpose_index", ("GEMM-R1",),
           ("gemm-index/a_index", "gemm-signed/int32.3x2x2")),
    Mutant("gemm_c_broadcast", "tests.crosshair.mutants.gemm_c_broadcast", ("GEMM-R4",),
           ("gemm-refusals/shapes",)),
    Mutant("gemm_k_short", "tests.crosshair.mutants.gemm_k_short", ("GEMM-R7",),
           ("gemm-signed/int32.1x1x1", "gemm-float/float16.1x1x1")),
    Mutant("gemm_saturation", "tests.crosshair.mutants.gemm_saturation", ("GEMM-R7",),
           ("gemm-signed/int32.1x3x1.edges", "gemm-unsigned/uint32.1x3x1")),
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
