"""ONNX Relu under the SONNX profile: Y = X where X > 0 or X is NaN, else +0 (spec/relu.md).

A unary operator, so it does not go through the binary element-wise layer (ops/elementwise.py):
its checks are RELU-R1 dense, RELU-R2 typed (from ops/signature.py, which every operator
shares) and RELU-R4 no attribute; the refusals, the memo of accepted calls and the contract
stacks are the kernel skeleton's (ops/kernel.py).
Proofs: proofs/relu.mlw, proofs/relu_half.mlw. Tests: tests/ops/test_relu.py.
"""
from __future__ import annotations

import ctypes
import functools
import itertools
import math

from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import Violation, raise_if_any
from ..semantics import floats
from ..semantics.tensor import TensorValue, flat_index, size
from ..semantics.values import int_range
from . import elementwise, kernel
from .openvino_ir import IRLayer, as_is, unary_shape
from .registry import HALF_CONVERSIONS_CHECKED, CBinding, CEntry, CRoute, Operator, first_shape
from .signature import TensorSig, dense_and_typed, tensor_shape_violations

OP = "Relu"
PREFIX = "RELU"
LATEST = 14
SIGNED_INTS = frozenset({"int8", "int16", "int32", "int64"})
# since_version -> element types, from the onnx schemas (tests/test_dtypes.py compares them)
TYPE_SETS = {
    1: dtypes.IEEE_FLOATS,
    6: dtypes.IEEE_FLOATS,
    13: dtypes.IEEE_FLOATS | {"bfloat16"},
    14: dtypes.IEEE_FLOATS | {"bfloat16"} | SIGNED_INTS,
}


# req: RELU-R1, RELU-R2, RELU-R4
def constraints(x: TensorSig, *, opset: int, consumed_inputs: object = None) -> list[Violation]:
    """Every violation of RELU-R1, R2 and R4 of a Relu node with input ``x`` under ``opset``.

    ``consumed_inputs`` is Relu-1's legacy attribute (None when absent). Y's shape is X's by
    construction (ONNX's inference and the kernels), so R1 is checked here as X being dense.
    """
    version, refused = kernel.version_in_force(OP, opset, "RELU-R2")
    if version is None:
        return refused
    found = dense_and_typed(OP, version, [("X", x)], dense_rule="RELU-R1", type_rule="RELU-R2",
                            hint=_type_hint)
    if consumed_inputs is not None:
        found.append(kernel.legacy_attribute("RELU-R4", f"{OP}-{version}", "consumed_inputs",
                                             "an in-place hint of ONNX's first opset, removed in Relu-6",
                                             "the profile accepts no attribute on Relu: remove it, or "
                                             "convert the model to opset 6 or later "
                                             "(onnx.version_converter.convert_version)"))
    return found


def _type_hint(elem: str) -> str:
    if elem in ("uint8", "uint16", "uint32", "uint64"):
        return "; Relu of an unsigned integer is the identity: drop the node"
    if elem in SIGNED_INTS:
        return "; signed integers need Relu-14: import opset 14 or later"
    return ""


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """The registry's constraint function: (input signatures, attributes, opset)."""
    return constraints(sigs[0], opset=opset, consumed_inputs=attrs.get("consumed_inputs"))


# RELU-R3: the semantics of one element, stated independently of relu_element: by cases on
# the input (NaN, above zero, at or below zero) and the sign of a zero result.
def result_ok(dtype: str, x, r) -> bool:
    """The spec of Relu on one value x (RELU-R3), stated without the kernel's steps.

    Integers: r = x if x > 0, else r = 0 (the minimum of T gives 0; nothing wraps). Floats: a
    NaN gives a NaN; x > 0 (+inf and positive subnormals included) gives x itself; every other
    x (negative, -inf, -0, +0) gives +0, never -0.
    """
    if not dtypes.is_float(dtype):
        lo, hi = int_range(dtype)
        return 0 <= r <= hi and (r == x if x > 0 else r == 0)
    if math.isnan(x):
        return math.isnan(r)
    if math.isnan(r):
        return False
    if x > 0:
        return r == x
    return r == 0 and not floats.is_negative(r)


# RELU-R3: T in Relu-14's type set, x a value of T, the result meets result_ok (attached with
# SONNX_CONTRACTS=full)
@kernel.element_contracts(TYPE_SETS[LATEST], result_ok, 1)
def relu_element(dtype: str, x):
    """Relu of one value of T: x when x > 0 or x is NaN, else the zero of T (+0 for floats).

    Written as "x <= 0 gives zero", not as max(x, 0): a comparison with NaN is false, so a NaN
    is returned unchanged, and -0 <= 0 holds, so -0 gives +0. Nothing is rounded.
    """
    if dtypes.is_float(dtype):
        return 0.0 if x <= 0 else x
    return 0 if x <= 0 else x


# ---------------------------------------------------------------- reference kernel
def _violations(x: TensorValue) -> list[Violation]:
    sig = TensorSig(x.shape, x.dtype)
    return tensor_shape_violations(OP, [("X", sig)]) + constraints(sig, opset=LATEST)


def _every_element_ok(x: TensorValue, y: TensorValue) -> bool:
    # R1, R3 stated by multi-index: at every index of the shape, Y's element is the spec's
    for idx in itertools.product(*(range(d) for d in x.shape)):
        k = flat_index(x.shape, idx)
        if not result_ok(x.dtype, x.data[k], y.data[k]):
            return False
    return True


# req: RELU-R1, RELU-R2, RELU-R3
# the requirements (checked by the body too), a well-formed X, Y's shape and, with
# SONNX_CONTRACTS=full, the spec at every element (kernel.reference_contracts)
@kernel.reference_contracts(
    _violations, "RELU-R1, RELU-R2, PROF-R2", ("x",),
    [lambda x, result: result.shape == x.shape and result.dtype == x.dtype and len(result.data) == len(x.data)],
    [lambda x, result: _every_element_ok(x, result)])
def relu_reference(x: TensorValue) -> TensorValue:
    """The reference kernel: y[i] = relu_element(T, x[i]) over flat row-major data (the loop of
    the concrete level of proofs/relu.mlw)."""
    raise_if_any(_violations(x))
    n = size(x.shape)
    y: list = [None] * n
    for i in range(n):
        y[i] = relu_element(x.dtype, x.data[i])
    return TensorValue(x.dtype, x.shape, y)


# ---------------------------------------------------------------- numpy kernel
_accepted = kernel.AcceptedCalls()


# req: RELU-R1, RELU-R2
def check(x: object, opset: object = LATEST) -> bool:
    """Every check of ``relu``'s arguments, without computing: TypeError or ProfileViolation;
    True when the call is accepted."""
    version, sigs = kernel.arguments("relu", opset, [("X", x)])
    kernel.refuse(OP, sigs, constraints(sigs[0][1], opset=version))
    return True



# req: RELU-R1, RELU-R3
@kernel.entry
def relu(x: np.ndarray, *, opset: int = LATEST) -> np.ndarray:
    """Element-wise Relu of an array (ONNX Relu): x where x > 0 or x is NaN, else +0.

    A new array of x's shape and element type; -0 and every value at or below zero give +0, a
    NaN is returned unchanged (its bits kept), the integer minimum gives 0.

    Raises ``sonnx.ProfileViolation`` (a ValueError naming the requirement) for anything the
    SONNX profile refuses: an element type outside the type set of the Relu version of
    ``opset`` (unsigned integers, bool, ...), sparse input, empty or oversized tensors, an
    opset outside 1..28 (PROF-R3). Raises TypeError for a non-array input and a non-integer
    opset.
    """
    kernel.checked(_accepted, check, x, opset)
    return _apply(x)


# req: RELU-R3
def _apply(x: np.ndarray) -> np.ndarray:
    """The arithmetic of an accepted call: the proved C entry point when Relu's record makes
    it the default for x's element type (c_kernels.default_entry), else numpy."""
    from .. import c_kernels
    fn = c_kernels.default_entry("relu", x.dtype)
    if fn is not None:
        return c_kernels.call_unary(fn, x)
    # "x <= 0 gives zero", as relu_element: NaN <= 0 is false (the NaN is kept, bit for bit)
    # and -0 <= 0 is true (+0). np.maximum(x, 0) would leave the sign of -0 to the platform.
    known = _BY_DTYPE.get(x.dtype)
    if known is None:
        native = x.dtype.newbyteorder("=")
        known = _BY_DTYPE[x.dtype] = (native, np.zeros((), dtype=native), np.dtype(f"uint{8 * native.itemsize}"))
    native, zero, bits = known
    if x.dtype != native:
        x = x.astype(native)                # the same values, in this machine's byte order
    if native.kind == "f" or native.kind == "V":
        with np.errstate(invalid="ignore"):     # numpy warns on comparing a float16 NaN
            keep = np.logical_not(x <= zero)
    else:
        keep = np.logical_not(x <= zero)
    # Branch-free selection (np.where on a mask of random signs is ~10x slower, mispredicted
    # branches): the bits of a kept element times 1 are its bits, any other's times 0 are 0,
    # the bits of +0 (and the integer 0). Unsigned bits: the product never overflows.
    y = np.empty(x.shape, dtype=bits)
    np.multiply(x.view(bits), keep, out=y)
    return y.view(native)


_BY_DTYPE: dict = {}     # dtype -> (its native-order dtype, a zero of it, the unsigned type of its width)


# req: RELU-R1, RELU-R3
def bind(x: np.ndarray, *, opset: int = LATEST):
    """``relu`` checked once now for arrays like ``x`` (the same refusals): a function of the
    array alone, for the caller to run under fpenv.guarded (see gemm.bind)."""
    check(x, opset=opset)
    native = x.dtype.newbyteorder("=")
    if x.dtype != native or native.kind not in "fV":
        return _apply
    from .. import c_kernels
    fn = c_kernels.default_entry("relu", native)
    if fn is not None:                      # the proved C kernel, as _apply runs it
        return lambda x: c_kernels.call_unary(fn, x)
    zero, bits = np.zeros((), dtype=native), np.dtype(f"uint{8 * native.itemsize}")

    # req: RELU-R3
    def bound(x):
        # _apply's operations for a float x of this native type, its lookups done once (numpy's
        # warnings are off: the caller's np.errstate, as for every bound kernel)
        keep = np.logical_not(x <= zero)
        y = np.empty(x.shape, dtype=bits)
        np.multiply(x.view(bits), keep, out=y)
        return y.view(native)
    return bound



# req: RELU-R3
def relu_c(x: np.ndarray, *, opset: int = LATEST) -> np.ndarray:
    """ONNX Relu under the SONNX profile, computed by the C kernel extracted from
    proofs/relu_c.mlw (float16/bfloat16 through float32 and 8/16-bit integers through int32:
    both conversions are exact and Relu does not round). The same checks and refusals as
    ``sonnx.relu``; the same bits."""
    from .. import c_kernels
    check(x, opset)
    return c_kernels.unary_exact("sonnx_relu", x)


_C_PROOF = "proofs/relu_c.mlw"
_C_ARGS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)    # x, out, n
C_BINDING = CBinding(
    source="relu_c.c", proof=_C_PROOF, wrapper=relu_c, default=True, call=elementwise.same_shape_call("relu"),
    # float16/bfloat16 through the float32 entry, rounded once to T: proofs/relu_half.mlw;
    # int8/int16 widened to int32 (the same integer) and the result read back (in range):
    # module ReluRoute of proofs/int_route.mlw
    routes=(CRoute(("float16", "bfloat16"), "f32", ("proofs/relu_half.mlw",), HALF_CONVERSIONS_CHECKED),
            CRoute(("int8", "int16"), "i32", ("proofs/int_route.mlw",), theory="ReluRoute", ids=("RELU-R3",))),
    entries=tuple(CEntry(f"sonnx_relu_{t}", _C_PROOF, f"ReluC{w}", ("RELU-R3",), _C_ARGS, packed)
                  # packed: the SSE2 comparison of the vectorised loop (SSE2 has no 64-bit one)
                  for t, w, packed in (("f32", "Float32", "cmpleps"), ("f64", "Float64", "cmplepd"),
                                       ("i32", "Int32", "pcmpgtd"), ("i64", "Int64", ""))))

OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="unary", type_sets=TYPE_SETS, inputs=("X",), optional=(),
    attributes={"consumed_inputs": None}, constraints=node_constraints, reference=relu_reference,
    kernel=relu, bind=bind, spec="spec/relu.md",
    # int_route.mlw: the integer routes of Mul's, Add's, Sub's and Relu's C wrappers (it uses
    # their theories, so it is listed after them, once)
    proofs=("proofs/relu.mlw", "proofs/relu_half.mlw", "proofs/relu_c.mlw", "proofs/int_route.mlw"),
    openvino=(IRLayer("ReLU", 1, 1, unary_shape, as_is),),
    output_shape=first_shape, comparison="bits, zero sign open", c_binding=C_BINDING,
    theories=("proofs/tensor.mlw", "proofs/elementwise.mlw", "proofs/half_conversions.mlw"))
