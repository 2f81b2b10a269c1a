"""Accumulation step overwrites instead of adding: Gemm's `_add(acc, s, t)` returns t, so each
dot product keeps only its last term and beta * C replaces alpha * A'B' instead of adding to it."""


def _add(acc, x, y):
    return y                            # MUTANT: should be x + y, rounded or wrapped in acc


PATCHES = {"sonnx.ops.gemm:_add": _add}
