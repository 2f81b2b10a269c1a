"""The C kernels extracted from the proofs (sonnx.c_kernels) against the Python kernels, bit for
bit: edge values of every type, random bit patterns, every float16/bfloat16 value against a
spread of partners, ONNX's node cases, Gemm over shapes, transposes, alpha, beta and C; their
refusals; and planted faults (an FMA build) that these comparisons must catch."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import sonnx
from sonnx import c_kernels as ck
from sonnx import dtypes
from sonnx.ops import gemm as gemm_op
from sonnx.ops import add as add_op, mul as mul_op, relu as relu_op, sub as sub_op
from sonnx.semantics.tensor import from_numpy, to_numpy

from ..ops.conftest import assert_same_bits, cross, edge_values
from ..ops.test_elementwise import HALF_FORMATS, _onnx_cases, half_mismatches, onnx_cases



def _numpy(ufunc):
    """numpy's ufunc, the arithmetic of sonnx.<op> before its proved C kernels became its default
    for their types (sonnx.<op> now runs them: comparing with it would compare the C with itself)."""
    def run(a, b):
        with np.errstate(all="ignore"):
            return np.asarray(ufunc(a, b))
    return run


# operator: (C kernel, numpy kernel, reference loop, exact op on float64 for the half oracle, type set)
OPS = {
    "Mul": (ck.mul, _numpy(np.multiply), mul_op.mul_reference, np.multiply, mul_op.TYPE_SETS[mul_op.LATEST]),
    "Add": (ck.add, _numpy(np.add), add_op.add_reference, np.add, add_op.TYPE_SETS[add_op.LATEST]),
    "Sub": (ck.sub, _numpy(np.subtract), sub_op.sub_reference, np.subtract, sub_op.TYPE_SETS[sub_op.LATEST]),
}
CASES = [(op, name) for op, rec in OPS.items() for name in sorted(rec[4])]
IDS = [f"{op}-{name}" for op, name in CASES]
FLOATS = ["bfloat16", "double", "float", "float16"]


@pytest.fixture(scope="module", autouse=True)
def _library(tmp_path_factory):
    """Every test builds and loads the library once, into a fresh cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SONNX_C_CACHE", str(tmp_path_factory.mktemp("c-cache")))
    mp.setattr(ck, "_LIB", None)
    ck.library()
    yield
    mp.undo()


def _random_bits(name: str, n: int, seed: int) -> np.ndarray:
    dt = dtypes.numpy_dtype(name)
    return np.random.default_rng(seed).integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(dt)


# --- Mul, Add, Sub ---------------------------------------------------------------------------

@pytest.mark.req("MUL-R1", "MUL-R3", "ADD-R1", "ADD-R3", "SUB-R1", "SUB-R3")
@pytest.mark.parametrize("op,name", CASES, ids=IDS)
def test_edge_values(op, name):
    c_kernel, py_kernel, reference, _, _ = OPS[op]
    a, b = cross(name)
    got = c_kernel(a, b)
    assert_same_bits(got, py_kernel(a, b))
    assert_same_bits(got, to_numpy(reference(from_numpy(a), from_numpy(b))))


@pytest.mark.req("MUL-R1", "MUL-R3", "ADD-R1", "ADD-R3", "SUB-R1", "SUB-R3")
@pytest.mark.parametrize("op,name", CASES, ids=IDS)
def test_random_bit_patterns(op, name):
    c_kernel, py_kernel = OPS[op][:2]
    a = _random_bits(name, 40_000, 1).reshape(200, 200)
    b = _random_bits(name, 40_000, 2).reshape(200, 200)
    assert_same_bits(c_kernel(a, b), py_kernel(a, b))
    # not contiguous, byte-swapped: the wrapper copies; the bits are the same
    assert_same_bits(c_kernel(a.T, b.T), py_kernel(a.T, b.T))
    if a.dtype.itemsize > 1 and a.dtype.byteorder != "|":
        sa, sb = a.astype(a.dtype.newbyteorder()), b.astype(b.dtype.newbyteorder())
        assert_same_bits(c_kernel(sa, sb), py_kernel(a, b))


@pytest.mark.req("MUL-R1", "MUL-R3", "ADD-R1", "ADD-R3", "SUB-R1", "SUB-R3")
@pytest.mark.parametrize("op", sorted(OPS))
def test_onnx_node_cases(op):
    c_kernel, py_kernel = OPS[op][:2]
    cases = onnx_cases(op, same_shape=True) + onnx_cases(op, same_shape=False)
    compared = 0
    for name in cases:
        for inputs, _outputs in _onnx_cases()[name].data_sets:
            a, b = (np.asarray(x) for x in inputs)
            if a.shape == b.shape:
                assert_same_bits(c_kernel(a, b), py_kernel(a, b))
                compared += 1
            else:                               # broadcasting: both kernels refuse it
                with pytest.raises(sonnx.ProfileViolation, match="-R4"):
                    c_kernel(a, b)
    assert compared


@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3")
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("half", sorted(HALF_FORMATS))
def test_every_half_value(op, half):
    """Every 127th bit pattern against all 65,536 values: the C float32 kernel then one rounding
    to T is the exact result rounded once (the same oracle as the Python kernels' test)."""
    c_kernel, _, _, wide_op, _ = OPS[op]
    assert half_mismatches(c_kernel, wide_op, half) == []


@pytest.mark.req("MUL-R1", "MUL-R3", "ADD-R1", "ADD-R3", "SUB-R1", "SUB-R3")
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("half", sorted(HALF_FORMATS))
def test_every_half_value_against_python_kernel(op, half):
    c_kernel, py_kernel = OPS[op][:2]
    dt = HALF_FORMATS[half][0]
    every = np.arange(65536, dtype=np.uint16).view(dt)
    partners = _random_bits(half, 65536, 7)
    for b in (partners, every[::-1].copy(), np.repeat(edge_values(half), 65536 // 26 + 1)[:65536]):
        assert_same_bits(c_kernel(every, b), py_kernel(every, b))


@pytest.mark.req("MUL-R4", "ADD-R4", "SUB-R4")
@pytest.mark.parametrize("op", sorted(OPS))
def test_refuses_what_the_profile_refuses(op):
    c_kernel = OPS[op][0]
    with pytest.raises(sonnx.ProfileViolation, match=f"{op.upper()}-R4"):
        c_kernel(np.ones((3,), np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(sonnx.ProfileViolation):
        c_kernel(np.ones((3,), np.float32), np.ones((3,), np.float64))
    with pytest.raises(TypeError):
        c_kernel([1.0], np.ones((1,), np.float32))


# --- Gemm --------------------------------------------------------------------------------------

def _gemm_inputs(name, m, n, k, ta, tb, seed, specials=False):
    dt = dtypes.numpy_dtype(name)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if ta else (m, k)) * 4
    b = rng.standard_normal((n, k) if tb else (k, n)) * 4
    c = rng.standard_normal((m, n))
    if specials:       # NaN, infinities, signed zeros, subnormals, huge values at random places
        ev = edge_values(name).astype(np.float64)
        for x in (a, b, c):
            mask = rng.random(x.shape) < 0.15
            x[mask] = rng.choice(ev, mask.sum())
    with np.errstate(all="ignore"):
        return a.astype(dt), b.astype(dt), c.astype(dt)


# rows 8, 16 and 17: whole blocks of 8 rows and a last partial block (proofs/gemm_c_loop.mlw)
SHAPES = [(1, 1, 1), (1, 5, 3), (4, 1, 7), (3, 4, 1), (5, 7, 9), (8, 3, 2), (16, 9, 4), (17, 33, 65),
          (2, 3, 300)]


@pytest.mark.req("GEMM-R1", "GEMM-R7")
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_gemm_exact_mode(name, m, n, k):
    for ta in (False, True):
        for tb in (False, True):
            for alpha, beta, with_c in ((1.0, 1.0, True), (0.5, -2.0, True), (-3.0, 1.0, False),
                                        (0.0, 0.0, True), (1.0, -0.0, True)):
                for specials in (False, True):
                    a, b, c = _gemm_inputs(name, m, n, k, ta, tb, m * n + k, specials)
                    kw = dict(alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)
                    c_arg = c if with_c else None
                    assert_same_bits(ck.gemm(a, b, c_arg, **kw), sonnx.gemm(a, b, c_arg, mode="exact", **kw))


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("name", FLOATS)
def test_gemm_against_the_reference_loop(name):
    for ta, tb in ((False, False), (True, True)):
        a, b, c = _gemm_inputs(name, 3, 4, 5, ta, tb, 11, specials=True)
        kw = dict(alpha=0.75, beta=1.5, trans_a=ta, trans_b=tb)
        ref = to_numpy(gemm_op.gemm_reference(from_numpy(a), from_numpy(b), from_numpy(c), **kw))
        assert_same_bits(ck.gemm(a, b, c, **kw), ref)


@pytest.mark.req("GEMM-R1", "GEMM-R4")
def test_gemm_refusals():
    with pytest.raises(sonnx.ProfileViolation):
        ck.gemm(np.ones((2, 3), np.float32), np.ones((4, 2), np.float32))
    with pytest.raises(sonnx.ProfileViolation):          # no broadcast of C
        ck.gemm(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), np.ones((2,), np.float32))
    # integer Gemm runs its own kernels now (tests/c/test_gemm_c_int.py); mixed types are refused
    with pytest.raises(sonnx.ProfileViolation):
        ck.gemm(np.ones((2, 3), np.int32), np.ones((3, 2), np.int64))


# --- availability -------------------------------------------------------------------------------

def test_no_compiler_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SONNX_C_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setattr(ck, "_LIB", None)
    with pytest.raises(ck.CKernelsUnavailable, match="install gcc"):
        ck.mul(np.ones((2,), np.float32), np.ones((2,), np.float32))


def test_without_a_compiler_the_default_kernels_run_numpy_and_say_so(tmp_path, monkeypatch):
    """sonnx.mul on float32 with no C compiler: one RuntimeWarning naming what to install and
    that numpy runs instead, numpy's bits; the C wrapper itself still refuses (above)."""
    monkeypatch.setenv("SONNX_C_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setattr(ck, "_LIB", None)
    monkeypatch.setattr(ck, "_DEFAULT", {})
    a = np.float32([1.5, -2.0, 3.0])
    from sonnx.errors import SlowKernelWarning
    with pytest.warns(SlowKernelWarning, match="Mul on float32 runs its numpy kernel(.|\n)*install gcc") as said:
        got = sonnx.mul(a, a)
    assert "\n" not in str(said[0].message)     # the command line prints it as one line
    assert_same_bits(got, a * a)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # said once, not at every call
        assert_same_bits(sonnx.mul(a, a), a * a)


def test_cache_is_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("SONNX_C_CACHE", str(tmp_path))
    monkeypatch.setattr(ck, "_LIB", None)
    ck.library()
    libs = list(tmp_path.rglob(ck.LIBRARY))
    assert len(libs) == 1
    before = libs[0].stat().st_mtime_ns
    monkeypatch.setattr(ck, "_LIB", None)
    ck.library()
    assert [p.stat().st_mtime_ns for p in tmp_path.rglob(ck.LIBRARY)] == [before]


# --- planted fault: a build that allows contraction ---------------------------------------------

def test_planted_fma_build_is_caught(tmp_path):
    """A build with FMA allowed (what -march=native -ffp-contract=fast gives on a recent x86):
    the object-code scan of tools/extract-c finds fused instructions, and the bit comparison
    with the Python kernel finds Gemm entries that differ. Both checks can fail."""
    import ctypes
    from sonnx_dev import extract_c
    bad_flags = tuple(f for f in ck.CFLAGS if f != "-ffp-contract=off") + ("-mfma", "-ffp-contract=fast")
    lib = ck.build(tmp_path, flags=bad_flags)
    assert extract_c.fused_instructions(lib), "the scan misses fused instructions"
    good = ck.build(tmp_path / "good")
    assert extract_c.fused_instructions(good) == []
    if "fma" not in open("/proc/cpuinfo").read():
        pytest.skip("this CPU has no FMA: the faulty library cannot run here")
    faulty = ctypes.CDLL(str(lib))
    ck._declare(faulty)
    a, b, c = _gemm_inputs("float", 40, 40, 200, False, False, 3)
    y = np.empty((40, 40), np.float32)
    faulty.sonnx_gemm_f32(a.ctypes.data, b.ctypes.data, c.ctypes.data, y.ctypes.data, 1, 0, 0,
                          1.0, 1.0, 40, 40, 200)
    with pytest.raises(AssertionError, match="elements differ"):
        assert_same_bits(y, sonnx.gemm(a, b, c))


# --- vectorised loops: present in the object code, and the same bits at every length ------------

def test_the_element_wise_loops_are_vectorised_and_a_scalar_build_is_caught(tmp_path):
    """The object-code check of tools/extract-c: the library built as sonnx builds it has the
    packed instruction every record asks for; built from sources without the cost-model pragma
    of sonnx_kernels.c (GCC's -O2 model, "very-cheap", vectorises none of these loops) the
    check names every one of them."""
    from sonnx_dev import extract_c
    import platform
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the packed instructions named in the records are x86-64's")
    asked = [e.name for b in ck._BINDINGS for e in b.entries if e.packed]
    assert len(asked) == 14      # Mul/Add/Sub f32, f64, u32 (+ Add/Sub u64); Relu f32, f64, i32
    assert extract_c.scalar_loops(ck.build(tmp_path / "good")) == []
    src = tmp_path / "src"
    shutil.copytree(ck.source_dir(), src)
    entry = src / ck.ENTRY
    text = entry.read_text()
    pragma = '#pragma GCC optimize("vect-cost-model=cheap")\n'
    assert pragma in text, "the pragma moved in sonnx_kernels.c"
    entry.write_text(text.replace(pragma, ""))
    missing = extract_c.scalar_loops(ck.build(tmp_path / "scalar", src))
    assert sorted(m.split(":")[0] for m in missing) == sorted(asked)


def _ufunc_kernels():
    return {"Mul": np.multiply, "Add": np.add, "Sub": np.subtract}


@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3", "RELU-R3")
@pytest.mark.parametrize("name", ["float", "double", "int32", "uint32", "int64", "uint64"])
def test_every_length_and_alignment_gives_the_same_bits(name):
    """The vectorised loops have a packed part, a scalar remainder and (for inputs that are not
    16-byte aligned) a peeled start: every length 1..40, and slices starting at each element
    offset, give what numpy's ufuncs give (IEEE, one rounding per element; wrap-around for
    integers), and Relu its reference loop."""
    base = np.concatenate([edge_values(name), _random_bits(name, 300, 11)])
    other = _random_bits(name, base.size, 12)
    for start in range(4):
        for n in list(range(1, 41)) + [base.size - start]:
            a, b = base[start:start + n], other[start:start + n]
            with np.errstate(all="ignore"):
                for op, ufunc in _ufunc_kernels().items():
                    assert_same_bits(OPS[op][0](a, b), ufunc(a, b))
            if name in relu_op.TYPE_SETS[relu_op.LATEST]:
                assert_same_bits(ck.relu(a), to_numpy(relu_op.relu_reference(from_numpy(a))))


@pytest.mark.req("MUL-R3", "ADD-R3", "SUB-R3", "RELU-R3")
@pytest.mark.parametrize("name", ["float", "double", "uint32", "uint64", "int32", "int64"])
def test_the_default_kernels_run_the_proved_entry_points_with_numpys_bits(name, monkeypatch):
    """sonnx.mul/add/sub/relu run the proved C entry point on the types their records make the
    default (c_kernels.default_entry; counted here by wrapping it) and give numpy's bits on every
    layout the C path handles apart: contiguous, transposed (copied), read-only (another address
    path), rank 0, and B in the other byte order (numpy's ufunc runs)."""
    dt = dtypes.numpy_dtype(name)
    calls = []
    real = ck.call_binary, ck.call_unary
    monkeypatch.setattr(ck, "call_binary", lambda fn, a, b: calls.append(fn) or real[0](fn, a, b))
    monkeypatch.setattr(ck, "call_unary", lambda fn, x: calls.append(fn) or real[1](fn, x))
    a = _random_bits(name, 4096, 21).reshape(64, 64)
    b = _random_bits(name, 4096, 22).reshape(64, 64)
    ro_a, ro_b = a.copy(), b.copy()
    ro_a.setflags(write=False)
    ro_b.setflags(write=False)
    layouts = [(a, b), (a.T, b.T), (ro_a, ro_b), (a[:1, :1].reshape(()).copy(), b[:1, :1].reshape(()).copy())]
    for op, ufunc in _ufunc_kernels().items():
        kernel = getattr(sonnx, op.lower())
        covered = ck.default_entry(op.lower(), dt) is not None
        assert covered == (name in ("float", "double", "uint32", "uint64", "int32", "int64")), (op, name)
        for x, y in layouts:
            before = len(calls)
            assert_same_bits(kernel(x, y), OPS[op][1](x, y))
            assert len(calls) - before == covered
        if dt.itemsize > 1:
            swapped = b.astype(b.dtype.newbyteorder())
            before = len(calls)
            assert_same_bits(kernel(a, swapped), OPS[op][1](a, b))
            assert len(calls) == before
    if name in relu_op.TYPE_SETS[relu_op.LATEST]:
        covered = ck.default_entry("relu", dt) is not None
        assert covered == (name in ("float", "double", "int32", "int64"))
        for x, _ in layouts:
            before = len(calls)
            assert_same_bits(sonnx.relu(x), to_numpy(relu_op.relu_reference(from_numpy(x.copy()))))
            assert len(calls) - before == covered
# --- Gemm's inner loop is vectorised --------------------------------------------------------------

# packed SSE/AVX multiply and add (x86): one instruction for several lanes, i.e. several elements
_PACKED = {"gemm_loop": ("mulps", "addps"), "gemm_loop1": ("mulpd", "addpd")}


def _packed(lib, function: str) -> dict:
    """How many packed multiply and add instructions ``objdump -d lib`` shows in ``function``."""
    import subprocess
    dis = subprocess.run(["objdump", "-d", str(lib)], capture_output=True, text=True, check=True).stdout
    body = dis.split(f"<{function}>:\n", 1)[1].split("\n\n", 1)[0]
    return {mn: sum(1 for line in body.splitlines() if f"\t{mn} " in line or f"\tv{mn} " in line)
            for mn in _PACKED[function]}


@pytest.mark.req("GEMM-R7")
def test_gemm_inner_loop_is_vectorised(tmp_path):
    """The blocked loop of proofs/gemm_c_loop.mlw (j inner, independent elements) built with
    sonnx.c_kernels.CFLAGS holds packed multiplies and adds in both clones; a build without the
    vectoriser (the fault) holds none, so the check can fail."""
    import platform
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the packed mnemonics read here are x86's")
    good = ck.build(tmp_path / "good")
    for fn in _PACKED:
        counts = _packed(good, fn)
        assert all(counts.values()), f"{fn}: no packed instruction for {counts}"
    scalar = ck.build(tmp_path / "scalar", flags=ck.CFLAGS + ("-fno-tree-vectorize",))
    for fn in _PACKED:
        assert not any(_packed(scalar, fn).values())


# --- MatMul: Gemm's C kernel with alpha = 1, no C -----------------------------------------------

@pytest.mark.req("MATMUL-R1")
@pytest.mark.parametrize("name", FLOATS)
def test_matmul(name):
    for m, n, k in SHAPES:
        a, b, _ = _gemm_inputs(name, m, n, k, False, False, k, specials=True)
        assert_same_bits(ck.matmul(a, b), sonnx.matmul(a, b))
    with pytest.raises(sonnx.ProfileViolation):             # batches are outside the profile
        ck.matmul(np.ones((2, 3, 4), dtypes.numpy_dtype(name)), np.ones((2, 4, 5), dtypes.numpy_dtype(name)))


# --- Relu ---------------------------------------------------------------------------------------

@pytest.mark.req("RELU-R3")
@pytest.mark.parametrize("name", sorted(relu_op.TYPE_SETS[relu_op.LATEST]))
def test_relu(name):
    x = np.concatenate([edge_values(name), _random_bits(name, 50_000, 3)])
    got = ck.relu(x)
    assert_same_bits(got, sonnx.relu(x))
    assert_same_bits(got, to_numpy(relu_op.relu_reference(from_numpy(x))))
    if name in HALF_FORMATS:      # every value of the 16-bit formats
        every = np.arange(65536, dtype=np.uint16).view(HALF_FORMATS[name][0])
        assert_same_bits(ck.relu(every), sonnx.relu(every))


@pytest.mark.req("RELU-R2")
def test_relu_refusals():
    with pytest.raises(sonnx.ProfileViolation):
        ck.relu(np.ones((3,), np.uint8))          # unsigned types are not in Relu's type set
