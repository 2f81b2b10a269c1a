"""The registry: well-formed, shipped with the package, listed by `sonnx requirements`."""
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sonnx import cli, requirements

ROOT = Path(__file__).resolve().parents[1]


def test_registry_entries_are_complete():
    reqs = requirements.load()
    assert {"MUL-R1", "MUL-R2", "MUL-R3", "MUL-R4", "PROF-R1", "PROF-R2"} <= set(reqs)
    for r in reqs.values():
        assert re.fullmatch(requirements.ID_PATTERN, r.id)
        assert r.title and r.statement and r.rationale and r.source and r.verification


def test_packaged_registry_is_the_spec_file():
    from importlib import resources
    shipped = resources.files("sonnx").joinpath("data/requirements.toml").read_text(encoding="utf-8")
    assert shipped == (ROOT / "spec" / "requirements.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize("bad,msg", [
    ('[[requirement]]\nid = "X"\n', "lacks"),
    ('[[requirement]]\nid="A"\ntitle="t"\nstatement="s"\nrationale="r"\nsource="s"\nverification=["magic"]\n',
     "unknown verification"),
])
def test_malformed_registry_is_refused(bad, msg):
    with pytest.raises(ValueError, match=msg):
        requirements.parse(bad)


def test_duplicate_ids_are_refused():
    entry = '[[requirement]]\nid="A"\ntitle="t"\nstatement="s"\nrationale="r"\nsource="s"\nverification=["test"]\n'
    with pytest.raises(ValueError, match="twice"):
        requirements.parse(entry + entry)


def test_cli_lists_requirements_as_text_and_json(capsys):
    assert cli.main(["requirements"]) == 0
    text = capsys.readouterr().out
    assert "MUL-R4" in text and "No broadcasting" in text
    assert cli.main(["requirements", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in data] == list(requirements.load())
    assert all(set(d) == {"id", "title", "statement", "rationale", "source", "verification"} for d in data)


def test_cli_usage_error_exits_2():
    proc = subprocess.run([sys.executable, "-m", "sonnx.cli", "no-such-command"], capture_output=True, text=True)
    assert proc.returncode == 2 and "invalid choice" in proc.stderr and "Traceback" not in proc.stderr


def test_wheel_ships_the_registry(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "-q", "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(proc.stderr[-2000:])
    wheel = next(tmp_path.glob("sonnx-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        shipped = z.read("sonnx/data/requirements.toml").decode()
    assert shipped == (ROOT / "spec" / "requirements.toml").read_text(encoding="utf-8")
