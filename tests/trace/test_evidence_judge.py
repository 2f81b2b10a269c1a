"""The evidence judge: failed, empty, stale or malformed evidence is never green.

One small tree (a requirement needing proof, test and CrossHair; a helper lemma and a test
that name none) and one fixture per failure kind, each shown turning the verdict red, or, for
files that cannot be judged, giving exit 2 with a message and no traceback.
"""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sonnx import cli, requirements
from sonnx.trace import baseline, links, matrix, report
from sonnx.trace.inputs import step_inputs
from tests.trace.registry import registry_toml, write_data

ROOT = Path(__file__).resolve().parents[2]

REGISTRY = registry_toml(("MUL-R1", "Same shape", "A and B have the same shape.", ["proof", "test", "crosshair"]))
MLW = "module M\n  (* req: MUL-R1 *)\n  lemma same_shape: forall x: int. x = x\n  lemma helper: true\nend\n"
TESTS = ('import pytest\n\n\n@pytest.mark.req("MUL-R1")\ndef test_same():\n    assert True\n\n\n'
         'def test_helper():\n    assert True\n')
SUPPORTS = ('[[test]]\npath = "tests/test_k.py"\nname = "test_helper"\nsupports = ["MUL-R1"]\nwhy = "w"\n\n'
            '[[proof]]\npath = "proofs/op.mlw"\ngoal = "M.helper"\nsupports = ["MUL-R1"]\nwhy = "w"\n')

CLAIMS = ('[[claim]]\nid = "MUL-R1"\npart = "A and B have the same shape"\nproof = ["proofs/op.mlw:same_shape"]\n'
          'crosshair = ["h"]\ntest = ["tests/test_k.py::test_same"]\n')


@pytest.fixture
def root(tmp_path, monkeypatch):
    (tmp_path / "src" / "sonnx" / "trace").mkdir(parents=True)
    for d in ("spec", "tests", "proofs", "build"):
        (tmp_path / d).mkdir()
    write_data(tmp_path, registry=REGISTRY, claims=CLAIMS)
    (tmp_path / "spec" / "op.md").write_text("- [MUL-R1] same shape\n")
    (tmp_path / "spec" / "trace-supports.toml").write_text(SUPPORTS)
    (tmp_path / "src" / "sonnx" / "k.py").write_text('# req: MUL-R1\ndef check(a, b):\n    return a == b\n')
    (tmp_path / "tests" / "test_k.py").write_text(TESTS)
    (tmp_path / "proofs" / "op.mlw").write_text(MLW)
    reg = requirements.parse(REGISTRY)
    baseline.accept(tmp_path, baseline.site_texts(tmp_path, reg, links.collect(tmp_path)), ["all"])
    monkeypatch.chdir(tmp_path)
    write_all(tmp_path)
    return tmp_path


# ---------------------------------------------------------------- the evidence files, fresh
def cases_xml(body: str = "", inputs: str | None = "fresh", root: Path | None = None) -> str:
    if inputs == "fresh":
        inputs = step_inputs(root, "tests")["sha256"]
    props = "" if inputs is None else f'<properties><property name="sonnx_inputs" value="{inputs}"/></properties>'
    body = body or ('<testcase classname="tests.test_k" name="test_same"/>'
                    '<testcase classname="tests.test_k" name="test_helper"/>')
    return f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{props}{body}</testsuite></testsuites>'


def proofs_json(root: Path, **change) -> dict:
    goal = {"file": "proofs/op.mlw", "theory": "M", "req": ["MUL-R1"], "prover": "Z3", "time": 0.1}
    data = {"ok": True, "replay": {"proofs/op.mlw": 0}, "inputs": step_inputs(root, "proofs"),
            "goals": [dict(goal, goal="same_shape'vc", result="valid"),
                      dict(goal, goal="helper'vc", req=[], result="valid")]}
    data.update(change)
    return data


def harness(**change) -> dict:
    h = {"name": "h", "requirements": ["MUL-R1"], "mode": "symbolic", "result": "ok",
         "confirmed_over_all_paths": 1, "cases_total": 1, "iterations": 12, "spec_reached": 3,
         "cases": [{"case": "c", "ok": True, "verdict": "confirmed"}]}
    h.update(change)
    return h


def crosshair_json(root: Path, **change) -> dict:
    data = {"tool": "crosshair", "schema": 1, "ok": True, "problems": [], "harnesses": [harness()],
            "witnesses": [{"harness": "h", "name": "w", "refuted": True}],
            "mutants": [{"name": "m", "requirements": ["MUL-R1"], "caught": True}],
            "inputs": step_inputs(root, "crosshair")}
    data.update(change)
    return data


def write_all(root: Path, junit: str | None = None, proofs: dict | None = None, ch: dict | None = None) -> None:
    ev = root / "build" / "evidence"
    ev.mkdir(parents=True, exist_ok=True)
    (ev / "junit.xml").write_text(junit if junit is not None else cases_xml(root=root))
    (ev / "proofs.json").write_text(json.dumps(proofs if proofs is not None else proofs_json(root)))
    (ev / "crosshair.json").write_text(json.dumps(ch if ch is not None else crosshair_json(root)))


def judged(root: Path) -> list[tuple[str, str]]:
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    return sorted({(d.kind, d.requirement) for d in m.defects})


def test_fresh_complete_evidence_is_green(root):
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    assert m.defects == [] and m.rows[0].state == "ok"
    assert [(p["goal"], p["declared"]) for p in m.rows[0].proof] == [("same_shape", False), ("M.helper", True)]
    assert [(t["test"], t["declared"]) for t in m.rows[0].test] == [
        ("tests/test_k.py::test_same", False), ("tests/test_k.py::test_helper", True)]


# ---------------------------------------------------------------- JUnit
@pytest.mark.parametrize("element", ["failure", "error", "rerunFailure", "flakyFailure", "rerunError",
                                     "flakyError", "Failure", "ERROR"])
def test_every_failure_element_fails_the_row(root, element):
    body = ('<testcase classname="tests.test_k" name="test_same[1]"/>'
            f'<testcase classname="tests.test_k" name="test_same[2]"><{element} message="x"/></testcase>'
            '<testcase classname="tests.test_k" name="test_helper"/>')
    write_all(root, junit=cases_xml(body, root=root))
    assert judged(root) == [("failing", "MUL-R1")]


def test_namespaced_capitalised_and_nested_reports_are_read(root):
    fresh = step_inputs(root, "tests")["sha256"]
    xml = ('<?xml version="1.0"?><j:TestSuites xmlns:j="urn:junit"><j:TestSuite name="outer">'
           f'<j:Properties><j:Property name="sonnx_inputs" value="{fresh}"/></j:Properties>'
           '<j:TestSuite name="inner"><j:TestCase classname="tests.test_k" name="test_same">'
           '<j:Failure message="boom"/></j:TestCase>'
           '<j:TestCase classname="tests.test_k" name="test_helper"/></j:TestSuite></j:TestSuite></j:TestSuites>')
    write_all(root, junit=xml)
    assert judged(root) == [("failing", "MUL-R1")]


def test_skipped_is_not_passed(root):
    body = ('<testcase classname="tests.test_k" name="test_same"><skipped message="no"/></testcase>'
            '<testcase classname="tests.test_k" name="test_helper"/>')
    write_all(root, junit=cases_xml(body, root=root))
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    assert judged(root) == [("skipped", "MUL-R1")]
    assert m.rows[0].test[0]["status"] == "skipped"


def test_failing_declared_test_turns_its_row_red(root):
    body = ('<testcase classname="tests.test_k" name="test_same"/>'
            '<testcase classname="tests.test_k" name="test_helper"><failure/></testcase>')
    write_all(root, junit=cases_xml(body, root=root))
    assert judged(root) == [("failing", "MUL-R1")]


def test_failing_case_that_reaches_no_row_is_a_defect(root):
    body = cases_xml(root=root).replace("</testsuite>", '<testcase classname="tests.test_other" name="test_x">'
                                                         '<error/></testcase></testsuite>')
    write_all(root, junit=body)
    assert judged(root) == [("failing", "-")]


def test_junit_from_another_tree_is_stale(root):
    write_all(root, junit=cases_xml(inputs="0" * 64, root=root))
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    assert judged(root) == [("stale", "-"), ("stale", "MUL-R1")]
    assert {t["status"] for t in m.rows[0].test} == {"stale"}


def test_junit_made_before_a_source_edit_is_stale(root):
    (root / "src" / "sonnx" / "k.py").write_text('# req: MUL-R1\ndef check(a, b):\n    return a == b  # edited\n')
    assert ("stale", "MUL-R1") in judged(root)


def test_junit_without_inputs_is_stale(root):
    write_all(root, junit=cases_xml(inputs=None, root=root))
    assert ("stale", "-") in judged(root)


# ---------------------------------------------------------------- proofs.json
def test_proofs_not_ok_is_a_defect(root):
    write_all(root, proofs=proofs_json(root, ok=False))
    assert judged(root) == [("unproved", "-")]


def test_failed_replay_voids_its_goals(root):
    write_all(root, proofs=proofs_json(root, ok=False, replay={"proofs/op.mlw": 1}))
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    assert {p["status"] for p in m.rows[0].proof} == {"replay exit 1"}
    assert ("unproved", "MUL-R1") in judged(root)


def test_split_goal_is_proved_only_when_every_subgoal_is(root):
    data = proofs_json(root)
    data["goals"].append({**data["goals"][0], "goal": "same_shape'vc.1", "result": "timeout"})
    write_all(root, proofs=data)
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    assert m.rows[0].proof[0]["status"] == "timeout"
    assert judged(root) == [("unproved", "MUL-R1")]


def test_failing_declared_goal_turns_its_row_red(root):
    data = proofs_json(root)
    data["goals"][1]["result"] = "not proved"
    write_all(root, proofs=data)
    assert judged(root) == [("unproved", "MUL-R1")]


def test_goal_neither_marked_nor_declared_is_unlinked(root):
    (root / "spec" / "trace-supports.toml").write_text(SUPPORTS.split("[[proof]]")[0])
    write_all(root)             # spec/ is an input of the tests: a fresh run
    assert judged(root) == [("unlinked", "-")]


def test_stale_proofs(root):
    write_all(root, proofs=proofs_json(root, inputs={"sha256": "1" * 64}))
    assert judged(root) == [("stale", "-"), ("stale", "MUL-R1")]


# ---------------------------------------------------------------- crosshair.json
def test_campaign_not_ok_is_a_defect(root):
    write_all(root, ch=crosshair_json(root, ok=False, problems=["harness h: c error"]))
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    assert judged(root) == [("failing", "-")]
    assert "harness h: c error" in m.evidence[0].detail


@pytest.mark.parametrize("change,why", [
    ({"cases_total": 0, "cases": [], "confirmed_over_all_paths": 0}, "empty"),
    ({"iterations": 0}, "empty"),
    ({"cases": [{"case": "c", "ok": False, "verdict": "vacuous"}]}, "a case failed"),
    ({"cases_total": 2}, "a case failed or is missing"),
    ({"result": "FAILED"}, "FAILED"),
])
def test_harness_that_showed_nothing_fails(root, change, why):
    write_all(root, ch=crosshair_json(root, harnesses=[harness(**change)]))
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    assert why in m.rows[0].crosshair[0]["status"]
    assert ("failing", "MUL-R1") in judged(root)


def test_unrefuted_witness_and_surviving_mutant_fail(root):
    write_all(root, ch=crosshair_json(root, witnesses=[{"harness": "h", "name": "w", "refuted": False}],
                                      mutants=[{"name": "m", "requirements": ["MUL-R1"], "caught": False}]))
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    assert [h["status"] for h in m.rows[0].crosshair] == ["failed (witness not refuted)", "failed (mutant survived)"]


def test_stale_crosshair(root):
    write_all(root, ch=crosshair_json(root, inputs=None))
    assert judged(root) == [("stale", "-"), ("stale", "MUL-R1")]


# ---------------------------------------------------------------- unlinked tests
def test_test_neither_marked_nor_declared_is_unlinked(root):
    (root / "spec" / "trace-supports.toml").write_text("[[proof]]" + SUPPORTS.split("[[proof]]")[1])
    write_all(root)
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    assert [(d.kind, d.detail.split(":")[0]) for d in m.evidence] == [("unlinked", "tests/test_k.py")]


# ---------------------------------------------------------------- files that cannot be judged
JUNIT_BAD = ["not xml", "<html/>", '<testsuite><testcase name="x"/></testsuite>',
             '<testsuite><testcase classname="a"/></testsuite>', "\xff\xfe", ""]
PROOFS_BAD = ["[]", "{", '{"ok": true}', '{"ok": "yes", "goals": [], "replay": {}}',
              '{"ok": true, "goals": [{"file": 1}], "replay": {}}', '{"ok": true, "goals": [], "replay": []}',
              '{"ok": true, "goals": ["x"], "replay": {}}']


def crosshair_bad(root: Path) -> list[str]:
    good = crosshair_json(root)
    out = ["{", "[]", '{"tool": "other"}', json.dumps({**good, "harnesses": {}}), json.dumps({**good, "ok": 1})]
    for key in ("result", "cases", "cases_total", "iterations", "name", "confirmed_over_all_paths", "requirements"):
        h = harness()
        del h[key]
        out.append(json.dumps({**good, "harnesses": [h]}))
    for bad in ({"harness": "h"}, {"name": "w"}):
        out.append(json.dumps({**good, "witnesses": [bad]}))
    out.append(json.dumps({**good, "mutants": [{"name": "m"}]}))
    out.append(json.dumps({**good, "harnesses": [harness(cases=[{"case": "c"}])]}))
    out.append(json.dumps({**good, "harnesses": ["h"]}))
    return out


def run_cli(args: list[str], capsys) -> tuple[int, str]:
    rc = cli.main(["trace", *args])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize("n", range(len(JUNIT_BAD)))
def test_malformed_junit_exits_2(root, capsys, n):
    (root / "bad.xml").write_text(JUNIT_BAD[n], errors="surrogateescape")
    rc, err = run_cli(["--junit", "bad.xml"], capsys)
    assert rc == 2 and "bad.xml" in err and "Traceback" not in err


@pytest.mark.parametrize("n", range(len(PROOFS_BAD)))
def test_malformed_proofs_exit_2(root, capsys, n):
    (root / "bad.json").write_text(PROOFS_BAD[n])
    rc, err = run_cli(["--proofs", "bad.json"], capsys)
    assert rc == 2 and "bad.json" in err and "Traceback" not in err


def test_malformed_crosshair_exits_2(root, capsys):
    for text in crosshair_bad(root):
        (root / "bad.json").write_text(text)
        rc, err = run_cli(["--crosshair", "bad.json"], capsys)
        assert rc == 2 and "bad.json" in err, text


def test_missing_explicit_file_and_malformed_supports_exit_2(root, capsys):
    assert run_cli(["--junit", "nowhere.xml"], capsys)[0] == 2
    (root / "spec" / "trace-supports.toml").write_text('[[test]]\npath = "tests/test_k.py"\n')
    rc, err = run_cli([], capsys)
    assert rc == 2 and "trace-supports.toml" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_junit_on_a_fifo_or_device_does_not_block(root):
    os.mkfifo(root / "fifo")
    for path in (str(root / "fifo"), "/dev/zero"):
        proc = subprocess.run([sys.executable, "-m", "sonnx.cli", "trace", "--junit", path], cwd=root,
                              capture_output=True, text=True, timeout=120)   # a hang guard only
        assert proc.returncode == 2 and "not a regular file" in proc.stderr and "Traceback" not in proc.stderr


def test_sources_and_cli_give_the_same_verdict(root, capsys):
    assert run_cli([], capsys)[0] == 0
    write_all(root, ch=crosshair_json(root, ok=False))
    assert run_cli([], capsys)[0] == 1


# ---------------------------------------------------------------- reports
def test_markdown_is_escaped(root):
    reg_text = REGISTRY.replace('title = "Same shape"', 'title = "Same | shape\\nof A"')
    m = matrix.build(root, registry=requirements.parse(reg_text))
    line = next(line for line in report.to_markdown(m).splitlines() if line.startswith("| MUL-R1"))
    assert "Same \\| shape of A" in line
    assert line.count("|") - line.count("\\|") == len(report.HEADERS) + 1


def test_defect_texts_are_escaped_in_markdown(root):
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    m = copy.deepcopy(m)
    m.evidence.append(matrix.Defect("failing", "-", "a | b\nc"))
    assert "- **failing** -: a \\| b c" in report.to_markdown(m)


def test_reviewed_skip_is_listed_not_a_defect_and_others_still_are(root):
    body = ('<testcase classname="tests.test_k" name="test_same[a]"/>'
            '<testcase classname="tests.test_k" name="test_same[b]"><skipped message="no"/></testcase>'
            '<testcase classname="tests.test_k" name="test_helper"/>')
    (root / "spec" / "trace-justifications.toml").write_text(
        '[[skip]]\ncase = "tests.test_k::test_same[b]"\njustification = "no kernel for b"\n')
    write_all(root, junit=cases_xml(body, root=root))
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    assert m.defects == []
    assert m.rows[0].justified == [{"kind": "skip", "justification": "tests.test_k::test_same[b]: no kernel for b"}]
    write_all(root, junit=cases_xml(body.replace("test_same[a]\"/>", 'test_same[a]"><skipped/></testcase>'),
                                    root=root))
    assert judged(root) == [("skipped", "MUL-R1")]


def test_one_stale_line_per_row_and_kind(root):
    write_all(root, junit=cases_xml(inputs="0" * 64, root=root), proofs=proofs_json(root, inputs=None))
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    assert [d.detail for d in m.rows[0].defects] == ["2 proof result(s) made on another tree",
                                                     "2 test result(s) made on another tree"]


def _leaves(o, pre=()):
    yield pre
    items = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()
    for k, v in items:
        yield from _leaves(v, pre + (k,))


@pytest.mark.parametrize("name", ["proofs.json", "crosshair.json"])
def test_any_field_of_the_wrong_type_is_judged_or_refused_never_a_traceback(root, name):
    """Every field of a good summary replaced by values of every JSON type: the judge gives a
    verdict or an EvidenceError, nothing else."""
    good = proofs_json(root) if name == "proofs.json" else crosshair_json(root)
    reg = requirements.parse(REGISTRY)
    for path in [p for p in _leaves(good) if p]:
        for value in (None, "x", 1.5, -1, [], {}, True, ["x"], [{}]):
            data = copy.deepcopy(good)
            target = data
            for k in path[:-1]:
                target = target[k]
            target[path[-1]] = value
            (root / "build" / "evidence" / name).write_text(json.dumps(data))
            try:
                matrix.build(root, registry=reg)
            except matrix.EvidenceError:
                pass


# ---------------------------------------------------------------- exact defects and messages
def evidence_of(root: Path) -> list[tuple[str, str, str]]:
    m = matrix.build(root, registry=requirements.parse(REGISTRY))
    return [(d.kind, d.requirement, d.detail) for d in m.evidence]


def test_proof_summary_defects_exactly(root):
    write_all(root, proofs=proofs_json(root, ok=False, replay={"proofs/op.mlw": 1, "proofs/other.mlw": 0}))
    assert evidence_of(root) == [("unproved", "-", "proofs.json says ok=false"),
                                 ("unproved", "-", "replay of proofs/op.mlw exited with 1")]
    assert matrix.build(root, registry=requirements.parse(REGISTRY)).inputs["proofs"] == "replay"
    write_all(root, proofs=proofs_json(root, inputs=None))
    assert evidence_of(root) == [("stale", "-", "proofs.json was made on another tree (its inputs differ)")]


def test_replay_and_req_may_be_absent(root):
    data = proofs_json(root)
    del data["replay"]
    del data["goals"][1]["req"]
    write_all(root, proofs=data)
    assert judged(root) == []


def test_proof_summary_messages(root):
    for text, message in (("{", "proof evidence is not JSON"),
                          ('{"ok": true, "goals": [{"file": "f"}], "replay": {}}', r"req \(list\) and time \(number\)")):
        (root / "build" / "evidence" / "proofs.json").write_text(text)
        with pytest.raises(matrix.EvidenceError, match=message):
            matrix.build(root, registry=requirements.parse(REGISTRY))


def test_campaign_defects_exactly(root):
    write_all(root, ch=crosshair_json(root, ok=False, problems=["a", "b"]))
    assert evidence_of(root) == [("failing", "-", "crosshair.json says ok=false: a; b")]
    write_all(root, ch=crosshair_json(root, ok=False, problems=[]))
    assert evidence_of(root) == [("failing", "-", "crosshair.json says ok=false: no problem listed")]
    write_all(root, ch=crosshair_json(root, ok=False, problems=["x" * 400]))
    assert evidence_of(root)[0][2] == "crosshair.json says ok=false: " + "x" * 300
    write_all(root, ch=crosshair_json(root, inputs={"sha256": "0"}))
    assert evidence_of(root) == [("stale", "-", "crosshair.json was made on another tree (its inputs differ)")]
    h = harness()
    del h["result"]
    write_all(root, ch=crosshair_json(root, harnesses=[h]))
    with pytest.raises(matrix.EvidenceError, match=r"malformed CrossHair summary \(KeyError: 'result'\)"):
        matrix.build(root, registry=requirements.parse(REGISTRY))


def test_without_a_replay_the_python_front_end_was_not_run(tmp_path):
    """On the real tree, with no proofs.json: session statuses, and the Python front-end's
    functions as not replayed (it has no session)."""
    records, source, problems = matrix._proof_records(ROOT, tmp_path / "none.json")
    assert (source, problems) == ("session (not replayed)", [])
    py = [r for r in records if r["file"].endswith(".py")]
    assert py and all((r["theory"], r["result"], r["prover"], r["time"]) == ("python", "not replayed", "", None)
                      for r in py)
