"""`sonnx conform MODEL -o OUT [--dim NAME=SIZE ...] [--report FILE] [--no-check]`.

Exit 0: the rewritten model conforms and the bit-identity check passed; 1: findings remain, or
the check failed, could not run or was skipped (--no-check), and the summary then never says
"conforms" (OUT and the report are still written); 2: bad input (model unreadable, bad --dim,
OUT or the report not writable), one line on stderr."""
from __future__ import annotations

import argparse
import json
import sys
from itertools import chain

from ..output import config_input, error, write
from ..output_files import clash, model_inputs, replacing, unwritable
from ..text import neutral, shown_path

PROG = "sonnx conform"


WHERES_SHOWN = 4   # locations listed per rule in the short form; -v lists every finding


def _where(f: dict) -> str:
    """A finding (as the report holds it) located as `sonnx validate` shows it."""
    from ..validate.report import Finding
    return Finding(**{k: f[k] for k in ("rule", "message", "graph", "node_index", "node_name",
                                        "op_type", "domain", "op_version", "tensor")}).where


def _left_lines(findings: list[dict], verbosity: int) -> list[str]:
    """What is left. Short form: one line per rule (where, the first few places; why, the reason
    of its first finding); -v: every finding with its message and its reason."""
    if verbosity > 0:
        out = []
        for f in findings:
            out.append(f"left [{f['rule']}] {f.get('location') or ''}: {f['message']}")
            out.append(f"    why not rewritten: {f['why_not_rewritten']}")
        return out
    by_rule: dict[str, list[dict]] = {}
    for f in findings:
        by_rule.setdefault(f["rule"], []).append(f)
    out = []
    for rule, found in by_rule.items():
        wheres = ", ".join(_where(f) for f in found[:WHERES_SHOWN])
        more = f" and {len(found) - WHERES_SHOWN} more" if len(found) > WHERES_SHOWN else ""
        why = found[0]["why_not_rewritten"]
        differs = " (the first's; -v gives each)" if any(f["why_not_rewritten"] != why for f in found) else ""
        out.append(f"left [{rule}] {len(found)} at {wheres}{more}: {why}{differs}")
    return out


def _summary(report: dict, out: str, report_path: str, verbosity: int,
             unpinned: list[str] = ()) -> str:
    lines = []
    if verbosity >= 0:
        for r in report["rewrites"]:
            node = r["node"]
            at = f"node {node['index']} ({node['name'] or node['op_type']}, {node['op_type']}): " if node else ""
            lines.append(f"rewrite [{r['requirement']}] {at}{r['detail']}")
    lines += [neutral(line) for line in _left_lines(report["findings"], verbosity)]
    c = report["check"]
    if c["status"] == "passed":
        outs = ", ".join(f"{o['name']} ({o['elements']} values)" for o in c["outputs"])
        lines.append(f"bit-identity check passed: {c['runtime']}, seeds {c['seeds']}, every bit "
                     f"of {outs} equal")
    elif c["status"] == "failed":
        lines.append(f"bit-identity check FAILED: {c.get('reason', '')}")
        for o in c["outputs"]:
            for s in o.get("by_seed", []):
                if not s["identical"] and "first_difference" in s:
                    d = s["first_difference"]
                    lines.append(f"    {o['name']} seed {s['seed']}: {s['differing']} values differ, "
                                 f"first at {d['index']}: {d['original']} vs {d['rewritten']}")
                    break
    else:
        lines.append(f"bit-identity check NOT CHECKED: {c.get('reason', '')}")
    if report["validate"]["error"]:
        lines.append(f"the validator could not judge the rewritten model: {report['validate']['error']}")
    lines.append(f"{shown_path(out)}: {verdict(report)}; {len(report['rewrites'])} rewrite(s); "
                 f"report {shown_path(report_path)}")
    step = _next_step(report, out, unpinned)
    if step and verbosity >= 0:
        lines.append(step)
    return "\n".join(lines) + "\n"


def _next_step(report: dict, out: str, unpinned: list[str]) -> str | None:
    """The last line: the one thing to do now."""
    if unpinned:
        pins = " ".join(f"--dim {n}=SIZE" for n in unpinned)
        return neutral(f"next: pin {', '.join(unpinned)}: run conform again with {pins}")
    if report["findings"] or report["validate"]["error"]:
        return "next: the model needs a change conform cannot make (each left line says why)"
    status = report["check"]["status"]
    if status == "not checked":
        return ("next: run conform again without --no-check, with onnxruntime installed (pip "
                "install \".[conform]\" from a clone), to compare every output bit")
    if status == "passed":
        return neutral(f"next: sonnx validate {shown_path(out)}, then sonnx run {shown_path(out)} "
                       "--input NAME=FILE")
    return None


def verdict(report: dict) -> str:
    """The summary's verdict. "conforms" only when the rewritten model has no finding AND the
    bit-identity check passed: a rewrite whose bits were not compared is "not checked"."""
    left = len(report["findings"])
    if left or report["validate"]["error"]:
        return f"does not conform ({left} finding(s) left)"
    status = report["check"]["status"]
    if status == "passed":
        return "conforms"
    if status == "failed":
        return "rewritten model has no finding, but its bits differ from the original's: do not use it"
    return "not checked: the rewritten model has no finding, but its bit identity with the original was not checked"


def _cmd_conform(args: argparse.Namespace) -> int:
    import onnx

    from .api import conform
    from .rewrite import ConformError, parse_dims

    report_path = args.report or args.output_file + ".conform.json"
    try:
        dims = parse_dims(args.dim)
    except ConformError as exc:
        error(PROG, str(exc))
        return 2
    outputs = [("-o", args.output_file), ("--report" if args.report else "the report", report_path)]
    # before any work: each output writable, and none of them the model, its weights, the
    # configuration or the other output
    why = (unwritable(args.output_file, "output model") or unwritable(report_path, "report")
           or clash(outputs, chain(model_inputs(args.model, "the input model"), config_input(args))))
    if why is not None:
        error(PROG, why)
        return 2
    progress = None
    if args.verbosity >= 0:
        def progress(msg: str) -> None:
            write(sys.stderr, f"{PROG}: {msg}\n")
    try:
        model, report = conform(args.model, dims, check=not args.no_check, progress=progress)
    except ConformError as exc:
        error(PROG, str(exc))
        return 2
    except Exception as exc:   # a defect of ours must not hide behind a traceback
        error(PROG, f"{shown_path(args.model)}: could not conform ({type(exc).__name__}: "
                    f"{' '.join(str(exc).split())[:300]}); please report it")
        return 2
    report = {"schema": report["schema"], "model": report["model"],
              "output": shown_path(args.output_file), "report": shown_path(report_path),
              **{k: v for k, v in report.items() if k not in ("schema", "model")}}
    try:
        with replacing(args.output_file, "wb") as fh:
            onnx.save(model, fh)
        with replacing(report_path, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2, ensure_ascii=True, allow_nan=False, default=str)
            fh.write("\n")
    except (OSError, ValueError) as exc:
        error(PROG, f"cannot write {shown_path(args.output_file)} or its report: "
                    f"{getattr(exc, 'strerror', None) or exc}")
        return 2
    from .rewrite import symbolic_names
    write(sys.stdout, _summary(report, args.output_file, report_path, args.verbosity,
                               symbolic_names(model.graph)))
    return report["exit_code"]


def add_parser(subparsers, parents=()) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "conform", parents=list(parents),
        help="rewrite a model into the profile where no output bit changes",
        description="Rewrite MODEL into the SONNX profile without changing a single output bit: "
                    "pin named symbolic dimensions (--dim), store constant operands that would be "
                    "broadcast (the operands each operator's record names) at the full shape, turn Constant "
                    "nodes into initializers, make an IR < 4 model's initializer inputs constants "
                    "(IR raised to 4), remove Identity and inference-mode Dropout, remove stale "
                    "value_info. Then validate the result "
                    "and run both models through onnxruntime on the same seeded inputs, comparing "
                    "every output bit. Exit status: 0 conforms and bit-identical, 1 findings left "
                    "or the check failed or could not run (OUT is still written), 2 bad input.")
    p.add_argument("model", metavar="MODEL", help="the ONNX model to rewrite")
    p.add_argument("-o", "--output-file", metavar="OUT", required=True,
                   help="where to write the rewritten model")
    p.add_argument("--dim", action="append", metavar="NAME=SIZE", default=[],
                   help="pin the named symbolic dimension NAME to SIZE (repeatable; e.g. --dim "
                        "batch=2); unnamed dynamic dimensions cannot be pinned")
    p.add_argument("--report", metavar="FILE", default=None,
                   help="write the JSON report (schema sonnx-conform-report/1) to FILE "
                        "(default: OUT.conform.json)")
    p.add_argument("--no-check", action="store_true",
                   help="skip the bit-identity check through onnxruntime (the report then says "
                        "\"not checked\", never \"conforms\", and the exit status is 1)")
    p.set_defaults(func=_cmd_conform)
    return p
