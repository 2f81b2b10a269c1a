"""`sonnx trace`: the traceability matrix, its reports, and review of suspect requirements."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import baseline, links, matrix, report


def _root() -> Path:
    """The repository whose sources are traced: the current directory or one above it."""
    here = Path.cwd().resolve()
    for d in (here, *here.parents):
        if (d / "spec" / "requirements.toml").exists() and (d / "src" / "sonnx").exists():
            return d
    raise FileNotFoundError("sonnx trace runs inside a sonnx source tree (spec/requirements.toml not found)")


def run(args: argparse.Namespace) -> int:
    try:
        root = _root()
    except FileNotFoundError as exc:
        print(f"sonnx trace: {exc}", file=sys.stderr)
        return 2
    if args.accept:
        from .. import requirements
        reg = requirements.parse((root / "spec" / "requirements.toml").read_text(encoding="utf-8"))
        try:
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
    formats = [f for f in args.format.split(",") if f]
    bad = [f for f in formats if f not in report.RENDERERS]
    if bad:
        print(f"sonnx trace: unknown format(s) {bad}; choose from html, md, json, csv", file=sys.stderr)
        return 2
    from .. import requirements
    reg = requirements.parse((root / "spec" / "requirements.toml").read_text(encoding="utf-8"))
    given = {"--junit": args.junit, "--crosshair": args.crosshair, "--proofs": args.proofs}
    missing = [f"{opt} {path}" for opt, path in given.items() if path and not Path(path).exists()]
    if missing:
        print(f"sonnx trace: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        m = matrix.build(root, registry=reg, junit_path=Path(args.junit) if args.junit else None,
                         crosshair_path=Path(args.crosshair) if args.crosshair else None,
                         proofs_path=Path(args.proofs) if args.proofs else None)
    except matrix.EvidenceError as exc:
        print(f"sonnx trace: {exc}", file=sys.stderr)
        return 2
    if args.output:
        out = Path(args.output)
        out.mkdir(parents=True, exist_ok=True)
        for f in formats:
            render, name = report.RENDERERS[f]
            (out / name).write_text(render(m), encoding="utf-8")
        print(f"wrote {', '.join(report.RENDERERS[f][1] for f in formats)} to {out}")
    else:
        for f in formats:
            sys.stdout.write(report.RENDERERS[f][0](m))
    s = m.as_dict()["summary"]
    print(f"trace: {s['requirements']} requirements, {s['ok']} covered, {s['suspect']} suspect, "
          f"{s['defect']} with defects", file=sys.stderr)
    for d in m.defects:
        print(f"  {d.kind}: {d.requirement}: {d.detail}", file=sys.stderr)
    return 1 if m.defects else 0


def add_parser(sub) -> None:
    p = sub.add_parser("trace", help="traceability matrix: requirements -> spec, proofs, code, tests")
    p.add_argument("--format", default="md", help="comma-separated: html, md, json, csv (default md)")
    p.add_argument("-o", "--output", help="directory for the reports (default: print to stdout)")
    p.add_argument("--junit", help="JUnit XML of the test run (default build/evidence/junit.xml)")
    p.add_argument("--crosshair", help="CrossHair summary (default build/evidence/crosshair.json)")
    p.add_argument("--proofs", help="proof replay summary (default build/evidence/proofs.json; "
                                    "without it, the status recorded in the Why3 sessions)")
    p.add_argument("--accept", nargs="+", metavar="ID",
                   help="record the current fingerprints of these requirements (or 'all') as reviewed")
    p.set_defaults(func=run)
