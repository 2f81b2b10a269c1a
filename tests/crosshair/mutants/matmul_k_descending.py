"""K descending: Gemm's index helpers read A'[i, K-1-l] and B'[K-1-l, j] at step l, so the
fold adds the products from the last to the first (the right set of products, in the wrong
order): MatMul's float result differs wherever the order changes the roundings."""


def a_index(ta, m, k, i, l):
    return (k - 1 - l) * m + i if ta else i * k + (k - 1 - l)      # MUTANT: l reversed


def b_index(tb, k, n, l, j):
    return j * k + (k - 1 - l) if tb else (k - 1 - l) * n + j      # MUTANT: l reversed


PATCHES = {"sonnx.ops.gemm:a_index": a_index, "sonnx.ops.gemm:b_index": b_index}
