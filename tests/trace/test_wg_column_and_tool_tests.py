"""The working group's cross-reference in every trace format, a requirement without one is a
defect, and row counts keep the tests of the requirement apart from the tests of the tools."""
from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET

import pytest

from sonnx import requirements
from sonnx.trace import lobster, reqif, report
from tests.trace.registry import REGISTRY_FILE, WG_ENTRY, registry_toml
from tests.trace.test_matrix import accept_all, build, tree  # noqa: F401  (the fixture tree)

pytestmark = pytest.mark.req("@every")

DEPARTS = ('[[requirement.wg]]\nref = "deliverables/reqs/reqs.md#OP 016"\nrelation = "departs"\n'
           'reason = "defaults read as ONNX states"\n')


def _row(m, rid):
    return next(r for r in m.rows if r.id == rid)


def test_a_requirement_without_a_wg_entry_is_a_defect(tree):
    root, _ = tree
    accept_all(root)
    m = build(root)
    assert [r.state for r in m.rows] == ["ok", "ok"] and not m.defects
    # plant: MUL-R2's entry loses its cross-reference
    text = (root / REGISTRY_FILE).read_text()
    first, second = text.split("\n[[requirement]]")[1:]
    (root / REGISTRY_FILE).write_text("\n[[requirement]]" + first + "\n[[requirement]]"
                                      + second.replace(WG_ENTRY, ""))
    m = build(root)
    row = _row(m, "MUL-R2")
    assert row.state == "defect" and row.wg == []
    assert [d.kind for d in row.defects if d.kind != "suspect"] == ["wg"]
    assert "suspect" in {d.kind for d in row.defects}      # the reviewed cross-reference is gone
    assert _row(m, "MUL-R1").state == "ok"
    assert "wg" in matrix_defect_kinds()


def matrix_defect_kinds():
    from sonnx.trace import matrix
    return matrix.DEFECT_KINDS


def test_the_wg_cross_reference_is_in_every_format(tree):
    root, _ = tree
    text = (root / REGISTRY_FILE).read_text()
    (root / REGISTRY_FILE).write_text(text.replace(WG_ENTRY, WG_ENTRY + DEPARTS, 1))
    accept_all(root)
    m = build(root)
    row = _row(m, "MUL-R1")
    assert [w["relation"] for w in row.wg] == ["none", "departs"]
    full = "departs deliverables/reqs/reqs.md#OP 016: defaults read as ONNX states"

    data = json.loads(report.to_json(m))
    assert data["schema"] == "sonnx-trace/5"
    # the judging tool's configuration identity, with the judged checkout's registry hash
    from sonnx import qualification
    assert data["inputs"]["configuration"]["requirements_sha256"] == qualification.registry_sha256(root)
    assert data["inputs"]["configuration"]["trace_rules_sha256"] == qualification.rules_sha256("trace")
    assert data["requirements"][0]["wg"][1] == {"ref": "deliverables/reqs/reqs.md#OP 016",
                                                 "relation": "departs", "reason": "defaults read as ONNX states"}
    md = report.to_markdown(m)
    assert report.configuration_line(m) in md and report.configuration_line(m) in report.to_html(m)
    assert "requirements_sha256 " + qualification.registry_sha256(root) in md
    assert "| WG |" in md and "none x; departs reqs.md#OP 016" in md and full in md
    rows = list(csv.DictReader(io.StringIO(report.to_csv(m))))
    assert rows[0]["WG"] == "none x; departs reqs.md#OP 016" and full in rows[0]["WG reasons"]
    page = report.to_html(m)
    assert "<th>WG</th>" in page and full in page
    req = json.loads(lobster.render(m)[lobster.FILES[lobster.LEVEL_REQ]])["data"][0]
    assert req["text"].endswith("\nWG: " + full)
    doc = ET.fromstring(reqif.render(m))
    ns = {"r": "http://www.omg.org/spec/ReqIF/20110401/reqif.xsd"}
    wg_values = [v.get("THE-VALUE") for v in doc.iterfind(".//r:ATTRIBUTE-VALUE-STRING", ns)
                 if v.find("r:DEFINITION/r:ATTRIBUTE-DEFINITION-STRING-REF", ns).text.endswith("-WG")]
    assert any(full in (v or "") for v in wg_values), wg_values


TOOL_TEST = '''import pytest

pytestmark = pytest.mark.req("@every")


def test_the_judge():
    assert True
'''


def test_row_counts_keep_tool_tests_apart(tree):
    root, _ = tree
    (root / "tests" / "test_judge.py").write_text(TOOL_TEST)
    junit = (root / "build" / "junit.xml").read_text()
    (root / "build" / "junit.xml").write_text(junit.replace(
        "</testsuite>", '<testcase classname="tests.test_judge" name="test_the_judge" time="0.01"></testcase></testsuite>'))
    accept_all(root)
    m = build(root)
    for rid in ("MUL-R1", "MUL-R2"):
        row = _row(m, rid)
        tools = [t["test"] for t in row.test if t["tool"]]
        own = [t["test"] for t in row.test if not t["tool"]]
        assert tools == ["tests/test_judge.py::<module>"] and len(own) == 1, row.test
        cells = dict(zip(report.HEADERS, report._cells(row)))
        assert cells["Tests"] == "1/1 passed" and cells["Tool tests"] == "1/1 passed"
    # a test that names the requirement as well as @every is the requirement's own
    (root / "tests" / "test_judge.py").write_text(TOOL_TEST.replace(
        "def test_the_judge", '@pytest.mark.req("MUL-R1")\ndef test_the_judge'))
    accept_all(root)
    m = build(root)
    own = [t["test"] for t in _row(m, "MUL-R1").test if not t["tool"]]
    assert "tests/test_judge.py::test_the_judge" in own
    assert [t["test"] for t in _row(m, "MUL-R2").test if t["tool"]] == ["tests/test_judge.py::<module>"]


def test_the_registry_fixture_entry_is_well_formed():
    reg = requirements.parse(registry_toml(("MUL-R1", "t", "s", ["test"])))
    assert reg["MUL-R1"].wg[0].relation == "none"
    assert requirements.parse(registry_toml(("MUL-R1", "t", "s", ["test"]), wg=False))["MUL-R1"].wg == ()


def test_strictdoc_keeps_the_wg_attribute(tree, tmp_path_factory):
    from tests.trace.test_reqif_export import _sdoc
    root, _ = tree
    out = tmp_path_factory.mktemp("reqif")
    text = (root / REGISTRY_FILE).read_text()
    (root / REGISTRY_FILE).write_text(text.replace(WG_ENTRY, WG_ENTRY + DEPARTS, 1))
    accept_all(root)
    sdoc = _sdoc(out, build(root))
    block = sdoc.split("UID: MUL-R1", 1)[1].split("[REQUIREMENT]", 1)[0]
    assert "departs deliverables/reqs/reqs.md#OP 016: defaults read as ONNX states" in block
    assert "none documents/x: fixture" in block
