"""LeNet-5 (the classic layout: 1x28x28 input, conv 6@5x5 pads 2, ReLU, max-pool 2, conv 16@5x5,
ReLU, max-pool 2, flatten, 400-120-84-10 with ReLU), seeded weights, exported by both PyTorch
exporters (TorchScript and dynamo) at opset 18, batch 1: the two models beside this file (made
with torch 2.13.0+cpu and onnx 1.23.2; the dynamo export re-saved with its weights inline).
Not run by the tests. Usage: python export_lenet5.py OUT_DIR"""
import sys, torch
torch.manual_seed(5)
class LeNet5(torch.nn.Module):
    def __init__(s):
        super().__init__()
        s.c1 = torch.nn.Conv2d(1, 6, 5, padding=2); s.c2 = torch.nn.Conv2d(6, 16, 5)
        s.f1 = torch.nn.Linear(400, 120); s.f2 = torch.nn.Linear(120, 84); s.f3 = torch.nn.Linear(84, 10)
    def forward(s, x):
        r = torch.nn.functional
        x = r.max_pool2d(r.relu(s.c1(x)), 2)
        x = r.max_pool2d(r.relu(s.c2(x)), 2)
        x = torch.flatten(x, 1)
        return s.f3(r.relu(s.f2(r.relu(s.f1(x)))))
out = sys.argv[1]
m = LeNet5().eval()
x = torch.randn(1, 1, 28, 28)
torch.onnx.export(m, (x,), f"{out}/lenet5_torchscript_op18.onnx", dynamo=False, opset_version=18, input_names=["x"], output_names=["y"])
torch.onnx.export(m, (x,), f"{out}/lenet5_dynamo_op18.onnx", dynamo=True, opset_version=18, input_names=["x"], output_names=["y"])
import onnx  # noqa: E402  (the dynamo exporter writes the weights to a .data file: inline them)
onnx.save(onnx.load(f"{out}/lenet5_dynamo_op18.onnx"), f"{out}/lenet5_dynamo_op18.onnx", save_as_external_data=False)
