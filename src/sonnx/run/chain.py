"""Fused chains: consecutive planned nodes that are each one call of a proved C entry point, run
by ONE foreign call (``sonnx_chain_run`` in sonnx_kernels.c) instead of one per node.

At batch 1 a node's numpy and ctypes calls (about 1 us each, plus the Python between them) cost
more than its arithmetic, and a whole small network in onnxruntime costs 5 - 8 us: only the chain
in one call reaches it. A chain is planned once per Session (Program): each node's record says
which entry point computes it as its kernel does (``CBinding.call`` -> registry.CCall: the entry
taking the node's element type as it is, its operands and sizes; Gemm and MatMul on float32 /
float64, the same-shape element-wise operators and Relu on the types of their default entry
points); the nodes are kept in graph order; every value a chain computes gets its own buffer,
allocated once (no output overlaps an input: the entry points' precondition), every constant is
passed as the initializer's own array, and every other value the chain reads (a feed, or a value
computed before it) is copied into a buffer of its own at each run (same element type and shape,
checked before; ``np.copyto(casting="equiv")`` allows only a byte-order change, which keeps the
values, as the unfused kernels' own conversion does, and refuses anything else). The step
program (an array of ``sonnx_chain_step``: entry index, array addresses, sizes, alpha/beta) is built once; the C
dispatcher calls the extracted bodies in order in the default floating-point environment, set
once for the chain as each entry point sets it for itself, and does no arithmetic of its own. So
a chain's results are the bits of its entry points called one by one (the proved engine, NaN
payloads included), and the values of the default kernels (the same entry points for the
element-wise operators and Relu, and for exact float Gemm and MatMul within their record's size
rule, which admits every node a chain takes (FUSE_LIMIT below); above it the exact fold, which may
give a NaN another sign or payload, left open by the profile): tests/run/test_chain.py.

Which nodes join a chain (decided at plan time from the shapes, deterministic): a node with a
CCall, within the size rule below (above it the node's own kernel is faster: the llvmlite fold in
exact mode, BLAS in fast mode; fast mode's results in a chain are the exact ones, within the
fast-mode bound); a chain has at least two nodes. A run of a chain holds its lock (its buffers
are the Session's: two threads running one Session take turns in a chain) and returns fresh
arrays (copies of the buffers).
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from .. import c_kernels

# The size rule (measured: benchmarks/profile_session.py --sweep, 2 cores):
# a chain saves a node's per-call cost (about 3 - 6 us exact, 2 - 3 us fast), and costs the
# proved C loop's speed (one thread in a chain: about 1/3 of the llvmlite fold's and 1/6 of BLAS's
# multiply-adds per second on these thin layers) and a copy of each value entering or leaving
# it. So a Gemm/MatMul node joins only while M * N * K <= FUSE_LIMIT[mode] (multiply-adds), and
# any node only while each array it reads or writes has at most ELEMENT_LIMIT elements. On
# bench_run.py's models: batch 1 (to 16 or so) fused, batch 1,000 node by node, as before.
FUSE_LIMIT = {"exact": 1 << 15, "fast": 1 << 14}
ELEMENT_LIMIT = 1 << 12
_INT32_MAX = (1 << 31) - 1


def fusable(step, mode: str) -> bool:
    """The step joins a chain: its node is one call of a C entry point (step.call), within the
    entry points' int32 preconditions and the size rule above."""
    call = step.call
    if call is None:
        return False
    sizes = (call.n,) if not call.k else (call.m * call.k, call.k * call.n, call.m * call.n)
    if not all(0 < s <= min(_INT32_MAX, ELEMENT_LIMIT) for s in sizes):
        return False
    return not call.k or call.m * call.n * call.k <= FUSE_LIMIT[mode]


class Chain:
    """Consecutive planned steps run as one call of the C dispatcher."""

    def __init__(self, steps: list, loaded, needed_after: set[str]):
        lib = c_kernels.library()
        table = c_kernels.chain_entries()
        fixed = {n for n in loaded.constants if n not in loaded.inputs}    # initializers no feed replaces
        self.steps = tuple(steps)
        buffers: dict[str, np.ndarray] = {}
        self.inputs: list[str] = []          # the values read from outside, in first-read order
        self._in_buffers: list[np.ndarray] = []
        self._kept: list[np.ndarray] = []    # the constants' arrays the program points into
        program = (c_kernels.ChainStep * len(steps))()
        for step, cs in zip(steps, program):
            call = step.call
            pointers = []
            for pos in call.operands:
                name = step.inputs[pos]
                if name not in buffers:
                    if name in fixed:
                        value = np.ascontiguousarray(loaded.constants[name])
                        self._kept.append(value)
                    else:
                        value = np.empty(step.shapes[pos], step.result[1])
                        self.inputs.append(name)
                        self._in_buffers.append(value)
                    buffers[name] = value
                pointers.append(buffers[name].ctypes.data)
            out = buffers[step.output] = np.empty(*step.result)
            cs.entry = table[call.entry]
            cs.hasc, cs.ta, cs.tb, cs.m, cs.n, cs.k = call.hasc, call.ta, call.tb, call.m, call.n, call.k
            # alpha and beta are float32 values (the operator's checks): exact in either field
            cs.alpha_f32 = cs.alpha_f64 = call.alpha
            cs.beta_f32 = cs.beta_f64 = call.beta
            cs.a, cs.b, cs.c = pointers + [None] * (3 - len(pointers))   # a, b, c in operand order
            cs.y = out.ctypes.data
        produced = [s.output for s in steps]
        self.outputs = [n for n in produced if n in needed_after]
        self._out_buffers = [buffers[n] for n in self.outputs]
        self._buffers = buffers
        self._program = program
        self._address, self._count = ctypes.addressof(program), len(steps)
        self._run = lib.sonnx_chain_run
        self._lock = threading.Lock()
        inside = set(produced)
        self.last_uses = tuple(sorted({n for s in steps for n in s.last_uses} - inside))

    def describe(self) -> dict:
        return {"nodes": [s.node.name for s in self.steps], "entries": [s.call.entry for s in self.steps],
                "inputs": list(self.inputs), "outputs": list(self.outputs)}

    def __call__(self, *values: np.ndarray) -> list[np.ndarray]:
        """The chain's outputs (fresh arrays) for its inputs' values (of the planned element type
        and shape, in either byte order: anything else is refused by copyto, never cast)."""
        with self._lock:
            for buffer, value in zip(self._in_buffers, values):
                np.copyto(buffer, value, casting="equiv")     # byte order only: the same values
            done = self._run(self._address, self._count)
            if done != self._count:        # an entry index the library does not know: a defect
                from .executor import RunError
                node = self.steps[done].node
                raise RunError(f"node {node.name!r} ({node.op_type}): the C chain does not know entry "
                               f"{self.steps[done].call.entry!r}")
            return [b.copy() for b in self._out_buffers]


def fuse(loaded, steps: list, mode: str) -> list:
    """``steps`` with each run of at least two consecutive fusable steps replaced by a Chain
    (the others as they are). Without the C kernels, the steps unchanged (the library is
    built only for a plan that has fusable steps)."""
    if sum(fusable(s, mode) for s in steps) < 2:
        return list(steps)
    try:
        c_kernels.library()
    except c_kernels.CKernelsUnavailable:
        return list(steps)
    groups: list[tuple[bool, list]] = []
    for step in steps:
        ok = fusable(step, mode)
        if ok and groups and groups[-1][0]:
            groups[-1][1].append(step)
        else:
            groups.append((ok, [step]))
    graph_outputs = {o.name for o in loaded.model.graph.output}
    units = []
    for i, (ok, group) in enumerate(groups):
        if not ok or len(group) < 2:
            units.extend(group)
            continue
        later = {n for _, g in groups[i + 1:] for s in g for n in s.inputs}
        units.append(Chain(group, loaded, later | graph_outputs))
    return units
