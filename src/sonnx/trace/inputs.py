"""What each evidence step read, as one hash: binds a result file to the tree it was made on.

A producer (tools/prove, the CrossHair campaign, the pytest run) records ``step_inputs(root,
STEP)`` in its output; the trace recomputes it on the tree it judges and calls the result
stale when the two differ. One list of globs per step, here and nowhere else.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

# Files whose content can change a step's verdict. Generous on purpose: a result marked stale
# by an unrelated edit costs one re-run; a result kept green after a relevant edit is a lie.
STEP_GLOBS: dict[str, tuple[str, ...]] = {
    "proofs": ("proofs/**/*.mlw", "proofs/**/why3session.xml", "proofs/**/why3shapes.gz",
               "proofs/why3.conf", "proofs/drivers/*", "proofs/assumptions.toml",
               "src/sonnx/semantics/intloops.py", "src/sonnx/trace/proofs.py",
               "src/sonnx/trace/proof_assumptions.py", "src/sonnx/trace/whyml.py",
               "src/sonnx/ops/*.py",              # the registry: which theory files are replayed
               "tools/prove", "tools/sonnx_dev/prove.py"),
    "crosshair": ("src/sonnx/**/*.py", "tests/crosshair/**/*.py", "tools/crosshair"),
    "tests": ("src/sonnx/**/*.py", "src/sonnx/data/*", "src/sonnx/ops/*.toml", "src/sonnx/c/*", "tests/**/*.py", "tests/**/*.mlw",
              "examples/*", "spec/*", "proofs/**/*.mlw", "proofs/drivers/*", "pyproject.toml"),
}


def _files(root: Path, globs: tuple[str, ...]) -> list[Path]:
    found: set[Path] = set()
    for pattern in globs:
        for p in root.glob(pattern):
            if p.is_file() and "__pycache__" not in p.parts:
                found.add(p)
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def all_inputs(root: str | Path) -> list[Path]:
    """Every input file of every step: the checkout files the trace judges."""
    return _files(Path(root).resolve(), tuple(g for globs in STEP_GLOBS.values() for g in globs))


def step_inputs(root: str | Path, step: str) -> dict:
    """{"step", "sha256", "files"}: SHA-256 over (relative path, content hash) of every input
    file of ``step`` as it is on disk now (tracked or not: the run sees the disk)."""
    root = Path(root).resolve()
    if step not in STEP_GLOBS:
        raise ValueError(f"unknown evidence step {step!r}; one of {', '.join(STEP_GLOBS)}")
    h = hashlib.sha256()
    files = _files(root, STEP_GLOBS[step])
    for p in files:
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return {"step": step, "sha256": h.hexdigest(), "files": len(files)}


def result_path(root: Path, name: str) -> Path:
    """Where a step run on its own writes its result file ``name`` (proofs.json, crosshair.json).

    build/evidence/ normally (tools/evidence empties it first, so its own steps write there);
    but once a run has sealed a bundle there (its SHA256SUMS exists), a re-check of one step
    writes into build/recheck/ instead, so that re-checking a claim never spoils the bundle a
    certifier keeps (its hashes and verdicts stay those of the run)."""
    evidence = root / "build" / "evidence"
    folder = root / "build" / "recheck" if (evidence / "SHA256SUMS").exists() else evidence
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name

