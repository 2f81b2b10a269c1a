"""The committed example models give the verdicts examples/README.md lists."""
from __future__ import annotations

import json
import pathlib

import pytest

from sonnx.validate import validate

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
# The expected verdicts are data, shared with tools/evidence (tools/sonnx_dev/examples.py).
EXPECTED = {name.removesuffix(".onnx"): rules for name, rules in
            json.loads((EXAMPLES / "expected.json").read_text()).items() if not name.startswith("_")}


@pytest.mark.req("PROF-R1", "PROF-R2", "MUL-R4", "GEMM-R4")
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_verdict(name):
    r = validate(EXAMPLES / f"{name}.onnx")
    assert [f.rule for f in r.findings] == EXPECTED[name]
    assert name in (EXAMPLES / "README.md").read_text()


def test_every_example_model_has_an_expected_verdict():
    assert {p.stem for p in EXAMPLES.glob("*.onnx")} == set(EXPECTED)
