"""The refusal proofs bite (issue 19): on a copy of proofs/ under tmp, a planted fault in the
model makes the replay of the committed session fail, under the step budgets tools/prove
gives (sonnx_dev.prove.steps_config: each prover that counts steps is run with its step
command and a fixed budget, 2x the largest count it recorded in the session). Every goal named
below fails, and every failed leaf of the replay is stopped by the prover itself (its answer,
or its step limit: a step count within the budget), never by the clock or by memory
(issue 32: a failing verdict's reason is the same on every machine). Before, Why3 1.5.1's
`replay --use-steps` ran the provers without a step limit (its time command): cvc5 ran 28 s
and 1 M resource units on leaves recorded at 14,233, and `broadcastable_iff_broadcast_shape`
failed only at the 120 s guard.

- `broadcastable` redefined as `true` (elementwise.mlw): the lemmas that pin it down
  (`broadcastable_iff_broadcast_shape`, `not_broadcastable_example`) are no longer proved;
- Gemm's C check made shape-blind (gemm_refusal.mlw: C accepted when its number of elements is
  M * N): `refuses_c_transposed`, `refuses_c_not_mn`, `accepts_exactly` are no longer proved.
"""
from __future__ import annotations

import pytest

from .proof_plants import assert_failed_by_steps, assert_plant_fails, assert_unplanted_replays, needs_why3, planted, replay

BROADCAST_GOALS = {"broadcastable_iff_broadcast_shape", "not_broadcastable_example"}
GEMM_C_GOALS = {"refuses_c_transposed", "refuses_c_not_mn", "accepts_exactly"}


@needs_why3
@pytest.mark.req("MUL-R4", "ADD-R4", "SUB-R4")
def test_broadcastable_redefined_as_true_fails_the_refusal_goals(tmp_path, monkeypatch):
    old = "predicate broadcastable (s1 s2: shape) = compat_rev (rev_app s1 Nil) (rev_app s2 Nil)"
    assert_plant_fails(tmp_path, monkeypatch, "elementwise", old, "predicate broadcastable (s1 s2: shape) = true",
                       BROADCAST_GOALS)
    # (later goals such as refuses_broadcastable may still replay: Why3 lets them use the earlier,
    # now unproved, lemma broadcastable_iff_broadcast_shape; the session fails all the same)


@needs_why3
@pytest.mark.req("GEMM-R4")
def test_shape_blind_c_fails_the_gemm_refusal_goals(tmp_path, monkeypatch):
    old = "| SomeC s -> if same_shape s (Cons m (Cons n Nil)) then Clean else Violation R4 Clean"
    new = "| SomeC s -> if numel s = m * n then Clean else Violation R4 Clean"
    root = planted(tmp_path, "gemm_refusal", old, new)
    mlw = root / "proofs" / "gemm_refusal.mlw"
    anchor = "  (** the shape block of [constraints]"
    mlw.write_text(mlw.read_text().replace(anchor, (
        "  let rec function numel (s: shape) : int variant { s }\n"
        "  = match s with Nil -> 1 | Cons d r -> d * numel r end\n\n") + anchor, 1))
    rep = replay(root, "gemm_refusal", monkeypatch, only=GEMM_C_GOALS)
    assert_failed_by_steps(root, "gemm_refusal", rep, GEMM_C_GOALS)


@needs_why3
@pytest.mark.req("MUL-R4", "GEMM-R4")
def test_the_unplanted_copies_replay_the_same_goals(tmp_path, monkeypatch):
    """The same copies and focused replays without the plants: the failures above come from the plants."""
    assert_unplanted_replays(tmp_path / "elementwise", monkeypatch, "elementwise", BROADCAST_GOALS)
    assert_unplanted_replays(tmp_path / "gemm_refusal", monkeypatch, "gemm_refusal", GEMM_C_GOALS)
