"""Every kernel path gives the proofs' bits (round to nearest even, subnormals kept) whatever
floating-point environment another library left the thread in, and gives the caller's
environment back (sonnx.fpenv, src/sonnx/c/sonnx_kernels.c).

A planted shared library, compiled here with gcc (tests/fpenv/plant.c), sets the rounding mode
(fesetround) and FTZ/DAZ (MXCSR bits 15 and 6; FPCR.FZ on aarch64) from a constructor, as the
start-up code of a -ffast-math library does, or later on request. Everything runs in child
processes (tests/fpenv/probe.py) so this process's environment stays clean. The planted faults
(the Python guard that never switches, the C entry points that do not switch) must be caught.
"""
from __future__ import annotations

import ctypes
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sonnx
from sonnx import fpenv

HERE = Path(__file__).resolve().parent
SRC = Path(sonnx.__file__).resolve().parents[1]        # this tree's sources, for the children
MODES = ["upward", "downward", "towardzero", "ftz", "daz", "upward+ftz+daz"]
KERNELS = ("mul", "add", "sub", "relu", "gemm", "matmul")
# the paths through sonnx.fpenv (numpy kernels, sonnx run's executor, onnx.reference) and the
# C entry points called directly (their own guard, sonnx_kernels.c)
STRUCTURAL = ("squeeze", "unsqueeze", "reshape")      # numpy kernels only (no C kernel), moving data
ARITHMETIC_NUMPY = ("div",)                             # numpy kernels only (no C kernel), computing
PYTHON_PATHS = [f"sonnx.{k} {t}" for k in KERNELS + STRUCTURAL + ARITHMETIC_NUMPY for t in ("float32", "float64")] + \
    [f"{p} {t}" for p in ("sonnx.gemm threaded", "sonnx.Session unfused", "reference.new_ops") for t in ("float32", "float64")] + \
    [f"sonnx.{k} {t}" for k in ("maxpool", "averagepool", "globalaveragepool") for t in ("float32", "float64")]
C_PATHS = [f"C sonnx_{k}_f{w}" for k in ("mul", "add", "sub", "gemm") for w in (32, 64)]
# a Session's fused C chain (run/chain.py: one call of sonnx_chain_run, which switches itself),
# and sonnx.run, which runs one (the probe model's six nodes are one chain)
CHAIN_PATHS = [f"{p} {t}" for p in ("sonnx.Session fused", "sonnx.run") for t in ("float32", "float64")]
CK_PATHS = [f"c_kernels.{k} {t}" for k in KERNELS for t in ("float32", "float64")]
# the sticky exception flags (MXCSR bits 0-5) change with any arithmetic, guarded or not: the
# environment compared before/after a call is the rest (rounding, FTZ, DAZ, exception masks)
FLAGS = 0x3F

needs_plant = pytest.mark.skipif(
    not shutil.which("gcc") or platform.machine().lower() not in ("x86_64", "amd64", "aarch64")
    or not fpenv.SUPPORTED,
    reason="the planted library needs gcc (apt-get install gcc) on x86-64 or aarch64 Linux/glibc")


@pytest.fixture(scope="module")
def plant(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("plant") / "libplant.so"
    subprocess.run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-Wmissing-prototypes",
                    "-shared", "-fPIC", "-o", str(out), str(HERE / "plant.c")], check=True)
    return out


@pytest.fixture(scope="module")
def c_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("c-cache")


def _child_env(c_cache: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("SONNX_PLANT", "LD_PRELOAD")}
    env.update(PYTHONPATH=os.pathsep.join([str(SRC), str(HERE.parents[1])]), SONNX_C_CACHE=str(c_cache))
    env.update(extra)
    return env


def run_child(code: str, plant: Path, c_cache: Path, fault: str) -> dict:
    """Run an operator's fpenv child script (``code``: argv = plant library, fault, modes) in a
    fresh process, so this process's floating-point environment stays clean; its JSON answer."""
    p = subprocess.run([sys.executable, "-c", code, str(plant), fault, ",".join(MODES)],
                       capture_output=True, text=True, env=_child_env(c_cache), timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def _probe(plant: Path, c_cache: Path, fault: str, at_load: str | None = None) -> dict:
    extra = {"SONNX_PLANT": at_load} if at_load else {}
    p = subprocess.run([sys.executable, str(HERE / "probe.py"), str(plant), ",".join(["default", *MODES]), fault],
                       capture_output=True, text=True, env=_child_env(c_cache, **extra), timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def guarded_run(plant, c_cache) -> dict:
    return _probe(plant, c_cache, "none", at_load="upward+ftz+daz")


@needs_plant
@pytest.mark.req("@values")
def test_every_path_gives_the_default_environment_bits_in_every_mode(guarded_run):
    base = guarded_run["default"]
    assert set(PYTHON_PATHS + C_PATHS + CK_PATHS + CHAIN_PATHS) == set(base)
    # the threaded path did run on a worker thread too (the compiled fold splits 16 x 16 when
    # told to; without llvmlite the numpy fold runs on the caller's thread only)
    workers = guarded_run["fold_workers"]
    assert workers["min"] >= 1 or not workers["compiled"], workers
    # the witnesses of the issue: float32(1/3) * 3 is 0x3f800000, 2^-70 * 2^-70 is the
    # subnormal 0x200 (7.17e-43)
    for path in ("sonnx.mul float32", "c_kernels.mul float32", "C sonnx_mul_f32"):
        assert base[path][0].split()[1:] == ["3f800000", "200"], path
    assert np.float32(7.17e-43).view(np.uint32) == 0x200
    for mode in MODES:
        wrong = [p for p in base if guarded_run[mode][p][0] != base[p][0]]
        assert wrong == [], f"{mode}: {wrong}"


@needs_plant
def test_the_plant_really_changes_the_environment(guarded_run):
    """The constructor applied its mode at load (as crtfastmath.o does), and each mode is what
    it says: without this, equal bits above would prove nothing."""
    control, rounding = guarded_run["at_load"]
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert control & 0x8040 == 0x8040 and control & 0x6000 == 0x4000   # FTZ, DAZ, round up
        by_mode = {m: guarded_run[m]["sonnx.mul float32"][1][0] for m in MODES}
        assert by_mode["ftz"] & 0xE040 == 0x8000 and by_mode["daz"] & 0xE040 == 0x0040
        assert by_mode["towardzero"] & 0x6000 == 0x6000
    assert rounding != guarded_run["default"]["sonnx.mul float32"][1][1]


@needs_plant
def test_the_callers_environment_is_given_back(guarded_run):
    for mode in ["default", *MODES]:
        for path, (_, before, after) in guarded_run[mode].items():
            assert (before[0] & ~FLAGS, before[1]) == (after[0] & ~FLAGS, after[1]), (mode, path)


def _caught(run: dict, base: dict, paths: list[str]) -> dict[str, list[str]]:
    """mode -> the paths among ``paths`` that should differ under that mode but do not. Relu
    and MaxPool round nothing: only DAZ (a subnormal compared as zero) changes them."""
    missed = {}
    for mode in MODES:
        expect = [p for p in paths if not ("relu" in p or "maxpool" in p) or "daz" in mode]
        missed[mode] = [p for p in expect if run[mode][p][0] == base[p][0]]
    return missed


def _runs_c(op: str, type_name: str) -> bool:
    """sonnx.<op> runs a proved C entry point on 8 x 8 (x 8) arrays of this type by default."""
    from sonnx import c_kernels
    from sonnx.ops import gemm
    dtype = np.dtype(type_name)
    stem = "gemm" if op == "matmul" else op        # MatMul runs Gemm's kernel
    if c_kernels.default_entry(stem, dtype) is None:
        return False
    return stem != "gemm" or gemm.C_BINDING.runs_by_default_at(f"f{dtype.itemsize * 8}", 8, 8, 8)


@needs_plant
def test_planted_python_guard_that_never_switches_is_caught(plant, c_cache, guarded_run):
    run = _probe(plant, c_cache, "python")
    moves = [p for p in PYTHON_PATHS if p.split()[0].removeprefix("sonnx.") in STRUCTURAL]
    # sonnx.<op> on a type whose record makes the proved C entry point the default runs that C,
    # which has its own guard (read from the records: c_kernels.default_entry, and Gemm's size
    # rule at the probes' 8 x 8 x 8); so do the unfused Session and onnx.reference with sonnx's
    # kernels (new_ops) when every node of the model (probe.model: Mul, Add, Sub, Relu, Gemm,
    # MatMul over 8 x 8) runs C
    in_c = [p for p in PYTHON_PATHS if len(p.split()) == 2 and p.split()[0].removeprefix("sonnx.") in KERNELS
            and _runs_c(p.split()[0].removeprefix("sonnx."), p.split()[1])]
    in_c += [f"{path} {t}" for path in ("sonnx.Session unfused", "reference.new_ops") for t in ("float32", "float64")
             if all(_runs_c(k, t) for k in KERNELS)]
    # the fold's own Python guard stays under test: the threaded Gemm path is above the size rule
    assert not any("threaded" in p for p in in_c)
    missed = _caught(run, guarded_run["default"], [p for p in PYTHON_PATHS if p not in moves + in_c])
    assert all(v == [] for v in missed.values()), missed
    # a structural kernel computes nothing: without the guard it still gives the default bits
    assert moves and all(run[m][p][0] == guarded_run["default"][p][0] for m in MODES for p in moves)
    # the C kernels keep their own guard: still right through c_kernels, directly, and through
    # the default kernels that run them
    assert "sonnx.mul float32" in in_c
    assert all(run[m][p][0] == guarded_run["default"][p][0] for m in MODES
               for p in C_PATHS + CK_PATHS + CHAIN_PATHS + in_c)


@needs_plant
def test_planted_c_entry_points_that_do_not_switch_are_caught(plant, c_cache, guarded_run):
    run = _probe(plant, c_cache, "c")
    missed = _caught(run, guarded_run["default"], C_PATHS + CHAIN_PATHS)
    assert all(v == [] for v in missed.values()), missed


@needs_plant
def test_planted_fold_workers_outside_the_default_environment_are_caught(plant, c_cache, guarded_run):
    """The threaded Gemm path sees the environment of its worker threads: if they did not
    inherit the guarded caller's, its bits would change."""
    run = _probe(plant, c_cache, "workers")
    if not run["fold_workers"]["compiled"]:
        pytest.skip("llvmlite is not installed: the exact fold runs on the calling thread only")
    missed = _caught(run, guarded_run["default"], [p for p in PYTHON_PATHS if "threaded" in p])
    assert all(v == [] for v in missed.values()), missed


@needs_plant
def test_sonnx_run_command_in_a_process_started_with_fast_math_state(plant, c_cache, tmp_path):
    """`sonnx run` under LD_PRELOAD of the plant (FTZ, DAZ and upward rounding from the first
    instruction, as a -ffast-math library linked into the program would leave them) reads the
    hex-float input (subnormals included) and writes every file (.npy and hex text) as a clean
    process does; numpy outside sonnx in that process does see the mode."""
    import onnx

    from sonnx.run import hexfloat

    from .probe import model
    m, x = model(np.float32)
    assert (np.abs(x[x != 0]) < np.finfo(np.float32).tiny).any()      # subnormals in the text
    onnx.save(m, str(tmp_path / "m.onnx"))
    (tmp_path / "x.hex").write_text(hexfloat.format_array(x))
    outs = {}
    for name, extra in (("clean", {}), ("planted", {"LD_PRELOAD": str(plant), "SONNX_PLANT": "upward+ftz+daz"})):
        out = tmp_path / name
        p = subprocess.run([sys.executable, "-m", "sonnx", "run", str(tmp_path / "m.onnx"), "--input",
                            f"X={tmp_path / 'x.hex'}", "-o", str(out), "--hex"], capture_output=True, text=True,
                           env=_child_env(c_cache, **extra), timeout=600)
        assert p.returncode == 0, p.stderr
        outs[name] = {f.name: f.read_bytes() for f in sorted(out.iterdir()) if f.suffix in (".npy", ".hex")}
    assert len(outs["clean"]) == 12 and outs["planted"] == outs["clean"]
    code = "import numpy as np; print(hex(int((np.float32(1) / np.float32(3) * np.float32(3)).view(np.uint32))))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_child_env(c_cache, LD_PRELOAD=str(plant), SONNX_PLANT="upward+ftz+daz"))
    assert p.stdout.strip() == "0x3f800001", p.stderr


@needs_plant
def test_a_library_built_with_fast_math_changes_nothing(c_cache, tmp_path):
    """The real thing: a library linked with gcc -ffast-math (crtfastmath.o sets FTZ/DAZ when it
    is loaded), loaded with ctypes after sonnx; the kernels still give the subnormal."""
    (tmp_path / "fm.c").write_text("int fast_math_library(void);\nint fast_math_library(void) { return 1; }\n")
    lib = tmp_path / "libfm.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-ffast-math", "-o", str(lib), str(tmp_path / "fm.c")], check=True)
    code = f"""
import ctypes, numpy as np, sonnx, sonnx.c_kernels as ck, sonnx.fpenv as fe
ctypes.CDLL({str(lib)!r})
a = np.array([2.0 ** -70], np.float32)
flushed = (a * a)[0] == 0
print(int(fe.is_default(fe._read())), int(flushed), hex(int(sonnx.mul(a, a).view(np.uint32)[0])),
      hex(int(ck.mul(a, a).view(np.uint32)[0])), int(fe.is_default(fe._read())))
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_child_env(c_cache))
    assert p.returncode == 0, p.stderr
    state, flushed, py, c, after = p.stdout.split()
    if flushed == "0":
        pytest.skip("this gcc does not link crtfastmath.o into shared libraries (gcc 13 and later): "
                    "the planted library above covers FTZ/DAZ")
    assert (state, py, c, after) == ("0", "0x200", "0x200", "0")    # FTZ before and after the calls


# ---- the module itself, in this process (its environment is left as found) -----------------

def test_guard_restores_the_environment_when_the_kernel_raises():
    if not fpenv.SUPPORTED:
        pytest.skip("no glibc fenv support on this machine")
    with pytest.raises(sonnx.ProfileViolation):
        sonnx.mul(np.ones(2, np.float32), np.ones(3, np.float32))
    assert fpenv.describe().endswith("(default)")
    assert fpenv._thread.active is False


def test_unsupported_platform_is_refused_with_one_clear_error(monkeypatch):
    monkeypatch.setattr(fpenv, "SUPPORTED", False)
    with pytest.raises(fpenv.FloatingPointEnvironmentError, match="round-to-nearest-even"):
        sonnx.mul(np.ones(2, np.float32), np.ones(2, np.float32))


def test_fe_dfl_env_clears_ftz_and_daz_here():
    """What the switch relies on: glibc's FE_DFL_ENV is MXCSR 0x1f80 / FPCR 0 (checked on the
    running machine, then the thread's environment is put back)."""
    if not fpenv.SUPPORTED:
        pytest.skip("no glibc fenv support on this machine")
    saved = fpenv._read()
    try:
        assert fpenv._fesetenv_pointer(fpenv.FE_DFL_ENV) == 0
        assert fpenv.control(fpenv._read()) & fpenv._MASK == fpenv._DEFAULT
    finally:
        fpenv._fesetenv(saved)


def test_is_default_reads_each_bit():
    if not fpenv.SUPPORTED or platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("MXCSR layout: x86-64 only")
    env = ctypes.create_string_buffer(64)

    def with_mxcsr(v: int):
        env[28:32] = int(v).to_bytes(4, "little")
        return env
    assert fpenv.is_default(with_mxcsr(0x1F80)) and fpenv.is_default(with_mxcsr(0x1FBF))   # flags only
    for bit in (6, 13, 14, 15):                        # DAZ, rounding, FTZ
        assert not fpenv.is_default(with_mxcsr(0x1F80 | 1 << bit)), bit
    for bit in range(7, 13):                           # an unmasked exception would trap
        assert not fpenv.is_default(with_mxcsr(0x1F80 & ~(1 << bit))), bit
