"""Fingerprints that make a requirement *suspect* when what it rests on has changed.

For each requirement the baseline (spec/trace-baseline.toml, committed) holds a SHA-256 of
the normalized text of its statement, of the rest of its entry in its data file (title,
rationale, source, verification, families: src/sonnx/data/profile.toml or the operator's
src/sonnx/ops/<stem>.toml), of its ``[[claim]]`` parts and each justification file they name,
of the ``[[gap]]`` justifications accepted for it, of every WhyML goal annotated with it and of every
definition, type, clone statement and axiom of proofs/ that goal depends on (``uses:``, see
whyml.dependencies: a goal's text alone does not fix its meaning once a predicate it names
is redefined), and of every code site's unit (the whole function or method with its decorators, see links.units). The
normalized texts themselves are kept next to it (spec/trace-baseline-sources.json, keyed by
digest) so that a suspect row can show what changed. Normalizing means: Python through its
AST without docstrings (comments, blank lines and layout vanish), WhyML without comments and
with whitespace collapsed. So a comment or whitespace edit changes nothing, while any change
to code, a contract decorator or a goal makes the requirement suspect until someone reviews
it and runs ``sonnx trace --accept ID``.
"""
from __future__ import annotations

import ast
import copy
import difflib
import hashlib
import json
from pathlib import Path

from ..output_files import replacing
from . import claims, whyml
from .links import Links, unit_at

BASELINE = Path("spec") / "trace-baseline.toml"
SOURCES = Path("spec") / "trace-baseline-sources.json"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def whyml_declaration(path: Path, line: int) -> str:
    """The normalized text of the WhyML declaration starting at ``line`` (1-based): comments
    removed, all whitespace collapsed (sonnx.trace.whyml reads where it ends)."""
    return whyml.normalized(path.read_text(encoding="utf-8"), line)


class _NoDocstrings(ast.NodeTransformer):
    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return node


# python_unit is a pure function of the file's text and the line: its results are kept per
# (sha256 of the text, line), and the parsed module per text, so that a file is parsed once
# however many sites it holds, and a trace or test that reads the same text again (a copy of
# the tree, the next test) does not redo the work. Bounded: cleared when full.
_UNIT_CACHE: dict[tuple[str, int], str] = {}
_TREE_CACHE: dict[str, ast.Module] = {}
_CACHE_MAX = 200_000


def python_unit(path: Path, line: int) -> str:
    """The normalized source of the unit holding ``line``: ``ast.unparse`` of the function
    (decorators included) or statement without docstrings; a lone comment as its text."""
    text = path.read_text(encoding="utf-8")
    key = (_sha(text), line)
    if key not in _UNIT_CACHE:
        if len(_UNIT_CACHE) >= _CACHE_MAX:
            _UNIT_CACHE.clear()
        if key[0] not in _TREE_CACHE:
            if len(_TREE_CACHE) >= 512:
                _TREE_CACHE.clear()
            _TREE_CACHE[key[0]] = ast.parse(text)
        unit = unit_at(text, line, _TREE_CACHE[key[0]])
        _UNIT_CACHE[key] = (" ".join(text.splitlines()[line - 1].split()) if unit.node is None else
                            ast.unparse(_NoDocstrings().visit(copy.deepcopy(unit.node))))
    return _UNIT_CACHE[key]


def site_texts(root: Path, registry: dict, links: Links) -> dict[str, dict[str, str]]:
    """requirement -> fingerprint key -> normalized text. ValueError when a data file is
    malformed."""
    from .. import requirements
    out: dict[str, dict[str, str]] = {}
    claimed = claims.load(root)
    accepted_gaps: dict[str, list[str]] = {}
    for g in requirements.tables(root)["gap"]:
        accepted_gaps.setdefault(str(g.get("id")), []).append(
            f"{g.get('kind')}: {' '.join(str(g.get('justification')).split())}")
    tree = whyml.Tree(root)
    for rid, req in registry.items():
        texts = {"statement": " ".join(req.statement.split())}
        # the rest of its entry: a change to its data file's entry is reviewed as well
        texts["entry"] = "\n".join([f"title: {req.title}", f"rationale: {req.rationale}",
                                    f"source: {req.source}", f"verification: {', '.join(req.verification)}",
                                    f"families: {', '.join(getattr(req, 'families', ()))}"])
        # what it is of the working group's texts is a reviewed claim too
        texts["wg"] = "\n".join(w.text() for w in getattr(req, "wg", ()))
        if rid in accepted_gaps:
            texts["gaps"] = "\n".join(sorted(accepted_gaps[rid]))
        if rid in claimed:      # what the row claims, and why it is partial, were reviewed too
            texts["claims"] = claims.text(claimed[rid])
            for gap in sorted({p.gap for p in claimed[rid] if p.gap}):
                texts[f"gap:{gap}"] = claims.gap_text(root, gap)
        for site in links.of(rid, "proof"):
            # one key per name: goals of one name in two modules (exact_entry of float32 and
            # float64) are pinned together, neither hiding the other
            key = f"proof:{site.path}:{site.name}"
            text = whyml_declaration(root / site.path, site.line)
            texts[key] = f"{texts[key]}\n{text}" if key in texts else text
            if site.path.endswith(".mlw"):      # and what the goal's statement names, transitively
                for key, text in whyml.dependencies(root, site.path, site.line, tree).items():
                    texts[f"uses:{key}"] = text
        for site in links.of(rid, "code"):
            texts[f"code:{site.path}:{site.name}"] = python_unit(root / site.path, site.line)
        out[rid] = dict(sorted(texts.items()))
    return out


def fingerprints(texts: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """The fingerprint of each site text of ``site_texts``: what the baseline records."""
    return {rid: {k: _sha(t) for k, t in fp.items()} for rid, fp in texts.items()}


def dump(baseline: dict[str, dict[str, str]]) -> str:
    """The baseline as TOML, sorted; tomli-w quotes and escapes every key and value (quotes,
    backslashes, control characters), so that what is read back is what was written."""
    import tomli_w
    header = ("# Reviewed fingerprints of each requirement's statement, proof goals and code sites.\n"
              f"# Written by `sonnx trace --accept ID`; do not edit by hand. Texts: {SOURCES.name}.\n\n")
    ordered = {rid: dict(sorted(baseline[rid].items())) for rid in sorted(baseline)}
    return header + tomli_w.dumps(ordered)


def load(root: Path) -> dict[str, dict[str, str]]:
    import tomllib
    path = root / BASELINE
    if not path.exists():
        return {}
    return tomllib.loads(path.read_text(encoding="utf-8"))


def load_sources(root: Path) -> dict[str, str]:
    path = root / SOURCES
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def suspects(current: dict[str, dict[str, str]], reviewed: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    """requirement -> what changed since its last review (empty when nothing did)."""
    out: dict[str, list[str]] = {}
    for rid, fp in current.items():
        old = reviewed.get(rid)
        if old is None:
            out[rid] = ["never reviewed (not in the baseline)"]
            continue
        reasons = [f"{key} changed" for key in fp if key in old and old[key] != fp[key]]
        reasons += [f"{key} is new" for key in fp if key not in old]
        reasons += [f"{key} is gone" for key in old if key not in fp]
        out[rid] = reasons
    return out


def diffs(root: Path, texts: dict[str, dict[str, str]], reviewed: dict[str, dict[str, str]],
          sources: dict[str, str]) -> dict[str, dict[str, str]]:
    """requirement -> key -> unified diff from the reviewed text to the current one, for every
    key that changed, is new or is gone (the reviewed text of an old baseline without stored
    texts shows as unavailable)."""
    out: dict[str, dict[str, str]] = {}
    for rid, now in texts.items():
        old = reviewed.get(rid, {})
        for key in sorted(set(now) | set(old)):
            if key in old and key in now and old[key] == _sha(now[key]):
                continue
            before = sources.get(old[key], "(reviewed text not stored)\n") if key in old else ""
            after = now.get(key, "")
            lines = difflib.unified_diff(before.splitlines(), after.splitlines(),
                                         f"reviewed/{key}", f"current/{key}", lineterm="", n=2)
            out.setdefault(rid, {})[key] = "\n".join(lines)
    return out


def accept(root: Path, texts: dict[str, dict[str, str]], ids: list[str]) -> list[str]:
    """Record the current fingerprints (and normalized texts) of ``ids``, or of every
    requirement for "all", as reviewed."""
    reviewed = load(root)
    chosen = list(texts) if ids == ["all"] else ids
    unknown = [i for i in chosen if i not in texts]
    if unknown:
        raise KeyError(", ".join(unknown))
    current = fingerprints(texts)
    for rid in chosen:
        reviewed[rid] = current[rid]
    # requirements deleted from the registry leave the baseline too
    reviewed = {rid: fp for rid, fp in reviewed.items() if rid in texts}
    sources = load_sources(root)
    for rid in chosen:
        sources.update({_sha(t): t for t in texts[rid].values()})
    used = {d for fp in reviewed.values() for d in fp.values()}
    sources = {d: t for d, t in sorted(sources.items()) if d in used}
    for path, text in ((root / BASELINE, dump(reviewed)),
                       (root / SOURCES, json.dumps(sources, indent=0, sort_keys=True) + "\n")):
        with replacing(str(path), "w", encoding="utf-8") as fh:   # an interrupted --accept keeps the old record
            fh.write(text)
    return chosen
