"""Evidence step: validate the example models and compare each verdict with the expected one.

The examples include models built to be refused, so "sonnx validate" exits 1 on them by
design; what must hold is that every model gets exactly the findings examples/expected.json
lists. Reports in every format are kept in the bundle.
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
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
