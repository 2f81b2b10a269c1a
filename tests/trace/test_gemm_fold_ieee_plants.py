"""GEMM-R7 end to end over IEEE bites: on a copy of proofs/ under tmp, a planted sharpening of the
bound in proofs/gemm_fold_ieee.mlw's generic fold_bound_c, or in proofs/gemm_fold_ieee_link.mlw's
float64 theorem gemm_bound_f64, makes the replay of the committed session fail, under the session's step budgets (prove.replay_session, as tools/prove runs it),
every failed leaf stopped by its prover (an answer or its step limit), never by the clock or memory.

- gamma_(K+1) in place of gamma_(K+2) (one rounding fewer than the fold with alpha, beta and C);
- the underflow budget (|alpha| K + 2) eta cut to (|alpha| K + 1) eta.
- in gemm_bound_f64 (the theorem about gemm.mlw's G.entry): (|alpha| K + 1) eta.
The same copies without a plant are proofs/ byte for byte (the proof step replays those).
"""
from __future__ import annotations

import pytest

from .proof_plants import assert_plant_fails, assert_unplanted_replays, needs_why3

STEM = "gemm_fold_ieee"
# unique lines of fold_bound_c's postcondition (fold_bound_noc's end in "k)" and "eta }\n  = params ();\n    mul_fin")
GAMMA_C = "<=. gam u (k + 2) *. (RA.abs (rv alpha) *. sa (ra a) (ra b) k\n"
ETA_C = "+. 2.0) *. eta }\n  = params ();\n    let r"

PLANTS = {"gamma_k_plus_1": (GAMMA_C, GAMMA_C.replace("gam u (k + 2)", "gam u (k + 1)")),
          "dropped_underflow": (ETA_C, ETA_C.replace("+. 2.0)", "+. 1.0)"))}
# gemm_bound_f64's underflow budget (the with-C theorem over the inputs' real values; the other
# theorems' lines end the same: anchored on what follows)
LINK = "gemm_fold_ieee_link"
ETA_LINK = "+. 2.0) *. 0x1p-1074 }\n  = gemm_bound_c_f64 a b c ta tb alpha beta m n k i j;"


@needs_why3
@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_sharpened_end_to_end_bound_fails(plant, tmp_path, monkeypatch):
    assert_plant_fails(tmp_path, monkeypatch, STEM, *PLANTS[plant], {"fold_bound_c"})


@needs_why3
@pytest.mark.req("GEMM-R7")
def test_the_unplanted_copies_replay_the_same_goals(tmp_path, monkeypatch):
    """The same copies without the plants are proofs/ itself, and the same focused replays pass."""
    assert_unplanted_replays(tmp_path / "fold", monkeypatch, STEM, {"fold_bound_c"})
    assert_unplanted_replays(tmp_path / "link", monkeypatch, LINK, {"gemm_bound_f64"})


@needs_why3
@pytest.mark.req("GEMM-R7")
def test_a_sharpened_theorem_about_gemm_entry_fails(tmp_path, monkeypatch):
    assert_plant_fails(tmp_path, monkeypatch, LINK, ETA_LINK, ETA_LINK.replace("+. 2.0)", "+. 1.0)"), {"gemm_bound_f64"})

