"""The type sets each operator module copied from the onnx schemas agree with the schemas of
the installed onnx."""
import numpy as np
import pytest
from onnx import defs

from sonnx.ops import registry
from sonnx import dtypes
from sonnx.ops.registry import operators

TYPE_SETS = [pytest.param(op, version, id=f"{op.name}-{version}")
             for op in operators().values() for version in op.versions]


@pytest.mark.req("@typed")
@pytest.mark.parametrize("op,version", TYPE_SETS)
def test_type_sets_match_onnx_schemas(op, version):
    schema = defs.get_schema(op.name, version)
    assert schema.since_version == version
    allowed = {s[len("tensor("):-1] for s in schema.type_constraints[0].allowed_type_strs}
    assert registry.type_set(op.name, version) == allowed


@pytest.mark.parametrize("op", list(operators()))
def test_every_schema_version_is_known(op):
    seen = {defs.get_schema(op, v).since_version for v in range(1, defs.onnx_opset_version() + 1)}
    assert seen == set(registry.versions(op))


def test_since_version():
    assert registry.since_version("Mul", 12) == 7
    assert registry.since_version("Mul", 28) == 14
    assert registry.since_version("Gemm", 10) == 9
    assert registry.since_version("Mul", 0) is None


def test_numpy_names_round_trip():
    for name in dtypes.NUMERIC_TYPES:
        assert dtypes.name_of(dtypes.numpy_dtype(name)) == name
    assert dtypes.name_of(np.dtype(">f8")) == "double"
    assert dtypes.name_of(np.dtype(bool)) == "bool"
    assert dtypes.name_of_tensor_proto(1) == "float"
    assert dtypes.name_of_tensor_proto(16) == "bfloat16"
