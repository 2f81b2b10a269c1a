"""Byte-level mutations of the examples and the conform models (fixed seed): conform either
refuses the input (ConformError, exit 2 on the command line) or returns a report with exit
code 0 or 1; never another exception (which the command line would show as a defect)."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

import sonnx
from sonnx.conform import ConformError

from ..validate.test_fuzz import EXAMPLES, mutate

MODELS = EXAMPLES + sorted((Path(__file__).resolve().parent / "models").glob("*.onnx"))
CASES = 300


@pytest.mark.req("PROF-R2")
def test_mutated_models_never_crash_conform(tmp_path):
    rng = random.Random(15)
    outcomes = {"refused": 0, 0: 0, 1: 0}
    for i in range(CASES):
        p = tmp_path / f"m{i}.onnx"
        p.write_bytes(mutate(rng.choice(MODELS).read_bytes(), rng))
        try:
            _, report = sonnx.conform(p, check=(i % 10 == 0))
        except ConformError as exc:
            assert str(exc) and "\n" not in str(exc)
            outcomes["refused"] += 1
            continue
        assert report["exit_code"] in (0, 1)
        assert report["check"]["status"] in ("passed", "failed", "not checked")
        if report["check"]["status"] != "passed":
            assert report["exit_code"] == 1
        outcomes[report["exit_code"]] += 1
    assert all(outcomes.values()), outcomes     # the mutations reach every outcome
