"""Benchmark of `sonnx validate` on generated chains of 10k, 100k and 1M nodes (not a test).

Each chain alternates Mul(v, v) and Gemm(v, v, v) on float [8, 8] tensors (a conformant model,
so every node goes through the rules). Every measurement runs in a fresh subprocess, and every
memory figure is resident memory (RSS, Linux /proc), which sees what tracemalloc does not: the
protobuf messages (upb) of Python and the C++ ModelProto of onnx's checker and inference.
  * "the loaded model": RSS growth from parsing the file (onnx.load, no external data) in a
    process that imported onnx only;
  * "validate": CPU time (user + sys of the subprocess, getrusage: on a machine shared with
    other jobs it moves less than wall time) and wall time of sonnx.validate(path) end to end,
    with the wall time of each stage
    (read+parse, ONNX checker, strict shape inference, profile rules), and the peak RSS growth
    during it: VmHWM minus the RSS after imports, with VmHWM reset to the current RSS after the
    imports (/proc/self/clear_refs), so that nothing before the call is counted;
  * the part of that peak which is onnx's operator-schema registry, built once per process on
    the first schema lookup whatever the model (measured alone: onnx.defs.get_schema);
  * the peak of onnx's own strict shape inference alone, as the pipeline runs it (serialized
    bytes in, ModelProto out) and file to file (infer_shapes_path, no Python copy of the model):
    the floor of any validator that runs it in-process on the whole model.
Goals (issues 17, 28): 100k nodes <= 1.0 s, 1M nodes <= 8 s CPU, peak memory <= 2.5x the loaded
model. A profile chain's shapes are decided by the validator's own propagation (onnx's inference
is not run: docs/validate.md); the inference lines below measure what it would cost.
The load average (uptime) is printed first: figures taken under load are not quiet figures.
Usage: .venv/bin/python benchmarks/bench_validate.py [N ...]   (default: 10000 100000 1000000)
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

MEASURE = r"""
import json, os, resource, sys, time
import onnx
from sonnx.validate import validate
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
def hwm():  # peak RSS of this process image (ru_maxrss would carry the parent's peak over exec)
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmHWM:"))
base = rss()
try:  # restart the peak from here: import-time transients are not the validator's
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    hwm_reset = True
except OSError:
    hwm_reset = False
"""

CHILD_VALIDATE = MEASURE + r"""
t, c = time.perf_counter(), cpu()
r = validate(sys.argv[1])
dt, dc = time.perf_counter() - t, cpu() - c
peak = hwm()
assert r.conforms, r.findings[:3]
print(json.dumps({"total_s": dt, "cpu_s": dc, "stages": r.timings, "peak_growth": peak - base,
                  "nodes": r.nodes, "hwm_reset": hwm_reset}))
"""

CHILD_REGISTRY = MEASURE + r"""
onnx.defs.get_schema("Mul", 13)
print(json.dumps({"peak_growth": hwm() - base}))
"""

CHILD_ONNX_INFER = MEASURE + r"""
import tempfile
fd, out = tempfile.mkstemp(suffix=".onnx"); os.close(fd)
try:
    onnx.shape_inference.infer_shapes_path(sys.argv[1], out, True, True, True)
    peak = hwm()
finally:
    os.unlink(out)
print(json.dumps({"peak_growth": peak - base}))
"""

CHILD_ONNX_INFER_BYTES = MEASURE + r"""
with open(sys.argv[1], "rb") as fh:
    data = fh.read()
inferred = onnx.shape_inference.infer_shapes(data, True, True, True)
print(json.dumps({"peak_growth": hwm() - base}))
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
    print(f"load average (1, 5, 15 min): {', '.join('%.1f' % x for x in os.getloadavg())} on "
          f"{os.cpu_count()} CPUs")
    registry = min(child(CHILD_REGISTRY, "-")["peak_growth"] for _ in range(3))
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"chain{n}.onnx")
            build(n, path)
            size = os.path.getsize(path)
            load = child(CHILD_LOAD, path)
            model = max(load["model_rss"], 1)
            rounds = 3 if n < 1000000 else 1
            runs = [child(CHILD_VALIDATE, path) for _ in range(rounds)]
            best = min(runs, key=lambda r: r["cpu_s"])
            st = best["stages"]
            onnx_alone = child(CHILD_ONNX_INFER, path)["peak_growth"]
            onnx_bytes = child(CHILD_ONNX_INFER_BYTES, path)["peak_growth"]
            peak = max(r["peak_growth"] for r in runs)
            ratio = peak / model
            print(f"{n} nodes: file {size / mib:.1f} MiB, the loaded model {model / mib:.1f} MiB "
                  f"(parse {load['parse_s']:.3f} s)")
            print(f"  validate end to end {best['cpu_s']:.2f} s CPU, {best['total_s']:.2f} s wall (least "
                  f"CPU of {rounds}; all CPU: {', '.join('%.2f' % r['cpu_s'] for r in runs)}); stages "
                  f"(wall): read {st['load']:.2f}, model as written {st['written']:.2f}, checker "
                  f"{st['check']:.2f}, own shape propagation {st.get('propagate', 0):.2f}, onnx inference "
                  f"{st['infer']:.2f}, rules {st['rules']:.2f}")
            print(f"  peak memory growth {peak / mib:.1f} MiB = {ratio:.2f}x the loaded model, worst of {rounds} "
                  f"(goal <= 2.5x: {'met' if ratio <= 2.5 else 'missed'})"
                  + ("" if best["hwm_reset"] else " [VmHWM could not be reset: imports may be counted]"))
            print(f"    of which onnx's operator-schema registry (once per process, any model): "
                  f"{registry / mib:.1f} MiB; without it {(peak - registry) / model:.2f}x")
            print(f"    onnx's strict shape inference alone (fresh process): bytes to model, as the "
                  f"pipeline runs it, {onnx_bytes / mib:.1f} MiB = {onnx_bytes / model:.2f}x; file to "
                  f"file {onnx_alone / mib:.1f} MiB = {onnx_alone / model:.2f}x")
            goal = {100000: 1.0, 1000000: 8.0}.get(n)
            if goal is not None:
                print(f"  goal {n} nodes <= {goal} s CPU: {'met' if best['cpu_s'] <= goal else 'missed'}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10000, 100000, 1000000])
