"""No command writes over one of its inputs or over another of its outputs, and no output is
ever left half-written (src/sonnx/output_files.py).

Each command (validate, conform, run, trace, requirements) is given an output that is an input
in every way a path can alias a file: the same path, relative against absolute, a symbolic link,
a hard link; and two outputs that are one file. Each must exit 2 with one line naming both
paths, leave every input's bytes as they were and write nothing. Then a write that fails half-way
(a serialiser raising, the disk full at fsync) must leave the old file whole and no temporary
file behind."""
from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from sonnx import output_files
from sonnx.output_files import clash, replacing

from ..validate import models as M
from ..validate.test_cli import run   # main(argv) with captured streams, never a traceback

ROOT = Path(__file__).resolve().parents[2]


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry below ``folder``: its bytes, or where a link points. Equal before and after
    a refused command: nothing written, nothing replaced, no temporary file left."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        out[rel] = ("link to " + os.readlink(p)) if p.is_symlink() else p.read_bytes() if p.is_file() else "dir"
    return out


def refused(argv, capsys, *named: str) -> str:
    """Run ``argv``; it must exit 2 with one line on stderr that names each of ``named``."""
    code, out, err = run(argv, capsys)
    assert code == 2, (argv, out, err)
    assert len(err.splitlines()) == 1 and err.endswith("(nothing was written)\n"), err
    for path in named:
        assert path in err, (path, err)
    return err


# ---------------------------------------------------------------- the ways a path can alias a file
def alias(kind: str, target: Path, tmp_path: Path) -> str:
    """A path naming ``target`` (an existing file) in the way ``kind`` says."""
    if kind == "same path":
        return str(target)
    if kind == "relative vs absolute":
        return os.path.relpath(target)          # the caller gives the absolute path
    if kind == "dotted":
        return str(target.parent / "." / ".." / target.parent.name / target.name)
    link = tmp_path / f"{kind.replace(' ', '_')}_{target.name}"
    if kind == "symlink":
        link.symlink_to(target)
    elif kind == "hard link":
        os.link(target, link)
    return str(link)


KINDS = ("same path", "relative vs absolute", "dotted", "symlink", "hard link")


@pytest.fixture
def model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "m.onnx"
    onnx.save(M.mul([2, 3], [2, 3]), path)
    return path


# ---------------------------------------------------------------- the check itself
def test_clash_sees_every_alias_of_an_existing_file(model, tmp_path):
    for kind in KINDS:
        why = clash([("-o", alias(kind, model, tmp_path))], [("the model", str(model))])
        assert why is not None and str(model) in why, kind
    other = tmp_path / "other.onnx"
    other.write_bytes(model.read_bytes())       # equal bytes, another file: no clash
    assert clash([("-o", str(other))], [("the model", str(model))]) is None


def test_two_outputs_that_do_not_exist_yet_clash_by_their_resolved_path(model, tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "to_sub").symlink_to(tmp_path / "sub")
    for a, b in (("new.txt", str(tmp_path / "new.txt")), ("sub/r.json", "to_sub/r.json"),
                 ("sub/../x", "x")):
        why = clash([("-o", a), ("--report", b)], [])
        assert why is not None and a in why and b in why, (a, b)
    assert clash([("-o", "a.txt"), ("--report", "b.txt")], []) is None


def test_inputs_are_not_listed_when_no_output_exists(tmp_path):
    def costly():
        raise AssertionError("listed the inputs although no output exists")
        yield  # pragma: no cover
    assert clash([("-o", str(tmp_path / "new.txt"))], costly()) is None


# ---------------------------------------------------------------- sonnx validate
@pytest.mark.parametrize("kind", KINDS)
def test_validate_never_writes_its_report_over_the_model(model, tmp_path, capsys, kind):
    out = alias(kind, model, tmp_path)
    before = snapshot(tmp_path)
    refused(["validate", str(model), "-o", out], capsys, out, str(model))
    assert snapshot(tmp_path) == before


def test_validate_of_a_folder_never_writes_over_a_model_in_it(model, tmp_path, capsys):
    onnx.save(M.mul([2, 3], [3]), tmp_path / "b.onnx")
    before = snapshot(tmp_path)
    refused(["validate", str(tmp_path), "-o", "b.onnx"], capsys, "b.onnx")
    assert snapshot(tmp_path) == before


def test_validate_never_writes_over_the_weights_of_a_model(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")
    m = M.model([helper.make_node("Mul", ["a", "w"], ["c"])], [M.vi("a", [2, 3])], [M.vi("c", [2, 3])],
                initializers=[w])
    onnx.save(m, tmp_path / "m.onnx", save_as_external_data=True, location="m.weights",
              size_threshold=0)
    (tmp_path / "net.xml").write_text("<net/>")
    (tmp_path / "net.bin").write_bytes(b"\x00" * 8)
    before = snapshot(tmp_path)
    refused(["validate", "m.onnx", "-o", "m.weights"], capsys, "m.weights", "the weights of the model m.onnx")
    refused(["validate", "net.xml", "-o", "net.bin"], capsys, "net.bin", "net.xml")
    assert snapshot(tmp_path) == before


def test_no_command_writes_over_its_configuration(model, tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text('[tool.sonnx]\ncolor = "never"\n')
    before = snapshot(tmp_path)
    refused(["validate", str(model), "-o", "pyproject.toml"], capsys, "pyproject.toml")
    refused(["requirements", "-o", "pyproject.toml"], capsys, "pyproject.toml")
    refused(["conform", str(model), "-o", "pyproject.toml"], capsys, "pyproject.toml")
    assert snapshot(tmp_path) == before
    # --isolated reads no configuration: then it is an ordinary file to write
    code, _, _ = run(["validate", "--isolated", str(model), "-o", "pyproject.toml"], capsys)
    assert code == 0 and "conforms" in (tmp_path / "pyproject.toml").read_text()


# ---------------------------------------------------------------- sonnx conform
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("option", ["-o", "--report"])
def test_conform_never_writes_over_the_model(model, tmp_path, capsys, kind, option):
    out = alias(kind, model, tmp_path)
    argv = ["conform", str(model), "-o", out] if option == "-o" else \
        ["conform", str(model), "-o", str(tmp_path / "new.onnx"), "--report", out]
    before = snapshot(tmp_path)
    refused(argv, capsys, out, str(model))
    assert snapshot(tmp_path) == before


def test_conform_with_one_path_for_model_output_and_report(model, tmp_path, capsys):
    """The case of the issue: the JSON report used to be all that was left of m.onnx."""
    before = snapshot(tmp_path)
    refused(["conform", "m.onnx", "-o", "m.onnx", "--report", "m.onnx"], capsys, "m.onnx")
    assert snapshot(tmp_path) == before


def test_the_refusal_as_a_user_sees_it(model, tmp_path):
    """`python -m sonnx` in a child process: one line, exit 2, the model's bytes unchanged."""
    from .test_conventions import sonnx_cmd
    before = snapshot(tmp_path)
    p = sonnx_cmd("conform", "m.onnx", "-o", "m.onnx", "--report", "m.onnx", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "" and p.stderr == (
        "sonnx conform: --report m.onnx and -o m.onnx are the same file; give each output its own "
        "path (nothing was written)\n")
    p = sonnx_cmd("validate", "m.onnx", "-o", "./m.onnx", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "" and p.stderr == (
        "sonnx validate: -o ./m.onnx is the same file as the model m.onnx; writing it would destroy "
        "the input: choose another path (nothing was written)\n")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("report", ["out.onnx", "./out.onnx", "{tmp}/out.onnx", "linked/out.onnx"])
def test_conform_output_and_report_must_be_two_files(model, tmp_path, capsys, report):
    (tmp_path / "linked").symlink_to(tmp_path)
    report = report.format(tmp=tmp_path)
    before = snapshot(tmp_path)
    refused(["conform", "m.onnx", "-o", "out.onnx", "--report", report], capsys, "out.onnx", report)
    assert snapshot(tmp_path) == before


def test_conform_never_writes_over_the_external_weights_it_reads(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")
    m = M.model([helper.make_node("Mul", ["a", "w"], ["c"])], [M.vi("a", [2, 3])], [M.vi("c", [2, 3])],
                initializers=[w])
    onnx.save(m, tmp_path / "m.onnx", save_as_external_data=True, location="m.weights", size_threshold=0)
    before = snapshot(tmp_path)
    refused(["conform", "m.onnx", "-o", "m.weights"], capsys, "m.weights")
    refused(["conform", "m.onnx", "-o", "o.onnx", "--report", "m.weights"], capsys, "m.weights")
    assert snapshot(tmp_path) == before


# ---------------------------------------------------------------- sonnx run
def two_outputs() -> onnx.ModelProto:
    return M.model([helper.make_node("Mul", ["a", "b"], ["prod"]), helper.make_node("Add", ["a", "b"], ["sum"])],
                   [M.vi("a", [2, 3]), M.vi("b", [2, 3])], [M.vi("prod", [2, 3]), M.vi("sum", [2, 3])])


@pytest.fixture
def run_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    onnx.save(two_outputs(), tmp_path / "m.onnx")
    (tmp_path / "out").mkdir()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "out" / "sum.npy", a + 1)      # an input inside -o DIR, named like an output
    return tmp_path


@pytest.mark.parametrize("case", [
    ("an input named like an output's file", "b=out/sum.npy", None, "out/sum.npy"),
    ("the .hex of an output is a link to an input", "b=a.npy", ("out/prod.hex", "symlink", "a.npy"), "out/prod.hex"),
    ("run.json is a hard link to the model", "b=a.npy", ("out/run.json", "hard link", "m.onnx"), "out/run.json"),
    ("an output's .npy is a link to the input", "b=a.npy", ("out/sum.npy", "symlink", "out/../a.npy"), "out/sum.npy"),
], ids=lambda c: c[0])
def test_run_never_writes_over_an_input(run_files, capsys, case):
    _, given, planted, named = case
    if planted:
        where, kind, target = planted
        (run_files / where).unlink(missing_ok=True)
        if kind == "symlink":
            (run_files / where).symlink_to(run_files / target)
        else:
            os.link(run_files / target, run_files / where)
    before = snapshot(run_files)
    refused(["run", "m.onnx", "--input", "a=a.npy", "--input", given, "-o", "out", "--hex"], capsys, named)
    assert snapshot(run_files) == before


def test_run_outputs_in_one_folder_never_share_a_file(run_files, capsys):
    """Two outputs' files that are one file through a link: the second would replace the first."""
    (run_files / "out" / "sum.npy").unlink()
    (run_files / "out" / "prod.npy").write_bytes(b"old")
    (run_files / "out" / "sum.npy").symlink_to(run_files / "out" / "prod.npy")
    before = snapshot(run_files)
    refused(["run", "m.onnx", "--input", "a=a.npy", "--input", "b=a.npy", "-o", "out"], capsys,
            "out/prod.npy", "out/sum.npy")
    assert snapshot(run_files) == before


def test_run_writes_only_npy_unless_hex_is_asked_for(run_files, capsys):
    """.npy is the default output format: without --hex no .hex file is written (and --hex
    without -o is refused: it names the format of -o's files)."""
    code, _, err = run(["run", "m.onnx", "--input", "a=a.npy", "--input", "b=a.npy", "-o", "new"], capsys)
    assert code == 0, err
    assert sorted(os.listdir(run_files / "new")) == ["prod.npy", "run.json", "sum.npy"]
    assert "hex" not in json.loads((run_files / "new" / "run.json").read_text())["outputs"]["prod"]
    code, out, err = run(["run", "m.onnx", "--input", "a=a.npy", "--input", "b=a.npy", "--hex"], capsys)
    assert code == 2 and out == "" and err == "sonnx run: --hex names the format of the files of -o DIR; give -o DIR too\n"


def test_hex_text_is_streamed_in_chunks_with_the_whole_text(monkeypatch, tmp_path):
    """write_hex formats a chunk at a time (never the whole array's text at once) and writes the
    text format_array gives for the whole array."""
    from sonnx.run import hexfloat, io
    monkeypatch.setattr(io, "HEX_CHUNK", 7)
    a = np.random.default_rng(0).standard_normal((5, 9)).astype(np.float32)
    sizes = []
    real = hexfloat.format_array
    monkeypatch.setattr(hexfloat, "format_array", lambda x: sizes.append(x.size) or real(x))
    with open(tmp_path / "a.hex", "w") as fh:
        io.write_hex(fh, a)
    assert max(sizes) == 7 and sum(sizes) == a.size
    assert (tmp_path / "a.hex").read_text() == real(a)


def test_run_writes_every_output_inside_its_folder(run_files, capsys):
    """write_outputs keeps the files of every output (not the last one's only), each inside -o
    DIR (none in the current directory), and lists them all."""
    from sonnx.run import io
    code, out, err = run(["run", "m.onnx", "--input", "a=a.npy", "--input", "b=a.npy", "-o", "out", "-v",
                          "--hex"], capsys)
    assert code == 0, err
    names = ["prod.npy", "prod.hex", "sum.npy", "sum.hex", "run.json"]
    assert sorted(os.listdir(run_files / "out")) == sorted(names)
    assert sorted(os.listdir(run_files)) == ["a.npy", "m.onnx", "out"]
    assert [line.split()[-1] for line in err.splitlines() if " wrote " in line] == [f"out/{n}" for n in names]
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.load(run_files / "out" / "sum.npy").tobytes() == (a + a).tobytes()
    assert np.load(run_files / "out" / "prod.npy").tobytes() == (a * a).tobytes()
    summary = json.loads((run_files / "out" / "run.json").read_text())
    assert {n: (o["npy"], o["hex"]) for n, o in summary["outputs"].items()} == {
        "prod": ("prod.npy", "prod.hex"), "sum": ("sum.npy", "sum.hex")}
    written = io.write_outputs(str(run_files / "again"), {"prod": a, "sum": a},
                               {"outputs": {"prod": {}, "sum": {}}}, hex_text=True)
    assert written == [str(run_files / "again" / n) for n in names]


# ---------------------------------------------------------------- sonnx trace and requirements
@pytest.fixture
def checkout(tmp_path):
    """A stand-in for a sonnx checkout (what `trace --root` accepts), so that a planted fault in
    the check writes over a copy, never over this tree's files."""
    root = tmp_path / "checkout"
    (root / "spec").mkdir(parents=True)
    (root / "src" / "sonnx" / "data").mkdir(parents=True)
    (root / "src" / "sonnx" / "data" / "profile.toml").write_bytes(
        (ROOT / "src" / "sonnx" / "data" / "profile.toml").read_bytes())
    return root


def test_trace_never_writes_over_its_evidence_or_the_checkout(tmp_path, checkout, capsys, monkeypatch):
    from sonnx.trace import matrix

    def no_work(*a, **k):
        raise AssertionError("the trace judged the checkout before refusing its output")
    monkeypatch.setattr(matrix, "build", no_work)
    monkeypatch.chdir(tmp_path)
    junit = tmp_path / "junit.xml"
    junit.write_text("<testsuites/>")
    registry = checkout / "src" / "sonnx" / "data" / "profile.toml"
    (tmp_path / "reg.toml").symlink_to(registry)
    os.link(junit, tmp_path / "trace.md")
    base = ["trace", "--isolated", "--root", str(checkout)]
    before = snapshot(tmp_path)
    refused([*base, "--junit", str(junit), "-o", "junit.xml"], capsys, "junit.xml")
    refused([*base, "-o", "reg.toml"], capsys, "reg.toml", str(registry))
    refused([*base, "--junit", str(junit), "--output-dir", str(tmp_path), "--format", "json,md"], capsys,
            "trace.md", str(junit))
    assert snapshot(tmp_path) == before


def test_requirements_never_writes_over_the_registry_it_lists(tmp_path, capsys, monkeypatch):
    """The registry is read from the package; here from a copy of it, so that a planted fault
    in the check writes over the copy."""
    from importlib import resources
    from sonnx import requirements
    package = tmp_path / "package"
    for rel in requirements.data_files():       # the profile's rules and each operator's
        (package / rel).parent.mkdir(parents=True, exist_ok=True)
        (package / rel).write_bytes(resources.files("sonnx").joinpath(rel).read_bytes())
    monkeypatch.setattr(resources, "files", lambda name: package)
    monkeypatch.chdir(tmp_path)
    for n, rel in enumerate(requirements.data_files()):
        (tmp_path / f"reg{n}.toml").symlink_to(package / rel)
    before = snapshot(tmp_path)
    for n, rel in enumerate(requirements.data_files()):
        refused(["requirements", "--isolated", "-o", f"reg{n}.toml"], capsys, f"reg{n}.toml", str(package / rel))
    assert snapshot(tmp_path) == before


# ---------------------------------------------------------------- an interrupted write
def disk_full(monkeypatch):
    """Every write through output_files fails at its last step, as on a full disk."""
    def fsync(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(output_files.os, "fsync", fsync)


def test_a_failed_write_keeps_the_old_report_whole(model, tmp_path, capsys, monkeypatch):
    (tmp_path / "r.txt").write_text("the old report\n")
    (tmp_path / "reqs.txt").write_text("the old list\n")
    disk_full(monkeypatch)
    before = snapshot(tmp_path)
    for argv, prog in ((["validate", "m.onnx", "-o", "r.txt"], "sonnx validate"),
                       (["requirements", "-o", "reqs.txt"], "sonnx requirements")):
        code, out, err = run(argv, capsys)
        assert code == 2 and err.startswith(f"{prog}: cannot write ") and "No space left" in err, err
    assert snapshot(tmp_path) == before


def test_conform_interrupted_half_way_keeps_the_old_output(model, tmp_path, capsys, monkeypatch):
    """The serialiser writes half a model, then fails: the old OUT stays, whole."""
    (tmp_path / "o.onnx").write_bytes(b"the old output")
    (tmp_path / "o.onnx.conform.json").write_bytes(b"the old report")

    def half_save(model, fh, *a, **k):
        data = model.SerializeToString()
        fh.write(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(onnx, "save", half_save)
    before = snapshot(tmp_path)
    code, out, err = run(["conform", "-q", "m.onnx", "-o", "o.onnx"], capsys)
    assert code == 2 and "No space left" in err and len(err.splitlines()) == 1, err
    assert snapshot(tmp_path) == before


def test_run_interrupted_half_way_keeps_the_old_files(run_files, capsys, monkeypatch):
    out = run_files / "out"
    for name in ("prod.npy", "prod.hex", "sum.hex", "run.json"):
        (out / name).write_text(f"the old {name}")
    real_save = np.save

    def half_save(file, arr, *a, **k):      # the second output's .npy fails half-way
        if arr.tobytes() == (np.arange(6, dtype=np.float32).reshape(2, 3) * 2).tobytes():
            file.write(b"\x93NUMPY half")
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(file, arr, *a, **k)
    monkeypatch.setattr(np, "save", half_save)
    before = snapshot(run_files)
    code, _, err = run(["run", "m.onnx", "--input", "a=a.npy", "--input", "b=a.npy", "-o", "out", "--hex"],
                       capsys)
    assert code == 2 and "No space left" in err and len(err.splitlines()) == 1, err
    after = snapshot(run_files)
    # the first output was written whole before the failure; every other file is the old one
    assert {k: v for k, v in after.items() if not k.startswith("out/prod.")} == \
        {k: v for k, v in before.items() if not k.startswith("out/prod.")}
    assert sorted(after) == sorted(before)     # no temporary file left


def test_replacing_leaves_the_old_file_on_any_exception_and_keeps_links_and_modes(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old")
    target.chmod(0o640)
    for exc in (KeyboardInterrupt, ValueError, OSError):
        with pytest.raises(exc):
            with replacing(str(target)) as fh:
                fh.write("half of the new")
                raise exc()
        assert os.listdir(tmp_path) == ["f.txt"] and target.read_text() == "old"
    (tmp_path / "link.txt").symlink_to(target)
    with replacing(str(tmp_path / "link.txt")) as fh:
        fh.write("new")
    assert (tmp_path / "link.txt").is_symlink() and target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(os.listdir(tmp_path)) == ["f.txt", "link.txt"]
    long_name = tmp_path / ("n" * 250)      # the temporary's name must fit too
    with replacing(str(long_name)) as fh:
        fh.write("long")
    assert long_name.read_text() == "long"
    with replacing(os.devnull) as fh:       # a device is written, never replaced
        fh.write("nothing")
    assert os.path.exists(os.devnull) and not os.path.isfile(os.devnull)
