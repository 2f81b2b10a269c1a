"""BatchNormalization (ops/batchnormalization.py) under a changed floating-point environment:
rounding upward, downward, toward zero, flush-to-zero and denormals-are-zero (set by
tests/fpenv/plant.c, as a -ffast-math library does) change none of its bits, through the numpy
kernel (float, float16, bfloat16, double), a bound kernel and sonnx.run (exact and fast, whose
plan computes the denominators): the kernels restore the proofs' environment (sonnx.fpenv). The
plain-Python reference kernel is a specification, evaluated in the default environment, not an
entry point. The values hold
inexact quotients (5 / 3), subnormal inputs and results. The planted fault (the kernel's inner
function called without the guard) shows the comparison sees a changed environment. Runs in a
child process so this process's environment stays clean.
"""
from __future__ import annotations

import json
import sys
import textwrap

import pytest

from .test_fpenv import MODES, run_child, needs_plant, plant, c_cache  # noqa: F401  (fixtures)

CHILD = textwrap.dedent("""
    import ctypes, json, sys
    import ml_dtypes
    import numpy as np
    from onnx import helper, numpy_helper, TensorProto
    import sonnx
    from sonnx.ops import batchnormalization as bn
    lib = ctypes.CDLL(sys.argv[1])
    fault = sys.argv[2] == "unguarded"
    vals = [5.0, 1e-39, -1e-40, 1 / 3, -7.5, 2.0 ** -140, 3.0, -0.0, 1e-3, 7.0, -2.5, 11.0]
    def call(name):
        dt = {"bfloat16": ml_dtypes.bfloat16, "float": np.float32, "float16": np.float16, "double": np.float64}[name]
        x = np.array(vals, np.float64).astype(dt).reshape(2, 2, 3)
        p = [np.array(v, np.float64).astype(dt) for v in ([1.0, 1e-3], [0.0, -1e-38], [0.0, 0.25], [9.0, 2.0])]
        return x, p
    def bits(a):
        return np.ascontiguousarray(a).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]).reshape(-1).tolist()
    names = ["float", "float16", "bfloat16", "double"]
    x32, p32 = call("float")
    model = helper.make_model(helper.make_graph(
        [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-5)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2, 3])],
        [numpy_helper.from_array(a, n) for a, n in zip(p32, "sbmv")]),
        opset_imports=[helper.make_opsetid("", 15)], ir_version=8)
    expected = {n: bits(bn.batchnormalization(*call(n)[:1], *call(n)[1], epsilon=1e-5)) for n in names}
    bound = bn.bind(x32, *p32, epsilon=1e-5)
    # the operands are made in the default environment (a conversion under FTZ would flush them)
    args = {n: call(n) for n in names}
    out = {}
    for mode in sys.argv[3].split(","):
        assert lib.plant_apply(mode.encode()) == 0
        if fault:
            got = {n: bn._apply(args[n][0], bn.parameters(args[n][0].shape, args[n][0].dtype, *args[n][1], 1e-5))
                   for n in names}
        else:
            got = {n: bn.batchnormalization(args[n][0], *args[n][1], epsilon=1e-5) for n in names}
        res = {f"kernel {n}": bits(got[n]) == expected[n] for n in names}
        if not fault:
            res["bound"] = bits(sonnx.fpenv.guarded(bound)(x32)) == expected["float"]
            res["run exact"] = bits(sonnx.run(model, {"x": x32}, mode="exact")["y"]) == expected["float"]
            res["run fast"] = bits(sonnx.run(model, {"x": x32}, mode="fast")["y"]) == expected["float"]
        assert lib.plant_apply(b"default") == 0
        out[mode] = res
    print(json.dumps(out))
""")


def _child(plant, c_cache, fault: str) -> dict:
    return run_child(CHILD, plant, c_cache, fault)


@needs_plant
@pytest.mark.req("BATCHNORMALIZATION-R5")
def test_every_mode_keeps_every_bit(plant, c_cache):
    out = _child(plant, c_cache, "none")
    assert set(out) == set(MODES)
    assert all(all(v.values()) for v in out.values()), out


@needs_plant
@pytest.mark.req("BATCHNORMALIZATION-R5")
def test_unguarded_kernel_is_caught(plant, c_cache):
    out = _child(plant, c_cache, "unguarded")
    changed = [m for m in MODES if m != "default"]
    assert all(not all(out[m].values()) for m in changed), out
