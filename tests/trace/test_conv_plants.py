"""Conv's proof bites: on a copy of proofs/ under tmp, a planted fault in proofs/conv.mlw makes the
replay of the committed session fail, under the step budgets tools/prove gives
(sonnx_dev.prove.steps_config), every failed leaf stopped by its prover (an answer, or the step
limit), never by the hang guard or memory (issue 32).

- an off-by-one in the im2col index map (the patch matrix reads kernel column b + 1 for row b):
  `im2col_def` (the map as the theorem reads it) is no longer proved;
- the summation order swapped inside a kernel row (the new product added on the left, s = p + s,
  where the profile states s = s + p; rounded additions are compared structurally, so the order
  matters): `row_fold` (Conv's row = Gemm's next steps) is no longer proved.
The same copy without a plant replays ok.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sonnx_dev import prove     # the proof step's driver (tools/sonnx_dev)
from tests.trace.test_refusal_plants import _assert_failed_by_steps   # stopped by steps, never the clock

REPO = Path(__file__).resolve().parents[2]
needs_why3 = pytest.mark.skipif(shutil.which("why3") is None, reason="why3 not installed")
HANG_GUARD_S = 900     # a whole replay: only a guard; the verdicts come from the step budgets

# the anchors below are unique lines of proofs/conv.mlw
IM2COL_ROW_B = "(tap (col_x g j) g.sw (row_b g r) g.dw g.pl)\n"
ROW_STEP = "= if b <= 0 then s else add (frow x w g n m y xo s c a (b - 1)) (term x w g n m y xo c a (b - 1))"


def _planted(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of proofs/ (theories, config, drivers, sessions) with one edit in conv.mlw."""
    root = tmp_path / "r"
    shutil.copytree(REPO / "proofs", root / "proofs",
                    ignore=shutil.ignore_patterns("*.bak", "__pycache__"))
    mlw = root / "proofs" / "conv.mlw"
    text = mlw.read_text()
    assert text.count(old) == 1, "the plant's anchor moved in proofs/conv.mlw"
    mlw.write_text(text.replace(old, new))
    return root


def _replay(root: Path, monkeypatch) -> dict:
    monkeypatch.setenv("PATH", f"{REPO / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    work = root / "build" / "replay"
    work.mkdir(parents=True)
    for f in (root / "proofs").glob("*.mlw"):
        shutil.copy2(f, work / f.name)
    return prove.replay_session(root, "proofs/conv.mlw", work, hang_guard=HANG_GUARD_S)


def _failed_goals(rep: dict) -> set[str]:
    return {leaf.split(".")[0].split("'vc")[0] for leaf in rep["failures"]}


@needs_why3
@pytest.mark.req("CONV-R1", "CONV-R6")
def test_off_by_one_in_the_im2col_map_fails(tmp_path, monkeypatch):
    root = _planted(tmp_path, IM2COL_ROW_B, "(tap (col_x g j) g.sw (row_b g r + 1) g.dw g.pl)\n")
    rep = _replay(root, monkeypatch)
    assert rep["status"] in ("failed", "obsolete"), rep
    assert "im2col_def" in _failed_goals(rep), rep
    _assert_failed_by_steps(root, "conv", rep, {"im2col_def"})


@needs_why3
@pytest.mark.req("CONV-R6")
def test_swapped_summation_order_fails(tmp_path, monkeypatch):
    new = ROW_STEP.replace("add (frow x w g n m y xo s c a (b - 1)) (term x w g n m y xo c a (b - 1))",
                           "add (term x w g n m y xo c a (b - 1)) (frow x w g n m y xo s c a (b - 1))")
    root = _planted(tmp_path, ROW_STEP, new)
    rep = _replay(root, monkeypatch)
    assert rep["status"] in ("failed", "obsolete"), rep
    assert "row_fold" in _failed_goals(rep), rep
    _assert_failed_by_steps(root, "conv", rep, {"row_fold"})


@needs_why3
@pytest.mark.req("CONV-R1", "CONV-R6")
def test_the_unplanted_copy_replays(tmp_path, monkeypatch):
    """The same copy and replay without the plant: the failures above come from the plants."""
    root = _planted(tmp_path, ROW_STEP, ROW_STEP)
    rep = _replay(root, monkeypatch)
    assert rep["status"] == "ok", rep
