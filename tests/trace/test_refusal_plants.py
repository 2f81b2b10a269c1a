"""The refusal proofs bite (issue 19): on a copy of proofs/ under tmp, a planted fault in the
model makes the replay of the committed session fail, under the step budgets tools/prove
gives (sonnx_dev.prove.steps_config: each prover that counts steps is run with its step
command and a fixed budget, 2x the largest count it recorded in the session). Every goal named
below fails, and every failed leaf of the replay is stopped by the prover itself (its answer,
or its step limit: a step count within the budget), never by the clock or by memory
(issue 32: a failing verdict's reason is the same on every machine). Before, Why3 1.5.1's
`replay --use-steps` ran the provers without a step limit (its time command): cvc5 ran 28 s
and 1 M resource units on leaves recorded at 14,233, and `broadcastable_iff_broadcast_shape`
failed only at the 120 s guard.

- `broadcastable` redefined as `true` (elementwise.mlw): the lemmas that pin it down
  (`broadcastable_iff_broadcast_shape`, `not_broadcastable_example`) are no longer proved;
- Gemm's C check made shape-blind (gemm_refusal.mlw: C accepted when its number of elements is
  M * N): `refuses_c_transposed`, `refuses_c_not_mn`, `accepts_exactly` are no longer proved.
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from sonnx_dev import prove     # the proof step's driver (tools/sonnx_dev)

REPO = Path(__file__).resolve().parents[2]
needs_why3 = pytest.mark.skipif(shutil.which("why3") is None, reason="why3 not installed")
HANG_GUARD_S = 900     # a whole replay: only a guard; the verdicts come from the step budgets


def _planted(tmp_path: Path, stem: str, old: str, new: str) -> Path:
    """A copy of proofs/ (theories, config, drivers, the session of ``stem``) with one edit."""
    root = tmp_path / "r"
    shutil.copytree(REPO / "proofs", root / "proofs",
                    ignore=shutil.ignore_patterns("*.bak", "__pycache__"))
    mlw = root / "proofs" / f"{stem}.mlw"
    text = mlw.read_text()
    assert text.count(old) == 1, f"the plant's anchor moved in proofs/{stem}.mlw"
    mlw.write_text(text.replace(old, new))
    return root


def _replay(root: Path, stem: str, monkeypatch) -> dict:
    monkeypatch.setenv("PATH", f"{REPO / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    work = root / "build" / "replay"
    work.mkdir(parents=True)
    for f in (root / "proofs").glob("*.mlw"):
        shutil.copy2(f, work / f.name)
    return prove.replay_session(root, f"proofs/{stem}.mlw", work, hang_guard=HANG_GUARD_S)


def _failed(rep: dict) -> dict[str, list[str]]:
    """Top-level goal -> the reports of its failed leaves."""
    out: dict[str, list[str]] = {}
    for leaf, what in rep["failures"].items():
        out.setdefault(leaf.split(".")[0].split("'vc")[0], []).append(what)
    return out


# a failed leaf as `why3 replay` reports it: "<prover>: <answer> (<time>s, <steps> steps) instead of ..."
LEAF = re.compile(r"^(?P<prover>\S+ \S+(?: \(\S+\))?): (?P<answer>[A-Za-z ]+?)(?: \(.*?\))? \([\d.]+s, (?P<steps>\d+) steps\)")
# how far past its budget a prover may report when it stops at it (cvc5 checks its resource
# limit between steps of its own; seen: 185,876 units on a budget of 185,470)
OVERSHOOT = 1.01


def _stopped_by_the_prover(what: str, budgets: dict[str, int]) -> bool:
    """The leaf's failure is the prover's answer, or its stop at the step limit, within the
    budget it was given: not "Timeout" (the hang guard) nor "Out of memory"."""
    m = LEAF.match(what)
    if not m or m["answer"] not in ("Unknown", "Invalid", "Step limit exceeded", "StepLimitExceeded"):
        return False
    return int(m["steps"]) <= budgets[m["prover"]] * OVERSHOOT


def _assert_failed_by_steps(root: Path, stem: str, rep: dict, goals: set[str]) -> None:
    assert rep["status"] in ("failed", "obsolete"), rep
    failed = _failed(rep)
    assert goals <= set(failed), (sorted(failed), rep["tail"])
    budgets = {f"{name} {version}" + (f" ({alt})" if alt else ""): b for (name, version, alt), b in
               prove.step_budgets(root / "proofs" / stem / "why3session.xml").items()}
    late = {g: w for g, ws in failed.items() for w in ws if not _stopped_by_the_prover(w, budgets)}
    assert not late, (late, budgets)


@needs_why3
@pytest.mark.req("MUL-R4", "ADD-R4", "SUB-R4")
def test_broadcastable_redefined_as_true_fails_the_refusal_goals(tmp_path, monkeypatch):
    old = "predicate broadcastable (s1 s2: shape) = compat_rev (rev_app s1 Nil) (rev_app s2 Nil)"
    root = _planted(tmp_path, "elementwise", old, "predicate broadcastable (s1 s2: shape) = true")
    rep = _replay(root, "elementwise", monkeypatch)
    # (later goals such as refuses_broadcastable may still replay: Why3 lets them use the earlier,
    # now unproved, lemma broadcastable_iff_broadcast_shape; the session fails all the same)
    _assert_failed_by_steps(root, "elementwise", rep, {"broadcastable_iff_broadcast_shape", "not_broadcastable_example"})


@needs_why3
@pytest.mark.req("GEMM-R4")
def test_shape_blind_c_fails_the_gemm_refusal_goals(tmp_path, monkeypatch):
    old = "| SomeC s -> if same_shape s (Cons m (Cons n Nil)) then Clean else Violation R4 Clean"
    new = "| SomeC s -> if numel s = m * n then Clean else Violation R4 Clean"
    root = _planted(tmp_path, "gemm_refusal", old, new)
    mlw = root / "proofs" / "gemm_refusal.mlw"
    anchor = "  (** the shape block of [constraints]"
    mlw.write_text(mlw.read_text().replace(anchor, (
        "  let rec function numel (s: shape) : int variant { s }\n"
        "  = match s with Nil -> 1 | Cons d r -> d * numel r end\n\n") + anchor, 1))
    rep = _replay(root, "gemm_refusal", monkeypatch)
    _assert_failed_by_steps(root, "gemm_refusal", rep, {"refuses_c_transposed", "refuses_c_not_mn", "accepts_exactly"})


@needs_why3
@pytest.mark.req("MUL-R4", "GEMM-R4")
def test_the_unplanted_copies_replay(tmp_path, monkeypatch):
    """The same copy and replay without the plant: the failures above come from the plants."""
    for stem in ("elementwise", "gemm_refusal"):
        root = _planted(tmp_path / stem, stem, "module Refusal" if stem == "elementwise" else "module GemmRefusal",
                        "module Refusal" if stem == "elementwise" else "module GemmRefusal")
        rep = _replay(root, stem, monkeypatch)
        assert rep["status"] == "ok", rep
