"""Pad's pads read as pairs per axis, (b_0, e_0, b_1, e_1, ...) (the layout of PyTorch's
F.pad), instead of ONNX's (b_0, ..., b_(r-1), e_0, ..., e_(r-1)). The output's size along each
axis is b + e either way only when the pairs happen to agree; the elements land at the wrong
offset whenever a begin pad and another axis's pad differ, e.g. (1, 1, 0, 0) on a rank-2 input."""


def begins_ends(rank, pads, axes=None):
    named = tuple(range(rank)) if axes is None else tuple(a + rank if a < 0 else a for a in axes)
    b, e = [0] * rank, [0] * rank
    for k, a in enumerate(named):
        b[a], e[a] = int(pads[2 * k]), int(pads[2 * k + 1])     # MUTANT: interleaved pairs
    return tuple(b), tuple(e)


PATCHES = {"sonnx.ops.pad:begins_ends": begins_ends}
