"""Which theory files the proof step replays: the shared theories, then each registered
operator's own files (sonnx.ops.registry), each after the files it uses; no session is left
out of the step."""
import re
from pathlib import Path

from sonnx.ops import registry
from sonnx.trace import proofs

REPO = Path(__file__).resolve().parents[2]
USE_RE = re.compile(r"^\s*(?:use|clone)(?:\s+export)?\s+(\w+)\.", re.M)


def test_theory_files_are_the_shared_ones_then_the_operators():
    files = proofs.mlw_files()
    assert files[:2] == ["proofs/tensor.mlw", "proofs/elementwise.mlw"]
    for op in registry.operators().values():
        assert op.proofs and set(op.proofs) <= set(files), op.name
    assert len(files) == len(set(files))


def test_every_listed_file_has_a_session():
    for rel in proofs.mlw_files():
        assert (REPO / rel).is_file(), rel
        assert (REPO / rel[:-4] / "why3session.xml").is_file(), f"{rel}: no session"


def test_no_session_is_left_out_of_the_proof_step():
    """A session no operator lists would never be replayed: its goals would count for nothing."""
    listed = set(proofs.mlw_files())
    sessions = {f"proofs/{p.parent.name}.mlw" for p in (REPO / "proofs").glob("*/why3session.xml")}
    assert sessions - listed == set()


def test_files_come_after_the_theories_they_use():
    """Why3's view of the assumptions reads the files in this order: a clone's origin first."""
    files = proofs.mlw_files()
    stems = {Path(f).stem: i for i, f in enumerate(files)}
    for i, rel in enumerate(files):
        for used in USE_RE.findall((REPO / rel).read_text(encoding="utf-8")):
            if used in stems:
                assert stems[used] < i, f"{rel} uses {used}.mlw, listed after it"
