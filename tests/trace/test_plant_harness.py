"""The harness the plant tests judge with is itself checked: prove.focus keeps the session's
goal tree (Why3 pairs why3shapes.gz with that tree in order) and strips only the other goals'
attempts, refuses a focus on a goal the session does not have, and stopped_by_the_prover tells
a prover's own answer or step limit from the clock, memory or a count past the budget."""
from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET

import pytest

from sonnx_dev import prove

from .proof_plants import REPO, stopped_by_the_prover


def _session(tmp_path, stem="transpose"):
    xml = tmp_path / "why3session.xml"
    shutil.copy2(REPO / "proofs" / stem / "why3session.xml", xml)
    return xml


def _goals(xml):
    root = ET.parse(xml).getroot()
    return [(th.get("name"), g.get("name")) for th in root.iter("theory") for g in th.iter("goal")]


@pytest.mark.req("TRANSPOSE-R1")
def test_focus_keeps_the_tree_and_the_named_goals_attempts_only(tmp_path):
    xml = _session(tmp_path)
    before = _goals(xml)
    prove.focus(xml, {"distinct_in_range_onto"})
    assert _goals(xml) == before                      # same goals, same order: shapes still pair
    root = ET.parse(xml).getroot()
    kept = {g.get("name").split("'vc")[0] for th in root.iter("theory") for g in th.findall("goal")
            if g.find(".//proof") is not None}
    assert kept == {"distinct_in_range_onto"}
    assert xml.read_text().startswith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE why3session')


@pytest.mark.req("TRANSPOSE-R1")
@pytest.mark.parametrize("only", [set(), {"no_such_goal"}, {"distinct_in_range_onto", "no_such_goal"}])
def test_focus_on_a_goal_the_session_lacks_is_an_error(tmp_path, only):
    xml = _session(tmp_path)
    text = xml.read_text()
    with pytest.raises(ValueError, match="no such top-level goal"):
        prove.focus(xml, only)
    assert xml.read_text() == text                    # nothing written


BUDGETS = {"CVC5 1.0.3": 100_000, "Z3 5.4.0 (pip)": 3_000_000, "Gappa 1.4.1": 100_000}


@pytest.mark.req("TRANSPOSE-R1")
@pytest.mark.parametrize("what, verdict", [
    ("CVC5 1.0.3: Unknown (unknown) (0.19s, 44327 steps) instead of Valid (0.03s, 8739 steps)", True),
    ("CVC5 1.0.3: Step limit exceeded (1.60s, 100009 steps) instead of Valid", True),
    ("CVC5 1.0.3: Step limit exceeded (9.60s, 967426 steps) instead of Valid", False),   # past 1.25 x budget
    ("Z3 5.4.0 (pip): Unknown (unknown) (1.30s, 3319776 steps) instead of Valid", True),
    ("Z3 5.4.0 (pip): Timeout (120.00s, 0 steps) instead of Valid", False),
    ("Z3 5.4.0 (pip): Out of memory (30.00s, 2000 steps) instead of Valid", False),
    ("Gappa 1.4.1: Unknown () (0.05s) instead of Valid (0.00s)", True),                   # counts no steps
    ("Gappa 1.4.1: Step limit exceeded (0.05s) instead of Valid (0.00s)", False),
    ("CVC5 1.0.3: Valid (0.01s, 10 steps) instead of Unknown", False),
])
def test_stopped_by_the_prover(what, verdict):
    assert stopped_by_the_prover(what, BUDGETS) is verdict
