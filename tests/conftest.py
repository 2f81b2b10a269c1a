"""Shared test set-up: the `req` marker must name requirements that exist in the registry."""
from __future__ import annotations

import pytest
from hypothesis import settings

from sonnx import requirements

# Same inputs, same verdicts, every run: hypothesis draws its examples from a fixed seed.
settings.register_profile("sonnx", derandomize=True, print_blob=True)
settings.load_profile("sonnx")


def pytest_collection_modifyitems(config, items):
    known = requirements.load()
    for item in items:
        for mark in item.iter_markers("req"):
            if not mark.args:
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.req needs at least one ID")
            unknown = [i for i in mark.args if i not in known]
            if unknown:
                raise pytest.UsageError(f"{item.nodeid}: unknown requirement ID(s) {unknown}")
