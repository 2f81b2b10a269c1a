"""Writes examples/openvino/: the IR of each shipped ONNX example, converted by OpenVINO's own
converter (openvino.convert_model, then openvino.save_model without fp16 compression, which
would insert Convert layers), and the two Multiply-1 examples of the OpenVINO specification
(seed 001), built with OpenVINO's opset1 API. Usage:

    .venv/bin/python tools/sonnx_dev/openvino_examples.py [--out DIR]

(--out: another folder than examples/openvino, e.g. to compare a fresh conversion with the
committed files, as tests/validate/test_openvino_examples.py does.)

The verdicts each file must get are in examples/openvino/expected.json (hand-written, not
generated here: tests/validate/test_openvino_examples.py checks them).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import openvino as ov
import openvino.opset1 as ops

ROOT = Path(__file__).resolve().parents[2]
OUT = Path("examples/openvino")


def seed_multiply(name: str, a: list[int], b: list[int], auto_broadcast: str) -> ov.Model:
    """Seed 001's Multiply-1 examples: two f32 Parameters, one Multiply, one Result."""
    x = ops.parameter(a, ov.Type.f32, name="a")
    y = ops.parameter(b, ov.Type.f32, name="b")
    product = ops.multiply(x, y, auto_broadcast=auto_broadcast, name="multiply")
    return ov.Model([ops.result(product, name="c")], [x, y], name)


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if argv and (argv[0] != "--out" or len(argv) != 2):
        print("usage: openvino_examples.py [--out DIR]", file=sys.stderr)
        return 2
    out = Path(argv[1]).resolve() if argv else ROOT / OUT
    os.chdir(ROOT)     # relative paths: the converter records the input path in the IR
    out.mkdir(parents=True, exist_ok=True)
    for onnx_path in sorted(Path("examples").glob("*.onnx")):
        model = ov.convert_model(str(onnx_path))
        ov.save_model(model, str(out / f"{onnx_path.stem}.xml"), compress_to_fp16=False)
        print(f"converted {onnx_path} -> {out / onnx_path.stem}.xml")
    seeds = {"seed_multiply_none": ([256, 56], [256, 56], "none"),
             "seed_multiply_broadcast": ([8, 1, 6, 1], [7, 1, 5], "numpy")}
    for name, (a, b, mode) in seeds.items():
        ov.save_model(seed_multiply(name, a, b, mode), str(out / f"{name}.xml"),
                      compress_to_fp16=False)
        print(f"built {out / name}.xml (Multiply-1, auto_broadcast={mode})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
