"""Same-shape element-wise binary operators (kind "elementwise"): what they share, written once.

An operator module supplies its name, its requirement prefix, its element function (one value
of T from two) and that element's specification; the three functions below turn them into
- ``constraints``: R1 same shape, R2 dense inputs, R3 one element type of the version's type
  set, R4 no broadcasting (by shape, or by the legacy ``broadcast`` attribute of versions 1
  and 6), under the operator's own IDs;
- ``reference_kernel``: the plain-Python loop over TensorValue (the concrete level of the
  operator's Why3 clone of proofs/elementwise.mlw) with its contracts;
- ``numpy_kernel``: the function exported as ``sonnx.<op>``.
PROF-R2 (static, positive, bounded shapes) is the profile's rule, not the operator's: the
kernels check it here with profile.shape_violations, the validator where each tensor is defined.

The IDs are built from the prefix; the ``# req:`` lines below name the family
``@kind:elementwise`` (every requirement of every element-wise operator), so the trace
fingerprints this shared code for each of them and a new operator of the kind joins by its
record alone.
"""
from __future__ import annotations

import itertools
from typing import Callable

from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import Violation, raise_if_any
from ..semantics.tensor import TensorValue, flat_index, size
from . import kernel, symdims
from .registry import CCall, CRoute
from .signature import TensorSig, dense_and_typed, static_shape, tensor_shape_violations


def rule_ids(prefix: str) -> tuple[str, str, str, str]:
    """The IDs of R1..R4 of an element-wise operator: same shape, dense, typed, no broadcast."""
    return f"{prefix}-R1", f"{prefix}-R2", f"{prefix}-R3", f"{prefix}-R4"


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape numpy/ONNX broadcasting would give ``a`` and ``b``; None when they do not
    broadcast (a pair of dimensions that differ with neither being 1)."""
    out = []
    for x, y in itertools.zip_longest(reversed(a), reversed(b), fillvalue=1):
        if x != y and x != 1 and y != 1:
            return None
        out.append(x if y == 1 else y)
    return tuple(reversed(out))


# req: @kind:elementwise
def constraints(op: str, prefix: str, a: TensorSig, b: TensorSig, *, opset: int,
                broadcast: int | None = None, consumed_inputs: object = None) -> list[Violation]:
    """Every violation of R1..R4 of a node of ``op`` with inputs ``a`` and ``b`` under ``opset``.

    ``broadcast`` is the legacy attribute of versions 1 and 6, ``consumed_inputs`` the in-place
    hint of version 1 (each None when absent). Shapes are
    compared only when both are static: an unknown or symbolic one is PROF-R2's to report.
    """
    r1, r2, r3, r4 = rule_ids(prefix)
    version, refused = kernel.version_in_force(op, opset, r3)
    if version is None:
        return refused
    found = dense_and_typed(op, version, [("A", a), ("B", b)], dense_rule=r2, type_rule=r3)
    if broadcast not in (None, 0):
        found.append(kernel.attribute_refused(r4, f"{op}-{version}", "broadcast", broadcast,
                                              "; the profile forbids broadcasting: remove the "
                                              "attribute and give B the shape of A"))
    if consumed_inputs is not None:
        # R4 carries every legacy attribute, so a version-1 node is judged by the same
        # attribute-free signature as later versions (the spec page's "no attributes")
        found.append(kernel.legacy_attribute(r4, f"{op}-{version}", "consumed_inputs",
                                             "an in-place hint of version 1",
                                             "the profile's operator takes no attribute but "
                                             "broadcast=0: remove it, or import opset 6 or later"))
    if static_shape(a) and static_shape(b) and a.shape != b.shape:
        common = broadcast_shape(a.shape, b.shape)
        if common is not None:
            found.append(Violation(r4, f"{op} inputs have shapes {a.shape} and {b.shape}, which "
                                       "would need broadcasting; the profile forbids it: give both "
                                       f"inputs the shape {common} ({_R4_FIX.format(shape=common)})"))
        else:
            found.append(Violation(r1, f"{op} inputs have shapes {a.shape} and {b.shape}; they must "
                                       "have the same shape"))
    elif not (a.sparse or b.sparse or a.shape is None or b.shape is None):
        found.extend(_partial_shape_violations(op, r1, r4, tuple(a.shape), tuple(b.shape)))
    return found


# The ways out of R4 that work (tests/conform checks them): sonnx conform stores a constant
# operand expanded; an Expand node would be PROF-R1.
_R4_FIX = ("`sonnx conform MODEL -o OUT` stores a constant operand (initializer or Constant node) "
           "expanded to {shape} without changing any output bit, or store "
           "numpy.broadcast_to(x, {shape}).copy() as its initializer yourself; from PyTorch, "
           "export with a static batch and make the operand a registered buffer already of that shape; "
           "an Expand node is not in the profile")


def _dim_text(d: object) -> str:
    return str(d) if isinstance(d, (int, str)) and d != "" else "?"


def _shape_text(shape: tuple) -> str:
    """A shape with symbols unquoted and unknown dimensions as ?: (batch, 3), (3,)."""
    inner = ", ".join(map(_dim_text, shape))
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def _partial_shape_violations(op: str, r1: str, r4: str, sa: tuple, sb: tuple) -> list[Violation]:
    """R1/R4 for shapes with symbolic or unknown dimensions (PROF-R2 reports those): a rule is
    reported only when every pinning of the dimensions that ONNX would run (symdims) gives it,
    so that findings come in one pass and none is guessed. Equal symbols are equal dimensions
    (ONNX's dim_param); any other unknown dimension is a value of its own."""
    terms = symdims.Dims()
    ta, tb = terms.shape(sa), terms.shape(sb)
    # pairs from the last dimension; a missing dimension is 1, as ONNX's broadcasting reads it
    pairs = list(itertools.zip_longest(reversed(ta), reversed(tb), fillvalue=symdims.ONE))
    shown = f"{_shape_text(sa)} and {_shape_text(sb)}"
    # two static sizes that differ, neither 1: ONNX runs no pinning, every pinning is R1's
    if any(x[0] == y[0] == "c" and x != y and symdims.ONE not in (x, y) for x, y in pairs):
        return [Violation(r1, f"{op} inputs have shapes {shown}; they must have the same shape "
                              "(the static dimensions already differ)")]
    # otherwise the pinning with every free dimension 1 is one ONNX runs, as a broadcast or not:
    # R4 holds for all of them exactly when no pinning makes the shapes equal
    if len(sa) == len(sb) and symdims.solvable(pairs):
        return []
    dims = list(itertools.zip_longest(reversed(sa), reversed(sb), fillvalue=1))
    tail = [_common_dim(x, y, dx, dy) for (x, y), (dx, dy) in zip(pairs, dims)]
    text = _shape_text(tuple(reversed(tail)))
    why = "the ranks differ" if len(sa) != len(sb) else "no value of the dimensions makes them equal"
    return [Violation(r4, f"{op} inputs have shapes {shown}, which would need broadcasting "
                          f"whatever the symbolic dimensions are ({why}); the profile forbids it: "
                          f"give both inputs the shape {text} (pin the symbolic dimensions first: "
                          f"--dim NAME=SIZE; then {_R4_FIX.format(shape=text)})")]


def _common_dim(x: tuple, y: tuple, dx: object, dy: object) -> object:
    """The broadcast result's dimension for terms x, y (shown as dx, dy), where it is known."""
    if y == symdims.ONE or x == y:
        return dx
    if x == symdims.ONE:
        return dy
    if x[0] == "c":             # the other one is 1 or x itself in any pinning ONNX runs
        return dx
    if y[0] == "c":
        return dy
    return None                 # either one: shown as ?


def element_contracts(type_set: frozenset[str], spec: Callable) -> Callable[[Callable], Callable]:
    """The contracts of an element function ``f(T, x, y)`` (kernel.element_contracts), attached
    with SONNX_CONTRACTS=full: T is in ``type_set``, x and y are values of T, and the result r
    meets ``spec(T, x, y, r)``."""
    return kernel.element_contracts(type_set, spec, 2)


def node_constraints(op: str, prefix: str) -> Callable[..., list[Violation]]:
    """The registry's constraint function of ``op``: (input signatures, attributes, opset)."""
    def check(sigs, attrs, opset: int) -> list[Violation]:
        a, b = sigs
        return constraints(op, prefix, a, b, opset=opset, broadcast=attrs.get("broadcast"),
                           consumed_inputs=attrs.get("consumed_inputs"))
    return check


def _every_element_ok(element_ok: Callable, a: TensorValue, b: TensorValue, c: TensorValue) -> bool:
    # R1, R3 stated by multi-index: at every index of the shape, C's element is the spec's
    for idx in itertools.product(*(range(d) for d in a.shape)):
        k = flat_index(a.shape, idx)
        if not element_ok(a.dtype, a.data[k], b.data[k], c.data[k]):
            return False
    return True


# req: @kind:elementwise
def reference_kernel(op: str, prefix: str, latest: int, element: Callable, element_ok: Callable,
                     int_loop: Callable | None = None) -> Callable[[TensorValue, TensorValue], TensorValue]:
    """The reference kernel of ``op``: c[i] = element(T, a[i], b[i]) over flat row-major data.

    ``element_ok(T, x, y, r)`` is the element's specification, stated without the element
    function's steps; ``int_loop(a, b, bits, signed)`` replaces the loop for integer T when the
    operator has a proved one (intloops.mul_wrap). The type set is that of version ``latest``.
    Contracts: the preconditions are the requirements (a refused call raises ProfileViolation),
    the postconditions the shape and, with SONNX_CONTRACTS=full, the spec at every element.
    """
    def violations(a: TensorValue, b: TensorValue) -> list[Violation]:
        sa, sb = TensorSig(a.shape, a.dtype), TensorSig(b.shape, b.dtype)
        return (tensor_shape_violations(op, [("A", sa), ("B", sb)])
                + constraints(op, prefix, sa, sb, opset=latest))

    r1, _, r3, r4 = rule_ids(prefix)

    # the requirements (checked by the body too), well-formed operands, the result's shape
    # and, with SONNX_CONTRACTS=full, the spec at every element (kernel.reference_contracts)
    @kernel.reference_contracts(
        violations, f"{r1}, {r3}, {r4}, PROF-R2", ("a", "b"),
        [lambda a, result: result.shape == a.shape and result.dtype == a.dtype
         and len(result.data) == len(a.data)],
        [lambda a, b, result: _every_element_ok(element_ok, a, b, result)])
    def reference(a: TensorValue, b: TensorValue) -> TensorValue:
        raise_if_any(violations(a, b))
        if int_loop is not None and not dtypes.is_float(a.dtype):
            return TensorValue(a.dtype, a.shape, int_loop(a.data, b.data, dtypes.bits(a.dtype),
                                                          dtypes.is_signed(a.dtype)))
        n = size(a.shape)
        c: list = [None] * n
        for i in range(n):
            c[i] = element(a.dtype, a.data[i], b.data[i])
        return TensorValue(a.dtype, a.shape, c)

    reference.__name__ = reference.__qualname__ = f"{op.lower()}_reference"
    return reference


# req: @kind:elementwise
def check(op: str, prefix: str, a: object, b: object, opset: object) -> bool:
    """Every check of a kernel's arguments: TypeError or ProfileViolation; else whether the
    result may raise floating-point warnings (a float type)."""
    version, sigs = kernel.arguments(op.lower(), opset, [("A", a), ("B", b)])
    kernel.refuse(op, sigs, constraints(op, prefix, sigs[0][1], sigs[1][1], opset=version))
    return dtypes.is_float(dtypes.name_of(a.dtype))



def checker(op: str, prefix: str, latest: int) -> Callable[..., bool]:
    """The public check of ``op``'s kernel: ``check(a, b, *, opset=latest)``, every refusal of the
    kernel (TypeError or ProfileViolation) without computing; whether the result may raise
    floating-point warnings (a float type)."""
    def check_op(a: object, b: object, opset: object = latest) -> bool:
        return check(op, prefix, a, b, opset)
    check_op.__name__ = check_op.__qualname__ = "check"
    return check_op


_REFUSALS = """

Raises ``sonnx.ProfileViolation`` (a ValueError naming the requirement) for anything the
SONNX profile refuses: different shapes, broadcasting, mixed or non-numeric element types,
sparse inputs, empty or oversized tensors, an opset outside 1..28 (PROF-R3). Raises
TypeError for non-array inputs and a non-integer opset.
"""


# req: @kind:elementwise
def numpy_kernel(op: str, prefix: str, latest: int, ufunc: Callable | str, doc: str) -> Callable[..., np.ndarray]:
    """The numpy kernel of ``op``: every check, then ``ufunc`` on the arrays as they are (a
    function, or a numpy ufunc's name, looked up at the call: numpy is imported on first use).

    The checks run once per distinct call signature (the memo keeps accepted ones); IEEE
    overflow and invalid results are the operator's defined semantics, so their warnings are
    silenced; numpy's scalar result for rank-0 operands is returned as the array the API promises.
    """
    accepted = kernel.AcceptedCalls()

    def check_call(a: object, b: object, opset: object) -> bool:
        return check(op, prefix, a, b, opset)

    stem = op.lower()

    resolved = None         # the function, looked up on the first call (not on each)

    def public(a: np.ndarray, b: np.ndarray, *, opset: int = latest) -> np.ndarray:
        nonlocal resolved
        if resolved is None:
            resolved = _function(ufunc)
        return _apply(stem, resolved, kernel.checked(accepted, check_call, a, b, opset), a, b)

    public.__name__ = public.__qualname__ = op.lower()
    public.__doc__ = doc + _REFUSALS
    return kernel.entry(public)


def _function(ufunc: Callable | str) -> Callable:
    return ufunc if not isinstance(ufunc, str) else getattr(np, ufunc)


# req: @kind:elementwise
def _apply(stem: str, ufunc: np.ufunc, quiet: bool, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The arithmetic of an accepted call (``quiet``: silence IEEE warnings, a float type): the
    proved C entry point when the operator's record makes it the default for this element type
    (c_kernels.default_entry), else ``ufunc``."""
    from .. import c_kernels
    fn = c_kernels.default_entry(stem, a.dtype)
    if fn is not None and b.dtype == a.dtype:      # b in another byte order: numpy's ufunc
        return c_kernels.call_binary(fn, a, b)
    if quiet:
        with np.errstate(all="ignore"):
            out = ufunc(a, b)
    else:                   # integers wrap without a warning; errstate would cost ~1 us
        out = ufunc(a, b)
    return out if type(out) is np.ndarray else np.asarray(out)


# req: @kind:elementwise
def binder(op: str, prefix: str, latest: int, ufunc: Callable | str) -> Callable:
    """The ``bind`` of ``op``'s kernel: the kernel's checks once now for arrays like ``a`` and
    ``b`` (the same refusals), then a function of the arrays alone (see gemm.bind). ``ufunc``
    as numpy_kernel's."""
    def bind(a: np.ndarray, b: np.ndarray, *, opset: int = latest) -> Callable:
        quiet = check(op, prefix, a, b, opset)
        fn_numpy = _function(ufunc)
        stem = op.lower()
        from .. import c_kernels
        fn = c_kernels.default_entry(stem, a.dtype)
        if fn is None:
            return lambda a, b: _apply(stem, fn_numpy, quiet, a, b)
        dtype, call = a.dtype, c_kernels.call_binary

        def bound(a, b):
            # _apply's choice made once for this element type (its import and record lookup
            # cost more than a small Add); an operand of another dtype (byte order) still
            # goes through _apply, as unbound
            if a.dtype == dtype and b.dtype == dtype:
                return call(fn, a, b)
            return _apply(stem, fn_numpy, quiet, a, b)
        return bound
    return bind


def same_shape_call(stem: str) -> Callable:
    """``CBinding.call`` of a same-shape element-wise operator (binary, or unary as Relu): the
    node as one call of the record's entry point that takes its element type as it is (the one
    the default kernel runs, c_kernels.default_entry), on its operands in order; None for
    another type (a route or numpy)."""
    def call(shapes, dtype, keywords) -> CCall | None:
        from .. import c_kernels
        from .registry import by_stem
        binding = by_stem(stem).c_binding
        entry = next((e for e in binding.entries if c_kernels.SUFFIX_TYPES.get(e.suffix) == dtype), None)
        if entry is None or not binding.runs_by_default(entry.suffix):
            return None
        return CCall(entry.name, tuple(range(len(shapes))), n=size(shapes[0]))
    return call


INT_ROUTE_PROOF = "proofs/int_route.mlw"


def int_routes(op: str, rule: str) -> tuple[CRoute, ...]:
    """The integer types the same-shape binary C wrapper (c_kernels.binary_same_shape) runs on
    the unsigned kernels, each proved to give the type's own wrapped result by module
    ``<op>Route`` of proofs/int_route.mlw: int32 and int64 on their bits as they are (uint32,
    uint64), int8/int16/uint8/uint16 sign- or zero-extended to 32 bits and reduced to their low
    bits after."""
    how = {"proofs": (INT_ROUTE_PROOF,), "theory": f"{op}Route", "ids": (rule,)}
    return (CRoute(("int32",), "u32", view=True, **how), CRoute(("int64",), "u64", view=True, **how),
            CRoute(("int8", "int16", "uint8", "uint16"), "u32", **how))
