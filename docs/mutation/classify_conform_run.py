"""Writes docs/mutation/conform-run.md from mutmut 3's run over src/sonnx/conform/ and src/sonnx/run/.

usage (in mutmut's mutants/ folder, with the project's venv):
    python classify_conform_run.py RECHECK.txt > docs/mutation/conform-run.md
RECHECK.txt holds lines "NAME EXIT_CODE" from docs/mutation/recheck.py: surviving mutants run
against tests/conform/test_mutation_kills.py and tests/run/test_mutation_kills.py (nonzero: that
file kills the mutant). Every other survivor is classified: first by CLASSES (a reason per
function or per group of mutant numbers, written after reading each mutant's diff), else by one
mechanical rule, MESSAGE_RULE below, which only ever says "message text only"."""
from __future__ import annotations

import ast
import difflib
import glob
import io
import json
import re
import sys
import tokenize

EQ, MSG, OPEN = "equivalent", "message/help text only", "not killed"

# function (module.x_name as mutmut names it, module relative to sonnx.) ->
#     [(mutant numbers or None for all, category, why)]
CLASSES: dict[str, list] = {}

KILLS: dict[str, str] = {}   # function -> the kill tests written against it


def _funcs(path: str) -> dict[str, list[str]]:
    src = open(path, encoding="utf-8").read()
    lines = src.splitlines()
    return {n.name: lines[n.lineno:n.end_lineno] for n in ast.walk(ast.parse(src))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and "__mutmut_" in n.name}


def _load():
    codes, diffs = {}, {}
    for meta in sorted(glob.glob("src/sonnx/*/*.py.meta")) + sorted(glob.glob("src/sonnx/*.py.meta")):
        got = json.load(open(meta))["exit_code_by_key"]
        if not any(k.startswith(("sonnx.conform.", "sonnx.run.")) for k in got):
            continue
        codes.update(got)
        funcs = _funcs(meta[:-5])
        for k, c in got.items():
            if c != 0:
                continue
            fname = k.rsplit(".", 1)[1]
            orig = funcs[fname.rsplit("__mutmut_", 1)[0] + "__mutmut_orig"]
            diffs[k] = [ln for ln in difflib.unified_diff(orig, funcs[fname], lineterm="", n=0)
                        if ln[:1] in "+-" and ln[:3] not in ("---", "+++")]
    return codes, diffs


def _tokens(line: str):
    """The tokens of one line (often part of a longer statement: an open bracket is fine)."""
    out = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(line.strip()).readline):
            if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT,
                              tokenize.DEDENT, tokenize.COMMENT):
                out.append((t.type, t.string))
    except tokenize.TokenError as exc:
        if "multi-line statement" not in str(exc):
            return None
    except (IndentationError, SyntaxError):
        return None
    return out


_BRACES = re.compile(r"\{[^{}]*\}")


def _prose(s: str) -> bool:
    """A string literal that is wording: letters and a space outside any {...} expression."""
    body = _BRACES.sub("", s.lstrip("rbfRBF").strip("'\""))
    return " " in body.strip() and bool(re.search(r"[A-Za-z]{2}", body))


def MESSAGE_RULE(diff: list[str]) -> bool:
    """One changed line, the change confined to string literals that are prose, and neither
    literal compared or used as a key: the wording of a message, help text or reason changed."""
    minus = [ln[1:] for ln in diff if ln.startswith("-")]
    plus = [ln[1:] for ln in diff if ln.startswith("+")]
    if len(minus) != 1 or len(plus) != 1:
        return False
    a, b = _tokens(minus[0]), _tokens(plus[0])
    if a is None or b is None or len(a) != len(b):
        return False
    changed = [(x, y) for x, y in zip(a, b) if x != y]
    if not changed or any(x[0] != tokenize.STRING or y[0] != tokenize.STRING for x, y in changed):
        return False
    for x, y in changed:
        if not _prose(x[1]):
            return False
        # inside {...} only None/number/slice edits (no key, attribute or call swapped)
        ex, ey = _BRACES.findall(x[1]), _BRACES.findall(y[1])
        if ex != ey and not all(u == v or "None" in v or re.sub(r"\d", "", u) == re.sub(r"\d", "", v)
                                for u, v in zip(ex, ey)):
            return False
    return True


def _split(name: str):
    m = re.match(r"sonnx\.(.+?)\.(x\w+|xǁ.+)__mutmut_(\d+)$", name)
    return f"{m.group(1)}.{m.group(2)}", int(m.group(3))


def _classify(name: str, diff: list[str]):
    func, num = _split(name)
    for nums, cat, why in CLASSES.get(func, []):
        if nums is None or num in nums:
            return cat, why
    if MESSAGE_RULE(diff):
        return MSG, "the wording of a message, help text or reason (MESSAGE_RULE)"
    return OPEN, "not analysed in the time of this run"


def _pairs(path: str) -> dict[str, str]:
    return dict(line.split() for line in open(path) if len(line.split()) == 2)


def main(recheck_path: str, dump_open: str | None = None) -> None:
    codes, diffs = _load()
    recheck = _pairs(recheck_path)
    new_kills = sorted(k for k, c in recheck.items() if codes.get(k) == 0 and c != "0")
    for k in new_kills:
        codes[k] = 1
    killed = [k for k, c in codes.items() if c in (1, 3)]
    survived = [k for k, c in codes.items() if c == 0]
    not_run = [k for k, c in codes.items() if c is None]
    other = [k for k, c in codes.items() if c not in (0, 1, 3, None)]
    rows: dict[str, list] = {}
    for k in survived:
        cat, why = _classify(k, diffs[k])
        rows.setdefault(cat, []).append((k, why))
    if dump_open:      # the open survivors with their diffs, for the reader writing CLASSES
        with open(dump_open, "w") as fh:
            for k, _ in sorted(rows.get(OPEN, [])):
                fh.write(f"== {k.removeprefix('sonnx.')}\n" + "".join(f"   {d.strip()[:200]}\n" for d in diffs[k]))
    run = len(killed) + len(survived) + len(other)
    eq = len(rows.get(EQ, []))
    p = print
    p("# Mutation testing of `src/sonnx/conform/` and `src/sonnx/run/` (issue 26)\n")
    p(HEADER.format(rechecked=len(recheck)))
    p(f"- mutants: {len(codes)}; run: {run}; **not run: {len(not_run)}**")
    p(f"- killed: {len(killed)} ({100 * len(killed) / max(1, run):.1f}% of those run), of which "
      f"{len(new_kills)} by tests/conform/test_mutation_kills.py and tests/run/test_mutation_kills.py")
    p(f"- survived: {len(survived)}; other (timeout / no tests / suspicious): {len(other)}")
    p(f"- score with the {eq} equivalent survivors left out: "
      f"{100 * len(killed) / max(1, run - eq):.1f}%; counting equivalents as killed: "
      f"{100 * (len(killed) + eq) / max(1, run):.1f}%\n")
    p("| category | survivors |\n|---|---|")
    for cat in (EQ, MSG, OPEN):
        p(f"| {cat} | {len(rows.get(cat, []))} |")
    p("")
    for cat in (EQ, MSG, OPEN):
        got = rows.get(cat, [])
        if got:
            p(f"## {cat} ({len(got)})\n")
            for k, why in sorted(got):
                p(f"- `{k.removeprefix('sonnx.')}`: {why}")
            p("")
    p(f"## killed by the new tests ({len(new_kills)})\n")
    for k in new_kills:
        p(f"- `{k.removeprefix('sonnx.')}`: {KILLS.get(_split(k)[0], 'a test of the test_mutation_kills.py files')}")
    p("")
    if other:
        p(f"## other statuses ({len(other)})\n")
        for k in sorted(other):
            p(f"- `{k.removeprefix('sonnx.')}`: exit code {codes[k]}")
        p("")
    if not_run:
        p(f"## not run ({len(not_run)})\n")
        by: dict[str, int] = {}
        for k in not_run:
            by[_split(k)[0]] = by.get(_split(k)[0], 0) + 1
        for f, n in sorted(by.items()):
            p(f"- `{f}`: {n}")


HEADER = "(header)"

if __name__ == "__main__":
    main(*sys.argv[1:3])
