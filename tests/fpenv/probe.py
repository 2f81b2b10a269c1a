"""Run in a child process by tests/fpenv/test_fpenv.py (so that the test process's own
floating-point environment stays clean): load the planted library, then for each mode put the
thread in that environment, call every kernel path on probe inputs, and after each call read the
environment back through the plant (not through sonnx). Prints one JSON object:
{"at_load": [control, round] after loading, mode: {path: [digest of the result's bytes,
[control, round] before the call, the same after]}}, where control is MXCSR (x86-64) or FPCR
(aarch64) and round is fegetround().

Usage: probe.py PLANT_LIB MODES FAULT   (MODES: comma-separated; FAULT: none, python, c, workers)
FAULT plants the defect the tests must catch: "python" makes sonnx.fpenv believe every
environment is the default (the guard never switches); "c" loads a C library built from a copy
of sonnx_kernels.c whose entry points run the bodies in the caller's environment; "workers"
puts the exact Gemm fold's worker threads in the mode under test (as if they did not inherit
the guarded caller's environment).
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np


def probes(dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """Pairs whose results differ under every non-default mode: 1/3 * 3 (exactly 1 in float32
    under RNE, 0x3f800001 rounding upward), 2^-70 * 2^-70 (a float32 subnormal: FTZ flushes
    it; 2^-520 for float64), a subnormal times 2^20 (DAZ reads the subnormal as 0),
    1.5 * tiny -/+ tiny (an Add and a Sub with a subnormal result), a subnormal and its half
    (an Add and a Sub of subnormals: DAZ gives 0), then random values over
    many scales (every rounding mode changes some of their sums and products)."""
    tiny = float(np.finfo(dtype).tiny)            # smallest normal
    sub = tiny / 2**10                            # a subnormal of the type
    half_exp = {np.float32: -70, np.float64: -520}[dtype]
    rng = np.random.default_rng(26)
    a = np.concatenate([[float(dtype(1) / dtype(3)), 2.0 ** half_exp, sub, -sub, 1.5 * tiny, 1.5 * tiny,
                         sub], rng.standard_normal(121) * 10.0 ** rng.integers(-6, 7, 121)]).astype(dtype)
    b = np.concatenate([[3.0, 2.0 ** half_exp, 2.0 ** 20, 2.0 ** 20, -tiny, tiny, sub / 2],
                        rng.standard_normal(121) * 10.0 ** rng.integers(-6, 7, 121)]).astype(dtype)
    return a, b


def matrices(dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A, B, C (8 x 8) for Gemm and MatMul: random, except that for i < 4 row i of A holds only
    probes()'s a[i] (at column i), column 0 of B holds b[0..3] and C[i, 0] = 0, so Y[i, 0] is
    alpha * a[i] * b[i]: the special pairs reach the output unmasked."""
    a, b = probes(dtype)
    ga, gb, gc = a[:64].reshape(8, 8).copy(), b[:64].reshape(8, 8).copy(), a[64:].reshape(8, 8).copy()
    ga[:4] = 0
    ga[:4, :4] = np.diag(a[:4])
    gb[:4, 0] = b[:4]
    gc[:4, 0] = 0
    return ga, gb, gc


def digest(x: np.ndarray) -> str:
    """The SHA-256 of the result's bytes, then the bits of its first two elements in hex."""
    x = np.ascontiguousarray(x)
    head = x.reshape(-1)[:2].view(f"u{x.itemsize}")
    return hashlib.sha256(x.tobytes()).hexdigest()[:16] + " " + " ".join(f"{int(v):x}" for v in head)


def model(dtype: type):
    """Mul, Add, Sub, Relu, Gemm (with C, alpha, beta) and MatMul over 8 x 8 tensors of
    ``dtype``, every node's result a graph output; and its input X."""
    import onnx
    from onnx import helper, numpy_helper
    elem = {np.float32: onnx.TensorProto.FLOAT, np.float64: onnx.TensorProto.DOUBLE}[dtype]
    x, w, c = matrices(dtype)
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(c, "C")]
    nodes = [helper.make_node("Mul", ["X", "W"], ["m"]), helper.make_node("Add", ["m", "C"], ["s"]),
             helper.make_node("Sub", ["s", "W"], ["d"]), helper.make_node("Relu", ["d"], ["r"]),
             helper.make_node("Gemm", ["X", "W", "C"], ["g"], alpha=0.5, beta=0.75),
             helper.make_node("MatMul", ["g", "W"], ["y"])]
    outs = [helper.make_tensor_value_info(n, elem, [8, 8]) for n in ("m", "s", "d", "r", "g", "y")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", elem, [8, 8])], outs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    return m, x


WORKERS: list[int] = []      # threads started by each threaded Gemm call
PLANT_WORKERS: list = []     # fault "workers": [the mode, the plant library]


def _counting_threads(call):
    started = []
    original = threading.Thread.start

    def start(self):
        started.append(self)
        if PLANT_WORKERS:           # the fault "workers": each worker thread leaves the default
            run, mode = self.run, PLANT_WORKERS[0]

            def planted():
                assert PLANT_WORKERS[1].plant_apply(mode.encode()) == 0
                run()
            self.run = planted
        return original(self)
    threading.Thread.start = start
    try:
        return call()
    finally:
        threading.Thread.start = original
        WORKERS.append(len(started))


def paths(plant_fault_c: bool):
    """name -> a function of nothing that returns the result of one kernel path."""
    import sonnx
    import sonnx.c_kernels as ck
    import sonnx.onnx_reference
    from onnx.reference import ReferenceEvaluator
    from sonnx.ops.gemm import fold as gemm_fold
    if plant_fault_c:
        src = Path(tempfile.mkdtemp())
        for f in ck.source_dir().iterdir():
            (src / f.name).write_bytes(f.read_bytes())
        entry = src / ck.ENTRY
        text = entry.read_text()
        planted = text.replace("    (void)fesetenv(FE_DFL_ENV);           \\\n", "")
        assert planted != text, "the planted C fault no longer applies to sonnx_kernels.c"
        entry.write_text(planted)
        lib = ctypes.CDLL(str(ck.build(src / "build", src)))
        ck._declare(lib)
        ck._LIB = lib
    lib = ck.library()
    gemm_fold.PARALLEL_WORK = 1          # the exact fold splits even these among threads
    out = {}
    for dt in (np.float32, np.float64):
        t = np.dtype(dt).name
        a, b = probes(dt)
        ga, gb, gc = matrices(dt)
        for name, numpy_fn, c_fn in (("mul", sonnx.mul, ck.mul), ("add", sonnx.add, ck.add),
                                     ("sub", sonnx.sub, ck.sub)):
            out[f"sonnx.{name} {t}"] = lambda f=numpy_fn, a=a, b=b: f(a, b)
            out[f"c_kernels.{name} {t}"] = lambda f=c_fn, a=a, b=b: f(a, b)

            def raw(name=name, a=a, b=b, t=t):
                y = np.empty_like(a)
                getattr(lib, f"sonnx_{name}_f{a.itemsize * 8}")(a.ctypes.data, b.ctypes.data, y.ctypes.data, a.size)
                return y
            out[f"C sonnx_{name}_f{a.itemsize * 8}"] = raw
        # Div (no C kernel): 1/3 is inexact, tiny/4 a subnormal quotient (FTZ flushes it), a
        # subnormal / 0.5 reads 0 under DAZ; the random pairs are inexact in every direction
        tiny, sub = float(np.finfo(dt).tiny), float(np.finfo(dt).tiny) / 2**10
        da = np.concatenate([[1.0, tiny, sub], a[7:]]).astype(dt)
        db = np.concatenate([[3.0, 4.0, 0.5], b[7:]]).astype(dt)
        out[f"sonnx.div {t}"] = lambda a=da, b=db: sonnx.div(a, b)
        out[f"sonnx.relu {t}"] = lambda a=a: sonnx.relu(a)
        out[f"c_kernels.relu {t}"] = lambda a=a: ck.relu(a)
        out[f"sonnx.gemm {t}"] = lambda x=ga, y=gb, c=gc: sonnx.gemm(x, y, c, alpha=0.5, beta=0.75)
        out[f"c_kernels.gemm {t}"] = lambda x=ga, y=gb, c=gc: ck.gemm(x, y, c, alpha=0.5, beta=0.75)

        def raw_gemm(x=ga, y=gb, c=gc, dt=dt):
            r = np.empty((8, 8), dt)
            fn = lib.sonnx_gemm_f32 if dt == np.float32 else lib.sonnx_gemm_f64
            fn(x.ctypes.data, y.ctypes.data, c.ctypes.data, r.ctypes.data, 1, 0, 0, 0.5, 0.75, 8, 8, 8)
            return r
        out[f"C sonnx_gemm_f{np.dtype(dt).itemsize * 8}"] = raw_gemm
        # 72 x 72 x 72: above Gemm's size rule (gemm.C_DEFAULT_WORK, 2^18 multiply-adds), so the
        # default kernel runs the llvmlite fold, which splits it among worker threads and the caller
        big = [np.tile(m, (9, 9)) for m in (ga, gb, gc)]
        out[f"sonnx.gemm threaded {t}"] = lambda x=big: _counting_threads(lambda: sonnx.gemm(*x, alpha=0.5, beta=0.75))
        out[f"sonnx.matmul {t}"] = lambda x=ga, y=gb: sonnx.matmul(x, y)
        # structural operators: a move, no arithmetic; the data's subnormals and bits must survive
        out[f"sonnx.squeeze {t}"] = lambda a=a: sonnx.squeeze(a.reshape(1, -1), np.array([0]))
        out[f"sonnx.unsqueeze {t}"] = lambda a=a: sonnx.unsqueeze(a, np.array([0]))
        out[f"sonnx.reshape {t}"] = lambda a=a: sonnx.reshape(a, np.array([-1, 2], np.int64))
        out[f"c_kernels.matmul {t}"] = lambda x=ga, y=gb: ck.matmul(x, y)
        # the pooling kernels: a (1, 2, 130) input of sub/2, sub and probes()'s pairs; MaxPool's
        # window (sub/2, sub) gives sub only when DAZ is off; the averages' sums and quotients
        # change under every directed mode and under FTZ/DAZ (subnormal sums)
        sub = dt(float(np.finfo(dt).tiny) / 2**10)
        px = np.concatenate([[sub / 2, sub], a, [sub / 2, sub], b]).astype(dt).reshape(1, 2, 130)
        # MaxPool: with a NaN in the input it folds the taps with float comparisons (DAZ changes
        # them); NaN-free data goes through integer keys, which no mode changes
        mx = px.copy()
        mx[0, 1, -1] = np.nan
        out[f"sonnx.maxpool {t}"] = lambda x=mx: sonnx.maxpool(x, kernel_shape=[2], strides=[1], pads=[0, 1])
        out[f"sonnx.averagepool {t}"] = lambda x=px: sonnx.averagepool(x, kernel_shape=[3], strides=[1], pads=[1, 1],
                                                                       count_include_pad=1)
        # GlobalAveragePool: 33 planes of 4, the first of subnormals (its average is subnormal)
        gx = np.concatenate([[sub, sub, sub, sub / 2], a]).astype(dt).reshape(1, 33, 4)
        out[f"sonnx.globalaveragepool {t}"] = lambda x=gx: sonnx.globalaveragepool(x)
        m, x = model(dt)
        out[f"sonnx.run {t}"] = lambda m=m, x=x: np.stack(list(sonnx.run(m, {"X": x}).values()))
        # a Session planned once: its nodes fused into one C chain (run/chain.py, its own
        # environment switch in sonnx_chain_run), and node by node (the Python guard)
        fused, unfused = sonnx.Session(m), sonnx.Session(m, fuse=False)
        assert len(fused.chains()) == 1 and len(fused.chains()[0]["nodes"]) == len(m.graph.node)
        out[f"sonnx.Session fused {t}"] = lambda s=fused, x=x: np.stack(s.run(None, {"X": x}))
        out[f"sonnx.Session unfused {t}"] = lambda s=unfused, x=x: np.stack(s.run(None, {"X": x}))
        ev = ReferenceEvaluator(m, new_ops=sonnx.onnx_reference.new_ops())
        out[f"reference.new_ops {t}"] = lambda ev=ev, x=x: np.stack(ev.run(None, {"X": x}))
    return out


def main(argv: list[str]) -> None:
    plant = ctypes.CDLL(argv[0])       # its constructor applies $SONNX_PLANT, if set
    plant.plant_control.restype = ctypes.c_uint
    plant.plant_apply.argtypes = (ctypes.c_char_p,)
    modes, fault = argv[1].split(","), argv[2]
    at_load = [plant.plant_control(), plant.plant_round()]
    assert plant.plant_apply(b"default") == 0     # the probe inputs are made in the default one
    import sonnx.fpenv
    if fault == "python":
        sonnx.fpenv._MASK = sonnx.fpenv._DEFAULT = 0      # every environment reads as the default
    calls = paths(plant_fault_c=(fault == "c"))
    report = {"at_load": at_load}
    for mode in modes:
        row = {}
        for name, call in calls.items():
            assert plant.plant_apply(mode.encode()) == 0, mode    # each path starts in MODE
            if fault == "workers":
                PLANT_WORKERS[:] = [mode, plant]
            before = [plant.plant_control(), plant.plant_round()]
            result = digest(call())
            row[name] = [result, before, [plant.plant_control(), plant.plant_round()]]
        report[mode] = row
    from sonnx.ops.gemm import fold as gemm_fold
    report["fold_workers"] = {"compiled": gemm_fold._compiled() is not None, "min": min(WORKERS)}
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
