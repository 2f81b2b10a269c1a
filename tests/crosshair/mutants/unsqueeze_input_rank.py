"""Unsqueeze's output shape with a negative axis read against the input's rank r instead of the
output's rank R = r + k: for (2, 3) and axes (-1,) the 1 is inserted at position 1, giving
(2, 1, 3) instead of (2, 3, 1). Same size, so only the element check by multi-index sees it."""


def output_shape(shape, axes):
    out_rank = len(shape) + len(axes)
    new = {a + len(shape) if a < 0 else a for a in axes}     # MUTANT: r instead of R
    rest = iter(shape)
    return tuple(1 if k in new else next(rest) for k in range(out_rank))


PATCHES = {"sonnx.ops.unsqueeze:output_shape": output_shape}
