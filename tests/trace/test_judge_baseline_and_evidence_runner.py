"""The trace judge (baseline file, links, matrix verdicts and defects) and the evidence runner, in
detail: tests first written to kill mutants that survived the mutation run over the trace judge
(tools/mutation; the survivors and their verdicts are listed in docs/mutation/trace.md).

Each test pins one behaviour that a surviving mutant changed without any other test noticing:
the baseline file's quoting, the IDs named by an unknown-ID error, how many places an orphan
message names, ... Small trees are built in tmp_path, as in the other trace tests.
"""
from __future__ import annotations

import email.message
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tomllib

import pytest

from sonnx import requirements
from sonnx.trace import baseline, links, matrix, proofs
from sonnx_dev import evidence     # the evidence runner (tools/sonnx_dev): its one import here
from tests.test_evidence_tools import _step
from tests.trace.registry import REGISTRY_FILE, registry_toml
from tests.trace.test_matrix import INPUTS, TESTS, accept_all, build, junit_xml, tree  # noqa: F401  (tree: fixture)

UNKNOWN = ["GEMM-R" + "98", "GEMM-R" + "99"]  # built at run time: the real tree names no orphan
REGISTRY = requirements.parse(registry_toml(("MUL-R1", "t", "s", ["test"])))


def _tree(root, code="def check():\n    return 'MUL-R1'\n",
          test='import pytest\n\n@pytest.mark.req("MUL-R1")\ndef test_a():\n    pass\n', spec=""):
    for d in ("spec", "src/sonnx/trace", "tests", "proofs"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "src" / "sonnx" / "kernel.py").write_text(code)
    (root / "tests" / "test_kernel.py").write_text(test)
    (root / "spec" / "op.md").write_text(spec)
    return root


# ------------------------------------------------------------------ baseline.py

def test_baseline_keys_with_quotes_and_backslashes_read_back_unchanged():
    # a fingerprint key holds a path and a function name; the TOML writer must escape both
    key = 'code:src\\x.py:f"g"'
    written = baseline.dump({"MUL-R1": {key: "d\\1\"2"}})
    assert tomllib.loads(written) == {"MUL-R1": {key: "d\\1\"2"}}


def test_accept_of_unknown_ids_names_them_all_and_writes_nothing(tmp_path):
    root = _tree(tmp_path)
    texts = baseline.site_texts(root, REGISTRY, links.collect(root, with_proofs=False))
    with pytest.raises(KeyError) as exc:
        baseline.accept(root, texts, ["MUL-R1", *UNKNOWN])
    assert exc.value.args == (", ".join(UNKNOWN),)
    assert not (root / baseline.BASELINE).exists()


def test_python_units_drop_docstrings_and_a_lone_comment_is_its_own_text(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('X = 1\n\n#  MUL-R1   lone\n\n\ndef f():\n    """doc"""\n    return 1\n\n\n'
                    'def g():\n    """only doc"""\n\n\nclass C:\n    """doc"""\n    a = 1\n    b = 2\n')
    assert baseline.python_unit(path, 3) == "# MUL-R1 lone"
    assert baseline.python_unit(path, 8) == "def f():\n    return 1"
    assert baseline.python_unit(path, 12) == "def g():\n    pass"
    assert baseline.python_unit(path, 17) == "class C:\n    a = 1\n    b = 2"


def test_a_whyml_declaration_ends_at_the_next_req_comment(tmp_path):
    path = tmp_path / "m.mlw"
    path.write_text('module M\n  lemma a: true\n  (* req: MUL-R2 *)\n  meta "x" lemma b\nend\n')
    assert baseline.whyml_declaration(path, 2) == "lemma a: true"


def test_the_statement_is_fingerprinted_with_whitespace_collapsed(tmp_path):
    root = _tree(tmp_path)
    reg = requirements.parse(registry_toml(("MUL-R1", "t", "A  and\\n b", ["test"])))
    texts = baseline.site_texts(root, reg, links.collect(root, with_proofs=False))
    assert texts["MUL-R1"]["statement"] == "A and b"


def _change_set():
    """A reviewed fingerprint set and the current texts: key a unchanged, b changed (one line
    of seven), c gone, d new, e changed but its reviewed text was never stored."""
    before = "\n".join(str(i) for i in range(1, 8))
    reviewed = {"MUL-R1": {"a": baseline._sha("same"), "b": baseline._sha(before),
                           "c": baseline._sha("gone"), "e": "0" * 64}}
    now = {"MUL-R1": {"a": "same", "b": before.replace("7", "seven"), "d": "new d", "e": "e now"}}
    sources = {baseline._sha(before): before, baseline._sha("gone"): "gone"}
    return reviewed, now, sources


def test_suspect_reasons_name_each_changed_new_and_gone_key():
    reviewed, now, _ = _change_set()
    current = {rid: {k: baseline._sha(t) for k, t in texts.items()} for rid, texts in now.items()}
    assert baseline.suspects(current | {"MUL-R2": {}}, reviewed) == {
        "MUL-R1": ["b changed", "e changed", "d is new", "c is gone"],
        "MUL-R2": ["never reviewed (not in the baseline)"]}


def test_diffs_show_every_changed_new_and_gone_key_with_two_lines_of_context():
    # the unchanged key "a" sorts first: it is skipped, the others still follow
    reviewed, now, sources = _change_set()
    assert baseline.diffs(None, now, reviewed, sources) == {"MUL-R1": {
        "b": "--- reviewed/b\n+++ current/b\n@@ -5,3 +5,3 @@\n 5\n 6\n-7\n+seven",
        "c": "--- reviewed/c\n+++ current/c\n@@ -1 +0,0 @@\n-gone",
        "d": "--- reviewed/d\n+++ current/d\n@@ -0,0 +1 @@\n+new d",
        "e": "--- reviewed/e\n+++ current/e\n@@ -1 +1 @@\n-(reviewed text not stored)\n+e now"}}


# ------------------------------------------------------------------ links.py

def test_orphan_message_names_its_first_three_places(tmp_path):
    orphan = "MUL-R" + "97"  # built at run time so that the real tree holds no orphan
    root = _tree(tmp_path, spec="".join(f"line [{orphan}]\n" for _ in range(4)))
    problems = links.gaps(REGISTRY, links.collect(root, with_proofs=False))
    assert problems == [f"{orphan}: named in spec/op.md:1, spec/op.md:2, spec/op.md:3 "
                        "but not in the registry (orphan)"]


def test_accept_keeps_exactly_the_texts_of_the_reviewed_fingerprints(tmp_path):
    # the stored texts are what a suspect row's diff is made from: the reviewed ones must stay,
    # the ones no fingerprint uses any more must go
    root = _tree(tmp_path)
    def accept():
        texts = baseline.site_texts(root, REGISTRY, links.collect(root, with_proofs=False))
        baseline.accept(root, texts, ["all"])
        return texts
    old = accept()
    (root / "src" / "sonnx" / "kernel.py").write_text("def check():\n    return 'MUL-R1' + ''\n")
    new = accept()
    assert old != new
    used = {d for fp in baseline.load(root).values() for d in fp.values()}
    sources = baseline.load_sources(root)
    assert set(sources) == used and sorted(sources.values()) == sorted(new["MUL-R1"].values())


def test_proof_sites_of_python_files_point_at_their_def_lines(tmp_path, monkeypatch):
    # a listed file that does not exist is skipped and the next one still read; the line is
    # the one of the function's own ``def`` (``kernel`` is not ``kernel_one``)
    root = _tree(tmp_path)
    (root / "src" / "sonnx" / "k.py").write_text(
        "X = 1\n\n\n# req: MUL-R1, GEMM-R1\ndef kernel_one(a):\n    return a\n\n"
        "# req: MUL-R2\ndef kernel(a):\n    return a\n")
    monkeypatch.setattr(proofs, "PY_FILES", ["src/sonnx/absent.py", "src/sonnx/k.py"])
    assert links.proof_sites(root) == [
        ("MUL-R1", links.Site("proof", "src/sonnx/k.py", 5, "kernel_one")),
        ("GEMM-R1", links.Site("proof", "src/sonnx/k.py", 5, "kernel_one")),
        ("MUL-R2", links.Site("proof", "src/sonnx/k.py", 9, "kernel"))]


# ------------------------------------------------------------------ matrix.build

def test_build_without_a_registry_judges_the_shipped_one(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    monkeypatch.setattr(matrix, "_proof_records", lambda root, path: ([], "replay", []))
    m = matrix.build(root, junit_path=root / "none.xml", crosshair_path=root / "none.json",
                     proofs_path=root / "none-proofs.json")
    assert [r.id for r in m.rows] == list(requirements.load())


def test_proof_entries_carry_every_documented_field(tree):
    # one marked goal proved, one marked goal without a record ("missing"), one unmarked goal
    # declared for MUL-R1 only: it must not reach MUL-R2, whose only declaration names
    # another file
    root, records = tree
    (root / "proofs" / "op.mlw").write_text(
        "module M\n  (* req: MUL-R1 *)\n  lemma same_shape: forall x: int. x = x\n"
        "  (* req: MUL-R1 *)\n  lemma other: forall x: int. x = x\nend\n")
    records.append({"file": "proofs/op.mlw", "theory": "M", "goal": "helper'vc", "req": [],
                    "result": "valid", "prover": "CVC5,1.0", "time": 0.5})
    (root / "spec" / "trace-supports.toml").write_text(
        '[[proof]]\npath = "proofs/op.mlw"\ngoal = "M.help*"\nsupports = ["MUL-R1"]\nwhy = "w"\n'
        '[[proof]]\npath = "proofs/else.mlw"\ngoal = "*"\nsupports = ["MUL-R2"]\nwhy = "w"\n')
    m = build(root)
    assert m.rows[0].proof == [
        {"path": "proofs/op.mlw", "line": 3, "goal": "same_shape", "declared": False,
         "status": "proved", "prover": "5.4.0,Z3", "time": 0.02, "source": "replay"},
        {"path": "proofs/op.mlw", "line": 5, "goal": "other", "declared": False,
         "status": "missing", "prover": "", "time": None, "source": "replay"},
        {"path": "proofs/op.mlw", "line": 0, "goal": "M.helper", "declared": True,
         "status": "proved", "prover": "1.0,CVC5", "time": 0.5, "source": "replay"}]
    assert m.rows[1].proof == []


def test_a_test_named_twice_for_a_requirement_is_one_entry_and_the_next_test_still_counts(tree):
    root, _ = tree
    path = root / "tests" / "test_kernel.py"
    text = path.read_text().replace('@pytest.mark.req("MUL-R1")\ndef test_same',
                                    '@pytest.mark.req("MUL-R1")\n@pytest.mark.req("MUL-R1")\ndef test_same')
    path.write_text(text.replace('@pytest.mark.req("MUL-R2")', '@pytest.mark.req("MUL-R2", "MUL-R1")'))
    m = build(root)
    assert [t["test"] for t in m.rows[0].test] == ["tests/test_kernel.py::test_same",
                                                    "tests/test_kernel.py::test_dense"]


def test_test_entries_carry_every_documented_field_and_at_most_five_failures(tree):
    root, _ = tree
    cases = "".join(f'<testcase classname="tests.test_kernel" name="test_same[{i}]" time="0">'
                    f'<failure message="m{i}"/></testcase>' for i in range(6))
    cases += '<testcase classname="tests.test_kernel" name="test_dense" time="0"/>'
    (root / "build" / "junit.xml").write_text(
        f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{INPUTS}{cases}</testsuite></testsuites>')
    entry = build(root).rows[0].test[0]
    assert entry == {"test": "tests/test_kernel.py::test_same", "path": "tests/test_kernel.py", "line": 4,
                     "status": "failed", "declared": False, "tool": False, "passed": 0, "failed": 6, "skipped": 0,
                     "failures": [f"test_same[{i}]" for i in range(5)]}


def test_on_a_stale_report_a_test_without_result_stays_not_run(tree):
    # MUL-R1 has a stale result (test_same) and then a test without any (test_dense)
    root, _ = tree
    path = root / "tests" / "test_kernel.py"
    path.write_text(path.read_text().replace('@pytest.mark.req("MUL-R2")', '@pytest.mark.req("MUL-R2", "MUL-R1")'))
    (root / "build" / "junit.xml").write_text(junit_xml(omit=("test_dense",)))   # not stamped: stale
    reg = requirements.parse((root / REGISTRY_FILE).read_text())
    m = matrix.build(root, registry=reg, junit_path=root / "build" / "junit.xml",
                     crosshair_path=root / "build" / "none.json")
    assert [t["status"] for r in m.rows for t in r.test] == ["stale", "not run", "not run"]
    details = [(d.kind, d.requirement, d.detail) for d in m.defects if d.kind != "suspect"]
    assert details == [
        ("not run", "MUL-R1", "tests/test_kernel.py::test_dense has no result in junit.xml"),
        ("stale", "MUL-R1", "1 test result(s) made on another tree"),
        ("not run", "MUL-R2", "tests/test_kernel.py::test_dense has no result in junit.xml"),
        ("stale", "-", "junit.xml was made on another tree (its inputs differ)")]


def test_a_goal_not_replayed_is_a_not_run_defect(tree):
    root, records = tree
    accept_all(root)
    records[0]["result"] = "not replayed"
    m = build(root)
    assert [(d.kind, d.requirement, d.detail) for d in m.defects] == [
        ("not run", "MUL-R1", "proofs/op.mlw:same_shape: no replay summary")]


def test_a_stale_goal_does_not_hide_the_next_goals_verdict(tree):
    root, records = tree
    (root / "proofs" / "op.mlw").write_text(
        "module M\n  (* req: MUL-R1 *)\n  lemma same_shape: forall x: int. x = x\n"
        "  (* req: MUL-R1 *)\n  lemma other: forall x: int. x = x\nend\n")
    accept_all(root)
    records[0]["result"] = "stale"
    records.append(dict(records[0], goal="other", result="not proved"))
    m = build(root)
    assert sorted((d.kind, d.detail) for d in m.defects) == [
        ("stale", "1 proof result(s) made on another tree"),
        ("unproved", "proofs/op.mlw:other is unproved")]


def test_defect_details_name_what_is_wrong(tree):
    root, _ = tree
    (root / "tests" / "test_kernel.py").write_text(TESTS + "\n\ndef test_loose():\n    pass\n")
    (root / "build" / "junit.xml").write_text(junit_xml().replace(
        'name="test_dense" time="0.01">', 'name="test_dense" time="0.01"><skipped message="s"/>'))
    m = build(root)     # nothing reviewed: both rows suspect, with a diff from nothing
    details = [(d.kind, d.requirement, d.detail) for d in m.defects]
    assert ("skipped", "MUL-R2", "tests/test_kernel.py::test_dense: 1 skipped case(s)") in details
    assert ("suspect", "MUL-R1", "never reviewed (not in the baseline)") in details
    assert ("unlinked", "-", "tests/test_kernel.py::test_loose: names no requirement and is declared for none") in details
    assert m.rows[0].diffs["statement"].endswith("+A and B have the same shape.")


def test_evidence_that_reaches_no_row_is_a_defect_of_its_own(tree):
    # an unmarked goal declared only for another file, a skipped case of no known test and an
    # orphan ID in the spec (built at run time: the real tree names no orphan)
    root, records = tree
    records.append({"file": "proofs/op.mlw", "theory": "M", "goal": "helper'vc", "req": [],
                    "result": "valid", "prover": "Z3", "time": 0.1})
    (root / "spec" / "trace-supports.toml").write_text(
        '[[proof]]\npath = "proofs/else.mlw"\ngoal = "*"\nsupports = ["MUL-R2"]\nwhy = "w"\n')
    orphan = "MUL-R" + "97"
    (root / "spec" / "op.md").write_text(f"- [MUL-R1] a\n- [MUL-R2] b\n- [{orphan}] c\n")
    (root / "build" / "junit.xml").write_text(junit_xml().replace(
        "</testsuite>", '<testcase classname="tests.test_gone" name="test_x" time="0"><skipped message="s"/>'
                        "</testcase></testsuite>"))
    m = build(root)
    details = [(d.kind, d.requirement, d.detail) for d in m.defects if d.kind != "suspect"]
    assert details == [
        ("orphan", orphan, "named in spec/op.md:3"),
        ("unlinked", "-", "proofs/op.mlw:M.helper: goal names no requirement and is declared for none"),
        ("skipped", "-", "tests.test_gone::test_x is skipped and reaches no row")]
    # the JSON form carries each row's state, the orphans and counts that agree with them
    d = m.as_dict()
    states = [r.state for r in m.rows]
    assert [r["state"] for r in d["requirements"]] == states and None not in states
    assert d["orphans"] == [{"kind": "orphan", "requirement": orphan, "detail": "named in spec/op.md:3"}]
    assert d["summary"] == {"requirements": 2, "ok": states.count("ok"), "partial": states.count("partial"),
                            "suspect": states.count("suspect"),
                            "defect": states.count("defect"), "defects": len(m.defects)}


# ------------------------------------------------------------------ evidence.py (the runner)

def test_the_steps_are_the_five_checks_in_order_writing_into_the_bundle(tmp_path):
    out = tmp_path / "bundle"
    examples = sorted(p.relative_to(evidence.ROOT).as_posix() for p in (evidence.ROOT / "examples").glob("*.onnx"))
    assert examples, "no example model to validate"
    steps = evidence._steps("py", out)
    # the first four run the project's tool they are named after (none is run here); the
    # name keeps "five" for the mutation records that cite it: extract-c (issue 20) made six,
    # the qualification kit (issue 31) seven
    assert len(steps) == 7 and [cmd for _, cmd, _ in steps[:4]] == [[f"tools/{name}"] for name, _, _ in steps[:4]]
    assert steps[1][0] == "extract-c" and steps[3][0] == "test"
    assert all(os.access(evidence.ROOT / cmd[0], os.X_OK) for _, cmd, _ in steps[:4])
    assert [env for _, _, env in steps[:4]] == [{}, {}, {}, {"SONNX_JUNIT": str(out / "junit.xml")}]
    assert steps[4:] == [
        ("validate", ["py", "-m", "sonnx_dev.examples", *examples], {}),
        ("trace", ["py", "-m", "sonnx.cli", "trace", "--format", "html,md,json,csv,reqif,lobster", "--output-dir", str(out / "trace"),
                   "--junit", str(out / "junit.xml"), "--proofs", str(out / "proofs.json"),
                   "--crosshair", str(out / "crosshair.json")], {}),
        ("qualification", ["py", "-m", "sonnx_dev.qualification", "--bundle", str(out)], {})]


def test_main_runs_the_project_steps_into_build_evidence(monkeypatch):
    calls = []
    monkeypatch.setattr(evidence, "run", lambda steps, out: calls.append((steps, out)) or 7)
    assert evidence.main() == 7
    assert calls == [(evidence._steps(sys.executable, evidence.OUT), evidence.OUT)]
    assert evidence.OUT == evidence.ROOT / "build" / "evidence"


def _tool(folder, name, body):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_a_tool_version_is_its_first_output_line_venv_first_then_path(tmp_path, monkeypatch):
    root, bin_dir = tmp_path / "root", tmp_path / "bin"
    monkeypatch.setattr(evidence, "ROOT", root)
    monkeypatch.setenv("PATH", str(bin_dir))
    venv_tool = _tool(root / ".venv" / "bin", "both", 'echo "venv $1"; echo second')
    _tool(bin_dir, "both", 'echo "path $1"')
    on_path = _tool(bin_dir, "onpath", 'echo "$1 $2" >&2')          # some tools answer on stderr
    silent = _tool(bin_dir, "silent", "true")
    assert evidence._version(["both", "--version"]) == f"venv --version ({venv_tool})"
    assert evidence._version(["onpath", "-V", "x"]) == f"-V x ({on_path})"
    assert evidence._version(["silent"]) == f"? ({silent})"
    assert evidence._version(["absent", "--version"]) == "not found"


def test_a_tool_that_hangs_is_recorded_as_an_error_not_waited_for(tmp_path, monkeypatch):
    # the 30 s hang guard, scaled down 100 times so that the test is quick
    monkeypatch.setattr(evidence, "ROOT", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    _tool(tmp_path / "bin", "hangs", "exec /bin/sleep 5")
    real = subprocess.run
    monkeypatch.setattr(evidence.subprocess, "run", lambda *a, **kw: real(*a, **{**kw, "timeout": kw["timeout"] / 100}))
    assert evidence._version(["hangs"]).startswith("error: ")


def test_blas_keeps_the_identifying_fields_of_each_loaded_library(monkeypatch):
    blas = evidence._blas()
    assert blas["loaded"] and all(set(lib) == {"user_api", "internal_api", "version", "num_threads",
                                               "architecture", "filepath"} for lib in blas["loaded"])
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)        # import fails
    assert evidence._blas()["loaded"] == "threadpoolctl not installed"


def test_blas_of_a_numpy_without_dict_config_records_an_empty_build(monkeypatch):
    import numpy

    def old_show_config():       # numpy < 1.25: no mode argument
        return None
    monkeypatch.setattr(numpy, "show_config", old_show_config)
    assert evidence._blas()["numpy_build"] == {}


def test_cpu_reads_the_first_model_name_and_flags_even_with_colons_and_bad_bytes(tmp_path, monkeypatch):
    fake = tmp_path / "cpuinfo"
    fake.write_bytes(b"processor\t: 0\nmodel name\t: Chip: rev \xff 2\nflags\t\t: fpu  sse2\n\n"
                     b"processor\t: 1\nmodel name\t: Other\nflags\t\t: none\n")
    real = evidence.Path
    monkeypatch.setattr(evidence, "Path", lambda p: fake if p == "/proc/cpuinfo" else real(p))
    assert evidence._cpu() == {"cores": os.cpu_count(), "machine": platform.machine(),
                               "model name": "Chip: rev \ufffd 2", "flags": ["fpu", "sse2"]}
    monkeypatch.setattr(evidence, "Path", lambda p: tmp_path / "absent" if p == "/proc/cpuinfo" else real(p))
    assert evidence._cpu() == {"cores": os.cpu_count(), "machine": platform.machine()}


class _Dist:
    def __init__(self, name, version):
        self.metadata = email.message.Message()
        if name:
            self.metadata["Name"] = name
        self.version = version


def test_packages_are_every_named_distribution_sorted_without_case(monkeypatch):
    assert evidence.packages()["numpy"] == importlib.metadata.version("numpy")
    dists = [_Dist("Zeta", "1"), _Dist("typingx", "3"), _Dist(None, "9"), _Dist("typing_extensions", "2"),
             _Dist("alpha", "4")]
    monkeypatch.setattr(importlib.metadata, "distributions", lambda: dists)
    assert list(evidence.packages().items()) == [("alpha", "4"), ("typing_extensions", "2"), ("typingx", "3"),
                                                 ("Zeta", "1")]


def test_the_manifest_names_the_interpreter_platform_jit_and_provers(monkeypatch):
    seen = []
    monkeypatch.setattr(evidence, "_version", lambda cmd: seen.append(cmd) or f"v of {cmd[0]}")
    monkeypatch.setattr(evidence, "packages", lambda: {"numpy": "1"})
    man = evidence.manifest("today")
    assert (man["python"], man["platform"]) == (sys.version, platform.platform())
    assert man["jit"] == {"llvmlite": "not installed"}
    assert man["tools"] == {t: f"v of {c}" for t, c in (("why3", "why3"), ("z3", "z3"), ("cvc4", "cvc4"),
                                                        ("cvc5", "cvc5"), ("gappa", "gappa"), ("gcc", "gcc"),
                                                        ("binutils", "objdump"))}
    assert seen == [[t, "--version"] for t in ("why3", "z3", "cvc4", "cvc5", "gappa", "gcc", "objdump")]


def test_the_index_page_colours_each_step_and_links_only_the_files_made(tmp_path):
    out = tmp_path / "bundle"
    made = ("trace/trace.html", "trace/trace.md", "junit.xml", "proofs.json", "crosshair.json",
            "validate/examples.txt", "manifest.json", "summary.json")
    for rel in made[:3] + made[6:7]:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("x")
    results = [{"step": "a<b", "verdict": "pass", "exit_code": 0, "seconds": 1.5},
               {"step": "c", "verdict": "FAIL", "exit_code": 3, "seconds": 2.0}]
    man = {"git": {"commit": "abc", "dirty": True}, "date_utc": "today"}
    page = evidence.index_html(results, man, out)
    assert ("<tr><td>a&lt;b</td><td class='ok'>pass</td><td>0</td><td>1.5 s</td>"
            "<td><a href='logs/a&lt;b.log'>log</a></td></tr>") in page
    assert "<tr><td>c</td><td class='bad'>FAIL</td><td>3</td><td>2.0 s</td>" in page
    assert "<span class='bad'>FAILED</span>" in page and "commit abc (tree differs from it), today" in page
    files = "".join(f"<li><a href='{p}'>{p}</a></li>"
                    for p in ("trace/trace.html", "trace/trace.md", "junit.xml", "manifest.json", "SHA256SUMS"))
    assert page.endswith(f"<h2>Files</h2><ul>{files}</ul><p>Check the bundle with <code>sha256sum -c SHA256SUMS"
                         "</code> in this folder.</p></body></html>\n")
    for rel in made:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("x")
    assert [h.split("'")[0] for h in evidence.index_html(results, man, out).split("<li><a href='")[1:]] == [
        *made, "SHA256SUMS"]
    man["git"]["dirty"] = False
    page = evidence.index_html(results[:1], man, out)
    assert "<span class='ok'>every step passed</span>" in page and "<p>commit abc, today</p>" in page


def test_a_bundle_folder_that_cannot_be_emptied_stops_the_run_with_exit_2(tmp_path, capsys):
    out = tmp_path / "a-file"
    out.write_text("not a folder: rmtree cannot empty it")
    assert evidence.run([_step("never", "raise SystemExit(1)")], out) == 2
    printed = capsys.readouterr()
    assert printed.err == f"evidence: cannot empty {out}\n" and "never" not in printed.out


def test_the_summary_records_each_step_command_and_its_time_to_a_tenth(tmp_path, capsys):
    steps = [_step("first", "pass"), _step("test", "import time; time.sleep(0.25); print('== 2 passed in 0.2s ==')")]
    assert evidence.run(steps, tmp_path / "e") == 0
    summary = json.loads((tmp_path / "e" / "summary.json").read_text())
    man = json.loads((tmp_path / "e" / "manifest.json").read_text())
    assert (summary["commit"], summary["dirty"]) == (man["git"]["commit"], man["git"]["dirty"])
    assert [s["command"] for s in summary["steps"]] == [cmd for _, cmd, _ in steps]
    times = [s["seconds"] for s in summary["steps"]] + [summary["seconds"]]
    assert all(isinstance(t, float) and t == round(t, 1) for t in times) and 0.2 <= summary["seconds"] < 600
    lines = capsys.readouterr().out.splitlines()
    assert f"[1/2] first: {sys.executable} -c pass" in lines
    assert any(line.startswith("[2/2] test: pass (exit 0, ") for line in lines)
    assert "2 passed in 0.2s" in lines          # the test step's pytest summary, bare, for CI
    assert lines[-1].startswith(f"evidence: {tmp_path / 'e'}/ written in ") and lines[-1].endswith(" s; every step passed")


def test_evidence_inputs_are_shown_relative_to_the_tree_when_inside_it(tmp_path, monkeypatch):
    root = _tree(tmp_path / "root")
    monkeypatch.setattr(matrix, "_proof_records", lambda root, path: ([], "replay", []))
    m = matrix.build(root, registry=REGISTRY, junit_path=root / "build" / "j.xml",
                     crosshair_path=tmp_path / "elsewhere.json", proofs_path=root / "p.json")
    shown = {v for v in m.inputs.values() if isinstance(v, str)}
    assert {"build/j.xml", str(tmp_path / "elsewhere.json")} <= shown and str(root / "build" / "j.xml") not in shown


def test_git_state_names_the_commit_each_untracked_file_and_at_most_200_changes(tmp_path):
    def git(*a):
        return subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True, text=True).stdout
    assert evidence.git_state(tmp_path) == {"commit": "unknown", "dirty": True, "changes": []}   # not a repository
    git("init", "-q")
    (tmp_path / "a.txt").write_text("a")
    git("add", "a.txt")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a")
    assert evidence.git_state(tmp_path) == {"commit": git("rev-parse", "HEAD").strip(), "dirty": False, "changes": []}
    (tmp_path / "sub").mkdir()
    for i in range(201):
        (tmp_path / "sub" / f"{i:03}.txt").write_text("new")
    changes = evidence.git_state(tmp_path)["changes"]
    assert changes == [f"?? sub/{i:03}.txt" for i in range(200)]


# ------------------------------------------------------------------ links.py (the collectors)

def test_collect_finds_each_kind_of_site_at_its_line(tmp_path):
    # spec tag on line 2; an ID on the second line of a multi-line string; a declared goal
    # pattern; mentions in src, tests and proofs; proofs not collected when asked not to
    root = _tree(tmp_path, code='X = 1\n\n\ndef check():\n    return """a\n    MUL-R1"""\n', spec="intro\n[MUL-R1] x\n")
    (root / "proofs" / "op.mlw").write_text("module M\n  (* req: MUL-R1 *)\n  lemma a: true\nend\n")
    (root / "spec" / "trace-supports.toml").write_text(
        '[[test]]\npath = "tests/test_h.py"\nname = "test_h*"\nsupports = ["MUL-R1"]\nwhy = "w"\n'
        '[[proof]]\npath = "proofs/op.mlw"\ngoal = "M.help*"\nsupports = ["MUL-R1"]\nwhy = "w"\n')
    found = links.collect(root, with_proofs=False)
    sites = {(s.kind, s.path, s.line, s.name) for s in found.sites["MUL-R1"]}
    assert sites == {("spec", "spec/op.md", 2, ""), ("code", "src/sonnx/kernel.py", 6, "check"),
                     ("test", "tests/test_kernel.py", 3, "tests/test_kernel.py::test_a"),
                     ("test-declared", "tests/test_h.py", 0, "tests/test_h.py::test_h*"),
                     ("proof-declared", "proofs/op.mlw", 0, "M.help*")}
    assert sorted((s.kind, s.path, s.line) for s in found.mentions["MUL-R1"]) == [
        ("mention", "proofs/op.mlw", 2), ("mention", "spec/op.md", 2), ("mention", "src/sonnx/kernel.py", 6),
        ("mention", "tests/test_kernel.py", 3)]
    (root / "spec" / "trace-supports.toml").unlink()
    assert links.supports(root) == {"test": [], "proof": []}


@pytest.mark.parametrize("entry", ['path = "p"\nsupports = ["MUL-R1"]\n',          # no why
                                   'path = "p"\nsupports = []\nwhy = "w"\n'])        # empty supports
def test_a_declaration_without_why_or_with_empty_supports_is_refused(tmp_path, entry):
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "trace-supports.toml").write_text(
        '[[proof]]\npath = "p"\nsupports = ["MUL-R1"]\nwhy = "w"\n[[proof]]\n' + entry)
    with pytest.raises(ValueError, match=r"\[\[proof\]\] #2 needs path, goal"):
        links.supports(tmp_path)


def test_code_sites_skip_the_trace_package_and_read_on_after_it(tmp_path):
    root = _tree(tmp_path)
    (root / "src" / "sonnx" / "trace" / "t.py").write_text("X = 'MUL-R1'\n")
    (root / "src" / "sonnx" / "zz.py").write_text("Y = 'MUL-R1'\n")
    assert sorted(s.path for _, s in links.code_sites(root)) == ["src/sonnx/kernel.py", "src/sonnx/zz.py"]


def test_without_a_replay_the_python_goals_are_not_replayed_records(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    (root / "src" / "sonnx" / "k.py").write_text("# req: MUL-R1\ndef kernel(a):\n    return a\n")
    monkeypatch.setattr(proofs, "PY_FILES", ["src/sonnx/k.py"])
    session_goal = {"file": "proofs/op.mlw", "goal": "g", "result": "valid"}
    monkeypatch.setattr(proofs, "summary", lambda root: {"goals": [session_goal]})   # the sessions' record, kept
    records, source, problems = matrix._proof_records(root, root / "absent.json")
    assert (source, problems) == ("session (not replayed)", [])
    assert records == [session_goal,
        {"file": "src/sonnx/k.py", "theory": "python", "goal": "kernel", "req": ["MUL-R1"],
         "result": "not replayed", "prover": "", "time": None}]


def test_the_pytest_summary_is_found_in_a_log_with_bytes_that_are_not_utf8(tmp_path):
    log = tmp_path / "test.log"
    log.write_bytes(b"\xff\xfe garbage\n== 3 passed in 1.0s ==\n")
    assert evidence.pytest_summary(log) == "3 passed in 1.0s"


def test_a_step_runs_in_the_tree_with_its_environment_and_its_stderr_kept(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)             # called from elsewhere: the step still runs in the tree
    code = "import os, sys; print(os.getcwd()); print(os.environ['SONNX_X']); print('on stderr', file=sys.stderr)"
    rc, secs = evidence._run("s", [sys.executable, "-c", code], {"SONNX_X": "given"}, tmp_path / "s.log", 0.0)
    assert rc == 0 and 0 < secs < 600
    assert (tmp_path / "s.log").read_text().splitlines() == [str(evidence.ROOT), "given", "on stderr"]
    assert capsys.readouterr().out.splitlines()[-1].endswith("s s | on stderr")


def test_a_step_that_cannot_start_exits_127_and_says_why(tmp_path, capsys):
    rc, secs = evidence._run("gone", [str(tmp_path / "absent-tool"), "arg"], {}, tmp_path / "gone.log", 0.0)
    assert rc == 127 and 0 <= secs < 600
    said = f"cannot start {tmp_path / 'absent-tool'}: "
    assert (tmp_path / "gone.log").read_text().startswith(said) and said in capsys.readouterr().out


def test_sha256sums_lists_every_file_below_the_folder_but_itself(tmp_path):
    import hashlib
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "sub" / "b.txt").write_text("b")
    (tmp_path / "SHA256SUMS").write_text("old")
    sha = {n: hashlib.sha256(n.encode()).hexdigest() for n in "ab"}
    assert evidence.sha256sums(tmp_path) == f"{sha['a']}  a.txt\n{sha['b']}  sub/b.txt\n"


def test_the_index_page_counts_partial_rows_and_links_each_to_its_trace_row(tmp_path):
    out = tmp_path / "bundle"
    (out / "trace").mkdir(parents=True)
    trace = {"summary": {"requirements": 3, "ok": 1, "partial": 2, "suspect": 0, "defect": 0, "defects": 0},
             "requirements": [{"id": "A-R1", "state": "ok", "title": "fine"},
                              {"id": "A-R2", "state": "partial", "title": "half"},
                              {"id": "B-R1", "state": "partial", "title": "other <half>"}]}
    (out / "trace" / "trace.json").write_text(json.dumps(trace))
    results = [{"step": "a", "verdict": "pass", "exit_code": 0, "seconds": 1.0}]
    page = evidence.index_html(results, {"git": {"commit": "abc", "dirty": False}, "date_utc": "today"}, out)
    # green steps with partial rows do not say only "every step passed"
    assert "<h1>SONNX evidence: <span class='ok'>every step passed; 2 requirement(s) partial</span></h1>" in page
    assert "3 requirements: <span class='ok'>1 covered</span>, 2 partial" in page
    assert "<li><a href='trace/trace.html#A-R2'>A-R2</a> partial: half</li>" in page
    assert "<li><a href='trace/trace.html#B-R1'>B-R1</a> partial: other &lt;half&gt;</li>" in page
    assert "A-R1</a>" not in page
    (out / "trace" / "trace.json").write_text("{")
    assert "No trace summary in this bundle" in evidence.index_html(results, {"git": {"commit": "abc", "dirty": False},
                                                                              "date_utc": "today"}, out)
