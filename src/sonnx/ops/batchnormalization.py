"""ONNX BatchNormalization under the SONNX profile, inference form (spec/batchnormalization.md).

Y[i] = ((X[i] - mean[c]) / sqrt(var[c] + eps)) * scale[c] + B[c], c = (i / (d1 * ... * dn)) mod C
for X of shape (N, C, d1, ..., dn) in row-major order, each of the six operations rounded to
nearest even in T (no FMA, no fold into a scale and a shift), with the per-channel denominator
sqrt(var[c] + eps) computed once per channel; eps is the epsilon attribute (a float32 value)
rounded once to T. Exact and fast modes are the same bits.

Checks: BATCHNORMALIZATION-R1 (shapes: X of rank >= 2 with a static C, the four parameters of
shape (C), one output), R2 (dense, one element type T throughout, from the version's type set),
R3 (the inference form's attributes: epsilon written; training_mode absent or 0; is_test=1
written for versions 1 and 6; spatial absent or 1; version 1's required consumed_inputs and
momentum accepted and ignored: they decide no inference value),
R4 (scale, B, input_mean, input_var are constant initializers, not graph inputs), R5 (the value).
Requirements: src/sonnx/ops/batchnormalization.toml. Proof: proofs/batchnormalization.mlw.
Tests: tests/ops/test_batchnormalization.py, tests/crosshair/batchnormalization_cases.py.
"""
from __future__ import annotations

import math

import icontract
from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import ProfileViolation, Violation, raise_if_any
from ..semantics import floats
from ..semantics.tensor import FULL_CONTRACTS, TensorValue, size
from . import kernel
from .registry import Operator, each_result
from .signature import NotConstant, TensorSig, dense_and_typed, tensor_shape_violations

OP = "BatchNormalization"
PREFIX = "BATCHNORMALIZATION"
LATEST = 15
_FLOATS = dtypes.IEEE_FLOATS
_FROM_14 = dtypes.IEEE_FLOATS | {"bfloat16"}
# since_version -> X's element types (onnx's schemas; from 14 the parameters have their own type
# variables over the same set, which the profile does not use: one T throughout, R2)
TYPE_SETS = {1: _FLOATS, 6: _FLOATS, 7: _FLOATS, 9: _FLOATS, 14: _FROM_14, 15: _FROM_14}
INPUTS = ("X", "scale", "B", "input_mean", "input_var")
PARAMETERS = INPUTS[1:]
# the four parameters must be constants: the validator passes each one's value (or NotConstant)
# under "input:<name>"; the executor hands the initializers to the kernel by keyword
CONSTANT_INPUTS = {name: name for name in PARAMETERS}
KERNEL_ATTRIBUTES = {"epsilon": "epsilon", "momentum": "momentum", "training_mode": "training_mode",
                     "is_test": "is_test", "spatial": "spatial", "consumed_inputs": "consumed_inputs"}
IS_TEST_UNTIL = 6          # is_test exists in versions 1 and 6 (default 0: training)
SPATIAL_UNTIL = 7          # spatial exists in versions 1, 6 and 7 (default 1: per channel)
TRAINING_MODE_FROM = 14    # training_mode exists from 14 (default 0: inference)


def _int(value: object) -> int | None:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)


# req: BATCHNORMALIZATION-R3
def attribute_violations(version: int, attrs: dict) -> list[Violation]:
    """BATCHNORMALIZATION-R3: the attributes of the inference form, per version."""
    node = f"{OP}-{version}"
    r = "BATCHNORMALIZATION-R3"
    found = []
    eps = attrs.get("epsilon")
    if eps is None:
        # GR4: epsilon decides every result; ONNX's default 1e-5 is not read silently
        found.append(Violation(r, f"{node} does not write epsilon; the profile reads no default that "
                                  "decides the result: write epsilon (ONNX's default is 1e-05)"))
    elif isinstance(eps, (bool, np.bool_)) or not isinstance(eps, (float, int, np.floating, np.integer)):
        found.append(kernel.attribute_refused(r, node, "epsilon", repr(eps), "; it must be a float"))
    consumed = attrs.get("consumed_inputs")
    # version 1 requires it (onnx's checker refuses the node without it): an in-place memory
    # hint that decides no value, accepted there as a list of integers; later versions have none
    if version == 1 and (isinstance(consumed, (str, bytes)) or not isinstance(consumed, (tuple, list, np.ndarray))
                         or not all(_int(v) is not None for v in consumed)):
        found.append(Violation(r, f"{node} has consumed_inputs={consumed!r}; version 1 requires it as a list "
                                  "of integers (an in-place hint that decides no value)"))
    elif version > 1 and consumed is not None:
        found.append(kernel.legacy_attribute(r, node, "consumed_inputs", "an in-place hint of version 1",
                                             "remove it"))
    is_test = attrs.get("is_test")
    if version <= IS_TEST_UNTIL:
        if _int(is_test) != 1:
            shown = "omitted (ONNX's default 0: training)" if is_test is None else f"{is_test!r}"
            found.append(Violation(r, f"{node} has is_test {shown}; the profile defines the inference form "
                                      "only: write is_test=1, or import opset 9 or later"))
    elif is_test is not None:
        found.append(Violation(r, f"{node} has is_test, which only versions 1 and 6 have: remove it"))
    spatial = attrs.get("spatial")
    if version <= SPATIAL_UNTIL:
        if spatial is not None and _int(spatial) != 1:
            found.append(kernel.attribute_refused(r, node, "spatial", repr(spatial),
                                                  "; the profile defines the per-channel form only "
                                                  "(spatial=1, the default): parameters of shape (C)"))
    elif spatial is not None:
        found.append(Violation(r, f"{node} has spatial, which only versions 1 to 7 have: remove it"))
    mode = attrs.get("training_mode")
    if version >= TRAINING_MODE_FROM:
        if mode is not None and _int(mode) != 0:
            found.append(kernel.attribute_refused(r, node, "training_mode", repr(mode),
                                                  "; the profile defines the inference form only "
                                                  "(training_mode=0): export the model in eval mode"))
    elif mode is not None:
        found.append(Violation(r, f"{node} has training_mode, which only version 14 and later have: remove it"))
    momentum = attrs.get("momentum")
    # momentum only updates the running statistics in training: it decides no inference result
    if momentum is not None and (isinstance(momentum, (bool, np.bool_))
                                 or not isinstance(momentum, (float, int, np.floating, np.integer))):
        found.append(kernel.attribute_refused(r, node, "momentum", repr(momentum), "; it must be a float"))
    return found


# req: BATCHNORMALIZATION-R1, BATCHNORMALIZATION-R2, BATCHNORMALIZATION-R3, BATCHNORMALIZATION-R4
def constraints(sigs: list[TensorSig], *, opset: int, attrs: dict | None = None,
                values: dict | None = None) -> list[Violation]:
    """Every violation of BATCHNORMALIZATION-R1..R4 of a node with input signatures ``sigs``
    (X, scale, B, input_mean, input_var). ``values``: input name -> its constant value, or
    NotConstant (the validator); None: the kernel's arrays, constants by construction."""
    version, refused = kernel.version_in_force(OP, opset, "BATCHNORMALIZATION-R2")
    if version is None:
        return refused
    named = list(zip((f"'{n}'" for n in INPUTS), sigs))
    found = dense_and_typed(OP, version, named, dense_rule="BATCHNORMALIZATION-R2",
                            type_rule="BATCHNORMALIZATION-R2", hint=_type_hint)
    if len(sigs) != len(INPUTS):
        found.append(Violation("BATCHNORMALIZATION-R1", f"{OP}-{version} has {len(sigs)} inputs; it takes "
                                                        "five: X, scale, B, input_mean, input_var"))
        return found
    found.extend(attribute_violations(version, dict(attrs or {})))
    for name, value in (values or {}).items():
        if isinstance(value, NotConstant):
            # req: BATCHNORMALIZATION-R4
            found.append(Violation("BATCHNORMALIZATION-R4", f"{OP}-{version} input {name} is {value.why}; "
                                   "scale, B, input_mean and input_var must be constant initializers that "
                                   "are not graph inputs (the trained statistics of the inference form); "
                                   "a Constant node feeding one: `sonnx conform` stores it as an initializer"))
    x = sigs[0]
    if x.sparse or x.shape is None:
        return found
    if len(x.shape) < 2:
        found.append(Violation("BATCHNORMALIZATION-R1", f"{OP}-{version} input X has rank {len(x.shape)}; it "
                                                        "must be (N, C, d1, ..., dn), rank 2 or more"))
        return found
    c = x.shape[1]
    if not isinstance(c, int) or isinstance(c, bool):
        found.append(Violation("BATCHNORMALIZATION-R1", f"{OP}-{version} input X has the channel dimension "
                                                        f"{c!r}; C must be static (an integer)"))
        return found
    for name, s in zip(PARAMETERS, sigs[1:]):
        if s.sparse or s.shape is None:
            continue
        if tuple(s.shape) != (c,):
            found.append(Violation("BATCHNORMALIZATION-R1", f"{OP}-{version} input {name} has shape "
                                   f"{tuple(s.shape)}; it must be (C,) = ({c},), one value per channel of X "
                                   f"(shape {tuple(x.shape)}); nothing is broadcast"))
    return found


def _type_hint(elem: str) -> str:
    if elem == "bfloat16":
        return "; bfloat16 needs BatchNormalization-14: import opset 14 or later"
    return "; the profile defines no other element type"


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """The registry's constraint function: (input signatures, attributes, opset). The validator
    passes the four parameters' constant values under "input:<name>" (constant_inputs)."""
    attrs = dict(attrs)
    values = {name: attrs.pop("input:" + name) for name in PARAMETERS if "input:" + name in attrs}
    return constraints(list(sigs), opset=opset, attrs=attrs, values=values)


# req: BATCHNORMALIZATION-R1
def output_violations(named: int, opset: int) -> list[Violation]:
    """The registry's output check: the inference form names Y only (the running statistics and
    saved mean/variance are training outputs)."""
    if named <= 1:
        return []
    return [Violation("BATCHNORMALIZATION-R1", f"{OP} node names {named} outputs; the profile defines the "
                                               "inference form, whose only output is Y: remove the others "
                                               "(they are the training form's statistics)")]


# ---------------------------------------------------------------- the stated sequence, one element
def epsilon_in(dtype: str, epsilon: float) -> float:
    """eps in T: the attribute read as the float32 it is in ONNX, rounded once to T."""
    # req: BATCHNORMALIZATION-R5
    return floats.round_to(dtype, floats.round_to("float", float(epsilon)))


def _quotient(dtype: str, a: float, b: float) -> float:
    """a / b rounded in T with IEEE's special cases (Python raises on a zero divisor)."""
    if math.isnan(a) or math.isnan(b) or (a == 0 and b == 0) or (math.isinf(a) and math.isinf(b)):
        return math.nan
    if b == 0:
        return -math.inf if floats.is_negative(a) != floats.is_negative(b) else math.inf
    return floats.round_to(dtype, a / b)


# req: BATCHNORMALIZATION-R5
def denominator(dtype: str, var: float, eps: float) -> float:
    """sqrt_T(var + eps), each of the two operations rounded in T; a negative sum gives NaN
    (IEEE's sqrt), sqrt(-0) = -0. Python's sum of two values of T, and its correctly rounded
    sqrt of a value of T, rounded again to T are T's own (binary64 has >= 2p + 2 bits for
    float16, bfloat16 and float; for double round_to is the identity)."""
    s = floats.round_to(dtype, var + eps)
    if math.isnan(s) or s < 0:
        return math.nan
    return floats.round_to(dtype, math.sqrt(s))


# req: BATCHNORMALIZATION-R5
def normalized(dtype: str, x: float, mean: float, d: float, scale: float, b: float) -> float:
    """((x - mean) / d) * scale + b, each operation rounded to nearest even in T, in this order."""
    t = floats.round_to(dtype, x - mean)
    q = _quotient(dtype, t, d)
    m = floats.round_to(dtype, q * scale)
    return floats.round_to(dtype, m + b)


def channel(shape: tuple[int, ...], i: int) -> int:
    """The channel of flat row-major index i of an (N, C, d1, ..., dn) tensor: (i / HW) mod C."""
    # req: BATCHNORMALIZATION-R5
    return (i // size(shape[2:])) % shape[1]


# ---------------------------------------------------------------- reference kernel
def _violations(x, scale, b, mean, var, epsilon) -> list[Violation]:
    sigs = [TensorSig(t.shape, t.dtype) for t in (x, scale, b, mean, var)]
    return (tensor_shape_violations(OP, list(zip(INPUTS, sigs)))
            + constraints(sigs, opset=LATEST, attrs={"epsilon": epsilon}))


def _refusal(x, scale, b, mean, var, epsilon) -> ProfileViolation:
    return ProfileViolation(_violations(x, scale, b, mean, var, epsilon))


def _every_element_stated(x, scale, b, mean, var, epsilon, result) -> bool:
    """R5 element by element, as proofs/batchnormalization.mlw's bn_element."""
    t = x.dtype
    eps = epsilon_in(t, epsilon)
    return all(kernel.same_bits(t, result.data[i], normalized(
        t, x.data[i], mean.data[c], denominator(t, var.data[c], eps), scale.data[c], b.data[c]))
        for i in range(len(x.data)) for c in (channel(x.shape, i),))


# req: BATCHNORMALIZATION-R1, BATCHNORMALIZATION-R2, BATCHNORMALIZATION-R3, BATCHNORMALIZATION-R5
@icontract.require(lambda x, scale, b, mean, var, epsilon: not _violations(x, scale, b, mean, var, epsilon),
                   "BATCHNORMALIZATION-R1..R3, PROF-R2", error=_refusal, enabled=FULL_CONTRACTS)
@icontract.require(lambda x, scale, b, mean, var: all(kernel.well_formed(t) for t in (x, scale, b, mean, var)),
                   enabled=FULL_CONTRACTS)
@icontract.ensure(lambda x, result: result.dtype == x.dtype and result.shape == x.shape
                  and len(result.data) == len(x.data))
@icontract.ensure(lambda x, scale, b, mean, var, epsilon, result:
                  _every_element_stated(x, scale, b, mean, var, epsilon, result), enabled=FULL_CONTRACTS)
def batchnormalization_reference(x: TensorValue, scale: TensorValue, b: TensorValue, mean: TensorValue,
                                 var: TensorValue, epsilon: float) -> TensorValue:
    """The reference kernel: the per-channel denominators d[c] = sqrt_T(var[c] + eps) once,
    then y[i] = ((x[i] - mean[c]) / d[c]) * scale[c] + b[c] with c = channel(shape, i)."""
    raise_if_any(_violations(x, scale, b, mean, var, epsilon))
    t = x.dtype
    eps = epsilon_in(t, epsilon)
    d = [denominator(t, v, eps) for v in var.data]
    data = []
    for i, v in enumerate(x.data):
        c = channel(x.shape, i)
        data.append(normalized(t, v, mean.data[c], d[c], scale.data[c], b.data[c]))
    return TensorValue(t, x.shape, data)


# ---------------------------------------------------------------- numpy kernel
_accepted = kernel.AcceptedCalls()


# req: BATCHNORMALIZATION-R1, BATCHNORMALIZATION-R2, BATCHNORMALIZATION-R3
def check(x, scale, b, mean, var, epsilon, momentum, training_mode, is_test, spatial, consumed_inputs,
          opset) -> tuple[int, ...]:
    """Every check of the kernel's arguments (TypeError or ProfileViolation); X's shape."""
    version, sigs = kernel.arguments("batchnormalization", opset, list(zip(INPUTS, (x, scale, b, mean, var))))
    if epsilon is not None and (isinstance(epsilon, (bool, np.bool_))
                                or not isinstance(epsilon, (float, int, np.floating, np.integer))):
        raise TypeError(f"sonnx.batchnormalization: epsilon must be a float, not {type(epsilon).__name__}")
    attrs = {"epsilon": epsilon, "momentum": momentum, "training_mode": training_mode, "is_test": is_test,
             "spatial": spatial, "consumed_inputs": consumed_inputs}
    kernel.refuse(OP, sigs, constraints([s for _, s in sigs], opset=version,
                                        attrs={k: v for k, v in attrs.items() if v is not None}))
    return sigs[0][1].shape


def _in_t(fn, dtype: np.dtype, *operands: np.ndarray) -> np.ndarray:
    """fn over the operands rounded once to T: float and double natively (IEEE's operation in
    T); float16 and bfloat16 in float32, then rounded to T, which is T's correctly rounded result
    for +, -, *, / and sqrt because float32's 24 bits are at least 2p + 2 for their p = 11 and 8
    (Figueroa, "When is double rounding innocuous?", 1995; the argument of spec/div.md)."""
    if dtype in (np.float32, np.float64):
        return fn(*operands)
    return fn(*(o.astype(np.float32) for o in operands)).astype(dtype)


def parameters(x_shape: tuple[int, ...], dtype: np.dtype, scale, b, mean, var, epsilon: float):
    """The per-channel operands shaped (1, C, 1, ..., 1) (the kernel's own indexing, the channel
    map of R5, not an ONNX broadcast): mean, d = sqrt_T(var + eps) computed once, scale, B."""
    shaped = (1, x_shape[1]) + (1,) * (len(x_shape) - 2)
    dtype = dtype.newbyteorder("=")
    name = dtypes.name_of(dtype)
    eps = np.full((x_shape[1],), epsilon_in(name, epsilon)).astype(dtype)     # exact: a value of T
    native = [a.astype(a.dtype.newbyteorder("="), copy=False) for a in (scale, b, mean, var)]
    scale, b, mean, var = native
    with np.errstate(all="ignore"):
        d = _in_t(np.sqrt, dtype, _in_t(np.add, dtype, var, eps))          # req: BATCHNORMALIZATION-R5
    return tuple(a.reshape(shaped) for a in (mean, d, scale, b))


# req: BATCHNORMALIZATION-R5
def _apply(x: np.ndarray, params) -> np.ndarray:
    """((x - mean) / d) * scale + B, four separate operations each rounded in T, in this order."""
    mean, d, scale, b = params
    dt = x.dtype.newbyteorder("=")
    x = x.astype(dt, copy=False)
    with np.errstate(all="ignore"):
        if dt in (np.float32, np.float64):      # IEEE's operations of T, in one buffer
            y = np.subtract(x, mean)
            np.divide(y, d, out=y)
            np.multiply(y, scale, out=y)
            return np.add(y, b, out=y)
        t = _in_t(np.subtract, dt, x, mean)
        q = _in_t(np.divide, dt, t, d)
        m = _in_t(np.multiply, dt, q, scale)
        return _in_t(np.add, dt, m, b)


# req: BATCHNORMALIZATION-R5
@kernel.entry
def batchnormalization(X: np.ndarray, scale: np.ndarray, B: np.ndarray, input_mean: np.ndarray,
                       input_var: np.ndarray, *, epsilon: float | None = None, momentum: float | None = None,
                       training_mode: int | None = None, is_test: int | None = None, spatial: int | None = None,
                       consumed_inputs: tuple | None = None, opset: int = LATEST) -> np.ndarray:
    """ONNX BatchNormalization, inference form, of an (N, C, d1, ..., dn) array X with the four
    per-channel parameters of shape (C,), all of one float type T: Y[i] = ((X[i] - input_mean[c])
    / sqrt(input_var[c] + eps)) * scale[c] + B[c] (c the channel of i), each operation rounded to
    nearest even in T, eps = epsilon (a float32 value, required) rounded to T. momentum is
    accepted and ignored (training only); training_mode must be 0, is_test 1 (versions 1 and 6),
    spatial 1; consumed_inputs (required by version 1 only) a list of integers, ignored. Raises ``sonnx.ProfileViolation`` for what the profile refuses."""
    consumed = tuple(consumed_inputs) if isinstance(consumed_inputs, list) else consumed_inputs   # memo key
    shape = kernel.checked(_accepted, check, X, scale, B, input_mean, input_var, epsilon, momentum,
                           training_mode, is_test, spatial, consumed, opset)
    return _apply(X, parameters(shape, X.dtype, scale, B, input_mean, input_var, epsilon))


# req: BATCHNORMALIZATION-R5
def bind(X: np.ndarray, scale: np.ndarray, B: np.ndarray, input_mean: np.ndarray, input_var: np.ndarray, *,
         epsilon: float | None = None, momentum: float | None = None, training_mode: int | None = None,
         is_test: int | None = None, spatial: int | None = None, consumed_inputs: tuple | None = None,
         opset: int = LATEST):
    """``batchnormalization`` checked once now, with these constant parameters: a function of X
    (the denominators computed once, here)."""
    shape = check(X, scale, B, input_mean, input_var, epsilon, momentum, training_mode, is_test, spatial,
                  consumed_inputs, opset)
    # the denominators are computed here, when sonnx.run plans, outside the executor's guard:
    # in the proofs' environment too (tests/fpenv/test_batchnormalization_fpenv.py)
    params = kernel.entry(parameters)(shape, X.dtype, scale, B, input_mean, input_var, epsilon)
    return lambda a: _apply(a, params)


def result_shape(shapes, keywords) -> tuple[int, ...]:
    return tuple(shapes[0])


BOUND_ULPS = 16     # the comparison bound's factor of u (unit roundoff of T) and of tiny


def outside_bound(y, args, keywords, progress=None) -> str:
    """run --compare: another runtime computes BatchNormalization in its own sequence
    (onnxruntime folds it into X * a + b); its result must lie within BOUND_ULPS * (u * M + tiny)
    of the formula's value computed in long double, M = (|x| + |mean|) * |scale| / d + |B| (u the
    unit roundoff of T, tiny its smallest subnormal): each of a handful of operations of any such
    sequence errs by at most u times a term of M. Operands holding an infinity or a NaN, or a
    channel whose var + eps is not positive: not compared (ValueError)."""
    import ml_dtypes
    x, scale, b, mean, var = (np.asarray(a) for a in args)
    ld = np.longdouble
    operands = [a.astype(ld) for a in (x, scale, b, mean, var)]
    if not all(np.isfinite(a).all() for a in operands):
        raise ValueError("an operand holds an infinity or a NaN; the bound is stated for finite operands")
    xl, sl, bl, ml, vl = operands
    eps = ld(epsilon_in(dtypes.name_of(x.dtype), keywords.get("epsilon", 1e-5)))
    if not (vl + eps > 0).all():
        raise ValueError("a channel's input_var + epsilon is not positive; the bound is stated for positive ones")
    shaped = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    d = np.sqrt(vl + eps).reshape(shaped)
    sl, bl, ml = (a.reshape(shaped) for a in (sl, bl, ml))
    exact = (xl - ml) / d * sl + bl
    magnitude = (np.abs(xl) + np.abs(ml)) * np.abs(sl) / d + np.abs(bl)
    info = ml_dtypes.finfo(x.dtype)
    allowed = BOUND_ULPS * (ld(float(info.eps)) / 2 * magnitude + ld(float(info.smallest_subnormal)))
    got = np.asarray(y).astype(ld)
    bad = np.flatnonzero(~(np.abs(got - exact) <= allowed))
    if bad.size:
        i = int(bad[0])
        return (f"{bad.size} element(s) outside the stated bound, first at flat index {i}: "
                f"{float(got.reshape(-1)[i])!r}, the formula's value {float(exact.reshape(-1)[i])!r}, "
                f"allowed {float(allowed.reshape(-1)[i])!r}")
    return ""


OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="normalization", type_sets=TYPE_SETS, inputs=INPUTS, optional=(),
    attributes={"epsilon": None, "momentum": None, "training_mode": None, "is_test": None, "spatial": None,
                "consumed_inputs": None},
    constraints=node_constraints, reference=batchnormalization_reference, kernel=batchnormalization, bind=bind,
    spec="spec/batchnormalization.md", proofs=("proofs/batchnormalization.mlw",),
    kernel_attributes=KERNEL_ATTRIBUTES, constant_inputs=CONSTANT_INPUTS, output_shape=result_shape,
    comparison=each_result(outside_bound), theories=("proofs/tensor.mlw",), outputs=output_violations)
