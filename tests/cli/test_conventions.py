"""The `sonnx` command as a new user tries it next to ruff and mypy: --version, `python -m
sonnx`, colour on a terminal only, [tool.sonnx] in pyproject.toml, and `sonnx trace` pointed
at a checkout and an evidence folder from elsewhere."""
from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

import sonnx
from sonnx.cli import main

from ..validate import models as M
from ..validate.test_cli import run   # main(argv) with captured streams, never a traceback

ROOT = Path(__file__).resolve().parents[2]


def sonnx_cmd(*args, cwd=None, env=None, **kw):
    """`python -m sonnx ARGS` in a child process, as a user runs it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "sonnx", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, **kw)


def test_version_and_python_dash_m(tmp_path):
    p = sonnx_cmd("--version", cwd=tmp_path)
    assert (p.returncode, p.stdout, p.stderr) == (0, f"sonnx {sonnx.__version__}\n", "")
    p = sonnx_cmd("requirements", cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.startswith("PROF-R1")
    p = sonnx_cmd(cwd=tmp_path)      # no sub-command: usage on stderr, exit 2
    assert p.returncode == 2 and p.stdout == "" and p.stderr.startswith("usage: sonnx")
    for sub, option in (("validate", "--select"), ("conform", "--dim"), ("trace", "--evidence"),
                        ("requirements", "--output-file")):
        p = sonnx_cmd(sub, "--help", cwd=tmp_path)
        assert p.returncode == 0 and option in p.stdout and "--color" in p.stdout and p.stderr == ""


def _on_a_terminal(args, cwd, env):
    """Run `python -m sonnx ARGS` with its stdout on a pseudo-terminal; return what it wrote."""
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TERM": "xterm", **env}
    env = {k: v for k, v in env.items() if v is not None}
    proc = subprocess.Popen([sys.executable, "-m", "sonnx", *args], cwd=cwd, env=env,
                            stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:          # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=300)
    os.close(master)
    return b"".join(chunks).decode()


@pytest.mark.req("MUL-R4")
def test_colour_on_a_terminal_only_and_never_with_no_color(tmp_path):
    onnx.save(M.mul([2, 3], [3]), tmp_path / "bcast.onnx")
    shown = _on_a_terminal(["validate", "bcast.onnx"], tmp_path, {"NO_COLOR": None})
    assert "\x1b[1;33m[MUL-R4]\x1b[0m" in shown
    assert "\x1b[" not in _on_a_terminal(["validate", "bcast.onnx"], tmp_path, {"NO_COLOR": "1"})
    assert "\x1b[" not in _on_a_terminal(["validate", "--color", "never", "bcast.onnx"], tmp_path,
                                         {"NO_COLOR": None})
    piped = sonnx_cmd("validate", "bcast.onnx", cwd=tmp_path, env={"NO_COLOR": ""})
    assert "[MUL-R4]" in piped.stdout and "\x1b[" not in piped.stdout


# ------------------------------------------------------------------ [tool.sonnx] in pyproject.toml

@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project whose pyproject.toml selects the MUL rules, run from a sub-directory."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.sonnx.validate]\nselect = ["MUL"]\nformat = "json"\n')
    (tmp_path / "models").mkdir()
    onnx.save(M.gemm([2, 3], [3, 4], [4]), tmp_path / "models" / "gemm_bias.onnx")
    monkeypatch.chdir(tmp_path / "models")
    return tmp_path


@pytest.mark.req("GEMM-R4")
def test_configuration_is_found_upwards_and_flags_win(project, capsys):
    code, out, _ = run(["validate", "gemm_bias.onnx"], capsys)
    doc = json.loads(out)       # format from the file
    assert code == 0 and "GEMM-R4" in doc["not_checked"] and doc["models"][0]["status"] == "partial"
    code, out, _ = run(["validate", "--select", "GEMM", "gemm_bias.onnx"], capsys)
    assert code == 1 and json.loads(out)["models"][0]["findings"][0]["rule"] == "GEMM-R4"
    code, out, _ = run(["validate", "--format", "text", "gemm_bias.onnx"], capsys)
    assert out.startswith("gemm_bias.onnx: no violation of the rules checked")
    code, out, _ = run(["validate", "--isolated", "gemm_bias.onnx"], capsys)
    assert code == 1 and "[GEMM-R4]" in out        # the file ignored: every rule, text


def test_a_pyproject_without_tool_sonnx_is_passed_over(project, capsys):
    (project / "models" / "pyproject.toml").write_text('[project]\nname = "inner"\n')
    code, out, _ = run(["validate", "gemm_bias.onnx"], capsys)
    assert json.loads(out)["not_checked"]            # the outer file still applies


@pytest.mark.parametrize("table, error", [
    ('[tool.sonnx.validate]\nselct = ["MUL"]\n',
     "[tool.sonnx.validate] has an unknown key 'selct'; known: exit-zero, format, help-base, ignore, select"),
    ('[tool.sonnx]\ncolour = "never"\n',
     "[tool.sonnx] has an unknown key 'colour'; known: [trace], [validate], color"),
    ('[tool.sonnx.validate]\nselect = "MUL"\n',
     "[tool.sonnx.validate] select must be a list of strings, not 'MUL'"),
    ('[tool.sonnx.validate]\nexit-zero = "yes"\n',
     "[tool.sonnx.validate] exit-zero must be true or false, not 'yes'"),
    ('[tool.sonnx.validate]\nformat = "xml"\n',
     "[tool.sonnx.validate] format = 'xml'; choose from json, sarif, text"),
    ('[tool.sonnx]\ncolor = "sometimes"\n',
     "[tool.sonnx] color = 'sometimes'; choose from auto, always, never"),
    ('[tool.sonnx.validate]\nselect = ["NOPE"]\n',
     "--select 'NOPE' names no rule"),
    ('[tool.sonnx\n', "cannot be read as TOML"),
])
def test_a_bad_configuration_is_a_clear_error(tmp_path, monkeypatch, capsys, table, error):
    (tmp_path / "pyproject.toml").write_text(table)
    onnx.save(M.mul([2, 3], [2, 3]), tmp_path / "m.onnx")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["validate", "m.onnx"], capsys)
    assert code == 2 and out == "" and error in err and err.count("\n") == 1


def test_colour_from_the_configuration(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text('[tool.sonnx]\ncolor = "always"\n')
    onnx.save(M.mul([2, 3], [3]), tmp_path / "m.onnx")
    monkeypatch.chdir(tmp_path)
    assert "\x1b[" in run(["validate", "m.onnx"], capsys)[1]
    assert "\x1b[" not in run(["validate", "--color", "never", "m.onnx"], capsys)[1]


# ------------------------------------------------------------------ sonnx trace from elsewhere

def _evidence(tmp_path) -> Path:
    """An evidence folder with a JUnit report of one passing test."""
    ev = tmp_path / "evidence"
    ev.mkdir()
    (ev / "junit.xml").write_text('<testsuites><testsuite name="s" tests="1">'
                                  '<testcase classname="tests.x" name="test_y"/></testsuite></testsuites>')
    return ev


def test_trace_takes_root_and_evidence_from_anywhere(tmp_path):
    ev = _evidence(tmp_path)
    p = sonnx_cmd("trace", "--root", str(ROOT), "--evidence", str(ev), "--format", "json",
                  "-o", str(tmp_path / "trace.json"), cwd=tmp_path)
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr, p.stderr
    doc = json.loads((tmp_path / "trace.json").read_text())
    assert doc["summary"]["requirements"] >= 14
    assert "trace: " in p.stderr and p.stdout == ""
    # the evidence is read from the folder given: a broken report there is named
    (ev / "junit.xml").write_text("<testsuites><unclosed>")
    p = sonnx_cmd("trace", "--root", str(ROOT), "--evidence", str(ev), cwd=tmp_path)
    assert p.returncode == 2 and f"{ev / 'junit.xml'}: not well-formed XML" in p.stderr
    # outside a checkout, without --root: a clear refusal
    p = sonnx_cmd("trace", cwd=tmp_path)
    assert p.returncode == 2 and "give one with --root DIR" in p.stderr and "Traceback" not in p.stderr
    p = sonnx_cmd("trace", "--root", str(tmp_path), cwd=tmp_path)
    assert p.returncode == 2 and "is not a sonnx checkout" in p.stderr
    p = sonnx_cmd("trace", "--root", str(ROOT), "--evidence", str(tmp_path / "none"), cwd=tmp_path)
    assert p.returncode == 2 and "is not a directory" in p.stderr


def test_trace_output_file_is_one_file_and_output_dir_a_folder(tmp_path, capsys):
    ev = _evidence(tmp_path)
    base = ["trace", "--root", str(ROOT), "--evidence", str(ev)]
    code, out, err = run([*base, "--format", "md,json", "-o", str(tmp_path / "t.md")], capsys)
    assert code == 2 and "-o/--output-file takes one format, not 2; use --output-dir DIR" in err
    code, out, err = run([*base, "--format", "md,csv", "--output-dir", str(tmp_path / "dir")], capsys)
    assert code in (0, 1) and out == ""
    assert sorted(p.name for p in (tmp_path / "dir").iterdir()) == ["trace.csv", "trace.md"]
    code, out, loud = run([*base, "--format", "json"], capsys)
    code_q, out_q, quiet = run([*base, "--format", "json", "-q"], capsys)
    same = [json.loads(text) for text in (out, out_q)]
    for report in same:          # the time the matrix was made is the one field two runs may differ in
        report["inputs"].pop("made_utc")
    assert code == code_q == 1 and same[0] == same[1]   # -q: the report stays
    assert quiet.count("\n") == 1 and quiet.startswith("trace: ") and len(loud.splitlines()) > 1
    with pytest.raises(SystemExit) as exc:
        main([*base, "-o", str(tmp_path / "a"), "--output-dir", str(tmp_path / "b")])
    assert exc.value.code == 2
    capsys.readouterr()
