"""Relu written as "x < 0 gives 0": right everywhere except -0, which stays -0 where the profile
decides +0 (what max(x, 0) may give, and what onnxruntime gives)."""


def relu_element(dtype, x):
    return 0 if x < 0 else x            # MUTANT: -0 < 0 is false, so -0 is returned as is


PATCHES = {"sonnx.ops.relu:relu_element": relu_element}
