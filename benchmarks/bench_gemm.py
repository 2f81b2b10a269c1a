"""Benchmark: sonnx.gemm, exact and fast modes, as ratios to numpy.matmul and to onnxruntime.

Not a test: it prints figures. float32, square M = K = N, no C, alpha = beta = 1 (so the ratios
measure the product itself). Each ratio compares runs made in this process on the same inputs;
the time of each side is the median of several repetitions, interleaved to share the machine's
state fairly (each after a pause that lets the other kernels' threads go idle), and the best
of five such rounds is kept. numpy.matmul and onnxruntime use their default thread pools (all
cores); so does the exact kernel for large products (row blocks on Python threads).
"""
from __future__ import annotations

import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import sonnx

from timing import median_time

# OpenBLAS's idle threads spin for about 0.1 s after a matmul and take the cores from whichever
# kernel runs next (measured:
# the exact kernel at 512^3 took 7.1 ms right after a matmul, 4.7 ms on quiet cores). Each
# measurement therefore starts after a pause, so that every kernel starts on quiet cores.
SETTLE_S = 0.3


def _ort_session(n: int):
    vi = [helper.make_tensor_value_info(x, TensorProto.FLOAT, [n, n]) for x in "ABY"]
    graph = helper.make_graph([helper.make_node("Gemm", ["A", "B"], ["Y"])], "gemm", vi[:2], vi[2:])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    opts = ort.SessionOptions()
    # onnxruntime's idle workers spin by default and would steal the cores from OpenBLAS's
    # threads in the next (interleaved) measurement; with 2 cores that doubles matmul's time
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def main() -> None:
    rng = np.random.default_rng(0)
    print("Gemm float32 (M = K = N): time per call (median), ratios against runs in this process")
    print(f"{'n':>5} {'matmul':>10} {'exact':>10} {'exact/mm':>9} {'fast':>10} {'fast/mm':>8}"
          f" {'ort':>10} {'fast/ort':>9}")
    for n in (128, 512):
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        sess = _ort_session(n)
        fns = {"matmul": lambda: np.matmul(a, b), "exact": lambda: sonnx.gemm(a, b),
               "fast": lambda: sonnx.gemm(a, b, mode="fast"),
               "ort": lambda: sess.run(None, {"A": a, "B": b})}
        reps = {"exact": 10 if n >= 512 else 50}
        for f in fns.values():  # warm up: thread pools and first allocations are not the kernel
            f()
        rounds = {k: [] for k in fns}
        for _ in range(5):
            for k, f in fns.items():
                time.sleep(SETTLE_S)
                rounds[k].append(median_time(f, reps.get(k, 50 if n >= 512 else 200)))
        t = {k: min(v) for k, v in rounds.items()}
        ms = {k: f"{v * 1e3:.3f}ms" for k, v in t.items()}
        print(f"{n:>5} {ms['matmul']:>10} {ms['exact']:>10} {t['exact'] / t['matmul']:>9.1f}"
              f" {ms['fast']:>10} {t['fast'] / t['matmul']:>8.3f} {ms['ort']:>10}"
              f" {t['fast'] / t['ort']:>9.3f}")


if __name__ == "__main__":
    main()
