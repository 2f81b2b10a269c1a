"""Reshape's copy in reverse order: y[k] = x[n-1-k]. The shape is right and every element is
kept, but each lands at the mirrored place (a single element, or a palindrome, hides it)."""


def _move(data, n):
    y = [None] * n
    for k in range(n):
        y[k] = data[n - 1 - k]      # MUTANT: reversed
    return y


PATCHES = {"sonnx.ops.reshape:_move": _move}
