"""Sub computes -(B - A): right on every nonzero difference (rounding to nearest even is
symmetric), wrong on the sign of an exact zero: x - x gives -0 where IEEE 754 gives +0."""


def exact_difference(x, y):
    return -(y - x)                     # MUTANT: -(y - x) is not x - y when x = y


PATCHES = {"sonnx.ops.sub:exact_difference": exact_difference}
