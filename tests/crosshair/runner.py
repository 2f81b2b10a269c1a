"""Run CrossHair on one harness, one harness's witnesses, or one mutant, in this process.

    python -m tests.crosshair.runner harness mul-signed
    python -m tests.crosshair.runner witnesses mul-signed
    python -m tests.crosshair.runner mutant wrap_edge

Prints one JSON object (the last line of stdout) with, per case: CrossHair's verdict, the
iterations it ran (and its iteration cap), how many of them evaluated the spec (the postcondition), how many of those
confirmed it, whether the path tree was exhausted, CPU seconds, and every counterexample with
the concrete arguments CrossHair realized for it (replayed later by campaign.py, in a process
that never imported CrossHair).

Budgets are counts, not clocks, so a case gives the same verdict on an idle or a loaded
machine: each case runs at most ``iteration_cap(case)`` paths (CrossHair's max_iterations),
and every solver query at most SMT_RLIMIT units of Z3 work (z3 ``rlimit``, via CrossHair's
CROSSHAIR_SMT_RLIMIT) instead of a wall-clock solver timeout. CPU and wall clock remain only as
hang guards (HANG_FACTOR times the case's nominal seconds, per case and per path): a case that
runs into one is reported as "hang guard hit", never as a verdict.

Two things CrossHair does by default would make its silence worthless here, and are undone:
- it turns icontract's run-time checks off and enforces nested contracts itself, IGNORING a
  path where a called function's postcondition fails ("surfaced more locally"): a kernel
  helper with a wrong result would be dropped silently. Here icontract's own checks are put
  back and CrossHair's nested enforcement is off, so a nested violation raises
  icontract.ViolationError (or the contract's own error, e.g. ProfileViolation), as it does
  at run time, and is reported;
- its counterexample text is only text: the realized arguments are captured as values.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import os
import sys
import time

os.environ["SONNX_CONTRACTS"] = "full"      # before sonnx is imported: attach every contract
from .campaign import HANG_FACTOR, SMT_RLIMIT, hang_guard_hit, iteration_cap  # noqa: E402 (no CrossHair)

# read by CrossHair when it is imported: Z3 work per solver query instead of a wall-clock timeout
os.environ["CROSSHAIR_SMT_RLIMIT"] = str(SMT_RLIMIT)

import icontract._checkers as _ick

_RUNTIME_CHECKS = (_ick._assert_invariant, _ick._assert_preconditions, _ick._assert_postconditions)

import crosshair.core_and_libs  # noqa: E402,F401  (registers the plugins; patches icontract)
from crosshair import core  # noqa: E402
from crosshair.auditwall import engage_auditwall  # noqa: E402
from crosshair.condition_parser import AnalysisKind, condition_parser  # noqa: E402
from crosshair.enforce import EnforcedConditions, NoEnforce  # noqa: E402
from crosshair.options import AnalysisOptionSet  # noqa: E402
from crosshair.statespace import StateSpace  # noqa: E402
from crosshair.tracers import NoTracing  # noqa: E402
from crosshair.util import PathTimeout  # noqa: E402

from . import harnesses as H  # noqa: E402
from .common import applied  # noqa: E402

# icontract's run-time checks back on (CrossHair replaced them with no-ops) ...
_ick._assert_invariant, _ick._assert_preconditions, _ick._assert_postconditions = _RUNTIME_CHECKS


# ... and CrossHair's own enforcement of nested contracts off (it would hide their failures)
def _no_nested_enforcement(self, frame, fn, binding_target):
    if isinstance(fn, NoEnforce):
        return fn.fn
    return None


EnforcedConditions.trace_call = _no_nested_enforcement

_CAPTURED: list[tuple] = []
_original_message = core.make_counterexample_message


def _capturing_message(conditions, args, return_val=None):
    text = _original_message(conditions, args, return_val)
    with NoTracing():
        concrete = core.deep_realize(args)
        _CAPTURED.append((repr(tuple(concrete.args)), repr(dict(concrete.kwargs))))
    return text


core.make_counterexample_message = _capturing_message

# Paths abandoned by the per-path hang guard (CrossHair drops them silently otherwise).
_PATH_TIMEOUTS = [0]
_original_check_timeout = StateSpace.check_timeout


def _counting_check_timeout(self):
    try:
        _original_check_timeout(self)
    except PathTimeout:
        _PATH_TIMEOUTS[0] += 1
        raise


StateSpace.check_timeout = _counting_check_timeout


def analyze(fn, budget: float, exhaustive: bool = False) -> dict:
    """CrossHair on every postcondition of ``fn`` (harnesses have one), with counting."""
    cap, guard = iteration_cap(budget, exhaustive), HANG_FACTOR * budget + 30
    options = AnalysisOptionSet(analysis_kind=[AnalysisKind.icontract], max_iterations=cap,
                                per_condition_timeout=guard, per_path_timeout=guard)
    checkables = core.analyze_function(fn, options)
    out = {"function": fn.__name__, "conditions": len(checkables), "iterations": 0,
           "iteration_cap": cap, "spec_reached": 0, "confirmed_paths": 0, "exhausted": False,
           "status": "NO_CONDITION", "messages": [], "seconds": 0.0, "path_timeouts": 0,
           "smt_rlimit": SMT_RLIMIT, "hang_guard_seconds": guard}
    _PATH_TIMEOUTS[0] = 0
    statuses = []
    t0 = time.process_time()
    for checkable in checkables:
        opts = checkable.options
        opts.stats = collections.Counter()
        opts.deadline = time.process_time() + opts.per_condition_timeout
        post = checkable.conditions.post[0]
        reached = [0]

        def counting(lcls, _evaluate=post.evaluate, _reached=reached):
            _reached[0] += 1                 # this path got through the body to the spec
            return _evaluate(lcls)

        conditions = dataclasses.replace(
            checkable.conditions, post=[dataclasses.replace(post, evaluate=counting)])
        del _CAPTURED[:]
        with condition_parser(opts.analysis_kind):
            analysis = core.analyze_calltree(opts, conditions)
        statuses.append(analysis.verification_status.name)
        out["iterations"] += opts.stats["num_paths"]
        out["exhausted"] = bool(opts.stats["exhaustion"])
        out["spec_reached"] += reached[0]
        out["confirmed_paths"] += analysis.num_confirmed_paths
        for i, m in enumerate(analysis.messages):
            args, kwargs = _CAPTURED[i] if i < len(_CAPTURED) else (None, None)
            out["messages"].append({"state": m.state.name, "text": m.message, "line": m.line,
                                    "args": args, "kwargs": kwargs})
    out["seconds"] = round(time.process_time() - t0, 2)
    out["path_timeouts"] = _PATH_TIMEOUTS[0]
    if statuses:
        # REFUTED anywhere wins; CONFIRMED only if every condition was
        out["status"] = ("REFUTED" if "REFUTED" in statuses else
                         "CONFIRMED" if all(s == "CONFIRMED" for s in statuses) else "UNKNOWN")
    return out


def run(kind: str, name: str) -> dict:
    bent = contextlib.nullcontext()
    if kind == "harness":
        cases = H.harness(name).cases
    elif kind == "witnesses":
        cases = H.harness(name).witnesses
    elif kind == "mutant":
        m = H.mutant(name)
        cases = tuple(H.find_case(t)[1] for t in m.targets)
        bent = applied(m)                    # the shipped code with the mutant's part replaced
    else:
        raise SystemExit(f"unknown kind {kind!r}")
    results = []
    with bent:
        for case in cases:
            results.append(_analyze_case(kind, name, case))
    return {"kind": kind, "name": name, "cases": results}


def _analyze_case(kind: str, name: str, case) -> dict:
    r = analyze(case.build(), case.budget, case.exhaustive)
    r["case"] = case.name
    r["hang_guard_hit"] = hang_guard_hit(r)
    print(f"# {kind} {name} {case.name}: {r['status']} iterations={r['iterations']}"
          f"/{r['iteration_cap']} spec={r['spec_reached']} {r['seconds']}s"
          f"{' HANG GUARD HIT' if r['hang_guard_hit'] else ''}", file=sys.stderr, flush=True)
    return r


def main(argv: list[str]) -> int:
    kind, name = argv
    # The exact Gemm kernel is compiled by numba (or loaded from its disk cache) on first use;
    # that touches files, which the audit wall forbids once engaged: do it before.
    from sonnx.ops.gemm import fold
    fold._compiled()
    # The proved C kernels (the default kernels of the operators whose records say so) are
    # built by the C compiler or loaded from their cache on first use: before it too.
    from sonnx import c_kernels
    try:
        c_kernels.library()
    except c_kernels.CKernelsUnavailable:
        pass            # the default kernels then run numpy (c_kernels.default_entry)
    engage_auditwall()
    print(json.dumps(run(kind, name)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
