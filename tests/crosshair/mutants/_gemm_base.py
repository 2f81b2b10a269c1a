"""The reference Gemm kernel written with replaceable parts, for the Gemm mutants to bend one
each. Same loop as sonnx.ops.gemm.gemm_reference; no contracts (the harness states the spec)."""
from sonnx import dtypes
from sonnx.errors import raise_if_any
from sonnx.ops import gemm
from sonnx.semantics import floats, intloops
from sonnx.semantics.tensor import TensorValue


def wrap(x, bits, signed):
    return intloops.wrap(x, bits, signed)


def make_kernel(*, a_index=gemm.a_index, b_index=gemm.b_index, wrap=wrap, k_loop=lambda k: range(k),
                check=lambda found: raise_if_any(found), c_index=lambda c, i, j, n: i * n + j):
    def add(acc, x, y):
        if dtypes.is_float(acc):
            return floats.round_to(acc, x + y)
        return wrap(x + y, dtypes.bits(acc), dtypes.is_signed(acc))

    def mul(acc, x, y):
        if dtypes.is_float(acc):
            return floats.round_to(acc, x * y)
        return wrap(x * y, dtypes.bits(acc), dtypes.is_signed(acc))

    def gemm_reference(a, b, c=None, *, alpha=1.0, beta=1.0, trans_a=False, trans_b=False):
        check(gemm.constraints(gemm._sig(a), gemm._sig(b), gemm._sig(c), alpha=alpha, beta=beta,
                               trans_a=int(trans_a), trans_b=int(trans_b)))
        ta, tb = bool(trans_a), bool(trans_b)
        m, k = (a.shape[1], a.shape[0]) if ta else a.shape
        n = b.shape[0] if tb else b.shape[1]
        acc = gemm.accumulation_type(a.dtype)
        zero = 0.0 if dtypes.is_float(acc) else 0
        al = float(alpha) if dtypes.is_float(acc) else 1
        be = float(beta) if dtypes.is_float(acc) else 1
        y = [zero] * (m * n)
        for i in range(m):
            for j in range(n):
                s = zero
                for l in k_loop(k):
                    s = add(acc, s, mul(acc, a.data[a_index(ta, m, k, i, l)],
                                        b.data[b_index(tb, k, n, l, j)]))
                r = mul(acc, al, s)
                if c is not None:
                    r = add(acc, r, mul(acc, be, c.data[c_index(c, i, j, n)]))
                y[i * n + j] = floats.round_to(a.dtype, r) if dtypes.is_float(a.dtype) else r
        return TensorValue(a.dtype, (m, n), y)
    return gemm_reference
