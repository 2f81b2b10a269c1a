"""The one-pass promise, by its definition: a shape rule reported on shapes with symbolic or
unknown dimensions is exactly one that holds for every value of them. Checked against the
static constraint functions (the proved ones) over concrete pinnings, for generated mixes of
static, symbolic and unknown dimensions, for every registered operator with shape rules.

The definition, per rule: R1 (the shapes agree) is reported when every pinning breaks it; the
no-broadcast rule (R4) when every pinning in which R1 holds breaks it (every pinning, when R1
holds in none). The pinnings set each symbol (one value wherever it appears) and each unknown
dimension (a value of its own) to 1, to every static size of the case, and to the fresh
sizes 2, 5 and 7 (so that symbols can be equal to each other or not): the rules compare
dimensions only for equality and with 1, so these values stand for every positive integer.
"""
from __future__ import annotations

import itertools
import random

import pytest

from sonnx import requirements
from sonnx.ops import gemm, matmul
from sonnx.ops.elementwise import constraints as ew
from sonnx.ops.signature import TensorSig

# the shape rules: each operator's shape requirement and its no-broadcasting one (the families)
SHAPE_RULES = {rid for family in ("same-shape", "no-broadcast")
               for rid in requirements.family_members(family, requirements.load())}
FRESH = (2, 5, 7)
DIMS = (1, 3, 4, "a", "b", None)      # statics, two symbols, an unknown dimension


def sig(shape):
    return TensorSig(tuple(shape), "float")


def mul(a, b):
    return {v.requirement for v in ew("Mul", "MUL", sig(a), sig(b), opset=14)} & SHAPE_RULES


def gemm_rules(ta, tb):
    def check(a, b, c):
        return {v.requirement for v in gemm.constraints(sig(a), sig(b), None if c is None else sig(c),
                                                        trans_a=ta, trans_b=tb)} & SHAPE_RULES
    return check


def matmul_rules(a, b):
    return {v.requirement for v in matmul.constraints(sig(a), sig(b))} & SHAPE_RULES


def pinnings(shapes):
    """Every concrete version of ``shapes`` (None shapes stay None)."""
    slots = []        # (shape index, axis, key): a symbol's key is its name, an unknown's its slot
    for i, s in enumerate(shapes):
        for axis, d in enumerate(s or ()):
            if not isinstance(d, int):
                slots.append((i, axis, d if isinstance(d, str) else ("u", i, axis)))
    keys = list(dict.fromkeys(k for _, _, k in slots))
    statics = {d for s in shapes for d in (s or ()) if isinstance(d, int)}
    values = sorted({1, *statics, *FRESH})
    for choice in itertools.product(values, repeat=len(keys)):
        pick = dict(zip(keys, choice))
        out = [None if s is None else list(s) for s in shapes]
        for i, axis, k in slots:
            out[i][axis] = pick[k]
        yield [None if s is None else tuple(s) for s in out]


def expected(rules, shapes, r1, r4):
    """The definition: the rules every pinning gives (R4 among the pinnings where R1 holds)."""
    found = [rules(*p) for p in pinnings(shapes)]
    out = set()
    if all(r1 in f for f in found):
        out.add(r1)
    agreeing = [f for f in found if r1 not in f] or found
    if all(r4 in f for f in agreeing):
        out.add(r4)
    return out


def draw_shape(rng, low, high):
    return tuple(rng.choice(DIMS) for _ in range(rng.randint(low, high)))


def elementwise_cases(n=400, seed=26):
    rng = random.Random(seed)
    fixed = [(("a", "b", "c"), (4,)), (("a", "b"), (4,)), (("a", 4), (4,)), (("a", "a"), (3, 4)),
             ((None, 3), (None, 1)), (("b", 3), (4,)), ((), ("a",)), (("a", "b"), ("b", "a"))]
    return fixed + [(draw_shape(rng, 0, 3), draw_shape(rng, 0, 3)) for _ in range(n)]


@pytest.mark.req("MUL-R1", "MUL-R4")
@pytest.mark.parametrize("a,b", elementwise_cases())
def test_elementwise_symbolic_equals_every_pinning(a, b):
    assert mul(a, b) == expected(mul, [a, b], "MUL-R1", "MUL-R4"), (a, b)


def gemm_cases(n=300, seed=26):
    rng = random.Random(seed)
    fixed = [(("m", "k"), (8, 16), (16,), 0, 0), ((2, "k"), (5, 3), ("k", 3), 0, 0),
             ((2, 3), (3, 4), ("s", "s"), 0, 0), (("m", "k"), (8, 16), (1, 2, 16), 0, 0)]
    cases = fixed
    for _ in range(n):
        c = None if rng.random() < 0.2 else draw_shape(rng, 0, 3)
        cases.append((draw_shape(rng, 1, 3) if rng.random() < 0.2 else draw_shape(rng, 2, 2),
                      draw_shape(rng, 2, 2), c, rng.randint(0, 1), rng.randint(0, 1)))
    return cases


@pytest.mark.req("GEMM-R1", "GEMM-R4")
@pytest.mark.parametrize("a,b,c,ta,tb", gemm_cases())
def test_gemm_symbolic_equals_every_pinning(a, b, c, ta, tb):
    rules = gemm_rules(ta, tb)
    assert rules(a, b, c) == expected(rules, [a, b, c], "GEMM-R1", "GEMM-R4"), (a, b, c, ta, tb)


def matmul_cases(n=300, seed=26):
    rng = random.Random(seed)
    fixed = [(("a", 2, 3), (3, 4)), (("a", "a", 2, 3), (2, 3, 3, 4)), (("a", 3), (4, "b")),
             (("s", 2, 3), ("t", 3, 4))]
    return fixed + [(draw_shape(rng, 1, 4), draw_shape(rng, 1, 4)) for _ in range(n)]


@pytest.mark.req("MATMUL-R1", "MATMUL-R4")
@pytest.mark.parametrize("a,b", matmul_cases())
def test_matmul_symbolic_equals_every_pinning(a, b):
    assert matmul_rules(a, b) == expected(matmul_rules, [a, b], "MATMUL-R1", "MATMUL-R4"), (a, b)


@pytest.mark.req("MUL-R4")
def test_the_pinnings_reach_the_interesting_values():
    # the oracle is not vacuous: a rank-forced broadcast is R4 in every pinning where R1 holds,
    # and the pinnings do contain ones where R1 holds and ones where it does not
    found = [mul(*p) for p in pinnings([("a", "b", "c"), (4,)])]
    assert {"MUL-R4"} in found and {"MUL-R1"} in found
    assert expected(mul, [("a", "b", "c"), (4,)], "MUL-R1", "MUL-R4") == {"MUL-R4"}


@pytest.mark.req("MUL-R1", "MUL-R4")
def test_a_guessing_solver_is_caught(monkeypatch):
    # planted fault: symdims answers "the shapes can be equal" whatever they are
    from sonnx.ops import symdims
    monkeypatch.setattr(symdims, "solvable", lambda equations: True)
    wrong = [(a, b) for a, b in elementwise_cases(60)
             if mul(a, b) != expected(mul, [a, b], "MUL-R1", "MUL-R4")]
    assert (("a", "a"), (3, 4)) in wrong and ((None, 3), (None, 1)) in wrong
