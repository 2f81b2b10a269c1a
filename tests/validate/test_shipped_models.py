"""Every model shipped in the onnx wheel's backend test data (light, pytorch-converted) is
validated without a crash, and every finding names a node or tensor that exists."""
from __future__ import annotations

import pathlib
import time

import onnx
import pytest

from sonnx.validate import validate
from sonnx.validate.walker import iter_graphs

DATA = pathlib.Path(onnx.__file__).parent / "backend" / "test" / "data"
MODELS = sorted(DATA.glob("light/*.onnx")) + sorted(DATA.glob("pytorch-converted/*/model.onnx"))
CONFORMING = {"test_ReLU", "test_AvgPool2d", "test_AvgPool2d_stride", "test_AvgPool3d", "test_AvgPool3d_stride",
              "test_AvgPool3d_stride1_pad0_gpu_input", "test_MaxPool1d", "test_MaxPool1d_stride",
              "test_MaxPool1d_stride_padding_dilation", "test_MaxPool2d", "test_MaxPool2d_stride_padding_dilation",
              "test_MaxPool3d", "test_MaxPool3d_stride", "test_MaxPool3d_stride_padding",
              # Unsqueeze/Squeeze around a 2-D AveragePool, Transpose then MatMul (issue 29): each runs
              # to its expected outputs exactly (0 difference, checked when they were added)
              "test_AvgPool1d", "test_AvgPool1d_stride", "test_Linear_no_bias",
              # a Pad-2 in constant mode with value 2.0, and with 0.0: each runs to its expected
              # output bit for bit (checked when Pad was added)
              "test_ConstantPad2d", "test_ZeroPad2d",
              # Conv 1-D, 2-D, 3-D with groups, depthwise, dilations, strides, pads, no bias (issue
              # 30): each runs to its stored expected output bit for bit (checked when Conv was added)
              "test_Conv1d", "test_Conv1d_dilated", "test_Conv1d_groups", "test_Conv1d_pad1",
              "test_Conv1d_pad1size1", "test_Conv1d_pad2", "test_Conv1d_pad2size1", "test_Conv1d_stride",
              "test_Conv2d", "test_Conv2d_depthwise", "test_Conv2d_depthwise_padded",
              "test_Conv2d_depthwise_strided", "test_Conv2d_depthwise_with_multiplier", "test_Conv2d_dilated",
              "test_Conv2d_groups", "test_Conv2d_groups_thnn", "test_Conv2d_no_bias", "test_Conv2d_padding",
              "test_Conv2d_strided", "test_Conv3d", "test_Conv3d_dilated", "test_Conv3d_dilated_strided",
              "test_Conv3d_groups", "test_Conv3d_no_bias", "test_Conv3d_stride", "test_Conv3d_stride_padding"}


def _names(model: onnx.ModelProto) -> tuple[set, set]:
    nodes, tensors = set(), set()
    for g in iter_graphs(model):
        for i, n in enumerate(g.node):
            nodes.add((n.name or None, n.op_type, i))
            tensors.update(n.output)
        tensors.update(v.name for v in g.input)
        tensors.update(t.name for t in g.initializer)
    return nodes, tensors


@pytest.mark.req("PROF-R1", "PROF-R2", "MUL-R4", "GEMM-R4")
def test_shipped_models_validate_without_crash():
    assert len(MODELS) > 50
    start = time.perf_counter()
    for path in MODELS:
        r = validate(path)
        assert r.error is None, (path, r.error)
        # none of these real networks is made of profile operators only, except the one-node
        # Relu model (Relu is a profile operator since issue 14)
        assert r.status == ("conforms" if path.parent.name in CONFORMING else "violations"), path
        model = onnx.load(path, load_external_data=False)
        nodes, tensors = _names(model)
        for f in r.findings:
            if f.kind == "onnx" or f.graph == "model":
                continue
            if f.node_index is not None:
                assert (f.node_name, f.op_type, f.node_index) in nodes, (path, f)
            if f.tensor is not None:
                assert f.tensor in tensors, (path, f)
            assert f.node_index is not None or f.tensor is not None, (path, f)
    assert time.perf_counter() - start < 60


@pytest.mark.req("GEMM-R4")
def test_external_weights_never_read(tmp_path):
    import numpy as np
    from onnx import helper, numpy_helper

    from . import models as M
    w = numpy_helper.from_array(np.ones((3, 4), np.float32), "w")
    bias = numpy_helper.from_array(np.ones((4,), np.float32), "bias")
    m = M.model([helper.make_node("Gemm", ["a", "w", "bias"], ["y"], name="linear")],
                [M.vi("a", [2, 3])], [M.vi("y", [2, 4])], initializers=[w, bias])
    path = tmp_path / "ext.onnx"
    onnx.save(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=0)
    r = validate(path)
    assert r.error is None and [f.rule for f in r.findings] == ["GEMM-R4"]
    (tmp_path / "weights.bin").write_bytes(b"")  # reading the weights would now fail
    r = validate(path)  # judged from the file's size alone: both tensors lie past its end
    assert r.error is None and [f.rule for f in r.findings] == ["ONNX-IR", "ONNX-IR", "GEMM-R4"]
    assert all("past the end" in f.message for f in r.findings[:2])
