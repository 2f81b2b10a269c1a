"""The judging functions one by one, with exact answers (written against the survivors of the
mutation run, tools/mutation: each assertion here fails on some mutant of the judge)."""
from __future__ import annotations

import json

import pytest

from sonnx.trace import crosshair, junit, matrix


def harness(**change) -> dict:
    h = {"name": "h", "requirements": ["MUL-R1"], "mode": "symbolic", "result": "ok",
         "confirmed_over_all_paths": 2, "cases_total": 2, "iterations": 1, "spec_reached": 3,
         "cases": [{"case": "a", "ok": True}, {"case": "b", "ok": True}]}
    h.update(change)
    return h


WITNESS = [{"harness": "h", "refuted": True}]


@pytest.mark.parametrize("change,status", [
    ({}, "confirmed"),                                                  # one iteration is enough
    ({"confirmed_over_all_paths": 1}, "no counterexample"),
    ({"cases_total": 0}, "failed (empty: 0 cases, 1 iterations)"),
    ({"iterations": 0}, "failed (empty: 2 cases, 0 iterations)"),
    ({"cases": []}, "failed (empty: 2 cases, 1 iterations)"),
    ({"cases_total": 3}, "failed (a case failed or is missing)"),
    ({"cases": [{"case": "a", "ok": True}, {"case": "b", "ok": "yes"}]}, "failed (a case failed or is missing)"),
    ({"result": "FAILED"}, "failed (FAILED)"),
])
def test_harness_status(change, status):
    assert crosshair.harness_status(harness(**change), WITNESS) == status


def test_witnesses_must_exist_and_be_refuted():
    assert crosshair.harness_status(harness(), []) == "failed (witness not refuted)"
    assert crosshair.harness_status(harness(), [{"refuted": True}, {"refuted": 1}]) == "failed (witness not refuted)"


def summary(**change) -> dict:
    s = {"harnesses": [harness()], "witnesses": [{"harness": "h", "name": "w", "refuted": True},
                                                 {"harness": "other", "name": "v", "refuted": False}],
         "mutants": [{"name": "m", "requirements": ["GEMM-R7"], "caught": True}]}
    s.update(change)
    return s


def test_judge_entries_exactly():
    assert crosshair.judge(summary()) == [
        {"harness": "h", "requirements": ["MUL-R1"], "status": "confirmed", "mode": "symbolic",
         "confirmed_cases": 2, "cases": 2, "spec_reached": 3},
        {"harness": "mutant m", "requirements": ["GEMM-R7"], "status": "confirmed", "mode": "mutant",
         "confirmed_cases": 1, "cases": 1, "spec_reached": None}]
    entry = crosshair.judge(summary(mutants=[{"name": "m", "requirements": [], "caught": 1}]))[1]
    assert (entry["status"], entry["confirmed_cases"]) == ("failed (mutant survived)", 0)


@pytest.mark.parametrize("reqs", ["MUL-R1", ["MUL-R1", 3], None])
def test_requirements_must_be_a_list_of_ids(reqs):
    with pytest.raises(TypeError, match="requirements of 'h' is not a list of IDs"):
        crosshair.judge(summary(harnesses=[harness(requirements=reqs)]))


def test_a_harness_without_mode_shows_an_empty_mode():
    h = harness()
    del h["mode"]
    assert crosshair.judge(summary(harnesses=[h]))[0]["mode"] == ""


@pytest.mark.parametrize("head", [{"tool": "crosshair", "schema": 2}, {"tool": "other", "schema": 1}])
def test_load_summary_checks_tool_and_schema(tmp_path, head):
    (tmp_path / "c.json").write_text(json.dumps({**head, "harnesses": [], "witnesses": [], "mutants": [], "ok": True}))
    with pytest.raises(ValueError, match="not a CrossHair summary of schema 1"):
        crosshair.load_summary(tmp_path / "c.json")


def test_load_summary_names_the_kind(tmp_path):
    path = tmp_path / "c.json"
    path.write_text("[]")
    with pytest.raises(ValueError, match="CrossHair evidence is not a JSON object"):
        crosshair.load_summary(path)
    path.write_text(json.dumps({"tool": "crosshair", "schema": 1, "harnesses": [], "witnesses": [],
                                "mutants": [], "ok": True}))
    assert crosshair.load_summary(path)["ok"] is True
    for key in ("harnesses", "witnesses", "mutants", "ok"):
        data = json.loads(path.read_text())
        data[key] = "x"
        (tmp_path / "d.json").write_text(json.dumps(data))
        with pytest.raises(ValueError, match=f"'{key}' missing or not a"):
            crosshair.load_summary(tmp_path / "d.json")


# ---------------------------------------------------------------- JUnit
def test_outcome_status_order():
    assert junit.Outcome().status == "not run"
    assert junit.Outcome(passed=1).status == "passed"
    assert junit.Outcome(passed=1, skipped=1).status == "skipped"
    assert junit.Outcome(passed=1, skipped=1, failed=1).status == "failed"


def test_outcome_add_and_without():
    a = junit.Outcome(1, 2, 1, ["t[w]"], ["m::t[x]"])
    a.add(junit.Outcome(2, 1, 2, ["t[y]"], ["m::t[z]", "m::t[v]"]))
    assert (a.passed, a.failed, a.skipped, a.failures, a.skips) == (
        3, 3, 3, ["t[w]", "t[y]"], ["m::t[x]", "m::t[z]", "m::t[v]"])
    b = a.without({"m::t[x]"})
    assert (b.passed, b.failed, b.skipped, b.skips, b.failures) == (4, 3, 2, ["m::t[z]", "m::t[v]"], ["t[w]", "t[y]"])
    only_skipped = junit.Outcome(0, 0, 1, [], ["m::t"]).without({"m::t"})
    assert (only_skipped.passed, only_skipped.skipped, only_skipped.status) == (0, 0, "not run")


def test_parse_exactly(tmp_path):
    path = tmp_path / "j.xml"
    path.write_text('<testsuite><properties><property name="sonnx_inputs" value="abc"/>'
                    '<property name="other" value="1"/></properties>'
                    '<testcase classname="tests.m" name="test_a[1]"/><testcase classname="tests.m" name="test_a[2]">'
                    '<skipped/></testcase><testcase classname="tests.m" name="test_a[x[3]]"/>'
                    '<testcase classname="tests.m" name="test_a[4]"><skipped/></testcase>'
                    '<testcase classname="tests.m.TestK" name="test_b"><error/></testcase>'
                    '<testcase classname="tests.m.TestK" name="test_b"><failure/></testcase>'
                    '<testcase classname="" name="test_c"/></testsuite>')
    rep = junit.parse(path)
    assert rep.inputs == "abc"
    assert set(rep.cases) == {("tests.m", "test_a"), ("tests.m.TestK", "test_b"), ("", "test_c")}
    a, b, c = rep.cases[("tests.m", "test_a")], rep.cases[("tests.m.TestK", "test_b")], rep.cases[("", "test_c")]
    assert (a.passed, a.skipped, a.skips) == (2, 2, ["tests.m::test_a[2]", "tests.m::test_a[4]"])
    assert (b.failed, b.failures) == (2, ["test_b", "test_b"])
    assert c.passed == 1
    path.write_text('<testsuite><testcase classname="m" name="t"/></testsuite>')
    assert junit.parse(path).inputs is None


def test_parse_refuses_what_is_not_a_regular_file(tmp_path):
    with pytest.raises(junit.JUnitError, match=f"^{tmp_path}: JUnit evidence is not a regular file$"):
        junit.parse(tmp_path)


@pytest.mark.parametrize("text,message", [
    ("<a/>", "root element <a> is neither testsuites nor testsuite"),
    ("<testsuite><testcase name='x'/></testsuite>", "a testcase without name or classname"),
    ("<testsuite><testcase classname='x' name=''/></testsuite>", "a testcase without name or classname"),
    ("<testsuite>", "not well-formed XML"),
])
def test_parse_refuses(tmp_path, text, message):
    (tmp_path / "j.xml").write_text(text)
    with pytest.raises(junit.JUnitError, match=message):
        junit.parse(tmp_path / "j.xml")


@pytest.mark.parametrize("site,classname,func,hit", [
    ("tests/x/test_y.py::test_a", "tests.x.test_y", "test_a", True),
    ("tests/x/test_y.py::test_a", "tests.x.test_y", "test_b", False),
    ("tests/x/test_y.py::test_a", "tests.x.test_z", "test_a", False),
    ("tests/x/test_y.py::TestK", "tests.x.test_y.TestK", "test_b", True),
    ("tests/x/test_y.py::TestK.test_b", "tests.x.test_y.TestK", "test_b", True),
    ("tests/x/test_y.py::TestK.test_b", "tests.x.test_y.TestK", "test_c", False),
    ("tests/x/test_y.py::<module>", "tests.x.test_y.TestK", "test_c", True),
    ("tests/x/test_y.py::<module>", "tests.x.test_yz", "test_c", False),
    ("tests/x/test_y.py::test_*", "tests.x.test_y", "test_q", True),
    ("tests/x/test_y.py::test_*", "tests.x.test_y", "check", False),
    ("tests/x/test_y::t", "tests/x/test_y", "t", True),       # a site that is no .py path: as it is
])
def test_matches(site, classname, func, hit):
    assert junit.matches(site, classname, func) is hit


# ---------------------------------------------------------------- matrix helpers
def test_aggregate_exactly():
    recs = [{"f": "a", "result": "valid", "prover": "Z3,CVC5", "time": 0.125},
            {"f": "a", "result": "valid", "prover": "Z3", "time": "0.5"},
            {"f": "b", "result": "valid", "prover": "", "time": None},
            {"f": "b", "result": "not proved", "prover": "CVC5"},
            {"f": "c", "result": "valid"}, {"f": "c", "result": "timeout"}, {"f": "c", "result": "valid"}]
    out = matrix._aggregate(recs, lambda r: r["f"])
    assert out == {"a": {"status": "proved", "prover": "CVC5,Z3", "time": 0.62},
                   "b": {"status": "unproved", "prover": "CVC5", "time": 0.0},
                   "c": {"status": "timeout", "prover": "", "time": 0.0}}


def test_decl_and_fresh(tmp_path):
    assert matrix._decl({"goal": "g'vc.1'vc"}) == "g" and matrix._decl({"goal": "g"}) == "g"
    from sonnx.trace.inputs import step_inputs
    for d in ("src/sonnx", "tests"):
        (tmp_path / d).mkdir(parents=True)
    sha = step_inputs(tmp_path, "tests")["sha256"]
    assert matrix._fresh(tmp_path, "tests", sha) is True
    assert matrix._fresh(tmp_path, "tests", {"sha256": sha, "step": "tests"}) is True
    for other in (None, "0" * 64, {"sha": sha}, {"sha256": None}, [sha], 1):
        assert matrix._fresh(tmp_path, "tests", other) is False


def test_tests_reader(tmp_path):
    from sonnx.trace.inputs import step_inputs
    for d in ("src/sonnx", "tests"):
        (tmp_path / d).mkdir(parents=True)
    path = tmp_path / "j.xml"
    assert matrix._tests(tmp_path, path) == ({}, [], False)
    sha = step_inputs(tmp_path, "tests")["sha256"]
    path.write_text(f'<testsuite><property name="sonnx_inputs" value="{sha}"/>'
                    '<testcase classname="m" name="t"/></testsuite>')
    cases, problems, stale = matrix._tests(tmp_path, path)
    assert (list(cases), problems, stale) == ([("m", "t")], [], False)
    path.write_text(path.read_text().replace(sha, "x"))
    cases, problems, stale = matrix._tests(tmp_path, path)
    assert stale is True and [(d.kind, d.requirement, d.detail) for d in problems] == [
        ("stale", "-", "j.xml was made on another tree (its inputs differ)")]
    path.write_text("<nope")
    with pytest.raises(matrix.EvidenceError, match="j.xml: not well-formed XML"):
        matrix._tests(tmp_path, path)
