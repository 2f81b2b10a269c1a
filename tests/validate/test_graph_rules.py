"""The profile's graph rules (PROF-R4 dead computation, PROF-R5 empty input names, PROF-R6 cycles
and order; sonnx/validate/graph.py), each shown failing on a planted model, on both ways the
validator decides shapes (its own propagation and onnx's inference)."""
from __future__ import annotations

import sys

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from sonnx.validate import graph, propagate, validate

from . import models as M

F = TensorProto.FLOAT


def _of(report, rule):
    return [f for f in report.findings if f.rule == rule]


def _dead_model():
    """y = a * b; dead: r = relu(a) -> s = relu(r) (r read only by a dead node), z = a + b."""
    nodes = [helper.make_node("Relu", ["a"], ["r"], name="r1"),
             helper.make_node("Mul", ["a", "b"], ["y"], name="mul"),
             helper.make_node("Relu", ["r"], ["s"], name="r2"),
             helper.make_node("Add", ["a", "b"], ["z"])]
    return M.model(nodes, [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("y", [2, 3])])


@pytest.mark.req("PROF-R4")
def test_dead_nodes_found_with_why():
    r = validate(_dead_model())
    dead = _of(r, "PROF-R4")
    assert [(f.node_index, f.node_name, f.op_type) for f in dead] == [
        (0, "r1", "Relu"), (2, "r2", "Relu"), (3, None, "Add")]
    assert "read only by node(s) that reach no graph output either ('r2')" in dead[0].message
    assert "no node reads its result(s) 's'" in dead[1].message
    assert all("; fix: remove it (sonnx conform" in f.message for f in dead)
    assert [f.rule for f in r.findings] == ["PROF-R4"] * 3     # nothing else is wrong
    # the live part alone conforms
    m = _dead_model()
    del m.graph.node[2:]
    del m.graph.node[0]
    assert validate(m).conforms


@pytest.mark.req("PROF-R4")
def test_node_read_in_a_subgraph_is_live():
    # 'x2' is computed in the main graph and read only inside the If's branches: it is live
    # (the If is PROF-R1, but the Mul feeding it is no dead node)
    then = [helper.make_node("Relu", ["x2"], ["t"])]
    other = [helper.make_node("Relu", ["x2"], ["e"])]
    m = M.if_model(then, other)
    m.graph.node.insert(0, helper.make_node("Mul", ["x", "x"], ["x2"], name="sq"))
    r = validate(m)
    assert not _of(r, "PROF-R4") and "PROF-R1" in [f.rule for f in r.findings]
    # planted: the same Mul with its result read nowhere is dead
    m.graph.node[0].output[0] = "x3"
    m.graph.node[0].name = "sq3"
    assert [f.node_name for f in _of(validate(m), "PROF-R4")] == ["sq3"]


@pytest.mark.req("PROF-R4")
def test_unused_initializer_found():
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    unused = numpy_helper.from_array(np.ones((2, 3), np.float32), "unused")
    m = M.model([helper.make_node("Mul", ["a", "w"], ["y"])], [M.vi("a", [2, 3])],
                [M.vi("y", [2, 3])], initializers=[w, unused])
    r = validate(m)
    assert [(f.rule, f.tensor) for f in r.findings] == [("PROF-R4", "unused")]
    assert "fix: remove it" in r.findings[0].message
    # an initializer that is also a graph input is part of the interface: not a finding
    m.graph.input.append(M.vi("unused", [2, 3]))
    assert validate(m).conforms


@pytest.mark.req("PROF-R5")
def test_empty_input_names_found():
    trailing = M.gemm([2, 3], [3, 4])
    trailing.graph.node[0].input.append("")
    r = validate(trailing)
    assert [f.rule for f in r.findings] == ["PROF-R5"]      # onnx accepts it; the profile does not
    assert "at the end of its input list" in r.findings[0].message
    assert "sonnx conform drops trailing empty names" in r.findings[0].message
    assert r.findings[0].node_index == 0 and r.findings[0].op_type == "Gemm"
    mid = M.gemm([2, 3], [3, 4], [2, 4])
    mid.graph.node[0].input[1] = ""
    r = validate(mid)
    r5 = _of(r, "PROF-R5")
    assert len(r5) == 1 and "input 1" in r5[0].message and "before a named input" in r5[0].message


@pytest.mark.req("PROF-R5", "GEMM-R5")
def test_gemm_without_c_is_the_records_business():
    # omitted at the end: PROF-R5 holds; Gemm's record defines C's absence from Gemm-11 and
    # refuses it before (C required), under its own requirement
    assert validate(M.gemm([2, 3], [3, 4], opset=13)).conforms
    r = validate(M.gemm([2, 3], [3, 4], opset=9))
    assert not _of(r, "PROF-R5") and "GEMM-R5" in [f.rule for f in r.findings]


def _unsorted():
    nodes = [helper.make_node("Relu", ["t"], ["y"], name="last"),
             helper.make_node("Mul", ["a", "b"], ["t"], name="first")]
    return M.model(nodes, [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("y", [2, 3])])


@pytest.mark.req("PROF-R6")
def test_unsorted_graph_found():
    r = validate(_unsorted())
    r6 = _of(r, "PROF-R6")
    assert [(f.node_index, f.node_name, f.tensor) for f in r6] == [(0, "last", "t")]
    assert "not in topological order" in r6[0].message and "sonnx conform sorts them" in r6[0].message
    assert "ONNX-CHECKER" in [f.rule for f in r.findings]    # onnx refuses it too
    assert graph.topological_order(_unsorted().graph) == [1, 0]


@pytest.mark.req("PROF-R6")
def test_cycles_found():
    two = [helper.make_node("Mul", ["a", "u"], ["t"], name="m"),
           helper.make_node("Relu", ["t"], ["u"], name="back"),
           helper.make_node("Relu", ["t"], ["y"], name="out")]
    m = M.model(two, [M.vi("a", [2, 3])], [M.vi("y", [2, 3])])
    r6 = _of(validate(m), "PROF-R6")
    assert [(f.node_name, f.tensor) for f in r6] == [("m", "u")] and "form a cycle" in r6[0].message
    assert graph.topological_order(m.graph) is None
    own = [helper.make_node("Mul", ["a", "t"], ["t"], name="self"),
           helper.make_node("Relu", ["t"], ["y"])]
    m = M.model(own, [M.vi("a", [2, 3])], [M.vi("y", [2, 3])])
    r6 = _of(validate(m), "PROF-R6")
    assert [f.node_name for f in r6] == ["self"] and "form a cycle" in r6[0].message
    assert graph.topological_order(m.graph) is None


@pytest.mark.req("PROF-R4", "PROF-R5", "PROF-R6")
@pytest.mark.parametrize("build", ["dead", "unsorted", "empty"])
def test_graph_rules_on_both_shape_paths(build, monkeypatch):
    """The same graph-rule findings whether the validator's propagation or onnx's inference
    decides the shapes (the propagation never sees the rules: they run on the model as written)."""
    if build == "dead":
        m = _dead_model()
    elif build == "unsorted":
        m = _unsorted()
    else:
        m = M.gemm([2, 3], [3, 4])
        m.graph.node[0].input.append("")
    own = validate(m)
    with monkeypatch.context() as p:
        p.setattr(propagate, "profile_types", lambda model, opset: None)
        onnx_only = validate(m)
    rules = ("PROF-R4", "PROF-R5", "PROF-R6")
    assert [f for f in own.findings if f.rule in rules] == \
        [f for f in onnx_only.findings if f.rule in rules] != []
    if build == "dead":   # the propagation did decide this model: the rule still ran there
        assert own.timings["infer"] == 0.0 and onnx_only.timings["infer"] > 0.0


@pytest.mark.req("PROF-R6", "PROF-R4")
def test_long_chains_and_cycles_without_recursion():
    """100,000 nodes written in reverse order, then closed into one cycle: one finding per node
    read too early, no recursion (the limit is lowered to prove it), no hang."""
    n = 100_000
    nodes = [helper.make_node("Relu", [f"v{i - 1}" if i else "x"], [f"v{i}"]) for i in range(n)]
    m = M.model(list(reversed(nodes)), [M.vi("x", [2])], [M.vi(f"v{n - 1}", [2])])
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(100)
    try:
        found = graph.findings(m)
        order = graph.topological_order(m.graph)
        m.graph.node[-1].input[0] = f"v{n - 1}"          # v0 = relu(v_last): one cycle
        cyclic = graph.findings(m)
        no_order = graph.topological_order(m.graph)
    finally:
        sys.setrecursionlimit(old)
    assert len(found) == n - 1 and {f.rule for f in found} == {"PROF-R6"}
    assert all("not in topological order" in f.message for f in found)
    assert order == list(range(n - 1, -1, -1))
    assert no_order is None and {f.rule for f in cyclic} == {"PROF-R6"} and len(cyclic) == n - 1
    assert all("form a cycle" in f.message for f in cyclic)


@pytest.mark.req("PROF-R4", "PROF-R5", "PROF-R6")
def test_checked_shortcut_agrees_with_the_general_passes():
    """graph.findings(checked=True) (onnx's checker accepted the model) takes a one-pass
    shortcut when nothing is wrong; on every planted model it must find what the general passes
    find, and on a clean chain nothing."""
    trailing = M.gemm([2, 3], [3, 4])
    trailing.graph.node[0].input.append("")
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "unused")
    unused = M.model([helper.make_node("Mul", ["a", "a"], ["y"])], [M.vi("a", [2, 3])],
                     [M.vi("y", [2, 3])], initializers=[w])
    two = M.model([helper.make_node("Relu", ["a"], ["y"]), helper.make_node("Relu", ["a"], ["z"])],
                  [M.vi("a", [2, 3])], [M.vi("y", [2, 3]), M.vi("z", [2, 3])])
    # a trailing '' and a dead node: the shortcut's count of results read would balance
    both = M.model([helper.make_node("Gemm", ["a", "b", ""], ["y"]),
                    helper.make_node("Relu", ["a"], ["z"], name="dead")],
                   [M.vi("a", [2, 3]), M.vi("b", [3, 4])], [M.vi("y", [2, 4])])
    # a result read only inside an If's branch (live), next to a dead node
    sub = M.if_model([helper.make_node("Relu", ["x2"], ["t"])], [helper.make_node("Relu", ["x2"], ["e"])])
    sub.graph.node.insert(0, helper.make_node("Mul", ["x", "x"], ["x2"], name="sq"))
    sub.graph.node.append(helper.make_node("Relu", ["x"], ["z"], name="dead"))
    for m in (_dead_model(), trailing, unused, M.chain(50), two, both, sub):
        assert graph.findings(m, checked=True) == graph.findings(m, checked=False)
    assert [(f.rule, f.node_name) for f in graph.findings(both, checked=True)] == [
        ("PROF-R5", None), ("PROF-R4", "dead")]
    assert [(f.rule, f.node_name) for f in graph.findings(sub, checked=False)] == [("PROF-R4", "dead")]
    assert graph.findings(M.chain(50), checked=True) == [] == graph.findings(two, checked=True)


@pytest.mark.req("PROF-R4")
def test_shortcut_from_the_propagations_reads_agrees_with_the_general_passes():
    """When the validator's propagation takes a model, graph.findings counts from the names it
    left unread (propagate.Types.unread) instead of reading them again: it must find what the
    general passes find (dead nodes, an unused initializer) and nothing on a clean chain."""
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "unused")
    unused = M.model([helper.make_node("Mul", ["a", "a"], ["y"])], [M.vi("a", [2, 3])],
                     [M.vi("y", [2, 3])], initializers=[w])
    passthrough = M.model([helper.make_node("Relu", ["a"], ["y"]), helper.make_node("Relu", ["a"], ["z"])],
                          [M.vi("a", [2, 3])], [M.vi("y", [2, 3]), M.vi("a", [2, 3])])
    for m, expected in ((_dead_model(), 3), (unused, 1), (M.chain(50), 0), (passthrough, 1)):
        types = propagate.profile_types(m, 28)
        assert types is not None                     # the propagation took it
        got = graph.findings(m, unread=types.unread)
        assert got == graph.findings(m) and len(got) == expected
        assert {f.rule for f in got} <= {"PROF-R4"}
