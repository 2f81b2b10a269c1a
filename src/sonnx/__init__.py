"""sonnx: verified kernels and a strict-profile validator for the SONNX profile.

``import sonnx`` loads almost nothing: each kernel (``sonnx.gemm``, ...; with numpy) is loaded on
its first use. The validator (and with it onnx) is loaded on the first use of ``sonnx.validate``
(``sonnx.conform``, ``sonnx.run`` and ``sonnx.Session``, the executor of sonnx/run/, likewise);
llvmlite on the first exact float matrix product (the matrix operators' fold).
"""
import importlib.util
import sys
import types

from .errors import ProfileViolation, Violation

__version__ = "0.1.0"
_API = ("ProfileViolation", "Session", "Violation", "conform", "run", "validate")
# The kernels are the registry's: ``sonnx.<stem>`` is that operator's record's ``kernel``, and
# ``__all__`` is _API plus the registry's stems. Both are looked up on first use (the registry,
# then the kernel's module with numpy), so that `sonnx --version` and the sub-commands that need
# no kernel start without them.


def _stems() -> tuple[str, ...]:
    from .ops.registry import STEMS
    return STEMS


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__getattr__("__all__")))


def __getattr__(name: str):
    if name == "__all__":
        names = sorted({*_API, *_stems()})
        globals()["__all__"] = names
        return names
    if name == "validate":
        from .validate.api import validate
        globals()["validate"] = validate     # later look-ups find it without this hook
        return validate
    if name == "run":
        from .run import run
        globals()["run"] = run
        return run
    if name == "Session":
        from .run.session import Session
        globals()["Session"] = Session
        return Session
    if name == "conform":
        from .conform.api import conform
        globals()["conform"] = conform
        return conform
    # a submodule (``from . import colour``: the import system asks first) is never a kernel,
    # and asking about one must not load the registry
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is None \
            and name in _stems():
        from .ops.registry import by_stem
        kernel = by_stem(name).kernel
        globals()[name] = kernel
        return kernel
    raise AttributeError(f"module 'sonnx' has no attribute {name!r}")


class _Package(types.ModuleType):
    """``sonnx.validate`` is the function, as it was when it was imported eagerly. Python's
    import system sets a package's attribute to each subpackage it loads; loading the
    subpackage sonnx.validate (e.g. ``import sonnx.validate.report``) must not replace the
    function by the module."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in ("validate", "conform", "run") and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
