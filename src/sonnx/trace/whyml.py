"""The one reader of WhyML source text: where declarations start and end, and the comment
just before each (where requirement annotations live).

Used by the proof summary (proofs.parse_goals: annotated goals), the links (proof sites)
and the baseline (the normalized text of an annotated declaration). What the proofs
*assume* is not read here: proof_assumptions lists it from Why3's own view of the theories.

A line-based reader, enough for the layout of proofs/*.mlw:
- a declaration starts on a line whose first words are a run of the keywords
  let/rec/ghost/lemma/function/predicate/val/constant (``let rec ghost function dot``), or
  ``goal``/``axiom``, followed by its name (the first word that is not such a keyword);
- it ends before the next line that starts an item (a declaration keyword, or type, use,
  clone, module, theory, end, scope, exception) or a requirement comment ``(* req:``; a
  line ``let x = e in`` is a local binding inside a body: neither a declaration nor an end;
- its annotation is the comment that ends on the line just before it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DECL_KEYWORDS = ("let", "rec", "ghost", "lemma", "function", "predicate", "val", "constant")
DECL_RE = re.compile(
    r"^\s*(?:(?:goal|axiom)|(?:(?:let|rec|ghost|lemma|function|predicate|val|constant)\b\s*)+)"
    r"\s+(?!(?:let|rec|ghost|lemma|function|predicate|val|constant|goal|axiom)\b)"
    r"([A-Za-z_][\w']*)"
)
MODULE_RE = re.compile(r"^\s*(?:module|theory)\s+(\w+)")
# any line that starts an item: the end of the declaration before it
ITEM_RE = re.compile(r"^\s*(?:lemma|goal|let|val|predicate|function|axiom|type|use|clone|module|"
                     r"theory|end|scope|constant|exception)\b")
COMMENT_RE = re.compile(r"\(\*.*?\*\)", re.S)
# ``let x = e in`` at the start of a line inside a body: a local binding, neither a declaration
# nor the end of the one it is in
LOCAL_LET_RE = re.compile(r"^\s*let\b.*\bin\s*$")


def _local_let(line: str) -> bool:
    return bool(LOCAL_LET_RE.match(COMMENT_RE.sub(" ", line)))


def _continued(lines: list[str], n: int) -> bool:
    """Whether line index ``n`` goes on with the statement above, as the substitutions of a
    ``clone ... with`` clause do (``function op = times,`` then ``val op_impl = ...``)."""
    return n > 0 and _goes_on(lines[n - 1])


def _goes_on(line: str) -> bool:
    """A line whose statement continues on the next one: it ends in a comma or in ``with``."""
    return bool(re.search(r"(,|\bwith)\s*$", COMMENT_RE.sub(" ", line)))


@dataclass(frozen=True)
class Declaration:
    module: str | None   # the enclosing module or theory
    kind: str            # the keywords before the name, e.g. "let rec ghost function"
    name: str
    line: int            # first line, 1-based
    end: int             # last line, 1-based
    comment: str         # the comment ending on the line just before it ("" when none)


def _kind(line: str) -> str:
    words = line.split()
    n = next(i for i, w in enumerate(words)
             if w not in DECL_KEYWORDS + ("goal", "axiom") or (i and w in ("goal", "axiom")))
    return " ".join(words[:n])


def _end(lines: list[str], start: int) -> int:
    """0-based index of the last line of the declaration starting at index ``start``."""
    k = start + 1
    while k < len(lines) and (_local_let(lines[k]) or not (ITEM_RE.match(lines[k])
                                                          or lines[k].lstrip().startswith("(* req:"))):
        k += 1
    return k - 1


def _comment_before(lines: list[str], n: int) -> str:
    """The comment ending on the line just before index n, from its opening ``(*``."""
    j = n - 1
    if j < 0 or not lines[j].rstrip().endswith("*)"):
        return ""
    # the nearest line from j up that opens a comment (the first line when none does): a
    # bounded search, not a loop whose end rests on one decrement
    k = next((k for k in range(j, -1, -1) if "(*" in lines[k]), 0)
    return "\n".join(lines[k:j + 1])


def declarations(text: str) -> list[Declaration]:
    """Every declaration of a WhyML text, in order."""
    lines = text.splitlines()
    out, module = [], None
    for n, line in enumerate(lines):
        m = MODULE_RE.match(line)
        if m:
            module = m.group(1)
            continue
        d = DECL_RE.match(line)
        if not d or line.lstrip().startswith("(*") or _local_let(line) or _continued(lines, n):
            continue
        out.append(Declaration(module, _kind(line), d.group(1), n + 1, _end(lines, n) + 1,
                               _comment_before(lines, n)))
    return out


def normalized(text: str, line: int) -> str:
    """The text of the declaration starting at ``line`` (1-based), up to where it ends (see
    the module doc): comments removed, all whitespace (line breaks included) collapsed."""
    return _normalized(text.splitlines(), line)


def _normalized(lines: list[str], line: int) -> str:
    body = lines[line - 1:_end(lines, line - 1) + 1]
    return " ".join(COMMENT_RE.sub(" ", "\n".join(body)).split())


# --- what a declaration depends on ------------------------------------------------------
# A goal's text alone does not fix its meaning: `lemma l: forall a b. pre a b -> ...` says
# nothing once `pre` is redefined as `true`. So the baseline also pins the definitions a goal
# names, found here by following names through the modules of proofs/ (Why3's standard library
# is not followed: it is pinned by the Why3 version).

TYPE_RE = re.compile(r"^\s*type\s+([A-Za-z_][\w']*)")
IMPORT_RE = re.compile(r"^\s*(use|clone)\s+(?:(export|import)\s+)?([A-Za-z_][\w.']*)(?:\s+as\s+([A-Za-z_][\w']*))?")
NAME_RE = re.compile(r"[A-Za-z_][\w']*(?:\.[A-Za-z_][\w']*)*")


@dataclass(frozen=True)
class Import:
    kind: str            # use | clone
    target: str          # "file.Module" (another file of proofs/) or "Module" (this file)
    alias: str | None    # ``as Q``: names reached only as Q.x
    exported: bool       # ``use export`` / ``clone export``: seen by whoever uses this module
    line: int


@dataclass
class Module:
    name: str
    items: dict[str, list[int]]   # name -> first lines of its declarations and types
    axioms: list[tuple[str, int]]
    imports: list[Import]


def modules(text: str) -> dict[str, Module]:
    """The modules (and theories) of a WhyML text: what each declares and imports."""
    lines = text.splitlines()
    out: dict[str, Module] = {}
    current = None
    decl_at = {d.line: d for d in declarations(text)}
    for n, line in enumerate(lines, 1):
        m = MODULE_RE.match(line)
        if m:
            current = out.setdefault(m.group(1), Module(m.group(1), {}, [], []))
            continue
        if current is None or _continued(lines, n - 1):    # (a comment line matches no pattern)
            continue
        if n in decl_at:
            d = decl_at[n]
            if "lemma" in d.kind.split() or d.kind == "goal":
                continue            # proved facts: what they say is not what other goals mean
            current.items.setdefault(d.name, []).append(n)
            if d.kind == "axiom":
                current.axioms.append((d.name, n))
        elif (t := TYPE_RE.match(line)):
            current.items.setdefault(t.group(1), []).append(n)
        elif (i := IMPORT_RE.match(line)):
            current.imports.append(Import(i.group(1), i.group(3), i.group(4), i.group(2) == "export", n))
    return out


class Tree:
    """The WhyML files of a checkout, read once each: ``file.Module`` is proofs/file.mlw or
    proofs/lib/file.mlw (the load path of tools/prove); anything else is Why3's library."""

    def __init__(self, root: Path):
        self.root = root
        self.texts: dict[str, str] = {}
        self.lines: dict[str, list[str]] = {}
        self.parsed: dict[str, dict[str, Module]] = {}
        self.found: dict[tuple[str, str], tuple[str, Module] | None] = {}
        self.done: dict[tuple[str, int], dict[str, str]] = {}     # dependencies, once per goal

    def file(self, rel: str) -> dict[str, Module]:
        if rel not in self.parsed:
            self.texts[rel] = (self.root / rel).read_text(encoding="utf-8")
            self.lines[rel] = self.texts[rel].splitlines()
            self.parsed[rel] = modules(self.texts[rel])
        return self.parsed[rel]

    def module(self, here: str, target: str) -> tuple[str, Module] | None:
        """The module an import names, seen from file ``here``; None for Why3's library."""
        if (here, target) not in self.found:
            self.found[(here, target)] = self._module(here, target)
        return self.found[(here, target)]

    def _module(self, here: str, target: str) -> tuple[str, Module] | None:
        if "." not in target:
            m = self.file(here).get(target)
            return (here, m) if m else None
        stem, _, name = target.rpartition(".")
        for rel in (f"proofs/{stem}.mlw", f"proofs/lib/{stem}.mlw"):
            if (self.root / rel).is_file():
                m = self.file(rel).get(name)
                return (rel, m) if m else None
        return None


def _visible(tree: Tree, rel: str, mod: Module, inside: bool, seen: set) -> list[tuple[str, Module, list]]:
    """The modules whose names ``mod`` makes visible unqualified, with the clone statements on
    the way: ``mod`` itself, then its imports without ``as`` (only the exported ones when seen
    from outside), recursively."""
    if (rel, mod.name) in seen:
        return []
    seen.add((rel, mod.name))
    out = [(rel, mod, [])]
    for imp in mod.imports:
        if imp.alias is None and (inside or imp.exported):
            found = tree.module(rel, imp.target)
            if found:
                via = [(rel, mod.name, imp)] if imp.kind == "clone" else []
                out += [(r, m, via + v) for r, m, v in _visible(tree, found[0], found[1], False, seen)]
    return out


def _resolve(tree: Tree, rel: str, mod: Module, name: str) -> list[tuple[str, Module, str, list]]:
    """Where a name used in ``mod`` is declared in proofs/: (file, module, name, clone
    statements on the way). A qualified name ``Q.x`` is looked up in the module Q names (an
    ``as Q`` import, or a module of that name); ``a.shape``, a record field, finds nothing."""
    qual, _, last = name.rpartition(".")
    if qual:
        starts = []
        for imp in mod.imports:
            if qual in (imp.alias, imp.target) or imp.target.endswith("." + qual) and imp.alias is None:
                found = tree.module(rel, imp.target)
                if found:
                    starts.append((found, [(rel, mod.name, imp)] if imp.kind == "clone" else []))
        if not starts and qual in tree.file(rel):
            starts.append(((rel, tree.file(rel)[qual]), []))
        scopes = [(r, m, via + v) for (fr, fm), via in starts for r, m, v in _visible(tree, fr, fm, False, set())]
    else:
        scopes = _visible(tree, rel, mod, True, set())
    for r, m, via in scopes:
        if last in m.items:
            return [(r, m, last, via)]
    return []


def _context(tree: Tree, rel: str, mod: Module, seen: set) -> list[tuple[str, Module]]:
    """``mod`` and every module of proofs/ it imports, transitively, however imported (their
    axioms are all in the context of its goals); those already in ``seen`` are left out."""
    if (rel, mod.name) in seen:
        return []
    seen.add((rel, mod.name))
    out = [(rel, mod)]
    for imp in mod.imports:
        found = tree.module(rel, imp.target)
        if found:
            out += _context(tree, found[0], found[1], seen)
    return out


def _statement(lines: list[str], line: int) -> str:
    """A use or clone statement, with the continuation lines of its ``with`` clause,
    normalized."""
    end = line - 1
    while _goes_on(lines[end]) and end + 1 < len(lines):
        end += 1
    return " ".join(COMMENT_RE.sub(" ", "\n".join(lines[line - 1:end + 1])).split())


def dependencies(root: Path, rel: str, line: int, tree: Tree | None = None) -> dict[str, str]:
    """What the declaration starting at ``line`` of ``rel`` (a .mlw file under ``root``)
    depends on in proofs/, transitively: every declaration and type it names (through use and
    clone), the clone statements those names come through (their substitutions are part of
    the meaning) and the axioms of every module reached. Keyed ``FILE:Module.name`` (a clone
    statement: ``FILE:Module.clone TARGET [as ALIAS]``), valued by the normalized text; the
    declaration itself is not included. ``tree``: the files already read (for many calls)."""
    tree = tree or Tree(root)
    if (rel, line) not in tree.done:
        tree.done[(rel, line)] = _dependencies(tree, rel, line)
    return tree.done[(rel, line)]


def _dependencies(tree: Tree, rel: str, line: int) -> dict[str, str]:
    tree.file(rel)
    home = next((d.module for d in declarations(tree.texts[rel]) if d.line == line), None)
    if home not in tree.file(rel):
        return {}
    out: dict[str, str] = {}
    todo = [(rel, tree.file(rel)[home], _normalized(tree.lines[rel], line))]
    done = {(rel, line)}
    modules_seen: set[tuple[str, str]] = set()

    def add(key: str, r: str, m: Module, at: int, text: str) -> None:
        if (r, at) not in done:
            done.add((r, at))
            out[key] = f"{out[key]}\n{text}" if key in out else text
            todo.append((r, m, text))

    while todo:
        r, m, text = todo.pop()
        for cr, cm in _context(tree, r, m, modules_seen):   # the axioms in the context of each
            for name, at in cm.axioms:
                add(f"{cr}:{cm.name}.{name}", cr, cm, at, _normalized(tree.lines[cr], at))
        for name in sorted(set(NAME_RE.findall(text))):
            for fr, fm, found, via in _resolve(tree, r, m, name):
                for cr, cmod, imp in via:       # a clone's substitutions are names of their own
                    key = f"{cr}:{cmod}.clone {imp.target}" + (f" as {imp.alias}" if imp.alias else "")
                    add(key, cr, tree.file(cr)[cmod], imp.line, _statement(tree.lines[cr], imp.line))
                for at in fm.items[found]:
                    add(f"{fr}:{fm.name}.{found}", fr, fm, at, _normalized(tree.lines[fr], at))
    return dict(sorted(out.items()))
