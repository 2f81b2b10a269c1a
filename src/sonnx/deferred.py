"""Modules imported on their first use instead of when sonnx's modules are imported.

Why: every operator module holds its constraints (which the validator runs) and its kernel
(which needs numpy) in one file, and numpy takes about 0.1 s to import, most of issue 28's
start-up budget for `sonnx validate`, which runs no kernel. ``from ..deferred import numpy as np``
binds a stand-in. The first attribute asked of it imports numpy and puts the real module in its
place: in this module and in every sonnx module whose globals hold the stand-in. From then on
those modules look names up in numpy itself, at a plain module look-up's cost, and see whatever
is done to numpy (a test's monkeypatch, say). sys.modules is not touched: code outside sonnx
imports numpy as always. (importlib.util.LazyLoader would put a lazy module in sys.modules; on
Python 3.11 the import system reads its ``__spec__`` on every later ``import numpy``, which
loads it at once.)
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType


class Deferred(ModuleType):
    """A stand-in for the module ``name``, replaced by it on the first attribute asked."""

    def __getattr__(self, attr: str):
        # called only for names the stand-in does not hold: any name but its module metadata
        real = importlib.import_module(self.__name__)
        _replace(self, real)
        return getattr(real, attr)       # a reference kept elsewhere still works, more slowly


def _replace(stand_in: Deferred, real: ModuleType) -> None:
    """``real`` in place of ``stand_in`` in the globals of every sonnx module (this one's too)."""
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == "sonnx" or name.startswith("sonnx.")):
            continue
        space = getattr(mod, "__dict__", None)
        if not isinstance(space, dict):
            continue
        for key, value in list(space.items()):
            if value is stand_in:
                space[key] = real


numpy = Deferred("numpy")
ml_dtypes = Deferred("ml_dtypes")
