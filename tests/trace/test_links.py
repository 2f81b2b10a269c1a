"""Trace tests: every requirement reaches code and tests; every ID named exists.

The first test runs on the real tree. The others build a small tree in tmp_path and show
that each kind of gap is caught, so a green result on the real tree means something.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from sonnx import requirements
from sonnx.trace import links
from tests.trace.registry import registry_toml

ROOT = Path(__file__).resolve().parents[2]


def test_real_tree_has_no_gaps():
    registry = requirements.load()
    found = links.collect(ROOT, with_proofs=False)
    assert links.gaps(registry, found) == []


def test_every_real_test_names_a_requirement_or_is_declared():
    assert links.unlinked_tests(ROOT, links.collect(ROOT, with_proofs=False)) == []


def test_an_unmarked_undeclared_test_is_unlinked(tmp_path):
    root = _tree(tmp_path, CODE_BOTH, TEST_BOTH.replace("pytestmark", "other") + "\nclass TestX:\n    def test_m(self):\n        pass\n")
    found = links.collect(root, with_proofs=False)
    assert links.unlinked_tests(root, found) == ["tests/test_kernel.py::TestX::test_m"]
    (root / "spec" / "trace-supports.toml").write_text(
        '[[test]]\npath = "tests/test_kernel.py"\nname = "TestX"\nsupports = ["MUL-R2"]\nwhy = "w"\n')
    assert links.unlinked_tests(root, links.collect(root, with_proofs=False)) == []


def _tree(tmp_path: Path, code: str, test: str, spec: str = "") -> Path:
    (tmp_path / "src" / "sonnx" / "trace").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    (tmp_path / "spec").mkdir()
    (tmp_path / "proofs").mkdir()
    (tmp_path / "src" / "sonnx" / "kernel.py").write_text(code)
    (tmp_path / "tests" / "test_kernel.py").write_text(test)
    (tmp_path / "spec" / "op.md").write_text(spec)
    return tmp_path


REGISTRY = requirements.parse(registry_toml(("MUL-R1", "t", "s", ["test"]), ("MUL-R2", "t", "s", ["test"])))

CODE_BOTH = 'def check():\n    return ["MUL-R1", "MUL-R2"]\n'
TEST_BOTH = ('import pytest\n\n@pytest.mark.req("MUL-R1")\ndef test_a():\n    assert True\n\n'
             'pytestmark = pytest.mark.req("MUL-R2")\n')


def test_complete_fixture_passes(tmp_path):
    root = _tree(tmp_path, CODE_BOTH, TEST_BOTH)
    assert links.gaps(REGISTRY, links.collect(root, with_proofs=False)) == []


def test_missing_code_site_is_caught(tmp_path):
    root = _tree(tmp_path, 'def check():\n    return ["MUL-R1"]\n', TEST_BOTH)
    assert links.gaps(REGISTRY, links.collect(root, with_proofs=False)) == ["MUL-R2: no code site names it"]


def test_missing_test_is_caught(tmp_path):
    test = 'import pytest\n\n@pytest.mark.req("MUL-R1")\ndef test_a():\n    assert True\n'
    root = _tree(tmp_path, CODE_BOTH, test)
    assert links.gaps(REGISTRY, links.collect(root, with_proofs=False)) == ["MUL-R2: no test site names it"]


def test_orphan_id_is_caught(tmp_path):
    orphan = "MUL-R" + "97"  # built at run time so that the real tree holds no orphan
    root = _tree(tmp_path, CODE_BOTH, TEST_BOTH, spec=f"A rule [{orphan}]\n")
    problems = links.gaps(REGISTRY, links.collect(root, with_proofs=False))
    assert len(problems) == 1 and problems[0].startswith(f"{orphan}: named in spec/op.md:1")


def test_trace_package_itself_is_not_a_code_site(tmp_path):
    root = _tree(tmp_path, "", TEST_BOTH)
    (root / "src" / "sonnx" / "trace" / "x.py").write_text('IDS = ["MUL-R1", "MUL-R2"]\n')
    problems = links.gaps(REGISTRY, links.collect(root, with_proofs=False))
    assert problems == ["MUL-R1: no code site names it", "MUL-R2: no code site names it"]


@pytest.mark.parametrize("kind", ["spec", "code", "test"])
def test_real_tree_sites_point_at_real_lines(kind):
    registry = requirements.load()
    found = links.collect(ROOT, with_proofs=False, registry=registry)
    assert found.unknown_families == {}
    for rid, sites in found.sites.items():
        for site in sites:
            if site.kind != kind:
                continue
            line = (ROOT / site.path).read_text(encoding="utf-8").splitlines()[site.line - 1]
            # the line names the ID, or a family it belongs to (``@rounding``)
            families = requirements.FAMILY_RE.findall(line) if kind != "spec" else []
            named = rid in line or rid in requirements.expand(families, registry)[0]
            assert named, f"{site.path}:{site.line} does not name {rid}"


def test_docstrings_are_not_code_sites_but_comments_and_strings_are(tmp_path):
    code = ('"""Module doc naming MUL-R1."""\n\n\ndef check():\n    """Doc naming MUL-R2."""\n'
            '    # enforces MUL-R1\n    return """\nMUL-R2\n"""\n')
    root = _tree(tmp_path, code, TEST_BOTH)
    found = links.collect(root, with_proofs=False)
    assert [(s.line, s.name) for s in found.of("MUL-R1", "code")] == [(6, "check")]
    assert [(s.line, s.name) for s in found.of("MUL-R2", "code")] == [(8, "check")]


# ---------------------------------------------------------------- families: @NAME for a group of IDs
FAMILY_REGISTRY = requirements.parse(
    registry_toml(("MUL-R1", "t", "s", ["test"]), ("MUL-R2", "t", "s", ["proof", "test"]),
                  ("PROF-R1", "t", "s", ["test"]))
    .replace('id = "MUL-R1"', 'id = "MUL-R1"\nfamilies = ["same-shape"]'))


def test_a_family_in_a_marker_links_every_member_and_only_them(tmp_path):
    code = "# req: @same-shape\ndef check():\n    return 1\n\n\n# req: @proved, PROF-R1\ndef other():\n    return 2\n"
    test = ('import pytest\n\n@pytest.mark.req("@operators")\ndef test_a():\n    assert True\n\n'
            '@pytest.mark.req("@every")\ndef test_b():\n    assert True\n')
    root = _tree(tmp_path, code, test)
    (root / "spec" / "trace-supports.toml").write_text(
        '[[test]]\npath = "tests/test_kernel.py"\nname = "test_c"\nsupports = ["@same-shape"]\nwhy = "w"\n'
        '[[proof]]\npath = "proofs/op.mlw"\ngoal = "*"\nsupports = ["@proved"]\nwhy = "w"\n')
    found = links.collect(root, with_proofs=False, registry=FAMILY_REGISTRY)
    assert [s.name for s in found.of("MUL-R1", "code")] == ["check"]
    assert [s.name for s in found.of("MUL-R2", "code")] == ["other"]
    assert [s.name for s in found.of("PROF-R1", "code")] == ["other"]
    assert [s.name for s in found.of("MUL-R1", "test")] == ["tests/test_kernel.py::test_a", "tests/test_kernel.py::test_b"]
    assert [s.name for s in found.of("PROF-R1", "test")] == ["tests/test_kernel.py::test_b"]
    assert [s.name for s in found.of("MUL-R1", "test-declared")] == ["tests/test_kernel.py::test_c"]
    assert found.of("MUL-R2", "test-declared") == []
    assert [d["supports"] for d in found.declared_goals] == [["MUL-R2"]]
    assert found.unknown_families == {}


def test_an_unknown_family_is_recorded_where_it_is_named_and_links_nothing(tmp_path):
    root = _tree(tmp_path, "# req: @same-shap\ndef check():\n    return 1\n",
                 'import pytest\n\n@pytest.mark.req("@kind:nonsense")\ndef test_a():\n    assert True\n')
    (root / "spec" / "trace-supports.toml").write_text(
        '[[proof]]\npath = "proofs/op.mlw"\ngoal = "*"\nsupports = ["@nowhere", "MUL-R1"]\nwhy = "w"\n')
    found = links.collect(root, with_proofs=False, registry=FAMILY_REGISTRY)
    assert {k: [(s.path, s.line) for s in v] for k, v in found.unknown_families.items()} == {
        "@same-shap": [("src/sonnx/kernel.py", 1)], "@kind:nonsense": [("tests/test_kernel.py", 3)],
        "@nowhere": [("proofs/op.mlw", 0)]}
    assert found.of("MUL-R1", "code") == found.of("MUL-R1", "test") == []
    assert [d["supports"] for d in found.declared_goals] == [["MUL-R1"]]
    (root / "spec" / "trace-supports.toml").write_text(
        '[[test]]\npath = "tests/test_kernel.py"\nsupports = ["@nowhere"]\nwhy = "w"\n')
    assert "@nowhere" in links.collect(root, with_proofs=False, registry=FAMILY_REGISTRY).unknown_families


def test_a_family_in_a_proof_annotation_is_read_as_a_token():
    from sonnx.trace import proofs
    m = proofs.REQ_RE.search("(* req: @rounding, MUL-R1 -- prose *)")
    assert proofs.ID_RE.findall(m.group(1)) == ["@rounding", "MUL-R1"]


def test_the_real_markers_name_only_known_families():
    registry = requirements.load()
    found = links.collect(ROOT, registry=registry)
    assert found.unknown_families == {}
