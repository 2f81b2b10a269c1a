"""Find every place that names a requirement ID, by parsing the sources.

Nobody keeps a list of links by hand: the registry says what must exist, and this module
reads spec/*.md, src/, tests/ and proofs/ to find what does. Four kinds of site:
  spec   - ``[MUL-R1]`` tags in spec/*.md
  code   - an ID in a string or comment of src/sonnx (outside this trace package and
           outside docstrings), i.e. the check that enforces it names it
  test   - ``@pytest.mark.req("MUL-R1", ...)`` on a test function or class, or a module's
           ``pytestmark``
  proof  - ``(* req: MUL-R1 *)`` comment right before a WhyML declaration (see proofs.py)
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

ID_RE = re.compile(r"\b(?:MUL|GEMM|PROF)-R\d+\b")
SPEC_TAG_RE = re.compile(r"\[((?:MUL|GEMM|PROF)-R\d+)\]")


@dataclass(frozen=True)
class Site:
    kind: str          # spec | code | test | proof
    path: str          # relative to the repository root
    line: int
    name: str = ""     # test node id, function or goal name, when known


@dataclass
class Links:
    sites: dict[str, list[Site]] = field(default_factory=dict)     # id -> sites
    mentions: dict[str, list[Site]] = field(default_factory=dict)  # every ID seen anywhere

    def add(self, rid: str, site: Site) -> None:
        self.sites.setdefault(rid, []).append(site)

    def of(self, rid: str, kind: str) -> list[Site]:
        return [s for s in self.sites.get(rid, []) if s.kind == kind]


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def spec_sites(root: Path) -> list[tuple[str, Site]]:
    out = []
    for md in sorted((root / "spec").glob("*.md")):
        for n, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1):
            for rid in SPEC_TAG_RE.findall(line):
                out.append((rid, Site("spec", _rel(md, root), n)))
    return out


def _enclosing_functions(tree: ast.AST) -> list[tuple[int, int, str]]:
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            spans.append((node.lineno, node.end_lineno or node.lineno, node.name))
    return spans


def _docstring_lines(tree: ast.AST) -> set[int]:
    """First lines of docstrings: prose that mentions an ID does not enforce it."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines.add(first.lineno)
    return lines


def code_sites(root: Path) -> list[tuple[str, Site]]:
    """IDs in string literals and comments of the package, outside sonnx/trace."""
    out = []
    pkg = root / "src" / "sonnx"
    for py in sorted(pkg.rglob("*.py")):
        if (pkg / "trace") in py.parents:
            continue
        text = py.read_text(encoding="utf-8")
        tree = ast.parse(text)
        spans = _enclosing_functions(tree)
        docstrings = _docstring_lines(tree)
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in (tokenize.STRING, tokenize.COMMENT) or tok.start[0] in docstrings:
                continue
            for match in ID_RE.finditer(tok.string):
                rid = match.group(0)
                line = tok.start[0] + tok.string.count("\n", 0, match.start())
                inner = [s for s in spans if s[0] <= line <= s[1]]
                name = min(inner, key=lambda s: s[1] - s[0])[2] if inner else "<module>"
                out.append((rid, Site("code", _rel(py, root), line, name)))
    return out


def _req_ids(decorator: ast.expr) -> list[str] | None:
    """IDs of a ``pytest.mark.req(...)`` expression, None if it is something else."""
    if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
            and decorator.func.attr == "req"):
        return None
    return [a.value for a in decorator.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]


def test_sites(root: Path) -> list[tuple[str, Site]]:
    out = []
    for py in sorted((root / "tests").rglob("test_*.py")):
        rel = _rel(py, root)
        tree = ast.parse(py.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            marks: list[ast.expr] = []
            name = ""
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                marks, name = node.decorator_list, node.name
            elif isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
                value = node.value
                marks = list(value.elts) if isinstance(value, (ast.List, ast.Tuple)) else [value]
                name = "<module>"
            for mark in marks:
                for rid in _req_ids(mark) or []:
                    out.append((rid, Site("test", rel, mark.lineno, f"{rel}::{name}")))
    return out


def mention_sites(root: Path) -> list[tuple[str, Site]]:
    """Every ID written anywhere a requirement can be named (for orphan detection)."""
    out = []
    files = [*sorted((root / "spec").glob("*.md")), *sorted((root / "src" / "sonnx").rglob("*.py")),
             *sorted((root / "tests").rglob("*.py")), *sorted((root / "proofs").rglob("*.mlw"))]
    for path in files:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for rid in ID_RE.findall(line):
                out.append((rid, Site("mention", _rel(path, root), n)))
    return out


def proof_sites(root: Path) -> list[tuple[str, Site]]:
    """Annotated WhyML declarations, and Python functions proved through Why3's front-end."""
    from . import proofs  # the annotation parser lives with the proof summary
    out = []
    for mlw in sorted((root / "proofs").glob("*.mlw")):
        for decl in proofs.parse_goals(mlw):
            for rid in decl["req"]:
                out.append((rid, Site("proof", _rel(mlw, root), decl["line"], decl["name"])))
    for rel in proofs.PY_FILES:
        path = root / rel
        if not path.exists():
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for name, ids in proofs.parse_py(path).items():
            line = next(n for n, text in enumerate(lines, 1) if re.match(rf"\s*def\s+{name}\b", text))
            for rid in ids:
                out.append((rid, Site("proof", rel, line, name)))
    return out


def collect(root: Path, *, with_proofs: bool = True) -> Links:
    links = Links()
    collectors = [spec_sites, code_sites, test_sites] + ([proof_sites] if with_proofs else [])
    for collector in collectors:
        for rid, site in collector(root):
            links.add(rid, site)
    for rid, site in mention_sites(root):
        links.mentions.setdefault(rid, []).append(site)
    return links


def gaps(registry: dict, links: Links, kinds: tuple[str, ...] = ("code", "test")) -> list[str]:
    """Missing links of the given kinds, and IDs named somewhere but absent from the registry."""
    problems = []
    for rid in registry:
        for kind in kinds:
            if not links.of(rid, kind):
                problems.append(f"{rid}: no {kind} site names it")
    for rid, sites in sorted(links.mentions.items()):
        if rid not in registry:
            where = ", ".join(f"{s.path}:{s.line}" for s in sites[:3])
            problems.append(f"{rid}: named in {where} but not in the registry (orphan)")
    return problems
