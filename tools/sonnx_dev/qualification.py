"""The tool qualification kit (DO-330, TQL-5) of `sonnx validate` (and `sonnx conform`'s check,
which is the same rule set) and `sonnx trace`, written into the evidence bundle.

    python -m sonnx_dev.qualification --bundle build/evidence      (tools/evidence runs it)

Writes BUNDLE/qualification/:
  tor.json, tor.md      the Tool Operational Requirements: one per validator rule (the rules a
                        finding can carry: sonnx.validate.selection.all_rules(), less the
                        requirements on computed values alone, which no model check decides)
                        and one per trace judgement (sonnx.trace.matrix.JUDGEMENTS); each
                        with the tests that verify it and their results (from the bundle's
                        junit.xml and trace/trace.json), and the mutation results recorded
                        (the CrossHair mutants of the rule's requirement; the mutation record
                        of the judge and of the validator, docs/records/mutation/)
  configuration.json    the configuration identity (sonnx.qualification.configuration) and
                        the commit of the bundle
  limitations.md        the known limitations: every part of a requirement not proved as
                        stated (its gap file), every reviewed gap and skip, every TOR without
                        a passing verification case
Nothing here is a hand list: the TORs follow the registry, the validator and the judge.
Exit 1 when a TOR has no verification case or one that did not pass (the kit says which).
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VALUE_FAMILIES = {"values", "rounding", "fast-bound"}   # what a run computes, not what a model is
# where the verification cases of the validator's rules live (the constraint functions are the
# operators', so their refusal tests verify the rule the validator applies)
VALIDATE_TESTS = ("tests/validate/", "tests/ops/", "tests/conform/", "tests/test_profile.py")
JUDGE_TESTS = "tests/trace/"
MUTATION_RECORDS = {"validate": "docs/records/mutation/validate.md", "trace": "docs/records/mutation/trace.md"}


def junit_cases(path: Path) -> dict[tuple[str, str], str]:
    """(classname, test function without parameters) -> passed | failed | skipped, every case
    of one function folded."""
    out: dict[tuple[str, str], str] = {}
    if not path.is_file():
        return out
    for case in ET.parse(path).getroot().iter("testcase"):
        key = (case.get("classname", ""), case.get("name", "").split("[", 1)[0])
        status = ("failed" if case.find("failure") is not None or case.find("error") is not None
                  else "skipped" if case.find("skipped") is not None else "passed")
        # failed if any case failed; passed if any passed (a skipped case of a function that
        # also passes is the trace's to judge: an unreviewed skip is its defect); else skipped
        rank = {"failed": 2, "passed": 1, "skipped": 0}
        if key not in out or rank[status] > rank[out[key]]:
            out[key] = status
    return out


def tests_naming(root: Path, folder: str, word: str) -> list[str]:
    """Test functions under ``folder`` whose body holds the string constant ``word`` (a test
    that asserts a judgement names it): ``path::function``."""
    out = []
    for path in sorted((root / folder).rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                if any(isinstance(c, ast.Constant) and c.value == word for c in ast.walk(node)):
                    out.append(f"{path.relative_to(root).as_posix()}::{node.name}")
    return out


def result_of(test: str, cases: dict) -> str:
    """The folded result of ``path::function`` (or ``path::Class``, ``path::<module>``)."""
    path, _, name = test.partition("::")
    module = path[:-3].replace("/", ".")
    hits = [st for (cls, fn), st in cases.items()
            if (cls == module and (name in ("<module>", "*") or fn == name))
            or (cls == f"{module}.{name.split('.')[0]}" and ("." not in name or fn == name.split(".")[1]))]
    if not hits:
        return "not run"
    return "failed" if "failed" in hits else "skipped" if "skipped" in hits else "passed"


def mutation_figures(root: Path, rel: str) -> str | None:
    path = root / rel
    if not path.is_file():
        return None
    totals = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("Totals")]
    return f"{rel}: {totals[0]}" if totals else f"{rel} (no totals line)"


def build(root: Path, bundle: Path) -> dict:
    from sonnx import requirements
    from sonnx.qualification import configuration
    from sonnx.trace.matrix import JUDGEMENTS
    from sonnx.validate.report import ONNX_CATEGORIES
    from sonnx.validate.selection import all_rules
    trace = json.loads((bundle / "trace" / "trace.json").read_text(encoding="utf-8"))
    rows = {r["id"]: r for r in trace["requirements"]}
    cases = junit_cases(bundle / "junit.xml")
    registry = requirements.load_from(root)
    tors, left_out = [], []
    for rule in all_rules():
        req = registry.get(rule)
        if req is not None and req.families and set(req.families) <= VALUE_FAMILIES:
            left_out.append({"rule": rule, "why": "a requirement on computed values "
                             f"({', '.join(req.families)}): verified as a kernel requirement in the trace, no model check decides it"})
            continue
        row = rows.get(rule, {})
        tests = [t["test"] for t in row.get("test", []) if not t.get("tool") and t["test"].startswith(VALIDATE_TESTS)]
        if req is None:         # an onnx category: the tests that name it
            tests = [t for folder in ("tests/validate",) for t in tests_naming(root, folder, rule)]
        title = req.title if req else ONNX_CATEGORIES[rule][0]
        tors.append({
            "id": f"TOR-VALIDATE-{rule}", "tool": "sonnx validate / sonnx conform (check)",
            "text": f"For a model that violates {rule} ({title}), sonnx validate reports a finding naming {rule} "
                    f"and exits 1; for a model that meets it, no finding names {rule}.",
            "verification": [{"test": t, "result": result_of(t, cases)} for t in tests],
            "mutation": [f"CrossHair mutant {h['harness']}: {h['status']}" for h in row.get("crosshair", [])
                         if h.get("mode") == "mutant"] + [m for m in [mutation_figures(root, MUTATION_RECORDS["validate"])] if m],
        })
    for kind, meaning in JUDGEMENTS.items():
        tests = tests_naming(root, JUDGE_TESTS, kind)
        tors.append({
            "id": f"TOR-TRACE-{kind.replace(' ', '-')}", "tool": "sonnx trace",
            "text": f"sonnx trace judges a row '{kind}' when {meaning}; any defect makes it exit 1.",
            "verification": [{"test": t, "result": result_of(t, cases)} for t in tests],
            "mutation": [m for m in [mutation_figures(root, MUTATION_RECORDS["trace"])] if m],
        })
    for t in tors:
        t["verified"] = bool(t["verification"]) and all(v["result"] == "passed" for v in t["verification"])
    limitations = []
    for r in trace["requirements"]:
        limitations += [f"{r['id']}: not proved as stated: {c['part']} (see {c['gap']})" for c in r.get("claims", []) if c.get("gap")]
        limitations += [f"{r['id']}: reviewed gap, no {j['kind']} link: {j['justification']}" for j in r.get("justified", [])]
    limitations += [f"{t['id']}: " + ("no verification case" if not t["verification"] else
                    "verification not all passed: " + ", ".join(f"{v['test']} {v['result']}" for v in t["verification"]
                                                               if v["result"] != "passed"))
                    for t in tors if not t["verified"]]
    limitations += [f"{x['rule']}: no TOR of the validator: {x['why']}" for x in left_out]
    return {"schema": "sonnx-qualification/1",
            "configuration": {**configuration(root), "commit": trace.get("inputs", {}).get("commit"),
                              "trace_configuration": trace.get("inputs", {}).get("configuration")},
            "tors": tors, "left_out": left_out, "limitations": limitations}


def to_markdown(kit: dict) -> str:
    out = ["# Tool Operational Requirements (DO-330, TQL-5)", "",
           "Generated by tools/sonnx_dev/qualification.py from the bundle's trace and test results; "
           "see docs/qualification.md.", "", "## Configuration identity", ""]
    out += [f"- {k}: `{v}`" for k, v in kit["configuration"].items() if k != "trace_configuration"]
    n_ok = sum(t["verified"] for t in kit["tors"])
    out += ["", f"## Requirements ({len(kit['tors'])}, {n_ok} verified by passing cases)", ""]
    for t in kit["tors"]:
        out += [f"### {t['id']} ({'verified' if t['verified'] else 'NOT VERIFIED'})", "", t["text"], ""]
        out += [f"- test {v['test']}: {v['result']}" for v in t["verification"]] or ["- no verification case"]
        out += [f"- mutation: {m}" for m in t["mutation"]]
        out.append("")
    return "\n".join(out) + "\n"


def write(kit: dict, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tor.json").write_text(json.dumps({k: kit[k] for k in ("schema", "tors", "left_out")}, indent=1) + "\n",
                                     encoding="utf-8")
    (folder / "tor.md").write_text(to_markdown(kit), encoding="utf-8")
    (folder / "configuration.json").write_text(json.dumps(kit["configuration"], indent=1) + "\n", encoding="utf-8")
    (folder / "limitations.md").write_text(
        "# Known limitations\n\nGenerated from the trace (gaps, reviewed gaps) and the TORs; see docs/qualification.md.\n\n"
        + "".join("- " + re.sub(r"\s+", " ", x) + "\n" for x in kit["limitations"]), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sonnx_dev.qualification", description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", type=Path, default=ROOT / "build" / "evidence",
                    help="the evidence bundle (reads trace/trace.json and junit.xml, writes qualification/)")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout (its registry and tests)")
    args = ap.parse_args(argv)
    if not (args.bundle / "trace" / "trace.json").is_file():
        print(f"qualification: no {args.bundle / 'trace' / 'trace.json'}: run the trace step first", file=sys.stderr)
        return 2
    try:
        kit = build(args.root.resolve(), args.bundle)
    except (ValueError, KeyError, ET.ParseError) as exc:
        print(f"qualification: cannot read the bundle: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    write(kit, args.bundle / "qualification")
    bad = [t["id"] for t in kit["tors"] if not t["verified"]]
    print(f"qualification: {len(kit['tors'])} TORs, {len(kit['tors']) - len(bad)} verified; "
          f"{len(kit['limitations'])} known limitations; written to {args.bundle / 'qualification'}")
    if bad:
        print(f"qualification: not verified: {', '.join(bad)}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
