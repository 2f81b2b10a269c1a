"""`sonnx conform` writes out what a node leaves implicit (ConformRule.auto_pad, .defaults):
an auto_pad SAME_UPPER / SAME_LOWER / VALID as the explicit pads ONNX's formula gives for the
static input shape (kind `explicit-pads`), and an omitted attribute its rule refuses with ONNX's
default (kind `write-default`). Each rewrite is checked bit for bit through onnxruntime, and
planted faults (SAME_LOWER's odd pad at the wrong end, a wrong default) are caught by that
check: conform exits non-zero. The pads formula itself is compared with onnxruntime's auto_pad
(and onnx.reference's where it follows ONNX's text) over a grid of 1-D cases."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import sonnx
from sonnx.cli import main
from sonnx.ops import pool, transpose

ROOT = Path(__file__).resolve().parents[2]
F = TensorProto.FLOAT


def node_model(op, shape, attrs, opset=22, out_shape=None, inits=(), inputs=("x",)):
    x = helper.make_tensor_value_info("x", F, shape)
    y = helper.make_tensor_value_info("y", F, out_shape)
    n = helper.make_node(op, list(inputs), ["y"], **attrs)
    g = helper.make_graph([n], "g", [x], [y], initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def ort_run(model, x):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.log_severity_level = 4
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def attrs_of(model, index=0):
    return {a.name: helper.get_attribute_value(a) for a in model.graph.node[index].attribute}


def kinds(report):
    return [(r["kind"], r["requirement"]) for r in report["rewrites"]]


# ------------------------------------------------------------------ the formula against the runtimes
def _grid():
    """1-D cases: (mode, d, k, s, ceil_mode), dilation 1."""
    return itertools.product(("SAME_UPPER", "SAME_LOWER", "VALID"), range(1, 9), range(1, 4), range(1, 4), (0, 1))


def _pool_pair(op, mode, d, k, s, ceil, pads, extra):
    base = dict(kernel_shape=[k], strides=[s], ceil_mode=ceil, **extra)
    return (node_model(op, [1, 2, d], dict(base, auto_pad=mode)), node_model(op, [1, 2, d], dict(base, pads=list(pads))))


@pytest.mark.req("MAXPOOL-R1", "AVERAGEPOOL-R1")
@pytest.mark.parametrize("op,extra", [("MaxPool", {}), ("AveragePool", {"count_include_pad": 0}),
                                      ("AveragePool", {"count_include_pad": 1})])
def test_written_pads_give_onnxruntime_s_auto_pad_bits(op, extra):
    """Wherever auto_pads gives pads, onnxruntime computes the same bits (and shape) from them as
    from the auto_pad; the refusals are of the documented kinds only."""
    rng = np.random.default_rng(0)
    written, refused = 0, {}
    for mode, d, k, s, ceil in _grid():
        pads = pool.auto_pads(mode, (d,), (k,), (s,), (1,), ceil)
        if isinstance(pads, str):
            kind = ("negative" if "negative total" in pads else "ceil" if "partial last window" in pads
                    else "short" if "longer than the input" in pads else pads)
            refused[kind] = refused.get(kind, 0) + 1
            continue
        x = rng.standard_normal((1, 2, d)).astype(np.float32)
        auto, explicit = _pool_pair(op, mode, d, k, s, ceil, pads, extra)
        a, b = ort_run(auto, x), ort_run(explicit, x)
        assert a.shape == b.shape and a.tobytes() == b.tobytes(), (mode, d, k, s, ceil, pads)
        written += 1
    assert written == 358                 # deterministic: the grid's cases auto_pads writes
    assert set(refused) == {"negative", "ceil", "short"}, refused


@pytest.mark.req("MAXPOOL-R1", "AVERAGEPOOL-R1")
def test_written_pads_give_onnxruntime_s_conv_bits():
    """The same formula for a convolution (Conv has the same window attributes; no Conv record is
    needed for the formula): onnxruntime's auto_pad and the written pads give the same bits."""
    rng = np.random.default_rng(1)
    written = 0
    for mode, d, k, s, ceil in _grid():
        if ceil:
            continue        # Conv has no ceil_mode
        pads = pool.auto_pads(mode, (d,), (k,), (s,), (1,), 0)
        if isinstance(pads, str):
            continue
        w = numpy_helper.from_array(rng.standard_normal((3, 2, k)).astype(np.float32), "w")
        x = rng.standard_normal((1, 2, d)).astype(np.float32)
        base = dict(kernel_shape=[k], strides=[s])
        a = ort_run(node_model("Conv", [1, 2, d], dict(base, auto_pad=mode), inits=[w], inputs=("x", "w")), x)
        b = ort_run(node_model("Conv", [1, 2, d], dict(base, pads=list(pads)), inits=[w], inputs=("x", "w")), x)
        assert a.shape == b.shape and a.tobytes() == b.tobytes(), (mode, d, k, s, pads)
        written += 1
    assert written == 185


@pytest.mark.req("MAXPOOL-R1", "AVERAGEPOOL-R1")
def test_written_pads_agree_with_onnx_reference_where_it_follows_the_text():
    """onnx.reference's auto_pad against the written pads (ceil_mode 0): its AveragePool in every
    mode, its MaxPool for SAME_UPPER and VALID (SAME_LOWER: the next test)."""
    rng = np.random.default_rng(2)
    compared, failed = 0, {}
    for mode, d, k, s, ceil in _grid():
        pads = pool.auto_pads(mode, (d,), (k,), (s,), (1,), ceil)
        if ceil or isinstance(pads, str):
            continue
        x = rng.standard_normal((1, 2, d)).astype(np.float32)
        ops = ["AveragePool"] + (["MaxPool"] if mode != "SAME_LOWER" else [])
        for op in ops:
            auto, explicit = _pool_pair(op, mode, d, k, s, 0, pads, {})
            try:
                r = ReferenceEvaluator(auto).run(None, {"x": x})[0]
            except IndexError:      # onnx.reference 1.23's 2-D-only pool path, on a 1-D MaxPool
                failed[op] = failed.get(op, 0) + 1
                continue
            assert r.shape == ort_run(explicit, x).shape, (op, mode, d, k, s)
            np.testing.assert_allclose(r, ort_run(explicit, x), rtol=1e-6)
            compared += 1
    assert compared == 285 and failed == {"MaxPool": 24}, failed      # measured, onnx 1.23.2


@pytest.mark.req("MAXPOOL-R1")
def test_onnx_reference_maxpool_same_lower_deviates_from_the_text():
    """The deviation docs/conform.md and spec/maxpool.md state: onnx.reference 1.23's MaxPool with
    a stride other than 1 computes SAME_LOWER as floor(d / s) outputs with the odd pad at the end;
    ONNX's text (and onnxruntime) give ceil(d / s) outputs, the odd pad at the beginning."""
    x = np.array([[[[5.0, 1.0, 2.0, 3.0, 4.0, 0.5]]]], dtype=np.float32)
    auto = node_model("MaxPool", [1, 1, 1, 6], dict(kernel_shape=[1, 3], strides=[1, 2], auto_pad="SAME_LOWER"))
    assert pool.auto_pads("SAME_LOWER", (1, 6), (1, 3), (1, 2)) == (0, 1, 0, 0)
    # windows [-1, 1], [1, 3], [3, 5] of the text; onnx.reference reads [0, 2], [2, 4], [4, 6]
    assert ort_run(auto, x).tolist() == [[[[5.0, 3.0, 4.0]]]]
    assert ReferenceEvaluator(auto).run(None, {"x": x})[0].tolist() == [[[[5.0, 4.0, 4.0]]]]
    x5 = x[..., :5]
    auto5 = node_model("MaxPool", [1, 1, 1, 5], dict(kernel_shape=[1, 2], strides=[1, 2], auto_pad="SAME_LOWER"))
    assert ort_run(auto5, x5).shape == (1, 1, 1, 3)
    assert ReferenceEvaluator(auto5).run(None, {"x": x5})[0].shape == (1, 1, 1, 2)


@pytest.mark.req("MAXPOOL-R1")
@pytest.mark.parametrize("mode,d,k,s,want", [
    ("SAME_UPPER", 7, 2, 2, (0, 1)),      # out 4, total 1: the odd pad at the end
    ("SAME_LOWER", 7, 2, 2, (1, 0)),      # ... at the beginning
    ("SAME_UPPER", 6, 4, 1, (1, 2)),      # total 3
    ("SAME_LOWER", 6, 4, 1, (2, 1)),
    ("SAME_UPPER", 8, 3, 3, (0, 1)),      # out 3, total 1
    ("SAME_LOWER", 5, 3, 2, (1, 1)),      # even total
    ("VALID", 7, 3, 2, (0, 0)),
])
def test_auto_pads_formula(mode, d, k, s, want):
    assert pool.auto_pads(mode, (d,), (k,), (s,)) == want


@pytest.mark.req("MAXPOOL-R1")
@pytest.mark.parametrize("args,says", [
    (("SAME_UPPER", (5,), (3,), (1,), (2,)), "dilation 2"),
    (("SAME_UPPER", (3,), (1,), (3,)), "negative total"),
    (("VALID", (5,), (2,), (2,), None, 1), "partial last window"),
    (("VALID", (2,), (3,)), "longer than the input"),
    (("SAME_UPPER", (5, 5), (3,)), "one entry per spatial axis"),
    (("NOTSET", (5,), (3,)), "none of"),
])
def test_auto_pads_refusals(args, says):
    assert says in pool.auto_pads(*args)


# ------------------------------------------------------------------ conform end to end
POOL_CASES = [
    # (op, opset, input shape, attributes, expected pads)
    ("MaxPool", 22, [1, 2, 7, 6], dict(kernel_shape=[2, 3], strides=[2, 1], auto_pad="SAME_UPPER"), [0, 1, 1, 1]),
    ("MaxPool", 22, [1, 2, 7, 6], dict(kernel_shape=[2, 3], strides=[2, 1], auto_pad="SAME_LOWER"), [1, 1, 0, 1]),
    ("MaxPool", 22, [1, 2, 7, 6], dict(kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_LOWER", ceil_mode=1),
     [1, 0, 0, 0]),
    ("MaxPool", 8, [1, 2, 7, 6], dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="VALID"), [0, 0, 0, 0]),
    ("MaxPool", 12, [1, 3, 9], dict(kernel_shape=[4], strides=[3], auto_pad="SAME_UPPER"), [0, 1]),
    ("AveragePool", 22, [1, 2, 7, 6], dict(kernel_shape=[2, 3], strides=[2, 1], auto_pad="SAME_LOWER",
                                           count_include_pad=1), [1, 1, 0, 1]),
    ("AveragePool", 11, [1, 2, 7, 6], dict(kernel_shape=[3, 2], strides=[1, 2], auto_pad="SAME_UPPER"),
     [1, 0, 1, 0]),
    ("AveragePool", 22, [1, 2, 8, 8], dict(kernel_shape=[2, 2], strides=[2, 2], auto_pad="VALID", ceil_mode=1),
     [0, 0, 0, 0]),
    ("MaxPool", 22, [1, 2, 5, 4, 3], dict(kernel_shape=[2, 3, 2], strides=[2, 1, 1], auto_pad="SAME_LOWER"),
     [1, 1, 1, 0, 1, 0]),
    ("AveragePool", 19, [1, 2, 5, 4, 3], dict(kernel_shape=[3, 2, 2], strides=[1, 2, 1], auto_pad="SAME_UPPER",
                                             count_include_pad=1), [1, 0, 0, 1, 0, 1]),
]


@pytest.mark.req("MAXPOOL-R1", "AVERAGEPOOL-R1")
@pytest.mark.parametrize("op,opset,shape,attrs,pads", POOL_CASES)
def test_conform_writes_the_pads(op, opset, shape, attrs, pads):
    model, report = sonnx.conform(node_model(op, shape, attrs, opset))
    rule = f"{op.upper()}-R1"
    assert ("explicit-pads", rule) in kinds(report)
    got = attrs_of(model)
    assert got["pads"] == pads and "auto_pad" not in got
    assert got["strides"] == attrs["strides"]
    assert report["validate"]["conforms"] and report["check"]["status"] == "passed"
    assert report["exit_code"] == 0


@pytest.mark.req("MAXPOOL-R1", "AVERAGEPOOL-R1")
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_conform_writes_omitted_strides_and_pads(op):
    model, report = sonnx.conform(node_model(op, [1, 2, 5, 5], dict(kernel_shape=[2, 2]), 13))
    assert [k for k, _ in kinds(report)].count("write-default") == 2
    got = attrs_of(model)
    assert got["strides"] == [1, 1] and got["pads"] == [0, 0, 0, 0]
    assert report["exit_code"] == 0 and report["check"]["status"] == "passed"


@pytest.mark.req("MAXPOOL-R1", "AVERAGEPOOL-R1")
def test_auto_pad_and_omitted_strides_together():
    """strides omitted and auto_pad SAME: strides=[1, 1] written, the pads from the auto_pad (not
    the default zeros)."""
    model, report = sonnx.conform(node_model("AveragePool", [1, 1, 4, 5],
                                             dict(kernel_shape=[2, 3], auto_pad="SAME_LOWER")))
    got = attrs_of(model)
    assert got["strides"] == [1, 1] and got["pads"] == [1, 1, 0, 1]
    assert report["exit_code"] == 0


@pytest.mark.req("MAXPOOL-R1")
@pytest.mark.parametrize("attrs,shape,says", [
    (dict(kernel_shape=[3, 3], strides=[1, 1], dilations=[2, 1], auto_pad="SAME_UPPER"), [1, 1, 6, 6], "dilation 2"),
    (dict(kernel_shape=[1], strides=[3], auto_pad="SAME_UPPER"), [1, 1, 3], "negative total"),
    (dict(kernel_shape=[2], strides=[2], auto_pad="VALID", ceil_mode=1), [1, 1, 5], "partial last window"),
    (dict(kernel_shape=[2], strides=[2], auto_pad="SAME_UPPER"), [1, 1, "n"], "not static"),
    (dict(kernel_shape=[2], strides=[2], pads=[0, 1], auto_pad="SAME_UPPER"), [1, 1, 5], "writes pads as well"),
])
def test_conform_leaves_what_it_cannot_write_with_the_reason(attrs, shape, says):
    model, report = sonnx.conform(node_model("MaxPool", shape, attrs), check=False)
    assert "explicit-pads" not in [k for k, _ in kinds(report)]
    assert attrs_of(model)["auto_pad"] == attrs["auto_pad"].encode()
    mine = [f for f in report["findings"] if f["rule"] == "MAXPOOL-R1"]
    assert mine and all(says in f["why_not_rewritten"] for f in mine)
    assert report["exit_code"] == 1


@pytest.mark.req("MAXPOOL-R1")
def test_planted_fault_same_lower_odd_pad_at_the_wrong_end_is_caught(monkeypatch):
    """SAME_LOWER's odd pad put at the end (SAME_UPPER's split): the validator still accepts the
    written pads, and the bit check fails, so conform exits 1."""
    right = pool.auto_pads

    def wrong_end(mode, spatial, kernel, strides=None, dilations=None, ceil_mode=0):
        pads = right(mode, spatial, kernel, strides, dilations, ceil_mode)
        n = len(spatial)
        return pads if isinstance(pads, str) else pads[n:] + pads[:n]

    monkeypatch.setattr(pool, "auto_pads", wrong_end)
    attrs = dict(kernel_shape=[2, 3], strides=[2, 1], auto_pad="SAME_LOWER")
    model, report = sonnx.conform(node_model("MaxPool", [1, 2, 7, 6], attrs))
    assert attrs_of(model)["pads"] == [0, 1, 1, 1]
    assert report["validate"]["conforms"]
    assert report["check"]["status"] == "failed" and report["exit_code"] == 1


@pytest.mark.req("MAXPOOL-R1", "TRANSPOSE-R1")
@pytest.mark.parametrize("case", ["pads", "perm"])
def test_planted_fault_wrong_default_is_caught(monkeypatch, case):
    """A default written wrong (pads of 1 instead of 0; the identity perm instead of the axes
    reversed): the validator accepts the node, the bit check fails, conform exits 1."""
    if case == "pads":
        monkeypatch.setitem(pool.DEFAULTS, "pads", lambda inputs, attrs, opset, constants: [1, 1, 1, 1])
        m = node_model("MaxPool", [1, 2, 5, 5], dict(kernel_shape=[2, 2], strides=[1, 1]), 13)
    else:
        monkeypatch.setattr(transpose, "default_perm", lambda inputs: list(range(len(inputs[0]))))
        m = node_model("Transpose", [3, 3], {}, 13)
    _, report = sonnx.conform(m)
    assert "write-default" in [k for k, _ in kinds(report)]
    assert report["validate"]["conforms"]
    assert report["check"]["status"] == "failed" and report["exit_code"] == 1


@pytest.mark.req("TRANSPOSE-R1")
@pytest.mark.parametrize("opset,shape", [(1, [2, 3, 4]), (13, [2, 3, 4, 5]), (21, [6, 7])])
def test_conform_writes_the_omitted_perm(opset, shape):
    model, report = sonnx.conform(node_model("Transpose", shape, {}, opset))
    assert kinds(report)[0] == ("write-default", "TRANSPOSE-R1")
    assert attrs_of(model)["perm"] == list(reversed(range(len(shape))))
    assert report["exit_code"] == 0 and report["check"]["status"] == "passed"


@pytest.mark.req("TRANSPOSE-R1")
def test_perm_of_an_input_of_unknown_rank_is_not_guessed():
    x = helper.make_tensor_value_info("x", F, None)
    y = helper.make_tensor_value_info("y", F, None)
    g = helper.make_graph([helper.make_node("Transpose", ["x"], ["y"])], "g", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    model, report = sonnx.conform(m, check=False)
    assert "perm" not in attrs_of(model)
    mine = [f for f in report["findings"] if f["rule"] == "TRANSPOSE-R1"]
    assert mine and "rank is unknown" in mine[0]["why_not_rewritten"]


@pytest.mark.req("FLATTEN-R1")
@pytest.mark.parametrize("opset", [1, 9, 13])
def test_conform_writes_the_omitted_axis(opset):
    model, report = sonnx.conform(node_model("Flatten", [2, 3, 4], {}, opset))
    assert kinds(report)[0] == ("write-default", "FLATTEN-R1")
    assert attrs_of(model)["axis"] == 1
    assert report["exit_code"] == 0 and report["check"]["status"] == "passed"


@pytest.mark.req("MAXPOOL-R1", "TRANSPOSE-R1")
def test_a_written_attribute_is_never_rewritten():
    """Nothing is written over what the node states: explicit pads/strides/perm stay as they are."""
    m = node_model("MaxPool", [1, 1, 5, 5], dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 0, 0]), 13)
    model, report = sonnx.conform(m, check=False)
    assert not [r for r in report["rewrites"] if r["kind"] in ("write-default", "explicit-pads")]
    assert attrs_of(model) == attrs_of(m)


@pytest.mark.req("MAXPOOL-R1", "TRANSPOSE-R1")
def test_report_matches_the_schema_and_the_cli_names_the_rewrites(tmp_path, capsys):
    import jsonschema
    schema = json.loads((ROOT / "spec" / "conform-report.schema.json").read_text())
    x = helper.make_tensor_value_info("x", F, [1, 2, 7, 6])
    y = helper.make_tensor_value_info("y", F, None)
    nodes = [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 3], auto_pad="SAME_LOWER"),
             helper.make_node("Transpose", ["p"], ["y"])]
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 13)],
                          ir_version=8)
    src = tmp_path / "m.onnx"
    onnx.save(m, src)
    code = main(["conform", str(src), "-o", str(tmp_path / "out.onnx")])
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in out + err
    assert "written as pads=[1, 1, 0, 1]" in out + err and "perm=[3, 2, 1, 0] written" in out + err
    report = json.loads((tmp_path / "out.onnx.conform.json").read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(report)
    assert {r["kind"] for r in report["rewrites"]} >= {"explicit-pads", "write-default"}


@pytest.mark.req("RESHAPE-R2")
@pytest.mark.parametrize("target,written", [([0, 12], True), ([2, 12], False)])
def test_conform_writes_allowzero_where_a_zero_needs_it(target, written):
    """Reshape-14 with a constant shape holding a 0 and no allowzero (refused: RESHAPE-R2):
    conform writes allowzero=0, ONNX's default; without a 0 nothing is refused or written."""
    shape = numpy_helper.from_array(np.array(target, dtype=np.int64), "s")
    m = node_model("Reshape", [2, 3, 4], {}, 14, inits=[shape], inputs=("x", "s"))
    model, report = sonnx.conform(m)
    assert (("write-default", "RESHAPE-R2") in kinds(report)) is written
    assert attrs_of(model).get("allowzero") == (0 if written else None)
    assert report["exit_code"] == 0 and report["check"]["status"] == "passed"


@pytest.mark.req("RESHAPE-R2")
def test_planted_fault_allowzero_one_is_caught(monkeypatch):
    """allowzero written as 1 instead of ONNX's default 0: a 0 in the shape then makes a
    dimension of size 0 (the validator refuses the empty tensor) or, with onnxruntime, a
    different shape; conform exits 1 either way."""
    from sonnx.ops import registry
    rule = registry.operator("Reshape").conform
    monkeypatch.setitem(rule.defaults, "allowzero", lambda inputs, attrs, opset, constants: 1)
    shape = numpy_helper.from_array(np.array([0, 12], dtype=np.int64), "s")
    _, report = sonnx.conform(node_model("Reshape", [2, 3, 4], {}, 14, inits=[shape], inputs=("x", "s")))
    assert "write-default" in [k for k, _ in kinds(report)]
    assert report["exit_code"] == 1


@pytest.mark.req("SQUEEZE-R1")
@pytest.mark.parametrize("opset", [11, 13, 21])
def test_conform_writes_the_omitted_squeeze_axes(opset):
    """Squeeze without axes (refused: SQUEEZE-R1): the dimensions of size 1, ONNX's reading, are
    written: the attribute before Squeeze-13, a constant int64 input from 13 on."""
    model, report = sonnx.conform(node_model("Squeeze", [1, 3, 1, 4], {}, opset))
    [node] = model.graph.node
    if opset < 13:
        assert kinds(report)[0] == ("write-default", "SQUEEZE-R1") and attrs_of(model)["axes"] == [0, 2]
    else:
        assert kinds(report)[0] == ("node-rewrite", "SQUEEZE-R1")
        [init] = [t for t in model.graph.initializer if t.name == node.input[1]]
        got = numpy_helper.to_array(init)
        assert got.dtype == np.int64 and got.tolist() == [0, 2]
    assert report["exit_code"] == 0 and report["check"]["status"] == "passed"


@pytest.mark.req("SQUEEZE-R1")
@pytest.mark.parametrize("shape,says", [([2, 3], "no dimension of size 1"), ([1, "n"], "not static")])
def test_squeeze_axes_not_guessed(shape, says):
    for opset in (11, 13):
        model, report = sonnx.conform(node_model("Squeeze", shape, {}, opset), check=False)
        assert len(model.graph.node[0].input) == 1 and not model.graph.node[0].attribute
        mine = [f for f in report["findings"] if f["rule"] == "SQUEEZE-R1"]
        assert mine and says in mine[0]["why_not_rewritten"]


@pytest.mark.req("SQUEEZE-R1")
def test_planted_fault_wrong_squeeze_axes_is_caught(monkeypatch):
    """The axes written as the last dimension of size 1 only: the validator accepts the node, the
    output's shape differs, the bit check fails."""
    from sonnx.ops import squeeze
    monkeypatch.setattr(squeeze, "default_axes", lambda inputs: [2])
    _, report = sonnx.conform(node_model("Squeeze", [1, 3, 1, 4], {}, 13))
    assert report["validate"]["conforms"]
    assert report["check"]["status"] == "failed" and report["exit_code"] == 1


# ------------------------------------------------------------------ ONNX's own node tests
ONNX_NODE_TESTS = ["test_maxpool_2d_same_upper", "test_maxpool_2d_same_lower", "test_maxpool_2d_precomputed_same_upper",
                   "test_maxpool_2d_default", "test_averagepool_2d_same_upper", "test_averagepool_2d_same_lower",
                   "test_averagepool_2d_precomputed_same_upper", "test_averagepool_2d_default",
                   "test_transpose_default", "test_flatten_default_axis"]


def _node_cases() -> dict:
    import importlib
    import warnings
    import onnx.backend.test.case.node as node_cases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for stem in ("maxpool", "averagepool", "transpose", "flatten"):
            importlib.import_module(f"onnx.backend.test.case.node.{stem}")
    return {c.name: c for c in node_cases._NodeTestCases}


@pytest.mark.req("MAXPOOL-R1", "AVERAGEPOOL-R1", "TRANSPOSE-R1", "FLATTEN-R1")
@pytest.mark.parametrize("name", ONNX_NODE_TESTS)
def test_onnx_node_tests_conform_and_keep_their_expected_output(name):
    """ONNX's node tests that leave attributes implicit (auto_pad SAME_*, omitted strides/pads,
    perm, axis) are refused as written, conform with the bit check passed, and the rewritten
    model computes the node test's own expected output from its own input (onnxruntime)."""
    case = _node_cases()[name]
    assert not sonnx.validate(case.model).conforms
    model, report = sonnx.conform(case.model)
    assert report["exit_code"] == 0 and report["check"]["status"] == "passed", report["findings"]
    assert {r["kind"] for r in report["rewrites"]} & {"explicit-pads", "write-default"}
    inputs, expected = case.data_sets[0]
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    got = sess.run(None, {model.graph.input[0].name: inputs[0]})[0]
    assert got.shape == expected[0].shape
    np.testing.assert_allclose(got, expected[0], rtol=1e-6)


@pytest.mark.req("MAXPOOL-R1")
@pytest.mark.parametrize("bad", [dict(strides=3), dict(dilations=[1.5]), dict(ceil_mode=0.5)])
def test_malformed_window_attributes_left_with_a_reason_not_a_traceback(bad):
    attrs = dict(kernel_shape=[2], auto_pad="SAME_UPPER", **bad)
    model, report = sonnx.conform(node_model("MaxPool", [1, 1, 5], attrs), check=False)
    assert "explicit-pads" not in [k for k, _ in kinds(report)] and report["exit_code"] == 1
