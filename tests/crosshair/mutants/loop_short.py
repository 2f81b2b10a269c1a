"""Element loop one short: the shared element-wise reference loop takes its element count from a
size that is off by one, so it never computes the last element and C comes out one short (the
integer types of Mul go through intloops.mul_wrap instead: floats catch it)."""
from sonnx.semantics.tensor import size as _shipped


def size(shape):
    return _shipped(shape) - 1          # MUTANT: the number of elements, less one


PATCHES = {"sonnx.ops.elementwise:size": size}
