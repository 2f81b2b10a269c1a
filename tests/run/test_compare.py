"""`sonnx run --compare onnxruntime`: onnxruntime within the profile's bounds node by node on
the conformant MLPs; the checks fail on a planted fault (a Gemm off by more than its bound, a Relu
that lets a negative value through, an add off by one bit); the ULP figures are right."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from sonnx.cli import main
from sonnx.run import comparison
from sonnx.run.comparison import compare, output_diff

from .models import MLP_IDS, TensorProto, inputs, mlp_path, mlps, one_node, save

MODELS = mlps()


@pytest.mark.req("GEMM-R7", "RELU-R3", "MATMUL-R5")
@pytest.mark.parametrize("mode", ["exact", "fast"])
@pytest.mark.parametrize("model", [m for _, m in MODELS], ids=MLP_IDS)
def test_onnxruntime_is_within_the_bounds_on_the_mlps(model, mode):
    for feed in inputs(model):
        result = compare(model, feed, mode)
        assert result.within_bounds, [vars(n) for n in result.nodes if n.status != "within"]
        assert [n.op_type for n in result.nodes] == [n.op_type for n in model.graph.node]
        (out,) = result.outputs
        assert out.max_ulp is not None and out.nan_mismatch == 0


def _perturbing_session(monkeypatch, op_type: str, change):
    """Plant a fault: onnxruntime's result of every single-node run of ``op_type`` is changed."""
    real = comparison._session

    class Session:
        def __init__(self, model):
            self.inner, self.op = real(model), [n.op_type for n in model.graph.node]

        def run(self, names, feed):
            out = self.inner.run(names, feed)
            return [change(y) for y in out] if self.op == [op_type] else out
    monkeypatch.setattr(comparison, "_session", Session)


@pytest.mark.req("GEMM-R7")
def test_a_gemm_outside_its_bound_is_caught(monkeypatch, capsys, tmp_path):
    model_id = [i for i in MLP_IDS if "bias_c_full" in i][0]
    model = dict(MODELS)[model_id]
    feed = inputs(model)[0]
    _perturbing_session(monkeypatch, "Gemm", lambda y: y * np.float32(1.001))
    result = compare(model, feed)
    assert not result.within_bounds
    assert {n.op_type for n in result.nodes if n.status == "outside"} == {"Gemm"}
    assert all("GEMM-R7" in n.detail for n in result.nodes if n.status == "outside")
    # the command line: exit 1, the node named
    np.save(tmp_path / "x.npy", feed["x"])
    code = main(["run", mlp_path(model_id), "--input", f"x={tmp_path}/x.npy", "--compare", "onnxruntime"])
    out = capsys.readouterr().out
    assert code == 1 and "(Gemm): outside" in out and "NOT shown within the profile's bounds" in out


@pytest.mark.req("RELU-R3")
def test_a_relu_letting_a_negative_through_is_caught_and_minus_zero_is_not(monkeypatch):
    model = dict(MODELS)[MLP_IDS[0]]
    feed = inputs(model)[3]                      # holds -0 and negative values
    _perturbing_session(monkeypatch, "Relu", lambda y: np.where(y == 0, -np.float32(0), y))
    assert compare(model, feed).within_bounds    # -0 for +0: what spec/relu.md allows onnxruntime
    _perturbing_session(monkeypatch, "Relu", lambda y: np.where(y == 0, np.float32(-1), y))
    result = compare(model, feed)
    assert {n.op_type for n in result.nodes if n.status == "outside"} == {"Relu"}


@pytest.mark.req("ADD-R3", "MUL-R3")
@pytest.mark.parametrize("op", ["Add", "Mul"])
def test_elementwise_must_be_bit_exact(monkeypatch, tmp_path, op):
    model = one_node(op, TensorProto.FLOAT)
    rng = np.random.default_rng(1)
    feed = {"A": rng.standard_normal((2, 3)).astype(np.float32), "B": rng.standard_normal((2, 3)).astype(np.float32)}
    assert compare(model, feed).within_bounds
    bump = lambda y: (y.view(np.uint32) ^ np.uint32(1)).view(np.float32) if y.dtype == np.float32 else y  # noqa: E731
    _perturbing_session(monkeypatch, op, bump)
    result = compare(model, feed)
    assert not result.within_bounds and result.nodes[0].status == "outside"
    # -0 for +0 is a difference too: the profile fixes the sign of a zero sum or product
    _perturbing_session(monkeypatch, op, lambda y: np.where(y == 0, -np.float32(0), y))
    zeros = {"A": np.zeros((2, 3), np.float32), "B": np.zeros((2, 3), np.float32)}
    assert not compare(model, zeros).within_bounds


def test_a_node_onnxruntime_cannot_run_is_not_compared(tmp_path, capsys):
    """onnxruntime has no CPU Relu for bfloat16 (spec/relu.md): the comparison is refused for the
    whole model (exit 2) rather than reported as passed."""
    model = one_node("Relu", TensorProto.BFLOAT16, n_inputs=1)
    path = save(model, tmp_path / "relu.onnx")
    np.save(tmp_path / "a.npy", np.ones((2, 3), ml_dtypes.bfloat16))
    code = main(["run", path, "--input", f"A={tmp_path}/a.npy", "--compare", "onnxruntime"])
    captured = capsys.readouterr()
    assert code == 2 and "onnxruntime cannot run the model" in captured.err
    assert captured.err.count("\n") == 1
    check = comparison.check_node(0, model.graph.node[0], [np.ones((2, 3), ml_dtypes.bfloat16)],
                                  np.ones((2, 3), ml_dtypes.bfloat16), 14, 8)
    assert check.status == "not compared" and "onnxruntime cannot run it" in check.detail


def test_output_diff_counts_ulps_across_zero_and_nans():
    f = np.float32
    one, next_one = f(1), np.nextafter(f(1), f(2))
    tiny = np.array([1], np.uint32).view(np.float32)[0]
    d = output_diff("y", np.array([one, -f(0), tiny, f(5)]), np.array([next_one, f(0), -tiny, f(5)]))
    assert (d.max_ulp, d.nan_mismatch) == (2, 0)          # +tiny to -tiny: 2 ulp; -0 to +0: 0
    assert d.max_abs == float(next_one - one)
    d = output_diff("y", np.array([np.nan, 1.0]), np.array([1.0, 1.0]))
    assert d.max_ulp is None and d.nan_mismatch == 1
    d = output_diff("y", np.array([np.nan, np.inf]), np.array([np.nan, np.inf]))
    assert (d.max_ulp, d.max_abs) == (0, 0.0)
    big = np.float64(1e300)
    d = output_diff("y", np.array([-big]), np.array([big]))
    assert d.max_ulp == 2 * int(np.array(big).view(np.uint64))
    d = output_diff("y", np.array([2**31 - 1], np.int32), np.array([-2**31], np.int32))
    assert d.max_ulp == 2**32 - 1


def test_the_compare_report_names_every_node_with_v(capsys, tmp_path):
    model_id = MLP_IDS[0]
    model = dict(MODELS)[model_id]
    np.save(tmp_path / "x.npy", inputs(model)[0]["x"])
    code = main(["run", mlp_path(model_id), "--input", f"x={tmp_path}/x.npy", "--compare", "onnxruntime",
                 "-v", "-o", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0 and out.count(": within") == 5 and "5 of 5 nodes within their bounds" in out
    import json
    report = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert report["within_bounds"] is True and len(report["nodes"]) == 5
    run = json.loads((tmp_path / "out" / "run.json").read_text())   # the outputs are written too
    for name, d in run["outputs"].items():
        assert (tmp_path / "out" / d["npy"]).exists() and d["sha256"] in out


def test_without_onnxruntime_compare_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(__import__("sys").modules, "onnxruntime", None)     # import now fails
    model_id = MLP_IDS[0]
    np.save(tmp_path / "x.npy", inputs(dict(MODELS)[model_id])[0]["x"])
    code = main(["run", mlp_path(model_id), "--input", f"x={tmp_path}/x.npy", "--compare", "onnxruntime"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and captured.err.count("\n") == 1
    assert "onnxruntime is not installed; pip install onnxruntime" in captured.err
