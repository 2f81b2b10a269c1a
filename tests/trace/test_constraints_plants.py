"""The refusal lemmas proved about the whole constraint functions (proofs/constraints.mlw,
modules ElementwiseRefusals and GemmRefusals) bite: on a copy of proofs/, a model that
forgets an input in its dense/typed block no longer proves the refusals that input needs, and
every failed leaf is stopped by its prover under tools/prove's step budgets, never by the clock.
The differential test (test_refusal_differential.py) catches the same plants from the other
side: the model would then disagree with the Python function it models.

- Element-wise: B left out of [dense_and_typed] (only A is looked at): `dense_typed_kept`, the
  step of `elementwise_sparse_refused` that carries the block's findings to the whole function,
  is no longer proved;
- Gemm: C left out of [dense_and_typed]: `gemm_tail_kept`, the same step of every GemmRefusals
  lemma, is no longer proved.

(The refusal lemmas after the broken step may still replay: Why3 lets them use the earlier, now
unproved, let lemma; the session fails all the same, and tools/prove with it.)
"""
from __future__ import annotations

import pytest

from .proof_plants import assert_copy_is_the_repository, assert_failed_by_steps, needs_why3, planted, replay


@needs_why3
@pytest.mark.req("MUL-R2", "ADD-R2", "SUB-R2", "DIV-R2")
def test_b_left_out_fails_the_elementwise_sparse_refusal(tmp_path, monkeypatch):
    root = planted(tmp_path, "constraints", "let f = dense_and_typed allowed (SCons a (SCons b SNil)) in",
                   "let f = dense_and_typed allowed (SCons a SNil) in", within="ElementwiseConstraints")
    rep = replay(root, "constraints", monkeypatch)
    assert_failed_by_steps(root, "constraints", rep, {"dense_typed_kept"})


@needs_why3
@pytest.mark.req("GEMM-R3")
def test_c_left_out_fails_the_gemm_type_refusals(tmp_path, monkeypatch):
    root = planted(tmp_path, "constraints", "let f = dense_and_typed allowed (SCons a (SCons b (cin_sigs c))) in",
                   "let f = dense_and_typed allowed (SCons a (SCons b SNil)) in", within="GemmConstraints")
    rep = replay(root, "constraints", monkeypatch)
    assert_failed_by_steps(root, "constraints", rep, {"gemm_tail_kept"})


@pytest.mark.req("MUL-R2", "ADD-R2", "SUB-R2", "DIV-R2", "GEMM-R3")
def test_the_unplanted_copy_is_the_repository(tmp_path):
    """The control: without the plant the copy is proofs/ byte for byte, whose session the proof
    step replays (tools/prove); the failures above come from the plants."""
    root = planted(tmp_path, "constraints", "module GemmRefusals", "module GemmRefusals")
    assert_copy_is_the_repository(root)
