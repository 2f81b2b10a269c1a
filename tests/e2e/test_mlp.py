"""End to end: a 3-layer MLP (Linear -> ReLU -> Linear -> ReLU -> Linear) exported from PyTorch
with both exporters (tools/sonnx_dev/export_mlp.py; the .onnx files are committed, torch is not
needed here).

- the models as exported are refused (Gemm's bias of shape (N,): GEMM-R4; the TorchScript
  exporter's MatMul for Linear(bias=False): PROF-R1 while MatMul is not a profile operator);
  with the biases stored as (M, N) they conform;
- every node run by sonnx's kernels equals the reference kernels bit for bit (a small node-by-
  node runner below; ``sonnx run`` is another issue);
- onnxruntime and onnx.reference: each of their Gemm nodes within GEMM-R7's bound of its own
  inputs, each Relu equal to sonnx.relu up to the sign of a zero (spec/relu.md); the largest
  ULP distance of their final outputs from sonnx's exact mode is recorded (``max_ulp_*``
  properties in the JUnit report, printed with ``-s``).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import sonnx
from sonnx.ops.registry import operator, operators
from sonnx.semantics.tensor import from_numpy, to_numpy
from sonnx_dev.export_mlp import EXPORTS, model_name, store_biases_full

from ..ops.conftest import assert_same_bits
from ..ops.test_gemm import assert_within_bound

MODELS = Path(__file__).parent / "models"
BIAS = [(e, o) for e, o in EXPORTS]
# what each exporter emits for the five layers (the point of having both)
EMITTED = {
    ("torchscript", True): ["Gemm", "Relu", "Gemm", "Relu", "Gemm"],
    ("torchscript", False): ["MatMul", "Relu", "MatMul", "Relu", "MatMul"],
    ("dynamo", True): ["Gemm", "Relu", "Gemm", "Relu", "Gemm"],
    ("dynamo", False): ["Gemm", "Relu", "Gemm", "Relu", "Gemm"],      # Gemm without C, transB=1
}
MATMUL_IN_PROFILE = "MatMul" in operators()


def load(exporter: str, opset: int, bias: bool, fixed: bool = False) -> onnx.ModelProto:
    return onnx.load(str(MODELS / model_name(exporter, opset, bias, fixed)))


def conformant_models() -> list:
    """The models that must conform: with a bias, the fixed copy; without, the model itself
    (the TorchScript ones only once MatMul is a profile operator)."""
    out = []
    for exporter, opset in EXPORTS:
        out.append(pytest.param(exporter, opset, True, True, id=model_name(exporter, opset, True, True)))
        if exporter == "dynamo" or MATMUL_IN_PROFILE:
            out.append(pytest.param(exporter, opset, False, False, id=model_name(exporter, opset, False)))
    return out


ALL = [pytest.param(e, o, b, id=model_name(e, o, b)) for e, o in EXPORTS for b in (True, False)]


def rules(model) -> list[str]:
    report = sonnx.validate(model)
    assert report.error is None
    return [f.rule for f in report.findings]


def inputs(model) -> list[dict[str, np.ndarray]]:
    """Seeded normal inputs, and one with -0, zeros and large values (the Relu edges)."""
    (x,) = model.graph.input
    shape = tuple(d.dim_value for d in x.type.tensor_type.shape.dim)
    rng = np.random.default_rng(20261123)
    feeds = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    edge = np.resize(np.array([-0.0, 0.0, 1e-45, -1e-45, 3e4, -3e4, 1.0, -1.0], np.float32), shape)
    return [{x.name: f} for f in feeds + [edge]]


# ---------------------------------------------------------------- what the exporters emit
@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("exporter,opset,bias", [p.values for p in ALL], ids=[p.id for p in ALL])
def test_each_exporter_emits_the_expected_nodes(exporter, opset, bias):
    model = load(exporter, opset, bias)
    assert [n.op_type for n in model.graph.node] == EMITTED[exporter, bias]
    assert [(o.domain, o.version) for o in model.opset_import if o.domain in ("", "ai.onnx")][0][1] == opset


@pytest.mark.req("GEMM-R4")
def test_the_fixed_models_are_the_fix_of_the_exported_ones():
    """store_biases_full (plain onnx + numpy) rebuilds every committed *_c_full model byte for
    byte; the rest of export_mlp.py needs torch (``--check`` re-exports and compares)."""
    for exporter, opset in EXPORTS:
        fixed = store_biases_full(load(exporter, opset, True))
        assert fixed.SerializeToString() == load(exporter, opset, True, True).SerializeToString()


# ---------------------------------------------------------------- the validator
@pytest.mark.req("GEMM-R4")
@pytest.mark.parametrize("exporter,opset", BIAS, ids=[f"{e}_op{o}" for e, o in BIAS])
def test_the_exported_bias_is_refused_with_gemm_r4(exporter, opset):
    report = sonnx.validate(load(exporter, opset, True))
    assert [f.rule for f in report.findings] == ["GEMM-R4"] * 3
    for f in report.findings:
        # the ways out that work: sonnx conform, or torch.addmm with an (M, N) bias buffer
        assert "nn.Linear bias" in f.message and "sonnx conform" in f.message, f.message
        assert "expanded to (2, " in f.message and "torch.addmm(bias_mn" in f.message, f.message
        assert "fold the expansion" not in f.message, f.message
    # the command line states the ID, and exits 1 (a violation)
    path = MODELS / model_name(exporter, opset, True)
    p = subprocess.run([sys.executable, "-m", "sonnx", "validate", str(path)], capture_output=True, text=True)
    assert p.returncode == 1 and "GEMM-R4" in p.stdout and "Traceback" not in p.stderr


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("opset", [o for e, o in EXPORTS if e == "torchscript"])
def test_torchscript_matmul_models(opset):
    """Linear(bias=False) through the TorchScript exporter is MatMul: refused with PROF-R1 (one
    per MatMul node, naming it) until MatMul is a profile operator, conformant once it is."""
    model = load("torchscript", opset, False)
    report = sonnx.validate(model)
    if MATMUL_IN_PROFILE:
        assert report.findings == [] and report.conforms
    else:
        assert [f.rule for f in report.findings] == ["PROF-R1"] * 3
        assert all("MatMul" in f.message for f in report.findings)


@pytest.mark.req("PROF-R1", "PROF-R2", "PROF-R3", "GEMM-R4", "RELU-R1", "RELU-R2")
@pytest.mark.parametrize("exporter,opset,bias,fixed", [p.values for p in conformant_models()],
                         ids=[p.id for p in conformant_models()])
def test_the_model_conforms(exporter, opset, bias, fixed):
    report = sonnx.validate(load(exporter, opset, bias, fixed))
    assert report.error is None and report.findings == [] and report.conforms


# ---------------------------------------------------------------- node by node, sonnx
def _attrs(node) -> dict:
    got = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type == "Gemm":
        return {"alpha": got.get("alpha", 1.0), "beta": got.get("beta", 1.0),
                "trans_a": got.get("transA", 0), "trans_b": got.get("transB", 0)}
    assert got == {}, (node.op_type, got)
    return {}


def run_nodes(model, feed: dict, reference: bool) -> dict[str, np.ndarray]:
    """Every value of the graph, each node run in order by the registry's numpy kernel (Gemm in
    exact mode, the default) or by its plain-Python reference kernel."""
    values = dict(feed)
    values.update({t.name: numpy_helper.to_array(t) for t in model.graph.initializer})
    for node in model.graph.node:
        op = operator(node.op_type)
        args = [values[name] for name in node.input if name]
        kw = _attrs(node)
        if reference:
            out = to_numpy(op.reference(*map(from_numpy, args), **kw))
        else:
            out = op.kernel(*args, **kw)
        (name,) = node.output
        values[name] = out
    return values


@pytest.mark.req("RELU-R3", "GEMM-R7")
@pytest.mark.parametrize("exporter,opset,bias,fixed", [p.values for p in conformant_models()],
                         ids=[p.id for p in conformant_models()])
def test_kernels_equal_the_reference_node_by_node(exporter, opset, bias, fixed):
    model = load(exporter, opset, bias, fixed)
    for feed in inputs(model):
        fast, ref = run_nodes(model, feed, False), run_nodes(model, feed, True)
        for node in model.graph.node:
            assert_same_bits(fast[node.output[0]], ref[node.output[0]])
        assert fast[model.graph.output[0].name].shape == (2, 4)


# ---------------------------------------------------------------- other implementations
def _every_value_an_output(model) -> onnx.ModelProto:
    """The model with every node output also a graph output (so that no node is fused away and
    each one's result can be checked against its own inputs)."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    known = {vi.name: vi for vi in inferred.graph.value_info}
    out = onnx.ModelProto()
    out.CopyFrom(inferred)
    listed = {o.name for o in out.graph.output}
    for node in out.graph.node:
        if node.output[0] not in listed:
            out.graph.output.append(known[node.output[0]])
    return out


def _check_nodes(model, values: dict) -> None:
    """Each Gemm/MatMul result within GEMM-R7's bound (acc = float, the type) of its own
    inputs; each Relu result equal to sonnx.relu of its input (== : -0 and +0 alike)."""
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    get = lambda name: values[name] if name in values else consts[name]      # noqa: E731
    for node in model.graph.node:
        args = [get(name) for name in node.input if name]
        y = values[node.output[0]]
        if node.op_type == "Relu":
            assert np.array_equal(y, sonnx.relu(args[0])), node.name
        else:
            c = args[2] if len(args) > 2 else None
            assert_within_bound(y, args[0], args[1], c, **_attrs(node))


def _max_ulp(a: np.ndarray, b: np.ndarray) -> int:
    """The largest distance in units in the last place between two float32 arrays."""
    def ordered(x):
        i = x.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return int(np.max(np.abs(ordered(a) - ordered(b))))


def _others(model):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    opts = ort.SessionOptions()
    opts.log_severity_level = 3

    def runtime(m):
        sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return lambda feed: dict(zip([o.name for o in m.graph.output], sess.run(None, feed)))

    def reference(m):
        ev = ReferenceEvaluator(m)
        return lambda feed: dict(zip([o.name for o in m.graph.output], ev.run(None, feed)))
    return {"onnxruntime": runtime, "onnx.reference": reference}


@pytest.mark.req("RELU-R3", "GEMM-R7")
@pytest.mark.parametrize("other", ["onnxruntime", "onnx.reference"])
@pytest.mark.parametrize("exporter,opset,bias,fixed", [p.values for p in conformant_models()],
                         ids=[p.id for p in conformant_models()])
def test_other_implementations_within_the_bounds(exporter, opset, bias, fixed, other):
    model = load(exporter, opset, bias, fixed)
    make = _others(model)[other]
    every, whole = make(_every_value_an_output(model)), make(model)
    worst = 0
    for feed in inputs(model):
        _check_nodes(model, {**feed, **every(feed)})
        y_name = model.graph.output[0].name
        worst = max(worst, _max_ulp(whole(feed)[y_name], run_nodes(model, feed, False)[y_name]))
    print(f"{model_name(exporter, opset, bias, fixed)}: {other} vs sonnx exact, max {worst} ulp")


@pytest.mark.req("RELU-R3", "GEMM-R7")
def test_the_node_checks_can_fail():
    """_check_nodes catches a Gemm result off by far more than the bound, and a Relu that lets
    a negative value through."""
    model = load("dynamo", 18, False)
    feed = inputs(model)[0]
    values = {**feed, **{k: v for k, v in run_nodes(model, feed, False).items() if k not in feed}}
    _check_nodes(model, values)
    gemm_out = model.graph.node[0].output[0]
    bad = dict(values, **{gemm_out: values[gemm_out] * np.float32(1.001)})
    with pytest.raises(AssertionError):
        _check_nodes(model, bad)
    relu_out = model.graph.node[1].output[0]
    bad = dict(values, **{relu_out: values[gemm_out]})
    with pytest.raises(AssertionError):
        _check_nodes(model, bad)
