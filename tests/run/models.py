"""Models and feeds for the sonnx run tests: the conformant MLPs of tests/e2e (exported by
PyTorch, biases stored as (M, N), and the bias-free ones) and small one-node models."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from ..e2e.test_mlp import MODELS, conformant_models, inputs, load

MLP_PARAMS = conformant_models()
MLP_IDS = [p.id for p in MLP_PARAMS]


def mlps() -> list[tuple[str, onnx.ModelProto]]:
    return [(p.id, load(*p.values)) for p in MLP_PARAMS]


def mlp_path(model_id: str) -> str:
    return str(MODELS / model_id)      # the ids are the file names


def one_node(op: str, elem: int, shape=(2, 3), opset: int = 14, n_inputs: int = 2) -> onnx.ModelProto:
    names = ["A", "B"][:n_inputs]
    ins = [helper.make_tensor_value_info(n, elem, list(shape)) for n in names]
    out = helper.make_tensor_value_info("Y", elem, list(shape))
    graph = helper.make_graph([helper.make_node(op, names, ["Y"], name=f"{op.lower()}_0")], "g", ins, [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def save(model: onnx.ModelProto, path) -> str:
    onnx.save(model, str(path))
    return str(path)


__all__ = ["MLP_IDS", "MLP_PARAMS", "TensorProto", "inputs", "load", "mlp_path", "mlps", "np", "one_node", "save"]
