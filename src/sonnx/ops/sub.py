"""ONNX Sub under the SONNX profile: Sub's own parts of a same-shape element-wise operator.

The constraints SUB-R1..R4, the reference loop and the numpy wrapper are elementwise.py's;
here are Sub's type sets, its element function, the element's specification and its record.
Spec: spec/sub.md. Proofs: proofs/sub.mlw. Tests: tests/ops/test_elementwise.py.
"""
from __future__ import annotations

import ctypes
import math
from fractions import Fraction

from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..semantics import floats, intloops
from ..semantics.values import int_range
from . import elementwise
from .openvino_ir import IRLayer, broadcast_rule_inputs, broadcast_shape
from .registry import HALF_CONVERSIONS_CHECKED, CBinding, CEntry, CRoute, ConformRule, Operator, first_shape

OP = "Sub"
PREFIX = "SUB"
LATEST = 14
# since_version -> element types, from the onnx schemas (tests/test_dtypes.py compares them)
TYPE_SETS = dtypes.ARITHMETIC_TYPE_SETS


# SUB-R1..R4 of a node (input signatures, attributes, opset), decided in elementwise.constraints
node_constraints = elementwise.node_constraints(OP, PREFIX)


# SUB-R3: the semantics of one difference, stated independently of sub_element: integers by
# congruence modulo 2**bits, floats by the RNE rule on the exact rational difference and IEEE's
# special cases.
def difference_ok(dtype: str, x, y, r) -> bool:
    """The spec of one difference x - y (SUB-R3 semantics), stated without the kernel's steps.

    Integers: r is in T's range and r = x - y modulo 2**bits. Floats (IEEE 754): a NaN operand,
    or an infinity minus the same infinity, gives NaN; otherwise an infinite x gives x and an
    infinite y gives -y; otherwise r is the exact rational difference rounded to nearest even in
    T, and an exact zero difference is +0 (so x - x = +0) except -0 - +0 = -0 (the rule of
    IEEE 754 under round to nearest).
    """
    if not dtypes.is_float(dtype):
        lo, hi = int_range(dtype)
        return lo <= r <= hi and (r - (x - y)) % (1 << dtypes.bits(dtype)) == 0
    if math.isnan(x) or math.isnan(y):
        return math.isnan(r)
    if math.isinf(x) or math.isinf(y):
        if math.isinf(x) and math.isinf(y) and (x > 0) == (y > 0):
            return math.isnan(r)
        return r == (x if math.isinf(x) else -y)
    if math.isnan(r):
        return False
    exact = Fraction(x) - Fraction(y)
    if exact == 0:
        # x = y: +0, unless x is -0 and y is +0 (the sum -0 + -0 of IEEE's rule)
        negative = floats.is_negative(x) and not floats.is_negative(y)
        return r == 0 and floats.is_negative(r) == negative
    return floats.is_rounded(dtype, exact, r)


def exact_difference(x, y):
    """x - y in Python: exact for integers, the double difference (one rounding) for floats.
    One named step, looked up when sub_element runs, so that the CrossHair mutants can bend
    exactly this (operands swapped, the zero's sign) and be seen caught."""
    return x - y


# SUB-R3: T in Sub-14's type set, x and y values of T, the result meets difference_ok
@elementwise.element_contracts(TYPE_SETS[LATEST], difference_ok)
def sub_element(dtype: str, x, y):
    """One difference in the profile's semantics: wrap-around for integers, IEEE subtraction in
    T for floats.

    Floats: x - y is computed in double (one rounding) and rounded once more to T. As for Add's
    sum, this double rounding is innocuous for float16, bfloat16 and float: a difference is a
    sum with the sign of y flipped (exact), and double's precision 53 is at least 2p + 2 for
    T's precision p (24 at most), so rounding the double difference to T gives the exact
    difference rounded once to T (Figueroa, "When is double rounding innocuous?", 1995); double's
    exponent range covers T's. For double the first rounding is the IEEE difference itself.
    """
    if dtypes.is_float(dtype):
        return floats.round_to(dtype, exact_difference(x, y))
    return intloops.wrap(exact_difference(x, y), dtypes.bits(dtype), dtypes.is_signed(dtype))


# SUB-R1, SUB-R3, SUB-R4: the loop of the concrete level of proofs/sub.mlw, c[i] = a[i] - b[i]
sub_reference = elementwise.reference_kernel(OP, PREFIX, LATEST, sub_element, difference_ok)

# every refusal of sonnx.sub without computing: check(a, b, opset=LATEST)
check = elementwise.checker(OP, PREFIX, LATEST)

# req: SUB-R1, SUB-R3, SUB-R4
sub = elementwise.numpy_kernel(OP, PREFIX, LATEST, "subtract", "Element-wise difference A - B "
                               "of two arrays of the same shape and numeric element type "
                               "(ONNX Sub).")



# req: SUB-R1, SUB-R3, SUB-R4
def sub_c(a: np.ndarray, b: np.ndarray, *, opset: int = LATEST) -> np.ndarray:
    """ONNX Sub under the SONNX profile, computed by the C kernel extracted from
    proofs/sub_c.mlw. The same checks and refusals as ``sonnx.sub``; the same bits."""
    from .. import c_kernels
    check(a, b, opset)
    return c_kernels.binary_same_shape("sonnx_sub", a, b)


_C_PROOF = "proofs/sub_c.mlw"
_C_ARGS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)    # x, y, out, n
C_BINDING = CBinding(
    source="sub_c.c", proof=_C_PROOF, wrapper=sub_c, default=True, call=elementwise.same_shape_call('sub'),
    # float16/bfloat16 through the float32 entry, rounded once to T: proofs/sub_half.mlw;
    # the signed and narrow integers on the unsigned kernels: proofs/int_route.mlw
    routes=(CRoute(("float16", "bfloat16"), "f32", ("proofs/sub_half.mlw",), HALF_CONVERSIONS_CHECKED),
            *elementwise.int_routes(OP, "SUB-R3")),
    entries=tuple(CEntry(f"sonnx_sub_{t}", _C_PROOF, f"SubC{w}", ("SUB-R1", "SUB-R3"), _C_ARGS, packed)
                  # packed: the SSE2 instruction of the vectorised loop
                  for t, w, packed in (("f32", "Float32", "subps"), ("f64", "Float64", "subpd"),
                                       ("u32", "UInt32", "psubd"), ("u64", "UInt64", "psubq"))))

OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="elementwise", type_sets=TYPE_SETS, inputs=("A", "B"), optional=(),
    attributes={"broadcast": None}, constraints=node_constraints, reference=sub_reference,
    kernel=sub,
    bind=elementwise.binder(OP, PREFIX, LATEST, "subtract"),
    spec="spec/sub.md", proofs=("proofs/sub.mlw", "proofs/sub_half.mlw", "proofs/sub_c.mlw"),
    openvino=(IRLayer("Subtract", 1, 2, broadcast_shape, broadcast_rule_inputs),),
    output_shape=first_shape, comparison="bits", c_binding=C_BINDING,
    conform=ConformRule("SUB-R4", ((0, "A"), (1, "B"))),
    theories=("proofs/tensor.mlw", "proofs/elementwise.mlw", "proofs/half_conversions.mlw",
              "proofs/narrow_c.mlw"))
