"""conform's rewrites, blockers, bit-identity check, summary, report and exit statuses, in detail:
tests first written to kill mutants that survived mutmut's run over src/sonnx/conform/ (issue 26).

Each test pins behaviour a surviving mutant changed: what is rewritten and how, which reason a
finding carries, what the summary and the report say, which exit status, never the wording
alone. docs/records/mutation/conform-run.md lists every survivor and the test (or the reason) that
accounts for it."""
from __future__ import annotations

import json
import os
from types import SimpleNamespace

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from sonnx.cli import main
from sonnx import output_files
from sonnx.conform import api, bitcheck, cli, rewrite


def _constant(**attr) -> onnx.ModelProto:
    g = helper.make_graph([helper.make_node("Constant", [], ["k"], name="c", **attr)], "g", [],
                          [helper.make_tensor_value_info("k", TensorProto.UNDEFINED, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


# --- rewrite._constant_tensor: every value form becomes an initializer of the output's name --

@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("attr,value,dtype,want", [
    ("value_int", -7, np.int64, np.array(-7, np.int64)),
    ("value_int", 2**62 + 1, np.int64, np.array(2**62 + 1, np.int64)),
    ("value_ints", [3, -1, 2**40], np.int64, np.array([3, -1, 2**40], np.int64)),
    ("value_float", 0.1, np.float32, np.array(0.1, np.float32)),
    ("value_floats", [0.5, -0.0], np.float32, np.array([0.5, -0.0], np.float32)),
])
def test_each_constant_form_becomes_an_initializer_of_the_same_values(attr, value, dtype, want):
    m = _constant(**{attr: value})
    log = rewrite.Log()
    rewrite.constants_to_initializers(m, log)
    assert len(m.graph.node) == 0 and log.blockers == []
    (t,) = m.graph.initializer
    got = numpy_helper.to_array(t)
    assert t.name == "k" and got.dtype == dtype and got.shape == want.shape
    assert got.tolist() == want.tolist() and got.tobytes() == want.tobytes()
    (r,) = log.rewrites
    assert (r.kind, r.requirement, r.tensor, r.node_index) == ("constant-to-initializer", "PROF-R1", "k", 0)


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("attr,value,dims", [("value_string", b"ab\x00c", []),
                                             ("value_strings", [b"x", b"", b"yz"], [3])])
def test_a_string_constant_stays_a_node_with_the_reason(attr, value, dims):
    # strings are no element type of the profile: conform refuses to store them (issue 26)
    m = _constant(**{attr: value})
    log = rewrite.Log()
    rewrite.constants_to_initializers(m, log)
    assert [n.op_type for n in m.graph.node] == ["Constant"] and len(m.graph.initializer) == 0
    assert [(b.rule, b.node_index) for b in log.blockers] == [("PROF-R1", 0)] and log.rewrites == []
    assert "string" in log.blockers[0].reason


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("inner_name", ["", "other"])
def test_a_constant_value_is_stored_under_the_output_name(inner_name):
    m = _constant(value=numpy_helper.from_array(np.array([1.5, 2.0], np.float32), inner_name))
    rewrite.constants_to_initializers(m, rewrite.Log())
    (t,) = m.graph.initializer
    assert t.name == "k" and numpy_helper.to_array(t).tolist() == [1.5, 2.0]


@pytest.mark.req("PROF-R1", "PROF-R2")
def test_a_sparse_or_unknown_constant_stays_a_node_with_a_blocker():
    sparse = helper.make_sparse_tensor(numpy_helper.from_array(np.array([1.0], np.float32), "v"),
                                       numpy_helper.from_array(np.array([0], np.int64), "i"), [2])
    for m in (_constant(sparse_value=sparse), _constant(value_int=1, value_float=2.0)):
        log = rewrite.Log()
        rewrite.constants_to_initializers(m, log)
        assert [n.op_type for n in m.graph.node] == ["Constant"] and len(m.graph.initializer) == 0
        assert [(b.rule, b.node_index) for b in log.blockers] == [("PROF-R1", 0)] and log.rewrites == []


# --- api._why: a finding carries the reason of its own blocker, never another's -------------

def _finding(rule="GEMM-R4", node_index=0, tensor=None, graph="main", op_type="Gemm", message=""):
    return SimpleNamespace(rule=rule, node_index=node_index, tensor=tensor, graph=graph, op_type=op_type,
                           message=message)


def test_a_blocker_explains_only_the_finding_of_its_rule_and_place():
    model = onnx.ModelProto()
    own = rewrite.Blocker("GEMM-R4", "OWN", node_index=0)
    assert api._why(_finding(), [own], model, {}) == "OWN"
    others = [rewrite.Blocker("MUL-R4", "OTHER RULE", node_index=0),
              rewrite.Blocker("GEMM-R4", "OTHER NODE", node_index=1, tensor="t"),
              rewrite.Blocker("GEMM-R4", "NO PLACE"),
              rewrite.Blocker("GEMM-R4", "OTHER TENSOR", tensor="u")]
    assert "OTHER" not in api._why(_finding(tensor="t"), others, model, {})
    assert "NO PLACE" not in api._why(_finding(tensor="t"), others, model, {})
    assert api._why(_finding(graph="main/If_0/then", tensor="t"), [own], model, {}) != "OWN"
    by_tensor = rewrite.Blocker("PROF-R2", "TENSOR", tensor="x")
    assert api._why(_finding("PROF-R2", None, "x"), [by_tensor], model, {}) == "TENSOR"
    assert api._why(_finding("PROF-R2", None, "y"), [by_tensor], model, {}) != "TENSOR"
    assert api._why(_finding("PROF-R2", 3, "x"), [by_tensor], model, {}) == "TENSOR"


# --- cli._summary: every kind of check record, and the verbosity ---------------------------

def _report(check_record, **over):
    report = {"rewrites": [{"kind": "pin-dim", "requirement": "PROF-R2", "node": None, "tensor": None,
                            "detail": "PINNED"},
                           {"kind": "materialise-broadcast", "requirement": "GEMM-R4", "tensor": "c2",
                            "node": {"graph": "main", "index": 2, "name": None, "op_type": "Gemm"},
                            "detail": "STORED"}],
              "findings": [{"rule": "PROF-R1", "location": "node 0 (Conv)", "message": "MSG",
                            "why_not_rewritten": "WHY", "graph": "main", "node_index": 0,
                            "node_name": "", "op_type": "Conv", "domain": "", "op_version": 1,
                            "tensor": None}],
              "check": check_record, "validate": {"error": None}, "conforms": False}
    report.update(over)
    return report


def test_the_summary_lists_rewrites_findings_and_a_passed_check():
    record = {"status": "passed", "runtime": "onnxruntime 9", "seeds": [0, 1],
              "outputs": [{"name": "y", "elements": 12}, {"name": "z", "elements": 3}]}
    lines = cli._summary(_report(record), "o.onnx", "r.json", 1).splitlines()   # -v: each finding
    assert lines[0] == "rewrite [PROF-R2] PINNED"
    assert lines[1] == "rewrite [GEMM-R4] node 2 (Gemm, Gemm): STORED"
    assert lines[2] == "left [PROF-R1] node 0 (Conv): MSG" and lines[3].endswith("WHY")
    assert "passed" in lines[4] and "onnxruntime 9" in lines[4] and "y (12 values), z (3 values)" in lines[4]
    assert lines[5].startswith("o.onnx: does not conform (1 finding(s) left); 2 rewrite(s)")
    assert lines[6].startswith("next: ") and len(lines) == 7
    short = cli._summary(_report(record), "o.onnx", "r.json", 0).splitlines()   # one line per rule
    assert short[2] == "left [PROF-R1] 1 at Conv_0 (Conv-1): WHY" and len(short) == 6
    quiet = cli._summary(_report(record, conforms=True, findings=[]), "o.onnx", "r.json", -1).splitlines()
    assert len(quiet) == 2 and quiet[1].startswith("o.onnx: conforms;")


def test_the_summary_of_a_failed_check_shows_the_first_difference_of_each_output():
    record = {"status": "failed", "reason": "outputs differ: y",
              "outputs": [{"name": "y", "by_seed": [
                  {"seed": 0, "identical": True},
                  {"seed": 1, "identical": False, "differing": 2,
                   "first_difference": {"index": [0, 1], "original": "0x1p+0", "rewritten": "0x1p+1"}},
                  {"seed": 2, "identical": False, "differing": 5,
                   "first_difference": {"index": [1, 1], "original": "A", "rewritten": "B"}}]},
                  {"name": "z", "by_seed": [{"seed": 0, "identical": False, "differing": None}]}]}
    lines = cli._summary(_report(record, rewrites=[], findings=[]), "o.onnx", "r.json", 0).splitlines()
    assert lines[0] == "bit-identity check FAILED: outputs differ: y"
    assert lines[1] == "    y seed 1: 2 values differ, first at [0, 1]: 0x1p+0 vs 0x1p+1"
    assert len(lines) == 3 and "do not use it" in lines[2]
    lines = cli._summary(_report({"status": "failed", "outputs": []}, rewrites=[], findings=[]),
                         "o.onnx", "r.json", 0).splitlines()
    assert lines[0] == "bit-identity check FAILED: " and len(lines) == 2


def test_the_summary_of_an_unchecked_model_and_a_validator_error():
    lines = cli._summary(_report({"status": "not checked", "reason": "NO ORT"}, rewrites=[], findings=[],
                                 validate={"error": "BROKEN"}), "o.onnx", "r.json", 0).splitlines()
    assert lines[:2] == ["bit-identity check NOT CHECKED: NO ORT",
                         "the validator could not judge the rewritten model: BROKEN"]
    lines = cli._summary(_report({"status": "not checked"}, rewrites=[], findings=[]),
                         "o.onnx", "r.json", 0).splitlines()
    assert lines[0] == "bit-identity check NOT CHECKED: " and len(lines) == 3
    assert lines[2].startswith("next: run conform again without --no-check")


# --- output_files.unwritable: an existing file that cannot be written is refused first ------

def test_an_existing_output_that_cannot_be_written_is_refused(tmp_path, monkeypatch):
    target = tmp_path / "o.onnx"
    target.write_bytes(b"")
    real = os.access
    monkeypatch.setattr(output_files.os, "access", lambda p, mode: False if (
        str(p) == str(target) and mode == os.W_OK) else real(p, mode))
    assert output_files.unwritable(str(target), "output model") is not None
    assert output_files.unwritable(str(tmp_path / "new.onnx"), "output model") is None


# --- cli._cmd_conform: the report's JSON layout ---------------------------------------------

def test_the_report_file_is_ascii_json_indented_by_two(tmp_path, capsys):
    g = helper.make_graph([helper.make_node("Relu", ["x\u00e9"], ["y"])], "g",
                          [helper.make_tensor_value_info("x\u00e9", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    src = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), str(src))
    code = main(["conform", str(src), "-o", str(tmp_path / "o.onnx"), "-q"])
    capsys.readouterr()
    raw = (tmp_path / "o.onnx.conform.json").read_bytes()
    text = raw.decode("ascii")
    assert code == 0 and text == json.dumps(json.loads(text), indent=2, ensure_ascii=True) + "\n"


# --- bitcheck.compare / _bits / _hex: the bit-for-bit record of one output ----------------------

def test_outputs_of_another_shape_are_not_identical_and_say_what_came():
    a = np.zeros((2, 3), np.float32)
    res = bitcheck.compare(a, np.zeros((3, 2), np.float32))
    assert res["identical"] is False and res["differing"] is None and "(3, 2)" in res["why"]
    assert (res["dtype"], res["shape"], res["elements"]) == ("float32", [2, 3], 6)


def test_each_differing_element_is_counted_and_the_first_is_shown_in_hex():
    a = np.zeros((2, 3), np.float32)
    b = a.copy()
    b[0, 2], b[1, 1] = -0.0, 1.5
    res = bitcheck.compare(a, b)
    assert (res["identical"], res["differing"]) == (False, 2)
    assert res["first_difference"] == {"index": [0, 2], "original": "0x0.0p+0 (bits 0x00000000)",
                                       "rewritten": "-0x0.0p+0 (bits 0x80000000)"}
    res = bitcheck.compare(np.array([5, 7], np.int64), np.array([5, -7], np.int64))
    assert res["differing"] == 1 and res["first_difference"] == {"index": [1], "original": "7",
                                                                 "rewritten": "-7"}
    res = bitcheck.compare(np.float32(1.0), np.float32(2.0))          # a scalar output: no index
    assert res["first_difference"]["index"] == []


def test_string_and_empty_outputs_are_compared_too():
    s = np.array([b"a", b"bc", b"d"], dtype=object)
    t = np.array([b"a", b"bX", b"d"], dtype=object)
    assert bitcheck.compare(s, s.copy())["identical"] is True
    res = bitcheck.compare(s, t)
    assert (res["differing"], res["first_difference"]["index"]) == (1, [1])
    grid = np.array([[b"a", b"b"], [b"c", b"d"]], dtype=object)
    other = np.array([[b"X", b"Y"], [b"c", b"d"]], dtype=object)
    res = bitcheck.compare(grid, other)           # two elements of one row: two differences
    assert (res["differing"], res["first_difference"]["index"]) == (2, [0, 0])
    empty = np.zeros((0, 4), np.float32)
    assert bitcheck.compare(empty, empty.copy())["identical"] is True


# --- bitcheck._edge_values: the values the bit-identity check feeds --------------------------

@pytest.mark.req("GEMM-R4", "MUL-R4")
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_the_float_edge_values_are_the_documented_ones(dtype):
    fi = np.finfo(dtype)
    sub = fi.smallest_subnormal
    want = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, sub, -sub, sub * 3, fi.smallest_normal,
                     -fi.smallest_normal, fi.max, -fi.max, 1.0, -1.0, fi.eps, 0.5], dtype)
    got = bitcheck._edge_values(np.dtype(dtype))
    assert got.dtype == dtype and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64])
def test_the_integer_edge_values_are_the_extremes_and_their_neighbours(dtype):
    ii = np.iinfo(dtype)
    got = bitcheck._edge_values(np.dtype(dtype))
    assert got.dtype == dtype and got.tolist() == sorted({ii.min, ii.min + 1, 0, 1, ii.max - 1, ii.max})


# --- rewrite.Rewrite.as_dict: the node's name reaches the report ---------------------------

def test_a_rewrite_names_its_node_in_the_report():
    r = rewrite.Rewrite("materialise-broadcast", "GEMM-R4", "d", 3, "gemm_1", "Gemm", "c_2x3")
    assert r.as_dict()["node"] == {"graph": "main", "index": 3, "name": "gemm_1", "op_type": "Gemm"}
    assert rewrite.Rewrite("pin-dim", "PROF-R2", "d").as_dict()["node"] is None


# --- cli._cmd_conform: a failure after the checks is still one line and exit 2 --------------

def _tiny(tmp_path):
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    src = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), str(src))
    return str(src)


def test_an_output_that_fails_to_be_written_is_exit_2_in_one_line(tmp_path, capsys, monkeypatch):
    src = _tiny(tmp_path)

    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(onnx, "save", refuse)
    code = main(["conform", src, "-o", str(tmp_path / "o.onnx"), "-q"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "No space left on device" in err
    assert err.startswith("sonnx conform: ")


def test_a_defect_inside_conform_is_exit_2_in_one_line(tmp_path, capsys, monkeypatch):
    src = _tiny(tmp_path)

    def broken(*args, **kwargs):
        raise RuntimeError("planted\ndefect")
    monkeypatch.setattr(api, "conform", broken)
    code = main(["conform", src, "-o", str(tmp_path / "o.onnx"), "-q"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "RuntimeError: planted defect" in err
    assert err.startswith("sonnx conform: ") and not (tmp_path / "o.onnx").exists()


# --- bitcheck.make_input: the seeded inputs a report names are the same inputs in every version --

# sha256 (first 16 hex digits) of make_input(dtype, (5, 7), seed, 1): numpy's PCG64 streams are
# stable by numpy's policy, so a report's seeds denote these very inputs when it is re-run
SEEDED = {
    ("float32", 0): "fcb81b1095ed160a", ("float32", 1): "26c8a2a89266dbbf",
    ("float32", 2): "24645996b0738dc7", ("float32", 3): "fec8aa24d0b539b4",
    ("int64", 0): "087bb2609a988020", ("int64", 1): "a990ed299cacb928",
    ("int64", 2): "ee2b91d239881921", ("int64", 3): "c3bd2c1675a06875",
    ("bool", 0): "0320497abfa4e9d2", ("bool", 1): "3ede985b2c1d473c",
    ("bool", 2): "8bcf19994b44037f", ("bool", 3): "21846dce76530ec5",
}


@pytest.mark.req("GEMM-R4", "MUL-R4")
@pytest.mark.parametrize("dtype,seed", sorted(SEEDED))
def test_seeded_inputs_are_reproducible_and_hold_what_their_seed_promises(dtype, seed):
    import hashlib
    x = bitcheck.make_input(np.dtype(dtype), (5, 7), seed, 1)
    assert x.dtype == np.dtype(dtype) and x.shape == (5, 7)
    assert hashlib.sha256(x.tobytes()).hexdigest()[:16] == SEEDED[(dtype, seed)]
    edges = bitcheck._edge_values(np.dtype(dtype))
    flat = x.reshape(-1)
    if seed == 0 and dtype == "float32":
        assert np.isfinite(flat).all()
    if seed in (1, 2, 3):          # every edge value appears (35 elements, at most 16 edges)
        assert {e.tobytes() for e in edges} <= {v.tobytes() for v in flat}
    if seed == 3:
        assert flat.tobytes() == np.resize(edges, flat.size).astype(dtype).tobytes()


# --- bitcheck._session / _feeds_spec: how onnxruntime is asked to run both models --------------

def test_both_models_run_unoptimised_on_one_thread_on_the_cpu(monkeypatch):
    import onnxruntime as ort
    seen = {}

    class Spy:
        def __init__(self, data, opts=None, providers=None):
            seen.update(opts=opts, providers=providers)
    monkeypatch.setattr(ort, "InferenceSession", Spy)
    bitcheck._session(ort, onnx.ModelProto())
    opts = seen["opts"]
    assert opts.graph_optimization_level == ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert (opts.intra_op_num_threads, opts.inter_op_num_threads) == (1, 1)
    assert seen["providers"] == ["CPUExecutionProvider"]


def test_inputs_with_a_default_are_skipped_and_a_shapeless_input_cannot_be_fed():
    ins = [helper.make_tensor_value_info("w", TensorProto.FLOAT, [2]),
           helper.make_tensor_value_info("x", TensorProto.INT32, [3, 2])]
    g = helper.make_graph([], "g", ins, [], initializer=[numpy_helper.from_array(np.ones(2, np.float32), "w")])
    m = helper.make_model(g)
    assert bitcheck._feeds_spec(m) == [("x", np.dtype(np.int32), (3, 2))]
    m.graph.input.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, None))
    with pytest.raises(ValueError, match="'z'"):
        bitcheck._feeds_spec(m)


def test_every_numpy_fed_element_type_is_fed_and_an_empty_dimension_is_not():
    names = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
             "uint32", "uint64", "bool"]
    ins = [helper.make_tensor_value_info(f"i{k}", helper.np_dtype_to_tensor_dtype(np.dtype(n)), [1])
           for k, n in enumerate(names)]
    m = helper.make_model(helper.make_graph([], "g", ins, []))
    assert [str(d) for _, d, _ in bitcheck._feeds_spec(m)] == names
    empty = helper.make_model(helper.make_graph(
        [], "g", [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2, 0])], []))
    with pytest.raises(ValueError, match="'e'"):
        bitcheck._feeds_spec(empty)


# --- bitcheck.bit_identity: every way the check cannot be made is recorded as such -------------

def _relu_model(out="y", graph="g"):
    g = helper.make_graph([helper.make_node("Relu", ["x"], [out])], graph,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info(out, TensorProto.FLOAT, [2, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _plant_session(monkeypatch, *, load_fails=(), run_fails=()):
    """Sessions that refuse to load or to run the model whose graph is named in the tuple."""
    real = bitcheck._session

    class Session:
        def __init__(self, ort, model):
            self.inner, self.out = real(ort, model), model.graph.name
            if self.out in load_fails:
                raise RuntimeError(f"planted load failure of {self.out}")

        def get_outputs(self):
            return self.inner.get_outputs()

        def run(self, names, feeds):
            if self.out in run_fails:
                raise RuntimeError(f"planted run failure of {self.out}")
            return self.inner.run(names, feeds)
    monkeypatch.setattr(bitcheck, "_session", Session)


def test_a_passed_check_counts_every_element_of_every_seed():
    import onnxruntime as ort
    rec = bitcheck.bit_identity(_relu_model(), _relu_model(), seeds=(0, 3))
    assert rec["status"] == "passed" and rec["runtime"] == f"onnxruntime {ort.__version__}"
    assert rec["runs"] == 2 and rec["outputs"][0]["elements"] == 12 and rec["outputs"][0]["differing"] == 0


@pytest.mark.parametrize("where,status", [("load original", "not checked"), ("load rewritten", "failed"),
                                          ("run original", "not checked"), ("run rewritten", "failed")])
def test_a_check_that_cannot_be_made_is_never_passed(monkeypatch, where, status):
    verb, which = where.split()
    target = {"original": "g", "rewritten": "g2"}[which]
    _plant_session(monkeypatch, **{("load_fails" if verb == "load" else "run_fails"): (target,)})
    original, rewritten = _relu_model(graph="g"), _relu_model(graph="g2")
    rec = bitcheck.bit_identity(original, rewritten, seeds=(0,))
    assert rec["status"] == status and f"planted {verb} failure of {target}" in rec["reason"]


def test_models_with_different_outputs_fail_the_check():
    rec = bitcheck.bit_identity(_relu_model("y"), _relu_model("y2"), seeds=(0,))
    assert rec["status"] == "failed" and rec["reason"] == "the two models have different outputs"


# --- rewrite.constants_to_initializers: which Constants, what else stays, IR < 4 inputs -------

def test_only_default_domain_single_output_constants_become_initializers():
    value = numpy_helper.from_array(np.array([1.0], np.float32), "v")
    nodes = [helper.make_node("Constant", [], ["a"], name="sp", domain="ai.onnx", value=value),
             helper.make_node("Constant", [], ["b"], name="custom", domain="my.domain", value=value),
             helper.make_node("Relu", ["a"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    log = rewrite.Log()
    rewrite.constants_to_initializers(m, log)
    assert [n.name for n in m.graph.node] == ["custom", "relu"]
    assert [t.name for t in m.graph.initializer] == ["a"]
    (r,) = log.rewrites
    assert (r.node_index, r.node_name, r.op_type, r.tensor) == (0, "sp", "Constant", "a")


def test_a_constant_that_stays_keeps_every_node_after_it():
    sparse = helper.make_sparse_tensor(numpy_helper.from_array(np.array([1.0], np.float32), "v"),
                                       numpy_helper.from_array(np.array([0], np.int64), "i"), [2])
    nodes = [helper.make_node("Constant", [], ["s"], name="sp", sparse_value=sparse),
             helper.make_node("Constant", [], ["k"], name="c", value_float=2.0),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    log = rewrite.Log()
    rewrite.constants_to_initializers(m, log)
    assert [n.name for n in m.graph.node] == ["sp", "relu"] and [t.name for t in m.graph.initializer] == ["k"]
    assert [(b.rule, b.node_index) for b in log.blockers] == [("PROF-R1", 0)]


@pytest.mark.parametrize("ir,raised", [(3, True), (4, False), (8, False)])
def test_a_new_initializer_is_never_a_graph_input(ir, raised):
    """Before IR 4 every initializer is also an input (the IR-3 rule), which would make the new
    one overridable: the model is raised to IR 4 instead (initializer_inputs_to_constants)."""
    m = _constant(value_ints=[1, 2, 3])
    m.ir_version = ir
    log = rewrite.Log()
    rewrite.constants_to_initializers(m, log)
    rewrite.initializer_inputs_to_constants(m, log)
    assert [vi.name for vi in m.graph.input] == []
    assert m.ir_version == (4 if raised else ir)
    assert [r.kind for r in log.rewrites] == ["constant-to-initializer"] + (
        ["initializer-inputs-to-constants"] if raised else [])


# --- rewrite.materialise_broadcasts: names never clash, every way to import the opset --------

def _broadcast_model(opset=13, domain="", node_domain="", extra_nodes=(), extra_inputs=(), extra_outputs=(),
                     value_info=()):
    nodes = [helper.make_node("Mul", ["x", "c"], ["y"], name="mul", domain=node_domain),
             helper.make_node("Add", ["c", "c"], ["y2"], name="keep_c_read"), *extra_nodes]
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]), *extra_inputs]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("y2", TensorProto.FLOAT, [3]), *extra_outputs]
    g = helper.make_graph(nodes, "g", ins, outs, initializer=[numpy_helper.from_array(
        np.array([1.0, -0.0, 2.5], np.float32), "c")], value_info=list(value_info))
    ops = [helper.make_opsetid(domain, opset)] if opset else []
    return helper.make_model(g, opset_imports=ops, ir_version=8)


def _expanded_name(m):
    log = rewrite.Log()
    rewrite.materialise_broadcasts(m, log)
    return [r.tensor for r in log.rewrites if r.kind == "materialise-broadcast"]


@pytest.mark.req("MUL-R4")
def test_the_expanded_copy_takes_a_name_nothing_else_has():
    F = TensorProto.FLOAT
    assert _expanded_name(_broadcast_model()) == ["c_2x3"]
    cases = [dict(extra_inputs=[helper.make_tensor_value_info("c_2x3", F, [1])]),
             dict(extra_outputs=[helper.make_tensor_value_info("c_2x3", F, [3])],
                  extra_nodes=[helper.make_node("Relu", ["c"], ["c_2x3"])]),
             dict(value_info=[helper.make_tensor_value_info("c_2x3", F, [3])]),
             dict(extra_nodes=[helper.make_node("Relu", ["c"], ["c_2x3"]),
                               helper.make_node("Relu", ["c_2x3"], ["z"])])]
    for kw in cases:
        assert _expanded_name(_broadcast_model(**kw)) == ["c_2x3_2"], kw
    taken_twice = _broadcast_model(extra_inputs=[helper.make_tensor_value_info("c_2x3", F, [1]),
                                                 helper.make_tensor_value_info("c_2x3_2", F, [1])])
    assert _expanded_name(taken_twice) == ["c_2x3_3"]


@pytest.mark.req("MUL-R4")
@pytest.mark.parametrize("opset,domain,node_domain,rewritten", [
    (7, "", "", True), (13, "ai.onnx", "", True), (13, "", "ai.onnx", True), (6, "", "", False),
    (None, "", "", False)])
def test_a_broadcast_is_stored_from_opset_7_whatever_the_domain_is_called(opset, domain, node_domain, rewritten):
    m = _broadcast_model(opset, domain, node_domain)
    assert _expanded_name(m) == (["c_2x3"] if rewritten else [])


@pytest.mark.req("MUL-R4", "PROF-R2")
def test_a_result_with_a_zero_dimension_is_not_a_static_shape():
    g = helper.make_graph([helper.make_node("Mul", ["x", "c"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [0, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [0, 3])],
                          initializer=[numpy_helper.from_array(np.ones(3, np.float32), "c")])
    assert _expanded_name(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)) == []


@pytest.mark.req("MUL-R4")
def test_a_shapeless_output_does_not_hide_the_shapes_after_it():
    s = helper.make_tensor_value_info("s", TensorProto.FLOAT, None)
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, None)
    m = _broadcast_model(extra_inputs=[s], extra_nodes=[helper.make_node("Relu", ["s"], ["z"])])
    m.graph.output.insert(0, z)
    assert _expanded_name(m) == ["c_2x3"]


# --- rewrite.materialise_broadcasts: every node is looked at, whatever comes before it -------

@pytest.mark.req("MUL-R4", "GEMM-R4")
def test_nodes_skipped_or_blocked_do_not_stop_the_rewrite_of_later_ones():
    F = TensorProto.FLOAT
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Gemm", ["x", "w"], ["gm"], name="gemm_no_c"),
             helper.make_node("Mul", ["x", "x"], ["m1"], name="same_shape"),
             helper.make_node("Mul", ["x", "s"], ["m2"], name="computed"),
             helper.make_node("Mul", ["x", "c"], ["y"], name="mul")]
    outs = [helper.make_tensor_value_info(n, F, [2, 3]) for n in ("r", "gm", "m1", "m2", "y")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3]),
                                       helper.make_tensor_value_info("s", F, [3])], outs,
                          initializer=[numpy_helper.from_array(np.ones((3, 3), np.float32), "w"),
                                       numpy_helper.from_array(np.array([1.0, 2.0, 3.0], np.float32), "c")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    log = rewrite.Log()
    rewrite.materialise_broadcasts(m, log)
    (r,) = log.rewrites
    assert (r.kind, r.requirement, r.node_index, r.node_name, r.op_type, r.tensor) == \
        ("materialise-broadcast", "MUL-R4", 4, "mul", "Mul", "c")       # the lone copy took c's name
    assert [(b.rule, b.node_index, b.tensor) for b in log.blockers] == [("MUL-R4", 3, "s")]
    (c,) = [t for t in m.graph.initializer if t.name == "c"]
    assert numpy_helper.to_array(c).tolist() == [[1.0, 2.0, 3.0]] * 2 and m.graph.node[4].input[1] == "c"


@pytest.mark.req("MUL-R4", "PROF-R2")
def test_a_broadcast_to_a_symbolic_result_carries_the_pin_advice():
    F = TensorProto.FLOAT
    g = helper.make_graph([helper.make_node("Mul", ["x", "c"], ["y"], name="mul")], "g",
                          [helper.make_tensor_value_info("x", F, ["batch", 3])],
                          [helper.make_tensor_value_info("y", F, ["batch", 3])],
                          initializer=[numpy_helper.from_array(np.ones((1, 3), np.float32), "c")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    log = rewrite.Log()
    rewrite.materialise_broadcasts(m, log)        # (1, 3) against (batch, 3): no known size differs
    assert log.blockers == [] and log.rewrites == []
    m.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.ones((3,), np.float32), "c"))
    log = rewrite.Log()
    rewrite.materialise_broadcasts(m, log)        # rank 1 against rank 2: blocked until pinned
    assert [(b.rule, b.node_index, b.tensor) for b in log.blockers] == [("MUL-R4", 0, "c")]
    assert "--dim" in log.blockers[0].reason and log.rewrites == []


@pytest.mark.req("MUL-R4")
def test_a_constant_that_cannot_be_read_is_a_blocker_at_its_node():
    m = _broadcast_model()
    c = m.graph.initializer[0]
    c.ClearField("float_data")
    c.raw_data = b"\x00\x00"                  # 2 bytes for 3 floats
    log = rewrite.Log()
    rewrite.materialise_broadcasts(m, log)
    assert [(b.rule, b.node_index, b.tensor) for b in log.blockers] == [("MUL-R4", 0, "c")]
    assert "cannot be read" in log.blockers[0].reason and log.rewrites == []


@pytest.mark.req("MUL-R4")
@pytest.mark.parametrize("kind", ["graph", "graphs"])
def test_a_constant_still_read_in_a_subgraph_is_kept(kind):
    F = TensorProto.FLOAT
    branch = helper.make_graph([helper.make_node("Identity", ["c"], ["o"])], "b", [],
                               [helper.make_tensor_value_info("o", F, [3])])
    if kind == "graph":
        extra = helper.make_node("If", ["cond"], ["z"], then_branch=branch, else_branch=branch)
    else:
        extra = helper.make_node("Loopish", ["cond"], ["z"], domain="my.domain", bodies=[branch])
    nodes = [helper.make_node("Mul", ["x", "c"], ["y"], name="mul"), extra]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3]),
                                       helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                          [helper.make_tensor_value_info("y", F, [2, 3]), helper.make_tensor_value_info("z", F, [3])],
                          initializer=[numpy_helper.from_array(np.ones(3, np.float32), "c")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("my.domain", 1)],
                          ir_version=8)
    rewrite.materialise_broadcasts(m, rewrite.Log())
    assert sorted(t.name for t in m.graph.initializer) == ["c", "c_2x3"]


# --- rewrite.tidy_declarations: what is kept, removed and declared ---------------------------

@pytest.mark.req("PROF-R2")
def test_value_info_that_agrees_is_kept_and_only_stale_entries_go():
    F = TensorProto.FLOAT
    nodes = [helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Add", ["h", "w"], ["y"])]
    vis = [helper.make_tensor_value_info("h", F, [2, 3]), helper.make_tensor_value_info("w", F, [2, 3]),
           helper.make_tensor_value_info("gone", F, [1]), helper.make_tensor_value_info("h2", F, [1])]
    nodes.append(helper.make_node("Relu", ["x"], ["h2"]))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                          [helper.make_tensor_value_info("y", F, [2, 3])], value_info=vis,
                          initializer=[numpy_helper.from_array(np.ones((2, 3), np.float32), "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    log = rewrite.Log()
    rewrite.tidy_declarations(m, log)
    assert [vi.name for vi in m.graph.value_info] == ["h", "w"]
    assert [(r.kind, r.tensor) for r in log.rewrites] == [("remove-value-info", "gone"), ("remove-value-info", "h2")]


@pytest.mark.req("PROF-R2")
def test_outputs_get_the_inferred_static_shape_only_where_they_declare_none_or_a_name():
    F = TensorProto.FLOAT
    outs = [("a", F, [2, 3]), ("b", F, [4, 3]), ("e", TensorProto.INT32, None),
            ("c", F, None), ("d", TensorProto.UNDEFINED, None), ("f", F, ["n", 3])]
    nodes = [helper.make_node("Relu", ["x"], [n]) for n, _, _ in outs]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                          [helper.make_tensor_value_info(n, e, s) for n, e, s in outs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    log = rewrite.Log()
    rewrite.tidy_declarations(m, log)
    got = {vi.name: (vi.type.tensor_type.elem_type,
                     [d.dim_value or d.dim_param for d in vi.type.tensor_type.shape.dim]
                     if vi.type.tensor_type.HasField("shape") else None) for vi in m.graph.output}
    assert got == {"a": (F, [2, 3]), "b": (F, [4, 3]), "e": (TensorProto.INT32, None),
                   "c": (F, [2, 3]), "d": (F, [2, 3]), "f": (F, [2, 3])}
    assert [(r.kind, r.requirement, r.tensor) for r in log.rewrites] == \
        [("declare-output-shape", "PROF-R2", n) for n in "cdf"]
    assert all(r.detail.startswith(f"graph output '{r.tensor}' declared ") for r in log.rewrites)


def test_an_output_of_another_shape_fails_the_check_with_no_count():
    F = TensorProto.FLOAT
    g = helper.make_graph([helper.make_node("Transpose", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", F, [2, 3])], [helper.make_tensor_value_info("y", F, [3, 2])])
    transposed = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    rec = bitcheck.bit_identity(_relu_model(), transposed, seeds=(0, 1))
    (o,) = rec["outputs"]
    assert rec["status"] == "failed" and o["identical"] is False and o["differing"] is None
    assert rec["reason"] == "outputs differ: y"


# --- rewrite.pin_dims: what --dim cannot pin is a blocker at its input ------------------------

@pytest.mark.req("PROF-R2")
def test_inputs_that_dim_cannot_pin_are_blockers_at_their_tensor():
    F = TensorProto.FLOAT
    unnamed = helper.make_tensor_value_info("u", F, [2, 3])
    unnamed.type.tensor_type.shape.dim[0].Clear()                   # dynamic, no name
    ins = [helper.make_tensor_value_info("w", F, ["batch"]), helper.make_tensor_value_info("s", F, None),
           helper.make_tensor_value_info("p", F, ["n", 3]), unnamed, helper.make_tensor_value_info("k", F, [2])]
    g = helper.make_graph([], "g", ins, [], initializer=[numpy_helper.from_array(np.ones(2, np.float32), "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    log = rewrite.Log()
    rewrite.pin_dims(m, {}, log)
    got = [(b.rule, b.node_index, b.tensor) for b in log.blockers]
    assert got == [("PROF-R2", None, "s"), ("PROF-R2", None, "p"), ("PROF-R2", None, "u")]
    assert "no shape" in log.blockers[0].reason and "--dim n=SIZE" in log.blockers[1].reason
    assert "no name" in log.blockers[2].reason


# --- api.conform / api.load: the seeds asked for, an unchecked record, the shown name --------

def test_conform_uses_the_seeds_asked_for_and_records_an_unchecked_run_as_none():
    m = _relu_model()
    _, report = api.conform(m, seeds=(2,))
    assert report["check"]["seeds"] == [2] and report["check"]["runs"] == 1 and report["model"] == "<ModelProto>"
    _, report = api.conform(m, check=False)
    assert report["check"]["status"] == "not checked" and report["check"]["runs"] == 0


def test_a_model_with_names_that_are_not_utf8_is_refused(tmp_path):
    m = _relu_model()
    m.graph.node[0].name = "ZZZZ"
    path = tmp_path / "bad.onnx"
    path.write_bytes(m.SerializeToString().replace(b"ZZZZ", b"\xff\xfeZZ"))
    with pytest.raises(rewrite.ConformError, match="not UTF-8"):
        api.conform(str(path), check=False)


def test_external_weights_of_a_model_named_without_a_folder_are_read(tmp_path, monkeypatch):
    m = _broadcast_model()
    onnx.save(m, str(tmp_path / "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="w.bin", size_threshold=0)
    monkeypatch.chdir(tmp_path)
    out, report = api.conform("m.onnx", check=False)
    (c,) = [t for t in out.graph.initializer if t.name == "c"]
    assert numpy_helper.to_array(c).tolist() == [1.0, -0.0, 2.5]


# --- rewrite.parse_dims: the sizes accepted are exactly 1 to 2^31 - 1 --------------------------

@pytest.mark.req("PROF-R2")
def test_dim_sizes_from_one_to_two_to_the_31_minus_one_are_accepted():
    assert rewrite.parse_dims(["a=1", "b=100", "c=2147483647"]) == {"a": 1, "b": 100, "c": 2147483647}
    for bad in ("a=0", "a=2147483648", "a=4294967295"):
        with pytest.raises(rewrite.ConformError):
            rewrite.parse_dims([bad])
    with pytest.raises(rewrite.ConformError):
        rewrite.parse_dims([3])


# --- rewrite.materialise_broadcasts: the second operand of a Mul/Add/Sub is looked at whatever
# --- the first one is (fourth step of the mutation run, 2026-11-28) ---------------------------

def _two_operand_model(a_shape, b_shape, y_shape, *, a_const=None, b_const=None, op="Add"):
    F = TensorProto.FLOAT
    ins, inits = [], []
    for name, shape, const in (("a", a_shape, a_const), ("b", b_shape, b_const)):
        if const is None:
            ins.append(helper.make_tensor_value_info(name, F, shape))
        else:
            inits.append(numpy_helper.from_array(const, name))
    g = helper.make_graph([helper.make_node(op, ["a", "b"], ["y"], name="n")], "g", ins,
                          [helper.make_tensor_value_info("y", F, y_shape)], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.mark.req("ADD-R4")
@pytest.mark.parametrize("a_shape", [[2, 3], [3]], ids=["first-same-shape", "first-computed"])
def test_the_second_operand_is_materialised_after_a_first_that_is_not(a_shape):
    # [2, 3]: the first operand has the result's shape; [3]: it is a graph input broadcast (a blocker)
    b = np.array([[1.0], [2.0]], np.float32)
    m = _two_operand_model(a_shape, [2, 1], [2, 3], b_const=b)
    log = rewrite.Log()
    rewrite.materialise_broadcasts(m, log)
    assert [(r.kind, r.requirement, r.tensor) for r in log.rewrites] == [("materialise-broadcast", "ADD-R4", "b")]
    assert [(bl.rule, bl.tensor) for bl in log.blockers] == ([] if a_shape == [2, 3] else [("ADD-R4", "a")])
    (t,) = [t for t in m.graph.initializer if t.name == "b"]
    assert numpy_helper.to_array(t).tolist() == [[1.0] * 3, [2.0] * 3]


@pytest.mark.req("ADD-R4")
def test_the_second_operand_is_materialised_after_a_first_of_symbolic_shape():
    # a: (n,) against the static result (3,): not static, skipped; b: (1,) stored expanded to (3,)
    m = _two_operand_model(["n"], [1], [3], b_const=np.array([5.0], np.float32))
    log = rewrite.Log()
    rewrite.materialise_broadcasts(m, log)
    assert [(r.kind, r.tensor) for r in log.rewrites] == [("materialise-broadcast", "b")]
    (t,) = [t for t in m.graph.initializer if t.name == "b"]
    assert numpy_helper.to_array(t).tolist() == [5.0, 5.0, 5.0]


@pytest.mark.req("ADD-R4", "PROF-R2")
def test_the_second_operand_is_blocked_after_a_first_that_fits_a_symbolic_result():
    # result (n, 3): a (1, 3) has no known size that differs (skipped), b (n, 1) does (blocked)
    m = _two_operand_model([1, 3], ["n", 1], ["n", 3], a_const=np.ones((1, 3), np.float32))
    log = rewrite.Log()
    rewrite.materialise_broadcasts(m, log)
    assert [(bl.rule, bl.node_index, bl.tensor) for bl in log.blockers] == [("ADD-R4", 0, "b")]
    assert log.rewrites == []


@pytest.mark.req("MUL-R4")
def test_the_constant_after_one_that_cannot_be_read_is_still_materialised():
    bad = onnx.TensorProto(name="a", data_type=TensorProto.FLOAT, dims=[3], raw_data=b"\x00\x00")
    m = _two_operand_model([3], [2, 1], [2, 3], b_const=np.array([[1.0], [2.0]], np.float32), op="Mul")
    m.graph.initializer.insert(0, bad)
    del m.graph.input[:]
    log = rewrite.Log()
    rewrite.materialise_broadcasts(m, log)
    assert [(bl.rule, bl.tensor) for bl in log.blockers] == [("MUL-R4", "a")]
    assert "cannot be read" in log.blockers[0].reason
    assert [(r.kind, r.tensor) for r in log.rewrites] == [("materialise-broadcast", "b")]


@pytest.mark.req("ADD-R4")
def test_a_result_of_no_inferred_shape_is_left_alone():
    # b is a graph input of unknown shape: onnx infers no shape for the result; a's is known
    m = _two_operand_model([2, 3], None, None)
    log = rewrite.Log()
    rewrite.materialise_broadcasts(m, log)
    assert log.blockers == [] and log.rewrites == []


@pytest.mark.req("MUL-R4")
def test_a_mul_of_three_inputs_does_not_stop_the_rewrite_of_later_nodes():
    F = TensorProto.FLOAT
    nodes = [helper.make_node("Mul", ["x", "x", "x"], ["m3"], name="three"),
             helper.make_node("Mul", ["x", "c"], ["y"], name="mul")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                          [helper.make_tensor_value_info("m3", F, None), helper.make_tensor_value_info("y", F, [2, 3])],
                          initializer=[numpy_helper.from_array(np.array([1.0, 2.0, 3.0], np.float32), "c")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    log = rewrite.Log()
    rewrite.materialise_broadcasts(m, log)
    assert [(r.kind, r.node_index, r.tensor) for r in log.rewrites] == [("materialise-broadcast", 1, "c")]


def _shape_by_data_propagation_model(y_dims):
    # y = ConstantOfShape(Shape(x)) * k: y's shape (2, 3) is known only by onnx's data propagation
    F = TensorProto.FLOAT
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("ConstantOfShape", ["s"], ["r"], value=numpy_helper.from_array(np.ones(1, np.float32))),
             helper.make_node("Mul", ["r", "k"], ["y"], name="mul")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                          [helper.make_tensor_value_info("y", F, y_dims)],
                          initializer=[numpy_helper.from_array(np.array([1.0, 2.0, 3.0], np.float32), "k")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.mark.req("MUL-R4")
def test_a_shape_known_by_data_propagation_is_used_to_materialise():
    m = _shape_by_data_propagation_model(None)      # y declared without a shape
    log = rewrite.Log()
    rewrite.materialise_broadcasts(m, log)
    assert [(r.kind, r.tensor) for r in log.rewrites] == [("materialise-broadcast", "k")] and log.blockers == []


@pytest.mark.req("PROF-R2")
def test_a_shape_known_by_data_propagation_is_declared_on_the_output():
    m = _shape_by_data_propagation_model(None)
    log = rewrite.Log()
    rewrite.tidy_declarations(m, log)
    assert [(r.kind, r.tensor) for r in log.rewrites] == [("declare-output-shape", "y")]
    assert [d.dim_value for d in m.graph.output[0].type.tensor_type.shape.dim] == [2, 3]


@pytest.mark.req("MUL-R4")
def test_a_wrong_declaration_elsewhere_does_not_stop_the_materialisation():
    # z declared (2, 4) where onnx infers (2, 3): strict inference would fail on the whole model
    F = TensorProto.FLOAT
    nodes = [helper.make_node("Relu", ["x"], ["z"]), helper.make_node("Mul", ["x", "c"], ["y"], name="mul")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                          [helper.make_tensor_value_info("z", F, [2, 4]), helper.make_tensor_value_info("y", F, None)],
                          initializer=[numpy_helper.from_array(np.array([1.0, 2.0, 3.0], np.float32), "c")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    log = rewrite.Log()
    rewrite.materialise_broadcasts(m, log)
    assert [(r.kind, r.node_index, r.tensor) for r in log.rewrites] == [("materialise-broadcast", 1, "c")]


@pytest.mark.req("PROF-R2")
def test_tidy_keeps_every_declaration_when_onnx_inference_fails(monkeypatch):
    F = TensorProto.FLOAT
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Relu", ["r"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", F, [2, 3])], [helper.make_tensor_value_info("y", F, None)],
                          value_info=[helper.make_tensor_value_info("r", F, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)

    def fails(*a, **k):
        raise onnx.shape_inference.InferenceError("planted")
    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", fails)
    log = rewrite.Log()
    rewrite.tidy_declarations(m, log)
    assert log.rewrites == [] and [vi.name for vi in m.graph.value_info] == ["r"]
    assert not m.graph.output[0].type.tensor_type.HasField("shape")


@pytest.mark.req("PROF-R2")
def test_a_non_tensor_output_does_not_stop_the_declaration_of_later_outputs():
    F = TensorProto.FLOAT
    nodes = [helper.make_node("SequenceConstruct", ["x"], ["seq"]), helper.make_node("Relu", ["x"], ["y"])]
    seq = helper.make_value_info("seq", helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None)))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                          [seq, helper.make_tensor_value_info("y", F, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    log = rewrite.Log()
    rewrite.tidy_declarations(m, log)
    assert [(r.kind, r.tensor) for r in log.rewrites] == [("declare-output-shape", "y")]
    assert m.graph.output[0].type.WhichOneof("value") == "sequence_type"


@pytest.mark.req("PROF-R2")
def test_stale_declarations_are_removed_with_their_types_shown():
    F = TensorProto.FLOAT
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Mul", ["r", "w"], ["y"])]
    vis = [helper.make_value_info("w", helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None))),
           helper.make_tensor_value_info("r", F, ["other", 3])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, ["batch", 3])],
                          [helper.make_tensor_value_info("y", F, ["batch", 3])], value_info=vis,
                          initializer=[numpy_helper.from_array(np.ones(3, np.float32), "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    log = rewrite.Log()
    rewrite.tidy_declarations(m, log)
    details = {r.tensor: r.detail for r in log.rewrites if r.kind == "remove-value-info"}
    assert set(details) == {"w", "r"} and len(m.graph.value_info) == 0
    assert "it declares a non-tensor type, its initializer holds float (3,)" in details["w"]
    assert "it declares float ('other', 3) where onnx now infers float ('batch', 3)" in details["r"]
