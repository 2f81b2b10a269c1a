"""Timing shared by the benchmarks: interleaved rounds of repeated calls, median per round."""
from __future__ import annotations

import statistics
import time


def median_time(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def best_of_rounds(fns: dict, reps: int, rounds: int = 5) -> dict[str, float]:
    """Per function, the best of ``rounds`` medians; the functions alternate within each round
    so that they share the machine's state (other load, frequency) fairly."""
    for f in fns.values():  # warm-up: first allocations and lazy initialisation are not the kernel
        f()
    seen: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            seen[k].append(median_time(f, reps))
    return {k: min(v) for k, v in seen.items()}
