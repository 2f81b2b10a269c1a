"""The proved narrowing float32 -> float16 / bfloat16 (proofs/narrow_c.mlw, extracted to
src/sonnx/c/narrow_c.c, entry points sonnx_narrow_f16 / sonnx_narrow_bf16, run through
``c_kernels.narrow``) computes the same bits as numpy's float16 ``astype`` and ml_dtypes'
bfloat16 ``astype``, NaNs included (sign and payload as they give them).

In CI: every rounding-relevant class of halfcheck.class_ranges (every sign and exponent, every
pattern of the dropped bits under six kept-bit patterns), the whole float32 binades where float16
results are subnormal at the smallest / largest shift or overflow is reached (exponents 102,
112, 142, both signs), 2^20 random patterns per type, and every 4099th pattern of the 2^32
(about 1M). All 2^32 inputs: the last test with SONNX_NARROW_EXHAUSTIVE=1 (minutes: numpy's float16 cast is the slow side); run once for this
change on all 2^32 inputs of both types: 0 differences.
"""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from sonnx import c_kernels
from tests.conversions import halfcheck

needs_gcc = pytest.mark.skipif(not shutil.which("gcc"), reason="the C kernels need a C compiler")
CHUNK = 1 << 24


def _mismatches(bits: np.ndarray, name: str) -> int:
    """Patterns of ``bits`` (uint32) whose proved narrowing differs from astype's bits."""
    x = bits.view(np.float32)
    got = c_kernels.narrow(x, name).view(np.uint16)
    with np.errstate(all="ignore"):
        want = x.astype(halfcheck.HALVES[name][0]).view(np.uint16)
    return int(np.count_nonzero(got != want))


def _check_runs(name: str, runs) -> tuple[int, int]:
    checked = bad = 0
    for start, n in runs:
        for pos in range(start, start + n, CHUNK):
            k = min(CHUNK, start + n - pos)
            bits = np.arange(pos, pos + k, dtype=np.uint64).astype(np.uint32)
            bad += _mismatches(bits, name)
            checked += k
    return checked, bad


@needs_gcc
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3")
@pytest.mark.parametrize("name", sorted(halfcheck.HALVES))
def test_proved_narrowing_is_astype_on_every_class(name):
    runs = halfcheck.class_ranges(name, binades=False)
    runs += [((s << 31) | (e << 23), 1 << 23) for s in (0, 1) for e in (102, 112, 142)]
    checked, bad = _check_runs(name, runs)
    assert checked > 2 * 256 * 6 * 2 ** 13 and bad == 0, (checked, bad)


@needs_gcc
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3")
@pytest.mark.parametrize("name", sorted(halfcheck.HALVES))
def test_proved_narrowing_is_astype_on_random_patterns(name):
    bits = np.random.default_rng(32).integers(0, 1 << 32, size=1 << 20, dtype=np.uint64).astype(np.uint32)
    assert _mismatches(bits, name) == 0


@needs_gcc
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3")
def test_special_values_and_ties():
    """The cases by name: signed zeros, infinities, NaNs (signalling, quiet, payload below the
    kept bits), the largest finite float16 and the first value rounding to infinity, a tie to
    even at each side, the smallest subnormal and half of it."""
    f16 = {0x00000000: 0x0000, 0x80000000: 0x8000, 0x7F800000: 0x7C00, 0xFF800000: 0xFC00,
           0x477FE000: 0x7BFF,            # 65504
           0x477FF000: 0x7C00,            # 65520: the tie above 65504 rounds to even, infinity
           0x3F801000: 0x3C00,            # 1 + 2^-11: tie, to even (down)
           0x3F803000: 0x3C02,            # 1 + 3 * 2^-11: tie, to even (up)
           0x33800000: 0x0001,            # 2^-24, the smallest subnormal
           0x33000000: 0x0000,            # 2^-25: tie with zero, to even
           0x33000001: 0x0001,            # just above it
           0x7F800001: 0x7C01, 0x7FC00000: 0x7E00, 0xFFA00001: 0xFD00}
    bf16 = {0x00000000: 0x0000, 0x80000000: 0x8000, 0x7F800000: 0x7F80, 0xFF800000: 0xFF80,
            0x7F7FFFFF: 0x7F80, 0x3F808000: 0x3F80, 0x3F818000: 0x3F82, 0x00008000: 0x0000,
            0x7F800001: 0x7FC0, 0xFFA00001: 0xFFC0}
    for name, table in (("float16", f16), ("bfloat16", bf16)):
        bits = np.array(list(table), dtype=np.uint32)
        got = c_kernels.narrow(bits.view(np.float32), name).view(np.uint16)
        assert [hex(v) for v in got] == [hex(v) for v in table.values()], name
        assert _mismatches(bits, name) == 0


# every STRIDE-th float32 pattern (an odd stride: every residue of the low bits is visited
# across the range), all 2^32 of them with SONNX_NARROW_EXHAUSTIVE=1 (minutes of CPU)
STRIDE = 1 if os.environ.get("SONNX_NARROW_EXHAUSTIVE") == "1" else 4099


@needs_gcc
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3")
@pytest.mark.parametrize("name", sorted(halfcheck.HALVES))
def test_proved_narrowing_is_astype_on_all_inputs(name):
    if STRIDE == 1:
        checked, bad = _check_runs(name, [(0, 1 << 32)])
        assert checked == 1 << 32 and bad == 0, bad
        return
    bits = np.arange(0, 1 << 32, STRIDE, dtype=np.uint64).astype(np.uint32)
    assert bits.size == -(-(1 << 32) // STRIDE)
    assert _mismatches(bits, name) == 0
