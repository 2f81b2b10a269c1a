"""Mul's CrossHair cases and mutants: the five same-shape groups (elementwise.py) under MUL-R*, the
harnesses of the helpers every kernel relies on (helpers.py: wrap, flat index, round_to), claimed
for Mul's R1 and R3, and the mutants its cases must catch (faults planted in shared code: the
integer wrap, the element loop, the flat index, the rounding, the element-wise constraints).

Discovered by stem (harnesses.py): nothing else lists this module.
"""
from __future__ import annotations

import operator as python_ops

from sonnx.ops.registry import operator

from . import elementwise, helpers
from .common import Harness, Mutant, mutant
from .edges import product_ties
from .elementwise import Elementwise

MUL = Elementwise.of(operator("Mul"), exact=python_ops.mul, ties=product_ties, result="product")

HARNESSES: tuple[Harness, ...] = (
    *elementwise.harnesses(MUL),
    *helpers.harnesses(same_shape=MUL.req(1), rounding=MUL.req(3)),
)

MUTANTS: tuple[Mutant, ...] = (
    mutant("wrap_edge", ("MUL-R3",), ("mul-signed/int8.scalar.edges", "mul-signed/int8.2x3"),
           ("mul-signed/int8.2x3", ((16, 0, 0, 0, 0, 0), (8, 0, 0, 0, 0, 0)))),      # 128 stays 128
    mutant("saturation", ("MUL-R3",), ("mul-unsigned/uint8.4", "mul-signed/int8.2x3"),
           ("mul-signed/int8.2x3", ((16, 0, 0, 0, 0, 0), (9, 0, 0, 0, 0, 0)))),      # 144: 127, not -112
    mutant("broadcast_accepted", ("MUL-R4",), ("mul-refusals/pairs",),
           ("mul-refusals/pairs", (4, 1, 0, 0))),                  # (2, 3) x (1,): must be R4
    mutant("loop_short", ("MUL-R1",), ("mul-float/float16.4", "mul-float/float.2x3"),
           ("mul-float/float16.4", ((7, 7, 7, 7), (7, 7, 7, 7)))),   # 1 * 1: four elements, not three
    mutant("index_stride", ("MUL-R1",), ("flat-index/2x3",),
           ("flat-index/2x3", ((1, 2),))),
    mutant("ties_away", ("MUL-R3",), ("mul-float/float16.scalar.ties",),
           ("mul-float/float16.scalar.ties", ((1,), (2,)))),     # 1.5 * -(1 + 3 ulp): tie, even is below
)
