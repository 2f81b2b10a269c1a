"""GEMM-R7's fold bound bites: on a copy of proofs/ under tmp, a planted weakening of the bound in
proofs/gemm_fold_error.mlw makes the replay of the committed session fail, under the session's
step budgets (prove.replay_session, as tools/prove runs it), every failed leaf stopped by its
prover (an answer or its step limit), never by the clock or memory.

- gamma_(K+1) in place of gamma_(K+2) in `fold_error_c` (one rounding fewer than the fold with
  alpha, beta and C has: product, K - 1 sums, alpha, the final sum): no longer proved;
- the underflow budget `(|alpha| K + 2) eta` cut to `(|alpha| K + 1) eta` in `fold_error_c` (the
  eta / 2 of beta (x) C dropped): no longer proved.
The same copy without a plant is proofs/ byte for byte (the proof step replays those).
"""
from __future__ import annotations

import pytest

from .proof_plants import assert_plant_fails, assert_unplanted_replays, needs_why3

# unique lines of fold_error_c's postcondition in proofs/gemm_fold_error.mlw
GAMMA_C = "gam u (k + 2) *. (RA.abs alpha *. sa a b k +. RA.abs beta *. RA.abs c)\n"
ETA_C = "+. (RA.abs alpha *. from_int k +. 2.0) *. eta }\n  = assert { from_int (k + 1) *. u <=. from_int (k + 2) *. u };\n    alpha_error u eta alpha r"


# (anchor, the weakened text): gamma_(K+1) for gamma_(K+2); beta (x) C's eta / 2 dropped
PLANTS = {"gamma_k_plus_1": (GAMMA_C, GAMMA_C.replace("gam u (k + 2)", "gam u (k + 1)")),
          "dropped_beta_c_underflow": (ETA_C, ETA_C.replace("from_int k +. 2.0", "from_int k +. 1.0"))}


@needs_why3
@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_weakened_bound_fails(plant, tmp_path, monkeypatch):
    assert_plant_fails(tmp_path, monkeypatch, "gemm_fold_error", *PLANTS[plant], {"fold_error_c"})


@needs_why3
@pytest.mark.req("GEMM-R7")
def test_the_unplanted_copy_replays_the_same_goal(tmp_path, monkeypatch):
    """The same copy without the plant is proofs/ itself, and the same focused replay passes."""
    assert_unplanted_replays(tmp_path, monkeypatch, "gemm_fold_error", {"fold_error_c"})
