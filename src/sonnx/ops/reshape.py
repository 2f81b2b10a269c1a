"""ONNX Reshape under the SONNX profile: Y = X viewed with another shape (spec/reshape.md).

A structural operator: it moves elements and computes none. Y has the shape the ``shape``
operand gives once its 0 and -1 entries are resolved statically, and holds X's elements in the
same row-major order, every bit kept (NaN payloads, -0), so exact and fast modes give the same
bits. Checks: RESHAPE-R1 (the shape written and constant: the attribute of Reshape-1, a constant
1-D int64 initializer input from Reshape-5, never a graph input), RESHAPE-R2 (the shape resolves:
at most one -1, a 0 copies an existing dimension, allowzero, the sizes agree), RESHAPE-R3 (dense,
one element type of the version's type set, no cast). Requirements: src/sonnx/ops/reshape.toml.
Proof: proofs/reshape.mlw. Tests: tests/ops/test_reshape.py, tests/crosshair/reshape_cases.py.

Decisions (spec/reshape.md says why):
- allowzero (Reshape-14 on) may be omitted only where it decides nothing: when the shape holds no
  0, both readings give the same result; a shape holding a 0 with allowzero omitted is refused
  (GR4), the message stating the shape allowzero=0 would give;
- allowzero=1 with a 0 entry is refused: it makes a dimension of size 0 (an empty tensor, which
  the profile does not define), or, with a -1, is invalid in ONNX itself;
- Reshape-1's legacy consumed_inputs is refused; its shape attribute is read as Reshape-5's input;
- the numpy kernel returns a new C-contiguous array, never a view of its argument.
"""
from __future__ import annotations

import itertools

import icontract
from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from .. import dtypes
from ..errors import ProfileViolation, Violation, raise_if_any, wrong_type
from ..semantics.tensor import FULL_CONTRACTS, TensorValue, flat_index, size
from . import kernel
from .registry import ConformRule, Operator
from .signature import NotConstant, TensorSig, dense_and_typed, tensor_shape_violations

OP = "Reshape"
PREFIX = "RESHAPE"
LATEST = 25
_INTS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
_FROM_5 = dtypes.IEEE_FLOATS | _INTS
_FROM_13 = _FROM_5 | {"bfloat16"}
# since_version -> element types: onnx's schema of that version restricted to the profile's
# element types (dtypes.NUMERIC_TYPES); tests/ops/test_every_operator.py compares them with the schemas
TYPE_SETS = {1: dtypes.IEEE_FLOATS, 5: _FROM_5, 13: _FROM_13, 14: _FROM_13, 19: _FROM_13, 21: _FROM_13,
             23: _FROM_13, 24: _FROM_13, 25: _FROM_13}
SHAPE_INPUT_FROM = 5         # Reshape-1: the attribute shape; from 5: the input shape
ALLOWZERO_FROM = 14          # the attribute allowzero exists from Reshape-14
SHAPE_INPUT = "input:shape"  # the key under which the validator passes the shape input's value

KERNEL_ATTRIBUTES = {"shape": "shape", "allowzero": "allowzero"}   # Reshape-1's shape; allowzero
CONSTANT_INPUTS = {"shape": "shape"}                                # the input (from 5) -> keyword


# req: RESHAPE-R2
def resolve(in_shape: tuple[int, ...], shape: tuple[int, ...], allowzero: int = 0
            ) -> tuple[tuple[int, ...] | None, str]:
    """The output shape ONNX Reshape gives X's ``in_shape`` for the ``shape`` operand, and "" ;
    or None and why the profile refuses it. A 0 entry copies the input's dimension at the same
    index (allowzero=0); a -1 entry is the input's size divided by the product of the others."""
    n = size(in_shape)
    if any(s < -1 for s in shape):
        return None, f"entries below -1 ({[s for s in shape if s < -1]}); only -1 (inferred), 0 and positive sizes mean something"
    if shape.count(-1) > 1:
        return None, "more than one -1; at most one dimension can be inferred"
    if 0 in shape and allowzero == 1:
        if -1 in shape:
            return None, "allowzero=1 with both a 0 and a -1, which ONNX declares invalid"
        return None, ("allowzero=1 with a 0 entry, a dimension of size 0: an empty tensor, which the "
                      "profile does not define (allowzero=0 copies the input's dimension instead)")
    copied = []
    for i, s in enumerate(shape):
        if s == 0:
            if i >= len(in_shape):
                return None, (f"a 0 at index {i}, which copies the input's dimension {i}, but the input "
                              f"has rank {len(in_shape)}")
            s = in_shape[i]
        copied.append(s)
    if -1 in copied:
        rest = size(tuple(s for s in copied if s != -1))
        if rest == 0:
            return None, "a -1 beside a dimension of size 0: the inferred size is undetermined"
        if n % rest:
            return None, (f"a -1 that cannot be inferred: the input's {n} elements are not a multiple of "
                          f"the other dimensions' product {rest}")
        copied[copied.index(-1)] = n // rest
    out = tuple(copied)
    if size(out) != n:
        return None, f"it resolves to {out} of {size(out)} elements, but the input has {n} elements"
    return out, ""


# req: RESHAPE-R1, RESHAPE-R2, RESHAPE-R3
def constraints(x: TensorSig, *, opset: int, shape: object = None, shape_sig: TensorSig | None = None,
                allowzero: object = None, consumed_inputs: object = None,
                shape_attribute: object = None) -> list[Violation]:
    """Every violation of RESHAPE-R1..R3 of a Reshape node with input ``x`` under ``opset``.
    ``shape``: the shape in force (the attribute of Reshape-1, the input's constant value from 5;
    None when the node gives none; NotConstant when the input has no constant value);
    ``shape_sig``: the shape input's signature; ``allowzero``: the attribute (None: not written);
    ``consumed_inputs``: Reshape-1's legacy attribute; ``shape_attribute``: a shape attribute
    written on a Reshape-5 or later node (which has none)."""
    version, refused = kernel.version_in_force(OP, opset, "RESHAPE-R3")
    if version is None:
        return refused
    found = dense_and_typed(OP, version, [("'data'", x)], dense_rule="RESHAPE-R3", type_rule="RESHAPE-R3",
                            hint=_type_hint)
    if consumed_inputs is not None:
        found.append(kernel.legacy_attribute("RESHAPE-R1", f"{OP}-{version}", "consumed_inputs",
                                             "an in-place hint of Reshape-1", "remove it, or import opset 5 or later"))
    if version >= SHAPE_INPUT_FROM and shape_attribute is not None:
        found.append(Violation("RESHAPE-R1", f"{OP}-{version} has a shape attribute; from Reshape-5 the shape "
                                             "is the second input (a constant int64 initializer)"))
    found.extend(_shape_violations(x, version, shape, shape_sig, allowzero))
    return found


def _shape_violations(x: TensorSig, version: int, shape: object, shape_sig: TensorSig | None,
                      allowzero: object) -> list[Violation]:
    where = "attribute" if version < SHAPE_INPUT_FROM else "input (a constant int64 initializer)"
    if shape is None:
        return [Violation("RESHAPE-R1", f"{OP}-{version} gives no shape; write the shape {where}")]
    if isinstance(shape, NotConstant):
        return [Violation("RESHAPE-R1", f"{OP}-{version} input shape is {shape.why}; the shape must be a "
                                        "constant int64 initializer that is not a graph input, so that the "
                                        "output's shape is static; a Constant node feeding it: `sonnx conform` "
                                        "stores it as an initializer")]
    if version >= SHAPE_INPUT_FROM and shape_sig is not None:
        if shape_sig.elem_type != "int64" or shape_sig.shape is None or len(shape_sig.shape) != 1:
            return [Violation("RESHAPE-R1", f"{OP}-{version} input shape has type {shape_sig.elem_type} and "
                                            f"shape {shape_sig.shape}; it must be a 1-D int64 tensor")]
    if (not isinstance(shape, tuple)
            or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in shape)):
        return [Violation("RESHAPE-R1", f"{OP}-{version} has shape={shape!r}; the shape must be a list of integers")]
    if version < ALLOWZERO_FROM:
        # before Reshape-14 a 0 always copies; allowzero=0 states that reading (onnx.reference
        # passes its latest schema's default to every version), anything else is refused
        if allowzero is not None and (isinstance(allowzero, bool) or allowzero != 0):
            return [Violation("RESHAPE-R2", f"{OP}-{version} has allowzero={allowzero!r}, which only Reshape-14 "
                                            "and later read; before, a 0 always copies the input's dimension: "
                                            "import opset 14 or later, or remove it")]
        zero = 0
    elif allowzero is None:
        zero = None
    elif isinstance(allowzero, bool) or not isinstance(allowzero, (int, np.integer)) or allowzero not in (0, 1):
        return [Violation("RESHAPE-R2", f"{OP}-{version} has allowzero={allowzero!r}; it must be the integer 0 or 1")]
    else:
        zero = int(allowzero)
    known = not x.sparse and x.shape is not None and all(isinstance(d, int) for d in x.shape)
    shape = tuple(int(s) for s in shape)
    if zero is None and 0 in shape:
        # req: RESHAPE-R2 (GR4: allowzero decides the result here, so it must be written)
        said = ""
        if known:
            out, _ = resolve(tuple(x.shape), shape, 0)
            said = f" (with allowzero=0 the shape {list(shape)} resolves to {out})" if out else ""
        return [Violation("RESHAPE-R2", f"{OP}-{version} has shape {list(shape)} holding a 0 and does not write "
                                        "allowzero, which then decides the result (0 copies the input's dimension "
                                        "under allowzero=0, makes a dimension of size 0 under allowzero=1); the "
                                        f"profile reads no default that decides the result: write allowzero=0{said}; "
                                        "`sonnx conform` writes it")]
    if not known:
        return []
    out, why = resolve(tuple(x.shape), shape, zero or 0)
    if out is None:
        return [Violation("RESHAPE-R2", f"{OP}-{version} reshapes an input of shape {tuple(x.shape)} to "
                                        f"{list(shape)}: {why}")]
    return []


def _type_hint(elem: str) -> str:
    if elem == "bfloat16":
        return "; bfloat16 needs Reshape-13: import opset 13 or later"
    if elem in _INTS:
        return "; integer types need Reshape-5: import opset 5 or later"
    return "; the profile defines no other element type"


def node_constraints(sigs, attrs, opset: int) -> list[Violation]:
    """The registry's constraint function: (input signatures, attributes, opset). The validator
    passes the shape input's constant value under SHAPE_INPUT (registry: constant_inputs)."""
    version = kernel.version_in_force(OP, opset, "RESHAPE-R3")[0]
    if version is not None and version >= SHAPE_INPUT_FROM:
        return constraints(sigs[0], opset=opset, shape=attrs.get(SHAPE_INPUT),
                           shape_sig=sigs[1] if len(sigs) > 1 else None, allowzero=attrs.get("allowzero"),
                           shape_attribute=attrs.get("shape"))
    shape = attrs.get("shape")
    return constraints(sigs[0], opset=opset, shape=tuple(shape) if isinstance(shape, list) else shape,
                       allowzero=attrs.get("allowzero"), consumed_inputs=attrs.get("consumed_inputs"))


def output_shape(in_shape: tuple[int, ...], shape, allowzero: int | None = None) -> tuple[int, ...]:
    """Y's shape for an accepted call (RESHAPE-R2's resolution)."""
    out, why = resolve(tuple(in_shape), tuple(int(s) for s in shape), int(allowzero or 0))
    if out is None:
        raise ProfileViolation([Violation("RESHAPE-R2", why)])
    return out


# ---------------------------------------------------------------- reference kernel
def _violations(x: TensorValue, shape: object, allowzero: object) -> list[Violation]:
    sig = TensorSig(x.shape, x.dtype)
    return tensor_shape_violations(OP, [("'data'", sig)]) + constraints(sig, opset=LATEST, shape=shape,
                                                                         allowzero=allowzero)


def _refusal(x: TensorValue, shape: object, allowzero: object) -> ProfileViolation:
    return ProfileViolation(_violations(x, shape, allowzero))




def _every_element_moved(x: TensorValue, y: TensorValue) -> bool:
    """RESHAPE-R4 by multi-index, as proofs/reshape.mlw's reshape_elements: X's element at
    multi-index i is Y's at the multi-index whose row-major offset in Y's shape is i's in X's."""
    at = list(itertools.product(*(range(d) for d in y.shape)))
    for ix in itertools.product(*(range(d) for d in x.shape)):
        k = flat_index(x.shape, ix)
        if not kernel.same_bits(x.dtype, x.data[k], y.data[flat_index(y.shape, at[k])]):
            return False
    return True


# req: RESHAPE-R1, RESHAPE-R2, RESHAPE-R3, RESHAPE-R4
# The body checks the requirements itself, so that they hold with contracts off; the same
# precondition is attached for CrossHair (SONNX_CONTRACTS=full).
@icontract.require(lambda x, shape, allowzero: not _violations(x, shape, allowzero), "RESHAPE-R1..R3, PROF-R2",
                   error=_refusal, enabled=FULL_CONTRACTS)
@icontract.require(lambda x: kernel.well_formed(x), enabled=FULL_CONTRACTS)
@icontract.ensure(lambda x, shape, allowzero, result: result.dtype == x.dtype and len(result.shape) == len(shape)
                  and size(result.shape) == size(x.shape) and len(result.data) == len(x.data))
@icontract.ensure(lambda x, shape, allowzero, result: all(
    r == (x.shape[i] if s == 0 else s) for i, (r, s) in enumerate(zip(result.shape, shape)) if s != -1))
@icontract.ensure(lambda x, shape, allowzero, result: _every_element_moved(x, result), enabled=FULL_CONTRACTS)
def reshape_reference(x: TensorValue, shape: tuple[int, ...], allowzero: int | None = 0) -> TensorValue:
    """The reference kernel: Y's shape is resolve(X's shape, shape) and y[k] = x[k] for every
    flat row-major k (module Copy of proofs/reshape.mlw)."""
    raise_if_any(_violations(x, shape, allowzero))
    out = output_shape(x.shape, shape, allowzero)
    return TensorValue(x.dtype, out, _move(x.data, size(out)))


# req: RESHAPE-R4
_move = kernel.row_major_copy      # the copy loop, proved by this operator's module Copy


# ---------------------------------------------------------------- numpy kernel
_accepted = kernel.AcceptedCalls()


def shape_argument(shape: object, opset: object) -> tuple[int, ...] | None:
    """The kernel's ``shape`` as a tuple of ints. From Reshape-5 on it is ONNX's shape input: a
    1-D int64 array (another array is RESHAPE-R1's to refuse); for Reshape-1, ONNX's attribute: a
    list or tuple of integers (or such an array). None (omitted) is RESHAPE-R1's to refuse.
    TypeError for anything else."""
    if shape is None:
        return None
    if isinstance(shape, np.ndarray):
        if shape.dtype != np.int64 or shape.ndim != 1:
            raise ProfileViolation([Violation("RESHAPE-R1", f"{OP} shape is an array of type {shape.dtype} and "
                                                            f"shape {shape.shape}; it must be a 1-D int64 array")])
        return tuple(int(s) for s in shape)
    before_5 = isinstance(opset, (int, np.integer)) and not isinstance(opset, bool) and opset < SHAPE_INPUT_FROM
    if before_5 and isinstance(shape, (tuple, list)) and all(
            isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)) for s in shape):
        return tuple(int(s) for s in shape)
    raise wrong_type("reshape", "shape", "a 1-D int64 array (the shape input; for opset 1-4 also a "
                     "list of integers: the attribute)", shape, "")


# req: RESHAPE-R1, RESHAPE-R2, RESHAPE-R3
def check(x: object, shape: tuple[int, ...] | None, allowzero: object, opset: object = LATEST) -> tuple[int, ...]:
    """Every check of the kernel's arguments (TypeError or ProfileViolation); Y's shape."""
    version, sigs = kernel.arguments("reshape", opset, [("data", x)])
    kernel.refuse(OP, sigs, constraints(sigs[0][1], opset=version, shape=shape, allowzero=allowzero))
    return output_shape(sigs[0][1].shape, shape, allowzero)


# req: RESHAPE-R4
@kernel.entry      # nothing is rounded; guarded as every kernel, for one calling convention
def reshape(data: np.ndarray, shape: np.ndarray | None = None, *, allowzero: int | None = None,
            opset: int = LATEST) -> np.ndarray:
    """ONNX Reshape of an array: a new array of the resolved ``shape`` holding data's elements
    in row-major order, every bit kept.

    ``shape``: from opset 5 a 1-D int64 array (ONNX's shape input), for opset 1-4 a list of
    integers (ONNX's attribute); a 0 entry copies data's dimension at that index, one -1 entry
    is inferred. ``allowzero`` (opset 14 on) must be given when ``shape`` holds a 0 (and then be
    0). The result is a C-contiguous copy in this machine's byte order, never a view. Raises
    ``sonnx.ProfileViolation`` (a ValueError naming the requirement) for what the profile
    refuses: a shape that does not resolve (two -1, sizes that disagree, a 0 past the input's
    rank, allowzero=1 with a 0), an element type outside the version's type set, a sparse input,
    an empty or oversized tensor, an opset outside the known range. Raises TypeError for a
    non-array input, a shape that is no integer list or array, a non-integer opset.
    """
    s = shape_argument(shape, opset)
    return _apply(data, kernel.checked(_accepted, check, data, s, allowzero, opset))


# req: RESHAPE-R4
def _apply(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The move of an accepted call: a C-order copy in native byte order, reshaped."""
    y = np.empty(shape, dtype=x.dtype.newbyteorder("="))
    np.copyto(y.reshape(x.shape), x, casting="equiv")
    return y


# req: RESHAPE-R2, RESHAPE-R4
def bind(x: np.ndarray, shape: np.ndarray | None = None, *, allowzero: int | None = None, opset: int = LATEST):
    """``reshape`` checked once now for arrays like ``x``: a function of the array alone."""
    out = check(x, shape_argument(shape, opset), allowzero, opset)
    return lambda a: _apply(a, out)


def result_shape(shapes, keywords) -> tuple[int, ...]:
    """Y's shape from X's and the kernel's ``shape`` and ``allowzero`` (the executor plans with it)."""
    return output_shape(tuple(shapes[0]), tuple(int(s) for s in keywords["shape"]), keywords.get("allowzero"))


# req: RESHAPE-R2
def default_allowzero(inputs: tuple, attrs: dict, opset: int, constants: tuple):
    """ONNX's default allowzero, 0, where RESHAPE-R2 refuses its omission (conform writes it,
    ConformRule.defaults): a constant shape holding a 0. Elsewhere None (nothing refused, nothing
    written); conform writes it only for Reshape-14 on, the versions that have the attribute."""
    shape = constants[1] if len(constants) > 1 else None
    if shape is None:
        return None         # a shape that is no constant: RESHAPE-R1 refuses the node anyway
    return 0 if 0 in [int(s) for s in np.asarray(shape).reshape(-1)] else None


OPERATOR = Operator(
    name=OP, prefix=PREFIX, kind="structural", type_sets=TYPE_SETS, inputs=("data", "shape"), optional=("shape",),
    attributes={"shape": None, "allowzero": None}, constraints=node_constraints, reference=reshape_reference,
    kernel=reshape, bind=bind, spec="spec/reshape.md", proofs=("proofs/reshape.mlw",),
    kernel_attributes=KERNEL_ATTRIBUTES, constant_inputs=CONSTANT_INPUTS, output_shape=result_shape,
    comparison="bits", theories=("proofs/tensor.mlw",),
    conform=ConformRule(rule="RESHAPE-R2", defaults={"allowzero": default_allowzero}))
