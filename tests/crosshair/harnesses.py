"""The CrossHair campaign, as data: harnesses, their reachability witnesses, planted mutants,
gathered from the operators' own cases modules. ``tools/crosshair``, the runner and
test_campaign_config read HARNESSES and MUTANTS here; no list of operators or mutants is kept.

Discovery: for every operator of the registry (``sonnx.ops.registry.operators()``, in its
order), the module ``tests/crosshair/<stem>_cases.py`` (stem: the operator's module name, e.g.
``mul``, ``gemm``) if it exists, and from it ``HARNESSES`` and ``MUTANTS`` (tuples). An operator
without such a module has no CrossHair cases; test_campaign_config fails when one of its
requirements asks for CrossHair and no harness claims it.

Nothing here runs CrossHair; ``runner.py`` analyses one harness (or witness set, or mutant) in
a process of its own and ``campaign.py`` drives them all. Every function a case builds is a
plain Python function with icontract contracts, so each counterexample CrossHair reports can be
replayed by calling it (``campaign.replay``).

Where things are: ``common.py`` (the records, ``mutant(...)``, how a mutant is applied),
``edges.py`` (shapes, types, edge values), ``elementwise.py`` (the harnesses of any same-shape
operator, from one ``Elementwise`` description), ``helpers.py`` (wrap, flat index, rounding:
harnesses of shared helpers, registered by an operator that claims them), ``<stem>_cases.py``
(one operator's harnesses and mutants), ``mutants/`` (one module per planted fault: a fault in
one operator's own code is named ``<stem>_...``, a fault in shared code names no operator).

A harness states the kernel's declared contract as its postcondition, and has at least one
witness: a case with a deliberately FALSE postcondition ("the int8 product never wraps") that
CrossHair must refute, with a counterexample that replays; otherwise its paths do not reach the
interesting part of the spec and its silence is no evidence. ``exhaustive=True`` on a case means
the campaign requires "Confirmed over all paths", not merely "no counterexample in the budget".

Adding an operator's cases: a module ``<stem>_cases.py`` with ``HARNESSES`` (a same-shape
operator: ``elementwise.harnesses(Elementwise.of(its registry record, exact=..., ties=...,
result=...))``) and ``MUTANTS``. Planting a mutant: a module ``mutants/<name>.py`` with
``PATCHES = {"module:attribute": replacement}`` (one part the shipped kernel looks up when it
runs) and a docstring saying what is wrong, then ``common.mutant(name, requirement IDs, targets,
known_bug)`` in the cases module's MUTANTS: ``targets`` are the cases (``"harness/case"``) that
must catch it, ``known_bug`` one target with arguments on which the shipped code passes and the
mutant fails in plain Python. The same planted part aimed at another operator's cases is another
entry with ``module=`` naming the existing module.
"""
from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from types import ModuleType

from sonnx.ops.registry import operators

from .common import Case, Harness, Mutant


def stem(op) -> str:
    """The operator's stem (its module name), read from its record: the ``stem`` field when the
    record has one, else the name of its spec page (spec/<stem>.md)."""
    return getattr(op, "stem", None) or Path(op.spec).stem


def cases_modules() -> dict[str, ModuleType]:
    """stem -> the operator's cases module, for every registered operator that has one."""
    found = {}
    for op in operators().values():
        name = f"{__package__}.{stem(op)}_cases"
        if importlib.util.find_spec(name) is not None:
            found[stem(op)] = importlib.import_module(name)
    return found


_MODULES = cases_modules()
HARNESSES: tuple[Harness, ...] = tuple(h for m in _MODULES.values() for h in getattr(m, "HARNESSES", ()))
MUTANTS: tuple[Mutant, ...] = tuple(x for m in _MODULES.values() for x in getattr(m, "MUTANTS", ()))


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
