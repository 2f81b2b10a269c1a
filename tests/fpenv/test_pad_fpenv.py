"""Pad (ops/pad.py) under a changed floating-point environment: rounding upward, downward,
toward zero, flush-to-zero and denormals-are-zero (set by tests/fpenv/plant.c, as a -ffast-math
library does) change none of its bits, through the numpy kernel, the reference kernel and
sonnx.run, subnormals and NaN payloads of the data and of the constant (a subnormal) included.
It moves values and computes none; the planted fault (the same move done as x * 1, an arithmetic
pass) shows the comparison sees a flushed subnormal. Runs in a child process so this process's
environment stays clean.
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
    from onnx import TensorProto, helper, numpy_helper
    import sonnx
    from sonnx.ops import pad as p
    from sonnx.semantics.tensor import from_numpy
    lib = ctypes.CDLL(sys.argv[1])
    fault = sys.argv[2] == "arithmetic"
    x = np.array([1e-45, -1e-45, 1e-40, -0.0, 1/3, 2.0**-149, 3.0, -7.5] * 3, np.float32)
    x.view(np.uint32)[4] = 0x7FC00001                      # a NaN with a payload
    x = x.reshape(2, 3, 4)
    c = np.array(-1e-45, np.float32)                       # a subnormal constant
    pads = np.array([0, 1, 2, 1, 0, 1], np.int64)
    expected = np.pad(x, [(0, 1), (1, 0), (2, 1)], constant_values=c)    # computed before any plant
    expected = expected.view(np.uint32).reshape(-1).tolist()
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Pad", ["x", "pads", "c"], ["y"], mode="constant")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4, 7])],
        [numpy_helper.from_array(pads, "pads"), numpy_helper.from_array(c, "c")]),
        opset_imports=[helper.make_opsetid("", 25)], ir_version=8)
    # the reference kernel works on Python floats (binary64): input and expected output are
    # converted in the default environment, as for Transpose
    tx, tc = from_numpy(x), float(c)
    ref_expected = [struct.pack("<d", float(v)) for v in np.pad(x, [(0, 1), (1, 0), (2, 1)], constant_values=c).reshape(-1)]
    out = {}
    for mode in sys.argv[3].split(","):
        assert lib.plant_apply(mode.encode()) == 0
        got = {"kernel": sonnx.pad(x, pads, c),
               "run exact": sonnx.run(model, {"x": x}, mode="exact")["y"],
               "run fast": sonnx.run(model, {"x": x}, mode="fast")["y"]}
        ref = p.pad_reference(tx, tuple(pads.tolist()), tc).data
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
@pytest.mark.req("PAD-R6")
def test_every_mode_keeps_every_bit(plant, c_cache):
    out = _child(plant, c_cache, "none")
    assert set(out) == set(MODES)
    assert all(all(v.values()) for v in out.values()), out


@needs_plant
@pytest.mark.req("PAD-R6")
def test_planted_arithmetic_pass_is_caught(plant, c_cache):
    out = _child(plant, c_cache, "arithmetic")
    assert all(all(v.values()) for m, v in out.items() if m in ("upward", "downward", "towardzero")), out
    # the numpy paths flush the float32 subnormals (the reference's binary64 values are normal)
    for mode in ("ftz", "daz", "upward+ftz+daz"):
        assert not any(v for k, v in out[mode].items() if k != "reference"), out
