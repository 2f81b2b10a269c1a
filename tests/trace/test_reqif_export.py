"""`sonnx trace --format reqif`: the file validates against the OMG ReqIF schema (the `reqif`
library's validator) and the real StrictDoc converts it keeping every UID and every relation;
sonnx's verdict travels in each requirement's STATUS and notes. The tools run from .venv-tools
(tools/setup, requirements-tools.lock), as external programs.
"""
from __future__ import annotations

import re
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sonnx.trace import lobster, reqif
from sonnx.trace.matrix import Matrix

from .test_lobster_export import _row

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".venv-tools" / "bin"
NOW = datetime(2026, 11, 28, tzinfo=timezone.utc)


def _tool(name: str) -> str:
    exe = TOOLS / name
    if not exe.exists():
        pytest.fail(f"{exe} missing: run tools/setup (it installs requirements-tools.lock into .venv-tools)")
    return str(exe)


def _matrix() -> Matrix:
    bad = _row("X-R2", test="failed", defects=[("failing", "tests/ops/test_x.py::test_2 failed: planted")])
    return Matrix(rows=[_row("X-R1"), bad, _row("Y-R1", gap="spec/gaps/Y-R1.md")], orphans=[], inputs={})


def _sdoc(tmp_path: Path, m: Matrix) -> str:
    path = tmp_path / "sonnx.reqif"
    path.write_text(reqif.render(m, now=NOW), encoding="utf-8")
    v = subprocess.run([_tool("reqif"), "validate", "--use-reqif-schema", str(path)], capture_output=True,
                       text=True, timeout=300)
    assert v.returncode == 0 and "0 errors, 0 schema issues" in v.stdout, v.stdout + v.stderr
    c = subprocess.run([_tool("strictdoc"), "convert", str(path), str(tmp_path / "sdoc")], capture_output=True,
                       text=True, timeout=600)
    assert c.returncode == 0, c.stdout + c.stderr
    docs = sorted((tmp_path / "sdoc").glob("*.sdoc"))
    assert len(docs) == 1, docs
    return docs[0].read_text(encoding="utf-8")


def _nodes(sdoc: str) -> dict[str, dict]:
    """UID -> {status, parents, comment} of each [REQUIREMENT] StrictDoc wrote."""
    out = {}
    for block in sdoc.split("[REQUIREMENT]")[1:]:
        uid = re.search(r"^UID: (.+)$", block, re.M).group(1)
        status = re.search(r"^STATUS: (.+)$", block, re.M)
        comment = re.search(r"^COMMENT: (?:>>>\n(.*?)\n<<<|(.+))$", block, re.M | re.S)
        out[uid] = {"status": status.group(1) if status else None,
                    "parents": re.findall(r"- TYPE: Parent\n\s+VALUE: (.+)", block),
                    "comment": (comment.group(1) or comment.group(2)) if comment else ""}
    return out


@pytest.mark.req("@every")
def test_strictdoc_keeps_every_uid_and_relation_and_the_verdicts(tmp_path):
    m = _matrix()
    nodes = _nodes(_sdoc(tmp_path, m))
    items = [it for _, its in reqif._evidence_items(m) for it in its]
    assert set(nodes) == {r.id for r in m.rows} | {it["tag"] for it in items}
    for it in items:     # every link, as a Parent relation from the evidence item to the requirement
        assert sorted(nodes[it["tag"]]["parents"]) == sorted(ref.split(" ", 1)[1] for ref in it["refs"])
    assert sum(len(n["parents"]) for n in nodes.values()) == sum(len(it["refs"]) for it in items) > 0
    assert nodes["X-R1"]["status"] == "ok"
    assert nodes["X-R2"]["status"] == "defect" and "planted" in nodes["X-R2"]["comment"]
    assert nodes["Y-R1"]["status"] == "partial" and "spec/gaps/Y-R1.md" in nodes["Y-R1"]["comment"]
    assert nodes["pytest tests/ops/test_x.py::test_2"]["status"] == "fail"


@pytest.mark.req("@every")
def test_the_export_is_deterministic_and_shares_lobsters_tags():
    m = _matrix()
    assert reqif.render(m, now=NOW) == reqif.render(m, now=NOW)
    text = reqif.render(m, now=NOW)
    for it in lobster.activities(m) + lobster.code_items(m):
        assert f'THE-VALUE="{it["tag"]}"' in text


@pytest.mark.req("@every")
def test_the_schema_check_catches_a_broken_file(tmp_path):
    # the validator the first test relies on does refuse a file that breaks the schema
    broken = reqif.render(_matrix(), now=NOW).replace("<SPEC-RELATIONS>", "<SPEC-RELATIONZ>", 1)
    broken = broken.replace("</SPEC-RELATIONS>", "</SPEC-RELATIONZ>", 1)
    path = tmp_path / "broken.reqif"
    path.write_text(broken, encoding="utf-8")
    v = subprocess.run([_tool("reqif"), "validate", "--use-reqif-schema", str(path)], capture_output=True,
                       text=True, timeout=300)
    assert v.returncode != 0 or "0 schema issues" not in v.stdout
