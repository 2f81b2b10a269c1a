"""What an operator's constraint function sees of a tensor: shape, element type, sparsity.

The kernels build it from numpy arrays, the validator from a graph's inferred types, and
both hand it to the same constraint function.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dtypes
from ..profile import Dim


@dataclass(frozen=True)
class TensorSig:
    shape: tuple[Dim, ...] | None      # None: rank unknown; a dim may be None or a symbol
    elem_type: str | None              # ONNX element type name; None: unknown
    sparse: bool = False


def _is_sparse(x: object) -> bool:
    module = type(x).__module__ or ""
    return module.startswith(("scipy.sparse", "sparse.")) or type(x).__name__ == "SparseTensorProto"


def sig_of_array(x: object, op: str, what: str) -> TensorSig:
    """Signature of a kernel argument; TypeError for anything that is not a dense array.

    Sparse objects are let through as sparse signatures so that the constraint function
    reports them under their requirement ID.
    """
    if _is_sparse(x):
        return TensorSig(shape=None, elem_type=None, sparse=True)
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"sonnx.{op}: {what} is a masked array; its mask would be ignored. "
                        f"Pass numpy.ma.getdata(x) or fill the masked values first")
    if not isinstance(x, np.ndarray):
        raise TypeError(f"sonnx.{op}: {what} must be a numpy.ndarray, got {type(x).__name__}; "
                        f"wrap it with numpy.asarray(x, dtype=...) choosing the element type explicitly")
    return TensorSig(shape=tuple(int(d) for d in x.shape), elem_type=dtypes.name_of(x.dtype))
