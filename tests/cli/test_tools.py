"""The tools/ scripts: `--help` prints the usage, exits 0 and starts nothing; a missing
prerequisite is one clear message (what to install) and a non-zero exit, never "command not
found" or a traceback. Each script runs in a scratch copy of the tree whose .venv and
tools/setup are stubs that leave a mark when called."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.name for p in (ROOT / "tools").iterdir()
                 if p.is_file() and os.access(p, os.X_OK))


def _stub(path: Path, mark: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {mark}\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _scratch(tmp_path: Path, script: str) -> tuple[Path, Path]:
    """A tree holding tools/SCRIPT and stubs for everything it could start; the mark file."""
    tree, mark = tmp_path / "tree", tmp_path / "started"
    (tree / "tools").mkdir(parents=True)
    shutil.copy2(ROOT / "tools" / script, tree / "tools" / script)
    for name in ("setup", "test", "prove", "crosshair"):
        if name != script:
            _stub(tree / "tools" / name, mark)
    for name in ("python", "pytest", "mutmut"):
        _stub(tree / ".venv" / "bin" / name, mark)
    return tree, mark


def _bin(tmp_path: Path, *commands: str) -> Path:
    """A PATH folder holding only ``commands`` (links to the real ones)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for c in commands:
        (folder / c).symlink_to(shutil.which(c))
    return folder


def test_every_script_is_found():
    assert {"setup", "test", "prove", "crosshair", "evidence", "bench"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_usage_and_starts_nothing(tmp_path, script, flag):
    tree, mark = _scratch(tmp_path, script)
    before = sorted(p.relative_to(tree) for p in tree.rglob("*"))
    p = subprocess.run(["bash", f"tools/{script}", flag], cwd=tree, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert f"Usage: tools/{script}" in p.stdout and len(p.stdout.splitlines()) >= 2
    assert not mark.exists(), mark.read_text()
    assert sorted(p.relative_to(tree) for p in tree.rglob("*")) == before   # nothing made


def test_setup_without_apt_get_says_what_to_install(tmp_path):
    tree, mark = _scratch(tmp_path, "setup")
    shutil.rmtree(tree / ".venv")
    path = _bin(tmp_path, "bash", "dirname")     # no dpkg, no apt-get, no why3, no provers
    p = subprocess.run([str(path / "bash"), "tools/setup"], cwd=tree, capture_output=True, text=True,
                       env={"PATH": str(path), "HOME": str(tmp_path)}, timeout=60)
    assert p.returncode == 1 and p.stdout == ""
    assert "no apt-get" in p.stderr and "why3 1.5.1" in p.stderr and "cvc5" in p.stderr
    assert "python3-venv" in p.stderr and "not found" not in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.splitlines()) == 2 and not (tree / ".venv").exists() and not mark.exists()


@pytest.mark.parametrize("present, missing", [((), "why3"), (("why3",), "cvc5")])
def test_prove_without_a_prover_is_one_message(tmp_path, present, missing):
    tree, mark = _scratch(tmp_path, "prove")
    (tree / "proofs" / "drivers").mkdir(parents=True)
    (tree / "proofs" / "drivers" / "cvc5.drv").write_text("")
    _stub(tree / ".venv" / "bin" / "z3", mark)          # z3 comes from the venv
    path = _bin(tmp_path, "bash", "dirname")
    for tool in present:
        _stub(path / tool, mark)
    p = subprocess.run([str(path / "bash"), "tools/prove"], cwd=tree, capture_output=True, text=True,
                       env={"PATH": str(path), "HOME": str(tmp_path)}, timeout=60)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.startswith(f"prove: {missing} not found on PATH; install why3 1.5.1, z3 and cvc5")
    assert len(p.stderr.splitlines()) == 1 and not mark.exists()


def test_prove_without_the_bitwuzla_wheel_is_one_message(tmp_path):
    """The float16 lemmas' prover is a wheel of the dev environment: without it, one line
    saying how to get it, before any replay starts."""
    tree, mark = _scratch(tmp_path, "prove")
    (tree / "proofs" / "drivers").mkdir(parents=True)
    (tree / "proofs" / "drivers" / "cvc5.drv").write_text("")
    _stub(tree / ".venv" / "bin" / "z3", mark)
    py = tree / ".venv" / "bin" / "python"                # a python without the wheel
    py.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {mark}\nexit 1\n")
    path = _bin(tmp_path, "bash", "dirname")
    for tool in ("why3", "cvc5"):
        _stub(path / tool, mark)
    p = subprocess.run([str(path / "bash"), "tools/prove"], cwd=tree, capture_output=True, text=True,
                       env={"PATH": str(path), "HOME": str(tmp_path)}, timeout=60)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.startswith("prove: the bitwuzla wheel") and "tools/setup" in p.stderr
    assert len(p.stderr.splitlines()) == 1
    assert mark.read_text().splitlines() == [".venv/bin/python -c import bitwuzla"]   # nothing else started
