"""Accumulation step overwrites instead of adding: Gemm's `_add(acc, s, t)` returns t, so each
float dot product keeps only its last term and beta * C replaces alpha * A'B' instead of adding
to it. (Integer T folds in intloops.dot_wrap, proved by Why3 as written; gemm_saturation bends
that path.)"""


def _add(acc, x, y):
    return y                            # MUTANT: should be x + y, rounded in acc


PATCHES = {"sonnx.ops.gemm:_add": _add}
