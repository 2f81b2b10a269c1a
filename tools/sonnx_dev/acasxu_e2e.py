"""ACAS Xu end to end: each network through validate -> conform -> validate -> run --compare
onnxruntime, one table row per network (verdict before and after conform, conform's bit check,
largest ULP difference of sonnx's exact result against onnxruntime over the seeded inputs).

    tools/acasxu-e2e DIR_OR_FILES...     (e.g. the 47 benchmarks/acasxu/*.onnx of VNN-COMP 2021)

Exit 0 when every network conforms after conform and is within the profile's bounds, else 1."""
from __future__ import annotations

import glob
import os
import sys

import numpy as np


import sonnx  # noqa: E402
from sonnx.conform.bitcheck import make_input  # noqa: E402
from sonnx.run.comparison import compare  # noqa: E402
from sonnx.run.executor import load  # noqa: E402


def one(path: str, seeds=(0, 1, 2)) -> dict:
    before = sonnx.validate(path)
    model, report = sonnx.conform(path)
    after = sonnx.validate(model)
    row = {"model": os.path.basename(path), "before": "conforms" if before.conforms else
           "refused: " + ",".join(sorted({f.rule for f in before.findings})),
           "after": "conforms" if after.conforms else
           "refused: " + ",".join(sorted({f.rule for f in after.findings})),
           "check": report["check"]["status"], "ulp": None, "within": None}
    if not after.conforms:
        return row
    specs = load(model).inputs
    ulp, within = 0, True
    for seed in seeds:
        feeds = {}
        for i, s in enumerate(v for v in specs.values() if not v.has_default):
            x = make_input(np.dtype(np.float32), s.shape, 0, i)   # finite values only
            feeds[s.name] = (x * (1 + seed)).astype(np.float32)
        c = compare(model, feeds)
        within = within and c.within_bounds
        ulp = max([ulp] + [o.max_ulp if o.max_ulp is not None else 2**63 for o in c.outputs])
    row.update(ulp=ulp, within=within)
    return row


def main(argv: list[str]) -> int:
    import argparse
    p = argparse.ArgumentParser(prog="tools/acasxu-e2e", description=__doc__.split("\n\n")[0],
                                epilog="Works on any network with float32 inputs of static shape "
                                       "(e.g. VNN-COMP's rl_benchmarks cartpole and lunarlander).")
    p.add_argument("paths", nargs="+", metavar="DIR_OR_FILE", help="a .onnx file, or a directory "
                   "whose *.onnx files are run")
    args = p.parse_args(argv)
    paths = []
    for a in args.paths:
        paths += sorted(glob.glob(os.path.join(a, "*.onnx"))) if os.path.isdir(a) else [a]
    missing = [q for q in paths if not os.path.isfile(q)]
    if not paths or missing:
        print(f"tools/acasxu-e2e: no such .onnx file: {(missing or args.paths)[0]}", file=sys.stderr)
        return 2
    ok = True
    print(f"{'model':44} {'before':22} {'after':10} {'bit check':9} {'max ulp':>7} bounds")
    for p in paths:
        try:
            r = one(p)
        except Exception as exc:     # an unreadable file, a model sonnx cannot run: one line
            r = {"model": os.path.basename(p), "before": "error", "after": "error", "check": "-",
                 "ulp": None, "within": None}
            print(f"{p}: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}", file=sys.stderr)
        ok = ok and r["after"] == "conforms" and r["check"] == "passed" and bool(r["within"])
        print(f"{r['model']:44} {r['before'][:22]:22} {r['after'][:10]:10} {r['check']:9} "
              f"{'-' if r['ulp'] is None else r['ulp']:>7} "
              f"{'-' if r['within'] is None else ('within' if r['within'] else 'OUTSIDE')}")
    print(f"{len(paths)} network(s): {'all conform and are within bounds' if ok else 'NOT all pass'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
