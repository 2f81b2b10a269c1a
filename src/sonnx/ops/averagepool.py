"""ONNX AveragePool under the SONNX profile: Y[n, c, o] = the average of X over the window of o
(spec/averagepool.md).

A pooling operator (ops/pool.py holds the shared window geometry, fold and division). The result
is defined bit for bit: the sum of the window's input elements in window order (row-major over
the kernel offsets), starting at the first input element (padding adds nothing), each addition
rounded to nearest even in T; then one division by T(count), rounded in T, where count is the
window's input elements (count_include_pad 0) or its taps inside the input and the explicit pads
(count_include_pad 1). Exact and fast modes are the same bits.
Checks: AVERAGEPOOL-R1 (the window attributes, as MaxPool's), AVERAGEPOOL-R2 (dense, type set),
AVERAGEPOOL-R3 (count_include_pad 0 or 1). Requirements: src/sonnx/ops/averagepool.toml.
Tests: tests/ops/test_averagepool.py.
"""
from __future__ import annotations

import icontract
from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import ProfileViolation, Violation, raise_if_any, wrong_type
from ..semantics import floats
from ..semantics.tensor import FULL_CONTRACTS, TensorValue, size
from . import kernel, pool
from .registry import ConformRule, Operator, each_result
from .signature import TensorSig, dense_and_typed, tensor_shape_violations

OP = "AveragePool"
PREFIX = "AVERAGEPOOL"
LATEST = 22
TYPE_SETS = {1: dtypes.IEEE_FLOATS, 7: dtypes.IEEE_FLOATS, 10: dtypes.IEEE_FLOATS, 11: dtypes.IEEE_FLOATS,
             19: dtypes.IEEE_FLOATS, 22: dtypes.IEEE_FLOATS | {"bfloat16"}}
CEIL_FROM, DILATIONS_FROM, COUNT_FROM = 10, 19, 7
RULES = pool.Rules(window="AVERAGEPOOL-R1")
KERNEL_ATTRIBUTES = {name: name for name in ("kernel_shape", "strides", "pads", "dilations", "ceil_mode",
                                             "count_include_pad", "auto_pad")}


# req: AVERAGEPOOL-R1, AVERAGEPOOL-R2, AVERAGEPOOL-R3
def constraints(x: TensorSig, *, opset: int, attrs: dict) -> tuple[list[Violation], pool.Geometry | None]:
    """Every violation of AVERAGEPOOL-R1 to R3 of an AveragePool node, and the geometry when none."""
    version, refused = kernel.version_in_force(OP, opset, "AVERAGEPOOL-R2")
    if version is None:
        return refused, None
    node = f"{OP}-{version}"
    found = dense_and_typed(OP, version, [("'X'", x)], dense_rule="AVERAGEPOOL-R2", type_rule="AVERAGEPOOL-R2",
                            hint=lambda e: ("; bfloat16 needs AveragePool-22: import opset 22 or later"
                                            if e == "bfloat16" else "; the profile defines no other element type"))
    window, geometry = pool.window_violations(node, None if x.sparse else x.shape, attrs, RULES,
                                              dilations=version >= DILATIONS_FROM, ceil=version >= CEIL_FROM)
    found.extend(window)
    include = attrs.get("count_include_pad")
    if include is not None:
        if version < COUNT_FROM:
            found.append(Violation("AVERAGEPOOL-R3", f"{node} has no count_include_pad attribute; import opset 7 or later"))
        elif isinstance(include, bool) or not isinstance(include, (int, np.integer)) or int(include) not in (0, 1):
            found.append(Violation("AVERAGEPOOL-R3", f"{node} has count_include_pad={include!r}; it must be 0 or 1"))
    return found, (geometry if not found else None)


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """The registry's constraint function: (input signatures, attributes, opset)."""
    return constraints(sigs[0], opset=opset, attrs=dict(attrs))[0]


# ---------------------------------------------------------------- reference kernel
def _attrs(kernel_shape, strides, pads, dilations, ceil_mode, count_include_pad) -> dict:
    out = {"kernel_shape": kernel_shape, "strides": strides, "pads": pads}
    for name, v in (("dilations", dilations), ("ceil_mode", ceil_mode), ("count_include_pad", count_include_pad)):
        if v is not None:
            out[name] = v
    return out


def _violations(x: TensorValue, kernel_shape, strides, pads, dilations=None, ceil_mode=None,
                count_include_pad=None) -> list[Violation]:
    sig = TensorSig(x.shape, x.dtype)
    return tensor_shape_violations(OP, [("'X'", sig)]) + constraints(
        sig, opset=LATEST, attrs=_attrs(kernel_shape, strides, pads, dilations, ceil_mode, count_include_pad))[0]


def _refusal(x, kernel_shape, strides, pads, dilations=None, ceil_mode=None, count_include_pad=None):
    return ProfileViolation(_violations(x, kernel_shape, strides, pads, dilations, ceil_mode, count_include_pad))


def _unravel(shape: tuple[int, ...], flat: int) -> tuple[int, ...]:
    out = []
    for d in reversed(shape):
        out.append(flat % d)
        flat //= d
    return tuple(reversed(out))


# req: AVERAGEPOOL-R1, AVERAGEPOOL-R2, AVERAGEPOOL-R4
@icontract.require(lambda x, kernel_shape, strides, pads, dilations, ceil_mode, count_include_pad:
                   not _violations(x, kernel_shape, strides, pads, dilations, ceil_mode, count_include_pad),
                   "AVERAGEPOOL-R1, AVERAGEPOOL-R2, AVERAGEPOOL-R3, PROF-R2", error=_refusal, enabled=FULL_CONTRACTS)
@icontract.require(lambda x: kernel.well_formed(x), enabled=FULL_CONTRACTS)
@icontract.ensure(lambda x, result: result.dtype == x.dtype and result.shape[:2] == x.shape[:2]
                  and len(result.data) == size(result.shape))
def averagepool_reference(x: TensorValue, kernel_shape, strides, pads, dilations=None, ceil_mode=None,
                          count_include_pad=None) -> TensorValue:
    """The reference kernel: per window, pool.reference_average of its input values in window
    order over its count."""
    raise_if_any(_violations(x, kernel_shape, strides, pads, dilations, ceil_mode, count_include_pad))
    g = constraints(TensorSig(x.shape, x.dtype), opset=LATEST,
                    attrs=_attrs(kernel_shape, strides, pads, dilations, ceil_mode, count_include_pad))[1]
    include = bool(count_include_pad)
    rnd = lambda v: floats.round_to(x.dtype, v)      # noqa: E731
    data = []
    for nc in range(x.shape[0] * x.shape[1]):
        for k in range(size(g.out)):
            at = _unravel(g.out, k)
            vals = pool.window_values(x.data, g, nc, at)
            count = pool.windows_with_padding_count(g, at) if include else len(vals)
            data.append(pool.reference_average(vals, count, rnd))
    return TensorValue(x.dtype, g.out_shape, data)


# ---------------------------------------------------------------- numpy kernel
_accepted = kernel.AcceptedCalls()


def _typed_ints(value, what, optional=False):
    if value is None and optional:
        return None
    if isinstance(value, (list, tuple, np.ndarray)) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in value):
        return tuple(int(v) for v in value)
    raise wrong_type("averagepool", what, "a list of integers", value, "")


def _typed_int(value, what):
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise wrong_type("averagepool", what, "an integer", value, "")
    return int(value)


# req: AVERAGEPOOL-R1, AVERAGEPOOL-R2, AVERAGEPOOL-R3
def check(x, kernel_shape, strides, pads, dilations, ceil_mode, count_include_pad, auto_pad, opset=LATEST):
    """Every check of the kernel's arguments (TypeError or ProfileViolation); (geometry, include)."""
    attrs = {"kernel_shape": _typed_ints(kernel_shape, "kernel_shape"), "strides": _typed_ints(strides, "strides"),
             "pads": _typed_ints(pads, "pads")}
    for name, value in (("dilations", _typed_ints(dilations, "dilations", optional=True)),
                        ("ceil_mode", _typed_int(ceil_mode, "ceil_mode")),
                        ("count_include_pad", _typed_int(count_include_pad, "count_include_pad"))):
        if value is not None:
            attrs[name] = value
    if auto_pad is not None:
        if not isinstance(auto_pad, (str, bytes)):
            raise wrong_type("averagepool", "auto_pad", "a string", auto_pad, "")
        attrs["auto_pad"] = auto_pad
    version, sigs = kernel.arguments("averagepool", opset, [("X", x)])
    found, geometry = constraints(sigs[0][1], opset=version, attrs=attrs)
    kernel.refuse(OP, sigs, found)
    return geometry, bool(attrs.get("count_include_pad", 0))


def _key(value):
    return tuple(value) if isinstance(value, list) else value


# req: AVERAGEPOOL-R4
@kernel.entry
def averagepool(x: np.ndarray, *, kernel_shape, strides, pads, dilations=None, ceil_mode=None,
                count_include_pad=None, auto_pad=None, opset: int = LATEST) -> np.ndarray:
    """ONNX AveragePool of an (N, C, d1, ..., dn) array: each element the sum of its window's
    input elements in window order (each addition rounded in T, no start value) divided once by
    T(count), rounded in T (AVERAGEPOOL-R4). kernel_shape, strides and pads have no default;
    dilations, ceil_mode and count_include_pad may be omitted (all 1, 0, 0)."""
    g, include = kernel.checked(_accepted, check, x, _key(kernel_shape), _key(strides), _key(pads),
                                _key(dilations), ceil_mode, count_include_pad, auto_pad, opset)
    return pool.average(x, g, include)


# req: AVERAGEPOOL-R4
def bind(x: np.ndarray, *, kernel_shape, strides, pads, dilations=None, ceil_mode=None, count_include_pad=None,
         auto_pad=None, opset: int = LATEST):
    """``averagepool`` checked once now for arrays like ``x``: a function of the array alone."""
    g, include = check(x, kernel_shape, strides, pads, dilations, ceil_mode, count_include_pad, auto_pad, opset)
    return lambda a: pool.average(a, g, include)


def result_shape(shapes, keywords) -> tuple[int, ...]:
    kw = dict(keywords)
    return check(np.broadcast_to(np.float32(0), tuple(shapes[0])), kw["kernel_shape"], kw["strides"], kw["pads"],
                 kw.get("dilations"), kw.get("ceil_mode"), kw.get("count_include_pad"), None)[0].out_shape


def order_bound_comparison(y, args, keywords, progress=None) -> str:
    """run --compare: onnxruntime sums in its own order; its result must lie within
    pool.outside_order_bound of the average (AVERAGEPOOL-R4's stated bound for another order)."""
    import ml_dtypes
    x = args[0]
    kw = {k: v for k, v in keywords.items() if k != "opset"}
    g, include = check(x, kw["kernel_shape"], kw["strides"], kw["pads"], kw.get("dilations"), kw.get("ceil_mode"),
                       kw.get("count_include_pad"), kw.get("auto_pad"))
    info = ml_dtypes.finfo(x.dtype)
    return pool.outside_order_bound(np.asarray(y), x, g, include, float(info.eps) / 2, float(info.smallest_subnormal))


OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="pool", type_sets=TYPE_SETS, inputs=("X",), optional=(),
    attributes={name: None for name in KERNEL_ATTRIBUTES},
    constraints=node_constraints, reference=averagepool_reference, kernel=averagepool, bind=bind,
    spec="spec/averagepool.md", proofs=("proofs/averagepool.mlw",), kernel_attributes=KERNEL_ATTRIBUTES,
    output_shape=result_shape, comparison=each_result(order_bound_comparison), theories=(),
    # conform writes omitted strides/pads with ONNX's default and auto_pad as explicit pads
    conform=ConformRule(rule="AVERAGEPOOL-R1", defaults=pool.DEFAULTS, auto_pad=True))
