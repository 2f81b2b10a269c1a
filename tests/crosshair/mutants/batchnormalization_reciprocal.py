"""BatchNormalization's quotient computed as a multiplication by the reciprocal 1 / d, as a
runtime that precomputes 1 / sqrt(var + eps) per channel does: (x - mean) * (1 / d) rounds twice
where BATCHNORMALIZATION-R5 divides once (5 * (1 / 3) is not 5 / 3 in float)."""
import numpy as np

from sonnx.ops import batchnormalization as bn


def _apply(x, params):
    mean, d, scale, b = params
    dt = x.dtype.newbyteorder("=")
    x = x.astype(dt, copy=False)
    with np.errstate(all="ignore"):
        t = bn._in_t(np.subtract, dt, x, mean)
        r = bn._in_t(np.divide, dt, np.ones_like(d), d)              # MUTANT: the reciprocal
        q = bn._in_t(np.multiply, dt, t, r)
        m = bn._in_t(np.multiply, dt, q, scale)
        return bn._in_t(np.add, dt, m, b)


PATCHES = {"sonnx.ops.batchnormalization:_apply": _apply}
