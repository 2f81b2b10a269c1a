"""Sub's CrossHair cases and mutants: the five same-shape groups (elementwise.py) under SUB-R*, and
the mutants its cases must catch: the operands swapped, a zero difference of the wrong sign, and
the shared element-wise constraints' broadcast fault seen through Sub's harnesses.

Discovered by stem (harnesses.py): nothing else lists this module.
"""
from __future__ import annotations

import operator as python_ops

from sonnx.ops.registry import operator

from . import elementwise
from .common import Harness, Mutant, mutant
from .edges import sum_ties
from .elementwise import Elementwise

# sum_ties is closed under negation, so the differences of its values hold the same ties
SUB = Elementwise.of(operator("Sub"), exact=python_ops.sub, ties=sum_ties, result="difference")

HARNESSES: tuple[Harness, ...] = elementwise.harnesses(SUB)

MUTANTS: tuple[Mutant, ...] = (
    mutant("sub_operands_swapped", ("SUB-R3",), ("sub-signed/int8.2x3", "sub-float/float16.scalar"),
           ("sub-signed/int8.2x3", ((5, 0, 0, 0, 0, 0), (3, 0, 0, 0, 0, 0)))),       # 5 - 3 is 2, not -2
    mutant("sub_zero_sign_flipped", ("SUB-R3",), ("sub-float/float16.scalar", "sub-float/double.scalar"),
           ("sub-float/float16.scalar", ((7,), (7,)))),                              # 1 - 1 is +0, not -0
    mutant("sub_broadcast_accepted", ("SUB-R4",), ("sub-refusals/pairs",),
           ("sub-refusals/pairs", (4, 1, 0, 0)), module="broadcast_accepted"),   # (2, 3) - (1,): R4
)
