"""How an OpenVINO IR layer reads as a profile operator: the ``IRLayer`` rows an operator's
record lists (``Operator.openvino``) and the shape rules and operand translations they use,
by kind of layer (same-shape binary with OpenVINO's auto_broadcast, unary, matrix product).
sonnx/validate/openvino.py reads the records; it keeps no table of its own. A layer attribute
these functions cannot read raises ``IRError``, which the reader reports as a malformed IR.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

from . import openvino_shapes as shapes
from .signature import TensorSig


class IRError(ValueError):
    """A layer attribute that cannot be read (the IR is malformed)."""


class IRLayer(NamedTuple):
    """How an IR layer type is read: its type name in the XML, the OpenVINO operation version
    (each has one in every opset), its number of inputs, its output shape as OpenVINO computes
    it, and the translation of its operands and attributes for the operator's constraint
    function; ``op`` is the registry's name of the operator it reads as (filled in by the
    reader from the record that lists the row)."""
    type: str
    version: int
    inputs: int
    shape: Callable[[Any, list, str], shapes.Shape | None]
    rule_inputs: Callable[[Any, list, str], tuple[list, dict, str]]
    op: str = ""


def _neutral(raw: str) -> str:
    from ..text import neutral
    return neutral(raw)


def flag(layer, key: str, shown: str) -> bool:
    """A boolean layer attribute. OpenVINO reads "true"/"1" in any case as true and everything
    else as false; sonnx takes only the four spellings that cannot be misread (" true" is false
    to OpenVINO)."""
    raw = layer.data.get(key, "false")
    if raw.lower() not in ("true", "false", "1", "0"):
        raise IRError(f"{shown}: {layer.where} has {key}={_neutral(raw)[:20]!r}, not a boolean")
    return raw.lower() in ("true", "1")


def broadcast_mode(layer, shown: str) -> str:
    raw = layer.data.get("auto_broadcast", "numpy")     # numpy: OpenVINO's default
    mode = raw.lower()                                   # OpenVINO ignores the case, not spaces
    if mode not in shapes.BROADCAST:
        raise IRError(f"{shown}: {layer.where} has auto_broadcast={_neutral(raw)[:20]!r}; "
                      "sonnx reads none, numpy and pdpd")
    return mode


def broadcast_shape(layer, ins: list, shown: str) -> shapes.Shape | None:
    """A same-shape binary layer: OpenVINO's auto_broadcast rule."""
    return shapes.elementwise(ins, broadcast_mode(layer, shown))


def product_shape(layer, ins: list, shown: str) -> shapes.Shape | None:
    """A matrix product layer, with its transpose flags."""
    return shapes.matrix_product(ins, flag(layer, "transpose_a", shown), flag(layer, "transpose_b", shown))


def unary_shape(layer, ins: list, shown: str) -> shapes.Shape | None:
    return shapes.unary(ins)


def broadcast_rule_inputs(layer, sigs: list[TensorSig], shown: str) -> tuple[list, dict, str]:
    """The meaning of auto_broadcast under the no-broadcast rule is decided in spec/openvino.md:
    none and numpy are judged on the shapes, pdpd is the ONNX operator's version-6 broadcast=1."""
    if broadcast_mode(layer, shown) != "pdpd":
        return sigs, {}, ""
    return sigs, {"broadcast": 1}, ("auto_broadcast='pdpd' (axis-aligned broadcasting, "
                                    "ONNX version 6's broadcast=1) is read as broadcast=1: ")


def product_rule_inputs(layer, sigs: list[TensorSig], shown: str) -> tuple[list, dict, str]:
    """Judged as the product computes it: on the transposed operand (OpenVINO ignores the flag
    of a rank-1 operand)."""
    out = list(sigs)
    for i, key in enumerate(("transpose_a", "transpose_b")):
        sh = out[i].shape
        if flag(layer, key, shown) and sh is not None and len(sh) >= 2:
            out[i] = TensorSig(sh[:-2] + (sh[-1], sh[-2]), out[i].elem_type)
    return out, {}, ""


def as_is(layer, sigs: list[TensorSig], shown: str) -> tuple[list, dict, str]:
    return sigs, {}, ""
