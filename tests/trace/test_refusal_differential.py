"""The refusal theories follow the constraint functions that run (issue 32).

tools/sonnx_dev/refusal_check.py runs the theories' decision functions (``why3 execute``) and the
Python ``constraints`` on one generated corpus and compares the verdicts. Here: the committed
pair agrees, and a change to either side alone (planted in a copy of src/ or proofs/) makes the
check fail, naming a signature on which the two now disagree.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
needs_why3 = pytest.mark.skipif(shutil.which("why3") is None, reason="why3 not installed")
GUARD_S = 600      # a hang guard only

# name -> (file under the copied tree, the text to replace, the fault, the theory it concerns):
# each changes one side only; the check runs on that theory alone, to keep the test short
PLANTS = {
    "python: Gemm accepts a (1, N) bias": (
        "src/sonnx/ops/gemm/__init__.py",
        "if len(cs) != 2 or not symdims.solvable([(tka, tkb), (tc[0], tm), (tc[1], tn)]):",
        "if cs != (1, n) and (len(cs) != 2 or not symdims.solvable([(tka, tkb), (tc[0], tm), (tc[1], tn)])):",
        "gemm_refusal"),
    "python: broadcast_shape lets B's dimension broadcast only when it is 1": (
        "src/sonnx/ops/elementwise.py",
        "        if x != y and x != 1 and y != 1:",
        "        if x != y and y != 1:",
        "elementwise"),
    "theory: Gemm's C check accepts a (1, N) bias": (
        "proofs/gemm_refusal.mlw",
        "if same_shape s (Cons m (Cons n Nil)) then Clean",
        "if same_shape s (Cons m (Cons n Nil)) || same_shape s (Cons 1 (Cons n Nil)) then Clean",
        "gemm_refusal"),
    "theory: bcast_rev lets a dimension broadcast only when the other is 1": (
        "proofs/elementwise.mlw",
        "if x <> y && x <> 1 && y <> 1 then Incompatible",
        "if x <> y && y <> 1 then Incompatible",
        "elementwise"),
    # the whole constraint functions (proofs/constraints.mlw)
    "python: mixed element types pass": (
        "src/sonnx/ops/signature.py",
        "if len({elem for _, elem in typed}) > 1:",
        "if len({elem for _, elem in typed}) > 2:",
        "constraints.Elementwise"),
    "python: transA=2 passes": (
        "src/sonnx/ops/gemm/__init__.py",
        "or value not in (0, 1):",
        "or value not in (0, 1, 2):",
        "constraints.Gemm"),
    "python: symbolic shapes of different ranks pass when solvable": (
        "src/sonnx/ops/elementwise.py",
        "if len(sa) == len(sb) and symdims.solvable(pairs):",
        "if symdims.solvable(pairs):",
        "constraints.Elementwise"),
    "theory: two different static sizes unify": (
        "proofs/constraints.mlw",
        "| DStatic _, DStatic _ -> false ",
        "| DStatic _, DStatic _ -> true ",
        "constraints.Elementwise"),
    "theory: bfloat16 is not a float (GEMM-R6)": (
        "proofs/constraints.mlw",
        "e = 1 || e = 10 || e = 11 || e = 16",
        "e = 1 || e = 10 || e = 11",
        "constraints.Gemm"),
    "theory: consumed_inputs passes": (
        "proofs/constraints.mlw",
        "let f = if consumed_inputs then app f (one R4) else f in",
        "let f = f in",
        "constraints.Elementwise"),
    "theory: broadcast on Gemm-7 passes when 0": (
        "proofs/constraints.mlw",
        "if version >= 7 then one R5",
        "if version > 7 then one R5",
        "constraints.Gemm"),
    "python: Relu names a sparse input under its typed rule": (
        "src/sonnx/ops/relu.py",
        'dense_rule="RELU-R1", type_rule="RELU-R2"',
        'dense_rule="RELU-R2", type_rule="RELU-R2"',
        "constraints.Relu"),
    "theory: Relu accepts consumed_inputs": (
        "proofs/constraints.mlw",
        "      if consumed_inputs then app f (one R4) else f\n",
        "      f\n",
        "constraints.Relu"),
    "python: MatMul lets an inner dimension 1 of B pass": (
        "src/sonnx/ops/matmul.py",
        "_static_pair(sa[1], sb[0]) and sa[1] != sb[0]:",
        "_static_pair(sa[1], sb[0]) and sa[1] != sb[0] and sb[0] != 1:",
        "constraints.MatMul"),
    "python: MatMul batches of different lengths do not broadcast": (
        "src/sonnx/ops/matmul.py",
        "    if len(ba) != len(bb):\n        return True\n",
        "    if len(ba) != len(bb):\n        return False\n",
        "constraints.MatMul"),
    "theory: MatMul batches of different lengths do not broadcast": (
        "proofs/constraints.mlw",
        "dlen ba <> dlen bb || not (solvable (zip_eqs ba bb))",
        "dlen ba = dlen bb && not (solvable (zip_eqs ba bb))",
        "constraints.MatMul"),
    "python: Flatten-1 accepts a negative axis": (
        "src/sonnx/ops/flatten.py",
        "return (-rank if version >= NEGATIVE_AXIS_FROM else 0), rank",
        "return -rank, rank",
        "constraints.Flatten"),
    "theory: Flatten accepts axis = r + 1": (
        "proofs/constraints.mlw",
        "if lo <= a && a <= r then FNil else one R1",
        "if lo <= a && a <= r + 1 then FNil else one R1",
        "constraints.Flatten"),
    "python: Transpose accepts perm entries outside [0, r-1] when distinct": (
        "src/sonnx/ops/transpose.py",
        "return len(perm) == rank and sorted(perm) == list(range(rank))",
        "return len(perm) == rank and len(set(perm)) == rank",
        "constraints.Transpose"),
    "theory: Transpose accepts a perm entry r (off by one)": (
        "proofs/constraints.mlw",
        "ilen p = r && all_within 0 (r - 1) p && distinct p",
        "ilen p = r && all_within 0 r p && distinct p",
        "constraints.Transpose"),
    "python: Squeeze looks for an axis named twice before normalising": (
        "src/sonnx/ops/squeeze.py",
        "if len(set(norm)) != len(norm):",
        "if len(set(axes)) != len(axes):",
        "constraints.Squeeze"),
    "theory: Squeeze-11 reads no negative axis (version off by one)": (
        "proofs/constraints.mlw",
        "let r = ilen s in\n    let lo = if version >= 11 then - r else 0 in",
        "let r = ilen s in\n    let lo = if version > 11 then - r else 0 in",
        "constraints.Squeeze"),
    "python: Unsqueeze accepts the axis R (off by one)": (
        "src/sonnx/ops/unsqueeze.py",
        "out = [a for a in axes if not lo <= a <= hi]",
        "out = [a for a in axes if not lo <= a <= hi + 1]",
        "constraints.Unsqueeze"),
    "theory: Unsqueeze accepts the axis R (off by one)": (
        "proofs/constraints.mlw",
        "if not (all_within lo (out - 1) a) then one R2",
        "if not (all_within lo out a) then one R2",
        "constraints.Unsqueeze"),
    "python: Reshape accepts two -1 entries": (
        "src/sonnx/ops/reshape.py",
        "if shape.count(-1) > 1:",
        "if shape.count(-1) > 2:",
        "constraints.Reshape"),
    "python: Reshape-14 reads an unwritten allowzero as 0": (
        "src/sonnx/ops/reshape.py",
        "    if zero is None and 0 in shape:",
        "    if zero is None and 0 in shape and False:",
        "constraints.Reshape"),
    "theory: Reshape accepts two -1 entries": (
        "proofs/constraints.mlw",
        "else if count (-1) l > 1 then false",
        "else if count (-1) l > 2 then false",
        "constraints.Reshape"),
    "theory: Reshape checks no element count when nothing is inferred": (
        "proofs/constraints.mlw",
        "          else prod c = n\n",
        "          else true\n",
        "constraints.Reshape"),
    "python: Pad accepts a pad of -1": (
        "src/sonnx/ops/pad.py",
        "negative = [int(p) for p in pads if p < 0]",
        "negative = [int(p) for p in pads if p < -1]",
        "constraints.Pad"),
    "python: Pad reads mode wrap as constant": (
        "src/sonnx/ops/pad.py",
        "if mode is None or mode == CONSTANT_MODE:",
        "if mode is None or mode in (CONSTANT_MODE, \"wrap\"):",
        "constraints.Pad"),
    "theory: Pad accepts more than 2n pads": (
        "proofs/constraints.mlw",
        "if ilen l <> 2 * ilen n then one R1",
        "if ilen l < 2 * ilen n then one R1",
        "constraints.Pad"),
    "theory: Pad-11's constant_value of another element type passes": (
        "proofs/constraints.mlw",
        "| Elem e -> (match elem_of t with Elem f -> f = e | NoElem -> false end) end)",
        "| Elem _ -> true end)",
        "constraints.Pad"),
    "python: BatchNormalization lets a parameter of shape (1) broadcast": (
        "src/sonnx/ops/batchnormalization.py",
        "if tuple(s.shape) != (c,):",
        "if tuple(s.shape) not in ((c,), (1,)):",
        "constraints.BatchNormalization"),
    "theory: BatchNormalization-7 requires is_test (version off by one)": (
        "proofs/constraints.mlw",
        "let f = app f (if version <= 6 then (if is_int it 1 then FNil else one R3)",
        "let f = app f (if version <= 7 then (if is_int it 1 then FNil else one R3)",
        "constraints.BatchNormalization"),
    "python: GlobalAveragePool accepts a rank-2 X": (
        "src/sonnx/ops/globalaveragepool.py",
        "len(x.shape) < 3:",
        "len(x.shape) < 2:",
        "constraints.GlobalAveragePool"),
    "theory: GlobalAveragePool refuses two attributes once": (
        "proofs/constraints.mlw",
        "= if n <= 0 then FNil else FCons R1 (attrs_found (n - 1))",
        "= if n <= 0 then FNil else FCons R1 FNil",
        "constraints.GlobalAveragePool"),
    "python: MaxPool accepts storage_order 1": (
        "src/sonnx/ops/maxpool.py",
        "or int(order) != 0:",
        "or int(order) not in (0, 1):",
        "constraints.MaxPool"),
    "python: a pooling window reading padding only passes when it is the only one": (
        "src/sonnx/ops/pool.py",
        "        if empty:\n",
        "        if len(empty) > 1:\n",
        "constraints.AveragePool"),
    "theory: the pooling window accepts a pad of -1": (
        "proofs/constraints.mlw",
        "bad (not (all_ge 0 p))",
        "bad (not (all_ge (-1) p))",
        "constraints.MaxPool"),
    "theory: AveragePool refuses count_include_pad 1": (
        "proofs/constraints.mlw",
        "if is_int ci 0 || is_int ci 1 then FNil",
        "if is_int ci 0 then FNil",
        "constraints.AveragePool"),
    "python: Conv accepts an output dimension of 0": (
        "src/sonnx/ops/conv.py",
        "if any(o < 1 for o in out):",
        "if any(o < 0 for o in out):",
        "constraints.Conv"),
    "theory: Conv's group need not divide M": (
        "proofs/constraints.mlw",
        "if fmod c g <> 0 || fmod m g <> 0 then one R1",
        "if fmod c g <> 0 then one R1",
        "constraints.Conv"),
}


def _run(src: Path, tools: Path, proofs: Path, *only: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{tools}"}
    return subprocess.run([sys.executable, "-m", "sonnx_dev.refusal_check", "--proofs", str(proofs),
                           *(f"--only={t}" for t in only)],
                          capture_output=True, text=True, env=env, timeout=GUARD_S, cwd=REPO)


def _disagreements(stdout: str) -> int:
    """The count on the check's last line (not a substring test: "10 disagreements" holds
    "0 disagreements")."""
    m = re.search(r"^refusal_check: (\d+) disagreements$", stdout, re.M)
    assert m, stdout
    return int(m.group(1))


@needs_why3
@pytest.mark.req("@kind:elementwise", "GEMM-R1", "GEMM-R2", "GEMM-R3", "GEMM-R4", "GEMM-R5", "GEMM-R6", "RELU-R1", "RELU-R2", "RELU-R4", "MATMUL-R1", "MATMUL-R2", "MATMUL-R3", "MATMUL-R4", "FLATTEN-R1", "FLATTEN-R2")
@pytest.mark.req("TRANSPOSE-R1", "TRANSPOSE-R2", "SQUEEZE-R1", "SQUEEZE-R2", "SQUEEZE-R3")
@pytest.mark.req("UNSQUEEZE-R1", "UNSQUEEZE-R2", "UNSQUEEZE-R3")
@pytest.mark.req("RESHAPE-R1", "RESHAPE-R2", "RESHAPE-R3")
@pytest.mark.req("PAD-R1", "PAD-R2", "PAD-R3", "PAD-R4", "PAD-R5")
@pytest.mark.req("BATCHNORMALIZATION-R1", "BATCHNORMALIZATION-R2", "BATCHNORMALIZATION-R3", "BATCHNORMALIZATION-R4")
@pytest.mark.req("GLOBALAVERAGEPOOL-R1", "GLOBALAVERAGEPOOL-R2")
@pytest.mark.req("MAXPOOL-R1", "MAXPOOL-R2", "MAXPOOL-R3", "AVERAGEPOOL-R1", "AVERAGEPOOL-R2", "AVERAGEPOOL-R3")
@pytest.mark.req("CONV-R1", "CONV-R2", "CONV-R3", "CONV-R4", "CONV-R5")
def test_theories_agree_with_the_constraint_functions():
    run = _run(REPO / "src", REPO / "tools", REPO / "proofs")
    assert run.returncode == 0, run.stdout + run.stderr
    assert _disagreements(run.stdout) == 0, run.stdout
    # the corpus reaches every verdict of every theory (not a check of accepts only)
    for theory, verdicts in (("elementwise", ("R1", "R4")),
                             ("gemm_refusal", ("R1", "R4")),
                             ("constraints.Elementwise", ("R1", "R2", "R3", "R4")),
                             ("constraints.Gemm", ("R1", "R2", "R3", "R4", "R5", "R6")),
                             ("constraints.Relu", ("R1", "R2", "R4")),
                             ("constraints.MatMul", ("R1", "R2", "R3", "R4")),
                             ("constraints.Flatten", ("R1", "R2")),
                             ("constraints.Transpose", ("R1", "R2")),
                             ("constraints.Squeeze", ("R1", "R2", "R3")),
                             ("constraints.Unsqueeze", ("R1", "R2", "R3")),
                             ("constraints.Reshape", ("R1", "R2", "R3")),
                             ("constraints.Pad", ("R1", "R2", "R3", "R4", "R5")),
                             ("constraints.BatchNormalization", ("R1", "R2", "R3", "R4")),
                             ("constraints.GlobalAveragePool", ("R1", "R2")),
                             ("constraints.MaxPool", ("R1", "R2", "R3")),
                             ("constraints.AveragePool", ("R1", "R2", "R3")),
                             ("constraints.Conv", ("R1", "R2", "R3", "R4", "R5"))):
        line = next(ln for ln in run.stdout.splitlines() if f": {theory}:" in ln)
        counts = dict(re.findall(r"(\w+) (\d+)", line.split("(", 1)[1]))
        assert int(counts["accepted"]) > 0, line
        assert all(int(counts.get(v, 0)) > 0 for v in verdicts), line


@needs_why3
@pytest.mark.req("@kind:elementwise", "GEMM-R1", "GEMM-R2", "GEMM-R3", "GEMM-R4", "GEMM-R5", "GEMM-R6", "RELU-R1", "RELU-R2", "RELU-R4", "MATMUL-R1", "MATMUL-R2", "MATMUL-R3", "MATMUL-R4", "FLATTEN-R1", "FLATTEN-R2")
@pytest.mark.req("TRANSPOSE-R1", "TRANSPOSE-R2", "SQUEEZE-R1", "SQUEEZE-R2", "SQUEEZE-R3")
@pytest.mark.req("UNSQUEEZE-R1", "UNSQUEEZE-R2", "UNSQUEEZE-R3")
@pytest.mark.req("RESHAPE-R1", "RESHAPE-R2", "RESHAPE-R3")
@pytest.mark.req("PAD-R1", "PAD-R2", "PAD-R3", "PAD-R4", "PAD-R5")
@pytest.mark.req("BATCHNORMALIZATION-R1", "BATCHNORMALIZATION-R2", "BATCHNORMALIZATION-R3", "BATCHNORMALIZATION-R4")
@pytest.mark.req("GLOBALAVERAGEPOOL-R1", "GLOBALAVERAGEPOOL-R2")
@pytest.mark.req("MAXPOOL-R1", "MAXPOOL-R2", "MAXPOOL-R3", "AVERAGEPOOL-R1", "AVERAGEPOOL-R2", "AVERAGEPOOL-R3")
@pytest.mark.req("CONV-R1", "CONV-R2", "CONV-R3", "CONV-R4", "CONV-R5")
@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_change_on_one_side_fails(plant, tmp_path):
    rel, old, new, theory = PLANTS[plant]
    root = tmp_path / "r"
    shutil.copytree(REPO / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copytree(REPO / "proofs", root / "proofs",
                    ignore=shutil.ignore_patterns("why3session.xml", "why3shapes.gz", "*.bak"))
    target = root / rel
    text = target.read_text()
    assert text.count(old) == 1, f"the plant's anchor moved in {rel}"
    target.write_text(text.replace(old, new))
    run = _run(root / "src", REPO / "tools", root / "proofs", theory)
    assert run.returncode == 1, run.stdout + run.stderr
    assert _disagreements(run.stdout) > 0, run.stdout
