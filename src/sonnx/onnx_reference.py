"""sonnx's kernels as onnx.reference operators:

    from onnx.reference import ReferenceEvaluator
    import sonnx.onnx_reference
    ReferenceEvaluator(model, new_ops=sonnx.onnx_reference.new_ops()).run(None, feeds)

``new_ops(mode)`` returns one OpRun subclass per profile operator (the registry's), in the
default domain and named after the op type, which is how onnx.reference picks a
replacement for its own implementation. Each calls ``sonnx.run.executor.run_node``, the code
``sonnx run`` uses, with the evaluator's default-domain opset; so the evaluator gives sonnx run's
bits. It does not validate the model: a node the profile refuses (a broadcast, say) raises
sonnx.ProfileViolation from its kernel.
"""
from __future__ import annotations


def new_ops(mode: str = "exact") -> list[type]:
    """OpRun subclasses running sonnx's kernels in ``mode`` ("exact" or "fast")."""
    from onnx.reference.op_run import OpRun

    from .ops.registry import operators
    from .run.executor import MODES, run_node
    if mode not in MODES:
        raise ValueError(f"sonnx.onnx_reference.new_ops: unknown mode {mode!r}; use 'exact' or 'fast'")

    def make(op_type: str) -> type:
        def _run(self, *args, **attrs):
            opset = self.run_params.get("opsets", {}).get("", None)
            kw = {} if opset is None else {"opset": opset}
            return (run_node(op_type, [a for a in args if a is not None], attrs, mode=mode, **kw),)
        return type(op_type, (OpRun,), {"op_domain": "", "_run": _run, "__module__": __name__,
                                        "__doc__": f"ONNX {op_type} by sonnx's kernel ({mode} mode)"})
    return [make(name) for name in operators()]
