"""Benchmark of `sonnx validate` on generated chains of 10k and 100k nodes (not a test).

Each chain alternates Mul(v, v) and Gemm(v, v, v) on float [8, 8] tensors (a conformant model,
so every node goes through the rules). Every measurement runs in a fresh subprocess:
  * "model in memory": RSS growth from parsing the file (onnx.load, no external data);
  * "validate": wall time of sonnx.validate(path) end to end, with the time of each stage
    (read+parse, ONNX checker, strict shape inference, profile rules), and the peak RSS growth
    during it (VmHWM from /proc/self/status minus the RSS after imports; Linux only).
Goal: 100k nodes in <= 1.5 s end to end and peak memory <= 3x the loaded model.
Usage: .venv/bin/python benchmarks/bench_validate.py [N ...]   (default: 10000 100000)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

CHILD_LOAD = r"""
import json, os, sys, time
import onnx
def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
base = rss()
t = time.perf_counter()
m = onnx.load(sys.argv[1], load_external_data=False)
dt = time.perf_counter() - t
print(json.dumps({"model_rss": rss() - base, "parse_s": dt, "nodes": len(m.graph.node)}))
"""

CHILD_VALIDATE = r"""
import json, os, sys, time
from sonnx.validate import validate
def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
def hwm():  # peak RSS of this process image (ru_maxrss would carry the parent's peak over exec)
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmHWM:"))
base = rss()
t = time.perf_counter()
r = validate(sys.argv[1])
dt = time.perf_counter() - t
peak = hwm()
assert r.conforms, r.findings[:3]
print(json.dumps({"total_s": dt, "stages": r.timings, "peak_growth": peak - base, "nodes": r.nodes}))
"""


def build(n: int, path: str) -> None:
    import onnx
    from onnx import TensorProto, helper
    nodes, prev = [], "x"
    for i in range(n):
        out = f"v{i}"
        if i % 2 == 0:
            nodes.append(helper.make_node("Mul", [prev, prev], [out], name=f"mul_{i}"))
        else:
            nodes.append(helper.make_node("Gemm", [prev, prev, prev], [out], name=f"gemm_{i}"))
        prev = out
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 8])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [8, 8])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def child(code: str, path: str) -> dict:
    p = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(sizes: list[int]) -> None:
    mib = 1024 * 1024
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"chain{n}.onnx")
            build(n, path)
            size = os.path.getsize(path)
            load = child(CHILD_LOAD, path)
            runs = [child(CHILD_VALIDATE, path) for _ in range(3)]
            best = min(runs, key=lambda r: r["total_s"])
            st = best["stages"]
            ratio = best["peak_growth"] / max(load["model_rss"], 1)
            print(f"{n} nodes: file {size / mib:.1f} MiB, model in memory {load['model_rss'] / mib:.1f} MiB "
                  f"(parse {load['parse_s']:.3f} s)")
            print(f"  validate end to end {best['total_s']:.3f} s (best of 3; all: "
                  f"{', '.join('%.2f' % r['total_s'] for r in runs)}): read+parse {st['load']:.3f}, "
                  f"checker {st['check']:.3f}, inference {st['infer']:.3f}, rules {st['rules']:.3f}")
            print(f"  peak memory growth {best['peak_growth'] / mib:.1f} MiB = {ratio:.1f}x the loaded "
                  f"model (goal <= 3x: {'met' if ratio <= 3 else 'missed'})")
            if n >= 100000:
                print(f"  goal 100k nodes <= 1.5 s: {'met' if best['total_s'] <= 1.5 else 'missed'}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10000, 100000])
