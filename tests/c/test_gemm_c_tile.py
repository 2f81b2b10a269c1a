"""The register-tiled C Gemm (proofs/gemm_c_tile.mlw, run by sonnx_gemm_f32/_f64 when neither
operand is transposed) and its two compiled copies (SSE2, and AVX2 where the CPU has it; see
sonnx_kernels.c): both give exactly the bits of the exact-mode fold on shapes that reach every
part of the tiled loop: full 4-row tiles, the 1-row tiles of a last rows, the columns past the
last strip, step blocks (k > 256) and row blocks (m > 128); with C, alpha and beta; and the
transposed operands (the loop of gemm_c_loop.mlw)."""
import ctypes
from pathlib import Path

import numpy as np
import pytest

from sonnx import c_kernels
from sonnx.ops.gemm import _gemm_c, check, gemm

SHAPES = [(1, 1, 1), (3, 7, 5), (4, 3, 8), (5, 9, 13), (9, 260, 17), (133, 40, 21), (130, 513, 36),
          (2, 300, 4), (64, 64, 64)]


def _lib():
    try:
        lib = c_kernels.library()
    except c_kernels.CKernelsUnavailable as e:
        pytest.skip(str(e))
    lib.sonnx_gemm_avx2_mode.argtypes, lib.sonnx_gemm_avx2_mode.restype = (ctypes.c_int,), ctypes.c_int
    return lib


def _operand(rng, shape, dt):
    """normal values with a few special ones: signed zeros, subnormals, large values"""
    x = rng.standard_normal(shape).astype(dt)
    flat = x.reshape(-1)
    picks = rng.integers(0, flat.size, size=max(1, flat.size // 10))
    specials = np.array([0.0, -0.0, np.finfo(dt).tiny / 4, -np.finfo(dt).tiny / 8,
                         np.finfo(dt).max / 2, 1e-3], dtype=dt)
    flat[picks] = specials[rng.integers(0, specials.size, size=picks.size)]
    return x


def _copies(lib):
    """the copies this machine can run: 0 (SSE2) always, 1 (AVX2) when the CPU has it"""
    modes = [0]
    if lib.sonnx_gemm_avx2_mode(1):
        modes.append(1)
    return modes


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("hc", [False, True])
def test_tiled_copies_give_the_fold_bits(dt, m, k, n, hc):
    lib = _lib()
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a, b = _operand(rng, (m, k), dt), _operand(rng, (k, n), dt)
    c = _operand(rng, (m, n), dt) if hc else None
    al, be = (np.float32(0.7), np.float32(-1.3)) if hc else (np.float32(1.0), np.float32(1.0))
    want = gemm(a, b, c, alpha=al, beta=be)
    plan = check(a, b, c, al, be, False, False, "exact", 21)
    try:
        for mode in _copies(lib):
            lib.sonnx_gemm_avx2_mode(mode)
            for t in (1, 2):
                with np.errstate(all="ignore"):
                    got = _gemm_c(c_kernels, plan, a, b, c, al, be, threads=t)
                assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (mode, t)
    finally:
        lib.sonnx_gemm_avx2_mode(1)


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("ta,tb", [(True, False), (False, True), (True, True)])
def test_transposed_operands_in_both_copies(dt, ta, tb):
    """the entry points called directly with transA/transB run gemm_c_loop.mlw's loop"""
    lib = _lib()
    m, k, n = 37, 300, 19
    rng = np.random.default_rng(7)
    a = _operand(rng, (k, m) if ta else (m, k), dt)
    b = _operand(rng, (n, k) if tb else (k, n), dt)
    want = gemm(a, b, trans_a=ta, trans_b=tb)
    fn = lib.sonnx_gemm_f32 if dt == np.float32 else lib.sonnx_gemm_f64
    try:
        for mode in _copies(lib):
            lib.sonnx_gemm_avx2_mode(mode)
            out = np.empty((m, n), dt)
            fn(a.ctypes.data, b.ctypes.data, None, out.ctypes.data, 0, int(ta), int(tb), 1.0, 1.0, m, n, k)
            assert np.array_equal(out.view(np.uint8), want.view(np.uint8)), mode
    finally:
        lib.sonnx_gemm_avx2_mode(1)


@pytest.mark.req("GEMM-R7")
def test_the_avx2_copy_runs_where_the_cpu_has_it():
    lib = _lib()
    cpu = Path("/proc/cpuinfo")
    if not cpu.exists() or " avx2" not in cpu.read_text() or " avx " not in cpu.read_text():
        pytest.skip("no AVX2 here")
    assert lib.sonnx_gemm_avx2_mode(1) == 1 and lib.sonnx_gemm_avx2_mode(-1) == 1
    assert lib.sonnx_gemm_avx2_mode(0) == 0 and lib.sonnx_gemm_avx2_mode(-1) == 0
    assert lib.sonnx_gemm_avx2_mode(1) == 1
