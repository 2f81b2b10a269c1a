"""What every operator of the registry gets, parametrised over ``sonnx.ops.registry.operators()``:
a new operator is covered here by adding its record, nothing in this file names one.

- type sets: at each version onnx knows, the kernel accepts exactly the element types of onnx's
  own schema (read here from ``onnx.defs``, not from the record) and refuses every other type with
  a requirement of the operator;
- argument fuzz: a wrong Python type for an input, the opset or a keyword is a TypeError that
  names the kernel; an unknown keyword or a missing input is a TypeError; an opset outside the
  profile's range is PROF-R3; an attribute the operator has not is refused by the validator;
- refusal IDs: every violation a kernel or the validator raises for an operator's node names a
  requirement of that operator (its prefix) or of the profile (PROF-);
- C parity: an operator whose C kernel exists (``c_binding`` of its record, or a function named
  after its stem in ``sonnx.c_kernels``) gives the Python kernel's bits on every type of its
  latest type set, and refuses what the Python kernel refuses;
- layers: a one-node model per operator, version and element type passes the validator, comes
  out of conform unchanged, and ``sonnx.run`` gives the kernel's bits.

Example inputs: ``example(op, dtype, version)`` below derives them from the record's ``kind``
(two same-shape operands for "elementwise", one for "unary" and "structural", A (2, 3) and
B (3, 2) for "matrix"; optional inputs absent, attributes at their defaults). An operator whose
inputs the kind does not describe (a required attribute, an optional input a version requires)
gives its own: a function ``example(dtype: str, version: int) -> (inputs, attributes)`` in its
own test module ``tests/ops/test_<stem>.py`` (inputs: numpy arrays in ONNX order, None for an
absent optional one; attributes: ONNX name -> value), found by stem. A kind none of the above
is a failure of ``test_every_operator_has_examples``, not a silent skip.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import defs, helper, numpy_helper

import sonnx
from sonnx import dtypes, profile
from sonnx.ops import registry
from sonnx.ops.registry import Operator, operators

from .conftest import assert_same_bits

OPS = list(operators().values())
# every element type sonnx can hold in a numpy array, and a few it refuses everywhere
HELD = sorted(dtypes.NUMERIC_TYPES)
FOREIGN = {"bool": np.bool_, "complex64": np.complex64, "object": object}


def stem(op: Operator) -> str:
    """The operator's module name: the record's ``stem`` when it has one, else its spec page's."""
    return getattr(op, "stem", None) or Path(op.spec).stem


def onnx_types(op: Operator, version: int) -> set[str]:
    """The element types onnx's schema of ``op`` at ``version`` allows (its first constraint),
    among those the profile defines (dtypes.NUMERIC_TYPES: a schema's bool, string, complex or
    sub-byte types are outside every profile type set, and refused as FOREIGN ones are)."""
    schema = defs.get_schema(op.name, version)
    return {s[len("tensor("):-1] for s in schema.type_constraints[0].allowed_type_strs} & dtypes.NUMERIC_TYPES


def _values(name: str, shape: tuple[int, ...], offset: int) -> np.ndarray:
    """Small distinct values of type ``name`` (negative ones for a signed type or a float)."""
    n = int(np.prod(shape))
    base = np.arange(n) + offset
    if dtypes.is_float(name) or dtypes.is_signed(name):
        base = base - n // 2
    return base.astype(np.float64).astype(dtypes.numpy_dtype(name)).reshape(shape)


def _home_example(op: Operator):
    """The operator's own ``example`` function, from tests/ops/test_<stem>.py, or None."""
    name = f"{__package__}.test_{stem(op)}"
    if importlib.util.find_spec(name) is None:
        return None
    return getattr(importlib.import_module(name), "example", None)


def example(op: Operator, name: str, version: int) -> tuple[list[np.ndarray | None], dict]:
    """Inputs (ONNX order, None for an absent optional one) and ONNX attributes of a call that
    the operator accepts at ``version`` when ``name`` is one of its types."""
    own = _home_example(op)
    if own is not None:
        return own(name, version)
    absent = [None] * len(op.optional)
    if op.kind == "elementwise":
        return [_values(name, (2, 3), 0), _values(name, (2, 3), 1)], {}
    if op.kind in ("unary", "structural"):
        return [_values(name, (2, 3), 0)], {}
    if op.kind == "matrix":
        return [_values(name, (2, 3), 0), _values(name, (3, 2), 1), *absent][:len(op.inputs)], {}
    raise LookupError(f"{op.name}: kind {op.kind!r} has no example here; give an example() in "
                      f"tests/ops/test_{stem(op)}.py")


def _keywords(op: Operator, attributes: dict) -> dict:
    """The kernel's keywords for ONNX attributes: the record's ``kernel_attributes`` mapping when
    it has one, else the attribute's name in snake case (transA -> trans_a)."""
    mapping = getattr(op, "kernel_attributes", None) or {}
    out = {}
    for k, v in attributes.items():
        key = mapping.get(k) or "".join(f"_{c.lower()}" if c.isupper() else c for c in k)
        out[key] = v
    return out


def call(op: Operator, inputs: list, attributes: dict, version: int, kernel=None):
    """The kernel on ``inputs`` at opset ``version`` (absent optional inputs left out)."""
    kernel = kernel or op.kernel
    args = list(inputs)
    while args and args[-1] is None:
        args.pop()
    return kernel(*args, opset=version, **_keywords(op, attributes))


def refused_ids(fn, *args, **kwargs) -> list[str]:
    with pytest.raises(sonnx.ProfileViolation) as e:
        fn(*args, **kwargs)
    return [v.requirement for v in e.value.violations]


def own_or_profile(op: Operator, ids) -> bool:
    return bool(ids) and all(i.startswith((f"{op.prefix}-", "PROF-")) for i in ids)


VERSIONS = [pytest.param(op, v, id=f"{op.name}-{v}") for op in OPS for v in op.versions]
TYPED = [pytest.param(op, v, t, id=f"{op.name}-{v}-{t}")
         for op in OPS for v in op.versions for t in sorted(op.type_sets[v] & dtypes.NUMERIC_TYPES)]
LATEST = [pytest.param(op, id=op.name) for op in OPS]


@pytest.mark.req("@operators")
def test_every_operator_has_examples():
    for op in OPS:
        for v in op.versions:
            for t in sorted(op.type_sets[v] & dtypes.NUMERIC_TYPES):
                inputs, attributes = example(op, t, v)
                assert len(inputs) == len(op.inputs), (op.name, v)
                assert all(i is not None for i in inputs[:op.required]), (op.name, v)


# ---------------------------------------------------------------- type sets, every version
@pytest.mark.req("@typed")
@pytest.mark.parametrize("op,version", VERSIONS)
def test_the_kernel_accepts_exactly_the_types_of_onnx_schema(op, version):
    allowed = onnx_types(op, version)
    assert op.type_sets[version] == allowed          # the record copies the schema, every type
    some = sorted(op.type_sets[version] & dtypes.NUMERIC_TYPES)[0]
    for name in HELD:
        inputs, attributes = example(op, name if name in allowed else some, version)
        # the type constraint is the data's: a constant input (constant_inputs: axes, a shape)
        # has its own type in the schema and keeps it
        inputs = [x if x is None or formal in op.constant_inputs else x.astype(dtypes.numpy_dtype(name))
                  for x, formal in zip(inputs, op.inputs)]
        if name in allowed:
            out = call(op, inputs, attributes, version)
            assert dtypes.name_of(out.dtype) == name, (name, out.dtype)
        else:
            ids = refused_ids(call, op, inputs, attributes, version)
            assert own_or_profile(op, ids) and any(i.startswith(f"{op.prefix}-") for i in ids), (name, ids)


@pytest.mark.req("@typed")
@pytest.mark.parametrize("op", LATEST)
def test_the_record_knows_every_version_of_onnx_schema(op):
    seen = {defs.get_schema(op.name, v).since_version for v in range(1, defs.onnx_opset_version() + 1)}
    assert seen == set(op.versions) == set(registry.versions(op.name))
    for v in op.versions:
        assert registry.type_set(op.name, v) == op.type_sets[v] == onnx_types(op, v)


@pytest.mark.req("@typed")
@pytest.mark.parametrize("op", LATEST)
@pytest.mark.parametrize("foreign", sorted(FOREIGN))
def test_types_no_version_has_are_refused_with_the_operators_id(op, foreign):
    v = op.versions[-1]
    inputs, attributes = example(op, sorted(op.type_sets[v] & dtypes.NUMERIC_TYPES)[0], v)
    bad = [None if x is None else x.astype(FOREIGN[foreign]) for x in inputs]
    ids = refused_ids(call, op, bad, attributes, v)
    assert own_or_profile(op, ids) and any(i.startswith(f"{op.prefix}-") for i in ids), ids
    if len(op.inputs) - len(op.optional) > 1:       # one operand of another type: still refused
        mixed = [bad[0], *inputs[1:]]
        ids = refused_ids(call, op, mixed, attributes, v)
        assert own_or_profile(op, ids), ids


# ---------------------------------------------------------------- argument fuzz
WRONG_PYTHON = [[1.0, 2.0], 3.0, None, "abc", (1, 2), np.float32(2)]


@pytest.mark.req("@typed")
@pytest.mark.parametrize("op", LATEST)
@pytest.mark.parametrize("wrong", WRONG_PYTHON, ids=repr)
def test_an_input_that_is_no_array_is_a_type_error_naming_the_kernel_and_input(op, wrong):
    v = op.versions[-1]
    inputs, attributes = example(op, "float", v)
    for i, input_name in enumerate(op.inputs):
        if wrong is None and i >= op.required:
            continue                                # None is how an optional input is left out
        given = list(inputs)
        given[i] = wrong
        given = given[:max(i + 1, op.required)]
        with pytest.raises(TypeError, match=rf"^sonnx\.{op.kernel.__name__}: {input_name} must be"):
            op.kernel(*given, opset=v, **_keywords(op, attributes))


@pytest.mark.req("PROF-R3")
@pytest.mark.parametrize("op", LATEST)
def test_an_opset_of_the_wrong_type_or_range(op):
    """Not an integer: TypeError naming the kernel; outside 1..MAX_KNOWN_OPSET: PROF-R3 with the
    validator's own words (profile.opset_range_violations); a numpy integer is an integer."""
    v = op.versions[-1]
    inputs, attributes = example(op, "float", v)
    for wrong in (True, "14", 14.0, None, np.float64(13), [14]):
        with pytest.raises(TypeError, match=rf"^sonnx\.{op.kernel.__name__}: opset must be an integer"):
            call(op, inputs, attributes, wrong)
    for outside in (0, -1, profile.MAX_KNOWN_OPSET + 1, 10**9, 10**400):
        assert [x.requirement for x in profile.opset_range_violations(outside, "x")] == ["PROF-R3"]
        with pytest.raises(sonnx.ProfileViolation) as e:
            call(op, inputs, attributes, outside)
        assert e.value.requirement == "PROF-R3" and f"1 to {profile.MAX_KNOWN_OPSET}" in str(e.value)
    assert call(op, inputs, attributes, np.int64(v)).shape == call(op, inputs, attributes, v).shape
    assert profile.opset_range_violations(profile.MAX_KNOWN_OPSET, "x") == []
    call(op, inputs, attributes, profile.MAX_KNOWN_OPSET)


@pytest.mark.req("@operators")
@pytest.mark.parametrize("op", LATEST)
def test_an_unknown_keyword_or_a_missing_input_is_a_type_error(op):
    v = op.versions[-1]
    inputs, attributes = example(op, "float", v)
    with pytest.raises(TypeError):
        op.kernel(*[x for x in inputs if x is not None], opset=v, no_such_attribute=1)
    with pytest.raises(TypeError):
        op.kernel(*inputs[:op.required - 1], opset=v)


@pytest.mark.req("@operators")
@pytest.mark.parametrize("op", LATEST)
def test_the_kernel_takes_the_records_inputs_and_an_opset(op):
    params = inspect.signature(op.kernel).parameters
    positional = [p for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert len(positional) == len(op.inputs), list(params)
    assert all(p.default is not p.empty for p in positional[op.required:])
    assert "opset" in params and params["opset"].kind == params["opset"].KEYWORD_ONLY


# ---------------------------------------------------------------- one-node models
def node_model(op: Operator, inputs: list, attributes: dict, version: int, out: np.ndarray,
               extra: dict | None = None) -> onnx.ModelProto:
    names = [f"x{i}" if x is not None else "" for i, x in enumerate(inputs)]
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node(op.name, names, ["y"], **attributes, **(extra or {}))
    # an input the record says must be a constant (constant_inputs) is an initializer, no graph input
    constant = {n for n, formal in zip(names, op.inputs) if n and formal in op.constant_inputs}
    declared = [helper.make_tensor_value_info(n, _elem(x.dtype), x.shape)
                for n, x in zip(names, inputs) if n and n not in constant]
    stored = [numpy_helper.from_array(x, n) for n, x in zip(names, inputs) if n in constant]
    result = helper.make_tensor_value_info("y", _elem(out.dtype), out.shape)
    graph = helper.make_graph([node], "one", declared, [result], stored)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)])


def _elem(dt: np.dtype) -> int:
    name = dtypes.name_of(dt)
    return getattr(onnx.TensorProto, name.upper())


def feeds(inputs: list, op: Operator | None = None) -> dict[str, np.ndarray]:
    """The graph inputs of node_model's model: every input but those stored as initializers."""
    constant = op.constant_inputs if op is not None else {}
    return {f"x{i}": x for i, x in enumerate(inputs)
            if x is not None and not (op is not None and op.inputs[i] in constant)}


@pytest.mark.req("@operators")
@pytest.mark.parametrize("op,version,name", TYPED)
def test_one_node_model_passes_every_layer_with_the_kernels_bits(op, version, name):
    from sonnx.conform.api import conform
    inputs, attributes = example(op, name, version)
    expected = call(op, inputs, attributes, version)
    model = node_model(op, inputs, attributes, version, expected)
    report = sonnx.validate(model)
    assert report.conforms, [(f.rule, f.message) for f in report.findings]
    rewritten, record = conform(model, check=False)
    assert record["rewrites"] == [] and record["findings"] == []
    assert rewritten.SerializeToString() == model.SerializeToString()
    assert_same_bits(sonnx.run(model, feeds(inputs, op))["y"], expected)


@pytest.mark.req("@typed")
@pytest.mark.parametrize("op,version", VERSIONS)
def test_the_validator_refuses_a_type_with_the_operators_id(op, version):
    """A one-node model whose tensors have a type outside the version's set (the numeric types
    the version has not, and bool, which no version has): a finding of the operator's own."""
    some = sorted(op.type_sets[version] & dtypes.NUMERIC_TYPES)
    inputs, attributes = example(op, some[0], version)
    expected = call(op, inputs, attributes, version)
    for outside in sorted(dtypes.NUMERIC_TYPES - op.type_sets[version]) + ["bool"]:
        dt = np.dtype(np.bool_) if outside == "bool" else dtypes.numpy_dtype(outside)
        bad = [None if x is None else x.astype(dt) for x in inputs]
        model = node_model(op, bad, attributes, version, expected.astype(dt))
        rules = [f.rule for f in sonnx.validate(model).findings]
        assert any(r.startswith(f"{op.prefix}-") for r in rules), (outside, rules)
        assert all(r.startswith((f"{op.prefix}-", "PROF-", "ONNX-")) for r in rules), (outside, rules)


@pytest.mark.req("@operators")
@pytest.mark.parametrize("op", LATEST)
def test_an_attribute_the_operator_has_not_is_refused_by_the_validator(op):
    v = op.versions[-1]
    inputs, attributes = example(op, "float", v)
    expected = call(op, inputs, attributes, v)
    model = node_model(op, inputs, attributes, v, expected, extra={"no_such_attribute": 1})
    report = sonnx.validate(model)
    assert not report.conforms
    assert all(f.rule.startswith((f"{op.prefix}-", "PROF-", "ONNX-")) for f in report.findings)


# ---------------------------------------------------------------- C kernels
def c_kernel(op: Operator):
    """The operator's C wrapper: ``c_binding.wrapper`` of its record, or the function named
    after its stem in sonnx.c_kernels; None when it has no C kernel."""
    binding = getattr(op, "c_binding", None)
    if binding is not None:
        return getattr(binding, "wrapper", None) or (binding.get("wrapper") if isinstance(binding, dict) else None)
    from sonnx import c_kernels
    return getattr(c_kernels, stem(op), None)


# only the operators that have a C kernel (one without is no skipped case: it has nothing to compare)
WITH_C = [pytest.param(op, t, id=f"{op.name}-{t}")
          for op in OPS if c_kernel(op) is not None
          for t in sorted(op.type_sets[op.versions[-1]] & dtypes.NUMERIC_TYPES)]


@pytest.fixture(scope="module")
def c_library(tmp_path_factory):
    """The C library built once, into a fresh cache."""
    from sonnx import c_kernels as ck
    mp = pytest.MonkeyPatch()
    mp.setenv("SONNX_C_CACHE", str(tmp_path_factory.mktemp("c-cache")))
    mp.setattr(ck, "_LIB", None)
    ck.library()
    yield ck
    mp.undo()


@pytest.mark.req("@operators")
@pytest.mark.parametrize("op,name", WITH_C)
def test_the_c_kernel_gives_the_python_kernels_bits(op, name, c_library):
    from sonnx.c_kernels import CKernelsUnavailable
    wrapper = c_kernel(op)
    v = op.versions[-1]
    inputs, attributes = example(op, name, v)
    try:
        got = call(op, inputs, attributes, v, kernel=wrapper)
    except CKernelsUnavailable as e:                # a type the C kernels do not cover: said so
        # the refusal sends the caller to this operator's own kernel (MatMul's once named Gemm's)
        assert f"use sonnx.{op.kernel.__name__}" in str(e), str(e)
        return
    assert_same_bits(got, call(op, inputs, attributes, v))
    bad = [None if x is None else x.astype(np.complex64) for x in inputs]
    assert sorted(refused_ids(call, op, bad, attributes, v, kernel=wrapper)) == \
        sorted(refused_ids(call, op, bad, attributes, v))
