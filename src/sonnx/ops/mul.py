"""ONNX Mul under the SONNX profile: Mul's own parts of a same-shape element-wise operator.

What every such operator shares (the constraints MUL-R1..R4 under Mul's prefix, the reference
loop with its contracts, the numpy wrapper) is in elementwise.py; here are Mul's type sets, its
element function and the element's specification, and its registry record.
Spec: spec/mul.md. Proofs: proofs/mul.mlw, proofs/mul_half.mlw. Tests: tests/ops/test_elementwise.py
(the suite of every element-wise operator), tests/ops/test_mul.py (Mul only).
"""
from __future__ import annotations

import ctypes
import math
from fractions import Fraction

from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import Violation
from ..semantics import floats, intloops
from ..semantics.values import int_range
from . import elementwise
from .openvino_ir import IRLayer, broadcast_rule_inputs, broadcast_shape
from .registry import HALF_CONVERSIONS_CHECKED, CBinding, CEntry, CRoute, ConformRule, Operator, first_shape
from .signature import TensorSig

OP = "Mul"
PREFIX = "MUL"
LATEST = 14
# since_version -> element types, from the onnx schemas (tests/test_dtypes.py compares them)
TYPE_SETS = dtypes.ARITHMETIC_TYPE_SETS


# req: MUL-R1, MUL-R2, MUL-R3, MUL-R4
def constraints(a: TensorSig, b: TensorSig, *, opset: int = LATEST,
                broadcast: int | None = None) -> list[Violation]:
    """Every violation of MUL-R1..R4 of a Mul node with inputs ``a`` and ``b`` under ``opset``
    (``broadcast``: the legacy attribute of Mul-1 and Mul-6, None when absent)."""
    return elementwise.constraints(OP, PREFIX, a, b, opset=opset, broadcast=broadcast)


node_constraints = elementwise.node_constraints(OP, PREFIX)


# MUL-R3: the semantics of one product. The spec below states it independently of mul_element:
# integers by congruence modulo 2**bits, floats by the RNE rule on exact rationals.
def product_ok(dtype: str, x, y, r) -> bool:
    """The spec of one product (MUL-R3 semantics), stated without the kernel's steps.

    Integers: r is in T's range and r = x*y modulo 2**bits. Floats: NaN-aware IEEE 754 -- NaN in,
    or 0 * inf, gives NaN; an infinite operand gives an infinity with the sign rule; otherwise r
    is the exact rational product rounded to nearest even in T, a zero result taking the xor sign.
    """
    if not dtypes.is_float(dtype):
        lo, hi = int_range(dtype)
        return lo <= r <= hi and (r - x * y) % (1 << dtypes.bits(dtype)) == 0
    if math.isnan(x) or math.isnan(y):
        return math.isnan(r)
    sign = floats.is_negative(x) != floats.is_negative(y)
    if math.isinf(x) or math.isinf(y):
        if x == 0 or y == 0:
            return math.isnan(r)
        return math.isinf(r) and floats.is_negative(r) == sign
    if math.isnan(r) or (r == 0 and floats.is_negative(r) != sign):
        return False
    return floats.is_rounded(dtype, Fraction(x) * Fraction(y), r)


# MUL-R3: T in Mul-14's type set, x and y values of T, the result meets product_ok
@elementwise.element_contracts(TYPE_SETS[LATEST], product_ok)
def mul_element(dtype: str, x, y):
    """One product in the profile's semantics: wrap-around for integers, one RNE rounding
    for floats (the product of two values of T is exact in Python's double for T narrower
    than double, so rounding it once to T is the IEEE product in T)."""
    if dtypes.is_float(dtype):
        return floats.round_to(dtype, x * y)
    return intloops.wrap(x * y, dtypes.bits(dtype), dtypes.is_signed(dtype))


# MUL-R1, MUL-R3, MUL-R4: the loop of the concrete level of proofs/mul.mlw, c[i] = a[i] * b[i];
# integer T through the loop Why3 proves in semantics/intloops.py
mul_reference = elementwise.reference_kernel(OP, PREFIX, LATEST, mul_element, product_ok,
                                             int_loop=intloops.mul_wrap)

# every refusal of sonnx.mul without computing: check(a, b, opset=LATEST)
check = elementwise.checker(OP, PREFIX, LATEST)

# req: MUL-R1, MUL-R3, MUL-R4
mul = elementwise.numpy_kernel(OP, PREFIX, LATEST, "multiply", "Element-wise product of two arrays "
                               "of the same shape and numeric element type (ONNX Mul).")



# req: MUL-R1, MUL-R3, MUL-R4
def mul_c(a: np.ndarray, b: np.ndarray, *, opset: int = LATEST) -> np.ndarray:
    """ONNX Mul under the SONNX profile, computed by the C kernel extracted from
    proofs/mul_c.mlw. The same checks and refusals as ``sonnx.mul``; the same bits."""
    from .. import c_kernels
    check(a, b, opset)
    return c_kernels.binary_same_shape("sonnx_mul", a, b)


_C_PROOF = "proofs/mul_c.mlw"
_C_ARGS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)    # x, y, out, n
C_BINDING = CBinding(
    source="mul_c.c", proof=_C_PROOF, wrapper=mul_c, default=True, call=elementwise.same_shape_call('mul'),
    # float16/bfloat16 through the float32 entry, rounded once to T: proofs/mul_half.mlw;
    # the signed and narrow integers on the unsigned kernels: proofs/int_route.mlw
    routes=(CRoute(("float16", "bfloat16"), "f32", ("proofs/mul_half.mlw",), HALF_CONVERSIONS_CHECKED),
            *elementwise.int_routes(OP, "MUL-R3")),
    entries=tuple(CEntry(f"sonnx_mul_{t}", _C_PROOF, f"MulC{w}", ("MUL-R1", "MUL-R3"), _C_ARGS, packed)
                  # packed: the SSE2 instruction of the vectorised loop (SSE2 has no 64-bit product)
                  for t, w, packed in (("f32", "Float32", "mulps"), ("f64", "Float64", "mulpd"),
                                       ("u32", "UInt32", "pmuludq"), ("u64", "UInt64", ""))))

OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="elementwise", type_sets=TYPE_SETS, inputs=("A", "B"), optional=(),
    attributes={"broadcast": None}, constraints=node_constraints, reference=mul_reference,
    kernel=mul,
    bind=elementwise.binder(OP, PREFIX, LATEST, "multiply"),
    spec="spec/mul.md", proofs=("proofs/mul.mlw", "proofs/mul_half.mlw", "proofs/mul_c.mlw"),
    openvino=(IRLayer("Multiply", 1, 2, broadcast_shape, broadcast_rule_inputs),),
    output_shape=first_shape, comparison="bits", c_binding=C_BINDING,
    conform=ConformRule("MUL-R4", ((0, "A"), (1, "B"))),
    theories=("proofs/tensor.mlw", "proofs/elementwise.mlw", "proofs/half_conversions.mlw",
              "proofs/narrow_c.mlw"))
