"""`sonnx conform`: every rewrite keeps every output bit (checked through onnxruntime, and shown
able to fail by planted faults), the result passes `sonnx validate`, what cannot be rewritten is
reported with its reason, bad input exits 2 with one line."""
from __future__ import annotations

import importlib
import json
import os
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import sonnx
from sonnx.cli import main
from sonnx.conform import ConformError, bitcheck, rewrite
from sonnx.validate import validate

ROOT = Path(__file__).resolve().parents[2]
MODELS = Path(__file__).resolve().parent / "models"
E2E = ROOT / "tests" / "e2e" / "models"
F = TensorProto.FLOAT


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def make(nodes, inputs, outputs, inits=(), opset=13, value_info=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits),
                          value_info=list(value_info))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def rng_f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def rules(report):
    return [f["rule"] for f in report["findings"]]


# ------------------------------------------------------------------ ONNX's Gemm node tests
def _gemm_cases() -> dict:
    import onnx.backend.test.case.node as node_cases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        importlib.import_module("onnx.backend.test.case.node.gemm")
    return {c.name: c for c in node_cases._NodeTestCases if c.name.startswith("test_gemm")}


GEMM_CASES = _gemm_cases()
GEMM_BROADCAST_C = ["test_gemm_default_zero_bias", "test_gemm_default_scalar_bias",
                    "test_gemm_default_single_elem_vector_bias", "test_gemm_default_vector_bias",
                    "test_gemm_transposeA", "test_gemm_transposeB", "test_gemm_alpha",
                    "test_gemm_beta", "test_gemm_all_attributes"]


def with_c_stored(case) -> onnx.ModelProto:
    """The node test's model with its C (a graph input there) stored as the initializer holding
    the test's own C value, as an exporter stores a bias."""
    m = onnx.ModelProto()
    m.CopyFrom(case.model)
    c_value = case.data_sets[0][0][2]
    name = m.graph.input[2].name
    del m.graph.input[2]
    m.graph.initializer.append(numpy_helper.from_array(c_value, name))
    return m


@pytest.mark.req("GEMM-R4")
@pytest.mark.parametrize("name", GEMM_BROADCAST_C)
def test_onnx_gemm_node_tests_conform_bit_identically(name):
    case = GEMM_CASES[name]
    model = with_c_stored(case)
    assert "GEMM-R4" in [f.rule for f in validate(model).findings]     # refused before
    out, report = sonnx.conform(model)
    assert report["exit_code"] == 0 and report["conforms"], report["findings"]
    assert validate(out).conforms
    assert [r["requirement"] for r in report["rewrites"]] == ["GEMM-R4"]
    assert report["rewrites"][0]["node"]["op_type"] == "Gemm"
    c = report["check"]
    assert c["status"] == "passed" and c["runs"] == len(bitcheck.SEEDS) >= 4
    assert all(o["identical"] and o["differing"] == 0 and o["elements"] > 0 for o in c["outputs"])
    # and the rewritten model still gives the node test's expected output
    import onnxruntime as ort
    (a, b, _), (expected,) = case.data_sets[0]
    s = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"])
    got = s.run(None, {out.graph.input[0].name: a, out.graph.input[1].name: b})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_all_eleven_gemm_cases_are_known():
    assert set(GEMM_BROADCAST_C) | {"test_gemm_default_no_bias", "test_gemm_default_matrix_bias"} \
        == set(GEMM_CASES)


@pytest.mark.req("GEMM-R4")
def test_a_c_fed_at_run_time_is_a_computed_broadcast():
    """In the node tests as shipped, C is a graph input: no constant to store expanded."""
    out, report = sonnx.conform(GEMM_CASES["test_gemm_default_vector_bias"].model)
    assert report["exit_code"] == 1 and rules(report) == ["GEMM-R4"]
    why = report["findings"][0]["why_not_rewritten"]
    assert "a broadcast of a computed tensor" in why and "'c' is a graph input" in why
    assert report["rewrites"] == []


# ------------------------------------------------------------------ PyTorch MLPs
DYNAMIC = sorted(MODELS.glob("mlp_*_bias_dynamic.onnx"))


def test_the_dynamic_exports_are_there():
    assert {p.name for p in DYNAMIC} == {
        "mlp_torchscript_op13_bias_dynamic.onnx", "mlp_torchscript_op17_bias_dynamic.onnx",
        "mlp_dynamo_op18_bias_dynamic.onnx", "mlp_dynamo_op20_bias_dynamic.onnx"}


@pytest.mark.req("PROF-R2", "GEMM-R4")
@pytest.mark.parametrize("path", DYNAMIC, ids=lambda p: p.stem)
def test_dynamic_batch_mlp_pinned_with_dim_conforms(path, tmp_path, capsys):
    out = tmp_path / "mlp.onnx"
    code, stdout, err = run(["conform", str(path), "-o", str(out), "--dim", "batch=3"], capsys)
    assert code == 0, stdout
    report = json.loads((tmp_path / "mlp.onnx.conform.json").read_text())
    assert report["schema"] == "sonnx-conform-report/1" and report["dims"] == {"batch": 3}
    kinds = [r["kind"] for r in report["rewrites"]]
    assert kinds[0] == "pin-dim" and kinds.count("materialise-broadcast") == 3
    assert report["check"]["status"] == "passed" and report["check"]["inputs"] == [
        {"name": "x", "dtype": "float32", "shape": [3, 8]}]
    assert validate(str(out)).conforms
    assert "bit-identity check passed" in stdout and ": conforms; " in stdout.splitlines()[-2]
    assert "bit-identity check: seed" in err    # progress, on stderr


@pytest.mark.req("PROF-R2", "GEMM-R4")
@pytest.mark.parametrize("path", DYNAMIC[:1] + DYNAMIC[-1:], ids=lambda p: p.stem)
def test_without_dim_the_batch_is_a_finding_that_names_the_fix(path):
    out, report = sonnx.conform(path)
    assert report["exit_code"] == 1 and "PROF-R2" in rules(report)
    whys = [f["why_not_rewritten"] for f in report["findings"] if f["rule"] == "PROF-R2"]
    assert any("--dim batch=SIZE" in w for w in whys), whys
    # GEMM-R4 is known without the batch (C of shape (N) is not rank 2): reported at once
    assert rules(report).count("GEMM-R4") == 3
    assert report["check"]["status"] == "not checked" and "dynamic" in report["check"]["reason"]


@pytest.mark.req("GEMM-R4")
@pytest.mark.parametrize("path", sorted(E2E.glob("mlp_*_bias.onnx")), ids=lambda p: p.stem)
def test_batch_2_exports_conform(path):
    out, report = sonnx.conform(path)
    assert report["exit_code"] == 0, report["findings"]
    assert validate(out).conforms


# ------------------------------------------------------------------ issue 15's model
@pytest.mark.req("GEMM-R4", "MUL-R4", "PROF-R1")
@pytest.mark.parametrize("name", ["scaled_torchscript_op17", "scaled_dynamo_op18"])
def test_linear_half_linear_conforms(name):
    before = validate(str(MODELS / f"{name}.onnx"))
    assert sorted({f.rule for f in before.findings}) == (
        ["GEMM-R4", "MUL-R4", "PROF-R1"] if "torchscript" in name else ["GEMM-R4", "MUL-R4"])
    out, report = sonnx.conform(MODELS / f"{name}.onnx")
    assert report["exit_code"] == 0, report["findings"]
    req = [r["requirement"] for r in report["rewrites"]]
    assert req.count("GEMM-R4") == 2 and req.count("MUL-R4") == 1
    if "torchscript" in name:      # the scalar 0.5 is a Constant node
        assert req.count("PROF-R1") == 1
        assert [n.op_type for n in out.graph.node] == ["Gemm", "Mul", "Gemm"]
    else:                          # the dynamo exporter declares the biases in value_info
        assert any(r["kind"] == "remove-value-info" for r in report["rewrites"])
    mul = next(n for n in out.graph.node if n.op_type == "Mul")
    scale = next(t for t in out.graph.initializer if t.name in mul.input)
    assert list(scale.dims) == [2, 16] and scale.data_type == F
    assert np.all(numpy_helper.to_array(scale) == np.float32(0.5))
    assert validate(out).conforms


@pytest.mark.req("GEMM-R4", "MUL-R4")
@pytest.mark.parametrize("name", ["addmm_torchscript_op17", "addmm_dynamo_op18"])
def test_the_exporter_side_fix_of_the_hints_conforms_as_exported(name):
    """The GEMM-R4/MUL-R4 hints' PyTorch advice (torch.addmm with an (M, N) bias buffer, a
    product with a full-shape buffer) really gives a conformant export, from both exporters."""
    r = validate(str(MODELS / f"{name}.onnx"))
    assert r.conforms, r.findings
    msg = next(f.message for f in validate(str(MODELS / "scaled_dynamo_op18.onnx")).findings
               if f.rule == "GEMM-R4")
    assert "torch.addmm(bias_mn, x, W.t())" in msg and "registered buffer" in msg


# ------------------------------------------------------------------ what cannot be rewritten
def conv_model():
    """An operator outside the profile (ConvTranspose; Conv itself is in it since issue 30)."""
    w = init("w", rng_f32(1, 1, 2, 2))
    return make([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="conv")],
                [vi("x", [1, 1, 3, 3])], [vi("y", [1, 1, 4, 4])], [w])


def computed_broadcast_model():
    return make([helper.make_node("Relu", ["b"], ["r"], name="relu"),
                 helper.make_node("Mul", ["a", "r"], ["y"], name="mul")],
                [vi("a", [2, 3]), vi("b", [3])], [vi("y", [2, 3])])


def sparse_constant_model():
    values = init("v", np.array([1.5], np.float32))
    idx = init("i", np.array([1], np.int64))
    sparse = helper.make_sparse_tensor(values, idx, [3])
    return make([helper.make_node("Constant", [], ["c"], name="sp", sparse_value=sparse),
                 helper.make_node("Mul", ["a", "c"], ["y"], name="mul")],
                [vi("a", [3])], [vi("y", [3])])


@pytest.mark.req("PROF-R1")
def test_conv_is_a_finding_with_its_reason(tmp_path, capsys):
    src = tmp_path / "conv.onnx"
    onnx.save(conv_model(), src)
    code, out, _ = run(["conform", str(src), "-o", str(tmp_path / "o.onnx")], capsys)
    assert code == 1 and (tmp_path / "o.onnx").is_file()
    report = json.loads((tmp_path / "o.onnx.conform.json").read_text())
    (f,) = report["findings"]
    assert f["rule"] == "PROF-R1" and f["op_type"] == "ConvTranspose" and f["node_index"] == 0
    assert "ConvTranspose is not in the profile and no rewrite can remove it" in f["why_not_rewritten"]
    assert "cannot remove it" in f["message"]          # the validator's PROF-R1 says so too
    assert "left [PROF-R1] 1 at conv (ConvTranspose-11): ConvTranspose is not in the profile" in out
    assert report["check"]["status"] == "passed"       # nothing rewritten, still compared


@pytest.mark.req("MUL-R4")
def test_broadcast_of_a_computed_tensor_is_a_finding_with_its_reason():
    out, report = sonnx.conform(computed_broadcast_model())
    assert report["exit_code"] == 1 and rules(report) == ["MUL-R4"]
    why = report["findings"][0]["why_not_rewritten"]
    assert "a broadcast of a computed tensor" in why and "Relu node relu" in why
    assert "Expand" in why and report["rewrites"] == []


@pytest.mark.req("PROF-R1", "PROF-R2")
def test_sparse_constant_is_refused_with_a_reason():
    out, report = sonnx.conform(sparse_constant_model())
    assert report["exit_code"] == 1
    f = next(f for f in report["findings"] if f["rule"] == "PROF-R1")
    assert f["op_type"] == "Constant" and "sparse" in f["why_not_rewritten"]
    assert [n.op_type for n in out.graph.node] == ["Constant", "Mul"]    # left as it was


@pytest.mark.req("PROF-R1")
def test_a_model_onnxruntime_cannot_run_is_not_checked_never_passed():
    m = make([helper.make_node("Frobnicate", ["x"], ["y"], domain="com.example")],
             [vi("x", [2])], [vi("y", [2])])
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    out, report = sonnx.conform(m)
    assert report["check"]["status"] == "not checked"
    assert "cannot load the original model" in report["check"]["reason"]
    assert report["exit_code"] == 1


@pytest.mark.req("GEMM-R4")
def test_without_onnxruntime_the_check_says_not_checked(monkeypatch):
    import builtins
    real = builtins.__import__

    def no_ort(name, *a, **k):
        if name == "onnxruntime":
            raise ImportError(name)
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_ort)
    out, report = sonnx.conform(with_c_stored(GEMM_CASES["test_gemm_beta"]))
    assert report["conforms"] and report["check"]["status"] == "not checked"
    assert "not installed" in report["check"]["reason"] and report["exit_code"] == 1


# ------------------------------------------------------------------ rewrites in detail
@pytest.mark.req("GEMM-R4", "MUL-R4")
def test_a_shared_initializer_gets_one_copy_per_shape_and_stays_where_still_read():
    bias = init("bias", rng_f32(4))
    nodes = [helper.make_node("Gemm", ["x", "w", "bias"], ["h"], name="g1"),
             helper.make_node("Gemm", ["h2", "w2", "bias"], ["k"], name="g2"),
             helper.make_node("Mul", ["h", "bias"], ["y"], name="m"),       # also (2, 4)
             helper.make_node("Add", ["v", "bias"], ["z"], name="a")]       # (3, 4)
    m = make(nodes, [vi("x", [2, 3]), vi("h2", [2, 5]), vi("v", [3, 4])],
             [vi("y", [2, 4]), vi("k", [2, 4]), vi("z", [3, 4]), vi("bias", [4])],
             [bias, init("w", rng_f32(3, 4, seed=1)), init("w2", rng_f32(5, 4, seed=2))])
    out, report = sonnx.conform(m)
    names = {t.name: tuple(t.dims) for t in out.graph.initializer}
    assert names["bias"] == (4,)                     # still a graph output: kept
    assert names["bias_2x4"] == (2, 4) and names["bias_3x4"] == (3, 4)
    assert [n.input[-1] for n in out.graph.node] == ["bias_2x4", "bias_2x4", "bias_2x4", "bias_3x4"]
    assert report["check"]["status"] == "passed" and report["exit_code"] == 0, report


@pytest.mark.req("MUL-R4", "ADD-R4", "SUB-R4")
@pytest.mark.parametrize("op", ["Mul", "Add", "Sub"])
@pytest.mark.parametrize("const_shape", [(), (1,), (3,), (1, 3), (2, 1)])
def test_elementwise_constants_of_every_broadcast_shape(op, const_shape):
    for first in (True, False):       # the constant as A or as B (Sub is not symmetric)
        ins = ["c", "x"] if first else ["x", "c"]
        m = make([helper.make_node(op, ins, ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])],
                 [init("c", rng_f32(*const_shape, seed=3))])
        out, report = sonnx.conform(m)
        assert report["exit_code"] == 0, report
        (t,) = out.graph.initializer
        assert (t.name, tuple(t.dims), t.data_type) == ("c", (2, 3), F)


@pytest.mark.req("MUL-R4")
@pytest.mark.parametrize("dtype,code", [(np.int8, TensorProto.INT8), (np.float16, TensorProto.FLOAT16),
                                        (np.float64, TensorProto.DOUBLE), (np.int64, TensorProto.INT64)])
def test_other_element_types_keep_their_type(dtype, code):
    c = init("c", np.array([3, -2, 1], dtype=dtype))
    m = make([helper.make_node("Mul", ["x", "c"], ["y"])], [vi("x", [2, 3], code)],
             [vi("y", [2, 3], code)], [c], opset=14)     # int8 Mul needs Mul-14
    out, report = sonnx.conform(m)
    (t,) = out.graph.initializer
    assert t.data_type == code and tuple(t.dims) == (2, 3)
    assert report["check"]["status"] == "passed" and report["exit_code"] == 0, report


@pytest.mark.req("MUL-R4")
def test_bfloat16_is_rewritten_but_not_checked_and_says_why():
    import ml_dtypes
    c = init("c", np.array([3, -2, 1], dtype=ml_dtypes.bfloat16))
    m = make([helper.make_node("Mul", ["x", "c"], ["y"])], [vi("x", [2, 3], TensorProto.BFLOAT16)],
             [vi("y", [2, 3], TensorProto.BFLOAT16)], [c], opset=14)
    out, report = sonnx.conform(m)
    (t,) = out.graph.initializer
    assert t.data_type == TensorProto.BFLOAT16 and tuple(t.dims) == (2, 3)
    assert report["conforms"] and report["check"]["status"] == "not checked"
    assert "x" in report["check"]["reason"] and report["exit_code"] == 1   # never "passed"


@pytest.mark.req("PROF-R1", "MUL-R4")
@pytest.mark.parametrize("attr,value", [("value_float", 0.1), ("value_floats", [0.1, -0.0, 3.0]),
                                        ("value", numpy_helper.from_array(np.float32(-0.0)))])
def test_constant_forms_become_initializers_with_the_same_bits(attr, value):
    shape = [3] if attr == "value_floats" else []
    m = make([helper.make_node("Constant", [], ["k"], **{attr: value}),
              helper.make_node("Mul", ["x", "k"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])])
    out, report = sonnx.conform(m)
    assert report["exit_code"] == 0, report
    assert [n.op_type for n in out.graph.node] == ["Mul"]
    (t,) = out.graph.initializer
    got = numpy_helper.to_array(t)
    want = np.broadcast_to(np.asarray(
        numpy_helper.to_array(value) if attr == "value" else value, np.float32).reshape(shape), (2, 3))
    assert got.dtype == np.float32 and got.tobytes() == want.tobytes()


@pytest.mark.req("PROF-R2")
def test_stale_value_info_is_removed():
    """The dynamo exporter's case: a value_info entry that contradicts the model."""
    m = make([helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
             [vi("x", [2, 3])], [vi("y", [2, 3])], value_info=[vi("h", [5, 3]), vi("gone", [1])])
    assert not validate(m).conforms
    out, report = sonnx.conform(m)
    removed = {r["tensor"]: r["detail"] for r in report["rewrites"] if r["kind"] == "remove-value-info"}
    assert set(removed) == {"h", "gone"} and "onnx now infers" in removed["h"]
    assert report["exit_code"] == 0, report


@pytest.mark.req("PROF-R2")
def test_unnamed_dynamic_dims_cannot_be_pinned_and_say_so():
    m = make([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [None, 3])], [vi("y", [None, 3])])
    out, report = sonnx.conform(m)
    assert report["exit_code"] == 1
    whys = " ".join(f["why_not_rewritten"] for f in report["findings"])
    assert "has no name, so --dim cannot pin it" in whys


# ------------------------------------------------------------------ the check can fail
def _square_gemm():
    return make([helper.make_node("Gemm", ["x", "w", "c"], ["y"])], [vi("x", [3, 3])], [vi("y", [3, 3])],
                [init("w", rng_f32(3, 3, seed=4)), init("c", rng_f32(3, seed=5))])


@pytest.mark.req("GEMM-R4")
@pytest.mark.parametrize("fault", ["transposed", "cast", "first_row_only"])
def test_planted_faults_in_the_materialisation_are_caught(fault, monkeypatch):
    good = rewrite.expanded

    def bad(array, shape):
        full = good(array, shape)
        if fault == "transposed":
            return full.T.copy()
        if fault == "cast":      # through float16 and back: same type, other values
            return full.astype(np.float16).astype(full.dtype)
        full[1:] = 0
        return full
    monkeypatch.setattr(rewrite, "expanded", bad)
    out, report = sonnx.conform(_square_gemm())
    assert report["conforms"]                                  # the validator cannot see it
    c = report["check"]
    assert c["status"] == "failed" and report["exit_code"] == 1
    (o,) = c["outputs"]
    assert not o["identical"] and o["differing"] > 0
    assert any("first_difference" in s for s in o["by_seed"])


@pytest.mark.req("GEMM-R4")
def test_the_same_model_unfaulted_passes():
    out, report = sonnx.conform(_square_gemm())
    assert report["check"]["status"] == "passed" and report["exit_code"] == 0


def test_inputs_hold_the_edge_values():
    x = bitcheck.make_input(np.dtype(np.float32), (64,), 1, 0)
    bits = {v.tobytes() for v in x}
    assert np.isnan(x).any() and np.isinf(x).any() and np.float32(-0.0).tobytes() in bits
    assert ((x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)).any()         # a subnormal
    assert np.isfinite(bitcheck.make_input(np.dtype(np.float32), (64,), 0, 0)).all()
    e = bitcheck.make_input(np.dtype(np.float32), (4, 4), 3, 0)
    assert np.array_equal(e.reshape(-1), np.resize(bitcheck._edge_values(np.dtype(np.float32)), 16),
                          equal_nan=True)
    again = bitcheck.make_input(np.dtype(np.float32), (64,), 1, 0)
    assert again.tobytes() == x.tobytes()                                     # seeded


# ------------------------------------------------------------------ bad input: exit 2
@pytest.fixture
def model_file(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(onnx.load(str(MODELS / "mlp_torchscript_op17_bias_dynamic.onnx")), p)
    return p


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("args,expected", [
    (["--dim", "batch"], "expected NAME=SIZE"),
    (["--dim", "batch=two"], "expected NAME=SIZE"),
    (["--dim", "=2"], "expected NAME=SIZE"),
    (["--dim", "batch=-1"], "positive integer"),
    (["--dim", "batch=0"], "positive integer"),
    (["--dim", "batch=2", "--dim", "batch=3"], "given twice"),
    (["--dim", "bacth=2"], "no symbolic dimension of that name (its named dimensions: batch)"),
])
def test_bad_dims_exit_2(model_file, tmp_path, capsys, args, expected):
    out = tmp_path / "o.onnx"
    code, stdout, err = run(["conform", str(model_file), "-o", str(out), *args], capsys)
    assert code == 2 and expected in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_bad_files_exit_2(model_file, tmp_path, capsys):
    (tmp_path / "junk.onnx").write_bytes(b"not a model at all \xff\xfe")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    cases = [([str(tmp_path / "missing.onnx"), "-o", str(tmp_path / "o.onnx")], "no such file"),
             ([str(tmp_path / "junk.onnx"), "-o", str(tmp_path / "o.onnx")], "not an ONNX model"),
             ([str(model_file), "-o", str(tmp_path / "nodir" / "o.onnx")], "does not exist"),
             ([str(model_file), "-o", str(tmp_path)], "is a directory"),
             ([str(model_file), "-o", str(tmp_path / "o.onnx"), "--report", str(tmp_path / "nodir" / "r.json")],
              "does not exist")]
    if os.geteuid() != 0:      # root writes anywhere
        cases.append(([str(model_file), "-o", str(ro / "o.onnx")], "not writable"))
    for argv, expected in cases:
        code, _, err = run(["conform", *argv], capsys)
        assert code == 2 and expected in err and len(err.strip().splitlines()) == 1, (argv, err)
    with pytest.raises(SystemExit) as exc:                          # -o is required
        main(["conform", str(model_file)])
    assert exc.value.code == 2 and "-o/--output-file" in capsys.readouterr().err


def test_api_bad_input_raises_conform_error(model_file):
    for dims in ({"batch": -1}, {"batch": "2"}, {"nope": 2}, {"batch": True}):
        with pytest.raises(ConformError):
            sonnx.conform(model_file, dims)
    with pytest.raises(ConformError, match="no such file"):
        sonnx.conform(model_file.parent / "missing.onnx")
    with pytest.raises(TypeError):
        sonnx.conform(42)


def test_report_defaults_next_to_out_and_can_go_elsewhere(model_file, tmp_path, capsys):
    code, _, _ = run(["conform", str(model_file), "-o", str(tmp_path / "o.onnx"), "--dim", "batch=2",
                      "--report", str(tmp_path / "r.json"), "-q"], capsys)
    assert code == 0 and (tmp_path / "r.json").is_file()
    assert not (tmp_path / "o.onnx.conform.json").exists()
    r = json.loads((tmp_path / "r.json").read_text())
    assert set(r) >= {"schema", "model", "output", "report", "dims", "rewrites", "findings",
                      "validate", "check", "conforms", "exit_code"}
    for rw in r["rewrites"]:
        assert set(rw) == {"kind", "requirement", "node", "tensor", "detail"}
        assert rw["node"] is None or set(rw["node"]) == {"graph", "index", "name", "op_type"}
    assert r["check"]["seeds"] == list(bitcheck.SEEDS) and r["validate"]["conforms"]


@pytest.mark.req("PROF-R2", "GEMM-R4")
def test_a_half_done_hand_fix_of_a_dynamo_export_is_finished():
    """Issue 15: the bias stored (M, N) by hand, its dynamo value_info entry left at (N)."""
    m = onnx.load(str(E2E / "mlp_dynamo_op18_bias.onnx"))
    for t in m.graph.initializer:
        if t.name == "0.bias":
            full = np.broadcast_to(numpy_helper.to_array(t), (2, 16)).copy()
            t.CopyFrom(numpy_helper.from_array(full, "0.bias"))
    msg = next(f.message for f in validate(m).findings if f.tensor == "0.bias")
    assert "declared with different types" in msg and "sonnx conform" in msg
    out, report = sonnx.conform(m)
    removed = [r for r in report["rewrites"] if r["kind"] == "remove-value-info"]
    assert "0.bias" in [r["tensor"] for r in removed]
    assert report["exit_code"] == 0, report["findings"]


@pytest.mark.req("GEMM-R4")
@pytest.mark.parametrize("c_shape", [(4,), (1, 4), (3, 1), (1, 1), (1,), ()])
@pytest.mark.parametrize("trans", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("as_constant_node", [False, True])
def test_every_broadcast_c_shape_of_gemm(c_shape, trans, as_constant_node):
    ta, tb = trans
    a, b = rng_f32(*((5, 3) if ta else (3, 5)), seed=6), rng_f32(*((4, 5) if tb else (5, 4)), seed=7)
    c = rng_f32(*c_shape, seed=8)
    nodes = [helper.make_node("Gemm", ["x", "b", "c"], ["y"], transA=ta, transB=tb, alpha=0.75, beta=-1.5)]
    inits = [init("b", b)]
    if as_constant_node:
        nodes.insert(0, helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(c)))
    else:
        inits.append(init("c", c))
    m = make(nodes, [vi("x", list(a.shape))], [vi("y", [3, 4])], inits)
    out, report = sonnx.conform(m)
    assert report["exit_code"] == 0, report
    cfull = next(t for t in out.graph.initializer if t.name == "c")
    assert tuple(cfull.dims) == (3, 4)
    assert numpy_helper.to_array(cfull).tobytes() == np.broadcast_to(c, (3, 4)).tobytes()
    assert [n.op_type for n in out.graph.node] == ["Gemm"]


# ------------------------------------------------------------------ the report's schema
REPORT_SCHEMA = json.loads((ROOT / "spec" / "conform-report.schema.json").read_text())


def schema_errors(report) -> list[str]:
    import jsonschema
    cls = jsonschema.validators.validator_for(REPORT_SCHEMA)
    cls.check_schema(REPORT_SCHEMA)
    return [e.message for e in cls(REPORT_SCHEMA).iter_errors(report)]


@pytest.mark.req("GEMM-R4", "MUL-R4", "PROF-R1", "PROF-R2")
def test_every_kind_of_report_matches_its_schema(monkeypatch, tmp_path, capsys):
    models = [with_c_stored(GEMM_CASES["test_gemm_alpha"]), GEMM_CASES["test_gemm_beta"].model,
              conv_model(), computed_broadcast_model(), sparse_constant_model(),
              onnx.load(str(MODELS / "mlp_dynamo_op18_bias_dynamic.onnx")),
              onnx.load(str(MODELS / "scaled_torchscript_op17.onnx"))]
    reports = [sonnx.conform(m)[1] for m in models]
    reports.append(sonnx.conform(models[0], check=False)[1])
    monkeypatch.setattr(rewrite, "expanded", lambda a, s: np.broadcast_to(a, s).copy() + 1)
    reports.append(sonnx.conform(_square_gemm())[1])                 # a failed check
    monkeypatch.undo()
    assert {r["check"]["status"] for r in reports} == {"passed", "failed", "not checked"}
    for r in reports:
        assert schema_errors(r) == [], r
    code, _, _ = run(["conform", str(MODELS / "mlp_dynamo_op18_bias_dynamic.onnx"), "-q",
                      "-o", str(tmp_path / "o.onnx"), "--dim", "batch=2"], capsys)
    on_disk = json.loads((tmp_path / "o.onnx.conform.json").read_text())
    assert code == 0 and schema_errors(on_disk) == [] and on_disk["output"].endswith("o.onnx")
    bad = dict(on_disk, exit_code=2)
    assert schema_errors(bad)                                        # the schema can fail


@pytest.mark.req("MUL-R4")
def test_legacy_axis_broadcast_is_not_rewritten_by_numpys_rule():
    """Mul-6 with broadcast=1, axis=0 aligns B with A's first axis; numpy's rule would align it
    with the last: storing numpy's expansion would change the result, so conform refuses."""
    g = helper.make_graph([helper.make_node("Mul", ["x", "k"], ["y"], broadcast=1, axis=0)], "g",
                          [vi("x", [2, 2])], [vi("y", [2, 2])], [init("k", np.array([1, 2], np.float32))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 6)], ir_version=8)
    out, report = sonnx.conform(m)
    assert report["rewrites"] == [] and report["exit_code"] == 1
    f = next(f for f in report["findings"] if f["rule"] == "MUL-R4")
    assert "legacy broadcast/axis" in f["why_not_rewritten"]


@pytest.mark.req("PROF-R1")
def test_a_constant_that_is_also_a_graph_output():
    m = make([helper.make_node("Constant", [], ["k"], value=init("v", np.ones((2, 3), np.float32))),
              helper.make_node("Mul", ["x", "k"], ["y"])], [vi("x", [2, 3])],
             [vi("y", [2, 3]), vi("k", [2, 3])])
    out, report = sonnx.conform(m)
    assert report["exit_code"] == 0 and [n.op_type for n in out.graph.node] == ["Mul"]


@pytest.mark.req("GEMM-R4")
def test_weights_stored_as_external_data_are_read(tmp_path, capsys):
    m = onnx.load(str(E2E / "mlp_torchscript_op17_bias.onnx"))
    onnx.save(m, str(tmp_path / "m.onnx"), save_as_external_data=True, location="w.bin",
              size_threshold=0)
    out, report = sonnx.conform(tmp_path / "m.onnx")
    assert report["exit_code"] == 0 and report["check"]["status"] == "passed"
    (tmp_path / "w.bin").unlink()
    code, _, err = run(["conform", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "o.onnx")], capsys)
    assert code == 2 and "cannot read its external data" in err and len(err.strip().splitlines()) == 1
