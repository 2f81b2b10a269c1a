"""``sonnx.conform(model_or_path, dims=...) -> (ModelProto, report)``: rewrite what can be
rewritten bit-exactly, validate the result, check bit identity, and say what is left and why.
The report's schema is ``sonnx-conform-report/1`` (README, "Making a model conform")."""
from __future__ import annotations

import os
from typing import Callable

import onnx

from . import check as bitcheck
from .rewrite import (Blocker, ConformError, Log, check_dims, constants_to_initializers,
                      materialise_broadcasts, pin_dims, symbolic_names, tidy_declarations)

SCHEMA = "sonnx-conform-report/1"


def load(model_or_path) -> tuple[str, onnx.ModelProto]:
    """(shown name, a copy of the model with its weights); ConformError when it cannot be read."""
    from ..validate import reader, text
    if isinstance(model_or_path, onnx.ModelProto):
        if not model_or_path.HasField("graph"):
            raise ConformError("the ModelProto holds no graph")
        model = onnx.ModelProto()
        model.CopyFrom(model_or_path)
        _utf8_only(model, None, "<ModelProto>")
        return "<ModelProto>", model
    if not isinstance(model_or_path, (str, os.PathLike)):
        raise TypeError("sonnx.conform: expected a path (str or os.PathLike) or an onnx.ModelProto, "
                        f"got {type(model_or_path).__name__}")
    shown = text.shown_path(model_or_path)
    try:
        data = reader.read_bytes(model_or_path)
        model = reader.parse(data, shown)
    except reader.Unreadable as exc:
        raise ConformError(str(exc)) from None
    _utf8_only(model, data, shown)
    if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
        try:   # conform rewrites weights, so it reads them (validate never does)
            onnx.external_data_helper.load_external_data_for_model(
                model, os.path.dirname(os.fsdecode(model_or_path)) or ".")
        except Exception as exc:
            raise ConformError(f"{shown}: cannot read its external data: "
                               f"{' '.join(str(exc).split())[:200]}") from None
    return shown, model


def _utf8_only(model: onnx.ModelProto, data: bytes | None, shown: str) -> None:
    """Names that are not UTF-8 are refused: conform would have to choose a spelling for them."""
    from ..validate import text
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    bad = text.clean_model(probe, data)
    if bad:
        where = " ".join(bad[0].split(" = ")[0].split())[:120]
        raise ConformError(f"{shown}: {len(bad)} text field(s) are not UTF-8 (first: {where}); "
                           "re-encode the names before conforming (sonnx validate lists them)")


def _why(f, blockers: list[Blocker], model: onnx.ModelProto) -> str:
    """The reason no rewrite removes finding ``f``."""
    for b in blockers:
        if b.rule == f.rule and f.graph == "main" and (
                (b.node_index is not None and b.node_index == f.node_index) or
                (b.node_index is None and b.tensor is not None and b.tensor == f.tensor)):
            return b.reason
    op = f.op_type or "this operator"
    if f.rule == "PROF-R1":
        return (f"{op} is not in the profile and no rewrite can remove it: conform only turns "
                "Constant nodes into initializers (an operator such as Conv, Expand, Reshape or "
                "Cast computes something the profile's operators do not, or is itself the "
                "broadcast or cast the profile refuses); re-export or restructure the model "
                "without it")
    if f.rule == "PROF-R2":
        left = symbolic_names(model.graph)
        if left:
            return ("the shape is not static after the pins given: the model still has the "
                    "symbolic dimension(s) " + ", ".join(left) + "; pin them with --dim NAME=SIZE")
        return ("the shape is not static and no named dimension is left to pin: a dynamic "
                "dimension without a name cannot be pinned by --dim; re-export with a static shape")
    if f.rule.endswith("-R4") and f.op_type in ("Gemm", "Mul", "Add", "Sub"):
        return ("no operand conform could store expanded: only a constant (initializer or Constant "
                "node) broadcast to a static result shape is rewritten")
    return (f"conform has no rewrite for {f.rule}: any would change the model's arithmetic "
            "(element types, attributes, operators) or need information the model does not "
            "hold; follow the message's fix")


def conform(model_or_path, dims: dict[str, int] | None = None, *, check: bool = True,
            seeds: tuple[int, ...] = bitcheck.SEEDS,
            progress: Callable[[str], None] | None = None) -> tuple[onnx.ModelProto, dict]:
    """Rewrite ``model_or_path`` into the profile where no output bit changes.

    ``dims`` pins named symbolic dimensions ({"batch": 2}). Returns the rewritten model and the
    report (a dict, schema ``sonnx-conform-report/1``); ``report["exit_code"]`` is 0 when the
    model conforms and the bit-identity check passed, else 1. Raises ConformError (a ValueError)
    for input that cannot be used: unreadable model, a dimension name the model lacks, a size
    that is not a positive integer. ``check=False`` skips onnxruntime (recorded "not checked").
    """
    from ..validate.api import validate
    say = progress or (lambda msg: None)
    dims = check_dims(dims or {})
    shown, original = load(model_or_path)
    log = Log()
    pinned = onnx.ModelProto()
    pinned.CopyFrom(original)
    pin_dims(pinned, dims, log)
    model = onnx.ModelProto()
    model.CopyFrom(pinned)
    say("rewriting")
    constants_to_initializers(model, log)
    materialise_broadcasts(model, log)
    tidy_declarations(model, log)
    say("validating the rewritten model")
    verdict = validate(model)
    findings = [{**f.as_dict(), "why_not_rewritten": _why(f, log.blockers, model)}
                for f in verdict.findings]
    if check:
        record = bitcheck.bit_identity(pinned, model, seeds, progress=say)
    else:
        record = {"status": "not checked", "reason": "skipped on request (check=False)",
                  "seeds": [], "inputs": [], "runs": 0, "outputs": []}
    conforms = verdict.conforms and verdict.error is None
    report = {
        "schema": SCHEMA,
        "model": shown,
        "dims": dims,
        "rewrites": [r.as_dict() for r in log.rewrites],
        "findings": findings,
        "validate": {"conforms": conforms, "findings": len(verdict.findings),
                     "rules": sorted({f.rule for f in verdict.findings}),
                     "error": verdict.error},   # the validator could not judge: no verdict
        "check": record,
        "conforms": conforms,
        "exit_code": 0 if conforms and record["status"] == "passed" else 1,
    }
    return model, report
