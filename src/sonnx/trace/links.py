"""Find every place that names a requirement ID, by parsing the sources.

Nobody keeps a list of links by hand: the registry says what must exist, and this module
reads spec/*.md, src/, tests/ and proofs/ to find what does. Four kinds of site:
  spec   - ``[PROF-R1]`` tags in spec/*.md
  code   - an ID in a string or comment of src/sonnx (outside this trace package and
           outside docstrings), i.e. the check that enforces it names it
  test   - ``@pytest.mark.req("PROF-R1", ...)`` on a test function or class, or a module's
           ``pytestmark``
  proof  - ``(* req: PROF-R1 *)`` comment right before a WhyML declaration (see proofs.py)
Wherever a marker names an ID (a ``# req:`` comment, a ``req`` mark, a proof's ``req:``, a
declared support), ``@NAME`` may stand for a family of requirements (sonnx.requirements): the
links are expanded to its members; a family that does not exist is recorded, and the trace
reports it as it reports an unknown ID.
"""
from __future__ import annotations

import ast
import fnmatch
import io
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from .. import requirements
from ..requirements import FAMILY_RE, ID_PATTERN

ID_RE = re.compile(rf"\b{ID_PATTERN}\b")
# a ``req:`` marker in a comment: what follows it may name families as well as IDs
REQ_COMMENT_RE = re.compile(r"\breq:(.*)")
SPEC_TAG_RE = re.compile(rf"\[({ID_PATTERN})\]")


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
    unknown_families: dict[str, list[Site]] = field(default_factory=dict)  # "@name" -> sites
    declared_goals: list[dict] = field(default_factory=list)      # [[proof]] supports, expanded
    # (id, site) pairs linked only through @every: a site that names every requirement tests a
    # tool all rows rely on (the trace judge, an exporter), not one requirement; reports count
    # those apart ("Tool tests")
    every_only: set = field(default_factory=set)

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


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Unit:
    """What a code site is fingerprinted as: a top-level function or class, or a method, with
    its decorators and the comment block right above them; a module-level statement; or, for
    a comment that stands alone between blank lines, that comment."""
    name: str
    first: int
    last: int
    node: ast.AST | None   # None for a lone comment


def _comment_block_start(lines: list[str], first: int) -> int:
    """The first line of the contiguous ``#`` comment lines directly above line ``first``."""
    while first > 1 and lines[first - 2].lstrip().startswith("#"):
        first -= 1
    return first


def units(text: str, tree: ast.Module | None = None) -> list[Unit]:
    """Every unit of a module, innermost first where they nest (a method before its class)."""
    tree = tree or ast.parse(text)
    lines = text.splitlines()
    out: list[Unit] = []

    def add(node: ast.AST, name: str) -> None:
        top = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        out.append(Unit(name, _comment_block_start(lines, top), node.end_lineno or node.lineno, node))

    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, _DEFS):
                    add(sub, f"{node.name}.{sub.name}")
        if isinstance(node, _DEFS):
            add(node, node.name)
        else:
            out.append(Unit(f"<module>:{node.lineno}", _comment_block_start(lines, node.lineno),
                            node.end_lineno or node.lineno, node))
    return out


def unit_at(text: str, line: int, tree: ast.Module | None = None) -> Unit:
    """The innermost unit holding ``line``; a lone comment is a unit of its own."""
    inside = [u for u in units(text, tree) if u.first <= line <= u.last]
    if inside:
        return min(inside, key=lambda u: u.last - u.first)
    return Unit(f"<module>:{line}", line, line, None)


def code_sites(root: Path) -> list[tuple[str, Site]]:
    """IDs in string literals and comments of the package, outside sonnx/trace; ``# req: ID``
    marker lines included (they are comments). Each site is named after its unit: the
    function, ``Class.method``, or ``<module>#k`` for the k-th module-level unit of the file
    that names an ID (numbered, so that two such units never share a fingerprint key)."""
    out = []
    pkg = root / "src" / "sonnx"
    for py in sorted(pkg.rglob("*.py")):
        if (pkg / "trace") in py.parents:
            continue
        text = py.read_text(encoding="utf-8")
        tree = ast.parse(text)
        docstrings = _docstring_lines(tree)
        module_units: dict[int, str] = {}
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in (tokenize.STRING, tokenize.COMMENT) or tok.start[0] in docstrings:
                continue
            found = [(m.group(0), m.start()) for m in ID_RE.finditer(tok.string)]
            marker = REQ_COMMENT_RE.search(tok.string) if tok.type == tokenize.COMMENT else None
            if marker:
                found += [(m.group(0), marker.start(1) + m.start()) for m in FAMILY_RE.finditer(marker.group(1))]
            for rid, start in found:
                line = tok.start[0] + tok.string.count("\n", 0, start)
                unit = unit_at(text, line, tree)
                name = unit.name
                if name.startswith("<module>"):
                    name = module_units.setdefault(unit.first, f"<module>#{len(module_units) + 1}")
                out.append((rid, Site("code", _rel(py, root), line, name)))
    return out


def _req_ids(decorator: ast.expr) -> list[str] | None:
    """IDs (and ``@family`` tokens) of a ``pytest.mark.req(...)`` expression, None if it is
    something else."""
    if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
            and decorator.func.attr == "req"):
        return None
    return [a.value for a in decorator.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]


def _test_units(tree: ast.Module) -> list[tuple[ast.AST, str]]:
    """Test functions and classes as pytest collects them: ``test_*`` functions, ``Test*``
    classes and their ``test_*`` methods (named ``Class.method``)."""
    out: list[tuple[ast.AST, str]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            out.append((node, node.name))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            out.append((node, node.name))
            out += [(m, f"{node.name}.{m.name}") for m in node.body
                    if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test")]
    return out


def _module_marks(tree: ast.Module) -> list[ast.expr]:
    marks: list[ast.expr] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                for t in node.targets):
            value = node.value
            marks += list(value.elts) if isinstance(value, (ast.List, ast.Tuple)) else [value]
    return marks


def test_sites(root: Path) -> list[tuple[str, Site]]:
    """``@pytest.mark.req`` on a test function, class or method, or in a module's pytestmark."""
    out = []
    for py in sorted((root / "tests").rglob("test_*.py")):
        rel = _rel(py, root)
        tree = ast.parse(py.read_text(encoding="utf-8"))
        marked = [(m, "<module>") for m in _module_marks(tree)]
        marked += [(m, name) for node, name in _test_units(tree) for m in node.decorator_list]
        for mark, name in marked:
            for rid in _req_ids(mark) or []:
                out.append((rid, Site("test", rel, mark.lineno, f"{rel}::{name}")))
    return out


SUPPORTS = Path("spec") / "trace-supports.toml"


def supports(root: Path) -> dict[str, list[dict]]:
    """The declarations of spec/trace-supports.toml: tests (``[[test]]``: path, name pattern)
    and proof goals (``[[proof]]``: path, goal pattern) that name no requirement themselves,
    and the requirements (IDs or ``@family`` tokens, as written) whose rows their failures turn
    red. ValueError when malformed."""
    import tomllib
    path = root / SUPPORTS
    if not path.exists():
        return {"test": [], "proof": []}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out: dict[str, list[dict]] = {"test": [], "proof": []}
    for kind, pattern in (("test", "name"), ("proof", "goal")):
        for n, d in enumerate(data.get(kind, []), 1):
            ids, rel, pat = d.get("supports"), d.get("path"), d.get(pattern, "*")
            if not (isinstance(rel, str) and isinstance(pat, str) and isinstance(ids, list) and ids
                    and all(isinstance(i, str) for i in ids) and isinstance(d.get("why"), str)):
                raise ValueError(f"{SUPPORTS}: [[{kind}]] #{n} needs path, {pattern} (optional), "
                                 "a non-empty supports list and why")
            out[kind].append({"path": rel, "pattern": pat, "supports": ids})
    return out


def declared_sites(root: Path) -> list[tuple[str, Site]]:
    """Declared supports as sites of kind ``test-declared`` and ``proof-declared``; their name
    is ``path::pattern`` for tests and the goal pattern for proofs (families not yet expanded)."""
    out = []
    for kind, decls in supports(root).items():
        for d in decls:
            name = f"{d['path']}::{d['pattern']}" if kind == "test" else d["pattern"]
            out += [(rid, Site(f"{kind}-declared", d["path"], 0, name)) for rid in d["supports"]]
    return out


def unlinked_tests(root: Path, links: Links) -> list[str]:
    """Test functions that neither carry a requirement (on themselves, their class or their
    module) nor fall under a declaration: their failure would reach no row."""
    named = {s.name for sites in links.sites.values() for s in sites if s.kind in ("test", "test-declared")}
    out = []
    for py in sorted((root / "tests").rglob("test_*.py")):
        rel = _rel(py, root)
        if f"{rel}::<module>" in named:
            continue
        pats = [n.partition("::")[2] for n in named if n.startswith(rel + "::")]
        for node, name in _test_units(ast.parse(py.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                continue
            candidates = [name, name.split(".")[0]]
            if not any(fnmatch.fnmatchcase(c, p) for c in candidates for p in pats):
                out.append(f"{rel}::{name.replace('.', '::')}")
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


def _registry_of(root: Path) -> dict:
    """The registry families expand over, when the caller gave none: the checkout's own."""
    reg = requirements.load_from(root)
    return reg or requirements.load()


def collect(root: Path, *, with_proofs: bool = True, registry: dict | None = None) -> Links:
    """Every site of the sources under ``root``; ``@family`` tokens expanded over ``registry``
    (default: the checkout's own registry)."""
    links = Links()
    collectors = [spec_sites, code_sites, test_sites, declared_sites] + ([proof_sites] if with_proofs else [])
    for collector in collectors:
        for rid, site in collector(root):
            if not rid.startswith("@"):
                links.add(rid, site)
                links.every_only.discard((rid, site))
                continue
            if registry is None:
                registry = _registry_of(root)
            ids, unknown = requirements.expand([rid], registry)
            for member in ids:
                if rid == "@every" and site not in links.sites.get(member, []):
                    links.every_only.add((member, site))
                elif rid != "@every":
                    links.every_only.discard((member, site))
                links.add(member, site)
            for token in unknown:
                links.unknown_families.setdefault(token, []).append(site)
    for d in supports(root)["proof"]:
        ids = [i for i in d["supports"] if not i.startswith("@")]
        if len(ids) < len(d["supports"]):
            if registry is None:
                registry = _registry_of(root)
            ids = requirements.expand(d["supports"], registry)[0]
        links.declared_goals.append({**d, "supports": ids})
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
