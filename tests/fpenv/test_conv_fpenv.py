"""Conv (ops/conv.py) under a changed floating-point environment: rounding upward, downward,
toward zero, flush-to-zero and denormals-are-zero (set by tests/fpenv/plant.c, as a -ffast-math
library does) change none of its bits, through the exact and fast kernels, a bound kernel run
as sonnx.run runs it, and sonnx.run itself, on float32 and float64 inputs whose products are
subnormal and whose sums round. The planted fault (the kernel's arithmetic called without the
guard) must differ in every mode. Runs in child processes so this process stays clean.
"""
from __future__ import annotations

import json
import sys
import textwrap

import pytest

from .test_fpenv import MODES, run_child, needs_plant, plant, c_cache  # noqa: F401  (fixtures)

CHILD = textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    import sonnx
    from sonnx import fpenv
    from sonnx.ops import conv as cv
    lib = ctypes.CDLL(sys.argv[1])
    fault = sys.argv[2] == "unguarded"
    kw = dict(group=1, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1], dilations=[1, 1])
    out = {}
    for dt, tiny in ((np.float32, 2.0 ** -70), (np.float64, 2.0 ** -520)):
        rng = np.random.default_rng(0)
        x = (rng.standard_normal((2, 2, 5, 5)) / 3).astype(dt)
        w = (rng.standard_normal((3, 2, 3, 3)) / 3).astype(dt)
        x[0, 0, 1:3, 1:3] = tiny             # products tiny * tiny: subnormal (flushed under FTZ)
        w[2] = 0
        w[2, 0, 1, 1] = tiny                 # channel 2 at (0, 1:3, 1:3): tiny * tiny alone, B = 0
        w[1, 0, 0, 0] = tiny
        b = (rng.standard_normal(3) / 7).astype(dt)
        b[2] = 0
        t = TensorProto.FLOAT if dt == np.float32 else TensorProto.DOUBLE
        model = helper.make_model(helper.make_graph(
            [helper.make_node("Conv", ["x", "w", "b"], ["y"], **kw)], "g",
            [helper.make_tensor_value_info("x", t, [2, 2, 5, 5])], [helper.make_tensor_value_info("y", t, [2, 3, 5, 5])],
            [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]),
            opset_imports=[helper.make_opsetid("", 22)], ir_version=10)
        plan = cv.check(x, w, b, 1, (3, 3), (1, 1, 1, 1), (1, 1), (1, 1), "exact")
        bound = fpenv.guarded(cv.bind(x, w, b, **kw))

        def paths():
            if fault:                         # the arithmetic without the guard
                return {"exact": cv._apply(plan, x, w, b), "fast": cv._apply(plan._replace(exact=False), x, w, b),
                        "bind": cv._apply(plan, x, w, b), "run exact": cv._apply(plan, x, w, b)}
            return {"exact": sonnx.conv(x, w, b, **kw), "fast": sonnx.conv(x, w, b, **kw, mode="fast"),
                    "bind": bound(x, w, b), "run exact": sonnx.run(model, {"x": x}, mode="exact")["y"]}
        name = np.dtype(dt).name
        base = {k: v.tobytes().hex() for k, v in paths().items()}
        assert all(0 < v < np.finfo(dt).tiny for v in sonnx.conv(x, w, b, **kw)[0, 2, 1:3, 1:3].ravel())
        for mode in sys.argv[3].split(","):
            assert lib.plant_apply(mode.encode()) == 0
            got = {k: v.tobytes().hex() for k, v in paths().items()}
            assert lib.plant_apply(b"default") == 0
            out.setdefault(mode, {}).update({f"{k} {name}": got[k] == base[k] for k in got})
    print(json.dumps(out))
""")


def _child(plant, c_cache, fault: str) -> dict:
    return run_child(CHILD, plant, c_cache, fault)


@needs_plant
@pytest.mark.req("CONV-R6")
def test_every_mode_keeps_every_bit(plant, c_cache):
    out = _child(plant, c_cache, "none")
    assert set(out) == set(MODES) and len(out["ftz"]) == 8
    assert all(all(v.values()) for v in out.values()), out


@needs_plant
@pytest.mark.req("CONV-R6")
def test_planted_unguarded_arithmetic_is_caught(plant, c_cache):
    """Without the guard the exact result changes in every mode (rounding: the sums; FTZ: the
    subnormal products; DAZ: the subnormal inputs)."""
    out = _child(plant, c_cache, "unguarded")
    for mode, paths in out.items():
        assert not any(v for k, v in paths.items() if not k.startswith("fast")), (mode, paths)
