"""Plant a fault in the validator's source for one test: the check that should catch it must
then fail. ``plant(monkeypatch, module, (old, new), ...)`` re-executes the module with each
``old`` replaced by its ``new`` (each found exactly once) and rebinds every function and class it defines, here and in every
sonnx module that imported them by name; monkeypatch undoes it all after the test."""
from __future__ import annotations

import inspect
import sys
import types

from sonnx.ops.registry import Operator, operators


def plant(monkeypatch, module: types.ModuleType, *edits: tuple[str, str]) -> None:
    source = inspect.getsource(module)
    for old, new in edits:
        assert source.count(old) == 1, f"the fault site {old!r} is not unique in {module.__name__}"
        source = source.replace(old, new)
    planted = types.ModuleType(module.__name__)
    planted.__dict__.update(__file__=module.__file__, __package__=module.__package__)
    exec(compile(source, module.__file__, "exec"), planted.__dict__)
    for name, obj in list(vars(module).items()):
        if not (inspect.isfunction(obj) or inspect.isclass(obj)) or obj.__module__ != module.__name__:
            continue
        replacement = planted.__dict__[name]
        for mod in [m for n, m in sys.modules.items() if n.startswith("sonnx") and m is not None]:
            if getattr(mod, name, None) is obj:
                monkeypatch.setattr(mod, name, replacement)
    for name, obj in planted.__dict__.items():  # module-level tables built from the functions
        if isinstance(obj, dict) and not name.startswith("__") and name in vars(module):
            monkeypatch.setattr(module, name, obj)
        if isinstance(obj, Operator):  # the registry's record then holds the planted functions
            monkeypatch.setitem(operators(), obj.name, obj)
