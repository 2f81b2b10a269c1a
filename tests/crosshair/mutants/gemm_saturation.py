"""Integer reduction saturating instead of wrapping: the sum of an integer Gemm entry
(intloops.dot_wrap reduces it through wrap, hence wrap_signed / wrap_unsigned) is clamped to
T's min or max where the profile reduces it modulo 2^bits."""


def wrap_unsigned(x, m):
    return min(max(x, 0), m - 1)       # MUTANT: clamps where the profile wraps


def wrap_signed(x, m, h):
    return min(max(x, -h), h - 1)      # MUTANT: clamps where the profile wraps


PATCHES = {"sonnx.semantics.intloops:wrap_unsigned": wrap_unsigned,
           "sonnx.semantics.intloops:wrap_signed": wrap_signed}
