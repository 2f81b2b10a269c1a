"""The half-precision conversions' real-valued lemmas bite: on a copy of proofs/ under tmp, a
planted falsehood in proofs/half_conversions.mlw makes the replay of the committed session fail
(as tools/prove replays it, under its step budgets), every failed leaf stopped by its prover (an
answer or its step limit), never by the clock or memory:

- widen16_exact_rne with the widened value's real negated: false for every nonzero float16;
- widenbf16_exact_rne with the widened value's real negated: false for every nonzero bfloat16;
- widen16_class with the sign swapped on the float32 side (positive <-> negative): false.
The same copy without a plant is proofs/ byte for byte, and it replays ok.
"""
from __future__ import annotations

import pytest

from .proof_plants import assert_plant_fails, assert_unplanted_replays, needs_why3

STEM = "half_conversions"
W16 = "F32.t'real (f16_to_f32 RNE x) = F16.t'real x\n"
WB16 = "F32.t'real (bf16_to_f32 RNE x) = B16.t'real x\n"
SIGN16 = "(F16.is_positive x <-> F32.is_positive (f16_to_f32 RNE x))"

PLANTS = {"widen16_exact_rne": ("Widen16", W16, "F32.t'real (f16_to_f32 RNE x) = - F16.t'real x\n"),
          "widenbf16_exact_rne": ("WidenBF16", WB16, "F32.t'real (bf16_to_f32 RNE x) = - B16.t'real x\n"),
          "widen16_class": ("Widen16", SIGN16, SIGN16.replace("F32.is_positive", "F32.is_negative"))}


@needs_why3
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3", "RELU-R3", "GEMM-R7", "MATMUL-R5")
@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_false_conversion_lemma_fails(plant, tmp_path, monkeypatch):
    module, old, new = PLANTS[plant]
    assert_plant_fails(tmp_path, monkeypatch, STEM, old, new, {plant}, within=module)


@needs_why3
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3", "RELU-R3", "GEMM-R7", "MATMUL-R5")
def test_the_unplanted_copy_replays_the_same_goals(tmp_path, monkeypatch):
    """The same copy without a plant is the repository's proofs/, and the same focused replay
    fails neither widen16_class nor widenbf16_exact_rne: the failures above come from the
    plants, not from the copy or the focus. (widen16_exact_rne alone takes about 45 s: the
    proof step replays it, on these very files, in the same CI run.)"""
    assert_unplanted_replays(tmp_path, monkeypatch, STEM, {"widen16_class", "widenbf16_exact_rne"})
