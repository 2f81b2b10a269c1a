"""``sonnx.conform(model_or_path, dims=...) -> (ModelProto, report)``: rewrite what can be
rewritten bit-exactly, validate the result, check bit identity, and say what is left and why.
The report's schema is ``sonnx-conform-report/1`` (docs/conform.md)."""
from __future__ import annotations

import os
from typing import Callable

import onnx

from ..ops.registry import operators
from . import bitcheck, graph_rules
from .rewrite import (Blocker, ConformError, Log, check_dims, constants_to_initializers,
                      initializer_inputs_to_constants, remove_copies, inferred_types, explicit_attributes,
                      materialise_broadcasts, node_rewrites, pin_dims, symbolic_names, tidy_declarations)

SCHEMA = "sonnx-conform-report/1"


def load(model_or_path) -> tuple[str, onnx.ModelProto]:
    """(shown name, a copy of the model with its weights); ConformError when it cannot be read."""
    from .. import text
    from ..validate import reader
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
    from .. import text
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    bad = text.clean_model(probe, data)
    if bad:
        where = " ".join(bad[0].split(" = ")[0].split())[:120]
        raise ConformError(f"{shown}: {len(bad)} text field(s) are not UTF-8 (first: {where}); "
                           "re-encode the names before conforming (sonnx validate lists them)")


def _why(f, blockers: list[Blocker], model: onnx.ModelProto, types: dict) -> str:
    """The reason no rewrite removes finding ``f``; ``types``: the rewritten main graph's
    tensors as onnx infers them (rewrite.inferred_types)."""
    for b in blockers:
        if b.rule == f.rule and f.graph == "main" and (b.about is None or b.about in f.message) and (
                (b.node_index is not None and b.node_index == f.node_index) or
                (b.node_index is None and b.tensor is not None and b.tensor == f.tensor)):
            return b.reason
    op = f.op_type or "this operator"
    if f.rule.startswith("ONNX-"):
        return ("the model is not valid ONNX as written (the message says what onnx rejects) and "
                "conform repairs no such fault: fix it at the source")
    if f.rule == "PROF-R1":
        return (f"{op} is not in the profile and no rewrite can remove it: conform only turns "
                "Constant nodes into initializers, removes copies (Identity, inference-mode "
                "Dropout) and makes the records' own rewrites (an operator such as Expand, Gather or "
                "Cast computes something the profile's operators do not, or is itself the "
                "broadcast or cast the profile refuses); the profile cannot express it yet, so a "
                "model that needs it stays outside the profile")
    if f.rule == "PROF-R2":
        return _prof_r2_why(f, model, types)
    record = operators().get(f.op_type)
    if record is not None and record.conform is not None and f.rule == record.conform.rule:
        rule = record.conform
        does = []
        if rule.operands:
            does.append("stores a constant operand (initializer or Constant node) broadcast to a "
                        "static result shape expanded")
        if rule.defaults:
            does.append("writes the omitted attributes " + ", ".join(rule.defaults) + " with ONNX's default")
        if rule.auto_pad:
            does.append("writes auto_pad as explicit pads")
        if rule.node_rewrite is not None:
            does.append("makes the operator's own node rewrite")
        return ("conform " + "; ".join(does) + " for this rule, and none of that removes this "
                "finding (a rewrite changing the arithmetic would change bits): follow the "
                "message's fix")
    return (f"conform has no rewrite for {f.rule}: any would change the model's arithmetic "
            "(element types, attributes, operators) or need information the model does not "
            "hold; follow the message's fix")


def _prof_r2_why(f, model: onnx.ModelProto, types: dict) -> str:
    """Why a PROF-R2 finding stays: read from the tensor's type, not guessed from the message."""
    left = symbolic_names(model.graph)
    pin_left = ("; pin the symbolic dimension(s) still left first (" + ", ".join(left) +
                ": --dim NAME=SIZE), it may follow from them") if left else ""
    if f.graph != "main" or f.tensor is None:
        return ("conform rewrites the main graph's tensors only, and no rewrite makes this "
                "one static; follow the message's fix" + pin_left)
    tp = types.get(f.tensor)
    kind = None if tp is None else tp.WhichOneof("value")
    if kind == "sparse_tensor_type":
        return ("the tensor is sparse: conform does not choose a dense layout for it; densify it "
                "in the exporter (e.g. x.to_dense())")
    if kind not in (None, "tensor_type"):
        return (f"it is a {kind.replace('_type', '')}, not a tensor: the operators that make it are "
                "outside the profile and no rewrite removes them; re-export without them")
    if tp is None or not tp.tensor_type.HasField("shape"):
        shapeless = [vi.name for vi in model.graph.input if vi.name not in
                     {t.name for t in model.graph.initializer} and vi.type.WhichOneof("value")
                     == "tensor_type" and not vi.type.tensor_type.HasField("shape")]
        cause = (f"graph input(s) {', '.join(repr(n) for n in shapeless)} declare no shape at all"
                 if shapeless else "onnx's shape inference cannot compute it from the graph")
        return (f"its rank is unknown ({cause}): --dim pins named dimensions of a known rank and "
                "cannot give one; declare the graph inputs with a static shape (re-export with "
                "a static input shape)")
    dims = [(d.dim_value if d.WhichOneof("value") == "dim_value" else (d.dim_param or None))
            for d in tp.tensor_type.shape.dim]
    empty = [k for k, d in enumerate(dims) if isinstance(d, int) and d <= 0]
    if empty:
        return (f"the tensor is empty (dimension {empty[0]} is {dims[empty[0]]}): the profile has no "
                "empty tensors, and no rewrite removes a tensor or the nodes that read it (that "
                "would change what the model is); remove it from the model at the source")
    named = [d for d in dims if isinstance(d, str) and d in left]
    if named:
        return ("the shape is not static after the pins given: pin its symbolic dimension(s) "
                + ", ".join(dict.fromkeys(named)) + " with --dim NAME=SIZE")
    unnamed = [k for k, d in enumerate(dims) if not isinstance(d, int)]
    if unnamed:
        return (f"dimension {unnamed[0]} has no name in the file (onnx's inference leaves it unknown "
                "or names it itself), so no --dim pins it" + pin_left + "; otherwise re-export "
                "with static shapes, or with named dynamic axes that --dim then pins")
    return ("conform has no rewrite for this: the tensor's declarations or size are the model's "
            "own (the message says which); follow the message's fix")


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
    graph_rules.sort_nodes(model, log)          # the passes below read the graph in order
    graph_rules.drop_empty_inputs(model, log)
    constants_to_initializers(model, log)
    initializer_inputs_to_constants(model, log)
    remove_copies(model, log)
    explicit_attributes(model, log)
    node_rewrites(model, log)
    materialise_broadcasts(model, log)
    graph_rules.remove_dead(model, log)         # also what the rewrites above left unread
    tidy_declarations(model, log)
    say("validating the rewritten model")
    verdict = validate(model)
    # one more inference of the rewritten model, only when a PROF-R2 reason needs the types
    types = inferred_types(model) if any(f.rule == "PROF-R2" for f in verdict.findings) else {}
    findings = [{**f.as_dict(), "why_not_rewritten": _why(f, log.blockers, model, types)}
                for f in verdict.findings]
    if check:
        record = bitcheck.bit_identity(pinned, model, seeds, progress=say)
    else:
        record = {"status": "not checked", "reason": "skipped on request (--no-check, check=False)",
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
