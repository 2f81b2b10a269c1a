"""Reasoning about shapes with symbolic or unknown dimensions, for the constraint functions.

A shape rule is reported on such shapes when it holds for every value the dimensions can take
(the one-pass promise: docs/conform.md, "Findings in one pass"), so that no finding waits for a pin and
none is guessed. "Every value" means every pinning ONNX itself would run the node with (its
own broadcasting rules satisfied); when no such pinning exists, every pinning.

The questions asked are all of one form: can these dimensions be made pairwise equal (and
some of them 1)? A union-find over the dimensions answers it exactly: a static size is a
constant, an ONNX dim_param names one value wherever it appears, and every other dimension
(None, "", OpenVINO's "?" and a..b intervals) is a value of its own, unrelated to any other.
An interval is treated as any positive value: that can only make a rule look less certain,
never report one that does not hold.
"""
from __future__ import annotations

from typing import Iterable, Sequence


def is_static(d: object) -> bool:
    return isinstance(d, int) and not isinstance(d, bool)


def is_symbol(d: object) -> bool:
    """An ONNX dim_param: one value wherever the same name appears."""
    return isinstance(d, str) and d not in ("", "?") and ".." not in d


# req: @no-broadcast
class Dims:
    """Terms for the dimensions of one node: each unknown dimension is its own term."""

    def __init__(self) -> None:
        self._fresh = 0

    def term(self, d: object) -> tuple:
        if is_static(d):
            return ("c", d)
        if is_symbol(d):
            return ("s", d)
        self._fresh += 1
        return ("u", self._fresh)

    def shape(self, shape: Sequence) -> list[tuple]:
        return [self.term(d) for d in shape]


ONE = ("c", 1)


# req: @same-shape, @no-broadcast
def solvable(equations: Iterable[tuple[tuple, tuple]]) -> bool:
    """Whether some positive values of the terms make every equation hold: no class of terms
    made equal holds two different constants."""
    parent: dict[tuple, tuple] = {}

    def find(t: tuple) -> tuple:
        parent.setdefault(t, t)
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    for x, y in equations:
        rx, ry = find(x), find(y)
        if rx == ry:
            continue
        if rx[0] == "c" and ry[0] == "c":
            return False        # two different constants (equal ones are one term)
        if ry[0] == "c":        # a constant stays the root of its class
            rx, ry = ry, rx
        parent[ry] = rx
    return True
