"""Benchmark: what the per-call argument checks of sonnx.mul and sonnx.gemm cost (issue 17).

Not a test: it prints figures. Three measures, each as interleaved rounds (the functions
alternate within a round, so that they share the machine's load), reported as min / median /
max over the rounds of each round's median time per call:
- the check overhead: sonnx.mul / sonnx.gemm(mode="fast") minus numpy on 2x2 operands, where
  the numpy work is negligible and what remains is the wrapper;
- sonnx.mul / numpy.multiply, float32, 1M elements (goal <= 1.03x);
- sonnx.gemm(mode="fast") / numpy.matmul, float32 128^3 (goal <= 1.05x);
- ``import sonnx`` in a new process, against ``import numpy`` (goal <= 0.2 s).
Run from the repository root: ``.venv/bin/python benchmarks/bench_checks.py``; set PYTHONPATH
to another tree's src to measure that tree with the same harness.
"""
from __future__ import annotations

import statistics
import subprocess
import sys

import numpy as np

import sonnx

from timing import median_time


def rounds(fns: dict, reps: int, n_rounds: int = 15) -> dict[str, list[float]]:
    for f in fns.values():           # warm-up: first allocations, memo entries, lazy imports
        f()
    seen: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(n_rounds):
        for k, f in fns.items():
            seen[k].append(median_time(f, reps))
    return seen


def spread(values: list[float], scale: float = 1.0, fmt: str = "{:.3f}") -> str:
    lo, med, hi = min(values), statistics.median(values), max(values)
    return " / ".join(fmt.format(v * scale) for v in (lo, med, hi))


def ratio(seen: dict[str, list[float]], a: str, b: str) -> list[float]:
    """Per round, the ratio of the two medians (same round: same machine state)."""
    return [x / y for x, y in zip(seen[a], seen[b])]


def overhead() -> None:
    x = np.ones((2, 2), np.float32)

    def loop(fn):
        return lambda: [fn() for _ in range(100)]
    seen = rounds({"mul": loop(lambda: sonnx.mul(x, x)), "multiply": loop(lambda: np.multiply(x, x)),
                   "gemm": loop(lambda: sonnx.gemm(x, x, x, mode="fast")),
                   "matmul": loop(lambda: np.add(np.matmul(x, x), x))}, reps=20)
    for op, ref in (("mul", "multiply"), ("gemm", "matmul")):
        extra = [(s - r) / 100 for s, r in zip(seen[op], seen[ref])]
        print(f"  sonnx.{op} check overhead, 2x2 operands: {spread(extra, 1e6, '{:.2f}')} us "
              f"(min / median / max of {len(extra)} rounds)")


def kernels() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(1 << 20, dtype=np.float32)
    b = rng.standard_normal(1 << 20, dtype=np.float32)
    seen = rounds({"sonnx": lambda: sonnx.mul(a, b), "numpy": lambda: np.multiply(a, b)}, reps=30)
    print(f"  sonnx.mul / numpy.multiply, float32 1M: {spread(ratio(seen, 'sonnx', 'numpy'))} "
          f"(numpy {spread(seen['numpy'], 1e3)} ms)")
    p = rng.standard_normal((128, 128), dtype=np.float32)
    q = rng.standard_normal((128, 128), dtype=np.float32)
    seen = rounds({"sonnx": lambda: sonnx.gemm(p, q, mode="fast"), "numpy": lambda: np.matmul(p, q)},
                  reps=200)
    print(f"  sonnx.gemm fast / numpy.matmul, float32 128^3: {spread(ratio(seen, 'sonnx', 'numpy'))} "
          f"(numpy {spread(seen['numpy'], 1e6, '{:.1f}')} us)")


def import_time(n: int = 9) -> None:
    def run(module: str) -> float:
        code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
        return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout)
    seen: dict[str, list[float]] = {"sonnx": [], "numpy": []}
    for _ in range(n):
        for m in seen:
            seen[m].append(run(m))
    print(f"  import sonnx: {spread(seen['sonnx'])} s; import numpy alone: {spread(seen['numpy'])} s "
          f"(min / median / max of {n} new processes)")


def main() -> None:
    print(f"sonnx from {sonnx.__file__}")
    overhead()
    kernels()
    import_time()


if __name__ == "__main__":
    main()
