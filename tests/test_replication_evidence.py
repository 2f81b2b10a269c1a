"""The evidence bundle's replication report (tools/sonnx_dev/examples.py, step "validate"): a real
PyTorch export made conformant and compared with onnxruntime under the bounds criterion, every
file a certifier files kept; a planted fault in sonnx's result fails the step."""
from __future__ import annotations

import json

import pytest

from sonnx.run import executor
from sonnx_dev import examples


@pytest.mark.req("@operators")
def test_the_replication_report_of_lenet5_is_written_and_holds(tmp_path, capsys):
    assert examples.replication(tmp_path) == 0
    assert "ok   replication report of lenet5_dynamo_op18.onnx" in capsys.readouterr().out
    rep = json.loads((tmp_path / "run" / "compare.json").read_text())
    assert rep["schema"] == "sonnx-replication/1" and rep["verdict"] == "replicated"
    assert rep["criterion"]["name"] == "bounds" and rep["data_set"]
    assert len(rep["nodes"]) == 12 and all(n["status"] == "within" for n in rep["nodes"])
    for name in ("lenet5_dynamo_op18.conformed.onnx", "lenet5_dynamo_op18.conformed.onnx.conform.json",
                 "x.npy", "run/run.json", "run/y.npy", "run/compare.html"):
        assert (tmp_path / name).is_file(), name


@pytest.mark.req("@operators")
def test_a_wrong_result_fails_the_replication(tmp_path, monkeypatch, capsys):
    real = executor.execute

    def off(loaded, steps, feeds, progress=None, keep_all=False):   # the network's output 1 % off
        values = real(loaded, steps, feeds, progress, keep_all)
        outputs = {o.name for o in loaded.model.graph.output}
        return {k: v * 1.01 if k in outputs else v for k, v in values.items()}
    monkeypatch.setattr(executor, "execute", off)
    assert examples.replication(tmp_path) != 0
    assert "FAIL replication report" in capsys.readouterr().out
