"""The CrossHair campaign: every harness, witness and mutant, each in its own process, two at a
time, then every counterexample replayed in plain Python, then build/evidence/crosshair.json.

    python -m tests.crosshair.campaign [--only NAME ...] [--jobs 2] [--out PATH]

(``tools/crosshair`` runs exactly this.) The campaign is defined in harnesses.py; this file only
runs it and judges the results. It never imports CrossHair itself, so a replay here is plain
Python with icontract's ordinary run-time checks.

Verdicts (exit 1 if any is bad), all bounded by iteration caps and solver work (runner.py), so
the same commit gives the same verdicts on any load:
- harness case: "confirmed" (CrossHair exhausted every path: "Confirmed over all paths"), or
  "no counterexample" (iteration cap spent; only allowed where the case is not marked
  exhaustive); bad: "counterexample", "vacuous" (no path reached the spec), "not exhausted"
  (an exhaustive case that did not finish), "hang guard hit" (a clock stopped it: no verdict),
  "error" (also: a harness without cases).
- witness: "refuted" when CrossHair found a counterexample to the false claim AND it replays;
  bad: "not refuted".
- mutant: "caught" when a target case yields a counterexample that replays on the mutant;
  bad: "survived".
"""
from __future__ import annotations

import argparse
import ast
import inspect
import json
import math
import os
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = None      # sonnx.trace.inputs.result_path: build/evidence/, or build/recheck/ beside a sealed bundle
SCHEMA = 1
COUNTEREXAMPLE_STATES = ("POST_FAIL", "EXEC_ERR", "POST_ERR")


# ---------------------------------------------------------------- budgets (used by runner.py)
# Verdicts are bounded by counts: a case's nominal CPU seconds (Case.budget) set its iteration
# cap, PATHS_PER_SECOND paths per second and at least MIN_PATHS; every solver query gets at most
# SMT_RLIMIT units of Z3 work (rlimit). Clocks are hang guards only, HANG_FACTOR times the
# nominal seconds (+30 s) per case and per path, and + CPU/wall limits on the whole process.
PATHS_PER_SECOND = 25
MIN_PATHS = 50
EXHAUSTIVE_FACTOR = 10     # a case that must exhaust its paths stops there; the cap is a bound
SMT_RLIMIT = 4_000_000
HANG_FACTOR = 10


def iteration_cap(budget: float, exhaustive: bool = False) -> int:
    """The number of paths a case may run: its verdict budget."""
    return max(MIN_PATHS, int(round(budget * PATHS_PER_SECOND))) * (EXHAUSTIVE_FACTOR if exhaustive else 1)


def hang_guard_hit(r: dict) -> bool:
    """A case stopped by a clock, not by its budget: a path abandoned by the per-path guard,
    or the per-case guard before the cap, without exhausting the paths or refuting."""
    return bool(r["path_timeouts"]) or (
        r["iterations"] < r["iteration_cap"] * r["conditions"] and not r["exhausted"]
        and r["status"] != "REFUTED")


# ---------------------------------------------------------------- replay (plain Python)
_NAMES = {"nan": math.nan, "inf": math.inf, "True": True, "False": False, "None": None}


def _literal(node):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _literal(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e) for e in node.elts)
    if isinstance(node, ast.List):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values)}
    raise ValueError(f"not a literal: {ast.dump(node)}")


def parse_args(args_repr: str, kwargs_repr: str) -> tuple[tuple, dict]:
    return (_literal(ast.parse(args_repr, mode="eval").body),
            _literal(ast.parse(kwargs_repr, mode="eval").body))


def replay(fn, args: tuple, kwargs: dict) -> tuple[bool, str]:
    """Run a harness on CrossHair's counterexample, in plain Python. True when it really fails:
    the preconditions hold and the body raises or a postcondition is false."""
    import icontract

    from .common import unwrapped
    body = unwrapped(fn)
    bound = inspect.signature(body).bind(*args, **kwargs)
    values = dict(bound.arguments)
    checker = icontract._checkers.find_checker(fn)

    def holds(contract, extra=None) -> bool:
        scope = {**values, **(extra or {})}
        return bool(contract.condition(**{k: scope[k] for k in contract.condition_args}))

    for group in checker.__preconditions__:
        for contract in group:
            if not holds(contract):
                return False, "spurious: the arguments break a precondition"
    try:
        result = body(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - any exception is a real failure here
        return True, f"raises {type(exc).__name__}: {str(exc)[:200]}"
    for contract in checker.__postconditions__:
        try:
            if not holds(contract, {"result": result}):
                return True, "postcondition is false"
        except Exception as exc:  # noqa: BLE001
            return True, f"postcondition raises {type(exc).__name__}: {str(exc)[:200]}"
    return False, "spurious: the postcondition holds on replay"


def _replay_messages(case_result: dict, fn) -> list[dict]:
    out = []
    for m in case_result["messages"]:
        if m["state"] not in COUNTEREXAMPLE_STATES:
            continue
        entry = {"state": m["state"], "message": m["text"][:400], "args": m["args"]}
        if m["args"] is None:
            entry.update(replayed=False, replay="no arguments captured")
        else:
            try:
                args, kwargs = parse_args(m["args"], m["kwargs"])
                entry["replayed"], entry["replay"] = replay(fn, args, kwargs)
            except Exception as exc:  # noqa: BLE001
                entry.update(replayed=False, replay=f"replay failed: {type(exc).__name__}: {exc}")
        out.append(entry)
    return out


# ---------------------------------------------------------------- running
def _run_job(kind: str, name: str, cpu_budget: float) -> dict:
    """One runner process. Its verdicts are bounded by iterations and solver work (runner.py);
    the CPU and wall-clock limits here are only hang guards, generous on purpose (a loaded
    machine must not reach them), reported as "hang guard hit"."""
    limit = int(cpu_budget * HANG_FACTOR * 1.5) + 120

    def cap():
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))

    # a fixed hash seed: set and dict-of-str orders, hence CrossHair's path order, are the same
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "SONNX_CONTRACTS": "full", "PYTHONHASHSEED": "0"}
    t0 = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "tests.crosshair.runner", kind, name],
                              cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=limit * 2, preexec_fn=cap)
        wall = time.monotonic() - t0
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode in (-9, -24, 128 + 9, 128 + 24):   # SIGKILL / SIGXCPU: the CPU guard
            return {"kind": kind, "name": name, "error": "hang guard hit (CPU limit)", "wall": wall}
        if proc.returncode != 0 or not lines:
            return {"kind": kind, "name": name, "error": f"runner exit {proc.returncode}: "
                    + (proc.stderr.strip().splitlines() or ["?"])[-1][:300], "wall": wall}
        data = json.loads(lines[-1])
        data["wall"] = wall
        return data
    except subprocess.TimeoutExpired:
        return {"kind": kind, "name": name, "error": "hang guard hit (wall clock)",
                "wall": time.monotonic() - t0}


def _judge_harness(h, data: dict) -> dict:
    cases = {c.name: c for c in h.cases}
    out = []
    for r in data.get("cases", []):
        case = cases[r["case"]]
        cex = _replay_messages(r, case.build())
        other = [m["text"][:300] for m in r["messages"] if m["state"] not in COUNTEREXAMPLE_STATES]
        if cex:
            verdict = "counterexample"
        elif r.get("hang_guard_hit", True):
            verdict = "hang guard hit"     # stopped by a clock: no verdict (missing flag = same)
        elif r["status"] == "NO_CONDITION" or r["spec_reached"] == 0 or other:
            verdict = "vacuous"
        elif r["status"] == "CONFIRMED":
            verdict = "confirmed"
        elif case.exhaustive:
            verdict = "not exhausted"
        else:
            verdict = "no counterexample"
        out.append({"case": r["case"], "function": r["function"], "verdict": verdict,
                    "ok": verdict in ("confirmed", "no counterexample"),
                    "exhaustive_required": case.exhaustive, "status": r["status"],
                    "iterations": r["iterations"], "iteration_cap": r.get("iteration_cap"),
                    "spec_reached": r["spec_reached"],
                    "confirmed_paths": r["confirmed_paths"], "seconds": r["seconds"],
                    "budget": case.budget, "path_timeouts": r.get("path_timeouts"),
                    "counterexamples": cex, "other_messages": other})
    if "error" in data or len(out) != len(h.cases) or not h.cases:
        out.append({"case": "*", "verdict": "error", "ok": False,
                    "error": data.get("error", "cases missing from the runner's answer")})
    return {
        "name": h.name, "requirements": list(h.requirements), "what": h.what, "mode": h.mode,
        "result": "ok" if all(c["ok"] for c in out) else "FAILED",
        "confirmed_over_all_paths": sum(c["verdict"] == "confirmed" for c in out),
        "cases_total": len(h.cases),
        "iterations": sum(c.get("iterations", 0) for c in out),
        "spec_reached": sum(c.get("spec_reached", 0) for c in out),
        "seconds": round(sum(c.get("seconds", 0.0) for c in out), 2),
        "wall_seconds": round(data.get("wall", 0.0), 2),
        "cases": out,
    }


def _judge_refutations(kind: str, data: dict, targets: list[tuple[str, object]]) -> list[dict]:
    """For witnesses and mutants: each target must give a replayed counterexample."""
    by_case = {r["case"]: r for r in data.get("cases", [])}
    out = []
    for label, fn in targets:
        r = by_case.get(label)
        if r is None:
            out.append({"case": label, "caught": False, "seconds": None,
                        "error": data.get("error", "missing from the runner's answer")})
            continue
        cex = _replay_messages(r, fn)
        caught = any(c["replayed"] for c in cex)
        out.append({"case": label, "caught": caught, "seconds": r["seconds"],
                    "iterations": r["iterations"], "iteration_cap": r.get("iteration_cap"),
                    "hang_guard_hit": bool(r.get("hang_guard_hit")) and not caught,
                    "spec_reached": r["spec_reached"],
                    "counterexample": next((c for c in cex if c["replayed"]), cex[0] if cex else None)})
    return out


def run(only: list[str] | None = None, jobs: int = 2, out: Path | None = DEFAULT_OUT) -> int:
    os.environ["SONNX_CONTRACTS"] = "full"
    from sonnx.trace.inputs import step_inputs
    inputs = step_inputs(ROOT, "crosshair")      # what this run reads, hashed before it starts
    from . import harnesses as H
    from .common import applied
    from .harnesses import find_case

    def wanted(name: str) -> bool:
        return not only or name in only

    plan = []
    for h in H.HARNESSES:
        if wanted(h.name):
            plan.append(("harness", h.name, sum(c.budget for c in h.cases)))
            plan.append(("witnesses", h.name, sum(c.budget for c in h.witnesses)))
    for m in H.MUTANTS:
        if wanted(m.name) or wanted("mutants"):
            plan.append(("mutant", m.name, sum(find_case(t)[1].budget for t in m.targets)))
    plan.sort(key=lambda p: -p[2])           # longest first: better packing on two cores

    t0 = time.monotonic()
    results: dict[tuple[str, str], dict] = {}

    def one(item):
        kind, name, budget = item
        data = _run_job(kind, name, budget)
        results[(kind, name)] = data
        cases = data.get("cases", [])
        if "error" in data:
            line = f"ERROR {data['error']}"
        else:
            line = ", ".join(f"{c['case']}={c['status']}" for c in cases)
        print(f"[{time.monotonic() - t0:6.1f}s] {kind:9s} {name:20s} ({data.get('wall', 0):5.1f}s) {line}",
              flush=True)

    print(f"crosshair: {len(plan)} processes, {jobs} at a time", flush=True)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(one, plan))

    summary = {"schema": SCHEMA, "tool": "crosshair", "generated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
               "versions": _versions(), "inputs": inputs,
               "budgets": {"iterations": f"max({MIN_PATHS}, {PATHS_PER_SECOND} x the case's nominal seconds),"
                                         f" x {EXHAUSTIVE_FACTOR} for a case that must exhaust its paths",
                           "smt_rlimit_per_query": SMT_RLIMIT,
                           "hang_guard": f"{HANG_FACTOR} x the nominal seconds + 30 s CPU per case and per path"},
               "harnesses": [], "witnesses": [], "mutants": [],
               "wall_seconds": round(time.monotonic() - t0, 1)}
    for h in H.HARNESSES:
        if not wanted(h.name):
            continue
        summary["harnesses"].append(_judge_harness(h, results[("harness", h.name)]))
        targets = [(w.name, w.build()) for w in h.witnesses]
        for w in _judge_refutations("witnesses", results[("witnesses", h.name)], targets):
            w.setdefault("hang_guard_hit", False)
            summary["witnesses"].append({"harness": h.name, "name": w.pop("case"),
                                         "refuted": w.pop("caught"), **w})
    for m in H.MUTANTS:
        if not (wanted(m.name) or wanted("mutants")):
            continue
        with applied(m):                     # replayed on the shipped code with the part bent
            targets = [(find_case(t)[1].name, find_case(t)[1].build()) for t in m.targets]
            per = _judge_refutations("mutant", results[("mutant", m.name)], targets)
        first = next((p for p in per if p["caught"]), None)
        doc = (sys.modules.get(m.module).__doc__ or "").strip().splitlines()
        summary["mutants"].append({
            "name": m.name, "requirements": list(m.requirements), "what": doc[0] if doc else "",
            "caught": first is not None, "caught_by": first["case"] if first else None,
            "seconds_to_catch": first["seconds"] if first else None, "targets": per})

    guard = {True: " (hang guard hit)", False: ""}
    problems = ([f"harness {h['name']}: " + ", ".join(f"{c['case']} {c['verdict']}" for c in h["cases"] if not c["ok"])
                 for h in summary["harnesses"] if h["result"] != "ok"]
                + [f"witness {w['harness']}/{w['name']} not refuted{guard[w['hang_guard_hit']]}"
                   for w in summary["witnesses"] if not w["refuted"]]
                + [f"mutant {m['name']} survived"
                   + guard[any(t.get("hang_guard_hit") for t in m["targets"])]
                   for m in summary["mutants"] if not m["caught"]])
    summary["hang_guard_hit"] = [p for p in problems if "hang guard hit" in p]
    summary["ok"] = not problems
    summary["problems"] = problems
    if out is None:
        from sonnx.trace.inputs import result_path
        out = result_path(ROOT, "crosshair.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")

    print()
    for h in summary["harnesses"]:
        print(f"  harness {h['name']:14s} {h['result']:6s} {h['confirmed_over_all_paths']}/{h['cases_total']} "
              f"confirmed over all paths, {h['iterations']} iterations, {h['spec_reached']} reached the spec, "
              f"{h['seconds']}s cpu [{h['mode']}]")
    for w in summary["witnesses"]:
        print(f"  witness {w['harness']}/{w['name']}: {'refuted' if w['refuted'] else 'NOT REFUTED'} "
              f"({w['seconds']}s)")
    for m in summary["mutants"]:
        print(f"  mutant  {m['name']:20s} {'caught' if m['caught'] else 'SURVIVED'} "
              f"{'in %ss by %s' % (m['seconds_to_catch'], m['caught_by']) if m['caught'] else ''}")
    print(f"crosshair: {'OK' if summary['ok'] else 'FAILED'} in {summary['wall_seconds']}s; summary: {out}")
    for p in problems:
        print(f"  problem: {p}")
    return 0 if summary["ok"] else 1


def _versions() -> dict:
    from importlib import metadata
    out = {"python": sys.version.split()[0]}
    for name in ("crosshair-tool", "icontract", "z3-solver", "numpy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tools/crosshair", description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="harness or mutant names (or 'mutants')")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args(argv)
    return run(a.only, a.jobs, a.out)


if __name__ == "__main__":
    sys.exit(main())
