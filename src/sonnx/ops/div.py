"""ONNX Div under the SONNX profile: Div's own parts of a same-shape element-wise operator.

The constraints DIV-R1..R4, the reference loop and the numpy wrapper are elementwise.py's; here
are Div's type sets, its element function, the element's specification, the integer rule DIV-R5
(a zero divisor is refused when the kernel sees it; INT_MIN / -1 wraps) and its record.
Spec: spec/div.md. Tests: tests/ops/test_elementwise.py (TestDiv*), tests/ops/test_div.py.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import ProfileViolation, Violation
from ..semantics import floats, intloops
from ..semantics.values import int_range
from . import elementwise
from .openvino_ir import IRError, IRLayer, broadcast_rule_inputs, broadcast_shape
from .registry import ConformRule, Operator, first_shape

OP = "Div"
PREFIX = "DIV"
LATEST = 14
# since_version -> element types, from the onnx schemas (tests/test_dtypes.py compares them):
# Div's sets are Mul's, version for version
TYPE_SETS = dtypes.ARITHMETIC_TYPE_SETS

_ELEMENTWISE_CONSTRAINTS = elementwise.node_constraints(OP, PREFIX)
# the key under which the OpenVINO IR reader passes Divide's m_pythondiv (no ONNX Div has it)
PYTHONDIV = "openvino:m_pythondiv"


# req: DIV-R5
def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """DIV-R1..R4 of a node (elementwise.constraints), and DIV-R5 for an OpenVINO Divide read
    from IR: with m_pythondiv true (OpenVINO's default) it floors integer quotients, Python's
    ``//``, where ONNX Div truncates; the two differ whenever the signs differ, which the
    validator cannot rule out from a signature, so such an integer layer is refused."""
    found = _ELEMENTWISE_CONSTRAINTS(sigs, attrs, opset)
    types = {s.elem_type for s in sigs}
    if attrs.get(PYTHONDIV) and any(t is not None and not dtypes.is_float(t) for t in types):
        found.append(Violation("DIV-R5", "OpenVINO Divide with m_pythondiv=true floors integer "
                                         "quotients (Python's //), ONNX Div truncates toward zero; "
                                         "the profile refuses it: set m_pythondiv=\"false\", or "
                                         "divide floats"))
    return found


def divide_rule_inputs(layer, sigs, shown: str):
    """OpenVINO's Divide as Div's constraint function sees it: auto_broadcast as for Multiply,
    and m_pythondiv (absent means true, OpenVINO's default) passed on under PYTHONDIV."""
    sigs, attrs, note = broadcast_rule_inputs(layer, sigs, shown)
    raw = layer.data.get("m_pythondiv", "true")
    if raw.lower() not in ("true", "false", "1", "0"):
        raise IRError(f"{shown}: {layer.where} has m_pythondiv={raw[:20]!r}, not a boolean")
    return sigs, {**attrs, PYTHONDIV: raw.lower() in ("true", "1")}, note


def _zero_divisor(where: str) -> ProfileViolation:
    # req: DIV-R5
    return ProfileViolation([Violation(
        "DIV-R5", f"Div {where}: an integer divisor B holds 0; ONNX leaves integer division by "
                  "zero undefined and the profile refuses it (keep B free of zeros, e.g. a "
                  "constant initializer checked before deployment)")])


# DIV-R3, DIV-R5: the semantics of one quotient, stated independently of div_element: integers
# by Fraction's truncation and congruence modulo 2**bits, floats by the RNE rule on the exact
# rational quotient and IEEE 754's special cases.
def quotient_ok(dtype: str, x, y, r) -> bool:
    """The spec of one quotient x / y (DIV-R3, DIV-R5), stated without the kernel's steps.

    Integers: y is not 0, r is in T's range and r = trunc(x / y) modulo 2**bits (the exact
    quotient truncated toward zero; only INT_MIN / -1 wraps, to INT_MIN). Floats (IEEE 754): a
    NaN operand, 0 / 0 or inf / inf gives NaN; x / 0 with x != 0 and inf / y with y finite give an
    infinity, x / inf with x finite a zero, each with the xor of the operands' signs; otherwise r
    is the exact rational quotient rounded to nearest even in T, a zero result with the xor sign.
    """
    if not dtypes.is_float(dtype):
        if y == 0:
            return False
        lo, hi = int_range(dtype)
        return lo <= r <= hi and (r - int(Fraction(x, y))) % (1 << dtypes.bits(dtype)) == 0
    if math.isnan(x) or math.isnan(y):
        return math.isnan(r)
    sign = floats.is_negative(x) != floats.is_negative(y)
    if (x == 0 and y == 0) or (math.isinf(x) and math.isinf(y)):
        return math.isnan(r)
    if y == 0 or math.isinf(x):
        return math.isinf(r) and floats.is_negative(r) == sign
    if math.isinf(y):
        return r == 0 and floats.is_negative(r) == sign
    if math.isnan(r) or (r == 0 and floats.is_negative(r) != sign):
        return False
    return floats.is_rounded(dtype, Fraction(x) / Fraction(y), r)


# DIV-R3: T in Div-14's type set, x and y values of T, the result meets quotient_ok
@elementwise.element_contracts(TYPE_SETS[LATEST], quotient_ok)
def div_element(dtype: str, x, y):
    """One quotient in the profile's semantics.

    Floats: IEEE's special cases written out (Python raises on a zero divisor), else x / y in
    double (one rounding) rounded once more to T. The double rounding is innocuous for float16,
    bfloat16 and float: double's precision 53 is at least 2p + 2 for T's precision p <= 24, which
    makes rounding the double quotient to T the exact quotient rounded once (Figueroa, "When is
    double rounding innocuous?", 1995, covers division); for double the first rounding is IEEE's.
    Integers: the quotient truncated toward zero, wrapped modulo 2**bits (INT_MIN / -1 only).
    """
    if dtypes.is_float(dtype):
        if math.isnan(x) or math.isnan(y) or (x == 0 and y == 0) or (math.isinf(x) and math.isinf(y)):
            return math.nan
        if y == 0:
            negative = floats.is_negative(x) != floats.is_negative(y)
            return -math.inf if negative else math.inf
        return floats.round_to(dtype, x / y)
    if y == 0:
        raise _zero_divisor("reference")
    q = abs(x) // abs(y)
    if (x < 0) != (y < 0):
        q = -q
    return intloops.wrap(q, dtypes.bits(dtype), dtypes.is_signed(dtype))


# DIV-R1, DIV-R3, DIV-R4: the loop c[i] = a[i] / b[i] of the reference level
div_reference = elementwise.reference_kernel(OP, PREFIX, LATEST, div_element, quotient_ok)

# every refusal of sonnx.div's signature without computing: check(a, b, opset=LATEST)
check = elementwise.checker(OP, PREFIX, LATEST)


# req: DIV-R3, DIV-R5
def divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The arithmetic of an accepted call: numpy's IEEE division for floats (one rounding in T;
    numpy's float16 divides in float32, innocuous as above); for integers a zero divisor is
    refused (DIV-R5), then the quotient truncated toward zero -- numpy's ``//`` floors, so the
    floored quotient is raised by one where the remainder is non-zero and the signs differ --
    wrapping like C's two's complement for INT_MIN / -1."""
    if a.dtype.kind == "f" or dtypes.name_of(a.dtype) == "bfloat16":
        return np.divide(a, b)
    if not np.all(b):
        raise _zero_divisor("kernel")
    with np.errstate(all="ignore"):            # INT_MIN // -1: numpy wraps and warns
        q = np.floor_divide(a, b)
        if a.dtype.kind == "i":
            fix = (a - q * b != 0) & ((a < 0) != (b < 0))
            q = q + fix.astype(q.dtype)
    return q


# req: DIV-R1, DIV-R3, DIV-R4, DIV-R5
div = elementwise.numpy_kernel(OP, PREFIX, LATEST, divide, "Element-wise quotient A / B of two "
                               "arrays of the same shape and numeric element type (ONNX Div); "
                               "integers truncate toward zero, an integer zero divisor is refused.")

OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="elementwise", type_sets=TYPE_SETS, inputs=("A", "B"), optional=(),
    attributes={"broadcast": None}, constraints=node_constraints, reference=div_reference,
    kernel=div,
    bind=elementwise.binder(OP, PREFIX, LATEST, divide),
    spec="spec/div.md", proofs=("proofs/div.mlw",),
    openvino=(IRLayer("Divide", 1, 2, broadcast_shape, divide_rule_inputs),),
    output_shape=first_shape, comparison="bits",
    conform=ConformRule("DIV-R4", ((0, "A"), (1, "B"))),
    theories=("proofs/tensor.mlw", "proofs/elementwise.mlw"))
