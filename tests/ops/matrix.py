"""What the tests of the matrix operators (record kind "matrix") share: signatures and IDs of a
constraint's answer, random and edge-value operands, and random float bit patterns. Named after
the kind, it names no operator; an operator of the kind imports what it needs from here."""
from __future__ import annotations

import numpy as np
from hypothesis.extra import numpy as hnp

from sonnx import dtypes
from sonnx.ops.signature import TensorSig

from .conftest import edge_values


def sig(shape, elem="float", sparse=False) -> TensorSig:
    return TensorSig(shape, elem, sparse)


def ids(violations) -> list[str]:
    return [v.requirement for v in violations]


def random_operands(rng, name, m, k, n, ta=False, tb=False, with_c=True):
    dt = dtypes.numpy_dtype(name)
    shape_a = (k, m) if ta else (m, k)
    shape_b = (n, k) if tb else (k, n)
    if dtypes.is_float(name):
        def draw(shape):
            return rng.standard_normal(shape).astype(dt)
    else:
        info = np.iinfo(dt)

        def draw(shape):
            return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    return draw(shape_a), draw(shape_b), (draw((m, n)) if with_c else None)


def edge_operands(name):
    """A (n, 4), B (4, n), C (n, n) whose entries run through every edge value of the type, so
    that each output mixes infinities, NaN, signed zeros, subnormals, extremes and wrap-around."""
    v = edge_values(name)
    n = len(v)
    a = np.array([[v[(i + 3 * l) % n] for l in range(4)] for i in range(n)], dtype=v.dtype)
    b = np.array([[v[(5 * j + l) % n] for j in range(n)] for l in range(4)], dtype=v.dtype)
    c = np.array([[v[(7 * i + j) % n] for j in range(n)] for i in range(n)], dtype=v.dtype)
    return a, b, c


def float_bits(name, shape):
    dt = dtypes.numpy_dtype(name)
    uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    return hnp.arrays(uint, shape).map(lambda x: x.view(dt))
