"""End to end on an ACAS-Xu-shaped network written the way the public ACAS Xu files are (IR
version 3, opset 8, every initializer also listed as a graph input, MATLAB's converter layout:
Sub of a mean image, Flatten, 6 hidden layers of 50 with MatMul + Add + Relu, 5 outputs). The
network is generated here (onnx.helper, seeded weights); tools/acasxu-e2e runs the public ones.

validate (refused: ADD-R4, the bias broadcasts) -> conform (initializer inputs made constants,
IR raised to 4, biases stored expanded; bit check passed) -> validate (conforms) -> run
--compare onnxruntime (within the profile's bounds)."""
from __future__ import annotations

import importlib
import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import sonnx
from sonnx.cli import main
from sonnx.conform import rewrite
from sonnx.run.executor import load

F = TensorProto.FLOAT


def acas_shaped(ir_version: int = 3, seed: int = 0) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(rng.standard_normal((1, 1, 1, 5)).astype(np.float32),
                                     "input_AvgImg")]
    nodes = [helper.make_node("Sub", ["input", "input_AvgImg"], ["sub"], name="Sub_1"),
             helper.make_node("Flatten", ["sub"], ["h0"], name="Flatten_1", axis=1)]
    widths = [5] + [50] * 6 + [5]
    for k in range(7):
        w = numpy_helper.from_array((rng.standard_normal((widths[k], widths[k + 1])) /
                                     np.sqrt(widths[k])).astype(np.float32), f"L{k + 1}_W")
        b = numpy_helper.from_array(rng.standard_normal(widths[k + 1]).astype(np.float32),
                                    f"L{k + 1}_B")
        inits += [w, b]
        nodes.append(helper.make_node("MatMul", [f"h{k}", w.name], [f"m{k}"], name=f"L{k + 1}_MatMul"))
        last = k == 6
        nodes.append(helper.make_node("Add", [f"m{k}", b.name], ["y" if last else f"a{k}"],
                                      name=f"L{k + 1}_Add"))
        if not last:
            nodes.append(helper.make_node("Relu", [f"a{k}"], [f"h{k + 1}"], name=f"L{k + 1}_Relu"))
    inputs = [helper.make_tensor_value_info("input", F, [1, 1, 1, 5])]
    if ir_version < 4:      # the IR-3 rule: every initializer is a graph input as well
        inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits]
    g = helper.make_graph(nodes, "acas_shaped", inputs,
                          [helper.make_tensor_value_info("y", F, [1, 5])], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 8)], ir_version=ir_version)
    onnx.checker.check_model(m)
    return m


def cli(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.mark.req("PROF-R1", "PROF-R2", "ADD-R4")
def test_ir3_acas_shaped_network_end_to_end(tmp_path, capsys):
    src, out = tmp_path / "acas.onnx", tmp_path / "acas_sonnx.onnx"
    onnx.save(acas_shaped(), src)
    code, text, _ = cli(["validate", str(src)], capsys)
    assert code == 1 and "7 violations of 1 rule" in text and "[ADD-R4]" in text
    code, text, _ = cli(["conform", str(src), "-o", str(out)], capsys)
    assert code == 0, text
    report = json.loads((tmp_path / "acas_sonnx.onnx.conform.json").read_text())
    kinds = [r["kind"] for r in report["rewrites"]]
    assert kinds == ["initializer-inputs-to-constants"] + ["materialise-broadcast"] * 7
    assert "the interface changed: 15 initializer(s) no longer listed" in report["rewrites"][0]["detail"]
    assert report["check"]["status"] == "passed" and report["check"]["inputs"] == [
        {"name": "input", "dtype": "float32", "shape": [1, 1, 1, 5]}]
    m = onnx.load(out)
    assert m.ir_version == 4 and [vi.name for vi in m.graph.input] == ["input"]
    code, text, _ = cli(["validate", str(out)], capsys)
    assert code == 0 and "conforms to the SONNX profile" in text
    x = tmp_path / "x.npy"
    np.save(x, np.random.default_rng(1).standard_normal((1, 1, 1, 5)).astype(np.float32))
    code, text, _ = cli(["run", str(out), "--input", f"input={x}", "--compare", "onnxruntime"], capsys)
    assert code == 0 and "within the profile's bounds" in text, text


def add_model(ir_version: int) -> onnx.ModelProto:
    """x + c with c an initializer listed as a graph input too (conformant: same shapes)."""
    c = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "c")
    g = helper.make_graph([helper.make_node("Add", ["x", "c"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", F, [2, 3]),
                           helper.make_tensor_value_info("c", F, [2, 3])],
                          [helper.make_tensor_value_info("y", F, [2, 3])], initializer=[c])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 8)], ir_version=ir_version)


@pytest.mark.req("PROF-R2")
def test_ir3_initializer_inputs_are_constants_for_run_as_for_onnxruntime(tmp_path, capsys):
    """onnxruntime refuses a feed for an IR-3 initializer input ("Invalid input name"); sonnx
    run does too. At IR 4 the same entry is an overridable input for both."""
    ort = pytest.importorskip("onnxruntime")
    x = np.zeros((2, 3), np.float32)
    c = np.ones((2, 3), np.float32)
    for ir, fed in ((3, False), (4, True)):
        m = add_model(ir)
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        feedable = s.get_inputs() + s.get_overridable_initializers()
        assert ("c" in [i.name for i in feedable]) is fed
        assert ("c" in load(m).inputs) is fed
        path = tmp_path / f"add_ir{ir}.onnx"
        onnx.save(m, path)
        np.save(tmp_path / "x.npy", x)
        np.save(tmp_path / "c.npy", c)
        code, text, err = cli(["run", str(path), "--input", f"x={tmp_path / 'x.npy'}",
                               "--input", f"c={tmp_path / 'c.npy'}"], capsys)
        if fed:
            assert code == 0, err
        else:
            assert code == 2 and "the model has no input 'c'; its inputs: x" in err
            with pytest.raises(Exception, match="Invalid input name"):
                s.run(None, {"x": x, "c": c})
    # without the feed both read the stored constant
    code, text, err = cli(["run", str(tmp_path / "add_ir3.onnx"), "--input",
                           f"x={tmp_path / 'x.npy'}"], capsys)
    assert code == 0, err


@pytest.mark.req("PROF-R1")
def test_a_constant_made_initializer_at_ir3_is_no_input(capsys):
    """conform's own IR-3 case: the Constant's initializer must not become an overridable input
    (the IR-3 rule would list it): the model is raised to IR 4 instead, and the scale broadcast
    is then stored expanded."""
    g = helper.make_graph(
        [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.float32(0.5))),
         helper.make_node("Mul", ["x", "c"], ["y"])], "g",
        [helper.make_tensor_value_info("x", F, [2, 3])], [helper.make_tensor_value_info("y", F, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 8)], ir_version=3)
    model, report = sonnx.conform(m)
    assert [r["kind"] for r in report["rewrites"]] == [
        "constant-to-initializer", "initializer-inputs-to-constants", "materialise-broadcast"]
    assert model.ir_version == 4 and [vi.name for vi in model.graph.input] == ["x"]
    assert report["exit_code"] == 0 and report["check"]["status"] == "passed"


@pytest.mark.req("PROF-R1", "ADD-R4")
def test_planted_ir_bump_that_keeps_the_inputs_is_caught(monkeypatch):
    """Fault: the IR is raised but the initializer inputs are kept. At IR 4 they are overridable
    inputs, so the biases stay broadcasts conform cannot store: the model does not conform."""
    def bump_only(model, log):
        if 0 < model.ir_version < 4:
            model.ir_version = 4
    monkeypatch.setattr(importlib.import_module("sonnx.conform.api"), "initializer_inputs_to_constants", bump_only)
    _, report = sonnx.conform(acas_shaped())
    assert report["exit_code"] == 1 and sorted(set(f["rule"] for f in report["findings"])) == ["ADD-R4"]


@pytest.mark.req("PROF-R1")
def test_planted_drop_without_ir_bump_is_caught(monkeypatch):
    """Fault: the entries dropped but the model left at IR 3, where every initializer must be an
    input: the validator refuses the rewritten model (onnx's checker), so it never conforms."""
    def drop_only(model, log):
        inits = {t.name for t in model.graph.initializer}
        keep = [vi for vi in model.graph.input if vi.name not in inits]
        del model.graph.input[:]
        model.graph.input.extend(keep)
    monkeypatch.setattr(importlib.import_module("sonnx.conform.api"), "initializer_inputs_to_constants", drop_only)
    _, report = sonnx.conform(acas_shaped())
    assert report["exit_code"] == 1 and "ONNX-CHECKER" in report["validate"]["rules"]


@pytest.mark.req("PROF-R1")
def test_the_rewrite_leaves_ir4_models_alone():
    m = acas_shaped(4)
    before = m.SerializeToString()
    log = rewrite.Log()
    rewrite.initializer_inputs_to_constants(m, log)
    assert m.SerializeToString() == before and log.rewrites == []
