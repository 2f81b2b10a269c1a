"""run's input and output files (npz, npy, hex text), the comparison with onnxruntime, and the opset
the kernels are given, in detail: tests first written to kill mutants that survived mutmut's run
over src/sonnx/run/ (issue 26).

Each test pins behaviour a surviving mutant changed: what is read, refused, computed or written,
never the wording of a message. docs/records/mutation/conform-run.md lists every survivor and the test
(or the reason) that accounts for it."""
from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest

from sonnx.run import InputError, comparison, hexfloat, io
from sonnx.run.executor import InputSpec

F32 = InputSpec("x", "float", (3,), False)

UNPICKLED = []


def _record(what: str) -> str:
    UNPICKLED.append(what)
    return what


class _Marker:
    """Unpickling it leaves a trace: an input reader that unpickles would run foreign code."""

    def __reduce__(self):
        return (_record, ("unpickled",))


# --- io._npy / io._npz: a pickled object in an input file is never unpickled -----------------

@pytest.mark.parametrize("suffix", [".npy", ".npz"])
def test_an_object_array_in_an_input_file_is_refused_unread(tmp_path, suffix):
    UNPICKLED.clear()
    array = np.array([_Marker(), 1.0, 2.0], dtype=object)
    path = tmp_path / f"x{suffix}"
    if suffix == ".npy":
        np.save(path, array, allow_pickle=True)
    else:
        np.savez(path, x=array)
    with pytest.raises(InputError) as exc:
        io.read_inputs([f"x={path}"], {"x": F32})
    assert UNPICKLED == [] and str(path.name) in str(exc.value)


# --- io._text: trailing blank lines end the text, blank lines inside it do not --------------

@pytest.mark.parametrize("tail", ["\n", "\n\n", "\n \n\t\n", "\n\n\n\n"])
def test_trailing_blank_lines_of_hex_text_are_not_values(tmp_path, tail):
    values = np.array([1.5, -0.0, 2.0**-149], np.float32)
    path = tmp_path / "x.hex"
    path.write_text(hexfloat.format_array(values).rstrip("\n") + tail)
    got = io.read_inputs([f"x={path}"], {"x": F32})["x"]
    assert got.dtype == np.float32 and got.tobytes() == values.tobytes()


def test_a_blank_line_inside_hex_text_is_refused(tmp_path):
    path = tmp_path / "x.hex"
    path.write_text("0x1p+0\n\n0x1p+1\n0x1p+2\n")
    with pytest.raises(InputError):
        io.read_inputs([f"x={path}"], {"x": F32})


# --- io.write_outputs: every output's files, all inside the folder --------------------------

def test_every_output_gets_its_npy_and_hex_inside_the_output_folder(tmp_path, monkeypatch):
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)          # a path written relative to the working folder lands here
    out = tmp_path / "out"
    outputs = {"y": np.array([1.0, -2.5], np.float32), "z/w": np.arange(3, dtype=np.int64),
               "q": np.array([[0.5]], np.float64)}
    summary = {"outputs": io.describe(outputs)}
    written = io.write_outputs(str(out), outputs, summary, hex_text=True)   # --hex
    names = ["y.npy", "y.hex", "z_w.npy", "z_w.hex", "q.npy", "q.hex", "run.json"]
    assert written == [os.path.join(str(out), n) for n in names]
    assert sorted(os.listdir(out)) == sorted(names) and os.listdir(elsewhere) == []
    record = json.loads((out / "run.json").read_text())
    for name, a in outputs.items():
        files = record["outputs"][name]
        assert np.load(out / files["npy"]).tobytes() == a.tobytes()
        text = (out / files["hex"]).read_text()
        assert hexfloat.parse_lines(text.splitlines(), io.dtypes.name_of(a.dtype)).tobytes() == a.tobytes()


def test_run_json_is_sorted_and_indented_by_two(tmp_path):
    """run.json is evidence that is diffed and hashed: one layout, keys sorted."""
    outputs = {"y": np.array([1.0], np.float32)}
    summary = {"schema": "sonnx-run/1", "outputs": io.describe(outputs), "mode": "exact"}
    io.write_outputs(str(tmp_path / "out"), outputs, summary)
    text = (tmp_path / "out" / "run.json").read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert list(json.loads(text)) == ["mode", "outputs", "schema"]


def test_an_output_named_run_or_starting_with_x_keeps_its_own_files(tmp_path):
    outputs = {"run": np.array([1.0], np.float32), "Xy": np.array([2.0], np.float32)}
    summary = {"outputs": io.describe(outputs)}
    io.write_outputs(str(tmp_path / "out"), outputs, summary)
    assert summary["outputs"]["run"]["npy"] == "run_2.npy"      # run.* is the run's own record
    assert summary["outputs"]["Xy"]["npy"] == "Xy.npy"


# --- io._first_line: an exception without text still gives a line -------------------------

def test_an_exception_without_text_is_named_by_its_type():
    assert io._first_line(KeyError()) == "KeyError"
    assert io._first_line(ValueError("bad\nsecond")) == "ValueError: bad"


# --- comparison.output_diff: integers exactly, empty outputs, one-sided NaNs --------------

def test_integer_outputs_are_compared_exactly_and_fully_described():
    big = 2**62
    d = comparison.output_diff("y", np.array([[big + 1, 5]], np.int64), np.array([[big, 5]], np.int64))
    assert (d.name, d.dtype, d.max_ulp, d.max_abs, d.nan_mismatch) == ("y", "int64", 1, 1.0, 0)
    assert isinstance(d.max_abs, float)
    d = comparison.output_diff("e", np.zeros((0, 3), np.int32), np.zeros((0, 3), np.int32))
    assert (d.name, d.dtype, d.max_ulp, d.max_abs) == ("e", "int32", 0, 0.0)


def test_float_outputs_with_nothing_to_measure_differ_by_zero():
    for a in (np.zeros((0,), np.float32), np.array([np.nan], np.float32)):
        d = comparison.output_diff("y", a, a.copy())
        assert (d.dtype, d.max_ulp, d.max_abs, d.nan_mismatch) == ("float", 0, 0.0, 0)


def test_a_nan_on_one_side_does_not_poison_the_absolute_difference():
    d = comparison.output_diff("y", np.array([np.nan, 1.0]), np.array([1.0, 3.0]))
    assert d.max_ulp is None and d.nan_mismatch == 1 and d.max_abs == 2.0


# --- comparison._same: the per-node equality rules ------------------------------------------

def test_integer_results_must_be_equal_exactly():
    big = np.int64(2**62)
    assert comparison._same(np.array([big, 1]), np.array([big, 1]), False) == ""
    differs = comparison._same(np.array([big, 1]), np.array([big + 1, 2]), False)
    assert differs.startswith("2 element(s) differ, first at flat index 0")
    assert comparison._same(np.array([big]), np.array([big + 1]), True) != ""   # Relu's rule too
    one = comparison._same(np.array([7, 1], np.int32), np.array([7, 2], np.int32), False)
    assert one.startswith("1 element(s) differ, first at flat index 1")


def test_a_result_of_another_shape_or_type_differs():
    a = np.zeros((2, 3), np.float32)
    assert comparison._same(np.zeros((3, 2), np.float32), a, False) != ""
    assert comparison._same(np.zeros((2, 3), np.float64), a, False) != ""


def test_a_nan_matches_only_a_nan_and_the_sign_of_zero_counts_unless_open():
    f = np.float32
    assert comparison._same(np.array([np.nan], f), np.array([np.nan], f), False) == ""
    assert comparison._same(np.array([np.nan], f), np.array([1.0], f), False) != ""
    assert comparison._same(np.array([1.0], f), np.array([np.nan], f), True) != ""
    assert comparison._same(np.array([-0.0], f), np.array([0.0], f), False) != ""
    assert comparison._same(np.array([-0.0], f), np.array([0.0], f), True) == ""


# --- comparison.check_node / _node_model: the node's own index, name, opset and rule --------

def test_a_node_check_carries_its_index_and_name_and_integer_matmul_is_compared_exactly():
    from onnx import helper
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")
    a = np.array([[1, 2], [3, 4]], np.int32)
    check = comparison.check_node(4, node, [a, a], a @ a, 13, 8)
    assert (check.index, check.name, check.op_type, check.status) == (4, "mm", "MatMul", "within")
    check = comparison.check_node(4, node, [a, a], a @ a + 1, 13, 8)
    assert check.status == "outside"


def test_a_node_is_run_alone_at_the_models_opset_and_ir_version():
    from onnx import helper
    node = helper.make_node("Add", ["a", "a"], ["y"])
    a = np.ones((2,), np.float32)
    m = comparison._node_model(node, [a, a], a, 9, 5)
    assert [(o.domain, o.version) for o in m.opset_import] == [("", 9)] and m.ir_version == 5
    assert [i.name for i in m.graph.input] == ["a"] and [o.name for o in m.graph.output] == ["y"]


def test_the_comparison_record_has_its_four_keys():
    c = comparison.Comparison("fast", outputs=[comparison.OutputDiff("y", "float", 1, 0.5)],
                              nodes=[comparison.NodeCheck(0, "n", "Relu", "within")])
    assert c.as_dict() == {"mode": "fast", "within_bounds": True,
                           "outputs": [{"name": "y", "dtype": "float", "max_ulp": 1, "max_abs": 0.5,
                                        "nan_mismatch": 0}],
                           "nodes": [{"index": 0, "name": "n", "op_type": "Relu", "status": "within",
                                      "detail": "", "max_ulp": None, "max_abs": None}]}


# --- cli._report_comparison: what each line says, which nodes are listed, the exit status --

def _report(result, verbosity, capsys):
    import argparse

    from sonnx.run import replication
    from sonnx.run.cli import _report_comparison
    rep = replication.report(result, replication.parse("bounds"), model="m", model_files={}, inputs={},
                             reference={"runtime": "onnxruntime", "version": "x"}, sonnx_version="y")
    code = _report_comparison(argparse.Namespace(verbosity=verbosity), result, rep)
    return code, capsys.readouterr().out.splitlines()


def test_the_comparison_report_lists_what_is_not_within_and_its_verdict(capsys):
    C = comparison
    result = C.Comparison("exact", outputs=[C.OutputDiff("y", "float", None, 2.0, nan_mismatch=3),
                                            C.OutputDiff("z", "float", 4, 0.25)],
                          nodes=[C.NodeCheck(0, "", "Relu", "within"),
                                 C.NodeCheck(1, "g", "Gemm", "outside", "Y[0, 0] far")])
    code, lines = _report(result, 0, capsys)
    assert code == 1 and len(lines) == 5 and lines[4].startswith("replication: not replicated")
    assert "NaN positions differ" in lines[0] and "3 NaN mismatch(es)" in lines[0] and "ulp" not in lines[0]
    assert lines[1] == "z  float: onnxruntime vs sonnx exact: max 4 ulp, max |diff| 0.25"
    assert lines[2] == "node 1 g (Gemm): outside: Y[0, 0] far"
    assert lines[3].startswith("onnxruntime: 1 of 2 nodes") and "NOT shown within" in lines[3]
    result.nodes[1].status, result.nodes[1].detail = "within", ""
    code, lines = _report(result, 1, capsys)           # -v: every node, an unnamed one by its type
    assert code == 0 and lines[2:4] == ["node 0 Relu (Relu): within", "node 1 g (Gemm): within"]
    assert lines[4].endswith("2 of 2 nodes within their bounds; within the profile's bounds")


# --- comparison.compare: the record names its mode, sonnx's outputs and each node's index ---

@pytest.mark.req("GEMM-R7")
def test_the_comparison_keeps_its_mode_sonnxs_outputs_and_node_indices():
    from onnx import TensorProto, helper

    import sonnx
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 2]) for n in "AB"]
    g = helper.make_graph([helper.make_node("Add", ["A", "B"], ["s"], name="add"),
                           helper.make_node("Relu", ["s"], ["Y"], name="relu")], "g", ins,
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 2])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)
    feed = {"A": np.array([[1, -2], [3, -4]], np.float32), "B": np.full((2, 2), 0.5, np.float32)}
    result = comparison.compare(model, feed, "fast")
    assert result.mode == "fast" and result.as_dict()["mode"] == "fast"
    assert list(result.sonnx_outputs) == ["Y"]
    assert result.sonnx_outputs["Y"].tobytes() == sonnx.run(model, feed)["Y"].tobytes()
    assert [(n.index, n.name, n.status) for n in result.nodes] == [(0, "add", "within"), (1, "relu", "within")]


# --- io.describe / io.sha256 / cli._cmd_run: the digests printed and recorded are the outputs' --

def test_describe_names_the_type_shape_and_digest_of_the_row_major_bytes():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    import hashlib
    want = hashlib.sha256(a.tobytes()).hexdigest()
    assert io.sha256(a.T.T) == want and io.sha256(np.asfortranarray(a)) == want
    assert io.describe({"y": a}) == {"y": {"shape": [2, 3], "dtype": "float", "sha256": want}}


@pytest.mark.req("GEMM-R7")
def test_sonnx_run_prints_and_records_the_digests_of_its_outputs_and_model(tmp_path, capsys):
    import hashlib

    from onnx import TensorProto, helper

    import sonnx
    from sonnx.cli import main
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in "AB"]
    g = helper.make_graph([helper.make_node("Mul", ["A", "B"], ["Y"], name="mul")], "g", ins,
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)
    path = tmp_path / "m.onnx"
    import onnx
    onnx.save(model, str(path))
    a = np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    code = main(["run", str(path), "--input", f"A={tmp_path / 'a.npy'}", "--input", f"B={tmp_path / 'a.npy'}",
                 "-o", str(tmp_path / "out")])
    out = capsys.readouterr().out
    digest = hashlib.sha256(sonnx.run(model, {"A": a, "B": a})["Y"].tobytes()).hexdigest()
    assert code == 0 and out == f"Y  float (2, 3)  sha256 {digest}\nmode exact\n"
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["model_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert record["outputs"]["Y"]["sha256"] == digest and record["mode"] == "exact"
    assert (record["schema"], record["sonnx"], record["model"]) == ("sonnx-run/1", sonnx.__version__, str(path))
    assert record["inputs"]["A"] == {"shape": [2, 3], "dtype": "float",
                                     "sha256": hashlib.sha256(a.tobytes()).hexdigest()}


# --- io.read_inputs: an archive of named inputs does not end the argument list --------------

def test_an_npz_of_named_inputs_then_more_inputs(tmp_path):
    specs = {"A": InputSpec("A", "float", (3,), False), "B": InputSpec("B", "float", (3,), False)}
    a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([-1.0, 0.5, 0.0], np.float32)
    np.savez(tmp_path / "a.npz", A=a)
    np.save(tmp_path / "b.npy", b)
    feeds = io.read_inputs([str(tmp_path / "a.npz"), f"B={tmp_path / 'b.npy'}"], specs)
    assert sorted(feeds) == ["A", "B"] and feeds["A"].tobytes() == a.tobytes() and feeds["B"].tobytes() == b.tobytes()


@pytest.mark.req("GEMM-R7")
def test_compare_json_is_the_comparison_record_indented_by_two(tmp_path, capsys):
    from onnx import TensorProto, helper

    from sonnx.cli import main
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in "AB"]
    g = helper.make_graph([helper.make_node("Add", ["A", "B"], ["Y"], name="add")], "g", ins,
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])])
    import onnx
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], ir_version=8), str(path))
    np.save(tmp_path / "a.npy", np.ones((2, 3), np.float32))
    code = main(["run", str(path), "--input", f"A={tmp_path / 'a.npy'}", "--input", f"B={tmp_path / 'a.npy'}",
                 "--compare", "onnxruntime", "-o", str(tmp_path / "out")])
    capsys.readouterr()
    text = (tmp_path / "out" / "compare.json").read_text(encoding="ascii")
    record = json.loads(text)
    assert code == 0 and text == json.dumps(record, indent=2) + "\n"
    assert record["within_bounds"] is True and [n["name"] for n in record["nodes"]] == ["add"]


# --- hexfloat._hex_value: the optional parts of a hex float -----------------------------------

def test_hex_floats_without_exponent_or_whole_digits_are_read_and_an_empty_mantissa_is_not():
    got = hexfloat.parse_lines(["0x1.8", "0x.8", "-0x.8p+1", "0x10", "0X1P-1"], "double")
    assert got.tolist() == [1.5, 0.5, -1.0, 16.0, 0.5]
    nans = hexfloat.parse_lines(["+nan", "NaN", "-nan"], "float").view(np.uint32)
    assert nans.tolist() == [0x7FC00000, 0x7FC00000, 0xFFC00000]
    for bad in ("0xp+1", "0x.p+1", "0x"):
        with pytest.raises(hexfloat.TextError, match="line 1"):
            hexfloat.parse_lines([bad], "double")


# --- cli._cmd_run: an output folder that cannot be written is exit 2 in one line -------------

def test_outputs_that_cannot_be_written_are_exit_2_in_one_line(tmp_path, capsys, monkeypatch):
    from onnx import TensorProto, helper

    from sonnx.cli import main
    ins = [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2])]
    g = helper.make_graph([helper.make_node("Relu", ["A"], ["Y"])], "g", ins,
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    import onnx
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], ir_version=8), str(path))
    np.save(tmp_path / "a.npy", np.ones(2, np.float32))

    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(io, "write_outputs", refuse)
    code = main(["run", str(path), "--input", f"A={tmp_path / 'a.npy'}", "-o", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "No space left on device" in err
    assert err.startswith("sonnx run: ")


# --- io._typed: raw 2-byte values are bfloat16 bits for a bfloat16 input only ----------------

def test_raw_two_byte_values_are_refused_for_a_float16_input():
    raw = np.zeros(3, np.float16).view("V2")
    with pytest.raises(InputError, match="raw 2-byte values"):
        io.check_feeds({"h": raw}, {"h": InputSpec("h", "float16", (3,), False)})
    got = io.check_feeds({"b": raw}, {"b": InputSpec("b", "bfloat16", (3,), False)})["b"]
    assert got.dtype.name == "bfloat16" and got.tobytes() == raw.tobytes()


def test_a_big_endian_array_of_another_type_is_refused_not_cast():
    with pytest.raises(InputError, match="never casts"):
        io.check_feeds({"x": np.arange(3, dtype=">i4")}, {"x": F32})
    got = io.check_feeds({"x": np.arange(3, dtype=">f4")}, {"x": F32})["x"]   # same values, native order
    assert got.dtype == np.float32 and got.tolist() == [0.0, 1.0, 2.0]


def test_infinities_are_written_as_c_writes_them():
    assert (hexfloat.format_float(float("inf")), hexfloat.format_float(float("-inf"))) == ("inf", "-inf")


# --- executor.run_node: attributes of operators that pass none to their kernel ---------------

def test_a_legacy_broadcast_attribute_of_zero_reaches_no_kernel():
    from sonnx.run.executor import run_node
    a = np.array([1.5, -2.0], np.float32)
    got = run_node("Mul", [a, a], {"broadcast": 0}, mode="exact", opset=6)
    assert got.tobytes() == (a * a).tobytes()


def test_each_output_gets_its_own_line_on_stdout(tmp_path, capsys):
    from onnx import TensorProto, helper

    from sonnx.cli import main
    ins = [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2])]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("Y", "Z")]
    g = helper.make_graph([helper.make_node("Relu", ["A"], ["Y"]), helper.make_node("Relu", ["Y"], ["Z"])],
                          "g", ins, outs)
    import onnx
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], ir_version=8), str(path))
    np.save(tmp_path / "a.npy", np.ones(2, np.float32))
    assert main(["run", str(path), "--input", f"A={tmp_path / 'a.npy'}"]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert [ln.split()[0] for ln in lines[:2]] == ["Y", "Z"] and lines[2:] == ["mode exact", ""]


def test_an_npz_of_one_array_feeds_the_input_named_on_the_command_line(tmp_path):
    a = np.array([1.0, 2.0, 3.0], np.float32)
    np.savez(tmp_path / "one.npz", whatever=a)
    feeds = io.read_inputs([f"x={tmp_path / 'one.npz'}"], {"x": F32})
    assert list(feeds) == ["x"] and feeds["x"].tobytes() == a.tobytes()


# --- cli.add_parser: --mode takes both of its values in process (the tests that pass --mode
# --- otherwise run `python -m sonnx` in a child process, which never imports a mutant) --------

@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_both_modes_are_accepted_on_the_command_line_and_recorded(tmp_path, capsys, mode):
    import onnx
    from onnx import TensorProto, helper

    from sonnx.cli import main
    ins = [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2])]
    outs = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])]
    g = helper.make_graph([helper.make_node("Relu", ["A"], ["Y"])], "g", ins, outs)
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], ir_version=8), str(path))
    np.save(tmp_path / "a.npy", np.array([-1.0, 2.0], np.float32))
    assert main(["run", str(path), "--input", f"A={tmp_path / 'a.npy'}", "--mode", mode,
                 "-o", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.endswith(f"mode {mode}\n")
    assert json.loads((tmp_path / "out" / "run.json").read_text())["mode"] == mode


def test_compare_takes_only_onnxruntime(tmp_path, capsys):
    from sonnx.cli import main
    with pytest.raises(SystemExit) as exc:
        main(["run", str(tmp_path / "m.onnx"), "--compare", "elsewhere"])
    assert exc.value.code == 2 and "invalid choice" in capsys.readouterr().err


# --- executor: the kernels get the model's default-domain opset, whichever name it is imported
# --- under ("" or its alias "ai.onnx"); fourth step of the mutation run (2026-11-28) -----------

def _relu_model(domain: str, version: int):
    from onnx import TensorProto, helper
    ins = [helper.make_tensor_value_info("A", TensorProto.FLOAT, [3, 7, 2])]
    outs = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 7, 2])]
    g = helper.make_graph([helper.make_node("Relu", ["A"], ["Y"])], "g", ins, outs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid(domain, version)], ir_version=8)


def _record_relu_opsets(monkeypatch) -> list:
    import sonnx.ops.relu as relu_mod
    from sonnx.ops import kernel
    from sonnx.ops.kernel import AcceptedCalls
    seen: list = []
    real = kernel.kernel_opset

    def recording(opset, *rest, **kw):
        seen.append(opset)
        return real(opset, *rest, **kw)
    monkeypatch.setattr(kernel, "kernel_opset", recording)       # every kernel's opset goes through it
    monkeypatch.setattr(relu_mod, "_accepted", AcceptedCalls())     # no memo hit skips the check
    return seen


def test_a_default_domain_imported_as_ai_onnx_gives_its_opset():
    from sonnx.run import executor
    assert executor.load(_relu_model("ai.onnx", 13)).opset == 13


@pytest.mark.parametrize("domain", ["", "ai.onnx"])
def test_run_graph_gives_the_kernels_the_models_opset(monkeypatch, domain):
    from sonnx.run import executor
    loaded = executor.load(_relu_model(domain, 13))
    seen = _record_relu_opsets(monkeypatch)
    x = np.linspace(-2, 2, 42, dtype=np.float32).reshape(3, 7, 2)
    out = executor.run_graph(loaded, {"A": x})
    assert out["Y"].tobytes() == np.where(x > 0, x, np.float32(0)).tobytes()
    assert seen and set(seen) == {13}


def test_run_node_gives_the_kernel_the_opset_it_is_given(monkeypatch):
    from sonnx.run import executor
    seen = _record_relu_opsets(monkeypatch)
    x = np.array([[-1.0, 2.0, -0.0]], np.float32)
    assert executor.run_node("Relu", [x], {}, mode="exact", opset=13).tolist() == [[0.0, 2.0, 0.0]]
    assert seen == [13]
