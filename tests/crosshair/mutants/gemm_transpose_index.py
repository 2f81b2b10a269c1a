"""Transpose index off: a_index ignores transA and reads A'[i, l] at row i, column l of the
stored A even when A is stored (K, M), i.e. it multiplies by A where it should use A^T."""


def a_index(ta, m, k, i, l):
    return i * k + l                    # MUTANT: should be l * m + i when ta


PATCHES = {"sonnx.ops.gemm:a_index": a_index}
