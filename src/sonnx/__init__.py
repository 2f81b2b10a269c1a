"""sonnx: verified kernels and a strict-profile validator for the SONNX profile.

``import sonnx`` loads numpy and the kernels only. The validator (and with it onnx) is loaded
on the first use of ``sonnx.validate`` (``sonnx.conform``, ``sonnx.run`` and ``sonnx.Session``, the
executor of sonnx/run/, likewise); numba on the first exact float Gemm (ops/gemm_fold.py).
"""
import sys
import types

from .errors import ProfileViolation, Violation
from .ops.add import add
from .ops.gemm import gemm
from .ops.matmul import matmul
from .ops.mul import mul
from .ops.relu import relu
from .ops.sub import sub

__all__ = ["ProfileViolation", "Session", "Violation", "add", "conform", "gemm", "matmul", "mul", "relu", "run", "sub", "validate"]
__version__ = "0.1.0"


def __getattr__(name: str):
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
