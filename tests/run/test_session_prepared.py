"""What a Session prepares once for its runs changes no bit: a Gemm or MatMul whose B (and C) are
the graph's constants gets them oriented, widened, packed for the exact fold and beta * C computed
at planning time (gemm.bind with ``fixed``), and the exact fold with a fixed B reuses its padded
buffers from run to run (fold.FixedB). Each is compared bit for bit with the public kernel called
on the same arrays; an input with a default (an initializer a feed may replace) is never fixed;
a bound kernel given other arrays than those it prepared computes with the arrays given."""
from __future__ import annotations

import dataclasses
import functools
import threading
import weakref

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import sonnx
from sonnx.ops import gemm as gemm_module
from sonnx.ops.gemm import fold
from sonnx.run import Session, executor

from ..ops.conftest import assert_same_bits

ELEM = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.float16: TensorProto.FLOAT16}


def special(rng, shape, dt) -> np.ndarray:
    """Normal values with a few specials: signed zeros, a subnormal, an infinity, a NaN."""
    x = (rng.standard_normal(shape) * 3).astype(dt)
    flat = x.reshape(-1)
    picks = [0.0, -0.0, np.finfo(dt).smallest_subnormal, np.inf, np.nan]
    for v, i in zip(picks, rng.choice(flat.size, size=min(len(picks), flat.size // 8), replace=False)):
        flat[i] = v
    return x


def gemm_model(dt, m, k, n, *, trans_a=0, trans_b=0, alpha=1.0, beta=1.0, with_c=True,
               b_is_input=False, op="Gemm", seed=0):
    """One Gemm (or MatMul) node, A fed, B (and C) initializers; with ``b_is_input`` B is also a
    graph input (an initializer as its default, IR 8)."""
    rng = np.random.default_rng(seed)
    b = special(rng, (n, k) if trans_b else (k, n), dt)
    c = special(rng, (m, n), dt)
    a_shape = (k, m) if trans_a else (m, k)
    inits = [numpy_helper.from_array(b, "B")] + ([numpy_helper.from_array(c, "C")] if with_c else [])
    if op == "Gemm":
        node = helper.make_node("Gemm", ["A", "B"] + (["C"] if with_c else []), ["Y"], name="g",
                                alpha=alpha, beta=beta, transA=trans_a, transB=trans_b)
    else:
        node = helper.make_node("MatMul", ["A", "B"], ["Y"], name="mm")
    inputs = [helper.make_tensor_value_info("A", ELEM[dt], list(a_shape))]
    if b_is_input:
        inputs.append(helper.make_tensor_value_info("B", ELEM[dt], list(b.shape)))
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("Y", ELEM[dt], [m, n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model, special(rng, a_shape, dt), b, (c if with_c else None)


# (M, K, N): one row (batch 1), rows and columns padded to the register tile, a K of one, a
# product large enough for the threaded path (PARALLEL_WORK), and square ones
SHAPES = [(1, 5, 50), (1, 50, 5), (3, 1, 7), (37, 19, 65), (64, 32, 64), (700, 100, 64)]


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("mode", ["exact", "fast"])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{m}x{k}x{n}" for m, k, n in SHAPES])
def test_a_session_with_constant_weights_gives_the_bits_of_gemm(shape, dt, mode):
    m, k, n = shape
    for trans_a, trans_b, alpha, beta in ((0, 0, 1.0, 1.0), (1, 1, 0.5, -1.25), (0, 1, 1.0, 3.0)):
        model, a, b, c = gemm_model(dt, m, k, n, trans_a=trans_a, trans_b=trans_b, alpha=alpha, beta=beta)
        expected = sonnx.gemm(a, b, c, alpha=np.float32(alpha), beta=np.float32(beta), trans_a=trans_a,
                              trans_b=trans_b, mode=mode)
        session = Session(model, mode)
        for _ in range(3):       # reused buffers: the same bits on every run
            assert_same_bits(session.run(None, {"A": a})[0], expected)


@pytest.mark.req("MATMUL-R5", "GEMM-R7")
@pytest.mark.parametrize("mode", ["exact", "fast"])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{m}x{k}x{n}" for m, k, n in SHAPES])
def test_a_session_with_a_constant_matmul_weight_gives_the_bits_of_matmul(shape, mode):
    model, a, b, _ = gemm_model(np.float32, *shape, with_c=False, op="MatMul")
    session = Session(model, mode)
    for _ in range(2):
        assert_same_bits(session.run(None, {"A": a})[0], sonnx.matmul(a, b, mode=mode))


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES + [(8, 50, 64), (2000, 50, 50)], ids=str)
def test_the_fold_with_a_fixed_b_is_the_fold(shape, dt):
    m, k, n = shape
    rng = np.random.default_rng(1)
    ap, bp = special(rng, (m, k), dt), special(rng, (k, n), dt)
    expected = fold.numpy_fold(ap, bp)
    fixed = fold.FixedB(bp)
    for _ in range(3):           # the kept buffers: zeroed S, untouched padding rows
        assert_same_bits(fixed.fold(ap), expected)
        other = special(rng, (m, k), dt)
        assert_same_bits(fixed.fold(other), fold.numpy_fold(other, bp))
    assert_same_bits(fixed.fold(np.asfortranarray(ap)), expected)
    assert_same_bits(fixed.fold(ap, threads=2), expected)


@pytest.mark.req("GEMM-R7")
def test_concurrent_runs_of_one_session_give_the_same_bits():
    model, a, b, c = gemm_model(np.float32, 5, 50, 50)
    session = Session(model, "exact")
    expected = sonnx.gemm(a, b, c)
    wrong: list = []

    def runs():
        for _ in range(200):
            y = session.run(None, {"A": a})[0]
            if y.tobytes() != expected.tobytes():
                wrong.append(y)
    threads = [threading.Thread(target=runs) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


@pytest.mark.req("GEMM-R7")
@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_a_bound_gemm_given_other_arrays_computes_with_them(mode):
    rng = np.random.default_rng(2)
    a, b, c = (special(rng, s, np.float32) for s in ((4, 6), (6, 5), (4, 5)))
    bound = gemm_module.bind(a, b, c, alpha=0.5, beta=2.0, mode=mode, fixed=(1, 2))
    b2, c2 = special(rng, (6, 5), np.float32), special(rng, (4, 5), np.float32)
    only_b = gemm_module.bind(a, b, c, alpha=0.5, beta=2.0, mode=mode, fixed=(1,))    # C fed each call
    with np.errstate(all="ignore"):
        for bb, cc in ((b2, c), (b, c2), (b2, c2), (b, c)):
            expected = sonnx.gemm(a, bb, cc, alpha=0.5, beta=2.0, mode=mode)
            assert_same_bits(bound(a, bb, cc), expected)
            assert_same_bits(only_b(a, bb, cc), expected)


@pytest.mark.req("GEMM-R7")
def test_an_input_with_a_default_is_not_prepared_as_a_constant(monkeypatch):
    model, a, b, c = gemm_model(np.float32, 3, 4, 5, b_is_input=True)
    seen = []
    bind = gemm_module.OPERATOR.bind

    @functools.wraps(bind)          # its signature: the planner sees that it takes fixed
    def recording(*args, **kwargs):
        seen.append(kwargs.get("fixed"))
        return bind(*args, **kwargs)
    recorded = dataclasses.replace(gemm_module.OPERATOR, bind=recording)
    lookup = executor.operator
    monkeypatch.setattr(executor, "operator", lambda name: recorded if name == "Gemm" else lookup(name))
    session = Session(model, "exact")
    assert seen == [(2,)]       # C only: B may be fed
    b2 = special(np.random.default_rng(5), b.shape, np.float32)
    assert_same_bits(session.run(None, {"A": a, "B": b2})[0], sonnx.gemm(a, b2, c))
    assert_same_bits(session.run(None, {"A": a})[0], sonnx.gemm(a, b, c))


@pytest.mark.req("GEMM-R7")
def test_constant_weights_are_packed_once_not_per_run(monkeypatch):
    if fold._compiled() is None:
        pytest.skip("the compiled fold (llvmlite) is not installed: nothing is packed")
    calls = []
    pack = fold._pack_b
    monkeypatch.setattr(fold, "_pack_b", lambda *args: calls.append(1) or pack(*args))
    from sonnx.ops import gemm
    m, k, n = 2, 300, 500       # above Gemm's size rule: the fold runs (below it, the proved C)
    assert m * k * n > gemm.C_DEFAULT_WORK
    model, a, _, _ = gemm_model(np.float32, m, k, n)
    session = Session(model, "exact")
    made = len(calls)
    assert made == 1
    for _ in range(3):
        session.run(None, {"A": a})
    assert len(calls) == made


def test_a_run_holds_each_intermediate_only_until_its_last_reader():
    """Session.run (executor.Program) frees a computed value's slot after the last node that
    reads it, as execute drops it: before each node only the values a later node reads (or the
    graph returns) are still alive."""
    from .models import inputs, mlps
    for _, model in mlps():
        session = Session(model, fuse=False)       # node by node (a fused chain: test_chain.py)
        steps, program = session._steps, session._program
        outputs = {o.name for o in model.graph.output}
        refs: dict[int, weakref.ref] = {}
        alive: list[list[int]] = []
        wrapped = []
        for i, (kernel, get, single, out, fused, free) in enumerate(program.program):
            def watched(*args, kernel=kernel, i=i):
                alive.append(sorted(j for j, r in refs.items() if r() is not None))
                y = kernel(*args)
                refs[i] = weakref.ref(y)
                return y
            wrapped.append((watched, get, single, out, fused, free))
        program.program = tuple(wrapped)
        session.run(None, inputs(model)[0])
        for i in range(len(steps)):
            expected = [j for j in range(i) if steps[j].output in outputs
                        or any(steps[j].output in later.inputs for later in steps[i:])]
            assert alive[i] == expected, (i, alive[i], expected)


@pytest.mark.req("RELU-R3", "MUL-R3")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_session_runs_the_proved_c_defaults_of_relu_and_mul(dt, monkeypatch):
    """A Session's bound Relu and Mul run the proved C entry points their records make the
    default (as sonnx.relu / sonnx.mul do), not a numpy path of their own: counted, same bits."""
    from sonnx import c_kernels
    calls = []
    for name in ("call_unary", "call_binary"):
        real = getattr(c_kernels, name)
        monkeypatch.setattr(c_kernels, name, functools.partial(
            lambda real, name, *a: calls.append(name) or real(*a), real, name))
    elem = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE}[dt]
    nodes = [helper.make_node("Mul", ["x", "x"], ["m"]), helper.make_node("Relu", ["m"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", elem, [3, 4])],
                              [helper.make_tensor_value_info("y", elem, [3, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    x = np.linspace(-2, 2, 12).reshape(3, 4).astype(dt)
    # node by node (fused, the two nodes are one chain of the same entry points: test_chain.py)
    (y,) = Session(model, "exact", fuse=False).run(None, {"x": x})
    assert sorted(calls) == ["call_binary", "call_unary"]
    assert_same_bits(y, sonnx.relu(sonnx.mul(x, x)))
