"""Run a conformant model node by node with sonnx's own kernels.

The model is judged by sonnx's validator first (in process); only a model it calls conformant
runs, so every node is a profile operator whose inputs have their declared static types and
every kernel call is accepted (a conformant model never needs a broadcast or a cast). Nodes run
in the order the graph lists them (ONNX requires a topological order; the checker enforces it),
initializers are constants, and a graph input with an initializer of the same name takes the
caller's value when one is given (the initializer is its default) from IR 4 on; before IR 4 every
initializer is listed as an input and is a constant, as onnxruntime reads it.
"""
from __future__ import annotations

import inspect
import os
import time
from dataclasses import dataclass, replace
from functools import lru_cache
from operator import itemgetter
from typing import Callable

import numpy as np

from .. import dtypes, fpenv
from ..ops.registry import operator, operators

MODES = ("exact", "fast")
# "default": the numpy/llvmlite kernels; "proved": only C kernels extracted from proofs (proved.py)
ENGINES = ("default", "proved")
# The ONNX attributes that reach a kernel, as the kernel's keyword, are each record's
# ``kernel_attributes``. The validator admits no other attribute that changes a result (a
# legacy broadcast attribute only as 0, with an axis that then means nothing).


class RunError(Exception):
    """The model cannot be run: unreadable, or (``findings`` set) not conformant."""

    def __init__(self, message: str, findings: list | None = None):
        super().__init__(message)
        self.findings = findings or []


@dataclass(frozen=True)
class InputSpec:
    name: str
    dtype: str                   # ONNX type name, e.g. "float"
    shape: tuple[int, ...]
    has_default: bool            # an initializer of the same name gives it a value

    def __str__(self) -> str:
        return f"{self.name} ({self.dtype}, shape {self.shape})"


@dataclass
class Loaded:
    model: object                # onnx.ModelProto, validated
    opset: int                   # the default-domain opset
    inputs: dict[str, InputSpec]
    constants: dict[str, np.ndarray]


@lru_cache(maxsize=None)
def _takes_mode(op_type: str) -> bool:
    return "mode" in inspect.signature(operator(op_type).kernel).parameters


@lru_cache(maxsize=None)
def _binds_fixed(op_type: str) -> bool:
    """The operator's ``bind`` takes ``fixed``: the positions of operands that are the graph's
    constants, passed as their real arrays so that it can prepare them once (Gemm packs B)."""
    bind = operator(op_type).bind
    return bind is not None and "fixed" in inspect.signature(bind).parameters


def run_node(op_type: str, args: list[np.ndarray], attrs: dict, *, mode: str, opset: int | None = None) -> np.ndarray:
    """One node: the registry's kernel of ``op_type`` on ``args``, with the node's attributes
    (ONNX names) and the model's opset; ``mode`` goes to the kernels that have one (the matrix
    operators').
    Shared by the executor and the onnx.reference operators of sonnx.onnx_reference."""
    op = operator(op_type)
    names = op.kernel_attributes
    kwargs = {names[k]: v for k, v in attrs.items() if k in names}
    args, constants = _split_constants(op, list(args), args)
    kwargs.update(constants)
    if _takes_mode(op_type):
        kwargs["mode"] = mode
    if opset is not None:
        kwargs["opset"] = opset
    return op.kernel(*args, **kwargs)


def _split_constants(op, items: list, values: list) -> tuple[list, dict]:
    """``items`` (a node's operands, in input order) without its constant inputs
    (Operator.constant_inputs), and those inputs' ``values`` (the initializers' arrays) as the
    kernel's keywords: the plan then checks the node with the real values, not placeholders.
    The validator has checked that each is a constant."""
    if not op.constant_inputs:
        return items, {}
    kept, keywords = [], {}
    for k, item in enumerate(items):
        formal = op.inputs[k] if k < len(op.inputs) else None
        if formal in op.constant_inputs and values[k] is not None:
            keywords[op.constant_inputs[formal]] = values[k]
        else:
            kept.append(item)
    return kept, keywords


def attributes(node) -> dict:
    from onnx import helper
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def load(model_or_path) -> Loaded:
    """Validate, then load the model with its weights. RunError when it cannot be read or does
    not conform (``findings``: the validator's, each with its requirement ID)."""
    import onnx
    from onnx import numpy_helper

    from ..validate.api import validate
    if isinstance(model_or_path, (str, os.PathLike)) and os.fsdecode(model_or_path).lower().endswith(".xml"):
        raise RunError(f"{os.fsdecode(model_or_path)}: sonnx run executes ONNX models; an OpenVINO IR is "
                       "validated only (run the ONNX model it was converted from)")
    report = validate(model_or_path)
    if report.error is not None:
        raise RunError(report.error)
    if not report.conforms:
        raise RunError(f"{report.source}: the model does not conform to the SONNX profile "
                       f"({len(report.findings)} finding(s)); sonnx run executes conformant models only "
                       "(see sonnx validate)", report.findings)
    if isinstance(model_or_path, onnx.ModelProto):
        model = model_or_path
    else:
        try:
            model = onnx.load(os.fspath(model_or_path))      # with external weights, if any
        except Exception as exc:    # validated, so only the weights can be missing or unreadable
            raise RunError(f"{report.source}: cannot load its weights: {exc}") from None
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    constants = {}
    for t in model.graph.initializer:
        value = numpy_helper.to_array(t)
        expected = dtypes.numpy_dtype(dtypes.name_of_tensor_proto(t.data_type))
        if value.dtype != expected:   # onnx gives bfloat16 as ml_dtypes' type; anything else is a defect
            value = value.view(expected)
        constants[t.name] = value
    inputs = {}
    for vi in model.graph.input:
        if model.ir_version < 4 and vi.name in constants:
            # before IR 4 every initializer is listed as an input too; onnxruntime treats them
            # as constants and refuses a feed ("Invalid input name"): so does sonnx run
            continue
        tt = vi.type.tensor_type
        inputs[vi.name] = InputSpec(vi.name, dtypes.name_of_tensor_proto(tt.elem_type),
                                    tuple(d.dim_value for d in tt.shape.dim), vi.name in constants)
    return Loaded(model, opset, inputs, constants)


Progress = Callable[[int, int, object, float], None]     # (index, count, node, seconds so far)


@dataclass(frozen=True)
class Step:
    """One node, planned: its kernel bound to the node's attributes, mode and opset and checked
    once for the node's operand signatures (Operator.bind), and where its operands come from."""
    node: object                 # the onnx NodeProto (for messages and progress)
    kernel: Callable             # a function of the operand arrays alone
    inputs: tuple[str, ...]
    output: str
    # the intermediate values read for the last time by this node: dropped after it (unless every
    # value is kept), so that a run holds only the live ones and its memory stays in cache
    last_uses: tuple[str, ...] = ()
    proof: object = None         # under the proved engine: its proved.Coverage (entry, proofs)
    # the node as one call of a proved C entry point (registry.CCall, from its record's
    # CBinding.call), which a fused chain may run (run/chain.py); None: none computes it
    call: object = None
    shapes: tuple = ()           # the operands' shapes
    result: tuple = ()           # the result's (shape, element type)


def _result_signature(op_type: str, args: list[np.ndarray], kwargs: dict) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and element type of a node's result, from its operands (already accepted by
    the operator's checks): the shape by the record's ``output_shape``, always the operands'
    element type. An operator whose record has no rule is refused (a new operator must say
    its result's shape)."""
    rule = operator(op_type).output_shape if op_type in operators() else None
    if rule is None:
        raise NotImplementedError(f"sonnx.run.executor has no result-shape rule for {op_type}")
    return tuple(rule([a.shape for a in args], kwargs)), args[0].dtype


def _placeholder(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return np.broadcast_to(np.zeros((), dtype), shape)


def plan(loaded: Loaded, mode: str, engine: str = "default") -> list[Step]:
    """Every node's Step, in graph order. The kernels' checks run here once, on placeholders of
    the operands' shapes and types (one element broadcast to the shape: the checks read only
    the signature, and no memory is taken); a conformant model never fails them (RunError
    names the node if one does). ``engine="proved"`` binds every node to the C kernel extracted
    from its proof (proved.py) and refuses, with RunError naming the node, a node none covers;
    it runs exact mode only."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; use 'exact' or 'fast'")
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; use 'default' or 'proved'")
    if engine == "proved" and mode != "exact":
        raise ValueError("the proved engine runs exact mode only (the proofs are of the exact results)")
    like = {name: _placeholder(a.shape, a.dtype) for name, a in loaded.constants.items()}
    like.update({s.name: _placeholder(s.shape, dtypes.numpy_dtype(s.dtype)) for s in loaded.inputs.values()})
    steps, refused = [], []
    for i, node in enumerate(loaded.model.graph.node):
        op = operator(node.op_type)
        names = op.kernel_attributes
        kwargs = {names[k]: v for k, v in attributes(node).items() if k in names}
        if _takes_mode(node.op_type):
            kwargs["mode"] = mode
        inputs, constants = _split_constants(op, list(node.input), [loaded.constants.get(n) for n in node.input])
        inputs = tuple(name for name in inputs if name)
        kwargs.update(constants)
        args = [like[name] for name in inputs]
        bind_args, bind_kwargs = args, {}
        if engine == "default" and _binds_fixed(node.op_type):
            # a graph constant (an initializer that no feed can replace) is the same array on
            # every run: the kernel gets it now, to prepare it once (not for the proved engine,
            # whose C kernels replace the bound ones)
            fixed = tuple(k for k, name in enumerate(inputs)
                          if name in loaded.constants and name not in loaded.inputs)
            bind_args = [loaded.constants[name] if k in fixed else a for k, (name, a) in enumerate(zip(inputs, args))]
            bind_kwargs = {"fixed": fixed}
        cov = None
        try:
            kernel = op.bind(*bind_args, **kwargs, **bind_kwargs, opset=loaded.opset)
            shape, dtype = _result_signature(node.op_type, args, kwargs)
        except Exception as exc:   # a conformant model's node never fails: say which one did
            raise RunError(f"node {i} {node.name!r} ({node.op_type}) failed: {type(exc).__name__}: {exc}") from exc
        if engine == "proved":
            from . import proved
            try:
                kernel, cov = proved.kernel(op, args[0].dtype, kwargs, loaded.opset)
            except proved.NotProved as exc:
                refused.append(f"node {i} {node.name!r} ({node.op_type}): {exc}")
        like[node.output[0]] = _placeholder(shape, dtype)
        binding = op.c_binding
        call = None
        if binding is not None and binding.call is not None:
            call = binding.call([a.shape for a in args], args[0].dtype, kwargs)
        steps.append(Step(node, kernel, inputs, node.output[0], proof=cov, call=call,
                          shapes=tuple(a.shape for a in args), result=(shape, dtype)))
    if refused:
        raise RunError("the proved engine runs only kernels extracted from proofs, and none covers "
                       + ("these nodes" if len(refused) > 1 else "this node") + ":\n  "
                       + "\n  ".join(refused) + "\nrun with the default engine (no --engine "
                       "proved) for this model, or see docs/run.md, \"The proved engine\"")
    return _with_last_uses(steps, {o.name for o in loaded.model.graph.output})


def _with_last_uses(steps: list[Step], outputs: set[str]) -> list[Step]:
    """``steps`` with each one's ``last_uses``: the values computed by a node (not the constants,
    feeds or graph outputs) that no later node reads."""
    computed = {step.output for step in steps} - outputs
    seen: set[str] = set()
    planned = []
    for step in reversed(steps):
        last = tuple(sorted({n for n in step.inputs if n in computed and n not in seen}))
        seen.update(step.inputs)
        planned.append(replace(step, last_uses=last))
    return planned[::-1]


@fpenv.guarded     # once per graph: every node's kernel then runs in the proofs' environment
def execute(loaded: Loaded, steps: list[Step], feeds: dict[str, np.ndarray],
            progress: Progress | None = None, keep_all: bool = False) -> dict[str, np.ndarray]:
    """The graph's outputs (every value with ``keep_all``) for ``feeds`` (checked by the caller:
    run.io.check_feeds), through the planned ``steps``. ``progress`` is called before each node."""
    # IEEE overflow and NaN are the defined results, never warnings: set once for the graph
    # (bound kernels rely on it instead of entering numpy's errstate at every node)
    with np.errstate(all="ignore"):
        return _execute(loaded, steps, feeds, progress, keep_all)


def _execute(loaded: Loaded, steps: list[Step], feeds: dict[str, np.ndarray],
             progress: Progress | None, keep_all: bool) -> dict[str, np.ndarray]:
    values = dict(loaded.constants)
    values.update(feeds)
    t0 = time.perf_counter()
    count = len(steps)
    for i, step in enumerate(steps):
        if progress is not None:
            progress(i, count, step.node, time.perf_counter() - t0)
        try:
            values[step.output] = step.kernel(*[values[name] for name in step.inputs])
        except Exception as exc:   # a conformant model's node never fails: say which one did
            node = step.node
            raise RunError(f"node {i} {node.name!r} ({node.op_type}) failed: {type(exc).__name__}: {exc}") from exc
        if not keep_all:
            for name in step.last_uses:
                del values[name]
    if keep_all:
        return values
    return {o.name: values[o.name] for o in loaded.model.graph.output}


class Program:
    """The planned steps compiled for repeated runs (Session.run): every value gets a slot of a
    list, the constants are placed once, each step reads its operands by slot and frees the
    slots of values it reads last. The same kernels, in the same order, on the same operands as
    ``execute``; only the bookkeeping between them is done at planning time. With ``fuse`` (the
    mode), runs of consecutive nodes that are each one proved C entry point become one fused
    call (run/chain.py: the same bits, one foreign call)."""

    def __init__(self, loaded: Loaded, steps: list[Step], fuse: str | None = None):
        from . import chain
        units = chain.fuse(loaded, steps, fuse) if fuse is not None else list(steps)
        slots: dict[str, int] = {}

        def slot(name: str) -> int:
            return slots.setdefault(name, len(slots))
        template_items = [(slot(name), value) for name, value in loaded.constants.items()]
        self.feed_slots = {name: slot(name) for name in loaded.inputs}
        program = []
        for unit in units:
            fused = isinstance(unit, chain.Chain)
            ins = tuple(slot(name) for name in unit.inputs)
            get = ins[0] if len(ins) == 1 else (itemgetter(*ins) if ins else (lambda values: ()))
            out = tuple(slot(n) for n in unit.outputs) if fused else slot(unit.output)
            program.append((unit if fused else unit.kernel, get, len(ins) == 1, out, fused,
                            tuple(slots[name] for name in unit.last_uses)))
        self.template = [None] * len(slots)
        for k, value in template_items:
            self.template[k] = value
        self.program = tuple(program)
        self.steps = steps
        self.units = units
        self.chains = [u for u in units if isinstance(u, chain.Chain)]
        # every node in C chains: no numpy kernel runs, and each chain sets the floating-point
        # environment itself (so no guard nor errstate around the run)
        self.only_chains = bool(units) and len(self.chains) == len(units)
        self.output_slots = {o.name: slots[o.name] for o in loaded.model.graph.output}
        # the whole graph one chain reading only graph inputs and giving every graph output: run
        # it directly (about 2 us of slot bookkeeping less at batch 1)
        self._direct = None
        if len(units) == 1 and self.only_chains and set(units[0].inputs) <= set(self.feed_slots) \
                and set(self.output_slots) <= set(units[0].outputs):
            whole = units[0]
            self._direct = (whole, [(n, self.template[self.feed_slots[n]]) for n in whole.inputs],
                            {slots[n]: k for k, n in enumerate(whole.outputs)})

    def run(self, feeds: dict[str, np.ndarray], output_slots: list[int],
            progress: Progress | None = None) -> list[np.ndarray]:
        """The values of ``output_slots`` for ``feeds`` (checked by the caller); ``progress`` is
        called before each node (a chain's nodes all before its one call)."""
        if progress is None and self._direct is not None:
            whole, reads, position = self._direct
            # a graph input not fed takes its initializer (its default), as in the slot program
            results = whole(*[feeds.get(name, default) for name, default in reads])
            return [results[position[k]] for k in output_slots]
        if self.only_chains and progress is None:
            return self._run(feeds, output_slots, None)
        return self._guarded(feeds, output_slots, progress)

    @fpenv.guarded     # once per run, as execute
    def _guarded(self, feeds: dict[str, np.ndarray], output_slots: list[int], progress) -> list[np.ndarray]:
        with np.errstate(all="ignore"):     # as execute
            return self._run(feeds, output_slots, progress)

    def _run(self, feeds: dict[str, np.ndarray], output_slots: list[int], progress) -> list[np.ndarray]:
        values = self.template.copy()
        feed_slots = self.feed_slots
        for name, value in feeds.items():
            values[feed_slots[name]] = value
        i = 0
        t0 = time.perf_counter()
        try:
            for kernel, get, single, out, fused, free in self.program:
                if progress is not None:       # a chain's nodes all start with its one call
                    for step in (self.units[i].steps if fused else (self.units[i],)):
                        progress(self.steps.index(step), len(self.steps), step.node, time.perf_counter() - t0)
                result = kernel(values[get]) if single else kernel(*get(values))
                if fused:
                    for k, v in zip(out, result):
                        values[k] = v
                else:
                    values[out] = result
                for k in free:
                    values[k] = None
                i += 1
        except RunError:
            raise
        except Exception as exc:   # a conformant model's node never fails: say which one did
            unit = self.units[i]
            if isinstance(unit, Step):
                node = unit.node
                where = f"node {self.steps.index(unit)} {node.name!r} ({node.op_type})"
            else:
                where = "the fused nodes " + ", ".join(f"{s.node.name!r} ({s.node.op_type})" for s in unit.steps)
            raise RunError(f"{where} failed: {type(exc).__name__}: {exc}") from exc
        return [values[k] for k in output_slots]


def run_graph(loaded: Loaded, feeds: dict[str, np.ndarray], mode: str = "exact",
              progress: Progress | None = None, keep_all: bool = False) -> dict[str, np.ndarray]:
    """Plan and execute once (a Session keeps the plan for many runs)."""
    return execute(loaded, plan(loaded, mode), feeds, progress, keep_all)
