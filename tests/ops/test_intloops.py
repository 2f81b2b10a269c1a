"""wrap / mul_wrap (the Why3-verified integer loops) against numpy's wrap-around."""
import functools

import numpy as np
import pytest

from sonnx.semantics.intloops import mul_wrap, wrap

TYPES = [(np.int8, 8, True), (np.int16, 16, True), (np.int32, 32, True), (np.int64, 64, True),
         (np.uint8, 8, False), (np.uint16, 16, False), (np.uint32, 32, False),
         (np.uint64, 64, False)]


@pytest.mark.req("MUL-R3")
def test_int8_min_times_minus_one():
    assert wrap(-128 * -1, 8, True) == -128
    assert mul_wrap([-128], [-1], 8, True) == [-128]


@pytest.mark.req("MUL-R3")
def test_uint64_wraps():
    m = 2**64
    assert wrap((m - 1) * (m - 1), 64, False) == 1
    assert wrap(2**63 * 2, 64, False) == 0


@pytest.mark.req("MUL-R3")
@pytest.mark.parametrize("dt,bits,signed", TYPES)
def test_against_numpy_edges(dt, bits, signed):
    info = np.iinfo(dt)
    edge = sorted({int(info.min), int(info.min) + 1, -1 if signed else 2, 0, 1,
                   int(info.max) - 1, int(info.max), 3, 7})
    a = [x for x in edge for _ in edge]
    b = [y for _ in edge for y in edge]
    with np.errstate(over="ignore"):
        expect = (np.array(a, dtype=dt) * np.array(b, dtype=dt)).tolist()
    assert mul_wrap(a, b, bits, signed) == expect


@pytest.mark.req("MUL-R3")
@pytest.mark.parametrize("bits", [1, 8, 16, 32, 64])
def test_helpers_agree_with_wrap(bits):
    """wrap_unsigned / wrap_signed (modulus passed in) give what wrap(x, bits, signed) gives."""
    from sonnx.semantics.intloops import pow2, wrap_signed, wrap_unsigned
    m, h = pow2(bits), pow2(bits - 1)
    assert m == 2**bits and h == 2**(bits - 1)
    for x in (-(m * 3) - 1, -m, -h - 1, -h, -1, 0, 1, h - 1, h, m - 1, m, m * 5 + 7):
        assert wrap_unsigned(x, m) == wrap(x, bits, False) == x % m
        assert wrap_signed(x, m, h) == wrap(x, bits, True) == (x + h) % m - h


# ---- the fast integer kernels against the proved loops, over the full value range --------
# The proved loops (mul_wrap, dot_wrap) are the oracle, called as written (pure Python); only
# the driving (building operand lists, comparing) is vectorised. The comparison helpers return
# the disagreements, so a planted fault shows that they can fail (test_planted_*).
import sonnx
from sonnx.semantics.intloops import dot_wrap

INT_INFO = {np.dtype(dt).name: (dt, bits, signed) for dt, bits, signed in TYPES}
RNG_SEED = 20261127


def _edges(dt) -> np.ndarray:
    """T's edge values: min, max and their neighbours, 0, +-1, every +-2^k and +-2^k +- 1 in range."""
    info = np.iinfo(dt)
    lo, hi = int(info.min), int(info.max)
    vals = {lo, lo + 1, lo + 2, hi, hi - 1, hi - 2, 0, 1, 2, -1, -2}
    for k in range(info.bits):
        for v in (1 << k, (1 << k) - 1, (1 << k) + 1):
            vals |= {v, -v}
    return np.array(sorted(v for v in vals if lo <= v <= hi), dtype=dt)


def _random_bits(dt, n, rng) -> np.ndarray:
    """n values with uniformly random bit patterns over T's whole range."""
    info = np.iinfo(dt)
    return rng.integers(int(info.min), int(info.max), size=n, dtype=dt, endpoint=True)


def mul_disagreements(kernel, a: np.ndarray, b: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(a, b, kernel's product, proved product) wherever ``kernel(a, b)`` differs from mul_wrap."""
    _, bits, signed = INT_INFO[a.dtype.name]
    got = kernel(a, b)
    assert got.dtype == a.dtype and got.shape == a.shape
    proved = mul_wrap(a.tolist(), b.tolist(), bits, signed)
    bad = np.flatnonzero(got != np.array(proved, dtype=a.dtype))
    return [(int(a[i]), int(b[i]), int(got[i]), proved[i]) for i in bad[:5]]


def _mul_operands(name: str) -> tuple[np.ndarray, np.ndarray]:
    """All pairs for 8 bits; for 16 bits every edge value against a stratified sample of the
    range (every 61st value, both orders) plus random pairs; for 32/64 bits edges against
    edges and random bit patterns."""
    dt = INT_INFO[name][0]
    rng = np.random.default_rng(RNG_SEED)
    info = np.iinfo(dt)
    if info.bits == 8:
        v = np.arange(int(info.min), int(info.max) + 1, dtype=dt)
        return np.repeat(v, v.size), np.tile(v, v.size)
    e = _edges(dt)
    if info.bits == 16:
        strata = np.arange(int(info.min), int(info.max) + 1, 61, dtype=np.int64).astype(dt)
        x = np.concatenate([np.repeat(e, strata.size), np.tile(strata, e.size), _random_bits(dt, 20_000, rng)])
        y = np.concatenate([np.tile(strata, e.size), np.repeat(e, strata.size), _random_bits(dt, 20_000, rng)])
        return x, y
    rnd = _random_bits(dt, 20_000, rng)
    x = np.concatenate([np.repeat(e, e.size), np.repeat(e, 40), rnd])
    y = np.concatenate([np.tile(e, e.size), _random_bits(dt, e.size * 40, rng), _random_bits(dt, 20_000, rng)])
    return x, y


@pytest.mark.req("MUL-R3")
@pytest.mark.parametrize("name", sorted(INT_INFO))
def test_mul_kernel_equals_proved_loop(name):
    a, b = _mul_operands(name)
    assert a.size >= 20_000
    assert mul_disagreements(sonnx.mul, a, b) == []


def _saturating_mul(a, b):
    """A planted fault: the exact product clamped to T's range (what onnx.reference's float
    route does for Gemm) instead of wrapped."""
    info = np.iinfo(a.dtype)
    exact = a.astype(object) * b.astype(object)
    return np.array([min(max(int(p), int(info.min)), int(info.max)) for p in exact], dtype=a.dtype)


@pytest.mark.req("MUL-R3")
@pytest.mark.parametrize("name", ["int8", "uint16", "int64"])
def test_planted_saturating_mul_is_caught(name):
    a, b = _mul_operands(name)
    n = 30_000                                      # the planted kernel is slow (objects)
    bad = mul_disagreements(_saturating_mul, a[:n], b[:n])
    assert bad, "the comparison missed a saturating kernel"
    assert all(g != p for _, _, g, p in bad)


def gemm_disagreements(kernel, a, b, c, trans_a: bool, trans_b: bool) -> list[tuple]:
    """((i, j), kernel's entry, proved entry) wherever ``kernel`` differs from dot_wrap on the
    row A'[i, :] and column B'[:, j] (plus C[i, j]) of the same operands."""
    _, bits, signed = INT_INFO[a.dtype.name]
    got = kernel(a, b, c, trans_a=trans_a, trans_b=trans_b)
    ap, bp = (a.T if trans_a else a), (b.T if trans_b else b)
    rows, cols = ap.tolist(), bp.T.tolist()
    cl = None if c is None else c.tolist()
    assert got.dtype == a.dtype and got.shape == (len(rows), len(cols))
    bad = []
    for i, row in enumerate(rows):
        for j, col in enumerate(cols):
            proved = dot_wrap(row, col, 0 if cl is None else cl[i][j], bits, signed)
            if int(got[i, j]) != proved:
                bad.append(((i, j), int(got[i, j]), proved))
    return bad


GEMM_INTS = ("int32", "int64", "uint32", "uint64")


def _gemm_operands(name: str, m: int, k: int, n: int, trans_a: bool, trans_b: bool, has_c: bool, rng):
    """Random bit patterns with rows of T's extremes mixed in: every dot product wraps."""
    dt = INT_INFO[name][0]
    info = np.iinfo(dt)

    def mat(shape):
        x = _random_bits(dt, shape[0] * shape[1], rng).reshape(shape)
        x.flat[::3] = info.max
        x.flat[1::7] = info.min
        return x
    a = mat((k, m) if trans_a else (m, k))
    b = mat((n, k) if trans_b else (k, n))
    return a, b, (mat((m, n)) if has_c else None)


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("name", GEMM_INTS)
@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_gemm_kernel_equals_proved_loop(name, mode):
    rng = np.random.default_rng(RNG_SEED)
    kernel = functools.partial(sonnx.gemm, mode=mode)
    checked = 0
    for (m, k, n) in ((1, 1, 1), (3, 7, 2), (2, 300, 3), (4, 64, 5)):
        for trans_a, trans_b, has_c in ((False, False, True), (True, False, False), (False, True, True),
                                        (True, True, False)):
            a, b, c = _gemm_operands(name, m, k, n, trans_a, trans_b, has_c, rng)
            assert gemm_disagreements(kernel, a, b, c, trans_a, trans_b) == []
            checked += m * n
    assert checked == 4 * (1 + 6 + 6 + 20)


def _saturating_gemm(a, b, c, *, trans_a, trans_b):
    """A planted fault: onnx.reference's route (exact sum in a wide type, clamped to T)."""
    info = np.iinfo(a.dtype)
    ap, bp = (a.T if trans_a else a), (b.T if trans_b else b)
    y = ap.astype(object) @ bp.astype(object) + (0 if c is None else c.astype(object))
    return np.clip(y, int(info.min), int(info.max)).astype(a.dtype)


@pytest.mark.req("GEMM-R7")
def test_planted_saturating_gemm_is_caught():
    rng = np.random.default_rng(RNG_SEED)
    a, b, c = _gemm_operands("int32", 2, 300, 3, False, True, True, rng)
    bad = gemm_disagreements(_saturating_gemm, a, b, c, False, True)
    assert len(bad) == 6, bad


@pytest.mark.req("GEMM-R7")
def test_dot_wrap_small_cases():
    """dot_wrap by hand: the spec's example [[2^30, 2^30]] x [[2], [2]] wraps to 0 in int32;
    uint32 max * max + max wraps to 0; an empty C adds nothing."""
    assert dot_wrap([2**30, 2**30], [2, 2], 0, 32, True) == 0
    assert dot_wrap([2**32 - 1], [2**32 - 1], 2**32 - 1, 32, False) == 0
    assert dot_wrap([-2**63, -1], [-1, 1], 0, 64, True) == 2**63 - 1
    assert dot_wrap([3, 4], [5, 6], 7, 64, True) == 3 * 5 + 4 * 6 + 7
