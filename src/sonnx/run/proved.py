"""The proved engine (``sonnx run --engine proved``, ``sonnx.Session(..., engine="proved")``):
every node runs on a C kernel extracted from a Why3 proof, or the model is refused.

The default engine runs numpy and llvmlite kernels whose link to the proofs is tests and
CrossHair. This one runs, for each node, the C entry point that ``tools/extract-c`` extracted
from the operator's proof (``Operator.c_binding``: the entry, its proof file, its WhyML module
and the requirement IDs of its goal), called through the operator's C wrapper (the same checks
and refusals as its Python kernel). A node is covered only when an entry point takes its element
type as it is: float32 by an ``_f32`` entry, int32 by an ``_i32`` one, and so on; or when the
record names a proved route to another type's entry (``CBinding.routes``: signed integers on the
unsigned kernel's bits, 8/16-bit integers through the 32-bit kernel, proofs/int_route.mlw), and
then the node's coverage cites both proofs. The wrappers' other routes are not proved and are
refused here, never run silently: float16/bfloat16 through float32, and every operator without
a C level (the structural ones, the pools, Div). A refusal names
the node, the type and what is covered, so that the user can run the default engine instead.

An operator whose C wrapper runs another operator's entry points says so in its binding
(``CBinding.via``: that operator's stem and the proof that the two agree, e.g. MatMul as Gemm
with alpha = 1 and no C, proofs/matmul.mlw): the node is covered by both proofs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..c_kernels import SUFFIX_TYPES     # the element type each entry-point suffix takes, as it is
from ..ops.registry import CEntry, CRoute, Operator, by_stem


class NotProved(Exception):
    """A node that no kernel extracted from a proof covers (the message says what is covered)."""


@dataclass(frozen=True)
class Coverage:
    """What runs a node under the proved engine: the C entry point and the proofs behind it."""
    entry: CEntry
    proofs: tuple[str, ...]          # the entry's proof, the refinement proof of a ``via``, a route's
    route: CRoute | None = None      # the element type runs on another type's entry this way

    def describe(self) -> dict:
        out = {"entry": self.entry.name, "proofs": list(self.proofs), "theory": self.entry.theory,
               "requirements": list(self.entry.ids)}
        if self.route is not None:
            out["route"] = {"theory": self.route.theory, "requirements": list(self.route.ids),
                            "bits_as_they_are": self.route.view}
        return out


def _routes(op: Operator) -> tuple[CRoute, ...]:
    return op.c_binding.routes if op.c_binding is not None else ()


def _entries(op: Operator) -> tuple[tuple[CEntry, ...], tuple[str, ...]]:
    binding = op.c_binding
    if binding is None:
        return (), ()
    if binding.via is not None:
        stem, refinement, _ = binding.via
        inner = by_stem(stem).c_binding
        return (inner.entries if inner else ()), (refinement,)
    return binding.entries, ()


def covered_types(op: Operator) -> list[str]:
    """The element types the proved engine runs ``op`` on (numpy names), in entry order."""
    entries, _ = _entries(op)
    return [*(SUFFIX_TYPES[e.name.rsplit("_", 1)[1]].name for e in entries
              if e.name.rsplit("_", 1)[1] in SUFFIX_TYPES),
            *(r.dtype for r in _routes(op))]


def coverage(op: Operator, dtype: np.dtype) -> Coverage:
    """The proved C entry point that runs ``op`` on ``dtype`` as it is; NotProved if none."""
    entries, extra = _entries(op)
    for e in entries:
        if SUFFIX_TYPES.get(e.name.rsplit("_", 1)[1]) == np.dtype(dtype):
            return Coverage(e, (e.proof, *extra))
    for r in _routes(op):
        if r.dtype == np.dtype(dtype).name:
            e = next(e for e in entries if e.name.rsplit("_", 1)[1] == r.suffix)
            return Coverage(e, (e.proof, *extra, r.proof), r)
    types = covered_types(op)
    if not types:
        raise NotProved(f"{op.name} has no kernel extracted from a proof (no C level yet)")
    raise NotProved(f"{op.name} on {np.dtype(dtype).name} is not covered by a kernel extracted "
                    f"from a proof (the proved C kernels take {', '.join(types)})")


def kernel(op: Operator, dtype: np.dtype, kwargs: dict, opset: int):
    """(the node's kernel on the proved C entry point, its Coverage); NotProved if none."""
    cov = coverage(op, dtype)
    from .. import c_kernels
    try:
        c_kernels.library()          # built (or found in the cache) now, not at the first call
    except c_kernels.CKernelsUnavailable as exc:
        raise NotProved(str(exc)) from None
    wrapper = op.c_binding.wrapper
    kw = {k: v for k, v in kwargs.items() if k != "mode"}     # the C kernels are exact mode

    def run(*args):
        return wrapper(*args, **kw, opset=opset)
    return run, cov
