"""The proof summary (proofs.json records, assumptions) and the Why3 driver, in detail: tests
first written to kill the survivors of the mutation run over the proof summary and the Why3
driver (tools/mutation-proofs; docs/mutation/trace.md, run 3), and the heartbeat hang of the
evidence runner's `_run`; in run 3's part 2 also the driver's mutants no test reached (the proof
step run with a fake why3 on PATH, and one real build and replay of a tiny session). Each one
checks a behaviour a verdict, a proofs.json field, an assumption finding or an exit status
depends on."""
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
    # no line above opens a comment: from the first line (a comment below does not count)
    text = "a\n b *)\ngoal g: true\n(* below *)"
    assert [d.comment for d in _returns_within_guard(whyml.declarations, text)] == ["a\n b *)"]


# ------------------------------------------------------------------ run 3's unexplained survivors

def test_an_axiom_copied_from_a_location_with_any_assumption_stays_an_assumption():
    """A location is discharged only when every prop seen there is: a later clone that proves
    the axiom as a lemma does not discharge the next clone that keeps it as an axiom
    (classify_axioms__mutmut_85 kept only the last prop's verdict)."""
    at = (P, 5, 2, 8)
    props = [{"theory": "T", "kind": "axiom", "name": "ax", "loc": at, "file": P},
             {"theory": "C", "kind": "lemma", "name": "ax1", "loc": at, "file": P},
             {"theory": "D", "kind": "axiom", "name": "ax2", "loc": at, "file": P}]
    assumptions, _ = A.classify_axioms(props, {P})
    assert [(a["theory"], a["name"]) for a in assumptions] == [("T", "ax"), ("D", "ax2")]


def _assumes(text):
    return [(a["name"], a["loc"]) for a in A.parse_modules(text, refined=set()) if a["kind"] == "assume"]


def test_an_assume_takes_the_last_location_of_the_three_lines_before_it():
    """The location may be on the text's first line (parse_modules__mutmut_29 skipped it); one
    four lines up belongs to another expression (mutmut_31 took it); none found: no location
    (mutmut_53 failed on it); an assume outside any let is named "?" (mutmut_49), the name the
    reviewed list uses; `assume` inside the condition is not where the location stops (mutmut_33)."""
    assert _assumes('    #"t.mlw" 10 48 64#\n    assume { false }') == [("?", ("t.mlw", 10, 48, 64))]
    far = 'module A\n  let k\n    #"t.mlw" 3 1 2# x\n    y\n    z\n    w\n    assume { false }\nend'
    assert _assumes(far) == [("k", None)]
    near = far.replace("    w\n", '    #"t.mlw" 7 4 9#\n')
    assert _assumes(near) == [("k", ("t.mlw", 7, 4, 9))]
    inner = 'module A\n  let k\n    #"t.mlw" 10 48 64# assume { #"t.mlw" 10 57 62# p_assume x }\nend'
    assert _assumes(inner) == [("k", ("t.mlw", 10, 48, 64))]


def test_a_val_block_ends_at_its_sibling_and_an_ensures_may_end_a_line():
    """A val without a postcondition is no assumption even when the next val at its indentation
    has one (parse_modules__mutmut_69 read the sibling as part of it); `ensures` may be the last
    word of a printed line (mutmut_74 joined the lines with text that hid it)."""
    text = ('module A\n  val g\n    #"t.mlw" 8 6 7# (x:int) : int\n    requires { x > 0 }\n'
            '  val f\n    #"t.mlw" 7 6 7# (x:int) : int\n    ensures\n      { #"t.mlw" 7 33 43# result > x }\nend\n')
    found = A.parse_modules(text, refined=set())
    assert [(a["name"], a["loc"], a["origin"]) for a in found] == [("f", ("t.mlw", 7, 6, 7), ("t.mlw", 7, 33, 43))]


def test_refining_one_val_discharges_its_copies_only():
    """A refinement discharges the val it refines and that val's copies (same ensures), not an
    unrelated val (parse_modules__mutmut_97 gave every val the same empty origin)."""
    text = ('module A\n  val f\n    #"t.mlw" 7 6 7# (x:int) : int\n    ensures { #"t.mlw" 7 33 43# result > x }\n'
            '  val h\n    #"t.mlw" 9 6 7# (x:int) : int\n    ensures { #"t.mlw" 9 33 43# result < x }\nend\n')
    assert [a["name"] for a in A.parse_modules(text, refined={("t.mlw", 7, 6, 7)})] == ["h"]


# ------------------------------------------------------------------ the proof step with why3 faked
# A fake `why3` first on PATH answers each command with recorded output (rc, stdout, stderr,
# optionally a sleep) and logs its arguments and working directory: the driver runs it through
# the real subprocess calls, so its commands, options, directories and verdicts are all checked.
# The outputs follow Why3 1.5.1's (see tests/trace/test_proofs_gate.py for captured ones).

import os  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402
from pathlib import Path  # noqa: E402

from sonnx.trace.inputs import step_inputs  # noqa: E402

FAKE_WHY3 = '''
import json, os, sys, time
from pathlib import Path
argv = sys.argv[1:]
with open(os.environ["FAKE_WHY3_LOG"], "a") as log:
    log.write(json.dumps({"argv": argv, "cwd": os.getcwd()}) + "\\n")
if "replay" in argv:
    key = "replay " + Path(argv[-1]).name
elif "--json" in argv:
    key = "json " + argv[argv.index("-P") + 1]
else:
    key = ("theory " if "--print-theory" in argv else "modules ") + argv[-1]
answers = json.loads(Path(os.environ["FAKE_WHY3_ANSWERS"]).read_text())
if key not in answers:
    sys.stderr.write("fake why3: nothing recorded for " + key + "\\n")
    sys.exit(99)
a = answers[key]
sys.stdout.write(a.get("out", ""))
sys.stdout.flush()
sys.stderr.write(a.get("err", ""))
sys.stderr.flush()
time.sleep(a.get("sleep", 0))
sys.exit(a.get("rc", 0))
'''


class FakeWhy3:
    def __init__(self, tmp_path, monkeypatch):
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        exe = bin_dir / "why3"
        exe.write_text(f"#!{sys.executable}\n" + FAKE_WHY3)
        exe.chmod(0o755)
        self.log, self.file, self.answers = tmp_path / "why3.log", tmp_path / "answers.json", {}
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("FAKE_WHY3_LOG", str(self.log))
        monkeypatch.setenv("FAKE_WHY3_ANSWERS", str(self.file))
        self.file.write_text("{}")

    def answer(self, key, out="", err="", rc=0, sleep=0):
        self.answers[key] = {"out": out, "err": err, "rc": rc, "sleep": sleep}
        self.file.write_text(json.dumps(self.answers))

    def calls(self):
        return [json.loads(ln) for ln in self.log.read_text().splitlines()] if self.log.exists() else []


@pytest.fixture
def why3(tmp_path, monkeypatch):
    return FakeWhy3(tmp_path, monkeypatch)


X_MLW = "module M\n  (* req: MUL-R1 *)\n  goal g: true\nend\n"
X_SESSION = proofs.HEADER + """<why3session shape_version="6">
<prover id="0" name="Z3" version="5.4.0" alternative="pip" timelimit="120" steplimit="0" memlimit="2000"/>
<file format="whyml"><path name=".."/><path name="x.mlw"/>
<theory name="M">
 <goal name="g">
 <transf name="split_vc">
  <goal name="g.0"><proof prover="0"><result status="valid" time="0.01" steps="47"/></proof></goal>
 </transf>
 </goal>
</theory></file></why3session>
"""
REPLAY_OK = " 1/1 (replay OK)\n"
REPLAY_FAILED = ("   goal 'g.0', prover 'Z3 5.4.0 (pip)': Unknown (unknown) (0.01s, 915 steps) instead of "
                 "Valid (0.01s, 47 steps) (timelimit=120, memlimit=2000, steplimit=48)\n")
X_THEORY = 'theory M\n  goal g #"proofs/x.mlw" 3 7 8# :\n    true\nend\n'
LIB_THEORY = 'theory L\n  lemma half_ok #"proofs/lib/l.mlw" 2 8 15# :\n    true\nend\n'
REVIEWED_LIB = ('[[assumption]]\nfile = "proofs/lib/l.mlw"\ntheory = "L"\nkind = "lemma"\nname = "half_ok"\n'
                'reason = "no session proves proofs/lib"\n\n[stdlib_props]\n')
F_PY = "# req: MUL-R1\ndef f(x):\n    return x\n"


@pytest.fixture
def step(why3, tmp_path, monkeypatch):
    """A repository with one theory file (proofs/x.mlw and its session), a library file without
    session, the reviewed assumptions and one front-end file; why3 answers that all is well."""
    root = tmp_path / "repo"
    (root / "proofs" / "x").mkdir(parents=True)
    (root / "proofs" / "lib").mkdir()
    (root / "proofs" / "x.mlw").write_text(X_MLW)
    (root / "proofs" / "x" / "why3session.xml").write_text(X_SESSION)
    (root / "proofs" / "x" / "why3shapes.gz").write_bytes(b"shapes")
    (root / "proofs" / "x" / "why3session.xml.bak").write_text("an old session")
    (root / "proofs" / "lib" / "l.mlw").write_text("theory L\nend\n")
    (root / "proofs" / "assumptions.toml").write_text(REVIEWED_LIB)
    shutil.copy2(REPO / "proofs" / "why3.conf", root / "proofs" / "why3.conf")   # replay's budgets start from it
    (root / "f.py").write_text(F_PY)
    monkeypatch.setattr(proofs, "mlw_files", lambda: ["proofs/x.mlw"])
    monkeypatch.setattr(prove, "LIB_FILES", ["proofs/lib/l.mlw"])
    monkeypatch.setattr(prove, "PY_FILES", ["f.py"])
    why3.answer("replay x", REPLAY_OK)
    why3.answer("theory proofs/x.mlw", X_THEORY)
    why3.answer("modules proofs/x.mlw", err="module M\nend\n")       # the printer writes to stderr
    why3.answer("theory proofs/lib/l.mlw", LIB_THEORY)
    why3.answer("modules proofs/lib/l.mlw", err="")
    why3.answer("json cvc5", json.dumps(_vc(2, "Valid", 0.25, 7)))
    return root


def _run(root, capsys):
    rc = prove.run(root)
    return rc, json.loads((root / "build" / "evidence" / "proofs.json").read_text()), capsys.readouterr().out


def test_the_proof_step_with_every_answer_valid_is_ok_and_writes_every_field(step, why3, capsys):
    work = step / "build" / "proofs-replay"
    work.mkdir(parents=True)
    (work / "stale.txt").write_text("left by an earlier run")
    (step / "build" / "evidence").mkdir()                 # an earlier bundle's folder
    t0 = time.monotonic()
    rc, s, out = _run(step, capsys)
    wall = time.monotonic() - t0
    assert rc == 0 and s["ok"] is True
    assert [(g["file"], g["goal"], g["req"], g["prover"], g["result"]) for g in s["goals"]] == [
        ("proofs/x.mlw", "g", ["MUL-R1"], "z3", "valid"), ("f.py", "f", ["MUL-R1"], "cvc5", "valid")]
    assert s["assumptions"] == [{"file": "proofs/lib/l.mlw", "theory": "L", "kind": "lemma", "name": "half_ok",
                                 "line": 2, "at": "proofs/lib/l.mlw:2", "module": "L"}]
    assert s["assumption_problems"] == [] and s["stdlib_props"] == {}
    assert s["replay"] == {"proofs/x.mlw": 0} and s["replay_status"]["proofs/x.mlw"]["status"] == "ok"
    assert s["inputs"] == step_inputs(step, "proofs")
    assert s["budgets"] == {"sessions": f"per session and prover: {prove.STEP_MARGIN} x its largest recorded "
                                        f"step count, at least {prove.STEP_FLOOR} (prover's own step limit)",
                            "python_frontend_steps": prove.PY_STEPS,
                            "hang_guard_seconds": {"replay": prove.HANG_GUARD_S, "python_vc": prove.PY_HANG_GUARD}}
    assert s["hang_guard_hit"] == [] and isinstance(s["seconds"], float) and s["seconds"] >= 0
    # the replay ran on a fresh copy: the theory file and the session with its shapes, nothing else
    assert not (work / "stale.txt").exists() and (work / "x.mlw").read_text() == X_MLW
    assert sorted(p.name for p in (work / "x").iterdir()) == ["why3session.xml", "why3shapes.gz"]
    assert (step / "proofs" / "x" / "why3session.xml").read_text() == X_SESSION       # untouched
    calls = why3.calls()
    assert all(c["cwd"] == str(step) for c in calls)
    # the jobs run side by side (prove.jobs()): each call once, in any order
    assert sorted(c["argv"] for c in calls) == sorted([
        ["-C", str(work / "x.why3.conf"), "replay", "-L", str(work), str(work / "x")],
        ["-C", "proofs/why3.conf", "prove", "-L", "proofs", "--print-theory", "--debug", "print_locs", "proofs/x.mlw"],
        ["-C", "proofs/why3.conf", "prove", "-L", "proofs", "--type-only", "--debug", "print_modules,print_locs",
         "proofs/x.mlw"],
        ["-C", "proofs/why3.conf", "prove", "-L", "proofs", "--print-theory", "--debug", "print_locs",
         "proofs/lib/l.mlw"],
        ["-C", "proofs/why3.conf", "prove", "-L", "proofs", "--type-only", "--debug", "print_modules,print_locs",
         "proofs/lib/l.mlw"],
        ["-C", "proofs/why3.conf", "prove", "--json", "-P", "cvc5", "-s", str(prove.PY_STEPS["cvc5"]),
         "-t", str(prove.PY_HANG_GUARD), "-a", "split_vc", "f.py"]])
    lines = out.splitlines()
    progress = sorted(re.sub(r"^prove: \[ *\d+\.\ds\] ", "", line) for line in lines[:3])
    assert [re.sub(r"\(\d+\.\d s\)$", "(T)", line) for line in progress] == [
        "assumptions (from Why3's view): 1 listed, 0 problem(s)", "f.py: 1/1 VCs valid (T)",
        "proofs/x.mlw: replay ok (T)"]
    assert re.fullmatch(r"written build/evidence/proofs\.json in \d+\.\d+ s: OK", lines[-1])
    # each progress line shows the time since the step began, and the file's own time: never
    # more than the whole step, itself no more than the test's wall clock around it
    assert 0 <= s["seconds"] <= wall + 0.05 and s["seconds"] == round(s["seconds"], 1)
    assert all(0 <= float(t) <= s["seconds"] + 0.1 for t in re.findall(r"^prove: \[ *([\d.]+)s\]", out, re.M))
    assert all(0 <= float(t) <= s["seconds"] + 0.1 for t in re.findall(r"\((\d+\.\d) s\)$", out, re.M))


# each fault of why3 or of what it reads: (answer to change, how; the goal records' results;
# what proofs.json says about it). None of them may end in a proved step.
FAULTS = {
    "a failed goal": (("replay x", dict(out=REPLAY_FAILED, err="Replay failed.\n", rc=1)),
                      ["not proved: Z3 5.4.0 (pip): Unknown (unknown) (0.01s, 915 steps) instead of Valid "
                       "(0.01s, 47 steps) (timelimit=120, memlimit=2000, steplimit=48)", "valid"],
                      {"replay": {"proofs/x.mlw": 1}}),
    "an obsolete session": (("replay x", dict(out="[Warning] session is obsolete\n 1/1 (replay OK, obsolete session)\n")),
                            ["not proved (replay: obsolete)", "valid"], {"replay": {"proofs/x.mlw": 0}}),
    "a crash of the replay": (("replay x", dict(err="why3: internal error: Not_found\n", rc=2)),
                              ["not proved (replay: error)", "valid"], {"replay": {"proofs/x.mlw": 2}}),
    "an attempt stopped by the hang guard": (("replay x", dict(out=REPLAY_FAILED.replace(
        "Unknown (unknown) (0.01s, 915 steps)", "Timeout (121.00s)"), rc=1)),
        ["hang guard hit", "valid"], {"hang_guard_hit": ["proofs/x.mlw g"]}),
    "garbage from the replay": (("replay x", dict(out="\x00%%% 1/1 (replay\n")),
                                ["not proved (replay: error)", "valid"], {"replay": {"proofs/x.mlw": 0}}),
    "garbage from the front-end": (("json cvc5", dict(out="Valid\n")),
                                   ["valid", "failed: cvc5: unreadable why3 output at char 0: 'Valid\\n'"], {}),
    "a crash of the front-end": (("json cvc5", dict(err="why3: internal error\n", rc=1)),
                                 ["valid", "failed: cvc5: rc=1, 0 VCs, why3: internal error"], {}),
    "a new assumption": (("theory proofs/x.mlw", dict(out=X_THEORY.replace("end\n", '  axiom sneaky #"proofs/x.mlw" 5 2 8# :\nend\n'))),
                         ["valid", "valid"],
                         {"assumption_problems": ["new assumption axiom M.sneaky at proofs/x.mlw:5: not in proofs/assumptions.toml"]}),
    "a theory why3 cannot type": (("modules proofs/lib/l.mlw", dict(out="File l.mlw, line 1: syntax error\n", rc=1)),
                                  ["valid", "valid"],
                                  {"assumption_problems": ["assumptions not checked: why3 could not type proofs/lib/l.mlw: "
                                                           "File l.mlw, line 1: syntax error"], "assumptions": []}),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_fault_anywhere_fails_the_proof_step(step, why3, capsys, fault):
    (key, how), results, fields = FAULTS[fault]
    why3.answer(key, **how)
    rc, s, out = _run(step, capsys)
    assert rc == 1 and s["ok"] is False and out.splitlines()[-1].endswith(": FAILED")
    assert [g["result"] for g in s["goals"]] == results
    for k, v in fields.items():
        assert s[k] == v
    for problem in s["assumption_problems"]:          # each shown under the assumptions line
        assert f"    {problem}" in out.splitlines()


def test_every_front_end_file_is_proved_and_kept(step, why3, capsys, monkeypatch):
    (step / "g.py").write_text("def g(y):\n    return y\n")
    monkeypatch.setattr(prove, "PY_FILES", ["f.py", "g.py"])
    rc, s, _ = _run(step, capsys)
    assert rc == 0 and [(g["file"], g["goal"]) for g in s["goals"]] == [("proofs/x.mlw", "g"), ("f.py", "f"), ("g.py", "g")]
    assert s["python_frontend"]["total"] == 2


def test_a_missing_session_is_not_replayed_and_fails_the_step(step, why3, capsys):
    (step / "proofs" / "x" / "why3session.xml").unlink()
    rc, s, out = _run(step, capsys)
    assert rc == 1 and s["ok"] is False
    assert [g["file"] for g in s["goals"]] == ["f.py"]          # no goal of x to show as proved
    assert s["replay"] == {"proofs/x.mlw": -1} and s["replay_status"]["proofs/x.mlw"]["status"] == "missing"
    assert "replay" not in [a for c in why3.calls() for a in c["argv"]]
    assert "    missing session proofs/x/why3session.xml" in out.splitlines()


@pytest.mark.parametrize("broken", ["missing", "unreadable", "incomplete"])
def test_a_reviewed_list_that_cannot_be_read_fails_the_step(step, capsys, broken):
    toml = step / "proofs" / "assumptions.toml"
    if broken == "missing":
        toml.unlink()
    else:
        toml.write_text("[[assumption\n" if broken == "unreadable" else REVIEWED_LIB.replace('reason = "no session proves proofs/lib"\n', ""))
    rc, s, _ = _run(step, capsys)
    assert rc == 1 and s["ok"] is False
    [problem] = s["assumption_problems"]
    assert problem.startswith("assumptions not checked: ") and s["assumptions"] == []


def test_stdlib_props_are_checked_against_the_reviewed_counts(step, why3, capsys):
    """The count per theory must equal [stdlib_props] of the reviewed list; a list without that
    section reviews none (any stdlib prop is then a problem)."""
    why3.answer("theory proofs/lib/l.mlw", LIB_THEORY.replace(
        "end\n", '  axiom x #"/usr/share/why3/stdlib/ieee_float.mlw" 177 8 25# :\nend\n'))
    toml = step / "proofs" / "assumptions.toml"
    toml.write_text(REVIEWED_LIB + "L = 1\n")
    rc, s, _ = _run(step, capsys)
    assert rc == 0 and s["stdlib_props"] == {"L": 1} and s["assumption_problems"] == []
    toml.write_text(REVIEWED_LIB + "L = 2\n")
    rc, s, _ = _run(step, capsys)
    assert rc == 1 and s["assumption_problems"] == ["stdlib props per theory {'L': 1} differ from the reviewed "
                                                    "{'L': 2} (proofs/assumptions.toml [stdlib_props])"]
    toml.write_text(REVIEWED_LIB.replace("[stdlib_props]\n", ""))
    rc, s, _ = _run(step, capsys)
    assert rc == 1 and s["assumption_problems"] == ["stdlib props per theory {'L': 1} differ from the reviewed "
                                                    "{} (proofs/assumptions.toml [stdlib_props])"]


def test_replay_runs_every_step_counting_prover_under_a_step_budget_written_in_its_command(tmp_path):
    """Why3 1.5.1's `replay --use-steps` gives the provers no step limit (it runs the time
    command); the replay's own config runs each prover that counts steps with its step command
    and a fixed budget: STEP_MARGIN x the largest count it recorded in the session."""
    sess = tmp_path / "s.xml"
    sess.write_text(X_SESSION.replace('steps="47"', 'steps="60000"'))
    conf = tmp_path / "x.why3.conf"
    budgets = prove.steps_config(REPO, sess, conf)
    assert budgets == {("Z3", "5.4.0", "pip"): max(prove.STEP_FLOOR, prove.STEP_MARGIN * 60000)}
    text = conf.read_text()
    commands = re.findall(r'(?m)^command = "(.*)"$', text)
    assert 'command = "z3 -smt2 sat.random_seed=42 nlsat.randomize=false smt.random_seed=42 rlimit=120000 -st %f"' in text
    assert f'loadpath = "{REPO / "proofs" / "lib"}"' in text
    # every prover but Gappa (no step counter) runs by steps: no time limit, no %S left
    assert [c for c in commands if "%t" in c or "%S" in c] == [] and sum("gappa" in c for c in commands) == 1
    assert all(re.search(r"rlimit=\d+|--steps \d+", c) for c in commands if "gappa" not in c)


def test_replay_reads_both_streams_and_a_hang_is_stopped_by_the_guard(step, why3):
    work = step / "w"
    why3.answer("replay x", out=REPLAY_OK.replace("OK", "failed"), err=REPLAY_FAILED, rc=1)
    rep = prove.replay_session(step, "proofs/x.mlw", work)
    assert rep["status"] == "failed" and list(rep["failures"]) == ["g.0"]
    why3.answer("replay x", out=REPLAY_FAILED, sleep=30)
    rep = prove.replay_session(step, "proofs/x.mlw", work, hang_guard=2)
    assert rep["status"] == "hang guard hit" and rep["rc"] is None and list(rep["failures"]) == ["g.0"]
    assert 2 <= rep["seconds"] < 30 and rep["seconds"] == round(rep["seconds"], 1)
    assert proofs.summary(step, {"proofs/x.mlw": rep})["goals"][0]["result"] == "hang guard hit"
    why3.answer("replay x", sleep=30)                      # silent until stopped: nothing to show
    rep = prove.replay_session(step, "proofs/x.mlw", work, hang_guard=1)
    assert (rep["status"], rep["failures"], rep["tail"]) == ("hang guard hit", {}, [])
    rep = prove.replay_session(step, "proofs/nothing.mlw", work)
    assert rep == {"status": "missing", "rc": None, "failures": {}, "seconds": 0.0,
                   "tail": ["missing session proofs/nothing/why3session.xml"]}


def test_assumptions_are_read_from_both_printers_and_a_clones_copy_is_listed_once(tmp_path, why3):
    """find on the printers' recorded output (test_proofs_gate's THEORIES and MODULES): the
    source axiom and the one a clone keeps, the assume; the val is refined in C (no
    assumption), its copy in B is the same val; the stdlib prop is counted."""
    from tests.trace.test_proofs_gate import MODULES, THEORIES
    why3.answer("theory t.mlw", THEORIES)
    why3.answer("modules t.mlw", out="", err=MODULES)
    found = A.find(tmp_path, ["t.mlw"])
    assert found == {"assumptions": [
        {"file": "t.mlw", "theory": "A", "kind": "axiom", "name": "sneaky", "line": 5, "at": "t.mlw:5"},
        {"file": "t.mlw", "theory": "B", "kind": "axiom", "name": "sneaky1", "line": 5, "at": "t.mlw:5"},
        {"file": "t.mlw", "theory": "A", "kind": "assume", "name": "k", "line": 10, "at": "t.mlw:10"}],
        "stdlib_props": {"C": 1}}
    # a file no session proves: its lemmas are assumptions too
    sessionless = A.find(tmp_path, ["t.mlw"], frozenset({"t.mlw"}))["assumptions"]
    assert ("A", "lemma", "l1") in [(a["theory"], a["kind"], a["name"]) for a in sessionless]
    # without the refinement, the val and its clone's copy: one assumption, at the declaration
    why3.answer("theory t.mlw", THEORIES.replace("  goal f'refn'vc #\"t.mlw\" 7 6 7# :\n", ""))
    vals = [a for a in A.find(tmp_path, ["t.mlw"])["assumptions"] if a["kind"] == "val"]
    assert vals == [{"file": "t.mlw", "theory": "A", "kind": "val", "name": "f", "line": 7, "at": "t.mlw:7"}]
    # only a refinement goal discharges a val: another goal at its location does not (find__mutmut_56)
    why3.answer("theory t.mlw", THEORIES.replace("goal f'refn'vc", "goal f'vc"))
    assert ("A", "val", "f") in [(a["theory"], a["kind"], a["name"]) for a in A.find(tmp_path, ["t.mlw"])["assumptions"]]
    # each assume is listed (two in one let), and a val printed again in a clone does not end the list
    why3.answer("modules t.mlw", err=MODULES + 'module C\n  let m\n    #"t.mlw" 30 4 9#\n    assume { true };\n'
                '    #"t.mlw" 31 4 9#\n    assume { true }\nend\n')
    assert [(a["theory"], a["kind"], a["name"], a["line"]) for a in A.find(tmp_path, ["t.mlw"])["assumptions"]
            if a["kind"] != "axiom"] == [("A", "val", "f", 7), ("A", "assume", "k", 10), ("C", "assume", "m", 30),
                                         ("C", "assume", "m", 31)]
    # an assume without a location is placed at its file
    why3.answer("modules t.mlw", err="module A\n  let k\n    assume { false }\nend\n")
    [a] = [a for a in A.find(tmp_path, ["t.mlw"])["assumptions"] if a["kind"] == "assume"]
    assert (a["line"], a["at"]) == (None, "t.mlw")


def test_why3_that_cannot_type_a_file_is_an_error_with_the_end_of_its_message(tmp_path, why3):
    why3.answer("theory t.mlw", out="typing...\n", err="a" * 100 + "b" * 400 + "\n", rc=1)
    with pytest.raises(RuntimeError) as e:
        A._why3(tmp_path, "t.mlw", "--print-theory")
    assert str(e.value) == "why3 could not type t.mlw: " + "b" * 400
    why3.answer("theory t.mlw", out="File t.mlw: syntax error\n", rc=2)
    with pytest.raises(RuntimeError, match=r"^why3 could not type t\.mlw: File t\.mlw: syntax error$"):
        A._why3(tmp_path, "t.mlw", "--print-theory")
    why3.answer("theory t.mlw", out="out\n", err="err\n")
    assert A._why3(tmp_path, "t.mlw", "--print-theory") == "out\nerr\n"


# ------------------------------------------------------------------ session building, main

def test_replay_command_forces_only_when_told_and_shows_the_end_of_its_output(tmp_path, why3, capsys):
    sess = tmp_path / "proofs" / "x"
    why3.answer("replay x", out="o" * 400, err="e" * 400, rc=3)
    assert prove._replay(tmp_path, sess, force=True) == 3
    assert prove._replay(tmp_path, sess, force=False) == 3
    assert [(c["argv"], c["cwd"]) for c in why3.calls()] == [
        (["-C", "proofs/why3.conf", "replay", "-L", "proofs", "-f", "proofs/x"], str(tmp_path)),
        (["-C", "proofs/why3.conf", "replay", "-L", "proofs", "proofs/x"], str(tmp_path))]
    assert capsys.readouterr().err == ("o" * 300 + "e" * 300) * 2


def test_leaves_are_the_goals_without_transformation_and_sessions_are_written_with_the_header(tmp_path):
    r = ET.fromstring('<s><goal name="a"><transf name="split_vc"><goal name="a.0"/><goal name="a.1">'
                      '<transf name="t"><goal name="a.1.0"/></transf></goal></transf></goal><goal name="b"/></s>')
    assert [g.get("name") for g in prove._leaves(r)] == ["a.0", "a.1.0", "b"]
    prove._write(ET.ElementTree(ET.fromstring('<why3session><file><path name="x"/></file></why3session>')),
                 tmp_path / "s.xml")
    assert (tmp_path / "s.xml").read_text() == (
        proofs.HEADER + '<why3session>\n <file>\n  <path name="x" />\n </file>\n</why3session>\n')


def test_main_runs_the_step_or_builds_a_session_in_the_current_directory(tmp_path, monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(prove, "run", lambda root: calls.append(("run", root)) or 5)
    monkeypatch.setattr(prove, "build_session", lambda root, rel, **kw: calls.append(("build", root, rel, kw)) or 6)
    monkeypatch.chdir(tmp_path)
    assert prove.main(["run"]) == 5 and prove.main(["build", "proofs/x.mlw"]) == 6
    # an explicit prover list, tried in order (the half-precision files name bitwuzla, cvc5fpexp)
    assert prove.main(["build", "proofs/x.mlw", "bitwuzla,cvc5fpexp"]) == 6
    monkeypatch.setattr(sys, "argv", ["prove", "run"])
    assert prove.main() == 5
    assert calls == [("run", tmp_path), ("build", tmp_path, "proofs/x.mlw", {}),
                     ("build", tmp_path, "proofs/x.mlw", {"provers": ("bitwuzla", "cvc5fpexp")}), ("run", tmp_path)]
    for argv in ([], ["prove"], ["runs"]):
        assert prove.main(argv) == 2
        assert capsys.readouterr().out == "usage: python -m sonnx_dev.prove build proofs/X.mlw [PROVER,...] | replay proofs/X.mlw | run\n"
    assert len(calls) == 4


# ------------------------------------------------------------------ one real replay (no fake)

import shutil  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
T_MLW = ("module T\n  use int.Int\n  (* req: MUL-R1 *)\n  goal g: 1 + 1 = 2\n"
         "  let f (x: int) : int ensures { result > x } = x + 1\nend\n"
         "module B\n  use int.Int\n  goal bad: 1 + 1 = 3\nend\n")


@pytest.mark.skipif(shutil.which("why3") is None, reason="why3 not installed")
def test_a_real_session_of_a_tiny_theory_replays_as_built_and_a_goal_made_false_fails(tmp_path, monkeypatch):
    """Why3 and the provers themselves (seconds): build a session over an old one for a theory
    with two true goals and a module with a false one, record its shapes with one replay (as
    proofs/README.md says), replay it as the proof step does. The true goals are valid; the
    false one keeps no failed attempt and is not proved, although why3 says "replay OK"; the
    file is not ok. Then the replay against the theory with its true goal made false fails it."""
    root = tmp_path / "repo"
    (root / "proofs" / "t").mkdir(parents=True)
    for sub in ("why3.conf", "lib", "drivers"):
        src = REPO / "proofs" / sub
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, root / "proofs" / sub)
    (root / "proofs" / "t.mlw").write_text(T_MLW)
    (root / "proofs" / "t" / "why3session.xml").write_text("an old session, replaced")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # Z3 5.4
    monkeypatch.setattr(proofs, "mlw_files", lambda: ["proofs/t.mlw"])
    # why3 replay exits 0: the false goal's leaf has no attempt left to fail (the session tells)
    assert prove.build_session(root, "proofs/t.mlw") == 0
    sess = root / "proofs" / "t"
    xml = ET.parse(sess / "why3session.xml").getroot()
    # the limits given (Why3 would put memlimit 1000 where the attribute is missing)
    assert ("Z3", "pip", "10", "0", "2000") in [(p.get("name"), p.get("alternative"), p.get("timelimit"),
                                                p.get("steplimit"), p.get("memlimit")) for p in xml.findall("prover")]
    [bad_leaf] = [g for g in xml.iter("goal") if g.get("name") == "bad.0"]
    assert bad_leaf.find("proof") is None                    # failed attempts dropped
    assert [(g["goal"], g["proved"], g["provers"], g["leaves"]) for g in proofs.read_session(sess)] == [
        ("g", True, ["z3"], ["g.0"]), ("f'vc", True, ["z3"], ["f'vc.0"]), ("bad", False, [], [])]
    assert not (sess / "why3session.xml.bak").exists()
    assert prove._replay(root, sess, force=False) == 0          # records the shapes
    work = root / "build" / "w"
    work.mkdir(parents=True)
    shutil.copy2(root / "proofs" / "t.mlw", work / "t.mlw")
    rep = prove.replay_session(root, "proofs/t.mlw", work)
    assert (rep["status"], rep["rc"], rep["failures"]) == ("ok", 0, {})
    s = proofs.summary(root, {"proofs/t.mlw": rep})
    assert s["ok"] is False and [(g["goal"], g["req"], g["result"]) for g in s["goals"]] == [
        ("g", ["MUL-R1"], "valid"), ("f'vc", [], "valid"), ("bad", [], "not proved")]
    (work / "t.mlw").write_text(T_MLW.replace("1 + 1 = 2", "1 + 1 = 4"))
    rep = prove.replay_session(root, "proofs/t.mlw", work)
    assert rep["status"] != "ok" and rep["rc"] != 0 and list(rep["failures"]) == ["g.0"]
    s = proofs.summary(root, {"proofs/t.mlw": rep})
    assert s["goals"][0]["result"].startswith("not proved")


def test_how_many_proof_jobs_run_at_once(monkeypatch):
    """SONNX_PROOF_JOBS sets it (1: one after the other); anything but a positive integer is
    one clear line, not a traceback; unset: the CPUs this process may use."""
    monkeypatch.setenv("SONNX_PROOF_JOBS", "3")
    assert prove.jobs() == 3
    for bad in ("0", "-1", "two", "1.5"):
        monkeypatch.setenv("SONNX_PROOF_JOBS", bad)
        with pytest.raises(SystemExit, match="SONNX_PROOF_JOBS"):
            prove.jobs()
    monkeypatch.delenv("SONNX_PROOF_JOBS")
    assert prove.jobs() == len(os.sched_getaffinity(0))


def test_the_proof_jobs_run_side_by_side(step, why3, monkeypatch, capsys):
    """With two jobs the replay and the front end overlap (each waits for the other to start:
    one after the other, the first would wait forever; a 10 s guard turns that into a failure)."""
    import threading

    monkeypatch.setenv("SONNX_PROOF_JOBS", "2")
    both = threading.Barrier(2, timeout=10)
    real_replay, real_py = prove.replay_session, prove.prove_py

    def replay(*a, **k):
        both.wait()
        return real_replay(*a, **k)

    def front(*a, **k):
        both.wait()
        return real_py(*a, **k)
    monkeypatch.setattr(prove, "replay_session", replay)
    monkeypatch.setattr(prove, "prove_py", front)
    rc, s, _ = _run(step, capsys)
    assert rc == 0 and s["ok"] is True


def test_replaying_one_session_as_the_step_does(step, why3, capsys, monkeypatch):
    """`python -m sonnx_dev.prove replay proofs/x.mlw`: the step's replay (its step-budget
    config) of one session; exit 0 and 'replay ok', exit 1 with the failed goal, exit 2 for a
    path that is no theory file."""
    monkeypatch.chdir(step)                                 # run from the repository root
    assert prove.main(["replay", "proofs/x.mlw"]) == 0
    out = capsys.readouterr().out
    assert "proofs/x.mlw: replay ok" in out
    (call,) = [c for c in why3.calls() if "replay" in c["argv"]]
    assert call["argv"][1].endswith("x.why3.conf")          # the step budgets' config
    why3.answer("replay x", out=REPLAY_FAILED, err="Replay failed.\n", rc=1)
    assert prove.main(["replay", "proofs/x.mlw"]) == 1
    assert "replay failed" in capsys.readouterr().out
    assert prove.main(["replay", "proofs/none.mlw"]) == 2
    assert "not a .mlw file" in capsys.readouterr().err
