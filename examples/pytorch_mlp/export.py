"""Export the walkthrough's model from PyTorch: a small MLP as an ML engineer writes it,
Linear(8, 16) -> ReLU -> x 0.5 -> Linear(16, 4), with a dynamic batch dimension named "batch".

    python examples/pytorch_mlp/export.py [--out DIR] [--check]

Needs torch (2.13.0+cpu was used) and onnx; CI does not install torch, so the exported file
`mlp.onnx` is committed next to this script. ``--check`` exports again into a temporary
folder and compares byte for byte with the committed file (exit 1 on a difference).

As exported (TorchScript exporter, opset 17), the model is not in the profile:
- the batch is symbolic ("batch"): PROF-R2 on every tensor that carries it;
- each nn.Linear bias is a Gemm C of shape (N,), broadcast over the batch: GEMM-R4;
- `x * 0.5` is a Mul by a scalar from a Constant node: PROF-R1 (Constant) and MUL-R4.
`walkthrough.sh` beside this file takes it through `sonnx conform`, `sonnx validate` and
`sonnx run` (see README.md here).
"""
from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent


def model():
    import torch

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(8, 16)
            self.fc2 = torch.nn.Linear(16, 4)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)) * 0.5)

    torch.manual_seed(0)
    return MLP().eval()


def export(path: Path) -> None:
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model(), (torch.zeros(2, 8),), str(path), dynamo=False, opset_version=17,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE, help=f"folder (default {HERE})")
    ap.add_argument("--check", action="store_true",
                    help="export into a temporary folder and compare with the committed mlp.onnx")
    args = ap.parse_args(argv)
    try:
        import onnx  # noqa: F401 -- the exporter's dependency
        import torch  # noqa: F401
    except ImportError as exc:
        print(f"export.py: {exc.name} is missing; exporting needs torch and onnx "
              "(pip install torch onnx, in a separate virtual environment)", file=sys.stderr)
        return 2
    if not args.check:
        args.out.mkdir(parents=True, exist_ok=True)
        export(args.out / "mlp.onnx")
        print(args.out / "mlp.onnx")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "mlp.onnx"
        export(fresh)
        same = filecmp.cmp(fresh, HERE / "mlp.onnx", shallow=False)
    print("reproducible" if same else "NOT reproducible: mlp.onnx differs from a fresh export")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
