"""Reports pin the bytes they judged: the model file and every external-data file its tensors
name (issue 31: edited weights in MODEL.onnx.data gave the same model_sha256 and other outputs)."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from sonnx.cli import main
from sonnx.model_files import identity

pytestmark = pytest.mark.req("PROF-R1")


def _model(tmp_path, weight: float):
    """Y = X * W with W stored as external data in w.bin next to m.onnx."""
    w = numpy_helper.from_array(np.full((2, 3), weight, np.float32), "W")
    g = helper.make_graph([helper.make_node("Mul", ["X", "W"], ["Y"], name="mul")], "g",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])], [w])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)
    path = tmp_path / "m.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="w.bin", size_threshold=0)
    return path


def test_run_json_and_validate_json_change_when_only_the_external_weights_change(tmp_path, capsys):
    path = _model(tmp_path, 2.0)
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float32))
    records = []
    for n, weight in enumerate((2.0, 3.0)):
        if n:   # edit only the weights file, keeping the .onnx byte for byte
            onnx_bytes = path.read_bytes()
            (tmp_path / "w.bin").write_bytes(np.full((2, 3), weight, np.float32).tobytes())
            assert path.read_bytes() == onnx_bytes
        out = tmp_path / f"out{n}"
        assert main(["run", str(path), "--input", f"X={tmp_path / 'x.npy'}", "-o", str(out)]) == 0
        capsys.readouterr()
        assert main(["validate", "--format", "json", str(path)]) == 0
        report = json.loads(capsys.readouterr().out)
        records.append((json.loads((out / "run.json").read_text()), report))
    (r0, v0), (r1, v1) = records
    assert r0["model_sha256"] == r1["model_sha256"]                  # the .onnx did not change
    assert r0["model_external_data"] != r1["model_external_data"]    # but the record does
    assert r1["model_external_data"] == [{"location": "w.bin", "problem": None, "sha256":
                                          hashlib.sha256((tmp_path / "w.bin").read_bytes()).hexdigest()}]
    assert v0["models"][0]["files"] != v1["models"][0]["files"]
    assert v1["models"][0]["files"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_missing_or_escaping_external_file_is_named_never_skipped(tmp_path):
    path = _model(tmp_path, 2.0)
    (tmp_path / "w.bin").unlink()
    assert identity(path)["external_data"] == [{"location": "w.bin", "sha256": None,
                                                "problem": identity(path)["external_data"][0]["problem"]}]
    assert identity(path)["external_data"][0]["problem"].startswith("unreadable")
    model = onnx.load_model(str(path), load_external_data=False)
    for e in model.graph.initializer[0].external_data:
        if e.key == "location":
            e.value = "../outside.bin"
    onnx.save_model(model, str(path))
    assert identity(path)["external_data"][0]["problem"] == "outside the model's folder"
