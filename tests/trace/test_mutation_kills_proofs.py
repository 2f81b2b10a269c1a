"""Tests written to kill the survivors of the mutation run over the proof summary and the Why3
driver (tools/mutation-proofs; docs/mutation/trace.md, run 3), and the heartbeat hang of the
evidence runner's `_run`. Each one checks a behaviour a verdict, a proofs.json field, an
assumption finding or an exit status depends on."""
from __future__ import annotations

import sys
import threading

from sonnx_dev import evidence     # the evidence runner (tools/sonnx_dev)

HANG_GUARD_S = 120   # wall clock as a hang guard only: a quick step ends in well under a second


def test_a_finished_step_ends_its_heartbeat_instead_of_hanging(tmp_path, capsys):
    """`_run` must return once its step has ended: its heartbeat thread stops when told, so a
    heartbeat that never wakes up to see it (evidence._run__mutmut_5) becomes a failure here
    rather than a hang of the whole evidence run."""
    got = []
    runner = threading.Thread(daemon=True, target=lambda: got.append(evidence._run(
        "quick", [sys.executable, "-c", "print('done')"], {}, tmp_path / "quick.log", 0.0, quiet_after=0.2)))
    runner.start()
    runner.join(HANG_GUARD_S)
    assert not runner.is_alive(), f"_run did not return within {HANG_GUARD_S} s of a step that ends at once"
    [(rc, secs)] = got
    assert rc == 0 and 0 < secs < HANG_GUARD_S
    assert (tmp_path / "quick.log").read_text() == "done\n"


# ------------------------------------------------------------------ proofs.json from a session

from sonnx.trace import proofs  # noqa: E402

SESSION = proofs.HEADER + """<why3session shape_version="6">
<prover id="0" name="Z3" version="5.4.0" alternative="pip" timelimit="1" steplimit="0" memlimit="1"/>
<prover id="1" name="CVC5" version="1.0.3" timelimit="1" steplimit="0" memlimit="1"/>
<prover id="2" name="Z3" version="5.4.0" alternative="other" timelimit="1" steplimit="0" memlimit="1"/>
<prover id="3" name="Z3" version="4.8.0" alternative="pip" timelimit="1" steplimit="0" memlimit="1"/>
<prover id="4" name="Alt-Ergo" version="2.4.0" timelimit="1" steplimit="0" memlimit="1"/>
<file format="whyml"><path name=".."/><path name="x.mlw"/>
<theory name="M">
 <goal name="a'vc">
 <proof prover="0"><result status="valid" time="0.004" steps="100"/></proof>
 <proof prover="1"><result status="valid" time="0.003" steps="20"/></proof>
 <proof prover="2"><result status="unknown"/></proof>
 <proof prover="3"><result status="unknown" time="1.5"/></proof>
 <proof prover="9"><result status="unknown"/></proof>
 </goal>
 <goal name="b'vc"><proof prover="0"><result status="unknown" time="0.01" steps="5"/></proof></goal>
 <goal name="c'vc"><proof prover="0"><result status="valid" time="0.01" steps="5"/></proof></goal>
 <goal name="d'vc"><proof prover="4"><result status="valid" time="0.02" steps="0"/></proof></goal>
</theory></file></why3session>
"""
MLW = """module M
  (* req: MUL-R1, GEMM-R2 -- the first *)
  goal a: true
  (* req: MUL-R3 *)
  goal b: true
  goal c: true
end
"""


def _session_tree(root, monkeypatch):
    (root / "proofs" / "x").mkdir(parents=True)
    (root / "proofs" / "x.mlw").write_text(MLW)
    (root / "proofs" / "x" / "why3session.xml").write_text(SESSION)
    monkeypatch.setattr(proofs, "mlw_files", lambda: ["proofs/x.mlw"])
    return root


def test_summary_records_carry_the_goals_requirements_provers_time_and_steps(tmp_path, monkeypatch):
    """Each session goal becomes one proofs.json record: the req IDs of its declaration (found
    through the goal's `'vc` name), every prover that attempted it (a known one by its key, any
    other by name, version and alternative if any), its prover time rounded to 2 decimals (attempts
    without a time count 0) and its step count (attempts without steps count 0)."""
    s = proofs.summary(_session_tree(tmp_path, monkeypatch))
    assert [(g["goal"], g["req"], g["prover"], g["result"], g["time"], g["steps"]) for g in s["goals"]] == [
        ("a'vc", ["MUL-R1", "GEMM-R2"], "?,Z3 4.8.0 pip,Z3 5.4.0 other,cvc5,z3", "valid", 1.51, 120),
        ("b'vc", ["MUL-R3"], "z3", "not proved", 0.01, 5),
        ("c'vc", [], "z3", "valid", 0.01, 5),
        ("d'vc", [], "Alt-Ergo 2.4.0", "valid", 0.02, 0)]     # no declaration in the file: no req
    # one goal not proved fails the summary, whatever the goals after it
    assert s["ok"] is False


def test_session_times_are_summed_and_rounded_to_two_decimals(tmp_path):
    (tmp_path / "why3session.xml").write_text(SESSION)
    [a, *_] = proofs.read_session(tmp_path)
    assert a["time"] == 1.51 and a["steps"] == 120 and a["leaves"] == ["a'vc"]
    (tmp_path / "why3session.xml").write_text(SESSION.replace('time="1.5"', 'time="0.001"'))
    [a, *_] = proofs.read_session(tmp_path)
    assert a["time"] == 0.01     # 0.008 rounded to 2 decimals, not 0.008


def test_the_goals_declaration_is_the_name_before_its_vc_suffix():
    assert proofs._decl_of_goal("gemm_fold'vc") == "gemm_fold"
    assert proofs._decl_of_goal("lemma'x'vc.0") == "lemma'x"


def test_summary_keeps_every_field_of_an_assumption_and_names_its_module(tmp_path, monkeypatch):
    a = {"file": "proofs/x.mlw", "theory": "M", "kind": "axiom", "name": "ax", "loc": None, "at": "x:1"}
    s = proofs.summary(_session_tree(tmp_path, monkeypatch),
                       assumptions={"assumptions": [a], "problems": [], "stdlib_props": {}})
    assert s["assumptions"] == [dict(a, module="M")]


# ------------------------------------------------------------------ replay and why3 output

def test_a_replay_report_with_carriage_returns_is_read_line_by_line():
    """why3 replay redraws its progress with carriage returns: the failure after one is still
    a failed goal, and the progress is not kept in the tail."""
    out = ("Progress: 1/2\r   goal 'g'vc.1', prover 'Z3 5.4.0 (pip)': Unknown (unknown)\n"
           "Replay failed.\n")
    rep = proofs.parse_replay(out, 1)
    assert rep["status"] == "failed"
    assert rep["failures"] == {"g'vc.1": "Z3 5.4.0 (pip): Unknown (unknown)"}
    assert rep["tail"] == ["   goal 'g'vc.1', prover 'Z3 5.4.0 (pip)': Unknown (unknown)", "Replay failed."]


REC = ('{"term": {"loc": {"file": "f.py", "line": 3, "start-char": 1, "end-char": 9}, %s},'
       ' "prover-result": {"answer": "Valid", "time": 0.5%s}}')


def test_why3_json_records_keep_explanations_goal_names_and_steps():
    two_expl = REC % ('"explanations": ["loop invariant", "preservation"], "goal_name": "f\'vc"', ', "step": 7')
    no_expl = REC % ('"goal_name": "g\'vc"', "")
    [a, b] = proofs.parse_why3_json(two_expl + "\n" + no_expl)
    assert (a["expl"], a["steps"]) == ("loop invariant; preservation", 7)
    assert (b["expl"], b["steps"]) == ("g'vc", 0)     # no explanation: the goal name; no step count: 0


def test_python_requirements_come_from_the_comment_just_above_each_def(tmp_path):
    src = tmp_path / "f.py"
    src.write_text("def first():\n    pass\n"
                   "# req: MUL-R1, GEMM-R2\ndef second():\n    pass\n"
                   "# req: MUL-R3\n\ndef third():\n    pass\n"
                   "    # req: MUL-R4\n    def inner():\n        pass\n"
                   "# req: GEMM-R4\n")
    assert proofs.parse_py(src) == {"first": [], "second": ["MUL-R1", "GEMM-R2"], "third": [],
                                    "inner": ["MUL-R4"]}


def test_a_declarations_goal_name_and_line_are_kept(tmp_path):
    """links.proof_sites places a proof at the declaration's line; its goal name joins it to
    the session."""
    (tmp_path / "x.mlw").write_text(MLW)
    assert [(g["goal"], g["line"], g["req"]) for g in proofs.parse_goals(tmp_path / "x.mlw")] == [
        ("a", 3, ["MUL-R1", "GEMM-R2"]), ("b", 5, ["MUL-R3"]), ("c", 6, [])]


# ------------------------------------------------------------------ the Python front-end driver

import json  # noqa: E402
import subprocess  # noqa: E402

from sonnx_dev import prove  # noqa: E402

PY = "# req: MUL-R1\ndef f(x):\n    assert x\n    assert x\n\ndef g(y):\n    assert y\n"


def _vc(line, answer, time=0.5, steps=None):
    res = {"answer": answer, "time": time, **({"step": steps} if steps is not None else {})}
    return {"term": {"explanations": ["assertion"], "goal_name": "f'vc",
                     "loc": {"line": line, "start-char": 4, "end-char": 9}}, "prover-result": res}


def _why3(monkeypatch, root, outputs):
    """outputs: prover -> (rc, records, stderr); records every command and its keywords."""
    calls = []

    def run(cmd, **kw):
        calls.append((cmd, kw))
        rc, recs, err = outputs[cmd[cmd.index("-P") + 1]]
        return subprocess.CompletedProcess(cmd, rc, "\n".join(json.dumps(r) for r in recs), err)
    monkeypatch.setattr(prove.subprocess, "run", run)
    (root / "f.py").write_text(PY)
    return calls


def test_front_end_records_each_vc_with_its_function_requirements_prover_and_attempts(tmp_path, monkeypatch):
    calls = _why3(monkeypatch, tmp_path, {
        "cvc5": (2, [_vc(3, "Valid", 0.25, 7), _vc(4, "Timeout"), _vc(4, "Timeout"), _vc(7, "Unknown")], ""),
        "z3": (2, [_vc(4, "Valid", 0.5, 3), _vc(4, "Valid", 0.75, 4), _vc(7, "Unknown", 1.0, 2)], "")})
    recs = prove.prove_py(tmp_path, "f.py", provers=("cvc5", "z3"), timelimit=9)
    assert recs == [
        {"file": "f.py", "theory": "python", "goal": "f", "vc": "assertion (line 3:4-9)", "req": ["MUL-R1"],
         "prover": "cvc5", "result": "valid", "time": 0.25, "steps": 7,
         "attempts": {"cvc5": "Valid (0.25s, 7 steps)"}},
        {"file": "f.py", "theory": "python", "goal": "f", "vc": "assertion (line 4:4-9)", "req": ["MUL-R1"],
         "prover": "z3", "result": "valid", "time": 0.5, "steps": 3,
         "attempts": {"cvc5": "Timeout (0.5s, 0 steps)", "z3": "Valid (0.5s, 3 steps)"}},
        {"file": "f.py", "theory": "python", "goal": "f", "vc": "assertion (line 4:4-9, #2)", "req": ["MUL-R1"],
         "prover": "z3", "result": "valid", "time": 0.75, "steps": 4,
         "attempts": {"cvc5": "Timeout (0.5s, 0 steps)", "z3": "Valid (0.75s, 4 steps)"}},
        {"file": "f.py", "theory": "python", "goal": "g", "vc": "assertion (line 7:4-9)", "req": [],
         "prover": "", "result": "not proved", "time": 0.0, "steps": 0,
         "attempts": {"cvc5": "Unknown (0.5s, 0 steps)", "z3": "Unknown (1.0s, 2 steps)"}}]
    (first, kw1), (second, kw2) = calls
    assert kw1 == kw2 == {"cwd": tmp_path, "capture_output": True, "text": True}
    assert first == ["why3", "-C", "proofs/why3.conf", "prove", "--json", "-P", "cvc5",
                     "-s", str(prove.PY_STEPS["cvc5"]), "-t", "9", "-a", "split_vc", "f.py"]
    assert second[-5:] == ["-g", "f.py:4", "-g", "f.py:7", "f.py"]    # only the lines left open


def test_front_end_output_it_cannot_account_for_is_a_failed_record(tmp_path, monkeypatch):
    _why3(monkeypatch, tmp_path, {"cvc5": (1, [_vc(3, "Valid")], "warning\nwhy3: internal error\n")})
    recs = prove.prove_py(tmp_path, "f.py", provers=("cvc5", "z3"), timelimit=9)
    assert recs[-1] == {"file": "f.py", "theory": "python", "goal": "(why3 prove)", "vc": "", "req": [],
                        "prover": "cvc5,z3", "result": "failed: cvc5: rc=1, 1 VCs, why3: internal error", "time": 0}
    _why3(monkeypatch, tmp_path, {"cvc5": (1, [], "")})
    assert prove.prove_py(tmp_path, "f.py", provers=("cvc5",))[-1]["result"] == "failed: cvc5: rc=1, 0 VCs, "


def test_a_vc_is_named_after_the_def_it_lies_in_and_a_timeout_stays_a_hang(tmp_path, monkeypatch):
    """Line 1 lies before any def ("?", no requirement), line 2 is f's own def line, line 5 the
    blank line before g; a Timeout of the first prover is still a hang guard hit after the
    second one answered Unknown."""
    _why3(monkeypatch, tmp_path, {"cvc5": (2, [_vc(1, "Timeout"), _vc(2, "Unknown"), _vc(5, "Unknown")], ""),
                                  "z3": (2, [_vc(1, "Unknown"), _vc(2, "Unknown"), _vc(5, "Unknown")], "")})
    recs = prove.prove_py(tmp_path, "f.py", provers=("cvc5", "z3"))
    assert [(r["goal"], r["req"], r["result"]) for r in recs] == [
        ("?", [], "hang guard hit"), ("f", ["MUL-R1"], "not proved"), ("f", ["MUL-R1"], "not proved")]


def test_a_second_prover_with_other_vcs_is_an_error_and_its_known_vcs_still_count(tmp_path, monkeypatch):
    _why3(monkeypatch, tmp_path, {"cvc5": (2, [_vc(4, "Timeout")], ""),
                                  "z3": (0, [dict(_vc(4, "Valid"), term=dict(_vc(4, "Valid")["term"], loc={
                                      "line": 4, "start-char": 5, "end-char": 9})), _vc(4, "Valid")], "")})
    recs = prove.prove_py(tmp_path, "f.py", provers=("cvc5", "z3"))
    assert [r["result"] for r in recs] == [
        "valid", "failed: z3: the VCs of lines [4] differ from the first run"]


# ------------------------------------------------------------------ the WhyML reader

from sonnx.trace import whyml  # noqa: E402


def test_whyml_reader_keeps_a_multi_line_annotation_from_the_first_line_and_reads_to_the_end():
    """An annotation may open on the file's first line, span lines and end with trailing blanks;
    a declaration on the last line ends there; goal and axiom are kinds of their own."""
    text = "(* req: MUL-R1,\n   GEMM-R2 *)  \ngoal a: true\naxiom b: true"
    assert whyml.declarations(text) == [
        whyml.Declaration(None, "goal", "a", 3, 3, "(* req: MUL-R1,\n   GEMM-R2 *)  "),
        whyml.Declaration(None, "axiom", "b", 4, 4, "")]
    assert [d.comment for d in whyml.declarations("(* c *)\nlemma z: true\n")] == ["(* c *)"]


# ------------------------------------------------------------------ assumptions (Why3's view)

import pytest  # noqa: E402

from sonnx.trace import proof_assumptions as A  # noqa: E402

P, STD = "proofs/a.mlw", "/usr/share/why3/stdlib/int.mlw"


def test_axioms_discharged_by_a_goal_or_copied_from_one_are_not_assumptions_and_stdlib_props_are_counted():
    props = [
        {"theory": "T", "kind": "axiom", "name": "f'def", "loc": (P, 1, 0, 1), "file": P},  # before its goal
        {"theory": "T", "kind": "goal", "name": "f'vc", "loc": (P, 1, 0, 1), "file": P},
        {"theory": "U", "kind": "axiom", "name": "f'def", "loc": (P, 1, 0, 1), "file": P},  # a clone's copy
        {"theory": "T", "kind": "axiom", "name": "bad", "loc": (P, 5, 0, 3), "file": P},    # a source axiom
        {"theory": "S", "kind": "axiom", "name": "x", "loc": (STD, 1, 0, 1), "file": P},
        {"theory": "S", "kind": "axiom", "name": "y", "loc": (STD, 2, 0, 1), "file": P}]
    assert A.classify_axioms(props, {P}) == (
        [{"file": P, "theory": "T", "kind": "axiom", "name": "bad", "loc": (P, 5, 0, 3)}], {"S": 2})


ENTRY = {"file": "proofs/a.mlw", "theory": "T", "kind": "axiom", "name": "x", "reason": "why"}


def _reviewed(root, text):
    (root / "proofs").mkdir(exist_ok=True)
    (root / "proofs" / "assumptions.toml").write_text(text)
    return A.load_reviewed(root)


def test_a_reviewed_file_without_entries_reviews_nothing_and_a_complete_entry_is_kept(tmp_path):
    assert _reviewed(tmp_path, "stdlib_props = {}\n") == []
    toml = "[[assumption]]\n" + "".join(f'{k} = "{v}"\n' for k, v in ENTRY.items())
    assert _reviewed(tmp_path, toml) == [ENTRY]


@pytest.mark.parametrize("key", list(ENTRY))
def test_a_reviewed_entry_lacking_any_field_is_refused(tmp_path, key):
    toml = "[[assumption]]\n" + "".join(f'{k} = "{v}"\n' for k, v in ENTRY.items() if k != key)
    with pytest.raises(ValueError, match=f"lacks {key}$"):
        _reviewed(tmp_path, toml)


def test_a_wrapped_location_is_read_from_the_last_line_and_a_last_prop_may_have_none():
    wrapped = A.parse_theories('theory T\n  axiom a_long_name\n    #"f.mlw" 1 2 3#')
    assert wrapped == [{"theory": "T", "kind": "axiom", "name": "a_long_name", "loc": ("f.mlw", 1, 2, 3)}]
    assert A.parse_theories("theory T\n  axiom last") == [{"theory": "T", "kind": "axiom", "name": "last", "loc": None}]


# ------------------------------------------------------------------ loops that must end (run 3's hangs)
# proofs.parse_why3_json__mutmut_14 (decode from the start each time) and
# whyml._comment_before__mutmut_18 (`k = 1` for `k -= 1`) ran for ever: each loop's end rested on
# one index update. Both are now loops over a finite sequence; these tests run the readers on a
# thread and fail, instead of hanging, when one does not return.

def _returns_within_guard(fn, *args):
    got = []
    t = threading.Thread(daemon=True, target=lambda: got.append(fn(*args)))
    t.start()
    t.join(HANG_GUARD_S)
    assert not t.is_alive(), f"{fn.__name__} did not return within {HANG_GUARD_S} s"
    return got[0]


def test_why3_json_reader_ends_and_reads_objects_laid_end_to_end():
    """Several records, one after the other with or without blanks between them (why3 prints
    each over several lines): every record read once, in order."""
    a, b, c = (REC % (f'"goal_name": "{n}\'vc"', "") for n in "abc")
    text = "\n " + a + b + "\n\n" + c.replace(", ", ",\n   ") + "\n"
    recs = _returns_within_guard(proofs.parse_why3_json, text)
    assert [r["expl"] for r in recs] == ["a'vc", "b'vc", "c'vc"]
    assert _returns_within_guard(proofs.parse_why3_json, " \n\t") == []
    with pytest.raises(proofs.Why3OutputError, match=r"at char 1: 'x\{"):
        proofs.parse_why3_json(" x" + a)


def test_whyml_comment_reader_ends_and_takes_the_nearest_opening_line():
    text = "(* far *)\nmodule M\n  (* first line\n     second line *)\n  goal g: true\n  x *)\n  goal h: true\nend\n"
    decls = _returns_within_guard(whyml.declarations, text)
    assert [(d.name, d.comment) for d in decls] == [
        ("g", "  (* first line\n     second line *)"),
        ("h", "  (* first line\n     second line *)\n  goal g: true\n  x *)")]
    # no line opens a comment: from the first line
    assert [d.comment for d in _returns_within_guard(whyml.declarations, "a\n b *)\ngoal g: true")] == ["a\n b *)"]
