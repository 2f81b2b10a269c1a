"""ONNX Add under the SONNX profile: Add's own parts of a same-shape element-wise operator.

The constraints ADD-R1..R4, the reference loop and the numpy wrapper are elementwise.py's;
here are Add's type sets, its element function, the element's specification and its record.
Spec: spec/add.md. Proofs: proofs/add.mlw. Tests: tests/ops/test_elementwise.py.
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

OP = "Add"
PREFIX = "ADD"
LATEST = 14
# since_version -> element types, from the onnx schemas (tests/test_dtypes.py compares them)
TYPE_SETS = dtypes.ARITHMETIC_TYPE_SETS


# ADD-R1..R4 of a node (input signatures, attributes, opset), decided in elementwise.constraints
node_constraints = elementwise.node_constraints(OP, PREFIX)


# ADD-R3: the semantics of one sum, stated independently of add_element: integers by congruence
# modulo 2**bits, floats by the RNE rule on the exact rational sum and IEEE's special cases.
def sum_ok(dtype: str, x, y, r) -> bool:
    """The spec of one sum (ADD-R3 semantics), stated without the kernel's steps.

    Integers: r is in T's range and r = x + y modulo 2**bits. Floats (IEEE 754): a NaN operand,
    or inf + -inf, gives NaN; otherwise an infinite operand gives that infinity; otherwise r is
    the exact rational sum rounded to nearest even in T, and an exact zero sum is +0 except
    -0 + -0 = -0 (the rule of IEEE 754 under round to nearest).
    """
    if not dtypes.is_float(dtype):
        lo, hi = int_range(dtype)
        return lo <= r <= hi and (r - (x + y)) % (1 << dtypes.bits(dtype)) == 0
    if math.isnan(x) or math.isnan(y):
        return math.isnan(r)
    if math.isinf(x) or math.isinf(y):
        if math.isinf(x) and math.isinf(y) and (x > 0) != (y > 0):
            return math.isnan(r)
        return r == (x if math.isinf(x) else y)
    if math.isnan(r):
        return False
    exact = Fraction(x) + Fraction(y)
    if exact == 0:
        both_negative = floats.is_negative(x) and floats.is_negative(y)
        return r == 0 and floats.is_negative(r) == both_negative
    return floats.is_rounded(dtype, exact, r)


# ADD-R3: T in Add-14's type set, x and y values of T, the result meets sum_ok
@elementwise.element_contracts(TYPE_SETS[LATEST], sum_ok)
def add_element(dtype: str, x, y):
    """One sum in the profile's semantics: wrap-around for integers, IEEE addition in T for floats.

    Floats: x + y is computed in double (one rounding) and rounded once more to T. For float16,
    bfloat16 and float this double rounding is innocuous: the wider precision p' = 53 is at
    least 2p + 2 for T's precision p (24 at most), so rounding the double sum to T gives the
    exact sum rounded once to T (Figueroa, "When is double rounding innocuous?", 1995), and
    double's exponent range covers T's, so no overflow or underflow happens in the first step
    that would not happen in T. For double the first rounding is the IEEE sum itself.
    """
    if dtypes.is_float(dtype):
        return floats.round_to(dtype, x + y)
    return intloops.wrap(x + y, dtypes.bits(dtype), dtypes.is_signed(dtype))


# ADD-R1, ADD-R3, ADD-R4: the loop of the concrete level of proofs/add.mlw, c[i] = a[i] + b[i]
add_reference = elementwise.reference_kernel(OP, PREFIX, LATEST, add_element, sum_ok)

# every refusal of sonnx.add without computing: check(a, b, opset=LATEST)
check = elementwise.checker(OP, PREFIX, LATEST)

# req: ADD-R1, ADD-R3, ADD-R4
add = elementwise.numpy_kernel(OP, PREFIX, LATEST, "add", "Element-wise sum of two arrays of the "
                               "same shape and numeric element type (ONNX Add).")



# req: ADD-R1, ADD-R3, ADD-R4
def add_c(a: np.ndarray, b: np.ndarray, *, opset: int = LATEST) -> np.ndarray:
    """ONNX Add under the SONNX profile, computed by the C kernel extracted from
    proofs/add_c.mlw. The same checks and refusals as ``sonnx.add``; the same bits."""
    from .. import c_kernels
    check(a, b, opset)
    return c_kernels.binary_same_shape("sonnx_add", a, b)


_C_PROOF = "proofs/add_c.mlw"
_C_ARGS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)    # x, y, out, n
C_BINDING = CBinding(
    source="add_c.c", proof=_C_PROOF, wrapper=add_c, default=True, call=elementwise.same_shape_call('add'),
    # float16/bfloat16 through the float32 entry, rounded once to T: proofs/add_half.mlw;
    # the signed and narrow integers on the unsigned kernels: proofs/int_route.mlw
    routes=(CRoute(("float16", "bfloat16"), "f32", ("proofs/add_half.mlw",), HALF_CONVERSIONS_CHECKED),
            *elementwise.int_routes(OP, "ADD-R3")),
    entries=tuple(CEntry(f"sonnx_add_{t}", _C_PROOF, f"AddC{w}", ("ADD-R1", "ADD-R3"), _C_ARGS, packed)
                  # packed: the SSE2 instruction of the vectorised loop
                  for t, w, packed in (("f32", "Float32", "addps"), ("f64", "Float64", "addpd"),
                                       ("u32", "UInt32", "paddd"), ("u64", "UInt64", "paddq"))))

OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="elementwise", type_sets=TYPE_SETS, inputs=("A", "B"), optional=(),
    attributes={"broadcast": None}, constraints=node_constraints, reference=add_reference,
    kernel=add,
    bind=elementwise.binder(OP, PREFIX, LATEST, "add"),
    spec="spec/add.md", proofs=("proofs/add.mlw", "proofs/add_half.mlw", "proofs/add_c.mlw"),
    openvino=(IRLayer("Add", 1, 2, broadcast_shape, broadcast_rule_inputs),),
    output_shape=first_shape, comparison="bits", c_binding=C_BINDING,
    conform=ConformRule("ADD-R4", ((0, "A"), (1, "B"))),
    theories=("proofs/tensor.mlw", "proofs/elementwise.mlw", "proofs/half_conversions.mlw",
              "proofs/narrow_c.mlw"))
