"""The skeleton of every kernel in sonnx/ops: what each operator module would otherwise write again.

An operator module declares only what is its own: its constraint function, its element function
or reference loop with the contracts that state its semantics, and its arithmetic. Here, once:

- one helper per kind of refusal, each with its one text: a Python argument of the wrong type
  (``wrong_type``: TypeError), an opset without the operator (``version_in_force``), an attribute
  the profile refuses (``attribute_refused``, ``legacy_attribute``), and the profile's violations
  of a kernel call raised together (``refuse``: ProfileViolation);
- the arguments of a kernel call read as the constraint functions see them (``arguments``: the
  opset as an int, each array's signature);
- the memo of accepted calls (``checked``, ``AcceptedCalls``): a kernel's checks run once per
  call signature;
- the contract stacks: ``reference_contracts`` for a reference kernel over TensorValue,
  ``element_contracts`` for an element function;
- ``entry``: the guard of a public kernel (the proofs' floating-point environment).
"""
from __future__ import annotations

import functools
import inspect
import struct
from typing import Callable, Sequence

import icontract
from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes, fpenv
from ..errors import ProfileViolation, Violation, raise_if_any, wrong_type
from ..profile import kernel_opset
from ..semantics.tensor import FULL_CONTRACTS, TensorValue, size
from ..semantics.values import is_element_of
from .signature import NotConstant, TensorSig, tensor_shape_violations


# ---------------------------------------------------------------- refusals, one helper per kind
# wrong_type (errors.py, core: profile.kernel_opset writes the opset's with it too): a Python
# argument of the wrong type, as TypeError


# req: @typed
def version_in_force(op: str, opset: int, rule: str) -> tuple[int | None, list[Violation]]:
    """The version of ``op`` in force under ``opset``, or None and the refusal (under the
    operator's typed rule ``rule``) when that opset has no such operator yet."""
    from .registry import since_version, versions
    version = since_version(op, opset)
    if version is None:
        first = versions(op)[0]
        return None, [Violation(rule, f"opset {opset} has no {op}; import opset {first} or later")]
    return version, []


def attribute_refused(rule: str, node: str, name: str, value: str, why: str) -> Violation:
    """An attribute value the profile refuses: ``<node> has <name>=<value><why>``, ``why`` going
    on with "; " or ", " (``node`` names the operator as the rule reads it: "Gemm", "Mul-7",
    "Gemm with integer type int32"; ``value`` is shown as the message shows it)."""
    return Violation(rule, f"{node} has {name}={value}{why}")


def legacy_attribute(rule: str, node: str, name: str, what: str, way_out: str) -> Violation:
    """An attribute of an early version that the profile's operator does not take."""
    return Violation(rule, f"{node} has the legacy attribute {name} ({what}); {way_out}")


# req: PROF-R2
def refuse(op: str, sigs: Sequence[tuple[str, TensorSig]], found: list[Violation]) -> None:
    """ProfileViolation for a kernel call with every violation at once: PROF-R2 of each dense
    array (the kernels check it here, the validator where each tensor is defined), then the
    operator's own ``found``."""
    raise_if_any(tensor_shape_violations(op, list(sigs)) + found)


# ---------------------------------------------------------------- the arguments of a kernel call
def _is_sparse(x: object) -> bool:
    module = type(x).__module__ or ""
    return module.startswith(("scipy.sparse", "sparse.")) or type(x).__name__ == "SparseTensorProto"


# req: @dense, @typed
def sig_of_array(x: object, op: str, what: str) -> TensorSig:
    """Signature of a kernel argument; TypeError for anything that is not a dense array.

    Sparse objects are let through as sparse signatures so that the constraint function
    reports them under their requirement ID.
    """
    if _is_sparse(x):
        return TensorSig(shape=None, elem_type=None, sparse=True)
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"sonnx.{op}: {what} is a masked array; its mask would be ignored. "
                        f"Pass numpy.ma.getdata(x) or fill the masked values first")
    if not isinstance(x, np.ndarray):
        raise wrong_type(op, what, "a numpy.ndarray", x, "; wrap it with numpy.asarray(x, dtype=...) "
                                                         "choosing the element type explicitly")
    return TensorSig(shape=tuple(int(d) for d in x.shape), elem_type=dtypes.name_of(x.dtype))


def arguments(fn: str, opset: object, arrays: Sequence[tuple[str, object]]
              ) -> tuple[int, list[tuple[str, TensorSig]]]:
    """A kernel call's ``opset`` as an int (TypeError, or PROF-R3's ProfileViolation) and the
    signature of each array argument, in order (TypeError for one that is not an array)."""
    version = kernel_opset(opset, fn)
    return version, [(what, sig_of_array(x, fn, what)) for what, x in arrays]


# ---------------------------------------------------------------- memo of accepted calls
# A kernel's checks cost microseconds; a model calls a kernel with the same few signatures over
# and over. The memo remembers calls that were *accepted*, keyed by what the checks read: the
# exact type and shape/dtype of each array and the exact type and value of each other argument.
# The type is part of the key because equal values of different types get different verdicts
# (trans_a=1 is accepted, trans_a=1.0 refused, and 1 == 1.0 with one hash). Only the types
# below take part: their == is value equality, so equal keys mean the same verdict. Refusals
# are not remembered: they are recomputed (and their messages rebuilt) every time.
_MEMO_SCALARS: frozenset[type] = frozenset()


def memo_scalars() -> frozenset[type]:
    """Made on the first kernel call (the validator imports this module, not numpy), then kept."""
    global _MEMO_SCALARS
    if not _MEMO_SCALARS:
        _MEMO_SCALARS = frozenset({bool, int, float, str, type(None), np.bool_, np.float16, np.float32,
                                   np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint16, np.uint32, np.uint64})
    return _MEMO_SCALARS


MEMO_SIZE = 1024     # bounded: a long-running caller with endless new shapes starts over


class AcceptedCalls(dict):
    """key -> what the kernel derived from the accepted call (its plan), for one kernel."""

    every: list["AcceptedCalls"] = []

    def __init__(self) -> None:
        super().__init__()
        AcceptedCalls.every.append(self)

    def remember(self, key: tuple | None, plan: object) -> None:
        if key is not None:
            if len(self) >= MEMO_SIZE:
                self.clear()
            self[key] = plan


def clear_memos() -> None:
    """Forget every accepted call (tests compare verdicts with those of a fresh process)."""
    for memo in AcceptedCalls.every:
        memo.clear()


def memo_key(*args: object) -> tuple | None:
    """Key of a call in a memo of accepted calls; None (no memo) when an argument is neither an
    ndarray nor of a type in memo_scalars(). An array counts by shape and dtype, anything else by
    exact type and value."""
    key = []
    scalars = _MEMO_SCALARS or memo_scalars()
    for x in args:
        t = type(x)
        if t is np.ndarray:
            key.append((x.shape, x.dtype))
        elif t in scalars:
            key.append((t, x))
        else:
            return None
    return tuple(key)


# req: @operators
def checked(memo: AcceptedCalls, check: Callable, *args: object) -> object:
    """``check(*args)``'s plan for the call: from the memo when an equal call was accepted
    before, else computed (a refusal raises and is not remembered). A plan is never None."""
    key = memo_key(*args)
    plan = memo.get(key) if key is not None else None
    if plan is None:
        plan = check(*args)
        memo.remember(key, plan)
    return plan


# ---------------------------------------------------------------- contracts
def well_formed(t: TensorValue | None) -> bool:
    """An absent optional operand, or a tensor whose data has its shape's size, every element a
    value of its type."""
    return t is None or (len(t.data) == size(t.shape) and all(is_element_of(t.dtype, v) for v in t.data))


def _condition(body: Callable[..., object], names: Sequence[str]) -> Callable[..., object]:
    """``body`` as a contract condition of the arguments ``names`` (icontract and CrossHair pass a
    condition the arguments its signature names, by keyword)."""
    def condition(**kwargs):
        return body(**kwargs)
    condition.__signature__ = inspect.Signature(      # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in names])
    return condition


# req: @operators
def reference_contracts(refused: Callable[..., list[Violation]], ids: str, operands: Sequence[str],
                        posts: Sequence[Callable], full_posts: Sequence[Callable] = (), *,
                        always: bool = False) -> Callable[[Callable], Callable]:
    """The contract stack of a reference kernel, outermost first:

    - no violation: ``refused`` (named like the kernel's parameters) finds none, described by
      ``ids``; a refused call raises ProfileViolation. The body checks the requirements itself,
      so that they hold with contracts off; this precondition is attached with
      SONNX_CONTRACTS=full, for CrossHair, which reads it to know which inputs are admissible;
    - every operand in ``operands`` well formed (always checked when ``always``, else with
      SONNX_CONTRACTS=full);
    - the postconditions ``posts`` (always checked), then ``full_posts`` (SONNX_CONTRACTS=full),
      each in the order given.
    """
    names = list(inspect.signature(refused).parameters)
    admissible = _condition(lambda **kw: not refused(**kw), names)
    refusal = _condition(lambda **kw: ProfileViolation(refused(**kw)), names)
    operands_ok = _condition(lambda **kw: all(well_formed(kw[n]) for n in operands), operands)

    def attach(fn: Callable) -> Callable:
        for post in reversed(full_posts):
            fn = icontract.ensure(post, enabled=FULL_CONTRACTS)(fn)
        for post in reversed(posts):
            fn = icontract.ensure(post)(fn)
        # icontract checks the lower precondition first: the operands before the requirements
        fn = icontract.require(operands_ok, enabled=always or FULL_CONTRACTS)(fn)
        return icontract.require(admissible, ids, error=refusal, enabled=FULL_CONTRACTS)(fn)
    return attach


def element_contracts(type_set: frozenset[str], spec: Callable, arity: int) -> Callable[[Callable], Callable]:
    """The contracts of an element function ``f(T, x)`` or ``f(T, x, y)`` (``arity`` values),
    attached with SONNX_CONTRACTS=full: T is in ``type_set``, the values are values of T, and the
    result r meets ``spec(T, x[, y], r)``."""
    values = ("x", "y")[:arity]

    def attach(fn: Callable) -> Callable:
        if not FULL_CONTRACTS:
            return fn

        # icontract checks the lower precondition first: the type before its values
        @icontract.require(_condition(lambda dtype, **kw: all(is_element_of(dtype, kw[n]) for n in values),
                                      ("dtype", *values)))
        @icontract.require(lambda dtype: dtype in type_set)
        @icontract.ensure(_condition(lambda dtype, result, **kw: spec(dtype, *(kw[n] for n in values), result),
                                     ("dtype", *values, "result")))
        @functools.wraps(fn)
        def element(dtype: str, *xs):
            return fn(dtype, *xs)
        return element
    return attach


# ---------------------------------------------------------------- the public kernel
def entry(kernel: Callable) -> Callable:
    """A public kernel: run in the proofs' floating-point environment (round to nearest even, no
    FTZ/DAZ), the caller's restored after (sonnx.fpenv)."""
    return fpenv.guarded(kernel)


# ---------------------------------------------------------------- the structural operators' pieces
def same_bits(dtype: str, a, b) -> bool:
    """``a`` and ``b`` are the same value of ``dtype`` bit for bit (as binary64, where every
    value of the float types is exact: a zero's sign, a NaN's sign and payload compared)."""
    if dtypes.is_float(dtype):
        return struct.pack("<d", a) == struct.pack("<d", b)
    return type(a) is type(b) and a == b


def row_major_copy(data: list, n: int) -> list:
    """Y's flat data of a row-major move (Reshape, Squeeze, Unsqueeze): y[k] = x[k] for every k,
    the same objects (so the same bits). Each operator's theory proves this loop (its module
    Copy); each operator's module binds it under its own name and requirement."""
    y: list = [None] * n
    for k in range(n):
        y[k] = data[k]
    return y


def axes_form_violations(op: str, version: int, rule: str, axes: object, axes_sig, input_from: int) -> list[Violation]:
    """``rule``'s check of the form of a Squeeze/Unsqueeze node's axes in force, given (not
    None: omitted axes are each operator's own refusal, with its own reason): a constant
    (``NotConstant`` is refused), from ``input_from`` on an input that is a 1-D int64 tensor
    (``axes_sig``), and a non-empty tuple of integers. [] when the form is right."""
    if isinstance(axes, NotConstant):
        return [Violation(rule, f"{op}-{version} input axes is {axes.why}; the axes must be a "
                                "constant int64 initializer that is not a graph input, so that the "
                                "output's shape is static; a Constant node feeding it: `sonnx conform` "
                                "stores it as an initializer")]
    if version >= input_from and axes_sig is not None:
        if axes_sig.elem_type != "int64" or axes_sig.shape is None or len(axes_sig.shape) != 1:
            return [Violation(rule, f"{op}-{version} input axes has type {axes_sig.elem_type} and "
                                    f"shape {axes_sig.shape}; it must be a 1-D int64 tensor")]
    if (not isinstance(axes, tuple) or not axes
            or not all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axes)):
        return [Violation(rule, f"{op}-{version} has axes={axes!r}; the axes must be a non-empty "
                                "list of integers")]
    return []


def axes_node_constraints(op: str, rule: str, constraints, input_from: int, axes_input: str,
                          sigs, attrs, opset: int) -> list[Violation]:
    """A Squeeze/Unsqueeze registry constraint function (input signatures, attributes, opset)
    over the operator's ``constraints``: the axes are the attribute before ``input_from`` and
    the input from it on, whose constant value the validator passes under ``axes_input``."""
    version = version_in_force(op, opset, rule)[0]
    if version is not None and version >= input_from:
        return constraints(sigs[0], opset=opset, axes=attrs.get(axes_input),
                           axes_sig=sigs[1] if len(sigs) > 1 else None, axes_attribute=attrs.get("axes"))
    axes = attrs.get("axes")
    return constraints(sigs[0], opset=opset, axes=tuple(axes) if isinstance(axes, list) else axes)


def axes_argument(op: str, stem: str, rule: str, axes: object, opset: object, input_from: int) -> tuple[int, ...] | None:
    """A kernel's ``axes`` (Squeeze, Unsqueeze) as a tuple of ints. From ``input_from`` on they
    are ONNX's axes input: a 1-D int64 array (another array is ``rule``'s to refuse); before,
    ONNX's attribute: a list or tuple of integers (or such an array). None (omitted) is
    returned for the operator's own rule to judge. TypeError for anything else."""
    if axes is None:
        return None
    if isinstance(axes, np.ndarray):
        if axes.dtype != np.int64 or axes.ndim != 1:
            raise ProfileViolation([Violation(rule, f"{op} axes is an array of type {axes.dtype} and "
                                                    f"shape {axes.shape}; it must be a 1-D int64 array")])
        return tuple(int(a) for a in axes)
    before = isinstance(opset, (int, np.integer)) and not isinstance(opset, bool) and opset < input_from
    if before and isinstance(axes, (tuple, list)) and all(
            isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) for a in axes):
        return tuple(int(a) for a in axes)
    raise wrong_type(stem, "axes", f"a 1-D int64 array (the axes input; before opset {input_from} also a "
                     "list of integers: the attribute)", axes, "")

