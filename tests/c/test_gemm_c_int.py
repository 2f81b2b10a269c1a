"""Integer Gemm and MatMul on the C kernels extracted from proofs/gemm_c.mlw (GemmCUInt32,
GemmCUInt64: C's unsigned + and * on uint32_t/uint64_t words, proved to write gemm.mlw's wrapped
entry), int32/int64 on their bits (proofs/int_route.mlw's GemmRoute). Checked here: the bits of
the default kernel (numpy on unsigned views) and of Python integers modulo 2^w on edge values,
every transpose, with and without C, shapes across the loop's 8-row blocks; the proved engine runs
them and cites both proofs; and a fault planted in the WhyML fails the replay and changes what
the proved engine computes (the code proved is the code run)."""
from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import sonnx
from sonnx import c_kernels as ck
from sonnx.run.session import Session
from tests.trace.proof_plants import needs_why3, planted, replay, use_planted_c

ROOT = Path(__file__).resolve().parents[2]
needs_c = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed (tools/setup installs it)")
TYPES = [(np.int32, TensorProto.INT32, "u32"), (np.int64, TensorProto.INT64, "u64"),
         (np.uint32, TensorProto.UINT32, "u32"), (np.uint64, TensorProto.UINT64, "u64")]


def edges(dt) -> np.ndarray:
    info = np.iinfo(dt)
    vals = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3, info.max // 2, info.max // 2 + 1]
    if info.min < 0:
        vals += [-1, -2, -3]
    return np.array(vals, dtype=dt)


def python_gemm(a, b, c, ta, tb) -> np.ndarray:
    """sum_l op(A)[i,l] op(B)[l,j] (+ C[i,j]) in Python integers, then reduced to T's bits."""
    dt = a.dtype
    w = 8 * dt.itemsize
    oa, ob = (a.T if ta else a), (b.T if tb else b)
    m, k = oa.shape
    n = ob.shape[1]
    out = np.empty((m, n), dtype=np.dtype(f"uint{w}"))
    for i, j in itertools.product(range(m), range(n)):
        s = sum(int(oa[i, l]) * int(ob[l, j]) for l in range(k)) + (int(c[i, j]) if c is not None else 0)
        out[i, j] = s % (1 << w)
    return out.view(dt)


@needs_c
@pytest.mark.req("GEMM-R6", "GEMM-R7")
@pytest.mark.parametrize("dt", [t[0] for t in TYPES])
def test_integer_c_gemm_gives_the_wrapped_sum(dt):
    rng = np.random.default_rng(np.dtype(dt).itemsize)
    e = edges(dt)
    for m, k, n in [(1, 1, 1), (3, 5, 7), (9, 2, 4), (17, 13, 3), (8, 8, 8)]:
        for ta, tb in itertools.product((False, True), repeat=2):
            a = e[rng.integers(0, e.size, (k, m) if ta else (m, k))]
            b = e[rng.integers(0, e.size, (n, k) if tb else (k, n))]
            c = e[rng.integers(0, e.size, (m, n))]
            for cc in (None, c):
                want = python_gemm(a, b, cc, ta, tb)
                got = ck.gemm(a, b, cc, trans_a=ta, trans_b=tb)
                assert got.dtype == np.dtype(dt) and got.tobytes() == want.tobytes(), (m, k, n, ta, tb)
                assert sonnx.gemm(a, b, cc, trans_a=ta, trans_b=tb).tobytes() == want.tobytes()
    # larger, random over the whole range (the 8-row blocks, several of them, and a remainder)
    info = np.iinfo(dt)
    a = rng.integers(info.min, info.max, (130, 37), dtype=dt, endpoint=True)
    b = rng.integers(info.min, info.max, (37, 29), dtype=dt, endpoint=True)
    assert ck.gemm(a, b).tobytes() == sonnx.gemm(a, b).tobytes()
    assert ck.matmul(a, b).tobytes() == sonnx.matmul(a, b).tobytes()
    # a byte-swapped operand is read by value, as the default kernel reads it
    sw = a.astype(a.dtype.newbyteorder())
    assert ck.gemm(sw, b).tobytes() == sonnx.gemm(a, b).tobytes()


@needs_c
@pytest.mark.req("GEMM-R6")
def test_integer_c_gemm_refuses_what_gemm_refuses():
    a = np.ones((2, 3), np.int32)
    with pytest.raises(sonnx.ProfileViolation) as e:
        ck.gemm(a, a.T.copy(), alpha=2.0)
    assert e.value.requirement == "GEMM-R6"
    with pytest.raises(sonnx.ProfileViolation):
        ck.gemm(a, np.ones((3, 2), np.int64))


def product(op: str, elem: int, m=4, k=5, n=3) -> onnx.ModelProto:
    shapes = {"a": [m, k], "b": [k, n], "c": [m, n]}
    ins = ["a", "b", "c"] if op == "Gemm" else ["a", "b"]
    vi = [helper.make_tensor_value_info(x, elem, shapes[x]) for x in ins]
    g = helper.make_graph([helper.make_node(op, ins, ["y"], name="g0")], "g", vi,
                          [helper.make_tensor_value_info("y", elem, [m, n])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


@needs_c
@pytest.mark.req("GEMM-R6", "GEMM-R7", "MATMUL-R5")
@pytest.mark.parametrize("op", ["Gemm", "MatMul"])
@pytest.mark.parametrize("dt, elem, suffix", TYPES)
def test_the_proved_engine_runs_integer_gemm_and_matmul(op, dt, elem, suffix):
    rng = np.random.default_rng(3)
    e = edges(dt)
    feeds = {"a": e[rng.integers(0, e.size, (4, 5))], "b": e[rng.integers(0, e.size, (5, 3))]}
    if op == "Gemm":
        feeds["c"] = e[rng.integers(0, e.size, (4, 3))]
    s = Session(product(op, elem), engine="proved")
    (got,) = s.run(None, feeds)
    assert got.tobytes() == python_gemm(feeds["a"], feeds["b"], feeds.get("c"), False, False).tobytes()
    [r] = s.proofs()
    assert r["entry"] == f"sonnx_gemm_{suffix}" and r["theory"] == f"GemmCUInt{suffix[1:]}"
    via = ["proofs/matmul.mlw"] if op == "MatMul" else []
    if np.dtype(dt).kind == "i":      # on the bits: the route's proof is cited, nothing is only checked
        assert r["proofs"] == ["proofs/gemm_c.mlw", *via, "proofs/int_route.mlw"]
        assert r["route"]["theory"] == "GemmRoute" and r["route"]["checked_not_proved"] == []
        assert r["route"]["bits_as_they_are"] is True
    else:
        assert r["proofs"] == ["proofs/gemm_c.mlw", *via] and "route" not in r


# the uint32 kernel's word product (in GemmCUInt32: the uint64 module reads alike)
PLANT_OLD = "ensures { U.to_int result = S.mul_w (U.to_int x) (U.to_int y) } = U.mul_mod x y"
PLANT_NEW = "ensures { U.to_int result = S.mul_w (U.to_int x) (U.to_int y) } = U.add_mod x y"


@needs_c
@needs_why3
@pytest.mark.req("GEMM-R7")
def test_a_fault_planted_in_the_integer_kernel_fails_its_proof_and_changes_what_runs(tmp_path, monkeypatch):
    """In a copy of proofs/, the uint32 kernel's product is a sum: the replay of gemm_c.mlw fails
    at that function (by the step budgets), and the C extracted from the planted proof, built as
    sonnx builds its kernels, makes the proved engine, the default engine and ``sonnx.gemm`` /
    ``sonnx.matmul`` compute sums instead of products on int32 (the default kernel runs it)."""
    root = planted(tmp_path, "gemm_c", PLANT_OLD, PLANT_NEW, within="GemmCUInt32")
    rep = replay(root, "gemm_c", monkeypatch, only={"gemm_u32_mul"})
    assert rep["status"] in ("failed", "obsolete"), rep
    assert any(leaf.startswith("gemm_u32_mul") for leaf in rep["failures"]), rep["failures"]
    a = np.array([[2, 3], [4, 5]], np.int32)
    b = np.array([[7, 11], [13, 17]], np.int32)
    model = product("MatMul", TensorProto.INT32, 2, 2, 2)
    honest = Session(model, engine="proved").run(None, {"a": a, "b": b})[0]
    use_planted_c(tmp_path, root, "gemm_c", monkeypatch)
    planted_run = Session(model, engine="proved").run(None, {"a": a, "b": b})[0]
    # every product a sum, alpha * t included (alpha = 1): 1 + sum_l (a[i,l] + b[l,j])
    sums = np.array([[1 + sum(int(a[i, l]) + int(b[l, j]) for l in range(2)) for j in range(2)] for i in range(2)])
    assert np.array_equal(honest, a @ b) and np.array_equal(planted_run, sums)
    # Gemm's record makes its integer entries the default: the default engine, sonnx.matmul and
    # sonnx.gemm run that C too and compute the planted result; float Gemm (its own entry at
    # this size, the fold above 2^18 multiply-adds) does not
    assert np.array_equal(Session(model).run(None, {"a": a, "b": b})[0], sums)
    assert np.array_equal(sonnx.matmul(a, b), sums) and np.array_equal(sonnx.gemm(a, b), sums)
    f = a.astype(np.float32)
    assert np.array_equal(sonnx.gemm(f, f), f @ f)
