"""Start-up: each command imports what it needs only (measured in benchmarks and docs/benchmarks.md; here
checked by the modules loaded, which does not depend on the machine's speed). `sonnx --version`
loads neither numpy nor onnx; `sonnx validate` on an ONNX model loads no kernel runner, no
onnxruntime, no compiler and no OpenVINO reader; without --select/--ignore, not the requirement
registry either (its 20 TOML files are read only to match selectors, or to title a finding); and
neither numpy nor the onnx package, only onnx's generated classes and C++ checker
(sonnx/onnx_proto.py, sonnx/deferred.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MODEL = Path(__file__).resolve().parents[1] / "e2e" / "models" / "mlp_dynamo_op18_bias_c_full.onnx"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PROBE = ("import sys, runpy\nsys.argv = ['sonnx'] + {argv!r}\n"
         "try:\n    runpy.run_module('sonnx', run_name='__main__')\nexcept SystemExit:\n    pass\n"
         "print('LOADED', ' '.join(m for m in {mods!r} if m in sys.modules), file=sys.stderr)")


def _loaded(argv: list[str], mods: tuple[str, ...]) -> list[str]:
    p = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv, mods=mods)], capture_output=True, text=True)
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("LOADED")]
    return line.split()[1:]


def test_version_loads_neither_numpy_nor_onnx():
    heavy = ("numpy", "onnx", "google.protobuf", "sonnx.validate", "sonnx.ops", "sonnx.run")
    assert _loaded(["--version"], heavy) == []


def test_validate_loads_only_the_validator():
    others = ("onnxruntime", "llvmlite", "sonnx.run", "sonnx.run.cli", "sonnx.conform.cli", "sonnx.trace.cli",
              "sonnx.validate.openvino", "defusedxml", "sonnx.requirements", "secrets")
    assert _loaded(["validate", str(MODEL)], others + ("sonnx.validate.api",)) == ["sonnx.validate.api"]


def test_validate_loads_neither_numpy_nor_the_onnx_package():
    """The models of the e2e corpus (Gemm, Relu, MatMul, Add; with and without C) and the
    examples: onnx's classes and checker are loaded, neither numpy nor onnx's __init__."""
    heavy = ("numpy", "ml_dtypes", "onnx", "onnx.helper", "onnx.onnx_ml_pb2", "onnx.onnx_cpp2py_export")
    for model in (MODEL, MODEL.with_name("mlp_torchscript_op13_nobias.onnx"), EXAMPLES / "mul_ok.onnx",
                  EXAMPLES / "add_ok.onnx"):
        assert _loaded(["validate", str(model)], heavy) == ["onnx.onnx_ml_pb2", "onnx.onnx_cpp2py_export"], model


def test_every_operator_module_imports_without_numpy():
    """The registry loads every operator module (their constraints are the validator's rules);
    none may use numpy at import time (a module-level ``np.`` would load it for every validation)."""
    probe = ("import sys\nfrom sonnx.ops.registry import operators\nops = operators()\n"
             "print(len(ops), 'numpy' in sys.modules, 'ml_dtypes' in sys.modules)")
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    count, numpy_loaded, ml_dtypes_loaded = p.stdout.split()
    assert int(count) >= 18 and numpy_loaded == ml_dtypes_loaded == "False"


def test_validate_with_a_selector_loads_the_registry():
    """The probe above sees the registry when it is needed: matching a selector reads it."""
    assert _loaded(["validate", "--select", "MUL", str(MODEL)], ("sonnx.requirements",)) == \
        ["sonnx.requirements"]
