"""Modules imported on their first use instead of when sonnx's modules are imported.

Why: every operator module holds its constraints (which the validator runs) and its kernel
(which needs numpy) in one file, and numpy takes about 0.06 s to import, half of issue 28's
start-up budget for `sonnx validate`, which runs no kernel. ``from ..deferred import numpy as np``
gives a stand-in whose first attribute look-up imports numpy and copies numpy's namespace into
it, so that later look-ups are plain module look-ups. sys.modules is not touched: code outside
sonnx imports the real numpy as always, and ``np.ndarray`` is numpy's own class.
(importlib.util.LazyLoader would put a lazy module in sys.modules; on Python 3.11 the import
system reads its ``__spec__`` on every later ``import numpy``, which loads it at once.)
"""
from __future__ import annotations

import importlib
from types import ModuleType


class Deferred(ModuleType):
    """A stand-in for the module ``name``, imported on the first attribute asked of it."""

    def __getattr__(self, attr: str):
        # called only for names not in the stand-in's namespace: before the import, any name;
        # after it, only names the module itself makes on demand (its own __getattr__)
        real = importlib.import_module(self.__name__)
        if "__deferred_loaded__" not in self.__dict__:
            self.__dict__.update(vars(real))
            self.__dict__["__deferred_loaded__"] = True
            if attr in self.__dict__:
                return self.__dict__[attr]
        return getattr(real, attr)


numpy = Deferred("numpy")
ml_dtypes = Deferred("ml_dtypes")
