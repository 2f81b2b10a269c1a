"""GEMM-R7's per-operation link bites: on a copy of proofs/ under tmp, a planted strengthening of a
rounding fact in proofs/gemm_error.mlw makes the replay of the committed session fail (as
tools/prove replays it):

- the float64 product's eta / 2 (2^-1075) dropped from `mul_model_f64` (the model's product
  fact, the form proofs/gemm_fold_error.mlw consumes): false for a product in the subnormal
  range, no longer proved;
- the float32 sum's relative bound 2^-24 halved in `add_model_f32`: false, no longer proved.
The same copy without a plant replays ok.
"""
from __future__ import annotations

import pytest

from .proof_plants import assert_plant_fails, assert_unplanted_replays, needs_why3

MUL64 = "<=. 0x1p-53 *. RA.abs (t'real x *. t'real y) +. 0x1p-1075 }\n  = let z"
ADD32 = "<=. 0x1p-24 *. RA.abs (t'real x +. t'real y) }\n  = let z"

PLANTS = {"mul_model_f64": (MUL64, MUL64.replace(" +. 0x1p-1075", "")),
          "add_model_f32": (ADD32, ADD32.replace("0x1p-24", "0x1p-25"))}


@needs_why3
@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_sharpened_step_fails(plant, tmp_path, monkeypatch):
    assert_plant_fails(tmp_path, monkeypatch, "gemm_error", *PLANTS[plant], {plant})


@needs_why3
@pytest.mark.req("GEMM-R7")
def test_the_unplanted_copy_replays_the_same_goals(tmp_path, monkeypatch):
    """The same copy and focused replay without the plant: the failures above come from the plants."""
    assert_unplanted_replays(tmp_path, monkeypatch, "gemm_error", set(PLANTS))
