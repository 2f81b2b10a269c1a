"""The exact Gemm fold (ops/gemm/fold.py, fold_ir.py): bit-exact with gemm_reference through every
register tile, vector lane, K block and thread split; no FMA in its machine code; the numpy fold
used without llvmlite; fork and concurrent callers."""
from __future__ import annotations

import os
import sys
import threading
import warnings

import numpy as np
import pytest

import sonnx
from sonnx.ops import gemm as gemm_op
from sonnx.ops.gemm import fold as gemm_fold
from sonnx.semantics.tensor import from_numpy, to_numpy

from .conftest import assert_same_bits, edge_values

FMA_OPS = ("vfmadd", "vfmsub", "vfnmadd", "vfnmsub")
FLOAT_TYPES = [(np.float32, 2.0**-23), (np.float64, 2.0**-52)]


def reference(a, b) -> np.ndarray:
    return to_numpy(gemm_op.gemm_reference(from_numpy(a), from_numpy(b), None))


def tile(dt):
    """(MR, NR) of the compiled kernel for dt."""
    kern = gemm_fold._compiled()[np.dtype(dt)]
    return kern.mr, kern.nr


@pytest.fixture
def numpy_only(monkeypatch):
    """The numpy fold, as on a machine without llvmlite (the decision is redone afterwards)."""
    monkeypatch.setenv(gemm_fold.FORCE_NUMPY_ENV, "1")
    monkeypatch.setattr(gemm_fold, "_FOLD", [])
    monkeypatch.setattr(gemm_fold, "_warned", [])
    yield
    monkeypatch.setattr(gemm_fold, "_FOLD", [])


@pytest.mark.req("GEMM-R7")
def test_machine_code_has_no_fused_multiply_add():
    """The compiled code for both accumulation types multiplies and adds with separate vector
    instructions and holds no FMA; planting the ``contract`` flag makes LLVM emit FMAs, which
    this check then sees (so it is not vacuous)."""
    from sonnx.ops.gemm.fold_ir import compile_folds
    _, asm = compile_folds(with_asm=True)
    asm = asm.lower()
    assert "fold_float32" in asm and "fold_float64" in asm
    for op in ("vmulps", "vaddps", "vmulpd", "vaddpd"):
        assert op in asm, op
    assert not any(op in asm for op in FMA_OPS)
    _, planted = compile_folds(flags=("contract",), with_asm=True)
    assert any(op in planted.lower() for op in FMA_OPS)


def witness_operands(dt, u, m, n, k, at):
    """A' (m, k), B' (k, n): zero except l = at, at+1 in every row and column, where
    -1 * (1 + 2u) + (1 + u) * (1 + u) = 0 with a rounded product; an FMA would leave u^2."""
    a = np.zeros((m, k), dt)
    b = np.zeros((k, n), dt)
    a[:, at], a[:, at + 1] = -1.0, 1.0 + u
    b[at], b[at + 1] = 1.0 + 2 * u, 1.0 + u
    assert float(dt(1.0 + u) * dt(1.0 + u)) == 1.0 + 2 * u     # the product rounds, an FMA would not
    return a, b


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("dt, u", FLOAT_TYPES)
def test_no_fma_in_any_tile_lane_or_k_block(dt, u):
    """The separate-rounding witness in every row and column of a result with several row and
    column panels plus tails, inside the first K block and straddling a block boundary."""
    mr, nr = tile(dt)
    m, n, kc = 2 * mr + 3, 2 * nr + 5, gemm_fold.KC
    for at in (0, kc - 1, kc):
        a, b = witness_operands(dt, u, m, n, kc + 2, at)
        for threads in (1, 2):
            assert_same_bits(gemm_fold.fold(a, b, threads=threads), np.zeros((m, n), dt))
    y = sonnx.gemm(a, b)
    assert_same_bits(y, np.zeros((m, n), dt))


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_ascending_order_across_k_blocks(dt):
    """1 at l = KC-1, then eps/2 twice in the next block: ascending, each half rounds back to 1
    (tie to even); any other order (or the blocks swapped) gives 1 + eps."""
    mr, nr = tile(dt)
    kc, half = gemm_fold.KC, float(np.finfo(dt).eps) / 2
    a = np.zeros((mr + 1, kc + 2), dt)
    a[:, kc - 1], a[:, kc], a[:, kc + 1] = 1.0, half, half
    b = np.ones((kc + 2, nr + 1), dt)
    assert_same_bits(gemm_fold.fold(a, b), np.ones((mr + 1, nr + 1), dt))
    assert dt(dt(half) + dt(half)) + dt(1.0) != 1.0       # the other order would differ


def odd_shapes(dt):
    mr, nr = tile(dt)
    kc = gemm_fold.KC
    return [(1, 1, 1), (1, 3, 1), (mr - 1, 2, nr - 1), (2, kc + 2, nr + 1), (mr, kc, nr),
            (mr + 1, kc + 1, nr + 1), (2 * mr + 5, 2 * kc + 3, 3 * nr + 7), (3, 1, 2 * nr)]


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_bit_exact_with_reference_on_odd_shapes(dt):
    """Tails in every dimension, K below, at and across block boundaries; the operands mix
    normal values with the edge values (NaN, infinities, signed zeros, subnormals, max)."""
    rng = np.random.default_rng(17)
    edges = edge_values("float" if dt == np.float32 else "double")
    for m, k, n in odd_shapes(dt):
        a = rng.standard_normal((m, k)).astype(dt)
        b = rng.standard_normal((k, n)).astype(dt)
        for x in (a, b):            # about one element in twenty is an edge value
            hit = rng.random(x.shape) < 0.05
            x[hit] = rng.choice(edges, size=int(hit.sum()))
        # the pure-Python reference costs about 60 us per product: beyond 20k products the
        # numpy fold stands in for it (it is compared with the reference in its own tests)
        want = reference(a, b) if m * k * n <= 20_000 else gemm_fold.numpy_fold(a, b)
        for threads in (1, 2, 3):
            assert_same_bits(gemm_fold.fold(a, b, threads=threads), want)


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("bits", [128, 256])
def test_narrower_vector_kernels_of_other_machines(monkeypatch, bits):
    """The kernels made for CPUs without AVX-512 (4-row tile, 256- or 128-bit vectors), run
    here: witnesses and odd shapes give the reference's bits too, and no FMA is emitted."""
    from sonnx.ops.gemm.fold_ir import compile_folds
    kernels, asm = compile_folds(bits=bits, with_asm=True)
    assert not any(op in asm.lower() for op in FMA_OPS)
    monkeypatch.setattr(gemm_fold, "_FOLD", [kernels])
    rng = np.random.default_rng(bits)
    for dt, u in FLOAT_TYPES:
        kern = kernels[np.dtype(dt)]
        assert kern.mr == 4 and kern.nr == 2 * bits // (8 * np.dtype(dt).itemsize)
        a, b = witness_operands(dt, u, 2 * kern.mr + 1, 2 * kern.nr + 3, gemm_fold.KC + 2,
                                gemm_fold.KC - 1)
        assert_same_bits(gemm_fold.fold(a, b, threads=2), np.zeros((a.shape[0], b.shape[1]), dt))
        a = rng.standard_normal((11, 30)).astype(dt)
        b = rng.standard_normal((30, 2 * kern.nr + 1)).astype(dt)
        assert_same_bits(gemm_fold.fold(a, b), reference(a, b))


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("bits", [None, 128, 256])
def test_every_panel_width_gives_the_same_bits(bits):
    """Each kernel's narrower variants (panels of one vector, or of 128 bits, for B' of few
    columns) run directly, on this machine's kernels and those of narrower machines: the FMA
    witnesses give 0 and thin, odd and panel-crossing widths the reference's bits, each variant
    alone, on one thread and on several, and through FixedB, which picks a variant by width."""
    from sonnx.ops.gemm.fold_ir import compile_folds
    kernels, asm = compile_folds(bits=bits, with_asm=True)
    asm = asm.lower()
    assert not any(op in asm for op in FMA_OPS)
    rng = np.random.default_rng(bits or 512)
    for dt, u in FLOAT_TYPES:
        kern = kernels[np.dtype(dt)]
        assert kern.narrow and all(v.nr < kern.nr and v.mr == kern.mr for v in kern.narrow)
        for v in kern.narrow:
            assert f"fold_{np.dtype(dt).name}_{v.nr}" in asm
        for v in (kern,) + kern.narrow:
            a, b = witness_operands(dt, u, 2 * v.mr + 1, v.nr + 1, gemm_fold.KC + 2, gemm_fold.KC - 1)
            zero = np.zeros((a.shape[0], b.shape[1]), dt)
            assert_same_bits(gemm_fold._fold_compiled(v, a, b, None, 1), zero)
            for n in (1, 3, v.nr, v.nr + 1, 2 * v.nr + 3):
                a = rng.standard_normal((2 * v.mr + 3, 19)).astype(dt)
                b = rng.standard_normal((19, n)).astype(dt)
                want = reference(a, b)
                assert_same_bits(gemm_fold._fold_compiled(v, a, b, None, 1), want)
                assert_same_bits(gemm_fold._fold_compiled(v, a, b, None, 3), want)
        monkey = gemm_fold._FOLD[:]
        try:
            gemm_fold._FOLD[:] = [kernels]
            for n in (1, 4, 5, 16, 17, 50):
                a = rng.standard_normal((37, 8)).astype(dt)
                b = rng.standard_normal((8, n)).astype(dt)
                assert_same_bits(gemm_fold.FixedB(b).fold(a), reference(a, b))
                assert_same_bits(gemm_fold.fold(a, b), reference(a, b))
        finally:
            gemm_fold._FOLD[:] = monkey


@pytest.mark.req("GEMM-R7")
def test_the_panel_width_follows_the_columns():
    """kernel_for: a B' narrower than every panel takes the narrowest; a multiple of the wide
    panel takes the wide one; in between, the fewest vector operations (zero padding counted)."""
    kern = gemm_fold._compiled()[np.dtype(np.float32)]
    widths = sorted(v.nr for v in (kern,) + kern.narrow)
    assert gemm_fold.kernel_for(kern, 1).nr == widths[0]
    assert gemm_fold.kernel_for(kern, 2 * kern.nr) is kern
    assert gemm_fold.kernel_for(kern, kern.nr) is kern
    if kern.nr >= 32:     # AVX-512: 4 outputs take the 128-bit panel, 16 the one-vector panel
        assert gemm_fold.kernel_for(kern, 4).nr == 4 and gemm_fold.kernel_for(kern, 16).nr == 16


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_same_bits_on_any_number_of_threads(dt):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((67, 300)).astype(dt), rng.standard_normal((300, 45)).astype(dt)
    one = gemm_fold.fold(a, b, threads=1)
    assert_same_bits(one, gemm_fold.numpy_fold(a, b))
    for t in (2, 3, 5, 16, 100):          # up to more threads than row panels
        assert_same_bits(gemm_fold.fold(a, b, threads=t), one)


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_same_bits_in_row_chunks(monkeypatch, dt):
    """Rows run by chunks (each with its own ascending K blocks): one panel per chunk, with K
    across block boundaries, gives the same bits as one chunk."""
    rng = np.random.default_rng(12)
    a = rng.standard_normal((40, gemm_fold.KC + 9)).astype(dt)
    b = rng.standard_normal((gemm_fold.KC + 9, 35)).astype(dt)
    whole = gemm_fold.fold(a, b, threads=1)
    monkeypatch.setattr(gemm_fold, "MC_BYTES", 1)
    for threads in (1, 2, 5):
        assert_same_bits(gemm_fold.fold(a, b, threads=threads), whole)
    assert_same_bits(whole, gemm_fold.numpy_fold(a, b))


@pytest.mark.req("GEMM-R7")
def test_layouts_and_views_are_accepted():
    """Transposed, strided and read-only operands give the same bits as contiguous ones."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((40, 30)).astype(np.float32)
    b = rng.standard_normal((30, 50)).astype(np.float32)
    want = gemm_fold.fold(a, b)
    at, bt = np.asfortranarray(a), b.T.copy().T
    bt.flags.writeable = False
    assert_same_bits(gemm_fold.fold(at, bt), want)
    big = np.zeros((80, 60), np.float32)
    big[::2, ::2] = a
    assert_same_bits(gemm_fold.fold(big[::2, ::2], b), want)


@pytest.mark.req("GEMM-R7")
def test_bad_operands_refused():
    f = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match="float32 or float64"):
        gemm_fold.fold(f, np.zeros((3, 2), np.float64))
    with pytest.raises(TypeError, match="float32 or float64"):
        gemm_fold.fold(f.astype(np.float16), np.zeros((3, 2), np.float16))
    with pytest.raises(ValueError, match="inner dimensions"):
        gemm_fold.fold(f, np.zeros((2, 2), np.float32))


@pytest.mark.req("GEMM-R7")
def test_survives_fork_and_concurrent_calls():
    """A process that forked after an exact Gemm can use it in the child (numba's OpenMP
    prange could not: the child was killed), and threads may call it at the same time."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((300, 200)).astype(np.float32)      # large enough for threads
    want = sonnx.gemm(a, a.T.copy())
    pid = os.fork()
    if pid == 0:
        code = 0 if np.array_equal(sonnx.gemm(a, a.T.copy()), want) else 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    seen = []

    def work():
        seen.extend(np.array_equal(sonnx.gemm(a, a.T.copy()), want) for _ in range(5))
    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert seen == [True] * 20


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("dt, u", FLOAT_TYPES)
def test_numpy_fold_same_bits_and_warns_once(numpy_only, dt, u):
    """Without the compiled kernel, fold() uses the numpy fold: same bits as the compiled fold
    and the reference (witnesses included), and one warning naming the extra to install."""
    rng = np.random.default_rng(9)
    a = rng.standard_normal((13, 40)).astype(dt)
    b = rng.standard_normal((40, 21)).astype(dt)
    with pytest.warns(RuntimeWarning, match=r"pip install sonnx\[fast-exact\]"):
        got = gemm_fold.fold(a, b)
    assert gemm_fold._FOLD == [None]
    assert_same_bits(got, reference(a, b))
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # a second warning would raise here
        wa, wb = witness_operands(dt, u, 3, 4, 5, 2)
        assert_same_bits(gemm_fold.fold(wa, wb), np.zeros((3, 4), dt))
        assert_same_bits(sonnx.gemm(a, b), reference(a, b))


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_numpy_fold_equals_compiled_fold(dt):
    rng = np.random.default_rng(10)
    edges = edge_values("float" if dt == np.float32 else "double")
    a = rng.standard_normal((31, 270)).astype(dt)
    b = rng.standard_normal((270, 37)).astype(dt)
    a[rng.random(a.shape) < 0.03] = rng.choice(edges)
    assert_same_bits(gemm_fold.numpy_fold(a, b), gemm_fold.fold(a, b))


@pytest.mark.req("GEMM-R7")
def test_missing_llvmlite_selects_numpy_fold(monkeypatch):
    """An ImportError of llvmlite (numba's extra not installed) is what selects the numpy fold."""
    monkeypatch.delenv(gemm_fold.FORCE_NUMPY_ENV, raising=False)
    monkeypatch.setattr(gemm_fold, "_FOLD", [])
    for name in [m for m in sys.modules if m == "llvmlite" or m.startswith("llvmlite.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delitem(sys.modules, "sonnx.ops.gemm.fold_ir", raising=False)
    monkeypatch.setitem(sys.modules, "llvmlite", None)       # import llvmlite now fails
    assert gemm_fold._compiled() is None
    monkeypatch.setattr(gemm_fold, "_FOLD", [])
