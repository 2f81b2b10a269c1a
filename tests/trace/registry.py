"""Registry text for the small trace fixtures: one entry per (id, title, statement, verification)."""
from __future__ import annotations


def registry_toml(*entries: tuple[str, str, str, list[str]]) -> str:
    return "".join(f'\n[[requirement]]\nid = "{rid}"\ntitle = "{title}"\nstatement = "{statement}"\n'
                   f'rationale = "r"\nsource = "seed"\nverification = {verification!r}\n'.replace("'", '"')
                   for rid, title, statement, verification in entries)
