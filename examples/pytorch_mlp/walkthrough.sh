#!/usr/bin/env bash
# From a PyTorch export to evidence, as an ML engineer would do it (README.md beside this file).
# Usage: examples/pytorch_mlp/walkthrough.sh [WORKDIR]   (default: build/pytorch_mlp)
# Uses .venv/bin/sonnx of this checkout (or $SONNX); needs onnxruntime for the checks.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0;; esac
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
sonnx="${SONNX:-$root/.venv/bin/sonnx}"
python="$(dirname "$sonnx")/python"
work="${1:-$root/build/pytorch_mlp}"
mkdir -p "$work"
cd "$work"
step() { echo; echo "### $*"; }

step "1. the export as PyTorch wrote it: refused, every finding at once (exit 1 expected)"
rc=0; "$sonnx" validate "$here/mlp.onnx" || rc=$?
[ "$rc" = 1 ] || { echo "walkthrough: expected exit 1 from validate, got $rc" >&2; exit 1; }

step "2. sonnx conform: pin the batch, store the constants at full shape, check the bits"
"$sonnx" conform "$here/mlp.onnx" -o mlp_b1000.onnx --dim batch=1000

step "3. the rewritten model conforms"
"$sonnx" validate mlp_b1000.onnx

step "4. 1,000 samples, run with sonnx's kernels (exact mode), compared with onnxruntime"
"$python" -c "import numpy as np; np.save('x.npy', np.random.default_rng(0).standard_normal((1000, 8)).astype(np.float32))"
"$sonnx" run mlp_b1000.onnx --input x=x.npy -o out --compare onnxruntime

step "5. a second run, in a new process, gives the same bits"
"$sonnx" run mlp_b1000.onnx --input x=x.npy -o out2
cmp out/y.npy out2/y.npy && cmp out/y.hex out2/y.hex && echo "same bits: out/y.npy, out/y.hex"
echo
echo "walkthrough: done; files in $work"
