"""``import sonnx`` loads numpy and the kernels only (issue 17): the validator, onnx, onnxruntime
and numba load on first use."""
from __future__ import annotations

import subprocess
import sys

HEAVY = ("onnx", "onnxruntime", "numba", "llvmlite", "sonnx.validate")


def _loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_import_sonnx_loads_no_validator_onnx_or_numba():
    assert _loaded_after("import sonnx") == []


def test_kernels_run_without_loading_the_validator():
    code = ("import numpy as np, sonnx\nx = np.ones((2, 2), np.float32)\n"
            "sonnx.mul(x, x); sonnx.gemm(x, x, mode='fast'); sonnx.gemm(x.astype(np.int32), x.astype(np.int32))")
    assert _loaded_after(code) == []


def test_validate_is_loaded_on_first_use_and_stays_the_function():
    code = ("import sonnx, sonnx.validate.report\nassert callable(sonnx.validate), sonnx.validate\n"
            "from sonnx import validate\nassert validate is sonnx.validate and validate.__module__ == "
            "'sonnx.validate.api'")
    assert "sonnx.validate" in _loaded_after(code)
    # the validator reads models through onnx's classes, not onnx's package (sonnx/onnx_proto.py)
    assert "onnx" not in _loaded_after("from sonnx import validate")


def test_numpy_is_deferred_then_the_real_module_in_every_operator_module():
    """sonnx/deferred.py: the operator modules hold a stand-in until a kernel first asks numpy for
    a name; then each holds numpy itself (so a monkeypatch of numpy reaches the kernels)."""
    code = ("import sys\nfrom sonnx.ops.registry import operators\nops = operators()\n"
            "mods = [m for n, m in sys.modules.items() if n.startswith('sonnx.ops.')]\n"
            "assert 'numpy' not in sys.modules and all(type(m.np).__name__ == 'Deferred' for m in mods if hasattr(m, 'np'))\n"
            "import numpy, sonnx\nx = numpy.ones(3, numpy.float32)\nsonnx.mul(x, x)\n"
            "assert all(m.np is numpy for m in mods if hasattr(m, 'np')), [m.__name__ for m in mods if m.np is not numpy]\n"
            "from sonnx import deferred\nassert deferred.numpy is numpy")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
