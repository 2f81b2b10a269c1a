"""Registry text for the small trace fixtures: one entry per (id, title, statement, verification)."""
from __future__ import annotations


# Every fixture requirement carries one working-group cross-reference (the trace makes a
# requirement without one a "wg" defect); a test about that writes its entry without it.
WG_ENTRY = '[[requirement.wg]]\nref = "documents/x"\nrelation = "none"\nreason = "fixture"\n'


def registry_toml(*entries: tuple[str, str, str, list[str]], wg: bool = True) -> str:
    return "".join(f'\n[[requirement]]\nid = "{rid}"\ntitle = "{title}"\nstatement = "{statement}"\n'
                   f'rationale = "r"\nsource = "seed"\nverification = {verification!r}\n'.replace("'", '"')
                   + (WG_ENTRY if wg else "")
                   for rid, title, statement, verification in entries)


# Where a fixture tree keeps its data: the requirements in the profile's data file, the claims
# in Mul's (the loader reads both; the real tree keeps each operator's in its own file).
REGISTRY_FILE = "src/sonnx/data/profile.toml"
CLAIMS_FILE = "src/sonnx/ops/mul.toml"


def write_data(root, registry: str | None = None, claims: str | None = None) -> None:
    """Write a fixture tree's requirement data files (the parent folders made as needed)."""
    from pathlib import Path
    for rel, text in ((REGISTRY_FILE, registry), (CLAIMS_FILE, claims)):
        if text is not None:
            path = Path(root) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
