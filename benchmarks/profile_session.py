"""Where a ``sonnx.Session.run`` spends its time (issue 28): per model of bench_run.py at batch 1
and 1000, in exact and fast mode, in one process: onnxruntime's whole run, the Session's whole
run, the feed check alone, the planned program without the floating-point environment guard,
and each node's bound kernel alone (its operands computed once, then timed); the difference
between the run and the sum of the nodes is the per-run bookkeeping (slots, errstate, fpenv).
For a Session whose plan is fused C chains (run/chain.py) it prints the stages of a run instead:
the feed check, the C dispatcher call alone (sonnx_chain_run: the ctypes call and the kernels)
and the rest (the chain's lock, copying its inputs in and its outputs out, the slot program).
Best of 3 repeats (the machine is shared: read the load printed first).
``--sweep``: the whole run fused and node by node (fuse=False) over batch sizes, per mode, with
no size rule (every fusable node in a chain): where the chain stops paying, which chain.py's
FUSE_LIMIT and ELEMENT_LIMIT are set from.

    PYTHONPATH=src:tools:benchmarks python benchmarks/profile_session.py [--sweep]
"""
from __future__ import annotations

import sys
import timeit

import numpy as np
import onnx
import onnxruntime as ort

import bench_run as b
import sonnx
from sonnx.run.io import check_feeds


def best(fn, n: int) -> float:
    """Best per-call time of ``fn`` in microseconds over 3 repeats of ``n`` calls."""
    return min(timeit.repeat(fn, number=n, repeat=3)) / n * 1e6


def model(spec, batch: int) -> onnx.ModelProto:
    if isinstance(spec, tuple):
        return b.mlp(spec[0], batch, spec[1])
    return b.with_batch(onnx.load(b.MODELS / spec), batch)


def main() -> None:
    print("load", open("/proc/loadavg").read().split()[:3])
    for batch in b.BATCHES:
        for name, spec in b.CASES.items():
            m = model(spec, batch)
            width = m.graph.input[0].type.tensor_type.shape.dim[1].dim_value
            x = np.random.default_rng(1).standard_normal((batch, width)).astype(np.float32)
            feeds = {m.graph.input[0].name: x}
            ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
            n = 2000 if batch == 1 else 100
            t_ort = best(lambda: ref.run(None, feeds), n)
            for mode in ("exact", "fast"):
                s = sonnx.Session(m, mode=mode)
                checked = check_feeds(dict(feeds), s.loaded.inputs)
                prog = s._program
                t_run = best(lambda: s.run(None, feeds), n)
                t_check = best(lambda: check_feeds(dict(feeds), s.loaded.inputs), n)
                if prog.only_chains:
                    t_c = sum(best(lambda c=c: c._run(c._address, c._count), n) for c in prog.chains)
                    print(f"{name} | b{batch} | {mode}: run {t_run:.1f} us = {t_run / t_ort:.2f}x ort ({t_ort:.1f} us); "
                          f"fused: {len(prog.chains)} chain(s) of {len(s._steps)} nodes; feed check {t_check:.1f}, "
                          f"C call (ctypes + kernels) {t_c:.1f}, rest (lock, copies in/out, slots) "
                          f"{t_run - t_check - t_c:.1f} us", flush=True)
                    continue
                t_prog = best(lambda: prog._run(checked, s._all_slots, None), n)
                values, per = {**s.loaded.constants, **checked}, []
                with np.errstate(all="ignore"):
                    for step in s._steps:
                        args = [values[k] for k in step.inputs]
                        per.append((step.node.op_type, best(lambda: step.kernel(*args), n)))
                        values[step.output] = step.kernel(*args)
                nodes = sum(t for _, t in per)
                by_op: dict[str, float] = {}
                for op, t in per:
                    by_op[op] = by_op.get(op, 0.0) + t
                print(f"{name} | b{batch} | {mode}: run {t_run:.1f} us = {t_run / t_ort:.2f}x ort ({t_ort:.1f} us); "
                      f"feed check {t_check:.1f}, program unguarded {t_prog:.1f}, nodes {nodes:.1f} "
                      f"({', '.join(f'{op} {t:.1f}' for op, t in by_op.items())}), "
                      f"bookkeeping {t_run - nodes:.1f} us", flush=True)
    print("load", open("/proc/loadavg").read().split()[:3])


def sweep() -> None:
    from sonnx.run import chain
    chain.FUSE_LIMIT.update(exact=1 << 40, fast=1 << 40)
    chain.ELEMENT_LIMIT = 1 << 40
    print("load", open("/proc/loadavg").read().split()[:3])
    for name in ("MLP 8-16-16-4, torchscript op17, MatMul", "ACAS Xu-shaped 5-6x50-5, Gemm"):
        for batch in (1, 4, 16, 64, 128, 256):
            m = model(b.CASES[name], batch)
            x = m.graph.input[0]
            feeds = {x.name: np.random.default_rng(0).standard_normal(
                (batch, x.type.tensor_type.shape.dim[1].dim_value)).astype(np.float32)}
            row = []
            for mode in ("exact", "fast"):
                f, u = sonnx.Session(m, mode), sonnx.Session(m, mode, fuse=False)
                n = max(20, 4000 // batch)
                row.append(f"{mode}: fused {best(lambda: f.run(None, feeds), n):.1f} "
                           f"node by node {best(lambda: u.run(None, feeds), n):.1f} us")
            print(f"{name} | b{batch} | " + " | ".join(row), flush=True)
    print("load", open("/proc/loadavg").read().split()[:3])


if __name__ == "__main__":
    sweep() if "--sweep" in sys.argv[1:] else main()
