"""What every harness module shares: the campaign's records (Case, Harness, Mutant), how a
mutant bends the shipped code, and the small tools that make CrossHair's paths reach the spec.

A case's ``build()`` returns a plain function with icontract contracts whose arguments are plain
ints, tuples of ints or floats (never a ``TensorValue``: CrossHair drops a path silently when
building an argument fails, so each harness builds its tensors itself, inside its body). Its
preconditions bound the inputs, its single postcondition is the spec.
"""
from __future__ import annotations

import importlib
import typing
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

import icontract


# ---------------------------------------------------------------- campaign entries
@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], Callable]    # called inside the process that analyses or replays it
    budget: float = 6.0              # nominal CPU seconds: sets the iteration cap (campaign.py)
    exhaustive: bool = False         # require "Confirmed over all paths"


@dataclass(frozen=True)
class Harness:
    name: str
    requirements: tuple[str, ...]
    cases: tuple[Case, ...]
    witnesses: tuple[Case, ...]
    what: str
    # "symbolic": CrossHair reasons over the inputs; "sampled": some step (numpy's C code,
    # math.frexp) makes it pick concrete values, so paths are samples, not proofs
    mode: str = "symbolic"


@dataclass(frozen=True)
class Mutant:
    name: str
    module: str                      # defines PATCHES and says in its docstring what is wrong
    requirements: tuple[str, ...]
    targets: tuple[str, ...]         # "harness/case" names that must catch it
    # a counterexample known in advance: (one of the targets, its arguments); the real code
    # passes it and the mutant fails it, in plain Python (test_campaign_config)
    known_bug: tuple[str, tuple]
    budget: float = 20.0


def mutant(name: str, requirements: tuple[str, ...], targets: tuple[str, ...],
           known_bug: tuple[str, tuple], module: str | None = None) -> Mutant:
    """A planted fault aimed at ``targets`` (``"harness/case"`` names of the registering
    operator's cases). ``module``: the module under mutants/ that bends the code, when it is not
    ``name`` (a fault of shared code aimed at another operator's cases: e.g. Add's cases catch
    the shared ``saturation`` module under the name ``add_saturation``)."""
    return Mutant(name, f"tests.crosshair.mutants.{module or name}", requirements, targets, known_bug)


def case_name(tag: str, claim: str) -> str:
    """The case's name: its tag for the spec, tag.the-claim for a witness."""
    return tag if claim == "spec" else f"{tag}.{claim.replace(' ', '-')}"


# ---------------------------------------------------------------- the code under test
def resolve(path: str):
    """``"module:attribute"``, looked up when called: inside a mutant's process (or ``applied``)
    that is the mutant's replacement."""
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


@contextmanager
def applied(m: Mutant) -> Iterator[None]:
    """The mutant's PATCHES ({"module:attribute": replacement}) set in the shipped modules, and
    put back on exit. The kernels look these names up when they run, so the code under test is
    the shipped code with one part bent. A name the module does not have is an error (a patch
    that reaches nothing would make a mutant that cannot be caught)."""
    patches = importlib.import_module(m.module).PATCHES
    saved = []
    try:
        for path, replacement in patches.items():
            module, name = path.split(":")
            target = importlib.import_module(module)
            if not hasattr(target, name):
                raise AttributeError(f"mutant {m.name}: {module} has no {name} to replace")
            saved.append((target, name, getattr(target, name)))
            setattr(target, name, replacement)
        yield
    finally:
        for target, name, original in reversed(saved):
            setattr(target, name, original)


def unwrapped(fn: Callable) -> Callable:
    """``fn`` without its icontract checker (a function without contracts comes back as is)."""
    while hasattr(fn, "__preconditions__") or hasattr(fn, "__postconditions__"):
        fn = fn.__wrapped__
    return fn


def declared_post(fn: Callable, **kwargs) -> bool:
    """Every postcondition declared on the real function ``fn`` holds for these arguments/result.
    Harness modules import ``fn`` when they load, before any mutant is applied: the spec is the
    shipped contract even while a mutant bends the code."""
    checker = icontract._checkers.find_checker(fn)
    if checker is None or not checker.__postconditions__:
        # the per-element contracts exist only with SONNX_CONTRACTS=full: without them the
        # harness would check nothing, so refuse to run rather than pass
        raise RuntimeError(f"{fn.__name__} declares no postcondition; run with SONNX_CONTRACTS=full")
    for contract in checker.__postconditions__:
        chosen = {k: kwargs[k] for k in contract.condition_args}
        if not contract.condition(**chosen):
            return False
    return True


def outcome(kernel: Callable, *args) -> tuple:
    """("ok", the result) or ("refused", the requirement IDs of the ProfileViolation raised)."""
    from sonnx.errors import ProfileViolation
    try:
        return ("ok", kernel(*args))
    except ProfileViolation as e:
        return ("refused", frozenset(v.requirement for v in e.violations))


# ---------------------------------------------------------------- helping CrossHair's paths
def pick(table, i: int):
    """table[i], chosen by comparing i with each position: CrossHair branches once per entry and
    every path then carries a concrete value (a symbolic index into a float table would give a
    symbolic real that each later math.frexp must realize, at a solver call each)."""
    for j, v in enumerate(table):
        if i == j:
            return v
    raise IndexError(i)


def within(values, lo: int, hi: int) -> bool:
    """lo <= v <= hi for every v, as one conjunction (``&``, no short circuit): CrossHair keeps it
    a single symbolic formula, where ``all(...)`` forks on every element and rarely gets
    through a long precondition."""
    ok = True
    for v in values:
        ok = ok & (lo <= v) & (v <= hi)
    return ok


def named(fn: Callable, name: str, **lengths: int) -> Callable:
    """Name a built harness; ``lengths`` gives tuple arguments a fixed length in their type
    (``tuple[int, int, int]``): CrossHair then makes exactly that many symbolic ints, where a
    ``list[int]`` with a length precondition mostly fails to meet it."""
    fn.__name__ = fn.__qualname__ = name.replace(".", "_").replace("-", "_")
    hints = typing.get_type_hints(unwrapped(fn))   # no strings left for CrossHair to resolve
    for arg, n in lengths.items():
        hints[arg] = typing.Tuple[(int,) * n] if n else typing.Tuple[()]
    layer = fn
    while layer is not None:                       # the checker copied the dict: set every layer
        layer.__annotations__ = hints
        layer = getattr(layer, "__wrapped__", None)
    return fn


def shape_tag(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"
