"""Flat index with a wrong stride: Horner steps by the previous dimension instead of the current."""


def flat_index(shape, index):
    off = 0
    for k in range(len(shape)):
        off = off * shape[k - 1] + index[k]      # MUTANT: should be shape[k]
    return off


PATCHES = {"sonnx.semantics.tensor:flat_index": flat_index}
