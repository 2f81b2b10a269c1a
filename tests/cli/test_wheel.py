"""The wheel ships the library (kernels, validator, read-only trace, registry) and the LICENSE,
and not the development tools (tools/sonnx_dev, the evidence runner) nor the tests. That a
wheel installed in a fresh venv runs every documented sub-command is tools/wheel's job (a CI
step: it installs dependencies, too slow for the test suite)."""
from __future__ import annotations

import email
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    # from a copy of the files git knows: setuptools reuses build/lib, where a module moved out
    # of src/ (the evidence runner) would still be found and shipped
    src = out / "src-copy"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "-q", "-w", str(out), str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return zipfile.ZipFile(next(out.glob("sonnx-*.whl")))


def test_the_wheel_ships_the_library_and_not_the_dev_tools(wheel):
    names = set(wheel.namelist())
    for shipped in ("sonnx/__main__.py", "sonnx/cli.py", "sonnx/config.py", "sonnx/ops/mul.py",
                    "sonnx/ops/gemm/__init__.py", "sonnx/validate/api.py", "sonnx/validate/selection.py",
                    "sonnx/trace/matrix.py", "sonnx/trace/cli.py", "sonnx/data/profile.toml", "sonnx/ops/mul.toml"):
        assert shipped in names, shipped
    dev = sorted(n for n in names if n.startswith(("sonnx_dev/", "tests/", "tools/"))
                 or n.endswith("/evidence.py"))
    assert dev == []
    assert not (ROOT / "src" / "sonnx" / "trace" / "evidence.py").exists()
    assert (ROOT / "tools" / "sonnx_dev" / "evidence.py").is_file()


def test_the_wheel_carries_the_apache_licence(wheel):
    (licence,) = [n for n in wheel.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
    text = wheel.read(licence).decode()
    assert text == (ROOT / "LICENSE").read_text() and "Apache License" in text and "Version 2.0" in text
    (meta,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    headers = email.message_from_bytes(wheel.read(meta))
    assert headers["License-Expression"] == "Apache-2.0"
    (entry,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    assert "sonnx = sonnx.cli:main" in wheel.read(entry).decode()
