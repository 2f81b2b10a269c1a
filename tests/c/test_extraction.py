"""The extraction itself: the driver prints every expression shape in the order written (run, not
read), refuses rounding modes other than RNE, the committed C is what the proofs extract to
(a planted difference fails tools/extract-c), the C compiles warning-free and refuses excess
precision, the manifest ties each C function to its WhyML function and goal, and the C example
of docs/c-kernels.md compiles and runs against the kernels."""
from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sonnx import c_kernels as ck
from sonnx.trace.proofs import parse_goals
from sonnx_dev import extract_c

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SHAPES = {   # name: its operations in the intended order, on float64 or float32 numpy scalars
    "add_r": lambda x, y, z: x + (y + z), "add_l": lambda x, y, z: (x + y) + z,
    "sub_r": lambda x, y, z: x - (y - z), "sub_l": lambda x, y, z: (x - y) - z,
    "mul_r": lambda x, y, z: x * (y * z), "mul_l": lambda x, y, z: (x * y) * z,
    "add_mul": lambda x, y, z: x + (y * z), "mul_add": lambda x, y, z: (x + y) * z,
    "mul_sub": lambda x, y, z: x * (y - z), "sub_add": lambda x, y, z: x - (y + z),
    "zero_add": lambda x, y, z: (0 * x + x) + (y * z),
}

needs_tools = pytest.mark.skipif(not (shutil.which("why3") and shutil.which("gcc") and shutil.which("objdump")),
                                 reason="why3, gcc and objdump are needed (tools/setup installs them)")


def _shape_mismatches(tmp: Path, driver: str) -> list[str]:
    """Extract tests/c/shapes.mlw with ``driver``, compile, run every function on triples where
    the order of operations changes the result; the names of the functions that compute
    something else than their WhyML text."""
    c = tmp / "shapes.c"
    extract_c.extract(ROOT, str(HERE / "shapes.mlw"), c, driver=driver)
    lib = tmp / "libshapes.so"
    # SONNX_DEFAULT_FENV_ENTRY: these functions run in this test process's environment, the
    # default one (the kernels' own entry points switch to it, sonnx_kernels.c)
    subprocess.run(["gcc", *[f for f in ck.CFLAGS if f != "-Wmissing-prototypes"], "-DSONNX_DEFAULT_FENV_ENTRY",
                    "-o", str(lib), str(c)], check=True)
    so = ctypes.CDLL(str(lib))
    rng = np.random.default_rng(5)
    triples = [(1.0, 1e16, -1e16), (3.0, 1e-16, 7.0), (1e300, 1e300, 1e-300), (2.0, 3.0, 0.1)]
    triples += [tuple(rng.standard_normal(3) * 10.0 ** rng.integers(-8, 9, 3)) for _ in range(200)]
    bad = []
    for width, (ct, nt) in ((64, (ctypes.c_double, np.float64)), (32, (ctypes.c_float, np.float32))):
        for name, intent in SHAPES.items():
            fn = getattr(so, ("d_" if width == 64 else "f_") + name)
            fn.argtypes, fn.restype = (ct, ct, ct), ct
            with np.errstate(all="ignore"):
                for x, y, z in triples:
                    x, y, z = nt(x), nt(y), nt(z)
                    want = nt(intent(x, y, z))
                    got = nt(fn(x, y, z))
                    if not (got == want or (np.isnan(got) and np.isnan(want))):
                        bad.append(f"{name}/{width}")
                        break
    return bad


@needs_tools
def test_every_expression_shape_computes_in_the_written_order(tmp_path):
    assert _shape_mismatches(tmp_path, extract_c.DRIVER) == []


@needs_tools
def test_planted_driver_dropping_parentheses_is_caught(tmp_path):
    """The hazard of infix templates: a `prec` that lets the right operand go unparenthesised
    prints add x (add y z) as x + y + z; the run of the shapes catches it."""
    text = (ROOT / extract_c.DRIVER).read_text()
    faulty = re.sub(r'syntax val (add|sub|mul) "sonnx_f(32|64)_\w+\(%1, %2, %3\)"',
                    lambda m: f'syntax val {m.group(1)} "%2 {dict(add="+", sub="-", mul="*")[m.group(1)]} %3" '
                              f'prec {dict(add=4, sub=4, mul=3)[m.group(1)]} 4 4 4', text)
    assert faulty != text
    drv = tmp_path / "faulty.drv"
    drv.write_text(faulty)
    bad = _shape_mismatches(tmp_path, str(drv))
    assert {"add_r/64", "sub_r/64", "mul_add/64"} <= set(bad), bad


@needs_tools
def test_a_rounding_mode_other_than_rne_fails_extraction(tmp_path):
    with pytest.raises(RuntimeError, match="toward_zero"):
        extract_c.extract(ROOT, str(HERE / "other_mode.mlw"), tmp_path / "o.c")


@needs_tools
def test_extract_c_passes_and_a_planted_difference_fails(tmp_path, capsys):
    """tools/extract-c on the repository passes; on a copy whose committed C differs by one
    character from what the proofs extract to, it fails and names the file."""
    assert extract_c.run(ROOT) == 0
    fake = tmp_path / "repo"
    (fake / "src" / "sonnx").mkdir(parents=True)
    (fake / "proofs").symlink_to(ROOT / "proofs")
    shutil.copytree(ROOT / "src" / "sonnx" / "c", fake / "src" / "sonnx" / "c")
    gemm_c = fake / "src" / "sonnx" / "c" / "gemm_c.c"
    text = gemm_c.read_text()
    planted = text.replace("(sonnx_f32_add((SONNX_RNE), (y[", "(sonnx_f32_sub((SONNX_RNE), (y[", 1)
    assert planted != text, "the planted difference no longer applies to gemm_c.c"
    gemm_c.write_text(planted)
    capsys.readouterr()
    assert extract_c.run(fake) == 1
    assert "gemm_c.c: DIFFERS" in capsys.readouterr().out


@needs_tools
def test_excess_precision_is_refused_at_compile_time(tmp_path):
    """x87 arithmetic (FLT_EVAL_METHOD 2) would round twice: the extracted C does not compile."""
    src = ck.source_dir() / ck.ENTRY
    r = subprocess.run(["gcc", "-std=c11", "-mfpmath=387", "-c", "-o", str(tmp_path / "x.o"), str(src)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "FLT_EVAL_METHOD" in r.stderr


@needs_tools
@pytest.mark.parametrize("source", ck.SOURCES)
def test_an_extracted_file_alone_does_not_compile(tmp_path, source):
    """The proofs' RNE holds only in the default floating-point environment, which the entry
    points of sonnx_kernels.c establish: an extracted file compiled on its own (its body
    callable in whatever environment the caller has) is a compile error saying so; through the
    entry file it compiles (the library builds in the other tests)."""
    src = ck.source_dir() / source
    r = subprocess.run(["gcc", *[f for f in ck.CFLAGS if f not in ("-fPIC", "-shared")], "-include",
                        str(ck.source_dir() / ck.HEADER), "-c", "-o", str(tmp_path / "x.o"), str(src)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "compile sonnx_kernels.c" in r.stderr, r.stderr


# --- the manifest: C function -> WhyML function -> goal's requirement IDs ------------------------

def _defined_functions(c_text: str) -> set[str]:
    return set(re.findall(r"^(?:void|float|double|int32_t|uint16_t|uint32_t|uint64_t) (\w+)\(", c_text, re.M))


@pytest.mark.req("MUL-R1", "MUL-R3", "ADD-R1", "ADD-R3", "SUB-R1", "SUB-R3", "GEMM-R1", "GEMM-R7")
def test_manifest_links_every_c_kernel_to_its_proved_function():
    src = ck.source_dir()
    defined = set().union(*(_defined_functions((src / s).read_text()) for s in ck.SOURCES))
    assert defined == set(ck.KERNELS) | set(ck.INTERNAL) | set(ck.NARROW_HELPERS)
    narrow = parse_goals(ROOT / ck.NARROW_PROOF)
    for fn, module in ck.NARROW_HELPERS.items():     # the narrowing's helpers: lets of its proof
        assert any(g["kind"] in ("let", "let function") and g["module"] == module and g["name"] == fn for g in narrow), fn
    header = (src / ck.HEADER).read_text()
    for fn, (mlw, module, whyml_fn) in ck.INTERNAL.items():
        assert re.search(rf"\b{fn}\(", header), f"{fn} not declared in {ck.HEADER}"
        text = (ROOT / mlw).read_text()
        body = text[text.index(f"module {module}\n"):].split("\nend")[0]
        # the module clones a module of another proof file holding the function, with its
        # requirement marker
        proved = [(f, m) for f, m in re.findall(r"\bclone (\w+)\.(\w+) as", body)
                  if any(g["kind"] == "let" and g["module"] == m and g["name"] == whyml_fn and g["req"]
                         for g in parse_goals(ROOT / "proofs" / f"{f}.mlw"))]
        assert proved, (fn, module, whyml_fn)
    for fn, (mlw, module, ids) in ck.KERNELS.items():
        assert re.search(rf"\b{fn}\(", header), f"{fn} not declared in {ck.HEADER}"
        goals = [g for g in parse_goals(ROOT / mlw) if g["module"] == module and g["name"] == fn]
        assert len(goals) == 1, f"{fn}: no let {fn} in module {module} of {mlw}"
        assert tuple(goals[0]["req"]) == ids, (fn, goals[0]["req"])
        assert mlw in set(ck.PROOF_OF.values())


def test_the_c_files_say_where_they_come_from():
    """The committed C is the extraction of the named proof files (checked byte for byte by
    tools/extract-c); each C source's stem is its proof file's stem."""
    for src, mlw in ck.PROOF_OF.items():
        assert (ROOT / mlw).exists() and Path(mlw).stem == src[:-2]


# --- the C example of docs/c-kernels.md -----------------------------------------------------------

@needs_tools
def test_readme_c_example_compiles_and_runs(tmp_path):
    section = (ROOT / "docs" / "c-kernels.md").read_text()     # the C kernels' guide
    code = re.search(r"```c\n(.*?)```", section, re.S).group(1)
    (tmp_path / "example.c").write_text(code)
    src = ck.source_dir()
    exe = tmp_path / "example"
    flags = [f for f in ck.CFLAGS if f not in ("-fPIC", "-shared")]
    subprocess.run(["gcc", *flags, "-I", str(src), "-o", str(exe), str(tmp_path / "example.c"),
                    str(src / ck.ENTRY), "-lm"], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    want = re.search(r"prints:?\n\n?```\n(.*?)```", section, re.S).group(1)
    assert out == want
