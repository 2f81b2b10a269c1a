"""Benchmark: the C kernels extracted from the proofs (sonnx.c_kernels) against numpy and
sonnx's own kernels, in the same process on the same inputs.

Not a test: it prints ratios (median and range over five interleaved rounds, timing.py) and
writes build/bench/c.json and c.md. Mul, Add, Sub, Relu: float32, float64 and int32 at 1K,
64K, 1M and 16M elements, sonnx.c_kernels.<op> / numpy's ufunc (Relu: numpy.maximum(x, 0)),
the bare C entry point / the ufunc into a preallocated output, sonnx.<op> / the ufunc, and
sonnx.<op> (which runs the proved C where its record says so) / the same call on its numpy path
(int32 Mul/Add/Sub: the uint32 entry point on the bits, as the C wrapper runs it; sonnx.<op>
runs it too: the route of proofs/int_route.mlw).
Gemm exact mode, float32, square 64 and 256: C kernel / sonnx.gemm exact (the compiled fold) and
/ numpy.matmul (BLAS, not bit-exact: the price of the proved order). The C kernels are single
threaded; the element-wise loops are vectorised (SSE2, packed), Gemm's fold is scalar (one IEEE
operation at a time, no FMA), as extracted.
"""
from __future__ import annotations

import numpy as np

import sonnx
from sonnx import c_kernels as ck

from timing import fmt_range, load_average, machine, ratio_spread, rounds_of, write_figures


# element-wise: each operator, its numpy equivalent, the C entry point taking each type's bits
ELEMENTWISE = {"mul": np.multiply, "add": np.add, "sub": np.subtract}
SIZES = (1 << 10, 1 << 16, 1 << 20, 1 << 24)
ENTRY_SUFFIX = {np.float32: "f32", np.float64: "f64", np.int32: "u32"}     # Relu: i32 for int32


def _reps(n: int) -> int:
    """Calls per round: about the same time per size (a 1K call is microseconds)."""
    return {1 << 10: 2000, 1 << 16: 200, 1 << 20: 20, 1 << 24: 3}[n]


def _operands(rng, dt, n):
    if dt == np.int32:
        return rng.integers(-1000, 1000, n, dtype=dt), rng.integers(-1000, 1000, n, dtype=dt)
    return rng.standard_normal(n).astype(dt), rng.standard_normal(n).astype(dt)


def _numpy_relu(x, out=None):
    # what numpy offers closest to Relu (not Relu's -0 / NaN semantics: a speed reference only)
    return np.maximum(x, 0, out=out) if out is not None else np.maximum(x, 0)


def _numpy_path(stem: str, dtype, call):
    """``call`` with the operator's numpy path, its default before the proved C kernels: the
    entry point hidden from c_kernels.default_entry for the duration of the call (the same
    checks, memo and guard run; a dict store is the only addition)."""
    key = (stem, np.dtype(dtype))
    call()                                   # fills the lookup
    saved = ck._DEFAULT[key]

    def run():
        ck._DEFAULT[key] = (None, None)
        try:
            return call()
        finally:
            ck._DEFAULT[key] = saved
    return run


def elementwise(rng, figures, rows) -> None:
    """Mul, Add, Sub, Relu: sonnx.c_kernels.<op> (checks + the C entry point), the bare entry
    point into a preallocated output, and sonnx.<op> (the default kernel), each / numpy."""
    lib = ck.library()
    for stem in (*ELEMENTWISE, "relu"):
        for dt in (np.float32, np.float64, np.int32):
            suffix = "i32" if (stem == "relu" and dt == np.int32) else ENTRY_SUFFIX[dt]
            raw = getattr(lib, f"sonnx_{stem}_{suffix}")
            for n in SIZES:
                a, b = _operands(rng, dt, n)
                out = np.empty_like(a)
                if stem == "relu":
                    fns = {"c": lambda: ck.relu(a), "numpy": lambda: _numpy_relu(a),
                           "c_call": lambda: raw(a.ctypes.data, out.ctypes.data, n),
                           "numpy_out": lambda: _numpy_relu(a, out), "sonnx": lambda: sonnx.relu(a)}
                    fns["sonnx_numpy"] = _numpy_path(stem, dt, fns["sonnx"])
                else:
                    ufunc, wrapper, kernel = ELEMENTWISE[stem], getattr(ck, stem), getattr(sonnx, stem)
                    fns = {"c": lambda: wrapper(a, b), "numpy": lambda: ufunc(a, b),
                           "c_call": lambda: raw(a.ctypes.data, b.ctypes.data, out.ctypes.data, n),
                           "numpy_out": lambda: ufunc(a, b, out=out), "sonnx": lambda: kernel(a, b)}
                    fns["sonnx_numpy"] = _numpy_path(stem, dt, fns["sonnx"])
                seen = rounds_of(fns, reps=_reps(n))
                key = f"{stem}_{np.dtype(dt).name}_{n}"
                figures[key] = {"c/numpy": ratio_spread(seen, "c", "numpy"),
                                "c_call/numpy_out": ratio_spread(seen, "c_call", "numpy_out"),
                                "sonnx/numpy": ratio_spread(seen, "sonnx", "numpy"),
                                "sonnx/sonnx_numpy_path": ratio_spread(seen, "sonnx", "sonnx_numpy"),
                                "sonnx_runs_c": ck.default_entry(stem, np.dtype(dt)) is not None,
                                "numpy_seconds_median": sorted(seen["numpy"])[2]}
                rows.append((stem.capitalize(), np.dtype(dt).name, n, *(fmt_range(figures[key][k])
                             for k in ("c/numpy", "c_call/numpy_out", "sonnx/numpy")),
                             fmt_range(figures[key]["sonnx/sonnx_numpy_path"])
                             if figures[key]["sonnx_runs_c"] else "numpy path (no entry point for the type)"))
                del a, b, out


def main() -> None:
    rng = np.random.default_rng(0)
    ck.library()                  # the build on first use is not what is measured
    load0 = load_average()
    figures, ew_rows, rows = {}, [], []
    elementwise(rng, figures, ew_rows)
    load_ew = load_average()
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
    figures["conditions"] = {"machine": machine(), "load_average": [load0, load_ew, load_average()]}
    md = ("| operator | type | elements | `sonnx.c_kernels.<op>` / numpy | bare C call / numpy `out=` | "
          "`sonnx.<op>` / numpy | `sonnx.<op>` (proved C) / its numpy path |\n|---|---|---|---|---|---|---|\n"
          + "".join(f"| {' | '.join(str(c) for c in r)} |\n" for r in ew_rows)
          + f"\nload average before / after the element-wise rows: {load0} / {load_ew}\n\n")
    md += "| benchmark | ratio, median (min - max) of 5 rounds |\n|---|---|\n" + "".join(f"| {k} | {v} |\n" for k, v in rows)
    print(md)
    print(f"load average before / after: {load0} / {load_average()}")
    print(f"written {write_figures('c', figures, md)}")


if __name__ == "__main__":
    main()
