"""RELU-R2 dropped for unsigned integers: Relu accepts uint8..uint64, which no Relu version has."""
from sonnx.ops import relu as _relu
from sonnx.ops.signature import TensorSig

_real = _relu.constraints


def constraints(x, *, opset, consumed_inputs=None):
    if x.elem_type in ("uint8", "uint16", "uint32", "uint64"):     # MUTANT: typed as int64
        x = TensorSig(x.shape, "int64", x.sparse)
    return _real(x, opset=opset, consumed_inputs=consumed_inputs)


PATCHES = {"sonnx.ops.relu:constraints": constraints}
