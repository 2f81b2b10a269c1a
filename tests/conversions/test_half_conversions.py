"""The conversions the float16/bfloat16 routes run (src/sonnx/c_kernels.py: operands widened to
float32 by numpy astype, the float32 result narrowed to T once) have the properties the route
proofs (proofs/mul_half.mlw, add_half, sub_half, relu_half) assume of halffloat.mlw's converters:
widening is exact, narrowing is IEEE round to nearest, ties to even, with subnormals kept,
overflow to a signed infinity and NaN to NaN (a NaN matches any NaN: MUL-R3's element
semantics; here sign and payload are kept by widening, counted by narrowing). CHECKED against an
independent integer-arithmetic reference (half_ref.c), not proved:

- widening: all 65,536 values of each type, exhaustively;
- narrowing: the rounding-relevant classes (every sign and exponent x every pattern of the
  dropped bits under six kept-bit patterns; whole float32 binades at float16's subnormal and
  overflow borders), about 3.6e8 inputs; all 2^32 float32 inputs were checked once by
  ``python -m tests.conversions.halfcheck --exhaustive LIB`` (minutes of CPU, not in CI:
  docs/c-kernels.md gives the run);
- the same (without the whole binades) after a planted library put the process in each other
  rounding mode and flush-to-zero / denormals-are-zero (tests/fpenv/plant.c), in child
  processes: the conversions do not depend on the floating-point environment.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sonnx
from sonnx import fpenv
from tests.conversions import halfcheck

HERE = Path(__file__).resolve().parent
PLANT = HERE.parent / "fpenv" / "plant.c"
MODES = ["upward", "downward", "towardzero", "ftz", "daz", "upward+ftz+daz"]

needs_gcc = pytest.mark.skipif(not shutil.which("gcc"), reason="the reference is C (apt-get install gcc)")


def _build(tmp_path_factory, src: Path, name: str) -> Path:
    out = tmp_path_factory.mktemp(name) / f"lib{name}.so"
    subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-Wmissing-prototypes",
                    "-shared", "-fPIC", "-o", str(out), str(src)], check=True)
    return out


@pytest.fixture(scope="module")
def ref_path(tmp_path_factory) -> Path:
    return _build(tmp_path_factory, HERE / "half_ref.c", "halfref")


@pytest.fixture(scope="module")
def ref(ref_path):
    return halfcheck.load(str(ref_path))


@needs_gcc
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3", "RELU-R3")
@pytest.mark.parametrize("half", sorted(halfcheck.HALVES))
def test_widening_is_exact_on_every_value(ref, half):
    r = halfcheck.check_widen(ref, half)
    assert r["checked"] == 65536 and r["bad"] == 0, r
    assert r["nan_sign_kept"] == r["nans"] == r["nan_payload_kept"] > 0, r


@needs_gcc
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3", "RELU-R3")
@pytest.mark.parametrize("half", sorted(halfcheck.HALVES))
def test_narrowing_rounds_to_nearest_even_on_every_class(ref, half):
    r = halfcheck.check_narrow_classes(ref, half)
    assert r["bad"] == 0 and r["checked"] > 1.5e8, r


@needs_gcc
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3", "RELU-R3")
def test_the_reference_knows_the_edges(ref):
    """Hand-computed bits: ties to even, the largest float16, overflow, subnormals, signed zero."""
    f = lambda x, t: ref.ref_narrow(int(np.float32(x).view(np.uint32)), *halfcheck.HALVES[t][1:])  # noqa: E731
    ref.ref_narrow.restype = ref.ref_widen_f16.restype
    assert f(1 + 2**-11, "float16") == 0x3C00            # tie, kept bit even: down
    assert f(1 + 3 * 2**-11, "float16") == 0x3C02        # tie, kept bit odd: up
    assert f(65504, "float16") == 0x7BFF
    assert f(65520, "float16") == 0x7C00                 # the tie above the largest: to infinity
    assert f(2**-24, "float16") == 0x0001
    assert f(2**-25, "float16") == 0x0000                # tie with zero: even
    assert f(1.5 * 2**-25, "float16") == 0x0001
    assert f(-0.0, "float16") == 0x8000
    assert f(1 + 2**-8, "bfloat16") == 0x3F80
    assert f(1 + 3 * 2**-8, "bfloat16") == 0x3F82
    assert f(float(np.finfo(np.float32).max), "bfloat16") == 0x7F80
    assert ref.ref_widen_f16(0x0001) == np.float32(2**-24).view(np.uint32)


@needs_gcc
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3", "RELU-R3")
@pytest.mark.parametrize("half", sorted(halfcheck.HALVES))
def test_a_truncating_narrowing_is_caught(ref, half, monkeypatch):
    """The planted fault: narrowing toward zero (dropping the bits) instead of to nearest."""
    def truncate(x, name):
        b = x.view(np.uint32)
        if name == "bfloat16":
            return (b >> 16).astype(np.uint16).view(halfcheck.HALVES[name][0])
        with np.errstate(all="ignore"):
            y = x.astype(np.float16)
        back = y.astype(np.float32)
        step = np.where(np.abs(back) > np.abs(x), 1, 0).astype(np.uint16)
        return (y.view(np.uint16) - step).view(np.float16)
    monkeypatch.setattr(halfcheck, "narrow", truncate)
    r = halfcheck.check_narrow_range(ref, half, 0x3F800000, 1 << 20)
    assert r["bad"] > 0, r


@needs_gcc
@pytest.mark.skipif(not fpenv.SUPPORTED or not Path("/proc").exists(),
                    reason="the planted library needs x86-64 or aarch64 Linux/glibc")
@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3", "RELU-R3")
@pytest.mark.parametrize("mode", MODES)
def test_the_conversions_ignore_the_floating_point_environment(ref_path, tmp_path_factory, mode):
    plant = _build(tmp_path_factory, PLANT, "plant")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(sonnx.__file__).resolve().parents[1]),
                                                        str(HERE.parents[1])])}
    out = subprocess.run([sys.executable, "-m", "tests.conversions.halfcheck", str(ref_path), str(plant), mode],
                         capture_output=True, text=True, env=env, check=True, cwd=HERE.parents[1]).stdout
    r = json.loads(out)
    assert r["narrow"] == {"bfloat16": 0, "float16": 0} and r["widen"] == {"bfloat16": 0, "float16": 0}, r
    if "upward" in mode:
        assert r["round"] != 0, r            # the child really ran in the changed mode
