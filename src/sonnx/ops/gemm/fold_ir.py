"""The exact fold's machine code, written as LLVM IR and compiled with llvmlite (numba's backend).

Why IR and not a numba loop: the fold is limited by how many multiplies and adds the cores
retire, and getting there needs a register tile (MR rows x NR columns of S held in vector
registers while l runs over a block of K) and full-width vectors. numba does not keep array
elements in registers across a loop, and LLVM's tuning for recent x86 cores prefers 256-bit
vectors; here both are stated explicitly, and the arithmetic is still only ``fmul`` and
``fadd`` without fast-math flags, which LLVM may neither reassociate nor contract into an FMA
(tests read the machine code). Compiling this small module takes about 0.05-0.2 s, so nothing is
cached on disk.

The function made for a float type T (``float``/``double``)::

    fold_T(apk, bpk, s, k, npanels, p0, p1, q0, q1, kc)

multiplies ``apk`` = A' (row-major, rows padded with zeros to a multiple of MR) by the packed
panels ``bpk[jp, l, c] = B'[l, jp*NR + c]`` (columns padded likewise), into ``s`` (padded,
row-major, ``npanels * NR`` columns, zero on entry), for the row panels ``p0 .. p1-1`` and
the column panels ``q0 .. q1-1``. K is
cut into blocks of ``kc``; each element's partial sum is stored in ``s`` between blocks and
reloaded, so every element still sees ``s = s + a*b`` for l ascending, one product and one
sum at a time: lanes and registers hold different elements, never parts of one sum.
"""
from __future__ import annotations

from typing import NamedTuple

from llvmlite import ir

I64 = ir.IntType(64)


class Kernel(NamedTuple):
    fold: object        # fold_T(apk, bpk, s, k, npanels, p0, p1, q0, q1, kc), through ctypes
    pack: object        # pack_T(bp, bpk, k, ldb, q0, q1)
    mr: int             # rows of the register tile
    nr: int             # columns of the register tile (a B' panel)
    nvec: int = 2       # vectors per panel row (NR = nvec * lanes): the work per panel and step
    narrow: tuple = ()  # the same fold with narrower panels (for B' of few columns), widest first


# req: GEMM-R7
def _loop(b: ir.IRBuilder, start, stop, step, name: str, carried=(), body=None):
    """``for i in range(start, stop, step)`` (empty when start >= stop) with loop-carried values:
    ``body(b, i, values) -> new values``; returns the values after the loop."""
    pre = b.block
    head = b.append_basic_block(f"{name}.head")
    loop = b.append_basic_block(f"{name}.body")
    done = b.append_basic_block(f"{name}.done")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64, name=name)
    i.add_incoming(start, pre)
    phis = []
    for v in carried:
        p = b.phi(v.type)
        p.add_incoming(v, pre)
        phis.append(p)
    b.cbranch(b.icmp_signed("<", i, stop), loop, done)
    b.position_at_end(loop)
    new = body(b, i, phis)
    nxt = b.add(i, step if isinstance(step, ir.Value) else ir.Constant(I64, step))
    end = b.block
    i.add_incoming(nxt, end)
    for p, v in zip(phis, new):
        p.add_incoming(v, end)
    b.branch(head)
    b.position_at_end(done)
    return phis


# req: GEMM-R7
def build(module: ir.Module, name: str, elem: ir.Type, lanes: int, nvec: int, mr: int,
          flags: tuple = ()) -> None:
    """Adds ``name`` to ``module``: the blocked fold for element type ``elem`` with a register
    tile of ``mr`` rows x ``nvec`` vectors of ``lanes`` elements (NR = nvec * lanes).
    ``flags``: fast-math flags of the multiply and add, always empty except in the test that
    plants an FMA (``("contract",)``) to show that the machine-code check sees it."""
    nr = lanes * nvec
    vec = ir.VectorType(elem, lanes)
    ptr = elem.as_pointer()
    size = 4 if isinstance(elem, ir.FloatType) else 8      # bytes per element: the alignment
    fnty = ir.FunctionType(ir.VoidType(), [ptr, ptr, ptr] + [I64] * 7)
    fn = ir.Function(module, fnty, name=name)
    for a in fn.args[:3]:
        a.add_attribute("noalias")      # apk, bpk and s are distinct arrays (made by fold())
    apk, bpk, s, k, npan, p0, p1, q0, q1, kc = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    c = lambda v: ir.Constant(I64, v)   # noqa: E731
    ld = b.mul(npan, c(nr))             # row length of s

    def vload(p):
        return b.load(b.bitcast(p, vec.as_pointer()), align=size)

    def vstore(v, p):
        b.store(v, b.bitcast(p, vec.as_pointer()), align=size)

    _build_pack(module, f"pack_{name}", elem, vec, nvec, size)

    def k_block(b, lc, _):
        le = b.select(b.icmp_signed("<", b.add(lc, kc), k), b.add(lc, kc), k)

        def col_panel(b, jp, _):
            bq = b.gep(bpk, [b.mul(jp, b.mul(k, c(nr)))])

            def row_panel(b, ip, _):
                aq = b.gep(apk, [b.mul(ip, b.mul(k, c(mr)))])     # row ip*MR of A'
                arow = [b.gep(aq, [b.mul(c(r), k)]) for r in range(mr)]
                s0 = b.gep(s, [b.add(b.mul(b.mul(ip, c(mr)), ld), b.mul(jp, c(nr)))])
                # the partial sums so far (zero before the first block), one register each
                addr = [[b.gep(s0, [b.add(b.mul(c(r), ld), c(v * lanes))]) for v in range(nvec)]
                        for r in range(mr)]
                acc = [vload(addr[r][v]) for r in range(mr) for v in range(nvec)]

                def step(b, l, acc):
                    bl = b.gep(bq, [b.mul(l, c(nr))])
                    bv = [vload(b.gep(bl, [c(v * lanes)])) for v in range(nvec)]
                    out = []
                    for r in range(mr):
                        a = b.load(b.gep(arow[r], [l]))
                        splat = b.insert_element(ir.Constant(vec, ir.Undefined), a, c(0))
                        splat = b.shuffle_vector(splat, ir.Constant(vec, ir.Undefined),
                                                 ir.Constant(ir.VectorType(ir.IntType(32), lanes),
                                                             [0] * lanes))
                        for v in range(nvec):
                            # s = s + a*b: one rounded product, then one rounded sum
                            out.append(b.fadd(acc[r * nvec + v], b.fmul(splat, bv[v], flags=flags),
                                              flags=flags))
                    return out

                acc = _loop(b, lc, le, 1, "l", acc, step)
                for r in range(mr):
                    for v in range(nvec):
                        vstore(acc[r * nvec + v], addr[r][v])
                return []

            _loop(b, p0, p1, 1, "ip", (), row_panel)
            return []

        _loop(b, q0, q1, 1, "jp", (), col_panel)
        return []

    # the K blocks are the outer loop: block after block, each element's sum carries on
    _loop(b, c(0), k, kc, "lc", (), k_block)
    b.ret_void()



# req: GEMM-R7
def _build_pack(module, name, elem, vec, nvec, size):
    """``name(bp, bpk, k, ldb, q0, q1)``: copies the column panels q0 .. q1-1 of B' (row-major,
    ``ldb`` columns, whole panels only) into ``bpk[jp, l, :]``, one vector at a time."""
    ptr = elem.as_pointer()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr, ptr] + [I64] * 4), name=name)
    for a in fn.args[:2]:
        a.add_attribute("noalias")
    bp, bpk, k, ldb, q0, q1 = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    c = lambda v: ir.Constant(I64, v)   # noqa: E731
    lanes = vec.count
    nr = lanes * nvec

    def panel(b, jp, _):
        def row(b, l, _):
            src = b.gep(bp, [b.add(b.mul(l, ldb), b.mul(jp, c(nr)))])
            dst = b.gep(bpk, [b.mul(b.add(b.mul(jp, k), l), c(nr))])
            for v in range(nvec):
                x = b.load(b.bitcast(b.gep(src, [c(v * lanes)]), vec.as_pointer()), align=size)
                b.store(x, b.bitcast(b.gep(dst, [c(v * lanes)]), vec.as_pointer()), align=size)
            return []
        _loop(b, c(0), k, 1, "l", (), row)
        return []

    _loop(b, q0, q1, 1, "jp", (), panel)
    b.ret_void()


# req: GEMM-R7
def compile_folds(flags: tuple = (), bits: int | None = None, with_asm: bool = False):
    """Compiles the fold for float32 and float64 for this machine's CPU. Returns
    ``(kernels, asm)``: ``kernels[dtype]``, a Kernel; ``asm`` is the machine code
    as text when ``with_asm`` (the tests read it; making it costs about a third of the time). The functions stay valid while the returned objects live.
    ``bits``: the vector width, by default the widest this CPU has (tests also build the
    narrower kernels of other machines)."""
    import ctypes

    import llvmlite.binding as llvm
    import numpy as np

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    try:
        features = llvm.get_host_cpu_features()
    except RuntimeError:                # llvmlite cannot read them on some hosts: baseline code
        features = {}
    # full-width vectors: 512-bit with AVX-512 (LLVM's tuning would otherwise stop at 256)
    widest = 512 if features.get("avx512f") else 256 if features.get("avx") else 128
    bits = min(bits or widest, widest)
    flat = (features.flatten() if features else "") + (",-prefer-256-bit" if bits == 512 else "")
    tm = llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=flat, opt=3, codemodel="jitdefault")
    module = ir.Module(name="sonnx_gemm_fold")
    module.triple = llvm.get_process_triple()
    # MR rows x 2 vectors of accumulators, + 2 vectors of B' + one broadcast: with AVX-512's 32
    # registers 8 rows (19 registers; 8 also divides the usual sizes, so no padding), else 4
    mr = 8 if bits == 512 else 4
    shapes = {np.dtype(np.float32): (ir.FloatType(), bits // 32, 2, mr),
              np.dtype(np.float64): (ir.DoubleType(), bits // 64, 2, mr)}
    # narrower panels for B' of few columns (a layer of 4 or 16 outputs): a wide panel would
    # multiply its zero padding, up to 8 times the useful work. One vector of the full width,
    # then one of 128 bits; the same fmul/fadd per element, so the same bits (tests check)
    narrow = {dt: [(lanes, 1)] + ([(16 // dt.itemsize, 1)] if bits > 128 else [])
              for dt, (_, lanes, _, _) in shapes.items()}
    for dt, (elem, lanes, nvec, mr) in shapes.items():
        build(module, f"fold_{dt.name}", elem, lanes, nvec, mr, flags)
        for nl, nv in narrow[dt]:
            build(module, f"fold_{dt.name}_{nl * nv}", elem, nl, nv, mr, flags)
    mod = llvm.parse_assembly(str(module))
    mod.verify()
    # no IR optimisation pipeline: the IR is already in the shape wanted (the inner loop's machine
    # code is the same with or without it, checked), and it would cost a third of the compile
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    proto = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3, *[ctypes.c_int64] * 7)
    pack_proto = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 2, *[ctypes.c_int64] * 4)
    kernels = {}
    def kernel(name: str, lanes: int, nvec: int, mr: int, narrow: tuple = ()) -> Kernel:
        fn = proto(engine.get_function_address(name))
        pack = pack_proto(engine.get_function_address(f"pack_{name}"))
        fn._engine = pack._engine = engine  # the code lives as long as the engine
        return Kernel(fn, pack, mr, lanes * nvec, nvec, narrow)

    for dt, (_, lanes, nvec, mr) in shapes.items():
        kernels[dt] = kernel(f"fold_{dt.name}", lanes, nvec, mr,
                             tuple(kernel(f"fold_{dt.name}_{nl * nv}", nl, nv, mr) for nl, nv in narrow[dt]))
    return kernels, tm.emit_assembly(mod) if with_asm else None
