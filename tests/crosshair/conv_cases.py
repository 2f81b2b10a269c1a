"""Harnesses of Conv (ops/conv.py): conv_reference against CONV-R6 in its "as Gemm" form, on
symbolic data drawn from a table of the values where the rule is easiest to get wrong (both
zeros, +-1, infinities, NaN; five of them where every path must be run): the result equals
Gemm's reference kernel (gemm_reference, whose fold proofs/gemm.mlw proves) of W reshaped to (M, C*K) by the patch matrix that the index map
of spec/conv.md selects (written here on its own: position o*s + k*d - pad_begin, +0.0
outside the input), with C = B[m] in every column. One output image (N = 1), so Gemm's (M, O)
result is Conv's (1, M, O) in the same flat order. The geometries put padding at the begin
only (asymmetric pads), with a stride and a dilation.

Witness: "never NaN" (false: an infinite weight times the padded +0.0 is NaN).
Mutant (mutants/conv_pads_end_first.py): the index map subtracts the end pad instead of the
begin pad (ONNX's pads list is [begins..., ends...]; reading it as pairs is a classic slip).
"""
from __future__ import annotations

import itertools
import math
from typing import Callable

import icontract

from sonnx.ops import conv as conv_op
from sonnx.ops import gemm as gemm_op
from sonnx.semantics.tensor import TensorValue, size

from .common import Case, Harness, Mutant, case_name, named, pick, unwrapped, within

TABLE = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan]
# the exhaustive cases draw from five of them (5^4 = 625 paths fit the budget; 7^4 did not):
# both zeros (the +0.0 start and padding), a finite value, an infinity (times the padding: NaN), NaN
SMALL = [0.0, -0.0, 1.0, -math.inf, math.nan]
GEOMETRIES = {   # tag -> (X shape, W shape, with B, attributes)
    "1d-pad-begin": ((1, 1, 2), (1, 1, 2), False,
                     dict(group=1, kernel_shape=(2,), pads=(1, 0), strides=(1,), dilations=(1,))),
    "1d-bias-stride-dilation": ((1, 1, 3), (1, 1, 2), True,
                                dict(group=1, kernel_shape=(2,), pads=(2, 0), strides=(2,), dilations=(2,))),
    "2d-channels": ((1, 2, 2, 1), (1, 2, 2, 1), False,
                    dict(group=1, kernel_shape=(2, 1), pads=(1, 0, 0, 0), strides=(1, 1), dilations=(1, 1))),
}


def as_gemm(x: TensorValue, w: TensorValue, b: TensorValue | None, group, kernel_shape, pads, strides,
            dilations) -> TensorValue:
    """CONV-R6's "as Gemm" statement for N = 1, group = 1: gemm_reference(W', P, C) with W' W's
    flat rows, P[(c, k), o] the value the index map reads (+0.0 in the padding), C[m, o] = B[m]."""
    r = len(kernel_shape)
    spatial = x.shape[2:]
    out = [(spatial[i] + pads[i] + pads[r + i] - dilations[i] * (kernel_shape[i] - 1) - 1) // strides[i] + 1
           for i in range(r)]
    c, m = x.shape[1], w.shape[0]
    outs = list(itertools.product(*map(range, out)))
    cols = []
    for ci in range(c):
        for k in itertools.product(*map(range, kernel_shape)):
            row = []
            for o in outs:
                p = [o[i] * strides[i] + k[i] * dilations[i] - pads[i] for i in range(r)]
                inside = all(0 <= p[i] < spatial[i] for i in range(r))
                flat = ci
                for i in range(r):
                    flat = flat * spatial[i] + (p[i] if inside else 0)
                row.append(x.data[flat] if inside else 0.0)
            cols.extend(row)
    kk = c * math.prod(kernel_shape)
    wp = TensorValue(w.dtype, (m, kk), list(w.data))
    pp = TensorValue(x.dtype, (kk, len(outs)), cols)
    cc = None if b is None else TensorValue(b.dtype, (m, len(outs)), [b.data[i] for i in range(m) for _ in outs])
    return gemm_op.gemm_reference(wp, pp, cc)


def _same(dtype: str, got: TensorValue, want: TensorValue) -> bool:
    ok = len(got.data) == len(want.data)
    for u, v in zip(got.data, want.data):
        ok = ok and ((u != u and v != v) or (u == v and math.copysign(1.0, u) == math.copysign(1.0, v)))
    return ok


def conv_case(dtype: str, tag: str, *, claim: str = "spec", budget: float = 8.0, exhaustive: bool = True) -> Case:
    table = SMALL if exhaustive else TABLE
    xs, ws, with_b, attrs = GEOMETRIES[tag]
    nx, nw = size(xs), size(ws)
    nb = ws[0] if with_b else 0
    n = nx + nw + nb

    def build() -> Callable:
        kernel = unwrapped(conv_op.conv_reference)

        def operands(ix):
            x = TensorValue(dtype, xs, [pick(table, i) for i in ix[:nx]])
            w = TensorValue(dtype, ws, [pick(table, i) for i in ix[nx:nx + nw]])
            b = TensorValue(dtype, (nb,), [pick(table, i) for i in ix[nx + nw:]]) if with_b else None
            return x, w, b

        if claim == "spec":
            def post(ix, result):
                x, w, b = operands(ix)
                want = as_gemm(x, w, b, **attrs)
                return _same(dtype, result, want)
        elif claim == "never NaN":
            def post(ix, result):
                return not any(v != v for v in result.data)
        else:
            raise ValueError(claim)

        @icontract.require(lambda ix: len(ix) == n)
        @icontract.require(lambda ix: within(ix, 0, len(table) - 1))
        @icontract.ensure(post)
        def harness(ix: tuple) -> TensorValue:
            x, w, b = operands(ix)
            return kernel(x, w, b, **attrs)
        return named(harness, f"conv_{dtype}_{tag}", ix=n)

    return Case(case_name(f"{dtype}.{tag}", claim), build, budget, exhaustive)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "conv-exact", ("CONV-R6",),
        cases=(conv_case("float", "1d-pad-begin"), conv_case("double", "1d-pad-begin"),
               conv_case("float", "1d-bias-stride-dilation", budget=20.0, exhaustive=False),
               conv_case("float16", "2d-channels", budget=20.0, exhaustive=False)),
        witnesses=(conv_case("float", "1d-pad-begin", claim="never NaN", exhaustive=False),),
        what="conv_reference on zeros of both signs, +-1, infinities and NaN, with begin-only padding, "
             "a stride, a dilation, a bias and two channels: every element is gemm_reference's fold of "
             "W's row by the patch the index map selects, then + B[m]"),
)


def _mutant(name: str, requirements: tuple[str, ...], targets: tuple[str, ...], known_bug: tuple[str, tuple]) -> Mutant:
    return Mutant(name, f"tests.crosshair.mutants.{name}", requirements, targets, known_bug)


MUTANTS: tuple[Mutant, ...] = (
    # X = (1, -inf), W = (1, 1) (SMALL's 2, 3, 2, 2): Y[0] is pad*1 + 1*1 = 1; the mutant (no begin pad) reads 1 - inf
    _mutant("conv_pads_end_first", ("CONV-R6",), ("conv-exact/float.1d-pad-begin",),
            ("conv-exact/float.1d-pad-begin", ((2, 3, 2, 2),))),
)
