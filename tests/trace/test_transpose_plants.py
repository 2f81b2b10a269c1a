"""TRANSPOSE-R1's last step: proofs/transpose.mlw's perm_has_inverse (a perm the constraint
function accepts, r distinct entries of [0, r-1], has the inverse the kernel's goals assume).
Planted on a copy of proofs/: the distinctness dropped from what it assumes makes the replay of
the committed session fail under its step budgets, stopped by the prover (prove.replay_session,
as tools/prove runs it). The unplanted copy is proofs/ byte for byte (the proof step replays it)."""
from __future__ import annotations

import pytest

from .proof_plants import assert_plant_fails, assert_unplanted_replays, needs_why3

DISTINCT = "    /\\ (forall i j. 0 <= i < n -> 0 <= j < n -> i <> j -> nth i p <> nth j p)\n"


@needs_why3
@pytest.mark.req("TRANSPOSE-R1")
def test_an_accepted_perm_needs_distinct_entries_to_have_an_inverse(tmp_path, monkeypatch):
    assert_plant_fails(tmp_path, monkeypatch, "transpose", DISTINCT, "    /\\ true\n", {"distinct_in_range_onto"})


@needs_why3
@pytest.mark.req("TRANSPOSE-R1")
def test_the_unplanted_copy_replays_the_same_goal(tmp_path, monkeypatch):
    assert_unplanted_replays(tmp_path, monkeypatch, "transpose", {"distinct_in_range_onto"})
