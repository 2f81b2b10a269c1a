"""Shared test set-up: the `req` marker must name requirements that exist in the registry, and
the JUnit report records the hash of the tree it was made on (the trace calls a report of
another tree stale)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import settings

from sonnx import requirements
from sonnx.trace.inputs import step_inputs
from sonnx.trace.junit import INPUTS_PROPERTY

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))   # sonnx_dev: the development tools, not in the wheel

# Same inputs, same verdicts, every run: hypothesis draws its examples from a fixed seed.
settings.register_profile("sonnx", derandomize=True, print_blob=True)
settings.load_profile("sonnx")


def pytest_sessionstart(session):
    # hashed before any test runs: what the results were made from
    from _pytest.junitxml import xml_key
    xml = session.config.stash.get(xml_key, None)
    if xml is not None:
        xml.add_global_property(INPUTS_PROPERTY, step_inputs(ROOT, "tests")["sha256"])


def pytest_collection_modifyitems(config, items):
    known = requirements.load()
    for item in items:
        for mark in item.iter_markers("req"):
            if not mark.args:
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.req needs at least one ID")
            unknown = [i for i in mark.args if i not in known and not _family(i, known)]
            if unknown:
                raise pytest.UsageError(f"{item.nodeid}: unknown requirement ID(s) {unknown}")


# Interim (issue 27, branch h-tests): a marker may name a requirement family ``@NAME`` (docs:
# design27 "Families"). Until the requirement data declares families (branch h-reqdata, whose
# version of this check supersedes this one at the merge), a declared family of the design's list
# is accepted by name; built-in families are expanded and must not be empty.
_DESIGN_FAMILIES = ("same-shape", "dense", "typed", "no-broadcast", "rounding", "fast-bound")


def _family(token: str, known: dict) -> bool:
    if not token.startswith("@"):
        return False
    from sonnx.ops.registry import operators
    name = token[1:]
    ops = operators().values()
    prefixes = {op.prefix: op for op in ops}
    of = {rid: prefixes.get(rid.rsplit("-R", 1)[0]) for rid in known}
    if name == "every":
        return bool(known)
    if name == "operators":
        return any(op is not None for op in of.values())
    if name == "proved":
        return any("proof" in r.verification for r in known.values())
    if name.startswith("kind:"):
        return any(op is not None and op.kind == name[len("kind:"):] for op in of.values())
    declared = {f for r in known.values() for f in getattr(r, "families", ())}
    return name in declared if declared else name in _DESIGN_FAMILIES
