"""The output shape of each profile layer as OpenVINO 2026.4's shape inference computes it when it
reads an IR (Core.read_model), from the shapes of the layer's inputs in the order OpenVINO takes
them (document order of the <input> ports). None: OpenVINO refuses to build the layer.

A dimension is an int or, when dynamic, a str ("?" or an interval "a..b" as a Parameter's
`shape` writes it). Dynamic dimensions are followed only as far as the verdict needs: every one
starts at a Parameter or Const (or behind a layer outside the profile), where PROF-R2 already
refuses it, so a computed "?" stands for any dynamic value OpenVINO may narrow it to (an
interval). tests/validate/test_openvino_oracle.py compares these functions with OpenVINO's
own inference, layer by layer.
"""
from __future__ import annotations

import itertools

from ..profile import Dim

Shape = tuple[Dim, ...]
DYNAMIC = "?"


def _static(d: Dim) -> bool:
    return isinstance(d, int)


def _may_equal(x: Dim, y: Dim) -> bool:
    return not (_static(x) and _static(y)) or x == y


def numpy_broadcast(a: Shape, b: Shape) -> Shape | None:
    """auto_broadcast="numpy": numpy's rule, right-aligned; a dynamic dimension against a static
    one other than 1 takes the static one (the only value that broadcasts)."""
    out: list[Dim] = []
    for x, y in itertools.zip_longest(reversed(a), reversed(b), fillvalue=1):
        if _static(x) and _static(y):
            if x != y and x != 1 and y != 1:
                return None
            out.append(x if y == 1 else y)
        elif _static(x) or _static(y):
            s = x if _static(x) else y
            out.append(DYNAMIC if s == 1 else s)
        else:
            out.append(DYNAMIC)
    return tuple(reversed(out))


def no_broadcast(a: Shape, b: Shape) -> Shape | None:
    """auto_broadcast="none": the same rank and the same dimensions."""
    if len(a) != len(b) or not all(_may_equal(x, y) for x, y in zip(a, b)):
        return None
    return tuple(x if _static(x) else y for x, y in zip(a, b))


def pdpd_broadcast(a: Shape, b: Shape) -> Shape | None:
    """auto_broadcast="pdpd" as OpenVINO reads it from an IR (no axis is read, so B is aligned
    with A's first axis): B's rank at most A's, each of B's dims 1 or A's; the result is A."""
    if len(b) > len(a) or not all(y == 1 or _may_equal(x, y) for x, y in zip(a, b)):
        return None
    return a


BROADCAST = {"numpy": numpy_broadcast, "none": no_broadcast, "pdpd": pdpd_broadcast}


def elementwise(shapes: list[Shape], mode: str) -> Shape | None:
    return BROADCAST[mode](shapes[0], shapes[1])


def unary(shapes: list[Shape]) -> Shape | None:
    return shapes[0]


def matrix_product(shapes: list[Shape], transpose_a: bool, transpose_b: bool) -> Shape | None:
    """OpenVINO's matrix product (version 1): a rank-1 A is (1, K) and a rank-1 B is (K, 1), their transpose flags ignored,
    and the added axis is dropped from the result; the batch axes broadcast as numpy's do;
    a scalar operand is refused."""
    a, b = shapes
    if not a or not b:
        return None
    ma = (1, a[0]) if len(a) == 1 else (a[:-2] + (a[-1], a[-2]) if transpose_a else a)
    mb = (b[0], 1) if len(b) == 1 else (b[:-2] + (b[-1], b[-2]) if transpose_b else b)
    if not _may_equal(ma[-1], mb[-2]):
        return None
    batch = numpy_broadcast(ma[:-2], mb[:-2])
    if batch is None:
        return None
    return batch + (() if len(a) == 1 else (ma[-2],)) + (() if len(b) == 1 else (mb[-1],))
