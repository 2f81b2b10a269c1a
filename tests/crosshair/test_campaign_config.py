"""The CrossHair campaign's definition is sane (fast: CrossHair itself never runs here).

The campaign runs with ``tools/crosshair``; this file checks only its data: every harness has a
witness and names registered requirements, every mutant module is registered and aimed at
existing cases, and every planted bug really breaks its target's spec in plain Python (so a
mutant that CrossHair "catches" is a bug, not a broken harness).
"""
from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from sonnx import requirements
from tests.crosshair import harnesses as H
from tests.crosshair import mutants as mutants_pkg

ROOT = Path(__file__).resolve().parents[2]


def test_every_harness_has_witnesses_and_known_requirements():
    known = requirements.load()
    for h in H.HARNESSES:
        assert h.cases, h.name
        assert h.witnesses, f"harness {h.name} has no reachability witness"
        assert h.requirements and all(r in known for r in h.requirements), h.name
        assert h.mode in ("symbolic", "sampled")


def test_names_are_unique():
    names = [h.name for h in H.HARNESSES]
    assert len(names) == len(set(names))
    for h in H.HARNESSES:
        cases = [c.name for c in h.cases + h.witnesses]
        assert len(cases) == len(set(cases)), h.name
    assert len({m.name for m in H.MUTANTS}) == len(H.MUTANTS)


def test_every_mutant_module_is_registered_and_targets_exist():
    known = requirements.load()
    modules = {m.name for m in pkgutil.iter_modules(mutants_pkg.__path__) if not m.name.startswith("_")}
    registered = {m.module.rsplit(".", 1)[1] for m in H.MUTANTS}
    assert modules == registered, f"unregistered: {modules - registered}, missing: {registered - modules}"
    for m in H.MUTANTS:
        assert all(r in known for r in m.requirements), m.name
        assert m.targets, m.name
        for t in m.targets:
            H.find_case(t)                                  # raises KeyError when absent
        kernels = H.mutant_kernels(m)
        assert set(kernels._overrides) <= set(H.KERNELS), m.name


def test_required_mutant_kinds_are_planted():
    assert {"wrap_edge", "broadcast_accepted", "saturation", "flat_off_by_one"} <= {m.name for m in H.MUTANTS}
    assert {"gemm_transpose_index", "gemm_c_broadcast", "gemm_k_short", "gemm_saturation"} <= {
        m.name for m in H.MUTANTS}


@pytest.mark.req("GEMM-R1", "GEMM-R4")
def test_gemm_grid_and_refusal_tables_cover_what_the_campaign_claims():
    # (M, K, N) each in 1..3, square and not; C tables include the broadcastable shapes
    assert all(1 <= d <= 3 for g in H.GEMM_GRID for d in g)
    assert any(len(set(g)) > 1 for g in H.GEMM_GRID) and (3, 3, 3) in H.GEMM_GRID
    assert {(2,), (1, 2), (2, 1), (1, 1), (1,), ()} <= set(H.GEMM_C_SHAPES) and None in H.GEMM_C_SHAPES
    for name in ("gemm-signed", "gemm-unsigned"):
        assert all(c.exhaustive for c in H.harness(name).cases), name
    assert all(c.exhaustive for c in H.harness("gemm-index").cases + H.harness("gemm-refusals").cases)
    assert H.harness("gemm-exact").mode == "sampled"


def test_every_case_builds_with_concrete_annotations():
    for h in H.HARNESSES:
        for case in h.cases + h.witnesses:
            fn = case.build(H.Kernels())
            body = H.unwrapped(fn)
            assert not any(isinstance(a, str) for a in body.__annotations__.values()), case.name


def test_requirements_needing_crosshair_have_a_harness():
    covered = {r for h in H.HARNESSES for r in h.requirements}
    for req in requirements.load().values():
        if "crosshair" in req.verification and req.id.startswith(("MUL-", "GEMM-")):
            assert req.id in covered, req.id


# Concrete counterexamples for each mutant, replayed in a child process with the full contracts
# attached (SONNX_CONTRACTS=full is read at import time): the real kernel passes, the mutant fails.
_KNOWN_BUGS = {
    "wrap_edge": ("mul-signed/int8.2x3", ((16, 0, 0, 0, 0, 0), (8, 0, 0, 0, 0, 0))),
    "saturation": ("mul-signed/int8.2x3", ((16, 0, 0, 0, 0, 0), (9, 0, 0, 0, 0, 0))),
    "flat_off_by_one": ("mul-signed/int8.2x1x2", ((1, 1, 1, 1), (1, 2, 3, 4))),
    "broadcast_accepted": ("mul-refusals/pairs", (4, 1, 0, 0)),
    "ties_away": ("mul-float/float16.scalar.ties", ((1,), (2,))),  # 1.5 * -(1 + 3 ulp): tie, even is below
    "index_stride": ("flat-index/2x3", ((1, 2),)),
    # A stored (2, 3) with transA: A'[1, 0] is at flat 1, the mutant reads flat 3
    "gemm_transpose_index": ("gemm-index/a_index", (True, 2, 3, 1, 0)),
    # A (2, 3) x B (3, 2) with C of shape (2,): must be refused with GEMM-R4
    "gemm_c_broadcast": ("gemm-refusals/shapes", (0, 0, 3, 0, 0)),
    # 1 x 1 x 1, no C: Y = 1 * 1, the mutant sums nothing
    "gemm_k_short": ("gemm-signed/int32.1x1x1", (False, False, False, (1,), (1,), (0,))),
    # int32 edge values: max * 2 wraps to -2, the mutant clamps to max
    "gemm_saturation": ("gemm-signed/int32.1x3x1.edges", (False, False, False, (10, 3, 3), (5, 3, 3), (3,))),
}

_CHILD = r"""
import json, sys
from tests.crosshair import harnesses as H
from tests.crosshair.campaign import replay
out = {}
for name, (target, args) in json.loads(sys.argv[1]).items():
    case = H.find_case(target)[1]
    args = tuple(tuple(a) if isinstance(a, list) else a for a in args)
    real = replay(case.build(H.Kernels()), args, {})
    bad = replay(case.build(H.mutant_kernels(H.mutant(name))), args, {})
    out[name] = [real[0], bad[0], bad[1]]
print(json.dumps(out))
"""


@pytest.mark.req("MUL-R1", "MUL-R3", "MUL-R4", "GEMM-R1", "GEMM-R4", "GEMM-R7")
def test_planted_bugs_break_their_targets_in_plain_python():
    env = {**os.environ, "SONNX_CONTRACTS": "full",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(_KNOWN_BUGS)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(result) == {m.name for m in H.MUTANTS}, "a mutant has no known counterexample here"
    for name, (real_fails, mutant_fails, why) in result.items():
        assert not real_fails, f"{name}: the real kernel fails its own harness"
        assert mutant_fails, f"{name}: the planted bug does not break {_KNOWN_BUGS[name][0]} ({why})"


# ---------------------------------------------------------------- the campaign's verdict logic
# (CrossHair does not run here: the runner's answers are fixtures)
from types import SimpleNamespace  # noqa: E402

from tests.crosshair import campaign as C  # noqa: E402


def _case_result(**kw):
    r = {"case": "c", "function": "f", "conditions": 1, "iterations": 10, "iteration_cap": 10,
         "spec_reached": 10, "confirmed_paths": 10, "exhausted": False, "status": "UNKNOWN",
         "messages": [], "seconds": 1.0, "path_timeouts": 0}
    r.update(kw)
    r.setdefault("hang_guard_hit", C.hang_guard_hit(r))
    return r


def _harness(exhaustive=False, n=1):
    def build(_kernels):
        def f():
            return None
        return f
    cases = [SimpleNamespace(name="c" if i == 0 else f"c{i}", exhaustive=exhaustive, budget=1.0, build=build)
             for i in range(n)]
    return SimpleNamespace(name="h", requirements=("MUL-R1",), what="", mode="symbolic", cases=cases)


@pytest.mark.parametrize("kw, verdict", [
    ({}, "no counterexample"),                                       # the cap spent: a verdict
    ({"iterations": 4, "exhausted": True, "status": "CONFIRMED"}, "confirmed"),
    ({"iterations": 4}, "hang guard hit"),                           # stopped early by the clock
    ({"path_timeouts": 1}, "hang guard hit"),                        # a path dropped by the clock
    ({"spec_reached": 0}, "vacuous"),
])
def test_harness_verdicts(kw, verdict):
    j = C._judge_harness(_harness(), {"cases": [_case_result(**kw)]})
    assert j["cases"][0]["verdict"] == verdict
    assert (j["result"] == "ok") == (verdict in ("confirmed", "no counterexample"))


def test_exhaustive_case_must_exhaust_within_its_cap():
    j = C._judge_harness(_harness(exhaustive=True), {"cases": [_case_result()]})
    assert j["cases"][0]["verdict"] == "not exhausted" and j["result"] == "FAILED"


def test_runner_answer_without_the_hang_guard_flag_is_not_a_verdict():
    r = _case_result()
    del r["hang_guard_hit"]
    j = C._judge_harness(_harness(), {"cases": [r]})
    assert j["cases"][0]["verdict"] == "hang guard hit" and j["result"] == "FAILED"


def test_harness_without_cases_or_with_missing_cases_fails():
    assert C._judge_harness(_harness(n=0), {"cases": []})["result"] == "FAILED"
    assert C._judge_harness(_harness(n=2), {"cases": [_case_result()]})["result"] == "FAILED"
    assert C._judge_harness(_harness(), {"error": "hang guard hit (wall clock)"})["result"] == "FAILED"


def test_iteration_caps_are_counts_from_the_nominal_budget():
    assert C.iteration_cap(0.1) == C.MIN_PATHS
    assert C.iteration_cap(20.0) == 20 * C.PATHS_PER_SECOND
    assert C.iteration_cap(20.0, exhaustive=True) == 20 * C.PATHS_PER_SECOND * C.EXHAUSTIVE_FACTOR
    assert C.hang_guard_hit({"path_timeouts": 0, "iterations": 3, "iteration_cap": 50, "conditions": 1,
                             "exhausted": False, "status": "REFUTED"}) is False   # stopped on a refutation
    two = {"path_timeouts": 0, "iteration_cap": 50, "conditions": 2, "exhausted": False, "status": "UNKNOWN"}
    assert C.hang_guard_hit(dict(two, iterations=100)) is False      # the cap, per condition
    assert C.hang_guard_hit(dict(two, iterations=99)) is True


def test_unrefuted_target_reports_the_hang_guard():
    r = _case_result(iterations=3, hang_guard_hit=True)
    [t] = C._judge_refutations("mutant", {"cases": [r]}, [("c", lambda: None)])
    assert t["caught"] is False and t["hang_guard_hit"] is True


def test_judged_fields_that_crosshair_json_carries():
    """The fields the trace and the README read (a renamed key reads as missing evidence)."""
    j = C._judge_harness(_harness(), {"cases": [_case_result()], "wall": 1.234})
    assert {k: j[k] for k in ("name", "requirements", "mode", "result", "confirmed_over_all_paths",
                              "cases_total", "iterations", "spec_reached", "seconds", "wall_seconds")} == {
        "name": "h", "requirements": ["MUL-R1"], "mode": "symbolic", "result": "ok",
        "confirmed_over_all_paths": 0, "cases_total": 1, "iterations": 10, "spec_reached": 10,
        "seconds": 1.0, "wall_seconds": 1.23}
    c = j["cases"][0]
    assert {k: c[k] for k in ("case", "function", "verdict", "ok", "exhaustive_required", "status",
                              "iterations", "iteration_cap", "spec_reached", "confirmed_paths", "budget",
                              "path_timeouts", "counterexamples", "other_messages")} == {
        "case": "c", "function": "f", "verdict": "no counterexample", "ok": True,
        "exhaustive_required": False, "status": "UNKNOWN", "iterations": 10, "iteration_cap": 10,
        "spec_reached": 10, "confirmed_paths": 10, "budget": 1.0, "path_timeouts": 0,
        "counterexamples": [], "other_messages": []}
    [t] = C._judge_refutations("witnesses", {"cases": [_case_result(status="REFUTED")]}, [("c", lambda: None)])
    assert {k: t[k] for k in ("case", "caught", "seconds", "iterations", "iteration_cap", "hang_guard_hit",
                              "spec_reached", "counterexample")} == {
        "case": "c", "caught": False, "seconds": 1.0, "iterations": 10, "iteration_cap": 10,
        "hang_guard_hit": False, "spec_reached": 10, "counterexample": None}
    [t] = C._judge_refutations("mutant", {"error": "boom"}, [("c", lambda: None)])
    assert t == {"case": "c", "caught": False, "seconds": None, "error": "boom"}
