"""A Session's fused C chains (src/sonnx/run/chain.py): consecutive nodes that are each one proved
C entry point run as one call of sonnx_chain_run. The chain is taken where the size rule says
(observable: Session.chains()), gives the bits of the same model run node by node (the proved
engine's entry points one call each; the default kernels' values, a NaN matching any NaN) on MLPs, ACAS Xu-shaped networks
and random chains, float32 and float64, with NaN, infinities, -0 and subnormals in the feeds;
refuses bad feeds as `sonnx run` does; is safe from two threads; and planted faults in the
step program (a step skipped, a wrong buffer, an unknown entry) are caught.
(Rounding modes and FTZ/DAZ: tests/fpenv/test_fpenv.py runs a fused Session in each.)
"""
from __future__ import annotations

import threading

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from sonnx import Session
from sonnx.run import InputError, RunError, chain
from sonnx.run.io import check_feeds

from .models import inputs, mlps

ELEM = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE}
DTYPES = [np.float32, np.float64]


def assert_same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), np.flatnonzero(a.view(f"u{a.itemsize}") != b.view(f"u{b.itemsize}"))[:5]


def _model(nodes, inits, x_shape, outs, dtype):
    elem = ELEM[dtype]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", elem, list(x_shape))],
                              [helper.make_tensor_value_info(n, elem, list(s)) for n, s in outs],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model


def acas(batch: int, matmul_add: bool, dtype=np.float32, seed: int = 0):
    """5 inputs, six hidden layers of 50 with ReLU, 5 outputs (benchmarks/bench_run.py's shape)."""
    rng = np.random.default_rng(seed)
    sizes = [5] + [50] * 6 + [5]
    nodes, inits, x = [], {}, "x"
    for i, (k, n) in enumerate(zip(sizes[:-1], sizes[1:])):
        inits[f"w{i}"] = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(dtype)
        inits[f"b{i}"] = np.repeat(rng.standard_normal((1, n)) * 0.1, batch, axis=0).astype(dtype)
        y = f"h{i}"
        if matmul_add:
            nodes += [helper.make_node("MatMul", [x, f"w{i}"], [y + "m"], name=f"mm{i}"),
                      helper.make_node("Add", [y + "m", f"b{i}"], [y], name=f"add{i}")]
        else:
            nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [y], name=f"gemm{i}"))
        if i < len(sizes) - 2:
            nodes.append(helper.make_node("Relu", [y], [y + "r"], name=f"relu{i}"))
            y += "r"
        x = y
    return _model(nodes, inits, (batch, 5), [(x, (batch, 5))], dtype)


def random_chain(seed: int, dtype, batch: int = 3):
    """A random sequence of Gemm (transposes, alpha, beta, with or without C), MatMul, Add, Sub,
    Mul and Relu over a running value, some nodes reading an earlier value again and some
    intermediate values graph outputs too."""
    rng = np.random.default_rng(seed)
    shape, x, n_nodes = (batch, int(rng.integers(1, 7))), "x", int(rng.integers(3, 9))
    x_shape = shape
    nodes, inits, outs, seen = [], {}, [], [("x", shape)]
    scalars = [1.0, 0.5, -1.25, 3.0, 0.0, -0.0]
    for i in range(n_nodes):
        op = rng.choice(["Gemm", "Gemm", "MatMul", "Add", "Sub", "Mul", "Relu"])
        y = f"v{i}"
        if op in ("Gemm", "MatMul"):
            m, k = shape
            n = int(rng.integers(1, 7))
            tb = int(rng.integers(0, 2)) if op == "Gemm" else 0
            w = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
            inits[f"w{i}"] = w
            if op == "MatMul":
                nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [y], name=f"n{i}"))
            else:
                ins = [x, f"w{i}"]
                if rng.integers(0, 2):
                    inits[f"c{i}"] = rng.standard_normal((m, n)).astype(dtype)
                    ins.append(f"c{i}")
                nodes.append(helper.make_node("Gemm", ins, [y], name=f"n{i}", transB=tb,
                                              alpha=float(rng.choice(scalars)), beta=float(rng.choice(scalars))))
            shape = (m, n)
        elif op == "Relu":
            nodes.append(helper.make_node("Relu", [x], [y], name=f"n{i}"))
        else:
            same = [name for name, s in seen if s == shape and name != x]
            if same and rng.integers(0, 2):
                other = str(rng.choice(same))           # an earlier value read again
            else:
                other = f"k{i}"
                inits[other] = (rng.standard_normal(shape) * 4).astype(dtype)
            pair = [x, other] if rng.integers(0, 2) else [other, x]
            nodes.append(helper.make_node(str(op), pair, [y], name=f"n{i}"))
        seen.append((y, shape))
        if i < n_nodes - 1 and rng.integers(0, 4) == 0:
            outs.append((y, shape))                     # an intermediate value returned too
        x = y
    outs.append((x, shape))
    return _model(nodes, inits, x_shape, outs, dtype)


def special_feed(shape, dtype, seed=0) -> np.ndarray:
    """Random values with NaN, infinities, -0, +0, subnormals and huge values mixed in."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    tiny = np.finfo(dtype).tiny
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, tiny / 8, -tiny / 1024, np.finfo(dtype).max / 2],
                        dtype)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, size=max(1, flat.size // 4), replace=False)
    flat[picks] = rng.choice(specials, size=len(picks))
    return x


def plain_feed(shape, dtype=np.float32, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def node_by_node(model, feed, engine="default"):
    return Session(model, "exact", engine=engine, fuse=False).run(None, feed)


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit, except that any NaN matches any NaN (the profile does not fix NaN payloads
    or their sign: semantics/values.same_value); a zero's sign counts."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    return bool((nan_a == nan_b).all()) and a[~nan_a].tobytes() == b[~nan_b].tobytes()


def fused_matches_node_by_node(session: Session, model, feed, engines=("default", "proved")) -> bool:
    """The fused session's outputs are the bits of the proved entry points called one by one
    (the proved engine: NaN payloads included) and the values of the default kernels node by
    node (the llvmlite fold may give a NaN another payload or sign: the profile leaves it
    open). The check the planted faults below must fail."""
    got = session.run(None, feed)
    for engine in engines:
        ref = node_by_node(model, feed, engine)
        same = (lambda a, b: a.shape == b.shape and a.tobytes() == b.tobytes()) if engine == "proved" else same_values
        if len(ref) != len(got) or not all(same(a, b) for a, b in zip(got, ref)):
            return False
    return True


def _all_fused(session: Session, model) -> bool:
    return [n for c in session.chains() for n in c["nodes"]] == [n.name for n in model.graph.node]


# ---------------------------------------------------------------------------------------------

@pytest.mark.req("GEMM-R7", "MATMUL-R5", "ADD-R3", "RELU-R3")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", ["Gemm", "MatMul+Add"])
def test_acas_shaped_network_runs_as_one_chain_with_the_node_by_node_bits(form, dtype):
    model = acas(1, form != "Gemm", dtype)
    for mode in ("exact", "fast"):     # fast mode's chain runs the exact entry points
        session = Session(model, mode)
        assert len(session.chains()) == 1 and _all_fused(session, model)
        for seed in range(3):
            feed = {"x": special_feed((1, 5), dtype, seed)}
            assert fused_matches_node_by_node(session, model, feed)
    # the proved engine fuses too: its nodes are these entry points, one call each
    proved = Session(model, engine="proved")
    assert _all_fused(proved, model) and len(proved.proofs()) == len(model.graph.node)
    feed = {"x": special_feed((1, 5), dtype, 7)}
    assert fused_matches_node_by_node(proved, model, feed)


@pytest.mark.req("GEMM-R7", "MATMUL-R5", "RELU-R3")
def test_pytorch_mlps_run_fused_with_the_node_by_node_bits():
    for _, model in mlps():
        session = Session(model)
        assert _all_fused(session, model)
        for feed in inputs(model):
            assert fused_matches_node_by_node(session, model, feed)


@pytest.mark.req("GEMM-R7", "MATMUL-R5", "ADD-R3", "SUB-R3", "MUL-R3", "RELU-R3")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("seed", range(12))
def test_random_chains_give_the_node_by_node_bits(seed, dtype):
    model = random_chain(seed, dtype)
    session = Session(model)
    assert _all_fused(session, model), session.chains()
    width = model.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    for k in range(2):
        feed = {"x": special_feed((3, width), dtype, seed * 7 + k)}
        assert fused_matches_node_by_node(session, model, feed)


def test_a_node_without_a_c_entry_cuts_the_chain():
    """Div has no C entry point: the nodes before and after it are two chains, it runs its own
    kernel between them, and every value crossing a cut (also a graph output read later) is
    passed on: the same bits."""
    rng = np.random.default_rng(3)
    inits = {"w0": rng.standard_normal((4, 6)).astype(np.float32), "d": rng.standard_normal((2, 6)).astype(np.float32),
             "w1": rng.standard_normal((6, 3)).astype(np.float32)}
    nodes = [helper.make_node("MatMul", ["x", "w0"], ["a"], name="mm0"), helper.make_node("Relu", ["a"], ["r"], name="relu0"),
             helper.make_node("Div", ["r", "d"], ["q"], name="div"),
             helper.make_node("MatMul", ["q", "w1"], ["b"], name="mm1"), helper.make_node("Add", ["b", "b"], ["y"], name="add"),
             helper.make_node("Mul", ["r", "r"], ["z"], name="mul")]
    model = _model(nodes, inits, (2, 4), [("y", (2, 3)), ("r", (2, 6)), ("z", (2, 6))], np.float32)
    session = Session(model)
    assert [c["nodes"] for c in session.chains()] == [["mm0", "relu0"], ["mm1", "add", "mul"]]
    assert session.chains()[0]["outputs"] == ["r"]          # read by Div, mul and returned
    # (Div has no proved kernel: the default engine only)
    assert fused_matches_node_by_node(session, model, {"x": special_feed((2, 4), np.float32)}, ("default",))


def test_the_size_rule_decides_at_plan_time():
    """Batch 1 fused, batch 1,000 node by node (the thin layers are faster in the fold or BLAS);
    the rule reads only the shapes, so it is the same plan every time."""
    for mode in ("exact", "fast"):
        assert len(Session(acas(1, False), mode).chains()) == 1
        assert Session(acas(1000, False), mode).chains() == []
    from types import SimpleNamespace

    from sonnx.ops.registry import CCall
    for mode, limit in chain.FUSE_LIMIT.items():        # the boundaries, as documented
        at = SimpleNamespace(call=CCall("sonnx_gemm_f32", (0, 1), n=limit // 256, m=16, k=16))
        above = SimpleNamespace(call=CCall("sonnx_gemm_f32", (0, 1), n=limit // 256 + 1, m=16, k=16))
        assert chain.fusable(at, mode) and not chain.fusable(above, mode)
    big = chain.ELEMENT_LIMIT + 1
    assert not chain.fusable(SimpleNamespace(call=CCall("sonnx_relu_f32", (0,), n=big)), "exact")
    assert chain.fusable(SimpleNamespace(call=CCall("sonnx_relu_f32", (0,), n=big - 1)), "exact")
    assert not chain.fusable(SimpleNamespace(call=None), "exact")
    step = Session(acas(1, False))._steps[0]
    assert chain.fusable(step, "exact")
    call = step.call
    assert call.entry == "sonnx_gemm_f32" and (call.m, call.n, call.k, call.hasc) == (1, 50, 5, 1)


def test_fast_mode_chain_gives_the_exact_bits_and_large_batches_use_blas():
    small, big = acas(1, True), acas(1000, True)
    feed = {"x": special_feed((1, 5), np.float32)}
    assert_same_bits(Session(small, "fast").run(None, feed)[0], node_by_node(small, feed)[0])
    feed = {"x": np.random.default_rng(0).standard_normal((1000, 5)).astype(np.float32)}
    assert_same_bits(Session(big, "fast").run(None, feed)[0], Session(big, "fast", fuse=False).run(None, feed)[0])


def test_outputs_are_fresh_arrays():
    model = acas(1, False)
    session = Session(model)
    feed = {"x": special_feed((1, 5), np.float32)}
    (a,), (b,) = session.run(None, feed), session.run(None, feed)
    assert a is not b and not np.shares_memory(a, b)
    a[...] = 7
    assert_same_bits(session.run(None, feed)[0], b)


def test_feeds_are_refused_as_sonnx_run_refuses_them():
    """The fused and the unfused session raise the same InputError as run.io.check_feeds (the
    function `sonnx run` checks its input files with): nothing is cast or broadcast."""
    model = acas(1, False)
    fused, unfused = Session(model), Session(model, fuse=False)
    good = special_feed((1, 5), np.float32)
    bad = [{"x": good.astype(np.float64)}, {"x": good.reshape(5, 1)}, {"x": np.zeros((2, 5), np.float32)},
           {}, {"x": good, "y": good}, {"x": good.tolist()}, {"x": good[:, :4]}]
    for feeds in bad:
        messages = []
        for call in (lambda: check_feeds(dict(feeds), fused.loaded.inputs), lambda: fused.run(None, feeds),
                     lambda: unfused.run(None, feeds)):
            with pytest.raises(InputError) as e:
                call()
            messages.append(str(e.value))
        assert len(set(messages)) == 1, messages
    # a feed of the right type and shape that is not contiguous, in Fortran order or big-endian
    # is accepted by check_feeds and read as it is (the same values): the same outputs
    wide = np.zeros((1, 10), np.float32)
    wide[:, ::2] = good
    expected = unfused.run(None, {"x": good})[0]
    for x in (wide[:, ::2], np.asfortranarray(good), good.astype(">f4")):
        assert_same_bits(fused.run(None, {"x": x})[0], expected)
        assert_same_bits(unfused.run(None, {"x": x})[0], expected)


def test_two_threads_share_a_session_safely():
    model = acas(1, True)
    session = Session(model)
    feeds = [{"x": special_feed((1, 5), np.float32, seed)} for seed in range(8)]
    expected = [node_by_node(model, f)[0].tobytes() for f in feeds]
    wrong = []

    def worker(offset):
        for i in range(400):
            k = (i + offset) % len(feeds)
            if session.run(None, feeds[k])[0].tobytes() != expected[k]:
                wrong.append(k)
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_without_the_lock_two_threads_would_mix_their_buffers():
    """The plant for the test above: a chain whose run does not hold its lock and waits between
    copying its inputs in and calling C gives another thread's results (so the test above, with
    the lock, can fail)."""
    model = acas(1, True)
    session = Session(model)
    (c,) = session._program.chains
    feeds = [{"x": special_feed((1, 5), np.float32, seed)} for seed in range(2)]
    expected = [node_by_node(model, f)[0].tobytes() for f in feeds]
    barrier = threading.Barrier(2)
    real_copyto = np.copyto

    class NoLock:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def slow_copyto(dst, src, casting):
        real_copyto(dst, src, casting=casting)
        barrier.wait(timeout=10)         # both threads have written the one input buffer

    c._lock = NoLock()
    results = [None, None]
    np_module = chain.np

    class Patched:
        def __getattr__(self, name):
            return slow_copyto if name == "copyto" else getattr(np_module, name)
    chain.np = Patched()
    try:
        threads = [threading.Thread(target=lambda k=k: results.__setitem__(k, session.run(None, feeds[k])[0].tobytes()))
                   for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        chain.np = np_module
    assert results != expected


def test_planted_step_program_faults_are_caught():
    """The bit comparison above catches a dispatcher that skips a step and a step reading the
    wrong buffer; an entry index the dispatcher does not know stops the run with RunError."""
    model = acas(1, False)
    feed = {"x": plain_feed((1, 5))}       # no NaN: every output element tells
    assert fused_matches_node_by_node(Session(model), model, feed)

    skipped = Session(model)
    (c,) = skipped._program.chains
    c._buffers[c.steps[-1].output][...] = 0
    c._count -= 1                                       # the last step never runs
    assert not fused_matches_node_by_node(skipped, model, feed)

    wrong = Session(model)
    (c,) = wrong._program.chains
    c._program[2].a = c._program[0].a                   # the second Gemm reads x, not relu0's result
    c._program[2].k = 5
    assert not fused_matches_node_by_node(wrong, model, feed)

    unknown = Session(model)
    (c,) = unknown._program.chains
    c._program[3].entry = 999
    with pytest.raises(RunError, match="does not know entry"):
        unknown.run(None, feed)


def test_a_graph_input_with_a_default_and_chosen_outputs():
    """A graph input with an initializer of the same name takes its default when not fed (and
    the feed when fed) in a chain too; asking for some outputs by name gives those, in order."""
    rng = np.random.default_rng(5)
    w, x0 = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="mm"), helper.make_node("Relu", ["a"], ["r"], name="relu")]
    model = _model(nodes, {"w": w, "x": x0}, (2, 3), [("r", (2, 4)), ("a", (2, 4))], np.float32)
    fused, unfused = Session(model), Session(model, fuse=False)
    assert len(fused.chains()) == 1
    other = plain_feed((2, 3), seed=9)
    for feeds in ({}, {"x": other}):
        for names in (None, ["a"], ["a", "r"]):
            got, ref = fused.run(names, feeds), unfused.run(names, feeds)
            assert len(got) == len(ref) == (2 if names is None else len(names))
            for a, b in zip(got, ref):
                assert same_values(a, b)
    assert not same_values(fused.run(["r"], {})[0], fused.run(["r"], {"x": other})[0])
