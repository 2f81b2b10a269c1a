"""``sonnx.validate(model_or_path) -> Report``: the whole pipeline for one model."""
from __future__ import annotations

import os
import time

from .. import onnx_proto as onnx  # onnx's classes and checker without its package start-up

from .. import text
from . import reader
from .report import Report
from .walker import Walker


def validate(model_or_path: str | os.PathLike | onnx.ModelProto) -> Report:
    """Judge one ONNX model (or an OpenVINO IR, a path ending in .xml) against the SONNX profile.

    Accepts a path or an ``onnx.ModelProto``. Never reads external weights. Returns a Report
    whose ``findings`` hold every violation (``report.conforms`` is True when there is none);
    when the model cannot be read, ``report.error`` says why and there is no verdict.
    Raises TypeError only for an argument that is neither a path nor a ModelProto.
    """
    if isinstance(model_or_path, (str, os.PathLike)) and \
            os.fsdecode(model_or_path).lower().endswith(".xml"):
        from . import openvino      # on first use: an ONNX model's validation does not load it
        return openvino.validate_ir(model_or_path)   # OpenVINO IR: spec/openvino.md
    shown = "<ModelProto>" if isinstance(model_or_path, onnx.ModelProto) else None
    path = None
    if shown is None and isinstance(model_or_path, (str, os.PathLike)):
        path = os.fsdecode(model_or_path)
        shown = text.shown_path(path)
    try:
        shown, loaded = reader.load(model_or_path)
    except reader.Unreadable as exc:
        return Report(source=shown, error=str(exc), path=path)
    report = Report(source=shown, timings=dict(loaded.timings), path=path)
    report.opset_imports = {o.domain: o.version for o in loaded.model.opset_import}
    t = time.perf_counter()
    walker = Walker(loaded.model, types_known=True, pinnable=loaded.pinnable,
                    main_types=loaded.main_types)
    try:
        found = walker.run()
        # a declaration that is not static is reported unless its tensor already has a
        # PROF-R2 finding (one finding per tensor, where it is defined)
        judged = {(f.graph, f.tensor) for f in found if f.rule == "PROF-R2"}
        report.findings = loaded.findings + found + [
            f for f in loaded.declared if (f.graph, f.tensor) not in judged]
    except RecursionError:
        report.error = f"{shown}: graphs nested too deeply to validate"
    except Exception as exc:  # a defect of ours must not hide behind a traceback or a verdict
        report.error = f"{shown}: could not validate ({type(exc).__name__}: {exc})"
    report.nodes = walker.nodes
    report.timings["rules"] = time.perf_counter() - t
    return report
