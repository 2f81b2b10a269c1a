"""The committed example models give the verdicts examples/README.md lists."""
from __future__ import annotations

import pathlib

import pytest

from sonnx.validate import validate

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
EXPECTED = {
    "mul_ok": [], "gemm_ok": [], "mul_gemm_chain": [],
    "mul_broadcast": ["MUL-R4"], "gemm_linear_bias": ["GEMM-R4"],
    "non_profile_op": ["PROF-R1"], "symbolic_dims": ["PROF-R2", "PROF-R2", "PROF-R2"],
}


@pytest.mark.req("PROF-R1", "PROF-R2", "MUL-R4", "GEMM-R4")
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_verdict(name):
    r = validate(EXAMPLES / f"{name}.onnx")
    assert [f.rule for f in r.findings] == EXPECTED[name]
    assert name in (EXAMPLES / "README.md").read_text()
