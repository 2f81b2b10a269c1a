"""What the planted-fault tests of the proofs share (test_refusal_plants.py, test_conv_plants.py,
test_gemm_fold_error_plants.py, the C kernels' "code proved is code run" tests): a copy of proofs/
with one edit, its replay as tools/prove replays it (prove.replay_session, the step budgets of
prove.steps_config), focused on the goals the plant should break (prove.focus), the check that every failed leaf was stopped by its prover (an answer, or its
step limit), never by the clock or by memory (issue 32: a failing verdict's reason is the same on
every machine), and the C extracted from the planted copy loaded as sonnx loads its kernels."""
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


def planted(tmp_path: Path, stem: str, old: str, new: str, within: str | None = None) -> Path:
    """A copy of proofs/ (theories, config, drivers, the session of ``stem``) with one edit;
    ``within``: the name of the module whose body holds the one anchor (the file may hold the
    same text in other modules, e.g. a float64 clone of the float32 kernel)."""
    root = _copy(tmp_path)
    mlw = root / "proofs" / f"{stem}.mlw"
    text = mlw.read_text()
    lo = 0 if within is None else text.index(f"module {within}\n")
    hi = len(text) if within is None else text.index("\nend", lo)
    assert text[lo:hi].count(old) == 1, f"the plant's anchor moved in proofs/{stem}.mlw"
    mlw.write_text(text[:lo] + text[lo:hi].replace(old, new) + text[hi:])
    return root


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "r"
    shutil.copytree(REPO / "proofs", root / "proofs", ignore=shutil.ignore_patterns("*.bak", "__pycache__"))
    return root


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(f.relative_to(folder)): f.read_bytes() for f in sorted(folder.rglob("*"))
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".bak"}


def assert_copy_is_the_repository(root: Path) -> None:
    """Half of a plant file's control (assert_unplanted_replays): the copy made without the
    plant is proofs/ byte for byte, the very files whose whole sessions the proof step
    (tools/prove) replays with the same function and budgets."""
    assert _tree(root / "proofs") == _tree(REPO / "proofs")


def replay(root: Path, stem: str, monkeypatch, only: set[str] | None = None) -> dict:
    """The replay of ``proofs/<stem>`` in ``root`` as tools/prove replays it; ``only``: of these
    top-level goals' attempts alone (prove.focus), under the step budgets of the whole session.
    A plant test asks whether the goals it names still replay, so it replays those: a whole
    238-goal session per plant cost 45 - 90 s in CI, a focused one a few seconds; the rest of
    the session is replayed by the proof step itself."""
    monkeypatch.setenv("PATH", f"{REPO / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    work = prove.fresh_work(root, root / "build" / "replay")
    return prove.replay_session(root, f"proofs/{stem}.mlw", work, hang_guard=HANG_GUARD_S, only=only)


def assert_plant_fails(tmp_path: Path, monkeypatch, stem: str, old: str, new: str, goals: set[str],
                       within: str | None = None) -> tuple[Path, dict]:
    """What every plant test does: plant ``new`` for ``old`` in a copy of proofs/, replay the
    ``goals`` it should break (focused), and check that each of them fails, every failed leaf
    stopped by its prover under the session's step budgets. Returns the copy and the report."""
    root = planted(tmp_path, stem, old, new, within)
    rep = replay(root, stem, monkeypatch, only=set(goals))
    assert_failed_by_steps(root, stem, rep, set(goals))
    return root, rep


def assert_unplanted_replays(tmp_path: Path, monkeypatch, stem: str, goals: set[str]) -> None:
    """The control of a file's plant tests: the copy made without a plant is proofs/ byte for
    byte, and the same focused replay of the same goals on it fails nothing; so the failures
    of the plants come from the plants, not from the copy or the focus."""
    root = _copy(tmp_path)
    assert_copy_is_the_repository(root)
    rep = replay(root, stem, monkeypatch, only=set(goals))
    assert rep["rc"] == 0 and not rep["failures"], rep


def failed(rep: dict) -> dict[str, list[str]]:
    """Top-level goal -> the reports of its failed leaves."""
    out: dict[str, list[str]] = {}
    for leaf, what in rep["failures"].items():
        out.setdefault(leaf.split(".")[0].split("'vc")[0], []).append(what)
    return out


# a failed leaf as `why3 replay` reports it: "<prover>: <answer> (<time>s, <steps> steps) instead of ..."
# (a prover that counts no steps, Gappa, reports no step count: its answer is then its own)
LEAF = re.compile(r"^(?P<prover>\S+ \S+(?: \(\S+\))?): (?P<answer>[A-Za-z ]+?)(?: \(.*?\))? \([\d.]+s(?:, (?P<steps>\d+) steps)?\)")
# how far past its budget a prover may report when it stops at it: cvc5 checks its resource
# limit between steps of its own, so it stops a little after it (seen: 185,876 units on a budget
# of 185,470, and 245,422 on 226,014 in gemm_fold_error's planted fold_error_c: 8.6 %). Resource
# units are counted, not timed, so the overshoot is the same on every machine; what this rules
# out is a run that the limit did not stop (the old replay: 967,426 on 185,470) or the clock did
OVERSHOOT = 1.25


def stopped_by_the_prover(what: str, budgets: dict[str, int]) -> bool:
    """The leaf's failure is the prover's answer, or its stop at the step limit, within the
    budget it was given: not "Timeout" (the hang guard) nor "Out of memory"."""
    m = LEAF.match(what)
    if not m or m["answer"] not in ("Unknown", "Invalid", "Step limit exceeded", "StepLimitExceeded"):
        return False
    if m["steps"] is None:              # no step count: only an answer of the prover's own
        return m["answer"] in ("Unknown", "Invalid")
    return int(m["steps"]) <= budgets[m["prover"]] * OVERSHOOT


def assert_failed_by_steps(root: Path, stem: str, rep: dict, goals: set[str]) -> None:
    assert rep["status"] in ("failed", "obsolete"), rep
    failed_ = failed(rep)
    assert goals <= set(failed_), (sorted(failed_), rep["tail"])
    budgets = {f"{name} {version}" + (f" ({alt})" if alt else ""): b for (name, version, alt), b in
               prove.step_budgets(root / "proofs" / stem / "why3session.xml").items()}
    late = {g: w for g, ws in failed_.items() for w in ws if not stopped_by_the_prover(w, budgets)}
    assert not late, (late, budgets)


def failed_goals(rep: dict) -> set[str]:
    """The top-level goals with a failed leaf."""
    return set(failed(rep))


def use_planted_c(tmp_path: Path, root: Path, stem: str, monkeypatch) -> Path:
    """The C of ``proofs/<stem>.mlw`` extracted from the planted copy ``root`` into a copy of
    src/sonnx/c, which sonnx.c_kernels then builds and loads (in a cache of its own) as it builds
    the committed kernels; the extracted file must differ from the committed one."""
    from sonnx import c_kernels
    from sonnx_dev import extract_c
    src = tmp_path / "c"
    shutil.copytree(REPO / "src" / "sonnx" / "c", src)
    extract_c.extract(root, f"proofs/{stem}.mlw", src / f"{stem}.c")
    assert (src / f"{stem}.c").read_text() != (REPO / "src" / "sonnx" / "c" / f"{stem}.c").read_text()
    monkeypatch.setattr(c_kernels, "source_dir", lambda: src)
    monkeypatch.setenv("SONNX_C_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(c_kernels, "_LIB", None)
    return src
