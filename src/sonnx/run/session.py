"""``sonnx.Session(model, mode=...)``: validate and plan a model once, run it many times.

Like onnxruntime's InferenceSession: the constructor validates the model (a model that does not
conform is refused here, RunError with the validator's findings), loads its weights and plans
every node (executor.plan: each kernel's checks done once for the node's operand signatures,
attributes, mode and opset). ``run(output_names, feeds)`` then checks only the feeds, by the
very function ``sonnx run`` checks its input files with (io.check_feeds: names, element type,
shape, nothing cast or broadcast), and runs the planned kernels in the default floating-point
environment (executor.Program.run is fpenv.guarded, once per run): the plan's bookkeeping
(operand slots, constants placed, each constant weight prepared by its kernel's bind) is done
here once, so that a run costs the kernels and little else.
"""
from __future__ import annotations

import numpy as np

from . import executor
from .io import InputError, check_feeds


class Session:
    """A conformant model, validated and planned for ``mode`` ("exact" or "fast") on ``engine``
    ("default", or "proved": every node on a C kernel extracted from its proof, exact mode only;
    RunError names the nodes no proved kernel covers)."""

    def __init__(self, model_or_path, mode: str = "exact", engine: str = "default", fuse: bool = True):
        if mode not in executor.MODES:
            raise ValueError(f"sonnx.Session: unknown mode {mode!r}; use 'exact' or 'fast'")
        if engine not in executor.ENGINES:
            raise ValueError(f"sonnx.Session: unknown engine {engine!r}; use 'default' or 'proved'")
        if engine == "proved" and mode != "exact":
            raise ValueError("sonnx.Session: the proved engine runs exact mode only")
        self.mode, self.engine = mode, engine
        self.loaded = executor.load(model_or_path)
        self._steps = executor.plan(self.loaded, mode, engine)
        self.output_names = [o.name for o in self.loaded.model.graph.output]
        # fuse: runs of nodes that are each one proved C entry point run as one C call
        # (run/chain.py); fuse=False runs every node's kernel one by one (the same bits)
        self._program = executor.Program(self.loaded, self._steps, mode if fuse else None)
        self._all_slots = [self._program.output_slots[n] for n in self.output_names]

    def proofs(self) -> list[dict]:
        """Per node (graph order) under the proved engine: the C entry point that runs it, the
        proofs it is extracted from, its WhyML module and requirement IDs; [] otherwise."""
        return [{"node": s.node.name, "op_type": s.node.op_type, **s.proof.describe()}
                for s in self._steps if s.proof is not None]

    def chains(self) -> list[dict]:
        """The fused chains of the plan (run/chain.py), each one C call: its nodes (graph order),
        the entry point each runs, the values it reads from outside and those it gives back;
        [] when every node runs its own kernel."""
        return [c.describe() for c in self._program.chains]

    @property
    def inputs(self) -> dict[str, executor.InputSpec]:
        """The graph's inputs as declared: name -> InputSpec (type, shape, has a default)."""
        return self.loaded.inputs

    def run(self, output_names: list[str] | None, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        """The outputs named (all the graph's outputs, in graph order, for None) for ``feeds``
        (name -> array of the declared type and shape). InputError for feeds that do not
        match the model (the messages of ``sonnx run``) or an unknown output name."""
        if output_names is None:
            slots = self._all_slots
        else:
            wanted = list(output_names)
            unknown = [n for n in wanted if n not in self.output_names]
            if unknown:
                raise InputError(f"the model has no output {unknown[0]!r}; its outputs: {', '.join(self.output_names)}")
            slots = [self._program.output_slots[n] for n in wanted]
        return self._program.run(check_feeds(dict(feeds), self.loaded.inputs), slots)

    def evaluate(self, feeds: dict[str, np.ndarray], progress: executor.Progress | None = None,
                 keep_all: bool = False) -> dict[str, np.ndarray]:
        """name -> array of the graph's outputs (every value with ``keep_all``) for feeds already
        checked (io.check_feeds or io.read_inputs); ``progress`` is called before each node (a
        fused chain's nodes all before its one call). Without ``keep_all`` the planned program runs, fused
        chains included (the results of ``run``); with it, every node's own kernel (a chain
        gives back only the values read after it)."""
        if keep_all:
            return executor.execute(self.loaded, self._steps, feeds, progress, keep_all)
        return dict(zip(self.output_names, self._program.run(feeds, self._all_slots, progress)))
