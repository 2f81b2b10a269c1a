"""The WhyML annotation parser (sonnx.trace.proofs) on a small fixture; no why3 run."""
from pathlib import Path

from sonnx.trace import proofs

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


def test_goal_without_ids(tmp_path):
    goals = _fixture(tmp_path)
    assert goals["plain"]["req"] == []


def test_assumptions_listed(tmp_path):
    goals = _fixture(tmp_path)
    assert goals["trusted"].get("assumption") is True
    assert goals["f"].get("assumption") is True      # val with an ensures: assumed
    assert not goals["g"].get("assumption")          # val without spec assumes nothing
    assert not goals["annotated"].get("assumption")


def test_repository_annotations_present():
    """Fails if the requirement annotations of proofs/mul.mlw were dropped."""
    goals = proofs.parse_goals(REPO / "proofs" / "mul.mlw")
    ids = {i for g in goals for i in g["req"]}
    assert {"MUL-R1", "MUL-R2", "MUL-R3", "MUL-R4"} <= ids
    by_name = {g["name"]: g for g in goals}
    assert "MUL-R4" in by_name["mul_rejects_broadcast"]["req"]
    assert "MUL-R1" in by_name["mul_elementwise"]["req"]
