"""What the PyTorch export scripts (export_mlp.py, export_cnn.py) share: one export that writes the
same bytes wherever it runs, and the command line that regenerates or checks the committed models.

torch and onnxscript are not in the dev lock (CI reads the committed models without them); they are
imported only when a model is exported.
"""
from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

# (function writing models into a folder and returning their paths, the committed folder)
Exporter = tuple[Callable[[Path], list[Path]], Path]


def export_module(module, example_shape: tuple[int, ...], path: Path, exporter: str, opset: int,
                  **kw) -> Path:
    """Export ``module`` on a zero input of ``example_shape`` with input "x" and output "y".

    The opset actually written is checked (an exporter may silently write another), and the
    dynamo exporter's per-node Python stack traces are dropped: they hold the paths of the
    virtual environment and of this script, so the bytes would depend on where they were made.
    """
    import onnx
    import torch

    if exporter == "dynamo":
        kw.setdefault("verbose", False)
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = Path(tmp) / "model.onnx"   # the dynamo exporter may write weights to a side file
        torch.onnx.export(module, (torch.zeros(*example_shape),), str(raw),
                          dynamo=exporter == "dynamo", opset_version=opset,
                          input_names=["x"], output_names=["y"], **kw)
        model = onnx.load(str(raw))
    got = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    if got != opset:
        raise RuntimeError(f"{path.name}: asked for opset {opset}, the exporter wrote {got}")
    for node in model.graph.node:
        keep = [p for p in node.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
        del node.metadata_props[:]
        node.metadata_props.extend(keep)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def main(prog: str, description: str, exporters: Sequence[Exporter],
         argv: list[str] | None = None) -> int:
    """Regenerate the committed models (default) or, with --check, export into a temporary
    folder and compare byte for byte (exit 1 on a difference, a missing or an extra file)."""
    ap = argparse.ArgumentParser(prog=prog, description=description)
    ap.add_argument("--check", action="store_true",
                    help="export into a temporary folder and compare with the committed models")
    args = ap.parse_args(argv)
    try:
        import onnxscript  # noqa: F401 -- the dynamo exporter's dependency
        import torch  # noqa: F401
    except ImportError as exc:
        print(f"{prog}: {exc.name} is missing; regenerating the models needs torch and "
              "onnxscript, which the dev lock leaves out: pip install torch onnxscript "
              "(in a separate virtual environment)", file=sys.stderr)
        return 2
    if not args.check:
        for make, committed in exporters:
            for p in make(committed):
                print(p)
        return 0
    differ: list[str] = []
    extra: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (make, committed) in enumerate(exporters):
            fresh = make(Path(tmp) / str(i))   # folders of the same name may be committed
            differ += [p.name for p in fresh if not (committed / p.name).is_file()
                       or not filecmp.cmp(p, committed / p.name, shallow=False)]
            extra += sorted({p.name for p in committed.glob("*.onnx")} - {p.name for p in fresh})
    for name in differ:
        print(f"differs from the committed file: {name}")
    for name in extra:
        print(f"committed but not exported: {name}")
    print("reproducible" if not (differ or extra) else "NOT reproducible")
    return 1 if differ or extra else 0
