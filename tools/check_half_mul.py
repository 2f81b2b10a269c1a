#!/usr/bin/env python3
# Run with the project venv (numpy, ml_dtypes): .venv/bin/python tools/check_half_mul.py [float16] [bfloat16]
# About 40 s per format on one core.
"""Exhaustive check over all pairs of 16-bit patterns (65536 x 65536) that computing a
float16 / bfloat16 product in float32 (exact widening, float32 RNE multiply, RNE
narrowing) gives the same bits as the correctly rounded (RNE) product in the format.

Reference: the exact product in float64 (at most 22 significant bits, exponent inside
float64's range, so exact), rounded once to the format by integer RNE (np.rint on an
exactly scaled value) with the format's precision p, minimum exponent and overflow
threshold. Implementation: numpy float32 multiply, then astype(format).
NaNs compare equal to NaNs (payloads ignored); zeros compare with their sign."""
import sys
import numpy as np
import ml_dtypes

FMT = {  # name: (dtype, precision p, emin of normals, max finite)
    "float16": (np.float16, 11, -14, 65504.0),
    "bfloat16": (ml_dtypes.bfloat16, 8, -126, float.fromhex("0x1.FEp127")),
}


def ref_round(v, p, emin, vmax):
    """RNE of float64 values v to precision p, normals from 2^emin, gradual underflow."""
    out = v.copy()
    fin = np.isfinite(v) & (v != 0)
    w = v[fin]
    _, e = np.frexp(w)                     # w = m * 2^e, 0.5 <= |m| < 1
    q = np.maximum(e - p, emin - p + 1)     # quantum exponent (subnormal: fixed)
    r = np.ldexp(np.rint(np.ldexp(w, -q)), q)   # np.rint: round half to even, exact scaling
    r = np.where(np.abs(r) > vmax, np.copysign(np.inf, w), r)
    r = np.where(r == 0, np.copysign(0.0, w), r)  # keep the sign of an underflowed zero
    out[fin] = r
    return out


def main(name, stride=1):
    dt, p, emin, vmax = FMT[name]
    allv = np.arange(65536, dtype=np.uint16).view(dt)
    y64 = allv.astype(np.float64)
    y32 = allv.astype(np.float32)
    bad, n = 0, 0
    for i in range(0, 65536, stride):
        x = allv[i]
        impl = (np.float32(x) * y32).astype(dt)
        ref = ref_round(np.float64(x) * y64, p, emin, vmax).astype(dt)   # exact values: no rounding here
        ib, rb = impl.view(np.uint16), ref.view(np.uint16)
        both_nan = np.isnan(impl.astype(np.float32)) & np.isnan(ref.astype(np.float32))
        diff = (ib != rb) & ~both_nan
        n += len(ib)
        if diff.any():
            j = np.nonzero(diff)[0]
            bad += len(j)
            if bad <= 10:
                for k in j[:3]:
                    print(f"MISMATCH x={float(x)!r} y={float(allv[k])!r} impl={float(impl[k])!r} ref={float(ref[k])!r}")
    print(f"{name}: {n} pairs, {bad} mismatches")
    return bad


if __name__ == "__main__":
    with np.errstate(all="ignore"):
        sys.exit(1 if sum(main(n) for n in sys.argv[1:] or FMT) else 0)
