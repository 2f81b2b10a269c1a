"""sonnx.Session: validated and planned once, then run many times. Its outputs are the bits of
the kernels called node by node (the path sonnx.run took before plans); it refuses bad feeds with
the messages of `sonnx run` (one function checks both); a model that does not conform is refused
when the session is made; a planted bypass of the feed checks is caught."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import sonnx
from sonnx.cli import main
from sonnx.run import InputError, RunError, Session, executor, session as session_module

from ..ops.conftest import assert_same_bits
from .models import MLP_IDS, inputs, mlp_path, mlps, one_node, save

MODELS = mlps()


def node_by_node(model, feed: dict, mode: str) -> dict:
    """Each node through its operator's public kernel (executor.run_node), attributes read from
    the node on every call: the executor's path before plans."""
    loaded = executor.load(model)
    values = {**loaded.constants, **feed}
    for node in model.graph.node:
        values[node.output[0]] = executor.run_node(node.op_type, [values[n] for n in node.input if n],
                                                   executor.attributes(node), mode=mode, opset=loaded.opset)
    return {o.name: values[o.name] for o in model.graph.output}


def _one_node_cases():
    rng = np.random.default_rng(3)
    for op in ("Mul", "Add", "Sub", "MatMul", "Gemm"):
        for elem, dt in ((TensorProto.FLOAT, np.float32), (TensorProto.DOUBLE, np.float64),
                         (TensorProto.FLOAT16, np.float16), (TensorProto.INT32, np.int32)):
            shape = (3, 3) if op in ("MatMul", "Gemm") else (2, 3)
            model = one_node(op, elem, shape=shape, opset=14)
            feed = {n: (rng.standard_normal(shape) * 7).astype(dt) for n in ("A", "B")}
            yield f"{op}-{np.dtype(dt).name}", model, feed
    model = one_node("Relu", TensorProto.FLOAT, opset=14, n_inputs=1)
    yield "Relu-float32", model, {"A": np.array([[-0.0, 1.5, -2.0], [np.nan, 0.0, 3.0]], np.float32)}


ONE_NODE = list(_one_node_cases())


@pytest.mark.req("GEMM-R7", "RELU-R3", "MATMUL-R5")
@pytest.mark.parametrize("mode", ["exact", "fast"])
@pytest.mark.parametrize("model", [m for _, m in MODELS], ids=MLP_IDS)
def test_session_gives_the_bits_of_the_kernels_node_by_node(model, mode):
    # unfused: every node's own kernel; fused (the default): these small MLPs are one C chain
    # (run/chain.py), whose Gemm/MatMul are the exact-mode entry points in both modes
    unfused, fused = Session(model, mode, fuse=False), Session(model, mode)
    assert [n for c in fused.chains() for n in c["nodes"]] == [n.name for n in model.graph.node]
    for feed in inputs(model):
        old, exact = node_by_node(model, feed, mode), node_by_node(model, feed, "exact")
        for _ in range(2):           # the same bits on a second run of the same session
            for name, y, z in zip(unfused.output_names, unfused.run(None, feed), fused.run(None, feed)):
                assert_same_bits(y, old[name])
                assert_same_bits(z, exact[name])


@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3", "GEMM-R7", "MATMUL-R5", "RELU-R3")
@pytest.mark.parametrize("mode", ["exact", "fast"])
@pytest.mark.parametrize("case", ONE_NODE, ids=[c[0] for c in ONE_NODE])
def test_session_gives_the_bits_of_each_kernel(case, mode):
    _, model, feed = case
    (y,) = Session(model, mode).run(["Y"], feed)
    assert_same_bits(y, node_by_node(model, feed, mode)["Y"])
    assert_same_bits(sonnx.run(model, feed, mode)["Y"], y)


def test_session_validates_once(monkeypatch):
    """After construction no run reads the validator again (it is made to fail if called)."""
    model = MODELS[0][1]
    session = Session(model)
    import importlib
    api = importlib.import_module("sonnx.validate.api")
    monkeypatch.setattr(api, "validate", lambda *a, **k: pytest.fail("validated again"))
    feed = inputs(model)[0]
    assert session.run(None, feed)[0].shape == tuple(d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim)


MODEL = mlp_path(MLP_IDS[0])       # input x: float (2, 8)
GOOD = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
BAD_FEEDS = {
    "int64 for float": {"x": GOOD.astype(np.int64)},
    "double for float": {"x": GOOD.astype(np.float64)},
    "wrong shape": {"x": GOOD.reshape(4, 4)},
    "batch 1 for batch 2": {"x": GOOD[:1]},
    "unknown name": {"y": GOOD},
    "missing input": {},
}


def _cli_line(feed: dict, tmp_path, capsys) -> str:
    args = []
    for name, a in feed.items():
        np.save(tmp_path / f"{name}.npy", a)
        args += ["--input", f"{name}={tmp_path / name}.npy"]
    assert main(["run", MODEL, *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    return err.removeprefix("sonnx run: ").rstrip("\n")


@pytest.mark.parametrize("case", sorted(BAD_FEEDS))
def test_session_refuses_bad_feeds_with_the_messages_of_sonnx_run(case, tmp_path, capsys):
    """The same text after the place named: the file for `sonnx run`, "input" for the API."""
    feed = BAD_FEEDS[case]
    with pytest.raises(InputError) as caught:
        Session(MODEL).run(None, feed)
    ours, theirs = str(caught.value), _cli_line(feed, tmp_path, capsys)
    if ".npy: " in theirs:
        theirs = theirs.split(".npy: ", 1)[1]
        assert ours.startswith("input: ")
        ours = ours.removeprefix("input: ")
    assert ours == theirs
    with pytest.raises(InputError) as by_run:
        sonnx.run(MODEL, feed)
    assert str(by_run.value) == str(caught.value)


def test_a_planted_bypass_of_the_feed_checks_is_caught(monkeypatch):
    """Planted fault: Session.run skips the feed checks; an int64 feed then runs (no refusal),
    which the refusal test above would report."""
    monkeypatch.setattr(session_module, "check_feeds", lambda feeds, specs: feeds)
    try:
        Session(MODEL).run(None, BAD_FEEDS["int64 for float"])
    except InputError:
        pytest.fail("the planted bypass still refused")
    except Exception:
        pass      # a kernel may fail on the wrong type: still not the refusal sonnx run gives


def test_a_model_that_does_not_conform_is_refused_at_construction(tmp_path):
    model = one_node("Mul", TensorProto.FLOAT, opset=14)
    model.graph.input[1].type.tensor_type.shape.dim[0].dim_value = 1     # a broadcast: MUL-R1
    with pytest.raises(RunError) as caught:
        Session(save(model, tmp_path / "bcast.onnx"))
    assert caught.value.findings and "does not conform" in str(caught.value)


def test_bad_mode_and_unknown_output_are_refused():
    with pytest.raises(ValueError, match="unknown mode 'quick'"):
        Session(MODEL, mode="quick")
    with pytest.raises(InputError, match="has no output 'nope'"):
        Session(MODEL).run(["nope"], {"x": GOOD})


def test_session_is_exported_lazily():
    assert sonnx.Session is Session


def test_every_profile_operator_has_a_result_shape_rule():
    """The planner knows each registry operator's result shape (a new operator without a rule
    would be refused at planning, never run with a guessed shape)."""
    from sonnx.ops.registry import operators
    assert all(op.output_shape is not None for op in operators().values())
    with pytest.raises(NotImplementedError, match="no result-shape rule for LSTM"):
        executor._result_signature("LSTM", [np.zeros((1, 1))], {})


def test_each_intermediate_is_dropped_after_its_last_reader_and_no_output_is():
    """A run holds only the live values: every value a node computes is dropped once, after the
    last node that reads it; graph outputs never (they are returned)."""
    for _, model in MODELS:
        steps = Session(model)._steps
        outputs = {o.name for o in model.graph.output}
        dropped = [n for s in steps for n in s.last_uses]
        assert sorted(dropped) == sorted({s.output for s in steps} - outputs)
        for i, step in enumerate(steps):
            for name in step.last_uses:
                assert name in step.inputs and all(name not in later.inputs for later in steps[i + 1:])
