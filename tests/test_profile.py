"""Profile-level rules (PROF-R*), checked on their own; the validator tests check them on models."""
import pytest

from sonnx.ops import registry
from sonnx import profile
from sonnx.ops.registry import operators


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("domain", ["", "ai.onnx"])
@pytest.mark.parametrize("op", list(operators()))
def test_profile_operators_in_the_default_domain_pass(domain, op):
    assert registry.operator_violations(domain, op) == []


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("domain,op", [("", "Pow"), ("", "LSTM"), ("com.microsoft", "Mul"),
                                       ("ai.onnx.ml", "Gemm"), ("", "mul")])
def test_other_operators_are_refused(domain, op):
    found = registry.operator_violations(domain, op)
    assert [v.requirement for v in found] == ["PROF-R1"]
    assert op in found[0].message


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("shape", [(), (1,), (2, 3), (1, 1, 1, 1), (2**31 - 1,)])
def test_static_positive_shapes_pass(shape):
    assert profile.shape_violations(shape, "X") == []


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("shape", [None, ("N", 3), (None,), (0,), (3, -1), (2**40,), (2**16, 2**16),
                                   (True, 2), (2.0, 3)])
def test_unknown_symbolic_empty_negative_or_huge_shapes_are_refused(shape):
    found = profile.shape_violations(shape, "X")
    assert [v.requirement for v in found] == ["PROF-R2"]
    assert "X" in found[0].message
