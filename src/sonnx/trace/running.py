"""What runs for each requirement, and what checks it (issue 32): the trace's "Running code".

The default engine (``sonnx run``, ``sonnx.<op>``, ``sonnx.Session``) runs numpy and llvmlite
kernels that are tested and CrossHair-checked against the proofs, not proved, except where an
operator's record makes its proved C entry points the default (``CBinding.default``: on the
element types the entry points take as they are, and where a size rule bounds some of them,
``CBinding.sizes``, on those sizes only: the row says so, with the rule); the proved engine
(``sonnx run --engine proved``) and ``sonnx.c_kernels`` run the C entry points extracted from the
proofs. A row's proved entry points are those whose goal names the requirement (each record's
``c_binding``: ``CEntry.ids``), and for an operator that runs another's entry points
(``CBinding.via``), those entry points for the IDs its refinement proof covers. A route
(``CBinding.routes``: e.g. float16/bfloat16 through the float32 entry) is listed as
``name for T1, T2 (entry proof + route proofs; checked: tests)``: the route is proved, the
conversions it runs are checked by those tests, not proved.
"""
from __future__ import annotations

from ..ops.registry import by_stem, operators


def proved_entries() -> dict[str, list[str]]:
    """Requirement ID -> the C entry points extracted from a proof that implement it, each as
    ``name (proof files)``, in registry order."""
    out: dict[str, list[str]] = {}
    for op in operators().values():
        b = op.c_binding
        if b is None:
            continue
        for e in b.entries:
            for rid in e.ids:
                out.setdefault(rid, []).append(f"{e.name} ({e.proof})")
        for rid, text in _routed(b, view_only=False):
            out.setdefault(rid, []).append(text)
        if b.via is not None:
            stem, refinement, ids = b.via
            inner = by_stem(stem).c_binding
            for rid in ids:
                out.setdefault(rid, []).extend(f"{e.name} ({e.proof} + {refinement})"
                                               for e in (inner.entries if inner else ()))
    return out


SIZED = " only where "      # an entry point the default engine runs on some sizes only


def _sized(b, e) -> str:
    """`` only where RULE, OTHER otherwise`` when the binding's size rule bounds the sizes at
    which the default kernel runs entry ``e`` (CBinding.sizes), else ""."""
    rule = b.size_rule(e.suffix)
    return "" if rule is None else f"{SIZED}{rule.text}, {rule.otherwise} otherwise"


def default_entries() -> dict[str, list[str]]:
    """Requirement ID -> the C entry points extracted from a proof that the default engine runs
    for it (a record whose binding is the default one, ``CBinding.default``: its operator's
    default kernel runs them on the element types they take as they are; those a size rule
    bounds, ``CBinding.sizes``, followed by `` only where`` the rule and what runs otherwise), as
    proved_entries; an operator whose kernel is another's (``CBinding.via``: MatMul's is Gemm's)
    lists that one's default entry points for the IDs its refinement proof covers."""
    out: dict[str, list[str]] = {}
    ops = operators()
    for op in ops.values():
        b = op.c_binding
        if b is not None and b.default:
            for e in b.entries:
                if not b.runs_by_default(e.suffix):
                    continue
                for rid in e.ids:
                    out.setdefault(rid, []).append(f"{e.name} ({e.proof}){_sized(b, e)}")
            for rid, text in _routed(b, view_only=True):
                out.setdefault(rid, []).append(text)
        if b is not None and b.via is not None:
            stem, refinement, ids = b.via
            inner = next((o.c_binding for o in ops.values() if o.stem == stem), None)
            if inner is None or not inner.default:
                continue
            for rid in ids:
                out.setdefault(rid, []).extend(f"{e.name} ({e.proof} + {refinement}){_sized(inner, e)}"
                                               for e in inner.entries if inner.runs_by_default(e.suffix))
    return out


def _routed(b, view_only: bool) -> list[tuple[str, str]]:
    """(requirement ID, ``entry for T1, T2 (entry proof + route proofs[; checked: tests])``) of
    the binding's routes (CBinding.routes): the IDs of the entry's goal (those of the route's
    lemmas too, when it names them); ``view_only``: the routes the default kernel runs too (the
    bits passed as they are)."""
    out = []
    for r in b.routes:
        e = b.entry(r.through)
        if e is None or (view_only and not (r.view and b.runs_by_default(e.suffix))):
            continue
        checked = f"; checked: {', '.join(r.checked)}" if r.checked else ""
        for rid in (sorted(set(e.ids) & set(r.ids)) if r.ids else e.ids):
            out.append((rid, f"{e.name} for {', '.join(r.types)} ({' + '.join((e.proof, *r.proofs))}{checked})"))
    return out


def running(own_tests: bool, harnesses: bool, entries: list[str], default: list[str] = ()) -> dict:
    """The row's running code: how the default engine's code is checked, the proved entry points
    the default engine runs for some element types (``default``), and those the proved engine
    runs."""
    checks = [w for w, has in (("tested", own_tests), ("CrossHair-checked", harnesses)) if has]
    return {"default_engine": checks or ["not checked"], "default_proved": list(default),
            "proved_engine": list(entries)}


def cell(r: dict) -> str:
    """One line for the reports."""
    d = len(r.get("default_proved", ()))
    text = "default: " + ", ".join(r["default_engine"])
    if d:
        # the entry points a size rule bounds, counted apart with the rule (never claimed for
        # every size)
        rules = [e.split(SIZED, 1)[1] for e in r["default_proved"] if SIZED in e]
        sized = "".join(f"; {rules.count(x)} of them only where {x}" for x in dict.fromkeys(rules))
        text = (f"default: {d} proved C entry point{'s' if d > 1 else ''} (their types{sized}), "
                f"other types {', '.join(r['default_engine'])}")
    routes = sum(" for " in e for e in r["proved_engine"])     # proved_entries' route rows
    n = len(r["proved_engine"]) - routes
    checked = any(" for " in e and "; checked: " in e for e in r["proved_engine"])
    via = (f" (+{routes} route{'s' if routes > 1 else ''} to other types"
           f"{', conversions checked' if checked else ''})" if routes else "")
    return text + (f"; --engine proved: {n} proved C entry point{'s' if n > 1 else ''}{via}" if n else
                   "; not proved code")
