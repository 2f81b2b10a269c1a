"""The proved engine (``sonnx run --engine proved``, ``sonnx.Session(..., engine="proved")``):
every node runs on a C kernel extracted from a Why3 proof, or the model is refused.

The default engine runs numpy and llvmlite kernels whose link to the proofs is tests and
CrossHair. This one runs, for each node, the C entry point that ``tools/extract-c`` extracted
from the operator's proof (``Operator.c_binding``: the entry, its proof file, its WhyML module
and the requirement IDs of its goal), called through the operator's C wrapper (the same checks
and refusals as its Python kernel). A node is covered only when an entry point takes its element
type as it is (float32 by an ``_f32`` entry, int32 by an ``_i32`` one, and so on), or when the
binding names a route for it (``CBinding.routes``: e.g. float16/bfloat16 through the float32 entry,
rounded once to T; signed and 8/16-bit integers on the unsigned kernels, proofs/int_route.mlw),
with the proof that the route computes T's semantics and the evidence, checked and not proved,
of the conversions it runs (none for the integer routes); the Coverage cites all three, labelled as
such. Every other route of the wrappers is refused here, never run silently, and so is every
operator without a C level (the structural ones, the pools, Div). A refusal names the node, the
type and what is covered, so that the user can run the default engine instead.

An operator whose C wrapper runs another operator's entry points says so in its binding
(``CBinding.via``: that operator's stem and the proof that the two agree, e.g. MatMul as Gemm
with alpha = 1 and no C, proofs/matmul.mlw): the node is covered by both proofs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dtypes
from ..c_kernels import SUFFIX_TYPES     # the element type each entry-point suffix takes, as it is
from ..ops.registry import CEntry, CRoute, Operator, by_stem


class NotProved(Exception):
    """A node that no kernel extracted from a proof covers (the message says what is covered)."""


@dataclass(frozen=True)
class Coverage:
    """What runs a node under the proved engine: the C entry point and the proofs behind it."""
    entry: CEntry
    proofs: tuple[str, ...]          # the entry's proof, the refinement proof of a ``via``, and
    #                                  the route proofs of a route
    route: CRoute | None = None      # the type runs through another type's entry

    def describe(self) -> dict:
        d = {"entry": self.entry.name, "proofs": list(self.proofs), "theory": self.entry.theory,
             "requirements": list(self.entry.ids)}
        if self.route is not None:
            # the conversions are checked by tests, not proved: said, never folded into "proofs"
            d["route"] = {"through": self.route.through, "proofs": list(self.route.proofs),
                          "checked_not_proved": list(self.route.checked)}
            if self.route.theory:
                d["route"].update(theory=self.route.theory, requirements=list(self.route.ids),
                                  bits_as_they_are=self.route.view)
        return d


def _routes(op: Operator) -> tuple[CRoute, ...]:
    binding = op.c_binding
    if binding is None:
        return ()
    if binding.via is not None and not binding.routes:
        # the wrapper runs the other operator's wrapper, routes included (MatMul on float16 is
        # Gemm's float16 route)
        inner = by_stem(binding.via[0]).c_binding
        return inner.routes if inner is not None else ()
    return binding.routes


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
    suffixes = {e.suffix for e in entries}
    direct = [SUFFIX_TYPES[e.suffix].name for e in entries if e.suffix in SUFFIX_TYPES]
    routed = [dtypes.numpy_dtype(t).name for r in _routes(op) if r.through in suffixes for t in r.types]
    return direct + routed


def coverage(op: Operator, dtype: np.dtype) -> Coverage:
    """The proved C entry point that runs ``op`` on ``dtype`` as it is; NotProved if none."""
    entries, extra = _entries(op)
    for e in entries:
        if SUFFIX_TYPES.get(e.suffix) == np.dtype(dtype):
            return Coverage(e, (e.proof, *extra))
    name = dtypes.name_of(np.dtype(dtype))
    for r in _routes(op):
        e = next((e for e in entries if e.suffix == r.through), None)   # entries: a via's too
        if name in r.types and e is not None:
            return Coverage(e, (e.proof, *extra, *r.proofs), r)
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
