"""Benchmark: Gemm exact mode, the proved C kernel (sonnx.c_kernels.gemm's arithmetic, the
register-tiled loop of proofs/gemm_c_tile.mlw) against the llvmlite-compiled fold
(sonnx/ops/gemm/fold.py), in the same process on the same inputs, each as sonnx.gemm runs it after
its checks (one plan, gemm.check, for both: the C through gemm._gemm_c, the fold through
gemm._exact_float). sonnx.gemm itself runs the C up to Gemm's size rule (C_BINDING.sizes:
M * N * K <= 2^18) and the fold above, so the shapes include that bound (64^3, 1 x 512 x 512).

Not a test: it prints ratios C / fold (median and range over interleaved rounds, timing.py) and
writes build/bench/gemm_c.json and gemm_c.md; a third table, a Session's kernel with the
weights fixed, the comparison Gemm's size rule is decided on. Integer Gemm (int32, int64 at 64, 256, 512): the C
kernel against the former default, numpy's integer matmul on unsigned views. float32 and float64; square M = K = N = 16, 64, 96,
256, 512, 1024 and MLP layers (batch 1000 and batch 1, 784 -> 1024; batch 1, 512 -> 512); no C,
alpha = beta = 1. Each shape's two
results are compared bit for bit first (a difference stops the run). The C kernel splits the
output rows across one thread per core (large products); it runs its AVX2 copy where the CPU has
AVX2 (SONNX_C_AVX2=0 in the environment: the SSE2 copy), no FMA in either; the fold uses the widest vectors of this CPU and
all cores for large products. The load average before and after is printed: on a loaded
machine both sides slow down, the ratio less so.
"""
from __future__ import annotations

import numpy as np

import sonnx
from sonnx import c_kernels as ck
from sonnx.ops import gemm as G

from timing import fmt_range, load_average, machine, ratio_spread, rounds_of, write_figures

SHAPES = [(16, 16, 16), (64, 64, 64), (96, 96, 96), (256, 256, 256), (512, 512, 512), (1024, 1024, 1024),
          (1000, 784, 1024), (1, 512, 512), (1, 784, 1024)]
# a Session's layers around Gemm's size rule (M * N * K <= 2^18: the proved C by default)
PREPARED_SHAPES = [(16, 16, 16), (1, 512, 512), (4, 256, 256), (64, 64, 64), (32, 64, 128), (8, 256, 256),
                   (96, 96, 96), (128, 128, 128), (1, 784, 1024)]


def main() -> None:
    rng = np.random.default_rng(0)
    ck.library()                  # the build on first use is not what is measured
    load0 = load_average()
    figures, rows = {}, []
    for dt in (np.float32, np.float64):
        for m, k, n in SHAPES:
            a = rng.standard_normal((m, k)).astype(dt)
            b = rng.standard_normal((k, n)).astype(dt)
            plan = G.check(a, b, None, 1.0, 1.0, False, False, "exact", G.LATEST)
            c_run = lambda: G._gemm_c(ck, plan, a, b, None, 1.0, 1.0)           # noqa: E731
            fold_run = lambda: G._exact_float(a, b, None, 1.0, 1.0, plan.acc)   # noqa: E731
            if not (c_run().tobytes() == fold_run().tobytes() == ck.gemm(a, b).tobytes() == sonnx.gemm(a, b).tobytes()):
                raise SystemExit(f"bench_gemm_c: C and exact Gemm differ at {m}x{k}x{n} {np.dtype(dt).name}")
            big = m * k * n >= 512 ** 3
            seen = rounds_of({"c": c_run, "fold": fold_run},
                             reps=1 if big else 5 if m * k * n >= 256 ** 3 else 50 if m * k * n >= 1 << 18 else 500,
                             rounds=3 if big else 5)
            key = f"gemm_{np.dtype(dt).name}_{m}x{k}x{n}"
            figures[key] = {"c/fold": ratio_spread(seen, "c", "fold"),
                            "c_seconds_min": min(seen["c"]), "fold_seconds_min": min(seen["fold"])}
            rows.append((f"{np.dtype(dt).name} {m}x{k} @ {k}x{n}", fmt_range(figures[key]["c/fold"]),
                         f"{min(seen['c']) * 1e3:.3g} / {min(seen['fold']) * 1e3:.3g}"))
            print(" | ".join(rows[-1]), flush=True)
    # the Session's kernel with the weights fixed (B and C initializers, transB = 1 as nn.Linear
    # exports): the C with B' made contiguous once (gemm._prepared_c) against the fold with B
    # packed once (gemm._prepared): the comparison Gemm's size rule is decided on (C_BINDING.sizes)
    prows = []
    for dt in (np.float32, np.float64):
        for m, k, n in PREPARED_SHAPES:
            a = rng.standard_normal((m, k)).astype(dt)
            b = rng.standard_normal((n, k)).astype(dt)
            c = rng.standard_normal((m, n)).astype(dt)
            plan = G.check(a, b, c, 1.0, 1.0, False, True, "exact", G.LATEST)
            with_c = G._prepared_c(plan, b, c, 1.0, 1.0, (m, n, k))
            with_fold = G._prepared(plan, b, c, 1.0, 1.0, True)
            with np.errstate(all="ignore"):
                if with_c(a, b, c).tobytes() != with_fold(a, b, c).tobytes():
                    raise SystemExit(f"bench_gemm_c: prepared C and fold differ at {m}x{k}x{n} {np.dtype(dt).name}")
                seen = rounds_of({"c": lambda: with_c(a, b, c), "fold": lambda: with_fold(a, b, c)},
                                 reps=max(1, min(300, int(2e7 / (m * n * k)))), rounds=7)
            key = f"gemm_prepared_{np.dtype(dt).name}_{m}x{k}x{n}"
            figures[key] = {"c/fold": ratio_spread(seen, "c", "fold"), "c_seconds_min": min(seen["c"]),
                            "fold_seconds_min": min(seen["fold"]), "default": G._c_default_sizes(m, n, k)}
            prows.append((f"{np.dtype(dt).name} {m}x{k} @ ({n}x{k})^T + C", fmt_range(figures[key]["c/fold"]),
                          f"{min(seen['c']) * 1e3:.3g} / {min(seen['fold']) * 1e3:.3g}",
                          "proved C" if figures[key]["default"] else "fold"))
            print(" | ".join(prows[-1]), flush=True)
    # integer Gemm: the proved C kernel (now sonnx.gemm's default for integers) against the former
    # default, numpy's integer matmul on unsigned views (the same bits, compared first)
    irows = []
    for dt in (np.int32, np.int64):
        u = np.dtype(f"uint{np.dtype(dt).itemsize * 8}")
        for s in (64, 256, 512):
            a = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, (s, s), dtype=dt)
            b = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, (s, s), dtype=dt)
            former = lambda: np.matmul(a.view(u), b.view(u)).view(dt)     # noqa: E731
            if ck.gemm(a, b).tobytes() != former().tobytes():
                raise SystemExit(f"bench_gemm_c: C and numpy integer Gemm differ at {s} {np.dtype(dt).name}")
            seen = rounds_of({"c": lambda: ck.gemm(a, b), "numpy": former}, reps=1 if s >= 512 else 5, rounds=3)
            key = f"gemm_{np.dtype(dt).name}_{s}"
            figures[key] = {"c/numpy": ratio_spread(seen, "c", "numpy"), "c_seconds_min": min(seen["c"]),
                            "numpy_seconds_min": min(seen["numpy"])}
            irows.append((f"{np.dtype(dt).name} {s}^3", fmt_range(figures[key]["c/numpy"]),
                          f"{min(seen['c']) * 1e3:.1f} / {min(seen['numpy']) * 1e3:.1f}"))
            print(" | ".join(irows[-1]), flush=True)
    load1 = load_average()
    figures["conditions"] = {"machine": machine(), "load_average": [load0, load1]}
    md = ("| Gemm exact, A @ B | C kernel / llvmlite fold, median (min - max) of rounds | best ms, C / fold |\n"
          "|---|---|---|\n" + "".join(f"| {a} | {b} | {c} |\n" for a, b, c in rows))
    md += ("\n| Session, weights fixed | prepared C / prepared fold, median (min - max) | best ms, C / fold | the default runs |\n"
           "|---|---|---|---|\n" + "".join(f"| {a} | {b} | {c} | {d} |\n" for a, b, c, d in prows))
    md += ("\n| Gemm integer, A @ B | C kernel / numpy matmul on unsigned views, median (min - max) | best ms, C / numpy |\n"
           "|---|---|---|\n" + "".join(f"| {a} | {b} | {c} |\n" for a, b, c in irows))
    print(md)
    print(f"load average before / after: {load0} / {load1}")
    print(f"written {write_figures('gemm_c', figures, md)}")


if __name__ == "__main__":
    main()
