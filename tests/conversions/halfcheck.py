"""The half-precision conversions sonnx runs, checked against tests/conversions/half_ref.c
(an integer-arithmetic reference): float16/bfloat16 -> float32 on all 65,536 values each,
float32 -> float16/bfloat16 on a range or a set of float32 bit patterns.

Also run as a child process by test_half_conversions.py after a planted library has put the
process in another rounding mode / flush-to-zero (tests/fpenv/plant.c):
    python -m tests.conversions.halfcheck REF_LIB PLANT_LIB MODE
prints one JSON object {"mode": ..., "narrow": {type: mismatches}, "widen": {type: mismatches}}.
"""
from __future__ import annotations

import ctypes
import json
import sys

import ml_dtypes
import numpy as np

# name -> (numpy dtype, stored mantissa bits, exponent bias)
HALVES = {"float16": (np.dtype(np.float16), 10, 15), "bfloat16": (np.dtype(ml_dtypes.bfloat16), 7, 127)}
CHUNK = 1 << 24


def load(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    lib.count_narrow.restype = ctypes.c_uint64
    lib.count_narrow.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                 ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64),
                                 ctypes.POINTER(ctypes.c_uint64)]
    lib.ref_widen_f16.restype = ctypes.c_uint32
    lib.ref_widen_f16.argtypes = [ctypes.c_uint32]
    return lib


def narrow(x: np.ndarray, name: str) -> np.ndarray:
    """numpy's / ml_dtypes' astype to T: what sonnx's wrappers ran to round a float32 result to T
    before the proved narrowing (c_kernels.narrow, proofs/narrow_c.mlw, which the same-shape binary
    wrapper now runs: bit for bit the same, tests/conversions/test_narrow_c.py), and what the
    other wrappers still run (src/sonnx/c_kernels.py)."""
    with np.errstate(all="ignore"):
        return x.astype(HALVES[name][0])


def check_narrow_range(lib, name: str, start: int, n: int) -> dict:
    """Narrow the float32 values with bits start .. start+n-1 (n <= 2^32 - start), in chunks."""
    _, m, b = HALVES[name]
    tot = {"checked": 0, "bad": 0, "first_bad": None, "nans": 0, "nan_sign_kept": 0}
    pos = start
    while pos < start + n:
        k = min(CHUNK, start + n - pos)
        bits = np.arange(pos, pos + k, dtype=np.uint64).astype(np.uint32)
        got = np.ascontiguousarray(narrow(bits.view(np.float32), name).view(np.uint16))
        first, kept, nans = ctypes.c_uint32(0), ctypes.c_uint64(0), ctypes.c_uint64(0)
        bad = lib.count_narrow(pos, k, got.ctypes.data, m, b, ctypes.byref(first), ctypes.byref(kept),
                               ctypes.byref(nans))
        if bad and tot["first_bad"] is None:
            tot["first_bad"] = hex(first.value)
        tot["bad"] += bad
        tot["checked"] += k
        tot["nans"] += nans.value
        tot["nan_sign_kept"] += kept.value
        pos += k
    return tot


def class_ranges(name: str, binades: bool = True) -> list[tuple[int, int]]:
    """The rounding-relevant classes, each a run of consecutive float32 bit patterns: for every
    sign and every exponent (512), every pattern of the bits T drops (2^13 for float16, 2^16 for
    bfloat16) under kept bits 0, 1, 2 and the three largest (even/odd last kept bit, the carry
    into the exponent); and every float32 whose exponent lies where float16 results are
    subnormal or overflow is near (all its mantissas: there the dropped bits are more than 13)
    for the binades next to those borders."""
    _, m, _ = HALVES[name]
    low = 23 - m
    runs = []
    for sign in (0, 1):
        for e in range(256):
            base = (sign << 31) | (e << 23)
            for kept in (0, 1, 2, (1 << m) - 3, (1 << m) - 2, (1 << m) - 1):
                runs.append((base | (kept << low), 1 << low))
        if binades and name == "float16":        # whole binades around the subnormal and overflow borders
            for e in (101, 102, 103, 111, 112, 113, 142, 143):
                runs.append(((sign << 31) | (e << 23), 1 << 23))
    return runs


def check_narrow_classes(lib, name: str, binades: bool = True) -> dict:
    tot = {"checked": 0, "bad": 0, "first_bad": None}
    for start, n in class_ranges(name, binades):
        r = check_narrow_range(lib, name, start, n)
        tot["checked"] += r["checked"]
        tot["bad"] += r["bad"]
        tot["first_bad"] = tot["first_bad"] or r["first_bad"]
    return tot


def check_widen(lib, name: str) -> dict:
    """All 65,536 values of T to float32, as the wrappers run it (astype), against the reference."""
    dt = HALVES[name][0]
    h = np.arange(1 << 16, dtype=np.uint32)
    got = h.astype(np.uint16).view(dt).astype(np.float32).view(np.uint32)
    if name == "bfloat16":
        want = h << 16                                   # bfloat16 is float32's top half
        is_nan = ((h & 0x7F80) == 0x7F80) & ((h & 0x7F) != 0)
    else:
        want = np.array([lib.ref_widen_f16(int(v)) for v in h], dtype=np.uint32)
        is_nan = want == 0xFFFFFFFF
    got_nan = np.isnan(got.view(np.float32))
    bad = int(np.count_nonzero(np.where(is_nan, ~got_nan, got != want)))
    sign_kept = int(np.count_nonzero(is_nan & ((got >> 31) == (h >> 15))))
    payload_kept = int(np.count_nonzero(is_nan & (got == want))) if name == "bfloat16" else \
        int(np.count_nonzero(is_nan & (((got >> 13) & 0x3FF) == (h & 0x3FF))))
    return {"checked": 1 << 16, "bad": bad, "nans": int(is_nan.sum()), "nan_sign_kept": sign_kept,
            "nan_payload_kept": payload_kept}


def exhaustive(ref: str) -> None:
    """All 2^32 float32 inputs of both narrowings (minutes of CPU for float16: numpy's float16
    cast is not vectorised); prints one JSON object per type."""
    lib = load(ref)
    for t in HALVES:
        print(json.dumps({"type": t, **check_narrow_range(lib, t, 0, 1 << 32)}), flush=True)


def main(argv: list[str]) -> None:
    ref, plant, mode = argv
    lib = load(ref)
    pl = ctypes.CDLL(plant)
    pl.plant_apply.argtypes = [ctypes.c_char_p]
    assert pl.plant_apply(mode.encode()) == 0, mode
    out = {"mode": mode, "round": pl.plant_round(), "control": pl.plant_control(),
           "narrow": {t: check_narrow_classes(lib, t, binades=False)["bad"] for t in HALVES},
           "widen": {t: check_widen(lib, t)["bad"] for t in HALVES}}
    print(json.dumps(out))


if __name__ == "__main__":
    if sys.argv[1] == "--exhaustive":
        exhaustive(sys.argv[2])
    else:
        main(sys.argv[1:])
