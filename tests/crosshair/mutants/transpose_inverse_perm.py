"""Transpose's source index read through the inverse permutation: i[k] = j[perm[k]] instead of
i[perm[k]] = j[k]. Right whenever perm is its own inverse (every perm of rank 2, every swap),
wrong for a 3-cycle such as (1, 2, 0), where an element lands at the wrong place (or an index
falls outside X)."""


def source_index(perm, j):
    return tuple(j[p] for p in perm)     # MUTANT: the inverse permutation


PATCHES = {"sonnx.ops.transpose:source_index": source_index}
