"""The float64 screen of GEMM-R7's bound (sonnx.ops.gemm.bound) against the exact check on
rationals: on generated cases, many of them within a few ulps of the bound on either side, with
subnormal, huge and mixed-sign operands, ``outside_bound`` gives exactly the list of
``outside_bound_exact`` (so the screen never accepts an element the exact check refuses).
Planted faults in the screen (accept everything; margins that widen the bound by 1%) are caught
by the same comparison."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sonnx.ops.gemm import bound as gemm_bound
from sonnx.ops import gemm

from .conftest import edge_values

TYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float": np.float32, "double": np.float64}
# where y is put, in units of the element's bound around Y*: both sides of the bound, and on it
OFFSETS = (0.0, 0.5, 0.99, 0.999999, 1.0, 1.000001, 1.01, 2.0, 1e6)


def _finite_edges(name: str) -> np.ndarray:
    v = edge_values(name)
    return v[np.isfinite(v.astype(np.float64))]


def _y_near_bound(a, b, c, kw, dt, rng) -> np.ndarray:
    """A result y with each element at Y* + t * bound for a drawn t of OFFSETS (either sign),
    rounded to the result type: near the bound, inside and outside."""
    m = a.shape[1] if kw.get("trans_a") else a.shape[0]
    n = b.shape[0] if kw.get("trans_b") else b.shape[1]
    every = gemm_bound.outside_bound_exact(np.full((m, n), np.nan), a, b, c, **kw)   # NaN: all outside
    y = np.empty((m, n))
    with np.errstate(over="ignore", invalid="ignore"):
        for i, j, _, exact, bound in every:
            y[i, j] = exact + rng.choice([-1, 1]) * rng.choice(OFFSETS) * bound
        return y.astype(dt)


def _case(rng, name: str):
    dt = TYPES[name]
    m, k, n = (int(x) for x in rng.integers(1, 5, 3))
    edges = _finite_edges(name).astype(np.float64)

    def draw(shape):
        x = rng.standard_normal(shape) * 2.0 ** float(rng.integers(-20, 20))
        pick = rng.random(shape) < 0.3                      # some edge values: subnormals, max, ...
        x[pick] = rng.choice(edges, size=int(pick.sum()))
        return np.clip(x, edges.min(), edges.max()).astype(dt)      # finite operands only
    ta, tb = bool(rng.integers(2)), bool(rng.integers(2))
    a = draw((k, m) if ta else (m, k))
    b = draw((n, k) if tb else (k, n))
    c = draw((m, n)) if rng.integers(2) else None
    alpha, beta = (float(np.float32(rng.choice([1.0, -1.0, 0.5, 3.0, 0.1, 1e-30, 0.0]))) for _ in range(2))
    kw = dict(alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)
    if name == "double" and rng.integers(2):
        kw["acc"] = "double"
    return a, b, c, kw, _y_near_bound(a, b, c, {k_: v for k_, v in kw.items() if k_ != "acc"}, dt, rng)


def _mismatches(seed: int, count: int) -> int:
    rng = np.random.default_rng(seed)
    bad = 0
    for _ in range(count):
        for name in TYPES:
            a, b, c, kw, y = _case(rng, name)
            fast, exact = gemm_bound.outside_bound(y, a, b, c, **kw), gemm_bound.outside_bound_exact(y, a, b, c, **kw)
            if repr(fast) != repr(exact):        # repr: a NaN y_ij equals a NaN
                bad += 1
    return bad


@pytest.mark.req("GEMM-R7")
def test_screen_gives_the_exact_checks_list_near_the_bound():
    assert _mismatches(seed=1, count=60) == 0


@pytest.mark.req("GEMM-R7")
@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_screen_gives_the_exact_checks_list_property(seed):
    assert _mismatches(seed, count=1) == 0


@pytest.mark.req("GEMM-R7")
def test_screen_accepts_the_ordinary_case_and_leaves_overflow_to_the_exact_check():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 50)).astype(np.float32), rng.standard_normal((50, 50)).astype(np.float32)
    y = np.matmul(a, b)
    op = gemm_bound._Operands(a, b, None, 1.0, 1.0, False, False, None)
    assert gemm_bound._screen(op, y.astype(np.float64), *gemm_bound._sums(op)).all()   # the screen does the work
    big = np.array([[1e300, 1e300]])               # float64 overflows in the screen
    for y in (np.array([[np.inf]]), np.array([[1.7e308]])):
        op = gemm_bound._Operands(big, big.T, None, 1.0, 1.0, False, False, None)
        assert not gemm_bound._screen(op, y, *gemm_bound._sums(op)).any()
        assert repr(gemm_bound.outside_bound(y, big, big.T)) == repr(gemm_bound.outside_bound_exact(y, big, big.T))


def test_progress_in_tenths_of_a_large_screen():
    seen = []
    a, b = np.ones((256, 1024), np.float32), np.ones((1024, 256), np.float32)
    gemm_bound.outside_bound(np.full((256, 256), 1024, np.float32), a, b, progress=seen.append)
    assert seen == list(range(10, 101, 10))


def test_planted_screen_that_accepts_everything_is_caught(monkeypatch):
    monkeypatch.setattr(gemm_bound, "_screen", lambda op, y, d, t: np.ones((op.m, op.n), bool))
    assert _mismatches(seed=1, count=20) > 0


def test_planted_margin_that_widens_the_bound_is_caught(monkeypatch):
    monkeypatch.setattr(gemm_bound, "DOWN", 1.01)
    assert _mismatches(seed=1, count=20) > 0


@pytest.mark.req("GEMM-R7")
def test_several_results_judged_in_one_screen_as_each_alone():
    """outside_bounds (what `run --compare` calls for onnxruntime's and sonnx's results at once)
    gives, per result, exactly the list outside_bound gives it alone; the operands' sums are
    computed once (counted)."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((6, 40)).astype(np.float32)
    b = rng.standard_normal((40, 5)).astype(np.float32)
    c = rng.standard_normal((6, 5)).astype(np.float32)
    good = gemm.gemm(a, b, c, mode="fast")
    bad = good.copy()
    bad[2, 3] = bad[2, 3] * np.float32(1.001) + np.float32(1e-3)
    bad[5, 0] = np.float32(np.nan)
    calls = []
    real = gemm_bound._sums
    try:
        gemm_bound._sums = lambda *args: calls.append(1) or real(*args)
        together = gemm_bound.outside_bounds([bad, good, bad], a, b, c)
    finally:
        gemm_bound._sums = real
    assert len(calls) == 1
    alone = [gemm_bound.outside_bound(y, a, b, c) for y in (bad, good, bad)]
    assert repr(together) == repr(alone)
    assert [(i, j) for i, j, *_ in together[0]] == [(2, 3), (5, 0)] and together[1] == []
