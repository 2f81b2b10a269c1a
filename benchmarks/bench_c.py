"""Benchmark: the C kernels extracted from the proofs (sonnx.c_kernels) against numpy and
sonnx's own kernels, in the same process on the same inputs.

Not a test: it prints ratios (median and range over five interleaved rounds, timing.py) and
writes build/bench/c.json and c.md. Mul: float32 and int32 at 1M elements, C kernel / numpy.multiply.
Gemm exact mode, float32, square 64 and 256: C kernel / sonnx.gemm exact (the compiled fold) and
/ numpy.matmul (BLAS, not bit-exact: the price of the proved order). The C kernels are single
threaded, scalar (one IEEE operation at a time, no FMA), as extracted.
"""
from __future__ import annotations

import numpy as np

import sonnx
from sonnx import c_kernels as ck

from timing import fmt_range, load_average, machine, ratio_spread, rounds_of, write_figures


def main() -> None:
    rng = np.random.default_rng(0)
    ck.library()                  # the build on first use is not what is measured
    load0 = load_average()
    figures, rows = {}, []
    for dt, n in ((np.float32, 1 << 20), (np.int32, 1 << 20), (np.float64, 1 << 20)):
        a = rng.standard_normal(n).astype(dt) if dt != np.int32 else rng.integers(-1000, 1000, n, dtype=dt)
        b = rng.standard_normal(n).astype(dt) if dt != np.int32 else rng.integers(-1000, 1000, n, dtype=dt)
        lib, out = ck.library(), np.empty_like(a)
        raw = {np.float32: lib.sonnx_mul_f32, np.float64: lib.sonnx_mul_f64, np.int32: lib.sonnx_mul_u32}[dt]
        seen = rounds_of({"c": lambda: ck.mul(a, b), "numpy": lambda: np.multiply(a, b),
                          "c_call": lambda: raw(a.ctypes.data, b.ctypes.data, out.ctypes.data, n),
                          "numpy_out": lambda: np.multiply(a, b, out=out),
                          "sonnx": lambda: sonnx.mul(a, b)}, reps=20)
        key = f"mul_{np.dtype(dt).name}_{n}"
        figures[key] = {"c/numpy": ratio_spread(seen, "c", "numpy"), "c/sonnx": ratio_spread(seen, "c", "sonnx"),
                        "c_call/numpy_out": ratio_spread(seen, "c_call", "numpy_out")}
        rows.append((f"C Mul (sonnx.c_kernels.mul) / numpy.multiply, {np.dtype(dt).name}, {n} elements",
                     fmt_range(figures[key]["c/numpy"])))
        rows.append((f"C Mul, the bare call into preallocated output / numpy.multiply(out=), {np.dtype(dt).name}",
                     fmt_range(figures[key]["c_call/numpy_out"])))
    for size in (64, 256):
        a = rng.standard_normal((size, size)).astype(np.float32)
        b = rng.standard_normal((size, size)).astype(np.float32)
        reps = 20 if size == 64 else 3
        seen = rounds_of({"c": lambda: ck.gemm(a, b), "exact": lambda: sonnx.gemm(a, b),
                          "numpy": lambda: np.matmul(a, b)}, reps=reps)
        key = f"gemm_float32_{size}"
        figures[key] = {"c/sonnx_exact": ratio_spread(seen, "c", "exact"), "c/numpy": ratio_spread(seen, "c", "numpy"),
                        "c_seconds_min": min(seen["c"])}
        rows.append((f"C Gemm exact / sonnx.gemm exact, float32 {size}^3", fmt_range(figures[key]["c/sonnx_exact"])))
        rows.append((f"C Gemm exact / numpy.matmul (BLAS), float32 {size}^3", fmt_range(figures[key]["c/numpy"])))
    figures["conditions"] = {"machine": machine(), "load_average": [load0, load_average()]}
    md = "| benchmark | ratio, median (min - max) of 5 rounds |\n|---|---|\n" + "".join(f"| {k} | {v} |\n" for k, v in rows)
    print(md)
    print(f"load average before / after: {load0} / {load_average()}")
    print(f"written {write_figures('c', figures, md)}")


if __name__ == "__main__":
    main()
