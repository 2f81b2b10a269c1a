"""`sonnx validate PATH... [--format text|json|sarif] [-o FILE] [--select/--ignore IDS]`.

Exit 0 when no model has a violation of the rules checked, 1 when any has one, 2 when a model
could not be read or the command line or configuration is wrong. With --exit-zero, violations
exit 0 too (an unreadable model still exits 2: nothing was judged)."""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from itertools import chain

from .. import colour
from ..output import config_input, error, to_file, write
from ..output_files import clash, model_inputs
from .api import validate
from .formats import FORMATS, help_base_problem
from .selection import SelectionError, not_checked as unchecked_rules
from ..text import shown_path

_write = write  # the name the validator's tests knew it by

PROG = "sonnx validate"


def exit_status(reports) -> int:
    """2 when a model could not be read, else 1 when any violation was found, else 0."""
    if any(r.status == "unreadable" for r in reports):
        return 2
    return 1 if any(r.findings for r in reports) else 0


MODEL_SUFFIXES = (".onnx", ".xml")   # ONNX models and OpenVINO IR


def _skip(name: str) -> bool:
    return name.startswith(".")   # .git, .venv, ...: never a user's models, as ruff excludes them


def models_in(paths: list[str]) -> list[str]:
    """``paths`` with each directory replaced by the *.onnx and *.xml (OpenVINO IR) files below
    it, sorted (the same order on every machine); hidden directories are not entered, symbolic links to
    directories are not followed. ValueError for a directory that holds no model."""
    out: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            out.append(path)
            continue
        found = []

        def unreadable(exc: OSError) -> None:   # a folder we cannot list must not pass unseen
            raise ValueError(f"cannot read the directory {shown_path(exc.filename)}: {exc.strerror}")

        for here, dirs, files in os.walk(path, onerror=unreadable):
            dirs[:] = [d for d in dirs if not _skip(d)]
            found += [os.path.join(here, f) for f in files
                      if f.endswith(MODEL_SUFFIXES) and not _skip(f) and os.path.isfile(os.path.join(here, f))]
        if not found:
            raise ValueError(f"no *.onnx file under the directory {shown_path(path)} (and no "
                             "*.xml OpenVINO IR)")
        out += sorted(found, key=lambda p: os.path.relpath(p, path).split(os.sep))
    return out


def _cmd_validate(args: argparse.Namespace) -> int:
    conf = args.config["validate"]
    fmt = args.format or conf.get("format", "text")
    exit_zero = args.exit_zero or conf.get("exit-zero", False)
    try:
        not_checked = unchecked_rules(args.select if args.select is not None else conf.get("select"),
                                        args.ignore if args.ignore is not None else conf.get("ignore"))
        paths = models_in(args.models)
        help_base = args.help_base or conf.get("help-base")
        why = help_base and help_base_problem(help_base)
        if why:
            raise ValueError(why)
    except (SelectionError, ValueError) as exc:
        error(PROG, str(exc))
        return 2
    to_stdout = not args.output_file or args.output_file == "-"
    if not to_stdout:   # before any model is judged: the report must not replace one of them
        inputs = chain(*map(model_inputs, paths), config_input(args))
        why = clash([("-o", args.output_file)], inputs)
        if why is not None:
            error(PROG, why)
            return 2
    reports = []
    for path in paths:
        r = validate(path)
        if not_checked:
            r = dataclasses.replace(r, findings=[f for f in r.findings if f.rule not in not_checked])
        reports.append(r)
    painted = to_stdout and colour.wanted(args.color, sys.stdout)
    rendered = FORMATS[fmt](reports, not_checked, colour=painted, verbosity=args.verbosity,
                            help_base=help_base)
    for r in reports:   # on stderr in every format, whatever the report says
        if r.error is not None:
            error(PROG, r.error)
    if to_stdout:
        write(sys.stdout, rendered)
    elif not to_file(PROG, args.output_file, rendered):
        return 2
    status = exit_status(reports)
    return 0 if status == 1 and exit_zero else status


def _ids(text: str) -> list[str]:
    return [part for part in text.split(",") if part.strip()]


def add_parser(subparsers, parents=()) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "validate", parents=list(parents), help="check ONNX models against the SONNX profile",
        description="Check ONNX models against the SONNX profile (static shapes, no broadcasting, "
                    "no sparse tensors, profile operators only). Exit status: 0 no violation of the "
                    "rules checked, 1 violations found, 2 a model could not be read or bad usage. "
                    "Options not given here are read from [tool.sonnx.validate] in the closest "
                    "pyproject.toml.")
    p.add_argument("models", nargs="+", metavar="PATH",
                   help="ONNX model or OpenVINO IR (.xml) file(s), or directories searched for *.onnx "
                        "and *.xml (sorted)")
    p.add_argument("--format", choices=sorted(FORMATS), default=None,
                   help="text (default, grouped by requirement), json (spec/validate-json-schema.md) "
                        "or sarif (SARIF 2.1.0)")
    p.add_argument("-o", "--output-file", metavar="FILE",
                   help="write the report to FILE instead of stdout (never coloured)")
    p.add_argument("--select", type=_ids, action="extend", metavar="IDS", default=None,
                   help="comma-separated requirement IDs or prefixes to check (e.g. MUL,PROF; "
                        "default: every rule); a model is only called conformant when every rule "
                        "is checked")
    p.add_argument("--ignore", type=_ids, action="extend", metavar="IDS", default=None,
                   help="comma-separated requirement IDs or prefixes not to check (both options "
                        "may be repeated)")
    p.add_argument("--help-base", metavar="URL", default=None,
                   help="SARIF: the browse URL of the sonnx repository's root (ending in '/'); each "
                        "rule's helpUri is then its spec page there")
    p.add_argument("--exit-zero", action="store_true", default=None,
                   help="exit 0 even when violations are found (an unreadable model still exits 2)")
    p.set_defaults(func=_cmd_validate)
    return p
