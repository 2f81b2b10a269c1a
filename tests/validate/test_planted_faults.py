"""Issue 11 item 8: faults that the whole suite used to let through. Each check below is an
ordinary test; its `_caught` twin plants the fault in the validator's source and shows that
the check then fails."""
from __future__ import annotations

import pytest
from onnx import TensorProto, helper

from sonnx.ops import gemm as gemm_op
from sonnx.validate import formats, reader, report, rules, types, validate, walker
from sonnx.validate.report import Report

from . import models as M
from .plant import plant

I32 = TensorProto.INT32


def _int_gemms(alphas):
    nodes = [helper.make_node("Gemm", ["a", "b", "c"], [f"y{i}"], name=f"g{i}", alpha=alpha)
             for i, alpha in enumerate(alphas)]
    return M.model(nodes, [M.vi(n, [2, 2], I32) for n in "abc"],
                   [M.vi(f"y{i}", [2, 2], I32) for i in range(len(alphas))])


def check_alpha_is_read():
    found = validate(_int_gemms([2.0])).findings
    assert [f.rule for f in found] == ["GEMM-R6"]


def check_memo_keys_hold_attributes():
    for alphas, flagged in (([1.0, 2.0], ["g1"]), ([2.0, 1.0], ["g0"])):
        found = validate(_int_gemms(alphas)).findings
        assert [f.node_name for f in found if f.rule == "GEMM-R6"] == flagged


def check_no_shape_is_no_rank():
    m = M.model([helper.make_node("Mul", ["a", "b"], ["c"])],
                [M.vi("a", None), M.vi("b", None)], [M.vi("c", None)])
    r = validate(m)
    assert not r.conforms and any("no known rank" in f.message for f in r.findings)


def check_inference_is_strict():
    assert "ONNX-INFERENCE" in [f.rule for f in validate(M.mul([2, 3], [4, 5])).findings]


def check_json_conforms_needs_every_model():
    ok, bad = Report("ok.onnx"), Report("bad.onnx", error="unreadable")
    assert formats.to_json_obj([ok])["conforms"] is True
    assert formats.to_json_obj([ok, bad])["conforms"] is False
    assert formats.to_json_obj([bad, ok])["conforms"] is False


def check_unreadable_never_conforms():
    assert Report("m.onnx", error="no such file").conforms is False
    assert validate("/nonexistent/model.onnx").conforms is False


@pytest.mark.req("GEMM-R6")
def test_alpha_is_read():
    check_alpha_is_read()


@pytest.mark.req("GEMM-R6")
def test_memo_keys_hold_attributes():
    check_memo_keys_hold_attributes()


@pytest.mark.req("PROF-R2")
def test_no_shape_is_no_rank():
    check_no_shape_is_no_rank()


def test_inference_is_strict():
    check_inference_is_strict()


def test_json_conforms_needs_every_model():
    check_json_conforms_needs_every_model()


def test_unreadable_never_conforms():
    check_unreadable_never_conforms()


FAULTS = {
    "alpha-beta-unread": (check_alpha_is_read, [
        (gemm_op, ('alpha=get("alpha")', "alpha=1.0"), ('beta=get("beta")', "beta=1.0"))]),
    "walker-memo-without-attributes": (check_memo_keys_hold_attributes, [
        (walker, ("key = (op, opset, tuple(map(id, entries)), akey)",
                  "key = (op, opset, tuple(map(id, entries)), ())"))]),
    "rules-memo-without-attributes": (check_memo_keys_hold_attributes, [
        (walker, ("key = (op, opset, tuple(map(id, entries)), akey)", "key = object()")),
        (rules, ("key = (op, opset, sigs, tuple(sorted(attrs.items())) if attrs else ())",
                 "key = (op, opset, sigs)"))]),
    "no-shape-is-rank-0": (check_no_shape_is_no_rank, [
        (types, ('if tt.HasField("shape") else None', 'if tt.HasField("shape") else ()'))]),
    "inference-not-strict": (check_inference_is_strict, [
        (reader, ("check_type=True, strict_mode=True,", "check_type=True, strict_mode=False,"))]),
    "json-conforms-any": (check_json_conforms_needs_every_model, [
        (formats, ('"conforms": all(r.conforms for r in reports)',
                   '"conforms": any(r.conforms for r in reports)'))]),
    "unreadable-conforms": (check_unreadable_never_conforms, [
        (report, ("return self.error is None and not self.findings", "return not self.findings"))]),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_planted_fault_is_caught(monkeypatch, fault):
    check, sites = FAULTS[fault]
    for module, *edits in sites:
        plant(monkeypatch, module, *edits)
    with pytest.raises(AssertionError):
        check()
