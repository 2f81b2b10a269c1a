"""The tool qualification kit (docs/qualification.md): the configuration identity printed by
the reports, and the TORs generated from the registry, the validator and the judge."""
import json
import shutil
from pathlib import Path

import pytest

from sonnx import cli, qualification, requirements
from sonnx.trace.matrix import JUDGEMENTS
from sonnx.validate.selection import all_rules
from sonnx_dev import qualification as kit_mod

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.req("@every")
CASE = "tests/validate/test_rules.py::test_same_shape_mul_conforms"


def test_validate_json_carries_the_configuration_identity(capsys):
    model = sorted((ROOT / "examples").glob("*.onnx"))[0]
    cli.main(["validate", "--format", "json", str(model)])
    report = json.loads(capsys.readouterr().out)
    conf = report["tool"]["configuration"]
    assert conf == qualification.configuration()
    assert all(len(conf[k]) == 64 for k in ("validate_rules_sha256", "trace_rules_sha256", "requirements_sha256"))


def test_the_registry_hash_follows_the_data(tmp_path):
    for rel, _ in requirements.texts(ROOT):
        (tmp_path / "src" / "sonnx" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "src" / "sonnx" / rel, tmp_path / "src" / "sonnx" / rel)
    assert qualification.registry_sha256(tmp_path) == qualification.registry_sha256(ROOT)
    data = tmp_path / "src" / "sonnx" / requirements.PROFILE_DATA
    data.write_text(data.read_text().replace("Profile operators only", "Profile operators mostly"))
    assert qualification.registry_sha256(tmp_path) != qualification.registry_sha256(ROOT)


def _bundle(tmp_path: Path, result: str = "") -> Path:
    bundle = tmp_path / "bundle"
    (bundle / "trace").mkdir(parents=True)
    row = {"id": "MUL-R1", "test": [{"test": CASE, "tool": False},
                                    {"test": "tests/trace/test_matrix.py::*", "tool": True}],
           "claims": [{"part": "the part", "gap": "spec/gaps/MUL-R1.md"}], "justified": [],
           "crosshair": [{"harness": "mutant loop_short", "mode": "mutant", "status": "confirmed"}]}
    (bundle / "trace" / "trace.json").write_text(json.dumps(
        {"schema": "sonnx-trace/5", "inputs": {"commit": "c0ffee", "configuration": {}}, "requirements": [row]}))
    (bundle / "junit.xml").write_text(
        '<?xml version="1.0"?><testsuites><testsuite name="pytest">'
        f'<testcase classname="tests.validate.test_rules" name="test_same_shape_mul_conforms">{result}</testcase>'
        '<testcase classname="tests.validate.test_rules" name="test_same_shape_mul_conforms[x]"><skipped/></testcase>'
        '</testsuite></testsuites>')
    return bundle


def test_one_tor_per_validator_rule_and_per_trace_judgement(tmp_path):
    kit = kit_mod.build(ROOT, _bundle(tmp_path))
    registry = requirements.load()
    value_only = {r for r in registry if registry[r].families and set(registry[r].families) <= kit_mod.VALUE_FAMILIES}
    assert [t["id"] for t in kit["tors"]] == (
        [f"TOR-VALIDATE-{r}" for r in all_rules() if r not in value_only]
        + [f"TOR-TRACE-{k.replace(' ', '-')}" for k in JUDGEMENTS])
    assert {x["rule"] for x in kit["left_out"]} == value_only and "GEMM-R7" in value_only
    tor = {t["id"]: t for t in kit["tors"]}
    mul = tor["TOR-VALIDATE-MUL-R1"]
    # the requirement's own test verifies it (its skipped parameter does not undo its passes);
    # the judge's tests, which every row relies on, are not the rule's verification
    assert mul["verification"] == [{"test": CASE, "result": "passed"}] and mul["verified"]
    assert "CrossHair mutant mutant loop_short: confirmed" in mul["mutation"]
    assert any("docs/records/mutation/trace.md: Totals" in m for m in tor["TOR-TRACE-suspect"]["mutation"])
    wg_cases = [v["test"] for v in tor["TOR-TRACE-wg"]["verification"]]
    assert "tests/trace/test_wg_column_and_tool_tests.py::test_a_requirement_without_a_wg_entry_is_a_defect" in wg_cases
    assert all(t["verification"] for t in kit["tors"] if t["id"].startswith("TOR-TRACE-")), \
        [t["id"] for t in kit["tors"] if not t["verification"]]
    assert "MUL-R1: not proved as stated: the part (see spec/gaps/MUL-R1.md)" in kit["limitations"]
    assert kit["configuration"]["commit"] == "c0ffee"
    assert kit["configuration"]["requirements_sha256"] == qualification.registry_sha256(ROOT)


def test_a_failed_case_leaves_its_tor_unverified_and_the_run_red(tmp_path, capsys):
    bundle = _bundle(tmp_path, result='<failure message="boom"/>')
    kit = kit_mod.build(ROOT, bundle)
    mul = next(t for t in kit["tors"] if t["id"] == "TOR-VALIDATE-MUL-R1")
    assert mul["verification"] == [{"test": CASE, "result": "failed"}] and not mul["verified"]
    assert f"TOR-VALIDATE-MUL-R1: verification not all passed: {CASE} failed" in kit["limitations"]
    assert kit_mod.main(["--bundle", str(bundle), "--root", str(ROOT)]) == 1
    folder = bundle / "qualification"
    assert {p.name for p in folder.iterdir()} == {"tor.json", "tor.md", "configuration.json", "limitations.md"}
    assert "### TOR-VALIDATE-MUL-R1 (NOT VERIFIED)" in (folder / "tor.md").read_text()
    assert "not verified: " in capsys.readouterr().err


def test_no_trace_in_the_bundle_is_one_line_and_exit_2(tmp_path, capsys):
    assert kit_mod.main(["--bundle", str(tmp_path), "--root", str(ROOT)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run the trace step first" in err
