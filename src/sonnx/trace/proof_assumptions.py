"""What the proofs assume, as Why3 itself sees it (not a regex over the .mlw text).

Two of Why3's own printers are read, both after parsing and typing, with every identifier
carrying its source location (``--debug print_locs``):

- ``why3 prove --print-theory``: the logical theories, clones expanded. Every ``axiom`` there is
  either discharged or an assumption:
  * discharged by a goal of the same theory at the same location (the ``'vc`` of a
    ``let lemma`` or ``let function`` whose ``'def``/``'spec``/lemma axiom it is);
  * inherited through a clone from an earlier theory: same location (an axiom or lemma
    copied as is) or, for the props Why3 generates at the clone site, the same name less
    the printer's numeric suffix; it is discharged exactly when its origin is (a lemma is
    proved where it is declared; an axiom kept by ``clone ... with axiom .`` stays an
    assumption);
  * otherwise an assumption (a source ``axiom``, however it is laid out).
  Props located in Why3's standard library (a stdlib theory cloned with new parameters, e.g.
  IEEE floats of another format: its axioms, and lemmas no session re-proves for the new
  parameters) are trusted with the stdlib and counted per theory; a lemma of a file that no
  session proves (proofs/lib) is an assumption.
- ``why3 prove --type-only --debug print_modules``: the typed program modules. Every
  ``assume { }`` is an assumption; every ``val`` with an ``ensures`` is one unless some
  theory has its refinement goal (``NAME'refn'vc``, a clone that supplies a proved
  implementation) at the val's location.

``check`` compares the list with the reviewed one in proofs/assumptions.toml (one entry, with
a reason, per assumption); anything not reviewed fails the proof step with its location.
"""
from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

REVIEWED = "proofs/assumptions.toml"
LOC = r'#"(?P<file>[^"]*)" (?P<line>\d+) (?P<c0>\d+) (?P<c1>\d+)#'
THEORY_RE = re.compile(r"^(?:theory|module) (\w+)")
PROP_RE = re.compile(r"^  (axiom|lemma|goal) (\S+)(?: " + LOC + ")?")
VAL_RE = re.compile(r"^(\s+)val (?:ghost )?(?:function |predicate |constant )?([^\s(:]+)")
LET_RE = re.compile(r"^\s+let (?:rec )?(?:ghost )?(?:function |predicate |lemma )?([^\s(:=]+)")
LOC_RE = re.compile(LOC)


def _why3(root: Path, rel: str, *opts: str) -> str:
    cmd = ["why3", "-C", "proofs/why3.conf", "prove", "-L", "proofs", *opts, rel]
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"why3 could not type {rel}: {(p.stderr or p.stdout).strip()[-400:]}")
    return p.stdout + p.stderr            # the --debug printers write to stderr


def _base(name: str) -> str:
    """The printer makes names unique with a numeric suffix (dot_wrap -> dot_wrap1)."""
    return name.rstrip("0123456789") or name


def _loc(m) -> tuple | None:
    return (m.group("file"), int(m.group("line")), int(m.group("c0")), int(m.group("c1"))) \
        if m and m.group("file") is not None else None


def parse_theories(text: str) -> list[dict]:
    """The props of ``--print-theory --debug print_locs`` output: theory, kind, name, loc."""
    out, theory = [], None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = THEORY_RE.match(line)
        if m:
            theory = m.group(1)
            continue
        m = PROP_RE.match(line)
        if m and theory:
            loc = _loc(m)
            if loc is None and i + 1 < len(lines):   # a long name: the location wraps
                loc = _loc(re.match(r"\s*" + LOC, lines[i + 1]))
            out.append({"theory": theory, "kind": m.group(1), "name": m.group(2), "loc": loc})
    return out


def classify_axioms(props: list[dict], project_files: set[str],
                    sessionless: frozenset[str] = frozenset()) -> tuple[list[dict], dict]:
    """(assumptions, counts per theory of the stdlib props taken on trust) from the props of
    all theories, in the printers' order (a theory comes after every theory it clones).
    A lemma or goal of a file in ``sessionless`` (no session proves it) is an assumption."""
    by_loc: dict[tuple, bool] = {}        # location -> discharged (proved) for props seen so far
    by_base: dict[str, list[bool]] = {}   # name less suffix -> discharged, for clone-site props
    goals_at = {(p["theory"], p["loc"]) for p in props if p["kind"] == "goal" and p["loc"]}
    assumptions, stdlib = [], {}
    for p in props:
        loc, base = p["loc"], _base(p["name"])
        if loc and loc[0] not in project_files:
            stdlib[p["theory"]] = stdlib.get(p["theory"], 0) + 1    # a stdlib clone's props
            ok = True
        elif p["kind"] != "axiom":
            ok = p.get("file") not in sessionless   # a lemma or goal: its session proves it
        elif (p["theory"], loc) in goals_at:
            ok = True                     # the 'def/'spec/lemma axiom of a proved let
        elif loc in by_loc:
            ok = by_loc[loc]              # copied by a clone: as its origin
        elif base in by_base:
            ok = all(by_base[base])       # generated at a clone site: as its origin
        else:
            ok = False                    # a source axiom
        if not ok:
            assumptions.append({"file": p.get("file"), "theory": p["theory"], "kind": p["kind"],
                                "name": p["name"], "loc": loc})
        if loc:
            by_loc[loc] = by_loc.get(loc, True) and ok
        by_base.setdefault(base, []).append(ok)
    return assumptions, stdlib


def parse_modules(text: str, refined: set[tuple]) -> list[dict]:
    """``assume`` and un-refined ``val ... ensures`` of ``--debug print_modules,print_locs``
    (``refined``: the locations of the refinement goals of the theories)."""
    lines = text.splitlines()
    out, module, fn = [], None, None
    for i, line in enumerate(lines):
        m = THEORY_RE.match(line)
        if m:
            module, fn = m.group(1), None
            continue
        m = LET_RE.match(line)
        if m:
            fn = m.group(1)
        if re.search(r"\bassume\s*\{", line):
            # its location is the last one printed before it (the printer may wrap the line)
            before = "\n".join(lines[max(0, i - 3):i] + [line[:line.index("assume")]])
            locs = list(LOC_RE.finditer(before))
            out.append({"theory": module, "kind": "assume", "name": fn or "?",
                        "loc": _loc(locs[-1]) if locs else None})
        m = VAL_RE.match(line)
        if not m:
            continue
        indent, name = len(m.group(1)), m.group(2)
        block = [line]
        for nxt in lines[i + 1:]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            block.append(nxt)
        text_block = "\n".join(block)
        ens = re.search(r"\bensures\b", text_block)
        if ens:
            # loc: the val's own name (a clone's copy is at the clone site); origin: its
            # ensures, which every copy shares with the declaration it was cloned from
            out.append({"theory": module, "kind": "val", "name": name,
                        "loc": _loc(LOC_RE.search(text_block)),
                        "origin": _loc(LOC_RE.search(text_block, ens.end()))})
    # a val is discharged when it or one of its copies is refined by a clone (which proves
    # the implementation's contract: a NAME'refn'vc goal at the copy's location)
    done = {v["origin"] for v in out if v["kind"] == "val" and v["loc"] in refined}
    return [a for a in out if a["kind"] != "val" or a["origin"] not in done]


def find(root, files: list[str], sessionless: frozenset[str] = frozenset()) -> dict:
    """Every assumption of ``files`` from Why3's printers: {"assumptions": [...],
    "stdlib_props": {theory: count}}; each assumption has file, theory, kind, name, line.
    ``sessionless``: files no session proves (their own lemmas are assumptions)."""
    root = Path(root)
    project = set(files)
    props, mods = [], []
    for rel in files:
        props += [dict(p, file=rel) for p in
                  parse_theories(_why3(root, rel, "--print-theory", "--debug", "print_locs"))]
        mods.append((rel, _why3(root, rel, "--type-only", "--debug", "print_modules,print_locs")))
    axioms, stdlib = classify_axioms(props, project, sessionless)
    refined = {p["loc"] for p in props if p["kind"] == "goal" and "'refn'vc" in p["name"]}
    found = list(axioms)
    for rel, text in mods:
        found += [dict(a, file=rel) for a in parse_modules(text, refined)]
    seen, out = set(), []
    for a in found:
        key = (a["kind"], a.get("origin") or a["loc"]) if a["kind"] in ("val", "assume") else _key(a)
        if key in seen:
            continue                      # a val/assume printed again inside a clone
        seen.add(key)
        a.pop("origin", None)
        loc = a.pop("loc")
        a["line"] = loc[1] if loc else None
        a["at"] = f"{loc[0]}:{loc[1]}" if loc else a["file"]
        out.append(a)
    return {"assumptions": out, "stdlib_props": stdlib}


def _key(a: dict) -> tuple:
    return (a["file"], a["theory"], a["kind"], _base(a["name"]))


def load_reviewed(root) -> list[dict]:
    """proofs/assumptions.toml: [[assumption]] file, theory, kind, name, reason (all required)."""
    data = tomllib.loads((Path(root) / REVIEWED).read_text(encoding="utf-8"))
    entries = data.get("assumption", [])
    for e in entries:
        missing = [k for k in ("file", "theory", "kind", "name", "reason") if not str(e.get(k, "")).strip()]
        if missing:
            raise ValueError(f"{REVIEWED}: entry {e} lacks {', '.join(missing)}")
    return entries


def check(found: dict, reviewed: list[dict], stdlib_reviewed: dict | None = None) -> list[str]:
    """Problems: an assumption not in the reviewed list (with its location), a reviewed entry
    Why3 no longer shows (the list must not keep stale reasons), a changed stdlib count."""
    have = {_key(a): a for a in found["assumptions"]}
    want = {_key(e): e for e in reviewed}
    problems = [f"new assumption {a['kind']} {a['theory']}.{a['name']} at {a['at']}: not in {REVIEWED}"
                for k, a in have.items() if k not in want]
    problems += [f"{REVIEWED} lists {e['kind']} {e['theory']}.{e['name']} ({e['file']}), which Why3 "
                 "no longer shows: remove it" for k, e in want.items() if k not in have]
    if stdlib_reviewed is not None and stdlib_reviewed != found["stdlib_props"]:
        problems.append(f"stdlib props per theory {found['stdlib_props']} differ from the reviewed "
                        f"{stdlib_reviewed} ({REVIEWED} [stdlib_props])")
    return problems
