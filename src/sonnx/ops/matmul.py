"""ONNX MatMul under the SONNX profile: Gemm with alpha = 1, no C and no transposes.

``constraints`` is the only place where MATMUL-R1..R4 are decided (rank-2 operands, dense, one
type of the version's set, no broadcasting); the kernels and the model validator call it. The
result (MATMUL-R5) is Gemm's: ``matmul_reference`` calls ``gemm_reference`` and ``matmul`` calls
``gemm`` (its compiled exact fold or its BLAS path), both with the arguments of
``gemm_arguments()``; nothing of Gemm's arithmetic is copied here.
Spec: spec/matmul.md. Proofs: proofs/matmul.mlw (MatMul as lemmas over proofs/gemm.mlw).
Tests: tests/ops/test_matmul.py.
"""
from __future__ import annotations

from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import Violation, raise_if_any
from ..semantics.tensor import TensorValue, size
from . import gemm, kernel, symdims
from .openvino_ir import IRLayer, product_rule_inputs, product_shape
from .registry import CBinding, ConformRule, NodeEdit, Operator
from .signature import TensorSig, dense_and_typed, tensor_shape_violations

OP = "MatMul"
LATEST = 13
# since_version -> element types, from the onnx schemas (tests/test_dtypes.py compares them);
# MatMul's sets grow as Gemm's do (1, 9, 13), so they are written with the same groups
TYPE_SETS = {
    1: dtypes.IEEE_FLOATS,
    9: dtypes.IEEE_FLOATS | dtypes.WIDE_INTS,
    13: dtypes.IEEE_FLOATS | dtypes.WIDE_INTS | {"bfloat16"},
}


# MATMUL-R5: Y = MatMul(A, B) is Y = Gemm(A, B; alpha = 1, no C, transA = transB = 0)
# (proofs/matmul.mlw); both kernels look it up on every call (a CrossHair mutant bends it)
def gemm_arguments() -> dict:
    """The arguments of gemm / gemm_reference that make Gemm compute MatMul (C is left out)."""
    return {"alpha": 1.0, "beta": 1.0, "trans_a": False, "trans_b": False}


def _batch(shape: tuple) -> tuple:
    """The dimensions ONNX would broadcast: all but the last two (a rank-1 operand, promoted to
    a matrix, has none)."""
    return tuple(shape[:-2])


def _rank_violation(what: str, shape: tuple) -> Violation | None:
    rank = len(shape)
    if rank == 2:
        return None
    if rank == 0:
        advice = "MatMul is not defined on scalars; multiply with Mul (same shapes) instead"
    elif rank == 1:
        # ONNX (as numpy.matmul) promotes a vector to a matrix and removes the added dimension
        # from the result: the output's rank then differs from what a rank-2 product gives
        fix = f"(1, {shape[0]})" if what == "A" else f"({shape[0]}, 1)"
        advice = (f"ONNX would promote it to a matrix {fix} and drop that dimension from the result; "
                  f"the profile does no promotion: `sonnx conform` writes the promotion out (the operand "
                  f"stored as, or reshaped to, the matrix {fix}, the result reshaped back to the original "
                  "output shape; no bit changes, the other operand rank 2 and the shapes static)")
    elif what == "A":
        advice = ("batched MatMul is outside the profile: when B is one matrix, give A its batch "
                  "dimensions folded into its rows, (batch * M, K), as the model's input (a Reshape "
                  "node is not in the profile either); otherwise use one rank-2 MatMul per matrix "
                  "of the batch")
    else:
        advice = "batched MatMul is outside the profile: use one rank-2 MatMul per matrix of the batch"
    return Violation("MATMUL-R1", f"MatMul input {what} has rank {rank} (shape {tuple(shape)}); the profile "
                                  f"accepts only rank-2 operands A (M, K) and B (K, N): {advice}")


def _broadcasts(a: tuple, b: tuple) -> bool:
    """True when ONNX would broadcast the batch dimensions of A and B (numpy.matmul's rule): they
    differ in number, or no value of their symbolic dimensions makes them equal (symdims: static
    sizes that differ, or ("s", "s") against (2, 3)); an unknown size may equal anything."""
    ba, bb = _batch(a), _batch(b)
    if len(ba) != len(bb):
        return True
    terms = symdims.Dims()
    return not symdims.solvable(zip(terms.shape(ba), terms.shape(bb)))


def constraints(a: TensorSig, b: TensorSig, *, opset: int = LATEST) -> list[Violation]:
    """Every profile violation of a MatMul node with inputs ``a`` and ``b`` under ``opset``."""
    version, refused = kernel.version_in_force(OP, opset, "MATMUL-R3")
    if version is None:
        return refused
    # MATMUL-R2 (dense) and MATMUL-R3 (one element type of the version's type set)
    found = dense_and_typed(OP, version, [("A", a), ("B", b)], dense_rule="MATMUL-R2",
                            type_rule="MATMUL-R3", hint=lambda elem: gemm._type_hint(elem, OP))
    known = [(what, t) for what, t in (("A", a), ("B", b)) if not t.sparse and t.shape is not None]
    # MATMUL-R1: both operands are matrices (no 1-D promotion, no batch)
    found.extend(v for what, t in known if (v := _rank_violation(what, tuple(t.shape))) is not None)
    if len(known) < 2:
        return found
    sa, sb = tuple(a.shape), tuple(b.shape)
    # MATMUL-R4: nothing broadcast (comes with R1: only operands of rank other than 2 have batches)
    if len(sa) and len(sb) and _broadcasts(sa, sb):
        found.append(Violation("MATMUL-R4", f"MatMul inputs A {sa} and B {sb} have batch dimensions "
                                            f"{_batch(sa)} and {_batch(sb)}, which ONNX would broadcast "
                                            "(one operand reused for several products); the profile never "
                                            "broadcasts: write each product as a MatMul of two matrices"))
    # MATMUL-R1: the inner dimensions of two matrices agree (reported when both are static:
    # a symbolic one may take the other's value)
    if len(sa) == 2 and len(sb) == 2 and _static_pair(sa[1], sb[0]) and sa[1] != sb[0]:
        found.append(Violation("MATMUL-R1", f"MatMul inner dimensions disagree: A is {sa[0]} x {sa[1]} and "
                                            f"B is {sb[0]} x {sb[1]}; the columns of A must equal the rows "
                                            "of B (transpose an operand's initializer, or use Gemm with "
                                            "transA/transB)"))
    return found


def _static_pair(x: object, y: object) -> bool:
    return symdims.is_static(x) and symdims.is_static(y)


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """``constraints`` of a node: its input signatures as the validator reads them (MatMul has no
    attributes)."""
    a, b = sigs[0], sigs[1]
    return constraints(a, b, opset=opset)


# ---------------------------------------------------------------- reference kernel
def _sig(t: TensorValue) -> TensorSig:
    return TensorSig(t.shape, t.dtype)


def _violations(a: TensorValue, b: TensorValue) -> list[Violation]:
    return (tensor_shape_violations(OP, [("A", _sig(a)), ("B", _sig(b))])
            + constraints(_sig(a), _sig(b)))


_well_formed = kernel.well_formed


def _product_ok(a: TensorValue, b: TensorValue, result: TensorValue) -> bool:
    """MATMUL-R5, stated independently of the loop: Gemm's exact-mode statement (the fold in
    numpy's IEEE scalars, integers by congruence) with alpha = 1, no C, no transposes."""
    return gemm._exact_mode_ok(a, b, None, 1.0, 1.0, False, False, result)


# MATMUL-R1, MATMUL-R3, MATMUL-R4: refused inputs raise ProfileViolation (from constraints);
# well-formed operands and the postconditions are checked on every call (kernel.reference_contracts)
@kernel.reference_contracts(
    _violations, "MATMUL-R1, MATMUL-R3, MATMUL-R4", ("a", "b"),
    [lambda a, b, result:                                                                          # MATMUL-R1
     result.dtype == a.dtype and result.shape == (a.shape[0], b.shape[1])
     and len(result.data) == size(result.shape),
     lambda result: _well_formed(result),                                                          # MATMUL-R3
     lambda a, b, result: _product_ok(a, b, result)],                                              # MATMUL-R5
    always=True)
def matmul_reference(a: TensorValue, b: TensorValue) -> TensorValue:
    """MatMul's own checks, then gemm_reference (the triple loop of proofs/gemm.mlw) with the
    arguments of ``gemm_arguments()``: s = 0; s = s + A[i, l] * B[l, j] for l ascending;
    Y[i, j] = round_T(s)."""
    raise_if_any(_violations(a, b))
    return gemm.gemm_reference(a, b, None, **gemm_arguments())


# ---------------------------------------------------------------- numpy kernel
_ACCEPTED = kernel.AcceptedCalls()


def check(a: object, b: object, mode: object = "exact", opset: object = LATEST) -> bool:
    """Every check of ``matmul``'s arguments, without computing: TypeError, ValueError (mode) or
    ProfileViolation; True when the call is accepted."""
    gemm.check_mode(mode, "matmul")
    version, sigs = kernel.arguments("matmul", opset, [("A", a), ("B", b)])
    kernel.refuse(OP, sigs, constraints(sigs[0][1], sigs[1][1], opset=version))
    return True



# req: MATMUL-R1, MATMUL-R5
@kernel.entry
def matmul(a: np.ndarray, b: np.ndarray, *, opset: int = LATEST, mode: str = "exact") -> np.ndarray:
    """Y = A * B (ONNX MatMul) for A (M, K) and B (K, N) under the SONNX profile.

    It is Gemm with alpha = 1, no C and no transposes, and runs on Gemm's kernels:
    ``mode="exact"`` (default) gives the profile's reference result bit for bit (ascending
    accumulation, every operation rounded in the accumulation type, no FMA, one final rounding
    to T; integers wrap); ``mode="fast"`` uses BLAS (numpy.matmul) within Gemm's error bound
    (spec/gemm.md with alpha = 1 and no C), not bit-exact (for integer T it equals the exact
    result).

    Raises ``sonnx.ProfileViolation`` (a ValueError naming the requirement) for anything the
    profile refuses: operands of rank other than 2 (1-D promotion, batches), batch dimensions
    ONNX would broadcast, disagreeing inner dimensions, mixed or non-MatMul element types,
    sparse inputs, empty or oversized tensors, an opset outside 1..28 (PROF-R3). Raises
    TypeError for non-array inputs, a non-integer opset or a non-str mode, and ValueError for
    an unknown mode.
    """
    kernel.checked(_ACCEPTED, check, a, b, mode, opset)
    # Gemm's kernel itself (its memo makes its own checks a look-up): MatMul's rules above imply
    # Gemm-13's for these arguments (rank-2 A (M, K), B (K, N), a type of Gemm-13's set, no C,
    # alpha = beta = 1), so it never refuses what MatMul accepted
    return gemm.gemm(a, b, None, mode=mode, opset=gemm.LATEST, **gemm_arguments())


# req: MATMUL-R1, MATMUL-R5
def bind(a: np.ndarray, b: np.ndarray, *, opset: int = LATEST, mode: str = "exact",
         fixed: tuple[int, ...] = ()):
    """``matmul`` checked once now for arrays like ``a`` and ``b``: Gemm's bound kernel (see
    gemm.bind; ``fixed`` as there: B at position 1 is Gemm's B), after MatMul's own checks (the
    same refusals as ``matmul``)."""
    check(a, b, mode, opset)
    return gemm.bind(a, b, None, mode=mode, opset=gemm.LATEST, fixed=tuple(k for k in fixed if k == 1),
                     **gemm_arguments())



def result_shape(shapes, keywords) -> tuple[int, int]:
    """(M, N) from A (M, K) and B (K, N) (MATMUL-R1)."""
    return (shapes[0][0], shapes[1][1])


# req: MATMUL-R1
def matmul_c(a: np.ndarray, b: np.ndarray, *, opset: int = LATEST) -> np.ndarray:
    """ONNX MatMul under the SONNX profile (rank 2), computed by the C Gemm kernel: MatMul is
    Gemm with alpha = 1, no C and no transposes (proofs/matmul.mlw proves it refines Gemm;
    proofs/gemm_c.mlw proves the C computes Gemm's exact mode). The same checks and refusals as
    ``sonnx.matmul``; the same bits as its exact mode (integers: wrapped, on Gemm's unsigned
    kernels)."""
    check(a, b, "exact", opset)
    return gemm.gemm_c(a, b, None, **gemm_arguments())


# no C source of its own: it runs Gemm's entry points
def c_call(shapes, dtype, keywords):
    """``CBinding.call``: Gemm's, with the arguments that make Gemm compute MatMul."""
    return gemm.c_call(shapes, dtype, gemm_arguments())


C_BINDING = CBinding(source=None, proof=None, entries=(), wrapper=matmul_c, call=c_call,
                     via=("gemm", "proofs/matmul.mlw", ("MATMUL-R5",)))

# ---------------------------------------------------------------- conform: rank-1 operands
# req: MATMUL-R1
def explicit_rank1(node, shapes, value, opset: int, fresh):
    """conform's rewrite of a MatMul with a rank-1 operand (ConformRule.node_rewrite): ONNX
    promotes A (K,) to (1, K) and B (K,) to (K, 1), multiplies, and removes the added dimension
    from the result. Written out: a constant rank-1 operand is stored as that matrix, another is
    reshaped to it by a Reshape node before the MatMul, and the (M, N) product is reshaped to
    ONNX's output shape ((M,), (N,) or ()) by a Reshape node after it. The matrices and the fold
    are the ones ONNX's promotion gives (proofs/matmul.mlw's product, k ascending), so no bit of
    the output changes in the profile's semantics; conform's bit check runs the model both ways.
    Returns a NodeEdit, a str saying why not, or None when no operand has rank 1."""
    if len(node.input) != 2 or len(node.output) != 1:
        return None
    sa, sb = shapes.get(node.input[0]), shapes.get(node.input[1])
    if sa is None or sb is None or (len(sa) != 1 and len(sb) != 1):
        return None
    if len(sa) + len(sb) != 3:
        return ("conform writes out ONNX's promotion of a rank-1 operand only when the other operand "
                f"is a matrix (two vectors give a scalar, a tensor the profile's Reshape cannot name with a "
                f"non-empty shape); here A is {tuple(sa)} and B {tuple(sb)}")
    if opset < 5:
        return ("conform writes out the promotion of a rank-1 operand with Reshape-5 or later (a shape "
                "input onnx's shape inference reads): import opset 5 or later")
    if not all(isinstance(d, int) and d > 0 for d in (*sa, *sb)):
        return (f"conform writes out the promotion of a rank-1 operand with static shapes only (A {tuple(sa)}, "
                f"B {tuple(sb)}): pin the symbolic dimensions with --dim NAME=SIZE")
    a2 = (1, sa[0]) if len(sa) == 1 else tuple(sa)
    b2 = (sb[0], 1) if len(sb) == 1 else tuple(sb)
    if a2[1] != b2[0]:
        return None        # the inner dimensions disagree: onnx and MATMUL-R1 report it
    out = tuple(d for d, promoted in ((a2[0], len(sa) == 1), (b2[1], len(sb) == 1)) if not promoted)
    edit_inputs, inits, before, said = {}, [], [], []
    for pos, (shape, matrix, what) in enumerate(((sa, a2, "A"), (sb, b2, "B"))):
        if len(shape) != 1:
            continue
        name = node.input[pos]
        array = value(name)
        new = fresh(f"{name}_{matrix[0]}x{matrix[1]}")
        if array is not None:
            inits.append((new, array.reshape(matrix)))
            said.append(f"{what} '{name}' {tuple(shape)} stored as the matrix {matrix} '{new}'")
        else:
            before.append(_reshape_node(name, new, matrix, opset, fresh, inits))
            said.append(f"{what} '{name}' {tuple(shape)} reshaped to {matrix} by a Reshape node")
        edit_inputs[pos] = new
    y = node.output[0]
    product = fresh(f"{y}_{a2[0]}x{b2[1]}")
    after = [_reshape_node(product, y, out, opset, fresh, inits)]
    return NodeEdit(detail=f"MatMul's rank-1 promotion written out: {'; '.join(said)}; the {a2[0]} x {b2[1]} "
                           f"product reshaped to ONNX's output shape {out} (the same fold, no bit changed)",
                    initializers=tuple(inits), before=tuple(before), after=tuple(after),
                    inputs=edit_inputs, outputs={0: product})


def _reshape_node(src: str, dst: str, shape: tuple, opset: int, fresh, inits: list):
    """A Reshape node src -> dst to the static ``shape`` (no 0 or -1 entry) for ``opset`` (5 or
    later): the shape a new int64 initializer, allowzero=0 written from 14."""
    from onnx import helper
    target = fresh(f"{dst}_shape")
    inits.append((target, np.array(shape, dtype=np.int64)))
    extra = {"allowzero": 0} if opset >= 14 else {}
    return helper.make_node("Reshape", [src, target], [dst], **extra)


OPERATOR = Operator(
    name=OP, prefix="MATMUL", kind="matrix", type_sets=TYPE_SETS, inputs=("A", "B"), optional=(),
    attributes={}, constraints=node_constraints, reference=matmul_reference, kernel=matmul,
    bind=bind,
    spec="spec/matmul.md", proofs=("proofs/matmul.mlw",),
    openvino=(IRLayer("MatMul", 1, 2, product_shape, product_rule_inputs),),
    output_shape=result_shape, comparison=gemm.fast_bound_comparison, c_binding=C_BINDING,
    conform=ConformRule(rule="MATMUL-R1", node_rewrite=explicit_rank1))
