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
  clone, module, theory, end, scope, exception) or a requirement comment ``(* req:``;
- its annotation is the comment that ends on the line just before it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

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
    while k < len(lines) and not (ITEM_RE.match(lines[k]) or lines[k].lstrip().startswith("(* req:")):
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
        if not d or line.lstrip().startswith("(*"):
            continue
        out.append(Declaration(module, _kind(line), d.group(1), n + 1, _end(lines, n) + 1,
                               _comment_before(lines, n)))
    return out


def normalized(text: str, line: int) -> str:
    """The text of the declaration starting at ``line`` (1-based), up to where it ends (see
    the module doc): comments removed, all whitespace (line breaks included) collapsed."""
    lines = text.splitlines()
    body = lines[line - 1:_end(lines, line - 1) + 1]
    return " ".join(COMMENT_RE.sub(" ", "\n".join(body)).split())
