"""Benchmark of command-line start-up (issue 28: `sonnx validate` on a small model and
`sonnx --version` within 0.15 s over a bare Python start). Not a test.

Each command runs in a fresh process, ROUNDS times interleaved with the others; the figure is
the least CPU time (user + sys of the child, getrusage: it moves less than wall time on a
shared machine) and the least wall time. The floors are printed too: a bare `python -c pass`,
`import numpy`, `import onnx` (which imports numpy and onnx's helpers itself: a sub-command
that needs onnx's checker cannot start faster than it). The load average is printed first.
Usage: .venv/bin/python benchmarks/bench_startup.py [model.onnx]   (default: examples/add_ok.onnx)
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 7


def _run(argv: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime), wall


def main(model: str) -> None:
    py = sys.executable
    cases = {
        "python -c pass": [py, "-c", "pass"],
        "import numpy": [py, "-c", "import numpy"],
        "import onnx": [py, "-c", "import onnx"],
        "sonnx --version": [py, "-m", "sonnx", "--version"],
        f"sonnx validate {Path(model).name}": [py, "-m", "sonnx", "validate", model],
    }
    print(f"load average (1, 5, 15 min): {', '.join('%.1f' % x for x in os.getloadavg())} on "
          f"{os.cpu_count()} CPUs; least of {ROUNDS} fresh processes each")
    best = {k: (float("inf"), float("inf")) for k in cases}
    for _ in range(ROUNDS):
        for name, argv in cases.items():
            cpu, wall = _run(argv)
            best[name] = (min(best[name][0], cpu), min(best[name][1], wall))
    bare_cpu, bare_wall = best["python -c pass"]
    for name, (cpu, wall) in best.items():
        over = "" if name == "python -c pass" else \
            f"  (+{cpu - bare_cpu:.3f} s CPU, +{wall - bare_wall:.3f} s wall over bare Python)"
        print(f"{name:40s} {cpu:.3f} s CPU {wall:.3f} s wall{over}")
    for name in ("sonnx --version", f"sonnx validate {Path(model).name}"):
        extra = best[name][1] - bare_wall
        print(f"goal {name} <= 0.15 s wall over bare Python: {'met' if extra <= 0.15 else 'missed'}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "examples" / "add_ok.onnx"))
