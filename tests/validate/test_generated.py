"""The suite finds unsound verdicts by itself (issue 11): a structure-aware generator of small
Mul/Gemm models with declaration variants, and a differential oracle.

Each case has the shapes that make its operator valid ("true" shapes); every declaration of an
input (graph input, value_info, graph output, overridable initializer) independently states the
true shape or a perturbed one (broadcastable, symbolic); the node may sit in the main graph, an
If branch or a model-local function. Oracle: whenever the validator says "conforms", feeding
every graph input with its declared shape must run through sonnx's kernels and onnxruntime,
with no broadcast (the kernels refuse one), the declared output shape, and equal results.
"""
from __future__ import annotations

import collections
import dataclasses

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st
from onnx import TensorProto, helper, numpy_helper

import sonnx
from sonnx.validate import declarations, validate, walker

from . import models as M
from .plant import plant

ort = pytest.importorskip("onnxruntime")

EXAMPLES = 500
ELEMS = {"float": (TensorProto.FLOAT, np.float32), "int32": (TensorProto.INT32, np.int32),
         "double": (TensorProto.DOUBLE, np.float64)}


@dataclasses.dataclass
class Case:
    op: str
    opset: int
    elem: str
    true: dict            # input name -> the shape that makes the node valid
    declared: dict        # input name -> the graph input's declared shape
    extra: list           # (kind, name, shape): value_info / output / initializer declarations
    out_declared: tuple
    attrs: dict
    wrap: str             # "main", "if", "function"

    @property
    def inputs(self):
        return list(self.true)


def _perturb(shape):
    """Shapes a hostile declaration may give instead of ``shape``: broadcastable or symbolic."""
    options = [tuple(shape), tuple(shape[1:]), (1,) + tuple(shape[1:]) if shape else (1,)]
    if shape:
        options.append(("N",) + tuple(shape[1:]))
        options.append(tuple(shape[:-1]) + (1,))
    return st.sampled_from(options)


@st.composite
def cases(draw):
    op = draw(st.sampled_from(["Mul", "Gemm"]))
    elem = draw(st.sampled_from(["float", "float", "int32", "double"]))
    dim = st.integers(1, 3)
    attrs = {}
    if op == "Mul":
        opset = draw(st.sampled_from([7, 13, 14]))
        shape = tuple(draw(st.lists(dim, min_size=1, max_size=3)))
        true = {"a": shape, "b": shape}
        out = shape
    else:
        opset = draw(st.sampled_from([11, 13]))
        m, k, n = draw(dim), draw(dim), draw(dim)
        ta, tb = draw(st.booleans()), draw(st.booleans())
        true = {"a": (k, m) if ta else (m, k), "b": (n, k) if tb else (k, n)}
        if draw(st.booleans()):
            true["c"] = (m, n)
        attrs = {"transA": int(ta), "transB": int(tb)}
        if elem != "int32":
            attrs["alpha"] = draw(st.sampled_from([1.0, 0.5, 2.0]))
            attrs["beta"] = draw(st.sampled_from([1.0, 2.0]))
        out = (m, n)
    declared = {name: draw(st.one_of(st.just(s), _perturb(s))) if draw(st.booleans()) else s
                for name, s in true.items()}
    extra = []
    for name, s in true.items():
        for kind in draw(st.lists(st.sampled_from(["value_info", "output", "initializer"]),
                                  max_size=2, unique=True)):
            extra.append((kind, name, draw(st.one_of(st.just(s), st.just(declared[name]), _perturb(s)))))
    out_declared = draw(st.one_of(st.just(out), _perturb(out)))
    wrap = draw(st.sampled_from(["main"] * 6 + ["if", "function"]))
    return Case(op, opset, elem, true, declared, extra, out_declared, attrs, wrap)


def _values(shape, elem, rng):
    # small integers: every product and sum is exact in each type, so results compare exactly
    return rng.integers(-3, 4, size=shape).astype(ELEMS[elem][1])


def build(case: Case) -> onnx.ModelProto:
    code = ELEMS[case.elem][0]
    node = helper.make_node(case.op, case.inputs, ["y"], name="op", **case.attrs)
    vis = [M.vi(name, list(case.declared[name]), code) for name in case.inputs]
    decl_vi = [M.vi(n, list(s), code) for k, n, s in case.extra if k == "value_info"]
    decl_out = [M.vi(n, list(s), code) for k, n, s in case.extra if k == "output"]
    inits = [numpy_helper.from_array(np.ones([d if isinstance(d, int) else 1 for d in s],
                                             ELEMS[case.elem][1]), n)
             for k, n, s in case.extra if k == "initializer"]
    out = M.vi("y", list(case.out_declared), code)
    if case.wrap == "main":
        m = M.model([node], vis, [out] + decl_out, opset=case.opset, initializers=inits)
        m.graph.value_info.extend(decl_vi)
        return m
    if case.wrap == "function":
        fn = helper.make_function("local", "F", case.inputs, ["y"], [node],
                                  opset_imports=[helper.make_opsetid("", case.opset)])
        if hasattr(fn, "value_info"):
            fn.value_info.extend(decl_vi + decl_out)
        call = helper.make_node("F", case.inputs, ["y"], domain="local", name="call")
        return M.model([call], vis, [out], opset=case.opset, initializers=inits, functions=[fn],
                       extra_imports=[helper.make_opsetid("local", 1)])
    branch = helper.make_graph([node], "then", [], [out] + decl_out, value_info=decl_vi)
    other = helper.make_graph([helper.make_node("Identity", [case.inputs[0]], ["e"])], "else", [],
                              [M.vi("e", None, code)])
    cond = M.vi("cond", [], TensorProto.BOOL)
    if_node = helper.make_node("If", ["cond"], ["z"], then_branch=branch, else_branch=other)
    return M.model([if_node], vis + [cond], [M.vi("z", None, code)], opset=case.opset,
                   initializers=inits)


def oracle(case: Case, seed: int) -> str:
    """'conforms' after checking the run, or 'violations' / 'unreadable' (nothing to run)."""
    model = build(case)
    report = validate(model)
    assert report.error is None, report.error
    if not report.conforms:
        return "violations"
    assert case.wrap == "main", "PROF-R1 must refuse the If / function-call node"
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in model.graph.input:  # the caller feeds every input with its declared shape
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        feeds[vi.name] = _values(shape, case.elem, rng)
    args = [feeds[n] for n in case.inputs]
    try:
        if case.op == "Mul":
            ours = sonnx.mul(*args, opset=case.opset)
        else:
            ours = sonnx.gemm(*args, alpha=case.attrs.get("alpha", 1.0),
                              beta=case.attrs.get("beta", 1.0), trans_a=case.attrs["transA"],
                              trans_b=case.attrs["transB"], opset=case.opset)
    except (ValueError, TypeError) as exc:
        raise AssertionError(f"validator said conforms, sonnx's kernel refuses: {exc}") from exc
    assert ours.shape == tuple(case.out_declared), (ours.shape, case.out_declared)
    try:
        options = ort.SessionOptions()
        options.log_severity_level = 3  # errors only: overridable initializers are warned about
        sess = ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])
    except Exception as exc:
        if "NOT_IMPLEMENTED" in str(exc) or "Could not find an implementation" in str(exc):
            return "conforms"  # onnxruntime has no kernel for this type: sonnx's run stands alone
        raise AssertionError(f"validator said conforms, onnxruntime cannot load it: {exc}") from exc
    try:
        (theirs,) = sess.run(["y"], feeds)
    except Exception as exc:
        raise AssertionError(f"validator said conforms, onnxruntime cannot run it: {exc}") from exc
    assert theirs.shape == ours.shape and np.array_equal(theirs, ours), (theirs, ours)
    return "conforms+ort"


def _run(stats, examples, phases=tuple(Phase)):
    @settings(max_examples=examples, deadline=None, phases=phases,
              suppress_health_check=[HealthCheck.too_slow])
    @given(case=cases(), seed=st.integers(0, 2**32 - 1))
    def run(case, seed):
        stats[oracle(case, seed)] += 1
    run()


@pytest.mark.req("PROF-R2", "MUL-R1", "MUL-R4", "GEMM-R4")
def test_generated_models_differential():
    stats = collections.Counter()
    _run(stats, EXAMPLES)
    print(f"generated cases: {dict(stats)}")
    # the generator must reach both verdicts, and onnxruntime must run a good share of them
    assert stats["violations"] >= EXAMPLES // 5
    assert stats["conforms+ort"] >= EXAMPLES // 10


def test_replanted_defect_1_makes_the_generator_fail(monkeypatch):
    """Defect 1: the type table filled from inputs, then value_info, then outputs (a later
    declaration silently replaces the input's), with no check that declarations agree."""
    plant(monkeypatch, walker, ("for coll in (g.value_info, g.output, g.input):",
                                "for coll in (g.input, g.value_info, g.output):"),
          ('conv(vi.type) if vi.HasField("type") else _UNKNOWN_ENTRY',
           "values.get(vi.name, _UNKNOWN_ENTRY)"))
    plant(monkeypatch, declarations, ("if len(distinct) < 2:", "if True:"))
    with pytest.raises(AssertionError, match="validator said conforms"):
        _run(collections.Counter(), EXAMPLES, phases=(Phase.generate,))
