"""`sonnx run MODEL --input NAME=FILE ... [--mode exact|fast] [--engine default|proved] [-o DIR [--hex]] [--compare onnxruntime [--criterion C]]`.

Exit 0: the model ran (and with --compare, onnxruntime is within the profile's bounds on every
node); 1: --compare found a node outside its bound or could not compare one; 2: the model does
not conform or cannot be read, an input does not match the model, an output cannot be written,
or bad usage. Results go to stdout (or -o DIR), progress and errors to stderr."""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from itertools import chain

from .. import __version__, fpenv, model_files
from ..output import config_input, error, write
from ..output_files import clash, model_inputs, replacing
from ..text import neutral, shown_path

PROG = "sonnx run"


def add_parser(subparsers, parents=()) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "run", parents=list(parents), help="execute a conformant model with sonnx's kernels",
        description="Execute a model that conforms to the SONNX profile node by node with sonnx's "
                    "kernels (exact mode: the profile's reference results, bit for bit). Inputs: .npy, "
                    ".npz or hex-float text (.txt/.hex, one value per line). Exit status: 0 ran (and "
                    "within bounds with --compare), 1 --compare out of bounds or not compared, 2 the model "
                    "does not conform or cannot be read, bad input or usage.")
    p.add_argument("model", metavar="MODEL", help="the ONNX model")
    p.add_argument("--input", dest="inputs", action="append", default=[], metavar="NAME=FILE",
                   help="an input: NAME=FILE.npy, NAME=FILE.npz, NAME=FILE.txt|.hex (hex floats, one "
                        "per line), or FILE.npz whose keys are input names (repeat for each input)")
    p.add_argument("--mode", choices=("exact", "fast"), default="exact",
                   help="exact (default): bit-exact reference results; fast: the matrix operators through "
                        "BLAS, within their stated error bound")
    p.add_argument("--engine", choices=("default", "proved"), default="default",
                   help="proved: every node on a C kernel extracted from its Why3 proof (exact mode; "
                        "a node no proved kernel covers is refused, exit 2, with what is covered); "
                        "run.json then names each node's kernel and proofs")
    p.add_argument("-o", "--output-dir", metavar="DIR",
                   help="write NAME.npy per output and run.json into DIR (created; its parent must "
                        "exist)")
    p.add_argument("--hex", action="store_true",
                   help="with -o: also write NAME.hex per output, hex-float text (one value per line, "
                        "every bit but a NaN's payload; slower and larger than .npy)")
    p.add_argument("--compare", choices=("onnxruntime",), default=None,
                   help="also run onnxruntime and check it node by node against the profile's bounds")
    p.add_argument("--criterion", default=None, metavar="C",
                   help="with --compare: the replication criterion, bounds (default: every node within its "
                        "operator's bound), exact (outputs bit for bit), ulp:N or abs:EPS (outputs within N ULP "
                        "or EPS); with -o, compare.json and compare.html are the replication report")
    p.set_defaults(func=_cmd_run)
    return p


def _progress(verbosity: int):
    """Per-node progress on stderr: every node with -v, else about one line a second once a run
    takes longer than that (a model with many nodes); and inside a long node's bound check
    (--compare), a line at each tenth of it (``percent``), whatever the time."""
    last = [time.perf_counter()]

    def show(i, n, node, seconds, percent=None):
        now = time.perf_counter()
        what = "node" if seconds is not None else "onnxruntime check of node"   # None: comparison.py
        where = f"{what} {i + 1}/{n} {neutral(node.op_type)} {neutral(node.name)}"
        if percent is not None:
            last[0] = now
            write(sys.stderr, f"{PROG}: {where}: bound checked for {percent}%\n")
        elif verbosity > 0 or now - last[0] >= 1.0:
            last[0] = now
            write(sys.stderr, f"{PROG}: {where}\n")
    return show if verbosity >= 0 else None


def _file_sha256(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def _planned(args: argparse.Namespace, loaded, io) -> list[tuple[str, str]]:
    """Every file the run will write into -o DIR, named for the error message."""
    files = []
    for name, paths in io.output_files(args.output_dir, [o.name for o in loaded.model.graph.output],
                                       args.hex).items():
        files += [(f"the file of output {neutral(name)}", p) for p in paths]
    files.append(("the run summary", os.path.join(args.output_dir, io.RUN_JSON)))
    if args.compare:
        files.append(("the comparison", os.path.join(args.output_dir, io.COMPARE_JSON)))
        files.append(("the replication page", os.path.join(args.output_dir, io.COMPARE_HTML)))
    return files


def _given_files(inputs: list[str]):
    """Every file an --input argument may name: the text after each '=' and the whole argument
    (ONNX names and paths may both hold '='). More than read_inputs opens, never less."""
    for arg in inputs:
        parts = arg.split("=")
        for k in range(len(parts)):
            yield "--input", "=".join(parts[k:])


# the whole command in the default floating-point environment: the hex-float reader and writer
# convert between float types too (under FTZ/DAZ a subnormal would read or print as 0)
@fpenv.guarded
def _cmd_run(args: argparse.Namespace) -> int:
    from . import io
    from .executor import RunError
    from .session import Session
    if args.hex and not args.output_dir:
        error(PROG, "--hex names the format of the files of -o DIR; give -o DIR too")
        return 2
    from . import replication
    if args.criterion is not None and not args.compare:
        error(PROG, "--criterion is the criterion of --compare; give --compare onnxruntime too")
        return 2
    try:
        criterion = replication.parse(args.criterion or "bounds")
    except replication.CriterionError as exc:
        error(PROG, str(exc))
        return 2
    if args.output_dir:
        parent = os.path.dirname(os.path.abspath(args.output_dir))
        if os.path.exists(args.output_dir) and not os.path.isdir(args.output_dir):
            error(PROG, f"-o {shown_path(args.output_dir)}: is a file, not a directory; name a directory")
            return 2
        if not os.path.isdir(parent):
            error(PROG, f"-o {shown_path(args.output_dir)}: its parent directory {shown_path(parent)} does "
                        "not exist; create it first")
            return 2
    result = None
    try:
        if args.engine == "proved" and args.mode != "exact":
            error(PROG, "--engine proved runs exact mode only (the proofs are of the exact results); "
                        "drop --mode fast")
            return 2
        session = Session(args.model, args.mode, args.engine)      # validated and planned once
        loaded = session.loaded
        if args.output_dir:   # before the run: no file of -o DIR may be an input
            why = clash(_planned(args, loaded, io),
                        chain(model_inputs(args.model), _given_files(args.inputs), config_input(args)))
            if why is not None:
                error(PROG, why)
                return 2
        feeds = io.read_inputs(args.inputs, loaded.inputs)
        if args.compare:
            from .comparison import CompareError, compare
            try:
                result = compare(session, feeds, args.mode, _progress(args.verbosity))
            except CompareError as exc:
                error(PROG, str(exc))
                return 2
            outputs = result.sonnx_outputs
        else:
            outputs = session.evaluate(feeds, _progress(args.verbosity))
    except RunError as exc:
        for f in exc.findings:
            where = f" ({f.location})" if f.location != "model" else ""
            error(PROG, f"[{f.rule}] {f.message}{where}")
        error(PROG, str(exc))
        return 2
    except io.InputError as exc:
        error(PROG, str(exc))
        return 2
    files = model_files.identity(args.model)
    summary = {"schema": "sonnx-run/1", "sonnx": __version__, "model": shown_path(args.model),
               "model_sha256": _file_sha256(args.model),
               "model_external_data": files["external_data"], "mode": args.mode,
               "engine": args.engine, "inputs": io.describe(feeds), "outputs": io.describe(outputs)}
    if args.engine == "proved":
        summary["proved_kernels"] = session.proofs()
    rep = None
    if result is not None:
        import onnxruntime
        rep = replication.report(result, criterion, model=shown_path(args.model), model_files=files,
                                 inputs=summary["inputs"], sonnx_version=__version__,
                                 reference={"runtime": "onnxruntime", "version": onnxruntime.__version__})
    if args.output_dir:
        try:
            written = io.write_outputs(args.output_dir, outputs, summary, args.hex)
            if rep is not None:
                written.append(os.path.join(args.output_dir, io.COMPARE_JSON))
                with replacing(written[-1], "w", encoding="utf-8") as fh:
                    json.dump(rep, fh, indent=2)
                    fh.write("\n")
                written.append(os.path.join(args.output_dir, io.COMPARE_HTML))
                with replacing(written[-1], "w", encoding="utf-8") as fh:
                    fh.write(replication.page(rep))
        except OSError as exc:
            error(PROG, f"cannot write to {shown_path(args.output_dir)}: {exc.strerror or exc}")
            return 2
        if args.verbosity > 0:
            write(sys.stderr, "".join(f"{PROG}: wrote {shown_path(p)}\n" for p in written))
    if args.verbosity >= 0:
        write(sys.stdout, "".join(
            f"{neutral(name)}  {d['dtype']} {tuple(d['shape'])}  sha256 {d['sha256']}\n"
            for name, d in summary["outputs"].items()) + f"mode {args.mode}"
            + (", engine proved (every node on a kernel extracted from its proof)" if args.engine == "proved" else "") + "\n")
    if result is not None:
        return _report_comparison(args, result, rep)
    return 0


def _report_comparison(args, result, rep) -> int:
    lines = []
    for o in result.outputs:
        ulp = "NaN positions differ" if o.max_ulp is None else f"max {o.max_ulp} ulp"
        lines.append(f"{neutral(o.name)}  {o.dtype}: onnxruntime vs sonnx {result.mode}: {ulp}, "
                     f"max |diff| {o.max_abs:.6g}" + (f", {o.nan_mismatch} NaN mismatch(es)" if o.nan_mismatch else ""))
    for n in result.nodes:
        if n.status != "within" or args.verbosity > 0:
            lines.append(f"node {n.index} {neutral(n.name or n.op_type)} ({n.op_type}): {n.status}"
                         + (f": {neutral(n.detail)}" if n.detail else ""))
    checked = sum(n.status == "within" for n in result.nodes)
    verdict = ("within the profile's bounds" if result.within_bounds else "NOT shown within the profile's bounds")
    lines.append(f"onnxruntime: {checked} of {len(result.nodes)} nodes within their bounds; {verdict}")
    crit = rep["criterion"]
    if crit["name"] != "bounds":
        missed = [o["name"] for o in rep["outputs"] if o["verdict"] != "met"]
        lines.append(f"criterion {crit['name']}{'' if crit['epsilon'] is None else ':' + format(crit['epsilon'], 'g')}: "
                     + (f"not met by {', '.join(neutral(n) for n in missed)}" if missed else "met by every output"))
    lines.append(f"replication: {rep['verdict']} ({crit['statement']})")
    write(sys.stdout, "".join(line + "\n" for line in lines))
    return 0 if rep["verdict"] == "replicated" else 1
