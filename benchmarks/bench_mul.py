"""Benchmark: sonnx.mul (fast kernel) as a ratio to numpy.multiply and to onnxruntime.

Not a test: it prints figures. Each ratio compares runs made in this process on the same
inputs; the time of each side is the median of several repetitions, interleaved to share
the machine's state fairly.
"""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import sonnx

from timing import best_of_rounds



def _ort_session(n: int):
    vi = [helper.make_tensor_value_info(x, TensorProto.FLOAT, [n]) for x in "ABC"]
    graph = helper.make_graph([helper.make_node("Mul", ["A", "B"], ["C"])], "mul", vi[:2], vi[2:])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1  # numpy.multiply uses one core; compare like with like
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def main() -> None:
    rng = np.random.default_rng(0)
    print("Mul float32: time per call (median), ratios against the reference run in this process")
    print(f"{'elements':>10} {'sonnx.mul':>11} {'np.multiply':>12} {'ratio':>7} {'onnxruntime':>12} {'ratio':>7}")
    for n in (1 << 20, 1 << 24):
        a = rng.standard_normal(n, dtype=np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        sess = _ort_session(n)
        reps = 30 if n < (1 << 24) else 10
        fns = {"sonnx": lambda: sonnx.mul(a, b), "numpy": lambda: np.multiply(a, b),
               "ort": lambda: sess.run(None, {"A": a, "B": b})}
        t = best_of_rounds(fns, reps)
        print(f"{n:>10} {t['sonnx']*1e3:>9.3f}ms {t['numpy']*1e3:>10.3f}ms {t['sonnx']/t['numpy']:>7.3f}"
              f" {t['ort']*1e3:>10.3f}ms {t['sonnx']/t['ort']:>7.3f}")


if __name__ == "__main__":
    main()
