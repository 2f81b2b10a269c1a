"""`sonnx run` on bad input: a non-conformant model (its findings, each with its requirement
ID), unknown or missing inputs, wrong shapes and types, unreadable files, bad hex lines, an
output folder that cannot be made: exit 2, one line on stderr, never a traceback (checked both
through main(argv) and in a subprocess)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from sonnx.cli import main
from sonnx.run import hexfloat

from .models import MLP_IDS, TensorProto, mlp_path, one_node, save

MODEL = mlp_path(MLP_IDS[0])       # input x: float (2, 8)
X = "x"


@pytest.fixture
def files(tmp_path):
    good = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", good)
    np.save(tmp_path / "x_int64.npy", good.astype(np.int64))
    np.save(tmp_path / "x_double.npy", good.astype(np.float64))
    np.save(tmp_path / "x_shape.npy", good.reshape(4, 4))
    np.save(tmp_path / "x_row.npy", good[:1])
    np.save(tmp_path / "x_big_endian.npy", good.astype(">f4"))
    np.savez(tmp_path / "two.npz", a=good, b=good)
    np.savez(tmp_path / "unknown_key.npz", x=good, z=good)
    (tmp_path / "x.txt").write_text(hexfloat.format_array(good))
    (tmp_path / "short.txt").write_text("".join(hexfloat.format_array(good).splitlines(True)[:15]))
    lines = hexfloat.format_array(good).splitlines(True)
    (tmp_path / "decimal.txt").write_text("".join(lines[:3] + ["0.1\n"] + lines[4:]))
    (tmp_path / "rounded.txt").write_text("".join(lines[:3] + ["0x1.0000001p+0\n"] + lines[4:]))
    (tmp_path / "latin1.txt").write_bytes(b"\xff\xfe" + b"0x1p+0\n" * 16)
    (tmp_path / "corrupt.npy").write_bytes(b"\x93NUMPY\x01\x00garbage")
    (tmp_path / "empty.npy").write_bytes(b"")
    (tmp_path / "notzip.npz").write_bytes(b"PK\x03\x04 not really")
    np.save(tmp_path / "npy.npy", good)
    (tmp_path / "npy.npy").rename(tmp_path / "npy_named.npz")
    np.savez(tmp_path / "archive.npz", x=good)
    (tmp_path / "archive.npz").rename(tmp_path / "archive_named.npy")
    (tmp_path / "text.npy").write_text("0x1p+0\n" * 16)
    import zipfile
    with zipfile.ZipFile(tmp_path / "bad_member.npz", "w") as z:
        z.writestr("x.npy", b"\x93NUMPY garbage")
    (tmp_path / "x.csv").write_text("1,2\n")
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("")
    np.save(tmp_path / "object.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    return tmp_path


BAD = {
    "unknown name": (["--input", "y={d}/x.npy"], "has no input 'y'; its inputs: x (float, shape (2, 8))"),
    "missing input": ([], "missing input x (float, shape (2, 8))"),
    "given twice": (["--input", "x={d}/x.npy", "--input", "x={d}/x.npy"], "input x is given twice"),
    "int64 for float": (["--input", "x={d}/x_int64.npy"], "declared float, the file holds int64; sonnx never casts"),
    "double for float": (["--input", "x={d}/x_double.npy"], "declared float, the file holds double"),
    "wrong shape": (["--input", "x={d}/x_shape.npy"], "has shape (4, 4), the model declares (2, 8)"),
    "batch 1 for batch 2": (["--input", "x={d}/x_row.npy"], "has shape (1, 8), the model declares (2, 8)"),
    "npz, two unnamed keys": (["--input", "x={d}/two.npz"], "holds ['a', 'b'] but no array named x"),
    "npz, an unknown key": (["--input", "{d}/unknown_key.npz"], "has no input 'z'"),
    "short text": (["--input", "x={d}/short.txt"], "holds 15 lines, input x (float, shape (2, 8)) needs 16"),
    "decimal text": (["--input", "x={d}/decimal.txt"], "line 4: '0.1' is not a hex float"),
    "text that rounds": (["--input", "x={d}/rounded.txt"], "line 4: '0x1.0000001p+0' is not a float value"),
    "text not utf-8": (["--input", "x={d}/latin1.txt"], "cannot read it as text"),
    "corrupt npy": (["--input", "x={d}/corrupt.npy"], "cannot read it as .npy"),
    "empty npy": (["--input", "x={d}/empty.npy"], "cannot read it as .npy"),
    "pickled npy": (["--input", "x={d}/object.npy"], "the file holds Python objects (numpy |O); sonnx never casts"),
    "not a zip": (["--input", "x={d}/notzip.npz"], "cannot read it as .npz"),
    "npy named npz": (["--input", "x={d}/npy_named.npz"], "is a .npy file, not a .npz archive"),
    "npy named npz, no name": (["--input", "{d}/npy_named.npz"], "is a .npy file, not a .npz archive"),
    "npz named npy": (["--input", "x={d}/archive_named.npy"], "is a .npz archive, not a .npy file"),
    "text named npy": (["--input", "x={d}/text.npy"], "cannot read it as .npy"),
    "npz with a bad member": (["--input", "{d}/bad_member.npz"], "cannot read it as .npz"),
    "unknown format": (["--input", "x={d}/x.csv"], "unknown input format '.csv'"),
    "a directory": (["--input", "x={d}/adir"], "is a directory"),
    "no such file": (["--input", "x={d}/nope.npy"], "nope.npy: no such file"),
    "npy without a name": (["--input", "{d}/x.npy"], "name the input (NAME=FILE)"),
    "empty file name": (["--input", "x="], "give NAME=FILE"),
    "-o parent missing": (["--input", "x={d}/x.npy", "-o", "{d}/no/such/out"], "does not exist; create it first"),
    "-o is a file": (["--input", "x={d}/x.npy", "-o", "{d}/afile"], "is a file, not a directory"),
}


def _args(spec, d) -> list[str]:
    return [a.replace("{d}", str(d)) for a in spec]


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_and_exit_2(files, capsys, case):
    spec, words = BAD[case]
    code = main(["run", MODEL, *_args(spec, files)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out)
    assert err.count("\n") == 1 and err.startswith("sonnx run: ") and words in err, err


@pytest.mark.parametrize("case", ["int64 for float", "corrupt npy", "text that rounds", "-o parent missing"])
def test_bad_input_in_a_subprocess(files, case):
    spec, words = BAD[case]
    p = subprocess.run([sys.executable, "-m", "sonnx", "run", MODEL, *_args(spec, files)],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == "" and "Traceback" not in p.stderr
    assert p.stderr.count("\n") == 1 and words in p.stderr, p.stderr


def test_names_and_paths_holding_an_equals_sign(tmp_path, capsys):
    """ONNX names and paths may both hold '=': NAME is the longest input name the argument
    starts with; a bare existing FILE.npz is a file, whatever it holds."""
    model = one_node("Mul", TensorProto.FLOAT)
    model.graph.input[0].name = "A=1"
    model.graph.node[0].input[0] = "A=1"
    path = save(model, tmp_path / "m.onnx")
    (tmp_path / "d=x").mkdir()
    np.save(tmp_path / "d=x" / "a.npy", np.full((2, 3), 3, np.float32))
    np.save(tmp_path / "b.npy", np.full((2, 3), 2, np.float32))
    code = main(["run", path, "--input", f"A=1={tmp_path}/d=x/a.npy", "--input", f"B={tmp_path}/b.npy"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    np.savez(tmp_path / "d=x" / "all.npz", **{"A=1": np.ones((2, 3), np.float32), "B": np.ones((2, 3), np.float32)})
    assert main(["run", path, "--input", f"{tmp_path}/d=x/all.npz"]) == 0
    assert main(["run", path, "--input", f"C={tmp_path}/b.npy"]) == 2
    assert "has no input 'C'" in capsys.readouterr().err


def test_an_openvino_ir_is_not_run(tmp_path, capsys):
    (tmp_path / "m.xml").write_text("<net/>")
    assert main(["run", str(tmp_path / "m.xml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "executes ONNX models" in err


def test_good_inputs_pass(files, capsys):
    """The same files as above where they are right: each runs (exit 0) with the same result;
    a big-endian float32 .npy holds the same values, so it is no cast."""
    outs = set()
    (files / "x_bom.txt").write_text("\ufeff" + (files / "x.txt").read_text(), encoding="utf-8")
    for spec in (["--input", "x={d}/x.npy"], ["--input", "x={d}/x.txt"], ["--input", "x={d}/x_big_endian.npy"],
                 ["--input", "x={d}/x_bom.txt"]):
        assert main(["run", MODEL, *_args(spec, files)]) == 0
        out, err = capsys.readouterr()
        assert err == ""
        outs.add(out)
    assert len(outs) == 1


@pytest.mark.req("GEMM-R4")
def test_a_non_conformant_model_is_refused_with_its_findings(files, capsys):
    """The exported MLP with its (N,) biases: each GEMM-R4 finding on its own line, then why
    nothing ran; exit 2, stdout empty."""
    refused = MODEL.replace("_c_full", "")
    code = main(["run", refused, "--input", f"x={files}/x.npy"])
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == 2 and out == ""
    assert [ln.split("]")[0] for ln in lines[:-1]] == ["sonnx run: [GEMM-R4"] * 3
    assert "does not conform to the SONNX profile (3 finding(s))" in lines[-1]
    p = subprocess.run([sys.executable, "-m", "sonnx", "run", refused, "--input", f"x={files}/x.npy"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr and p.stderr.count("[GEMM-R4]") == 3


@pytest.mark.req("PROF-R1")
def test_an_operator_outside_the_profile_is_refused(tmp_path, capsys):
    path = save(one_node("Pow", TensorProto.FLOAT), tmp_path / "pow.onnx")
    np.save(tmp_path / "a.npy", np.ones((2, 3), np.float32))
    code = main(["run", path, "--input", f"A={tmp_path}/a.npy", "--input", f"B={tmp_path}/a.npy"])
    err = capsys.readouterr().err
    assert code == 2 and "[PROF-R1]" in err and "Pow" in err


@pytest.mark.parametrize("content", [b"", b"not a model", b"\x08\x07" * 10])
def test_an_unreadable_model_is_one_line(tmp_path, capsys, content):
    (tmp_path / "m.onnx").write_bytes(content)
    code = main(["run", str(tmp_path / "m.onnx")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("sonnx run: "), err


def test_a_missing_model_and_a_bad_mode(tmp_path, capsys):
    assert main(["run", str(tmp_path / "none.onnx")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    with pytest.raises(SystemExit) as exc:
        main(["run", MODEL, "--mode", "quick"])
    assert exc.value.code == 2 and "invalid choice: 'quick'" in capsys.readouterr().err


def test_progress_per_node_with_v(files, capsys):
    assert main(["run", MODEL, "--input", f"x={files}/x.npy", "-v"]) == 0
    err = capsys.readouterr().err.splitlines()
    import onnx
    nodes = onnx.load(MODEL).graph.node
    assert len(nodes) == 5
    assert err == [f"sonnx run: node {i}/5 {n.op_type} {n.name}" for i, n in enumerate(nodes, 1)]


def test_the_python_api_refuses_the_same_inputs(files):
    import sonnx
    from sonnx.run import InputError, RunError
    good = np.load(files / "x.npy")
    with pytest.raises(InputError, match="sonnx never casts"):
        sonnx.run(MODEL, {"x": good.astype(np.float64)})
    with pytest.raises(InputError, match="the model declares"):
        sonnx.run(MODEL, {"x": good[:1]})
    with pytest.raises(InputError, match="has no input 'y'"):
        sonnx.run(MODEL, {"x": good, "y": good})
    with pytest.raises(InputError, match="give a numpy.ndarray, not list"):
        sonnx.run(MODEL, {"x": good.tolist()})
    with pytest.raises(ValueError, match="unknown mode"):
        sonnx.run(MODEL, {"x": good}, mode="quick")
    with pytest.raises(RunError) as exc:
        sonnx.run(MODEL.replace("_c_full", ""), {"x": good})
    assert [f.rule for f in exc.value.findings] == ["GEMM-R4"] * 3


def test_progress_without_v_once_a_run_takes_long(files, capsys, monkeypatch):
    """Without -v a line appears about once a second of run time (a clock advancing 2 s per
    reading: every node is shown); with -q none."""
    from sonnx.run import cli as run_cli
    clock = iter(range(0, 10**6, 2))
    monkeypatch.setattr(run_cli.time, "perf_counter", lambda: float(next(clock)))
    assert main(["run", MODEL, "--input", f"x={files}/x.npy"]) == 0
    assert capsys.readouterr().err.count("sonnx run: node ") == 5
    assert main(["run", MODEL, "--input", f"x={files}/x.npy", "-q"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


@pytest.mark.parametrize("suffix", [".npy", ".npz", ".txt"])
def test_corrupted_input_files_never_give_a_traceback(tmp_path, capsys, suffix):
    """100 byte-level mutations (flips, cuts, insertions) of a valid input file per format: each
    run exits 0 (the mutation kept a valid file of the right type and shape) or 2 with one line."""
    good = np.random.default_rng(5).standard_normal((2, 8)).astype(np.float32)
    src = tmp_path / f"good{suffix}"
    if suffix == ".npy":
        np.save(src, good)
    elif suffix == ".npz":
        np.savez(src, x=good)
    else:
        src.write_text(hexfloat.format_array(good))
    data = src.read_bytes()
    rng = np.random.default_rng(15)
    codes = []
    for k in range(100):
        b = bytearray(data)
        for _ in range(int(rng.integers(1, 4))):
            i = int(rng.integers(0, len(b)))
            what = rng.integers(0, 3)
            if what == 0:
                b[i] ^= 1 << int(rng.integers(0, 8))
            elif what == 1:
                del b[i:i + int(rng.integers(1, 64))]
            else:
                b[i:i] = bytes(rng.integers(0, 256, int(rng.integers(1, 8)), dtype=np.uint8))
        path = tmp_path / f"m{k}{suffix}"
        path.write_bytes(bytes(b))
        code = main(["run", MODEL, "--input", f"x={path}"])
        out, err = capsys.readouterr()
        assert code in (0, 2), (k, code)
        if code == 2:
            assert err.count("\n") == 1 and err.startswith("sonnx run: "), (k, err)
        codes.append(code)
    assert codes.count(2) > 50           # most mutations break the file, and are caught


def _without_llvmlite(monkeypatch):
    import dataclasses

    from sonnx.ops import gemm
    from sonnx.ops.gemm import fold as gemm_fold
    monkeypatch.setenv(gemm_fold.FORCE_NUMPY_ENV, "1")      # the numpy fold, as without llvmlite
    monkeypatch.setattr(gemm_fold, "_FOLD", [])
    monkeypatch.setattr(gemm_fold, "_warned", [])
    # the model's layers are small enough for the proved C (Gemm's size rule): the rule made to
    # admit nothing, so that its float Gemm runs the fold, as a larger model's would
    nothing = dataclasses.replace(gemm.C_DEFAULT_SIZES, admits=lambda m, n, k: False)
    monkeypatch.setattr(gemm, "C_BINDING", dataclasses.replace(gemm.C_BINDING, sizes=nothing))
    return gemm_fold


def test_slow_fold_notice_is_one_line_with_the_install_command(files, capsys, monkeypatch):
    """Without llvmlite an exact run says so in one line naming the install command, not as a
    Python warning with a file name, line number and source line."""
    gemm_fold = _without_llvmlite(monkeypatch)
    from sonnx.run import chain     # node by node: a fused chain runs no fold (chain.py)
    monkeypatch.setattr(chain, "fuse", lambda loaded, steps, mode: list(steps))
    code = main(["run", MODEL, "--input", f"x={files}/x.npy"])
    out, err = capsys.readouterr()
    assert code == 0 and out
    assert err == gemm_fold.SLOW_WARNING + "\n" and "pip install sonnx[fast-exact]" in err
    monkeypatch.setattr(gemm_fold, "_FOLD", [])
    monkeypatch.setattr(gemm_fold, "_warned", [])


def test_planted_raw_warning_is_caught(files, capsys, monkeypatch):
    """Planted fault: the command line leaves the notice to Python's warning machinery (which
    prints a source line; under pytest it records the warning): the one line is missing."""
    import sonnx.cli as cli
    gemm_fold = _without_llvmlite(monkeypatch)
    from sonnx.run import chain     # node by node: a fused chain runs no fold (chain.py)
    monkeypatch.setattr(chain, "fuse", lambda loaded, steps, mode: list(steps))
    monkeypatch.setattr(cli, "_notes_as_one_line", lambda show: show)
    assert main(["run", MODEL, "--input", f"x={files}/x.npy"]) == 0
    err = capsys.readouterr().err
    assert err != gemm_fold.SLOW_WARNING + "\n"
    monkeypatch.setattr(gemm_fold, "_FOLD", [])
