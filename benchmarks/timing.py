"""Timing shared by the benchmarks: interleaved rounds of repeated calls, with their spread.

A figure is only as good as the machine's state while it was taken; so every benchmark reports
the spread over rounds (min / median / max of the per-round medians, and of the per-round
ratios: both sides of a ratio are measured in the same round, one after the other), the load
average before and after, and the CPU. ``write_figures`` stores them under build/bench/, where
tools/bench collects them into the tables the docs show (docs/benchmarks.md, docs/run.md,
docs/operators/gemm.md).
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "build" / "bench"


def median_time(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def rounds_of(fns: dict, reps, rounds: int = 5, settle: float = 0.0) -> dict[str, list[float]]:
    """Per function, the median time of ``reps`` calls (an int, or a dict per function) in each
    of ``rounds`` rounds; the functions alternate within a round so that they share the
    machine's state (other load, frequency) fairly. ``settle``: a pause before each measurement,
    for kernels whose idle threads spin after a call and would slow the next one."""
    for f in fns.values():  # warm-up: first allocations and lazy initialisation are not the kernel
        f()
    seen: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            if settle:
                time.sleep(settle)
            seen[k].append(median_time(f, reps[k] if isinstance(reps, dict) else reps))
    return seen


def best_of_rounds(fns: dict, reps: int, rounds: int = 5) -> dict[str, float]:
    """Per function, the best of ``rounds`` medians (see rounds_of)."""
    return {k: min(v) for k, v in rounds_of(fns, reps, rounds).items()}


def spread(values) -> dict[str, float]:
    v = sorted(values)
    return {"min": v[0], "median": statistics.median(v), "max": v[-1], "n": len(v)}


def ratio_spread(seen: dict[str, list[float]], num: str, den: str) -> dict[str, float]:
    """The ratio num / den round by round (both measured in the same round), and its spread."""
    return spread(a / b for a, b in zip(seen[num], seen[den]))


def fmt_range(s: dict, digits: int = 2, unit: str = "x") -> str:
    """'2.1x (1.9 - 2.6x)': median, then min - max."""
    f = f"{{:.{digits}f}}"
    return f"{f.format(s['median'])}{unit} ({f.format(s['min'])} - {f.format(s['max'])}{unit})"


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict:
    """What a reader needs to judge the figures: CPU, cores, vector flags, load, time."""
    model, flags, mhz = "", set(), 0.0
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, val = line.partition(":")
            key = key.strip()
            if key == "model name" and not model:
                model = val.strip()
            elif key == "flags" and not flags:
                flags = set(val.split())
            elif key == "cpu MHz" and not mhz:
                mhz = float(val)
    except OSError:
        pass
    vec = [f for f in ("avx512f", "avx2", "fma", "avx") if f in flags]
    return {"cpu": model or platform.processor(), "cores": os.cpu_count(), "mhz": mhz,
            "vector_flags": vec, "load_average": load_average(),
            "utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}


def write_figures(name: str, figures: dict, markdown: str) -> Path:
    """build/bench/<name>.json (all figures, with their spread and conditions) and <name>.md
    (the table for the docs)."""
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(figures, indent=1) + "\n")
    (OUT / f"{name}.md").write_text(markdown)
    return OUT / f"{name}.json"
