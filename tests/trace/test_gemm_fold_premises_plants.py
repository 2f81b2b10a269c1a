"""GEMM-R7's premises bite: on a copy of proofs/ under tmp, a planted falsehood in
proofs/gemm_fold_premises.mlw makes the replay of the committed session fail (as tools/prove
replays it, under its step budgets), every failed leaf stopped by its prover (an answer or its
step limit), never by the clock or memory:

- tiny_fp32 (pure floating point, cvc5 through the SMT-LIB FP driver) with the RTN bound
  widened to 2^-124: false (x = -2^-125, y = -2^-149: the sum needs 25 bits);
- add_exact_f32 (cvc5 through the axiomatic driver) for sums below 2^-124: false, and the
  step through tiny_fp32 no longer goes through;
- finite_rev_add_f64 for a finite sum rounded toward zero (RTZ): false (RTZ turns an overflow
  into the largest finite float) and not an instance of the stdlib's add_finite_rev_n (RNE/RNA
  only): the axiomatic driver's stdlib props do not prove it.
The same copy without a plant is proofs/ byte for byte (the proof step replays that), and one
unplanted copy is replayed ok.
"""
from __future__ import annotations

import pytest

from .proof_plants import assert_plant_fails, assert_unplanted_replays, needs_why3

STEM = "gemm_fold_premises"
TINY = "le (abs (add RTN x y)) (0x1p-125:t)"
EXACT = "requires { RA.abs (t'real x +. t'real y) <. 0x1p-125 }"
REV = "t'isFinite (add RNE x y) -> no_overflow RNE (t'real x +. t'real y)"

PLANTS = {"tiny_fp32": ("TinyFP32", TINY, TINY.replace("0x1p-125", "0x1p-124")),
          "add_exact_f32": ("Exact32", EXACT, EXACT.replace("0x1p-125", "0x1p-124")),
          "finite_rev_add_f64": ("Exact64", REV, REV.replace("add RNE", "add RTZ"))}


@needs_why3
@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_false_premise_fails(plant, tmp_path, monkeypatch):
    module, old, new = PLANTS[plant]
    assert_plant_fails(tmp_path, monkeypatch, STEM, old, new, {plant}, within=module)


@needs_why3
@pytest.mark.req("GEMM-R7")
def test_the_unplanted_copy_replays_the_same_goals(tmp_path, monkeypatch):
    """The same copy without a plant is the repository's proofs/, and the same focused replay
    fails none of the goals: the failures above come from the plants."""
    assert_unplanted_replays(tmp_path, monkeypatch, STEM, set(PLANTS))
