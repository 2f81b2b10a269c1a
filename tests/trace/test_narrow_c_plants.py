"""The proved narrowing bites, and the code proved is the code run: on a copy of proofs/ under
tmp, rounding ties away from zero instead of to even in proofs/narrow_c.mlw makes the replay of
the committed session fail (as tools/prove replays it, under its step budgets, every failed leaf
stopped by its prover), and the C extracted from the planted copy, built and loaded as sonnx
builds its kernels, computes other bits than numpy's / ml_dtypes' astype on a tie:

- float16 (narrow16_mag, normal results): round up when the 13 dropped bits are >= half (the
  last kept bit taken as 1);
- bfloat16 (narrowbf16_bits): add 0x7FFF + 1 (half) whatever the last kept bit.
The same copy without a plant is proofs/ byte for byte, and it replays the same goals ok.
"""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from sonnx import c_kernels
from tests.conversions import halfcheck

from .proof_plants import assert_plant_fails, assert_unplanted_replays, needs_why3, use_planted_c

STEM = "narrow_c"
TIE16 = "add base (narrow_shr (add rest (add (0xFFF: BV32.t) lsb)) (13: BV32.t))"
AWAY16 = "add base (narrow_shr (add rest (add (0xFFF: BV32.t) (bw_or lsb (1: BV32.t)))) (13: BV32.t))"
TIEBF = "(add b (add (0x7FFF: BV32.t) lsb))"
AWAYBF = "(add b (add (0x7FFF: BV32.t) (bw_or lsb (1: BV32.t))))"

# name -> (module, anchor, plant, the top goal it breaks, the type, a tie: float32 bits, want)
PLANTS = {"float16": ("Narrow16", TIE16, AWAY16, "narrow16_bits", 0x3F801000, 0x3C00),
          "bfloat16": ("NarrowBF16", TIEBF, AWAYBF, "narrowbf16_bits", 0x3F808000, 0x3F80)}
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed (tools/setup installs it)")


@needs_why3
@needs_gcc
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3")
@pytest.mark.parametrize("name", sorted(PLANTS))
def test_ties_away_from_zero_fail_the_proof_and_change_the_c(name, tmp_path, monkeypatch):
    module, old, new, goal, tie, want = PLANTS[name]
    root, _ = assert_plant_fails(tmp_path, monkeypatch, STEM, old, new, {goal}, within=module)
    x = np.array([tie], dtype=np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        assert int(x.astype(halfcheck.HALVES[name][0]).view(np.uint16)[0]) == want
    assert int(c_kernels.narrow(x, name).view(np.uint16)[0]) == want      # the committed C
    use_planted_c(tmp_path, root, STEM, monkeypatch)
    assert int(c_kernels.narrow(x, name).view(np.uint16)[0]) == want + 1  # the planted C: away


@needs_why3
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3")
def test_the_unplanted_copy_replays_the_same_goals(tmp_path, monkeypatch):
    assert_unplanted_replays(tmp_path, monkeypatch, STEM, {"narrow16_bits", "narrowbf16_bits"})
