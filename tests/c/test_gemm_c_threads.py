"""The C Gemm split over threads by output rows: the thread count never changes the bits
(each element's ascending-k fold is computed by the proved loop whatever the split)."""
import numpy as np
import pytest

from sonnx import c_kernels
from sonnx.ops.gemm import _gemm_c, check, gemm


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n,ta,tb,hc", [(37, 19, 23, False, False, True), (101, 55, 77, True, True, True),
                                            (301, 200, 129, True, False, False), (7, 5, 3, False, True, True)])
def test_thread_count_keeps_the_bits(dt, m, k, n, ta, tb, hc):
    try:
        c_kernels.library()
    except c_kernels.CKernelsUnavailable as e:
        pytest.skip(str(e))
    rng = np.random.default_rng(m * n)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(dt)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dt)
    c = rng.standard_normal((m, n)).astype(dt) if hc else None
    al, be = np.float32(0.7), np.float32(1.3)
    plan = check(a, b, c, al, be, ta, tb, "exact", 21)
    want = gemm(a, b, c, alpha=al, beta=be, trans_a=ta, trans_b=tb)
    for t in (1, 2, 3):
        got = _gemm_c(c_kernels, plan, a, b, c, al, be, threads=t)
        assert got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8)), t
