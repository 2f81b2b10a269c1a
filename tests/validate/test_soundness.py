"""Issue 11: models that broke the profile (or could not be loaded) and were called conformant,
and inputs that gave a traceback. Each case is now a finding or a clear error."""
from __future__ import annotations

import json
import os
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from sonnx.cli import main
from sonnx.validate import validate
from sonnx.text import neutral, path_uri

from . import models as M


def rules(report):
    return [f.rule for f in report.findings]


# ---------------------------------------------------------------- 1. declarations that disagree
@pytest.mark.req("PROF-R2", "MUL-R4")
@pytest.mark.parametrize("where", ["value_info", "output"])
def test_second_declaration_of_an_input_is_a_finding(where):
    m = M.mul([2, 3], [3])
    getattr(m.graph, where).append(M.vi("b", [2, 3]))
    r = validate(m)
    assert not r.conforms
    f = [f for f in r.findings if f.rule == "PROF-R2"]
    assert len(f) == 1 and f[0].tensor == "b" and "float[3]" in f[0].message and "float[2,3]" in f[0].message
    assert "MUL-R4" in rules(r)  # the input's own declaration (the run-time contract) is judged


@pytest.mark.req("PROF-R2", "GEMM-R4")
def test_linear_bias_hidden_by_value_info_is_found():
    m = M.gemm([2, 3], [3, 4], [4])
    m.graph.value_info.append(M.vi("c", [2, 4]))
    assert {"PROF-R2", "GEMM-R4"} <= set(rules(validate(m)))


@pytest.mark.req("PROF-R2")
def test_symbolic_input_dimension_hidden_by_value_info_is_found():
    m = M.mul(["N", 3], ["N", 3], [2, 3])
    m.graph.value_info.extend([M.vi("a", [2, 3]), M.vi("b", [2, 3])])
    r = validate(m)
    assert rules(r).count("PROF-R2") >= 4  # two disagreements, two symbolic inputs
    assert any("dimension 0 = 'N'" in f.message for f in r.findings)


@pytest.mark.req("PROF-R2")
def test_node_output_declared_twice_differently_is_found():
    m = M.mul([2, 3], [2, 3])
    m.graph.value_info.append(M.vi("c", [3]))  # the graph output says (2, 3)
    r = validate(m)
    assert rules(r) == ["PROF-R2"] and r.findings[0].tensor == "c"


@pytest.mark.req("PROF-R2")
def test_equal_declarations_conform():
    m = M.mul([2, 3], [2, 3])
    m.graph.value_info.extend([M.vi("b", [2, 3]), M.vi("c", [2, 3])])
    assert validate(m).conforms


@pytest.mark.req("PROF-R2")
def test_subgraph_declaration_of_an_outer_tensor_must_agree():
    then = [helper.make_node("Mul", ["x", "x"], ["t"])]
    other = [helper.make_node("Mul", ["x", "x"], ["e"])]
    m = M.if_model(then, other)
    then_branch = [a for a in m.graph.node[0].attribute if a.name == "then_branch"][0]
    then_branch.g.value_info.append(M.vi("x", [3]))
    r = validate(m)
    found = [f for f in r.findings if f.rule == "PROF-R2"]
    assert len(found) == 1 and found[0].tensor == "x" and found[0].graph == "main/If_0:then_branch"
    assert "in main" in found[0].message


@pytest.mark.req("PROF-R2")
def test_function_value_info_declared_twice_differently():
    body = [helper.make_node("Mul", ["p", "q"], ["r"])]
    m = M.function_model(body, ["x", "x"], [M.vi("x", [2, 3])])
    if not hasattr(m.functions[0], "value_info"):
        pytest.skip("this onnx has no FunctionProto.value_info")
    m.functions[0].value_info.extend([M.vi("r", [2, 3]), M.vi("r", [3])])
    found = [f for f in validate(m).findings if f.rule == "PROF-R2"]
    assert len(found) == 1 and found[0].graph == "function:local::F"


# ---------------------------------------------------------------- 2. overridable initializers
@pytest.mark.req("PROF-R2")
def test_overridable_initializer_is_judged_as_an_input():
    w = numpy_helper.from_array(np.ones((1, 3), np.float32), "b")
    m = M.model([helper.make_node("Mul", ["a", "b"], ["c"])],
                [M.vi("a", ["N", 3]), M.vi("b", ["N", 3])], [M.vi("c", ["N", 3])], initializers=[w])
    r = validate(m)
    b = [f for f in r.findings if f.tensor == "b"]
    assert any("override" in f.message and "'N'" in f.message for f in b)  # symbolic input
    assert any("declared with different types" in f.message for f in b)  # input vs initializer


@pytest.mark.req("PROF-R2")
def test_overridable_initializer_with_matching_declaration_conforms():
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "b")
    m = M.model([helper.make_node("Mul", ["a", "b"], ["c"])],
                [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("c", [2, 3])], initializers=[w])
    assert validate(m).conforms


# ---------------------------------------------------------------- 3. conformant implies loadable
def test_output_of_undefined_element_type_is_found():
    m = M.mul([2, 3], [2, 3])
    m.graph.output[0].type.tensor_type.elem_type = TensorProto.UNDEFINED
    r = validate(m)
    assert "ONNX-IR" in rules(r) and any("UNDEFINED" in f.message for f in r.findings)
    ort = pytest.importorskip("onnxruntime")
    with pytest.raises(Exception, match="data type 0"):  # the loader the finding stands for
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])


def test_attribute_reference_outside_a_function_is_found():
    m = M.gemm([2, 3], [3, 4], [2, 4])
    m.graph.node[0].attribute.append(helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT))
    r = validate(m)
    f = [f for f in r.findings if f.rule == "ONNX-IR"]
    assert len(f) == 1 and f[0].node_name == "gemm" and "outside any function body" in f[0].message


def _external_model(tmp_path):
    w = numpy_helper.from_array(np.ones((3, 4), np.float32), "w")
    m = M.model([helper.make_node("Gemm", ["a", "w"], ["y"], name="linear")],
                [M.vi("a", [2, 3])], [M.vi("y", [2, 4])], initializers=[w])
    path = tmp_path / "ext.onnx"
    onnx.save(m, path, save_as_external_data=True, location="w.bin", size_threshold=0)
    return path


def _edit_external(path, **entries):
    m = onnx.load(path, load_external_data=False)
    info = m.graph.initializer[0].external_data
    kept = {e.key: e.value for e in info if e.key not in entries}
    kept.update({k: str(v) for k, v in entries.items()})
    del info[:]
    for k, v in kept.items():
        info.add(key=k, value=v)
    onnx.save(m, path)


def test_external_data_inside_its_file_conforms(tmp_path):
    assert validate(_external_model(tmp_path)).conforms


@pytest.mark.parametrize("entries,expected", [
    ({"offset": 8}, "spans bytes 8 to 56 of 'w.bin', past the end of that file (48 bytes)"),
    ({"offset": 8, "length": 48}, "spans bytes 8 to 56 of 'w.bin', past the end of that file"),
    ({"offset": -1}, "negative offset or length"),
    ({"length": -48}, "negative offset or length"),
    ({"location": ""}, "names the file ''; it must be a relative path"),
    ({"location": "/etc/passwd"}, "it must be a relative path inside the model's directory"),
    ({"length": 4096}, "has length 4096 bytes, but its dims and element type need 48"),
    ({"offset": 0, "length": 48, "location": "nowhere.bin"},
     "external data of tensor 'w' is in 'nowhere.bin', which does not exist next to the model"),
    ({"location": "../w.bin"}, "relative path inside"),
    ({"offset": "x"}, "not an integer"),
])
def test_external_data_that_cannot_be_loaded_is_found(tmp_path, entries, expected):
    path = _external_model(tmp_path)
    _edit_external(path, **entries)
    r = validate(path)
    found = [f for f in r.findings if f.rule == "ONNX-IR"]
    assert r.error is None and len(found) == 1 and expected in found[0].message, r.findings
    assert (found[0].graph, found[0].tensor) == ("main", "w")


def test_external_data_of_an_in_memory_model_is_not_called_conformant(tmp_path):
    m = onnx.load(_external_model(tmp_path), load_external_data=False)
    assert "ONNX-IR" in rules(validate(m))


# ---------------------------------------------------------------- 4. text that is not UTF-8
def _non_utf8_model():
    m = M.mul([2, 3], [2, 3], opset=6, broadcast=0)
    data = m.SerializeToString()
    for old, new in ((b"mul", b"m\xffl"), (b"broadcast", b"broadc\xfest")):
        assert data.count(old) == 1
        data = data.replace(old, new)
    return data


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_text_fields_not_utf8_give_a_finding_in_every_format(tmp_path, capsys, fmt):
    path = tmp_path / "m.onnx"
    path.write_bytes(_non_utf8_model())
    code = main(["validate", "--format", fmt, str(path)])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err
    assert "ONNX-IR" in out and "\\xff" in out


def test_model_path_not_utf8(tmp_path, capsys):
    raw = os.fsencode(tmp_path) + b"/m\xff\x1b[2J.onnx"
    onnx.save(M.mul([2, 3], [2, 3]), raw.decode("utf-8", "surrogateescape"))
    name = os.fsdecode(raw)
    r = validate(name)
    assert r.conforms and r.source.endswith("m\\xff\x1b[2J.onnx")
    out_file = tmp_path / "out.sarif"
    assert main(["validate", "--format", "sarif", "-o", str(out_file), name]) == 0
    sarif = json.loads(out_file.read_text())
    assert sarif["runs"][0]["artifacts"][0]["location"]["uri"].endswith("/m%FF%1B%5B2J.onnx")
    assert main(["validate", name]) == 0
    out, _ = capsys.readouterr()
    assert "m\\xff\\x1b[2J.onnx: conforms" in out and "\x1b" not in out


def test_ascii_stdout_never_crashes(tmp_path, monkeypatch, capsys):
    import io
    import sys
    m = M.mul([2, 3], [2, 3])
    m.graph.node[0].name = "mül→"
    path = tmp_path / "ä.onnx"
    onnx.save(m, path)
    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["validate", str(path)]) == 0
    out.flush()
    assert b"\\xe4.onnx: conforms" in out.buffer.getvalue()


def test_nul_byte_in_a_path_is_unreadable_not_an_exception():
    r = validate("model\x00.onnx")
    assert r.status == "unreadable" and "NUL" in r.error


# ---------------------------------------------------------------- 5. untrusted text in a terminal
@pytest.mark.req("PROF-R1")
def test_control_characters_never_reach_the_terminal(tmp_path, capsys):
    forged = "x\nm.onnx: conforms to the SONNX profile (1 nodes)\r\x1b[2J\x00\u202e\u2028"
    m = M.model([helper.make_node("Sigmoid", ["a"], ["c"], name=forged)], [M.vi("a", [2, 3])],
                [M.vi("c", [2, 3])])
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    assert main(["validate", str(path)]) == 1
    out, _ = capsys.readouterr()
    lines = out.splitlines()
    # the model's line, the rule, the finding, its fix, the next step: five lines, none forged
    assert len(lines) == 5 and not any(line.startswith("m.onnx") for line in lines)
    assert all(ch.isprintable() for ch in out.replace("\n", ""))
    assert "\\x1b[2J\\x00\\u202e\\u2028" in out


def test_neutral_keeps_printable_text():
    assert neutral("a\x1b\u200f") == "a\\x1b\\u200f"
    assert neutral("plain é\\x") == "plain é\\x"


# ---------------------------------------------------------------- 6. SARIF URIs
# RFC 3986 URI-reference characters: unreserved, reserved, and percent-encodings
_URI_REF = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*:)?([A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-F]{2})*$")


@pytest.mark.parametrize("name", ["a b.onnx", "a#b.onnx", "100%.onnx", "é.onnx", "c:d.onnx"])
def test_sarif_uris_are_rfc3986(tmp_path, capsys, name):
    path = tmp_path / name
    onnx.save(M.mul([2, 3], [3]), path)
    for given in (str(path), os.path.relpath(path)):
        main(["validate", "--format", "sarif", given])
        sarif = json.loads(capsys.readouterr()[0])
        run = sarif["runs"][0]
        uris = [run["artifacts"][0]["location"]["uri"]] + [
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]]
        for uri in uris:
            assert _URI_REF.match(uri) and "#" not in uri, uri
            assert ":" not in uri.split("/")[0] or uri.startswith("file:"), uri
    assert path_uri("/a b/é#") == "file:///a%20b/%C3%A9%23"
