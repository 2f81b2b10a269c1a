"""Benchmark: `sonnx run` on the PyTorch MLP (tests/e2e/models, 8 -> 16 -> 16 -> 4 with ReLU) for
1,000 samples, exact and fast mode, as ratios to onnxruntime in the same process.

1,000 samples = one run at batch 1000: the committed models have a fixed batch of 2, so the
benchmark makes a copy with batch 1000 (input and output dims set to 1000, each Gemm's C stored
as (1000, N) from its identical rows, value_info dropped) and checks that the copy conforms. Two
models: the dynamo export with biases (Gemm with C) and the TorchScript export without (MatMul).
Timed: the node-by-node run of an already validated and loaded model (run_graph), the whole
``sonnx.run`` call (validation and loading included), and onnxruntime's session.run (session
made once, CPU provider, default threads). Interleaved rounds, median and range (timing.py).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

import sonnx
from sonnx.run import executor

from timing import fmt_range, machine, ratio_spread, rounds_of, spread, write_figures

MODELS = Path(__file__).resolve().parent.parent / "tests" / "e2e" / "models"
BATCH = 1000
CASES = {"dynamo op18, Gemm with bias": "mlp_dynamo_op18_bias_c_full.onnx",
         "torchscript op17, MatMul": "mlp_torchscript_op17_nobias.onnx"}


def with_batch(model: onnx.ModelProto, batch: int) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for vi in list(out.graph.input) + list(out.graph.output):
        vi.type.tensor_type.shape.dim[0].dim_value = batch
    del out.graph.value_info[:]
    c_names = {n.input[2] for n in out.graph.node if n.op_type == "Gemm" and len(n.input) > 2 and n.input[2]}
    for i, t in enumerate(out.graph.initializer):
        if t.name in c_names:
            c = numpy_helper.to_array(t)
            assert (c == c[:1]).all(), "a C whose rows differ cannot be given another batch"
            out.graph.initializer[i].CopyFrom(numpy_helper.from_array(np.repeat(c[:1], batch, axis=0), t.name))
    report = sonnx.validate(out)
    assert report.conforms, [f.message for f in report.findings]
    return out


def measure(name: str, path: Path) -> dict:
    model = with_batch(onnx.load(str(path)), BATCH)
    (x,) = model.graph.input
    feed = {x.name: np.random.default_rng(0).standard_normal((BATCH, x.type.tensor_type.shape.dim[1].dim_value))
            .astype(np.float32)}
    loaded = executor.load(model)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    fns = {"exact": lambda: executor.run_graph(loaded, feed, "exact"),
           "fast": lambda: executor.run_graph(loaded, feed, "fast"),
           "sonnx.run exact": lambda: sonnx.run(model, feed),
           "ort": lambda: sess.run(None, feed)}
    seen = rounds_of(fns, {"exact": 20, "fast": 50, "sonnx.run exact": 10, "ort": 200}, rounds=5, settle=0.1)
    row = {"model": name, "samples": BATCH, "nodes": len(model.graph.node),
           "seconds": {k: spread(v) for k, v in seen.items()},
           "exact/ort": ratio_spread(seen, "exact", "ort"),
           "fast/ort": ratio_spread(seen, "fast", "ort"),
           "sonnx.run exact/ort": ratio_spread(seen, "sonnx.run exact", "ort")}
    print(f"{name}: exact/ort {fmt_range(row['exact/ort'], 1)}  fast/ort {fmt_range(row['fast/ort'], 1)}  "
          f"sonnx.run exact/ort {fmt_range(row['sonnx.run exact/ort'], 0)}  "
          f"ort {row['seconds']['ort']['median'] * 1e3:.3f} ms")
    return row


def markdown(fig: dict) -> str:
    lines = [f"MLP 8-16-16-4 with ReLU, {BATCH} samples in one batch; median (min - max) over 5 rounds, "
             f"{fig['machine']['cpu']}, {fig['machine']['cores']} cores, load {fig['machine']['load_average']}",
             "",
             "| model | onnxruntime | exact / ort | fast / ort | sonnx.run (validation included) exact / ort |",
             "|---|---|---|---|---|"]
    for r in fig["rows"]:
        lines.append(f"| {r['model']} | {r['seconds']['ort']['median'] * 1e3:.3f} ms | {fmt_range(r['exact/ort'], 1)} "
                     f"| {fmt_range(r['fast/ort'], 1)} | {fmt_range(r['sonnx.run exact/ort'], 0)} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    fig = {"machine": machine()}
    fig["rows"] = [measure(name, MODELS / f) for name, f in CASES.items()]
    md = markdown(fig)
    print(md)
    print("written:", write_figures("run", fig, md))


if __name__ == "__main__":
    main()
