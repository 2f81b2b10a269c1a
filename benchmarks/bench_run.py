"""Benchmark: running conformant models with ``sonnx.Session`` (validated and planned once) in exact
and fast mode, as ratios to onnxruntime in the same process; and ``sonnx run --compare``'s check.

Models, each at batch 1 and 1000 (the batch is part of a profile model's static shapes):
- the PyTorch MLP of tests/e2e/models (8 -> 16 -> 16 -> 4 with ReLU): the dynamo export with
  biases (Gemm with C) and the TorchScript export without (MatMul). The committed models have a
  fixed batch of 2, so a copy is made with the batch set (input and output dims, each Gemm's C
  stored as (batch, N) from its identical rows, value_info dropped);
- an ACAS Xu-shaped network: 5 inputs, six hidden layers of 50 with ReLU, 5 outputs, random
  weights; as Gemm with C, and as MatMul + Add (the layout of the ACAS Xu ONNX files of
  VNN-COMP, with each bias stored at the full (batch, 50) shape the profile requires).
Every copy is checked to conform. Timed, interleaved rounds, median and range (timing.py):
``Session.run`` exact and fast, the one-shot ``sonnx.run`` (validation and planning included)
and onnxruntime's ``session.run`` (session made once, CPU provider, default threads).

``--compare``: the whole ``sonnx.run.compare`` (sonnx fast run, onnxruntime, every node's check)
on the ACAS Xu-shaped network (Gemm) and a 784-1024-1024-10 MLP, batch 256; one timing each.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import sonnx
from sonnx.run.comparison import compare

from timing import fmt_range, machine, ratio_spread, rounds_of, spread, write_figures

MODELS = Path(__file__).resolve().parent.parent / "tests" / "e2e" / "models"
BATCHES = (1, 1000)
ACAS = [5] + [50] * 6 + [5]
CASES = {"MLP 8-16-16-4, dynamo op18, Gemm with bias": "mlp_dynamo_op18_bias_c_full.onnx",
         "MLP 8-16-16-4, torchscript op17, MatMul": "mlp_torchscript_op17_nobias.onnx",
         "ACAS Xu-shaped 5-6x50-5, Gemm": (ACAS, False),
         "ACAS Xu-shaped 5-6x50-5, MatMul + Add": (ACAS, True)}


def conforming(model: onnx.ModelProto) -> onnx.ModelProto:
    report = sonnx.validate(model)
    assert report.conforms, [f.message for f in report.findings]
    return model


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
    return conforming(out)


def mlp(sizes: list[int], batch: int, matmul_add: bool = False, seed: int = 0) -> onnx.ModelProto:
    """A dense ReLU network of the given layer sizes, random weights, float32, opset 13."""
    rng = np.random.default_rng(seed)
    nodes, inits, x = [], [], "x"
    for i, (k, n) in enumerate(zip(sizes[:-1], sizes[1:])):
        inits += [numpy_helper.from_array((rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32), f"w{i}"),
                  numpy_helper.from_array(np.repeat(rng.standard_normal((1, n)).astype(np.float32) * 0.1,
                                                    batch, axis=0), f"b{i}")]
        y = f"h{i}"
        if matmul_add:
            nodes += [helper.make_node("MatMul", [x, f"w{i}"], [y + "_mm"], name=f"matmul{i}"),
                      helper.make_node("Add", [y + "_mm", f"b{i}"], [y], name=f"add{i}")]
        else:
            nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [y], name=f"gemm{i}"))
        if i < len(sizes) - 2:
            nodes.append(helper.make_node("Relu", [y], [y + "_relu"], name=f"relu{i}"))
            y += "_relu"
        x = y
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, sizes[0]])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [batch, sizes[-1]])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return conforming(model)


def model_of(case, batch: int) -> onnx.ModelProto:
    if isinstance(case, str):
        return with_batch(onnx.load(str(MODELS / case)), batch)
    sizes, matmul_add = case
    return mlp(sizes, batch, matmul_add)


def measure(name: str, case, batch: int) -> dict:
    model = model_of(case, batch)
    (x,) = model.graph.input
    feed = {x.name: np.random.default_rng(0).standard_normal((batch, x.type.tensor_type.shape.dim[1].dim_value))
            .astype(np.float32)}
    exact, fast = sonnx.Session(model, "exact"), sonnx.Session(model, "fast")
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    fns = {"exact": lambda: exact.run(None, feed),
           "fast": lambda: fast.run(None, feed),
           "sonnx.run exact": lambda: sonnx.run(model, feed),
           "ort": lambda: sess.run(None, feed)}
    seen = rounds_of(fns, {"exact": 100, "fast": 300, "sonnx.run exact": 10, "ort": 300}, rounds=5, settle=0.05)
    row = {"model": name, "batch": batch, "nodes": len(model.graph.node),
           "seconds": {k: spread(v) for k, v in seen.items()},
           "exact/ort": ratio_spread(seen, "exact", "ort"),
           "fast/ort": ratio_spread(seen, "fast", "ort"),
           "sonnx.run exact/ort": ratio_spread(seen, "sonnx.run exact", "ort")}
    print(f"{name}, batch {batch}: exact/ort {fmt_range(row['exact/ort'], 1)}  fast/ort {fmt_range(row['fast/ort'], 1)}  "
          f"sonnx.run exact/ort {fmt_range(row['sonnx.run exact/ort'], 0)}  "
          f"ort {row['seconds']['ort']['median'] * 1e6:.0f} us", flush=True)
    return row


def measure_compare() -> list[dict]:
    rows = []
    for name, sizes in (("ACAS Xu-shaped 5-6x50-5, Gemm", ACAS), ("MLP 784-1024-1024-10, Gemm", [784, 1024, 1024, 10])):
        model = mlp(sizes, 256)
        feed = {"x": np.random.default_rng(1).standard_normal((256, sizes[0])).astype(np.float32)}
        t0 = time.perf_counter()
        result = compare(model, feed, "fast")
        seconds = time.perf_counter() - t0
        assert result.within_bounds, result.as_dict()
        rows.append({"model": name, "batch": 256, "seconds": seconds,
                     "products": sum(k * n * 256 for k, n in zip(sizes[:-1], sizes[1:]))})
        print(f"--compare {name}, batch 256: {seconds:.2f} s", flush=True)
    return rows


def markdown(fig: dict) -> str:
    lines = [f"median (min - max) over 5 rounds, {fig['machine']['cpu']}, {fig['machine']['cores']} cores, "
             f"load {fig['machine']['load_average']} before, {fig['load_after']} after",
             "",
             "| model | batch | onnxruntime | Session exact / ort | Session fast / ort | sonnx.run (validation included) exact / ort |",
             "|---|---|---|---|---|---|"]
    for r in fig["rows"]:
        lines.append(f"| {r['model']} | {r['batch']} | {r['seconds']['ort']['median'] * 1e6:.0f} us "
                     f"| {fmt_range(r['exact/ort'], 1)} | {fmt_range(r['fast/ort'], 1)} "
                     f"| {fmt_range(r['sonnx.run exact/ort'], 0)} |")
    lines += ["", "| `sonnx.run.compare` (fast run, onnxruntime, every node checked) | batch | seconds |", "|---|---|---|"]
    for r in fig["compare"]:
        lines.append(f"| {r['model']} | {r['batch']} | {r['seconds']:.2f} s |")
    return "\n".join(lines) + "\n"


def main() -> None:
    fig = {"machine": machine()}
    fig["rows"] = [measure(name, case, batch) for name, case in CASES.items() for batch in BATCHES]
    fig["compare"] = measure_compare()
    fig["load_after"] = machine()["load_average"]
    md = markdown(fig)
    print(md)
    print("written:", write_figures("run", fig, md))


if __name__ == "__main__":
    main()
