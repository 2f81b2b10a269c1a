"""Element loop one short: Mul's reference kernel takes its element count from a size that is
off by one, so its float loop never computes the last product and C comes out one element short."""
from sonnx.semantics.tensor import size as _shipped


def size(shape):
    return _shipped(shape) - 1          # MUTANT: the number of elements, less one


PATCHES = {"sonnx.ops.mul:size": size}
