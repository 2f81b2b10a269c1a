"""Exact float Gemm and MatMul run the proved C entry points (proofs/gemm_c.mlw's GemmCFloat32 /
GemmCFloat64) by default where Gemm's record says so (``C_BINDING.sizes``: M * N * K <= 2^18),
the llvmlite fold above: sonnx.gemm, sonnx.matmul, gemm.bind (the executor's and the Session's
kernels, with and without fixed weights) and the default engine of a Session all follow
that one rule; both give the same bits; and a fault planted in the WhyML of the float32 kernel
fails its proof and changes what sonnx.gemm, sonnx.matmul and the Session compute on a small
shape, not on a large one (the fold runs there)."""
from __future__ import annotations

import shutil

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import sonnx
from sonnx import c_kernels as ck
from sonnx.ops import gemm as G
from sonnx.ops.gemm import fold
from sonnx.run.session import Session
from tests.trace.proof_plants import needs_why3, planted, replay, use_planted_c

needs_c = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed (tools/setup installs it)")
ELEM = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE}
SMALL = (4, 8, 16)         # M, K, N: 512 multiply-adds
EDGE = (64, 64, 64)        # 2^18: the rule's bound, admitted
ABOVE = (64, 64, 65)       # 2^18 + 4096: the fold
BATCH1 = (1, 512, 512)     # a batch-1 layer of 2^18: admitted
BATCH1_ABOVE = (1, 784, 1024)   # the fold
LARGE = (96, 96, 96)       # the fold


def spy(monkeypatch) -> list[str]:
    """Records, in order, "c" for each call of a float proved C entry point and "fold" for each
    run of the llvmlite fold (packed per call or with a B packed once), whatever path reaches them."""
    calls: list[str] = []
    lib = ck.library()
    for name in ("sonnx_gemm_f32", "sonnx_gemm_f64"):
        real = getattr(lib, name)

        def entry(*args, _real=real):
            calls.append("c")
            return _real(*args)
        monkeypatch.setattr(lib, name, entry)
    monkeypatch.setattr(ck, "_DEFAULT", {})       # default_entry looks the entry up again: the spy
    real_fold, real_fixed = fold.fold, fold.FixedB.fold

    def folded(*args, **kw):
        calls.append("fold")
        return real_fold(*args, **kw)

    def fixed(self, *args, **kw):
        calls.append("fold")
        return real_fixed(self, *args, **kw)
    monkeypatch.setattr(fold, "fold", folded)
    monkeypatch.setattr(fold.FixedB, "fold", fixed)
    return calls


def operands(dt, m, k, n, tb, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(dt)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dt)
    c = rng.standard_normal((m, n)).astype(dt)
    return a, b, c


def model(op: str, dt, m, k, n, b: np.ndarray | None = None, tb: bool = False) -> onnx.ModelProto:
    """One Gemm (Y = 0.5 A B' - 2 C) or MatMul node; ``b``: B as an initializer (fixed weights)."""
    elem = ELEM[dt]
    ins = ["a", "b", "c"] if op == "Gemm" else ["a", "b"]
    shapes = {"a": [m, k], "b": [n, k] if tb else [k, n], "c": [m, n]}
    attrs = dict(alpha=0.5, beta=-2.0, transB=int(tb)) if op == "Gemm" else {}
    inputs = [helper.make_tensor_value_info(x, elem, shapes[x]) for x in ins if not (x == "b" and b is not None)]
    inits = [] if b is None else [numpy_helper.from_array(b, "b")]
    g = helper.make_graph([helper.make_node(op, ins, ["y"], name="n0", **attrs)], "g", inputs,
                          [helper.make_tensor_value_info("y", elem, [m, n])], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def fold_bits(a, b, c, tb, dt) -> bytes:
    """The exact-mode result through the fold alone (gemm's _exact_float): what runs above the rule."""
    with np.errstate(all="ignore"):
        return G._exact_float(a, b.T if tb else b, c, 0.5, -2.0, np.dtype(dt)).tobytes()


@needs_c
@pytest.mark.req("GEMM-R7", "MATMUL-R5")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_the_default_runs_the_proved_c_up_to_the_rule_and_the_fold_above_with_the_same_bits(dt, monkeypatch):
    rule = G.C_BINDING.sizes
    assert rule.suffixes == ("f32", "f64") and G.C_BINDING.runs_by_default("f32")
    expect = {SMALL: "c", EDGE: "c", BATCH1: "c", ABOVE: "fold", BATCH1_ABOVE: "fold", LARGE: "fold"}
    for (m, k, n), want in expect.items():
        assert rule.admits(m, n, k) == (want == "c"), (m, k, n)
    # every Gemm node an exact fused chain takes runs this C node by node too (run/chain.py)
    from sonnx.run import chain
    assert all(rule.admits(*s) for s in ((1, 1, chain.FUSE_LIMIT["exact"]), (32, 32, chain.FUSE_LIMIT["exact"] // 1024)))
    calls = spy(monkeypatch)
    for (m, k, n), want in expect.items():
        for tb in (False, True):
            a, b, c = operands(dt, m, k, n, tb)
            honest = fold_bits(a, b, c, tb, dt)
            calls.clear()
            assert ck.gemm(a, b, c, alpha=0.5, beta=-2.0, trans_b=tb).tobytes() == honest   # the C, always
            assert calls == ["c"]
            # sonnx.gemm
            calls.clear()
            assert sonnx.gemm(a, b, c, alpha=0.5, beta=-2.0, trans_b=tb).tobytes() == honest
            assert calls == [want], ((m, k, n), tb, calls)
            # gemm.bind: without fixed operands, with B, C or both fixed (the Session's weights)
            for fixed in ((), (1,), (2,), (1, 2)):
                bound = G.bind(a, b, c, alpha=0.5, beta=-2.0, trans_b=tb, fixed=fixed)
                calls.clear()
                with np.errstate(all="ignore"):
                    assert bound(a, b, c).tobytes() == honest
                    assert bound(a.copy(), b.copy(), c.copy()).tobytes() == honest   # not the prepared arrays
                assert calls == [want, want], ((m, k, n), tb, fixed, calls)
            # the default engine of a Session, the weights as initializers and as feeds
            for weights in (b, None):
                s = Session(model("Gemm", dt, m, k, n, weights, tb))
                feeds = {"a": a, "c": c, **({"b": b} if weights is None else {})}
                calls.clear()
                assert s.run(None, feeds)[0].tobytes() == honest
                assert calls == [want], ((m, k, n), tb, weights is None, calls)
        # MatMul is Gemm with alpha 1 and no C: the same rule
        a, b, _ = operands(dt, m, k, n, False, seed=1)
        calls.clear()
        y = sonnx.matmul(a, b)
        assert calls == [want] and y.tobytes() == G._exact_float(a, b, None, 1.0, 1.0, np.dtype(dt)).tobytes()
        calls.clear()
        assert Session(model("MatMul", dt, m, k, n, b)).run(None, {"a": a})[0].tobytes() == y.tobytes()
        assert calls == [want]
    # fast mode runs BLAS at every size, the half types the fold (their route converts)
    calls.clear()
    sonnx.gemm(*operands(dt, *SMALL, False)[:2], mode="fast")
    h = operands(np.float32, *SMALL, False)
    sonnx.gemm(h[0].astype(np.float16), h[1].astype(np.float16))
    assert calls == ["fold"]


# the float32 kernel's element product (GemmCFloat32's gemm_f32_mul, the one the loop and the
# tiles call): a sum
PLANT_OLD = "ensures { result = S.mul32 x y } = mul RNE x y"
PLANT_NEW = "ensures { result = S.mul32 x y } = add RNE x y"


@needs_c
@needs_why3
@pytest.mark.req("GEMM-R7", "MATMUL-R5")
def test_a_fault_planted_in_the_float_kernel_changes_what_sonnx_gemm_computes_on_a_small_shape(tmp_path, monkeypatch):
    """In a copy of proofs/, the float32 kernel's product is a sum: the replay of gemm_c.mlw fails
    at that function, and the C extracted from the planted proof, built as sonnx builds its
    kernels, makes sonnx.gemm, sonnx.matmul and a Session's default engine compute sums on a
    small float32 shape (the default runs the proved C there) and products on a large one (the
    fold runs there); float64 (another entry) is untouched."""
    root = planted(tmp_path, "gemm_c", PLANT_OLD, PLANT_NEW, within="GemmCFloat32")
    rep = replay(root, "gemm_c", monkeypatch, only={"gemm_f32_mul"})
    assert rep["status"] in ("failed", "obsolete"), rep
    assert any(leaf.startswith("gemm_f32_mul") for leaf in rep["failures"]), rep["failures"]
    rng = np.random.default_rng(5)
    m, k, n = SMALL
    a = rng.integers(-4, 5, (m, k)).astype(np.float32)       # small integers: every sum exact
    b = rng.integers(-4, 5, (k, n)).astype(np.float32)
    big_a, big_b = (rng.integers(-4, 5, s).astype(np.float32) for s in ((LARGE[0], LARGE[1]), LARGE[1:]))
    products, big_products = a @ b, big_a @ big_b                # exact in float32 here
    assert sonnx.gemm(a, b).tobytes() == products.tobytes()
    use_planted_c(tmp_path, root, "gemm_c", monkeypatch)
    # every product a sum, alpha * s included (alpha = 1): 1 + sum_l (a[i,l] + b[l,j])
    sums = np.array([[1 + sum(a[i, l] + b[l, j] for l in range(k)) for j in range(n)] for i in range(m)],
                    np.float32)
    assert not np.array_equal(sums, products)
    assert np.array_equal(ck.gemm(a, b), sums)
    assert np.array_equal(sonnx.gemm(a, b), sums)
    assert np.array_equal(sonnx.matmul(a, b), sums)
    assert np.array_equal(Session(model("MatMul", np.float32, m, k, n, b)).run(None, {"a": a})[0], sums)
    # above the rule the fold runs: the products; float64 runs its own (unplanted) entry
    assert np.array_equal(sonnx.gemm(big_a, big_b), big_products)
    assert np.array_equal(sonnx.matmul(big_a, big_b), big_products)
    assert np.array_equal(sonnx.gemm(a.astype(np.float64), b.astype(np.float64)), products.astype(np.float64))
