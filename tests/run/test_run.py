"""sonnx run's results: exact mode gives the reference kernels' bits on the conformant PyTorch
MLPs, fast mode stays within GEMM-R7's bound, onnx.reference with sonnx's operators gives the
same bits, and the same bits come back in every process."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper

import sonnx
import sonnx.onnx_reference
from sonnx.ops.registry import operator
from sonnx.ops.gemm.bound import outside_bound
from sonnx.run import executor, hexfloat

from ..e2e.test_mlp import run_nodes
from ..ops.conftest import assert_same_bits
from .models import MLP_IDS, inputs, mlp_path, mlps, one_node, save

MODELS = mlps()


def reference_mismatches(model, feeds) -> int:
    """How many (feed, output) pairs of sonnx.run's exact mode differ from the plain-Python
    reference kernels run node by node."""
    bad = 0
    for feed in feeds:
        ours = sonnx.run(model, feed)
        ref = run_nodes(model, feed, True)
        for name, y in ours.items():
            try:
                assert_same_bits(y, ref[name])
            except AssertionError:
                bad += 1
    return bad


@pytest.mark.req("GEMM-R7", "RELU-R3", "MATMUL-R5")
@pytest.mark.parametrize("model", [m for _, m in MODELS], ids=MLP_IDS)
def test_exact_mode_gives_the_reference_bits(model):
    assert reference_mismatches(model, inputs(model)) == 0


@pytest.mark.req("GEMM-R7", "RELU-R3", "MATMUL-R5")
def test_a_fast_kernel_planted_in_exact_mode_is_caught(monkeypatch):
    """A planted fault: the executor plans Gemm and MatMul through BLAS (fast mode) when asked
    for exact; comparing with the reference kernels catches it on the MLPs."""
    real = executor.plan
    monkeypatch.setattr(executor, "plan", lambda loaded, mode, engine="default": real(loaded, "fast", engine))
    # the planted plan runs node by node (these small MLPs are otherwise one fused C chain of
    # the exact entry points, which the plan's kernels do not reach: planted in test_chain.py)
    from sonnx.run import chain
    monkeypatch.setattr(chain, "fuse", lambda loaded, steps, mode: list(steps))
    assert sum(reference_mismatches(m, inputs(m)) for _, m in MODELS) > 0


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("model", [m for _, m in MODELS], ids=MLP_IDS)
def test_fast_mode_is_within_gemm_r7_bound_node_by_node(model):
    loaded = executor.load(model)
    for feed in inputs(model):
        values = executor.run_graph(loaded, feed, "fast", keep_all=True)
        for node in model.graph.node:
            if node.op_type in ("Gemm", "MatMul"):
                attrs = executor.attributes(node)
                kw = {operator(node.op_type).kernel_attributes[k]: v for k, v in attrs.items()}
                args = [values[n] for n in node.input if n]
                c = args[2] if len(args) > 2 else None
                assert outside_bound(values[node.output[0]], args[0], args[1], c, **kw) == []


@pytest.mark.req("GEMM-R7", "RELU-R3", "MATMUL-R5")
@pytest.mark.parametrize("mode", ["exact", "fast"])
@pytest.mark.parametrize("model", [m for _, m in MODELS], ids=MLP_IDS)
def test_reference_evaluator_with_sonnx_ops_gives_sonnx_run_bits(model, mode):
    from onnx.reference import ReferenceEvaluator
    ev = ReferenceEvaluator(model, new_ops=sonnx.onnx_reference.new_ops(mode))
    assert {type(n).__module__ for n in ev.rt_nodes_} == {"sonnx.onnx_reference"}   # none of onnx's own
    # node by node, as the evaluator runs them (fused, a fast-mode chain runs the exact entry
    # points instead of BLAS: test_chain.py)
    session = sonnx.Session(model, mode, fuse=False)
    for feed in inputs(model):
        ours = dict(zip(session.output_names, session.run(None, feed)))
        theirs = dict(zip([o.name for o in model.graph.output], ev.run(None, feed)))
        for name in ours:
            assert_same_bits(theirs[name], ours[name])


def test_new_ops_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="unknown mode 'quick'"):
        sonnx.onnx_reference.new_ops("quick")


# ---------------------------------------------------------------- 16-bit floats, text inputs
@pytest.mark.req("MUL-R3", "ADD-R3")
@pytest.mark.parametrize("op,elem,dt", [("Mul", TensorProto.FLOAT16, np.float16),
                                        ("Add", TensorProto.BFLOAT16, ml_dtypes.bfloat16)])
def test_16_bit_inputs_from_npy_and_hex_text(tmp_path, op, elem, dt):
    """float16 from a .npy; bfloat16 from a .npy numpy wrote from an ml_dtypes array ('|V2') and
    from hex text: every way gives the kernel's bits, and the outputs written read back."""
    model = one_node(op, elem)
    path = save(model, tmp_path / "m.onnx")
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2**16, (2, 3), dtype=np.uint16).view(dt)
    b = rng.standard_normal((2, 3)).astype(dt)
    np.save(tmp_path / "a.npy", a)
    (tmp_path / "b.hex").write_text(hexfloat.format_array(b))
    expected = getattr(sonnx, op.lower())(a, b)
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "sonnx", "run", path, "--input", f"A={tmp_path / 'a.npy'}",
                        "--input", f"B={tmp_path / 'b.hex'}", "-o", str(out), "--hex"], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    got = np.load(out / "Y.npy")
    if dt is ml_dtypes.bfloat16:
        assert got.dtype == np.dtype("V2")       # how numpy stores bfloat16: the raw bits
        got = got.view(dt)
    assert_same_bits(got, expected)
    assert_same_bits(hexfloat.parse_lines((out / "Y.hex").read_text().splitlines(), "float16"
                                          if dt is np.float16 else "bfloat16").reshape(2, 3), expected)
    assert_same_bits(sonnx.run(path, {"A": a, "B": b})["Y"], expected)


@pytest.mark.req("GEMM-R7")
def test_text_npy_and_npz_inputs_give_the_same_bits(tmp_path):
    model_id = MLP_IDS[0]
    model = dict(MODELS)[model_id]
    (x_name,) = [i.name for i in model.graph.input]
    feed = inputs(model)[3]                              # -0, subnormals, large values
    x = feed[x_name]
    np.save(tmp_path / "x.npy", x)
    np.savez(tmp_path / "all.npz", **{x_name: x})
    np.savez(tmp_path / "one.npz", whatever=x)
    (tmp_path / "x.txt").write_text(hexfloat.format_array(x))
    digests = set()
    for spec in (f"{x_name}={tmp_path / 'x.npy'}", str(tmp_path / "all.npz"),
                 f"{x_name}={tmp_path / 'one.npz'}", f"{x_name}={tmp_path / 'x.txt'}"):
        p = subprocess.run([sys.executable, "-m", "sonnx", "run", mlp_path(model_id), "--input", spec],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        digests.add(p.stdout)
    expected = sonnx.run(model, feed)
    (line, mode) = sorted(digests)[0].splitlines()
    assert len(digests) == 1 and mode == "mode exact"
    assert line.endswith(hashlib.sha256(expected[model.graph.output[0].name].tobytes()).hexdigest())


# ---------------------------------------------------------------- determinism, across processes
@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_the_same_bits_in_every_process(tmp_path, mode):
    model_id = MLP_IDS[0]
    model = dict(MODELS)[model_id]
    (x_name,) = [i.name for i in model.graph.input]
    np.save(tmp_path / "x.npy", inputs(model)[0][x_name])
    runs = []
    for k in range(2):
        out = tmp_path / f"out{k}"
        p = subprocess.run([sys.executable, "-m", "sonnx", "run", mlp_path(model_id), "--input",
                            f"{x_name}={tmp_path / 'x.npy'}", "--mode", mode, "-o", str(out), "--hex"],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        summary = json.loads((out / "run.json").read_text())
        files = {f.name: f.read_bytes() for f in out.iterdir() if f.name != "run.json"}
        runs.append((summary["outputs"], files))
        for name, d in summary["outputs"].items():   # the digest is of the output's bytes
            y = np.load(out / d["npy"])
            assert d["sha256"] == hashlib.sha256(y.tobytes()).hexdigest() and d["dtype"] == "float"
            assert_same_bits(hexfloat.parse_lines((out / d["hex"]).read_text().splitlines(), "float")
                             .reshape(y.shape), y)
    assert runs[0] == runs[1]
    in_process = sonnx.run(model, inputs(model)[0], mode=mode)
    for name, d in runs[0][0].items():
        assert d["sha256"] == hashlib.sha256(in_process[name].tobytes()).hexdigest()


def test_import_sonnx_stays_light_and_sonnx_run_is_the_function():
    code = ("import sys, sonnx; assert 'onnx' not in sys.modules and 'sonnx.run' not in sys.modules, "
            "sorted(m for m in sys.modules if 'onnx' in m); import sonnx.run.cli; "
            "assert callable(sonnx.run) and sonnx.run.__module__ == 'sonnx.run'; "
            "from sonnx.run import compare; assert sonnx.run.compare is compare; "
            "assert 'onnxruntime' not in sys.modules; print('ok')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.stdout == "ok\n", p.stderr


def test_a_graph_input_with_an_initializer_takes_its_default(tmp_path):
    """An input with an initializer of the same name may be left out (the initializer is its
    default) or given (the caller's value wins)."""
    model = one_node("Mul", TensorProto.FLOAT)
    b = np.full((2, 3), 2.0, np.float32)
    model.graph.initializer.append(helper.make_tensor("B", TensorProto.FLOAT, [2, 3], b.reshape(-1).tolist()))
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_same_bits(sonnx.run(model, {"A": a})["Y"], a * 2)
    assert_same_bits(sonnx.run(model, {"A": a, "B": a})["Y"], a * a)


def test_output_file_names_are_safe_and_distinct():
    from sonnx.run.io import file_stem
    taken = {"run"}
    stems = [file_stem(n, taken) for n in ["y", "a/b", "a_b", "run", "", ".hidden", "../up", "Y", "\u00e9"]]
    assert stems == ["y", "a_b", "a_b_2", "run_2", "output", "hidden", "_up", "Y_2", "_"]
