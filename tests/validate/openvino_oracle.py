"""OpenVINO as the oracle of what an IR file computes: Core().read_model, then the shape and
element type OpenVINO infers at every operation's inputs and outputs. Compared with what sonnx
computes (sonnx.validate.openvino.infer), layer by layer, and with sonnx's verdict.

Used by test_openvino_oracle.py (the examples), test_openvino.py (every IR file its tests write)
and test_openvino_hostile.py (the generated hostile IR). Without openvino installed, AVAILABLE is
False and the callers skip, saying so.
"""
from __future__ import annotations

import re

from sonnx.ops.registry import operators
from sonnx.validate import openvino, rules

try:
    import numpy as np
    import openvino as ov
    AVAILABLE = True
except ImportError:      # the dev extra is not installed
    AVAILABLE = False

# a tensor: (dims, OpenVINO element type); a dynamic dimension is None on both sides
Tensor = tuple[tuple[int | None, ...], str]
# OpenVINO's operation type -> the IR layer type that maps onto it
OV_TYPES = {"Parameter": "Parameter", "Constant": "Const", "Result": "Result",
            "Multiply": "Multiply", "Add": "Add", "Subtract": "Subtract", "MatMul": "MatMul",
            "Relu": "ReLU", "Divide": "Divide"}
ELEMENTWISE = ("Multiply", "Add", "Subtract", "Divide")
_CONST_END = re.compile(rb'offset="([0-9]{1,12})"[^>]*size="([0-9]{1,12})"|size="([0-9]{1,12})"[^>]*offset="([0-9]{1,12})"')


class Reading:
    """What OpenVINO makes of an IR: refused (the reason), or per operation its type, inputs
    and outputs, by friendly name (the IR layer name)."""

    def __init__(self, refused: str | None, ops: dict[str, tuple[str, list[Tensor], list[Tensor]]],
                 duplicates: set[str]):
        self.refused, self.ops, self.duplicates = refused, ops, duplicates


def _tensor(shape, etype) -> Tensor:
    dims = tuple(d.get_length() if d.is_static else None for d in shape) if shape.rank.is_static else None
    return dims, etype.get_type_name()


def _weights(data: bytes) -> int:
    """Bytes enough for every Const's offset + size (sonnx never reads the .bin; OpenVINO is given
    zeros so that what it judges is the XML)."""
    end = 64
    for m in _CONST_END.finditer(data):
        off, size = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        end = max(end, int(off) + int(size))
    return min(end, 1 << 26)


def openvino_reading(data: bytes) -> Reading:
    core = ov.Core()
    try:
        model = core.read_model(data.decode("utf-8", "replace"),
                                ov.Tensor(np.zeros(_weights(data), np.uint8)))
    except Exception as exc:   # OpenVINO's refusal: any exception its reader raises
        return Reading(" ".join(str(exc).split())[-300:], {}, set())
    ops, dups = {}, set()
    for op in model.get_ordered_ops():
        name = op.get_friendly_name()
        if name in ops:
            dups.add(name)
        ins = [_tensor(op.input_value(i).get_partial_shape(), op.input_value(i).get_element_type())
               for i in range(op.get_input_size())]
        outs = [_tensor(op.get_output_partial_shape(i), op.get_output_element_type(i))
                for i in range(op.get_output_size())]
        ops[name] = (op.get_type_name(), ins, outs)
    return Reading(None, ops, dups)


def _as_tensor(value: openvino.Value) -> Tensor:
    return tuple(d if isinstance(d, int) else None for d in value.shape), value.type


def sonnx_reading(data: bytes) -> dict[str, tuple[list[Tensor], list[Tensor]]] | str:
    """Per layer name, the inputs and outputs sonnx computes, where it computes them from
    computed inputs: Parameters, Consts, and profile layers OpenVINO can build (not behind a
    layer outside the profile, whose output sonnx takes as its port declares; PROF-R1 refuses
    it); a Result's output is its input, as in OpenVINO. The read error when sonnx refuses the
    file."""
    computed: dict[str, tuple[list[Tensor], list[Tensor]]] = {}
    from_inputs: set[tuple[int, int]] = set()    # output ports whose tensor sonnx computed
    try:
        _v, layers, edges = openvino.parse(data, "ir")
        feeds, order = openvino.connect(layers, edges, "ir")

        def seen(layer, operands, out):
            if out is not None and all(feeds[(layer.id, p.id)] in from_inputs for p in layer.inputs):
                computed[layer.name] = ([_as_tensor(v) for v in operands], [_as_tensor(out)])
                from_inputs.add((layer.id, layer.outputs[0].id))

        for layer in layers:
            if layer.type in ("Parameter", "Const") and layer.outputs:
                from_inputs.add((layer.id, layer.outputs[0].id))
        values = openvino.infer(layers, feeds, order, "ir", seen)
    except openvino.MalformedIR as exc:
        return str(exc)
    for layer in layers:
        if layer.type in ("Parameter", "Const"):
            computed[layer.name] = ([], [_as_tensor(values[(layer.id, layer.outputs[0].id)])])
        elif layer.type == "Result" and feeds[(layer.id, layer.inputs[0].id)] in from_inputs:
            src = _as_tensor(values[feeds[(layer.id, layer.inputs[0].id)]])
            computed[layer.name] = ([src], [src])
    names = [layer.name for layer in layers]
    return {k: v for k, v in computed.items() if names.count(k) == 1}


def layer_types(data: bytes) -> dict[str, str]:
    version, layers, _ = openvino.parse(data, "ir")
    return {layer.name: layer.type + (" v10" if version == 10 else "") for layer in layers}


def compare(data: bytes) -> tuple[Reading, dict | str, int]:
    """(OpenVINO's reading, sonnx's, the number of layers compared); AssertionError where both
    read the file and a layer's tensors differ."""
    theirs = openvino_reading(data)
    ours = sonnx_reading(data)
    kinds = layer_types(data) if not isinstance(ours, str) else {}
    compared = 0
    if theirs.refused is None and not isinstance(ours, str):
        for name, (ins, outs) in ours.items():
            kind, _, v10 = kinds[name].partition(" ")
            if name not in theirs.ops or name in theirs.duplicates or \
                    OV_TYPES.get(theirs.ops[name][0]) != kind:
                continue     # OpenVINO dropped a layer no Result needs, two share a name, or
                # OpenVINO gave the name to an operation it inserted (IR v10's Convert)
            if v10 and kind in ("Parameter", "Result") and outs[0][1] not in openvino.V10_UNCAST:
                continue     # IR v10's legacy precision there: PROF-R1
            _, their_ins, their_outs = theirs.ops[name]
            assert (ins, outs) == (their_ins, their_outs), (
                f"layer {name!r}: sonnx computes {ins} -> {outs}, OpenVINO {their_ins} -> {their_outs}")
            compared += 1
    return theirs, ours, compared


def _in_type_set(op_type: str, etype: str) -> bool:
    onnx_op = openvino.LAYERS[OV_TYPES[op_type]].op
    onnx_type = openvino.PRECISIONS.get(etype)
    version = rules.op_version(onnx_op, "", openvino.IR_OPSET)
    return onnx_type in operators()[onnx_op].type_sets[version]


def must_not_conform(theirs: Reading) -> str | None:
    """Why OpenVINO's reading of a file rules out "conforms" (None: nothing does): it refuses
    the file, runs an operation outside the profile, an element-wise one whose input shapes
    differ (a broadcast), one on an element type outside the operator's type set, or a
    dynamic or empty tensor."""
    if theirs.refused is not None:
        return f"OpenVINO refuses it: {theirs.refused}"
    for name, (kind, ins, outs) in theirs.ops.items():
        if kind not in OV_TYPES:
            return f"{name}: OpenVINO runs a {kind}"
        for dims, _ in ins + outs:
            if dims is None or any(d is None or d <= 0 for d in dims):
                return f"{name}: a dynamic or empty tensor {dims}"
        if kind in ELEMENTWISE and ins[0][0] != ins[1][0]:
            return f"{name}: OpenVINO computes {kind}({ins[0][0]}, {ins[1][0]}), a broadcast"
        if kind == "MatMul" and any(len(dims) != 2 for dims, _ in ins):
            return f"{name}: OpenVINO runs MatMul on {[d for d, _ in ins]}, not two matrices"
        if OV_TYPES[kind] in openvino.LAYERS and any(not _in_type_set(kind, t) for _, t in ins):
            return f"{name}: OpenVINO runs {kind} on {[t for _, t in ins]}, outside its type set"
    return None
