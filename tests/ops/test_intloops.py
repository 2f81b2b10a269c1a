"""wrap / mul_wrap (the Why3-verified integer loops) against numpy's wrap-around."""
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
