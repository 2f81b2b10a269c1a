"""`sonnx validate MODEL... [--format text|json|sarif] [-o FILE]`.

Exit 0 when every model conforms, 1 when any violation was found, 2 when a model could not be
read or the command line is wrong."""
from __future__ import annotations

import argparse
import sys

from .api import validate
from .formats import FORMATS


def _cmd_validate(args: argparse.Namespace) -> int:
    reports = [validate(path) for path in args.models]
    text = FORMATS[args.format](reports)
    if args.output and args.output != "-":
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            print(f"sonnx validate: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    if any(r.status == "unreadable" for r in reports):
        for r in reports:
            if r.error is not None and args.format != "text":
                print(f"sonnx validate: {r.error}", file=sys.stderr)
        return 2
    return 1 if any(r.findings for r in reports) else 0


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "validate", help="check ONNX models against the SONNX profile",
        description="Check ONNX models against the SONNX profile (Mul and Gemm only, static "
                    "shapes, no broadcasting, no sparse tensors). Exit status: 0 every model "
                    "conforms, 1 violations found, 2 a model could not be read or bad usage.")
    p.add_argument("models", nargs="+", metavar="MODEL", help="ONNX model file(s)")
    p.add_argument("--format", choices=sorted(FORMATS), default="text",
                   help="text (default, grouped by requirement), json (spec/validate-json-schema.md) "
                        "or sarif (SARIF 2.1.0)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    p.set_defaults(func=_cmd_validate)
    return p
