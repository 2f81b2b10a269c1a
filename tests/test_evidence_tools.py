"""The proof replay and the CrossHair campaign, run as part of the whole test suite.

CI runs `tools/test` only, so the slow evidence tools run here too. `tools/evidence` runs them
as steps of their own (their logs go to the bundle) and sets SONNX_EVIDENCE_STEPS=1 so that
they do not run twice; the tests then report themselves skipped, never passed.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN_BY_EVIDENCE = os.environ.get("SONNX_EVIDENCE_STEPS") == "1"


def _run_tool(name: str, timeout: int) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(ROOT / "tools" / name)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    logs = ROOT / "build" / "evidence" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / f"{name}.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    return proc


@pytest.mark.skipif(RUN_BY_EVIDENCE, reason="tools/evidence runs tools/prove as its own step")
def test_every_why3_session_replays():
    proc = _run_tool("prove", timeout=1200)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]


@pytest.mark.skipif(RUN_BY_EVIDENCE, reason="tools/evidence runs tools/crosshair as its own step")
def test_crosshair_campaign_passes():
    proc = _run_tool("crosshair", timeout=1200)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
