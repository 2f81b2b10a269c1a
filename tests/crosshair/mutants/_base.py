"""The reference Mul kernel written with replaceable parts, for the mutants to bend one each.
Same loop as sonnx.ops.mul.mul_reference; no contracts (the harness states the spec)."""
from sonnx import dtypes
from sonnx.errors import raise_if_any
from sonnx.semantics import floats
from sonnx.ops.mul import constraints
from sonnx.ops.signature import TensorSig
from sonnx.semantics.tensor import TensorValue, size


def wrap(x, bits, signed):
    m = 2 ** bits
    r = x % m
    if signed and r >= m // 2:
        r = r - m
    return r


def make_kernel(*, wrap=wrap, round_to=floats.round_to, check=True, b_index=lambda i: i):
    def mul_reference(a: TensorValue, b: TensorValue) -> TensorValue:
        if check:
            raise_if_any(constraints(TensorSig(a.shape, a.dtype), TensorSig(b.shape, b.dtype)))
        n = size(a.shape)
        c = [0] * n
        for i in range(n):
            x, y = a.data[i], b.data[b_index(i)]
            if dtypes.is_float(a.dtype):
                c[i] = round_to(a.dtype, x * y)
            else:
                c[i] = wrap(x * y, dtypes.bits(a.dtype), dtypes.is_signed(a.dtype))
        return TensorValue(a.dtype, a.shape, c)
    return mul_reference
