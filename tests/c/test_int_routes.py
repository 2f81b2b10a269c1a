"""The signed and narrow integer routes of the element-wise C kernels (proofs/int_route.mlw,
``CBinding.routes``): int32/int64 on the unsigned kernels' bits, int8/int16/uint8/uint16 through
the uint32 kernel, Relu's int8/int16 through int32.

- the proved engine covers each routed type and cites both proofs (the kernel's and the route's);
- what it runs gives the type's own wrapped result (Python integers, reduced modulo 2^bits):
  every pair of 8-bit values, and the 16/32/64-bit edges against every value of a sample;
- the default kernels run the proved entry point on int32/int64 (the bits as they are), numpy on
  the 8/16-bit types (whose route converts on each side);
- a wrong route (the 8-bit reduction claimed modulo 2^7) fails the proof's replay, stopped by the
  provers' step budgets (tests/trace/proof_plants.py).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import sonnx
from sonnx import c_kernels
from sonnx.ops.registry import by_stem
from sonnx.run import proved
from tests.trace.proof_plants import assert_failed_by_steps, needs_why3, planted, replay

ROUTED = ("int8", "int16", "int32", "int64", "uint8", "uint16")
OPS = {"mul": lambda x, y: x * y, "add": lambda x, y: x + y, "sub": lambda x, y: x - y}

try:
    c_kernels.library()
    HAVE_C = True
except c_kernels.CKernelsUnavailable:
    HAVE_C = False
needs_c = pytest.mark.skipif(not HAVE_C, reason="no C compiler")


def wrapped(dtype: np.dtype, v: int) -> int:
    """v reduced into the type's range modulo 2^bits (the profile's integer semantics)."""
    info = np.iinfo(dtype)
    m = 1 << (8 * dtype.itemsize)
    return (v - int(info.min)) % m + int(info.min)


def edges(dtype: np.dtype) -> list[int]:
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    return sorted({lo, lo + 1, -1 if lo < 0 else 0, 0, 1, 2, 3, hi // 2, hi // 2 + 1, hi - 1, hi,
                   *((lo // 2, lo // 2 - 1) if lo < 0 else ())})


def pairs(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of values for an 8-bit type; else the edges against the edges and a sample."""
    info = np.iinfo(dtype)
    if dtype.itemsize == 1:
        vals = np.arange(int(info.min), int(info.max) + 1)
        a, b = np.meshgrid(vals, vals)
        return a.ravel().astype(dtype), b.ravel().astype(dtype)
    rng = np.random.default_rng(20261128)
    sample = [int(v) for v in rng.integers(int(info.min), int(info.max), size=200, dtype=np.int64,
                                           endpoint=True)] if dtype.itemsize < 8 else \
        [int(v) for v in rng.integers(-2**63, 2**63 - 1, size=200, dtype=np.int64)] if info.min < 0 else \
        [int(v) for v in rng.integers(0, 2**63 - 1, size=200, dtype=np.int64)]
    e = edges(dtype)
    ab = list(itertools.product(e, e + sample)) + list(itertools.product(sample, e))
    return (np.array([x for x, _ in ab], dtype=dtype), np.array([y for _, y in ab], dtype=dtype))


@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3")
@pytest.mark.parametrize("stem", sorted(OPS))
@pytest.mark.parametrize("name", ROUTED)
def test_the_proved_engine_covers_the_route_and_cites_both_proofs(stem, name):
    cov = proved.coverage(by_stem(stem), np.dtype(name))
    assert cov.route is not None and name in cov.route.types and not cov.route.checked
    assert cov.proofs == (f"proofs/{stem}_c.mlw", "proofs/int_route.mlw")
    assert cov.entry.name == f"sonnx_{stem}_{'u64' if name == 'int64' else 'u32'}"
    assert cov.describe()["route"]["theory"] == f"{stem.capitalize()}Route"


@needs_c
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3")
@pytest.mark.parametrize("stem", sorted(OPS))
@pytest.mark.parametrize("name", ROUTED)
def test_the_routed_kernel_gives_the_types_wrapped_result(stem, name):
    dtype = np.dtype(name)
    a, b = pairs(dtype)
    run, cov = proved.kernel(by_stem(stem), dtype, {}, 14)
    got = run(a, b)
    assert got.dtype == dtype and got.shape == a.shape
    want = np.array([wrapped(dtype, OPS[stem](int(x), int(y))) for x, y in zip(a.tolist(), b.tolist())],
                    dtype=dtype)
    assert np.array_equal(got, want)
    # the default kernel gives the same bits
    assert np.array_equal(getattr(sonnx, stem)(a, b), want)


@needs_c
@pytest.mark.req("RELU-R3")
@pytest.mark.parametrize("name", ("int8", "int16"))
def test_relu_narrow_types_run_the_int32_kernel(name):
    dtype = np.dtype(name)
    info = np.iinfo(dtype)
    x = np.arange(int(info.min), int(info.max) + 1).astype(dtype)
    run, cov = proved.kernel(by_stem("relu"), dtype, {}, 14)
    assert cov.entry.name == "sonnx_relu_i32" and cov.route.theory == "ReluRoute"
    got = run(x)
    assert got.dtype == dtype and np.array_equal(got, np.where(x > 0, x, 0).astype(dtype))


@needs_c
@pytest.mark.req("MUL-R3")
def test_the_default_kernel_runs_the_proved_entry_on_int32_and_int64_only(monkeypatch):
    calls = []
    real = c_kernels.call_binary

    def counting(fn, a, b):
        calls.append(a.dtype.name)
        return real(fn, a, b)
    monkeypatch.setattr(c_kernels, "call_binary", counting)
    for name in ROUTED:
        a = np.array([np.iinfo(name).max, np.iinfo(name).min, 3], dtype=name)
        sonnx.mul(a, a)
    assert calls == ["int32", "int64"]
    assert c_kernels.default_entry("mul", np.dtype(">i4")) is None      # another byte order: numpy


@needs_why3
@pytest.mark.req("MUL-R3")
def test_a_wrong_route_fails_the_replay(tmp_path, monkeypatch):
    # the int8 result claimed to be the low 7 bits of the uint32 kernel's result
    old = "lemma int8_on_u32: forall x y. S.I8.wop x y = wrap (-128) 256 (S.U32.wop"
    root = planted(tmp_path, "int_route", old + " (word 4294967296 x) (word 4294967296 y))\n  (* req: MUL-R3 -- int16",
                   old.replace("256", "128") + " (word 4294967296 x) (word 4294967296 y))\n  (* req: MUL-R3 -- int16")
    rep = replay(root, "int_route", monkeypatch, only={"int8_on_u32"})
    assert_failed_by_steps(root, "int_route", rep, {"int8_on_u32"})
