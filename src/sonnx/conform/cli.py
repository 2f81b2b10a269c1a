"""`sonnx conform MODEL -o OUT [--dim NAME=SIZE ...] [--report FILE]`.

Exit 0: the rewritten model conforms and the bit-identity check passed; 1: findings remain, or
the check failed or could not run (OUT and the report are still written); 2: bad input (model
unreadable, bad --dim, OUT or the report not writable), one line on stderr."""
from __future__ import annotations

import argparse
import json
import sys
from itertools import chain

from ..output import config_input, error, write
from ..output_files import clash, model_inputs, replacing, unwritable
from ..validate.text import shown_path

PROG = "sonnx conform"


def _summary(report: dict, out: str, report_path: str, verbosity: int) -> str:
    lines = []
    if verbosity >= 0:
        for r in report["rewrites"]:
            node = r["node"]
            at = f"node {node['index']} ({node['name'] or node['op_type']}, {node['op_type']}): " if node else ""
            lines.append(f"rewrite [{r['requirement']}] {at}{r['detail']}")
    for f in report["findings"]:
        where = f.get("location") or ""
        lines.append(f"left [{f['rule']}] {where}: {f['message']}")
        lines.append(f"    why not rewritten: {f['why_not_rewritten']}")
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
    verdict = ("conforms" if report["conforms"] else
               f"does not conform ({len(report['findings'])} finding(s) left)")
    lines.append(f"{shown_path(out)}: {verdict}; {len(report['rewrites'])} rewrite(s); report "
                 f"{shown_path(report_path)}")
    return "\n".join(lines) + "\n"


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
        model, report = conform(args.model, dims, progress=progress)
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
    write(sys.stdout, _summary(report, args.output_file, report_path, args.verbosity))
    return report["exit_code"]


def add_parser(subparsers, parents=()) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "conform", parents=list(parents),
        help="rewrite a model into the profile where no output bit changes",
        description="Rewrite MODEL into the SONNX profile without changing a single output bit: "
                    "pin named symbolic dimensions (--dim), store constant operands that would be "
                    "broadcast (Gemm C, Mul/Add/Sub constants) at the full shape, turn Constant "
                    "nodes into initializers, remove stale value_info. Then validate the result "
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
    p.set_defaults(func=_cmd_conform)
    return p
