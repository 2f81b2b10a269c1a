"""Export the end-to-end test models: a 3-layer MLP (Linear -> ReLU -> Linear -> ReLU -> Linear)
from PyTorch, with both exporters, and store them under tests/e2e/models/.

    python tools/sonnx_dev/export_mlp.py [--check]

Needs torch (with onnxscript for the dynamo exporter), which CI does not install: the models
are committed and the tests (tests/e2e/) read them without torch. ``--check`` exports into a
temporary folder and compares byte for byte with the committed files (exit 1 on a difference).
The committed files were made, and re-made identically, with torch 2.13.0+cpu, onnxscript 0.7.2
and onnx 1.23.2; other versions may write other bytes (node names, metadata).

What is exported (batch 2, 8 -> 16 -> 16 -> 4, float32, weights from torch.manual_seed(0)):
- the TorchScript exporter (``dynamo=False``) at opsets 13 and 17, with bias=True (Gemm with a
  C of shape (N,), transB=1) and bias=False (MatMul with a pre-transposed weight, no Gemm);
- the dynamo exporter (``dynamo=True``) at opsets 18 and 20: it emits Gemm (transB=1) for both
  bias=True (C of shape (N,)) and bias=False (no C). It does not go below opset 18: asked for
  13 or 17 it warns, fails to convert (onnx's converter has no adapter for Relu-14 -> 13) and
  keeps 18, so no dynamo model of opset 13 or 17 exists.
Each model with a bias is also stored "fixed" (``*_c_full.onnx``): every Gemm C initializer of
shape (N,) rewritten as (M, N) with numpy.broadcast_to(...).copy() (``store_biases_full``), the
form GEMM-R4 asks for. The fix is plain onnx + numpy, importable without torch.

For ``sonnx conform`` (tests/conform/, stored under tests/conform/models/):
- the MLP with bias and a *dynamic* batch (``mlp_<exporter>_op<N>_bias_dynamic.onnx``, the axis
  named "batch": TorchScript ``dynamic_axes``, dynamo ``dynamic_shapes`` with Dim("batch")),
  which ``sonnx conform --dim batch=2`` pins;
- the model of issue 15, Linear(8, 16) -> x0.5 -> Linear(16, 4), batch 2 (``scaled_*``): Gemm C
  of shape (N) twice and a Mul by a scalar (a Constant node from TorchScript);
- the exporter-side fix the GEMM-R4 and MUL-R4 hints give, checked to conform as exported
  (``addmm_*``): torch.addmm(bias_mn, x, W.t()) with bias_mn a registered buffer of shape
  (M, N), and the x0.5 as a product with a registered (M, N) buffer.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

try:
    from sonnx_dev import torch_export
except ImportError:   # run as a script: tools/ is not on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from sonnx_dev import torch_export

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "e2e" / "models"
CONFORM_MODELS = ROOT / "tests" / "conform" / "models"
BATCH, SIZES = 2, (8, 16, 16, 4)
# (exporter, opset): the TorchScript exporter at 13 and 17, the dynamo exporter at 18 and 20
EXPORTS = (("torchscript", 13), ("torchscript", 17), ("dynamo", 18), ("dynamo", 20))


def model_name(exporter: str, opset: int, bias: bool, fixed: bool = False) -> str:
    return f"mlp_{exporter}_op{opset}_{'bias' if bias else 'nobias'}{'_c_full' if fixed else ''}.onnx"


def store_biases_full(model):
    """A copy of ``model`` whose Gemm C initializers of shape (N,) are stored as (M, N) (the
    rows repeated; M from the shape of Y inferred by onnx): no broadcast left for GEMM-R4."""
    import onnx
    from onnx import numpy_helper

    out = onnx.ModelProto()
    out.CopyFrom(model)
    inferred = onnx.shape_inference.infer_shapes(out, strict_mode=True)
    dims = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
            for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    inits = {t.name: t for t in out.graph.initializer}
    for node in out.graph.node:
        if node.op_type != "Gemm" or len(node.input) < 3 or node.input[2] not in inits:
            continue
        c = numpy_helper.to_array(inits[node.input[2]])
        m, n = dims[node.output[0]]
        if c.shape != (m, n):
            full = np.broadcast_to(c, (m, n)).copy()
            inits[node.input[2]].CopyFrom(numpy_helper.from_array(full, node.input[2]))
            for vi in out.graph.value_info:    # the dynamo exporter declares initializers too
                if vi.name == node.input[2]:
                    vi.type.tensor_type.shape.ClearField("dim")
                    vi.type.tensor_type.shape.dim.add().dim_value = m
                    vi.type.tensor_type.shape.dim.add().dim_value = n
    for vi in out.graph.input:             # an initializer also declared as an input: same shape
        if vi.name in inits:
            raise ValueError(f"{vi.name} is a graph input and an initializer; not handled")
    onnx.checker.check_model(out, full_check=True)
    return out


def _mlp(bias: bool):
    import torch

    torch.manual_seed(0)
    layers = []
    for i, (k, n) in enumerate(zip(SIZES, SIZES[1:])):
        if i:
            layers.append(torch.nn.ReLU())
        layers.append(torch.nn.Linear(k, n, bias=bias))
    return torch.nn.Sequential(*layers).eval()


def export(out_dir: Path) -> list[Path]:
    """Every model of EXPORTS, with and without bias, and the fixed copies; the paths written."""
    import onnx

    written = []
    for exporter, opset in EXPORTS:
        for bias in (True, False):
            path = torch_export.export_module(_mlp(bias), (BATCH, SIZES[0]),
                                              out_dir / model_name(exporter, opset, bias),
                                              exporter, opset)
            written.append(path)
            if bias:
                fixed = out_dir / model_name(exporter, opset, bias, fixed=True)
                onnx.save(store_biases_full(onnx.load(str(path))), str(fixed))
                written.append(fixed)
    return written


class _Scaled:
    """Issue 15's model: Linear(8, 16) -> x0.5 -> Linear(16, 4)."""

    @staticmethod
    def make():
        import torch

        class Scaled(torch.nn.Module):
            def __init__(self):
                super().__init__()
                torch.manual_seed(0)
                self.a, self.b = torch.nn.Linear(8, 16), torch.nn.Linear(16, 4)

            def forward(self, x):
                return self.b(self.a(x) * 0.5)

        class Addmm(torch.nn.Module):
            """The same computation written as the hints advise: biases and the scale as
            registered buffers of the full (M, N) shape, the layers as torch.addmm."""

            def __init__(self, m: int):
                super().__init__()
                ref = Scaled()
                self.w1 = torch.nn.Parameter(ref.a.weight.detach().clone())
                self.w2 = torch.nn.Parameter(ref.b.weight.detach().clone())
                self.register_buffer("b1", ref.a.bias.detach().expand(m, 16).clone())
                self.register_buffer("b2", ref.b.bias.detach().expand(m, 4).clone())
                self.register_buffer("scale", torch.full((m, 16), 0.5))

            def forward(self, x):
                return torch.addmm(self.b2, torch.addmm(self.b1, x, self.w1.t()) * self.scale,
                                   self.w2.t())

        return Scaled().eval(), Addmm(BATCH).eval()


def _export_one(module, path: Path, exporter: str, opset: int, dynamic: bool) -> Path:
    kw: dict = {}
    if dynamic and exporter == "dynamo":
        import torch

        kw["dynamic_shapes"] = ({0: torch.export.Dim("batch")},)
    elif dynamic:
        kw["dynamic_axes"] = {"x": {0: "batch"}, "y": {0: "batch"}}
    return torch_export.export_module(module, (BATCH, module_in(module)), path, exporter, opset,
                                      **kw)


def module_in(module) -> int:
    first = next(p for p in module.parameters() if p.dim() == 2)
    return int(first.shape[1])


def export_conform(out_dir: Path) -> list[Path]:
    """The models of tests/conform/ (see the module's docstring)."""
    written = []
    for exporter, opset in EXPORTS:
        written.append(_export_one(_mlp(True), out_dir / f"mlp_{exporter}_op{opset}_bias_dynamic.onnx",
                                   exporter, opset, dynamic=True))
    for exporter, opset in (("torchscript", 17), ("dynamo", 18)):
        scaled, addmm = _Scaled.make()
        written.append(_export_one(scaled, out_dir / f"scaled_{exporter}_op{opset}.onnx",
                                   exporter, opset, dynamic=False))
        written.append(_export_one(addmm, out_dir / f"addmm_{exporter}_op{opset}.onnx",
                                   exporter, opset, dynamic=False))
    return written


def main(argv: list[str] | None = None) -> int:
    return torch_export.main("export_mlp.py", __doc__.split("\n\n")[0],
                             ((export, MODELS), (export_conform, CONFORM_MODELS)), argv)


if __name__ == "__main__":
    # run through the importable module: the dynamo exporter writes the defining module's name
    # of each torch.nn.Module class into the file, so "__main__" would change the bytes
    from sonnx_dev import export_mlp

    sys.exit(export_mlp.main())
