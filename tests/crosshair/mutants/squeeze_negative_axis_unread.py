"""Squeeze's axis normalisation with the negative case forgotten: a negative axis is used as
given instead of as a + r. The range and size-1 checks still pass (Python reads shape[-2] from
the end), but no position of the output shape equals a negative axis, so nothing is removed: the
result keeps the input's rank."""


def normalise(axes, rank):
    return tuple(axes)      # MUTANT: a + r for a < 0 forgotten


PATCHES = {"sonnx.ops.squeeze:normalise": normalise}
