"""Regenerates the generated blocks of the documentation (tools/docs-tables).

A generated block is the text between a line ``<!-- generated: NAME [ARGS] -->`` and the next
line ``<!-- end generated -->`` in README.md, docs/**/*.md or spec/*.md. Its content is a
function of the registry (``sonnx.ops.registry.operators()``), the requirement data
(``sonnx.requirements``), the claims (``sonnx.trace.claims``) and the committed run records
(docs/records/), never written by hand. Blocks:

  operators                 the operator index: name, kind, versions and type sets, requirement
                            IDs with titles, spec page, proofs, C kernel
  operator-list             one line: how many operators, their names, the opsets accepted
  requirements [PREFIX]     ``sonnx.requirements.markdown_block(PREFIX)``: one line per
                            requirement of PREFIX, ``- **[ID] Title.** statement``; without
                            PREFIX, the operator whose spec page holds the block
  operator [STEM]           one operator's facts and requirements (without STEM: the operator
                            whose docs/operators/STEM.md holds the block)
  c-kernels                 the C entry points: operator, proof file, theory, requirement IDs
  comparison                how `sonnx run --compare` judges each operator against onnxruntime
  conform-rules             the rule of each operator that conform's materialise-broadcast
                            resolves
  openvino-layers           the OpenVINO IR layer types judged as each operator
  standing                  each requirement's standing from its claims (covered, partial,
                            tested only), with the IDs
  record-figures PATH       the figures of a run record (docs/records/...): its ``- mutants:``
                            bullets and its sections' counts, or its ``Totals of`` line

``--check`` rewrites nothing and exits 1 naming every stale block (file, line, name); an unknown
block name or an argument it cannot use exits 2. Without it, every stale block is rewritten.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]

BLOCK = re.compile(r"^<!-- generated: (?P<head>[^\n]*?) -->\n(?P<body>.*?)^<!-- end generated -->$",
                   re.M | re.S)


class BlockError(Exception):
    """A block this tool cannot render (unknown name, bad argument)."""


def documents(root: Path) -> list[Path]:
    """Every file that may hold generated blocks, in a fixed order."""
    found = [root / "README.md"]
    found += sorted((root / "docs").rglob("*.md"))
    found += sorted((root / "spec").glob("*.md"))
    return [p for p in found if p.is_file()]


# --- the data ------------------------------------------------------------------------------------

def _operators():
    from sonnx.ops.registry import operators
    return list(operators().values())


def _stem(op) -> str:
    """The operator's stem (its module name), as its spec page is named."""
    return getattr(op, "stem", None) or Path(op.spec).stem


def _requirements() -> dict:
    from sonnx import requirements
    return requirements.load()


def markdown_block(prefix: str) -> str:
    """``sonnx.requirements.markdown_block`` when the package has it; else the same rendering
    (one line per requirement of ``prefix``: ``- **[ID] Title.** statement``, the statement's
    whitespace normalised)."""
    from sonnx import requirements
    render = getattr(requirements, "markdown_block", None)
    if render is not None:
        return render(prefix).rstrip("\n")
    lines = [f"- **[{r.id}] {r.title}.** {' '.join(r.statement.split())}"
             for r in requirements.load().values() if r.id.startswith(prefix + "-R")]
    if not lines:
        raise BlockError(f"no requirement has the prefix {prefix!r}")
    return "\n".join(lines)


def _type_order(name: str) -> tuple:
    """Floats by width, then signed and unsigned integers by width, then any other type by name."""
    from sonnx import dtypes
    try:
        if dtypes.is_float(name):
            return (0, dtypes.bits(name), name != "float16", name)
        return (1 if dtypes.is_signed(name) else 2, dtypes.bits(name), name)
    except (KeyError, ValueError, TypeError):
        return (3, 0, name)


def _types(names) -> str:
    return ", ".join(sorted(names, key=_type_order))


def _c_kernel(op) -> bool:
    """Whether the operator has a C kernel proved and extracted from Why3."""
    if hasattr(op, "c_binding"):
        return bool(op.c_binding)
    from sonnx import c_kernels
    return callable(getattr(c_kernels, _stem(op), None))


def _link(root: Path, page: Path, target: str) -> str:
    """A relative link from ``page`` to the repository path ``target``."""
    import os
    return os.path.relpath(root / target, page.parent).replace(os.sep, "/")


# --- the renderers -------------------------------------------------------------------------------

def render_operators(root: Path, page: Path, args: list[str]) -> str:
    reqs = _requirements()
    rows = ["| operator | kind | versions: element types | requirements | spec | proofs | C kernel |",
            "|---|---|---|---|---|---|---|"]
    for op in _operators():
        stem = _stem(op)
        guide = root / "docs" / "operators" / f"{stem}.md"
        name = f"[{op.name}]({_link(root, page, guide.relative_to(root).as_posix())})" \
            if guide.is_file() else op.name
        versions = "<br>".join(f"**{v}**: {_types(op.type_sets[v])}" for v in op.versions)
        ids = "<br>".join(f"{r.id} {r.title}" for r in reqs.values() if r.id.startswith(op.prefix + "-R"))
        proofs = ", ".join(f"[{Path(p).name}]({_link(root, page, p)})" for p in op.proofs)
        rows.append(f"| {name} | {op.kind} | {versions} | {ids} | "
                    f"[{op.spec}]({_link(root, page, op.spec)}) | {proofs} | "
                    f"{'yes' if _c_kernel(op) else 'no'} |")
    return "\n".join(rows)


_NUMBERS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
            "eleven", "twelve")


def render_operator_list(root: Path, page: Path, args: list[str]) -> str:
    from sonnx.profile import MAX_KNOWN_OPSET
    ops = _operators()
    count = _NUMBERS[len(ops)] if len(ops) < len(_NUMBERS) else str(len(ops))
    names = ", ".join(f"`{op.name}`" for op in ops)
    return (f"The profile has {count} operators: {names} (default domain, opsets 1 to "
            f"{MAX_KNOWN_OPSET}).")


def render_requirements(root: Path, page: Path, args: list[str]) -> str:
    if len(args) > 1:
        raise BlockError("requirements takes one prefix at most")
    if args:
        return markdown_block(args[0])
    rel = page.relative_to(root).as_posix()
    if rel == "spec/profile.md":          # the profile's own rules, PROF-R*
        return markdown_block("PROF")
    owner = [op for op in _operators() if op.spec == rel]
    if not owner:
        raise BlockError(f"requirements without a prefix belongs in an operator's spec page; "
                         f"{rel} is none")
    return markdown_block(owner[0].prefix)


def render_operator(root: Path, page: Path, args: list[str]) -> str:
    if len(args) > 1:
        raise BlockError("operator takes one stem at most")
    stem = args[0] if args else page.stem
    found = [op for op in _operators() if _stem(op) == stem]
    if not found:
        raise BlockError(f"no registered operator has the stem {stem!r}")
    op = found[0]
    versions = "; ".join(f"{v}: {_types(op.type_sets[v])}" for v in op.versions)
    proofs = ", ".join(f"[{p}]({_link(root, page, p)})" for p in op.proofs)
    return "\n".join([
        f"- **ONNX** `{op.name}`, default domain; kind *{op.kind}*; requirement prefix `{op.prefix}`",
        f"- **versions and element types**: {versions}",
        f"- **spec** [{op.spec}]({_link(root, page, op.spec)}); **proofs** {proofs}; "
        f"**C kernel** {'yes' if _c_kernel(op) else 'no'}",
        "- **requirements**:", "",
        markdown_block(op.prefix)])


def _openvino_layers(op) -> list[str]:
    """The OpenVINO IR layer types read as ``op``: its record's ``openvino`` field, or (before the
    record had one) the validator's table of layers."""
    field = getattr(op, "openvino", None)
    if field is not None:
        items = list(field.keys()) if hasattr(field, "keys") else list(field)
        names = []
        for item in items:
            if isinstance(item, str):
                names.append(item)
                continue
            found = next((getattr(item, a) for a in ("types", "layer_types", "names") if hasattr(item, a)), None)
            if found is not None:
                names += [found] if isinstance(found, str) else list(found)
                continue
            one = next((getattr(item, a) for a in ("type", "layer", "name") if hasattr(item, a)), None)
            if one is None:
                raise BlockError(f"cannot read the layer names of {op.name}'s openvino field: {item!r}")
            names.append(one)
        return names
    from sonnx.validate import openvino
    return [t for t, m in openvino.LAYERS.items() if m.op == op.name]


def render_openvino_layers(root: Path, page: Path, args: list[str]) -> str:
    pairs = [(layer, op.name) for op in _operators() for layer in _openvino_layers(op)]
    if not pairs:
        return "No IR layer is read as a profile operator."
    listed = ", ".join(f"`{layer}` as {name}" for layer, name in pairs)
    return f"The IR layers read as profile operators: {listed}."


def _conform_rule(op) -> str | None:
    """The rule ``sonnx conform`` may resolve for ``op`` by storing a constant operand expanded
    (with the inputs concerned when the record says), or None: its record's ``conform`` field,
    or (before the record had one) conform's own table."""
    if hasattr(op, "conform"):
        field = op.conform
        if not field:
            return None
        if isinstance(field, str):
            return f"`{field}`"
        get = field.get if hasattr(field, "get") else (lambda k, d=None: getattr(field, k, d))
        rule, operands = get("rule"), get("operands") or ()
        if rule is None:
            raise BlockError(f"cannot read the rule of {op.name}'s conform field: {field!r}")
        names = [o[-1] if isinstance(o, (tuple, list)) else str(o) for o in operands]
        own = " (its own `node-rewrite`)" if get("node_rewrite", None) is not None else ""
        written = list(get("defaults", None) or ())
        own += f" (`write-default`: {', '.join(written)})" if written else ""
        own += " (`explicit-pads`)" if get("auto_pad", False) else ""
        return f"`{rule}`" + (f" (input{'s' if len(names) > 1 else ''} {', '.join(names)})" if names else "") + own
    from sonnx.conform import rewrite
    prefix = getattr(rewrite, "_RULE_PREFIX", {}).get(op.name)
    return f"`{prefix}-R4`" if prefix else None


def render_conform_rules(root: Path, page: Path, args: list[str]) -> str:
    found = [(op.name, rule) for op in _operators() if (rule := _conform_rule(op))]
    if not found:
        return "No operator's rule is resolved by storing a constant operand expanded."
    listed = ", ".join(f"{name} {rule}" for name, rule in found)
    return ("The rules `materialise-broadcast` (or, where marked, the operator's own `node-rewrite`, "
            f"`write-default` of the attributes named, `explicit-pads`) resolves, per operator: {listed}.")


def _policy(value) -> str:
    """A comparison policy as a reader sees it: its text, or a bound function's name."""
    if isinstance(value, str):
        return value
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if name is None:
        raise BlockError(f"cannot describe the comparison policy {value!r}")
    return f"within the bound `{getattr(value, '__module__', '')}.{name}`".replace("`.", "`")


def render_comparison(root: Path, page: Path, args: list[str]) -> str:
    ops = _operators()
    if not all(hasattr(op, "comparison") for op in ops):
        return ("(The operators' records carry no `comparison` field yet: the policies are those "
                "of `src/sonnx/run/comparison.py`, as described above.)")
    return "\n".join(f"- {op.name}: {_policy(op.comparison)}" for op in ops)


def render_c_kernels(root: Path, page: Path, args: list[str]) -> str:
    from sonnx import c_kernels
    table = getattr(c_kernels, "KERNELS", None)
    if not table:
        raise BlockError("sonnx.c_kernels has no KERNELS table (C function -> proof, theory, IDs)")
    by_prefix = {op.prefix: op.name for op in _operators()}
    rows = ["| C function | operator | proved in | theory | requirements |", "|---|---|---|---|---|"]
    for function, (proof, theory, ids) in table.items():
        names = sorted({by_prefix.get(i.rsplit("-R", 1)[0], "?") for i in ids})
        rows.append(f"| `{function}` | {', '.join(names)} | [{proof}]({_link(root, page, proof)}) | "
                    f"`{theory}` | {', '.join(ids)} |")
    return "\n".join(rows)


def render_standing(root: Path, page: Path, args: list[str]) -> str:
    from sonnx.trace import claims
    groups = claims.standings(root)
    total = sum(len(v) for v in groups.values())
    says = {"covered": "every part has its evidence and at least one is proved of the Why3 "
                       "model, no gap",
            "partial": "a part is not proved as stated; its gap file in spec/gaps/ says why and "
                       "what checks it instead",
            "tested only": "no proof, by design (the requirement asks for tests)"}
    lines = [f"Of the {total} requirements, as their claims state them part by part:"]
    for kind, ids in groups.items():
        listed = ", ".join(f"`{i}`" for i in ids)
        lines.append(f"- **{len(ids)} {kind}**: {says[kind]}" + (f" ({listed});" if ids else ";"))
    lines[-1] = lines[-1].rstrip(";") + "."
    return "\n".join(lines)


def render_record_figures(root: Path, page: Path, args: list[str]) -> str:
    if len(args) != 1:
        raise BlockError("record-figures takes the record's path")
    record = root / args[0]
    if not record.is_file() or "records" not in record.parts:
        raise BlockError(f"{args[0]} is no run record under docs/records/")
    text = record.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(text) if line.startswith("- mutants:")), None)
    if start is not None:
        figures = []
        for line in text[start:]:
            if not line.startswith("- "):
                break
            figures.append(line)
        sections = [m.groups() for m in map(re.compile(r"^## (.+) \((\d+)\)$").match, text) if m]
        if sections:
            figures.append("- by category: " + "; ".join(f"{name} {n}" for name, n in sections))
    else:
        figures = [line for line in text if line.startswith("Totals of")][:1]
    if not figures:
        raise BlockError(f"{args[0]} holds no figures (no '- mutants:' bullets, no 'Totals of' line)")
    return (f"From [{args[0]}]({_link(root, page, args[0])}):\n\n" + "\n".join(figures))


RENDERERS: dict[str, Callable[[Path, Path, list[str]], str]] = {
    "operators": render_operators,
    "operator-list": render_operator_list,
    "requirements": render_requirements,
    "operator": render_operator,
    "openvino-layers": render_openvino_layers,
    "conform-rules": render_conform_rules,
    "comparison": render_comparison,
    "c-kernels": render_c_kernels,
    "standing": render_standing,
    "record-figures": render_record_figures,
}


# --- the files -----------------------------------------------------------------------------------

def render(root: Path, page: Path, head: str) -> str:
    name, *args = head.split()
    if name not in RENDERERS:
        raise BlockError(f"unknown block {name!r} (known: {', '.join(RENDERERS)})")
    return RENDERERS[name](root, page, args)


def regenerate(root: Path, page: Path, text: str) -> tuple[str, list[tuple[int, str]]]:
    """``text`` with every block regenerated, and the stale ones as (line, head)."""
    stale: list[tuple[int, str]] = []

    def one(m: re.Match) -> str:
        body = render(root, page, m.group("head")).rstrip("\n") + "\n"
        if body != m.group("body"):
            stale.append((text.count("\n", 0, m.start()) + 1, m.group("head")))
        return f"<!-- generated: {m.group('head')} -->\n{body}<!-- end generated -->"

    return BLOCK.sub(one, text), stale


def run(root: Path, check: bool, out=sys.stdout, err=sys.stderr) -> int:
    if str(root / "src") not in sys.path:
        sys.path.insert(0, str(root / "src"))
    found_stale = 0
    blocks = 0
    for page in documents(root):
        text = page.read_text(encoding="utf-8")
        if "<!-- generated:" not in text:
            continue
        try:
            new, stale = regenerate(root, page, text)
        except BlockError as e:
            print(f"tools/docs-tables: {page.relative_to(root)}: {e}", file=err)
            return 2
        blocks += len(BLOCK.findall(text))
        rel = page.relative_to(root).as_posix()
        for line, head in stale:
            found_stale += 1
            print(f"{rel}:{line}: block '{head}' is stale"
                  + (" (run tools/docs-tables)" if check else ": regenerated"), file=out)
        if stale and not check:
            page.write_text(new, encoding="utf-8")
    if check and found_stale:
        print(f"tools/docs-tables: {found_stale} stale block(s) of {blocks}", file=out)
        return 1
    print(f"tools/docs-tables: {blocks} block(s), {found_stale} "
          + ("stale" if check else "regenerated"), file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/docs-tables", allow_abbrev=False,
                                     description="Regenerate the generated blocks of the docs.")
    parser.add_argument("--check", action="store_true",
                        help="rewrite nothing; exit 1 naming each stale block")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    return run(ns.root.resolve(), ns.check)


if __name__ == "__main__":
    sys.exit(main())
