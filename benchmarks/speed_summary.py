"""The README's speed table, taken from the figures bench_c.py and bench_gemm_c.py wrote
(build/bench/c.json, gemm_c.json): what the proved C kernels cost against what a user would
otherwise run, in the same process. Not a benchmark itself: it measures nothing, it only picks
rows, so that the README's figures are exactly a run's and never typed by hand.

Writes build/bench/speed.md; `tools/bench --readme c gemm_c` puts it between the README's
<!-- bench:speed --> lines.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "build" / "bench"


def _r(fig: dict) -> str:
    return f"{fig['median']:.2f}x ({fig['min']:.2f} - {fig['max']:.2f}x)"


def _load(cond: dict) -> str:
    loads = cond["load_average"]
    firsts = [x[0] for x in loads] if isinstance(loads[0], list) else [loads[0]]
    return f"{min(firsts):.1f} - {max(firsts):.1f}"


def summary(c: dict, g: dict) -> str:
    rows = []
    for op in ("mul", "add", "sub", "relu"):
        for n, label in ((1 << 16, "64K"), (1 << 20, "1M")):
            fig = c[f"{op}_float32_{n}"]
            rows.append((f"`sonnx.{op}` float32, {label} elements", "proved C (the default)",
                         f"numpy's ufunc{' (maximum(x, 0))' if op == 'relu' else ''}", _r(fig["sonnx/numpy"])))
    for s in (64, 256, 512, 1024):
        fig = g[f"gemm_float32_{s}x{s}x{s}"]
        default = s ** 3 <= 1 << 18          # Gemm's size rule (gemm.C_DEFAULT_WORK)
        rows.append((f"Gemm exact float32 {s}^3", "proved C (the default)" if default else
                     "proved C (`sonnx.c_kernels.gemm`)",
                     "the llvmlite fold" if default else "the llvmlite fold (the default)", _r(fig["c/fold"])))
    for s in (256, 512):
        fig = g[f"gemm_int32_{s}"]
        rows.append((f"Gemm int32 {s}^3", "proved C (the default)", "numpy matmul on unsigned views",
                     _r(fig["c/numpy"])))
    cond = c["conditions"]["machine"]
    head = (f"Median (min - max) over interleaved rounds, same process and inputs, bits checked equal "
            f"first; {cond['cores']} cores, {cond['cpu']}, load average {_load(c['conditions'])} "
            f"(element-wise) and {_load(g['conditions'])} (Gemm), {cond['utc'][:10]}.\n\n")
    return head + ("| what runs | kernel | against | time ratio |\n|---|---|---|---|\n"
                   + "".join(f"| {a} | {b} | {c_} | {d} |\n" for a, b, c_, d in rows))


def main() -> int:
    try:
        c = json.loads((OUT / "c.json").read_text())
        g = json.loads((OUT / "gemm_c.json").read_text())
    except FileNotFoundError as e:
        print(f"speed_summary: {e.filename} missing: run `tools/bench c gemm_c` first", file=sys.stderr)
        return 2
    (OUT / "speed.md").write_text(summary(c, g))
    print(f"written {OUT / 'speed.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
