"""Fingerprints that make a requirement *suspect* when what it rests on has changed.

For each requirement the baseline (spec/trace-baseline.toml, committed) holds a SHA-256 of
its statement, of the WhyML text of every goal annotated with it, and of the Python source of
every code site (the enclosing function). A change to any of them, a new one or a vanished
one marks the requirement suspect until someone reviews it and runs
``sonnx trace --accept ID``.
"""
from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

from .links import Links

BASELINE = Path("spec") / "trace-baseline.toml"
_DECL = re.compile(r"^\s*(lemma|goal|let|val|predicate|function|axiom|type|use|clone|module|end|scope|constant)\b")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def whyml_declaration(path: Path, line: int) -> str:
    """The text of the WhyML declaration starting at ``line`` (1-based), up to the next one."""
    lines = path.read_text(encoding="utf-8").splitlines()
    body = [lines[line - 1]]
    for text in lines[line:]:
        if _DECL.match(text) or text.lstrip().startswith("(* req:"):
            break
        body.append(text)
    return "\n".join(body).strip()


def python_function(path: Path, name: str, line: int) -> str:
    """Source of the innermost function or class called ``name`` around ``line``."""
    text = path.read_text(encoding="utf-8")
    best = None
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno > best.lineno:
                best = node
    if best is None:
        return text.splitlines()[line - 1].strip()
    return ast.get_source_segment(text, best) or ""


def fingerprints(root: Path, registry: dict, links: Links) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for rid, req in registry.items():
        fp = {"statement": _sha(req.statement)}
        for site in links.of(rid, "proof"):
            fp[f"proof:{site.path}:{site.name}"] = _sha(whyml_declaration(root / site.path, site.line))
        for site in links.of(rid, "code"):
            fp[f"code:{site.path}:{site.name}"] = _sha(python_function(root / site.path, site.name, site.line))
        out[rid] = dict(sorted(fp.items()))
    return out


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dump(baseline: dict[str, dict[str, str]]) -> str:
    parts = ["# Reviewed fingerprints of each requirement's statement, proof goals and code sites.",
             "# Written by `sonnx trace --accept ID`; do not edit by hand.", ""]
    for rid in sorted(baseline):
        parts.append(f"[{_quote(rid)}]")
        for key, digest in sorted(baseline[rid].items()):
            parts.append(f"{_quote(key)} = {_quote(digest)}")
        parts.append("")
    return "\n".join(parts)


def load(root: Path) -> dict[str, dict[str, str]]:
    import tomllib
    path = root / BASELINE
    if not path.exists():
        return {}
    return tomllib.loads(path.read_text(encoding="utf-8"))


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


def accept(root: Path, current: dict[str, dict[str, str]], ids: list[str]) -> list[str]:
    """Record the current fingerprints of ``ids`` (or every requirement for "all") as reviewed."""
    reviewed = load(root)
    chosen = list(current) if ids == ["all"] else ids
    unknown = [i for i in chosen if i not in current]
    if unknown:
        raise KeyError(", ".join(unknown))
    for rid in chosen:
        reviewed[rid] = current[rid]
    # requirements deleted from the registry leave the baseline too
    reviewed = {rid: fp for rid, fp in reviewed.items() if rid in current}
    (root / BASELINE).write_text(dump(reviewed), encoding="utf-8")
    return chosen
