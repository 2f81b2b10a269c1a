"""Conv's proof bites: on a copy of proofs/ under tmp, a planted fault in proofs/conv.mlw makes the
replay of the committed session fail, under the step budgets tools/prove gives
(sonnx_dev.prove.steps_config), every failed leaf stopped by its prover (an answer, or the step
limit), never by the hang guard or memory (issue 32).

- an off-by-one in the im2col index map (the patch matrix reads kernel column b + 1 for row b):
  `im2col_def` (the map as the theorem reads it) is no longer proved;
- the summation order swapped inside a kernel row (the new product added on the left, s = p + s,
  where the profile states s = s + p; rounded additions are compared structurally, so the order
  matters): `row_fold` (Conv's row = Gemm's next steps) is no longer proved.
The same copy without a plant is proofs/ byte for byte (the proof step replays those).
"""
from __future__ import annotations

import pytest

from .proof_plants import assert_plant_fails, assert_unplanted_replays, needs_why3

# the anchors below are unique lines of proofs/conv.mlw
IM2COL_ROW_B = "(tap (col_x g j) g.sw (row_b g r) g.dw g.pl)\n"
ROW_STEP = "= if b <= 0 then s else add (frow x w g n m y xo s c a (b - 1)) (term x w g n m y xo c a (b - 1))"


@needs_why3
@pytest.mark.req("CONV-R1", "CONV-R6")
def test_off_by_one_in_the_im2col_map_fails(tmp_path, monkeypatch):
    assert_plant_fails(tmp_path, monkeypatch, "conv", IM2COL_ROW_B,
                       "(tap (col_x g j) g.sw (row_b g r + 1) g.dw g.pl)\n", {"im2col_def"})


@needs_why3
@pytest.mark.req("CONV-R6")
def test_swapped_summation_order_fails(tmp_path, monkeypatch):
    new = ROW_STEP.replace("add (frow x w g n m y xo s c a (b - 1)) (term x w g n m y xo c a (b - 1))",
                           "add (term x w g n m y xo c a (b - 1)) (frow x w g n m y xo s c a (b - 1))")
    assert_plant_fails(tmp_path, monkeypatch, "conv", ROW_STEP, new, {"row_fold"})


@needs_why3
@pytest.mark.req("CONV-R1", "CONV-R6")
def test_the_unplanted_copy_replays_the_same_goals(tmp_path, monkeypatch):
    """The same copy without the plant is proofs/ itself, and the same focused replay fails
    neither goal."""
    assert_unplanted_replays(tmp_path, monkeypatch, "conv", {"im2col_def", "row_fold"})
