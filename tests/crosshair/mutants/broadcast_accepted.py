"""Broadcast silently accepted: a rank-0 or one-element B is repeated over A instead of refused
(the shape check lets broadcastable shapes through; type checks are kept)."""
from sonnx import dtypes
from sonnx.errors import raise_if_any
from sonnx.ops.mul import constraints
from sonnx.ops.signature import TensorSig
from sonnx.semantics.tensor import TensorValue, size

from ._base import make_kernel, wrap

_exact = make_kernel()


def mul_reference(a: TensorValue, b: TensorValue) -> TensorValue:
    found = constraints(TensorSig(a.shape, a.dtype), TensorSig(b.shape, b.dtype))
    raise_if_any([v for v in found if v.requirement != "MUL-R4"])   # MUTANT: R4 dropped
    if a.shape == b.shape:
        return _exact(a, b)
    big, small = (a, b) if size(a.shape) >= size(b.shape) else (b, a)
    n = size(big.shape)
    data = [big.data[i] * small.data[i % len(small.data)] for i in range(n)]
    if not dtypes.is_float(a.dtype):
        data = [wrap(v, dtypes.bits(a.dtype), dtypes.is_signed(a.dtype)) for v in data]
    return TensorValue(a.dtype, big.shape, data)


KERNELS = {"mul_reference": mul_reference}
