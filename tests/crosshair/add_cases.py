"""Add's CrossHair cases and mutants: the five same-shape groups (elementwise.py) under ADD-R*, and
the mutants its cases must catch: faults of shared code seen through Add's harnesses (saturation,
ties away, broadcast accepted) and a zero that loses its sign.

Discovered by stem (harnesses.py): nothing else lists this module.
"""
from __future__ import annotations

import operator as python_ops

from sonnx.ops.registry import operator

from . import elementwise
from .common import Harness, Mutant, mutant
from .edges import sum_ties
from .elementwise import Elementwise

ADD = Elementwise.of(operator("Add"), exact=python_ops.add, ties=sum_ties, result="sum")

HARNESSES: tuple[Harness, ...] = elementwise.harnesses(ADD)

MUTANTS: tuple[Mutant, ...] = (
    mutant("add_saturation", ("ADD-R3",), ("add-signed/int8.2x3", "add-unsigned/uint8.4"),
           ("add-signed/int8.2x3", ((100, 0, 0, 0, 0, 0), (100, 0, 0, 0, 0, 0))),   # 200: 127, not -56
           module="saturation"),
    mutant("add_ties_away", ("ADD-R3",), ("add-float/float16.scalar.ties", "add-float/bfloat16.scalar.ties"),
           ("add-float/float16.scalar.ties", ((0,), (2,))), module="ties_away"),  # 1 + ulp/2: tie, even is 1
    mutant("add_broadcast_accepted", ("ADD-R4",), ("add-refusals/pairs",),
           ("add-refusals/pairs", (4, 1, 0, 0)), module="broadcast_accepted"),   # (2, 3) + (1,): R4
    mutant("zero_sign_lost", ("ADD-R3",), ("add-float/float16.scalar", "add-float/double.scalar"),
           ("add-float/float16.scalar", ((1,), (1,)))),                          # -0 + -0 is -0
)
