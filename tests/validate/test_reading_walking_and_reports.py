"""The validator's reading (sizes, external data), walking (functions, branches, subgraphs), the
location of its findings and its text / JSON / SARIF reports, in detail: tests first written to
kill mutants that survived mutmut's run over src/sonnx/validate/ (issue 11).

Each test pins behaviour a surviving mutant changed: a verdict, a requirement ID, a location,
an exit status or the structure of the text / JSON / SARIF report. docs/records/mutation/validate.md
lists every survivor and the test (or the reason) that accounts for it."""
from __future__ import annotations

import json

import onnx
import pytest
from onnx import AttributeProto, TensorProto, helper

from sonnx import text
from sonnx.validate import formats, reader, rules, validate
from sonnx.validate.report import Finding, Report

from . import models as M

I32 = TensorProto.INT32


def _rules(report):
    return sorted(f.rule for f in report.findings)


# --- rules._gemm: the attributes and the opset reach the Gemm rules -------------------------

@pytest.mark.req("GEMM-R6")
@pytest.mark.parametrize("attr", ["alpha", "beta"])
def test_integer_gemm_scaled_by_attribute_is_refused(attr):
    r = validate(M.gemm([2, 3], [3, 4], [2, 4], elem=I32, **{attr: 2.0}))
    found = [f for f in r.findings if f.rule == "GEMM-R6"]
    assert len(found) == 1 and f"{attr}=2" in found[0].message


@pytest.mark.req("GEMM-R6")
def test_integer_gemm_without_scaling_attributes_conforms():
    # the defaults of alpha and beta are 1.0: an integer Gemm that omits them is admissible
    assert validate(M.gemm([2, 3], [3, 4], [2, 4], elem=I32)).findings == []


@pytest.mark.req("GEMM-R5")
def test_gemm_rules_see_the_imported_opset():
    # C is optional only from Gemm-11: under opset 9 leaving it out is a finding
    r = validate(M.gemm([2, 3], [3, 4], None, opset=9))
    assert any(f.rule == "GEMM-R5" and "requires the input C" in f.message for f in r.findings)
    assert validate(M.gemm([2, 3], [3, 4], None, opset=13)).findings == []


# --- rules.op_version: the profile's version table and onnx's schemas agree -----------------
# (the mutants that send Mul and Gemm to onnx.defs instead are equivalent because of this; a node
# in the domain "ai.onnx" never gets there: onnx's checker refuses it without an "ai.onnx" import)

@pytest.mark.req("PROF-R3")
@pytest.mark.parametrize("op", ["Mul", "Gemm"])
def test_op_version_agrees_with_onnx_schemas(op):
    import onnx
    for opset in range(1, onnx.defs.onnx_opset_version() + 1):
        assert rules.op_version(op, "", opset) == onnx.defs.get_schema(op, opset, "").since_version


# --- reader.read_bytes: the size limits are exact ------------------------------------------

def test_one_byte_file_is_not_called_empty(tmp_path):
    p = tmp_path / "one.onnx"
    p.write_bytes(b"\x08")
    assert reader.read_bytes(p) == b"\x08"
    e = tmp_path / "empty.onnx"
    e.write_bytes(b"")
    with pytest.raises(reader.Unreadable, match="empty file, not an ONNX model"):
        reader.read_bytes(e)


def test_file_of_exactly_the_size_limit_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "MAX_BYTES", 4)
    p = tmp_path / "m.onnx"
    p.write_bytes(b"abcd")
    assert reader.read_bytes(p) == b"abcd"
    p.write_bytes(b"abcde")
    with pytest.raises(reader.Unreadable, match="5 bytes, over the 2 GiB limit"):
        reader.read_bytes(p)


# --- formats: the text report -----------------------------------------------------------------

def _findings(n, rule="MUL-R1", **kw):
    return [Finding(rule, f"m{i}", graph="main", node_index=i, op_type="Mul", **kw) for i in range(n)]


def test_text_lists_at_most_the_limit_and_counts_the_rest():
    exact = formats.to_text([Report("a.onnx", findings=_findings(formats.TEXT_PER_RULE))])
    assert "more (--format json lists all)" not in exact
    over = formats.to_text([Report("a.onnx", findings=_findings(formats.TEXT_PER_RULE + 3))])
    assert "    ... and 3 more (--format json lists all)" in over.splitlines()


def test_text_shows_op_type_and_version_only_when_known():
    fs = [Finding("MUL-R1", "both", graph="main", node_index=0, op_type="Mul", op_version=13),
          Finding("MUL-R1", "type", graph="main", node_index=1, op_type="Mul"),
          Finding("MUL-R1", "version", graph="main", op_version=13),
          Finding("MUL-R1", "none", graph="main")]
    lines = formats.to_text([Report("a.onnx", findings=fs)]).splitlines()
    assert "    Mul_0 (Mul-13): both" in lines
    assert "    Mul_1 (Mul): type" in lines
    assert "    main: version" in lines
    assert "    main: none" in lines


def test_text_goes_on_after_an_unreadable_model_and_sums_up_two():
    out = formats.to_text([Report("bad.onnx", error="empty file"), Report("ok.onnx", nodes=1)])
    assert out.splitlines() == ["bad.onnx: ERROR (not validated): empty file",
                                "ok.onnx: conforms to the SONNX profile (1 node)",
                                "2 models: 1 conform, 0 with violations, 1 not readable"]


def test_text_and_sarif_name_an_unregistered_rule_by_its_id():
    r = Report("a.onnx", findings=[Finding("X-UNKNOWN", "odd", graph="model")])
    assert "  [X-UNKNOWN] X-UNKNOWN: 1" in formats.to_text([r]).splitlines()
    sarif = formats.to_sarif_obj([r])
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert rules[-1]["id"] == "X-UNKNOWN" and rules[-1]["shortDescription"] == {"text": "X-UNKNOWN"}
    assert [d["id"] for d in rules].count("X-UNKNOWN") == 1
    res = sarif["runs"][0]["results"][0]
    assert res["ruleIndex"] == len(rules) - 1
    # a finding on the model as a whole is a module in SARIF's logical locations
    assert res["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": "model", "kind": "module"}]


def test_json_and_sarif_are_indented_by_two():
    r = [Report("a.onnx", findings=_findings(1))]
    assert formats.to_json(r) == json.dumps(formats.to_json_obj(r), indent=2) + "\n"
    assert formats.to_sarif(r) == json.dumps(formats.to_sarif_obj(r), indent=2) + "\n"


# --- walker: a GRAPHS attribute (a list of graphs) is walked like a GRAPH attribute -----------

def _graphs_model(name="multi"):
    def branch(name):
        w = helper.make_tensor("w", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
        return helper.make_graph([helper.make_node("Mul", ["x", "w"], [name], name="inner")], name,
                                 [], [M.vi(name, [2, 3])], initializer=[w])
    node = helper.make_node("Multi", ["x"], ["y"], domain="custom", name=name)
    node.attribute.append(helper.make_attribute("bodies", [branch("t"), branch("e")]))
    return M.model([node], [M.vi("x", [2, 3])], [M.vi("y", [2, 3])],
                   extra_imports=[helper.make_opsetid("custom", 1)])


@pytest.mark.req("MUL-R4")
@pytest.mark.parametrize("name", ["multi", ""])
def test_every_graph_of_a_graphs_attribute_is_judged_at_its_own_path(name):
    found = [(f.rule, f.location, f.op_type, f.op_version) for f in validate(_graphs_model(name)).findings]
    label = name or "Multi_0"  # an unnamed node is labelled by its type and index
    assert found == [("PROF-R1", f"main/{label}", "Multi", None),
                     ("MUL-R4", f"main/{label}:bodies[0]/inner", "Mul", 13),
                     ("MUL-R4", f"main/{label}:bodies[1]/inner", "Mul", 13)]


def test_iter_graphs_yields_nested_graphs_of_both_attribute_kinds():
    from sonnx.validate.walker import iter_graphs
    assert sorted(g.name for g in iter_graphs(_graphs_model())) == ["e", "g", "t"]
    assert sorted(g.name for g in iter_graphs(M.if_model([], []))) == ["else", "g", "then"]


# --- declarations._declare: outputs and value_info must be static as declared ---------------

@pytest.mark.req("PROF-R2")
def test_dynamic_declared_output_and_value_info_are_reported_once_where_declared():
    out = validate(M.mul([2, 3], [2, 3], ["N", 3])).findings
    assert [(f.rule, f.location) for f in out] == [("PROF-R2", "main/tensor:c")]
    assert "graph output 'c' (as declared)" in out[0].message
    m = M.model([helper.make_node("Mul", ["a", "b"], ["t"], name="m1"),
                 helper.make_node("Mul", ["t", "b"], ["c"], name="m2")],
                [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("c", [2, 3])])
    m.graph.value_info.append(M.vi("t", ["N", 3]))
    vi = validate(m).findings
    assert [(f.rule, f.location) for f in vi] == [("PROF-R2", "main/tensor:t")]
    assert "value_info 't' (as declared)" in vi[0].message


# --- cli._write: a character the stream cannot encode becomes an escape, never an error -------

class _Text:
    """A text stream without a binary buffer (what a caller may hand in)."""
    def __init__(self, encoding):
        self.encoding, self.got = encoding, []

    def write(self, s):
        s.encode(self.encoding or "utf-8")  # raises like a real stream on an unencodable character
        self.got.append(s)

    def flush(self):
        pass


class _Binary(_Text):
    def __init__(self, encoding):
        super().__init__(encoding)
        self.buffer = self

    def write(self, b):
        assert isinstance(b, bytes)
        self.got.append(b)


def test_write_escapes_what_the_stream_cannot_encode():
    from sonnx.validate.cli import _write
    t = _Text("ascii")
    _write(t, "caf\u00e9\n")
    assert t.got == ["caf\\xe9\n"]
    b = _Binary("ascii")
    _write(b, "caf\u00e9\n")
    assert b.got == [b"caf\\xe9\n"]
    u = _Binary(None)  # no declared encoding: UTF-8
    _write(u, "caf\u00e9\n")
    assert u.got == ["caf\u00e9\n".encode("utf-8")]
    n = _Text(None)
    _write(n, "caf\u00e9\n")
    assert n.got == ["caf\u00e9\n"]


# --- declarations._external: optional keys, backslashes, in-memory location -------------------

def _external_only(tmp_path, **entries):
    """The model of test_soundness with its external entries replaced by ``entries``."""
    import onnx
    from .test_soundness import _external_model
    path = _external_model(tmp_path)
    m = onnx.load(path, load_external_data=False)
    info = m.graph.initializer[0].external_data
    del info[:]
    for k, v in entries.items():
        info.add(key=k, value=str(v))
    onnx.save(m, path)
    return path


def _ir(report):
    return [(f.graph, f.tensor, f.message) for f in report.findings if f.rule == "ONNX-IR"]


def test_external_data_with_location_only_is_read_from_offset_zero(tmp_path):
    r = validate(_external_only(tmp_path, location="w.bin"))
    assert r.error is None and r.findings == []


def test_external_data_without_length_must_fit_its_dims(tmp_path):
    path = _external_only(tmp_path, location="w.bin")
    (tmp_path / "w.bin").write_bytes(b"\0" * 40)  # 3 x 4 float32 need 48 bytes
    found = _ir(validate(path))
    assert len(found) == 1 and found[0][:2] == ("main", "w")
    assert "spans bytes 0 to 48 of 'w.bin', past the end of that file (40 bytes)" in found[0][2]


def test_external_location_with_backslash_parent_is_refused(tmp_path):
    path = _external_only(tmp_path, location="..\\w.bin", length=48)
    (tmp_path / "..\\w.bin").write_bytes(b"\0" * 48)  # a file of that literal name exists on POSIX
    found = _ir(validate(path))
    assert len(found) == 1 and "it must be a relative path inside the model's directory" in found[0][2]


def test_external_data_of_an_in_memory_model_is_located_at_its_tensor(tmp_path):
    import onnx
    from .test_soundness import _external_model
    m = onnx.load(_external_model(tmp_path), load_external_data=False)
    found = [f for f in validate(m).findings if f.rule == "ONNX-IR"]
    assert [f.location for f in found] == ["main/tensor:w"]


# --- walker.run: a function's own opset imports are judged where the function is -------------

@pytest.mark.req("PROF-R3")
def test_function_importing_the_default_domain_twice_is_found_at_the_function():
    fn = helper.make_function("local", "F", ["p", "q"], ["r"],
                              [helper.make_node("Mul", ["p", "q"], ["t"]),
                               helper.make_node("Identity", ["t"], ["r"], name="id")],
                              opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx", 13)])
    m = M.model([helper.make_node("Mul", ["a", "b"], ["c"], name="mul")],
                [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("c", [2, 3])],
                functions=[fn], extra_imports=[helper.make_opsetid("local", 1)])
    found = validate(m).findings
    # F is never called: its operators are still judged, at the function, under its own opset
    assert [(f.rule, f.location, f.op_version) for f in found] == [
        ("PROF-R3", "function:local::F", None), ("PROF-R1", "function:local::F/id", 13)]
    assert found[0].message.startswith("model-local function local::F imports the default domain")
    bad = M.model([helper.make_node("Mul", ["a", "b"], ["c"], name="mul")],
                  [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("c", [2, 3])],
                  opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx", 13)])
    model_level = [(f.rule, f.location) for f in validate(bad).findings if f.rule == "PROF-R3"]
    assert model_level == [("PROF-R3", "model")]
    assert all(f.message.startswith("the model imports") for f in validate(bad).findings if f.rule == "PROF-R3")


# --- rules.OperatorRules.check: the memo keys on the attributes ------------------------------

@pytest.mark.req("GEMM-R6")
def test_two_gemms_alike_but_for_alpha_are_judged_apart():
    n0 = helper.make_node("Gemm", ["a", "b"], ["y0"], name="g0")
    n1 = helper.make_node("Gemm", ["a", "b"], ["y1"], name="g1", alpha=1.0)
    n2 = helper.make_node("Gemm", ["a", "b"], ["y2"], name="g2", alpha=2.0)
    m = M.model([n0, n1, n2], [M.vi("a", [2, 3], I32), M.vi("b", [3, 4], I32)],
                [M.vi("y0", [2, 4], I32), M.vi("y1", [2, 4], I32), M.vi("y2", [2, 4], I32)])
    assert [(f.rule, f.location) for f in validate(m).findings] == [("GEMM-R6", "main/g2")]


@pytest.mark.req("PROF-R1")
def test_no_registered_operator_shares_a_name_across_domains():
    # why rules.op_version may look a schema up without its domain (an equivalent mutant)
    import onnx
    names = {(s.domain, s.name) for s in onnx.defs.get_all_schemas_with_history()}
    default = {n for d, n in names if d == ""}
    assert not [(d, n) for d, n in names if d != "" and n in default]


# --- formats._title and report.node_label: requirement titles, unnamed nodes -----------------

def test_text_groups_carry_the_requirement_title():
    out = formats.to_text([Report("a.onnx", findings=_findings(1))])
    assert "  [MUL-R1] Same shape: 1" in out.splitlines()


def test_unnamed_node_without_op_type_is_labelled_node():
    assert Finding("ONNX-CHECKER", "x", graph="main", node_index=4).location == "main/node_4"


# --- walker._walk_body: a function without a default-domain import is still walked ------------

@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("name", ["call", ""])
def test_function_importing_no_default_domain_is_walked_at_its_call(name):
    fn = helper.make_function("local", "F", ["p", "q"], ["r"],
                              [helper.make_node("G", ["p", "q"], ["r"], domain="other", name="gb")],
                              opset_imports=[helper.make_opsetid("other", 1)])
    call = helper.make_node("F", ["a", "b"], ["y"], domain="local", name=name)
    m = M.model([call], [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("y", [2, 3])], functions=[fn],
                extra_imports=[helper.make_opsetid("local", 1), helper.make_opsetid("other", 1)])
    r = validate(m)
    assert r.error is None
    label = name or "F_0"  # an unnamed call is labelled by its index
    assert [(f.rule, f.location) for f in r.findings] == [
        ("PROF-R1", f"main/{label}"), ("PROF-R1", f"main/{label}:local::F/gb"),
        ("PROF-R2", f"main/{label}:local::F/gb/tensor:r")]


# --- walker._walk_graph: where tensors are reported, omitted optional inputs -------------------

def _where(report):
    return [(f.rule, f.location, f.node_index, f.op_version) for f in report.findings]


@pytest.mark.req("PROF-R2")
def test_dynamic_output_of_a_judged_mul_is_reported_at_the_node():
    assert _where(validate(M.mul(["N", 3], ["N", 3], ["N", 3]))) == [
        ("PROF-R2", "main/tensor:a", None, None), ("PROF-R2", "main/tensor:b", None, None),
        ("PROF-R2", "main/mul/tensor:c", 0, 13)]


@pytest.mark.req("PROF-R2")
def test_empty_initializer_is_reported_at_its_tensor():
    import numpy as np
    from onnx import numpy_helper
    w = numpy_helper.from_array(np.zeros((0, 3), np.float32), "w")
    m = M.model([helper.make_node("Mul", ["a", "w"], ["c"], name="mul")], [M.vi("a", [0, 3])],
                [M.vi("c", [0, 3])], initializers=[w])
    found = validate(m).findings
    assert _where(validate(m)) == [
        ("PROF-R2", "main/tensor:w", None, None), ("PROF-R2", "main/tensor:a", None, None),
        ("PROF-R2", "main/mul/tensor:c", 0, 13)]
    assert found[0].message.startswith("initializer 'w' has dimension 0 = 0")


@pytest.mark.req("GEMM-R5", "PROF-R5")
def test_gemm_with_c_omitted_by_an_empty_name_is_only_prof_r5():
    # the walker reads a trailing '' as an absent C (Gemm's own rules see no C and find
    # nothing); the profile refuses the spelling itself (PROF-R5), which conform drops
    m = M.model([helper.make_node("Gemm", ["a", "b", ""], ["y"], name="gemm")],
                [M.vi("a", [2, 3]), M.vi("b", [3, 4])], [M.vi("y", [2, 4])])
    r = validate(m)
    assert r.error is None and [f.rule for f in r.findings] == ["PROF-R5"]


@pytest.mark.req("PROF-R2")
def test_sequence_input_is_a_prof_r2_finding_at_its_tensor():
    m = M.mul([2, 3], [2, 3])
    m.graph.input.append(helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2, 3]))
    found = validate(m).findings
    assert [(f.rule, f.location) for f in found] == [("PROF-R2", "main/tensor:s")]
    assert found[0].message == ("graph input 's' is a sequence, not a tensor; the profile has dense "
                                "tensors of static shape only")


# --- reader._onnx_finding, walker._version / _node_finding: location and operator fields -------

def test_checker_error_naming_no_node_is_located_at_the_graph():
    m = M.mul([2, 3], [2, 3])
    m.graph.output.append(M.vi("zz", [2, 3]))
    found = [f for f in validate(m).findings if f.rule == "ONNX-CHECKER"]
    assert [(f.location, f.node_name, f.op_type) for f in found] == [("main", None, None)]


@pytest.mark.req("PROF-R1")
def test_each_operator_finding_carries_its_own_version_and_domain():
    m = M.model([helper.make_node("Acos", ["a"], ["t"], name="ac"),
                 helper.make_node("Abs", ["t"], ["c"], name="ab")], [M.vi("a", [2, 3])], [M.vi("c", [2, 3])])
    assert [(f.rule, f.location, f.op_type, f.domain, f.op_version) for f in validate(m).findings] == [
        ("PROF-R1", "main/ac", "Acos", "", 7), ("PROF-R1", "main/ab", "Abs", "", 13)]


# --- subinfer: outer tensors typed inside a branch, every node of a function body kept --------

@pytest.mark.req("PROF-R2")
def test_tensors_computed_in_a_branch_from_outer_tensors_have_known_shapes():
    m = M.if_model([helper.make_node("Mul", ["x", "x"], ["u"], name="m1"),
                    helper.make_node("Mul", ["u", "x"], ["t"], name="m2")],
                   [helper.make_node("Mul", ["x", "x"], ["e"], name="m3")])
    assert [(f.rule, f.location) for f in validate(m).findings] == [("PROF-R1", "main/If_0")]


@pytest.mark.req("MUL-R4")
def test_every_node_of_a_function_body_is_judged():
    fn = helper.make_function("local", "F", ["p", "q"], ["r"],
                              [helper.make_node("Identity", ["p"], ["t"], name="id"),
                               helper.make_node("Mul", ["t", "q"], ["r"], name="mb")],
                              opset_imports=[helper.make_opsetid("", 13)])
    call = helper.make_node("F", ["a", "b"], ["y"], domain="local", name="call")
    m = M.model([call], [M.vi("a", [2, 3]), M.vi("b", [3])], [M.vi("y", [2, 3])], functions=[fn],
                extra_imports=[helper.make_opsetid("local", 1)])
    assert [(f.rule, f.location) for f in validate(m).findings] == [
        ("PROF-R1", "main/call"), ("PROF-R1", "main/call:local::F/id"), ("MUL-R4", "main/call:local::F/mb")]


@pytest.mark.req("PROF-R2")
def test_formal_inputs_of_a_function_are_not_judged_again():
    # a dynamic actual input is reported once, where it is defined (the graph input), not
    # again as the function's formal input
    fn = helper.make_function("local", "F", ["p", "q"], ["r"], [helper.make_node("Mul", ["p", "q"], ["r"], name="mb")],
                              opset_imports=[helper.make_opsetid("", 13)])
    call = helper.make_node("F", ["a", "b"], ["y"], domain="local", name="call")
    m = M.model([call], [M.vi("a", ["N", 3]), M.vi("b", ["N", 3])], [M.vi("y", ["N", 3])], functions=[fn],
                extra_imports=[helper.make_opsetid("local", 1)])
    assert [(f.rule, f.location) for f in validate(m).findings] == [
        ("PROF-R2", "main/tensor:a"), ("PROF-R2", "main/tensor:b"), ("PROF-R1", "main/call"),
        ("PROF-R2", "main/call:local::F/mb/tensor:r"), ("PROF-R2", "main/call/tensor:y")]


# --- text._clean: text that is not UTF-8 in a repeated field, and in every field after one ----

def test_non_utf8_names_in_repeated_and_later_fields_are_all_listed(tmp_path):
    m = M.model([helper.make_node("Mul", ["inpxx", "b"], ["c"], name="mul")],
                [M.vi("inpxx", [2, 3]), M.vi("b", [2, 3])], [M.vi("c", [2, 3])])
    data = m.SerializeToString()
    assert data.count(b"inpxx") == 2
    path = tmp_path / "m.onnx"
    path.write_bytes(data.replace(b"inpxx", b"in\xffxx"))
    r = validate(path)
    found = [f for f in r.findings if f.rule == "ONNX-IR"]
    assert r.error is None and [f.location for f in found] == ["model"]
    assert ("2 text field(s) are not UTF-8 (model.graph.node[0].input[0] = 'in\\xffxx', "
            "model.graph.input[0].name = 'in\\xffxx')") in found[0].message



@pytest.mark.parametrize("field", ["input", "output", "name"])
def test_the_quick_text_scan_finds_one_bad_field_alone(field):
    """text.clean_model first asks _any_bytes (no field paths) and walks with _clean only when
    it says yes: a single bad text field, repeated or not, anywhere in a node, must be seen."""
    node = helper.make_node("Mul", ["a", "b"], ["c"], name="mul")
    if field == "name":
        node.name = "zzqq"
    else:
        getattr(node, field)[0] = "zzqq"
    m = M.model([node], [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("c", [2, 3])])
    data = m.SerializeToString()
    assert data.count(b"zzqq") == 1
    parsed = onnx.ModelProto.FromString(data.replace(b"zzqq", b"zz\xffq"))
    suffix = "" if field == "name" else "[0]"
    assert text.clean_model(parsed) == [f"model.graph.node[0].{field}{suffix} = 'zz\\xffq'"]


def test_bad_text_deep_in_a_subgraph_is_refused_by_the_strict_parse():
    """text.parses_as_utf8 (the proto3 twin) must see a string field at any depth: here a node
    name inside an If branch, serialized; a model with only good text parses."""
    inner = helper.make_node("Mul", ["a", "a"], ["t"], name="zzqq")
    branch = helper.make_graph([inner], "then", [], [M.vi("t", [2, 3])])
    node = helper.make_node("If", ["cond"], ["c"], name="if", then_branch=branch, else_branch=branch)
    m = M.model([node], [M.vi("a", [2, 3]), M.vi("cond", [], TensorProto.BOOL)], [M.vi("c", [2, 3])])
    data = m.SerializeToString()
    assert data.count(b"zzqq") == 2
    assert text.parses_as_utf8(onnx.ModelProto.DESCRIPTOR, data)
    bad = data.replace(b"zzqq", b"zz\xffq")
    assert not text.parses_as_utf8(onnx.ModelProto.DESCRIPTOR, bad)
    found = text.clean_model(onnx.ModelProto.FromString(bad), bad)
    assert sorted(found) == [f"model.graph.node[0].attribute[{i}].g.node[0].name = 'zz\\xffq'" for i in (0, 1)]

# --- walker._walk_graph: sparse tensors no profile operator consumes -------------------------

@pytest.mark.req("PROF-R2")
def test_unconsumed_sparse_tensors_are_reported_where_defined():
    m = M.mul([2, 3], [2, 3])
    m.graph.sparse_initializer.append(M.sparse_tensor("s"))
    assert _where(validate(m)) == [("PROF-R2", "main/tensor:s", None, None)]
    k = helper.make_node("Constant", [], ["k"], name="konst", sparse_value=M.sparse_tensor("kv"))
    m = M.model([k, helper.make_node("Mul", ["a", "b"], ["c"], name="mul")],
                [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("c", [2, 3])])
    found = validate(m).findings
    # (an unconsumed Constant is a dead node too: PROF-R4)
    assert [(f.rule, f.location, f.node_index, f.op_type) for f in found] == [
        ("PROF-R4", "main/konst", 0, "Constant"),
        ("PROF-R1", "main/konst", 0, "Constant"), ("PROF-R2", "main/konst/tensor:k", 0, "Constant")]
    assert found[2].message.startswith("output 'k' of Constant node 'konst' is sparse")


# --- declarations._external: a zero length, element types of no fixed size -------------------

def _with_external(tmp_path, tensor, length, file_bytes):
    """A model whose initializer ``tensor`` is stored in s.bin (``file_bytes`` long) with the
    given length entry; an Identity reads it."""
    import onnx
    tensor.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "s.bin"), ("length", str(length))):
        tensor.external_data.add(key=k, value=v)
    out = M.vi("o", list(tensor.dims), tensor.data_type)
    m = M.model([helper.make_node("Identity", [tensor.name], ["o"], name="id")], [], [out],
                initializers=[tensor])
    (tmp_path / "s.bin").write_bytes(b"x" * file_bytes)
    onnx.save(m, tmp_path / "m.onnx")
    return tmp_path / "m.onnx"


@pytest.mark.req("PROF-R2")
def test_external_data_of_length_zero_is_loadable(tmp_path):
    # an empty tensor stored externally has length 0: not negative, so no ONNX-IR finding
    # (the empty tensor itself is outside the profile: PROF-R2)
    t = helper.make_tensor("w", TensorProto.FLOAT, [0, 3], [])
    found = validate(_with_external(tmp_path, t, 0, 0)).findings
    assert [(f.rule, f.location) for f in found] == [
        ("PROF-R2", "main/tensor:w"), ("PROF-R1", "main/id"), ("PROF-R2", "main/id/tensor:o")]


def test_external_strings_are_bounded_by_their_length_entry(tmp_path):
    # a STRING element has no fixed size: only the length entry says how much to read
    def string_tensor():
        return TensorProto(name="s", data_type=TensorProto.STRING, dims=[1])
    short = _ir(validate(_with_external(tmp_path, string_tensor(), 10, 4)))
    assert short == [("main", "s", "external data of tensor 's' spans bytes 0 to 10 of 's.bin', "
                                   "past the end of that file (4 bytes)")]
    assert _ir(validate(_with_external(tmp_path, string_tensor(), 10, 10))) == []


# --- declarations: where declaration findings are located, and what a graph declares itself ---

def _at(report, rule):
    return [f.location for f in report.findings if f.rule == rule]


def test_undefined_element_types_are_located_at_their_tensor():
    m = M.mul([2, 3], [2, 3])
    m.graph.input[0].type.tensor_type.elem_type = TensorProto.UNDEFINED
    assert _at(validate(m), "ONNX-IR") == ["main/tensor:a"]
    m = M.mul([2, 3], [2, 3])
    s = M.sparse_tensor("s")
    s.values.data_type = TensorProto.UNDEFINED
    m.graph.sparse_initializer.append(s)
    assert _at(validate(m), "ONNX-IR") == ["main/tensor:s"]
    fn = helper.make_function("local", "F", ["p", "q"], ["r"], [helper.make_node("Mul", ["p", "q"], ["r"])],
                              opset_imports=[helper.make_opsetid("", 13)])
    fn.value_info.append(M.vi("r", [2, 3], TensorProto.UNDEFINED))
    call = helper.make_node("F", ["a", "b"], ["y"], domain="local", name="call")
    m = M.model([call], [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("y", [2, 3])], functions=[fn],
                extra_imports=[helper.make_opsetid("local", 1)], ir_version=10)
    assert _at(validate(m), "ONNX-IR") == ["function:local::F/tensor:r"]


def test_external_sparse_initializer_of_an_in_memory_model_is_located_at_its_tensors():
    m = M.mul([2, 3], [2, 3])
    s = M.sparse_tensor("s")
    for t in (s.values, s.indices):
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        t.external_data.add(key="location", value="x.bin")
    m.graph.sparse_initializer.append(s)
    assert _at(validate(m), "ONNX-IR") == ["main/tensor:s", "main/tensor:s_i"]


def test_external_tensor_of_a_constant_in_an_in_memory_model_is_located_at_its_tensor():
    import numpy as np
    from onnx import numpy_helper
    value = numpy_helper.from_array(np.ones((2, 3), np.float32), "cv")
    value.ClearField("raw_data")
    value.data_location = TensorProto.EXTERNAL
    value.external_data.add(key="location", value="c.bin")
    m = M.model([helper.make_node("Constant", [], ["k"], name="konst", value=value),
                 helper.make_node("Mul", ["a", "k"], ["o"], name="mul")], [M.vi("a", [2, 3])], [M.vi("o", [2, 3])])
    assert _at(validate(m), "ONNX-IR") == ["main/tensor:cv"]


@pytest.mark.req("PROF-R2")
def test_value_info_of_a_name_nothing_defines_is_no_finding():
    m = M.mul([2, 3], [2, 3])
    m.graph.value_info.append(M.vi("ghost", [2, 3]))
    r = validate(m)
    assert r.error is None and r.findings == []


@pytest.mark.req("PROF-R2")
def test_sparse_initializer_and_value_info_of_one_name_must_agree():
    m = M.mul([2, 3], [2, 3])
    m.graph.sparse_initializer.append(M.sparse_tensor("s"))
    m.graph.value_info.append(M.vi("s", [3, 2]))
    found = [f for f in validate(m).findings if "declared with different types" in f.message]
    assert [(f.rule, f.location) for f in found] == [("PROF-R2", "main/tensor:s")]
    assert "(sparse initializer: sparse float[2,3]; value_info: float[3,2])" in found[0].message


def _custom_with_body(body, name="cu"):
    node = helper.make_node("Custom", ["x"], ["y"], domain="custom", name=name, body=body)
    return M.model([node], [M.vi("x", [2, 3])], [M.vi("y", [2, 3])],
                   extra_imports=[helper.make_opsetid("custom", 1)])


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("kind", ["input", "initializer", "sparse initializer"])
def test_a_subgraphs_own_tensor_may_reuse_an_outer_name_with_another_type(kind):
    import numpy as np
    from onnx import numpy_helper
    x = numpy_helper.from_array(np.ones((3, 2), np.float32), "x")
    inputs, inits, sparse = [], [], []
    if kind == "input":
        inputs = [M.vi("x", [3, 2])]
    elif kind == "initializer":
        inits = [x]
    else:
        sparse = [helper.make_sparse_tensor(x, numpy_helper.from_array(np.array([0], np.int64), "x_i"), [3, 2])]
    body = helper.make_graph([helper.make_node("Identity", ["x"], ["t"], name="inner")], "body", inputs,
                             [M.vi("t", [3, 2])], initializer=inits, sparse_initializer=sparse)
    # the body's x is its own tensor: no disagreement with the outer x
    assert not [f for f in validate(_custom_with_body(body)).findings if "declared with different" in f.message]


def _redeclaring_graphs_model(name):
    def body(k):
        g = helper.make_graph([helper.make_node("Mul", ["x", "x"], [f"t{k}"], name="inner")], f"b{k}", [],
                              [M.vi(f"t{k}", [2, 3])])
        if k == 1:
            g.value_info.append(M.vi("x", [3, 2]))  # redeclares the outer x with another shape
        return g
    node = helper.make_node("Multi", ["x"], ["y"], domain="custom", name=name)
    node.attribute.append(helper.make_attribute("bodies", [body(0), body(1)]))
    return M.model([node], [M.vi("x", [2, 3])], [M.vi("y", [2, 3])],
                   extra_imports=[helper.make_opsetid("custom", 1)])


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("name", ["mu", ""])
def test_a_graph_of_a_graphs_attribute_redeclaring_an_outer_tensor_is_found_there(name):
    found = [f for f in validate(_redeclaring_graphs_model(name)).findings if f.rule == "PROF-R2"]
    assert [f.location for f in found] == [f"main/{name or 'Multi_0'}:bodies[1]/tensor:x"]
    assert "(graph input (in main): float[2,3]; value_info: float[3,2])" in found[0].message


def _function_model(body_nodes, value_info, *, inputs=("p", "q")):
    fn = helper.make_function("local", "F", list(inputs), ["r"], body_nodes,
                              opset_imports=[helper.make_opsetid("", 13)])
    fn.value_info.extend(value_info)
    call = helper.make_node("F", ["a", "b", "cond"][:len(inputs)], ["y"], domain="local", name="call")
    return M.model([call], [M.vi("a", [2, 3]), M.vi("b", [2, 3]), M.vi("cond", [], TensorProto.BOOL)][:len(inputs)],
                   [M.vi("y", [2, 3])], functions=[fn], extra_imports=[helper.make_opsetid("local", 1)],
                   ir_version=10)


@pytest.mark.req("PROF-R2")
def test_two_value_infos_of_a_function_disagreeing_are_found_at_the_function():
    m = _function_model([helper.make_node("Mul", ["p", "q"], ["t"]), helper.make_node("Mul", ["t", "q"], ["r"])],
                        [M.vi("t", [2, 3]), M.vi("t", [3, 2])])
    found = [f for f in validate(m).findings if f.rule == "PROF-R2"]
    assert [f.location for f in found] == ["function:local::F/tensor:t"]


@pytest.mark.req("PROF-R2")
def test_a_branch_inside_a_function_redeclaring_its_tensor_is_found_in_the_branch():
    # this crashed (ValueError) before the function's declarations were given their path
    then = helper.make_graph([helper.make_node("Mul", ["t", "t"], ["u"], name="bm")], "then", [],
                             [M.vi("u", [2, 3])], value_info=[M.vi("t", [3, 2])])
    other = helper.make_graph([helper.make_node("Mul", ["t", "t"], ["v"], name="bm2")], "else", [],
                              [M.vi("v", [2, 3])])
    m = _function_model([helper.make_node("Mul", ["p", "q"], ["t"], name="m1"),
                         helper.make_node("If", ["c"], ["r"], name="if", then_branch=then, else_branch=other)],
                        [M.vi("t", [2, 3])], inputs=("p", "q", "c"))
    r = validate(m)
    assert r.error is None
    found = [f for f in r.findings if "declared with different types" in f.message]
    assert [f.location for f in found] == ["function:local::F/if:then_branch/tensor:t"]
    assert "(value_info (in function:local::F): float[2,3]; value_info: float[3,2])" in found[0].message


def test_attribute_reference_in_a_graphs_attribute_inside_a_function_is_allowed():
    # a function body may refer to its attributes at any depth, here in a graph of a list of graphs
    body = helper.make_graph([helper.make_node("Gemm", ["x", "x"], ["t"], name="inner")], "b0", [],
                             [M.vi("t", [2, 2])])
    body.node[0].attribute.append(AttributeProto(name="alpha", type=AttributeProto.FLOAT, ref_attr_name="scale"))
    multi = helper.make_node("Multi", ["p"], ["r"], domain="custom", name="mu")
    multi.attribute.append(helper.make_attribute("bodies", [body]))
    fn = helper.make_function("local", "F", ["p"], ["r"], [multi], attributes=["scale"],
                              opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("custom", 1)])
    call = helper.make_node("F", ["a"], ["y"], domain="local", name="call", scale=2.0)
    m = M.model([call], [M.vi("a", [2, 2])], [M.vi("y", [2, 2])], functions=[fn],
                extra_imports=[helper.make_opsetid("local", 1), helper.make_opsetid("custom", 1)])
    r = validate(m)
    assert r.error is None and _at(r, "ONNX-IR") == []
    # outside a function the same reference is a finding (the control that the check is alive)
    assert _at(validate(_graphs_ref_model(body)), "ONNX-IR") == ["main/mu:bodies[0]/inner"]


def _graphs_ref_model(body):
    multi = helper.make_node("Multi", ["a"], ["y"], domain="custom", name="mu")
    multi.attribute.append(helper.make_attribute("bodies", [body]))
    return M.model([multi], [M.vi("a", [2, 2])], [M.vi("y", [2, 2])],
                   extra_imports=[helper.make_opsetid("custom", 1)])


# --- subinfer: branches inside a function body are typed from the body's tensors --------------
# (onnx's inference of the main graph keeps the types inside its own subgraphs, but a function
# body is inferred on its own, so the types of a branch in it come from outer_types)

def _function_with_if(then_nodes, else_nodes):
    then = helper.make_graph(then_nodes, "then", [], [M.vi("t", [2, 3])])
    other = helper.make_graph(else_nodes, "else", [], [M.vi("e", [2, 3])])
    return _function_model([helper.make_node("If", ["c"], ["r"], name="if", then_branch=then, else_branch=other)],
                           [], inputs=("p", "q", "c"))


@pytest.mark.req("PROF-R2")
def test_tensors_of_a_branch_in_a_function_are_typed_from_the_body():
    m = _function_with_if([helper.make_node("Mul", ["p", "p"], ["u"], name="m1"),
                           helper.make_node("Mul", ["u", "q"], ["t"], name="m2")],
                          [helper.make_node("Mul", ["p", "q"], ["e"], name="m3")])
    r = validate(m)
    assert r.error is None
    assert [(f.rule, f.location) for f in r.findings] == [("PROF-R1", "main/call"),
                                                          ("PROF-R1", "main/call:local::F/if")]


@pytest.mark.req("PROF-R2")
def test_tensors_read_only_by_a_nested_branch_are_typed_too():
    inner_then = helper.make_graph([helper.make_node("Mul", ["p", "p"], ["it"], name="im")], "it", [],
                                   [M.vi("it", [2, 3])])
    inner_else = helper.make_graph([helper.make_node("Mul", ["q", "q"], ["ie"], name="im2")], "ie", [],
                                   [M.vi("ie", [2, 3])])
    m = _function_with_if([helper.make_node("If", ["c"], ["z"], name="inner", then_branch=inner_then,
                                            else_branch=inner_else),
                           helper.make_node("Mul", ["z", "z"], ["t"], name="after")],
                          [helper.make_node("Mul", ["p", "q"], ["e"], name="m3")])
    r = validate(m)
    assert r.error is None
    assert [(f.rule, f.location) for f in r.findings] == [
        ("PROF-R1", "main/call"), ("PROF-R1", "main/call:local::F/if"),
        ("PROF-R1", "main/call:local::F/if:then_branch/inner")]


@pytest.mark.req("PROF-R1")
def test_a_graphs_attribute_inside_a_branch_is_walked():
    def body(k):
        return helper.make_graph([helper.make_node("Mul", ["x", "x"], [f"q{k}"], name="inner")], f"b{k}", [],
                                 [M.vi(f"q{k}", [2, 3])])
    multi = helper.make_node("Multi", ["x"], ["mo"], domain="custom", name="mu")
    multi.attribute.append(helper.make_attribute("bodies", [body(0)]))
    m = M.if_model([multi, helper.make_node("Mul", ["x", "x"], ["t"], name="m1")],
                   [helper.make_node("Mul", ["x", "x"], ["e"], name="m3")])
    m.opset_import.append(helper.make_opsetid("custom", 1))
    r = validate(m)
    assert r.error is None
    assert [(f.rule, f.location) for f in r.findings] == [
        ("PROF-R1", "main/If_0"), ("PROF-R1", "main/If_0:then_branch/mu"),
        ("PROF-R2", "main/If_0:then_branch/mu/tensor:mo")]


def _with_custom_import(m):
    m.functions[0].opset_import.append(helper.make_opsetid("custom", 1))
    m.opset_import.append(helper.make_opsetid("custom", 1))
    return m


@pytest.mark.req("PROF-R2")
def test_a_branch_with_an_operator_onnx_cannot_infer_still_types_the_rest():
    # inference of the branch is best effort: the custom node's output stays unknown, the Muls
    # after it are typed
    m = _with_custom_import(_function_with_if(
        [helper.make_node("Cx", ["p"], ["k"], domain="custom", name="cx"),
         helper.make_node("Mul", ["p", "p"], ["u"], name="m1"), helper.make_node("Mul", ["u", "q"], ["t"], name="m2")],
        [helper.make_node("Mul", ["p", "q"], ["e"], name="m3")]))
    assert [(f.rule, f.location) for f in validate(m).findings] == [
        ("PROF-R1", "main/call"), ("PROF-R1", "main/call:local::F/if"),
        ("PROF-R1", "main/call:local::F/if:then_branch/cx"), ("PROF-R2", "main/call:local::F/if:then_branch/cx/tensor:k")]


@pytest.mark.req("PROF-R2")
def test_an_outer_tensor_of_unknown_type_does_not_hide_the_next_ones():
    # the branch reads a0 (unknown: a custom node's output) and, after it in name order, p and q
    then = helper.make_graph([helper.make_node("Identity", ["a0"], ["w"], name="idw"),
                              helper.make_node("Mul", ["p", "p"], ["u"], name="m1"),
                              helper.make_node("Mul", ["u", "q"], ["t"], name="m2")], "then", [], [M.vi("t", [2, 3])])
    other = helper.make_graph([helper.make_node("Mul", ["p", "q"], ["e"], name="m3")], "else", [], [M.vi("e", [2, 3])])
    m = _with_custom_import(_function_model(
        [helper.make_node("Cx", ["p"], ["a0"], domain="custom", name="cx"),
         helper.make_node("If", ["c"], ["r"], name="if", then_branch=then, else_branch=other)], [], inputs=("p", "q", "c")))
    assert [(f.rule, f.location) for f in validate(m).findings if f.rule == "PROF-R2"] == [
        ("PROF-R2", "main/call:local::F/cx/tensor:a0"), ("PROF-R2", "main/call:local::F/if:then_branch/idw/tensor:w")]


@pytest.mark.req("PROF-R2")
def test_outputs_of_a_nested_branch_typed_only_by_inference_are_known():
    untyped = helper.make_empty_tensor_value_info
    inner_then = helper.make_graph([helper.make_node("Mul", ["p", "p"], ["it"], name="im")], "it", [], [untyped("it")])
    inner_else = helper.make_graph([helper.make_node("Mul", ["q", "q"], ["ie"], name="im2")], "ie", [], [untyped("ie")])
    m = _function_with_if([helper.make_node("If", ["c"], ["z"], name="inner", then_branch=inner_then,
                                            else_branch=inner_else),
                           helper.make_node("Mul", ["z", "z"], ["t"], name="after")],
                          [helper.make_node("Mul", ["p", "q"], ["e"], name="m3")])
    # z (the inner If's output) is typed from p and q, which only the nested branches read
    assert not [f for f in validate(m).findings if f.tensor in ("z", "t")]


# --- declarations._elem_types: the element type inside sparse, sequence, optional, map types ---

def test_undefined_element_types_inside_composite_types_are_found():
    U = TensorProto.UNDEFINED
    seq = helper.make_tensor_sequence_value_info("sq", U, [2])
    opt = helper.make_value_info("op", helper.make_optional_type_proto(helper.make_tensor_type_proto(U, [2])))
    mp = helper.make_value_info("mp", helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(U, [2])))
    sp = helper.make_sparse_tensor_value_info("sp", U, [2])
    m = M.mul([2, 3], [2, 3])
    m.graph.input.extend([seq, opt, mp, sp])
    found = [f for f in validate(m).findings if f.rule == "ONNX-IR"]
    assert [f.location for f in found] == ["main/tensor:sq", "main/tensor:op", "main/tensor:mp", "main/tensor:sp"]
    assert [f.message.split(" has ")[0] for f in found] == [
        "graph input 'sq'", "graph input 'op'", "graph input 'mp'", "graph input 'sp'"]


def test_external_tensors_of_a_tensors_attribute_are_located_at_their_tensor():
    import numpy as np
    from onnx import numpy_helper
    ts = []
    for name in ("t0", "t1"):
        t = numpy_helper.from_array(np.ones((2,), np.float32), name)
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        t.external_data.add(key="location", value="t.bin")
        ts.append(t)
    node = helper.make_node("Custom", ["x"], ["y"], domain="custom", name="cu")
    node.attribute.append(helper.make_attribute("weights", ts))
    m = M.model([node], [M.vi("x", [2, 3])], [M.vi("y", [2, 3])], extra_imports=[helper.make_opsetid("custom", 1)])
    assert _at(validate(m), "ONNX-IR") == ["main/tensor:t0", "main/tensor:t1"]


# --- text._clean: a field after a message field is still read ---------------------------------

def test_non_utf8_text_after_a_message_field_is_found(tmp_path):
    m = M.mul([2, 3], [2, 3])
    m.graph.input[0].doc_string = "docxx"  # after the input's type (a message field)
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString().replace(b"docxx", b"do\xffxx"))
    found = [f for f in validate(path).findings if f.rule == "ONNX-IR"]
    assert len(found) == 1
    assert "1 text field(s) are not UTF-8 (model.graph.input[0].doc_string = 'do\\xffxx')" in found[0].message


# --- types.type_proto_of, walker._walk_body: what a call passes into a function body -----------

def _call_model(inputs, call_inputs=("a", "b"), functions=None):
    fn = helper.make_function("local", "F", ["p", "q"], ["r"], [helper.make_node("Mul", ["p", "q"], ["r"], name="mb")],
                              opset_imports=[helper.make_opsetid("", 13)])
    call = helper.make_node("F", list(call_inputs), ["y"], domain="local", name="call")
    return M.model([call], inputs, [M.vi("y", [2, 3])], functions=functions or [fn],
                   extra_imports=[helper.make_opsetid("local", 1)])


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("a", [M.vi("a", [2, 3], 99), M.vi("a", None)], ids=["unknown-element-type", "no-shape"])
def test_a_call_with_an_odd_actual_input_is_judged_not_crashed(a):
    r = validate(_call_model([a, M.vi("b", [2, 3])]))
    assert r.error is None
    assert ("PROF-R2", "main/call:local::F/mb/tensor:r") in [(f.rule, f.location) for f in r.findings]


@pytest.mark.req("MUL-R2")
def test_a_sparse_tensor_passed_to_a_function_stays_sparse_in_its_body():
    m = _call_model([M.vi("b", [2, 3])], call_inputs=("s", "b"))
    m.graph.sparse_initializer.append(M.sparse_tensor("s"))
    found = [(f.rule, f.location) for f in validate(m).findings if f.rule != "ONNX-INFERENCE"]
    # (s is also reported where it is defined: the walker sees its use only inside the body)
    assert found == [("PROF-R1", "main/call"), ("MUL-R2", "main/call:local::F/mb"), ("PROF-R2", "main/tensor:s")]


def _g():
    return helper.make_function("local", "G", ["p"], ["r"], [helper.make_node("Mul", ["p", "p"], ["r"], name="gm")],
                                opset_imports=[helper.make_opsetid("", 13)])


def _f_calling_g(name="F", in_branch=False):
    imports = [helper.make_opsetid("", 13), helper.make_opsetid("local", 1)]
    call_g = helper.make_node("G", ["p"], ["t"], domain="local", name="cg")
    if not in_branch:
        return helper.make_function("local", name, ["p", "q"], ["r"],
                                    [call_g, helper.make_node("Mul", ["t", "q"], ["r"], name="mb")], opset_imports=imports)
    # the branch outputs are left untyped: the If's output is typed only if G's output is
    untyped = helper.make_empty_tensor_value_info
    then = helper.make_graph([call_g, helper.make_node("Mul", ["t", "q"], ["u"], name="mb")], "then", [], [untyped("u")])
    other = helper.make_graph([helper.make_node("Mul", ["p", "q"], ["e"], name="me")], "else", [], [untyped("e")])
    return helper.make_function("local", name, ["p", "q", "c"], ["r"],
                                [helper.make_node("If", ["c"], ["r"], name="if", then_branch=then, else_branch=other)],
                                opset_imports=imports)


@pytest.mark.req("PROF-R2")
def test_a_function_called_from_a_function_body_types_what_it_returns():
    r = validate(_call_model([M.vi("a", [2, 3]), M.vi("b", [2, 3])], functions=[_f_calling_g(), _g()]))
    assert [(f.rule, f.location) for f in r.findings] == [("PROF-R1", "main/call"), ("PROF-R1", "main/call:local::F/cg")]


@pytest.mark.req("PROF-R2")
def test_a_function_called_from_a_branch_of_a_function_body_types_what_it_returns():
    call = helper.make_node("F", ["a", "b", "cond"], ["y"], domain="local", name="call")
    m = M.model([call], [M.vi("a", [2, 3]), M.vi("b", [2, 3]), M.vi("cond", [], TensorProto.BOOL)], [M.vi("y", [2, 3])],
                functions=[_f_calling_g(in_branch=True), _g()], extra_imports=[helper.make_opsetid("local", 1)])
    r = validate(m)
    assert [(f.rule, f.location) for f in r.findings] == [
        ("PROF-R1", "main/call"), ("PROF-R1", "main/call:local::F/if"), ("PROF-R1", "main/call:local::F/if:then_branch/cg"),
        *_untyped_branch_outputs("F")]


def _untyped_branch_outputs(fn):
    # the branch outputs of _f_calling_g(in_branch=True) are declared without a type
    return [("PROF-R2", f"function:local::{fn}/if:else_branch/tensor:e"),
            ("PROF-R2", f"function:local::{fn}/if:then_branch/tensor:u")]


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("in_branch", [False, True])
def test_a_never_called_function_calling_another_is_judged_by_its_operators(in_branch):
    fns = [helper.make_function("local", "F", ["p", "q"], ["r"], [helper.make_node("Mul", ["p", "q"], ["r"], name="mb")],
                                opset_imports=[helper.make_opsetid("", 13)]), _f_calling_g("H", in_branch), _g()]
    r = validate(_call_model([M.vi("a", [2, 3]), M.vi("b", [2, 3])], functions=fns))
    # types are unknown in a never-called function: its operators are judged, its tensors not
    expected = [("PROF-R1", "main/call"), ("PROF-R1", "function:local::H/cg")]
    if in_branch:
        expected[1:] = [("PROF-R1", "function:local::H/if"), ("PROF-R1", "function:local::H/if:then_branch/cg"),
                        *_untyped_branch_outputs("H")]
    assert r.error is None and [(f.rule, f.location) for f in r.findings] == expected


@pytest.mark.req("PROF-R1")
def test_calls_are_followed_32_deep_and_no_further():
    # F0 calls F1 ... calls F39, each also holding an Abs: the walk stops below 32 nested calls
    # (a guard against runaway nesting; every call is a PROF-R1 finding already)
    n = 40
    imports = [helper.make_opsetid("", 13), helper.make_opsetid("local", 1)]
    fns = []
    for i in range(n):
        body = [helper.make_node("Abs", ["p"], ["t"], name=f"abs{i}")]
        body.append(helper.make_node(f"F{i + 1}", ["t"], ["r"], domain="local", name=f"c{i + 1}") if i + 1 < n
                    else helper.make_node("Abs", ["t"], ["r"], name="last"))
        fns.append(helper.make_function("local", f"F{i}", ["p"], ["r"], body, opset_imports=imports))
    call = helper.make_node("F0", ["a"], ["y"], domain="local", name="c0")
    m = M.model([call], [M.vi("a", [2, 3])], [M.vi("y", [2, 3])], functions=fns,
                extra_imports=[helper.make_opsetid("local", 1)])
    walked = [f.location for f in validate(m).findings if f.location.startswith("main/") and "/abs" in f.location]
    assert len(walked) == 33  # F0 .. F32 (33 nested bodies), then the guard


# --- subinfer.substitute_attributes: a call's attributes, the function's defaults -------------

def _int_gemm_function(call_attrs, default=None):
    # F's Gemm takes transB as written and alpha from F's attribute "scale"
    gemm = helper.make_node("Gemm", ["p", "q"], ["r"], name="gb", transB=1)
    gemm.attribute.append(AttributeProto(name="alpha", type=AttributeProto.FLOAT, ref_attr_name="scale"))
    fn = helper.make_function("local", "F", ["p", "q"], ["r"], [gemm], opset_imports=[helper.make_opsetid("", 13)],
                              attributes=[] if default is not None else ["scale"])
    if default is not None:
        fn.attribute_proto.append(helper.make_attribute("scale", default))
    call = helper.make_node("F", ["a", "b"], ["y"], domain="local", name="call", **call_attrs)
    return M.model([call], [M.vi("a", [2, 3], I32), M.vi("b", [4, 3], I32)], [M.vi("y", [2, 4], I32)],
                   functions=[fn], extra_imports=[helper.make_opsetid("local", 1)])


@pytest.mark.req("GEMM-R6")
@pytest.mark.parametrize("call_attrs,default", [({"scale": 2.0}, None), ({}, 2.0)], ids=["given", "default"])
def test_an_attribute_reference_takes_the_calls_value_or_the_default(call_attrs, default):
    r = validate(_int_gemm_function(call_attrs, default))
    assert r.error is None
    assert [(f.rule, f.location) for f in r.findings] == [("PROF-R1", "main/call"), ("GEMM-R6", "main/call:local::F/gb")]
    assert "alpha=2" in r.findings[1].message


# --- walker._visit: only a Constant's sparse_value makes an output sparse ----------------------

@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("op", ["Cx", "Constant"])
def test_a_custom_node_with_a_sparse_value_attribute_has_an_output_of_unknown_type(op):
    node = helper.make_node(op, [], ["k"], domain="custom", name="cx", sparse_value=M.sparse_tensor("kv"))
    m = M.model([node, helper.make_node("Mul", ["a", "b"], ["c"], name="mul")],
                [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("c", [2, 3])],
                extra_imports=[helper.make_opsetid("custom", 1)])
    found = [f for f in validate(m).findings if f.tensor == "k"]
    assert [(f.rule, f.location) for f in found] == [("PROF-R2", "main/cx/tensor:k")]
    assert "has no known rank" in found[0].message


# --- walker._walk_subgraph: a subgraph's own inputs are judged ---------------------------------

@pytest.mark.req("PROF-R2")
def test_an_untyped_loop_body_input_is_reported_at_the_body():
    from onnx import TypeProto
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="ci"), helper.make_node("Mul", ["v", "v"], ["v2"], name="lm")],
        "body", [M.vi("i", [], TensorProto.INT64), M.vi("cond_in", [], TensorProto.BOOL), helper.make_value_info("v", TypeProto())],
        [M.vi("cond_out", [], TensorProto.BOOL), helper.make_value_info("v2", TypeProto())])
    loop = helper.make_node("Loop", ["n", "cond", "x"], ["y"], name="loop", body=body)
    m = M.model([loop], [M.vi("n", [], TensorProto.INT64), M.vi("cond", [], TensorProto.BOOL), M.vi("x", [2, 3])],
                [M.vi("y", [2, 3])])
    assert [(f.rule, f.location) for f in validate(m).findings] == [
        ("PROF-R1", "main/loop"), ("PROF-R2", "main/loop:body/tensor:v"), ("PROF-R1", "main/loop:body/ci"),
        ("PROF-R2", "main/loop:body/lm/tensor:v2")]


# --- reader.check_and_infer: when strict inference fails, a lenient one still types the rest ----

@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("bad,rules", [
    # the bad node's result is read by nothing: it is a dead node as well (PROF-R4)
    (helper.make_node("Mul", ["a", "n"], ["z"], name="bad"), ["PROF-R4", "ONNX-INFERENCE", "MUL-R3"]),
    (helper.make_node("Gemm", ["a", "b"], ["z"], name="bad"), ["PROF-R4", "ONNX-INFERENCE", "GEMM-R1", "PROF-R2"])],
    ids=["type-error", "shape-error"])
def test_after_a_strict_inference_failure_the_other_tensors_keep_their_types(bad, rules):
    m = M.model([bad, helper.make_node("Mul", ["a", "a"], ["u"], name="m1"), helper.make_node("Mul", ["u", "b"], ["c"], name="m2")],
                [M.vi("a", [2, 3]), M.vi("b", [2, 3]), M.vi("n", [2, 3], I32)], [M.vi("c", [2, 3])])
    found = validate(m).findings
    # u (written nowhere, only inferred) is typed: no finding on m1 or m2
    assert [f.rule for f in found] == rules and {f.node_name for f in found} == {"bad"}


# --- reader.check_and_infer: a model with text that is not UTF-8 is judged on decoded names ----

@pytest.mark.req("MUL-R1")
def test_findings_on_a_node_named_in_bytes_that_are_not_utf8_carry_text(tmp_path):
    m = M.mul([2, 3], [3, 2])
    m.graph.node[0].name = "mulxx"
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString().replace(b"mulxx", b"mu\xffxx"))
    r = validate(path)
    found = [f for f in r.findings if f.rule == "MUL-R1"]
    assert [(f.location, f.node_name) for f in found] == [("main/mu\\xffxx", "mu\\xffxx")]
    json.dumps(formats.to_json_obj([r]))  # every field is text


@pytest.mark.req("PROF-R2")
def test_a_branch_with_a_type_error_still_types_the_rest():
    # inference of a body does not check types (MUL-R3 reports the mismatch): the rest is typed
    then = [helper.make_node("Cast", ["p"], ["pi"], name="ca", to=I32), helper.make_node("Mul", ["p", "pi"], ["z"], name="bad"),
            helper.make_node("Mul", ["p", "p"], ["u"], name="m1"), helper.make_node("Mul", ["u", "q"], ["t"], name="m2")]
    m = _function_with_if(then, [helper.make_node("Mul", ["p", "q"], ["e"], name="m3")])
    found = [(f.rule, f.location) for f in validate(m).findings if f.rule != "PROF-R1"]
    assert found == [("ONNX-INFERENCE", "main/call"), ("MUL-R3", "main/call:local::F/if:then_branch/bad")]


# --- api.validate and reader.load: what names a report, the limits, the refusals ---------------

def test_a_modelproto_without_graph_is_unreadable_and_named_modelproto():
    import onnx
    r = validate(onnx.ModelProto())
    assert (r.source, r.error, r.findings) == ("<ModelProto>", "the ModelProto holds no graph", [])


def test_a_modelproto_is_located_as_modelproto_in_sarif():
    r = validate(M.mul([2, 3], [3, 2]))
    res = formats.to_sarif_obj([r])["runs"][0]["results"]
    assert {x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in res} == {"%3CModelProto%3E"}


def test_an_unreadable_file_is_located_by_its_raw_path_in_sarif(tmp_path):
    import os
    path = os.path.join(os.fsdecode(tmp_path), os.fsdecode(b"e\xff.onnx"))
    open(path, "wb").close()
    r = validate(path)
    assert r.error is not None and r.error.endswith("empty file, not an ONNX model")
    note = formats.to_sarif_obj([r])["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("/e%FF.onnx")


def test_a_modelproto_of_exactly_the_size_limit_is_read(monkeypatch):
    m = M.mul([2, 3], [2, 3])
    monkeypatch.setattr(reader, "MAX_BYTES", m.ByteSize())
    assert validate(m).error is None
    monkeypatch.setattr(reader, "MAX_BYTES", m.ByteSize() - 1)
    assert validate(m).error == (f"the ModelProto serializes to {m.ByteSize()} bytes, over the 2 GiB limit; "
                                 "keep the weights as external data")


def test_an_argument_neither_path_nor_modelproto_is_a_type_error_naming_its_type():
    with pytest.raises(TypeError, match=r"^sonnx.validate: expected a path \(str or os.PathLike\) or an "
                                        r"onnx.ModelProto, got int$"):
        validate(5)


@pytest.mark.parametrize("exc,error", [
    (RecursionError("deep"), "<ModelProto>: graphs nested too deeply to validate"),
    (KeyError("k"), "<ModelProto>: could not validate (KeyError: 'k')")])
def test_a_failure_inside_the_walk_is_an_error_never_a_verdict(monkeypatch, exc, error):
    from sonnx.validate import walker

    def fail(self):
        raise exc
    monkeypatch.setattr(walker.Walker, "run", fail)
    r = validate(M.mul([2, 3], [2, 3]))
    assert (r.error, r.findings) == (error, [])


def test_external_data_of_a_model_named_without_directory_is_found(tmp_path, monkeypatch):
    from .test_soundness import _external_model
    _external_model(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = validate("ext.onnx")  # its data is in w.bin, in the current directory
    assert r.error is None and r.findings == []


# --- reader.check_and_infer, subinfer.infer_body: shapes known only by data propagation --------

def _shape_fed(x, y, out, suffix=""):
    # k = ConstantOfShape(Shape(x)): its shape is the value of Shape(x), known by data propagation
    one = helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])
    return [helper.make_node("Shape", [x], ["s"], name="sh"),
            helper.make_node("ConstantOfShape", ["s"], ["k"], name="cs", value=one),
            helper.make_node("Mul", ["k", y], [out], name="mul" + suffix)]


@pytest.mark.req("PROF-R2")
@pytest.mark.parametrize("strict_fails", [False, True])
def test_a_shape_known_by_data_propagation_is_static(strict_fails):
    bad = [helper.make_node("Gemm", ["a", "b"], ["z"], name="bad")] if strict_fails else []
    m = M.model(bad + _shape_fed("a", "b", "c"), [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("c", [2, 3])])
    found = [(f.rule, f.node_name) for f in validate(m).findings if f.node_name != "bad"]
    assert found == [("PROF-R1", "sh"), ("PROF-R1", "cs")]


@pytest.mark.req("PROF-R2")
def test_a_shape_known_by_data_propagation_in_a_function_branch_is_static():
    m = _function_with_if(_shape_fed("p", "q", "t"), [helper.make_node("Mul", ["p", "q"], ["e"], name="m3")])
    assert [(f.rule, f.location) for f in validate(m).findings] == [
        ("PROF-R1", "main/call"), ("PROF-R1", "main/call:local::F/if"),
        ("PROF-R1", "main/call:local::F/if:then_branch/sh"), ("PROF-R1", "main/call:local::F/if:then_branch/cs")]
