"""The CrossHair campaign, as data: harnesses, their reachability witnesses, planted mutants.
This is the one list of them; ``tools/crosshair``, the runner and test_campaign_config read it.

Nothing here runs CrossHair; ``runner.py`` analyses one harness (or witness set, or mutant) in
a process of its own and ``campaign.py`` drives them all. Every function a case builds is a
plain Python function with icontract contracts, so each counterexample CrossHair reports can be
replayed by calling it (``campaign.replay``).

Where things are: ``common.py`` (the records, how a mutant is applied), ``edges.py`` (shapes,
types, edge values), ``elementwise.py`` (the harnesses of any same-shape operator, from one
``Elementwise`` description), ``gemm_cases.py``, ``helpers.py`` (wrap, flat index, rounding),
``mutants/`` (one module per planted fault).

A harness states the kernel's declared contract as its postcondition, and has at least one
witness: a case with a deliberately FALSE postcondition ("the int8 product never wraps") that
CrossHair must refute, with a counterexample that replays; otherwise its paths do not reach the
interesting part of the spec and its silence is no evidence. ``exhaustive=True`` on a case means
the campaign requires "Confirmed over all paths", not merely "no counterexample in the budget".

Adding a same-shape operator: describe it with ``Elementwise.of(its registry record, exact=...,
ties=..., result=...)`` and add ``*elementwise.harnesses(it)`` to HARNESSES. Planting a mutant:
a module ``mutants/<name>.py`` with ``PATCHES = {"module:attribute": replacement}`` (one part
the shipped kernel looks up when it runs) and a docstring saying what is wrong, then a
``_mutant(name, requirement IDs, targets, known_bug)`` below: ``targets`` are the cases
(``"harness/case"``) that must catch it, ``known_bug`` one target with arguments on which the
shipped code passes and the mutant fails in plain Python. The same planted part aimed at another
operator's cases is another entry with ``module=`` naming the existing module.
"""
from __future__ import annotations

import operator as python_ops

from sonnx.ops.registry import operator

from . import elementwise, gemm_cases, helpers, matmul_cases, relu_cases
from .common import Case, Harness, Mutant
from .edges import product_ties, sum_ties
from .elementwise import Elementwise

MUL = Elementwise.of(operator("Mul"), exact=python_ops.mul, ties=product_ties, result="product")
ADD = Elementwise.of(operator("Add"), exact=python_ops.add, ties=sum_ties, result="sum")
# sum_ties is closed under negation, so the differences of its values hold the same ties
SUB = Elementwise.of(operator("Sub"), exact=python_ops.sub, ties=sum_ties, result="difference")

HARNESSES: tuple[Harness, ...] = (
    *elementwise.harnesses(MUL),
    *elementwise.harnesses(ADD),
    *elementwise.harnesses(SUB),
    *relu_cases.HARNESSES,
    *helpers.HARNESSES,
    *gemm_cases.HARNESSES,
    *matmul_cases.HARNESSES,
)


def _mutant(name: str, requirements: tuple[str, ...], targets: tuple[str, ...],
            known_bug: tuple[str, tuple], module: str | None = None) -> Mutant:
    """``module``: the mutants/ module, when the fault is another mutant's aimed at other cases."""
    return Mutant(name, f"tests.crosshair.mutants.{module or name}", requirements, targets, known_bug)


MUTANTS: tuple[Mutant, ...] = (
    _mutant("wrap_edge", ("MUL-R3",), ("mul-signed/int8.scalar.edges", "mul-signed/int8.2x3"),
            ("mul-signed/int8.2x3", ((16, 0, 0, 0, 0, 0), (8, 0, 0, 0, 0, 0)))),      # 128 stays 128
    _mutant("saturation", ("MUL-R3",), ("mul-unsigned/uint8.4", "mul-signed/int8.2x3"),
            ("mul-signed/int8.2x3", ((16, 0, 0, 0, 0, 0), (9, 0, 0, 0, 0, 0)))),      # 144: 127, not -112
    _mutant("broadcast_accepted", ("MUL-R4",), ("mul-refusals/pairs",),
            ("mul-refusals/pairs", (4, 1, 0, 0))),                  # (2, 3) x (1,): must be R4
    _mutant("loop_short", ("MUL-R1",), ("mul-float/float16.4", "mul-float/float.2x3"),
            ("mul-float/float16.4", ((7, 7, 7, 7), (7, 7, 7, 7)))),   # 1 * 1: four elements, not three
    _mutant("index_stride", ("MUL-R1",), ("flat-index/2x3",),
            ("flat-index/2x3", ((1, 2),))),
    _mutant("ties_away", ("MUL-R3",), ("mul-float/float16.scalar.ties",),
            ("mul-float/float16.scalar.ties", ((1,), (2,)))),     # 1.5 * -(1 + 3 ulp): tie, even is below
    # Add: the same bent parts seen through Add's harnesses, and a zero that loses its sign
    _mutant("add_saturation", ("ADD-R3",), ("add-signed/int8.2x3", "add-unsigned/uint8.4"),
            ("add-signed/int8.2x3", ((100, 0, 0, 0, 0, 0), (100, 0, 0, 0, 0, 0))),   # 200: 127, not -56
            module="saturation"),
    _mutant("add_ties_away", ("ADD-R3",), ("add-float/float16.scalar.ties", "add-float/bfloat16.scalar.ties"),
            ("add-float/float16.scalar.ties", ((0,), (2,))), module="ties_away"),  # 1 + ulp/2: tie, even is 1
    _mutant("add_broadcast_accepted", ("ADD-R4",), ("add-refusals/pairs",),
            ("add-refusals/pairs", (4, 1, 0, 0)), module="broadcast_accepted"),   # (2, 3) + (1,): R4
    _mutant("zero_sign_lost", ("ADD-R3",), ("add-float/float16.scalar", "add-float/double.scalar"),
            ("add-float/float16.scalar", ((1,), (1,)))),                          # -0 + -0 is -0
    # Sub: the operands swapped, a zero difference of the wrong sign, a bent part seen through Sub
    _mutant("sub_operands_swapped", ("SUB-R3",), ("sub-signed/int8.2x3", "sub-float/float16.scalar"),
            ("sub-signed/int8.2x3", ((5, 0, 0, 0, 0, 0), (3, 0, 0, 0, 0, 0)))),       # 5 - 3 is 2, not -2
    _mutant("sub_zero_sign_flipped", ("SUB-R3",), ("sub-float/float16.scalar", "sub-float/double.scalar"),
            ("sub-float/float16.scalar", ((7,), (7,)))),                              # 1 - 1 is +0, not -0
    _mutant("sub_broadcast_accepted", ("SUB-R4",), ("sub-refusals/pairs",),
            ("sub-refusals/pairs", (4, 1, 0, 0)), module="broadcast_accepted"),   # (2, 3) - (1,): R4
    # Relu: -0 kept as -0, a NaN turned into 0, unsigned integers accepted
    _mutant("relu_minus_zero_kept", ("RELU-R3",), ("relu-float/float.scalar", "relu-float/float16.scalar"),
            ("relu-float/float.scalar", ((1,),))),                                   # -0 gives +0
    _mutant("relu_nan_to_zero", ("RELU-R3",), ("relu-float/double.scalar", "relu-float/float16.scalar"),
            ("relu-float/double.scalar", ((19,),))),                                  # NaN gives NaN
    _mutant("relu_unsigned_accepted", ("RELU-R2",), ("relu-refusals/types",),
            ("relu-refusals/types", (0, 4))),                                         # uint8: RELU-R2
    # A stored (2, 3) with transA: A'[1, 0] is at flat 1, the mutant reads flat 3
    _mutant("gemm_transpose_index", ("GEMM-R1",), ("gemm-index/a_index", "gemm-signed/int32.3x2x2"),
            ("gemm-index/a_index", (True, 2, 3, 1, 0))),
    # A (2, 3) x B (3, 2) with C of shape (2,): must be refused with GEMM-R4
    _mutant("gemm_c_broadcast", ("GEMM-R4",), ("gemm-refusals/shapes",),
            ("gemm-refusals/shapes", (0, 0, 3, 0, 0))),
    # 1 x 3 x 1 float, no C, all ones (edge value 7), alpha = beta = 1: Y = 3, the mutant keeps
    # the last term, 1 (integer T no longer goes through _add: intloops.dot_wrap)
    _mutant("gemm_sum_overwrites", ("GEMM-R7",), ("gemm-float/float.1x3x1", "gemm-float/float16.1x1x1"),
            ("gemm-float/float.1x3x1", (False, False, False, (7, 7, 7), (7, 7, 7), (0,), 0, 0))),
    # int32 edge values: max * 2 wraps to -2, the mutant clamps to max
    _mutant("gemm_saturation", ("GEMM-R7",), ("gemm-signed/int32.1x3x1.edges", "gemm-unsigned/uint32.1x3x1"),
            ("gemm-signed/int32.1x3x1.edges", (False, False, False, (10, 3, 3), (5, 3, 3), (3,)))),
    # MatMul: the products summed from the last to the first (Gemm's index helpers bent)
    # double ties: (1 + u)(1 + u) + (1 + u) 3 + (1 + u)(-(1 + 3u)) rounds differently backwards
    _mutant("matmul_k_descending", ("MATMUL-R5",), ("matmul-float/double.1x3x1.ties",
                                                    "matmul-float/float16.1x3x1.ties"),
            ("matmul-float/double.1x3x1.ties", ((0, 0, 0), (0, 3, 2)))),
    # A (3, 2) = [[1, 0], ...] times B = [[0, 1], [0, 0]]: Y[0] is [0, 1]; with B^T it is [0, 0]
    _mutant("matmul_transposed", ("MATMUL-R5",), ("matmul-int/int32.3x2x2", "matmul-int/int32.2x1x3"),
            ("matmul-int/int32.3x2x2", ((1, 0, 0, 0, 0, 0), (0, 1, 0, 0)))),
    # A (2, 2, 3) with B (3, 2): B would be reused for both matrices, must be R4 (and R1)
    _mutant("matmul_broadcast_accepted", ("MATMUL-R4",), ("matmul-refusals/shapes",),
            ("matmul-refusals/shapes", (3, 0))),
)


def harness(name: str) -> Harness:
    for h in HARNESSES:
        if h.name == name:
            return h
    raise KeyError(f"no harness {name!r}; known: {', '.join(h.name for h in HARNESSES)}")


def mutant(name: str) -> Mutant:
    for m in MUTANTS:
        if m.name == name:
            return m
    raise KeyError(f"no mutant {name!r}; known: {', '.join(m.name for m in MUTANTS)}")


def find_case(target: str, witnesses: bool = False) -> tuple[Harness, Case]:
    hname, cname = target.split("/", 1)
    h = harness(hname)
    for c in (h.witnesses if witnesses else h.cases):
        if c.name == cname:
            return h, c
    raise KeyError(f"no case {target!r}")
