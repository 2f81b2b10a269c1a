"""Flatten's output shape split one dimension late: (prod(d[:a+1]), prod(d[a+1:])) (a = r gives
the same as r). The data is right, the shape wrong for every a < r whose dimension d[a] > 1."""
import math

from sonnx.ops import flatten as _flatten


def output_shape(shape, axis):
    a = min(_flatten.normalise_axis(axis, len(shape)) + 1, len(shape))    # MUTANT: one late
    return math.prod(shape[:a]), math.prod(shape[a:])


PATCHES = {"sonnx.ops.flatten:output_shape": output_shape}
