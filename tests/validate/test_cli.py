"""`sonnx validate` through sonnx.cli.main and a subprocess: exit codes, bad inputs, never a traceback."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import onnx
import pytest
from onnx import helper

from sonnx.cli import main

from . import models as M


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.fixture
def files(tmp_path):
    good = tmp_path / "good.onnx"
    onnx.save(M.mul([2, 3], [2, 3]), good)
    bad = tmp_path / "bcast.onnx"
    onnx.save(M.mul([2, 3], [3]), bad)
    return tmp_path, good, bad


@pytest.mark.req("MUL-R1", "MUL-R4")
def test_exit_codes(files, capsys):
    tmp, good, bad = files
    assert run(["validate", str(good)], capsys)[0] == 0
    code, out, _ = run(["validate", str(good), str(bad)], capsys)
    assert code == 1 and "[MUL-R4]" in out and "conforms" in out
    code, out, err = run(["validate", str(good), str(tmp / "missing.onnx")], capsys)
    assert code == 2 and "no such file" in out and err == f"sonnx validate: {tmp / 'missing.onnx'}: no such file\n"


def test_usage_errors_exit_2(files, capsys):
    tmp, good, _ = files
    with pytest.raises(SystemExit) as e:
        main(["validate"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["validate", "--format", "xml", str(good)])
    assert e.value.code == 2
    capsys.readouterr()


def _write(tmp, name, data: bytes):
    p = tmp / name
    p.write_bytes(data)
    return p


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("kind", ["truncated", "random", "text", "empty", "no_graph"])
def test_unreadable_inputs_exit_2(kind, files, capsys):
    tmp, good, _ = files
    data = M.chain(50).SerializeToString()
    path = {
        "truncated": lambda: _write(tmp, "t.onnx", data[: len(data) // 2 + 3]),
        "random": lambda: _write(tmp, "r.onnx", bytes((i * 7919 + 13) % 256 for i in range(4096))),
        "text": lambda: _write(tmp, "x.onnx", b"this is a text file, not an ONNX model\n" * 20),
        "empty": lambda: _write(tmp, "e.onnx", b""),
        "no_graph": lambda: _write(tmp, "n.onnx", onnx.ModelProto(ir_version=8).SerializeToString()),
    }[kind]()
    code, out, err = run(["validate", str(path)], capsys)
    assert code == 2 and "ERROR" in out and err.startswith(f"sonnx validate: {path}: ")


def test_a_directory_without_models_exits_2(tmp_path, capsys):
    code, out, err = run(["validate", str(tmp_path)], capsys)
    assert code == 2 and out == "" and "no *.onnx file under the directory" in err


def test_over_2_gib_refused_before_parsing(tmp_path, capsys):
    big = tmp_path / "big.onnx"
    with open(big, "wb") as fh:  # a sparse file: no disk space used, never read
        fh.truncate(2**31 + 10)
    code, out, _ = run(["validate", str(big)], capsys)
    assert code == 2 and "2 GiB" in out


@pytest.mark.parametrize("kind", ["cycle", "duplicate_outputs", "missing_input"])
def test_malformed_graphs_are_findings(kind, tmp_path, capsys):
    x = M.vi("x", [2, 3])
    nodes = {
        "cycle": [helper.make_node("Mul", ["x", "z"], ["y"], name="m1"),
                  helper.make_node("Mul", ["y", "x"], ["z"], name="m2")],
        "duplicate_outputs": [helper.make_node("Mul", ["x", "x"], ["z"], name="m1"),
                              helper.make_node("Mul", ["x", "x"], ["z"], name="m2")],
        "missing_input": [helper.make_node("Mul", ["x", "nowhere"], ["z"], name="m1")],
    }[kind]
    p = tmp_path / "m.onnx"
    onnx.save(M.model(nodes, [x], [M.vi("z", [2, 3])]), p)
    code, out, _ = run(["validate", "--format", "json", str(p)], capsys)
    assert code == 1
    rules = [f["rule"] for f in json.loads(out)["models"][0]["findings"]]
    assert "ONNX-CHECKER" in rules


@pytest.mark.req("MUL-R4")
def test_output_file(files, capsys, tmp_path):
    _, good, bad = files
    out_file = tmp_path / "report.sarif"
    code, out, _ = run(["validate", str(bad), "--format", "sarif", "-o", str(out_file)], capsys)
    assert code == 1 and out == ""
    assert json.loads(out_file.read_text())["runs"][0]["results"][0]["ruleId"] == "MUL-R4"


@pytest.mark.req("MUL-R4")
def test_subprocess(files, tmp_path):
    _, good, bad = files
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00\xff" * 100)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    for args, want in (([str(good)], 0), ([str(bad)], 1), ([str(junk)], 2), ([], 2)):
        p = subprocess.run([sys.executable, "-m", "sonnx.cli", "validate", *args],
                           capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == want, (args, p.stdout, p.stderr)
        assert "Traceback" not in p.stdout + p.stderr
    p = subprocess.run([sys.executable, "-m", "sonnx.cli", "validate", "--format", "json", str(bad)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert json.loads(p.stdout)["models"][0]["findings"][0]["rule"] == "MUL-R4"


@pytest.mark.req("PROF-R2")
def test_text_output_is_grouped_and_short(tmp_path, capsys):
    m = M.chain(40)
    for vi in list(m.graph.input) + list(m.graph.output):
        vi.type.tensor_type.shape.dim[0].dim_param = "batch"
    p = tmp_path / "sym.onnx"
    onnx.save(m, p)
    code, out, _ = run(["validate", str(p)], capsys)
    assert code == 1
    assert out.count("[PROF-R2]") == 1 and "more (--format json lists all)" in out
    assert len(out.splitlines()) < 20
