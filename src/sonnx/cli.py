"""The `sonnx` command line (also `python -m sonnx`). Each sub-command lives in its own
function; exit codes: 0 success, 1 findings (violations, trace defects), 2 bad usage, a bad
configuration or unreadable input. Errors go to stderr, reports to stdout or -o FILE."""
from __future__ import annotations

import argparse
import sys
import warnings

from . import __version__, colour
from .errors import SlowKernelWarning

# Start-up: this module imports only what every command needs; each sub-command's module (and
# with it numpy, onnx, the validator) is imported when that command is run (build_parser), so
# `sonnx --version` loads none of them and `sonnx validate` not the others' (tests/cli/test_startup.py)
COMMANDS = {"validate": "sonnx.validate.cli", "conform": "sonnx.conform.cli", "run": "sonnx.run.cli",
            "trace": "sonnx.trace.cli"}


def _cmd_requirements(args: argparse.Namespace) -> int:
    import json
    import textwrap
    from importlib import resources

    from . import requirements
    from .output import config_input, error, to_file, write
    from .output_files import clash
    reqs = requirements.load()
    if args.format == "json":
        text = json.dumps([r.as_dict() for r in reqs.values()], indent=2) + "\n"
    else:
        text = "".join(
            f"{r.id}  {r.title}  [{', '.join(r.verification)}]\n"
            + (textwrap.indent(textwrap.fill(" ".join(r.statement.split()), 88), "    ")
               + f"\n    source: {r.source}\n" if args.verbosity >= 0 else "")
            for r in reqs.values())
    if args.output_file and args.output_file != "-":
        # the registry it lists is an input: `-o src/sonnx/ops/mul.toml` must not replace it
        shipped = [("the registry", str(resources.files("sonnx").joinpath(rel)))
                   for rel in requirements.data_files()]
        why = clash([("-o", args.output_file)], [*shipped, *config_input(args)])
        if why is not None:
            error("sonnx requirements", why)
            return 2
        return 0 if to_file("sonnx requirements", args.output_file, text) else 2
    write(sys.stdout, text)
    return 0


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)   # `--output` must not pass for --output-file
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # argparse exits 2 on usage errors; keep that, add a hint
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def common_options() -> argparse.ArgumentParser:
    """The options every sub-command takes, as ruff's do: -q/-v, --color, --isolated."""
    common = argparse.ArgumentParser(add_help=False)
    loud = common.add_mutually_exclusive_group()
    loud.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=-1, default=0,
                      help="print less: only what does not conform, and errors")
    loud.add_argument("-v", "--verbose", dest="verbosity", action="store_const", const=1,
                      help="print more: every finding, timings")
    common.add_argument("--color", choices=colour.CHOICES, default=None,
                        help="colour the output: auto (default: on a terminal, unless NO_COLOR "
                             "is set), always, never")
    common.add_argument("--isolated", action="store_true",
                        help="ignore [tool.sonnx] in pyproject.toml")
    return common


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command`` (a sub-command's name) only that sub-command's module is
    imported (the others' parsers are not needed to parse its arguments)."""
    parser = _Parser(prog="sonnx", description="SONNX profile: requirements, validation, traceability. "
                     "Exit status: 0 success, 1 findings, 2 usage error or unreadable input.")
    parser.add_argument("--version", action="version", version=f"sonnx {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    common = common_options()
    p = sub.add_parser("requirements", parents=[common], help="list the requirement registry")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("-o", "--output-file", metavar="FILE", help="write the list to FILE instead of stdout")
    p.set_defaults(func=_cmd_requirements)
    # Sub-commands of other packages register themselves here (validate, conform, run, trace).
    for module in [COMMANDS[command]] if command in COMMANDS else COMMANDS.values():
        try:
            mod = __import__(module, fromlist=["add_parser"])
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        mod.add_parser(sub, parents=[common])
    return parser


def _notes_as_one_line(show):
    """warnings.showwarning that prints a SlowKernelWarning as its message alone, one line on
    stderr (it says what to install), and any other warning as ``show`` does."""
    def showwarning(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, SlowKernelWarning):
            from .output import write
            write(sys.stderr, f"{message}\n")
        else:
            show(message, category, filename, lineno, file, line)
    return showwarning


def main(argv: list[str] | None = None) -> int:
    with warnings.catch_warnings():      # restores showwarning when the command is done
        warnings.showwarning = _notes_as_one_line(warnings.showwarning)
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--version"]:            # before any sub-command's module is imported
        sys.stdout.write(f"sonnx {__version__}\n")
        return 0
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    from pathlib import Path

    from . import config
    from .output import error
    try:
        path, tables = (None, {t: {} for t in config.SCHEMA}) if args.isolated else config.settings(Path.cwd())
    except config.ConfigError as exc:
        error("sonnx", str(exc))
        return 2
    except OSError as exc:       # the current directory was removed under us, say
        error("sonnx", f"cannot look for pyproject.toml: {exc.strerror or exc}")
        return 2
    args.config = tables
    args.config_path = path
    if args.color is None:
        args.color = tables[""].get("color", "auto")
    try:
        return args.func(args)
    except BrokenPipeError:  # output piped into `head` and closed early: not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
