"""Reshape's 0 entry copying the input's last dimension instead of the one at its index: right
whenever the two coincide (a 0 at the last index of a same-rank target, or equal dimensions),
wrong otherwise ((2, 3) to (0, -1) gives (3, 2))."""
from sonnx.ops import reshape as reshape_op

_resolve = reshape_op.resolve


def resolve(in_shape, shape, allowzero=0):
    if allowzero == 0 and in_shape:
        shape = tuple(in_shape[-1] if s == 0 else s for s in shape)      # MUTANT: the last dimension
    return _resolve(in_shape, shape, allowzero)


PATCHES = {"sonnx.ops.reshape:resolve": resolve}
