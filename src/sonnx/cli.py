"""The `sonnx` command line. Each sub-command lives in its own function; exit codes:
0 success, 1 findings (violations, trace defects), 2 bad usage or unreadable input."""
from __future__ import annotations

import argparse
import json
import sys
import textwrap

from . import requirements


def _cmd_requirements(args: argparse.Namespace) -> int:
    reqs = requirements.load()
    if args.format == "json":
        print(json.dumps([r.as_dict() for r in reqs.values()], indent=2))
        return 0
    for r in reqs.values():
        print(f"{r.id}  {r.title}  [{', '.join(r.verification)}]")
        print(textwrap.indent(textwrap.fill(" ".join(r.statement.split()), 88), "    "))
        print(f"    source: {r.source}")
    return 0


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse exits 2 on usage errors; keep that, add a hint
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sonnx", description="SONNX profile: requirements, validation, traceability")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("requirements", help="list the requirement registry")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=_cmd_requirements)
    # Sub-commands of other packages register themselves here (validate, trace).
    for module in ("sonnx.validate.cli", "sonnx.trace.cli"):
        try:
            mod = __import__(module, fromlist=["add_parser"])
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        mod.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # output piped into `head` and closed early: not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
