"""Benchmark: sonnx.conv, exact and fast modes, as ratios to onnxruntime's float32 Conv.

Not a test: it prints figures and writes them to build/bench/conv.json and conv.md. The layers:
LeNet-5's two convolutions (1x28x28 -> 6 @ 5x5 pads 2; 6x14x14 -> 16 @ 5x5) and the 3x3 layer
of a ResNet basic block (16 channels, 32x32, pads 1), each at batch 32, float32, with bias. In
each of five rounds every kernel is timed (median of several calls) one after the other, after
a pause (onnxruntime's and OpenBLAS's idle threads spin); a ratio is taken within each round and
the figures give its median and range. onnxruntime uses its default thread pool (all cores), as
the exact kernel's compiled fold does for large products.

Usage: PYTHONPATH=src:benchmarks python benchmarks/bench_conv.py [--quick]
"""
from __future__ import annotations

import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import sonnx
from sonnx.ops import conv as conv_op

from timing import fmt_range, load_average, machine, ratio_spread, rounds_of, spread, write_figures

SETTLE_S = 0.3
BATCH = 32
LAYERS = {   # name -> (X shape, W shape, pads)
    "LeNet-5 conv1 (1x28x28 -> 6@5x5, pads 2)": ((BATCH, 1, 28, 28), (6, 1, 5, 5), 2),
    "LeNet-5 conv2 (6x14x14 -> 16@5x5)": ((BATCH, 6, 14, 14), (16, 6, 5, 5), 0),
    "ResNet 3x3 (16x32x32 -> 16@3x3, pads 1)": ((BATCH, 16, 32, 32), (16, 16, 3, 3), 1),
}


def _attrs(ws, p: int) -> dict:
    return {"group": 1, "kernel_shape": list(ws[2:]), "pads": [p] * 4, "strides": [1, 1], "dilations": [1, 1]}


def _ort_session(xs, ws, attrs):
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, xs),
           helper.make_tensor_value_info("w", TensorProto.FLOAT, ws),
           helper.make_tensor_value_info("b", TensorProto.FLOAT, [ws[0]])]
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)], "conv", ins,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    opts = ort.SessionOptions()
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def ratios(rounds: int) -> list[dict]:
    rng = np.random.default_rng(0)
    rows = []
    for name, (xs, ws, p) in LAYERS.items():
        x = rng.standard_normal(xs).astype(np.float32)
        w = (rng.standard_normal(ws) / 5).astype(np.float32)
        b = rng.standard_normal(ws[0]).astype(np.float32)
        attrs = _attrs(ws, p)
        kw = {conv_op.KERNEL_ATTRIBUTES[k]: v for k, v in attrs.items()}
        sess = _ort_session(xs, ws, attrs)
        theirs = sess.run(None, {"x": x, "w": w, "b": b})[0]
        exact = sonnx.conv(x, w, b, **kw)
        fns = {"exact": lambda: sonnx.conv(x, w, b, **kw), "fast": lambda: sonnx.conv(x, w, b, **kw, mode="fast"),
               "ort": lambda: sess.run(None, {"x": x, "w": w, "b": b})}
        seen = rounds_of(fns, 5, rounds=rounds, settle=SETTLE_S)
        same = np.count_nonzero(theirs.view(np.uint32) == exact.view(np.uint32))
        row = {"layer": name, "x": xs, "w": ws, "seconds": {k: spread(v) for k, v in seen.items()},
               "exact/ort": ratio_spread(seen, "exact", "ort"), "fast/ort": ratio_spread(seen, "fast", "ort"),
               "ort_bit_equal_fraction": same / exact.size,
               "ort_within_bound": conv_op.outside_bound(theirs, x, w, b, limit=1, **kw) == []}
        rows.append(row)
        print(f"{name}: exact/ort {fmt_range(row['exact/ort'])}  fast/ort {fmt_range(row['fast/ort'])}"
              f"  (ort {seen['ort'][len(seen['ort']) // 2] * 1e3:.2f} ms; onnxruntime bit-equal on "
              f"{100 * row['ort_bit_equal_fraction']:.1f}% of elements, within CONV-R6's bound: {row['ort_within_bound']})")
    return rows


def main() -> None:
    rounds = 2 if "--quick" in sys.argv else 5
    before = load_average()
    rows = ratios(rounds)
    fig = {"machine": machine(), "load_before": before, "load_after": load_average(), "rows": rows}
    md = ["| layer (batch 32, float32) | exact / onnxruntime | fast / onnxruntime |", "|---|---|---|"]
    md += [f"| {r['layer']} | {fmt_range(r['exact/ort'])} | {fmt_range(r['fast/ort'])} |" for r in rows]
    print("written:", write_figures("conv", fig, "\n".join(md) + "\n"))


if __name__ == "__main__":
    main()
