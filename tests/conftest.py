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
            # an ``@family`` token stands for its members (sonnx.requirements); it must exist too
            ids, families = requirements.expand(mark.args, known)
            unknown = [i for i in ids if i not in known] + families
            if unknown:
                raise pytest.UsageError(f"{item.nodeid}: unknown requirement ID(s) or famil(ies) {unknown}")
