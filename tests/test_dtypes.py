"""The element-type helpers: since-versions read from the type sets, numpy names. (The type sets
of every operator and version against onnx's schemas, and every schema version known, are checked
for each registered operator by tests/ops/test_every_operator.py.)"""
import numpy as np

from sonnx.ops import registry
from sonnx import dtypes


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
