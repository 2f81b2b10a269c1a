"""``sonnx.run(model_or_path, inputs, mode="exact")``: execute a conformant model with sonnx's
kernels (executor.py); inputs and outputs as files (io.py, hexfloat.py); the comparison with
onnxruntime (comparison.py: ``sonnx.run.compare(model, inputs)``); the command line (cli.py).

Loaded on first use: ``import sonnx`` stays light (onnx and the validator load here)."""
from __future__ import annotations

import numpy as np

from .comparison import CompareError, compare
from .executor import RunError
from .io import InputError
from .session import Session

__all__ = ["CompareError", "InputError", "RunError", "Session", "compare", "run"]


def run(model_or_path, inputs: dict[str, np.ndarray], mode: str = "exact") -> dict[str, np.ndarray]:
    """The outputs (name -> array) of a conformant model for ``inputs`` (name -> array of the
    declared type and shape, never cast). ``mode``: "exact" (the profile's reference results, bit
    for bit) or "fast" (the matrix operators through BLAS, within their stated error bound).

    Raises RunError when the model cannot be read or does not conform (``.findings``: the
    validator's), InputError for inputs that do not match the model, ValueError for a bad mode.
    One call validates and plans the model each time: to run a model many times, make a
    ``sonnx.Session`` once and call its ``run``.
    """
    if mode not in ("exact", "fast"):
        raise ValueError(f"sonnx.run: unknown mode {mode!r}; use 'exact' or 'fast'")
    session = Session(model_or_path, mode)
    return dict(zip(session.output_names, session.run(None, inputs)))



# ``sonnx.run`` is the function above (sonnx/__init__.py); ``sonnx.run.compare`` works on it too
# (comparison.py imports onnxruntime only when compare is called)
run.compare = compare
