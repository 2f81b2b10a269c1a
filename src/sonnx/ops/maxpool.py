"""ONNX MaxPool under the SONNX profile: Y[n, c, o] = the maximum of X over the window of o
(spec/maxpool.md).

A pooling operator (ops/pool.py holds the shared window geometry). Nothing is rounded: the
result is one of the window's input elements, bit for bit, so exact and fast modes are the same
bits. Checks: MAXPOOL-R1 (the window attributes: kernel_shape, strides, pads written; dilations,
ceil_mode optional; auto_pad NOTSET; every window reads an input element), MAXPOOL-R2 (dense,
one element type of the version's type set), MAXPOOL-R3 (storage_order 0; no Indices output).
The result's definition is MAXPOOL-R4. Requirements: src/sonnx/ops/maxpool.toml. Proof:
proofs/maxpool.mlw. Tests: tests/ops/test_maxpool.py, tests/crosshair/maxpool_cases.py.

Decisions (spec/maxpool.md says why):
- NaN propagates: a window holding a NaN gives the first NaN in window order, its bits kept
  (IEEE 754-2019 maximum propagates NaN; which NaN is ours to fix);
- signed zeros: -0 < +0, so a window whose maximum is zero gives +0 when it holds a +0;
- padding is never selected: a window reads only its input taps; a window of padding alone is
  refused (MAXPOOL-R1), so the numpy kernel may fill padding with -inf (or the integer type's
  minimum) and get the same bits.
"""
from __future__ import annotations

import math
import struct

import icontract
from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import ProfileViolation, Violation, raise_if_any, wrong_type
from ..semantics.tensor import FULL_CONTRACTS, TensorValue, size
from . import kernel, pool
from .registry import ConformRule, Operator
from .signature import TensorSig, dense_and_typed, tensor_shape_violations

OP = "MaxPool"
PREFIX = "MAXPOOL"
LATEST = 22
_FROM_12 = dtypes.IEEE_FLOATS | {"int8", "uint8"}
# since_version -> element types: onnx's schema of that version, restricted to the profile's
# element types; tests/ops/test_every_operator.py compares them with the schemas
TYPE_SETS = {
    1: dtypes.IEEE_FLOATS,
    8: dtypes.IEEE_FLOATS,
    10: dtypes.IEEE_FLOATS,
    11: dtypes.IEEE_FLOATS,
    12: _FROM_12,
    22: _FROM_12 | {"bfloat16"},
}
DILATIONS_FROM = 10      # MaxPool-10 adds dilations and ceil_mode
STORAGE_ORDER_FROM = 8
RULES = pool.Rules(window="MAXPOOL-R1")

# ONNX attribute -> keyword of the numpy kernel
KERNEL_ATTRIBUTES = {name: name for name in ("kernel_shape", "strides", "pads", "dilations", "ceil_mode",
                                             "storage_order", "auto_pad")}


# req: MAXPOOL-R1, MAXPOOL-R2, MAXPOOL-R3
def constraints(x: TensorSig, *, opset: int, attrs: dict) -> tuple[list[Violation], pool.Geometry | None]:
    """Every violation of MAXPOOL-R1 to R3 of a MaxPool node with input ``x`` and attributes
    ``attrs`` (ONNX names; an omitted one absent) under ``opset``, and the window geometry when
    the call is accepted and the shape static."""
    version, refused = kernel.version_in_force(OP, opset, "MAXPOOL-R2")
    if version is None:
        return refused, None
    node = f"{OP}-{version}"
    found = dense_and_typed(OP, version, [("'X'", x)], dense_rule="MAXPOOL-R2", type_rule="MAXPOOL-R2",
                            hint=_type_hint)
    shape = None if x.sparse else x.shape
    window, geometry = pool.window_violations(node, shape, attrs, RULES, dilations=version >= DILATIONS_FROM,
                                              ceil=version >= DILATIONS_FROM)
    found.extend(window)
    found.extend(_option_violations(node, version, attrs))
    return found, (geometry if not found else None)


def _option_violations(node: str, version: int, attrs: dict) -> list[Violation]:
    order = attrs.get("storage_order")
    if order is None:
        return []
    if version < STORAGE_ORDER_FROM:
        return [Violation("MAXPOOL-R3", f"{node} has no storage_order attribute; remove it")]
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or int(order) != 0:
        return [Violation("MAXPOOL-R3", f"{node} has storage_order={order!r}; the profile takes 0 (row major) "
                                        "only: it orders the Indices output, which the profile does not define")]
    return []


# req: MAXPOOL-R3
def output_violations(named: int, opset: int) -> list[Violation]:
    """The registry's output check: a MaxPool node names its output Y only (no Indices)."""
    if named <= 1:
        return []
    return [Violation("MAXPOOL-R3", f"{OP} node names {named} outputs; the profile defines Y only, not the "
                                    "Indices output (its tie-break and NaN rule are unspecified): remove the "
                                    "second output, or compute the indices outside the certified model")]


def _type_hint(elem: str) -> str:
    if elem == "bfloat16":
        return "; bfloat16 needs MaxPool-22: import opset 22 or later"
    if elem in ("int8", "uint8"):
        return "; int8 and uint8 need MaxPool-12: import opset 12 or later"
    return "; the profile defines no other element type"


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """The registry's constraint function: (input signatures, attributes, opset)."""
    return constraints(sigs[0], opset=opset, attrs=dict(attrs))[0]


# ---------------------------------------------------------------- the rule, element level
def _negative(v: float) -> bool:
    return math.copysign(1.0, v) < 0


# req: MAXPOOL-R4
def window_max(values: list):
    """The result of one window (its input values in window order): the first NaN if any
    (its bits kept); else the greatest value, with -0 < +0."""
    for v in values:
        if isinstance(v, float) and math.isnan(v):
            return v
    m = values[0]
    for v in values[1:]:
        if v > m or (v == 0 and m == 0 and isinstance(v, float) and _negative(m) and not _negative(v)):
            m = v
    return m


def _bits(v) -> bytes | int:
    return struct.pack("<d", v) if isinstance(v, float) else v


def is_window_max(values: list, r) -> bool:
    """MAXPOOL-R4 stated without computing it (the contract): r is one of the values, bit for
    bit; with a NaN among them, r is the first NaN; else no value exceeds r, and a zero r is +0
    exactly when some value is +0."""
    nans = [v for v in values if isinstance(v, float) and math.isnan(v)]
    if nans:
        return _bits(r) == _bits(nans[0])
    if not any(_bits(r) == _bits(v) for v in values) or any(v > r for v in values):
        return False
    if r == 0 and isinstance(r, float):
        plus = any(v == 0 and not _negative(v) for v in values)
        return _negative(r) != plus
    return True


# ---------------------------------------------------------------- reference kernel
def _attrs(kernel_shape, strides, pads, dilations, ceil_mode) -> dict:
    out = {"kernel_shape": kernel_shape, "strides": strides, "pads": pads}
    if dilations is not None:
        out["dilations"] = dilations
    if ceil_mode is not None:
        out["ceil_mode"] = ceil_mode
    return out


def _violations(x: TensorValue, kernel_shape, strides, pads, dilations=None, ceil_mode=None) -> list[Violation]:
    sig = TensorSig(x.shape, x.dtype)
    return tensor_shape_violations(OP, [("'X'", sig)]) + constraints(
        sig, opset=LATEST, attrs=_attrs(kernel_shape, strides, pads, dilations, ceil_mode))[0]


def _refusal(x, kernel_shape, strides, pads, dilations=None, ceil_mode=None) -> ProfileViolation:
    return ProfileViolation(_violations(x, kernel_shape, strides, pads, dilations, ceil_mode))


def _geometry(x: TensorValue, kernel_shape, strides, pads, dilations, ceil_mode) -> pool.Geometry:
    return constraints(TensorSig(x.shape, x.dtype), opset=LATEST,
                       attrs=_attrs(kernel_shape, strides, pads, dilations, ceil_mode))[1]


def _every_window(x, kernel_shape, strides, pads, dilations, ceil_mode, result) -> bool:
    """MAXPOOL-R4 for every output element, stated by is_window_max over pool.window_values."""
    g = _geometry(x, kernel_shape, strides, pads, dilations, ceil_mode)
    return all(is_window_max(pool.window_values(x.data, g, k // size(g.out), _unravel(g.out, k % size(g.out))),
                             result.data[k]) for k in range(len(result.data)))


def _unravel(shape: tuple[int, ...], flat: int) -> tuple[int, ...]:
    out = []
    for d in reversed(shape):
        out.append(flat % d)
        flat //= d
    return tuple(reversed(out))


# req: MAXPOOL-R1, MAXPOOL-R2, MAXPOOL-R4
# The body checks the requirements itself, so that they hold with contracts off; the same
# precondition is attached for CrossHair (SONNX_CONTRACTS=full).
@icontract.require(lambda x, kernel_shape, strides, pads, dilations, ceil_mode:
                   not _violations(x, kernel_shape, strides, pads, dilations, ceil_mode),
                   "MAXPOOL-R1, MAXPOOL-R2, PROF-R2", error=_refusal, enabled=FULL_CONTRACTS)
@icontract.require(lambda x: kernel.well_formed(x), enabled=FULL_CONTRACTS)
@icontract.ensure(lambda x, result: result.dtype == x.dtype and result.shape[:2] == x.shape[:2]
                  and len(result.data) == size(result.shape))
@icontract.ensure(lambda x, kernel_shape, strides, pads, dilations, ceil_mode, result:
                  _every_window(x, kernel_shape, strides, pads, dilations, ceil_mode, result), enabled=FULL_CONTRACTS)
def maxpool_reference(x: TensorValue, kernel_shape, strides, pads, dilations=None, ceil_mode=None) -> TensorValue:
    """The reference kernel: for every (n, c) plane and output position, window_max of the
    window's input values in window order (module Window of proofs/maxpool.mlw)."""
    raise_if_any(_violations(x, kernel_shape, strides, pads, dilations, ceil_mode))
    g = _geometry(x, kernel_shape, strides, pads, dilations, ceil_mode)
    planes, per = x.shape[0] * x.shape[1], size(g.out)
    data = [window_max(pool.window_values(x.data, g, nc, _unravel(g.out, k)))
            for nc in range(planes) for k in range(per)]
    return TensorValue(x.dtype, g.out_shape, data)


# ---------------------------------------------------------------- numpy kernel
_accepted = kernel.AcceptedCalls()


def _typed_ints(value: object, what: str, optional: bool = False) -> tuple[int, ...] | None:
    if value is None and optional:
        return None
    if isinstance(value, (list, tuple, np.ndarray)) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in value):
        return tuple(int(v) for v in value)
    raise wrong_type("maxpool", what, "a list of integers", value, "")


def _typed_int(value: object, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise wrong_type("maxpool", what, "an integer", value, "")
    return int(value)


# req: MAXPOOL-R1, MAXPOOL-R2, MAXPOOL-R3
def check(x: object, kernel_shape, strides, pads, dilations, ceil_mode, storage_order, auto_pad,
          opset: object = LATEST) -> pool.Geometry:
    """Every check of the kernel's arguments (TypeError or ProfileViolation); the geometry."""
    attrs = {"kernel_shape": _typed_ints(kernel_shape, "kernel_shape"), "strides": _typed_ints(strides, "strides"),
             "pads": _typed_ints(pads, "pads")}
    for name, value in (("dilations", _typed_ints(dilations, "dilations", optional=True)),
                        ("ceil_mode", _typed_int(ceil_mode, "ceil_mode")),
                        ("storage_order", _typed_int(storage_order, "storage_order"))):
        if value is not None:
            attrs[name] = value
    if auto_pad is not None:
        if not isinstance(auto_pad, (str, bytes)):
            raise wrong_type("maxpool", "auto_pad", "a string", auto_pad, "")
        attrs["auto_pad"] = auto_pad
    version, sigs = kernel.arguments("maxpool", opset, [("X", x)])
    found, geometry = constraints(sigs[0][1], opset=version, attrs=attrs)
    kernel.refuse(OP, sigs, found)
    return geometry


_SIGNED = {2: "int16", 4: "int32", 8: "int64"}     # numpy dtype names: numpy loads on first use


def _ordered(bits: np.ndarray) -> np.ndarray:
    """A float's bits (as a signed integer) mapped onto an integer whose order is the float
    order with -0 < +0 (a negative value's magnitude bits flipped); the map is its own inverse."""
    shift = 8 * bits.dtype.itemsize - 1
    return bits ^ ((bits >> shift) & np.array(np.iinfo(bits.dtype).max, dtype=bits.dtype))


# req: MAXPOOL-R4
def _apply(x: np.ndarray, g: pool.Geometry) -> np.ndarray:
    """window_max over every window at once, over strided views of the input padded with -inf
    (the integer minimum), which is never selected over an input element and never the result
    of a window (each holds an input tap: MAXPOOL-R1). Integers: numpy's maximum. Floats
    without a NaN: the maximum of the order-preserving integer keys of the bits (-inf's key is
    the least; -0's is below +0's), mapped back: the same element, bit for bit, that the tap
    fold below selects. Floats with a NaN: the tap fold in window order (_fold)."""
    x = x.astype(x.dtype.newbyteorder("="), copy=False)
    floating = dtypes.is_float(dtypes.name_of(x.dtype))
    if floating and np.isnan(x).any():
        return _fold(x, g)
    if floating:
        p = pool.padded(x, g, -np.inf).view(_SIGNED[x.dtype.itemsize])
        keys = _ordered(p)
    else:
        keys = pool.padded(x, g, np.iinfo(x.dtype).min)
    taps = g.taps()
    acc = np.array(pool.tap_view(keys, g, taps[0]))
    for tap in taps[1:]:
        np.maximum(acc, pool.tap_view(keys, g, tap), out=acc)
    return _ordered(acc).view(x.dtype) if floating else acc


# req: MAXPOOL-R4
def _fold(x: np.ndarray, g: pool.Geometry) -> np.ndarray:
    """The taps folded in window order: the running maximum (a +0 replacing a -0) and the first
    NaN of each window, which wins when there is one."""
    floating = dtypes.is_float(dtypes.name_of(x.dtype))
    fill = -np.inf if floating else np.iinfo(x.dtype).min
    p = pool.padded(x, g, fill)
    taps = g.taps()
    acc = np.array(pool.tap_view(p, g, taps[0]))
    if floating:
        seen = np.isnan(acc)
        first_nan = acc.copy()
    for tap in taps[1:]:
        t = pool.tap_view(p, g, tap)
        if floating:
            is_nan = np.isnan(t)
            new = is_nan & ~seen
            first_nan[new] = t[new]
            seen |= is_nan
            with np.errstate(invalid="ignore"):
                # -0 < +0: a +0 tap replaces a -0 maximum
                take = (t > acc) | ((t == 0) & (acc == 0) & np.signbit(acc) & ~np.signbit(t))
        else:
            take = t > acc
        np.copyto(acc, t, where=take)
    if floating:
        np.copyto(acc, first_nan, where=seen)
    return acc


# req: MAXPOOL-R4
@kernel.entry      # nothing is rounded; guarded as every kernel, for one calling convention
def maxpool(x: np.ndarray, *, kernel_shape, strides, pads, dilations=None, ceil_mode=None, storage_order=None,
            auto_pad=None, opset: int = LATEST) -> np.ndarray:
    """ONNX MaxPool of an (N, C, d1, ..., dn) array: Y of shape (N, C, o1, ..., on), each
    element the maximum of its window (MAXPOOL-R4: the first NaN of the window if any; -0 < +0).

    kernel_shape, strides and pads have no default (MAXPOOL-R1); dilations (all 1) and
    ceil_mode (0) may be omitted; auto_pad must be NOTSET and storage_order 0 when given.
    Raises ``sonnx.ProfileViolation`` for what the profile refuses (a window of padding only,
    a type outside the version's set, ...) and TypeError for arguments of the wrong Python type.
    """
    g = kernel.checked(_accepted, check, x, _key(kernel_shape), _key(strides), _key(pads), _key(dilations),
                       ceil_mode, storage_order, auto_pad, opset)
    return _apply(x, g)


def _key(value):
    """A list attribute as a tuple (the memo keys tuples of ints by value; anything else is
    passed on for check to judge)."""
    return tuple(value) if isinstance(value, list) else value


# req: MAXPOOL-R1, MAXPOOL-R4
def bind(x: np.ndarray, *, kernel_shape, strides, pads, dilations=None, ceil_mode=None, storage_order=None,
         auto_pad=None, opset: int = LATEST):
    """``maxpool`` checked once now for arrays like ``x``: a function of the array alone."""
    g = check(x, kernel_shape, strides, pads, dilations, ceil_mode, storage_order, auto_pad, opset)
    return lambda a: _apply(a, g)


def result_shape(shapes, keywords) -> tuple[int, ...]:
    """Y's shape from X's and the kernel keywords (the executor plans with it)."""
    kw = dict(keywords)
    kw.pop("opset", None)
    return check(np.broadcast_to(np.float32(0), tuple(shapes[0])), kw["kernel_shape"], kw["strides"], kw["pads"],
                 kw.get("dilations"), kw.get("ceil_mode"), None, None).out_shape


OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="pool", type_sets=TYPE_SETS, inputs=("X",), optional=(),
    attributes={"kernel_shape": None, "strides": None, "pads": None, "dilations": None, "ceil_mode": None,
                "storage_order": None, "auto_pad": None},
    constraints=node_constraints, reference=maxpool_reference, kernel=maxpool, bind=bind,
    spec="spec/maxpool.md", proofs=("proofs/maxpool.mlw",), kernel_attributes=KERNEL_ATTRIBUTES,
    output_shape=result_shape, comparison="bits", theories=(), outputs=output_violations,
    # conform writes omitted strides/pads with ONNX's default and auto_pad as explicit pads
    conform=ConformRule(rule="MAXPOOL-R1", defaults=pool.DEFAULTS, auto_pad=True))
