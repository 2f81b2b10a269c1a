"""Saturation instead of wrap-around in the integer reductions of the element-wise loop: an
out-of-range result is clamped to T's min or max."""


def wrap_unsigned(x, m):
    return min(max(x, 0), m - 1)       # MUTANT: clamps where the profile wraps


def wrap_signed(x, m, h):
    return min(max(x, -h), h - 1)      # MUTANT: clamps where the profile wraps


PATCHES = {"sonnx.semantics.intloops:wrap_unsigned": wrap_unsigned,
           "sonnx.semantics.intloops:wrap_signed": wrap_signed}
