"""Flatten's copy in column-major order: y[j*m + i] = x[i*n + j] for the (m, n) result. The shape
is right and every element is kept, but an element lands at the transposed place whenever
m > 1 and n > 1 (with m = 1 or n = 1 both orders coincide)."""


def _move(data, shape):
    m, n = shape
    y = [None] * (m * n)
    for i in range(m):
        for j in range(n):
            y[j * m + i] = data[i * n + j]     # MUTANT: column-major
    return y


PATCHES = {"sonnx.ops.flatten:_move": _move}
