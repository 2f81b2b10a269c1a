"""`sonnx trace`: the traceability matrix, its reports, and review of suspect requirements.

Read-only over a checkout (--root, default: the sonnx source tree holding the current
directory) and an evidence folder (--evidence, default ROOT/build/evidence), so that it runs
from an installed wheel as well as from the checkout; only --accept writes (the baseline).
With no evidence at all (a fresh clone), one line says what to run, exit 2."""
from __future__ import annotations

import argparse
import sys
from itertools import chain
from pathlib import Path

from .. import colour
from ..output import config_input, to_file, write
from ..output_files import clash, replacing
from . import baseline, inputs, links, matrix, report


def _is_checkout(d: Path) -> bool:
    from ..requirements import PROFILE_DATA
    return (d / "src" / "sonnx" / PROFILE_DATA).is_file()


def _root(given: str | None) -> Path:
    """The repository whose sources are traced: --root, or the current directory or one above it."""
    if given is not None:
        root = Path(given).resolve()
        if not _is_checkout(root):
            raise FileNotFoundError(f"--root {given} is not a sonnx checkout "
                                    "(src/sonnx/data/profile.toml missing)")
        return root
    here = Path.cwd().resolve()
    for d in (here, *here.parents):
        if _is_checkout(d):
            return d
    raise FileNotFoundError("no sonnx checkout here or above (src/sonnx/data/profile.toml not found); "
                            "give one with --root DIR and its evidence with --evidence DIR")


def _outputs(args: argparse.Namespace, formats: list[str]) -> list[tuple[str, str]]:
    """The report files this run writes (none for stdout)."""
    if args.output_dir:
        return [("--output-dir", str(Path(args.output_dir) / name)) for f in formats for name in report.file_names(f)]
    return [("-o", args.output_file)] if args.output_file and args.output_file != "-" else []


def run(args: argparse.Namespace) -> int:
    try:
        root = _root(args.root)
    except FileNotFoundError as exc:
        print(f"sonnx trace: {exc}", file=sys.stderr)
        return 2
    evidence = Path(args.evidence) if args.evidence else root / "build" / "evidence"
    if args.evidence and not evidence.is_dir():
        print(f"sonnx trace: --evidence {args.evidence} is not a directory", file=sys.stderr)
        return 2
    # a file named on the command line must exist; one taken from the folder may be missing
    # (the matrix then says which evidence is absent)
    files = {option: Path(getattr(args, option) or evidence / f"{option}.{ext}")
             for option, ext in (("junit", "xml"), ("crosshair", "json"), ("proofs", "json"))}
    if args.accept:
        from .. import requirements
        try:
            reg = requirements.load_from(root)
            texts = baseline.site_texts(root, reg, links.collect(root))
            done = baseline.accept(root, texts, args.accept)
        except ValueError as exc:
            print(f"sonnx trace: {exc}", file=sys.stderr)
            return 2
        except KeyError as exc:
            print(f"sonnx trace: unknown requirement ID(s): {exc}", file=sys.stderr)
            return 2
        print(f"accepted the current fingerprints of {', '.join(done)} into {baseline.BASELINE}")
        return 0
    formats = [f for f in (args.format or args.config["trace"].get("format", "md")).split(",") if f]
    bad = [f for f in formats if f not in report.FORMATS]
    if bad or not formats:
        print(f"sonnx trace: unknown format(s) {bad}; choose from {', '.join(report.FORMATS)}", file=sys.stderr)
        return 2
    several = [f for f in formats if f in report.MULTI_FILE]
    if several and not args.output_dir:
        print(f"sonnx trace: --format {several[0]} writes {len(report.file_names(several[0]))} files "
              f"({', '.join(report.file_names(several[0]))}): give --output-dir DIR", file=sys.stderr)
        return 2
    if args.output_file and len(formats) != 1:
        print(f"sonnx trace: -o/--output-file takes one format, not {len(formats)}; "
              "use --output-dir DIR for several", file=sys.stderr)
        return 2
    from .. import requirements
    try:
        reg = requirements.load_from(root)
    except ValueError as exc:
        print(f"sonnx trace: {exc}", file=sys.stderr)
        return 2
    given = {"--junit": args.junit, "--crosshair": args.crosshair, "--proofs": args.proofs}
    missing = [f"{opt} {path}" for opt, path in given.items() if path and not Path(path).exists()]
    if missing:
        print(f"sonnx trace: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    # before any work: no report may replace the evidence or a file of the checkout it judges
    outputs = _outputs(args, formats)
    why = clash(outputs, chain(((f"the {kind} evidence", str(p)) for kind, p in files.items()),
                               (("a file of the checkout", str(p)) for p in inputs.all_inputs(root)),
                               config_input(args)))
    if why is not None:
        print(f"sonnx trace: {why}", file=sys.stderr)
        return 2
    if not any(p.exists() for p in files.values()):
        # nothing to judge: a matrix would call every linked test "not run" (a thousand lines
        # of defects that only say the evidence is missing)
        print(f"sonnx trace: no evidence found in {evidence} (no junit.xml, crosshair.json or "
              "proofs.json): run tools/evidence, or pass --evidence DIR", file=sys.stderr)
        return 2
    try:
        m = matrix.build(root, registry=reg, junit_path=files["junit"],
                         crosshair_path=files["crosshair"], proofs_path=files["proofs"])
    except matrix.EvidenceError as exc:
        print(f"sonnx trace: {exc}", file=sys.stderr)
        return 2
    if args.output_dir:
        out = Path(args.output_dir)
        try:
            out.mkdir(parents=True, exist_ok=True)
            for f in formats:
                for name, text in report.files(f, m).items():
                    with replacing(str(out / name), "w", encoding="utf-8") as fh:
                        fh.write(text)
        except OSError as exc:
            print(f"sonnx trace: cannot write to {out}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        if args.verbosity >= 0:
            print(f"wrote {', '.join(n for f in formats for n in report.file_names(f))} to {out}", file=sys.stderr)
    elif args.output_file and args.output_file != "-":
        if not to_file("sonnx trace", args.output_file, report.RENDERERS[formats[0]][0](m)):
            return 2
    else:
        for f in formats:
            write(sys.stdout, report.RENDERERS[f][0](m))
    s = m.as_dict()["summary"]
    on = colour.wanted(args.color, sys.stderr)
    verdict = colour.paint(f"{s['defect']} with defects", "bad" if s["defect"] else "good", on)
    partial = colour.paint(f"{s['partial']} partial", "bad" if s["partial"] and args.no_partial else "note", on)
    print(f"trace: {s['requirements']} requirements, {s['ok']} covered, {partial}, {s['suspect']} suspect, "
          f"{verdict}", file=sys.stderr)
    if args.verbosity >= 0:
        for d in m.defects:
            print(f"  {d.kind}: {d.requirement}: {d.detail}", file=sys.stderr)
        for r in m.rows:
            for c in r.claims:
                if c["gap"]:
                    print(f"  gap: {r.id}: not proved as stated: {c['part']} (see {c['gap']})", file=sys.stderr)
    # a declared, justified gap is not a defect; --no-partial makes it fail the run as well
    return 1 if m.defects or (args.no_partial and s["partial"]) else 0


def add_parser(sub, parents=()) -> None:
    p = sub.add_parser("trace", parents=list(parents),
                       help="traceability matrix: requirements -> spec, proofs, code, tests",
                       description="Traceability matrix of a sonnx checkout and its evidence. Exit "
                                   "status: 0 no defect (partial rows allowed unless --no-partial), "
                                   "1 defects, 2 bad usage or unreadable evidence.")
    p.add_argument("--root", metavar="DIR",
                   help="the sonnx checkout to trace (default: the one holding the current directory)")
    p.add_argument("--evidence", metavar="DIR",
                   help="the evidence folder: junit.xml, crosshair.json, proofs.json (default ROOT/build/evidence)")
    p.add_argument("--format", default=None,
                   help="comma-separated: html, md, json, csv, reqif, lobster (default md; reqif is ReqIF 1.2 "
                        "for DOORS, Polarion, codebeamer or StrictDoc; lobster writes LOBSTER's input files and "
                        "lobster.conf, with --output-dir)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-o", "--output-file", metavar="FILE",
                     help="write the report (one format) to FILE instead of stdout")
    out.add_argument("--output-dir", metavar="DIR",
                     help="write each format's report (trace.html, trace.md, ...) into DIR")
    p.add_argument("--junit", help="JUnit XML of the test run (default EVIDENCE/junit.xml)")
    p.add_argument("--crosshair", help="CrossHair summary (default EVIDENCE/crosshair.json)")
    p.add_argument("--proofs", help="proof replay summary (default EVIDENCE/proofs.json; "
                                    "without it, the status recorded in the Why3 sessions)")
    p.add_argument("--no-partial", action="store_true",
                   help="exit 1 also when a requirement is partial (a part of its statement not proved, "
                        "gap declared in its [[claim]] entries)")
    p.add_argument("--accept", nargs="+", metavar="ID",
                   help="record the current fingerprints of these requirements (or 'all') as reviewed")
    p.set_defaults(func=run)
