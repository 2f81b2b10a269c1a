"""PROF-R2's `--dim` hint: given for every dimension named in the file (what `sonnx conform --dim`
pins, unk__N names included, as tf2onnx writes them), never for one onnx's inference made up."""
from __future__ import annotations

import pytest
from onnx import TensorProto, helper

import sonnx
from sonnx.conform import rewrite
from sonnx.profile import shape_violations

F = TensorProto.FLOAT


def model(dim_name: str):
    """A NonZero (whose count onnx names unk__N itself) next to a Relu on an input with
    ``dim_name`` in the file."""
    g = helper.make_graph([helper.make_node("NonZero", ["x"], ["nz"]), helper.make_node("Relu", ["u"], ["v"])],
                          "g", [helper.make_tensor_value_info("x", F, [2, 3]),
                                helper.make_tensor_value_info("u", F, [dim_name, 3])],
                          [helper.make_tensor_value_info("nz", TensorProto.INT64, [2, None]),
                           helper.make_tensor_value_info("v", F, [dim_name, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])


def prof_r2(m) -> dict:
    return {f.tensor: f.message for f in sonnx.validate(m).findings if f.rule == "PROF-R2"}


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("name", ["unk__6", "unk__0", "batch", "N"])
def test_every_name_in_the_file_gets_its_hint(name):
    found = prof_r2(model(name))
    assert f"--dim {name}=SIZE" in found["u"]
    assert f"--dim {name}=SIZE" in found["v"]


@pytest.mark.req("PROF-R2")
def test_a_name_inference_makes_up_gets_none():
    found = prof_r2(model("unk__0"))
    # the NonZero count onnx names itself (unk__1 here: it avoids the file's unk__0)
    assert "nz" in found and "unk__" in found["nz"] and "--dim" not in found["nz"]


@pytest.mark.req("PROF-R2")
def test_the_hint_is_what_conform_accepts():
    m = model("unk__6")
    _, report = sonnx.conform(m, {"unk__6": 2}, check=False)
    assert not [f for f in report["findings"] if f["tensor"] in ("u", "v")]


@pytest.mark.req("PROF-R2")
def test_the_names_are_those_of_the_file_that_dim_can_spell():
    g = model("unk__6").graph
    g.input[0].type.tensor_type.shape.dim[0].dim_param = "a=b"       # --dim cannot spell it
    assert rewrite.pinnable_names(g) == frozenset({"unk__6"})
    (v,) = shape_violations(("a=b", 3), "x", rewrite.pinnable_names(g))
    assert "--dim" not in v.message


@pytest.mark.req("PROF-R2")
def test_the_hint_needs_the_name_to_be_pinnable():
    (v,) = shape_violations(("batch", 3), "x", frozenset({"batch"}))
    assert "--dim batch=SIZE" in v.message
    for d in (None, "", "?", "1..4", "unk__3", "batch"):
        (v,) = shape_violations((d, 3), "x")          # no names known: no hint at all
        assert "--dim" not in v.message, d


@pytest.mark.req("PROF-R2")
def test_the_old_unk_exclusion_is_caught(monkeypatch):
    # planted fault: names starting unk__ left out, as before issue 26
    real = rewrite.pinnable_names
    monkeypatch.setattr(rewrite, "pinnable_names", lambda g: frozenset(
        n for n in real(g) if not n.startswith("unk__")))
    from sonnx.validate import declarations, reader
    monkeypatch.setattr(reader, "pinnable_names", rewrite.pinnable_names)
    monkeypatch.setattr(declarations, "pinnable_names", rewrite.pinnable_names)
    assert "--dim unk__6=SIZE" not in prof_r2(model("unk__6"))["u"]
