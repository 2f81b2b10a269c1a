"""The operator registry is the one list of operators: every place that needs the list reads it."""
import re
from pathlib import Path

import pytest

from sonnx.ops import registry
from sonnx import requirements
from sonnx.ops.registry import operator, operators
from sonnx.validate import rules

ROOT = Path(__file__).resolve().parents[2]


def test_each_operator_is_registered_under_its_name_and_prefix():
    ops = operators()
    assert {"Mul", "Gemm", "Add"} <= set(ops)
    assert len({op.prefix for op in ops.values()}) == len(ops)
    for name, op in ops.items():
        assert op.name == name and operator(name) is op
        assert op.inputs[len(op.inputs) - len(op.optional):] == op.optional   # optional ones trail
        assert (ROOT / op.spec).is_file()
        assert all(p.startswith("proofs/") and p.endswith(".mlw") for p in op.proofs)
    with pytest.raises(KeyError):
        operator("Add2")


@pytest.mark.req("PROF-R1")
def test_the_profile_admits_exactly_the_registered_operators():
    assert all(registry.operator_violations("", name) == [] for name in operators())
    found = registry.operator_violations("", "ConvTranspose")
    assert [v.requirement for v in found] == ["PROF-R1"] and ", ".join(operators()) in found[0].message


def test_since_version_reads_the_type_sets():
    mul = operator("Mul")
    assert mul.versions == (1, 6, 7, 13, 14)
    assert [mul.since_version(o) for o in (0, 1, 5, 6, 12, 13, 14, 28)] == [None, 1, 1, 6, 7, 13, 14, 14]
    assert rules.op_version("Mul", "", 12) == 7 and rules.op_version("Mul", "", None) is None


def test_requirement_ids_are_built_from_the_prefixes():
    ids = set(requirements.load())
    for op in operators().values():
        assert f"{op.prefix}-R1" in ids
    for rid in ids:
        assert re.fullmatch(requirements.ID_PATTERN, rid)
    assert not re.fullmatch(requirements.ID_PATTERN, "CONVTRANSPOSE-R1")
