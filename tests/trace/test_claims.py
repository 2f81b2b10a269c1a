"""Claims (the [[claim]] tables of the requirement data files): every row says what its evidence establishes, part by
part; a declared gap makes the row partial, never plain green; a claim that names nothing
real, a gap without its justification, a part not proved without a gap and a requirement
without an entry are each a defect. Planted faults on small fixture trees, then the real tree.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sonnx import requirements
from sonnx.trace import baseline, claims, links, matrix, report
from tests.trace.registry import CLAIMS_FILE, write_data
from tests.trace.test_evidence_judge import REGISTRY, cases_xml, root, run_cli, write_all  # noqa: F401  (root: fixture)

ROOT = Path(__file__).resolve().parents[2]
PART = '[[claim]]\nid = "MUL-R1"\npart = "A and B have the same shape"\n'
FULL = PART + 'proof = ["proofs/op.mlw:same_shape"]\ncrosshair = ["h"]\ntest = ["tests/test_k.py::test_same"]\n'
GAP = "spec/gaps/MUL-R1.md"


def set_claims(root: Path, text: str, *, gap_text: str | None = "MUL-R1: not proved because ...\n",
               accept: bool = True) -> None:
    """Write the claims (and the gap file), review them, and refresh the evidence's inputs."""
    write_data(root, claims=text)
    if gap_text is not None:
        (root / GAP).parent.mkdir(parents=True, exist_ok=True)
        (root / GAP).write_text(gap_text)
    if accept:
        baseline.accept(root, baseline.site_texts(root, requirements.parse(REGISTRY), links.collect(root)), ["all"])
    write_all(root)


def judge(root: Path) -> matrix.Matrix:
    return matrix.build(root, registry=requirements.parse(REGISTRY))


def claim_details(m: matrix.Matrix) -> list[str]:
    return [d.detail for d in m.defects if d.kind == "claim"]


# ---------------------------------------------------------------- partial
def test_a_declared_gap_makes_a_clean_row_partial_in_every_output(root, capsys):
    set_claims(root, FULL + f'gap = "{GAP}"\n')
    m = judge(root)
    assert m.defects == [] and m.rows[0].state == "partial"
    assert m.rows[0].claims == [{"part": "A and B have the same shape", "level": "gap",
                                 "proof": ["proofs/op.mlw:same_shape"], "crosshair": ["h"],
                                 "test": ["tests/test_k.py::test_same"], "gap": GAP,
                                 "gap_text": (root / GAP).read_text(encoding="utf-8").strip()}]
    # the justification's text travels in every format, not only its path (the bundle has no spec/)
    why = (root / GAP).read_text(encoding="utf-8").strip().splitlines()[0]
    assert why and all(why in text for text in (report.to_json(m), report.to_markdown(m), report.to_html(m)))
    s = m.as_dict()["summary"]
    assert (s["ok"], s["partial"], s["defect"]) == (0, 1, 0)
    assert "| MUL-R1 | Same shape | partial |" in report.to_markdown(m)
    assert "## Partial: parts not proved as stated" in report.to_markdown(m)
    assert f"MUL-R1 (partial): A and B have the same shape - see {GAP}" in report.to_markdown(m)
    page = report.to_html(m)
    assert "<span class='state partial'>partial</span>" in page and ".partial{" in page
    assert "class='state ok'>covered" not in page.split("<table>")[1]
    assert report.to_csv(m).splitlines()[1].split(",")[2] == "partial"
    # partial is not a defect: exit 0, unless the certifier asks for no partial row
    rc, err = run_cli([], capsys)
    assert rc == 0 and "1 partial" in err and f"gap: MUL-R1: not proved as stated: A and B have the same shape (see {GAP})" in err
    rc, err = run_cli(["--no-partial"], capsys)
    assert rc == 1 and "1 partial" in err
    # on a terminal: partial in the colour of notes, in red when it fails the run
    assert "\x1b[36m1 partial\x1b[0m" in run_cli(["--color", "always"], capsys)[1]
    assert "\x1b[1;31m1 partial\x1b[0m" in run_cli(["--color", "always", "--no-partial"], capsys)[1]
    assert "claim (gap) A and B have the same shape: proof: proofs/op.mlw:same_shape; crosshair: h; " \
           f"test: tests/test_k.py::test_same <span class='partial'>gap: {GAP}</span><pre>" in page
    # Tests: the requirement's own test; Tool tests: the declared helper (spec/trace-supports.toml)
    running = report.running_cell(m.rows[0].running)
    assert running.startswith("default: ") and "tested, CrossHair-checked" in running
    assert f"| partial | 1 tag(s) | 1 site(s) | 2/2 proved | 1/1 passed | 2/2 harnesses clean | 1 gap | {running} | none x | 1/1 passed | - |" \
        in report.to_markdown(m)


def test_the_claims_cell_counts_parts_by_level():
    row = matrix.Row("MUL-R1", "t", "s", [])
    assert report._claims_cell(row) == "-"
    row.claims = [{"level": level} for level in ("gap", "none", "test", "proof", "crosshair", "proof")]
    assert report._claims_cell(row) == "2 proved, 1 CrossHair only, 1 tested only, 1 gap, 1 no evidence"


def test_without_a_gap_the_same_row_is_green_and_no_partial_passes(root, capsys):
    set_claims(root, FULL, gap_text=None)
    m = judge(root)
    assert m.defects == [] and m.rows[0].state == "ok" and m.rows[0].claims[0]["level"] == "proof"
    assert "## Partial" not in report.to_markdown(m)
    assert run_cli(["--no-partial"], capsys)[0] == 0


# ---------------------------------------------------------------- claims that name nothing real
@pytest.mark.parametrize("kind,bad", [("proof", "proofs/op.mlw:same_shap"), ("proof", "proofs/other.mlw:same_shape"),
                                      ("proof", "proofs/op.mlw:M.helper"),     # declared support: never covers
                                      ("crosshair", "g"), ("test", "tests/test_k.py::test_sam"),
                                      ("test", "tests/test_k.py::test_helper")])
def test_a_claim_naming_what_is_not_linked_is_a_defect(root, kind, bad):
    set_claims(root, PART + f'{kind} = ["{bad}"]\n' + ('proof = ["proofs/op.mlw:same_shape"]\n' if kind != "proof" else ""))
    assert claim_details(judge(root)) == [
        f"part 1 (A and B have the same shape) names {kind} {bad}, which is not linked to MUL-R1"]


def test_a_failed_claimed_item_turns_the_row_red_and_a_defect_wins_over_partial(root):
    set_claims(root, FULL + f'gap = "{GAP}"\n')
    write_all(root, junit=cases_xml('<testcase classname="tests.test_k" name="test_same"><failure message="x"/></testcase>'
                                    '<testcase classname="tests.test_k" name="test_helper"/>', root=root))
    m = judge(root)
    assert [d.kind for d in m.defects] == ["failing"] and m.rows[0].state == "defect"


def test_harness_names_without_a_crosshair_summary_are_one_unverified_defect(root):
    set_claims(root, FULL.replace('crosshair = ["h"]', 'crosshair = ["h", "typo"]'))
    (root / "build" / "evidence" / "crosshair.json").unlink()
    details = claim_details(judge(root))
    assert details == ["names 2 CrossHair harness(es), unverified: no CrossHair summary was read"]


# ---------------------------------------------------------------- parts, gaps, entries
def test_a_part_not_proved_without_a_gap_is_a_defect_when_a_proof_is_demanded(root):
    set_claims(root, PART + 'test = ["tests/test_k.py::test_same"]\n')
    assert claim_details(judge(root)) == ["part 1 (A and B have the same shape) is not proved and declares no gap"]


def test_a_part_tested_only_is_fine_when_no_proof_is_demanded(tmp_path):
    parts = [claims.Part("p", test=("tests/t.py::test_x",))]
    found = {"proof": [], "crosshair": [], "test": [{"test": "tests/t.py::test_x", "status": "passed"}]}
    assert claims.judge(tmp_path, "PROF-R1", parts, found, demands_proof=False, crosshair_read=True) == (
        [{"part": "p", "level": "test", "proof": [], "crosshair": [], "test": ["tests/t.py::test_x"], "gap": None, "gap_text": None}], [])
    assert claims.judge(tmp_path, "PROF-R1", parts, found, demands_proof=True, crosshair_read=True)[1] == [
        "part 1 (p) is not proved and declares no gap"]
    # a long part is named by its first 60 characters
    long = [claims.Part("x" * 59 + "yz", test=("tests/t.py::test_x",))]
    assert claims.judge(tmp_path, "PROF-R1", long, found, demands_proof=True, crosshair_read=True)[1] == [
        f"part 1 ({'x' * 59}y) is not proved and declares no gap"]


def test_levels_name_the_strongest_evidence():
    assert [claims.Part("p", crosshair=("h",), test=("t",)).level(), claims.Part("p", test=("t",)).level(),
            claims.Part("p", proof=("g",), gap="f").level(), claims.Part("p").level()] == ["crosshair", "test", "gap", "none"]


def test_a_part_naming_no_evidence_is_a_defect(root):
    set_claims(root, PART + f'gap = "{GAP}"\n')
    assert claim_details(judge(root)) == ["part 1 (A and B have the same shape) names no evidence"]


@pytest.mark.parametrize("gap,text,problem", [
    (GAP, None, f"justification file {GAP} is missing or empty"),
    (GAP, " \n\t\n", f"justification file {GAP} is missing or empty"),
    (GAP, "GEMM-R4: shape-blind", f"justification file {GAP} does not name MUL-R1"),
    ("spec/gaps", None, "justification file spec/gaps is missing or empty"),            # a folder
    ("../outside.md", None, "justification file ../outside.md is missing or empty"),   # outside the tree
])
def test_a_gap_without_its_justification_is_a_defect(root, gap, text, problem):
    (root.parent / "outside.md").write_text("MUL-R1 justified from outside the repository")
    set_claims(root, FULL + f'gap = "{gap}"\n', gap_text=text if text is not None else "MUL-R1 other file")
    if text is None and gap == GAP:
        (root / GAP).unlink()
    m = judge(root)
    assert claim_details(m) == [f"part 1 (A and B have the same shape): {problem}"]
    assert m.rows[0].state == "defect"


def test_a_justification_that_cannot_be_read_as_text_is_missing(root):
    set_claims(root, FULL + f'gap = "{GAP}"\n')
    (root / GAP).write_bytes(b"MUL-R1 \xff\xfe")
    assert claims.gap_text(root, GAP) == ""
    assert claim_details(judge(root)) == [f"part 1 (A and B have the same shape): justification file {GAP} is missing or empty"]


def test_a_requirement_without_an_entry_is_a_defect_and_an_entry_of_no_requirement_an_orphan(root):
    other = "MUL-R" + "9"          # built at run time: the real tree names no orphan
    set_claims(root, FULL + f'\n[[claim]]\nid = "{other}"\npart = "x"\ntest = ["t"]\n')
    m = judge(root)
    assert [(o.kind, o.requirement, o.detail) for o in m.orphans] == [
        ("orphan", other, "has a [[claim]] entry in a requirement data file")]
    set_claims(root, '[[claim]]\nid = "MUL-R2"\npart = "x"\ntest = ["t"]\n')
    m = judge(root)
    missing = f"no [[claim]] entry in {CLAIMS_FILE}: say what its evidence establishes"
    assert claim_details(m) == [missing]
    (root / CLAIMS_FILE).unlink()
    write_all(root)
    assert claim_details(judge(root)) == [missing]
    assert claims.load(root) == {}


@pytest.mark.parametrize("text,message", [
    ("[[claim]\n", "malformed"),
    ('claim = "x"\n', "claim must be [[claim]] tables"),
    ("claim = [1]\n", "claim must be [[claim]] tables"),
    ('[[claims]]\nid = "MUL-R1"\n', "unknown table(s) claims"),
    ('[[claim]]\npart = "x"\ntest = ["t"]\n', "a [[claim]] needs id"),
    ('[[claim]]\nid = "MUL-R1"\nproof = ["g"]\n', "claim MUL-R1 part 1 needs part"),
    ('[[claim]]\nid = "MUL-R1"\npart = "  "\n', "claim MUL-R1 part 1 needs part"),
    (PART + 'tests = ["t"]\nwhy = "w"\n', "unknown key(s) tests, why"),
    (PART + 'test = "t"\n', "test must be a list of names"),
    (PART + 'proof = [""]\n', "proof must be a list of names"),
    (PART + 'crosshair = [1]\n', "crosshair must be a list of names"),
    (PART + "gap = 1\n", "gap must be the path of a justification file"),
    (PART + 'gap = ""\n', "gap must be the path of a justification file"),
])
def test_a_malformed_claims_file_exits_2_with_its_name(root, capsys, text, message):
    write_data(root, claims=text)
    with pytest.raises(matrix.EvidenceError, match=CLAIMS_FILE):
        judge(root)
    rc, err = run_cli([], capsys)
    assert rc == 2 and message in err and "Traceback" not in err
    rc, err = run_cli(["--accept", "all"], capsys)
    assert rc == 2 and message in err


def test_part_text_is_one_line_and_the_reviewed_form_lists_every_field():
    [part] = claims._part("MUL-R1", 1, {"id": "MUL-R1", "part": "two\n   lines", "proof": ["g", "g2"], "gap": "f.md"}),
    assert part.text == "two lines"
    assert claims.text([part, claims.Part("q", crosshair=("h",), test=("t",))]) == (
        "part: two lines\n  proof: g, g2\n  gap: f.md\npart: q\n  crosshair: h\n  test: t")


def test_a_justification_is_read_with_its_whitespace_collapsed_and_a_fifo_is_never_read(root):
    (root / "j.md").write_text("MUL-R1:\n  not   proved\n")
    assert claims.gap_text(root, "j.md") == "MUL-R1: not proved"
    os.mkfifo(root / "fifo.md")           # reading it would wait for a writer forever
    assert claims.gap_text(root, "fifo.md") == ""


# ---------------------------------------------------------------- the claims are reviewed
def test_an_edited_claim_or_justification_makes_the_row_suspect(root):
    set_claims(root, FULL + f'gap = "{GAP}"\n')
    write_data(root, claims=FULL)                            # the gap dropped: green without review?
    write_all(root)
    m = judge(root)
    assert m.rows[0].state == "suspect"
    assert m.rows[0].suspect == ["claims changed", f"gap:{GAP} is gone"]
    assert "-  gap: spec/gaps/MUL-R1.md" in m.rows[0].diffs["claims"]
    set_claims(root, FULL + f'gap = "{GAP}"\n')
    (root / GAP).write_text("MUL-R1: reworded justification\n")
    assert judge(root).rows[0].suspect == [f"gap:{GAP} changed"]


# ---------------------------------------------------------------- the real tree
def real_claims() -> dict[str, list[claims.Part]]:
    return claims.load(ROOT)


def test_every_requirement_has_an_entry_and_every_entry_a_requirement():
    assert set(real_claims()) == set(requirements.load())


def test_claimed_harnesses_are_in_the_campaign_for_their_requirement():
    """The trace checks harness names against crosshair.json; this checks them without it."""
    from tests.crosshair import harnesses as H
    known = {h.name: h.requirements for h in H.HARNESSES} | {f"mutant {m.name}": m.requirements for m in H.MUTANTS}
    for rid, parts in real_claims().items():
        for p in parts:
            for name in p.crosshair:
                assert rid in known.get(name, ()), f"{rid} claims harness {name!r}"


def partial_rows() -> set[str]:
    """The rows whose statement is not proved as stated, derived from the data: a row is
    partial when one of its claim parts declares a gap (spec/gaps/*.md says why)."""
    return {rid for rid, parts in real_claims().items() if any(p.gap for p in parts)}


def test_every_gap_file_is_declared_and_every_declared_gap_has_its_file():
    named = {p.gap for parts in real_claims().values() for p in parts if p.gap}
    files = {f"spec/gaps/{f.name}" for f in (ROOT / "spec" / "gaps").glob("*.md") if f.name != "README.md"}
    assert named == files
    for rid, parts in real_claims().items():
        for p in parts:
            if p.gap:
                assert rid in claims.gap_text(ROOT, p.gap), (rid, p.gap)


def test_the_real_claims_hold_and_declare_exactly_the_known_gaps(tmp_path):
    """On a reviewed copy of the tree, without evidence files: no claim defect other than the
    harnesses that only a CrossHair summary can confirm, and the rows that declare a gap are
    those of the audit (they are partial once the evidence is green)."""
    for d in ("src", "spec", "proofs", "tests"):
        shutil.copytree(ROOT / d, tmp_path / d, ignore=shutil.ignore_patterns("__pycache__"))
    reg = requirements.load()
    baseline.accept(tmp_path, baseline.site_texts(tmp_path, reg, links.collect(tmp_path)), ["all"])
    m = matrix.build(tmp_path, registry=reg, junit_path=tmp_path / "none.xml",
                     crosshair_path=tmp_path / "none.json", proofs_path=tmp_path / "none.json")
    wrong = [d for d in m.defects if d.kind in ("claim", "suspect", "orphan")
             and not d.detail.endswith("unverified: no CrossHair summary was read")]
    assert wrong == []
    assert {r.id for r in m.rows if any(c["gap"] for c in r.claims)} == partial_rows() != set()
    for r in m.rows:       # every part of a row demanding a proof is proved or declares its gap
        assert all(c["proof"] or c["gap"] for c in r.claims) or "proof" not in r.verification, r.id
