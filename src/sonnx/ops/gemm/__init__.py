"""ONNX Gemm under the SONNX profile: constraints, reference kernel, exact and fast kernels.

``constraints`` is the only place where GEMM-R1..R6 are decided; the kernels and the model
validator call it. GEMM-R7 (the result) is implemented by ``gemm_reference`` (plain Python
loops, the concrete level of proofs/gemm.mlw), by the exact kernel (the same fold compiled
with llvmlite, bit-exact with the reference; for integer T, and for float32/float64 up to the
size rule of the record's C binding, C_DEFAULT_SIZES, the C kernel extracted from
proofs/gemm_c.mlw instead, the same bits) and bounded for the fast kernel (BLAS).
Spec: spec/gemm.md. Proofs: proofs/gemm.mlw. Tests: tests/ops/test_gemm.py.
"""
from __future__ import annotations

import ctypes
import numbers
import os
import threading
from typing import Callable, NamedTuple

import icontract
from ...deferred import numpy as np  # imported on first use: the validator needs no numpy

from ... import dtypes, fpenv
from ...errors import Violation, raise_if_any, shown
from ...semantics import floats, intloops
from ...semantics.values import same_value
from .. import kernel, symdims
from . import fold
from ..elementwise import INT_ROUTE_PROOF
from ..registry import (HALF_CONVERSIONS_CHECKED, CBinding, CCall, CEntry, ConformRule, CRoute, CSizeRule,
                        Operator)
from ..signature import TensorSig, dense_and_typed, tensor_shape_violations
from ...semantics.tensor import TensorValue, size

OP = "Gemm"
LATEST = 13
# since_version -> element types, from the onnx schemas (tests/test_dtypes.py compares them)
TYPE_SETS = {
    1: dtypes.IEEE_FLOATS,
    6: dtypes.IEEE_FLOATS,
    7: dtypes.IEEE_FLOATS,
    9: dtypes.IEEE_FLOATS | dtypes.WIDE_INTS,
    11: dtypes.IEEE_FLOATS | dtypes.WIDE_INTS,
    13: dtypes.IEEE_FLOATS | dtypes.WIDE_INTS | {"bfloat16"},
}
ATTRIBUTES = {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0, "broadcast": None}


def _is_float32_value(x: object) -> bool:
    """True when ``x`` is a real number that a binary32 ONNX FLOAT attribute holds exactly:
    its value (not a rounding of it: 2**53 + 1 is not 2**53) is NaN, an infinity or a float32."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return False
    try:
        v = float(x)                        # exact for float32 values; 10**400 overflows
        # floats.round_to: RNE in pure Python (no numpy: the validator runs this), whatever the
        # FPU's rounding mode; a double beyond float32 becomes inf: not equal
        return v != v or (floats.round_to("float", v) == v and v == x)
    except (ArithmeticError, ValueError, TypeError):
        return False


def _type_hint(elem: str, op: str = OP) -> str:
    """The way out for a type of a later version's set (Gemm's and MatMul's sets grow alike)."""
    if elem == "bfloat16":
        return f"; bfloat16 needs {op}-13: import opset 13 or later"
    if elem in ("int32", "int64", "uint32", "uint64"):
        return f"; integer {op} needs {op}-9: import opset 9 or later"
    return ""


def _dim_text(d: object) -> str:
    return str(d) if isinstance(d, (int, str)) and d != "" else "?"


def _bias_fix(c_shape: tuple, m: object, n: object) -> str:
    """The ways out of GEMM-R4 that work: sonnx conform for a constant C, the exporter-side
    form for PyTorch (checked by tests/conform: torch still exports nn.Linear's own bias as (N)
    whatever the batch, and an Expand node would be PROF-R1)."""
    mn = f"({_dim_text(m)}, {_dim_text(n)})"
    pin = "" if isinstance(m, int) and isinstance(n, int) else \
        " (first pin the symbolic dimensions: --dim NAME=SIZE)"
    conform = (f"`sonnx conform MODEL -o OUT`{pin} stores a constant C expanded to {mn} "
               "without changing any output bit")
    aligned = list(zip(reversed(c_shape), (n, m)))
    if len(c_shape) > 2 or any(_differs(x, y) and x != 1 for x, y in aligned):
        return (f"C does not even broadcast to {mn} (ONNX refuses it too): give C the shape {mn}")
    if tuple(c_shape) in ((n,), (1, n)):
        return (f"this is the usual nn.Linear bias; {conform}; or store it yourself as the "
                f"initializer of C, numpy.broadcast_to(bias, {mn}).copy(); from PyTorch, export with "
                "a static batch and write the layer as torch.addmm(bias_mn, x, W.t()) with bias_mn "
                f"a registered buffer already of shape {mn}")
    return (f"{conform}; or store numpy.broadcast_to(c, {mn}).copy() as C yourself (a C computed "
            "by the graph cannot be expanded in the profile: compute it at the full shape)")


def _known(d: object) -> bool:
    return isinstance(d, int) and not isinstance(d, bool)


def _differs(x: object, y: object) -> bool:
    """Two dimensions known to differ: both static and unequal (a symbol may be anything)."""
    return _known(x) and _known(y) and x != y


def constraints(a: TensorSig, b: TensorSig, c: TensorSig | None, *, opset: int = LATEST,
                alpha: float = 1.0, beta: float = 1.0, trans_a: int = 0, trans_b: int = 0,
                broadcast: int | None = None) -> list[Violation]:
    """Every profile violation of a Gemm node with inputs ``a``, ``b``, ``c`` under ``opset``.

    ``c`` is None when the optional input C is absent; ``broadcast`` is the legacy attribute
    of Gemm-1 and Gemm-6 (None when absent). Shapes are given as stored (before transA/transB).
    """
    found: list[Violation] = []
    version, refused = kernel.version_in_force(OP, opset, "GEMM-R3")
    if version is None:
        return refused
    inputs = [("A", a), ("B", b)] + ([("C", c)] if c is not None else [])

    # GEMM-R2 (dense) and GEMM-R3 (one element type of the version's type set)
    found.extend(dense_and_typed(OP, version, inputs, dense_rule="GEMM-R2", type_rule="GEMM-R3",
                                 hint=_type_hint))
    allowed = OPERATOR.type_sets[version]

    # GEMM-R5: attributes and required inputs per version
    for name, value in (("transA", trans_a), ("transB", trans_b)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value not in (0, 1):
            found.append(kernel.attribute_refused("GEMM-R5", OP, name, shown(value),
                                                  "; the profile accepts only 0 or 1 (write "
                                                  f"{name}=1 to transpose, 0 or nothing otherwise)"))
    if broadcast is not None:
        if version >= 7:
            found.append(Violation("GEMM-R5", f"Gemm-{version} has no attribute 'broadcast' (it was removed "
                                              "in Gemm-7); remove it"))
        elif broadcast != 0:
            found.append(kernel.attribute_refused("GEMM-R5", f"{OP}-{version}", "broadcast", broadcast,
                                                  "; the profile forbids broadcasting: remove the "
                                                  "attribute and give C the shape (M, N)"))
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not _is_float32_value(value):
            found.append(kernel.attribute_refused("GEMM-R5", OP, name, shown(value),
                                                  ", not a 32-bit float value (the ONNX attribute type "
                                                  f"FLOAT); pass numpy.float32({shown(value)}) explicitly "
                                                  "so that the rounding is visible"))
    if c is None and version < 11:
        found.append(Violation("GEMM-R5", f"Gemm-{version} requires the input C (it is optional only from "
                                          "Gemm-11); give a zero C of shape (M, N), or import opset 11 "
                                          "or later"))

    # GEMM-R6: integer Gemm is alpha = beta = 1
    elem = a.elem_type if a.elem_type in allowed else None
    if elem is not None and not dtypes.is_float(elem):
        for name, value in (("alpha", alpha), ("beta", beta)):
            if _is_float32_value(value) and float(value) != 1.0:
                found.append(kernel.attribute_refused(
                    "GEMM-R6", f"{OP} with integer type {elem}", name, shown(value),
                    "; ONNX leaves float-times-integer arithmetic undefined, so the profile requires "
                    f"{name}=1.0: scale the integer inputs (or the result) explicitly instead"))

    # GEMM-R1: rank 2, inner dimensions agree. A rule is reported wherever the shapes already
    # establish it, even when some dimensions are symbolic or unknown (PROF-R2 reports those):
    # a dimension is compared only with a static one, so no violation is ever guessed
    ranks_ok = True
    for what, t in (("A", a), ("B", b)):
        if not t.sparse and t.shape is not None and len(t.shape) != 2:
            ranks_ok = False
            found.append(Violation("GEMM-R1", f"Gemm input {what} has rank {len(t.shape)} (shape "
                                              f"{tuple(t.shape)}); it must be a matrix of rank 2: "
                                              "store it as 2-D (reshape a constant operand's initializer, "
                                              "or an array with .reshape; Flatten and Reshape nodes are "
                                              "not in the profile)"))
    if not ranks_ok or a.sparse or b.sparse or a.shape is None or b.shape is None:
        return found
    ta = _transposes(trans_a)
    tb = _transposes(trans_b)
    m, ka = (a.shape[1], a.shape[0]) if ta else (a.shape[0], a.shape[1])
    kb, n = (b.shape[1], b.shape[0]) if tb else (b.shape[0], b.shape[1])
    if _differs(ka, kb):
        found.append(Violation("GEMM-R1", f"Gemm inner dimensions disagree: A{'^T' if ta else ''} "
                                          f"is {_dim_text(m)} x {ka} and B{'^T' if tb else ''} is {kb} x "
                                          f"{_dim_text(n)} (A {tuple(a.shape)}, transA={shown(trans_a)}; "
                                          f"B {tuple(b.shape)}, transB={shown(trans_b)}); fix "
                                          "transA/transB or the shapes"))
        return found

    # GEMM-R4: C absent or exactly (M, N). With symbolic dimensions it is reported when no
    # value of them with agreeing inner dimensions makes C (M, N) (symdims): a C of another
    # rank never is, nor ("s", "s") with (M, N) = (2, 3)
    if c is not None and not c.sparse and c.shape is not None:
        cs = tuple(c.shape)
        terms = symdims.Dims()
        (ta_, tb_), tc = (terms.shape(a.shape), terms.shape(b.shape)), terms.shape(cs)
        (tm, tka), (tkb, tn) = _oriented(ta_, ta), _oriented(tb_, tb)
        if len(cs) != 2 or not symdims.solvable([(tka, tkb), (tc[0], tm), (tc[1], tn)]):
            result = f"({m}, {n})" if _known(m) and _known(n) else f"(M, N) = ({_dim_text(m)}, {_dim_text(n)})"
            found.append(Violation("GEMM-R4", f"Gemm input C has shape {cs}, not the result shape "
                                              f"{result}; the profile forbids broadcasting C: "
                                              + _bias_fix(cs, m, n)))
    return found


def _oriented(pair: list, transposed: bool) -> tuple:
    """The two dimensions of a matrix operand in the order the product reads them."""
    return (pair[1], pair[0]) if transposed else (pair[0], pair[1])


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """``constraints`` of a node: its input signatures and attributes as the validator reads them."""
    a, b, c = (list(sigs) + [None])[:3]
    get = {**ATTRIBUTES, **attrs}.get
    return constraints(a, b, c, opset=opset, alpha=get("alpha"), beta=get("beta"),
                       trans_a=get("transA"), trans_b=get("transB"), broadcast=get("broadcast"))


def _transposes(flag: object) -> bool:
    """ONNX's reading of transA/transB (any non-zero integer transposes); used only to report
    shape problems sensibly when GEMM-R5 has already refused a value other than 0 or 1."""
    return isinstance(flag, numbers.Integral) and flag != 0


# ---------------------------------------------------------------- reference kernel
def accumulation_type(dtype: str) -> str:
    """The type every product and sum is rounded in (GEMM-R7): float32 for float16, bfloat16 and
    float, float64 for double, T itself for the integer types."""
    if dtype in ("float16", "bfloat16", "float"):
        return "float"
    return dtype


# ---------------------------------------------------------------- contracts (icontract)
# Read by CrossHair (tests/crosshair/) and checked by icontract at run time. Preconditions are
# the requirements; postconditions state the semantics independently of the loop: indices by
# divmod (the inverse of the offset formula, as lemma idx_divmod in proofs/gemm.mlw), values
# through numpy's 2-D transpose and, for floats, a fold in numpy's own IEEE scalar arithmetic
# (not floats.round_to), for integers by congruence modulo 2**bits.

def _index_args_ok(m: int, k: int, i: int, l: int) -> bool:
    return 0 < m and 0 < k and 0 <= i < m and 0 <= l < k


# GEMM-R1: A'[i, l] is read in bounds, at row l, column i of A (K, M) when transA, else row i,
# column l of A (M, K)
@icontract.require(lambda m, k, i, l: _index_args_ok(m, k, i, l))
@icontract.ensure(lambda m, k, result: 0 <= result < m * k)
@icontract.ensure(lambda ta, m, k, i, l, result: divmod(result, m) == (l, i) if ta else divmod(result, k) == (i, l))
def a_index(ta: bool, m: int, k: int, i: int, l: int) -> int:
    """Flat index of A'[i, l]: A is (M, K) row-major, or (K, M) when transA."""
    return l * m + i if ta else i * k + l


# GEMM-R1: B'[l, j] is read in bounds, at row j, column l of B (N, K) when transB, else row l,
# column j of B (K, N)
@icontract.require(lambda k, n, l, j: _index_args_ok(k, n, l, j))
@icontract.ensure(lambda k, n, result: 0 <= result < k * n)
@icontract.ensure(lambda tb, k, n, l, j, result: divmod(result, k) == (j, l) if tb else divmod(result, n) == (l, j))
def b_index(tb: bool, k: int, n: int, l: int, j: int) -> int:
    """Flat index of B'[l, j]: B is (K, N) row-major, or (N, K) when transB."""
    return j * k + l if tb else l * n + j


def _sig(t: TensorValue | None) -> TensorSig | None:
    return None if t is None else TensorSig(t.shape, t.dtype)


_well_formed = kernel.well_formed


def _violations(a, b, c, alpha, beta, trans_a, trans_b) -> list[Violation]:
    sigs = [("A", _sig(a)), ("B", _sig(b))] + ([("C", _sig(c))] if c is not None else [])
    return tensor_shape_violations(OP, sigs) + constraints(
        _sig(a), _sig(b), _sig(c), alpha=alpha, beta=beta, trans_a=int(trans_a), trans_b=int(trans_b))


def _matrices(a, b, c, trans_a, trans_b):
    """A', B', C as 2-D object arrays, through numpy's reshape and transpose (not the index
    helpers)."""
    ap = np.array(a.data, dtype=object).reshape(a.shape)
    bp = np.array(b.data, dtype=object).reshape(b.shape)
    cm = None if c is None else np.array(c.data, dtype=object).reshape(c.shape)
    return (ap.T if trans_a else ap), (bp.T if trans_b else bp), cm


def _exact_mode_ok(a, b, c, alpha, beta, trans_a, trans_b, result) -> bool:
    """GEMM-R7, stated independently: integers by congruence with the exact integer sum;
    floats by the fold of docs/design.md in numpy's IEEE scalars of the accumulation type."""
    ap, bp, cm = _matrices(a, b, c, trans_a, trans_b)
    m, k = ap.shape
    n = bp.shape[1]
    y = np.array(result.data, dtype=object).reshape(m, n)
    if not dtypes.is_float(a.dtype):
        modulus = 1 << dtypes.bits(a.dtype)
        for i in range(m):
            for j in range(n):
                exact = sum(ap[i, l] * bp[l, j] for l in range(k)) + (0 if cm is None else cm[i, j])
                if (y[i, j] - exact) % modulus != 0:
                    return False
        return True
    acc = dtypes.numpy_dtype(accumulation_type(a.dtype)).type
    out = dtypes.numpy_dtype(a.dtype)
    with np.errstate(all="ignore"):
        for i in range(m):
            for j in range(n):
                s = acc(0.0)
                for l in range(k):
                    s = s + acc(ap[i, l]) * acc(bp[l, j])      # two numpy scalar ops: two roundings
                r = acc(alpha) * s
                if cm is not None:
                    r = r + acc(beta) * acc(cm[i, j])
                if not same_value(a.dtype, float(np.array(r).astype(out)), y[i, j]):
                    return False
    return True


# float accumulation types only: integer T goes through intloops.dot_wrap
def _add(acc: str, x, y):
    # x + y is computed in double and rounded once more to float32; for binary32 operands
    # this double rounding is innocuous (53 >= 2 * 24 + 2), so it is the IEEE float32 sum
    return floats.round_to(acc, x + y)


def _mul(acc: str, x, y):
    return floats.round_to(acc, x * y)      # exact in double for binary32 operands


def _narrow(dtype: str, x):
    """The single final rounding from the accumulation type to T (identity when they agree)."""
    return floats.round_to(dtype, x) if dtypes.is_float(dtype) else x


# GEMM-R1, GEMM-R3, GEMM-R4, GEMM-R5, GEMM-R6: refused inputs raise ProfileViolation (from constraints)
# (the body checks them itself, with contracts off too; the precondition is for CrossHair);
# well-formed operands and the postconditions are checked on every call (kernel.reference_contracts)
@kernel.reference_contracts(
    _violations, "GEMM-R1, GEMM-R3, GEMM-R4, GEMM-R5, GEMM-R6", ("a", "b", "c"),
    [lambda a, b, trans_a, trans_b, result:                                                        # GEMM-R1
     result.dtype == a.dtype and len(result.data) == size(result.shape)
     and result.shape == (a.shape[1] if trans_a else a.shape[0], b.shape[0] if trans_b else b.shape[1]),
     lambda result: _well_formed(result),                                                          # GEMM-R3
     lambda a, b, c, alpha, beta, trans_a, trans_b, result:                                        # GEMM-R7
     _exact_mode_ok(a, b, c, alpha, beta, trans_a, trans_b, result)],
    always=True)
def gemm_reference(a: TensorValue, b: TensorValue, c: TensorValue | None = None, *,
                   alpha: float = 1.0, beta: float = 1.0, trans_a: bool = False,
                   trans_b: bool = False) -> TensorValue:
    """The triple loop of the concrete level of proofs/gemm.mlw, over flat row-major data:
    s = 0; s = s + A'[i, l] * B'[l, j] for l ascending; y = alpha * s (+ beta * C[i, j]);
    Y[i, j] = round_T(y); every operation rounded in the accumulation type. For integer T
    each entry is ``intloops.dot_wrap``, the fold proved as written by Why3's Python
    front-end (alpha = beta = 1, GEMM-R6)."""
    # the requirements, checked once per call (the precondition repeats it for CrossHair only)
    raise_if_any(_violations(a, b, c, alpha, beta, trans_a, trans_b))
    ta, tb = bool(trans_a), bool(trans_b)
    m, k = (a.shape[1], a.shape[0]) if ta else a.shape
    n = b.shape[0] if tb else b.shape[1]
    acc = accumulation_type(a.dtype)
    if not dtypes.is_float(acc):
        # integer T: every entry is the fold Why3 proves as written (intloops.dot_wrap: the
        # wrapped ascending fold, then (+) C), over the row A'[i, :] and column B'[:, j]
        bits, signed = dtypes.bits(acc), dtypes.is_signed(acc)
        y = [0] * (m * n)
        for i in range(m):
            row = [a.data[a_index(ta, m, k, i, l)] for l in range(k)]
            for j in range(n):
                col = [b.data[b_index(tb, k, n, l, j)] for l in range(k)]
                y[i * n + j] = intloops.dot_wrap(row, col, 0 if c is None else c.data[i * n + j],
                                                 bits, signed)
        return TensorValue(a.dtype, (m, n), y)
    al, be = float(alpha), float(beta)
    y = [0.0] * (m * n)
    for i in range(m):
        for j in range(n):
            s = 0.0
            for l in range(k):
                s = _add(acc, s, _mul(acc, a.data[a_index(ta, m, k, i, l)],
                                      b.data[b_index(tb, k, n, l, j)]))
            r = _mul(acc, al, s)
            if c is not None:
                r = _add(acc, r, _mul(acc, be, c.data[i * n + j]))
            y[i * n + j] = _narrow(a.dtype, r)
    return TensorValue(a.dtype, (m, n), y)


# ---------------------------------------------------------------- numpy kernels
MODES = ("exact", "fast")


def _is_real_scalar(x: object) -> bool:
    return type(x) is float or (not isinstance(x, bool) and isinstance(x, numbers.Real))


def _unsigned(x: np.ndarray) -> np.ndarray:
    """Same bits as an unsigned array: numpy's (and C's) unsigned arithmetic wraps by definition."""
    return x.view(np.dtype(f"uint{x.dtype.itemsize * 8}"))


# req: GEMM-R7
def _exact_float(ap: np.ndarray, bp: np.ndarray, c: np.ndarray | None, alpha: float, beta: float,
                 acc: np.dtype) -> np.ndarray:
    """GEMM-R7 exact mode for float T: the ascending fold (compiled, see gemm/fold.py), then
    alpha * s + beta * C as separately rounded numpy operations in the accumulation type.

    ``ap`` is A' (M, K), ``bp`` is B' (K, N), both already in the accumulation type ``acc``.
    """
    s = fold.fold(ap, bp)
    if alpha != 1.0:                        # 1 * s == s exactly: the multiply is skipped
        np.multiply(acc.type(alpha), s, out=s)
    if c is not None:
        if beta != 1.0:                     # a copy, scaled in place
            cb = c.astype(acc)              # exact widening (float16/bfloat16 -> float32)
            np.multiply(acc.type(beta), cb, out=cb)
        else:                               # only read: no copy when C is already in acc
            cb = c.astype(acc, copy=False)
        np.add(s, cb, out=s)
    return s


# req: GEMM-R7
def _fast_float(ap: np.ndarray, bp: np.ndarray, c: np.ndarray | None, alpha: float, beta: float,
                acc: np.dtype) -> np.ndarray:
    """GEMM-R7 fast mode for float T: BLAS through numpy.matmul in the accumulation type."""
    y = np.matmul(ap, bp)
    if alpha != 1.0:
        np.multiply(acc.type(alpha), y, out=y)
    if c is not None:
        cb = c.astype(acc, copy=False)
        if beta != 1.0:
            cb = np.multiply(acc.type(beta), cb)
        np.add(y, cb, out=y)
    return y


class _Plan(NamedTuple):
    """What an accepted call's checks found out, reused by later calls with the same memo key
    (never the values of alpha and beta: 0.0 and -0.0 share a key but not a result)."""

    out: np.dtype              # T, native byte order
    acc: np.dtype | None       # the accumulation type for float T; None for integer T
    ta: bool
    tb: bool
    kernel: Callable | None    # _exact_float or _fast_float for float T
    widen: bool                # A or B is not yet in the accumulation type (astype costs ~0.2 us)


_ACCEPTED = kernel.AcceptedCalls()


def check_mode(mode: object, fn: str) -> None:
    """TypeError or ValueError unless ``mode`` is one of MODES (``fn``: the kernel's name)."""
    if not isinstance(mode, str):
        raise kernel.wrong_type(fn, "mode", "a str ('exact' or 'fast')", mode)
    if mode not in MODES:
        raise ValueError(f"sonnx.{fn}: unknown mode {shown(mode)}; use 'exact' (bit-exact reference "
                         "semantics) or 'fast' (BLAS, within the spec's error bound)")


def check(a: object, b: object, c: object = None, alpha: object = 1.0, beta: object = 1.0,
          trans_a: object = False, trans_b: object = False, mode: object = "exact",
          opset: object = LATEST) -> _Plan:
    """Every check of ``gemm``'s arguments, without computing: TypeError, ValueError (mode) or
    ProfileViolation, or the plan of the call."""
    check_mode(mode, "gemm")
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not _is_real_scalar(value):
            raise kernel.wrong_type("gemm", name, "a real number (a float32 value)", value)
    flags = [int(f) if type(f) in (bool, np.bool_) else f for f in (trans_a, trans_b)]
    version, sigs = kernel.arguments("gemm", opset, [("A", a), ("B", b)] + ([("C", c)] if c is not None else []))
    sig_c = sigs[2][1] if c is not None else None
    kernel.refuse(OP, sigs, constraints(sigs[0][1], sigs[1][1], sig_c, opset=version, alpha=alpha, beta=beta,
                                        trans_a=flags[0], trans_b=flags[1]))
    name = dtypes.name_of(a.dtype)
    out = dtypes.numpy_dtype(name)
    if not dtypes.is_float(name):
        return _Plan(out, None, flags[0] == 1, flags[1] == 1, None, False)
    acc = dtypes.numpy_dtype(accumulation_type(name))
    return _Plan(out, acc, flags[0] == 1, flags[1] == 1, _exact_float if mode == "exact" else _fast_float,
                 a.dtype != acc or b.dtype != acc)



# req: GEMM-R1, GEMM-R7
@kernel.entry
def gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None, *, alpha: float = 1.0,
         beta: float = 1.0, trans_a: bool = False, trans_b: bool = False, mode: str = "exact",
         opset: int = LATEST) -> np.ndarray:
    """Y = alpha * A' * B' + beta * C (ONNX Gemm) under the SONNX profile.

    ``mode="exact"`` (default) gives the profile's reference result bit for bit (GEMM-R7):
    ascending accumulation, every operation rounded in the accumulation type, no FMA, one
    final rounding to T. ``mode="fast"`` uses BLAS (numpy.matmul) and is within the error
    bound of spec/gemm.md, not bit-exact (for integer T it equals the exact result).

    Raises ``sonnx.ProfileViolation`` (a ValueError naming the requirement) for anything the
    profile refuses: C not of shape (M, N), mismatched or non-numeric element types, integer
    T with alpha or beta other than 1, alpha or beta not a float32 value, trans flags other
    than 0/1, sparse inputs, empty or oversized tensors, an opset outside 1..28 (PROF-R3).
    Raises TypeError for non-array inputs, a non-real alpha or beta, a non-integer opset or a
    non-str mode, and ValueError for an unknown mode.
    """
    plan = kernel.checked(_ACCEPTED, check, a, b, c, alpha, beta, trans_a, trans_b, mode, opset)
    return _apply(plan, a, b, c, alpha, beta)


def _sizes(plan: _Plan, a, b) -> tuple[int, int, int]:
    """(M, N, K) of a call (GEMM-R1: A' is M x K, B' is K x N)."""
    m, k = (a.shape[1], a.shape[0]) if plan.ta else (a.shape[0], a.shape[1])
    return m, (b.shape[0] if plan.tb else b.shape[1]), k


def _runs_c(plan: _Plan, m: int, n: int, k: int) -> bool:
    """The default kernel runs the proved C entry point on this exact-mode call: the record's
    binding makes the entry of T the default (c_kernels.default_entry: integer T on its width's
    unsigned entry, float32/float64 on their own; float16/bfloat16 never, their route converts)
    at these sizes (C_BINDING.runs_by_default_at: the size rule bounds the float entries)."""
    from ... import c_kernels
    if c_kernels.default_entry("gemm", plan.out) is None:
        return False
    if plan.acc is None:
        return True         # integer T: the rule bounds no integer entry (C_BINDING.sizes)
    return C_BINDING.runs_by_default_at(f"f{plan.acc.itemsize * 8}", m, n, k)


# req: GEMM-R1, GEMM-R7
def _apply(plan: _Plan, a, b, c, alpha, beta) -> np.ndarray:
    """The arithmetic of an accepted call (``plan``: what its checks found)."""
    ap = a.T if plan.ta else a
    bp = b.T if plan.tb else b
    out_dtype = plan.out
    if plan.kernel is not _fast_float and _runs_c(plan, *_sizes(plan, a, b)):
        # the proved C kernel (its record makes it the default: integer T always, float32 /
        # float64 at the sizes C_BINDING.sizes admits): the same bits as the fold below
        from ... import c_kernels
        return _gemm_c(c_kernels, plan, a, b, c, *((1, 1) if plan.acc is None else (alpha, beta)))
    if plan.acc is None:
        # Integers wrap modulo 2^bits (GEMM-R6 makes alpha = beta = 1). Arithmetic modulo 2^bits
        # is a commutative ring, so every summation order gives the same bits: numpy's integer
        # matmul (no BLAS, no rounding) on unsigned views, whose wrap-around is defined in C,
        # is the exact-mode result in both modes.
        # (astype to the native dtype first: a byte-swapped array must not be reinterpreted)
        y = np.matmul(_unsigned(ap.astype(out_dtype, copy=False)),
                      _unsigned(bp.astype(out_dtype, copy=False)))
        if c is not None:
            np.add(y, _unsigned(c.astype(out_dtype, copy=False)), out=y)
        return y.view(out_dtype)
    acc = plan.acc
    if plan.widen:
        # widening float16/bfloat16 -> float32 is exact; float and double are used as they are
        ap = ap.astype(acc, copy=False)
        bp = bp.astype(acc, copy=False)
    # IEEE overflow/invalid results are the defined semantics here, not errors to warn about
    with np.errstate(all="ignore"):
        y = plan.kernel(ap, bp, c, float(alpha), float(beta), acc)
        return y if y.dtype == out_dtype else y.astype(out_dtype)    # the single final RNE rounding to T



# req: GEMM-R1, GEMM-R7
def bind(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None, *, alpha: float = 1.0,
         beta: float = 1.0, trans_a: bool = False, trans_b: bool = False, mode: str = "exact",
         opset: int = LATEST, fixed: tuple[int, ...] = ()) -> Callable[..., np.ndarray]:
    """``gemm`` with everything but the arrays fixed and checked now (the same checks, same
    refusals): a function of (A, B[, C]) for arrays of the shapes and element types of ``a``,
    ``b``, ``c`` (only their signatures are read). The caller guarantees those signatures and
    runs it under fpenv.guarded with numpy's floating-point warnings off (executor.execute and
    Session do both); the arithmetic is gemm's own (_apply).

    ``fixed``: the positions (1: B, 2: C) of operands given here as the arrays every call will
    pass (a model's weights). Float B is then oriented, widened and, in exact mode, packed for
    the compiled fold once, and beta * C computed once (the same operation on the same values:
    the same bits); a call with other arrays there takes the unprepared path."""
    plan = check(a, b, c, alpha, beta, trans_a, trans_b, mode, opset)
    if plan.acc is None or not (1 in fixed or (2 in fixed and c is not None)):
        def bound(a, b, c=None):
            return _apply(plan, a, b, c, alpha, beta)
        return bound
    b0, c0 = (b if 1 in fixed else None), (c if 2 in fixed else None)
    sizes = _sizes(plan, a, b)
    if mode == "exact" and _runs_c(plan, *sizes):
        return _prepared_c(plan, b0, c0, float(alpha), float(beta), sizes)
    return _prepared(plan, b0, c0, float(alpha), float(beta), mode == "exact")


def _prepared_c(plan: _Plan, b0: np.ndarray | None, c0: np.ndarray | None, alpha: float,
                beta: float, sizes: tuple[int, int, int]) -> Callable[..., np.ndarray]:
    """gemm's bound kernel where its record runs the proved C entry (exact float T of the entry's
    type, at the sizes C_BINDING.sizes admits) with a fixed B and/or C: B' (B transposed when
    transB: a copy holding the same values) and C made contiguous once; each call is _gemm_c on
    them, the entry's own alpha * s + beta * C."""
    acc = plan.acc
    bq = None if b0 is None else np.ascontiguousarray(b0.T if plan.tb else b0, dtype=acc)
    cq = None if c0 is None else np.ascontiguousarray(c0, dtype=acc)
    oriented = plan._replace(tb=False) if bq is not None else plan
    from ... import c_kernels

    def bound(a, b, c=None):
        if (b0 is not None and b is not b0) or (c0 is not None and c is not c0):
            return _apply(plan, a, b, c, alpha, beta)          # not the arrays prepared for
        return _gemm_c(c_kernels, oriented, a, b if bq is None else bq, c if cq is None else cq, alpha, beta)

    m, n, k = sizes
    if bq is None or _gemm_c_threads(m, n, k) > 1:
        return bound
    # B fixed, one thread: _gemm_c's call with its per-call work done here once (the entry, the
    # addresses of B' and C); a session's small layers cost a few microseconds, this is most of it
    fn, address = c_kernels.default_entry("gemm", plan.out), c_kernels._address
    bptr, cptr, ta = address(bq), None if cq is None else address(cq), plan.ta

    def lean(a, b, c=None, _kept=(bq, cq)):     # _kept: the arrays bptr and cptr point into
        if b is not b0 or (c0 is not None and c is not c0):
            return _apply(plan, a, b, c, alpha, beta)          # not the arrays prepared for
        x = a.T if ta else a
        if x.dtype != acc or not x.flags.c_contiguous:
            x = np.ascontiguousarray(x, dtype=acc)
        cc = None if c is None or cq is not None else np.ascontiguousarray(c, dtype=acc)
        cp = None if c is None else (cptr if cq is not None else address(cc))
        out = np.empty((m, n), acc)
        fn(address(x), bptr, cp, address(out), int(cp is not None), 0, 0, alpha, beta, m, n, k)
        return out
    return lean


@fpenv.guarded      # bind runs at planning time: the prepared values are computed as a run would
def _prepared(plan: _Plan, b0: np.ndarray | None, c0: np.ndarray | None, alpha: float, beta: float,
              exact: bool) -> Callable[..., np.ndarray]:
    """gemm's bound kernel for float T with a fixed B (``b0``) and/or C (``c0``): what _apply and
    _exact_float/_fast_float compute from them on every call is computed here once."""
    acc, out, ta = plan.acc, plan.out, plan.ta
    with np.errstate(all="ignore"):
        cb = None
        if c0 is not None:
            # _exact_float and _fast_float both give beta * C (beta != 1) or C, in acc
            cb = c0.astype(acc)
            if beta != 1.0:
                np.multiply(acc.type(beta), cb, out=cb)
    # B' as _apply gives it to the kernel (a view of B transposed, widened if T is narrower),
    # and, in exact mode, packed once for the fold
    bp = None if b0 is None else (b0.T if plan.tb else b0).astype(acc, copy=False)
    folder = fold.FixedB(bp) if exact and bp is not None else None
    scale = acc.type(alpha)

    def finish(s, fresh):
        # alpha * s, then + beta * C when prepared: the operations below, each writing a new
        # array when s is the fold's kept buffer (one pass instead of a copy and then the add)
        y = s if fresh else None
        if alpha != 1.0:
            y = np.multiply(scale, s, out=y)
        if cb is not None:
            return np.add(s if y is None else y, cb, out=y)
        return s.copy() if y is None else y

    def bound(a, b, c=None):
        if (b0 is not None and b is not b0) or (c0 is not None and c is not c0):
            return _apply(plan, a, b, c, alpha, beta)          # not the arrays prepared for
        ap = a.T if ta else a
        if ap.dtype != acc:
            ap = ap.astype(acc)                  # exact widening (float16/bfloat16 -> float32)
        bq = bp if bp is not None else (b.T if plan.tb else b).astype(acc, copy=False)
        # GEMM-R7: the fold (exact) or BLAS (fast), then alpha * s + (beta * C), as _exact_float
        # and _fast_float (numpy's warnings are off: the caller's np.errstate)
        if folder is not None and (c is None or cb is not None):
            y = folder.fold(ap, finish=finish)  # alpha and the prepared beta * C: by finish
            return y if y.dtype == out else y.astype(out)
        if folder is not None:
            y = folder.fold(ap)
        elif exact:
            y = fold.fold(ap, bq)
        else:
            y = np.matmul(ap, bq)
        if alpha != 1.0:
            np.multiply(scale, y, out=y)
        if c is not None:
            if cb is not None:
                np.add(y, cb, out=y)
            elif beta != 1.0:
                np.add(y, np.multiply(acc.type(beta), c.astype(acc)), out=y)
            else:
                np.add(y, c.astype(acc, copy=False), out=y)
        return y if y.dtype == out else y.astype(out)    # the single final RNE rounding to T
    return bound


def result_shape(shapes, keywords) -> tuple[int, int]:
    """(M, N) from A's and B's shapes and the transpose keywords (GEMM-R1)."""
    a, b = shapes[0], shapes[1]
    m = a[1] if keywords.get("trans_a") else a[0]
    n = b[0] if keywords.get("trans_b") else b[1]
    return (m, n)


def fast_bound_comparison(results, args, keywords, progress=None) -> list[str]:
    """How ``sonnx run --compare`` judges float results of a node (onnxruntime's, and sonnx's
    own): every element within the fast-mode bound of GEMM-R7 (gemm.bound.outside_bounds, the
    function the operator's tests use; accumulation in float32 for float16/bfloat16/float,
    float64 for double: a float64 screen proves most elements within it, the exact check on
    rationals judges the rest; the screen's sums of the operands are computed once for every
    result). Per result "" when within, else the first element outside; ValueError when it
    cannot be judged."""
    from .bound import outside_bounds
    c = args[2] if len(args) > 2 else None
    return [_outside_reason(bad) for bad in
            outside_bounds(results, args[0], args[1], c, limit=1, progress=progress, **keywords)]


def _outside_reason(bad: list[tuple]) -> str:
    if not bad:
        return ""
    i, j, yij, exact, bound = bad[0]
    return (f"Y[{i}, {j}] = {yij!r} is {abs(yij - exact):.3g} from the exact {exact!r}, "
            f"bound {bound:.3g} (GEMM-R7)")


# req: GEMM-R1, GEMM-R7
def gemm_c(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None, *, alpha: float = 1.0,
           beta: float = 1.0, trans_a: bool = False, trans_b: bool = False,
           opset: int = LATEST) -> np.ndarray:
    """ONNX Gemm under the SONNX profile in exact mode (GEMM-R7), computed by the C kernel
    extracted from proofs/gemm_c.mlw. The same checks and refusals as ``sonnx.gemm``; the same
    bits as its exact mode. Float T: the float32/float64 entries (float16/bfloat16 widened to
    float32, rounded once to T). Integer T (alpha = beta = 1, GEMM-R6): the uint32/uint64 entries,
    int32/int64 on their bits (proofs/int_route.mlw's GemmRoute proves that gives the signed
    wrapped result)."""
    from ... import c_kernels
    plan = check(a, b, c, alpha, beta, trans_a, trans_b, "exact", opset)
    return _gemm_c(c_kernels, plan, a, b, c, alpha, beta)


@fpenv.guarded
def _gemm_c(c_kernels, plan, a, b, c, alpha, beta, threads=None) -> np.ndarray:
    lib = c_kernels.library()
    ptr = c_kernels.pointer
    m, k = (a.shape[1], a.shape[0]) if plan.ta else a.shape
    n = b.shape[0] if plan.tb else b.shape[1]
    if plan.acc is None:
        # integer T on the unsigned kernel of its width, on its bits (native byte order first);
        # GEMM-R6 has made alpha = beta = 1, which is what the kernel's proof assumes
        x, y = (_unsigned(np.ascontiguousarray(v, dtype=plan.out)) for v in (a, b))
        cc = None if c is None else _unsigned(np.ascontiguousarray(c, dtype=plan.out))
        acc = x.dtype                        # the unsigned C word of T's width (_unsigned)
        fn = lib.sonnx_gemm_u32 if acc.itemsize == 4 else lib.sonnx_gemm_u64
        alpha = beta = 1
    else:
        acc = plan.acc
        x = np.ascontiguousarray(a, dtype=acc)   # widening float16/bfloat16 -> float32 is exact
        y = np.ascontiguousarray(b, dtype=acc)
        cc = None if c is None else np.ascontiguousarray(c, dtype=acc)
        fn = lib.sonnx_gemm_f32 if acc.itemsize == 4 else lib.sonnx_gemm_f64
        alpha, beta = float(alpha), float(beta)
    out = np.empty((m, n), dtype=acc)
    ta = plan.ta
    parts = _gemm_c_threads(m, n, k) if threads is None else max(1, min(int(threads), m))
    # the kernel's register tiles run when neither operand is transposed (gemm_c_tile.mlw; the
    # transposed cases run gemm_c_loop.mlw's loop): a transposed copy holds the same values
    tb = plan.tb
    if ta:
        x, ta = np.ascontiguousarray(x.T), False
    if tb:
        y, tb = np.ascontiguousarray(y.T), False
    if parts > 1 and cc is not None and cc.size != m * n:
        parts = 1

    def rows(lo: int, hi: int) -> None:
        # rows lo..hi-1 of Y from rows lo..hi-1 of A (and C): each element's ascending-k fold is
        # the one the proved loop gives it whatever the split (the loop computes every row alone)
        fn(ptr(x[lo:hi]) if parts > 1 else ptr(x), ptr(y),
           None if cc is None else ptr(cc[lo:hi] if parts > 1 else cc), ptr(out[lo:hi]),
           int(cc is not None), int(ta), int(tb), alpha, beta, hi - lo, n, k)

    if parts == 1:
        rows(0, m)
    else:
        # ctypes releases the GIL during the foreign call, so the row ranges run in parallel;
        # each thread's C entry point sets the default FP environment itself
        cuts = [m * p // parts for p in range(parts + 1)]
        workers = [threading.Thread(target=rows, args=(cuts[p], cuts[p + 1])) for p in range(1, parts)]
        for w in workers:
            w.start()
        rows(cuts[0], cuts[1])
        for w in workers:
            w.join()
    if plan.acc is None:
        return out.view(plan.out)           # the words' bits read as T
    with np.errstate(all="ignore"):         # the single final RNE rounding to T (may overflow to inf)
        return out if acc == plan.out else out.astype(plan.out)


def _gemm_c_threads(m: int, n: int, k: int) -> int:
    """Threads for one C Gemm call: one per core once the product is large enough to pay for
    starting them: 4M multiply-adds (measured: below that the two threads cost more than they
    save, 0.34 against 0.20 ms at 100^3 int32); a thread count never changes the bits, only the time."""
    if m < 2 or m * n * k < 1 << 22:
        return 1
    return max(1, min(os.cpu_count() or 1, m))


def _c_args(real) -> tuple:
    vp, i32 = ctypes.c_void_p, ctypes.c_int32   # a, b, c, out, has_c, ta, tb, alpha, beta, m, n, k
    return (vp, vp, vp, vp, ctypes.c_int, ctypes.c_int, ctypes.c_int, real, real, i32, i32, i32)


# req: GEMM-R7
def c_call(shapes, dtype, keywords) -> CCall | None:
    """``CBinding.call``: a float Gemm node as one call of the entry point taking its element type
    as it is (float32: sonnx_gemm_f32, float64: sonnx_gemm_f64, whose accumulation type is T
    itself), on A, B (and C) as stored, with the node's transposes, alpha and beta: the entry
    computes alpha * s + beta * C with every operation rounded in T (GEMM-R7 exact mode), the
    bits of sonnx.gemm's exact kernel; None for another type (no entry takes it as it is)."""
    from ... import c_kernels
    # float entries only: the chain's dispatcher takes Gemm's float32/float64 bodies (the
    # integer ones run node by node)
    entry = next((e for e in C_BINDING.entries if e.suffix in ("f32", "f64")
                  and c_kernels.SUFFIX_TYPES.get(e.suffix) == dtype), None)
    if entry is None:
        return None
    ta, tb = bool(keywords.get("trans_a", False)), bool(keywords.get("trans_b", False))
    m, n = result_shape(shapes, keywords)
    k = shapes[0][0] if ta else shapes[0][1]
    return CCall(entry.name, tuple(range(len(shapes))), n=n, m=m, k=k, hasc=int(len(shapes) > 2), ta=int(ta),
                 tb=int(tb), alpha=float(keywords.get("alpha", 1.0)), beta=float(keywords.get("beta", 1.0)))


# Where the default kernel (sonnx.gemm / sonnx.matmul, sonnx run and sonnx.Session's default
# engine) runs the float32/float64 proved C entries instead of the llvmlite fold (the same bits):
# issue 32 asks for the proved C wherever it is within 1.5x of the fold. Measured in one process,
# C / fold, median (min - max) of 7 interleaved rounds, float32 and float64, transB 0 and 1, 2
# shared cores at load 2.6 (2026-11-29), both for sonnx.gemm's arithmetic (the fold packing B at
# each call) and for a Session's kernel with the weights fixed (the fold's B packed once, the C's
# B' made contiguous once): at most 2^18 multiply-adds (64^3, 1 x 512 x 512, 4 x 256 x 256,
# 1000 x 16 x 16, 32 x 64 x 128, ...) sonnx.gemm 0.3 - 1.3, the Session 0.5 - 1.43 (maxima up to
# 1.56); above, the Session's ratio passes 1.5: 8 x 256 x 256 1.4 - 1.7, 128^3 1.5 - 1.9, M = 1
# with 784 x 1024 or 1024 x 1024 weights 1.1 - 2.1 (memory-bound: the fold's packed B streams
# faster), 512^3 1.6 - 2.0. Below 2^15 (the exact fused chain's FUSE_LIMIT, run/chain.py) the C
# is faster in both (0.5 - 0.8). So: at most 2^18 multiply-adds; the fold above
C_DEFAULT_WORK = 1 << 18


def _c_default_sizes(m: int, n: int, k: int) -> bool:
    return m * n * k <= C_DEFAULT_WORK


C_DEFAULT_SIZES = CSizeRule(("f32", "f64"), _c_default_sizes, "M * N * K <= 2^18", "the llvmlite fold")

_C_PROOF = "proofs/gemm_c.mlw"
_C_IDS = ("GEMM-R1", "GEMM-R3", "GEMM-R4", "GEMM-R7")
_C_INT_IDS = ("GEMM-R1", "GEMM-R3", "GEMM-R4", "GEMM-R6", "GEMM-R7")
# the entry points, and the clones of proofs/gemm_c_loop.mlw's [gemm_loop] they call (Why3
# names the second clone gemm_loop1), each with the proof file and module holding the clone
# and the WhyML function cloned (GemmCLoop's, proved there)
C_BINDING = CBinding(
    source="gemm_c.c", proof=_C_PROOF, wrapper=gemm_c, call=c_call,
    # the default kernel runs the integer entries (about 10x numpy's integer matmul at 256 - 512,
    # benchmarks/bench_gemm_c.py) always, and the float ones at the sizes of C_DEFAULT_SIZES
    default=("u32", "u64", "f32", "f64"), sizes=C_DEFAULT_SIZES,
    # float16/bfloat16 through the float32 entry: A, B, C widened, the float32 exact mode, one
    # final rounding to T (proofs/gemm.mlw's GemmHalf proves that loop is narrow(float32 entry));
    # the two conversions that run are checked, not proved
    routes=(CRoute(("float16", "bfloat16"), "f32", ("proofs/gemm.mlw",), HALF_CONVERSIONS_CHECKED,
                   theory="GemmHalfRoute", ids=("GEMM-R1", "GEMM-R4", "GEMM-R7")),
            # int32/int64 on the unsigned kernels, their bits as they are (wrapping is a ring
            # homomorphism; proofs/int_route.mlw's GemmRoute proves the signed entry results)
            *(CRoute((t,), u, (INT_ROUTE_PROOF,), theory="GemmRoute", ids=("GEMM-R6", "GEMM-R7"), view=True)
              for t, u in (("int32", "u32"), ("int64", "u64")))),
    entries=(CEntry("sonnx_gemm_f32", _C_PROOF, "GemmCFloat32", _C_IDS, _c_args(ctypes.c_float)),
             CEntry("sonnx_gemm_f64", _C_PROOF, "GemmCFloat64", _C_IDS, _c_args(ctypes.c_double)),
             *(CEntry(f"sonnx_gemm_u{w}", _C_PROOF, f"GemmCUInt{w}", _C_INT_IDS, _c_args(word))
               for w, word in ((32, ctypes.c_uint32), (64, ctypes.c_uint64)))),
    internal={"gemm_loop": (_C_PROOF, "GemmCFloat32", "gemm_loop"),
              "gemm_loop1": (_C_PROOF, "GemmCFloat64", "gemm_loop"),
              "gemm_loop2": (_C_PROOF, "GemmCUInt32", "gemm_loop"),
              "gemm_loop3": (_C_PROOF, "GemmCUInt64", "gemm_loop"),
              **{f"gemm_{fn}{sfx}": (_C_PROOF, mod, f"gemm_{fn}")
                 for sfx, mod in (("", "GemmCFloat32"), ("1", "GemmCFloat64"))
                 for fn in ("set_cell", "get_cell", "set_row", "elem_steps", "tile_rows", "tile_row", "tiled")}})

OPERATOR = Operator(
    name=OP, prefix="GEMM", kind="matrix", type_sets=TYPE_SETS, inputs=("A", "B", "C"), optional=("C",),
    attributes=ATTRIBUTES, constraints=node_constraints, reference=gemm_reference, kernel=gemm,
    bind=bind,
    spec="spec/gemm.md", proofs=("proofs/gemm.mlw", "proofs/gemm_c_loop.mlw", "proofs/gemm_c_tile.mlw", "proofs/gemm_c.mlw",
                                 "proofs/gemm_refusal.mlw", "proofs/constraints.mlw", "proofs/gemm_error.mlw",
                                 "proofs/gemm_dot_error.mlw", "proofs/gemm_fold_error.mlw",
                                 "proofs/gemm_fold_ieee.mlw", "proofs/gemm_fold_premises.mlw",
                                 "proofs/gemm_fold_ieee_link.mlw"),
    kernel_attributes={"alpha": "alpha", "beta": "beta", "transA": "trans_a", "transB": "trans_b"},
    output_shape=result_shape, comparison=fast_bound_comparison, c_binding=C_BINDING,
    conform=ConformRule("GEMM-R4", ((2, "C"),)),
    theories=("proofs/tensor.mlw", "proofs/elementwise.mlw", "proofs/half_conversions.mlw"))
