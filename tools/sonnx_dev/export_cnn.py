"""Export the convolutional end-to-end models from PyTorch and store them under
tests/e2e/cnn_models/ (issue 30: CNNs conform).

    python tools/sonnx_dev/export_cnn.py [--check]

Needs torch (with onnxscript for the dynamo exporter), which CI does not install: the models are
committed and tests/e2e/test_cnn.py reads them without torch. ``--check`` exports into a temporary
folder and compares byte for byte with the committed files (exit 1 on a difference). Made with
torch 2.13.0+cpu, onnxscript 0.7.2 and onnx 1.23.2; other versions may write other bytes.

What is exported (float32, weights from torch.manual_seed(0)):
- LeNet-5 as it is usually written (Conv 1->6 5x5 pad 2, ReLU, MaxPool 2, Conv 6->16 5x5, ReLU,
  MaxPool 2, flatten, Linear 400->120->84->10 with ReLUs), 1x28x28 images:
  - ``lenet5_torchscript_op17.onnx``: the TorchScript exporter (``dynamo=False``) at opset 17 with
    a dynamic batch named "batch" (``sonnx conform --dim batch=N`` pins it); Flatten for the
    flatten, Gemm with a bias of shape (N,) for each Linear;
  - ``lenet5_dynamo_op18.onnx``: the dynamo exporter at opset 18, batch 2; Reshape for the
    flatten, every attribute written (auto_pad NOTSET, storage_order 0).
- A small VGG-style network with BatchNormalization and GlobalAveragePool (Conv 3->8 3x3 pad 1
  without bias, BatchNorm, ReLU, the same 8->8, MaxPool 2, 8->16, BatchNorm, ReLU,
  AdaptiveAvgPool2d(1), flatten, Linear 16->10), 3x16x16 images, batch 2, BatchNorm statistics
  drawn away from their initial 0/1 so that the normalisation changes bits:
  - ``vgg_bn_torchscript_op17.onnx``: TorchScript with ``training=TrainingMode.PRESERVE`` on the
    model in eval mode: the BatchNormalization nodes stay (inference form, one output; in eval
    mode without PRESERVE the exporter folds each into the Conv before it, and the dynamo
    exporter's optimiser does the same).
"""
from __future__ import annotations

import sys
from pathlib import Path

try:
    from sonnx_dev import torch_export
except ImportError:   # run as a script: tools/ is not on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from sonnx_dev import torch_export

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "e2e" / "cnn_models"


def _lenet5():
    import torch

    class LeNet5(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = torch.nn.Conv2d(1, 6, 5, padding=2), torch.nn.Conv2d(6, 16, 5)
            self.f1, self.f2 = torch.nn.Linear(400, 120), torch.nn.Linear(120, 84)
            self.f3 = torch.nn.Linear(84, 10)

        def forward(self, x):
            x = torch.max_pool2d(torch.relu(self.c1(x)), 2)
            x = torch.max_pool2d(torch.relu(self.c2(x)), 2)
            x = torch.flatten(x, 1)
            return self.f3(torch.relu(self.f2(torch.relu(self.f1(x)))))

    torch.manual_seed(0)
    return LeNet5().eval()


def _vgg_bn():
    import torch

    nn = torch.nn
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                        nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                        nn.MaxPool2d(2),
                        nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
    with torch.no_grad():
        for mod in net.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 2.0)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.2, 0.2)
    return net.eval()


# file name -> (module factory, input shape, exporter, opset, extra export keywords)
def _plan():
    import torch

    return {
        "lenet5_torchscript_op17.onnx": (_lenet5, (2, 1, 28, 28), "torchscript", 17,
                                         {"dynamic_axes": {"x": {0: "batch"}, "y": {0: "batch"}}}),
        "lenet5_dynamo_op18.onnx": (_lenet5, (2, 1, 28, 28), "dynamo", 18, {}),
        "vgg_bn_torchscript_op17.onnx": (_vgg_bn, (2, 3, 16, 16), "torchscript", 17,
                                         {"training": torch.onnx.TrainingMode.PRESERVE}),
    }


def export(out_dir: Path) -> list[Path]:
    return [torch_export.export_module(make(), shape, out_dir / name, exporter, opset, **kw)
            for name, (make, shape, exporter, opset, kw) in _plan().items()]


def main(argv: list[str] | None = None) -> int:
    return torch_export.main("export_cnn.py", __doc__.split("\n\n")[0], ((export, MODELS),),
                             argv)


if __name__ == "__main__":
    # run through the importable module: the dynamo exporter writes the defining module's name
    # of each torch.nn.Module class into the file, so "__main__" would change the bytes
    from sonnx_dev import export_cnn

    sys.exit(export_cnn.main())
