"""What each requirement's evidence establishes, part by part (the ``[[claim]]`` tables of the
requirement data files: src/sonnx/data/profile.toml and each operator's src/sonnx/ops/<stem>.toml).

Reviewed entries, one or more per requirement: its statement cut into parts, and for each
part the proof goals that prove it (``proof``, as ``FILE:GOAL``), the CrossHair harnesses that
check it (``crosshair``), the tests that test it (``test``, as the trace names them), and,
for a part that is not proved, or whose goals do not establish it as stated, ``gap``: the
path of a file in the repository that says why. The trace checks the claims against the
evidence it found, so that no row is greener than what establishes it:

- a requirement without an entry, or an entry for no requirement, is a defect;
- a part naming a goal, harness or test that is not linked to its requirement is a defect (a
  claim that names nothing real is no claim); one that failed already makes the row a defect
  (failing, unproved, not run: every linked item is judged, claimed or not);
- a part without any proof, of a requirement whose registry entry demands a proof, must
  declare its gap; a gap whose file is missing, empty or does not name the requirement is a
  defect;
- a row whose claims all hold but which declares a gap is *partial*, never plain green.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import requirements

CLAIMS = "its data file's [[claim]] tables"
KINDS = ("proof", "crosshair", "test")


@dataclass(frozen=True)
class Part:
    text: str
    proof: tuple[str, ...] = ()
    crosshair: tuple[str, ...] = ()
    test: tuple[str, ...] = ()
    gap: str | None = None

    def level(self) -> str:
        """The strongest evidence of the part: ``gap`` when a gap is declared."""
        if self.gap:
            return "gap"
        return next((k for k in KINDS if getattr(self, k)), "none")


def _part(rid: str, n: int, d: dict) -> Part:
    where = f"{d.get('file', '?')}: claim {rid} part {n}"
    unknown = sorted(set(d) - {"id", "file", "part", "gap", *KINDS})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} (known: id, part, proof, crosshair, test, gap)")
    text, gap = d.get("part"), d.get("gap")
    if not (isinstance(text, str) and text.strip()):
        raise ValueError(f"{where} needs part, the words of the statement it covers")
    if gap is not None and not (isinstance(gap, str) and gap.strip()):
        raise ValueError(f"{where}: gap must be the path of a justification file")
    lists = {}
    for k in KINDS:
        v = d.get(k, [])
        if not (isinstance(v, list) and all(isinstance(x, str) and x for x in v)):
            raise ValueError(f"{where}: {k} must be a list of names")
        lists[k] = tuple(v)
    return Part(" ".join(text.split()), gap=gap, **lists)


def load(root: Path) -> dict[str, list[Part]]:
    """requirement -> its parts, from the ``[[claim]]`` tables of the checkout's data files, in
    their order. ValueError when malformed."""
    out: dict[str, list[Part]] = {}
    for d in requirements.tables(root)["claim"]:
        rid = d.get("id")
        if not (isinstance(rid, str) and rid):
            raise ValueError(f"{d['file']}: a [[claim]] needs id, the requirement it is about")
        out.setdefault(rid, []).append(_part(rid, len(out.get(rid, [])) + 1, d))
    return out


def missing_entry(rid: str) -> str:
    """What a requirement without any claim lacks, and where to write it."""
    return (f"no [[claim]] entry in {requirements.shown(requirements.data_file_of(rid), Path())}: "
            "say what its evidence establishes")


def text(parts: list[Part]) -> str:
    """The reviewed form of an entry (what the baseline fingerprints), one line per field."""
    lines = []
    for p in parts:
        lines.append(f"part: {p.text}")
        lines += [f"  {k}: {', '.join(getattr(p, k))}" for k in KINDS if getattr(p, k)]
        if p.gap:
            lines.append(f"  gap: {p.gap}")
    return "\n".join(lines)


def gap_text(root: Path, rel: str) -> str:
    """A justification file's text, whitespace collapsed ("" when it is not a readable file)."""
    path = root / rel
    try:
        return " ".join(path.read_text(encoding="utf-8").split()) if path.is_file() else ""
    except (OSError, UnicodeDecodeError):
        return ""


def _gap_problem(root: Path, rid: str, rel: str) -> str | None:
    inside = (root / rel).resolve().is_relative_to(root.resolve())
    body = gap_text(root, rel) if inside else ""
    if not body:
        return f"justification file {rel} is missing or empty"
    if rid not in body:
        return f"justification file {rel} does not name {rid}"
    return None


def judge(root: Path, rid: str, parts: list[Part], found: dict[str, list[dict]],
          demands_proof: bool, crosshair_read: bool) -> tuple[list[dict], list[str]]:
    """The parts as the report shows them, and what is wrong with them. ``found`` holds the
    row's evidence: ``proof`` (entries with path, goal, status), ``crosshair`` (harness,
    status), ``test`` (test, status). Without a CrossHair summary (``crosshair_read`` false)
    the harnesses named cannot be checked: one problem says so, instead of one per name."""
    named = {"proof": lambda e: f"{e['path']}:{e['goal']}", "crosshair": lambda e: e["harness"],
             "test": lambda e: e["test"]}
    out, problems = [], []
    for n, p in enumerate(parts, 1):
        where = f"part {n} ({p.text[:60]})"
        for kind in KINDS if crosshair_read else ("proof", "test"):
            for ref in getattr(p, kind):
                hits = [e for e in found[kind] if not e.get("declared") and named[kind](e) == ref]
                if not hits:
                    problems.append(f"{where} names {kind} {ref}, which is not linked to {rid}")
        if p.gap:
            problem = _gap_problem(root, rid, p.gap)
            if problem:
                problems.append(f"{where}: {problem}")
        elif demands_proof and not p.proof:
            problems.append(f"{where} is not proved and declares no gap")
        if not any(getattr(p, k) for k in KINDS):
            problems.append(f"{where} names no evidence")
        # the justification's own text travels with the claim, so that every report (and the
        # bundle, which holds no spec/ folder) says why, not only where
        text = ""
        if p.gap and (root / p.gap).resolve().is_relative_to(root.resolve()) and (root / p.gap).is_file():
            text = (root / p.gap).read_text(encoding="utf-8", errors="replace").strip()
        out.append({"part": p.text, "level": p.level(), "proof": list(p.proof),
                    "crosshair": list(p.crosshair), "test": list(p.test), "gap": p.gap,
                    "gap_text": text or None})
    unverified = sum(len(p.crosshair) for p in parts) if not crosshair_read else 0
    if unverified:
        problems.append(f"names {unverified} CrossHair harness(es), unverified: no CrossHair summary was read")
    return out, problems


# A requirement row's standing, from its claims alone (what the README's first screen counts;
# the trace judges the same parts against the evidence): "partial" when a part declares a gap,
# "covered" when no part does and at least one is proved, "tested only" when none is proved.
STANDINGS = ("covered", "partial", "tested only")


def standing(parts: list[Part]) -> str:
    if any(p.gap for p in parts):
        return "partial"
    return "covered" if any(p.proof for p in parts) else "tested only"


def standings(root: Path) -> dict[str, list[str]]:
    """Each standing with the requirement IDs in it, in the file's order."""
    out: dict[str, list[str]] = {s: [] for s in STANDINGS}
    for rid, parts in load(root).items():
        out[standing(parts)].append(rid)
    return out
