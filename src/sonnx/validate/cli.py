"""`sonnx validate MODEL... [--format text|json|sarif] [-o FILE]`.

Exit 0 when every model conforms, 1 when any violation was found, 2 when a model could not be
read or the command line is wrong."""
from __future__ import annotations

import argparse
import sys

from .api import validate
from .formats import FORMATS
from .text import neutral, shown_path


def _write(stream, text: str) -> None:
    """Write to a terminal or pipe whatever its encoding: a character it cannot encode (an
    ASCII locale, say) is written as an escape rather than raising."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
    else:
        stream.flush()
        buffer.write(text.encode(encoding, "backslashreplace"))
    stream.flush()


def exit_status(reports) -> int:
    """2 when a model could not be read, else 1 when any violation was found, else 0."""
    if any(r.status == "unreadable" for r in reports):
        return 2
    return 1 if any(r.findings for r in reports) else 0


def _cmd_validate(args: argparse.Namespace) -> int:
    reports = [validate(path) for path in args.models]
    rendered = FORMATS[args.format](reports)
    if args.output and args.output != "-":
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(rendered)
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or exc
            _write(sys.stderr, neutral(f"sonnx validate: cannot write {shown_path(args.output)}: "
                                       f"{reason}") + "\n")
            return 2
    else:
        _write(sys.stdout, rendered)
    if args.format != "text":  # text output already says why; JSON/SARIF go to a machine
        for r in reports:
            if r.error is not None:
                _write(sys.stderr, neutral(f"sonnx validate: {r.error}") + "\n")
    return exit_status(reports)


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
