"""tools/bundle: an evidence bundle is verified (hashes, records, verdicts re-judged) and two are
compared; each check is shown failing on a planted fault."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sonnx_dev import bundle, evidence

pytestmark = pytest.mark.req("@every")

TRACE = {"schema": "sonnx-trace/5",
         "summary": {"requirements": 2, "ok": 1, "partial": 1, "suspect": 0, "defect": 0, "defects": 0},
         "requirements": [{"id": "A-R1", "state": "ok"}, {"id": "A-R2", "state": "partial"}]}


def _bundle(folder: Path, commit="c0ffee", trace=TRACE, verdict="pass") -> Path:
    (folder / "trace").mkdir(parents=True)
    (folder / "trace" / "trace.json").write_text(json.dumps(trace))
    (folder / "manifest.json").write_text(json.dumps({"git": {"commit": commit, "dirty": False}}))
    steps = [{"step": "replay", "exit_code": 0 if verdict == "pass" else 1, "verdict": verdict}]
    (folder / "summary.json").write_text(json.dumps({"commit": commit, "steps": steps}))
    (folder / "junit.xml").write_text("<testsuites/>")
    (folder / "SHA256SUMS").write_text(evidence.sha256sums(folder))
    return folder


def _at(monkeypatch, commit, dirty=False):
    monkeypatch.setattr(bundle, "git_state", lambda root: {"commit": commit, "dirty": dirty})


def test_an_intact_bundle_at_its_commit_verifies(tmp_path, monkeypatch):
    b = _bundle(tmp_path / "b")
    _at(monkeypatch, "c0ffee")
    problems, notes = bundle.verify(b, make=lambda folder, root: copy.deepcopy(TRACE))
    assert problems == [] and "same states" in notes[0]


@pytest.mark.parametrize("plant", ["edited", "added", "removed"])
def test_a_file_changed_after_the_run_is_caught(tmp_path, plant):
    b = _bundle(tmp_path / "b")
    if plant == "edited":
        (b / "junit.xml").write_text("<testsuites><x/></testsuites>")
    elif plant == "added":
        (b / "proofs.json").write_text("{}")
    else:
        (b / "junit.xml").unlink()
    problems = bundle.hash_problems(b)
    assert len(problems) == 1
    assert {"edited": "changed since the run", "added": "not listed", "removed": "missing"}[plant] in problems[0]


def test_records_that_disagree_are_caught(tmp_path):
    b = _bundle(tmp_path / "b")
    summ = json.loads((b / "summary.json").read_text())
    summ["commit"] = "other"
    summ["steps"][0]["verdict"] = "FAIL"          # a failing verdict over exit code 0
    (b / "summary.json").write_text(json.dumps(summ))
    problems = bundle.record_problems(b)
    assert any("names commit other" in p for p in problems) and any("exit code 0" in p for p in problems)


def test_a_verdict_the_judge_does_not_give_again_is_caught(tmp_path, monkeypatch):
    b = _bundle(tmp_path / "b")
    _at(monkeypatch, "c0ffee")
    again = copy.deepcopy(TRACE)
    again["requirements"][1]["state"] = "defect"
    again["summary"].update(partial=0, defect=1)
    problems, _ = bundle.verify(b, make=lambda folder, root: again)
    assert "A-R2: re-judged defect vs recorded partial" in problems
    assert any(p.startswith("trace summary re-judged") for p in problems)


def test_another_commit_or_local_changes_are_never_reported_as_verified(tmp_path, monkeypatch):
    b = _bundle(tmp_path / "b")
    for commit, dirty in (("beef", False), ("c0ffee", True)):
        _at(monkeypatch, commit, dirty)
        problems, notes = bundle.verify(b, make=lambda folder, root: pytest.fail("must not re-judge"))
        assert notes == [] and len(problems) == 1 and problems[0].startswith("not re-judged")


def test_compare_lists_every_differing_verdict_and_state(tmp_path):
    a = _bundle(tmp_path / "a")
    assert bundle.compare(a, _bundle(tmp_path / "same")) == []
    other = copy.deepcopy(TRACE)
    other["requirements"][0]["state"] = "suspect"
    other["summary"].update(ok=0, suspect=1)
    diffs = bundle.compare(a, _bundle(tmp_path / "b", trace=other, verdict="FAIL"))
    assert "step replay: pass vs FAIL" in diffs and "A-R1: ok vs suspect" in diffs
    assert any(d.startswith("trace summary") for d in diffs) and len(diffs) == 3


def test_the_command_says_one_line_on_a_folder_that_is_not_a_bundle(tmp_path):
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([str(root / "tools" / "bundle"), "verify", str(tmp_path)], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "no SHA256SUMS" in p.stderr, p.stderr


def test_a_recheck_beside_a_sealed_bundle_writes_elsewhere(tmp_path):
    from sonnx.trace.inputs import result_path
    assert result_path(tmp_path, "proofs.json") == tmp_path / "build" / "evidence" / "proofs.json"
    _bundle(tmp_path / "build" / "evidence")          # a run sealed its bundle there
    assert result_path(tmp_path, "proofs.json") == tmp_path / "build" / "recheck" / "proofs.json"
    assert result_path(tmp_path, "crosshair.json").parent.is_dir()
