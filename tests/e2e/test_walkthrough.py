"""The PyTorch walkthrough of examples/pytorch_mlp/ runs as its README says: refused as exported,
conformant after `sonnx conform` with the bit-identity check passed, run within onnxruntime's
bounds, and the same bits from a second process."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "pytorch_mlp" / "walkthrough.sh"


def test_walkthrough_from_export_to_run(tmp_path):
    sonnx = Path(sys.executable).parent / "sonnx"
    done = subprocess.run(["bash", str(SCRIPT), str(tmp_path)], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "SONNX": str(sonnx)}, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    report = json.loads((tmp_path / "mlp_b1000.onnx.conform.json").read_text())
    assert report["exit_code"] == 0
    assert report["check"]["status"] == "passed"
    resolved = sorted(r["requirement"] for r in report["rewrites"])
    assert resolved == ["GEMM-R4", "GEMM-R4", "MUL-R4", "PROF-R1", "PROF-R2"]
    y = np.load(tmp_path / "out" / "y.npy")
    assert y.shape == (1000, 4) and y.dtype == np.float32
    assert np.array_equal(np.load(tmp_path / "out2" / "y.npy").view(np.uint32), y.view(np.uint32))
    compare = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert compare["within_bounds"] is True
