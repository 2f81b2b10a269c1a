"""The CrossHair campaign's definition is sane (fast: CrossHair itself never runs here).

The campaign runs with ``tools/crosshair``; this file checks only its data, as harnesses.py
discovers it from the registry (no list of operators, harnesses or mutants is copied here): every
harness has a witness and names registered requirements, each operator's cases module claims its
own operator's requirements only and plants mutants aimed at its own cases, every mutant module is
registered and aimed at existing cases, and every planted bug really breaks its target's spec in
plain Python (so a mutant that CrossHair "catches" is a bug, not a broken harness).
"""
from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from sonnx import requirements
from sonnx.ops.registry import operators
from tests.crosshair import harnesses as H
from tests.crosshair import mutants as mutants_pkg
from tests.crosshair.common import Mutant, applied, unwrapped

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


def test_every_mutant_module_is_registered_and_bends_a_shipped_name():
    known = requirements.load()
    modules = {m.name for m in pkgutil.iter_modules(mutants_pkg.__path__) if not m.name.startswith("_")}
    registered = {m.module.rsplit(".", 1)[1] for m in H.MUTANTS}
    assert modules == registered, f"unregistered: {modules - registered}, missing: {registered - modules}"
    for m in H.MUTANTS:
        assert all(r in known for r in m.requirements), m.name
        assert m.targets and m.known_bug[0] in m.targets, m.name
        for t in m.targets:
            H.find_case(t)                                  # raises KeyError when absent
        patches = importlib.import_module(m.module).PATCHES
        assert patches, m.name
        for path in patches:                                # a shipped function, not a copy
            module, name = path.split(":")
            assert module.startswith("sonnx.") and callable(getattr(importlib.import_module(module), name)), path


def test_a_mutant_is_applied_in_place_and_put_back():
    from sonnx.semantics import intloops
    shipped = intloops.wrap_signed
    with applied(H.mutant("wrap_edge")):
        assert intloops.wrap_signed is not shipped and intloops.wrap_signed(128, 256, 128) == 128
    assert intloops.wrap_signed is shipped and shipped(128, 256, 128) == -128


def test_a_patch_of_a_missing_name_is_refused(tmp_path, monkeypatch):
    (tmp_path / "ghost_mutant.py").write_text('PATCHES = {"sonnx.semantics.intloops:no_such": abs}\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    ghost = Mutant("ghost", "ghost_mutant", ("MUL-R3",), ("x/y",), ("x/y", ()))
    with pytest.raises(AttributeError, match="no_such"):
        with applied(ghost):
            pass


def test_the_campaign_is_what_the_operators_cases_modules_hold():
    """HARNESSES and MUTANTS are exactly the union of the discovered cases modules' tuples, and a
    cases module exists for each operator whose stem has one on disk (none is missed or stray)."""
    here = Path(H.__file__).parent
    on_disk = {p.name[:-len("_cases.py")] for p in here.glob("*_cases.py")}
    stems = {H.stem(op) for op in operators().values()}
    assert on_disk <= stems, f"cases modules of no registered operator: {on_disk - stems}"
    modules = H.cases_modules()
    assert set(modules) == on_disk
    assert H.HARNESSES == tuple(h for m in modules.values() for h in m.HARNESSES)
    assert H.MUTANTS == tuple(x for m in modules.values() for x in m.MUTANTS)


@pytest.mark.req("@operators")
def test_each_cases_module_claims_its_own_operator_and_catches_its_own_mutants():
    """A harness or mutant of ``<stem>_cases.py`` names requirements of that operator only; each
    of its mutants is aimed at its own harnesses' cases; it plants at least one mutant; a mutant
    module named after an operator's stem is registered by that operator's cases module only."""
    ops = {H.stem(op): op for op in operators().values()}
    owner = {}
    for st, module in H.cases_modules().items():
        prefix = f"{ops[st].prefix}-"
        assert module.HARNESSES and module.MUTANTS, st
        own = {h.name for h in module.HARNESSES}
        for h in module.HARNESSES:
            assert all(r.startswith(prefix) for r in h.requirements), (st, h.name)
        for m in module.MUTANTS:
            assert all(r.startswith(prefix) for r in m.requirements), (st, m.name)
            assert all(t.split("/")[0] in own for t in m.targets), (st, m.name)
            owner.setdefault(m.module.rsplit(".", 1)[1], set()).add(st)
    for module_name, users in owner.items():
        named_after = [st for st in ops if module_name.startswith(f"{st}_")]
        if named_after:
            assert users == set(named_after), (module_name, users)


@pytest.mark.req("@kind:elementwise")
def test_every_element_wise_operator_gets_the_same_groups_with_its_own_ids():
    """Each operator of kind "elementwise" with a cases module has the five groups under its own
    IDs, each with a witness and as many cases as every other such operator's, and mutants aimed
    at its integer, float and refusal cases."""
    tags = [op.name.lower() for op in operators().values()
            if op.kind == "elementwise" and H.stem(op) in H.cases_modules()]
    assert tags
    sizes = {}
    for tag in tags:
        groups = {h.name: h for h in H.HARNESSES if h.name.startswith(f"{tag}-")}
        assert set(groups) == {f"{tag}-{g}" for g in ("signed", "unsigned", "float", "refusals", "fast")}
        for name, h in groups.items():
            assert h.witnesses, name
            sizes.setdefault(name[len(tag) + 1:], set()).add(len(h.cases))
        caught_by = {t.split("/")[0] for m in H.MUTANTS for t in m.targets if t.startswith(f"{tag}-")}
        assert {f"{tag}-signed", f"{tag}-float", f"{tag}-refusals"} <= caught_by, tag
    assert all(len(n) == 1 for n in sizes.values()), sizes


def test_every_case_builds_with_concrete_annotations():
    for h in H.HARNESSES:
        for case in h.cases + h.witnesses:
            fn = case.build()
            body = unwrapped(fn)
            assert not any(isinstance(a, str) for a in body.__annotations__.values()), case.name


def test_requirements_needing_crosshair_have_a_harness():
    covered = {r for h in H.HARNESSES for r in h.requirements}
    prefixes = tuple(f"{op.prefix}-" for op in operators().values())
    for req in requirements.load().values():
        if "crosshair" in req.verification and req.id.startswith(prefixes):
            assert req.id in covered, req.id


# Each mutant's known counterexample (Mutant.known_bug), replayed in a child process with the full
# contracts attached (SONNX_CONTRACTS=full is read at import time): the shipped code passes, the
# same code with the mutant applied fails.
_CHILD = r"""
import json, sys
from tests.crosshair import harnesses as H
from tests.crosshair.campaign import replay
from tests.crosshair.common import applied
out = {}
for m in H.MUTANTS:
    target, args = m.known_bug
    case = H.find_case(target)[1]
    real = replay(case.build(), args, {})
    with applied(m):
        bad = replay(case.build(), args, {})
    out[m.name] = [target, real[0], bad[0], bad[1]]
print(json.dumps(out))
"""


@pytest.mark.req("@operators")
def test_planted_bugs_break_their_targets_in_plain_python():
    env = {**os.environ, "SONNX_CONTRACTS": "full",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", _CHILD], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(result) == {m.name for m in H.MUTANTS}
    for name, (target, real_fails, mutant_fails, why) in result.items():
        assert not real_fails, f"{name}: the shipped kernel fails its own harness"
        assert mutant_fails, f"{name}: the planted bug does not break {target} ({why})"


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
    def build():
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
    """The fields the trace and docs/crosshair.md read (a renamed key reads as missing evidence)."""
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
