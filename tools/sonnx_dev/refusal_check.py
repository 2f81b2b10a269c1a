"""The refusal theories against the constraint functions that run (issue 32): a differential check.

proofs/elementwise.mlw (module ``Refusal``) and proofs/gemm_refusal.mlw write the shape checks of
the Python ``constraints`` functions as WhyML programs (``let function``), and prove facts about
those programs. Nothing in the proofs ties them to the Python: this check does. It generates a
deterministic corpus of signatures, runs the theories' decision functions on it with
``why3 execute`` (Why3's interpreter of WhyML programs; the whole corpus of one theory is one
closed term, so one Why3 call per theory), runs the Python ``constraints`` on the same corpus,
and compares the verdicts: accepted, or the list of requirement IDs refused, in order. A change to
one side without the other makes some signature disagree.

    python -m sonnx_dev.refusal_check [--proofs DIR] [--limit N]    # exit 1 on a disagreement

Run it with the sources to check on PYTHONPATH (src/ and tools/). ``--proofs`` names the folder
of theories (default: the repository's proofs/).
"""
from __future__ import annotations

import argparse
import itertools
import random
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

REPO = Path(__file__).resolve().parents[2]
SEED = 32              # the corpus is a function of this seed: the check is deterministic
HANG_GUARD_S = 300     # a whole `why3 execute`: only a guard against a hang, never a verdict


# ---------------------------------------------------------------- the corpus
@dataclass(frozen=True)
class Case:
    """One signature: the WhyML term of the theory's decision, and the Python call's verdict."""
    what: str                      # readable, for the report
    term: str                      # WhyML expression of type [violations]
    python: Callable[[], tuple[str, ...]]


def ints(shape: Iterable[int]) -> str:
    """A static shape as a [tensor.Shape.ints] term."""
    out = "Nil"
    for d in reversed(tuple(shape)):
        out = f"(Cons {d} {out})"
    return out


def _shapes(rng: random.Random, rank: int, dims=(0, 1, 2, 3)) -> tuple[int, ...]:
    return tuple(rng.choice(dims) for _ in range(rank))


def elementwise_pairs(limit: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Pairs of static shapes of ranks 0-4, dims 0-3: equal pairs, pairs one dimension apart,
    pairs a prefix apart (broadcastable), and random pairs."""
    rng = random.Random(SEED)
    out = []
    for rank in range(5):
        for _ in range(limit // 25 + 1):
            s = _shapes(rng, rank)
            out.append((s, s))
            if rank:
                i = rng.randrange(rank)
                t = s[:i] + (rng.choice((0, 1, 2, 3, 4)),) + s[i + 1:]
                out.append((s, t) if rng.random() < 0.5 else (t, s))
                out.append((s[rng.randrange(rank):], s))
            out.append((s, _shapes(rng, rng.randrange(5))))
    return out[:limit]


def gemm_cases(limit: int) -> list[tuple[tuple, tuple, tuple | None, int, int]]:
    """(A, B, C or None, transA, transB): mostly matrices with agreeing or disagreeing inner
    dimensions, C among the shapes a bias is given ((M, N), (N, M), (N), (1, N), (M, 1), the
    scalar, random), and operands of other ranks."""
    rng = random.Random(SEED + 1)
    out = []
    while len(out) < limit:
        ta, tb = rng.randrange(2), rng.randrange(2)
        m, k, n = (rng.choice((0, 1, 2, 3)) for _ in range(3))
        kb = k if rng.random() < 0.8 else rng.choice((0, 1, 2, 3))
        a = (k, m) if ta else (m, k)
        b = (n, kb) if tb else (kb, n)
        if rng.random() < 0.15:
            a = _shapes(rng, rng.choice((0, 1, 3, 4)))
        if rng.random() < 0.15:
            b = _shapes(rng, rng.choice((0, 1, 3, 4)))
        c = rng.choice([None, (m, n), (m, n), (n, m), (n,), (1, n), (m, 1), (),
                        _shapes(rng, rng.randrange(4))])
        out.append((a, b, c, ta, tb))
    return out


# ---------------------------------------------------------------- the Python side
def _sig(shape, elem="float", sparse=False):
    from sonnx.ops.signature import TensorSig
    return TensorSig(shape=None if shape is None else tuple(shape), elem_type=elem, sparse=sparse)


def _rules(found, keep: set[str]) -> tuple[str, ...]:
    return tuple(v.requirement for v in found if v.requirement in keep)


def python_elementwise(op: str, prefix: str, a, b) -> tuple[str, ...]:
    """The shape rules (R1, R4) of ``constraints`` for dense float inputs at the latest opset."""
    from sonnx.ops import elementwise, registry
    latest = max(registry.operator(op).type_sets)
    found = elementwise.constraints(op, prefix, _sig(a), _sig(b), opset=latest)
    return _rules(found, {f"{prefix}-R1", f"{prefix}-R4"})


def python_gemm(a, b, c, ta, tb) -> tuple[str, ...]:
    """The shape rules (GEMM-R1, GEMM-R4) of Gemm's ``constraints``, dense float inputs, opset 13."""
    from sonnx.ops import gemm
    found = gemm.constraints(_sig(a), _sig(b), None if c is None else _sig(c), opset=13,
                             trans_a=ta, trans_b=tb)
    return _rules(found, {"GEMM-R1", "GEMM-R4"})


def corpus(limit: int) -> dict[str, list[Case]]:
    """Per theory: the cases. The element-wise theory is checked against each element-wise
    operator's constraint function (they share one, under their own IDs)."""
    from sonnx.ops import registry
    out: dict[str, list[Case]] = {"elementwise": [], "gemm_refusal": []}
    ew_ops = sorted(o.name for o in registry.operators().values() if o.kind == "elementwise")
    for (a, b), op in zip(elementwise_pairs(limit), itertools.cycle(ew_ops)):
        prefix = registry.operator(op).prefix
        out["elementwise"].append(Case(
            f"{op} A{a} B{b}", f"shape_violations {ints(a)} {ints(b)}",
            lambda op=op, prefix=prefix, a=a, b=b: python_elementwise(op, prefix, a, b)))
    for a, b, c, ta, tb in gemm_cases(limit):
        cterm = "NoC" if c is None else f"(SomeC {ints(c)})"
        tf = {0: "false", 1: "true"}
        out["gemm_refusal"].append(Case(
            f"Gemm A{a} B{b} C{c} transA={ta} transB={tb}",
            f"gemm_shape_violations {ints(a)} {ints(b)} {cterm} {tf[ta]} {tf[tb]}",
            lambda a=a, b=b, c=c, ta=ta, tb=tb: python_gemm(a, b, c, ta, tb)))
    return out


# ---------------------------------------------------------------- the Why3 side
# per theory: the modules the terms need, and how a theory rule reads as a requirement ID
USES = {
    "elementwise": ["tensor.Shape", "elementwise.Refusal"],
    "gemm_refusal": ["tensor.Shape", "elementwise.Refusal", "gemm_refusal.GemmRefusal"],
}


def batch_module(theory: str, terms: list[str]) -> str:
    """A module whose [batch ()] is the list of the theory's verdicts on ``terms``."""
    uses = "\n".join(f"  use {m}" for m in USES[theory])
    body = "Done"
    for t in reversed(terms):
        body = f"More ({t})\n    ({body})"
    return (f"module Batch\n{uses}\n  type results = Done | More violations results\n"
            f"  let function batch () : results =\n    {body}\nend\n")


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_']*|\S")


def parse_results(text: str) -> list[tuple[str, ...]]:
    """The verdicts in ``why3 execute``'s answer ``result: results = More (...) (...)``: each a
    tuple of rule names (R1, R4) in order, () for Clean."""
    m = re.search(r"result\s*:\s*results\s*=\s*(.*?)\n\s*globals", text, re.S | re.I)
    if not m:
        raise RuntimeError(f"no result in why3 execute's output:\n{text[-2000:]}")
    toks = [t for t in _TOKEN.findall(m.group(1)) if t not in "()"]
    pos = 0

    def take() -> str:
        nonlocal pos
        pos += 1
        return toks[pos - 1]

    def violations() -> tuple[str, ...]:
        t = take()
        if t == "Clean":
            return ()
        if t != "Violation":
            raise RuntimeError(f"unexpected {t!r} in why3 execute's output")
        rule = take()
        return (rule,) + violations()

    out = []
    while (t := take()) == "More":
        out.append(violations())
    if t != "Done" or pos != len(toks):
        raise RuntimeError("why3 execute's output does not end with Done")
    return out


def why3_verdicts(theory: str, terms: list[str], proofs: Path) -> list[tuple[str, ...]]:
    if shutil.which("why3") is None:
        raise RuntimeError("why3 not found on PATH: install why3 1.5.1 (tools/setup)")
    with tempfile.TemporaryDirectory(prefix="refusal-check-") as tmp:
        f = Path(tmp) / "batch.mlw"
        f.write_text(batch_module(theory, terms))
        run = subprocess.run(["why3", "-C", str(proofs / "why3.conf"), "execute", "-L", str(proofs),
                              "-L", str(proofs / "lib"), str(f), "--use=Batch", "batch ()"],
                             capture_output=True, text=True, timeout=HANG_GUARD_S)
    if run.returncode != 0 and "result" not in run.stdout.lower():
        raise RuntimeError(f"why3 execute failed ({run.returncode}):\n{run.stdout[-1500:]}{run.stderr[-1500:]}")
    return parse_results(run.stdout + run.stderr)


# ---------------------------------------------------------------- the comparison
def theory_ids(theory: str, what: str, rules: tuple[str, ...]) -> tuple[str, ...]:
    """A theory's rule names as the Python's requirement IDs (the operator's prefix)."""
    if theory == "gemm_refusal":
        return tuple(f"GEMM-{r}" for r in rules)
    from sonnx.ops import registry
    prefix = registry.operator(what.split()[0]).prefix
    return tuple(f"{prefix}-{r}" for r in rules)


def check(proofs: Path = REPO / "proofs", limit: int = 400) -> tuple[dict, list[str]]:
    """(per theory, how many cases got each Python verdict; disagreements as lines)."""
    seen: dict[str, dict[str, int]] = {}
    bad: list[str] = []
    for theory, cases in corpus(limit).items():
        counts = seen.setdefault(theory, {})
        got = why3_verdicts(theory, [c.term for c in cases], proofs)
        if len(got) != len(cases):
            raise RuntimeError(f"{theory}: {len(got)} verdicts for {len(cases)} cases")
        for case, rules in zip(cases, got):
            py, th = case.python(), theory_ids(theory, case.what, rules)
            key = "+".join(r.split("-")[-1] for r in py) or "accept"
            counts[key] = counts.get(key, 0) + 1
            if py != th:
                bad.append(f"{theory}: {case.what}: Python {list(py) or 'accepts'}, "
                           f"theory {list(th) or 'accepts'}")
    return seen, bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="refusal_check", description=__doc__.split("\n\n")[0])
    ap.add_argument("--proofs", type=Path, default=REPO / "proofs")
    ap.add_argument("--limit", type=int, default=400, help="cases per theory (default 400)")
    args = ap.parse_args(argv)
    try:
        seen, bad = check(args.proofs.resolve(), args.limit)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"refusal_check: {e}", file=sys.stderr)
        return 2
    for line in bad[:20]:
        print(line)
    for theory, counts in seen.items():
        shown = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        print(f"refusal_check: {theory}: {sum(counts.values())} signatures ({shown})")
    print(f"refusal_check: {len(bad)} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
