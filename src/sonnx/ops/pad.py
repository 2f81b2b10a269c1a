"""ONNX Pad (constant mode) under the SONNX profile: Y = X surrounded by a constant (spec/pad.md).

A structural operator: it moves elements and computes none. For pads (b_a, e_a) on each padded
axis a, Y has the shape d_a + b_a + e_a, and Y[o] = X[o - b] when 0 <= o_a - b_a < d_a on every
axis, else the constant c; every bit of X and of c is kept (NaN payloads, -0), so exact and fast
modes give the same bits. Checks: PAD-R1 (pads written, constant, of length 2n, each >= 0),
PAD-R2 (mode constant), PAD-R3 (the constant written, constant, exactly one value of T), PAD-R4
(the axes of Pad-18 on: constant, in range, each once), PAD-R5 (dense, one element type of the
version's type set, no cast). Requirements: src/sonnx/ops/pad.toml. Proof: proofs/pad.mlw.
Tests: tests/ops/test_pad.py, tests/crosshair/pad_cases.py.

Decisions (spec/pad.md says why):
- mode "constant" only, written or omitted (the only mode the profile defines, so the default
  decides nothing a profile reader does not know); edge, reflect and wrap are refused;
- an omitted constant (Pad-1/-2's value attribute, the constant_value input from Pad-11) is
  ONNX's default, read as +0 of T: the plain zero padding, which both PyTorch exporters write
  that way (a given constant must be a constant initializer);
- Pad-1/-2's value is a FLOAT attribute: it must be a number T holds exactly (no rounding into
  float16); a NaN value attribute is refused (its bits do not survive the attribute's reading);
- negative pads (cropping) are refused: the profile's Pad only adds elements;
- omitted axes (Pad-18 on) are every axis in order, the plain reading the pads' length states;
- bool and strings are refused with every other type the profile does not define;
- the numpy kernel returns a new C-contiguous array, never a view of its argument.
"""
from __future__ import annotations

import itertools
import math

import icontract
from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import ProfileViolation, Violation, raise_if_any, wrong_type
from ..semantics.tensor import FULL_CONTRACTS, TensorValue, flat_index, size
from . import kernel
from .registry import Operator
from .signature import NotConstant, TensorSig, dense_and_typed, tensor_shape_violations

OP = "Pad"
PREFIX = "PAD"
LATEST = 25
_INTS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
_FROM_11 = dtypes.IEEE_FLOATS | _INTS
_FROM_13 = _FROM_11 | {"bfloat16"}
# since_version -> element types: onnx's schema of that version restricted to the profile's
# element types (dtypes.NUMERIC_TYPES); tests/ops/test_every_operator.py compares them with the schemas
TYPE_SETS = {1: dtypes.IEEE_FLOATS, 2: dtypes.IEEE_FLOATS, 11: _FROM_11, 13: _FROM_13, 18: _FROM_13,
             19: _FROM_13, 21: _FROM_13, 23: _FROM_13, 24: _FROM_13, 25: _FROM_13}
INPUTS_FROM = 11             # before: attributes pads (Pad-1: paddings) and value; from 11: inputs
AXES_FROM = 18               # the optional input axes
PADS_ATTRIBUTE = {1: "paddings", 2: "pads"}    # the attribute that holds the pads before Pad-11
CONSTANT_MODE = "constant"

# ONNX attribute -> the kernel's keyword (``pad_mode``: sonnx.run passes ``mode`` for exact/fast)
KERNEL_ATTRIBUTES = {"paddings": "pads", "pads": "pads", "value": "value", "mode": "pad_mode"}
CONSTANT_INPUTS = {"pads": "pads", "constant_value": "constant_value", "axes": "axes"}   # from 11 / 18


def _is_int(v: object) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


# req: PAD-R4
def normalise(axes, rank: int) -> tuple[int, ...]:
    """A negative axis counts from the end: a + r (proofs/pad.mlw)."""
    return tuple(a + rank if a < 0 else a for a in axes)


# req: PAD-R1, PAD-R4
def begins_ends(rank: int, pads, axes=None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The pads of every axis of a rank-``rank`` input: (b_0..b_(r-1), e_0..e_(r-1)); an axis
    not named in ``axes`` gets 0 and 0. ``pads`` is [b of each named axis, e of each]."""
    named = tuple(range(rank)) if axes is None else normalise(axes, rank)
    n = len(named)
    b, e = [0] * rank, [0] * rank
    for k, a in enumerate(named):
        b[a], e[a] = int(pads[k]), int(pads[k + n])
    return tuple(b), tuple(e)


# req: PAD-R6
def output_shape(shape: tuple[int, ...], pads, axes=None) -> tuple[int, ...]:
    """Y's shape: d_a + b_a + e_a on every axis (0 and 0 on an axis ``axes`` does not name)."""
    b, e = begins_ends(len(shape), pads, axes)
    return tuple(d + b[a] + e[a] for a, d in enumerate(shape))


# req: PAD-R6
def source_index(begins: tuple[int, ...], xshape: tuple[int, ...], o: tuple[int, ...]) -> tuple[int, ...] | None:
    """The multi-index of X read for Y's ``o``: o - b when inside X, else None (the constant)
    (proofs/pad.mlw, src_index and inside)."""
    i = tuple(oa - ba for oa, ba in zip(o, begins))
    return i if all(0 <= ia < d for ia, d in zip(i, xshape)) else None


# req: PAD-R3
def exact_in(elem: str, value: float) -> bool:
    """The FLOAT attribute ``value`` is a number of type ``elem`` exactly (not NaN: its bits do
    not survive the attribute's reading)."""
    if math.isnan(value):
        return False
    with np.errstate(over="ignore"):      # a value beyond T's range becomes inf: not exact
        held = np.array(value, dtype=np.float64).astype(dtypes.numpy_dtype(elem))
    return float(held) == value and math.copysign(1.0, float(held)) == math.copysign(1.0, value)


# req: PAD-R1, PAD-R2, PAD-R3, PAD-R4, PAD-R5
def constraints(x: TensorSig, *, opset: int, pads: object = None, pads_sig: TensorSig | None = None,
                constant: object = None, constant_sig: TensorSig | None = None, axes: object = None,
                axes_sig: TensorSig | None = None, mode: object = None,
                misplaced: tuple[str, ...] = ()) -> list[Violation]:
    """Every violation of PAD-R1..R5 of a Pad node with input ``x`` under ``opset``.
    ``pads``: the pads in force (the attribute before Pad-11, the input's constant value from 11;
    None when the node gives none; NotConstant when the input has no constant value);
    ``pads_sig``: the pads input's signature; ``constant``: the value attribute before Pad-11
    (None: not written), from 11 anything but None or NotConstant when the constant_value input
    is a constant, with ``constant_sig`` its signature; ``axes``/``axes_sig``: the axes input of
    Pad-18 on (None: absent); ``mode``: the attribute (None: not written); ``misplaced``: the
    attributes written that this version does not have."""
    version, refused = kernel.version_in_force(OP, opset, "PAD-R5")
    if version is None:
        return refused
    found = dense_and_typed(OP, version, [("'data'", x)], dense_rule="PAD-R5", type_rule="PAD-R5", hint=_type_hint)
    node = f"{OP}-{version}"
    for name in misplaced:
        where = {"pads": "the input pads", "paddings": "the input pads", "value": "the input constant_value"}
        found.append(Violation("PAD-R3" if name == "value" else "PAD-R1",
                               f"{node} has an attribute {name}, which it does not take; "
                               + (f"from Pad-11 that is {where[name]} (a constant initializer)"
                                  if version >= INPUTS_FROM else
                                  f"{node}'s pads attribute is {PADS_ATTRIBUTE[version]}")))
    found.extend(_mode_violations(node, mode))
    typed = not x.sparse and x.elem_type in TYPE_SETS[version]
    found.extend(_constant_violations(node, version, x, typed, constant, constant_sig))
    rank = len(x.shape) if not x.sparse and x.shape is not None else None
    named = _axes(node, version, rank, axes, axes_sig, found)
    found.extend(_pads_violations(node, version, x, rank, named, pads, pads_sig))
    return found


# req: PAD-R2
def _mode_violations(node: str, mode: object) -> list[Violation]:
    if isinstance(mode, bytes):          # onnx.helper reads a STRING attribute as bytes
        try:
            mode = mode.decode("utf-8")
        except UnicodeDecodeError:
            pass
    if mode is None or mode == CONSTANT_MODE:
        return []
    if mode in ("edge", "reflect", "wrap"):
        return [kernel.attribute_refused("PAD-R2", node, "mode", repr(mode),
                                         f": {mode} mode pads with copies of the input's elements, which the "
                                         "profile has not specified; the profile defines Pad in constant mode "
                                         "only (write mode='constant' with the constant to pad with, or pad "
                                         "the input before the model)")]
    return [kernel.attribute_refused("PAD-R2", node, "mode", repr(mode),
                                     "; the profile's Pad takes mode 'constant' only (ONNX knows constant, "
                                     "reflect, edge and, from Pad-19, wrap)")]


# req: PAD-R3
def _constant_violations(node: str, version: int, x: TensorSig, typed: bool, constant: object,
                         constant_sig: TensorSig | None) -> list[Violation]:
    if constant is None:
        return []      # ONNX's default, read as +0 of T (the value attribute's 0.0, the input's 0)
    if version < INPUTS_FROM:
        if not isinstance(constant, (float, int, np.floating, np.integer)) or isinstance(constant, (bool, np.bool_)):
            return [Violation("PAD-R3", f"{node} has value={constant!r}; value is a FLOAT attribute")]
        v = float(constant)
        why = ("is NaN, whose bits the attribute's reading does not keep" if math.isnan(v) else
               "is not a float32 value (value is a FLOAT attribute)" if float(np.float32(v)) != v else
               f"a number {x.elem_type} does not hold exactly" if typed and not exact_in(x.elem_type, v) else "")
        if why:
            return [kernel.attribute_refused("PAD-R3", node, "value", repr(v),
                                             f", {why}; the profile pads with one exact value of T, never a "
                                             "rounded one (from Pad-11 the constant_value input keeps every bit)")]
        return []
    if isinstance(constant, NotConstant):
        return [Violation("PAD-R3", f"{node} input constant_value is {constant.why}; it must be a constant "
                                    "initializer that is not a graph input; a Constant node feeding it: "
                                    "`sonnx conform` stores it as an initializer")]
    if constant_sig is None or constant_sig.sparse or constant_sig.shape not in ((), (1,)) \
            or (x.elem_type is not None and constant_sig.elem_type != x.elem_type):
        shape = None if constant_sig is None else constant_sig.shape
        elem = None if constant_sig is None else constant_sig.elem_type
        return [Violation("PAD-R3", f"{node} input constant_value has element type {elem} and shape {shape}; it "
                                    f"must hold one element (shape () or (1,)) of the data's element type "
                                    f"{x.elem_type} (nothing is cast)")]
    return []


# req: PAD-R4
def _axes(node: str, version: int, rank: int | None, axes: object, axes_sig: TensorSig | None,
          found: list[Violation]) -> tuple[int, ...] | None:
    """The normalised axes the pads name (every axis when none are given), or None when they
    cannot be known (the violation is then appended to ``found``) or the rank is unknown."""
    if axes is None:
        return None if rank is None else tuple(range(rank))
    if version < AXES_FROM:
        found.append(Violation("PAD-R4", f"{node} has no axes input; axes exist from Pad-18: import opset 18 "
                                         "or later, or give pads for every axis"))
        return None
    if isinstance(axes, NotConstant):
        found.append(Violation("PAD-R4", f"{node} input axes is {axes.why}; the axes must be a constant int32 or "
                                         "int64 initializer that is not a graph input, so that the output's shape "
                                         "is static"))
        return None
    if axes_sig is not None and (axes_sig.elem_type not in ("int32", "int64") or axes_sig.shape is None
                                 or len(axes_sig.shape) != 1):
        found.append(Violation("PAD-R4", f"{node} input axes has type {axes_sig.elem_type} and shape "
                                         f"{axes_sig.shape}; it must be a 1-D int32 or int64 tensor"))
        return None
    if not isinstance(axes, tuple) or not all(_is_int(a) for a in axes):
        found.append(Violation("PAD-R4", f"{node} has axes={axes!r}; the axes must be a list of integers"))
        return None
    if rank is None:
        return None
    out = [int(a) for a in axes if not -rank <= a < rank]
    if out:
        found.append(Violation("PAD-R4", f"{node} has axes={list(axes)}: {out} outside [{-rank}, {rank - 1}] "
                                         f"for an input of rank {rank}"))
        return None
    norm = normalise(tuple(int(a) for a in axes), rank)
    if len(set(norm)) != len(norm):
        found.append(Violation("PAD-R4", f"{node} has axes={list(axes)}, naming one dimension twice (normalised: "
                                         f"{list(norm)}); ONNX leaves that undefined"))
        return None
    return norm


# req: PAD-R1
def _pads_violations(node: str, version: int, x: TensorSig, rank: int | None, named: tuple[int, ...] | None,
                     pads: object, pads_sig: TensorSig | None) -> list[Violation]:
    where = (f"attribute {PADS_ATTRIBUTE[version]}" if version < INPUTS_FROM
             else "input pads (a constant int64 initializer)")
    if pads is None:
        return [Violation("PAD-R1", f"{node} gives no pads; write the {where}")]
    if isinstance(pads, NotConstant):
        return [Violation("PAD-R1", f"{node} input pads is {pads.why}; the pads must be a constant int64 "
                                    "initializer that is not a graph input, so that the output's shape is static; "
                                    "a Constant node feeding it: `sonnx conform` stores it as an initializer")]
    if version >= INPUTS_FROM and pads_sig is not None and (
            pads_sig.elem_type != "int64" or pads_sig.shape is None or len(pads_sig.shape) != 1):
        return [Violation("PAD-R1", f"{node} input pads has type {pads_sig.elem_type} and shape {pads_sig.shape}; "
                                    "it must be a 1-D int64 tensor")]
    if not isinstance(pads, tuple) or not all(_is_int(p) for p in pads):
        return [Violation("PAD-R1", f"{node} has pads={pads!r}; the pads must be a list of integers")]
    negative = [int(p) for p in pads if p < 0]
    # the length needs the padded axes (the rank, or the axes input); a negative entry is refused
    # without them: it crops whatever the rank
    if named is not None and len(pads) != 2 * len(named):
        said = "the input's rank" if version < AXES_FROM else "the number of axes (the input's rank when no axes are given)"
        return [Violation("PAD-R1", f"{node} has {len(pads)} pads for {len(named)} padded axes; it needs "
                                    f"2 x {said} = {2 * len(named)}: [b_1, ..., b_n, e_1, ..., e_n]")]
    if negative:
        return [Violation("PAD-R1", f"{node} has pads={[int(p) for p in pads]} with negative entries {negative}: "
                                    "a negative pad crops the input, which the profile's Pad does not do (it "
                                    "only adds elements); crop before the model or with a profile operator")]
    return []


def _type_hint(elem: str) -> str:
    if elem == "bfloat16":
        return "; bfloat16 needs Pad-13: import opset 13 or later"
    if elem in _INTS:
        return "; integer types need Pad-11: import opset 11 or later"
    return "; the profile defines no other element type (bool and strings included)"


def _tuple(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """The registry's constraint function: (input signatures, attributes, opset). The validator
    passes each constant input's value under "input:<name>" (registry: constant_inputs)."""
    version = kernel.version_in_force(OP, opset, "PAD-R5")[0]
    sig = lambda k: sigs[k] if len(sigs) > k else None    # noqa: E731
    if version is not None and version >= INPUTS_FROM:
        misplaced = tuple(n for n in ("pads", "paddings", "value") if n in attrs)
        return constraints(sigs[0], opset=opset, pads=attrs.get("input:pads"), pads_sig=sig(1),
                           constant=attrs.get("input:constant_value"), constant_sig=sig(2),
                           axes=attrs.get("input:axes"), axes_sig=sig(3), mode=attrs.get("mode"),
                           misplaced=misplaced)
    own = PADS_ATTRIBUTE.get(version, "pads")
    misplaced = tuple(n for n in ("pads", "paddings") if n in attrs and n != own)
    return constraints(sigs[0], opset=opset, pads=_tuple(attrs.get(own)), constant=attrs.get("value"),
                       mode=attrs.get("mode"), misplaced=misplaced)


# ---------------------------------------------------------------- reference kernel
def _violations(x: TensorValue, pads: object, c: object) -> list[Violation]:
    sig = TensorSig(x.shape, x.dtype)
    cs = TensorSig((), x.dtype)
    return tensor_shape_violations(OP, [("'data'", sig)]) + constraints(
        sig, opset=LATEST, pads=pads, constant=c, constant_sig=cs)


def _refusal(x: TensorValue, pads: object, c: object) -> ProfileViolation:
    return ProfileViolation(_violations(x, pads, c))


def _every_element_placed(x: TensorValue, pads, c, y: TensorValue) -> bool:
    """PAD-R6 by multi-index, as proofs/pad.mlw's pad_elements (pad_inside, pad_outside): Y's
    element at o is X's at o - b when that lies inside X, else c, bit for bit. Stated here
    without the kernel's helpers (begins_ends, source_index), so that a fault in them shows."""
    r = len(x.shape)
    b = [int(p) for p in pads[:r]]
    for o in itertools.product(*(range(d) for d in y.shape)):
        i = tuple(o[a] - b[a] for a in range(r))
        inside = all(0 <= i[a] < x.shape[a] for a in range(r))
        want = x.data[flat_index(x.shape, i)] if inside else c
        if not kernel.same_bits(x.dtype, want, y.data[flat_index(y.shape, o)]):
            return False
    return True


# req: PAD-R1, PAD-R3, PAD-R5, PAD-R6
# The body checks the requirements itself, so that they hold with contracts off; the same
# precondition is attached for CrossHair (SONNX_CONTRACTS=full).
@icontract.require(lambda x, pads, c: not _violations(x, pads, c), "PAD-R1, PAD-R3, PAD-R5, PROF-R2",
                   error=_refusal, enabled=FULL_CONTRACTS)
@icontract.require(lambda x: kernel.well_formed(x), enabled=FULL_CONTRACTS)
@icontract.ensure(lambda x, pads, c, result: result.dtype == x.dtype and result.shape == output_shape(x.shape, pads)
                  and len(result.data) == size(result.shape))
@icontract.ensure(lambda x, pads, c, result: _every_element_placed(x, pads, c, result), enabled=FULL_CONTRACTS)
def pad_reference(x: TensorValue, pads: tuple[int, ...], c) -> TensorValue:
    """The reference kernel (every axis padded; ``c`` the constant, a value of X's type): for
    every Y index o in row-major order, y[flat(o)] = x[flat(o - b)] when o - b lies inside X,
    else c (proofs/pad.mlw's model is_pad: flat element k is pad_at of Y's k-th index)."""
    raise_if_any(_violations(x, pads, c))
    pads = tuple(int(p) for p in pads)
    shape = output_shape(x.shape, pads)
    return TensorValue(x.dtype, shape, _move(x.data, x.shape, begins_ends(len(x.shape), pads)[0], shape, c))


# req: PAD-R6
def _move(data: list, xshape: tuple[int, ...], begins: tuple[int, ...], shape: tuple[int, ...], c) -> list:
    """Y's flat data in row-major order of Y: X's objects moved, c elsewhere (so the same bits)."""
    y: list = []
    for o in itertools.product(*(range(d) for d in shape)):
        i = source_index(begins, xshape, o)
        y.append(c if i is None else data[flat_index(xshape, i)])
    return y


# ---------------------------------------------------------------- numpy kernel
_accepted = kernel.AcceptedCalls()


def pads_argument(pads: object, opset: object) -> tuple[int, ...] | None:
    """The kernel's ``pads`` as a tuple of ints. From Pad-11 on ONNX's pads input: a 1-D int64
    array (another array is PAD-R1's to refuse); before, ONNX's attribute: a list or tuple of
    integers (or such an array). None (omitted) is PAD-R1's to refuse. TypeError otherwise."""
    if pads is None:
        return None
    if isinstance(pads, np.ndarray):
        if pads.dtype != np.int64 or pads.ndim != 1:
            raise ProfileViolation([Violation("PAD-R1", f"{OP} pads is an array of type {pads.dtype} and "
                                                        f"shape {pads.shape}; it must be a 1-D int64 array")])
        return tuple(int(p) for p in pads)
    before = _is_int(opset) and opset < INPUTS_FROM
    if before and isinstance(pads, (tuple, list)) and all(_is_int(p) for p in pads):
        return tuple(int(p) for p in pads)
    raise wrong_type("pad", "pads", f"a 1-D int64 array (the pads input; before opset {INPUTS_FROM} also a "
                     "list of integers: the attribute)", pads, "")


def axes_argument(axes: object) -> tuple[int, ...] | None:
    """The kernel's ``axes`` (ONNX's axes input, Pad-18 on): a 1-D int32 or int64 array (another
    array is PAD-R4's to refuse); None when omitted. TypeError otherwise."""
    if axes is None:
        return None
    if isinstance(axes, np.ndarray):
        if axes.dtype not in (np.int32, np.int64) or axes.ndim != 1:
            raise ProfileViolation([Violation("PAD-R4", f"{OP} axes is an array of type {axes.dtype} and "
                                                        f"shape {axes.shape}; it must be a 1-D int32 or int64 array")])
        return tuple(int(a) for a in axes)
    raise wrong_type("pad", "axes", "a 1-D int32 or int64 array (the axes input)", axes, "")


# req: PAD-R1, PAD-R2, PAD-R3, PAD-R4, PAD-R5
def check(x: object, pads: tuple[int, ...] | None, constant_value: object, axes: tuple[int, ...] | None,
          pad_mode: object, value: object, opset: object = LATEST) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Every check of the kernel's arguments (TypeError or ProfileViolation); the plan: Y's
    shape and the begin pad of every axis. The constant is no part of the plan (the memo of
    accepted calls knows an array by shape and type only, and -0.0 == 0.0)."""
    arrays = [("data", x)] if constant_value is None else [("data", x), ("constant_value", constant_value)]
    version, sigs = kernel.arguments("pad", opset, arrays)
    if version >= INPUTS_FROM:
        if value is not None:
            raise wrong_type("pad", "value", f"None from opset {INPUTS_FROM} (the constant is the "
                             "constant_value input)", value, "")
        constant, constant_sig = (None, None) if constant_value is None else (True, sigs[1][1])
    else:
        if constant_value is not None:
            raise wrong_type("pad", "constant_value", f"None before opset {INPUTS_FROM} (the constant is "
                             "the value attribute)", constant_value, "")
        if value is not None and (not isinstance(value, (float, int)) or isinstance(value, bool)):
            raise wrong_type("pad", "value", "a float (the value attribute)", value, "")
        constant, constant_sig = value, None
    kernel.refuse(OP, sigs[:1], constraints(sigs[0][1], opset=version, pads=pads, constant=constant,
                                            constant_sig=constant_sig, axes=axes, mode=pad_mode))
    xshape = sigs[0][1].shape
    return output_shape(xshape, pads, axes), begins_ends(len(xshape), pads, axes)[0]


def _constant(x: np.ndarray, constant_value: np.ndarray | None, value: object) -> np.ndarray:
    """The accepted constant as a 0-d array of X's type in native byte order: constant_value's
    one element bit for bit, or the value attribute (a number X's type holds exactly), or +0
    when neither is given (ONNX's default)."""
    c = np.zeros((), dtype=x.dtype.newbyteorder("="))      # req: PAD-R3 (+0 when omitted)
    if constant_value is not None:
        np.copyto(c, constant_value.reshape(()), casting="equiv")
    elif value is not None:
        c[()] = float(value)          # exact: PAD-R3 accepted only a value the type holds
    return c


# req: PAD-R6
@kernel.entry      # nothing is rounded; guarded as every kernel, for one calling convention
def pad(data: np.ndarray, pads: np.ndarray | None = None, constant_value: np.ndarray | None = None,
        axes: np.ndarray | None = None, *, pad_mode: str | None = None, value: float | None = None,
        opset: int = LATEST) -> np.ndarray:
    """ONNX Pad in constant mode: a new array holding data at offset b (the begin pads) inside
    a constant, every bit kept.

    From opset 11: ``pads`` a 1-D int64 array [b_1..b_n, e_1..e_n] (ONNX's pads input),
    ``constant_value`` an array of data's type with one element (None: +0, ONNX's default),
    ``axes`` (opset 18 on) a 1-D int32/int64 array naming the padded axes (every axis
    when omitted). Before 11: ``pads`` a list of integers and ``value`` a float (the attributes).
    ``pad_mode`` is ONNX's mode attribute: None or "constant". The result is a C-contiguous copy
    in this machine's byte order, never a view. Raises ``sonnx.ProfileViolation`` (a ValueError
    naming the requirement) for what the profile refuses: negative pads or pads of the wrong
    length, another mode, an inexact constant, axes out of range or twice, an
    element type outside the version's type set, a sparse input, an empty or oversized tensor.
    Raises TypeError for a non-array input, pads or axes of the wrong Python type, a non-integer
    opset.
    """
    p = pads_argument(pads, opset)
    a = axes_argument(axes)
    shape, begins = kernel.checked(_accepted, check, data, p, constant_value, a, pad_mode, value, opset)
    return _apply(data, shape, begins, _constant(data, constant_value, value))


# req: PAD-R6
def _apply(x: np.ndarray, shape: tuple[int, ...], begins: tuple[int, ...], c: np.ndarray) -> np.ndarray:
    """The move of an accepted call: Y filled with c, then X copied into the block at ``begins``
    (numpy copies of one type move bits, byte-swapped into native order when needed)."""
    y = np.empty(shape, dtype=x.dtype.newbyteorder("="))
    np.copyto(y, c, casting="equiv")
    np.copyto(y[(*(slice(b, b + d) for b, d in zip(begins, x.shape)), ...)], x, casting="equiv")
    return y


# req: PAD-R3, PAD-R6
def bind(x: np.ndarray, pads: np.ndarray | None = None, constant_value: np.ndarray | None = None,
         axes: np.ndarray | None = None, *, pad_mode: str | None = None, value: float | None = None,
         opset: int = LATEST):
    """``pad`` checked once now for arrays like ``x`` with this constant: a function of the
    array alone."""
    shape, begins = check(x, pads_argument(pads, opset), constant_value, axes_argument(axes), pad_mode, value, opset)
    c = _constant(x, constant_value, value)
    return lambda a: _apply(a, shape, begins, c)


def result_shape(shapes, keywords) -> tuple[int, ...]:
    """Y's shape from X's and the kernel's ``pads`` and ``axes`` (the executor plans with it)."""
    axes = keywords.get("axes")
    return output_shape(tuple(shapes[0]), tuple(int(p) for p in keywords["pads"]),
                        None if axes is None else tuple(int(a) for a in axes))


OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="structural", type_sets=TYPE_SETS,
    inputs=("data", "pads", "constant_value", "axes"), optional=("pads", "constant_value", "axes"),
    attributes={"pads": None, "paddings": None, "value": None, "mode": None}, constraints=node_constraints,
    reference=pad_reference, kernel=pad, bind=bind, spec="spec/pad.md", proofs=("proofs/pad.mlw",),
    kernel_attributes=KERNEL_ATTRIBUTES, constant_inputs=CONSTANT_INPUTS, output_shape=result_shape,
    # ONNX: "constant_value ... default is 0" (the empty string before axes omits it)
    omitted_as_zero={"constant_value": "data"},
    comparison="bits", theories=("proofs/tensor.mlw",))
