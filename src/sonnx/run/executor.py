"""Run a conformant model node by node with sonnx's own kernels.

The model is judged by sonnx's validator first (in process); only a model it calls conformant
runs, so every node is a profile operator whose inputs have their declared static types and
every kernel call is accepted (a conformant model never needs a broadcast or a cast). Nodes run
in the order the graph lists them (ONNX requires a topological order; the checker enforces it),
initializers are constants, and a graph input with an initializer of the same name takes the
caller's value when one is given (the initializer is its default).
"""
from __future__ import annotations

import inspect
import os
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

from .. import dtypes, fpenv
from ..ops.registry import operator

MODES = ("exact", "fast")
# The ONNX attributes that reach a kernel, by operator, as the kernel's keyword. The validator
# admits no other attribute that changes a result (Mul/Add/Sub-6's broadcast only as 0, with
# an axis that then means nothing; Relu, MatMul: none).
KERNEL_ATTRIBUTES = {"Gemm": {"alpha": "alpha", "beta": "beta", "transA": "trans_a", "transB": "trans_b"}}


class RunError(Exception):
    """The model cannot be run: unreadable, or (``findings`` set) not conformant."""

    def __init__(self, message: str, findings: list | None = None):
        super().__init__(message)
        self.findings = findings or []


@dataclass(frozen=True)
class InputSpec:
    name: str
    dtype: str                   # ONNX type name, e.g. "float"
    shape: tuple[int, ...]
    has_default: bool            # an initializer of the same name gives it a value

    def __str__(self) -> str:
        return f"{self.name} ({self.dtype}, shape {self.shape})"


@dataclass
class Loaded:
    model: object                # onnx.ModelProto, validated
    opset: int                   # the default-domain opset
    inputs: dict[str, InputSpec]
    constants: dict[str, np.ndarray]


@lru_cache(maxsize=None)
def _takes_mode(op_type: str) -> bool:
    return "mode" in inspect.signature(operator(op_type).kernel).parameters


def run_node(op_type: str, args: list[np.ndarray], attrs: dict, *, mode: str, opset: int | None = None) -> np.ndarray:
    """One node: the registry's kernel of ``op_type`` on ``args``, with the node's attributes
    (ONNX names) and the model's opset; ``mode`` goes to the kernels that have one (Gemm, MatMul).
    Shared by the executor and the onnx.reference operators of sonnx.reference."""
    op = operator(op_type)
    names = KERNEL_ATTRIBUTES.get(op_type, {})
    kwargs = {names[k]: v for k, v in attrs.items() if k in names}
    if _takes_mode(op_type):
        kwargs["mode"] = mode
    if opset is not None:
        kwargs["opset"] = opset
    return op.kernel(*args, **kwargs)


def _attributes(node) -> dict:
    from onnx import helper
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def load(model_or_path) -> Loaded:
    """Validate, then load the model with its weights. RunError when it cannot be read or does
    not conform (``findings``: the validator's, each with its requirement ID)."""
    import onnx
    from onnx import numpy_helper

    from ..validate.api import validate
    if isinstance(model_or_path, (str, os.PathLike)) and os.fsdecode(model_or_path).lower().endswith(".xml"):
        raise RunError(f"{os.fsdecode(model_or_path)}: sonnx run executes ONNX models; an OpenVINO IR is "
                       "validated only (run the ONNX model it was converted from)")
    report = validate(model_or_path)
    if report.error is not None:
        raise RunError(report.error)
    if not report.conforms:
        raise RunError(f"{report.source}: the model does not conform to the SONNX profile "
                       f"({len(report.findings)} finding(s)); sonnx run executes conformant models only "
                       "(see sonnx validate)", report.findings)
    if isinstance(model_or_path, onnx.ModelProto):
        model = model_or_path
    else:
        try:
            model = onnx.load(os.fspath(model_or_path))      # with external weights, if any
        except Exception as exc:    # validated, so only the weights can be missing or unreadable
            raise RunError(f"{report.source}: cannot load its weights: {exc}") from None
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    constants = {}
    for t in model.graph.initializer:
        value = numpy_helper.to_array(t)
        expected = dtypes.numpy_dtype(dtypes.name_of_tensor_proto(t.data_type))
        if value.dtype != expected:   # onnx gives bfloat16 as ml_dtypes' type; anything else is a defect
            value = value.view(expected)
        constants[t.name] = value
    inputs = {}
    for vi in model.graph.input:
        tt = vi.type.tensor_type
        inputs[vi.name] = InputSpec(vi.name, dtypes.name_of_tensor_proto(tt.elem_type),
                                    tuple(d.dim_value for d in tt.shape.dim), vi.name in constants)
    return Loaded(model, opset, inputs, constants)


Progress = Callable[[int, int, object, float], None]     # (index, count, node, seconds so far)


@fpenv.guarded     # once per graph: every node's kernel then runs in the proofs' environment
def run_graph(loaded: Loaded, feeds: dict[str, np.ndarray], mode: str = "exact",
              progress: Progress | None = None, keep_all: bool = False) -> dict[str, np.ndarray]:
    """The graph's outputs (every value with ``keep_all``) for ``feeds`` (checked by the caller:
    run.io.check_feeds). ``progress`` is called before each node."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; use 'exact' or 'fast'")
    graph = loaded.model.graph
    values = dict(loaded.constants)
    values.update(feeds)
    nodes = list(graph.node)
    t0 = time.perf_counter()
    for i, node in enumerate(nodes):
        if progress is not None:
            progress(i, len(nodes), node, time.perf_counter() - t0)
        args = [values[name] for name in node.input if name]
        try:
            out = run_node(node.op_type, args, _attributes(node), mode=mode, opset=loaded.opset)
        except Exception as exc:   # a conformant model's node never fails: say which one did
            raise RunError(f"node {i} {node.name!r} ({node.op_type}) failed: {type(exc).__name__}: {exc}") from exc
        values[node.output[0]] = out
    if keep_all:
        return values
    return {o.name: values[o.name] for o in graph.output}
