"""GlobalAveragePool's fold started at +0 (a start value added before the first element), as a
runtime's `sum = 0; for x: sum += x` does: a plane of -0 then sums to +0; GLOBALAVERAGEPOOL-R3 says -0."""
import numpy as np

from sonnx.ops import pool


def _apply(x, shape):
    x = x.astype(x.dtype.newbyteorder("="), copy=False)
    planes = x.reshape(shape[0], shape[1], -1)
    acc = np.zeros(planes.shape[:2], dtype=x.dtype)            # MUTANT: +0 start value
    with np.errstate(all="ignore"):
        for p in range(planes.shape[2]):
            acc = acc + planes[:, :, p]
    count = np.full(acc.shape, planes.shape[2], dtype=np.int64)
    return pool.divide_once(acc, count).reshape(shape[:2] + (1,) * (len(shape) - 2))


PATCHES = {"sonnx.ops.globalaveragepool:_apply": _apply}
