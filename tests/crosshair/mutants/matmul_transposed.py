"""A transpose slipped in: MatMul calls Gemm with transB = 1, so it multiplies A by B^T (a
square B is used transposed; any other B is refused by Gemm's R1 as if K disagreed)."""


def gemm_arguments():
    return {"alpha": 1.0, "beta": 1.0, "trans_a": False, "trans_b": True}   # MUTANT: trans_b


PATCHES = {"sonnx.ops.matmul:gemm_arguments": gemm_arguments}
