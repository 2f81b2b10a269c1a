"""The validator's own shape propagation (sonnx/validate/propagate.py) against onnx's strict shape
inference: on the shipped examples, the byte-level fuzz corpus and the hypothesis generator's
models, the verdict with the propagation equals the verdict with onnx's inference alone, finding
for finding. A future change that lets the two paths diverge fails here."""
from __future__ import annotations

import collections
import dataclasses
import random

import onnx
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from onnx import TensorProto, helper

from sonnx.ops.registry import operator
from sonnx.validate import propagate, validate

from . import models as M
from .test_fuzz import EXAMPLES, SEED, mutate
from .test_generated import build, cases


def _verdict(report):
    return (report.error, sorted(repr(dataclasses.astuple(f)) for f in report.findings))


def _both(model_or_bytes, monkeypatch, stats=None):
    """(verdict with the propagation, verdict with onnx's inference only); ``stats`` counts
    which path the first one took."""
    if isinstance(model_or_bytes, bytes):
        try:
            model_or_bytes = onnx.load_model_from_string(model_or_bytes)
        except Exception:
            return None
    own = validate(model_or_bytes)
    if stats is not None and own.error is None:
        stats["own" if "propagate" in own.timings and own.timings.get("infer") == 0.0
              else "onnx"] += 1
    with monkeypatch.context() as m:
        m.setattr(propagate, "profile_types", lambda model, opset: None)
        onnx_only = validate(model_or_bytes)
    return _verdict(own), _verdict(onnx_only)


def _chain(n=4, declare="all", out_shape=(8, 8), vi_shape=(8, 8), elem=TensorProto.FLOAT):
    nodes, prev = [], "x"
    for i in range(n):
        op = ("Mul", [prev, prev]) if i % 2 == 0 else ("Gemm", [prev, prev, prev])
        nodes.append(helper.make_node(op[0], op[1], [f"v{i}"], name=f"n{i}"))
        prev = f"v{i}"
    m = M.model(nodes, [M.vi("x", [8, 8], TensorProto.FLOAT)], [M.vi(prev, list(out_shape), elem)],
                opset=13)
    if declare == "all":
        m.graph.value_info.extend(M.vi(f"v{i}", list(vi_shape), TensorProto.FLOAT) for i in range(n - 1))
    return m


@pytest.mark.req("PROF-R2", "MUL-R1", "GEMM-R4")
def test_examples_and_fuzz_corpus_same_verdict(monkeypatch):
    stats = collections.Counter()
    rng = random.Random(SEED)
    corpus = [p.read_bytes() for p in EXAMPLES]
    corpus += [mutate(corpus[k % len(corpus)], rng) for k in range(300)]
    for data in corpus:
        got = _both(data, monkeypatch, stats)
        if got is not None:
            assert got[0] == got[1]
    print(f"paths: {dict(stats)}")
    assert stats["own"] >= len(EXAMPLES) // 2   # the propagation is used, not bypassed


@pytest.mark.req("PROF-R2", "MUL-R1", "MUL-R4", "GEMM-R4")
def test_generated_models_same_verdict(monkeypatch):
    stats = collections.Counter()

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])
    @given(case=cases())
    def run(case):
        own, onnx_only = _both(build(case), monkeypatch, stats)
        assert own == onnx_only
    run()
    print(f"paths: {dict(stats)}")
    assert stats["own"] >= 5 and stats["onnx"] >= 5


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("model, decided", [
    (_chain(declare="all"), True),
    (_chain(declare="none"), True),                        # intermediates computed, as onnx infers
    (_chain(vi_shape=(8, 4)), False),                      # a value_info that disagrees
    (_chain(out_shape=(8, 9)), False),                     # a graph output that disagrees
    (_chain(out_shape=("N", 8)), False),                   # a symbolic declaration: onnx merges it
    (_chain(elem=TensorProto.DOUBLE), False),              # an element type that disagrees
])
def test_propagation_decides_only_what_onnx_accepts(model, decided, monkeypatch):
    """Each disagreement is left to onnx's inference, whose finding then stands."""
    assert (propagate.profile_types(model, onnx.defs.onnx_opset_version()) is not None) == decided
    own, onnx_only = _both(model, monkeypatch)
    assert own == onnx_only
    assert (own[1] == []) == decided


@pytest.mark.req("PROF-R2")
def test_initializer_disagreeing_with_its_input_goes_to_onnx(monkeypatch):
    m = _chain()
    m.graph.initializer.append(helper.make_tensor("x", TensorProto.FLOAT, [8, 4], [1.0] * 32))
    assert propagate.profile_types(m, onnx.defs.onnx_opset_version()) is None
    own, onnx_only = _both(m, monkeypatch)
    assert own == onnx_only and own[1]


@pytest.mark.req("PROF-R2", "MUL-R1")
def test_a_wrong_output_shape_rule_is_caught_by_the_comparison(monkeypatch):
    """Planted fault: Mul's record gives a wrong shape that a wrong declaration matches; the
    propagation would accept what onnx's inference refuses, and the comparison sees it."""
    m = _chain(n=1, out_shape=(8, 9))
    rec = operator("Mul")
    right = rec.output_shape
    object.__setattr__(rec, "output_shape", lambda shapes, kw: (8, 9))
    try:
        own, onnx_only = _both(m, monkeypatch)
    finally:
        object.__setattr__(rec, "output_shape", right)
    assert own != onnx_only


def _one_node(op, version, out_shape):
    """A one-node model of ``op`` at opset ``version`` on its registry-wide example, every value
    declared, the result declared as ``out_shape``."""
    from tests.ops.test_every_operator import example
    inputs, attributes = example(op, "float", version)
    names = [f"i{k}" if a is not None else "" for k, a in enumerate(inputs)]
    while names and not names[-1]:
        names.pop()
    node = helper.make_node(op.name, names, ["y"], name="n", **attributes)
    ins = [M.vi(n, list(a.shape), TensorProto.FLOAT) for n, a in zip(names, inputs) if n]
    return M.model([node], ins, [M.vi("y", list(out_shape), TensorProto.FLOAT)], opset=version)


@pytest.mark.req("PROF-R2", "@kind:elementwise", "@kind:matrix", "@kind:unary", "@kind:structural")
@pytest.mark.parametrize("name", sorted(__import__("sonnx.ops.registry", fromlist=["x"]).operators()))
def test_every_operator_same_verdict_as_onnx_inference(name, monkeypatch):
    """Every registered operator, each version onnx knows, on its example: the result declared
    as the kernel computes it (decided by the propagation, no finding) and one dimension off
    (left to onnx's inference, whose finding stands); both paths give the same findings."""
    from tests.ops.test_every_operator import call, example
    op = operator(name)
    for version in op.versions:
        if version > onnx.defs.onnx_opset_version():
            continue
        inputs, attributes = example(op, "float", version)
        shape = call(op, inputs, attributes, version).shape
        good = _one_node(op, version, shape)
        bad = _one_node(op, version, (shape[0] + 1,) + tuple(shape[1:]))
        # the propagation decides what it can model: a record with output_shape, INT/FLOAT
        # attributes only, no input read as a constant (Reshape's shape, Squeeze's axes); the
        # rest take onnx's inference, which must then give the same verdict
        attrs = good.graph.node[0].attribute
        simple = all(a.type in (onnx.AttributeProto.INT, onnx.AttributeProto.FLOAT) for a in attrs)
        ours = op.output_shape is not None and simple and not op.constant_inputs
        for model, decided in ((good, ours), (bad, False)):
            got = propagate.profile_types(model, onnx.defs.onnx_opset_version())
            assert (got is not None) == decided, (name, version, decided)
            own, onnx_only = _both(model, monkeypatch)
            assert own == onnx_only, (name, version)


# ---- memoised verdicts (issue 28): the propagation, the walker and the operator rules decide a
# node once per distinct signature (operator, opset, operand entries, attributes); a model that
# repeats signatures, passing and failing, must have the findings it has without any memo

class _Forgetful(dict):
    """A memo table that remembers nothing: every node is decided afresh."""

    def get(self, key, default=None):
        return default

    def __setitem__(self, key, value):
        pass


class _ByOperatorOnly(dict):
    """Planted fault: a memo keyed by the operator's name alone (the operands' signatures and
    the attributes left out of the key)."""

    def get(self, key, default=None):
        return super().get(tuple(k for k in key if isinstance(k, str)), default)

    def __setitem__(self, key, value):
        super().__setitem__(tuple(k for k in key if isinstance(k, str)), value)


def _repeated_models():
    """(name, model, findings expected) with signatures repeated between nodes."""
    F = TensorProto.FLOAT
    node = helper.make_node
    out = []
    # 1. a conforming chain: Mul and Gemm each repeated 20 times (the propagation takes it)
    out.append(("chain", _chain(n=40), 0))
    # 2. the same operator and arity, operands of another shape whose result is declared as the
    #    repeated node's result would be: only a memo that ignores the operands accepts it
    nodes = [node("Mul", ["x", "x"], [f"a{i}"]) for i in range(5)] + [node("Mul", ["y", "y"], ["b"])]
    out.append(("same op, other operands", M.model(
        nodes, [M.vi("x", [8, 8]), M.vi("y", [4, 4])],
        [M.vi(f"a{i}", [8, 8]) for i in range(5)] + [M.vi("b", [8, 8])]), None))
    # 3. a failing signature repeated among passing ones: each failing node has its own finding
    nodes = []
    for i in range(6):
        nodes.append(node("Mul", ["x", "x"], [f"a{i}"], name=f"ok{i}"))
        nodes.append(node("Mul", ["x", "r"], [f"b{i}"], name=f"bad{i}"))   # a broadcast
    out.append(("repeated failing Mul", M.model(
        nodes, [M.vi("x", [8, 8]), M.vi("r", [1, 8])],
        [M.vi(f"a{i}", [8, 8]) for i in range(6)] + [M.vi(f"b{i}", [8, 8]) for i in range(6)]), 6))
    # 4. the same operands, attributes that differ: Gemm with transB=1 passes, with 0 it does not
    nodes = []
    for i in range(4):
        nodes.append(node("Gemm", ["a", "b", "c"], [f"y{i}"], name=f"t{i}", transB=1))
        nodes.append(node("Gemm", ["a", "b", "c"], [f"z{i}"], name=f"n{i}", transB=0))
    out.append(("Gemm attributes", M.model(
        nodes, [M.vi("a", [2, 3]), M.vi("b", [4, 3]), M.vi("c", [2, 4])],
        [M.vi(f"y{i}", [2, 4]) for i in range(4)] + [M.vi(f"z{i}", [2, 4]) for i in range(4)]),
        None))
    # 5. repeated dead nodes on the propagation's path (PROF-R4 once per dead node)
    nodes = [node("Mul", ["x", "x"], ["v"])] + [node("Mul", ["x", "x"], [f"d{i}"]) for i in range(3)]
    out.append(("repeated dead", M.model(nodes, [M.vi("x", [8, 8])], [M.vi("v", [8, 8])]), 3))
    return out


def _verdicts(model, monkeypatch, table=None):
    """(verdict with the memos given, verdict with onnx's inference and no memo)."""
    from sonnx.validate import types as vtypes
    with monkeypatch.context() as m:
        if table is not None:
            m.setattr(vtypes, "memo_table", table)
        memoised = _verdict(validate(model))
    with monkeypatch.context() as m:
        m.setattr(vtypes, "memo_table", _Forgetful)
        m.setattr(propagate, "profile_types", lambda model, opset: None)
        plain = _verdict(validate(model))
    return memoised, plain


@pytest.mark.req("PROF-R2", "PROF-R4", "MUL-R1", "GEMM-R4")
@pytest.mark.parametrize("name,model,count", _repeated_models(), ids=lambda v: v if isinstance(v, str) else "")
def test_memoised_verdicts_equal_unmemoised(name, model, count, monkeypatch):
    memoised, plain = _verdicts(model, monkeypatch)
    assert memoised == plain
    forgetful, _ = _verdicts(model, monkeypatch, _Forgetful)
    assert forgetful == plain
    if count is not None:
        assert len(plain[1]) == count, plain[1]
    else:
        assert plain[1]          # it fails: the memo must not make it pass


def _differ(pair):
    return pair[0] != pair[1]


@pytest.mark.req("PROF-R2", "MUL-R1", "GEMM-R4")
def test_a_memo_keyed_by_operator_alone_is_caught(monkeypatch):
    """The comparison above sees a memo whose key leaves out the signature (planted)."""
    differ = [name for name, model, _ in _repeated_models()
              if _differ(_verdicts(model, monkeypatch, _ByOperatorOnly))]
    assert {"same op, other operands", "repeated failing Mul", "Gemm attributes"} <= set(differ)
