"""Evidence step: validate the example models and compare each verdict with the expected one;
then a replication report of a real exported network.

The examples include models built to be refused, so "sonnx validate" exits 1 on them by
design; what must hold is that every model gets exactly the findings examples/expected.json
lists. Reports in every format are kept in the bundle.

The replication report (ARP6983 / ED-324's replication criterion, issue 31) is made the way a
user makes one: LeNet-5 as PyTorch's dynamo exporter wrote it (tests/e2e/cnn_models/), made
conformant by ``sonnx conform`` (bit check through onnxruntime), then ``sonnx run --compare
onnxruntime --criterion bounds -o DIR`` on seeded inputs; DIR (build/evidence/replication/)
keeps the conformed model, its conform report, the inputs, the outputs, run.json and the
report itself (compare.json, compare.html). The step fails when the criterion is not met.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from sonnx.validate import validate
from sonnx.validate.formats import FORMATS

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str]) -> int:
    examples = ROOT / "examples"
    out = ROOT / "build" / "evidence" / "validate"
    out.mkdir(parents=True, exist_ok=True)
    expected = {k: v for k, v in json.loads((examples / "expected.json").read_text()).items()
                if not k.startswith("_")}
    paths = [Path(a) for a in argv] or sorted(examples.glob("*.onnx"))
    reports = [validate(p) for p in paths]
    for fmt, render in FORMATS.items():
        (out / f"examples.{ 'txt' if fmt == 'text' else fmt}").write_text(render(reports), encoding="utf-8")
    wrong = 0
    for path, report in zip(paths, reports):
        got = [f.rule for f in report.findings] if report.error is None else ["UNREADABLE"]
        want = expected.get(path.name)
        ok = want is not None and got == want
        wrong += not ok
        shown = ", ".join(got) or "conforms"
        print(f"{'ok  ' if ok else 'FAIL'} {path.name}: {shown}"
              + ("" if ok else f" (expected {', '.join(want) if want else 'conforms' if want == [] else 'no entry'})"))
    print(f"{len(paths) - wrong}/{len(paths)} example verdicts as expected")
    rc = replication(ROOT / "build" / "evidence" / "replication")
    return 1 if wrong or rc else 0


REPLICATED = ROOT / "tests" / "e2e" / "cnn_models" / "lenet5_dynamo_op18.onnx"


def replication(out: Path, model: Path = REPLICATED) -> int:
    """The replication report of ``model`` into ``out`` (module docstring); the exit status of
    ``sonnx run --compare`` (0: the criterion holds)."""
    import numpy as np
    import onnx

    import sonnx
    from sonnx.cli import main as cli

    out.mkdir(parents=True, exist_ok=True)
    fixed, report = sonnx.conform(str(model))
    if report["exit_code"] != 0:
        print(f"FAIL replication: {model.name} does not conform after sonnx conform "
              f"(check {report['check']['status']})")
        return 1
    conformed = out / f"{model.stem}.conformed.onnx"
    onnx.save(fixed, str(conformed))
    (out / f"{conformed.name}.conform.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    rng = np.random.default_rng(0)
    args = ["run", str(conformed), "--compare", "onnxruntime", "--criterion", "bounds",
            "-o", str(out / "run"), "-q"]
    for spec in fixed.graph.input:
        dims = [d.dim_value for d in spec.type.tensor_type.shape.dim]
        x = rng.standard_normal(dims).astype(np.float32)
        np.save(out / f"{spec.name}.npy", x)
        args[2:2] = ["--input", f"{spec.name}={out / (spec.name + '.npy')}"]
    rc = cli(args)
    print(f"{'ok  ' if rc == 0 else 'FAIL'} replication report of {model.name} (conformed): "
          f"{(out / 'run' / 'compare.json').relative_to(ROOT) if (out / 'run' / 'compare.json').is_relative_to(ROOT) else out / 'run' / 'compare.json'}"
          f" (sonnx run --compare exit {rc})")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
