"""The refusal lemmas proved about the whole constraint functions (proofs/constraints.mlw,
modules ElementwiseRefusals, GemmRefusals, PadRefusals, GemmStatic and Pinning) bite: on a copy
of proofs/, a model with one fault planted (an input forgotten in its dense/typed block, a block
that overwrites the verdict, a wrong comparison, a backwards substitution) no longer proves the
lemma named below, and every failed leaf is stopped by its prover under tools/prove's step
budgets, never by the clock. The differential test (test_refusal_differential.py) catches such
plants from the other side: the model would then disagree with the Python function it models.

- Element-wise: B left out of [dense_and_typed] (only A is looked at): `dense_typed_kept`, the
  step of `elementwise_sparse_refused` that carries the block's findings to the whole function,
  is no longer proved;
- Gemm: C left out of [dense_and_typed]: `gemm_tail_kept`, the same step of every GemmRefusals
  lemma, is no longer proved;
- Pad: the pads block replacing the verdict instead of appending to it: `pad_kept`, the step
  of every PadRefusals lemma, is no longer proved;
- Gemm on static shapes: C's second dimension compared with M instead of N in the shape block:
  `gemm_static_c_mat`, the C-given case of `static_is_gemm_refusal`, is no longer proved;
- the substitution of [Unify.solvable] replacing [w] by [v] instead of [v] by [w]:
  `value_subst_dim`, the step of [Pinning] that reads a substitution as a pinning, is no longer
  proved;
- Pad's constant_value accepted whatever its element type: `pad_value_type_refused` (PAD-R3);
- Pad's axes input read as every axis: `pad_pads_axes_refused` (PAD-R1 with axes).

(The refusal lemmas after the broken step may still replay: Why3 lets them use the earlier, now
unproved, let lemma; the session fails all the same, and tools/prove with it.)
"""
from __future__ import annotations

import pytest

from .proof_plants import assert_plant_fails, assert_unplanted_replays, needs_why3


@needs_why3
@pytest.mark.req("MUL-R2", "ADD-R2", "SUB-R2", "DIV-R2")
def test_b_left_out_fails_the_elementwise_sparse_refusal(tmp_path, monkeypatch):
    assert_plant_fails(tmp_path, monkeypatch, "constraints", "let f = dense_and_typed allowed (SCons a (SCons b SNil)) in",
                       "let f = dense_and_typed allowed (SCons a SNil) in", within="ElementwiseConstraints", goals={"dense_typed_kept"})


@needs_why3
@pytest.mark.req("GEMM-R3")
def test_c_left_out_fails_the_gemm_type_refusals(tmp_path, monkeypatch):
    assert_plant_fails(tmp_path, monkeypatch, "constraints", "let f = dense_and_typed allowed (SCons a (SCons b (cin_sigs c))) in",
                       "let f = dense_and_typed allowed (SCons a (SCons b SNil)) in", within="GemmConstraints", goals={"gemm_tail_kept"})


@needs_why3
@pytest.mark.req("PAD-R1", "PAD-R2", "PAD-R3", "PAD-R4")
def test_pads_overwriting_the_verdict_fails_the_pad_refusals(tmp_path, monkeypatch):
    assert_plant_fails(tmp_path, monkeypatch, "constraints", "      app f (pads_found version (named_of version x a axs) p ps)",
                       "      pads_found version (named_of version x a axs) p ps", within="PadConstraints", goals={"pad_kept"})


@needs_why3
@pytest.mark.req("GEMM-R1", "GEMM-R4")
def test_c_against_m_twice_fails_the_static_gemm_link(tmp_path, monkeypatch):
    assert_plant_fails(tmp_path, monkeypatch, "constraints", "(ECons (dim_at dc 1) n ENil)", "(ECons (dim_at dc 1) m ENil)",
                       within="GemmConstraints", goals={"gemm_static_c_mat"})


@needs_why3
@pytest.mark.req("MUL-R1", "MUL-R4", "ADD-R1", "ADD-R4", "SUB-R1", "SUB-R4", "DIV-R1", "DIV-R4")
def test_a_backwards_substitution_fails_the_pinning(tmp_path, monkeypatch):
    assert_plant_fails(tmp_path, monkeypatch, "constraints", "if dim_eq d v then w else d", "if dim_eq d w then v else d",
                       within="Unify", goals={"value_subst_dim"})


@needs_why3
@pytest.mark.req("PAD-R3")
def test_a_constant_of_any_type_fails_the_pad_value_type_refusal(tmp_path, monkeypatch):
    assert_plant_fails(tmp_path, monkeypatch, "constraints", "(match elem_of t with Elem f -> f = e | NoElem -> false end)",
                       "(match elem_of t with Elem _ -> true | NoElem -> false end)", within="PadConstraints",
                       goals={"pad_value_type_refused"})


@needs_why3
@pytest.mark.req("PAD-R1")
def test_axes_read_as_every_axis_fails_the_pads_with_axes_refusal(tmp_path, monkeypatch):
    assert_plant_fails(tmp_path, monkeypatch, "constraints", "if not (distinct n) then NUnknown else NAxes n",
                       "if not (distinct n) then NUnknown else NAxes (upto 0 r)", within="PadConstraints",
                       goals={"pad_pads_axes_refused"})


@needs_why3
@pytest.mark.req("MUL-R1", "MUL-R2", "MUL-R4", "ADD-R2", "SUB-R2", "DIV-R2", "GEMM-R1", "GEMM-R3", "GEMM-R4", "PAD-R1", "PAD-R2", "PAD-R3", "PAD-R4")
def test_the_unplanted_copy_replays_the_same_goals(tmp_path, monkeypatch):
    """The control: without a plant the copy is proofs/ byte for byte, and the same focused
    replay of the five goals fails none of them; the failures above come from the plants."""
    assert_unplanted_replays(tmp_path, monkeypatch, "constraints",
                             {"dense_typed_kept", "gemm_tail_kept", "pad_kept", "gemm_static_c_mat", "value_subst_dim",
                              "pad_value_type_refused", "pad_pads_axes_refused"})
