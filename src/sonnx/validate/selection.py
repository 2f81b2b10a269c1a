"""Which rules a `sonnx validate` run reports: `--select` / `--ignore` by requirement ID or
prefix, as ruff selects by code or prefix. A selector matches an ID equal to it or beginning
with it followed by "-": `MUL` is every MUL-R*, `ONNX` the three onnx categories, a full ID
that ID alone (never a longer ID that merely starts with the same characters). A selector
that matches no rule is an error: a typo must not silently check nothing.

Every rule is still evaluated; a rule that is not selected is left out of the report, and
the report names it as not checked. A model is only called conformant when nothing was left
out."""
from __future__ import annotations

from .report import ONNX_CATEGORIES


class SelectionError(ValueError):
    """A selector that names no rule."""


def all_rules() -> list[str]:
    """Every rule a finding can carry: the requirement registry, then the onnx categories."""
    from .. import requirements     # here: `sonnx validate` without --select/--ignore needs none
    return [*requirements.load(), *ONNX_CATEGORIES]


def _matches(selector: str, rule: str) -> bool:
    return rule == selector or rule.startswith(selector + "-")


def _expand(selectors: list[str], rules: list[str], option: str) -> set[str]:
    chosen: set[str] = set()
    for raw in selectors:
        selector = raw.strip().upper()
        hits = {r for r in rules if _matches(selector, r)}
        if not hits:
            raise SelectionError(
                f"{option} {raw!r} names no rule; give a requirement ID or a prefix of one (e.g. "
                f"MUL, GEMM, PROF, ONNX): `sonnx requirements` lists the IDs")
        chosen |= hits
    return chosen


def not_checked(select: list[str] | None, ignore: list[str] | None) -> list[str]:
    """The rules left out of the report, in registry order (``select`` None: every rule is
    selected). Nothing selected or ignored leaves nothing out, and no registry is read (a
    quarter of the start-up of `sonnx validate` on a small model)."""
    if select is None and not ignore:
        return []
    return resolve(select, ignore)[1]


def resolve(select: list[str] | None, ignore: list[str] | None) -> tuple[list[str], list[str]]:
    """(checked, not_checked), each in registry order. ``select`` None means every rule."""
    rules = all_rules()
    chosen = _expand(select, rules, "--select") if select is not None else set(rules)
    chosen -= _expand(ignore or [], rules, "--ignore")
    if not chosen:
        raise SelectionError("--select and --ignore leave no rule to check")
    return [r for r in rules if r in chosen], [r for r in rules if r not in chosen]
