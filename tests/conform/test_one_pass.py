"""All findings in one pass: the operators' rules are reported wherever the shapes establish
them, also when a dimension is symbolic (PROF-R2 reported too), and never guessed."""
from __future__ import annotations

from pathlib import Path

import pytest
from onnx import TensorProto, helper

from sonnx.ops import gemm
from sonnx.ops.elementwise import constraints as ew
from sonnx.ops.signature import TensorSig
from sonnx.validate import validate

MODELS = Path(__file__).resolve().parent / "models"
F = TensorProto.FLOAT


def sig(shape):
    return TensorSig(None if shape is None else tuple(shape), "float")


def mul_ids(a, b):
    return [v.requirement for v in ew("Mul", "MUL", sig(a), sig(b), opset=14)]


def gemm_ids(a, b, c, **kw):
    return [v.requirement for v in gemm.constraints(sig(a), sig(b), None if c is None else sig(c), **kw)]


@pytest.mark.req("GEMM-R4", "PROF-R2")
def test_dynamic_mlp_reports_gemm_r4_with_prof_r2():
    r = validate(str(MODELS / "mlp_dynamo_op18_bias_dynamic.onnx"))
    ids = sorted({f.rule for f in r.findings})
    assert ids == ["GEMM-R4", "PROF-R2"]
    msg = next(f.message for f in r.findings if f.rule == "GEMM-R4")
    assert "(M, N) = (batch, 16)" in msg and "--dim NAME=SIZE" in msg


@pytest.mark.req("GEMM-R4", "GEMM-R1")
@pytest.mark.parametrize("a,b,c,kw,want", [
    (("m", 8), (16, 8), (16,), {"trans_b": 1}, ["GEMM-R4"]),       # rank 1: never (M, N)
    (("m", 8), (8, 16), (), {}, ["GEMM-R4"]),                      # scalar
    (("m", 8), (8, 16), (1, 16), {}, []),                          # M could be 1: not established
    (("m", 8), (8, 16), ("m", 16), {}, []),                        # exactly (M, N)
    (("m", 8), (8, 16), ("m", 1), {}, ["GEMM-R4"]),                # N = 16 is static
    ((None, 8), (8, 16), (None, 16), {}, []),                      # unknown M
    (("m", 8), (7, 16), None, {}, ["GEMM-R1"]),                    # K 8 vs 7, both static
    (("m", "k"), (8, 16), (16,), {}, ["GEMM-R4"]),
    (("m", "k"), ("j", 16), None, {}, []),                         # K symbolic: unknown
    (("m", 8), (8, "n"), ("n",), {}, ["GEMM-R4"]),
    (None, (8, 16), (16,), {}, []),                                # rank of A unknown
])
def test_gemm_partial_shapes(a, b, c, kw, want):
    assert gemm_ids(a, b, c, **kw) == want


@pytest.mark.req("MUL-R1", "MUL-R4")
@pytest.mark.parametrize("a,b,want", [
    (("b", 3), (3,), ["MUL-R4"]),             # broadcast whatever b is
    (("b", 3), ("b", 1), ["MUL-R4"]),
    (("b", 1), (1, 3), ["MUL-R4"]),
    (("b", 3), (4,), ["MUL-R1"]),             # 3 vs 4: never compatible
    (("b", 3), (2, 3), []),                   # same shape when b = 2: not established
    (("b", 3), ("c", 3), []),                 # b = c possible
    (("b", 3), ("b", 3), []),
    ((None, 3), (None, 1), ["MUL-R4"]),       # 3 vs 1: never equal, a broadcast when ONNX runs it
    ((None, 3), (3,), ["MUL-R4"]),
    ((None, 3), (None, 3, 3), ["MUL-R4"]),    # ranks differ: always a broadcast (issue 26)
    (("a", "b", "c"), (4,), ["MUL-R4"]),      # every dimension symbolic, ranks differ
    (("a", "b"), (4,), ["MUL-R4"]),
    ((None, 3), (None, 3), []),               # unknown dims are not equal to each other
    (("a", "a"), (3, 4), ["MUL-R4"]),         # a cannot be 3 and 4: never the same shape
    (None, (3,), []),
    (("?", 3), ("?", 3), []),                 # OpenVINO's ? dims are unknown, not one symbol
    (("1..4", 3), ("1..4", 3), []),           # nor are its intervals
    (("?", 3), ("?", 1), ["MUL-R4"]),         # 3 vs 1 whatever ? is
    (("?", 3), (3,), ["MUL-R4"]),
])
def test_elementwise_partial_shapes(a, b, want):
    assert mul_ids(a, b) == want


@pytest.mark.req("MUL-R4", "PROF-R2")
def test_validator_reports_mul_r4_with_a_symbolic_batch():
    g = helper.make_graph([helper.make_node("Mul", ["x", "s"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", F, ["batch", 3])],
                          [helper.make_tensor_value_info("y", F, ["batch", 3])],
                          [helper.make_tensor("s", F, [3], [1.0, 2.0, 3.0])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    rules = sorted({f.rule for f in validate(m).findings})
    assert rules == ["MUL-R4", "PROF-R2"]
    msg = next(f.message for f in validate(m).findings if f.rule == "MUL-R4")
    assert "(batch, 3)" in msg and "sonnx conform" in msg and "Expand node is not in the profile" in msg


@pytest.mark.req("PROF-R2")
def test_prof_r2_names_the_pin_only_for_a_named_dimension():
    from sonnx.profile import shape_violations
    # the names --dim pins are those of the file (tests/validate/test_dim_hints.py)
    pinnable = frozenset({"batch", "unk__3"})
    for d in ("batch", "unk__3"):
        (v,) = shape_violations((d, 3), "x", pinnable)
        assert f"--dim {d}=SIZE" in v.message
    for d in (None, "", "?", "1..4", "unk__4", "a=b"):
        (v,) = shape_violations((d, 3), "x", pinnable)
        assert "--dim" not in v.message, d
