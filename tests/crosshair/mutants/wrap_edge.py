"""Wrong wrap edge in the signed reduction: `r > h` instead of `>=`, so the int8 product 128
stays 128 (out of range) instead of becoming -128."""


def wrap_signed(x, m, h):
    r = x % m
    if r > h:                          # MUTANT: should be r >= h
        r = r - m
    return r


PATCHES = {"sonnx.semantics.intloops:wrap_signed": wrap_signed}
