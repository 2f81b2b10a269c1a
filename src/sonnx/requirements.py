"""The requirement registry (spec/requirements.toml, shipped inside the wheel as sonnx/data)."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

VERIFICATION_KINDS = ("proof", "crosshair", "test")


def _id_pattern() -> str:
    from .ops.registry import operators
    prefixes = [op.prefix for op in operators().values()] + ["PROF"]
    return "(?:" + "|".join(prefixes) + r")-R\d+"


# A requirement ID as a regular expression (no groups, no anchors): an operator's prefix from
# the registry, or PROF for the profile's own rules, then -R and a number. The trace and the
# tests build every ID pattern from this one.
ID_PATTERN = _id_pattern()


@dataclass(frozen=True)
class Requirement:
    id: str
    title: str
    statement: str
    rationale: str
    source: str
    verification: tuple[str, ...]

    def as_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "statement": self.statement,
                "rationale": self.rationale, "source": self.source,
                "verification": list(self.verification)}


def parse(text: str) -> dict[str, Requirement]:
    """Parse registry text; raises ValueError on a malformed or duplicate entry."""
    data = tomllib.loads(text)
    out: dict[str, Requirement] = {}
    for entry in data.get("requirement", []):
        missing = [k for k in ("id", "title", "statement", "rationale", "source", "verification")
                   if k not in entry]
        if missing:
            raise ValueError(f"requirement {entry.get('id', '?')} lacks {', '.join(missing)}")
        unknown = set(entry["verification"]) - set(VERIFICATION_KINDS)
        if unknown:
            raise ValueError(f"requirement {entry['id']}: unknown verification {sorted(unknown)}")
        if entry["id"] in out:
            raise ValueError(f"requirement {entry['id']} is listed twice")
        out[entry["id"]] = Requirement(
            id=entry["id"], title=entry["title"], statement=" ".join(entry["statement"].split()),
            rationale=" ".join(entry["rationale"].split()), source=entry["source"],
            verification=tuple(entry["verification"]))
    return out


@lru_cache(maxsize=1)
def load() -> dict[str, Requirement]:
    """The registry shipped with the package, keyed by ID, in file order."""
    text = resources.files("sonnx").joinpath("data/requirements.toml").read_text(encoding="utf-8")
    return parse(text)
