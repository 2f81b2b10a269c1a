"""The evidence runner (tools/sonnx_dev/evidence.py) and the pinned environment.

The proof replay and the CrossHair campaign are not run here: they are steps of
tools/evidence, whose outputs the trace judges (tests/trace/test_evidence_judge.py). These
tests drive the runner with small stand-in steps.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from sonnx_dev import evidence

ROOT = Path(__file__).resolve().parents[1]


def _step(name: str, code: str) -> tuple[str, list[str], dict[str, str]]:
    return name, [sys.executable, "-c", code], {}


@pytest.fixture
def bundle(tmp_path, capsys):
    out = tmp_path / "evidence"
    out.mkdir()
    (out / "planted.txt").write_text("left over from an earlier run")
    steps = [_step("ok", "print('3 passed, 1 skipped in 0.5s')"),
             _step("bad", "import sys; print('boom'); sys.exit(3)"),
             _step("writes", f"open({str(out / 'result.json')!r}, 'w').write('{{}}')")]
    rc = evidence.run(steps, out)
    return out, rc, capsys.readouterr().out


def test_a_failing_step_fails_the_run_and_is_shown(bundle):
    out, rc, printed = bundle
    assert rc == 1
    summary = json.loads((out / "summary.json").read_text())
    assert [(s["step"], s["verdict"], s["exit_code"]) for s in summary["steps"]] == [
        ("ok", "pass", 0), ("bad", "FAIL", 3), ("writes", "pass", 0)]
    assert "FAILED steps: bad" in printed
    assert "boom" in (out / "logs" / "bad.log").read_text()
    page = (out / "index.html").read_text()
    assert "FAILED" in page and page.index(">bad<") < page.index(">FAIL<", page.index(">bad<"))


def test_every_step_passing_exits_0(tmp_path, capsys):
    assert evidence.run([_step("ok", "pass")], tmp_path / "e") == 0
    assert "every step passed" in capsys.readouterr().out


def test_the_bundle_is_emptied_and_sha256sums_lists_exactly_what_the_run_made(bundle):
    out, _, _ = bundle
    assert not (out / "planted.txt").exists()
    listed = sorted(line.split("  ", 1)[1] for line in (out / "SHA256SUMS").read_text().splitlines())
    made = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != "SHA256SUMS")
    assert listed == made
    assert {"manifest.json", "summary.json", "index.html", "result.json", "logs/ok.log"} <= set(listed)
    check = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=out, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    (out / "result.json").write_text('{"tampered": true}')
    assert subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=out,
                          capture_output=True).returncode != 0


def test_progress_lines_carry_elapsed_time_and_the_pytest_summary_is_printed_bare(bundle):
    _, _, printed = bundle
    lines = printed.splitlines()
    assert any(line.endswith("s ok | 3 passed, 1 skipped in 0.5s") for line in lines)
    assert evidence.pytest_summary(Path(bundle[0]) / "logs" / "ok.log") == "3 passed, 1 skipped in 0.5s"


def test_a_silent_step_shows_that_it_is_still_running(tmp_path, capsys):
    rc, _ = evidence._run("slow", [sys.executable, "-c", "import time; time.sleep(1.2); print('done')"], {},
                          tmp_path / "slow.log", 0.0, quiet_after=0.4)
    printed = capsys.readouterr().out
    assert rc == 0 and "slow | (still running" in printed and printed.rstrip().endswith("slow | done")


def test_pytest_summary_forms(tmp_path):
    log = tmp_path / "test.log"
    log.write_text("....\n===== 2 failed, 40 passed, 3 skipped in 12.01s =====\n")
    assert evidence.pytest_summary(log) == "2 failed, 40 passed, 3 skipped in 12.01s"
    log.write_text("collected 0 items\nno summary here\n")
    assert evidence.pytest_summary(log) is None


def test_manifest_records_machine_packages_blas_and_inputs(bundle):
    out, _, _ = bundle
    man = json.loads((out / "manifest.json").read_text())
    for name in ("numpy", "llvmlite", "onnx", "crosshair-tool", "z3-solver", "pytest"):
        assert name in man["packages"], name
    assert man["jit"]["llvmlite"] == man["packages"]["llvmlite"] != "not installed"
    assert man["blas"]["loaded"], "no BLAS library seen by threadpoolctl"
    assert "blas" in man["blas"]["numpy_build"]
    assert man["cpu"]["cores"] >= 1 and man["date_utc"].endswith("+00:00")
    if Path("/proc/cpuinfo").exists():
        assert man["cpu"]["model name"] and isinstance(man["cpu"]["flags"], list)
    assert set(man["inputs"]) == {"proofs", "crosshair", "tests"}
    assert all(len(v["sha256"]) == 64 for v in man["inputs"].values())
    assert len(man["git"]["commit"]) == 40 or man["git"]["commit"] == "unknown"


def test_dirty_counts_untracked_files(tmp_path):
    def git(*a):
        subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)
    git("init", "-q")
    (tmp_path / "a.txt").write_text("a")
    git("add", "a.txt")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a")
    assert evidence.git_state(tmp_path)["dirty"] is False
    (tmp_path / "new.txt").write_text("untracked")
    state = evidence.git_state(tmp_path)
    assert state["dirty"] is True and state["changes"] == ["?? new.txt"]


def test_the_lock_pins_every_dependency():
    lock = {}
    for line in (ROOT / "requirements-dev.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and version, f"not pinned: {line}"
            lock[name.lower().replace("_", "-")] = version
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["dev"]
    for spec in wanted:
        name = spec.split(";")[0].split("[")[0]
        for op in ("==", ">=", "<=", "~=", ">", "<"):
            name = name.split(op)[0]
        assert name.strip().lower().replace("_", "-") in lock, f"{spec} is not in requirements-dev.lock"


def _runs_an_evidence_tool(source: str) -> bool:
    """Whether test code names tools/prove or tools/crosshair outside its docstrings."""
    import ast
    tree = ast.parse(source)
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    consts = {n.value for n in ast.walk(tree)
              if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs}
    return any(c in ("tools/prove", "tools/crosshair") for c in consts) or (
        "tools" in consts and bool(consts & {"prove", "crosshair"}))


# runs copies of the tools/ scripts in a scratch tree whose .venv and tools are stubs (--help,
# missing prerequisites): the real proofs and campaign can never start there
SCRATCH_COPIES = {ROOT / "tests" / "cli" / "test_tools.py"}


def test_no_test_reruns_the_proofs_or_the_campaign():
    """tools/test runs only the tests: the slow evidence tools are steps of tools/evidence."""
    offenders = [py for py in (ROOT / "tests").rglob("test_*.py")   # this file names them to plant them
                 if py != Path(__file__).resolve() and py not in SCRATCH_COPIES
                 and _runs_an_evidence_tool(py.read_text())]
    assert offenders == []
    assert all(_runs_an_evidence_tool(py.read_text()) for py in SCRATCH_COPIES)   # still needed
    # the check sees the two forms such a test takes
    assert _runs_an_evidence_tool('import subprocess\nsubprocess.run([str(ROOT / "tools" / "prove")])\n')
    assert _runs_an_evidence_tool('run(["tools/crosshair"])\n')
    assert not _runs_an_evidence_tool('"""Run with tools/crosshair."""\n')


def test_crosshair_runs_beside_the_next_steps_and_is_joined_before_the_trace(tmp_path, capsys):
    """The campaign step starts, the tests start while it runs (it waits for their mark, so run
    one after the other it would fail), and the trace starts only once the campaign is done."""
    mark, done = tmp_path / "test-started", tmp_path / "crosshair-done"
    wait = (f"import pathlib, sys, time\nfor _ in range(600):\n    if pathlib.Path({str(mark)!r}).exists(): break\n"
            f"    time.sleep(0.05)\nelse: sys.exit(1)\ntime.sleep(0.3)\npathlib.Path({str(done)!r}).write_text('x')")
    steps = [_step("crosshair", wait), _step("test", f"open({str(mark)!r}, 'w').write('x')"),
             _step("trace", f"import pathlib, sys; sys.exit(0 if pathlib.Path({str(done)!r}).exists() else 4)")]
    assert evidence.run(steps, tmp_path / "e") == 0
    summary = json.loads((tmp_path / "e" / "summary.json").read_text())
    assert [(s["step"], s["verdict"]) for s in summary["steps"]] == [
        ("crosshair", "pass"), ("test", "pass"), ("trace", "pass")]
    assert "crosshair: " in capsys.readouterr().out


def test_a_failing_step_beside_the_others_still_fails_the_run(tmp_path, capsys):
    steps = [_step("crosshair", "import sys; sys.exit(5)"), _step("test", "pass")]
    assert evidence.run(steps, tmp_path / "e") == 1
    summary = json.loads((tmp_path / "e" / "summary.json").read_text())
    assert [(s["step"], s["exit_code"]) for s in summary["steps"]] == [("crosshair", 5), ("test", 0)]
    assert "FAILED steps: crosshair" in capsys.readouterr().out
