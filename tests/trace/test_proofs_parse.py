"""The one WhyML reader (sonnx.trace.whyml) and what is built on it: the annotation parser of
sonnx.trace.proofs, the baseline's declaration text; the proof table. No why3 run."""
from pathlib import Path

from sonnx.trace import baseline, proofs, whyml

FIXTURE = """\
module M
  use int.Int

  axiom trusted: forall x: int. x + 0 = x

  val f (x: int) : int ensures { result > x }

  val g (x: int) : int

  (* req: MUL-R1, MUL-R4 -- shapes agree and nothing is broadcast *)
  lemma annotated: forall x: int. x = x

  (* a comment without IDs *)
  lemma plain: forall x: int. x = x

  (* req: GEMM-R2 *)
  let rec lemma induct (n: int) requires { n >= 0 } variant { n }
  = if n > 0 then induct (n - 1)

  (* req: GEMM-R7 *)
  let rec ghost function dot (n: int) : int variant { n }
  = if n <= 0 then 0 else dot (n - 1)

  val ghost function vgf (x: int) : int

  let ghost predicate gp (x: int) = x > 0

  val constant k : int
end
"""

REPO = Path(__file__).resolve().parents[2]


def _fixture(tmp_path):
    p = tmp_path / "fix.mlw"
    p.write_text(FIXTURE)
    return {g["name"]: g for g in proofs.parse_goals(p)}


def test_goal_with_ids(tmp_path):
    goals = _fixture(tmp_path)
    assert goals["annotated"]["req"] == ["MUL-R1", "MUL-R4"]
    assert goals["annotated"]["requirements"] == ["MUL-R1", "MUL-R4"]
    assert goals["annotated"]["module"] == "M"
    assert goals["induct"]["req"] == ["GEMM-R2"]


def test_keyword_combinations(tmp_path):
    """`let rec ghost function dot` is a declaration named dot (not `function`); any run of
    let/rec/ghost/lemma/function/predicate/val/constant comes before the name."""
    goals = _fixture(tmp_path)
    assert "function" not in goals and "ghost" not in goals and "rec" not in goals
    assert goals["dot"]["req"] == ["GEMM-R7"]
    assert goals["dot"]["kind"] == "let rec ghost function"
    assert goals["vgf"]["kind"] == "val ghost function"
    assert goals["gp"]["kind"] == "let ghost predicate"
    assert goals["k"]["kind"] == "val constant"
    assert goals["induct"]["kind"] == "let rec lemma"


def test_repository_gemm_dot():
    goals = proofs.parse_goals(REPO / "proofs" / "gemm.mlw")
    names = {g["name"] for g in goals}
    assert "function" not in names and "dot" in names


def test_why3_json_stream():
    """`why3 prove --json` output (a stream of objects) is read VC by VC; VCs sharing a
    location and explanation are numbered; stray text is an error, not a lost VC."""
    rec = ('{"prover-result": {"answer": "%s", "time": 0.5}, "term": {"explanations": '
           '["assertion"], "goal_name": "main\'vc", "loc": {"filename": "f.py", "line": 3, '
           '"start-char": 4, "end-char": 9}}}\n')
    out = proofs.parse_why3_json(rec % "Valid" + rec % "Out of\\nmemory")
    assert [r["answer"] for r in out] == ["Valid", "Out of memory"]
    keyed = proofs._keyed(out)
    assert set(keyed) == {(3, 4, 9, "assertion", 1), (3, 4, 9, "assertion", 2)}
    import pytest
    with pytest.raises(proofs.Why3OutputError):
        proofs.parse_why3_json(rec % "Valid" + "File f.py, line 3: Valid\n")
    with pytest.raises(proofs.Why3OutputError):
        proofs.parse_why3_json('{"term": {}}')


def test_goal_without_ids(tmp_path):
    goals = _fixture(tmp_path)
    assert goals["plain"]["req"] == []


def test_no_assumption_flags_from_the_text(tmp_path):
    """Assumptions come from Why3's view (tests/trace/test_proofs_gate.py), not this scan."""
    goals = _fixture(tmp_path)
    assert not any("assumption" in g for g in goals.values())
    assert goals["trusted"]["kind"] == "axiom" and goals["f"]["kind"] == "val"


def test_repository_annotations_present():
    """Fails if the requirement annotations of proofs/mul.mlw were dropped."""
    goals = proofs.parse_goals(REPO / "proofs" / "mul.mlw")
    ids = {i for g in goals for i in g["req"]}
    assert {"MUL-R1", "MUL-R2", "MUL-R3", "MUL-R4"} <= ids
    by_name = {g["name"]: g for g in goals}
    assert "MUL-R4" in by_name["mul_rejects_broadcast"]["req"]
    assert "MUL-R1" in by_name["mul_elementwise"]["req"]


def test_declaration_extents():
    """A declaration ends before the next item or requirement comment; its comment is the
    one ending on the line just before it (several lines long here)."""
    decls = {d.name: d for d in whyml.declarations(FIXTURE)}
    # up to the next item: the blank line and the plain comment after it (normalizing drops both)
    assert (decls["annotated"].line, decls["annotated"].end) == (11, 13)
    assert (decls["induct"].line, decls["induct"].end) == (17, 19)
    assert decls["annotated"].comment.strip().startswith("(* req: MUL-R1")
    assert decls["plain"].comment == "  (* a comment without IDs *)"
    assert decls["trusted"].comment == "" and decls["trusted"].module == "M"
    text = "module N\n  (* req: MUL-R2 -- two\n     lines *)\n  lemma l: true\n  exception E\n  lemma m: true\nend\n"
    [l, m] = whyml.declarations(text)
    assert l.comment.count("\n") == 1 and (l.line, l.end) == (4, 4)    # `exception` ends it
    assert (m.line, m.end) == (6, 6)                                      # `end` ends it


def test_normalized_text_is_the_declaration_read_by_whyml(tmp_path):
    """The baseline fingerprints exactly the lines whyml.declarations gives, comments and
    layout removed: one reader for both."""
    p = tmp_path / "fix.mlw"
    p.write_text(FIXTURE)
    d = {d.name: d for d in whyml.declarations(FIXTURE)}["induct"]
    assert baseline.whyml_declaration(p, d.line) == (
        "let rec lemma induct (n: int) requires { n >= 0 } variant { n } = if n > 0 then induct (n - 1)")
    assert whyml.normalized("  lemma a: (* why *) true\n  (* req: MUL-R1 *)\n  lemma b: true\n", 1) == "lemma a: true"


def test_table_prints_whole_cells():
    """No cell is cut to a column width (a result used to read `valid (repla`)."""
    long = "not proved (replay: obsolete)"
    goal = "a_goal_name_longer_than_forty_characters_of_any_column'vc"
    s = {"goals": [{"file": "proofs/elementwise.mlw", "theory": "ElementwiseWrapGeneric", "goal": goal,
                    "req": ["MUL-R1", "MUL-R2", "MUL-R3"], "prover": "cvc5,z3,z3noauto",
                    "result": long, "time": 0.5}], "assumptions": []}
    out = proofs.table(s)
    row = out.splitlines()[1]
    for cell in ("proofs/elementwise.mlw", "ElementwiseWrapGeneric", goal, "MUL-R1,MUL-R2,MUL-R3",
                 "cvc5,z3,z3noauto", long):
        assert cell in row
    assert out.splitlines()[0].index("result") == row.index(long)    # columns line up
