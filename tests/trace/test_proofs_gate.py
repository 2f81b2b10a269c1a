"""The proof step's verdicts (sonnx.trace.proofs, sonnx.trace.proof_assumptions, and the driver
tools/sonnx_dev/prove.py that runs Why3): a fixture per
way a proof can fail, and planted assumptions that Why3's view must catch.

The replay and Python front-end parts feed the functions the output why3 prints (copied from
real runs of Why3 1.5.1 here); the assumption tests run why3 itself on planted copies.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sonnx.trace import proof_assumptions as A
from sonnx.trace import proofs
from sonnx_dev import prove

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.req("MUL-R1", "GEMM-R1")   # the gate the proofs of these go through

HEADER = proofs.HEADER + '<why3session shape_version="6">\n'
PROVERS = '<prover id="0" name="Z3" version="5.4.0" alternative="pip" timelimit="120" steplimit="0" memlimit="2000"/>\n'
SPLIT = """<file format="whyml"><path name=".."/><path name="x.mlw"/>
<theory name="M" proved="true">
 <goal name="g'vc" proved="true">
 <transf name="split_vc" proved="true">
  <goal name="g'vc.0" proved="true">
  <proof prover="0"><result status="valid" time="0.01" steps="100"/></proof>
  </goal>
  <goal name="g'vc.1" proved="true">
  <proof prover="0"><result status="{second}" time="0.01" steps="200"/></proof>
  </goal>
 </transf>
 </goal>
</theory></file></why3session>
"""
OK_OUT = " 2/2 (replay OK)\n"
FAIL_OUT = (" 1/2 (replay failed)\n   goal 'g'vc.1', prover 'Z3 5.4.0 (pip)': Unknown (unknown) "
            "(0.01s, 107 steps) instead of Valid (0.00s, 10 steps) (timelimit=10, memlimit=2000, "
            "steplimit=10)\nReplay failed.\n")
HANG_OUT = (" 1/2 (replay failed)\n   goal 'g'vc.1', prover 'Z3 5.4.0 (pip)': Timeout (121.00s) "
            "instead of Valid (0.00s, 10 steps) (timelimit=120, memlimit=2000, steplimit=0)\n"
            "Replay failed.\n")


def _tree(tmp_path, monkeypatch, second="valid"):
    (tmp_path / "proofs" / "x").mkdir(parents=True)
    (tmp_path / "proofs" / "x.mlw").write_text("module M\n  goal g: true\nend\n")
    (tmp_path / "proofs" / "x" / "why3session.xml").write_text(HEADER + PROVERS + SPLIT.format(second=second))
    monkeypatch.setattr(proofs, "mlw_files", lambda: ["proofs/x.mlw"])
    return tmp_path


def _summary(root, out, rc):
    return proofs.summary(root, {"proofs/x.mlw": proofs.parse_replay(out, rc)})


# ------------------------------------------------------------------ split goals, sessions

def test_split_goal_with_one_unproved_subgoal_is_not_proved(tmp_path, monkeypatch):
    """The XML says proved="true" everywhere; one subgoal is only 'unknown': not proved."""
    root = _tree(tmp_path, monkeypatch, second="unknown")
    [g] = proofs.read_session(root / "proofs" / "x")
    assert g["proved"] is False and g["leaves"] == ["g'vc.0", "g'vc.1"]
    s = _summary(root, OK_OUT, 0)
    assert s["goals"][0]["result"] == "not proved" and s["ok"] is False


def test_split_goal_with_every_subgoal_valid_is_proved(tmp_path, monkeypatch):
    root = _tree(tmp_path, monkeypatch)
    s = _summary(root, OK_OUT, 0)
    assert [g["result"] for g in s["goals"]] == ["valid"] and s["ok"] is True
    assert s["goals"][0]["steps"] == 300 and s["replay"] == {"proofs/x.mlw": 0}


def test_obsolete_attempt_does_not_prove(tmp_path, monkeypatch):
    root = _tree(tmp_path, monkeypatch)
    xml = root / "proofs" / "x" / "why3session.xml"
    xml.write_text(xml.read_text().replace('<proof prover="0"><result status="valid" time="0.01" steps="200"',
                                           '<proof prover="0" obsolete="true"><result status="valid" time="0.01" steps="200"'))
    assert proofs.read_session(root / "proofs" / "x")[0]["proved"] is False


# ------------------------------------------------------------------ replay verdicts

@pytest.mark.parametrize("out, rc, status", [
    (OK_OUT, 0, "ok"),
    (FAIL_OUT, 1, "failed"),
    (HANG_OUT, 1, "failed"),
    ("[Warning] session is obsolete\n 2/2 (replay OK, obsolete session)\n", 0, "obsolete"),
    ("", None, "hang guard hit"),
    (" 2/2\n", 0, "error"),                       # exit 0 but no "replay OK": not trusted
    ("File x.mlw, line 3: syntax error\n", 1, "error"),
])
def test_parse_replay(out, rc, status):
    assert proofs.parse_replay(out, rc)["status"] == status


def test_failed_replay_marks_the_goal_and_the_file(tmp_path, monkeypatch):
    root = _tree(tmp_path, monkeypatch)
    s = _summary(root, FAIL_OUT, 1)
    assert s["goals"][0]["result"].startswith("not proved: Z3 5.4.0 (pip): Unknown")
    assert s["ok"] is False and s["replay"] == {"proofs/x.mlw": 1}


def test_timeout_is_the_hang_guard_not_a_verdict(tmp_path, monkeypatch):
    root = _tree(tmp_path, monkeypatch)
    s = _summary(root, HANG_OUT, 1)
    assert s["goals"][0]["result"] == "hang guard hit" and s["ok"] is False
    s = _summary(root, "", None)                 # the whole replay stopped by the guard
    assert s["goals"][0]["result"] == "hang guard hit" and s["replay"] == {"proofs/x.mlw": -1}


@pytest.mark.parametrize("out, rc", [("[Warning] session is obsolete\n 2/2 (replay OK, obsolete session)\n", 0),
                                     ("why3: error\n", 2)])
def test_obsolete_or_unreadable_replay_proves_nothing(tmp_path, monkeypatch, out, rc):
    root = _tree(tmp_path, monkeypatch)
    s = _summary(root, out, rc)
    assert s["goals"][0]["result"].startswith("not proved (replay:") and s["ok"] is False


def test_missing_replay_report_is_not_ok(tmp_path, monkeypatch):
    root = _tree(tmp_path, monkeypatch)
    s = proofs.summary(root, {})
    assert s["ok"] is False and s["goals"][0]["result"] == "not proved (replay: missing)"


def test_assumption_problem_fails_the_summary(tmp_path, monkeypatch):
    root = _tree(tmp_path, monkeypatch)
    s = proofs.summary(root, {"proofs/x.mlw": proofs.parse_replay(OK_OUT, 0)},
                       assumptions={"assumptions": [], "problems": ["new assumption x"]})
    assert s["ok"] is False and s["assumption_problems"] == ["new assumption x"]


# ------------------------------------------------------------------ Python front-end

def _vc(answer, line=10, expl="assertion", steps=5):
    return {"prover-result": {"answer": answer, "status": "", "step": steps, "time": 0.1},
            "term": {"explanations": [expl], "goal_name": "f'vc",
                     "loc": {"line": line, "start-char": 4, "end-char": 9, "filename": "f.py"}}}


def _fake_why3(monkeypatch, answers_by_prover, rc_by_prover):
    calls = []

    def run(cmd, **kw):
        prover = cmd[cmd.index("-P") + 1]
        calls.append(cmd)
        out = "\n".join(json.dumps(v) for v in answers_by_prover[prover])
        return subprocess.CompletedProcess(cmd, rc_by_prover[prover], out, "")
    monkeypatch.setattr(prove.subprocess, "run", run)
    return calls


@pytest.fixture
def pyfile(tmp_path, monkeypatch):
    monkeypatch.setattr(proofs, "mlw_files", lambda: [])      # the summary of the front-end alone
    (tmp_path / "f.py").write_text("\n" * 8 + "def f(x):\n    assert x\n")
    return tmp_path


@pytest.mark.parametrize("answer, result", [("Timeout", "hang guard hit"), ("Unknown (unknown)", "not proved"),
                                            ("Failure", "not proved"), ("StepLimitExceeded", "not proved")])
def test_front_end_non_valid_answers_never_count_valid(pyfile, monkeypatch, answer, result):
    _fake_why3(monkeypatch, {p: [_vc(answer)] for p in prove.PY_PROVERS}, {p: 2 for p in prove.PY_PROVERS})
    recs = prove.prove_py(pyfile, "f.py")
    assert [r["result"] for r in recs] == [result]
    assert proofs.summary(pyfile, {}, recs)["ok"] is False


def test_front_end_runs_under_step_budgets(pyfile, monkeypatch):
    calls = _fake_why3(monkeypatch, {"cvc5": [_vc("Valid")]}, {"cvc5": 0})
    [r] = prove.prove_py(pyfile, "f.py")
    assert r["result"] == "valid" and r["steps"] == 5
    assert proofs.summary(pyfile, {}, [r])["ok"] is True
    cmd = calls[0]
    assert cmd[cmd.index("-s") + 1] == str(prove.PY_STEPS["cvc5"])


def test_front_end_valid_answers_with_failing_exit_is_an_error(pyfile, monkeypatch):
    """why3 says 'all valid' in JSON but exits 2: the output is not trusted."""
    _fake_why3(monkeypatch, {p: [_vc("Valid")] for p in prove.PY_PROVERS}, {p: 2 for p in prove.PY_PROVERS})
    recs = prove.prove_py(pyfile, "f.py")
    assert any(r["result"].startswith("failed") for r in recs)
    assert proofs.summary(pyfile, {}, recs)["ok"] is False


def test_front_end_second_prover_proves_what_the_first_left(pyfile, monkeypatch):
    _fake_why3(monkeypatch, {"cvc5": [_vc("Timeout")], "z3": [_vc("Valid")]}, {"cvc5": 2, "z3": 0})
    [r] = prove.prove_py(pyfile, "f.py")
    assert r["result"] == "valid" and r["prover"] == "z3"


# ------------------------------------------------------------------ assumptions, from Why3

def _copy(tmp_path, *names):
    (tmp_path / "proofs").mkdir(parents=True)
    for sub in ("why3.conf", "lib", "drivers"):
        src = REPO / "proofs" / sub
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, tmp_path / "proofs" / sub)
    for n in names:
        shutil.copy2(REPO / "proofs" / n, tmp_path / "proofs" / n)
    return tmp_path


def _problems(root, files, reviewed=()):
    return A.check(A.find(root, files), list(reviewed))


needs_why3 = pytest.mark.skipif(shutil.which("why3") is None, reason="why3 not installed")


@needs_why3
def test_repository_assumptions_are_the_reviewed_ones():
    # one pass of Why3's printers over every theory (the proof step's own), judged both ways:
    # no problem, and the list is exactly the two reviewed ones
    found = prove._assumptions(REPO)
    assert found["problems"] == []
    assert {(a["theory"], a["name"]) for a in found["assumptions"]} == {("IntWrap", "modulus_pos"),
                                                                         ("IntWrap", "lo_range")}


@needs_why3
def test_planted_assume_false_in_a_proved_function_is_caught(tmp_path):
    root = _copy(tmp_path / "r", "tensor.mlw")
    mlw = root / "proofs" / "tensor.mlw"
    text = mlw.read_text()
    old = "  = match l with Nil -> () | Cons _ r -> len_nonneg r end"
    assert old in text
    mlw.write_text(text.replace(old, "  = assume { false };\n    match l with Nil -> () | Cons _ r -> len_nonneg r end"))
    [p] = _problems(root, ["proofs/tensor.mlw"])
    assert "assume Shape.len_nonneg" in p and "proofs/tensor.mlw:40" in p


@needs_why3
def test_planted_axiom_split_over_lines_is_caught(tmp_path):
    root = _copy(tmp_path / "r", "tensor.mlw")
    mlw = root / "proofs" / "tensor.mlw"
    text = mlw.read_text()
    mlw.write_text(text.replace("module Tensor\n", "module Tensor\n  (* harmless *) axiom\n    sneaky\n    : false\n", 1))
    [p] = _problems(root, ["proofs/tensor.mlw"])
    assert "axiom Tensor.sneaky" in p and "proofs/tensor.mlw:133" in p


@needs_why3
def test_planted_clone_with_axiom_dot_is_caught(tmp_path):
    """A clone that keeps the cloned module's axioms as axioms (`with axiom .`) instead of
    proving them as lemmas: the instance's axioms are assumptions, at the axioms' location."""
    root = _copy(tmp_path / "r", "gemm.mlw")
    mlw = root / "proofs" / "gemm.mlw"
    mlw.write_text(mlw.read_text() + "\nmodule Sneaky\n  use int.Int\n  let constant lo9 : int = 0\n"
                   "  let constant mod9 : int = 0\n  clone export IntWrap with val lo = lo9, val modulus = mod9, axiom .\nend\n")
    reviewed = A.load_reviewed(REPO)
    problems = sorted(_problems(root, ["proofs/gemm.mlw"], reviewed))
    assert len(problems) == 2, problems           # the printer adds a numeric suffix to the names
    assert re.fullmatch(r"new assumption axiom Sneaky\.lo_range\d* at proofs/gemm\.mlw:323: .*", problems[0])
    assert re.fullmatch(r"new assumption axiom Sneaky\.modulus_pos\d* at proofs/gemm\.mlw:322: .*", problems[1])


@needs_why3
def test_val_with_ensures_and_no_refinement_is_an_assumption(tmp_path):
    root = _copy(tmp_path / "r")
    (root / "proofs" / "v.mlw").write_text(
        "module V\n  use int.Int\n  val f (x: int) : int ensures { result > x }\n"
        "  val g (x: int) : int requires { x > 0 }\n  let h (x: int) : int = f x\nend\n"
        "module W\n  use int.Int\n  let f2 (x: int) : int ensures { result > x } = x + 1\n"
        "  clone V with val f = f2\nend\n")
    found = A.find(root, ["proofs/v.mlw"])
    assert [(a["theory"], a["kind"], a["name"]) for a in found["assumptions"]] == []   # refined in W
    (root / "proofs" / "v.mlw").write_text((root / "proofs" / "v.mlw").read_text().replace(" with val f = f2", ""))
    found = A.find(root, ["proofs/v.mlw"])
    assert ("V", "val", "f") in [(a["theory"], a["kind"], a["name"]) for a in found["assumptions"]]


def test_stale_reviewed_entry_and_stdlib_count_change_are_problems():
    found = {"assumptions": [], "stdlib_props": {"Float16": 3}}
    reviewed = [{"file": "proofs/a.mlw", "theory": "T", "kind": "axiom", "name": "x", "reason": "r"}]
    problems = A.check(found, reviewed, {"Float16": 2})
    assert len(problems) == 2 and "no longer shows" in problems[0] and "stdlib" in problems[1]


def test_reviewed_entry_needs_a_reason(tmp_path):
    (tmp_path / "proofs").mkdir()
    (tmp_path / "proofs" / "assumptions.toml").write_text(
        '[[assumption]]\nfile = "proofs/a.mlw"\ntheory = "T"\nkind = "axiom"\nname = "x"\nreason = " "\n')
    with pytest.raises(ValueError, match="reason"):
        A.load_reviewed(tmp_path)


# ------------------------------------------------------------------ the printers' output, parsed
# (captured from why3 1.5.1 on a small file: module A has an axiom, a lemma, a let function
# with a spec, a val with an ensures; B clones A keeping its axioms (`with axiom .`); C clones
# it proving them (`lemma sneaky`) and refining the val)
THEORIES = """\
theory A
  axiom sneaky #"t.mlw" 5 4 10# :
    c > 0
  lemma l1 #"t.mlw" 6 8 10# :
  goal h'vc #"t.mlw" 9 15 16# :
  axiom h'spec #"t.mlw" 9 15 16# :
  goal k'vc #"t.mlw" 10 6 7# :
end
theory B
  axiom sneaky1 #"t.mlw" 5 4 10# :
  lemma l11 #"t.mlw" 6 8 10# :
  axiom h'spec1 #"t.mlw" 15 2 41# :
end
theory C
  lemma sneaky2 #"t.mlw" 5 4 10# :
  axiom h'spec2 #"t.mlw" 20 2 44# :
  goal f'refn'vc #"t.mlw" 7 6 7# :
  axiom a_very_long_name_that_wraps
    #"/usr/share/why3/stdlib/ieee_float.mlw" 177 8 25# :
end
"""
MODULES = """\
module A
  val f
    #"t.mlw" 7 6 7# (x #"t.mlw" 7 9 10#:int) : int
    ensures  { #"t.mlw" 7 33 43#
               (#"t.mlw" 7 33 39# result) > (#"t.mlw" 7 42 43# x) }

  val g
    #"t.mlw" 8 6 7# (x #"t.mlw" 8 9 10#:int) : int
    requires { #"t.mlw" 8 33 38# x > 0 }

  let k
    #"t.mlw" 10 6 7# (x #"t.mlw" 10 9 10#:int) : int =
    #"t.mlw" 10 48 64#
    assume { #"t.mlw" 10 57 62# false };
    x
end
module B
  val f1
    #"t.mlw" 15 2 41# (x #"t.mlw" 7 9 10#:int) : int
    ensures  { #"t.mlw" 7 33 43# result > x }
end
"""


def test_theory_printer_parsed_with_locations():
    props = A.parse_theories(THEORIES)
    assert props[0] == {"theory": "A", "kind": "axiom", "name": "sneaky", "loc": ("t.mlw", 5, 4, 10)}
    assert props[-1]["loc"] == ("/usr/share/why3/stdlib/ieee_float.mlw", 177, 8, 25)   # wrapped
    assert [p["theory"] for p in props].count("B") == 3


def test_axioms_classified_by_origin():
    assumptions, stdlib = A.classify_axioms(A.parse_theories(THEORIES), {"t.mlw"})
    # A.sneaky: a source axiom; B.sneaky1: kept as an axiom by the clone; h'spec: proved by
    # h'vc (A) and so in the clones (B, C); C proves sneaky as a lemma
    assert [(a["theory"], a["name"]) for a in assumptions] == [("A", "sneaky"), ("B", "sneaky1")]
    assert stdlib == {"C": 1}


def test_lemma_of_a_file_without_session_is_an_assumption():
    props = [dict(p, file="t.mlw") for p in A.parse_theories(THEORIES)]
    assumptions, _ = A.classify_axioms(props, {"t.mlw"}, frozenset({"t.mlw"}))
    assert ("A", "lemma", "l1") in [(a["theory"], a["kind"], a["name"]) for a in assumptions]


def test_generated_clone_site_axiom_of_an_unproved_spec_stays_an_assumption():
    text = THEORIES.replace("  goal h'vc #\"t.mlw\" 9 15 16# :\n", "")
    assumptions, _ = A.classify_axioms(A.parse_theories(text), {"t.mlw"})
    assert ("A", "h'spec") in [(a["theory"], a["name"]) for a in assumptions]
    assert ("B", "h'spec1") in [(a["theory"], a["name"]) for a in assumptions]


def test_modules_printer_gives_assume_and_unrefined_vals():
    found = A.parse_modules(MODULES, refined=set())
    assert [(a["theory"], a["kind"], a["name"], a["loc"]) for a in found] == [
        ("A", "val", "f", ("t.mlw", 7, 6, 7)), ("A", "assume", "k", ("t.mlw", 10, 48, 64)),
        ("B", "val", "f1", ("t.mlw", 15, 2, 41))]
    # a refinement of the clone's copy (at the clone site) discharges the declaration too
    found = A.parse_modules(MODULES, refined={("t.mlw", 15, 2, 41)})
    assert [(a["kind"], a["name"]) for a in found] == [("assume", "k")]


def test_check_reports_new_assumptions_with_location_and_accepts_reviewed_ones():
    found = {"assumptions": [{"file": "proofs/a.mlw", "theory": "T", "kind": "axiom", "name": "x1",
                              "at": "proofs/a.mlw:7"}], "stdlib_props": {}}
    assert A.check(found, [], {}) == ["new assumption axiom T.x1 at proofs/a.mlw:7: not in proofs/assumptions.toml"]
    reviewed = [{"file": "proofs/a.mlw", "theory": "T", "kind": "axiom", "name": "x", "reason": "r"}]
    assert A.check(found, reviewed, {}) == []
    reviewed[0]["kind"] = "val"
    assert len(A.check(found, reviewed, {})) == 2


# ------------------------------------------------------------------ found by the mutation run

def test_not_replayed_summary_is_the_sessions_recorded_state(tmp_path, monkeypatch):
    root = _tree(tmp_path, monkeypatch)
    s = proofs.summary(root)                       # the trace's quick look: nothing replayed
    assert [g["result"] for g in s["goals"]] == ["valid"] and s["ok"] is True and s["replay"] == {}
    root = _tree(tmp_path / "u", monkeypatch, second="unknown")
    s = proofs.summary(root)
    assert [g["result"] for g in s["goals"]] == ["not proved"] and s["ok"] is False


@pytest.mark.parametrize("rc, result, ok", [(0, "valid", True), (1, "not proved (replay: error)", False)])
def test_bare_exit_codes_as_replay_reports(tmp_path, monkeypatch, rc, result, ok):
    root = _tree(tmp_path, monkeypatch)
    s = proofs.summary(root, {"proofs/x.mlw": rc})
    assert [g["result"] for g in s["goals"]] == [result] and s["ok"] is ok and s["replay"] == {"proofs/x.mlw": rc}


def test_replay_tail_drops_progress_lines_and_keeps_the_last_five():
    out = "Progress: 1/2\r" + "".join(f"line {i}\n" for i in range(7)) + "Progress: 2/2\r 2/2 (replay OK)\n"
    rep = proofs.parse_replay(out, 0)
    assert rep["status"] == "ok"
    assert rep["tail"] == ["line 3", "line 4", "line 5", "line 6", " 2/2 (replay OK)"]


def test_printer_suffix_is_stripped_only_from_the_end():
    assert A._base("dot_wrap12") == "dot_wrap" and A._base("mulX1") == "mulX" and A._base("7") == "7"


def test_a_valid_front_end_does_not_hide_a_failed_session(tmp_path, monkeypatch):
    root = _tree(tmp_path, monkeypatch)
    py = [{"file": "f.py", "theory": "python", "goal": "f", "vc": "v", "req": [], "prover": "cvc5",
           "result": "valid", "time": 0.1}]
    assert proofs.summary(root, {"proofs/x.mlw": proofs.parse_replay(FAIL_OUT, 1)}, py)["ok"] is False


def test_a_listed_file_without_session_is_not_ok(tmp_path, monkeypatch):
    root = _tree(tmp_path, monkeypatch)
    (root / "proofs" / "x" / "why3session.xml").unlink()
    s = proofs.summary(root, {"proofs/x.mlw": proofs.parse_replay(OK_OUT, 0)})
    assert s["ok"] is False and s["goals"] == []


def test_proofs_json_fields(tmp_path, monkeypatch):
    """The fields the trace and docs/proofs.md name (a renamed key would read as missing evidence)."""
    root = _tree(tmp_path, monkeypatch)
    assumed = {"assumptions": [{"file": "proofs/x.mlw", "theory": "M", "kind": "axiom", "name": "a",
                                "line": 2, "at": "proofs/x.mlw:2"}], "problems": [], "stdlib_props": {"F": 1}}
    py = [{"file": "f.py", "theory": "python", "goal": "f", "vc": "v", "req": [], "prover": "cvc5",
           "result": "valid", "time": 0.1}]
    s = proofs.summary(root, {"proofs/x.mlw": proofs.parse_replay(OK_OUT, 0)}, py, assumed)
    assert set(s) == {"ok", "goals", "assumptions", "assumption_problems", "stdlib_props", "replay",
                      "replay_status", "python_frontend"}
    assert set(s["goals"][0]) == {"file", "theory", "goal", "req", "prover", "result", "time", "steps"}
    assert s["goals"][0]["theory"] == "M" and s["goals"][0]["prover"] == "z3"
    assert s["assumptions"][0]["module"] == "M" and s["stdlib_props"] == {"F": 1}
    assert s["replay_status"]["proofs/x.mlw"]["status"] == "ok"
    assert s["python_frontend"] == {"vcs": py, "proved": 1, "total": 1, "gating": True}
