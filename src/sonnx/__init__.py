"""sonnx: verified kernels and a strict-profile validator for the SONNX profile.

``import sonnx`` loads almost nothing: each kernel (``sonnx.gemm``, ...; with numpy) is loaded on
its first use. The validator (and with it onnx) is loaded on the first use of ``sonnx.validate``
(``sonnx.conform``, ``sonnx.run`` and ``sonnx.Session``, the executor of sonnx/run/, likewise);
llvmlite on the first exact float Gemm (ops/gemm/fold.py).
"""
import sys
import types

from .errors import ProfileViolation, Violation

__all__ = ["ProfileViolation", "Session", "Violation", "add", "conform", "gemm", "matmul", "mul", "relu", "run", "sub", "validate"]
__version__ = "0.1.0"


# kernel name -> its module: loaded (with numpy) on first use, so that `sonnx --version` and the
# sub-commands that need no kernel start without them
_KERNELS = {"add": "add", "gemm": "gemm", "matmul": "matmul", "mul": "mul", "relu": "relu", "sub": "sub"}


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def __getattr__(name: str):
    if name in _KERNELS:
        import importlib
        kernel = getattr(importlib.import_module(f".ops.{_KERNELS[name]}", __name__), name)
        globals()[name] = kernel
        return kernel
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
