"""What a newcomer meets in the first hour, beyond validate's text (tests/validate/
test_text_short.py): `sonnx trace` in a fresh clone, `sonnx conform` whose bit-identity check
did not run (asked with --no-check, or onnxruntime missing), and the example workflow for code
scanning."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from ..validate.test_cli import run   # main(argv) with captured streams, never a traceback

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- sonnx trace without evidence
def test_trace_without_evidence_says_so_in_one_line(tmp_path, capsys):
    empty = tmp_path / "evidence"
    empty.mkdir()
    for args in (["--evidence", str(empty)], []):   # given, and the default ROOT/build/evidence
        code, out, err = run(["trace", "--root", str(_bare_checkout(tmp_path)), *args], capsys)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert "no evidence found" in err and "run tools/evidence, or pass --evidence DIR" in err


def test_trace_with_some_evidence_still_judges(tmp_path, capsys):
    """The refusal is for no evidence at all: one file of it and the matrix is made."""
    ev = tmp_path / "evidence"
    ev.mkdir()
    (ev / "junit.xml").write_text("<testsuites/>")
    code, out, err = run(["trace", "--root", str(_bare_checkout(tmp_path)), "--evidence", str(ev),
                          "--format", "json"], capsys)
    assert code == 1 and json.loads(out)["summary"]["requirements"] >= 31
    assert "no evidence found" not in err


def _bare_checkout(tmp_path: Path) -> Path:
    """A copy of what `trace --root` reads from a fresh clone, without build/."""
    root = tmp_path / "clone"
    if not root.exists():
        import shutil
        for part in ("spec", "src", "tests", "proofs", "tools", "pyproject.toml", "README.md"):
            src = ROOT / part
            if src.is_dir():
                shutil.copytree(src, root / part, ignore=shutil.ignore_patterns("__pycache__", "build"))
            elif src.exists():
                shutil.copy(src, root / part)
    return root


# ---------------------------------------------------------------- conform without the check
@pytest.fixture
def mlp(tmp_path) -> Path:
    src = tmp_path / "mlp.onnx"
    src.write_bytes((ROOT / "examples" / "pytorch_mlp" / "mlp.onnx").read_bytes())
    return src


def _says_conforms(stdout: str) -> bool:
    return any(": conforms" in line for line in stdout.splitlines())


@pytest.mark.req("PROF-R2", "GEMM-R4")
def test_conform_no_check_reports_not_checked_never_conforms(mlp, tmp_path, capsys):
    out = tmp_path / "o.onnx"
    code, stdout, _ = run(["conform", str(mlp), "-o", str(out), "--dim", "batch=4", "--no-check"], capsys)
    report = json.loads((tmp_path / "o.onnx.conform.json").read_text())
    assert code == 1 and report["check"]["status"] == "not checked" and report["exit_code"] == 1
    last = stdout.splitlines()[-2]
    assert "not checked" in last and not _says_conforms(stdout), stdout
    assert stdout.splitlines()[-1].startswith("next: run conform again without --no-check")
    # the same model, checked, does conform: --no-check changed the verdict and nothing else
    pytest.importorskip("onnxruntime")
    code, stdout, _ = run(["conform", str(mlp), "-o", str(out), "--dim", "batch=4"], capsys)
    assert code == 0 and _says_conforms(stdout)


@pytest.mark.req("PROF-R2", "GEMM-R4")
def test_conform_without_onnxruntime_never_says_conforms(mlp, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)   # import onnxruntime raises ImportError
    code, stdout, _ = run(["conform", str(mlp), "-o", str(tmp_path / "o.onnx"), "--dim", "batch=4"], capsys)
    assert code == 1 and not _says_conforms(stdout), stdout
    assert "bit-identity check NOT CHECKED: onnxruntime is not installed" in stdout


@pytest.mark.req("PROF-R2")
def test_the_check_catches_a_verdict_made_of_findings_only(mlp, tmp_path, capsys, monkeypatch):
    """Planted: the verdict as it was (no finding left: "conforms", whatever the check said)."""
    from sonnx.conform import cli
    monkeypatch.setattr(cli, "verdict", lambda report: "conforms" if not report["findings"] else "does not conform")
    code, stdout, _ = run(["conform", str(mlp), "-o", str(tmp_path / "o.onnx"), "--dim", "batch=4",
                           "--no-check"], capsys)
    assert code == 1 and _says_conforms(stdout)        # what the test above rejects


@pytest.mark.req("PROF-R2", "GEMM-R4")
def test_conform_without_dim_says_which_dimension_to_pin_in_one_line(mlp, tmp_path, capsys):
    code, stdout, _ = run(["conform", str(mlp), "-o", str(tmp_path / "o.onnx")], capsys)
    lines = stdout.splitlines()
    assert code == 1 and lines[-1] == "next: pin batch: run conform again with --dim batch=SIZE"
    findings = json.loads((tmp_path / "o.onnx.conform.json").read_text())["findings"]
    left = [line for line in lines if line.startswith("left ")]
    assert len(findings) == 8 and len(left) == len({f["rule"] for f in findings}) == 3   # one per rule
    code, verbose, _ = run(["conform", "-v", str(mlp), "-o", str(tmp_path / "o.onnx")], capsys)
    assert verbose.count("why not rewritten:") == 8          # -v: every finding and its reason


# ---------------------------------------------------------------- the code-scanning workflow
def test_the_example_workflow_validates_to_sarif_and_uploads_it():
    flow = yaml.safe_load((ROOT / "docs" / "code-scanning.yml").read_text())
    steps = flow["jobs"]["validate"]["steps"]
    runs = " ".join(s.get("run", "") for s in steps)
    assert "sonnx validate --format sarif -o sonnx.sarif" in runs and "--exit-zero" in runs
    assert '--help-base "$SONNX_BROWSE"' in runs and flow["env"]["SONNX_BROWSE"].endswith("/")
    (upload,) = [s for s in steps if "upload-sarif" in s.get("uses", "")]
    assert upload["with"]["sarif_file"] == "sonnx.sarif"
    assert flow["permissions"]["security-events"] == "write"
    assert not flow["env"]["MODELS"].startswith("/")       # relative: GH1006 needs no checkout path
    assert "pip install sonnx" not in runs                 # not on PyPI
