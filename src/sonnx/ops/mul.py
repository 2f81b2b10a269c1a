"""ONNX Mul under the SONNX profile: constraints, reference kernel, fast kernel.

The three parts share one rule book: ``constraints`` is the only place where MUL-R1..R4 are
decided, and both kernels (and the model validator) call it.
Spec: spec/mul.md. Proofs: proofs/mul.mlw. Tests: tests/ops/test_mul.py.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import icontract
import numpy as np

from .. import dtypes
from ..errors import ProfileViolation, Violation, raise_if_any
from ..profile import kernel_opset, shape_violations
from ..semantics import floats, intloops
from ..semantics.values import int_range, is_element_of
from .registry import Operator
from .signature import MEMO_SCALARS, AcceptedCalls, TensorSig, dense_and_typed, sig_of_array
from ..semantics.tensor import FULL_CONTRACTS, TensorValue, flat_index, size

OP = "Mul"
LATEST = 14
# since_version -> element types, from the onnx schemas (tests/test_dtypes.py compares them)
TYPE_SETS = {
    1: dtypes.IEEE_FLOATS,
    6: dtypes.IEEE_FLOATS | dtypes.WIDE_INTS,
    7: dtypes.IEEE_FLOATS | dtypes.WIDE_INTS,
    13: dtypes.IEEE_FLOATS | dtypes.WIDE_INTS | {"bfloat16"},
    14: dtypes.IEEE_FLOATS | dtypes.WIDE_INTS | {"bfloat16"} | dtypes.NARROW_INTS,
}


def _broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    for x, y in zip(reversed(a), reversed(b)):
        if x != y and x != 1 and y != 1:
            return False
    return True


def constraints(a: TensorSig, b: TensorSig, *, opset: int = LATEST,
                broadcast: int | None = None) -> list[Violation]:
    """Every profile violation of a Mul node with inputs ``a`` and ``b`` under ``opset``.

    ``broadcast`` is the legacy attribute of Mul-1 and Mul-6 (None when absent).
    """
    found: list[Violation] = []
    version = dtypes.since_version(OP, opset)
    if version is None:
        return [Violation("MUL-R3", f"opset {opset} has no Mul; import opset 1 or later")]

    # MUL-R2 (dense) and MUL-R3 (one element type of the version's type set)
    found.extend(dense_and_typed(OP, version, [("A", a), ("B", b)], dense_rule="MUL-R2",
                                 type_rule="MUL-R3"))

    if broadcast not in (None, 0):
        found.append(Violation("MUL-R4", f"Mul-{version} has broadcast={broadcast}; the profile forbids "
                                         "broadcasting: remove the attribute and give B the shape of A"))

    shape_problems = [v for what, t in (("A", a), ("B", b)) if not t.sparse
                      for v in shape_violations(t.shape, f"Mul input {what}")]
    found.extend(shape_problems)
    if not shape_problems and not (a.sparse or b.sparse) and a.shape != b.shape:
        if _broadcastable(a.shape, b.shape):
            found.append(Violation("MUL-R4", f"Mul inputs have shapes {a.shape} and {b.shape}, which "
                                             "would need broadcasting; the profile forbids it: expand the "
                                             f"smaller input to {a.shape if size(a.shape) >= size(b.shape) else b.shape} "
                                             "explicitly before Mul"))
        else:
            found.append(Violation("MUL-R1", f"Mul inputs have shapes {a.shape} and {b.shape}; they must "
                                             "have the same shape"))
    return found


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """``constraints`` of a node: its input signatures and attributes as the validator reads them."""
    a, b = sigs
    return constraints(a, b, opset=opset, broadcast=attrs.get("broadcast"))


# ---------------------------------------------------------------- reference kernel
# The contracts below are read by CrossHair (tests/crosshair/) and checked by icontract at run
# time. Preconditions are the requirements; postconditions state the semantics of DESIGN.md
# independently of the code: integers by congruence modulo 2**bits, floats by the RNE rule on
# exact rationals (floats.is_rounded), element positions by multi-index (tensor.flat_index).
# The per-element ones are attached only with SONNX_CONTRACTS=full (see tensor.FULL_CONTRACTS).

def _negative(v: float) -> bool:
    return math.copysign(1.0, v) < 0


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
    sign = _negative(x) != _negative(y)
    if math.isinf(x) or math.isinf(y):
        if x == 0 or y == 0:
            return math.isnan(r)
        return math.isinf(r) and _negative(r) == sign
    if math.isnan(r) or (r == 0 and _negative(r) != sign):
        return False
    return floats.is_rounded(dtype, Fraction(x) * Fraction(y), r)


def _admissible(a: TensorValue, b: TensorValue) -> bool:
    return not constraints(TensorSig(a.shape, a.dtype), TensorSig(b.shape, b.dtype))


def _refusal(a: TensorValue, b: TensorValue) -> ProfileViolation:
    return ProfileViolation(constraints(TensorSig(a.shape, a.dtype), TensorSig(b.shape, b.dtype)))


def _well_formed(t: TensorValue) -> bool:
    return len(t.data) == size(t.shape) and all(is_element_of(t.dtype, v) for v in t.data)


def _elementwise_ok(a: TensorValue, b: TensorValue, c: TensorValue) -> bool:
    # MUL-R1, MUL-R3: at every multi-index of the shape, C holds the product of A's and B's elements
    for idx in itertools.product(*(range(d) for d in a.shape)):
        k = flat_index(a.shape, idx)
        if not product_ok(a.dtype, a.data[k], b.data[k], c.data[k]):
            return False
    return True


@icontract.require(lambda dtype: dtype in TYPE_SETS[LATEST], enabled=FULL_CONTRACTS) # MUL-R3
@icontract.require(lambda dtype, x, y: is_element_of(dtype, x) and is_element_of(dtype, y),    # MUL-R3
                   enabled=FULL_CONTRACTS)
@icontract.ensure(lambda dtype, x, y, result: product_ok(dtype, x, y, result),                 # MUL-R3
                  enabled=FULL_CONTRACTS)
def mul_element(dtype: str, x, y):
    """One product in the profile's semantics: wrap-around for integers, one RNE rounding
    for floats (the product of two values of T is exact in Python's double for T narrower
    than double, so rounding it once to T is the IEEE product in T)."""
    if dtypes.is_float(dtype):
        return floats.round_to(dtype, x * y)
    return intloops.wrap(x * y, dtypes.bits(dtype), dtypes.is_signed(dtype))


# MUL-R1, MUL-R3, MUL-R4: refused inputs raise ProfileViolation (from constraints), as before
@icontract.require(lambda a, b: _admissible(a, b), "MUL-R1, MUL-R3, MUL-R4", error=_refusal)
@icontract.require(lambda a, b: _well_formed(a) and _well_formed(b), enabled=FULL_CONTRACTS)
@icontract.ensure(lambda a, result: result.shape == a.shape and result.dtype == a.dtype        # MUL-R1
                  and len(result.data) == len(a.data))
@icontract.ensure(lambda a, b, result: _elementwise_ok(a, b, result),                          # MUL-R3
                  enabled=FULL_CONTRACTS)
def mul_reference(a: TensorValue, b: TensorValue) -> TensorValue:
    """The loop of the concrete level of proofs/mul.mlw: c[i] = a[i] * b[i] over flat data."""
    # kept although the precondition says the same: the check must stay when contracts are off
    raise_if_any(constraints(TensorSig(a.shape, a.dtype), TensorSig(b.shape, b.dtype)))
    n = size(a.shape)
    if not dtypes.is_float(a.dtype):
        data = intloops.mul_wrap(a.data, b.data, dtypes.bits(a.dtype), dtypes.is_signed(a.dtype))
        return TensorValue(a.dtype, a.shape, data)
    c = [0.0] * n
    for i in range(n):
        c[i] = mul_element(a.dtype, a.data[i], b.data[i])
    return TensorValue(a.dtype, a.shape, c)


# ---------------------------------------------------------------- fast kernel
_ACCEPTED = AcceptedCalls()


def _memo_key(a: object, b: object, opset: object) -> tuple | None:
    """Key of the memo of accepted calls (see signature.AcceptedCalls); None: no memo."""
    if type(a) is np.ndarray and type(b) is np.ndarray and type(opset) in MEMO_SCALARS:
        return a.shape, a.dtype, b.shape, b.dtype, type(opset), opset
    return None


# req: MUL-R1, MUL-R3, MUL-R4
def _check(a: object, b: object, opset: object) -> bool:
    """Every check of ``mul``'s arguments: TypeError or ProfileViolation; else whether the
    product may raise floating-point warnings (a float type)."""
    version = kernel_opset(opset, "mul")
    raise_if_any(constraints(sig_of_array(a, "mul", "A"), sig_of_array(b, "mul", "B"), opset=version))
    return dtypes.is_float(dtypes.name_of(a.dtype))


# req: MUL-R1, MUL-R3, MUL-R4
def mul(a: np.ndarray, b: np.ndarray, *, opset: int = LATEST) -> np.ndarray:
    """Element-wise product of two arrays of the same shape and numeric element type.

    Raises ``sonnx.ProfileViolation`` (a ValueError naming the requirement) for anything the
    SONNX profile refuses: different shapes, broadcasting, mixed or non-numeric element types,
    sparse inputs, empty or oversized tensors, an opset outside 1..28 (PROF-R3). Raises
    TypeError for non-array inputs and a non-integer opset.
    """
    key = _memo_key(a, b, opset)
    quiet = _ACCEPTED.get(key) if key is not None else None
    if quiet is None:
        quiet = _check(a, b, opset)
        _ACCEPTED.remember(key, quiet)
    if quiet:
        # IEEE overflow/invalid results are the defined semantics here, not errors to warn about
        with np.errstate(all="ignore"):
            out = np.multiply(a, b)
    else:                       # integers wrap without a warning; errstate would cost ~1 us
        out = np.multiply(a, b)
    # numpy returns a scalar for rank-0 operands; the API promises an array
    return out if type(out) is np.ndarray else np.asarray(out)


OPERATOR = Operator(
    name=OP, prefix="MUL", type_sets=TYPE_SETS, inputs=("A", "B"), optional=(),
    attributes={"broadcast": None}, constraints=node_constraints, reference=mul_reference,
    kernel=mul, spec="spec/mul.md", proofs=("proofs/mul.mlw", "proofs/mul_half.mlw"))
