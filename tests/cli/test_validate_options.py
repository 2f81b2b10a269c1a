"""`sonnx validate` options in the conventions of ruff and mypy, each through the command line
(sonnx.cli.main with captured streams): --select/--ignore, --exit-zero, -q/-v, directories,
-o/--output-file, errors on stderr, exit codes."""
from __future__ import annotations

import json
import os

import onnx
import pytest

from sonnx.cli import main
from sonnx.validate.selection import all_rules

from ..validate import models as M
from ..validate.test_cli import run   # main(argv) with captured streams, never a traceback


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """good.onnx (conforms), sub/bcast.onnx (MUL-R4), sub/deeper/gemm_bias.onnx (GEMM-R4) and a
    hidden folder whose model must not be picked up; the current directory has no config."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "models" / ".hidden").mkdir()
    onnx.save(M.mul([2, 3], [2, 3]), tmp_path / "models" / "good.onnx")
    onnx.save(M.mul([2, 3], [3]), tmp_path / "models" / "sub" / "bcast.onnx")
    onnx.save(M.gemm([2, 3], [3, 4], [4]), tmp_path / "models" / "sub" / "deeper" / "gemm_bias.onnx")
    onnx.save(M.mul([2, 3], [3]), tmp_path / "models" / ".hidden" / "skipped.onnx")
    (tmp_path / "models" / "notes.txt").write_text("not a model")
    return tmp_path / "models"


@pytest.mark.req("MUL-R4", "GEMM-R4")
def test_a_directory_is_searched_for_models_in_sorted_order(tree, capsys):
    code, out, _ = run(["validate", "--format", "json", str(tree)], capsys)
    doc = json.loads(out)
    assert code == 1
    assert [m["source"] for m in doc["models"]] == [
        str(tree / "good.onnx"), str(tree / "sub" / "bcast.onnx"),
        str(tree / "sub" / "deeper" / "gemm_bias.onnx")]
    assert [m["status"] for m in doc["models"]] == ["conforms", "violations", "violations"]


def test_a_directory_that_cannot_be_read_is_an_error(tree, capsys, monkeypatch):
    """os.walk reports a folder it cannot list through onerror (tests run as root here, which
    reads any folder: the refusal is planted in os.scandir)."""
    locked = str(tree / "sub" / "deeper")
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real(path)
    monkeypatch.setattr(os, "scandir", scandir)
    code, out, err = run(["validate", str(tree)], capsys)
    assert code == 2 and out == "" and f"cannot read the directory {locked}: Permission denied" in err


def test_a_directory_without_models_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    code, out, err = run(["validate", str(tmp_path / "empty")], capsys)
    assert code == 2 and out == "" and "no *.onnx file under the directory" in err


@pytest.mark.req("MUL-R4")
def test_select_by_prefix_reports_only_those_rules_and_says_what_was_not_checked(tree, capsys):
    code, out, _ = run(["validate", "--select", "MUL", str(tree)], capsys)
    assert code == 1 and "[MUL-R4]" in out and "[GEMM-R4]" not in out
    not_checked = [r for r in all_rules() if not r.startswith("MUL-")]
    assert (f"not checked ({len(not_checked)} rule(s) left out by select/ignore, from the command "
            f"line or [tool.sonnx.validate]): {', '.join(not_checked)}") in out
    assert "conforms to the SONNX profile" not in out   # nothing is conformant in a partial run
    assert f"good.onnx: no violation of the rules checked (not a conformance verdict: " \
           f"{len(not_checked)} rule(s) not checked)" in out


@pytest.mark.req("GEMM-R4")
def test_select_by_id_and_ignore_in_every_format(tree, capsys):
    gemm = str(tree / "sub" / "deeper" / "gemm_bias.onnx")
    good = str(tree / "good.onnx")
    code, out, _ = run(["validate", "--select", "GEMM-R4", "--format", "json", gemm, good], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["conforms"] is False
    assert doc["not_checked"] == [r for r in all_rules() if r != "GEMM-R4"]
    assert [m["status"] for m in doc["models"]] == ["violations", "partial"]
    # ignoring the one rule broken: exit 0, but still not called conformant
    code, out, _ = run(["validate", "--ignore", "gemm-r4", "--format", "sarif", gemm], capsys)
    log = json.loads(out)["runs"][0]
    assert code == 0 and log["results"] == []
    inv = log["invocations"][0]
    index = all_rules().index("GEMM-R4")
    assert inv["ruleConfigurationOverrides"] == [{"descriptor": {"id": "GEMM-R4", "index": index},
                                                  "configuration": {"enabled": False}}]
    assert log["tool"]["driver"]["rules"][index]["id"] == "GEMM-R4"
    assert [n["level"] for n in inv["toolExecutionNotifications"]] == ["warning"]
    assert "GEMM-R4" in inv["toolExecutionNotifications"][0]["message"]["text"]
    # repeated options add up, as ruff's do
    code, out, _ = run(["validate", "--select", "GEMM-R4", "--select", "MUL", "--format", "json", gemm], capsys)
    assert "GEMM-R4" not in json.loads(out)["not_checked"] and "MUL-R1" not in json.loads(out)["not_checked"]
    # with every rule checked, nothing is said to be left out
    code, out, _ = run(["validate", "--format", "json", good], capsys)
    assert code == 0 and json.loads(out)["not_checked"] == [] and json.loads(out)["conforms"] is True


@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_a_selector_naming_no_rule_is_a_usage_error(tree, capsys, option):
    code, out, err = run(["validate", option, "MUL,GEMM-R", str(tree)], capsys)
    assert code == 2 and out == ""
    assert err == (f"sonnx validate: {option} 'GEMM-R' names no rule; give a requirement ID "
                   "or a prefix of one (e.g. MUL, GEMM, PROF, ONNX): `sonnx requirements` lists "
                   "the IDs\n")
    # a prefix matches whole segments of an ID, never part of one
    assert run(["validate", option, "MUL-R", str(tree)], capsys)[0] == 2


@pytest.mark.parametrize("argv", [["--select", ""], ["--select", "MUL", "--ignore", "MUL"]])
def test_a_selection_of_no_rule_is_a_usage_error(tree, capsys, argv):
    code, out, err = run(["validate", *argv, str(tree)], capsys)
    assert (code, out, err) == (2, "", "sonnx validate: --select and --ignore leave no rule to check\n")


@pytest.mark.req("MUL-R4")
def test_exit_zero_reports_but_does_not_fail(tree, capsys):
    code, out, _ = run(["validate", "--exit-zero", str(tree)], capsys)
    assert code == 0 and "[MUL-R4]" in out
    # an unreadable model still fails: nothing was judged
    code, _, err = run(["validate", "--exit-zero", str(tree / "gone.onnx")], capsys)
    assert code == 2 and "no such file" in err


def test_errors_go_to_stderr_in_every_format(tree, capsys):
    gone = str(tree / "gone.onnx")
    for fmt in ("text", "json", "sarif"):
        code, out, err = run(["validate", "--format", fmt, gone], capsys)
        assert code == 2 and err == f"sonnx validate: {gone}: no such file\n", fmt
    code, out, err = run(["validate", "-o", str(tree / "no" / "dir" / "r.txt"), str(tree)], capsys)
    assert code == 2 and out == "" and err.startswith("sonnx validate: cannot write ")


@pytest.mark.req("MUL-R4")
def test_quiet_and_verbose(tree, capsys):
    many = tree / "many.onnx"
    m = M.chain(30)
    for vi in list(m.graph.input) + list(m.graph.output):
        vi.type.tensor_type.shape.dim[0].dim_param = "N"
    onnx.save(m, many)
    _, normal, _ = run(["validate", str(tree)], capsys)
    _, quiet, _ = run(["validate", "-q", str(tree)], capsys)
    _, verbose, _ = run(["validate", "-v", str(tree)], capsys)
    assert "good.onnx: conforms" in normal and "good.onnx" not in quiet
    assert "[MUL-R4] No broadcasting: 1" in quiet and "main/mul" not in quiet
    assert "more (--format json lists all)" in normal and "more (" not in verbose
    prof = [line for line in verbose.splitlines() if line.startswith("    ") and "'N'" in line]
    assert len(prof) > 10 and "good.onnx: conforms to the SONNX profile (1 node, " in verbose
    with pytest.raises(SystemExit) as exc:   # -q and -v together make no sense
        main(["validate", "-q", "-v", str(tree)])
    assert exc.value.code == 2
    capsys.readouterr()


def test_output_file_means_a_file_for_every_subcommand(tree, tmp_path, capsys):
    report = tmp_path / "out" / "report.json"
    report.parent.mkdir()
    code, out, _ = run(["validate", "--format", "json", "--output-file", str(report), str(tree)], capsys)
    assert code == 1 and out == "" and json.loads(report.read_text())["models"]
    listed = tmp_path / "out" / "requirements.txt"
    assert run(["requirements", "-o", str(listed)], capsys)[1] == ""
    assert listed.read_text().startswith("PROF-R1  Profile operators only")
    with pytest.raises(SystemExit):
        main(["validate", "--output", str(report), str(tree)])   # the old spelling is gone
    capsys.readouterr()


@pytest.mark.req("MUL-R4")
def test_colour_never_reaches_a_file_or_a_pipe(tree, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    code, out, _ = run(["validate", str(tree)], capsys)     # captured: not a terminal
    assert "\x1b[" not in out
    monkeypatch.setenv("NO_COLOR", "1")      # an explicit --color always wins over NO_COLOR
    code, out, _ = run(["validate", "--color", "always", str(tree)], capsys)
    assert "\x1b[1;33m[MUL-R4]\x1b[0m" in out and "\x1b[1;31m1 violation of 1 rule" in out
    report = tmp_path / "r.txt"
    run(["validate", "--color", "always", "-o", str(report), str(tree)], capsys)
    assert "[MUL-R4]" in report.read_text() and "\x1b[" not in report.read_text()


@pytest.mark.req("MUL-R4")
def test_a_name_in_a_model_cannot_carry_an_escape_even_in_colour(tmp_path, capsys):
    m = M.mul([2, 3], [3])
    m.graph.node[0].name = "evil\x1b[2Jname"
    p = tmp_path / "evil.onnx"
    onnx.save(m, p)
    _, out, _ = run(["validate", "--color", "always", str(p)], capsys)
    assert "evil\\x1b[2Jname" in out and "\x1b[2J" not in out
