"""The Bitwuzla prover wrapper (tools/sonnx_dev/bitwuzla_why3.py) is trusted by the float16
proofs: it may leave out what Bitwuzla cannot parse, which only weakens a task, so "unsat"
stays a proof; it must never answer "sat" after leaving something out, answer anything but
"unknown" when the goal itself was left out, or go past its step budget."""
from __future__ import annotations

import pytest

bz = pytest.importorskip("bitwuzla")

from sonnx_dev import bitwuzla_why3 as W     # noqa: E402  (tools/ on PYTHONPATH)

pytestmark = pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3")   # the float16 lemmas' prover

F16 = "(_ FloatingPoint 5 11)"
DECL = f"(declare-fun x () {F16})\n(declare-fun y () {F16})\n"
# the float16 lemma of proofs/mul_half.mlw as a bare task: true, so its negation is unsat
GOAL = (";; Goal mul16\n(assert (not (= ((_ to_fp 5 11) RNE (fp.mul RNE ((_ to_fp 8 24) RNE x) "
        "((_ to_fp 8 24) RNE y))) (fp.mul RNE x y))))\n")
FALSE_GOAL = ";; Goal wrong\n(assert (not (= (fp.add RNE x y) x)))\n"      # x + y = x: false


def answer(tmp_path, text: str, *args: str, capsys) -> list[str]:
    f = tmp_path / "task.smt2"
    f.write_text(text)
    assert W.main([*args, str(f)]) == 0
    return capsys.readouterr().out.split()


def test_a_true_float16_lemma_is_unsat_with_its_step_count(tmp_path, capsys):
    out = answer(tmp_path, DECL + GOAL + "(check-sat)\n", capsys=capsys)
    assert out[0] == "bitwuzla-steps:" and int(out[1]) > 0 and out[-1] == "unsat"


def test_integer_and_real_commands_are_left_out_and_the_goal_still_proved(tmp_path, capsys):
    text = ("(set-logic ALL)\n(declare-fun n () Int)\n(assert (> n 0))\n"
            "(declare-fun r () Real)\n(assert (forall ((z Real)) (= z z)))\n" + DECL + GOAL + "(check-sat)\n(get-info :reason-unknown)\n")
    assert answer(tmp_path, text, capsys=capsys)[-1] == "unsat"


def test_a_false_goal_is_sat_only_when_nothing_was_left_out(tmp_path, capsys):
    assert answer(tmp_path, DECL + FALSE_GOAL + "(check-sat)\n", capsys=capsys)[-1] == "sat"
    text = "(declare-fun n () Int)\n(assert (> n 0))\n" + DECL + FALSE_GOAL + "(check-sat)\n"
    assert answer(tmp_path, text, capsys=capsys)[-1] == "unknown"    # a hypothesis was left out


def test_a_goal_left_out_is_unknown_never_unsat(tmp_path, capsys):
    # with the goal gone the rest is contradictory (unsat), which must not prove the goal
    text = DECL + "(assert false)\n(declare-fun n () Int)\n;; Goal g\n(assert (> n 0))\n(check-sat)\n"
    assert answer(tmp_path, text, capsys=capsys)[-2:] == ["0", "unknown"]


def test_the_step_budget_stops_the_search(tmp_path, capsys):
    out = answer(tmp_path, DECL + GOAL + "(check-sat)\n", "--steps", "10", capsys=capsys)
    assert out[:2] == ["bitwuzla-steps:", "11"] and out[-1] == "unknown"
    assert "step limit exceeded (10)" in " ".join(out)


def test_commands_keep_their_comments_and_skip_strings_and_quoted_symbols():
    cmds = W.commands(';; a\n(declare-fun |x)y| () Bool)\n(set-info :source "a ) ; b")\n;; Goal g\n(assert |x)y|) ; c\n')
    assert cmds == [(";; a", "(declare-fun |x)y| () Bool)"), ("", '(set-info :source "a ) ; b")'),
                    (";; Goal g", "(assert |x)y|)")]
