"""Batch broadcasting not refused: MatMul's constraint never sees a batch ONNX would broadcast,
so MATMUL-R4 is dropped (A (2, 2, 3) with B (3, 2) is refused for its rank only)."""


def _broadcasts(a, b):
    return False                         # MUTANT: should compare the batch dimensions


PATCHES = {"sonnx.ops.matmul:_broadcasts": _broadcasts}
