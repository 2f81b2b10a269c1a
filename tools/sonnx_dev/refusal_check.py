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


# ---------------------------------------------------------------- whole signatures (constraints.mlw)
# Dimensions: static sizes, ONNX symbols, and the other unknowns the validator meets (None, "",
# OpenVINO's "?" and an interval); element types: the profile's, unknown, and two it refuses.
DIMS = (0, 1, 2, 3, 1, 2, "N", "M", None, "?", "1..4")
ELEMS = ("float", "double", "float16", "bfloat16", "int8", "uint8", "int16", "uint16", "int32",
         "int64", "uint32", "uint64", "bool", "string", None)
# alpha/beta values and what a binary32 FLOAT attribute makes of them (stated here, by hand, so
# that the check does not read the answer from the code it checks)
SCALES = ((1.0, "FOne"), (1, "FOne"), (2.0, "FF32"), (0.5, "FF32"), (float("nan"), "FF32"),
          (0.1, "FNotF32"), (True, "FNotF32"), ("2", "FNotF32"))
FLAGS = ((0, "(FInt 0)"), (1, "(FInt 1)"), (2, "(FInt 2)"), (-1, "(FInt (-1))"),
         (True, "(FBool true)"), (False, "(FBool false)"), (1.0, "FOther"), (None, "FOther"))


def elem_code(name: str | None) -> str:
    """An element type as the theories read it: its ONNX TensorProto code."""
    if name is None:
        return "NoElem"
    import onnx
    return f"(Elem {onnx.TensorProto.DataType.Value(name.upper())})"


class Terms:
    """WhyML terms of one case's signatures: a symbol is one number wherever its name appears,
    every other unknown dimension a number of its own (as sonnx.ops.symdims.Dims reads them)."""

    def __init__(self) -> None:
        self.symbols: dict[str, int] = {}
        self.fresh = 0

    def dim(self, d) -> str:
        from sonnx.ops import symdims
        if symdims.is_static(d):
            return f"(DStatic ({d}))"
        if symdims.is_symbol(d):
            return f"(DSym {self.symbols.setdefault(d, len(self.symbols))})"
        self.fresh += 1
        return f"(DUnknown {self.fresh})"

    def sig(self, shape, elem, sparse) -> str:
        if shape is None:
            sh = "NoRank"
        else:
            body = "DNil"
            for d in reversed([self.dim(d) for d in shape]):
                body = f"(DCons {d} {body})"
            sh = f"(Ranked {body})"
        return f"(Sig {sh} {elem_code(elem)} {'true' if sparse else 'false'})"


def codes(names) -> str:
    import onnx
    return ints(sorted(onnx.TensorProto.DataType.Value(n.upper()) for n in names))


def _rand_sig(rng: random.Random, like=None):
    """(shape, elem, sparse): often ``like`` with one thing changed, so that accepted
    signatures are common and each refusal is met alone as well as with others."""
    if like is not None and rng.random() < 0.7:
        shape, elem, sparse = like
        what = rng.randrange(5)
        if what == 1 and shape:
            i = rng.randrange(len(shape))
            shape = shape[:i] + (rng.choice(DIMS),) + shape[i + 1:]
        elif what == 2:
            elem = rng.choice(ELEMS)
        elif what == 3 and shape:
            shape = shape[rng.randrange(len(shape)):]
        return shape, elem, sparse or rng.random() < 0.03
    shape = None if rng.random() < 0.05 else tuple(rng.choice(DIMS) for _ in range(rng.randrange(5)))
    return shape, (rng.choice(ELEMS) if rng.random() < 0.4 else "float"), rng.random() < 0.05


def _version(op: str, opset: int) -> int:
    from sonnx.ops import registry
    return registry.since_version(op, opset) or 0


def _allowed(op: str, version: int) -> str:
    from sonnx.ops import registry
    return codes(registry.type_set(op, version)) if version else "Nil"


def full_elementwise_cases(limit: int) -> list[Case]:
    from sonnx.ops import elementwise, registry
    rng = random.Random(SEED + 2)
    ops = sorted(o.name for o in registry.operators().values() if o.kind == "elementwise")
    out = []
    for i in range(limit):
        op = ops[i % len(ops)]
        prefix = registry.operator(op).prefix
        opset = rng.choice((0, 1, 5, 6, 7, 12, 13, 14, 21))
        a = _rand_sig(rng)
        b = _rand_sig(rng, a)
        br = rng.choice((None,) * 6 + (0, 1, 2))
        ci = rng.choice((None,) * 8 + ([0, 1],))
        version = _version(op, opset)
        t = Terms()
        term = (f"constraints {version} {_allowed(op, version)} {t.sig(*a)} {t.sig(*b)} "
                f"{'Absent' if br is None else f'(Given {br})'} {'false' if ci is None else 'true'}")

        def python(op=op, prefix=prefix, a=a, b=b, opset=opset, br=br, ci=ci):
            return tuple(v.requirement for v in elementwise.constraints(
                op, prefix, _sig(*a), _sig(*b), opset=opset, broadcast=br, consumed_inputs=ci))
        out.append(Case(f"{op} opset {opset} A{a} B{b} broadcast={br} consumed_inputs={ci}", term, python))
    return out


def full_gemm_cases(limit: int) -> list[Case]:
    from sonnx.ops import gemm
    rng = random.Random(SEED + 3)
    out = []
    for _ in range(limit):
        opset = rng.choice((0, 1, 6, 7, 9, 11) + (13,) * 8 + (21,))
        m, k, n = (rng.choice(DIMS) for _ in range(3))
        ta, tav = rng.choice(FLAGS[:2] * 12 + FLAGS)
        tb, tbv = rng.choice(FLAGS[:2] * 12 + FLAGS)
        kb = k if rng.random() < 0.75 else rng.choice(DIMS)
        elem = rng.choice(ELEMS) if rng.random() < 0.3 else "float"
        a = ((k, m) if ta else (m, k), elem, False)
        b = ((n, kb) if tb else (kb, n), elem, False)
        if rng.random() < 0.2:
            a = _rand_sig(rng, a)
        if rng.random() < 0.2:
            b = _rand_sig(rng, b)
        c_shape = rng.choice([(m, n), (m, n), (n, m), (n,), (1, n), (m, 1), (), ("N", "N"),
                              tuple(rng.choice(DIMS) for _ in range(rng.randrange(4)))])
        c = None if rng.random() < 0.3 else _rand_sig(rng, (c_shape, elem, False))
        alpha, al = rng.choice(SCALES[:1] * 16 + SCALES)
        beta, be = rng.choice(SCALES[:1] * 16 + SCALES)
        br = rng.choice((None,) * 12 + (0, 1))
        version = _version("Gemm", opset)
        t = Terms()
        cterm = "NoCin" if c is None else f"(Cin {t.sig(*c)})"
        term = (f"constraints {version} {_allowed('Gemm', version)} {t.sig(*a)} {t.sig(*b)} {cterm} "
                f"{al} {be} {tav} {tbv} {'Absent' if br is None else f'(Given {br})'}")

        def python(a=a, b=b, c=c, opset=opset, alpha=alpha, beta=beta, ta=ta, tb=tb, br=br):
            return tuple(v.requirement for v in gemm.constraints(
                _sig(*a), _sig(*b), None if c is None else _sig(*c), opset=opset, alpha=alpha,
                beta=beta, trans_a=ta, trans_b=tb, broadcast=br))
        out.append(Case(f"Gemm opset {opset} A{a} B{b} C{c} alpha={alpha!r} beta={beta!r} "
                        f"transA={ta!r} transB={tb!r} broadcast={br}", term, python))
    return out


def full_relu_cases(limit: int) -> list[Case]:
    """Relu's constraints: one input, dense (RELU-R1), typed (RELU-R2), no consumed_inputs (R4)."""
    from sonnx.ops import relu
    rng = random.Random(SEED + 4)
    out = []
    for _ in range(limit):
        opset = rng.choice((0, 1, 5, 6, 13, 14, 21))
        x = _rand_sig(rng)
        ci = rng.choice((None,) * 6 + ([0],))
        version = _version("Relu", opset)
        term = (f"constraints {version} {_allowed('Relu', version)} {Terms().sig(*x)} "
                f"{'false' if ci is None else 'true'}")

        def python(x=x, opset=opset, ci=ci):
            return tuple(v.requirement for v in relu.constraints(_sig(*x), opset=opset, consumed_inputs=ci))
        out.append(Case(f"Relu opset {opset} X{x} consumed_inputs={ci}", term, python))
    return out


def full_matmul_cases(limit: int) -> list[Case]:
    """MatMul's constraints: matrices with agreeing or disagreeing inner dimensions, operands of
    rank 0, 1, 3 and 4 (batches equal, symbolic, of other lengths), sparse/unknown/other types."""
    from sonnx.ops import matmul
    rng = random.Random(SEED + 5)
    out = []
    for _ in range(limit):
        opset = rng.choice((0, 1, 9, 13, 13, 13, 21))
        m, k, n = (rng.choice(DIMS) for _ in range(3))
        kb = k if rng.random() < 0.75 else rng.choice(DIMS)
        elem = rng.choice(ELEMS) if rng.random() < 0.3 else "float"
        sa, sb = (m, k), (kb, n)
        r = rng.random()
        if r < 0.25:          # batched: the same batch, or another one, or of another length
            batch = tuple(rng.choice(DIMS) for _ in range(rng.randrange(1, 3)))
            other = rng.choice((batch, batch, batch[1:], tuple(rng.choice(DIMS) for _ in batch)))
            sa, sb = batch + sa, other + sb
        elif r < 0.35:        # a vector or a scalar
            sa, sb = rng.choice(((k,), sa, ())), rng.choice(((kb,), sb, ()))
        a, b = (sa, elem, False), (sb, elem, False)
        if rng.random() < 0.2:
            a = _rand_sig(rng, a)
        if rng.random() < 0.2:
            b = _rand_sig(rng, b)
        version = _version("MatMul", opset)
        t = Terms()
        term = f"constraints {version} {_allowed('MatMul', version)} {t.sig(*a)} {t.sig(*b)}"

        def python(a=a, b=b, opset=opset):
            return tuple(v.requirement for v in matmul.constraints(_sig(*a), _sig(*b), opset=opset))
        out.append(Case(f"MatMul opset {opset} A{a} B{b}", term, python))
    return out


# Flatten's axis values and how the model reads them: an integer (a bool is not one), or not
AXES = tuple((a, f"(AxInt ({a}))") for a in range(-6, 7)) + (
    (None, "AxNone"), (True, "AxOther"), (1.0, "AxOther"), ("1", "AxOther"))


def full_flatten_cases(limit: int) -> list[Case]:
    """Flatten's constraints: inputs of ranks 0-4 (unknown rank, sparse, every type), every axis
    from -6 to 6 (inside and outside [-r, r] and [0, r]), the axis missing or not an integer."""
    from sonnx.ops import flatten
    rng = random.Random(SEED + 6)
    out = []
    for _ in range(limit):
        opset = rng.choice((0, 1, 9, 11, 13, 21, 25))
        x = _rand_sig(rng)
        axis, at = rng.choice(AXES)
        version = _version("Flatten", opset)
        term = f"constraints {version} {_allowed('Flatten', version)} {Terms().sig(*x)} {at}"

        def python(x=x, opset=opset, axis=axis):
            return tuple(v.requirement for v in flatten.constraints(_sig(*x), opset=opset, axis=axis))
        out.append(Case(f"Flatten opset {opset} X{x} axis={axis!r}", term, python))
    return out


# Transpose's perm values that are not a list of integers, and how the model reads them (stated
# by hand: a bool is not an integer; a list, a tuple or a 1-D integer array of integers is one)
PERM_OTHERS = ((None, "PNone"), (1, "POther"), ("1 0", "POther"), ((0, True), "POther"),
               ([1.0, 0.0], "POther"), ([0, None], "POther"), ({0: 1}, "POther"))


def signed_ints(values: Iterable[int]) -> str:
    """A list of integers, negative ones too, as a [tensor.Shape.ints] term."""
    return ints(f"({int(a)})" for a in values)


def _perm_term(p) -> str:
    return f"(PInts {signed_ints(p)})"


def _perms(rng: random.Random, rank: int) -> tuple[object, str]:
    """A perm for an input of ``rank`` (any rank when it is unknown): a permutation of
    0..rank-1 (often), one with an entry changed (out of range, negative, repeated), one too
    short or too long, as a list, a tuple or an int64 array; or a value that is no list of ints."""
    import numpy as np
    r = rng.random()
    if r < 0.12:
        return rng.choice(PERM_OTHERS)
    p = list(range(rank))
    rng.shuffle(p)
    if r < 0.55:
        pass
    elif r < 0.75 and p:
        i = rng.randrange(len(p))
        p[i] = rng.choice((rank, rank + 1, -1, -rank, p[rng.randrange(len(p))]))
    elif r < 0.85:
        p = p[:-1] if p and rng.random() < 0.5 else p + [rng.choice((0, rank, -1))]
    else:
        p = [rng.randrange(-2, 5) for _ in range(rng.randrange(5))]
    form = rng.random()
    value = tuple(p) if form < 0.2 else np.array(p, dtype=np.int64) if form < 0.3 else p
    return value, _perm_term(p)


def full_transpose_cases(limit: int) -> list[Case]:
    """Transpose's constraints: inputs of ranks 0-4 (unknown rank, sparse, symbolic dimensions,
    every type), perms that are permutations of the rank or not (length, range, repeats), the
    perm missing or not a list of integers."""
    from sonnx.ops import transpose
    rng = random.Random(SEED + 7)
    out = []
    for _ in range(limit):
        opset = rng.choice((0, 1, 13, 13, 21, 25))
        x = _rand_sig(rng)
        rank = len(x[0]) if x[0] is not None else rng.randrange(5)
        perm, pt = _perms(rng, rank)
        version = _version("Transpose", opset)
        term = f"constraints {version} {_allowed('Transpose', version)} {Terms().sig(*x)} {pt}"

        def python(x=x, opset=opset, perm=perm):
            return tuple(v.requirement for v in transpose.constraints(_sig(*x), opset=opset, perm=perm))
        out.append(Case(f"Transpose opset {opset} X{x} perm={perm!r}", term, python))
    return out


# Squeeze/Unsqueeze axes that are not a non-empty tuple of integers, and how the model reads
# them (stated by hand: a list is not the tuple the validator passes; a bool is not an integer)
AXES_OTHERS = ((None, "AxsNone"), ((), "(AxsInts Nil)"), ([0], "AxsOther"), (0, "AxsOther"),
               ((0, True), "AxsOther"), ((1.0,), "AxsOther"), ("0", "AxsOther"))
# the axes input's signature (from version 13): (shape, element type) or None (no such input)
AXES_SIGS = (None,) * 8 + (((1,), "int64"), ((2,), "int64"), (("k",), "int64")) * 2 + (
    ((1,), "int32"), ((1, 1), "int64"), ((), "int64"), (None, "int64"), ((1,), None))


def _axes(rng: random.Random, out_rank: int, ones, count: int | None = None) -> tuple[object, str]:
    """Axes (``count`` of them, else any number) for a node whose positions ``ones`` may be
    named (Squeeze: the input's dimensions 1; Unsqueeze: every position of the output, of rank
    ``out_rank``), in [0, out_rank - 1] once normalised: valid ones,
    written negative, one out of range (by one), one named twice (or twice once normalised),
    one naming a dimension that is not 1; or a value of another form, or not constant."""
    from sonnx.ops.signature import NotConstant
    r = rng.random()
    if r < 0.1:
        return rng.choice(AXES_OTHERS)
    if r < 0.14:
        return NotConstant("a graph input"), "AxsNotConst"
    n = out_rank
    pool = list(ones) or list(range(max(n, 1)))
    a = rng.sample(pool, count or rng.randrange(1, len(pool) + 1))
    a = [k - n if n and rng.random() < 0.3 else k for k in a]
    r = rng.random()
    if r < 0.2:               # out by one at either end (most often), by two, or -1
        a[rng.randrange(len(a))] = rng.choice((n, n, -n - 1, -n - 1, n + 1, -1))
    elif r < 0.3:
        k = a[rng.randrange(len(a))]
        a.append(rng.choice((k, k - n if k >= 0 else k + n)))
    elif r < 0.4:
        a[rng.randrange(len(a))] = rng.randrange(max(n, 1))
    return tuple(a), f"(AxsInts {signed_ints(a)})"


def _axes_sig_term(t: Terms, s) -> str:
    return "NoAxesSig" if s is None else f"(AxesSig {t.sig(s[0], s[1], False)})"


def _squeeze_like_cases(op: str, seed: int, limit: int) -> list[Case]:
    from sonnx.ops import squeeze, unsqueeze
    from sonnx.ops.signature import NotConstant
    module = {"Squeeze": squeeze, "Unsqueeze": unsqueeze}[op]
    rng = random.Random(seed)
    out = []
    for _ in range(limit):
        opset = rng.choice((0, 1, 11, 13, 13, 21, 25))
        x = _rand_sig(rng)
        if x[0] is not None and rng.random() < 0.6:    # dimensions 1 to squeeze
            x = (tuple(1 if rng.random() < 0.5 else d for d in x[0]),) + x[1:]
        if op == "Unsqueeze" and x[0] is not None and rng.random() < 0.5:    # a static shape
            x = (tuple(d if isinstance(d, int) else 2 for d in x[0]),) + x[1:]
        shape = x[0] or ()
        if op == "Squeeze":
            n, count = len(shape), None
            ones = [k for k, d in enumerate(shape) if d == 1]
        else:
            count = rng.randrange(1, 4)
            n = len(shape) + count
            ones = list(range(n))
        axes, at = _axes(rng, n, ones, count)
        axes_sig = rng.choice(AXES_SIGS)
        attribute = rng.choice((None,) * 6 + ([0],))
        version = _version(op, opset)
        t = Terms()
        term = (f"constraints {version} {_allowed(op, version)} {t.sig(*x)} {at} "
                f"{_axes_sig_term(t, axes_sig)} {'false' if attribute is None else 'true'}")

        def python(x=x, opset=opset, axes=axes, axes_sig=axes_sig, attribute=attribute):
            return tuple(v.requirement for v in module.constraints(
                _sig(*x), opset=opset, axes=axes, axes_sig=None if axes_sig is None else _sig(*axes_sig),
                axes_attribute=attribute))
        shown = axes if not isinstance(axes, NotConstant) else "NotConstant"
        out.append(Case(f"{op} opset {opset} X{x} axes={shown!r} axes input {axes_sig} "
                        f"axes attribute={attribute}", term, python))
    return out


def full_squeeze_cases(limit: int) -> list[Case]:
    """Squeeze's constraints: inputs of ranks 0-4 with dimensions 1 (unknown rank, sparse,
    symbolic dimensions, every type), axes naming dimensions 1 or not, in range or one past,
    negative before and from version 11, repeated (also once normalised), empty, not a tuple of
    integers, not constant; from version 13 the axes input's signature and an axes attribute."""
    return _squeeze_like_cases("Squeeze", SEED + 8, limit)


def full_unsqueeze_cases(limit: int) -> list[Case]:
    """Unsqueeze's constraints: inputs of ranks 0-4 (unknown rank, sparse, symbolic dimensions,
    every type), 1-3 axes for the output's rank (the input's plus theirs), in range or one
    past, negative before and from version 11, repeated (also once normalised), empty, not a
    tuple of integers, not constant; from version 13 the axes input's signature and an axes
    attribute."""
    return _squeeze_like_cases("Unsqueeze", SEED + 9, limit)


# Reshape's allowzero values and how the model reads them: an integer (a bool is not one), or
# a value refused by every version (a bool, a float other than 0, a string)
ALLOWZEROS = ((None, "AzNone"),) * 4 + ((0, "(AzInt 0)"),) * 4 + (
    (1, "(AzInt 1)"), (1, "(AzInt 1)"), (2, "(AzInt 2)"), (-1, "(AzInt (-1))"),
    (True, "AzOther"), (False, "AzOther"), (1.0, "AzOther"), ("1", "AzOther"))
RESHAPE_OTHERS = ((None, "ShNone"), ([2, 3], "ShOther"), ((2, True), "ShOther"), ((1.0,), "ShOther"),
                  ("6", "ShOther"))


def _reshape_shape(rng: random.Random, dims) -> tuple[object, str]:
    """A shape operand for an input of dimensions ``dims``: one that resolves (the element count
    whole, split, the input's own, 0 entries copying, one -1), or one that does not (a factor too
    many, two -1, an entry below -1, a 0 past the input's rank, a -1 beside a 0 size); or a value
    of another form, or not constant."""
    from sonnx.ops.signature import NotConstant
    r = rng.random()
    if r < 0.08:
        return rng.choice(RESHAPE_OTHERS)
    if r < 0.12:
        return NotConstant("a graph input"), "ShNotConst"
    static = [d if isinstance(d, int) and not isinstance(d, bool) else 2 for d in (dims or ())]
    n = 1
    for d in static:
        n *= d
    kind = rng.randrange(10)
    if kind == 0:
        shape = [n]
    elif kind == 1:
        shape = list(static)
    elif kind == 2:
        shape = [0 if rng.random() < 0.5 else d for d in static] or [n]
    elif kind == 3:
        shape = list(static) + [1]
        shape[rng.randrange(len(shape))] = -1
    elif kind == 4:
        shape = [-1] if rng.random() < 0.5 else [-1, rng.choice((1, 2, 3))]
    elif kind == 5:
        shape = list(static) + [rng.choice((2, 3))]
    elif kind == 6:
        shape = [-1, -1] + static[2:]
    elif kind == 7:
        shape = list(static) + [rng.choice((-2, -3))]
    elif kind == 8:
        shape = list(static) + [0]
    else:
        shape = [rng.choice((0, 1, 2, 3, 4, 6, -1)) for _ in range(rng.randrange(4))]
    if kind in (0, 4, 9):
        rng.shuffle(shape)
    return tuple(shape), f"(ShInts {signed_ints(shape)})"


def full_reshape_cases(limit: int) -> list[Case]:
    """Reshape's constraints: inputs of ranks 0-4 (mostly static; unknown rank, sparse, symbolic
    dimensions, every type), shapes that resolve or not (every branch of ``resolve``), of
    another form, not constant; allowzero not written, 0, 1, other integers, not an integer,
    before and from version 14; the shape input's signature; consumed_inputs and a shape
    attribute."""
    from sonnx.ops import reshape
    from sonnx.ops.signature import NotConstant
    rng = random.Random(SEED + 10)
    out = []
    for _ in range(limit):
        opset = rng.choice((0, 1, 5, 13, 14, 14, 21, 25))
        x = _rand_sig(rng)
        if x[0] is not None and rng.random() < 0.7:        # a static shape
            x = (tuple(d if isinstance(d, int) else rng.choice((1, 2, 3)) for d in x[0]),) + x[1:]
        shape, st = _reshape_shape(rng, x[0])
        shape_sig = rng.choice(AXES_SIGS)
        allowzero, at = rng.choice(ALLOWZEROS)
        consumed = rng.choice((None,) * 10 + ([0],))
        attribute = rng.choice((None,) * 10 + ([1],))
        version = _version("Reshape", opset)
        t = Terms()
        term = (f"constraints {version} {_allowed('Reshape', version)} {t.sig(*x)} {st} "
                f"{_axes_sig_term(t, shape_sig)} {at} {'false' if consumed is None else 'true'} "
                f"{'false' if attribute is None else 'true'}")

        def python(x=x, opset=opset, shape=shape, shape_sig=shape_sig, allowzero=allowzero,
                   consumed=consumed, attribute=attribute):
            return tuple(v.requirement for v in reshape.constraints(
                _sig(*x), opset=opset, shape=shape, shape_sig=None if shape_sig is None else _sig(*shape_sig),
                allowzero=allowzero, consumed_inputs=consumed, shape_attribute=attribute))
        shown = shape if not isinstance(shape, NotConstant) else "NotConstant"
        out.append(Case(f"Reshape opset {opset} X{x} shape={shown!r} shape input {shape_sig} "
                        f"allowzero={allowzero!r} consumed_inputs={consumed} shape attribute={attribute}",
                        term, python))
    return out


# Pad's constant values before Pad-11 (the value attribute) and how the model reads them: a
# number, with whether it is NaN, a float32 value, held exactly by float16, by bfloat16 (stated
# here by hand, so that the check does not read the answer from the code it checks); or not a number
PAD_VALUES = ((None, "KNone"),) * 6 + (
    (0.0, "(KNum false true true true)"), (-0.0, "(KNum false true true true)"),
    (1.5, "(KNum false true true true)"), (2, "(KNum false true true true)"),
    (257.0, "(KNum false true true false)"), (70000.0, "(KNum false true false false)"),
    (0.1, "(KNum false false false false)"), (float("nan"), "(KNum true false false false)"),
    (True, "KOther"), ("1", "KOther"))
PAD_MODES = ((None, "MdNone"),) * 6 + (("constant", "MdConstant"), ("constant", "MdConstant"),
                                       (b"constant", "MdConstant"), ("edge", "MdOther"),
                                       ("reflect", "MdOther"), ("wrap", "MdOther"), ("Constant", "MdOther"))
PAD_MISPLACED = (((), "MNil"),) * 12 + ((("value",), "(MValue MNil)"), (("pads",), "(MPads MNil)"),
                                        (("paddings", "value"), "(MPads (MValue MNil))"))
PADS_OTHERS = ((None, "PdNone"), ([0, 0], "PdOther"), ((0, True), "PdOther"), ((1.0, 0.0), "PdOther"))


def _pad_list(rng: random.Random, n: int) -> list[int]:
    """2n pads: non-negative (most often), one negative, or of another length."""
    p = [rng.choice((0, 0, 1, 2)) for _ in range(2 * n)]
    r = rng.random()
    if r < 0.15 and p:
        p[rng.randrange(len(p))] = rng.choice((-1, -2))
    elif r < 0.3:
        p = p[:-1] if p and rng.random() < 0.5 else p + [rng.choice((0, 1))]
    return p


def full_pad_cases(limit: int) -> list[Case]:
    """Pad's constraints: inputs of ranks 0-4 (unknown rank, sparse, symbolic dimensions, every
    type), pads of 2n entries for the n padded axes or another length, negative ones, of another
    form, not constant, the pads input's signature; mode constant, not written, or another; the
    value attribute before Pad-11 (NaN, not a float32 value, not held by float16 or bfloat16, not
    a number), the constant_value input from 11 (not constant, its shape and type); the axes of
    Pad-18 (in range or one past, repeated once normalised, not constant, their signature) and
    before 18; attributes the version does not take."""
    from sonnx.ops import pad
    from sonnx.ops.signature import NotConstant
    rng = random.Random(SEED + 11)
    out = []
    for _ in range(limit):
        opset = rng.choice((0, 1, 2, 11, 13, 18, 18, 19, 21, 25))
        version = _version("Pad", opset)
        x = _rand_sig(rng)
        rank = len(x[0]) if x[0] is not None else 0
        # the axes (Pad-18 on) and the number of padded axes
        axes, at, n = None, "PaNone", rank
        r = rng.random()
        if r < 0.3 and rank:
            a = rng.sample(range(rank), rng.randrange(1, rank + 1))
            a = [k - rank if rng.random() < 0.3 else k for k in a]
            s = rng.random()
            if s < 0.15:
                a[rng.randrange(len(a))] = rng.choice((rank, -rank - 1))
            elif s < 0.25:
                a.append(a[0] - rank if a[0] >= 0 else a[0] + rank)
            axes, at, n = tuple(a), f"(PaInts {signed_ints(a)})", len(a)
        elif r < 0.34:
            axes, at = NotConstant("a graph input"), "PaNotConst"
        elif r < 0.38:
            axes, at = rng.choice((([0], "PaOther"), ((0, True), "PaOther")))
        axes_sig = rng.choice((None,) * 6 + (((1,), "int32"), ((1,), "int64"), ((1,), "float"),
                                             ((1, 1), "int64"), (None, "int64")))
        # the pads
        r = rng.random()
        if r < 0.06:
            pads, pt = rng.choice(PADS_OTHERS)
        elif r < 0.1:
            pads, pt = NotConstant("a graph input"), "PdNotConst"
        else:
            p = _pad_list(rng, n)
            pads, pt = tuple(p), f"(PdInts {signed_ints(p)})"
        pads_sig = rng.choice(AXES_SIGS) if version >= 11 else None
        # the constant
        if version and version < 11:
            constant, kt = rng.choice(PAD_VALUES)
            constant_sig = None
        else:
            constant, kt = rng.choice(((None, "KNone"),) * 3 + ((NotConstant("a graph input"), "KNotConst"),)
                                      + ((0.0, "(KNum false true true true)"),) * 6)
            elem = x[1]
            constant_sig = rng.choice((((), elem, False),) * 3 + (((1,), elem, False), ((2,), elem, False),
                                      ((), "int64", False), ((), None, False), ((), elem, True), None))
        mode, mt = rng.choice(PAD_MODES)
        misplaced, mis = rng.choice(PAD_MISPLACED)
        t = Terms()
        ps = _axes_sig_term(t, pads_sig)
        ks = "NoAxesSig" if constant_sig is None else f"(AxesSig {t.sig(*constant_sig)})"
        axs = _axes_sig_term(t, axes_sig)
        term = (f"constraints {version} {_allowed('Pad', version)} {t.sig(*x)} {pt} {ps} {kt} {ks} "
                f"{at} {axs} {mt} {mis}")

        def python(x=x, opset=opset, pads=pads, pads_sig=pads_sig, constant=constant,
                   constant_sig=constant_sig, axes=axes, axes_sig=axes_sig, mode=mode, misplaced=misplaced):
            return tuple(v.requirement for v in pad.constraints(
                _sig(*x), opset=opset, pads=pads, pads_sig=None if pads_sig is None else _sig(*pads_sig),
                constant=constant, constant_sig=None if constant_sig is None else _sig(*constant_sig),
                axes=axes, axes_sig=None if axes_sig is None else _sig(*axes_sig), mode=mode,
                misplaced=misplaced))
        shown = lambda v: "NotConstant" if isinstance(v, NotConstant) else repr(v)    # noqa: E731
        out.append(Case(f"Pad opset {opset} X{x} pads={shown(pads)} pads input {pads_sig} "
                        f"constant={shown(constant)} constant input {constant_sig} axes={shown(axes)} "
                        f"axes input {axes_sig} mode={mode!r} misplaced={misplaced}", term, python))
    return out

# BatchNormalization's attribute values and how the model reads them (stated by hand: a bool is
# not a number nor an integer; consumed_inputs a list or tuple of integers)
BN_FLOATS = ((None, "FaNone"), (1e-5, "FaNum"), (1e-5, "FaNum"), (1e-3, "FaNum"), (0, "FaNum"),
             (float("nan"), "FaNum"), (True, "FaOther"), ("1e-5", "FaOther"), ([1e-5], "FaOther"))
BN_CONSUMED = ((None, "CaNone"), ([0, 0], "CaInts"), ((), "CaInts"), ((1, 0, 1), "CaInts"),
               ([0, True], "CaOther"), ("00", "CaOther"), ([0.0], "CaOther"), (0, "CaOther"))
BN_INTS = ((None, "IaNone"), (1, "(IaInt 1)"), (0, "(IaInt 0)"), (2, "(IaInt 2)"), (-1, "(IaInt (-1))"),
           (True, "IaOther"), (False, "IaOther"), (1.0, "IaOther"), ("1", "IaOther"))


def _bn_attr(rng: random.Random, table, usual, p: float = 0.75):
    """``usual`` (a row of ``table``) with probability ``p``, else any row of ``table``."""
    return usual if rng.random() < p else rng.choice(table)


def full_batchnormalization_cases(limit: int) -> list[Case]:
    """BatchNormalization's constraints: X of ranks 0-5 (N, C, spatial; C static, symbolic or
    unknown; unknown rank, sparse, every type), the four parameters of shape (C) or another
    (their own types, sparse, unknown rank), four to six inputs; each attribute of the
    inference form or not, per version (epsilon, consumed_inputs, is_test, spatial,
    training_mode, momentum); parameters constant or not."""
    import numpy as np
    from sonnx.ops import batchnormalization as bn
    from sonnx.ops.signature import NotConstant
    rng = random.Random(SEED + 12)
    out = []
    for _ in range(limit):
        opset = rng.choice((0, 1, 6, 7, 9, 13, 14, 15, 21))
        version = _version("BatchNormalization", opset)
        elem = rng.choice(ELEMS) if rng.random() < 0.25 else rng.choice(("float", "float", "double", "float16", "bfloat16"))
        c = rng.choice((1, 2, 3, 3, 3, 4)) if rng.random() < 0.85 else rng.choice(DIMS)
        rank = rng.choice((2, 3, 4, 4, 5)) if rng.random() < 0.85 else rng.choice((0, 1))
        shape = ((rng.choice(DIMS), c) + tuple(rng.choice(DIMS) for _ in range(rank - 2)))[:rank]
        x = (shape, elem, False)
        if rng.random() < 0.15:
            x = _rand_sig(rng, x)
        params = []
        for _ in bn.PARAMETERS:
            p = ((c,), elem, False)
            r = rng.random()
            if r < 0.08:
                p = (rng.choice(((c, 1), (1,), (rng.choice(DIMS),), (), (c, c))), elem, False)
            elif r < 0.16:
                p = _rand_sig(rng, p)
            params.append(p)
        sigs = [x] + params
        r = rng.random()
        if r < 0.04:
            sigs = sigs[:rng.randrange(5)]
        elif r < 0.07:
            sigs = sigs + [((c,), elem, False)]
        attrs = {}
        eps, et = _bn_attr(rng, BN_FLOATS, BN_FLOATS[1], 0.85)
        ci, ct = _bn_attr(rng, BN_CONSUMED, BN_CONSUMED[1] if version == 1 else BN_CONSUMED[0], 0.85)
        it, itt = _bn_attr(rng, BN_INTS, BN_INTS[1] if version and version <= 6 else BN_INTS[0])
        sp, spt = _bn_attr(rng, BN_INTS, BN_INTS[rng.choice((0, 1))] if version and version <= 7 else BN_INTS[0])
        tm, tmt = _bn_attr(rng, BN_INTS, BN_INTS[rng.choice((0, 2))] if version >= 14 else BN_INTS[0])
        mo, mot = _bn_attr(rng, BN_FLOATS, rng.choice((BN_FLOATS[0], (0.9, "FaNum"))), 0.85)
        for name, value in (("epsilon", eps), ("consumed_inputs", ci), ("is_test", it), ("spatial", sp),
                            ("training_mode", tm), ("momentum", mo)):
            if value is not None:
                attrs[name] = value
        values, vt = {}, []
        for name in bn.PARAMETERS:
            r = rng.random()
            if r < 0.6:
                values[name] = np.zeros(1, dtype=np.float32)
                vt.append("false")
            elif r < 0.7:
                values[name] = NotConstant("a graph input")
                vt.append("true")
        vterm = "VNil"
        for b in reversed(vt):
            vterm = f"(VCons {b} {vterm})"
        t = Terms()
        lterm = "SNil"
        for s in reversed([t.sig(*s) for s in sigs]):
            lterm = f"(SCons {s} {lterm})"
        term = (f"constraints {version} {_allowed('BatchNormalization', version)} {lterm} "
                f"{et} {ct} {itt} {spt} {tmt} {mot} {vterm}")

        def python(sigs=sigs, opset=opset, attrs=attrs, values=values):
            return tuple(v.requirement for v in bn.constraints(
                [_sig(*s) for s in sigs], opset=opset, attrs=attrs, values=values))
        shown = {k: ("NotConstant" if isinstance(v, NotConstant) else "const") for k, v in values.items()}
        out.append(Case(f"BatchNormalization opset {opset} inputs {sigs} attrs {attrs!r} values {shown}",
                        term, python))
    return out


def full_globalaveragepool_cases(limit: int) -> list[Case]:
    """GlobalAveragePool's constraints: X of ranks 0-5 (unknown rank, sparse, symbolic
    dimensions, every type), before and from version 22 (bfloat16), with no attribute or with
    one to three of a pooling operator's attributes (it takes none)."""
    from sonnx.ops import globalaveragepool as gap
    rng = random.Random(SEED + 13)
    out = []
    names = ("kernel_shape", "pads", "strides", "auto_pad", "count_include_pad")
    for _ in range(limit):
        opset = rng.choice((0, 1, 13, 21, 22, 22))
        version = _version("GlobalAveragePool", opset)
        x = _rand_sig(rng)
        if x[0] is not None and rng.random() < 0.5:     # (N, C, spatial...)
            x = ((x[0] + tuple(rng.choice(DIMS) for _ in range(3)))[:rng.choice((3, 4, 5))],) + x[1:]
        if rng.random() < 0.2:
            x = (x[0], "bfloat16", x[2])
        attrs = {k: 1 for k in rng.sample(names, rng.randrange(1, 4))} if rng.random() < 0.2 else {}
        term = f"constraints {version} {_allowed('GlobalAveragePool', version)} {Terms().sig(*x)} {len(attrs)}"

        def python(x=x, opset=opset, attrs=attrs):
            return tuple(v.requirement for v in gap.constraints(_sig(*x), opset=opset, attrs=attrs))
        out.append(Case(f"GlobalAveragePool opset {opset} X{x} attrs {sorted(attrs)}", term, python))
    return out


# the pooling attributes' values and how the model reads them (stated by hand: an INTS attribute
# is a list, tuple or integer array of integers, a bool is not an integer; auto_pad NOTSET as
# text or bytes)
POOL_INTS_OTHERS = (("1", "WOther"), (3, "WOther"), ((1, True), "WOther"), ([1.0], "WOther"))
POOL_INT = ((None, "NNone"),) * 6 + ((0, "(NInt 0)"), (1, "(NInt 1)"), (2, "(NInt 2)"), (-1, "(NInt (-1))"),
                                     (True, "NOther"), (1.0, "NOther"), ("0", "NOther"))
POOL_AUTO_PADS = ((None, "ApNone"),) * 8 + (("NOTSET", "ApNotset"), (b"NOTSET", "ApNotset"),
                                            ("SAME_UPPER", "ApOther"), ("VALID", "ApOther"), (1, "ApOther"))


def _pool_ints(rng: random.Random, values: list[int], form: float) -> tuple[object, str]:
    import numpy as np
    value = tuple(values) if form < 0.3 else np.array(values, dtype=np.int64) if form < 0.4 else list(values)
    return value, f"(WInts {signed_ints(values)})"


def _pool_case(rng: random.Random, op: str, version: int, x, dilations_from: int):
    """(attrs, their model terms): a window for X's spatial axes (often fitting, pads that
    leave no window on padding only), or one changed: an attribute missing, not INTS, of the
    wrong length, an entry below its range, a window too long, pads larger than the kernel."""
    shape = x[0] or ()
    n = max(len(shape) - 2, 1) if rng.random() < 0.9 else rng.choice((0, 1, 2, 3))
    kernel = [rng.choice((1, 1, 2, 2, 3)) for _ in range(n)]
    strides = [rng.choice((1, 1, 2, 3)) for _ in range(n)]
    pads = [rng.choice((0, 0, 0, 1)) for _ in range(2 * n)]
    dil = [rng.choice((1, 1, 2)) for _ in range(n)]
    r = rng.random()
    if r < 0.06:
        kernel = kernel + [1]
    elif r < 0.1:
        pads = pads[:-1]
    elif r < 0.14 and n:
        kernel[rng.randrange(n)] = rng.choice((0, -1))
    elif r < 0.18 and n:
        strides[rng.randrange(n)] = 0
    elif r < 0.22 and pads:
        pads[rng.randrange(len(pads))] = rng.choice((-1, 3, 4))
    elif r < 0.28 and n:
        kernel[rng.randrange(n)] = rng.choice((4, 5, 6))
    elif r < 0.3:
        dil = []
    attrs, terms = {}, {}
    for name, vals in (("kernel_shape", kernel), ("strides", strides), ("pads", pads)):
        q = rng.random()
        if q < 0.04:
            value, t = None, "WNone"
        elif q < 0.08:
            value, t = rng.choice(POOL_INTS_OTHERS)
        else:
            value, t = _pool_ints(rng, vals, rng.random())
        if value is not None:
            attrs[name] = value
        terms[name] = t
    q = rng.random()
    if q < 0.2 if version >= dilations_from else q < 0.05:
        value, t = _pool_ints(rng, dil, rng.random()) if rng.random() < 0.85 else rng.choice(POOL_INTS_OTHERS)
        attrs["dilations"] = value
        terms["dilations"] = t
    else:
        terms["dilations"] = "WNone"
    value, terms["ceil_mode"] = rng.choice(POOL_INT) if rng.random() < 0.4 else (None, "NNone")
    if value is not None:
        attrs["ceil_mode"] = value
    value, terms["auto_pad"] = rng.choice(POOL_AUTO_PADS)
    if value is not None:
        attrs["auto_pad"] = value
    return attrs, terms


def _pool_cases(op: str, seed: int, limit: int, option: str, opsets: tuple, dilations_from: int) -> list[Case]:
    from sonnx.ops import averagepool, maxpool
    module = {"MaxPool": maxpool, "AveragePool": averagepool}[op]
    rng = random.Random(seed)
    out = []
    for _ in range(limit):
        opset = rng.choice(opsets)
        version = _version(op, opset)
        n = rng.choice((1, 1, 2, 2, 3))
        elem = rng.choice(ELEMS) if rng.random() < 0.2 else rng.choice(("float", "float", "double", "float16"))
        x = ((rng.choice((1, 2)), rng.choice((1, 3))) + tuple(rng.choice((1, 2, 3, 4, 5, 0)) for _ in range(n)),
             elem, False)
        if rng.random() < 0.2:
            x = _rand_sig(rng, x)
        attrs, terms = _pool_case(rng, op, version, x, dilations_from)
        value, oterm = rng.choice(POOL_INT) if rng.random() < 0.3 else (None, "NNone")
        if value is not None:
            attrs[option] = value
        term = (f"constraints {version} {_allowed(op, version)} {Terms().sig(*x)} {terms['kernel_shape']} "
                f"{terms['strides']} {terms['pads']} {terms['dilations']} {terms['ceil_mode']} "
                f"{terms['auto_pad']} {oterm}")

        def python(x=x, opset=opset, attrs=attrs):
            return tuple(v.requirement for v in module.constraints(_sig(*x), opset=opset, attrs=attrs)[0])
        out.append(Case(f"{op} opset {opset} X{x} attrs {attrs!r}", term, python))
    return out


def full_maxpool_cases(limit: int) -> list[Case]:
    """MaxPool's constraints: X (N, C, d1..dn) of 1-3 spatial axes (symbolic, unknown rank,
    sparse, every type), windows that fit or not (each shared window check), dilations and
    ceil_mode before and from MaxPool-10, auto_pad, storage_order before and from 8."""
    return _pool_cases("MaxPool", SEED + 14, limit, "storage_order", (0, 1, 8, 10, 11, 12, 22, 22), 10)


def full_averagepool_cases(limit: int) -> list[Case]:
    """AveragePool's constraints: as MaxPool's, with ceil_mode from AveragePool-10, dilations
    from 19, count_include_pad before and from 7."""
    return _pool_cases("AveragePool", SEED + 15, limit, "count_include_pad", (0, 1, 7, 10, 11, 19, 22, 22), 19)


# Conv's attributes as the model reads them (stated by hand: an INTS attribute is a list or a
# tuple of integers, bools excluded; an integer array is not one here, unlike the pooling
# operators'; group an integer, not a bool)
CONV_GROUP_OTHERS = ((None, "NNone"), (0, "(NInt 0)"), (-1, "(NInt (-1))"), (True, "NOther"), (1.0, "NOther"),
                     ("1", "NOther"))


def _conv_ints(rng: random.Random, values: list[int]) -> tuple[object, str]:
    import numpy as np
    q = rng.random()
    if q < 0.02:
        return None, "WNone"
    if q < 0.04:
        return rng.choice(POOL_INTS_OTHERS)     # Conv's INTS attributes read as the pools' do
    if q < 0.05:
        return np.array(values, dtype=np.int64), "WOther"
    return (tuple(values) if rng.random() < 0.5 else list(values)), f"(WInts {signed_ints(values)})"


def full_conv_cases(limit: int) -> list[Case]:
    """Conv's constraints: X (N, C, d1..dn) of 1-3 spatial axes and W (M, C/group, k...) that fit,
    or one thing changed: X or W mutated (symbolic or unknown dims, another rank, sparse, every
    type), group missing, not an integer, < 1, dividing neither C nor M; W's dimension 1 other
    than C/group; each INTS attribute missing, not a list (an int64 array too), of the wrong
    length, an entry below its range; kernel_shape other than W's; a kernel longer than the
    padded input; auto_pad; B absent, (M), another shape, symbolic, sparse, another type."""
    from sonnx.ops import conv
    rng = random.Random(SEED + 16)
    out = []
    for _ in range(limit):
        opset = rng.choice((0, 1, 10, 11, 13, 21, 22, 22))
        version = _version("Conv", opset)
        n = rng.choice((1, 1, 2, 2, 3))
        group = rng.choice((1, 1, 1, 2, 3))
        c, m = group * rng.choice((1, 2)), group * rng.choice((1, 2))
        elem = rng.choice(ELEMS) if rng.random() < 0.15 else rng.choice(("float", "float", "double", "float16"))
        kernel = [rng.choice((1, 1, 2, 3)) for _ in range(n)]
        xsh = (rng.choice((1, 2, "N")), c) + tuple(rng.choice((1, 2, 3, 4, 5, 0)) for _ in range(n))
        wsh = (m, c // group) + tuple(kernel)
        strides = [rng.choice((1, 1, 2, 3)) for _ in range(n)]
        pads = [rng.choice((0, 0, 0, 1, 2)) for _ in range(2 * n)]
        dil = [rng.choice((1, 1, 2)) for _ in range(n)]
        ks = list(kernel)
        r = rng.random()
        if r < 0.05:
            ks = ks + [1]
        elif r < 0.08:
            pads = pads[:-1]
        elif r < 0.11:
            dil = dil + [1]
        elif r < 0.14:
            strides = strides[:-1]
        elif r < 0.18:
            which = rng.choice((ks, strides, dil))
            which[rng.randrange(n)] = rng.choice((0, -1))
        elif r < 0.21:
            pads[rng.randrange(2 * n)] = -1
        elif r < 0.26:
            ks[rng.randrange(n)] += 1
        elif r < 0.32:
            k = rng.choice((4, 5, 6))
            i = rng.randrange(n)
            ks[i] = k
            wsh = wsh[:2 + i] + (k,) + wsh[3 + i:]
        elif r < 0.36:
            wsh = (wsh[0], wsh[1] + 1) + wsh[2:]
        elif r < 0.40:
            c2 = c + 1
            xsh = (xsh[0], c2) + xsh[2:]
        elif r < 0.43:
            wsh = (wsh[0] + 1,) + wsh[1:]
        elif r < 0.46:
            wsh = wsh[:-1] if len(wsh) > 3 else wsh + (1,)
        x = (xsh, elem, False)
        w = (wsh, elem, False)
        q = rng.random()
        if q < 0.12:
            x = _rand_sig(rng, x)
        elif q < 0.22:
            w = _rand_sig(rng, w)
        q = rng.random()
        b = None if q < 0.35 else ((m,), elem, False)
        if b is not None and rng.random() < 0.25:
            b = rng.choice(((( m + 1,), elem, False), ((m, 1), elem, False), (("M",), elem, False),
                            ((), elem, False), (None, elem, False), ((m,), elem, True), ((m,), "int32", False),
                            ((m,), None, False), ((0,), elem, False)))
        attrs, terms = {}, {}
        q = rng.random()
        if q < 0.06:
            gval, gterm = rng.choice(CONV_GROUP_OTHERS)
        elif q < 0.09:
            gval = rng.choice((2, 4))
            gterm = f"(NInt {gval})"
        else:
            gval, gterm = group, f"(NInt {group})"
        if gval is not None:
            attrs["group"] = gval
        for name, vals in (("kernel_shape", ks), ("strides", strides), ("dilations", dil), ("pads", pads)):
            value, terms[name] = _conv_ints(rng, vals)
            if value is not None:
                attrs[name] = value
        value, apterm = rng.choice(POOL_AUTO_PADS) if rng.random() < 0.5 else (None, "ApNone")
        if value is not None:
            attrs["auto_pad"] = value
        t = Terms()
        bterm = "NoB" if b is None else f"(SomeB {t.sig(*b)})"
        term = (f"constraints {version} {_allowed('Conv', version)} {t.sig(*x)} {t.sig(*w)} {bterm} {gterm} "
                f"{terms['kernel_shape']} {terms['strides']} {terms['dilations']} {terms['pads']} {apterm}")

        def python(x=x, w=w, b=b, opset=opset, attrs=attrs):
            return tuple(v.requirement for v in conv.constraints(_sig(*x), _sig(*w), None if b is None else _sig(*b),
                                                                 opset=opset, attrs=attrs))
        out.append(Case(f"Conv opset {opset} X{x} W{w} B{b} attrs {attrs!r}", term, python))
    return out


def corpus(limit: int) -> dict[str, list[Case]]:
    """Per theory: the cases. The element-wise theory is checked against each element-wise
    operator's constraint function (they share one, under their own IDs)."""
    from sonnx.ops import registry
    out: dict[str, list[Case]] = {"elementwise": [], "gemm_refusal": [],
                                  "constraints.Elementwise": full_elementwise_cases(limit),
                                  "constraints.Gemm": full_gemm_cases(limit),
                                  "constraints.Relu": full_relu_cases(limit // 2),
                                  "constraints.MatMul": full_matmul_cases(limit),
                                  "constraints.Flatten": full_flatten_cases(limit // 2),
                                  "constraints.Transpose": full_transpose_cases(limit),
                                  "constraints.Squeeze": full_squeeze_cases(limit),
                                  "constraints.Unsqueeze": full_unsqueeze_cases(limit),
                                  "constraints.Reshape": full_reshape_cases(limit),
                                  "constraints.Pad": full_pad_cases(limit),
                                  "constraints.BatchNormalization": full_batchnormalization_cases(limit),
                                  "constraints.GlobalAveragePool": full_globalaveragepool_cases(limit),
                                  "constraints.MaxPool": full_maxpool_cases(limit),
                                  "constraints.AveragePool": full_averagepool_cases(limit),
                                  "constraints.Conv": full_conv_cases(limit)}
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
# per theory: the modules the terms need, and the type of its verdict (name, empty, cons)
_FULL = ["tensor.Shape", "constraints.Sig", "constraints.Found", "constraints.ElementwiseConstraints"]
USES = {
    "elementwise": ["tensor.Shape", "elementwise.Refusal"],
    "gemm_refusal": ["tensor.Shape", "elementwise.Refusal", "gemm_refusal.GemmRefusal"],
    "constraints.Elementwise": _FULL,
    "constraints.Gemm": _FULL + ["constraints.GemmConstraints"],
    "constraints.Relu": ["tensor.Shape", "constraints.Sig", "constraints.Found", "constraints.ReluConstraints"],
    "constraints.MatMul": ["tensor.Shape", "constraints.Sig", "constraints.Found",
                           "constraints.MatMulConstraints"],
    "constraints.Flatten": ["tensor.Shape", "constraints.Sig", "constraints.Found",
                            "constraints.FlattenConstraints"],
    "constraints.Transpose": ["tensor.Shape", "constraints.Sig", "constraints.Found",
                              "constraints.TransposeConstraints"],
    "constraints.Squeeze": ["tensor.Shape", "constraints.Sig", "constraints.Found",
                            "constraints.AxesForm", "constraints.SqueezeConstraints"],
    "constraints.Unsqueeze": ["tensor.Shape", "constraints.Sig", "constraints.Found",
                              "constraints.AxesForm", "constraints.UnsqueezeConstraints"],
    "constraints.Reshape": ["tensor.Shape", "constraints.Sig", "constraints.Found",
                            "constraints.AxesForm", "constraints.ReshapeConstraints"],
    "constraints.Pad": ["tensor.Shape", "constraints.Sig", "constraints.Found",
                        "constraints.AxesForm", "constraints.PadConstraints"],
    "constraints.BatchNormalization": ["tensor.Shape", "constraints.Sig", "constraints.Found",
                                       "constraints.DenseTyped", "constraints.BatchNormalizationConstraints"],
    "constraints.GlobalAveragePool": ["tensor.Shape", "constraints.Sig", "constraints.Found",
                                      "constraints.GlobalAveragePoolConstraints"],
    "constraints.MaxPool": ["tensor.Shape", "constraints.Sig", "constraints.Found", "constraints.PoolAttrs",
                            "constraints.MaxPoolConstraints"],
    "constraints.AveragePool": ["tensor.Shape", "constraints.Sig", "constraints.Found", "constraints.PoolAttrs",
                                "constraints.AveragePoolConstraints"],
    "constraints.Conv": ["tensor.Shape", "constraints.Sig", "constraints.Found", "constraints.PoolAttrs",
                         "constraints.ConvConstraints"],
}
RESULT = {"elementwise": ("violations", "Clean", "Violation"),
          "gemm_refusal": ("violations", "Clean", "Violation"),
          "constraints.Elementwise": ("found", "FNil", "FCons"),
          "constraints.Gemm": ("found", "FNil", "FCons"),
          "constraints.Relu": ("found", "FNil", "FCons"),
          "constraints.MatMul": ("found", "FNil", "FCons"),
          "constraints.Flatten": ("found", "FNil", "FCons"),
          "constraints.Transpose": ("found", "FNil", "FCons"),
          "constraints.Squeeze": ("found", "FNil", "FCons"),
          "constraints.Unsqueeze": ("found", "FNil", "FCons"),
          "constraints.Reshape": ("found", "FNil", "FCons"),
          "constraints.Pad": ("found", "FNil", "FCons"),
          "constraints.BatchNormalization": ("found", "FNil", "FCons"),
          "constraints.GlobalAveragePool": ("found", "FNil", "FCons"),
          "constraints.MaxPool": ("found", "FNil", "FCons"),
          "constraints.AveragePool": ("found", "FNil", "FCons"),
          "constraints.Conv": ("found", "FNil", "FCons")}


CHUNK = 40    # terms per WhyML function: why3 execute's time grows faster than linearly in a term's depth


def batch_module(theory: str, terms: list[str]) -> str:
    """A module whose [batch ()] is the list of the theory's verdicts on ``terms`` (chunks of
    CHUNK terms, each in a function of its own, joined by [batch])."""
    uses = "\n".join(f"  use {m}" for m in USES[theory])
    funs, calls = [], "Last"
    chunks = [terms[i:i + CHUNK] for i in range(0, len(terms), CHUNK)]
    for i, chunk in enumerate(chunks):
        body = "Done"
        for t in reversed(chunk):
            body = f"More ({t})\n    ({body})"
        funs.append(f"  let function chunk{i} () : results =\n    {body}\n")
    for i in reversed(range(len(chunks))):
        calls = f"Chunk (chunk{i} ()) ({calls})"
    return (f"module Batch\n{uses}\n  type results = Done | More {RESULT[theory][0]} results\n"
            f"  type chunks = Last | Chunk results chunks\n" + "".join(funs) +
            f"  let function batch () : chunks = {calls}\nend\n")


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_']*|\S")


def parse_results(text: str, theory: str) -> list[tuple[str, ...]]:
    """The verdicts in ``why3 execute``'s answer ``result: chunks = Chunk (More ...) ...``: each a
    tuple of rule names (R1, R4, ...) in order, () for none."""
    _, empty, cons = RESULT[theory]
    m = re.search(r"result\s*:\s*chunks\s*=\s*(.*?)\n\s*globals", text, re.S | re.I)
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
        if t == empty:
            return ()
        if t != cons:
            raise RuntimeError(f"unexpected {t!r} in why3 execute's output")
        rule = take()
        return (rule,) + violations()

    out = []
    while (t := take()) == "Chunk":
        while (t := take()) == "More":
            out.append(violations())
        if t != "Done":
            raise RuntimeError(f"unexpected {t!r} in why3 execute's output")
    if t != "Last" or pos != len(toks):
        raise RuntimeError("why3 execute's output does not end with Last")
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
    return parse_results(run.stdout + run.stderr, theory)


# ---------------------------------------------------------------- the comparison
def theory_ids(theory: str, what: str, rules: tuple[str, ...]) -> tuple[str, ...]:
    """A theory's rule names as the Python's requirement IDs (the operator's prefix): the
    operator a "constraints.<Op>" theory is named after, else (the element-wise theories, shared
    by several operators) the operator the case names first."""
    from sonnx.ops import registry
    if theory == "gemm_refusal":
        return tuple(f"GEMM-{r}" for r in rules)
    op = theory.removeprefix("constraints.")
    if theory.startswith("constraints.") and op in registry.operators():
        prefix = registry.operators()[op].prefix
    else:
        prefix = registry.operator(what.split()[0]).prefix
    return tuple(f"{prefix}-{r}" for r in rules)


def check(proofs: Path = REPO / "proofs", limit: int = 400,
          only: list[str] | None = None) -> tuple[dict, list[str]]:
    """(per theory, how many cases each rule refused or were accepted; disagreements as lines)."""
    seen: dict[str, dict[str, int]] = {}
    bad: list[str] = []
    for theory, cases in corpus(limit).items():
        if only and theory not in only:
            continue
        counts = seen.setdefault(theory, {})
        got = why3_verdicts(theory, [c.term for c in cases], proofs)
        if len(got) != len(cases):
            raise RuntimeError(f"{theory}: {len(got)} verdicts for {len(cases)} cases")
        for case, rules in zip(cases, got):
            py, th = case.python(), theory_ids(theory, case.what, rules)
            for key in set(r.split("-")[-1] for r in py) or {"accepted"}:
                counts[key] = counts.get(key, 0) + 1
            counts["all"] = counts.get("all", 0) + 1
            if py != th:
                bad.append(f"{theory}: {case.what}: Python {list(py) or 'accepts'}, "
                           f"theory {list(th) or 'accepts'}")
    return seen, bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="refusal_check", description=__doc__.split("\n\n")[0])
    ap.add_argument("--proofs", type=Path, default=REPO / "proofs")
    ap.add_argument("--limit", type=int, default=400, help="cases per theory (default 400)")
    ap.add_argument("--only", action="append", choices=sorted(USES),
                    help="check this theory only (repeatable)")
    args = ap.parse_args(argv)
    try:
        seen, bad = check(args.proofs.resolve(), args.limit, args.only)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"refusal_check: {e}", file=sys.stderr)
        return 2
    for line in bad[:20]:
        print(line)
    for theory, counts in seen.items():
        shown = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k != "all")
        print(f"refusal_check: {theory}: {counts.get('all', 0)} signatures (per rule refusing: {shown})")
    print(f"refusal_check: {len(bad)} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
