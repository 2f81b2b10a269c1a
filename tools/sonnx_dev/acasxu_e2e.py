"""ACAS Xu end to end: each network through validate -> conform -> validate -> run --compare
onnxruntime, one table row per network (verdict before and after conform, conform's bit check,
largest ULP difference of sonnx's exact result against onnxruntime over the seeded inputs).

    tools/acasxu-e2e [--dim NAME=SIZE ...] DIR_OR_FILES...
        (e.g. the 45 benchmarks/acasxu/*.onnx of VNN-COMP 2021; or its CNNs: oval21, verivital,
        cifar10_resnet)

``--dim`` pins a symbolic dimension in every model that has it (as ``sonnx conform --dim``);
a model without it is run as it is. A model that does not conform after conform is listed with
every rule left (on stderr).

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


def one(path: str, seeds=(0, 1, 2), dims: dict[str, int] | None = None) -> dict:
    import onnx
    before = sonnx.validate(path)
    graph = onnx.load(path, load_external_data=False).graph
    named = {d.dim_param for v in list(graph.input) + list(graph.output) + list(graph.value_info)
             for d in v.type.tensor_type.shape.dim if d.dim_param}
    model, report = sonnx.conform(path, {k: v for k, v in (dims or {}).items() if k in named})
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
    p.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                   help="pin the symbolic dimension NAME to SIZE in every model that has it")
    args = p.parse_args(argv)
    dims = {}
    for d in args.dim:
        name, _, size = d.partition("=")
        if not name or not size.isdigit() or int(size) < 1:
            print(f"tools/acasxu-e2e: --dim {d}: write NAME=SIZE with a positive integer SIZE", file=sys.stderr)
            return 2
        dims[name] = int(size)
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
            r = one(p, dims=dims)
        except Exception as exc:     # an unreadable file, a model sonnx cannot run: one line
            r = {"model": os.path.basename(p), "before": "error", "after": "error", "check": "-",
                 "ulp": None, "within": None}
            print(f"{p}: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}", file=sys.stderr)
        ok = ok and r["after"] == "conforms" and r["check"] == "passed" and bool(r["within"])
        if r["after"] not in ("conforms", "error"):
            print(f"{p}: after conform, {r['after']}", file=sys.stderr)
        print(f"{r['model']:44} {r['before'][:22]:22} {r['after'][:10]:10} {r['check']:9} "
              f"{'-' if r['ulp'] is None else r['ulp']:>7} "
              f"{'-' if r['within'] is None else ('within' if r['within'] else 'OUTSIDE')}")
    print(f"{len(paths)} network(s): {'all conform and are within bounds' if ok else 'NOT all pass'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
