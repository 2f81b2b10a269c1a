"""GEMM-R7's fold bound bites: on a copy of proofs/ under tmp, a planted weakening of the bound in
proofs/gemm_fold_error.mlw makes the replay of the committed session fail, under the session's
step budgets (prove.replay_session, as tools/prove runs it).

- gamma_(K+1) in place of gamma_(K+2) in `fold_error_c` (one rounding fewer than the fold with
  alpha, beta and C has: product, K - 1 sums, alpha, the final sum): no longer proved;
- the underflow budget `(|alpha| K + 2) eta` cut to `(|alpha| K + 1) eta` in `fold_error_c` (the
  eta / 2 of beta (x) C dropped): no longer proved.
The same copy without a plant replays ok.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sonnx_dev import prove     # the proof step's driver (tools/sonnx_dev)

REPO = Path(__file__).resolve().parents[2]
needs_why3 = pytest.mark.skipif(shutil.which("why3") is None, reason="why3 not installed")
HANG_GUARD_S = 900     # a whole replay: only a guard; the verdicts come from the step budgets

# unique lines of fold_error_c's postcondition in proofs/gemm_fold_error.mlw
GAMMA_C = "gam u (k + 2) *. (RA.abs alpha *. sa a b k +. RA.abs beta *. RA.abs c)\n"
ETA_C = "+. (RA.abs alpha *. from_int k +. 2.0) *. eta }\n  = assert { from_int (k + 1) *. u <=. from_int (k + 2) *. u };\n    alpha_error u eta alpha r"


def _planted(tmp_path: Path, old: str, new: str) -> Path:
    root = tmp_path / "r"
    shutil.copytree(REPO / "proofs", root / "proofs",
                    ignore=shutil.ignore_patterns("*.bak", "__pycache__"))
    mlw = root / "proofs" / "gemm_fold_error.mlw"
    text = mlw.read_text()
    assert text.count(old) == 1, "the plant's anchor moved in proofs/gemm_fold_error.mlw"
    mlw.write_text(text.replace(old, new))
    return root


def _replay(root: Path, monkeypatch) -> dict:
    monkeypatch.setenv("PATH", f"{REPO / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    work = root / "build" / "replay"
    work.mkdir(parents=True)
    for f in (root / "proofs").glob("*.mlw"):
        shutil.copy2(f, work / f.name)
    return prove.replay_session(root, "proofs/gemm_fold_error.mlw", work, hang_guard=HANG_GUARD_S)


def _failed_goals(rep: dict) -> set[str]:
    return {leaf.split(".")[0].split("'vc")[0] for leaf in rep["failures"]}


@needs_why3
@pytest.mark.req("GEMM-R7")
def test_gamma_k_plus_1_fails(tmp_path, monkeypatch):
    root = _planted(tmp_path, GAMMA_C, GAMMA_C.replace("gam u (k + 2)", "gam u (k + 1)"))
    rep = _replay(root, monkeypatch)
    assert rep["status"] in ("failed", "obsolete"), rep
    assert "fold_error_c" in _failed_goals(rep), rep


@needs_why3
@pytest.mark.req("GEMM-R7")
def test_dropped_beta_c_underflow_fails(tmp_path, monkeypatch):
    root = _planted(tmp_path, ETA_C, ETA_C.replace("from_int k +. 2.0", "from_int k +. 1.0"))
    rep = _replay(root, monkeypatch)
    assert rep["status"] in ("failed", "obsolete"), rep
    assert "fold_error_c" in _failed_goals(rep), rep


@needs_why3
@pytest.mark.req("GEMM-R7")
def test_the_unplanted_copy_replays(tmp_path, monkeypatch):
    """The same copy and replay without the plant: the failures above come from the plants."""
    root = _planted(tmp_path, GAMMA_C, GAMMA_C)
    rep = _replay(root, monkeypatch)
    assert rep["status"] == "ok", rep
