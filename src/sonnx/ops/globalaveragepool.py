"""ONNX GlobalAveragePool under the SONNX profile: Y[n, c, 0, ..., 0] = the average of the
(n, c) plane of X (spec/globalaveragepool.md).

A pooling operator (ops/pool.py holds the shared fold and division). The result is defined bit
for bit: the sum of the plane's elements in ascending row-major order of the spatial positions,
starting at the first element (no start value added), each addition rounded to nearest even in
T; then one division by T(count), rounded in T. Exact and fast modes are the same bits.
Checks: GLOBALAVERAGEPOOL-R1 (rank >= 3, no attribute), GLOBALAVERAGEPOOL-R2 (dense, the version's type set).
Requirements: src/sonnx/ops/globalaveragepool.toml. Proof: proofs/globalaveragepool.mlw.
Tests: tests/ops/test_globalaveragepool.py.
"""
from __future__ import annotations

import icontract
from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import ProfileViolation, Violation, raise_if_any
from ..semantics import floats
from ..semantics.tensor import FULL_CONTRACTS, TensorValue, size
from . import kernel, pool
from .registry import Operator, each_result
from .signature import TensorSig, dense_and_typed, tensor_shape_violations

OP = "GlobalAveragePool"
PREFIX = "GLOBALAVERAGEPOOL"
LATEST = 22
TYPE_SETS = {1: dtypes.IEEE_FLOATS, 22: dtypes.IEEE_FLOATS | {"bfloat16"}}


# req: GLOBALAVERAGEPOOL-R1, GLOBALAVERAGEPOOL-R2
def constraints(x: TensorSig, *, opset: int, attrs: dict | None = None) -> list[Violation]:
    """Every violation of GLOBALAVERAGEPOOL-R1 and R2 of a GlobalAveragePool node with input ``x``."""
    version, refused = kernel.version_in_force(OP, opset, "GLOBALAVERAGEPOOL-R2")
    if version is None:
        return refused
    found = dense_and_typed(OP, version, [("'X'", x)], dense_rule="GLOBALAVERAGEPOOL-R2", type_rule="GLOBALAVERAGEPOOL-R2",
                            hint=lambda e: ("; bfloat16 needs GlobalAveragePool-22: import opset 22 or later"
                                            if e == "bfloat16" else "; the profile defines no other element type"))
    for name in sorted(attrs or {}):
        found.append(Violation("GLOBALAVERAGEPOOL-R1", f"{OP}-{version} has the attribute {name}; it takes none: remove it"))
    if not x.sparse and x.shape is not None and len(x.shape) < 3:
        found.append(Violation("GLOBALAVERAGEPOOL-R1", f"{OP}-{version} input has rank {len(x.shape)}; it must be "
                                         "(N, C, d1, ..., dn), rank 3 or more"))
    return found


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """The registry's constraint function: (input signatures, attributes, opset)."""
    return constraints(sigs[0], opset=opset, attrs=dict(attrs))


def geometry(shape: tuple[int, ...]) -> pool.Geometry:
    """The one window of a plane: the whole spatial extent, no pads."""
    n = len(shape) - 2
    return pool.Geometry(tuple(shape), tuple(shape[2:]), (1,) * n, (1,) * n, (0,) * n, (0,) * n, (1,) * n)


# ---------------------------------------------------------------- reference kernel
def _violations(x: TensorValue) -> list[Violation]:
    sig = TensorSig(x.shape, x.dtype)
    return tensor_shape_violations(OP, [("'X'", sig)]) + constraints(sig, opset=LATEST)


def _refusal(x: TensorValue) -> ProfileViolation:
    return ProfileViolation(_violations(x))


def _plane_average(x: TensorValue, nc: int) -> float:
    per = size(x.shape[2:])
    return pool.reference_average(x.data[nc * per:(nc + 1) * per], per, lambda v: floats.round_to(x.dtype, v))


# req: GLOBALAVERAGEPOOL-R1, GLOBALAVERAGEPOOL-R2, GLOBALAVERAGEPOOL-R3
@icontract.require(lambda x: not _violations(x), "GLOBALAVERAGEPOOL-R1, GLOBALAVERAGEPOOL-R2, PROF-R2", error=_refusal, enabled=FULL_CONTRACTS)
@icontract.require(lambda x: kernel.well_formed(x), enabled=FULL_CONTRACTS)
@icontract.ensure(lambda x, result: result.dtype == x.dtype and result.shape == x.shape[:2] + (1,) * (len(x.shape) - 2)
                  and len(result.data) == x.shape[0] * x.shape[1])
def globalaveragepool_reference(x: TensorValue) -> TensorValue:
    """The reference kernel: for every (n, c) plane, the fold of its elements in row-major
    order, each addition rounded in T, divided once by T(count) (proofs/globalaveragepool.mlw)."""
    raise_if_any(_violations(x))
    data = [_plane_average(x, nc) for nc in range(x.shape[0] * x.shape[1])]
    return TensorValue(x.dtype, x.shape[:2] + (1,) * (len(x.shape) - 2), data)


# ---------------------------------------------------------------- numpy kernel
_accepted = kernel.AcceptedCalls()


# req: GLOBALAVERAGEPOOL-R1, GLOBALAVERAGEPOOL-R2
def check(x: object, opset: object = LATEST) -> tuple[int, ...]:
    """Every check of the kernel's arguments (TypeError or ProfileViolation); X's shape."""
    version, sigs = kernel.arguments("globalaveragepool", opset, [("X", x)])
    kernel.refuse(OP, sigs, constraints(sigs[0][1], opset=version))
    return sigs[0][1].shape


# req: GLOBALAVERAGEPOOL-R3
def _apply(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The fold over the spatial positions in ascending row-major order, vectorised over the
    (n, c) planes, then pool.divide_once."""
    x = x.astype(x.dtype.newbyteorder("="), copy=False)
    planes = x.reshape(shape[0], shape[1], -1)
    acc = np.array(planes[:, :, 0])
    with np.errstate(all="ignore"):
        for p in range(1, planes.shape[2]):
            acc = acc + planes[:, :, p]
    count = np.full(acc.shape, planes.shape[2], dtype=np.int64)
    return pool.divide_once(acc, count).reshape(shape[:2] + (1,) * (len(shape) - 2))


# req: GLOBALAVERAGEPOOL-R3
@kernel.entry
def globalaveragepool(x: np.ndarray, *, opset: int = LATEST) -> np.ndarray:
    """ONNX GlobalAveragePool of an (N, C, d1, ..., dn) array: Y of shape (N, C, 1, ..., 1), each
    element its plane's sum in row-major order (each addition rounded in T, no start value)
    divided once by T(d1 * ... * dn), rounded in T. A NaN in a plane gives a NaN (payload not
    specified). Raises ``sonnx.ProfileViolation`` for what the profile refuses."""
    return _apply(x, kernel.checked(_accepted, check, x, opset))


# req: GLOBALAVERAGEPOOL-R3
def bind(x: np.ndarray, *, opset: int = LATEST):
    """``globalaveragepool`` checked once now for arrays like ``x``: a function of the array."""
    shape = check(x, opset)
    return lambda a: _apply(a, shape)


def result_shape(shapes, keywords) -> tuple[int, ...]:
    s = tuple(shapes[0])
    return s[:2] + (1,) * (len(s) - 2)


def order_bound_comparison(y, args, keywords, progress=None) -> str:
    """run --compare: onnxruntime sums in its own order; its result must lie within
    pool.outside_order_bound of the average (GLOBALAVERAGEPOOL-R3's stated bound for another order)."""
    x = args[0]
    import ml_dtypes
    info = ml_dtypes.finfo(x.dtype)
    return pool.outside_order_bound(np.asarray(y), x, geometry(x.shape), False, float(info.eps) / 2,
                                    float(info.smallest_subnormal))


OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="pool", type_sets=TYPE_SETS, inputs=("X",), optional=(), attributes={},
    constraints=node_constraints, reference=globalaveragepool_reference, kernel=globalaveragepool, bind=bind,
    spec="spec/globalaveragepool.md", proofs=("proofs/globalaveragepool.mlw",), kernel_attributes={},
    output_shape=result_shape, comparison=each_result(order_bound_comparison), theories=())
