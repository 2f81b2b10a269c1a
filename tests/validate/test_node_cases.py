"""ONNX's own node test cases for Mul and Gemm (onnx.backend.test.case.node), through the validator."""
from __future__ import annotations

import importlib
import warnings

import pytest

from sonnx.validate import validate


def _cases() -> dict:
    # Importing only the mul and gemm case modules registers their cases (the full
    # collect_testcases() would build every operator's cases: ~10 s).
    import onnx.backend.test.case.node as node_cases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("mul", "gemm"):
            importlib.import_module(f"onnx.backend.test.case.node.{name}")
    return {c.name: c.model for c in node_cases._NodeTestCases
            if c.name.startswith(("test_mul", "test_gemm"))}


CASES = _cases()
SAME_SHAPE_MUL = ["test_mul_example", "test_mul", "test_mul_int8", "test_mul_int16", "test_mul_uint8",
                  "test_mul_uint16", "test_mul_uint32", "test_mul_uint64"]
GEMM_OK = ["test_gemm_default_no_bias", "test_gemm_default_matrix_bias"]
GEMM_BROADCAST_C = ["test_gemm_default_zero_bias", "test_gemm_default_scalar_bias",
                    "test_gemm_default_single_elem_vector_bias", "test_gemm_default_vector_bias",
                    "test_gemm_transposeA", "test_gemm_transposeB", "test_gemm_alpha",
                    "test_gemm_beta", "test_gemm_all_attributes"]


def test_all_cases_found():
    assert set(SAME_SHAPE_MUL + GEMM_OK + GEMM_BROADCAST_C + ["test_mul_bcast"]) <= set(CASES)


@pytest.mark.req("MUL-R1", "MUL-R2", "MUL-R3", "MUL-R4", "PROF-R1", "PROF-R2", "PROF-R3")
@pytest.mark.parametrize("name", SAME_SHAPE_MUL)
def test_same_shape_mul_cases_conform(name):
    r = validate(CASES[name])
    assert r.conforms, r.findings


@pytest.mark.req("GEMM-R1", "GEMM-R2", "GEMM-R3", "GEMM-R4", "GEMM-R5", "PROF-R1", "PROF-R2")
@pytest.mark.parametrize("name", GEMM_OK)
def test_gemm_cases_without_broadcast_conform(name):
    r = validate(CASES[name])
    assert r.conforms, r.findings


@pytest.mark.req("MUL-R4")
def test_mul_bcast_refused():
    r = validate(CASES["test_mul_bcast"])
    assert [f.rule for f in r.findings] == ["MUL-R4"]
    assert r.findings[0].op_type == "Mul" and r.findings[0].node_index == 0


@pytest.mark.req("GEMM-R4")
@pytest.mark.parametrize("name", GEMM_BROADCAST_C)
def test_gemm_broadcast_c_cases_refused(name):
    r = validate(CASES[name])
    assert [f.rule for f in r.findings] == ["GEMM-R4"], r.findings
    f = r.findings[0]
    assert (f.graph, f.node_index, f.op_type, f.op_version) == ("main", 0, "Gemm", 13)
