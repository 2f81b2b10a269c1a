"""The proved engine (issue 32): ``sonnx.Session(..., engine="proved")`` and ``sonnx run --engine
proved`` run every node on a C kernel extracted from its proof, name the proof per node, refuse
a node no proved kernel covers (never a silent fallback), give the default engine's bits, and
run the code the proofs are about: a fault planted in the WhyML of a proved kernel fails its
proof replay and changes what the engine computes, and what the default kernels compute for the
types the records make proved by default."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import sonnx
from sonnx.cli import main
from sonnx import dtypes
from sonnx.ops.registry import operators, type_set, versions
from sonnx.run import proved
from sonnx.run.executor import RunError
from sonnx.run.session import Session
from tests.trace.proof_plants import planted, replay, use_planted_c

ROOT = Path(__file__).resolve().parents[2]
E2E = ROOT / "tests" / "e2e" / "models"
needs_c = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed (tools/setup installs it)")
needs_why3 = pytest.mark.skipif(shutil.which("why3") is None, reason="why3 not installed")


def binary(op: str, elem: int, shape=(2, 3)) -> onnx.ModelProto:
    vi = [helper.make_tensor_value_info(n, elem, list(shape)) for n in ("a", "b")]
    g = helper.make_graph([helper.make_node(op, ["a", "b"], ["c"], name="n0")], "g", vi,
                          [helper.make_tensor_value_info("c", elem, list(shape))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])


def feeds_for(session: Session, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {k: rng.standard_normal(v.shape).astype(np.float32)
            for k, v in session.inputs.items() if not v.has_default}


def same_bits(xs, ys) -> bool:
    return all(x.dtype == y.dtype and np.array_equal(x.view(np.uint8), y.view(np.uint8)) for x, y in zip(xs, ys))


@needs_c
@pytest.mark.req("MUL-R3", "GEMM-R6", "RELU-R3", "MATMUL-R5")
@pytest.mark.parametrize("name", ["mlp_dynamo_op18_bias_c_full.onnx", "mlp_torchscript_op17_nobias.onnx"])
def test_every_node_runs_on_a_proved_kernel_with_the_default_engines_bits(name):
    path = str(E2E / name)
    p, d = Session(path, engine="proved"), Session(path)
    for seed in range(3):
        feeds = feeds_for(p, seed)
        assert same_bits(p.run(None, feeds), d.run(None, feeds))
    nodes = onnx.load(path).graph.node
    described = p.proofs()
    assert [r["node"] for r in described] == [n.name for n in nodes]
    for r, n in zip(described, nodes):
        assert r["entry"].endswith("_f32") and (ROOT / r["proofs"][0]).is_file()
        assert r["requirements"] and all(req.split("-")[0] in {"GEMM", "RELU", "MUL"} for req in r["requirements"])
        if n.op_type == "MatMul":    # Gemm's kernel, cited with the proof that MatMul is its case
            assert r["entry"] == "sonnx_gemm_f32" and r["proofs"][1] == "proofs/matmul.mlw"
    assert Session(path).proofs() == []


@needs_c
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3")
@pytest.mark.parametrize("op", ["Mul", "Add", "Sub"])
@pytest.mark.parametrize("elem, np_type", [(TensorProto.FLOAT, np.float32), (TensorProto.DOUBLE, np.float64),
                                           (TensorProto.UINT32, np.uint32), (TensorProto.UINT64, np.uint64)])
def test_elementwise_types_with_their_own_entry_point_run_proved(op, elem, np_type):
    s = Session(binary(op, elem), engine="proved")
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 2**63, size=(2, 2, 3), dtype=np.uint64)
    a, b = (raw[i].astype(np_type) if np.dtype(np_type).kind == "u" else rng.standard_normal((2, 3)).astype(np_type)
            for i in range(2))
    assert same_bits(s.run(None, {"a": a, "b": b}), Session(binary(op, elem)).run(None, {"a": a, "b": b}))
    assert s.proofs()[0]["entry"] == f"sonnx_{op.lower()}_{'f' if np.dtype(np_type).kind == 'f' else 'u'}{np.dtype(np_type).itemsize * 8}"


def half_edges(np_type) -> np.ndarray:
    """Every bit pattern of the 16-bit type (NaNs, infinities, signed zeros, subnormals, the
    largest values, whose products and sums overflow or tie)."""
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np_type)


def same_bits_or_nan(x: np.ndarray, y: np.ndarray) -> bool:
    """Equal bits, a NaN matching any NaN (spec/mul.md: IEEE 754 fixes no NaN payload)."""
    xn, yn = np.isnan(x.astype(np.float32)), np.isnan(y.astype(np.float32))
    return x.dtype == y.dtype and np.array_equal(xn, yn) and \
        np.array_equal(x.view(np.uint16)[~xn], y.view(np.uint16)[~yn])


@needs_c
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3", "RELU-R3")
@pytest.mark.parametrize("op", ["Mul", "Add", "Sub", "Relu"])
@pytest.mark.parametrize("elem, np_type", [(TensorProto.FLOAT16, np.float16), (TensorProto.BFLOAT16, ml_dtypes.bfloat16)])
def test_half_types_run_proved_through_the_float32_route_with_the_default_engines_bits(op, elem, np_type):
    """float16/bfloat16 run on the float32 entry, rounded once to T: the record's route (CRoute)
    names its proof (proofs/<op>_half.mlw) and the conversions' evidence, checked, not proved."""
    a = half_edges(np_type)
    rng = np.random.default_rng(3)
    b = a[rng.permutation(a.size)]
    if op == "Relu":
        vi = helper.make_tensor_value_info("a", elem, [a.size])
        g = helper.make_graph([helper.make_node("Relu", ["a"], ["c"], name="n0")], "g", [vi],
                              [helper.make_tensor_value_info("c", elem, [a.size])])
        m, feeds = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), {"a": a}
    else:
        m, feeds = binary(op, elem, (a.size,)), {"a": a, "b": b}
    s = Session(m, engine="proved")
    got, want = s.run(None, feeds)[0], Session(m).run(None, feeds)[0]
    assert same_bits_or_nan(got, want)
    [r] = s.proofs()
    assert r["entry"] == f"sonnx_{op.lower()}_f32"
    assert r["proofs"] == [f"proofs/{op.lower()}_c.mlw", f"proofs/{op.lower()}_half.mlw"]
    assert r["route"] == {"through": "f32", "proofs": [f"proofs/{op.lower()}_half.mlw"],
                          "checked_not_proved": ["tests/conversions/test_half_conversions.py"]}
    assert all((ROOT / p).is_file() for p in r["proofs"] + r["route"]["checked_not_proved"])


def half_product(op: str, elem: int, m=3, k=4, n=5) -> onnx.ModelProto:
    shapes = {"a": [m, k], "b": [k, n], "c": [m, n]}
    ins = ["a", "b", "c"] if op == "Gemm" else ["a", "b"]
    vi = [helper.make_tensor_value_info(x, elem, shapes[x]) for x in ins]
    g = helper.make_graph([helper.make_node(op, ins, ["y"], name="g0")], "g", vi,
                          [helper.make_tensor_value_info("y", elem, [m, n])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])


@needs_c
@pytest.mark.req("GEMM-R7", "MATMUL-R5")
@pytest.mark.parametrize("op", ["Gemm", "MatMul"])
@pytest.mark.parametrize("elem, np_type", [(TensorProto.FLOAT16, np.float16), (TensorProto.BFLOAT16, ml_dtypes.bfloat16)])
def test_half_gemm_and_matmul_run_proved_through_the_float32_route(op, elem, np_type):
    """Gemm's record routes float16/bfloat16 through the float32 entry (widened operands, one
    final rounding); proofs/gemm.mlw's GemmHalfRoute proves that composition is GemmHalf's
    element. MatMul, which runs Gemm's wrapper, takes Gemm's route and cites its own refinement."""
    rng = np.random.default_rng(5)
    edges = half_edges(np_type)
    m = half_product(op, elem, 7, 9, 11)
    feeds = {"a": edges[rng.integers(0, edges.size, (7, 9))], "b": edges[rng.integers(0, edges.size, (9, 11))]}
    if op == "Gemm":
        feeds["c"] = edges[rng.integers(0, edges.size, (7, 11))]
    s = Session(m, engine="proved")
    got, want = s.run(None, feeds)[0], Session(m).run(None, feeds)[0]
    assert same_bits_or_nan(got, want)
    [r] = s.proofs()
    assert r["entry"] == "sonnx_gemm_f32"
    assert r["proofs"] == ["proofs/gemm_c.mlw"] + (["proofs/matmul.mlw"] if op == "MatMul" else []) + ["proofs/gemm.mlw"]
    assert r["route"]["theory"] == "GemmHalfRoute" and r["route"]["checked_not_proved"] == \
        ["tests/conversions/test_half_conversions.py"]


@needs_c
@pytest.mark.req("GEMM-R6")
@pytest.mark.parametrize("elem", [TensorProto.FLOAT16, TensorProto.BFLOAT16])
def test_a_type_without_a_route_is_refused(elem, monkeypatch):
    """A type the records give no route to is refused, never run: here Gemm's half route is
    taken out of the engine's view of the record."""
    monkeypatch.setattr(proved, "_routes", lambda op: ())
    with pytest.raises(RunError) as e:
        Session(half_product("Gemm", elem), engine="proved")
    assert "'g0' (Gemm)" in str(e.value) and "is not covered" in str(e.value)


@needs_c
@pytest.mark.req("MUL-R3")
@pytest.mark.parametrize("elem, np_type, entry", [(TensorProto.INT32, np.int32, "sonnx_mul_u32"),
                                                  (TensorProto.INT64, np.int64, "sonnx_mul_u64"),
                                                  (TensorProto.INT8, np.int8, "sonnx_mul_u32"),
                                                  (TensorProto.UINT16, np.uint16, "sonnx_mul_u32")])
def test_signed_and_narrow_integers_run_on_a_proved_route(elem, np_type, entry):
    """int32/int64 on the unsigned kernel's bits, 8/16-bit through the uint32 kernel: the route is
    proved (proofs/int_route.mlw), and the node's proofs cite it beside the kernel's."""
    s = Session(binary("Mul", elem), engine="proved")
    info = np.iinfo(np_type)
    a = np.array([[info.max, info.min, -1 if info.min < 0 else 1], [7, info.max // 3, 2]], dtype=np_type)
    b = np.array([[info.max, info.min, info.max], [-5 if info.min < 0 else 5, 3, info.min]], dtype=np_type)
    (got,) = s.run(None, {"a": a, "b": b})
    assert same_bits(got, np.multiply(a, b))
    proofs = s.proofs()[0]
    assert proofs["entry"] == entry and proofs["proofs"] == ["proofs/mul_c.mlw", "proofs/int_route.mlw"]
    assert proofs["route"]["theory"] == "MulRoute" and proofs["route"]["checked_not_proved"] == []


@needs_c
@pytest.mark.req("@operators")
def test_an_operator_without_a_c_level_is_refused_naming_every_such_node():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 12])
    w = numpy_helper.from_array(np.ones((2, 12), np.float32), "w")
    nodes = [helper.make_node("Flatten", ["x"], ["f"], name="flat", axis=1),
             helper.make_node("Mul", ["f", "w"], ["y"], name="scale")]
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y], initializer=[w]),
                          opset_imports=[helper.make_opsetid("", 14)])
    with pytest.raises(RunError) as e:
        Session(m, engine="proved")
    assert "node 0 'flat' (Flatten): Flatten has no kernel extracted from a proof" in str(e.value)
    assert "scale" not in str(e.value)                  # the Mul is covered
    assert np.array_equal(Session(m).run(None, {"x": np.ones((2, 3, 4), np.float32)})[0], np.ones((2, 12), np.float32))


@pytest.mark.req("@operators")
def test_coverage_is_read_from_the_records():
    """Every operator's covered types come from its C entry points (or those of the operator it
    runs as), never from a list here; an operator without C kernels covers nothing."""
    for op in operators().values():
        types = proved.covered_types(op)
        if op.c_binding is None:
            assert types == []
        for t in types:
            assert proved.coverage(op, np.dtype(t)).entry.name.rsplit("_", 1)[1] in proved.SUFFIX_TYPES


@pytest.mark.req("@operators")
def test_every_type_of_an_operator_with_a_c_level_is_covered():
    """Issue 32: an operator that has a C level runs on proved code for every element type any of
    its versions takes (its own entry point or a proved route); a type left out would make the
    proved engine refuse a conformant node of that operator."""
    with_c = [op for op in operators().values() if op.c_binding is not None]
    assert {"Mul", "Add", "Sub", "Relu", "Gemm", "MatMul"} <= {op.name for op in with_c}
    for op in with_c:
        covered = set(proved.covered_types(op))
        taken = {dtypes.numpy_dtype(t).name for v in versions(op.name) for t in type_set(op.name, v)}
        assert taken - covered == set(), (op.name, sorted(taken - covered))


@needs_c
@pytest.mark.req("MUL-R3")
def test_command_line_engine_proved(tmp_path, capsys, monkeypatch):
    model = tmp_path / "mul.onnx"
    onnx.save(binary("Mul", TensorProto.FLOAT), str(model))
    for n in "ab":
        np.save(tmp_path / f"{n}.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
    args = ["run", str(model), "--input", f"a={tmp_path / 'a.npy'}", "--input", f"b={tmp_path / 'b.npy'}"]
    assert main(args + ["--engine", "proved", "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "engine proved" in out
    rec = json.loads((tmp_path / "out" / "run.json").read_text())
    assert rec["engine"] == "proved"
    assert rec["proved_kernels"] == [{"node": "n0", "op_type": "Mul", "entry": "sonnx_mul_f32",
                                      "proofs": ["proofs/mul_c.mlw"], "theory": "MulCFloat32",
                                      "requirements": ["MUL-R1", "MUL-R3"]}]
    assert np.array_equal(np.load(tmp_path / "out" / "c.npy"), np.arange(6, dtype=np.float32).reshape(2, 3) ** 2)
    assert main(args + ["--engine", "proved", "--mode", "fast"]) == 2
    assert "--engine proved runs exact mode only" in capsys.readouterr().err
    # a type with no route in the record (Gemm on float16 with its route taken out): refused,
    # with what is covered
    monkeypatch.setattr(proved, "_routes", lambda op: ())
    onnx.save(binary("Gemm", TensorProto.FLOAT16, (2, 2)), str(tmp_path / "h.onnx"))
    for n in "ab":
        np.save(tmp_path / f"{n}16.npy", np.ones((2, 2), np.float16))
    code = main(["run", str(tmp_path / "h.onnx"), "--input", f"a={tmp_path / 'a16.npy'}",
                 "--input", f"b={tmp_path / 'b16.npy'}", "--engine", "proved"])
    printed = capsys.readouterr()
    assert code == 2 and "Gemm on float16 is not covered" in printed.err and "Traceback" not in printed.err


PLANT_OLD = "set_ofs c i (mul RNE (get_ofs a i) (get_ofs b i))"
PLANT_NEW = "set_ofs c i (add RNE (get_ofs a i) (get_ofs b i))"


@needs_c
@needs_why3
@pytest.mark.req("MUL-R3")
def test_a_fault_planted_in_the_proved_kernel_fails_its_proof_and_changes_what_the_engine_runs(tmp_path, monkeypatch):
    """The code proved is the code run: in a copy of proofs/, Mul's float32 C kernel computes
    a + b instead of a * b. Its proof replay fails (the step budgets of tools/prove), and the
    C extracted from it, built as sonnx builds its kernels, makes the proved engine, the default
    engine and ``sonnx.mul`` compute the sum: they run what the proof is about, not a separate
    implementation."""
    root = planted(tmp_path, "mul_c", PLANT_OLD, PLANT_NEW, within="MulCFloat32")
    # 1. the proof gate: the committed session no longer replays on the planted theory
    rep = replay(root, "mul_c", monkeypatch, only={"sonnx_mul_f32"})
    assert rep["status"] in ("failed", "obsolete"), rep
    assert any(leaf.startswith("sonnx_mul_f32") for leaf in rep["failures"]), rep["failures"]
    model = binary("Mul", TensorProto.FLOAT)
    a, b = np.float32([[1, 2, 3], [4, 5, 6]]), np.float32([[7, 8, 9], [10, 11, 12]])
    honest = Session(model, engine="proved").run(None, {"a": a, "b": b})[0]
    # 2. what runs: the C extracted from the planted proof, built as sonnx builds its kernels
    use_planted_c(tmp_path, root, "mul_c", monkeypatch)
    planted_run = Session(model, engine="proved").run(None, {"a": a, "b": b})[0]
    assert np.array_equal(honest, a * b) and np.array_equal(planted_run, a + b)
    # the default engine and sonnx.mul run that C too (Mul's record makes its proved kernels the
    # default for float32): both now compute the sum; float16, which goes through numpy, does not
    assert np.array_equal(Session(model).run(None, {"a": a, "b": b})[0], a + b)
    assert np.array_equal(sonnx.mul(a, b), a + b)
    h = a.astype(np.float16)
    assert np.array_equal(sonnx.mul(h, h), h * h)
