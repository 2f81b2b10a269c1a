"""Build the small example models of examples/README.md (run: .venv/bin/python examples/build_examples.py).

Each model is tiny (a few hundred bytes) and committed; rebuilding gives the same bytes.
"""
from __future__ import annotations

import pathlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = pathlib.Path(__file__).resolve().parent
F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, initializers=(), opset=13, name="example"):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="sonnx-examples", ir_version=8)
    onnx.checker.check_model(model)
    return model


def _vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def mul_ok():
    return _model([helper.make_node("Mul", ["a", "b"], ["c"], name="mul")],
                  [_vi("a", [2, 3]), _vi("b", [2, 3])], [_vi("c", [2, 3])])


def gemm_ok():
    c = numpy_helper.from_array(np.full((2, 4), 0.5, np.float32), "c")
    return _model([helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="gemm", alpha=1.0, beta=1.0)],
                  [_vi("a", [2, 3]), _vi("b", [3, 4])], [_vi("y", [2, 4])], [c])


def mul_gemm_chain():
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, "w")
    c = numpy_helper.from_array(np.zeros((2, 4), np.float32), "bias")
    return _model([helper.make_node("Mul", ["x", "scale"], ["xs"], name="scale_input"),
                   helper.make_node("Gemm", ["xs", "w", "bias"], ["y"], name="linear")],
                  [_vi("x", [2, 3]), _vi("scale", [2, 3])], [_vi("y", [2, 4])], [w, c])


def mul_broadcast():
    return _model([helper.make_node("Mul", ["a", "b"], ["c"], name="mul_bcast")],
                  [_vi("a", [2, 3]), _vi("b", [3])], [_vi("c", [2, 3])])


def gemm_linear_bias():
    w = numpy_helper.from_array(np.ones((4, 3), np.float32), "weight")
    bias = numpy_helper.from_array(np.zeros((4,), np.float32), "bias")
    return _model([helper.make_node("Gemm", ["x", "weight", "bias"], ["y"], name="linear", transB=1)],
                  [_vi("x", [2, 3])], [_vi("y", [2, 4])], [w, bias])


def add_ok():
    return _model([helper.make_node("Add", ["a", "b"], ["c"], name="add")],
                  [_vi("a", [2, 3]), _vi("b", [2, 3])], [_vi("c", [2, 3])])


def add_bias_broadcast():
    bias = numpy_helper.from_array(np.full((1, 3), 0.25, np.float32), "bias")
    return _model([helper.make_node("Add", ["x", "bias"], ["y"], name="add_bias")],
                  [_vi("x", [2, 3])], [_vi("y", [2, 3])], [bias])


def non_profile_op():
    return _model([helper.make_node("Mul", ["a", "b"], ["c"], name="mul"),
                   helper.make_node("Sigmoid", ["c"], ["y"], name="sigmoid")],
                  [_vi("a", [2, 3]), _vi("b", [2, 3])], [_vi("y", [2, 3])])


def symbolic_dims():
    return _model([helper.make_node("Mul", ["a", "b"], ["c"], name="mul")],
                  [_vi("a", ["batch", 3]), _vi("b", ["batch", 3])], [_vi("c", ["batch", 3])])


EXAMPLES = {
    "mul_ok": mul_ok,
    "gemm_ok": gemm_ok,
    "mul_gemm_chain": mul_gemm_chain,
    "mul_broadcast": mul_broadcast,
    "gemm_linear_bias": gemm_linear_bias,
    "add_ok": add_ok,
    "add_bias_broadcast": add_bias_broadcast,
    "non_profile_op": non_profile_op,
    "symbolic_dims": symbolic_dims,
}


def main() -> None:
    for name, build in EXAMPLES.items():
        onnx.save(build(), HERE / f"{name}.onnx")
        print(f"wrote examples/{name}.onnx")


if __name__ == "__main__":
    main()
