"""C broadcast not refused: Gemm's constraints drop GEMM-R4, so a C of shape (N,), (1, N),
(M, 1), (1, 1), (1,), () or any other size reaches the loop, which reads it as an (M, N) matrix
(past its end, or the wrong elements); the other checks are kept."""
from sonnx.ops import gemm

_shipped = gemm.constraints


def constraints(*args, **kw):
    return [v for v in _shipped(*args, **kw) if v.requirement != "GEMM-R4"]    # MUTANT: R4 dropped


PATCHES = {"sonnx.ops.gemm:constraints": constraints}
