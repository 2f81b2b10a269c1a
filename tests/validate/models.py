"""Small model builders for the validator tests."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, *, opset=13, initializers=(), sparse=(), functions=(),
          extra_imports=(), opset_imports=None, ir_version=8):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers),
                              sparse_initializer=list(sparse))
    imports = opset_imports if opset_imports is not None else (
        [helper.make_opsetid("", opset)] + list(extra_imports))
    return helper.make_model(graph, opset_imports=imports, functions=list(functions),
                             ir_version=ir_version)


def mul(a_shape, b_shape, out_shape=None, *, opset=13, elem=F, b_elem=None, **attrs):
    return model([helper.make_node("Mul", ["a", "b"], ["c"], name="mul", **attrs)],
                 [vi("a", a_shape, elem), vi("b", b_shape, b_elem or elem)],
                 [vi("c", out_shape or a_shape, elem)], opset=opset)


def gemm(a_shape, b_shape, c_shape=None, out_shape=(2, 4), *, opset=13, elem=F, **attrs):
    inputs = [vi("a", a_shape, elem), vi("b", b_shape, elem)]
    names = ["a", "b"]
    if c_shape is not None:
        inputs.append(vi("c", c_shape, elem))
        names.append("c")
    return model([helper.make_node("Gemm", names, ["y"], name="gemm", **attrs)], inputs,
                 [vi("y", list(out_shape), elem)], opset=opset)


def sparse_tensor(name="s", shape=(2, 3)):
    return helper.make_sparse_tensor(numpy_helper.from_array(np.array([1.0], np.float32), name),
                                     numpy_helper.from_array(np.array([0], np.int64), name + "_i"),
                                     list(shape))


def if_model(then_nodes, else_nodes, extra_inputs=(), opset=13):
    then = helper.make_graph(then_nodes, "then", [], [vi("t", [2, 3])])
    other = helper.make_graph(else_nodes, "else", [], [vi("e", [2, 3])])
    node = helper.make_node("If", ["cond"], ["y"], name="If_0", then_branch=then, else_branch=other)
    return model([node], [vi("x", [2, 3]), vi("cond", [], TensorProto.BOOL), *extra_inputs],
                 [vi("y", [2, 3])], opset=opset)


def function_model(body_nodes, call_inputs, inputs, fn_inputs=("p", "q"), **call_attrs):
    fn = helper.make_function("local", "F", list(fn_inputs), ["r"], body_nodes,
                              opset_imports=[helper.make_opsetid("", 13)],
                              attributes=list(call_attrs.pop("fn_attributes", [])))
    call = helper.make_node("F", list(call_inputs), ["y"], domain="local", name="call", **call_attrs)
    return model([call], inputs, [vi("y", [2, 3])], functions=[fn],
                 extra_imports=[helper.make_opsetid("local", 1)])


def chain(n: int, shape=(8, 8), opset=13) -> onnx.ModelProto:
    """n nodes alternating Mul(v, v) and Gemm(v, v, v) on square matrices: conforms."""
    nodes, prev = [], "x"
    for i in range(n):
        out = f"v{i}"
        if i % 2 == 0:
            nodes.append(helper.make_node("Mul", [prev, prev], [out], name=f"mul_{i}"))
        else:
            nodes.append(helper.make_node("Gemm", [prev, prev, prev], [out], name=f"gemm_{i}"))
        prev = out
    return model(nodes, [vi("x", list(shape))], [vi(prev, list(shape))], opset=opset)


def many_functions(n_functions: int = 1000, n_calls: int = 10000, shape=(2, 3)) -> onnx.ModelProto:
    """``n_calls`` calls, in a chain, spread over ``n_functions`` model-local functions whose
    body is one Mul: the model of issue 11 item 9 (a validator cost of calls x functions)."""
    fns = [helper.make_function("local", f"F{i}", ["p"], ["r"],
                                [helper.make_node("Mul", ["p", "p"], ["r"])],
                                opset_imports=[helper.make_opsetid("", 13)])
           for i in range(n_functions)]
    nodes, prev = [], "x"
    for i in range(n_calls):
        nodes.append(helper.make_node(f"F{i % n_functions}", [prev], [f"v{i}"], domain="local",
                                      name=f"call_{i}"))
        prev = f"v{i}"
    return model(nodes, [vi("x", list(shape))], [vi(prev, list(shape))], functions=fns,
                 extra_imports=[helper.make_opsetid("local", 1)])
