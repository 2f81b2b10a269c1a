"""End to end on convolutional networks exported from PyTorch (tools/sonnx_dev/export_cnn.py; the
.onnx files in cnn_models/ are committed, torch is not needed here): LeNet-5 by both exporters
and a VGG-style network with BatchNormalization and GlobalAveragePool.

Each goes validate (refused as exported: Gemm's bias of shape (N,), GEMM-R4; the TorchScript
LeNet's symbolic batch, PROF-R2) -> conform (bit check through onnxruntime passed) -> validate
(conforms) -> run --compare onnxruntime (every node within the profile's bound). The largest
ULP distance of onnxruntime's outputs from sonnx's exact ones is recorded as a JUnit property
(``max_ulp``; printed with -s). tools/acasxu-e2e runs the public VNN-COMP CNNs the same way."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

import sonnx
from sonnx.cli import main
from sonnx.conform.bitcheck import make_input
from sonnx.run.comparison import compare
from sonnx.run.executor import load

MODELS = Path(__file__).parent / "cnn_models"
# model -> (dimensions conform pins, the rules it breaks as exported, operators it holds)
CASES = {
    "lenet5_torchscript_op17.onnx": ({"batch": 2}, {"PROF-R2", "GEMM-R4"},
                                     {"Conv", "Relu", "MaxPool", "Flatten", "Gemm"}),
    "lenet5_dynamo_op18.onnx": ({}, {"GEMM-R4"}, {"Conv", "Relu", "MaxPool", "Reshape", "Gemm"}),
    "vgg_bn_torchscript_op17.onnx": ({}, {"GEMM-R4"},
                                     {"Conv", "BatchNormalization", "Relu", "MaxPool",
                                      "GlobalAveragePool", "Flatten", "Gemm"}),
}


def feeds_for(model: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    out = {}
    for i, spec in enumerate(s for s in load(model).inputs.values() if not s.has_default):
        x = make_input(np.dtype(np.float32), spec.shape, 0, i)       # finite values only
        out[spec.name] = (x * (1 + seed)).astype(np.float32)
    return out


@pytest.mark.req("@operators")
@pytest.mark.parametrize("name", sorted(CASES))
def test_exported_cnn_conforms_and_runs_within_bounds(name, record_property):
    dims, broken, ops = CASES[name]
    path = MODELS / name
    assert {n.op_type for n in onnx.load(str(path)).graph.node} == ops
    before = sonnx.validate(str(path))
    assert not before.conforms
    assert {f.rule for f in before.findings} == broken, [str(f) for f in before.findings]
    model, report = sonnx.conform(str(path), dims)
    assert report["check"]["status"] == "passed", json.dumps(report["check"], indent=1)[:2000]
    after = sonnx.validate(model)
    assert after.conforms, [str(f) for f in after.findings]
    assert report["exit_code"] == 0
    worst = 0
    for seed in (0, 1):
        c = compare(model, feeds_for(model, seed))
        assert c.within_bounds, [n for n in c.nodes if n.status != "within"][:3]
        assert all(o.max_ulp is not None for o in c.outputs)
        worst = max([worst] + [o.max_ulp for o in c.outputs])
    record_property("max_ulp", worst)
    print(f"{name}: largest ULP distance of onnxruntime from sonnx exact: {worst}")


@pytest.mark.req("@operators")
def test_lenet5_through_the_command_line(tmp_path, capsys):
    """What the README tells an ML engineer to type, on the TorchScript LeNet-5."""
    src = str(MODELS / "lenet5_torchscript_op17.onnx")
    fixed = str(tmp_path / "lenet5_b2.onnx")
    assert main(["validate", src]) == 1
    assert main(["conform", src, "-o", fixed, "--dim", "batch=2"]) == 0
    assert main(["validate", fixed]) == 0
    x = feeds_for(onnx.load(fixed), 0)["x"]
    np.save(tmp_path / "x.npy", x)
    code = main(["run", fixed, "--input", f"x={tmp_path / 'x.npy'}", "-o", str(tmp_path / "out"),
                 "--compare", "onnxruntime"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "Traceback" not in out + err
    y = np.load(tmp_path / "out" / "y.npy")
    assert y.shape == (2, 10) and y.dtype == np.float32
    assert np.array_equal(y.view(np.uint32), sonnx.run(fixed, {"x": x})["y"].view(np.uint32))
