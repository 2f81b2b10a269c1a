"""Benchmark: sonnx.gemm, exact and fast modes, as ratios to numpy.matmul and to onnxruntime.

Not a test: it prints figures and writes them to build/bench/gemm.json and gemm.md (tools/bench
puts the table into docs/operators/gemm.md). Square M = K = N, no C, alpha = beta = 1, so the ratios measure
the product itself. In each of five rounds every kernel is timed (median of several calls) one
after the other, each after a pause (see SETTLE_S); a ratio is taken within each round, and the
figures give the median and the range over the rounds. numpy.matmul and onnxruntime use their
default thread pools (all cores); so does the exact kernel for large products.

Also measured: the first exact Gemm in a fresh process (import and compilation included), the
kernel's throughput in cache against the same kernel compiled with FMA contraction (what the
machine allows with and without FMA, measured), and the estimated limit from the CPU's flags.
"""
from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import sonnx
from sonnx.ops.gemm import fold as gemm_fold

from timing import fmt_range, load_average, machine, ratio_spread, rounds_of, spread, write_figures

# OpenBLAS's idle threads spin for about 0.1 s after a matmul and take the cores from whichever
# kernel runs next (measured: the exact kernel at 512^3 took 7.1 ms right after a matmul, 4.7 ms
# on quiet cores). Each measurement therefore starts after a pause, on quiet cores.
SETTLE_S = 0.3
SIZES = (128, 512, 1024)
TYPES = {"float32": (np.float32, TensorProto.FLOAT), "float64": (np.float64, TensorProto.DOUBLE)}


def _ort_session(n: int, elem: int):
    vi = [helper.make_tensor_value_info(x, elem, [n, n]) for x in "ABY"]
    graph = helper.make_graph([helper.make_node("Gemm", ["A", "B"], ["Y"])], "gemm", vi[:2], vi[2:])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    opts = ort.SessionOptions()
    # onnxruntime's idle workers spin by default and would steal the cores from OpenBLAS's
    # threads in the next (interleaved) measurement; with 2 cores that doubles matmul's time
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _reps(n: int) -> dict[str, int]:
    """Calls per measurement: enough for a stable median, about 0.1-0.3 s per measurement."""
    fast = {128: 200, 512: 30, 1024: 6}[n]
    return {"matmul": fast, "fast": fast, "ort": fast, "exact": {128: 50, 512: 6, 1024: 3}[n]}


def ratios() -> list[dict]:
    rng = np.random.default_rng(0)
    rows = []
    for tname, (dt, elem) in TYPES.items():
        for n in SIZES:
            a = rng.standard_normal((n, n)).astype(dt)
            b = rng.standard_normal((n, n)).astype(dt)
            sess = _ort_session(n, elem)
            fns = {"matmul": lambda: np.matmul(a, b), "exact": lambda: sonnx.gemm(a, b),
                   "fast": lambda: sonnx.gemm(a, b, mode="fast"),
                   "ort": lambda: sess.run(None, {"A": a, "B": b})}
            seen = rounds_of(fns, _reps(n), rounds=5, settle=SETTLE_S)
            row = {"type": tname, "n": n,
                   "seconds": {k: spread(v) for k, v in seen.items()},
                   "exact/matmul": ratio_spread(seen, "exact", "matmul"),
                   # under load the fastest round of each is the least disturbed one
                   "exact/matmul_best": min(seen["exact"]) / min(seen["matmul"]),
                   "fast/matmul": ratio_spread(seen, "fast", "matmul"),
                   "fast/ort": ratio_spread(seen, "fast", "ort"),
                   "exact_gmadd_s": spread(n ** 3 / t / 1e9 for t in seen["exact"]),
                   "matmul_gmadd_s": spread(n ** 3 / t / 1e9 for t in seen["matmul"])}
            rows.append(row)
            print(f"{tname} {n:>5}: exact/matmul {fmt_range(row['exact/matmul'])}"
                  f"  fast/matmul {fmt_range(row['fast/matmul'], 3)}"
                  f"  fast/ort {fmt_range(row['fast/ort'], 3)}"
                  f"  exact {row['exact_gmadd_s']['median']:.1f} G madd/s,"
                  f" matmul {row['matmul_gmadd_s']['median']:.1f}", flush=True)
    return rows


FIRST_CALL = """
import time
t0 = time.perf_counter()
import numpy as np, sonnx
t1 = time.perf_counter()
a = np.ones((64, 64), np.float32)
sonnx.gemm(a, a)
t2 = time.perf_counter()
sonnx.gemm(a, a)
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""


def first_call(runs: int = 5) -> dict:
    """import sonnx, then the first exact float Gemm (compilation included), each in a fresh
    process; the second call shows what is left once compiled."""
    out = []
    for _ in range(runs):
        res = subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True, text=True,
                             check=True)
        out.append([float(x) for x in res.stdout.split()])
    fig = {"import_s": spread(r[0] for r in out), "first_exact_gemm_s": spread(r[1] for r in out),
           "second_call_s": spread(r[2] for r in out)}
    print(f"fresh process: import sonnx {fmt_range(fig['import_s'], 3, ' s')},"
          f" first exact Gemm {fmt_range(fig['first_exact_gemm_s'], 3, ' s')}", flush=True)
    return fig


def in_cache_peak() -> dict:
    """G multiply-adds per second of one thread on operands that stay in cache (K = 2048, one
    register tile), for the fold as compiled and for the same code with FMA contraction allowed:
    the ratio is what dropping the FMA costs on this CPU, measured."""
    from sonnx.ops.gemm.fold_ir import compile_folds
    fig = {}
    for label, flags in (("separate", ()), ("fma", ("contract",))):
        kernels, _ = compile_folds(flags)
        for dt in (np.float32, np.float64):
            kern = kernels[np.dtype(dt)]
            k, mr, nr = 2048, kern.mr, kern.nr
            a, bp, s = np.full((mr, k), 0.5, dt), np.ones((1, k, nr), dt), np.zeros((mr, nr), dt)
            call = lambda: kern.fold(a.ctypes.data, bp.ctypes.data, s.ctypes.data,  # noqa: E731
                                     k, 1, 0, 1, 0, 1, k)
            best = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(100):
                    call()
                best.append(100 * k * mr * nr / (time.perf_counter() - t0) / 1e9)
            fig[f"{label}_{dt.__name__}"] = spread(best)
    for dt in ("float32", "float64"):
        r = spread([fig[f"fma_{dt}"]["max"] / fig[f"separate_{dt}"]["max"]])
        fig[f"fma/separate_{dt}"] = r
        print(f"in cache, one thread, {dt}: separate mul+add {fig[f'separate_{dt}']['max']:.1f},"
              f" with FMA {fig[f'fma_{dt}']['max']:.1f} G madd/s (x{r['median']:.2f})", flush=True)
    return fig


def estimated_limit(m: dict) -> dict:
    """The machine's limit for the exact fold, from /proc/cpuinfo: every multiply-add is two
    vector instructions (no FMA); x86 cores since Haswell issue two vector FP multiplies or adds
    per cycle (server AVX-512 cores: two 512-bit units; some low-end Xeons have one: then
    halve). BLAS uses FMA: one instruction per multiply-add, so it can be up to 2x faster."""
    lanes32 = 16 if "avx512f" in m["vector_flags"] else 8 if "avx2" in m["vector_flags"] else 4
    ghz = m["mhz"] / 1000 or float("nan")
    per_cycle = {"float32": lanes32 * 2 / 2, "float64": lanes32 // 2 * 2 / 2}
    return {"assumed_fp_ports": 2, "ghz_nominal": ghz,
            **{f"exact_gmadd_s_{t}": per_cycle[t] * ghz * m["cores"] for t in per_cycle},
            **{f"fma_gmadd_s_{t}": 2 * per_cycle[t] * ghz * m["cores"] for t in per_cycle}}


def markdown(fig: dict) -> str:
    lim, m = fig["limit"], fig["machine"]
    lines = [f"Measured by `tools/bench` on {m['utc']} UTC: {m['cpu']}, {m['cores']} cores,"
             f" {', '.join(m['vector_flags'])}; load average {m['load_average'][0]} before,"
             f" {fig['load_after'][0]} after (with a load above the 2 cores, other jobs took"
             " turns on them). Ratios: median of 5 rounds (range min - max); best / best: the"
             " fastest exact round over the fastest matmul round.", "",
             "| type | n | exact / numpy.matmul | best / best | exact G madd/s (limit) |"
             " fast / numpy.matmul | fast / onnxruntime |", "|---|---|---|---|---|---|---|"]
    for r in fig["rows"]:
        t = r["type"]
        lines.append(f"| {t} | {r['n']} | {fmt_range(r['exact/matmul'])} |"
                     f" {r['exact/matmul_best']:.2f}x |"
                     f" {r['exact_gmadd_s']['median']:.1f} ({lim[f'exact_gmadd_s_{t}']:.0f}) |"
                     f" {fmt_range(r['fast/matmul'], 3)} | {fmt_range(r['fast/ort'], 3)} |")
    fc, pk = fig["first_call"], fig["in_cache"]
    lines += ["",
              f"Limit: {lim['assumed_fp_ports']} vector FP ports x"
              f" {16 if 'avx512f' in m['vector_flags'] else 8} float32 lanes x"
              f" {lim['ghz_nominal']:.2f} GHz x {m['cores']} cores, two instructions per"
              f" multiply-add without FMA: {lim['exact_gmadd_s_float32']:.0f} (float32) /"
              f" {lim['exact_gmadd_s_float64']:.0f} (float64) G madd/s; with FMA (BLAS) twice"
              " that. Measured in cache on one thread, the same kernel with FMA contraction is"
              f" {pk['fma/separate_float32']['median']:.2f}x (float32) /"
              f" {pk['fma/separate_float64']['median']:.2f}x (float64) faster.",
              "",
              f"Fresh process: `import sonnx` {fmt_range(fc['import_s'], 2, ' s')}; first exact"
              f" float Gemm (compiling the kernel) {fmt_range(fc['first_exact_gemm_s'], 2, ' s')};"
              f" later calls {fc['second_call_s']['median'] * 1e3:.2f} ms.", ""]
    return "\n".join(lines)


def main() -> None:
    fig = {"machine": machine()}
    gemm_fold._compiled()
    fig["first_call"] = first_call()
    fig["in_cache"] = in_cache_peak()
    fig["rows"] = ratios()
    fig["load_after"] = load_average()
    fig["limit"] = estimated_limit(fig["machine"])
    md = markdown(fig)
    print(md)
    print("written:", write_figures("gemm", fig, md))


if __name__ == "__main__":
    main()
