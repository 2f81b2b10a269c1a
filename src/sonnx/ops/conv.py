"""ONNX Conv under the SONNX profile: constraints, reference kernel, exact and fast kernels.

``constraints`` is the only place where CONV-R1..R5 are decided; the kernels and the model
validator call it. CONV-R6 (the result) is implemented by ``conv_reference`` (plain Python
loops over the direct index map), by the exact kernel (the zero-padded patches laid out as a
matrix, im2col, then Gemm's compiled fold, gemm/fold.py, reused: bit-exact with the reference)
and bounded for the fast kernel (BLAS). Spec: spec/conv.md. Tests: tests/ops/test_conv.py.

Decisions (spec/conv.md says why):
- every attribute that decides the result is written: group, kernel_shape, pads, strides,
  dilations (CONV-R4; ONNX's defaults are not read, as GR4 asks); auto_pad is absent or
  "NOTSET" (the explicit pads say what it would mean);
- one result per element: s = +0.0, then s = s + W[m, c, k] * Xpad[n, c, o*s + k*d] for the
  channels c of m's group and the kernel offsets k in row-major (ascending) order, each product
  and each sum rounded in the accumulation type (no FMA); then y = round_T(s + B[m]) when B is
  given, round_T(s) otherwise: exactly Gemm's fold of W's row by the patch's column, then its C;
- padded positions hold +0.0 and are multiplied like any other (onnxruntime's im2col does the
  same): w * +0.0 is +-0, or NaN for an infinite or NaN weight;
- Conv's type sets hold float types only (ConvInteger is another operator): nothing wraps.
"""
from __future__ import annotations

import itertools
import math
from typing import Callable, NamedTuple

from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import Violation, raise_if_any, shown
from ..semantics import floats
from ..semantics.tensor import TensorValue, size
from ..semantics.values import same_value
from . import gemm, kernel, pool
from .gemm import fold
from .openvino_ir import IRError, IRLayer
from .registry import ConformRule, Operator
from .signature import TensorSig, dense_and_typed, tensor_shape_violations

OP = "Conv"
PREFIX = "CONV"
LATEST = 22
# since_version -> element types: onnx's schemas of Conv-1, -11, -22 (tests/ops/test_conv.py
# and test_every_operator compare them with onnx.defs)
TYPE_SETS = {
    1: dtypes.IEEE_FLOATS,
    11: dtypes.IEEE_FLOATS,
    22: dtypes.IEEE_FLOATS | {"bfloat16"},
}
SPATIAL_RANKS = (1, 2, 3)
# the INTS attributes that decide the result, each written in the model (CONV-R4), and their
# length as a multiple of the spatial rank (pads: a begin and an end per axis)
INTS_ATTRIBUTES = {"kernel_shape": 1, "strides": 1, "dilations": 1, "pads": 2}
ATTRIBUTES = {"group": None, "kernel_shape": None, "pads": None, "strides": None, "dilations": None,
              "auto_pad": None}
# ONNX attribute -> keyword of the numpy kernel (auto_pad reaches no kernel: only NOTSET is accepted)
KERNEL_ATTRIBUTES = {"group": "group", "kernel_shape": "kernel_shape", "pads": "pads",
                     "strides": "strides", "dilations": "dilations"}


def _type_hint(elem: str) -> str:
    if elem == "bfloat16":
        return "; bfloat16 needs Conv-22: import opset 22 or later"
    if elem in dtypes.NUMERIC_TYPES and not dtypes.is_float(elem):
        return "; Conv has no integer types (ConvInteger is not in the profile)"
    return ""


def _is_int(v: object) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


# req: CONV-R1
def output_spatial(spatial: tuple[int, ...], kernel_shape: tuple[int, ...], pads: tuple[int, ...],
                   strides: tuple[int, ...], dilations: tuple[int, ...]) -> tuple[int, ...]:
    """Y's spatial dimensions: floor((D + p_begin + p_end - (d (k - 1) + 1)) / s) + 1 per axis
    (may be < 1: CONV-R1 refuses that)."""
    r = len(spatial)
    return tuple((spatial[i] + pads[i] + pads[r + i] - (dilations[i] * (kernel_shape[i] - 1) + 1)) // strides[i] + 1
                 for i in range(r))


# req: CONV-R1, CONV-R4
def _attribute_violations(version: int, r: int | None, attrs: dict) -> list[Violation]:
    """CONV-R4: group and the INTS attributes written, well formed for spatial rank ``r`` (None:
    unknown rank, the lengths are not judged); auto_pad absent or NOTSET."""
    found = []
    node = f"{OP}-{version}"
    group = attrs.get("group")
    if group is None:
        found.append(Violation("CONV-R4", f"{node} does not write its group attribute; the profile reads no "
                                          "default for an attribute that decides the result: write it "
                                          "(group=1 is ONNX's default)"))
    elif not _is_int(group) or group < 1:
        found.append(kernel.attribute_refused("CONV-R4", node, "group", shown(group), "; it must be an integer >= 1"))
    for name, mult in INTS_ATTRIBUTES.items():
        value = attrs.get(name)
        if value is None:
            default = {"kernel_shape": "W's spatial dimensions", "strides": "1 per axis",
                       "dilations": "1 per axis", "pads": "0 at each begin and end"}[name]
            found.append(Violation("CONV-R4", f"{node} does not write its {name} attribute; the profile reads "
                                              "no default for an attribute that decides the result: write it "
                                              f"(ONNX's default is {default}; the PyTorch exporters write it; "
                                              "sonnx conform writes ONNX's default, changing no bit)"))
            continue
        if not isinstance(value, (tuple, list)) or not all(_is_int(v) for v in value):
            found.append(kernel.attribute_refused("CONV-R4", node, name, shown(value),
                                                  "; it must be a list of integers (INTS)"))
            continue
        if r is not None and len(value) != mult * r:
            found.append(kernel.attribute_refused("CONV-R4", node, name, shown(tuple(value)),
                                                  f", of length {len(value)}; an input with {r} spatial "
                                                  f"axes needs {mult * r} values"))
            continue
        low = 0 if name == "pads" else 1
        if any(v < low for v in value):
            found.append(kernel.attribute_refused("CONV-R4", node, name, shown(tuple(value)),
                                                  f"; every value must be >= {low}"))
    auto_pad = attrs.get("auto_pad")
    if isinstance(auto_pad, bytes):
        auto_pad = auto_pad.decode("utf-8", "replace")
    if auto_pad is not None and auto_pad != "NOTSET":
        found.append(kernel.attribute_refused("CONV-R4", node, "auto_pad", shown(auto_pad),
                                              "; the profile accepts only explicit pads (auto_pad absent "
                                              "or NOTSET): write the pads it means (SAME_UPPER, SAME_LOWER "
                                              "or VALID) as the pads attribute (sonnx conform does, for a "
                                              "static input shape)"))
    return found


# req: CONV-R1, CONV-R2, CONV-R3, CONV-R4, CONV-R5
def constraints(x: TensorSig, w: TensorSig, b: TensorSig | None, *, opset: int = LATEST,
                attrs: dict) -> list[Violation]:
    """Every profile violation of a Conv node with inputs ``x``, ``w``, ``b`` (None: absent)
    under ``opset``; ``attrs``: its attributes (ONNX names; absent ones missing)."""
    version, refused = kernel.version_in_force(OP, opset, "CONV-R3")
    if version is None:
        return refused
    inputs = [("X", x), ("W", w)] + ([("B", b)] if b is not None else [])
    found = dense_and_typed(OP, version, inputs, dense_rule="CONV-R2", type_rule="CONV-R3", hint=_type_hint)
    xs = None if x.sparse or x.shape is None else tuple(x.shape)
    ws = None if w.sparse or w.shape is None else tuple(w.shape)
    r = None
    if xs is not None:
        if len(xs) - 2 not in SPATIAL_RANKS:
            found.append(Violation("CONV-R1", f"{OP} input X has rank {len(xs)} (shape {xs}); the profile "
                                              "defines 1-D, 2-D and 3-D convolution: X of rank 3, 4 or 5 "
                                              "(N, C, spatial...)"))
            xs = None
        else:
            r = len(xs) - 2
    found.extend(_attribute_violations(version, r, attrs))
    if ws is not None and xs is not None and len(ws) != len(xs):
        found.append(Violation("CONV-R1", f"{OP} input W has rank {len(ws)} (shape {ws}), X has rank "
                                          f"{len(xs)}: W must be (M, C/group, kernel...) of X's rank"))
        return found
    if xs is None or ws is None or found or not all(_is_int(d) for d in xs[1:] + ws):
        return found        # what is left needs C, the spatial dims, W's shape and well-formed attributes
    group = int(attrs["group"])     # (a symbolic batch N is PROF-R2's to refuse, not a reason to skip these)
    ks, pads, st, dil = (tuple(int(v) for v in attrs[n]) for n in ("kernel_shape", "pads", "strides", "dilations"))
    c, m = xs[1], ws[0]
    if c % group or m % group:
        found.append(Violation("CONV-R1", f"{OP} has group={group}, which divides neither X's channels C={c} "
                                          f"nor W's output channels M={m} (both must be multiples of it)"
                               if c % group and m % group else
                               f"{OP} has group={group}, which does not divide "
                               + (f"X's channels C={c}" if c % group else f"W's output channels M={m}")))
    elif ws[1] != c // group:
        found.append(Violation("CONV-R1", f"{OP} input W has shape {ws}: its dimension 1 must be C/group = "
                                          f"{c}/{group} = {c // group} (X has shape {xs})"))
    if tuple(ws[2:]) != ks:
        found.append(Violation("CONV-R4", f"{OP} has kernel_shape={ks}, but W's spatial dimensions are "
                                          f"{tuple(ws[2:])}: kernel_shape must equal them"))
    out = output_spatial(xs[2:], ws[2:], pads, st, dil)
    if any(o < 1 for o in out):
        found.append(Violation("CONV-R1", f"{OP} output would have spatial shape {out} (X {xs}, W {ws}, "
                                          f"pads={pads}, strides={st}, dilations={dil}): the dilated kernel "
                                          "is larger than the padded input; every output dimension must be >= 1"))
    if b is not None and not b.sparse and b.shape is not None and tuple(b.shape) != (m,):
        found.append(Violation("CONV-R5", f"{OP} input B has shape {tuple(b.shape)}; it must be (M,) = ({m},), "
                                          "one bias per output channel (Conv's bias is part of its "
                                          "definition, never broadcast)"))
    return found


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """The registry's constraint function: (input signatures, attributes, opset)."""
    x, w, b = (list(sigs) + [None])[:3]
    return constraints(x, w, b, opset=opset, attrs=dict(attrs))


# ---------------------------------------------------------------- reference kernel
accumulation_type = gemm.accumulation_type      # float32 for float16/bfloat16/float, float64 for double


def _sig(t: TensorValue | None) -> TensorSig | None:
    return None if t is None else TensorSig(t.shape, t.dtype)


def _attrs(group, kernel_shape, pads, strides, dilations) -> dict:
    return {"group": group, "kernel_shape": kernel_shape, "pads": pads, "strides": strides,
            "dilations": dilations}


def _violations(x, w, b, group, kernel_shape, pads, strides, dilations) -> list[Violation]:
    sigs = [("X", _sig(x)), ("W", _sig(w))] + ([("B", _sig(b))] if b is not None else [])
    return tensor_shape_violations(OP, sigs) + constraints(
        _sig(x), _sig(w), _sig(b), attrs=_attrs(group, kernel_shape, pads, strides, dilations))


# req: CONV-R6
def input_position(o: tuple[int, ...], k: tuple[int, ...], pads: tuple[int, ...], strides: tuple[int, ...],
                   dilations: tuple[int, ...], spatial: tuple[int, ...]) -> tuple[int, ...] | None:
    """The index map: the spatial position of X read by output position ``o`` at kernel offset
    ``k`` (o_i s_i + k_i d_i - p_begin_i per axis), or None when it is a padded position."""
    at = tuple(o[i] * strides[i] + k[i] * dilations[i] - pads[i] for i in range(len(o)))
    return at if all(0 <= at[i] < spatial[i] for i in range(len(at))) else None


def _flat(shape: tuple[int, ...], idx: tuple[int, ...]) -> int:
    f = 0
    for d, i in zip(shape, idx):
        f = f * d + i
    return f


def _geometry(x, w, kernel_shape, pads, strides, dilations, group):
    n, c = x.shape[:2]
    m = w.shape[0]
    out = output_spatial(tuple(x.shape[2:]), tuple(kernel_shape), tuple(pads), tuple(strides), tuple(dilations))
    return n, c, m, c // group, m // group, out


# req: CONV-R6
def conv_reference(x: TensorValue, w: TensorValue, b: TensorValue | None = None, *, group: int,
                   kernel_shape: tuple[int, ...], pads: tuple[int, ...], strides: tuple[int, ...],
                   dilations: tuple[int, ...]) -> TensorValue:
    """The loop of CONV-R6 over flat row-major data: for each (n, m, o): s = +0.0; for c in m's
    group's channels ascending, for the kernel offsets k in row-major order: s = s + W[m, c, k] *
    Xpad[n, g*Cg + c, o*s + k*d - p] (+0.0 at a padded position), each operation rounded in the
    accumulation type; Y[n, m, o] = round_T(s + B[m]) (round_T(s) without B)."""
    raise_if_any(_violations(x, w, b, group, kernel_shape, pads, strides, dilations))
    n, c, m, cg, mg, out = _geometry(x, w, kernel_shape, pads, strides, dilations, group)
    acc = accumulation_type(x.dtype)
    spatial = tuple(x.shape[2:])
    ks = tuple(kernel_shape)
    y = []
    for ni in range(n):
        for mi in range(m):
            g = mi // mg
            for o in itertools.product(*(range(d) for d in out)):
                s = 0.0
                for ci in range(cg):
                    for k in itertools.product(*(range(d) for d in ks)):
                        at = input_position(o, k, tuple(pads), tuple(strides), tuple(dilations), spatial)
                        xv = 0.0 if at is None else x.data[_flat(x.shape, (ni, g * cg + ci) + at)]
                        wv = w.data[_flat(w.shape, (mi, ci) + k)]
                        s = floats.round_to(acc, s + floats.round_to(acc, wv * xv))
                if b is not None:
                    s = floats.round_to(acc, s + b.data[mi])
                y.append(floats.round_to(x.dtype, s))
    return TensorValue(x.dtype, (n, m) + out, y)


# ---------------------------------------------------------------- numpy kernels
MODES = gemm.MODES


class _Plan(NamedTuple):
    """What an accepted call's checks found out."""
    out: np.dtype               # T, native byte order
    acc: np.dtype               # the accumulation type
    group: int
    kernel_shape: tuple[int, ...]
    pads: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    spatial_out: tuple[int, ...]
    exact: bool


def _ints(v: object) -> object:
    """INTS keywords as tuples: a list from onnx.helper, or a 1-D numpy array (the pools take
    them too; onnx.numpy_helper gives them), is the same attribute. The elements are judged by
    the constraint function as for a list (floats or booleans: CONV-R4); an array of another
    rank stays an array and is refused as the wrong Python type."""
    if isinstance(v, np.ndarray) and v.ndim == 1:
        return tuple(v.tolist())
    return tuple(v) if isinstance(v, (list, tuple)) else v


def check(x: object, w: object, b: object = None, group: object = None, kernel_shape: object = None,
          pads: object = None, strides: object = None, dilations: object = None, mode: object = "exact",
          opset: object = LATEST) -> _Plan:
    """Every check of ``conv``'s arguments, without computing: TypeError, ValueError (mode) or
    ProfileViolation, or the plan of the call."""
    gemm.check_mode(mode, "conv")
    attrs = {"group": group, "kernel_shape": _ints(kernel_shape), "pads": _ints(pads),
             "strides": _ints(strides), "dilations": _ints(dilations)}
    for name, value in attrs.items():
        if value is not None and not (_is_int(value) if name == "group" else isinstance(value, tuple)):
            raise kernel.wrong_type("conv", name, "an integer" if name == "group" else "a tuple of integers", value)
    version, sigs = kernel.arguments("conv", opset, [("X", x), ("W", w)] + ([("B", b)] if b is not None else []))
    sig_b = sigs[2][1] if b is not None else None
    kernel.refuse(OP, sigs, constraints(sigs[0][1], sigs[1][1], sig_b, opset=version, attrs=attrs))
    name = dtypes.name_of(x.dtype)
    ks, pd, st, dl = (tuple(int(v) for v in attrs[k]) for k in ("kernel_shape", "pads", "strides", "dilations"))
    return _Plan(dtypes.numpy_dtype(name), dtypes.numpy_dtype(accumulation_type(name)), int(group), ks, pd, st, dl,
                 output_spatial(tuple(x.shape[2:]), ks, pd, st, dl), mode == "exact")


# req: CONV-R6
def patches(xa: np.ndarray, plan: _Plan) -> np.ndarray:
    """im2col: the matrix P (C * prod(kernel), N * prod(out)) with P[(c, k), (n, o)] =
    Xpad[n, c, o*s + k*d], Xpad being X with plan.pads zeros (+0.0) around each spatial axis;
    rows in (c, k) row-major order, W's own flat order, so that Y[n, m, o] before the bias is
    Gemm's fold of W's row m by P's column (n, o) (within m's group: rows g*Cg*K .. )."""
    n, c = xa.shape[:2]
    r = xa.ndim - 2
    pad = [(0, 0), (0, 0)] + [(plan.pads[i], plan.pads[r + i]) for i in range(r)]
    xp = np.pad(xa, pad) if any(plan.pads) else xa          # np.pad's constant is +0.0
    out, ks = plan.spatial_out, plan.kernel_shape
    cols = np.empty((c,) + ks + (n,) + out, xa.dtype)
    for k in itertools.product(*(range(d) for d in ks)):
        sl = tuple(slice(k[i] * plan.dilations[i], k[i] * plan.dilations[i] + plan.strides[i] * (out[i] - 1) + 1,
                         plan.strides[i]) for i in range(r))
        cols[(slice(None),) + k] = xp[(slice(None), slice(None)) + sl].swapaxes(0, 1)
    return cols.reshape(c * math.prod(ks), n * math.prod(out))


# req: CONV-R6
def _apply(plan: _Plan, x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """The arithmetic of an accepted call: per group, Gemm's exact fold (or BLAS in fast mode) of
    W's rows by the patch matrix, then the bias added once per element, then one rounding to T."""
    acc = plan.acc
    xa = x.astype(acc, copy=False)          # widening float16/bfloat16 -> float32 is exact
    m = w.shape[0]
    wm = w.astype(acc, copy=False).reshape(m, -1)
    cols = patches(xa, plan)
    g = plan.group
    mg, kg = m // g, cols.shape[0] // g
    with np.errstate(all="ignore"):         # IEEE overflow/NaN are results here, not errors
        if g == 1:
            s = fold.fold(np.ascontiguousarray(wm), cols) if plan.exact else np.matmul(wm, cols)
        else:
            s = np.empty((m, cols.shape[1]), acc)
            for gi in range(g):
                wg = np.ascontiguousarray(wm[gi * mg:(gi + 1) * mg])
                cg = cols[gi * kg:(gi + 1) * kg]
                s[gi * mg:(gi + 1) * mg] = fold.fold(wg, cg) if plan.exact else np.matmul(wg, cg)
        if b is not None:                   # one rounded add of B[m] per element, after the fold
            np.add(s, b.astype(acc, copy=False).reshape(m, 1), out=s)
        n = x.shape[0]
        y = np.ascontiguousarray(s.reshape((m, n) + plan.spatial_out).swapaxes(0, 1))
        return y if y.dtype == plan.out else y.astype(plan.out)     # the single final RNE rounding to T


# req: CONV-R1, CONV-R6
@kernel.entry
def conv(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, *, group: int,
         kernel_shape: tuple[int, ...], pads: tuple[int, ...], strides: tuple[int, ...],
         dilations: tuple[int, ...], mode: str = "exact", opset: int = LATEST) -> np.ndarray:
    """ONNX Conv of X (N, C, D1[, D2[, D3]]) by W (M, C/group, k1[, k2[, k3]]) with optional bias B (M,).

    Every attribute is given explicitly (CONV-R4: the profile reads no default). ``mode="exact"``
    (default) gives the profile's result bit for bit (CONV-R6: Gemm's ascending fold over the
    zero-padded patch in (c, kernel) row-major order, then + B[m], one final rounding to T);
    ``mode="fast"`` uses BLAS and is within CONV-R6's bound. Raises ``sonnx.ProfileViolation``
    for what the profile refuses, TypeError for arguments of the wrong Python type.
    """
    plan = kernel.checked(_ACCEPTED, check, x, w, b, group, _ints(kernel_shape), _ints(pads),
                          _ints(strides), _ints(dilations), mode, opset)
    return _apply(plan, x, w, b)


_ACCEPTED = kernel.AcceptedCalls()


# req: CONV-R1, CONV-R6
def bind(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, *, group: int, kernel_shape, pads,
         strides, dilations, mode: str = "exact", opset: int = LATEST) -> Callable[..., np.ndarray]:
    """``conv`` checked once now for arrays like ``x``, ``w``, ``b``: a function of the arrays alone,
    for the caller to run under fpenv.guarded (see gemm.bind)."""
    plan = check(x, w, b, group, _ints(kernel_shape), _ints(pads), _ints(strides), _ints(dilations), mode, opset)

    def bound(x, w, b=None):
        return _apply(plan, x, w, b)
    return bound


def result_shape(shapes, keywords) -> tuple[int, ...]:
    """(N, M, out...) from X's and W's shapes and the kernel keywords (CONV-R1)."""
    x, w = shapes[0], shapes[1]
    out = output_spatial(tuple(x[2:]), tuple(keywords["kernel_shape"]), tuple(keywords["pads"]),
                         tuple(keywords["strides"]), tuple(keywords["dilations"]))
    return (x[0], w[0]) + out


# req: CONV-R6
def outside_bound(y: np.ndarray, x: np.ndarray, w: np.ndarray, b: np.ndarray | None, *, limit: int | None = None,
                  progress=None, **keywords) -> list[tuple]:
    """The elements of ``y`` outside CONV-R6's fast-mode bound, as (n, m, flat o, y, Y*, bound):
    per group, Gemm's bound (gemm.bound.outside_bound, GEMM-R7's form) of W's rows by the patch
    matrix with C = B[m] (beta = 1), K = C/group * prod(kernel)."""
    return outside_bounds([y], x, w, b, limit=limit, progress=progress, **keywords)[0]


def outside_bounds(ys, x: np.ndarray, w: np.ndarray, b: np.ndarray | None, *, limit: int | None = None,
                   progress=None, **keywords) -> list[list[tuple]]:
    """``outside_bound`` for several results of the same operands, one list per result: the
    patches and Gemm's screen of the operands are computed once for all of them."""
    from .gemm.bound import outside_bounds as gemm_outside
    plan = check(x, w, b, keywords["group"], _ints(keywords["kernel_shape"]), _ints(keywords["pads"]),
                 _ints(keywords["strides"]), _ints(keywords["dilations"]), "exact")
    cols = patches(x, plan)
    n, m, g = x.shape[0], w.shape[0], plan.group
    wm = w.reshape(m, -1)
    mg, kg = m // g, cols.shape[0] // g
    flat = [np.asarray(y).reshape(n, m, -1).swapaxes(0, 1).reshape(m, -1) for y in ys]
    found: list[list[tuple]] = [[] for _ in flat]
    for gi in range(g):
        rows = slice(gi * mg, (gi + 1) * mg)
        c = None if b is None else np.ascontiguousarray(np.broadcast_to(b[rows].reshape(mg, 1), (mg, cols.shape[1])))
        try:
            outside = gemm_outside([f[rows] for f in flat], wm[rows], cols[gi * kg:(gi + 1) * kg], c,
                                   limit=limit, progress=progress)
        except ValueError as exc:       # Gemm's operands A, B, C are W, the patches of X, and B here
            raise ValueError("Conv: X, W or B holds an infinity or a NaN; CONV-R6's fast-mode bound is "
                             "stated for finite operands, so the result is not judged") from exc
        for out, bad in zip(found, outside):
            for i, j, yij, exact, bnd in bad:
                out.append((j // (cols.shape[1] // n), gi * mg + i, j % (cols.shape[1] // n), yij, exact, bnd))
    return [f[:limit] if limit is not None else f for f in found]


def fast_bound_comparison(results, args, keywords, progress=None) -> list[str]:
    """How ``sonnx run --compare`` judges float results of a node (onnxruntime's, and sonnx's
    own): every element within CONV-R6's bound; per result "" when within, else the first
    element outside."""
    b = args[2] if len(args) > 2 else None
    return [_outside_reason(bad) for bad in
            outside_bounds(results, args[0], args[1], b, limit=1, progress=progress, **keywords)]


def _outside_reason(bad: list[tuple]) -> str:
    if not bad:
        return ""
    n, m, o, yv, exact, bnd = bad[0]
    return (f"Y[{n}, {m}, (flat {o})] = {yv!r} is {abs(yv - exact):.3g} from the exact {exact!r}, "
            f"bound {bnd:.3g} (CONV-R6)")


# ---------------------------------------------------------------- OpenVINO IR
def _ir_ints(layer, key: str, shown: str) -> tuple[int, ...] | None:
    """An IR attribute "a,b,..." as integers, None when the layer does not write it."""
    raw = layer.data.get(key)
    if raw is None:
        return None
    try:
        return tuple(int(v) for v in raw.split(",")) if raw.strip() else ()
    except ValueError:
        raise IRError(f"{shown}: {layer.where} has {key}={raw[:40]!r}, not a list of integers") from None


def _ir_geometry(layer, shown: str) -> dict:
    """The IR's strides, dilations, pads_begin, pads_end and auto_pad (OpenVINO's default
    "explicit": the pads as written; "notset" is the same)."""
    out = {k: _ir_ints(layer, k, shown) for k in ("strides", "dilations", "pads_begin", "pads_end")}
    out["auto_pad"] = layer.data.get("auto_pad", "explicit").strip().lower()
    return out


def _ir_filters(ins: list, grouped: bool) -> tuple | None:
    """The filters' shape as Conv's W (M, C/group, k...) and the group: GroupConvolution's
    (G, M/G, C/G, k...) merges its first two axes."""
    w = ins[1]
    if w is None or len(w) < 3 + grouped:
        return None
    if not grouped:
        return tuple(w), 1
    m = w[0] * w[1] if isinstance(w[0], int) and isinstance(w[1], int) else None
    return (m,) + tuple(w[2:]), w[0]


def _ir_shape(grouped: bool):
    def shape(layer, ins: list, shown: str):
        """OpenVINO's Convolution-1 / GroupConvolution-1 output shape with explicit pads (other
        auto_pad modes are CONV-R4's to refuse: no shape is computed for them)."""
        x, filt = ins[0], _ir_filters(ins, grouped)
        geo = _ir_geometry(layer, shown)
        if x is None or filt is None or geo["auto_pad"] not in ("explicit", "notset"):
            return None
        w, _ = filt
        r = len(x) - 2
        ks = w[2:]
        parts = [geo["strides"], geo["dilations"], geo["pads_begin"], geo["pads_end"]]
        if len(w) != len(x) or any(p is None or len(p) != r for p in parts) or \
                not all(isinstance(d, int) for d in tuple(x[2:]) + tuple(ks)):
            return None
        st, dl, pb, pe = parts
        out = tuple((x[2 + i] + pb[i] + pe[i] - (dl[i] * (ks[i] - 1) + 1)) // st[i] + 1 for i in range(r))
        return (x[0], w[0]) + out
    return shape


def _ir_rule_inputs(grouped: bool):
    def rule_inputs(layer, sigs: list, shown: str):
        """X and the filters as Conv's X and W, with Conv's attributes: group (1, or
        GroupConvolution's G), kernel_shape from the filters, pads = pads_begin + pads_end; an
        auto_pad other than explicit/notset is passed on for CONV-R4 to refuse."""
        x, w = sigs
        geo = _ir_geometry(layer, shown)
        filt = None if w.shape is None else _ir_filters([None, tuple(w.shape)], grouped)
        attrs = {"group": 1 if filt is None else filt[1], "strides": geo["strides"], "dilations": geo["dilations"],
                 "pads": None if geo["pads_begin"] is None or geo["pads_end"] is None
                 else geo["pads_begin"] + geo["pads_end"]}
        if filt is not None:
            w = TensorSig(filt[0], w.elem_type, w.sparse)
            attrs["kernel_shape"] = tuple(filt[0][2:])
        if geo["auto_pad"] not in ("explicit", "notset"):
            attrs["auto_pad"] = geo["auto_pad"].upper()
        note = "" if not grouped else "GroupConvolution's filters (G, M/G, C/G, k...) are read as Conv's W (M, C/G, k...) with group=G: "
        return [x, w], attrs, note
    return rule_inputs


def same_result(dtype: str, got, expected) -> bool:
    """Bit equality of two float values of ``dtype`` (a NaN equals any NaN: same_value)."""
    return same_value(dtype, got, expected)


def default_kernel_shape(inputs: tuple, attrs: dict, opset: int, constants: tuple = ()) -> list[int] | str:
    """The kernel_shape ONNX reads when it is omitted: W's spatial dimensions (W is (M, C/group,
    k1, ..., kn)); for ConformRule.defaults, written before the others that count the axes."""
    w = inputs[1] if len(inputs) > 1 else None
    if w is None or len(w) < 3 or not all(isinstance(d, int) for d in w[2:]):
        return "W's spatial dimensions are not known statically"
    return [int(d) for d in w[2:]]


def default_dilations(inputs: tuple, attrs: dict, opset: int, constants: tuple = ()) -> list[int] | str:
    """ONNX's default dilations: 1 along each spatial axis."""
    s = pool.default_strides(inputs, attrs, opset, constants)
    return s


# CONV-R4 refuses an omitted attribute that decides the result; conform writes ONNX's default for
# it (the value ONNX reads, so no bit changes), kernel_shape first (the others count its axes),
# and an auto_pad other than NOTSET as the explicit pads it means (ops/pool.py, auto_pads)
CONFORM = ConformRule(rule="CONV-R4", auto_pad=True,
                      defaults={"kernel_shape": default_kernel_shape, "group": 1,
                                "strides": pool.default_strides, "dilations": default_dilations,
                                "pads": pool.default_pads})

OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="convolution", conform=CONFORM, type_sets=TYPE_SETS, inputs=("X", "W", "B"), optional=("B",),
    attributes=ATTRIBUTES, constraints=node_constraints, reference=conv_reference, kernel=conv, bind=bind,
    spec="spec/conv.md", proofs=("proofs/conv.mlw",), kernel_attributes=KERNEL_ATTRIBUTES,
    output_shape=result_shape, comparison=fast_bound_comparison, theories=(),
    openvino=(IRLayer("Convolution", 1, 2, _ir_shape(False), _ir_rule_inputs(False)),
              IRLayer("GroupConvolution", 1, 2, _ir_shape(True), _ir_rule_inputs(True))))
