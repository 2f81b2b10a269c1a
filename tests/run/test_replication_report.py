"""`sonnx run --compare onnxruntime --criterion C -o DIR`: the replication report (compare.json,
schema sonnx-replication/1, and compare.html) states the criterion, the data set's hash, the
model's bytes, and per output and per node the maxima and the verdict."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from sonnx.cli import main
from sonnx.run import comparison as C
from sonnx.run import replication

pytestmark = pytest.mark.req("GEMM-R7")     # the per-node bound is the fast-mode bound of Gemm's record
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "spec" / "replication-report.schema.json").read_text())


def _gemm_model(tmp_path) -> Path:
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "W")
    c = numpy_helper.from_array(rng.standard_normal((4, 8)).astype(np.float32), "C")
    g = helper.make_graph([helper.make_node("Gemm", ["X", "W", "C"], ["Y"], name="gemm", alpha=1.0, beta=1.0,
                                            transA=0, transB=0)], "g",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4, 16])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4, 8])], [w, c])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), str(path))
    np.save(tmp_path / "x.npy", rng.standard_normal((4, 16)).astype(np.float32))
    return path


def _run(tmp_path, *extra, capsys=None) -> tuple[int, dict, str]:
    path = _gemm_model(tmp_path)
    out = tmp_path / "out"
    code = main(["run", str(path), "--input", f"X={tmp_path / 'x.npy'}", "--compare", "onnxruntime", "-o", str(out),
                 *extra])
    return code, json.loads((out / "compare.json").read_text()), (out / "compare.html").read_text()


@pytest.mark.parametrize("criterion", ["bounds", "exact", "ulp:0", "ulp:1000", "abs:0.5"])
def test_the_report_follows_its_schema_and_states_what_was_judged(tmp_path, criterion):
    code, rep, page = _run(tmp_path, "--criterion", criterion)
    jsonschema.validate(rep, SCHEMA)
    assert rep["criterion"]["name"] == criterion.split(":")[0]
    x = np.load(tmp_path / "x.npy")
    assert rep["data_set"]["inputs"]["X"]["sha256"] == hashlib.sha256(x.tobytes()).hexdigest()
    assert rep["model_files"]["sha256"] == hashlib.sha256((tmp_path / "m.onnx").read_bytes()).hexdigest()
    assert rep["nodes"][0]["status"] == "within" and rep["nodes"][0]["max_ulp"] is not None
    worst = rep["outputs"][0]["max_ulp"]
    met = {"bounds": True, "exact": worst == 0, "ulp:0": worst == 0, "ulp:1000": worst <= 1000,
           "abs:0.5": rep["outputs"][0]["max_abs"] <= 0.5}[criterion]
    assert rep["verdict"] == ("replicated" if met else "not replicated") and code == (0 if met else 1)
    assert f"Replication report: <span class='{'ok' if met else 'bad'}'>{rep['verdict']}</span>" in page


def test_a_node_outside_its_bound_is_never_replicated_whatever_the_epsilon():
    result = C.Comparison("fast", outputs=[C.OutputDiff("y", "float", 0, 0.0)],
                          nodes=[C.NodeCheck(0, "g", "Gemm", "outside", "planted")])
    for crit in ("bounds", "exact", "ulp:1000000", "abs:1e30"):
        rep = replication.report(result, replication.parse(crit), model="m", model_files={"sha256": None,
                                 "external_data": []}, inputs={}, reference={"runtime": "onnxruntime", "version": "v"},
                                 sonnx_version="s")
        assert rep["verdict"] == "not replicated", crit


def test_nan_positions_that_differ_never_meet_a_numeric_criterion():
    out = C.OutputDiff("y", "float", None, 0.0, nan_mismatch=1)
    assert not any(replication.parse(c).holds(out) for c in ("exact", "ulp:1000000", "abs:1e30"))


def test_the_data_set_hash_changes_with_any_input():
    a = {"X": {"sha256": "0" * 64}, "Z": {"sha256": "1" * 64}}
    b = {"X": {"sha256": "0" * 64}, "Z": {"sha256": "2" * 64}}
    assert replication.data_set_sha256(a) != replication.data_set_sha256(b)
    assert replication.data_set_sha256(a) == replication.data_set_sha256(dict(reversed(a.items())))


@pytest.mark.parametrize("bad", ["ulp", "ulp:-1", "ulp:1.5", "abs:nan", "abs:-0.1", "exact:3", "close"])
def test_a_malformed_criterion_is_one_line_and_exit_2(tmp_path, capsys, bad):
    path = _gemm_model(tmp_path)
    code = main(["run", str(path), "--input", f"X={tmp_path / 'x.npy'}", "--compare", "onnxruntime",
                 "--criterion", bad])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--criterion" in err and "Traceback" not in err


def test_criterion_without_compare_is_refused(tmp_path, capsys):
    path = _gemm_model(tmp_path)
    assert main(["run", str(path), "--input", f"X={tmp_path / 'x.npy'}", "--criterion", "exact"]) == 2
    assert "give --compare onnxruntime too" in capsys.readouterr().err
