"""Transpose (ops/transpose.py) under a changed floating-point environment: rounding upward,
downward, toward zero, flush-to-zero and denormals-are-zero (set by tests/fpenv/plant.c, as a
-ffast-math library does) change none of its bits, through the numpy kernel, the reference
kernel and sonnx.run, subnormals and NaN payloads included. It moves values and computes none;
the planted fault (the same move done as x * 1, an arithmetic pass) shows the comparison sees a
flushed subnormal. Runs in a child process so this process's environment stays clean.
"""
from __future__ import annotations

import json
import sys
import textwrap

import pytest

from .test_fpenv import MODES, run_child, needs_plant, plant, c_cache  # noqa: F401  (fixtures)

CHILD = textwrap.dedent("""
    import ctypes, json, struct, sys
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    import sonnx
    from sonnx.ops import transpose as t
    from sonnx.semantics.tensor import from_numpy, to_numpy
    lib = ctypes.CDLL(sys.argv[1])
    def to_numpy_free(a):
        return [float(v) for v in a.reshape(-1)]
    fault = sys.argv[2] == "arithmetic"
    x = np.array([1e-45, -1e-45, 1e-40, -0.0, 1/3, 2.0**-149, 3.0, -7.5] * 3, np.float32)
    x.view(np.uint32)[4] = 0x7FC00001                      # a NaN with a payload
    x = x.reshape(2, 3, 4)
    expected = x.transpose(2, 0, 1).copy().view(np.uint32).reshape(-1).tolist()
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 2, 3])]),
        opset_imports=[helper.make_opsetid("", 25)], ir_version=8)
    # the reference kernel works on Python floats (binary64): its input is converted, and its
    # output compared, in the default environment (to_numpy's float64 -> float32 conversion of a
    # subnormal is itself flushed under FTZ; that conversion is not Transpose's)
    tx = from_numpy(x)
    ref_expected = [struct.pack("<d", v) for v in to_numpy_free(x.transpose(2, 0, 1))]
    out = {}
    for mode in sys.argv[3].split(","):
        assert lib.plant_apply(mode.encode()) == 0
        got = {"kernel": sonnx.transpose(x, perm=[2, 0, 1]),
               "run exact": sonnx.run(model, {"x": x}, mode="exact")["y"],
               "run fast": sonnx.run(model, {"x": x}, mode="fast")["y"]}
        ref = t.transpose_reference(tx, (2, 0, 1)).data
        if fault:
            got = {k: v * np.float32(1) for k, v in got.items()}    # the planted arithmetic pass
            ref = [v * 1.0 for v in ref]
        out[mode] = {k: v.view(np.uint32).reshape(-1).tolist() == expected for k, v in got.items()}
        out[mode]["reference"] = [struct.pack("<d", v) for v in ref] == ref_expected
        assert lib.plant_apply(b"default") == 0
    print(json.dumps(out))
""")


def _child(plant, c_cache, fault: str) -> dict:
    return run_child(CHILD, plant, c_cache, fault)


@needs_plant
@pytest.mark.req("TRANSPOSE-R3")
def test_every_mode_keeps_every_bit(plant, c_cache):
    out = _child(plant, c_cache, "none")
    assert set(out) == set(MODES)
    assert all(all(v.values()) for v in out.values()), out


@needs_plant
@pytest.mark.req("TRANSPOSE-R3")
def test_planted_arithmetic_pass_is_caught(plant, c_cache):
    out = _child(plant, c_cache, "arithmetic")
    assert all(all(v.values()) for m, v in out.items() if m in ("upward", "downward", "towardzero")), out
    # the numpy paths flush the float32 subnormals (the reference's binary64 values are normal)
    for mode in ("ftz", "daz", "upward+ftz+daz"):
        assert not any(v for k, v in out[mode].items() if k != "reference"), out
