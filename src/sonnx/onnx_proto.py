"""onnx as the validator reads a profile model: onnx's generated protobuf classes
(``onnx_ml_pb2``) and its C++ checker, without running the ``onnx`` package's ``__init__``.

Why: that ``__init__`` imports numpy, onnx's helpers, ``importlib.metadata`` and protobuf's
``json_format`` whatever is used, about 0.1 s of every `sonnx validate` (issue 28's start-up
goal is 0.15 s in all). The validator's modules import this module as ``onnx``; the names it
defines mirror onnx's own (``ModelProto``, ``load_model_from_string``, ``checker.check_model``,
``defs.onnx_opset_version``), and any other name (``helper``, ``numpy_helper``,
``shape_inference``, ...) imports the whole onnx package on first use and is taken from it.

These are the very objects `import onnx` gives, never a second copy: the two modules are loaded
from onnx's own directory under their own names (``onnx.onnx_ml_pb2``,
``onnx.onnx_cpp2py_export``) into ``sys.modules``, where onnx's ``onnx_pb`` and ``checker`` find
them when the package is imported later (tests/validate/test_onnx_proto.py). When onnx is
imported already, or its directory is not laid out as expected, the package is used as it is.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType

_PB2 = "onnx.onnx_ml_pb2"
_CPP = "onnx.onnx_cpp2py_export"
MAXIMUM_PROTOBUF = 2**31 - 1        # the checker's own limit for a model given as bytes


def _full() -> ModuleType:
    """The onnx package, imported now if it is not yet; the two modules loaded alone become
    its attributes, as its own import would have made them."""
    import onnx
    for name in (_PB2, _CPP):
        mod = sys.modules.get(name)
        if mod is not None and not hasattr(onnx, name.rpartition(".")[2]):
            setattr(onnx, name.rpartition(".")[2], mod)
    return onnx


def _load_alone(name: str, path: str, loader=None) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[name]
        raise
    return mod


def _parts() -> tuple[ModuleType, ModuleType]:
    """(onnx_ml_pb2, onnx_cpp2py_export): from sys.modules when loaded, else from onnx's
    directory without its __init__; the package's when it is imported or that fails."""
    pb2, cpp = sys.modules.get(_PB2), sys.modules.get(_CPP)
    if pb2 is not None and cpp is not None:
        return pb2, cpp                  # loaded before, either way: no search of sys.path again
    if "onnx" not in sys.modules:
        try:
            spec = importlib.util.find_spec("onnx")
            where = spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else None
            if where is not None:
                pb2 = sys.modules.get(_PB2) or _load_alone(_PB2, os.path.join(where, "onnx_ml_pb2.py"))
                cpp = sys.modules.get(_CPP)
                if cpp is None:
                    (so,) = [f for f in os.listdir(where) if f.startswith("onnx_cpp2py_export.")
                             and any(f.endswith(s) for s in importlib.machinery.EXTENSION_SUFFIXES)]
                    path = os.path.join(where, so)
                    cpp = _load_alone(_CPP, path, importlib.machinery.ExtensionFileLoader(_CPP, path))
                return pb2, cpp
        except (ImportError, OSError, ValueError):
            pass                         # an unexpected layout: the package's own import below
    _full()
    return sys.modules[_PB2], sys.modules[_CPP]


def __getattr__(name: str):
    """A protobuf class or enum value of onnx_ml_pb2, else the onnx package's attribute."""
    if name.startswith("_"):           # __path__, __spec__...: asked by the import system
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    pb2 = _parts()[0]
    value = getattr(pb2, name) if hasattr(pb2, name) else getattr(_full(), name)
    globals()[name] = value              # later look-ups do not come back here
    return value


def _package() -> ModuleType | None:
    """The onnx package when it is imported (fully: not while its own __init__ runs)."""
    onnx = sys.modules.get("onnx")
    return onnx if onnx is not None and hasattr(onnx, "load_model_from_string") else None


def load_model_from_string(data: bytes):
    """onnx.load_model_from_string for protobuf bytes: the whole input must be one ModelProto."""
    if (onnx := _package()) is not None:
        return onnx.load_model_from_string(data)
    from google.protobuf.message import DecodeError
    model = _parts()[0].ModelProto()
    decoded = model.ParseFromString(data)
    if decoded is not None and decoded != len(data):
        raise DecodeError(f"Protobuf decoding consumed too few bytes: {decoded} out of {len(data)}")
    return model


class checker:  # noqa: N801 -- spelled as onnx's module, so that call sites read the same
    """onnx.checker.check_model with its default options, on the same C++ functions."""

    @staticmethod
    def check_model(model) -> None:
        if (onnx := _package()) is not None:
            return onnx.checker.check_model(model)
        c = _parts()[1].checker
        if isinstance(model, (str, os.PathLike)):
            c.check_model_path(os.fspath(model), False, False, False)
            return
        data = model if isinstance(model, bytes) else model.SerializeToString()
        if len(data) > MAXIMUM_PROTOBUF:
            raise ValueError("This protobuf of onnx model is too large (>2GiB). Call check_model "
                             "with model path instead.")
        c.check_model(data, False, False, False)


class defs:  # noqa: N801
    """onnx.defs.onnx_opset_version from the C++ schema table; any other name is onnx.defs'."""

    @staticmethod
    def onnx_opset_version() -> int:
        if (onnx := _package()) is not None:
            return onnx.defs.onnx_opset_version()
        return _parts()[1].defs.schema_version_map()[""][1]

    @staticmethod
    def get_schema(*args, **kwargs):
        return _full().defs.get_schema(*args, **kwargs)
