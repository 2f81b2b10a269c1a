"""`sonnx trace --format lobster`: the files are read by the real LOBSTER tools (bmw-lobster-core,
run as external programs: it is AGPLv3 and never imported), every requirement and every link
arrives, and a row sonnx judges red is not green in LOBSTER (LOBSTER counts links, not results).
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sonnx.trace import lobster
from sonnx.trace.matrix import Defect, Matrix, Row

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[2]


def _tool(name: str) -> str:
    exe = BIN / name
    if not exe.exists():
        pytest.fail(f"{name} is not installed in {BIN}: tools/setup installs bmw-lobster-core (requirements-dev.lock)")
    return str(exe)


def _row(rid: str, *, proof="proved", test="passed", defects=(), gap=None) -> Row:
    r = Row(id=rid, title=f"title of {rid}", statement=f"statement of {rid}", verification=["proof", "test"])
    r.spec = [{"path": "spec/x.md", "line": 3}]
    r.code = [{"path": "src/sonnx/ops/x.py", "line": 10, "name": "check"}]
    r.proof = [{"path": "proofs/x.mlw", "line": 5, "goal": f"goal_{rid.lower().replace('-', '_')}",
                "status": proof, "prover": "z3"}]
    r.test = [{"test": "tests/ops/test_x.py::test_shared", "path": "tests/ops/test_x.py", "line": 7,
               "status": "passed", "passed": 1, "failed": 0, "skipped": 0, "failures": []},
              {"test": f"tests/ops/test_x.py::test_{rid[-1]}", "path": "tests/ops/test_x.py", "line": 9,
               "status": test, "passed": int(test == "passed"), "failed": int(test == "failed"),
               "skipped": 0, "failures": ["AssertionError: planted"] if test == "failed" else []}]
    r.crosshair = [{"harness": "tests/crosshair/x_cases.py::h", "status": "no counterexample"}]
    r.defects = [Defect(k, rid, d) for k, d in defects]
    if gap:
        r.claims = [{"part": "a part", "level": "gap", "proof": [], "crosshair": [], "test": [], "gap": gap}]
    return r


def _report(tmp_path: Path, m: Matrix) -> tuple[dict, subprocess.CompletedProcess]:
    for name, text in lobster.render(m).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    made = subprocess.run([_tool("lobster-report"), "--lobster-config", "lobster.conf", "--out", "report.lobster"],
                          cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    ci = subprocess.run([_tool("lobster-ci-report"), "report.lobster"], cwd=tmp_path, capture_output=True,
                        text=True, env=env, timeout=300)
    return json.loads((tmp_path / "report.lobster").read_text(encoding="utf-8")), ci


def _items(report: dict, level: str) -> dict[str, dict]:
    return {i["tag"]: i for lv in report["levels"] if lv["name"] == level for i in lv["items"]}


@pytest.mark.req("@every")
def test_all_green_matrix_is_all_ok_in_lobster_and_every_link_arrives(tmp_path):
    m = Matrix(rows=[_row("X-R1"), _row("X-R2")], orphans=[], inputs={})
    report, ci = _report(tmp_path, m)
    assert ci.returncode == 0, ci.stdout + ci.stderr
    reqs = _items(report, lobster.LEVEL_REQ)
    assert set(reqs) == {"req X-R1", "req X-R2"}
    for rid in ("X-R1", "X-R2"):
        item = reqs[f"req {rid}"]
        assert item["tracing_status"] == "OK"
        down = set(item["ref_down"])
        # every link sonnx found: the code site, the goal, both tests, the harness
        assert {"python src/sonnx/ops/x.py:10:check", f"why3 proofs/x.mlw:goal_{rid.lower().replace('-', '_')}",
                "pytest tests/ops/test_x.py::test_shared", f"pytest tests/ops/test_x.py::test_{rid[-1]}",
                "crosshair tests/crosshair/x_cases.py::h"} <= down
    # a shared test or code site is one item tracing to both rows
    shared = _items(report, lobster.LEVEL_TEST)["pytest tests/ops/test_x.py::test_shared"]
    assert set(shared["ref_up"]) == {"req X-R1", "req X-R2"}
    assert all(lv["coverage"] == 100.0 for lv in report["levels"])


@pytest.mark.req("@every")
@pytest.mark.parametrize("plant", ["failing test", "unproved goal", "stale result", "suspect change"])
def test_a_row_sonnx_judges_red_is_not_green_in_lobster(tmp_path, plant):
    kind, kwargs = {"failing test": ("failing", {"test": "failed"}),
                    "unproved goal": ("unproved", {"proof": "timeout"}),
                    "stale result": ("stale", {}),
                    "suspect change": ("suspect", {})}[plant]
    bad = _row("X-R2", defects=[(kind, f"planted {plant}")], **kwargs)
    m = Matrix(rows=[_row("X-R1"), bad], orphans=[], inputs={})
    assert bad.state in ("defect", "suspect")
    report, ci = _report(tmp_path, m)
    reqs = _items(report, lobster.LEVEL_REQ)
    assert reqs["req X-R1"]["tracing_status"] == "OK"
    assert reqs["req X-R2"]["tracing_status"] not in ("OK", "JUSTIFIED"), reqs["req X-R2"]
    # its links are all kept: the red comes from sonnx's judgement, not from a dropped link
    assert len(reqs["req X-R2"]["ref_down"]) == len(reqs["req X-R1"]["ref_down"])
    assert ci.returncode == 1
    assert f"planted {plant}" in ci.stdout + ci.stderr


@pytest.mark.req("@every")
def test_a_partial_row_is_justified_not_ok_and_carries_its_gap(tmp_path):
    m = Matrix(rows=[_row("X-R1", gap="spec/gaps/X-R1.md")], orphans=[], inputs={})
    report, ci = _report(tmp_path, m)
    item = _items(report, lobster.LEVEL_REQ)["req X-R1"]
    assert item["tracing_status"] == "JUSTIFIED"
    assert any("spec/gaps/X-R1.md" in j for j in item["just_global"])
    assert ci.returncode == 0


@pytest.mark.req("@every")
def test_failed_activity_is_flagged_on_its_own_item(tmp_path):
    bad = _row("X-R1", test="failed", defects=[("failing", "tests/ops/test_x.py::test_1 failed")])
    report, _ = _report(tmp_path, Matrix(rows=[bad], orphans=[], inputs={}))
    act = _items(report, lobster.LEVEL_TEST)["pytest tests/ops/test_x.py::test_1"]
    assert act["status"] == "fail" and act["tracing_status"] != "OK"
    assert any("AssertionError: planted" in msg for msg in act["messages"])


@pytest.mark.req("@every")
def test_cli_refuses_lobster_without_output_dir(tmp_path):
    p = subprocess.run([sys.executable, "-m", "sonnx.cli", "trace", "--root", str(ROOT), "--format", "lobster"],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "--output-dir" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.req("@every")
def test_shipped_code_never_imports_lobster():
    # bmw-lobster-core is AGPLv3: sonnx writes its file format and runs it only in tests
    for py in (ROOT / "src" / "sonnx").rglob("*.py"):
        for node in ast.walk(ast.parse(py.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] == "lobster" for a in node.names), py
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                assert (node.module or "").split(".")[0] != "lobster", py


@pytest.mark.req("@every")
def test_trace_html_anchors_every_row_and_names_its_commit_and_date():
    from sonnx.trace import report
    m = Matrix(rows=[_row("X-R1")], orphans=[], inputs={"junit": "j", "junit_found": True, "crosshair": "c",
                                                         "crosshair_found": True, "proofs": "replay",
                                                         "commit": "deadbeef", "dirty": True,
                                                         "made_utc": "2026-11-28T00:00:00+00:00"})
    page = report.to_html(m)
    assert "<tr id='X-R1'><td><b><a href='#X-R1'>X-R1</a></b></td>" in page
    assert "Made 2026-11-28T00:00:00+00:00 on commit deadbeef with local changes." in page
    assert "Made 2026-11-28T00:00:00+00:00 on commit deadbeef with local changes." in report.to_markdown(m)
