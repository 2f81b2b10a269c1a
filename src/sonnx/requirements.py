"""The requirement registry: the profile's rules and each operator's requirements, shipped in
the package beside the code they are about.

Data files (TOML), gathered in this order: ``sonnx/data/profile.toml`` (the profile's own rules,
PROF-R*), then ``sonnx/ops/<stem>.toml`` of every registered operator, in registry order. Each
may hold:

  [[requirement]]  id, title, statement, rationale, source, verification (subset of proof,
                   crosshair, test), families (optional: the declared families it belongs to)
  [[requirement.wg]]  ref, relation, reason: the working group's documents this requirement
                   refines or departs from (WG_RELATIONS, below); optional here, but the trace
                   makes a requirement without one a defect ("wg")
  [[claim]]        id, part (the words of the statement this part covers), proof (goals linked
                   to the ID, FILE:GOAL), crosshair (harnesses; "mutant NAME" for a planted
                   mutant), test (marked tests, as the trace names them), gap (the path of the
                   file saying why the part is not proved as stated); read by sonnx.trace.claims
  [[skip]]         case ("classname::name[params]" as in the JUnit report), justification: a
                   test case skipped on purpose, after review
  [[gap]]          id, kind (spec | code | proof | test | crosshair), justification: a demanded
                   link missing on purpose, after review

``{operators}`` in a statement stands for the registered operators' names (from the registry,
so that no list of names is kept by hand).

Families: wherever a requirement ID may be written as a link (a ``# req:`` comment, a
``@pytest.mark.req(...)`` argument, a proof's ``(* req: ... *)``, ``supports`` in
spec/trace-supports.toml), ``@NAME`` stands for every requirement of family NAME: the built-in
ones (``@every``, ``@operators``, ``@proved``, ``@kind:<kind>``) or a declared one (FAMILIES,
joined by a requirement's own ``families``). An unknown family is an error, as an unknown ID is.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

VERIFICATION_KINDS = ("proof", "crosshair", "test")
TABLES = ("requirement", "claim", "skip", "gap")
PROFILE_DATA = "data/profile.toml"      # inside the package, as every path below

# The declared families, each with what its members share. A requirement joins one by its own
# data (``families = [...]``); add one only when a marker needs to name a group no built-in
# family names, with the reason here.
FAMILIES = {
    "same-shape": "the operator's shape rule: which operand shapes it takes and the shape of its "
                  "result (each operator's R1)",
    "dense": "operands and results are dense tensors; sparse ones are refused",
    "typed": "one element type from the type set of the operator version in use",
    "no-broadcast": "operands of different shapes are never broadcast",
    "attributes": "which attributes may appear, with which values, per version (the validator's "
                  "node checks read them, as they read shapes and types)",
    "rounding": "IEEE 754 or integer arithmetic of a result element (rounding, wrap-around)",
    "values": "the value of each result element: the rounding family and exact element functions "
              "(what a run computes, so what the floating-point environment and run --compare touch)",
    "fast-bound": "the error bound of fast mode",
}
# The SONNX working group's public documents (github.com/onnx/working-groups), as of one commit:
# a requirement's ``wg`` entries cite them as "PATH#TAG" (PATH under safety-related-profile/ at
# that commit, TAG a literal string of the document: "[R4]", "(C3)", "`OP 016`"); "PATH" alone
# with relation "none" names where a specification would be and is not. Checked against a
# snapshot of the repository by tests/test_requirements_wg.py.
WG_REPO = "https://github.com/onnx/working-groups"
WG_COMMIT = "b0cd9c92ee9f794473f7847e8941de8ff19aca75"
WG_PREFIX = "safety-related-profile/"
WG_RELATIONS = {
    "refines": "sonnx states the WG text precisely (same intent, made checkable)",
    "departs": "sonnx is stricter than or differs from the WG text; reason says how and why",
    "none": "the WG has no text this requirement could refine at WG_COMMIT; reason says which is missing",
}

# The documents the project was made from (its "seed" documents), by number, in
# sonnx/data/seeds.toml: a requirement's source that cites "seed N" must also name that
# document's title, so that a reader outside the project can find it. identity: where the
# public text is (or why it is not public), and the sha256 of the copy the project was made from.
SEEDS_DATA = "data/seeds.toml"


@lru_cache(maxsize=1)
def seed_documents() -> dict[str, dict[str, str]]:
    """{number ("004"): {"title", "identity"}} of the seed documents."""
    data = tomllib.loads(resources.files("sonnx").joinpath(SEEDS_DATA).read_text(encoding="utf-8"))
    return {d["number"]: {"title": d["title"], "identity": d["identity"]} for d in data["seed"]}


SEED_RE = re.compile(r"\bseeds? (\d{1,3})\b", re.IGNORECASE)


def bare_seed_citations(source: str) -> list[str]:
    """The "seed N" citations of a source text that do not name their document: an unknown seed
    number, or one whose title (seed_documents()) is not written in the same text."""
    out = []
    for m in SEED_RE.finditer(source):
        number = m.group(1).zfill(3)
        doc = seed_documents().get(number)
        if doc is None:
            out.append(f"{m.group(0)} (no such seed document)")
        elif doc["title"] not in source:
            out.append(f"{m.group(0)} without its title \"{doc['title']}\"")
    return out


BUILTIN_FAMILIES = ("every", "operators", "proved", "kind:<kind>")
FAMILY_RE = re.compile(r"@[a-z][a-z0-9:-]*[a-z0-9]")


def _id_pattern() -> str:
    from .ops.registry import operators
    prefixes = [op.prefix for op in operators().values()] + ["PROF"]
    return "(?:" + "|".join(prefixes) + r")-R\d+"


# A requirement ID as a regular expression (no groups, no anchors): an operator's prefix from
# the registry, or PROF for the profile's own rules, then -R and a number. The trace and the
# tests build every ID pattern from this one.
ID_PATTERN = _id_pattern()


@dataclass(frozen=True)
class WgRef:
    """One cross-reference to the working group's documents (see WG_RELATIONS)."""
    ref: str
    relation: str
    reason: str

    def as_dict(self) -> dict:
        return {"ref": self.ref, "relation": self.relation, "reason": self.reason}

    def text(self) -> str:
        return f"{self.relation} {self.ref}" + (f": {self.reason}" if self.reason else "")


def _wg_refs(rid: str, entries: object) -> tuple[WgRef, ...]:
    """A requirement's ``wg`` entries, checked: ValueError unless each has a ref, a known
    relation, and a reason whenever it departs or cites nothing."""
    if not (isinstance(entries, list) and all(isinstance(e, dict) for e in entries)):
        raise ValueError(f"requirement {rid}: wg must be [[requirement.wg]] tables")
    out = []
    for e in entries:
        unknown = sorted(set(e) - {"ref", "relation", "reason"})
        if unknown:
            raise ValueError(f"requirement {rid}: wg entry with unknown key(s) {', '.join(unknown)}")
        ref, relation, reason = e.get("ref"), e.get("relation"), e.get("reason", "")
        if not (isinstance(ref, str) and ref.strip()):
            raise ValueError(f"requirement {rid}: wg entry without a ref")
        if relation not in WG_RELATIONS:
            raise ValueError(f"requirement {rid}: wg relation {relation!r} for {ref} "
                             f"(known: {', '.join(WG_RELATIONS)})")
        if not isinstance(reason, str):
            raise ValueError(f"requirement {rid}: wg reason of {ref} must be a string")
        if relation in ("departs", "none") and not reason.strip():
            raise ValueError(f"requirement {rid}: wg relation {relation} of {ref} needs a reason")
        out.append(WgRef(ref.strip(), relation, " ".join(reason.split())))
    return tuple(out)


def wg_problems(registry: dict, read) -> list[str]:
    """What is wrong with the registry's ``wg`` references, judged against the working group's
    documents at WG_COMMIT: ``read(path)`` gives the text of PATH (under WG_PREFIX) or None when
    there is no such file or directory. A "PATH#TAG" must name an existing document holding TAG;
    a bare "PATH" (no tag) must be absent and is allowed only with relation "none"."""
    out = []
    for rid, req in registry.items():
        for w in req.wg:
            path, _, tag = w.ref.partition("#")
            text = read(path)
            if tag:
                if text is None:
                    out.append(f"{rid}: {w.ref}: no document {path} at working-groups {WG_COMMIT[:12]}")
                elif tag not in text:
                    out.append(f"{rid}: {w.ref}: {path} holds no {tag!r}")
            elif w.relation != "none":
                out.append(f"{rid}: {w.ref}: a reference without a tag must be relation none")
            elif text is not None:
                out.append(f"{rid}: {w.ref}: {path} exists at working-groups {WG_COMMIT[:12]}: cite it")
    return out


@dataclass(frozen=True)
class Requirement:
    id: str
    title: str
    statement: str
    rationale: str
    source: str
    verification: tuple[str, ...]
    families: tuple[str, ...] = ()
    wg: tuple[WgRef, ...] = ()          # the working group's documents: see WG_RELATIONS

    def as_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "statement": self.statement,
                "rationale": self.rationale, "source": self.source,
                "verification": list(self.verification), "families": list(self.families),
                "wg": [w.as_dict() for w in self.wg]}


def _stem(op) -> str:
    """An operator's stem (its module name), from its spec page spec/<stem>.md."""
    return getattr(op, "stem", None) or Path(op.spec).stem


def operator_names() -> str:
    """The registered operators' names, as ``{operators}`` reads in a statement."""
    from .ops.registry import operators
    return ", ".join(operators())


def parse(text: str, where: str = "registry") -> dict[str, Requirement]:
    """The ``[[requirement]]`` entries of one data file's text (other tables are ignored here);
    raises ValueError on a malformed or duplicate entry or an undeclared family."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{where}: malformed ({exc})") from None
    out: dict[str, Requirement] = {}
    for entry in data.get("requirement", []):
        missing = [k for k in ("id", "title", "statement", "rationale", "source", "verification")
                   if k not in entry]
        if missing:
            raise ValueError(f"requirement {entry.get('id', '?')} lacks {', '.join(missing)}")
        unknown = set(entry["verification"]) - set(VERIFICATION_KINDS)
        if unknown:
            raise ValueError(f"requirement {entry['id']}: unknown verification {sorted(unknown)}")
        families = entry.get("families", [])
        if not (isinstance(families, list) and all(isinstance(f, str) for f in families)):
            raise ValueError(f"requirement {entry['id']}: families must be a list of names")
        undeclared = sorted(set(families) - set(FAMILIES))
        if undeclared:
            raise ValueError(f"requirement {entry['id']}: undeclared famil{'y' if len(undeclared) == 1 else 'ies'} "
                             f"{', '.join(undeclared)} (declared: {', '.join(FAMILIES)})")
        if entry["id"] in out:
            raise ValueError(f"requirement {entry['id']} is listed twice")
        statement = " ".join(entry["statement"].split())
        if "{operators}" in statement:
            statement = statement.replace("{operators}", operator_names())
        out[entry["id"]] = Requirement(
            id=entry["id"], title=entry["title"], statement=statement,
            rationale=" ".join(entry["rationale"].split()), source=entry["source"],
            verification=tuple(entry["verification"]), families=tuple(families),
            wg=_wg_refs(entry["id"], entry.get("wg", [])))
    return out


def data_files() -> list[str]:
    """The data files, as paths inside the package (``data/profile.toml``, ``ops/<stem>.toml``),
    in the order the registry gathers them."""
    from .ops.registry import operators
    return [PROFILE_DATA, *(f"ops/{_stem(op)}.toml" for op in operators().values())]


def data_file_of(rid: str) -> str:
    """The data file (path inside the package) that holds, or should hold, requirement ``rid``."""
    from .ops.registry import operators
    prefix = rid.rsplit("-R", 1)[0]
    for op in operators().values():
        if op.prefix == prefix:
            return f"ops/{_stem(op)}.toml"
    return PROFILE_DATA


def _package(root: Path | None):
    return resources.files("sonnx") if root is None else Path(root) / "src" / "sonnx"


def shown(rel: str, root: Path | None = None) -> str:
    """How a data file is named in messages: its path in the checkout (src/sonnx/...), or in
    the installed package (sonnx/...)."""
    return f"src/sonnx/{rel}" if root is not None else f"sonnx/{rel}"


def texts(root: Path | None = None) -> list[tuple[str, str]]:
    """(path inside the package, text) of every data file that exists: of the installed
    package, or of the checkout ``root`` (its src/sonnx)."""
    pkg = _package(root)
    out = []
    for rel in data_files():
        f = pkg.joinpath(rel)
        if f.is_file():
            out.append((rel, f.read_text(encoding="utf-8")))
    return out


def tables(root: Path | None = None) -> dict[str, list[dict]]:
    """Every table of every data file, by kind (requirement, claim, skip, gap), in gathering
    order; each entry carries ``file``, the data file it came from (as ``shown``). ValueError
    when a file is malformed or holds a table of another kind."""
    out: dict[str, list[dict]] = {k: [] for k in TABLES}
    for rel, text in texts(root):
        where = shown(rel, root)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{where}: malformed ({exc})") from None
        unknown = sorted(set(data) - set(TABLES))
        if unknown:
            raise ValueError(f"{where}: unknown table(s) {', '.join(unknown)} (known: {', '.join(TABLES)})")
        for kind in TABLES:
            entries = data.get(kind, [])
            if not (isinstance(entries, list) and all(isinstance(e, dict) for e in entries)):
                raise ValueError(f"{where}: {kind} must be [[{kind}]] tables")
            out[kind] += [{**e, "file": where} for e in entries]
    return out


def load_from(root: Path | None) -> dict[str, Requirement]:
    """The registry of the checkout ``root`` (None: of the installed package), keyed by ID:
    the profile's rules, then each registered operator's, in registry order."""
    out: dict[str, Requirement] = {}
    for rel, text in texts(root):
        for rid, req in parse(text, shown(rel, root)).items():
            if rid in out:
                raise ValueError(f"requirement {rid} is listed twice")
            out[rid] = req
    return out


@lru_cache(maxsize=1)
def load() -> dict[str, Requirement]:
    """The registry shipped with the package, keyed by ID, in gathering order."""
    return load_from(None)


def family_members(name: str, registry: dict[str, Requirement]) -> list[str]:
    """The IDs of ``registry`` in family ``name`` (without its ``@``), in registry order;
    KeyError when there is no such family."""
    from .ops.registry import operators
    if name == "every":
        return list(registry)
    if name == "operators":
        return [rid for rid in registry if not rid.startswith("PROF-")]
    if name == "proved":
        return [rid for rid, r in registry.items() if "proof" in r.verification]
    if name.startswith("kind:"):
        kind = name.partition(":")[2]
        known = {op.kind for op in operators().values()}
        if kind not in known and kind not in ("elementwise", "unary", "matrix", "structural"):
            raise KeyError(name)
        prefixes = {op.prefix for op in operators().values() if op.kind == kind}
        return [rid for rid in registry if rid.rsplit("-R", 1)[0] in prefixes]
    if name in FAMILIES:
        return [rid for rid, r in registry.items() if name in r.families]
    raise KeyError(name)


def expand(tokens, registry: dict[str, Requirement]) -> tuple[list[str], list[str]]:
    """IDs and ``@family`` tokens -> (the IDs they stand for, without repeats, in order; the
    tokens that name no family). IDs are kept as written (an unknown ID is the caller's orphan)."""
    ids: list[str] = []
    unknown: list[str] = []
    for t in tokens:
        if t.startswith("@"):
            try:
                members = family_members(t[1:], registry)
            except KeyError:
                unknown.append(t)
                continue
        else:
            members = [t]
        ids += [m for m in members if m not in ids]
    return ids, unknown


def family_help() -> str:
    """One line listing the families a marker may name (for messages)."""
    return ", ".join(f"@{f}" for f in (*BUILTIN_FAMILIES, *FAMILIES))


def markdown_block(prefix: str, registry: dict[str, Requirement] | None = None) -> str:
    """The requirement block of an operator's spec page (PROF: spec/profile.md), as it stands
    between ``<!-- generated: requirements -->`` and ``<!-- end generated -->``: one line per
    requirement of ``prefix``, in order, ``- **[ID] Title.** statement``."""
    registry = load() if registry is None else registry
    lines = [f"- **[{r.id}] {r.title}.** {' '.join(r.statement.split())}"
             for rid, r in registry.items() if rid.rsplit("-R", 1)[0] == prefix]
    return "\n".join(lines) + "\n"


BLOCK_START = "<!-- generated: requirements -->"
BLOCK_END = "<!-- end generated -->"


def page_block(text: str) -> str | None:
    """The text between the requirement block's markers of a spec page (None: no block)."""
    start = text.find(BLOCK_START)
    if start < 0:
        return None
    end = text.find(BLOCK_END, start)
    if end < 0:
        return None
    return text[start + len(BLOCK_START):end].strip("\n") + "\n"
