"""The determinism check (tools/sonnx_dev/compare_runs.py) can fail: a flipped verdict, a lost
case or goal, a hang guard, files of different trees or kinds are all reported, and a run that
differs only in its counts is not called a verdict change."""
from __future__ import annotations

import copy
import json

import pytest

from sonnx_dev import compare_runs

CROSSHAIR = {
    "tool": "crosshair", "ok": True, "hang_guard_hit": [], "inputs": {"sha256": "aa"},
    "harnesses": [{"name": "mul-signed", "result": "ok", "cases": [
        {"case": "int8.scalar", "verdict": "confirmed", "status": "CONFIRMED", "ok": True,
         "iterations": 2, "spec_reached": 1, "confirmed_paths": 1}]}],
    "witnesses": [{"harness": "mul-signed", "name": "never-wraps", "refuted": True, "hang_guard_hit": False,
                   "iterations": 1, "counterexample": {"replayed": True, "args": "((127,), (2,))"}}],
    "mutants": [{"name": "wrap_edge", "caught": True, "caught_by": "int8.scalar",
                 "targets": [{"case": "int8.scalar", "caught": True, "hang_guard_hit": False,
                              "iterations": 1, "counterexample": {"args": "((1,), (0,))"}}]}],
}
PROOFS = {
    "ok": True, "hang_guard_hit": [], "inputs": {"sha256": "bb"}, "assumptions": [],
    "replay": {"proofs/mul.mlw": 0},
    "goals": [{"file": "proofs/mul.mlw", "theory": "Mul", "goal": "mul_shape", "prover": "z3",
               "result": "valid", "steps": 1234}],
    "python_frontend": {"vcs": [{"file": "src/sonnx/semantics/intloops.py", "goal": "wrap",
                                 "vc": "postcondition", "prover": "cvc5", "result": "valid", "steps": 9}]},
}


def _run(tmp_path, a, b, capsys):
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    rc = compare_runs.main([str(pa), str(pb)])
    return rc, capsys.readouterr()


@pytest.mark.parametrize("base", [CROSSHAIR, PROOFS], ids=["crosshair", "proofs"])
def test_identical_runs_agree(tmp_path, capsys, base):
    rc, out = _run(tmp_path, base, copy.deepcopy(base), capsys)
    assert rc == 0 and "verdicts different: 0" in out.out


def _flip(path):
    def edit(s):
        *walk, last = path
        for key in walk:
            s = s[key]
        s[last] = {True: False, "valid": "timeout", "confirmed": "no counterexample", 0: 1}[s[last]]
    return edit


@pytest.mark.parametrize("base, path", [
    (CROSSHAIR, ("harnesses", 0, "cases", 0, "verdict")),
    (CROSSHAIR, ("witnesses", 0, "refuted")),
    (CROSSHAIR, ("mutants", 0, "targets", 0, "caught")),
    (CROSSHAIR, ("ok",)),
    (PROOFS, ("goals", 0, "result")),
    (PROOFS, ("python_frontend", "vcs", 0, "result")),
    (PROOFS, ("replay", "proofs/mul.mlw")),
], ids=["case", "witness", "mutant", "campaign", "goal", "vc", "replay"])
def test_a_flipped_verdict_is_found(tmp_path, capsys, base, path):
    other = copy.deepcopy(base)
    _flip(path)(other)
    rc, out = _run(tmp_path, base, other, capsys)
    assert rc == 1 and "verdicts different: 1" in out.out and "VERDICT" in out.out


def test_a_lost_case_or_a_hang_guard_is_a_verdict_change(tmp_path, capsys):
    lost = copy.deepcopy(CROSSHAIR)
    lost["harnesses"][0]["cases"] = []
    assert _run(tmp_path, CROSSHAIR, lost, capsys)[0] == 1
    guard = copy.deepcopy(PROOFS)
    guard["hang_guard_hit"] = ["proofs/mul.mlw"]
    assert _run(tmp_path, PROOFS, guard, capsys)[0] == 1


def test_counts_alone_are_details_not_verdicts(tmp_path, capsys):
    other = copy.deepcopy(CROSSHAIR)
    other["harnesses"][0]["cases"][0]["iterations"] = 3
    rc, out = _run(tmp_path, CROSSHAIR, other, capsys)
    assert rc == 0 and "different: 1" in out.out and "detail  case mul-signed/int8.scalar" in out.out


@pytest.mark.parametrize("edit", [
    lambda s: s["inputs"].update(sha256="other tree"),
    lambda s: s.pop("inputs"),
], ids=["other-tree", "no-hash"])
def test_runs_of_different_trees_are_not_compared(tmp_path, capsys, edit):
    other = copy.deepcopy(CROSSHAIR)
    edit(other)
    rc, out = _run(tmp_path, CROSSHAIR, other, capsys)
    assert rc == 2 and "different inputs" in out.err


def test_different_kinds_or_unreadable_files_are_refused(tmp_path, capsys):
    rc, out = _run(tmp_path, CROSSHAIR, PROOFS, capsys)
    assert rc == 2 and "not two results of one step" in out.err
    (tmp_path / "bad.json").write_text("{")
    assert compare_runs.main([str(tmp_path / "bad.json"), str(tmp_path / "bad.json")]) == 2
    assert "cannot compare" in capsys.readouterr().err
