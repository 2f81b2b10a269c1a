"""Any argument of sonnx.mul / sonnx.gemm, of any type: the call succeeds or raises
ProfileViolation or TypeError with a sonnx message (ValueError for an unknown Gemm mode), and the
verdict is a function of the arguments only, whatever calls came before (issue 11, item 7)."""
from __future__ import annotations

import functools
import sys
import warnings
from decimal import Decimal
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import Phase, given, settings, strategies as st

import sonnx
from sonnx import profile
from sonnx.ops import elementwise, gemm as gemm_op, kernel, signature

# ---------------------------------------------------------------- odd values


class NoRepr:
    """Its repr fails when sonnx asks (a message must not crash); not when hypothesis reports."""

    def __repr__(self):
        if sys._getframe(1).f_globals.get("__name__", "").startswith("sonnx"):
            raise RuntimeError("repr refused")
        return "NoRepr()"


class NoHash:
    __hash__ = None

    def __eq__(self, other):
        raise RuntimeError("eq refused")


class EverythingEqualFloat(float):
    """A float whose == is always true and whose hash is that of 1: a memo keyed by == alone
    would mix it up with any accepted value."""

    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


ONE_IN_MANY_TYPES = [1, 1.0, True, np.float64(1.0), np.float32(1.0), np.float16(1.0), np.int64(1),
                     np.int8(1), np.uint64(1), np.bool_(True), Fraction(1), Decimal(1), 1 + 0j,
                     EverythingEqualFloat(1.0), "1"]
ZERO_IN_MANY_TYPES = [0, 0.0, -0.0, False, np.float64(0.0), np.int32(0), np.bool_(False), Fraction(0),
                      Decimal(0), "0"]

EQUAL_POOL = ONE_IN_MANY_TYPES + ZERO_IN_MANY_TYPES + [2, 2.0, np.float32(2.0), 13, 13.0, np.int64(13),
                                                     np.float64(13.0), 14, np.int32(14), 0.5,
                                                     np.float32(0.5), Fraction(1, 2)]


def _same_value(u, v) -> bool:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return bool(u == v) and hash(u) == hash(v)
    except Exception:
        return False


scalars = st.one_of(
    st.sampled_from(ONE_IN_MANY_TYPES + ZERO_IN_MANY_TYPES),
    st.none(), st.integers(-3, 30), st.sampled_from([2**24 + 1, 2**53 + 1, 10**9, 10**400, -(10**400),
                                                     10**5000]),
    st.floats(allow_nan=True, allow_infinity=True, width=32), st.floats(),
    st.fractions(max_denominator=7), st.decimals(allow_nan=True, allow_infinity=True),
    st.complex_numbers(max_magnitude=3), st.text(max_size=4), st.binary(max_size=2),
    st.sampled_from(["exact", "fast", "14", "Exact", np.str_("fast"), b"exact"]),
    st.sampled_from([np.longdouble(1) / 3, np.longdouble(2) ** 200, np.float64(0.1), np.float32(0.1),
                     ml_dtypes.bfloat16(1.0)]),
    st.builds(object), st.builds(NoRepr), st.builds(NoHash), st.just(EverythingEqualFloat(0.3)),
    st.just([1.0]), st.just((1,)), st.just({"a": 1}), st.just(sonnx.mul),
)

DTYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int32, np.int8, np.uint64,
          np.bool_, np.complex64, object, "datetime64[s]", "U2", np.dtype(">f4"), ml_dtypes.float8_e4m3fn,
          np.dtype([("x", np.float32)])]
SHAPES = [(2, 3), (3, 2), (3, 4), (4, 3), (2, 4), (4, 2), (3,), (1, 3), (2, 2), (), (0, 3),
          (2, 3, 1)]


def _array(dtype, shape, kind: str):
    x = np.asarray(np.arange(1, 1 + int(np.prod(shape)), dtype=np.int64).reshape(shape) % 5)
    x = np.asarray(x.astype(dtype) if np.dtype(dtype).kind not in "MUV" else np.zeros(shape, dtype))
    if kind == "masked":
        return np.ma.masked_array(x)
    if kind == "matrix" and x.ndim == 2:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            return np.asmatrix(x)
    if kind == "strided" and x.ndim == 2:
        return np.asfortranarray(x)[:, ::-1]
    if kind == "list":
        return x.tolist()
    return x


arrays = st.builds(_array, st.sampled_from(DTYPES), st.sampled_from(SHAPES),
                   st.sampled_from(["plain"] * 4 + ["masked", "matrix", "strided", "list"]))
any_value = st.one_of(arrays, scalars)

# ---------------------------------------------------------------- calls

F32 = np.float32


@st.composite
def bases(draw) -> tuple[str, list, dict]:
    """A call that the profile accepts (shapes agree with the trans flags), to be varied."""
    dt = draw(st.sampled_from([np.float32, np.float64, np.int32]))
    if draw(st.booleans()):
        return "mul", [_array(dt, (2, 3), "plain"), _array(dt, (2, 3), "plain")], {}
    ta, tb = draw(st.booleans()), draw(st.booleans())
    args = [_array(dt, (3, 2) if ta else (2, 3), "plain"), _array(dt, (4, 3) if tb else (3, 4), "plain"),
            _array(dt, (2, 4), "plain")]
    return "gemm", args, dict(trans_a=int(ta), trans_b=int(tb))


POSITIONAL = {"mul": ["a", "b"], "gemm": ["a", "b", "c"]}
KEYWORDS = {"mul": ["opset"], "gemm": ["alpha", "beta", "trans_a", "trans_b", "mode", "opset"]}
LIKELY = {  # values that are often valid, so that calls succeed as often as they fail
    "opset": st.sampled_from([13, 14, 28, np.int64(13), 11, 0, 29, 13.0, True, "14"]),
    "alpha": st.sampled_from([1.0, 0.5, -2.0, np.float32(0.75), 1, Fraction(1, 2), 0.1, -0.0]),
    "beta": st.sampled_from([1.0, 0.0, -0.0, 2, np.float64(0.25), Fraction(3)]),
    "trans_a": st.sampled_from([0, 1, True, False, 1.0, np.int64(1), np.bool_(True), Fraction(1)]),
    "trans_b": st.sampled_from([0, 1, True, False, 0.0, np.int64(0), 2]),
    "mode": st.sampled_from(["exact", "fast"]),
}


@st.composite
def calls(draw, base=None, palette=None) -> tuple[str, tuple, dict]:
    """``base`` (drawn when not given) with some arguments replaced, each by a likely value or
    by any value at all; or, given a ``palette`` (per argument, a few values), each argument
    kept or replaced by one of its palette. C maybe dropped; arguments maybe passed by name."""
    op, args, kwargs = draw(bases()) if base is None else base
    args, kwargs = list(args), dict(kwargs)
    names = list(range(len(args))) + KEYWORDS[op]
    if palette:
        changed = [name for name in names if draw(st.integers(0, 3)) == 0]
    else:
        changed = draw(st.lists(st.sampled_from(names), unique=True))
    for name in changed:
        if palette:
            value = draw(st.sampled_from(palette[name]))
        elif isinstance(name, int):
            value = draw(st.one_of(arrays, any_value))
        else:
            value = draw(st.one_of(LIKELY[name], LIKELY[name], any_value))
        if isinstance(name, int):
            args[name] = value
        else:
            kwargs[name] = value
    if op == "gemm" and draw(st.integers(0, 3)) == 0:
        args.pop()                                   # C absent
    if draw(st.booleans()):                          # positional arguments passed by name
        kwargs.update(zip(POSITIONAL[op], args))
        args = []
    return op, tuple(args), kwargs


@st.composite
def histories(draw) -> tuple[list, list[int]]:
    """Up to 8 calls varied from one or two bases, the new values taken from a few per
    argument: the calls share array signatures and values, and differ where verdicts differ.
    And an order to run them in."""
    shared = draw(st.lists(bases(), min_size=1, max_size=2))
    palette = {name: draw(st.lists(LIKELY[name], min_size=1, max_size=3)) for name in KEYWORDS["gemm"]}
    palette.update({i: draw(st.lists(arrays, min_size=1, max_size=2)) for i in range(3)})
    odd = draw(st.sampled_from([None] + list(palette)))
    if odd is not None:                              # now and then, anything for one argument
        palette[odd].append(draw(any_value))
    seq = draw(st.lists(st.sampled_from(shared).flatmap(lambda b: calls(b, palette)),
                        min_size=2, max_size=8))
    # twins: a call again with one argument replaced by an equal value of another type (1 and
    # 1.0, 0 and False...), the values a memo keyed by == alone would confuse
    for op, args, kwargs in list(seq):
        equal = {name: [u for u in EQUAL_POOL if _same_value(u, v) and type(u) is not type(v)]
                 for name, v in kwargs.items() if name in KEYWORDS[op]}
        names = sorted(name for name, found in equal.items() if found)
        if names and draw(st.booleans()):
            name = draw(st.sampled_from(names))
            seq.append((op, args, {**kwargs, name: draw(st.sampled_from(equal[name]))}))
    return seq, draw(st.permutations(range(len(seq))))


def verdict(op: str, args: tuple, kwargs: dict) -> tuple:
    """What one call gives, as a comparable value; fails on any other outcome."""
    fn = getattr(sonnx, op)
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # a warning is not a verdict either
        try:
            out = fn(*args, **kwargs)
        except sonnx.ProfileViolation as e:
            assert str(e) and all(v.message for v in e.violations)
            return ("refused", tuple(v.requirement for v in e.violations), str(e))
        except TypeError as e:
            assert str(e).startswith(f"sonnx.{op}: "), f"a TypeError not raised by sonnx: {e!r}"
            return ("TypeError", str(e))
        except ValueError as e:
            assert op == "gemm" and str(e).startswith("sonnx.gemm: unknown mode"), repr(e)
            return ("ValueError", str(e))
    assert type(out) is np.ndarray
    return ("ok", out.dtype.str, out.shape, out.tobytes())


def fresh_state() -> None:
    """The kernels' state as in a new process: no memo, no cached look-up."""
    kernel.clear_memos()
    for name, module in list(sys.modules.items()):
        if name.startswith("sonnx"):
            for obj in list(vars(module).values()):
                if isinstance(obj, functools._lru_cache_wrapper):
                    obj.cache_clear()


def fresh_verdict(call) -> tuple:
    fresh_state()
    return verdict(*call)


# ---------------------------------------------------------------- the properties

@settings(max_examples=400, deadline=None)
@given(calls())
def test_every_argument_gives_a_result_or_a_clear_error(call):
    fresh_verdict(call)


def _history_independent(sequence, order) -> None:
    alone = [fresh_verdict(call) for call in sequence]
    fresh_state()
    for i in order:                                  # one history: the calls in a drawn order
        assert verdict(*sequence[i]) == alone[i], f"call {i} of {sequence}, order {order}"
    for i in reversed(order):                        # and the reverse, after all of them
        assert verdict(*sequence[i]) == alone[i], f"call {i} of {sequence}, reversed {order}"


@settings(max_examples=150, deadline=None)
@given(histories())
def test_verdicts_do_not_depend_on_call_history(case):
    _history_independent(*case)


def _value_keyed(*args):
    """The memo key of cb05619: values without their types (1 == 1.0 == True share an entry)."""
    if not all(type(x) is np.ndarray for x in args[:2]) or not (len(args) == 3 or args[2] is None
                                                                 or type(args[2]) is np.ndarray):
        return None
    key = tuple((x.shape, x.dtype) if type(x) is np.ndarray else x for x in args)
    try:
        hash(key)
    except Exception:
        return None
    return key


def test_history_property_catches_a_value_keyed_memo(monkeypatch):
    """The property above finds the defect of issue 11 item 7 when it is planted again."""
    monkeypatch.setattr(kernel, "memo_key", _value_keyed)      # the one key every kernel's memo uses
    no_shrink = settings(parent=settings.get_profile("sonnx"), max_examples=150, deadline=None,
                         phases=[Phase.generate], report_multiple_bugs=False)
    with pytest.raises((AssertionError, ExceptionGroup)) as e:
        no_shrink(given(histories())(lambda case: _history_independent(*case)))()
    found = e.value.exceptions if isinstance(e.value, ExceptionGroup) else [e.value]
    assert all(isinstance(x, AssertionError) and str(x).startswith("call ") for x in found), found


# ---------------------------------------------------------------- the cases of the issue

X23, X34 = np.ones((2, 3), F32), np.ones((3, 4), F32)
X32 = np.ones((3, 2), F32)


@pytest.mark.req("GEMM-R5")
def test_trans_a_verdict_is_the_same_after_any_other_call():
    for before in ([], [dict(trans_a=1)], [dict(trans_a=True)], [dict(trans_a=np.int64(1))]):
        fresh_state()
        for kw in before:
            sonnx.gemm(X32, X34, **kw)
        with pytest.raises(sonnx.ProfileViolation, match="transA=1.0") as e:
            sonnx.gemm(X32, X34, trans_a=1.0)
        assert e.value.requirement == "GEMM-R5"
        with pytest.raises(sonnx.ProfileViolation, match="transA=Fraction"):
            sonnx.gemm(X32, X34, trans_a=Fraction(1))
    fresh_state()
    for bad in (1.0, np.float64(1.0), Fraction(1)):
        with pytest.raises(sonnx.ProfileViolation):
            sonnx.gemm(X32, X34, trans_a=bad)
    assert sonnx.gemm(X32, X34, trans_a=1).shape == (2, 4)


@pytest.mark.req("GEMM-R5")
def test_signed_zero_alpha_is_not_taken_from_the_memo():
    y0 = sonnx.gemm(X23, X34, alpha=0.0, mode="fast")
    y1 = sonnx.gemm(X23, X34, alpha=-0.0, mode="fast")
    assert not np.signbit(y0).any() and np.signbit(y1).all()


@pytest.mark.req("GEMM-R5")
@pytest.mark.parametrize("big", [10**400, -(10**400), 10**5000, Fraction(10**400), 2**53 + 1],
                         ids=["1e400", "-1e400", "1e5000", "Fraction-1e400", "2**53+1"])
def test_alpha_that_no_float32_holds_is_refused(big):
    for name in ("alpha", "beta"):
        with pytest.raises(sonnx.ProfileViolation) as e:
            sonnx.gemm(X23, X34, np.ones((2, 4), F32), **{name: big})
        assert e.value.requirement == "GEMM-R5" and len(str(e.value)) < 600


# the opset's type and range, for every operator: test_every_operator.py


@pytest.mark.parametrize("mode", [None, 1, b"exact", ["exact"]])
def test_mode_that_is_not_a_string_is_a_type_error(mode):
    with pytest.raises(TypeError, match=rf"^sonnx.gemm: mode must be a str \('exact' or 'fast'\), "
                                        rf"got {type(mode).__name__}( \[.*\])?$"):
        sonnx.gemm(X23, X34, mode=mode)


def test_messages_for_a_wrong_mode_or_scalar_say_what_and_how():
    with pytest.raises(ValueError, match=r"^sonnx.gemm: unknown mode 'fastest'; use 'exact' \(bit-exact "
                                         r"reference semantics\) or 'fast' \(BLAS, within the spec's "
                                         r"error bound\)$"):
        sonnx.gemm(X23, X34, mode="fastest")
    for name in ("alpha", "beta"):
        with pytest.raises(TypeError, match=rf"^sonnx.gemm: {name} must be a real number \(a float32 "
                                            rf"value\), got str$"):
            sonnx.gemm(X23, X34, **{name: "1"})


# a wrong Python type for an input names the input, for every operator: test_every_operator.py


@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_overflow_gives_ieee_results_without_a_warning_on_a_memo_hit(mode):
    """The plan taken from the memo still silences floating-point warnings: overflow and 0 * inf
    are the profile's semantics, not errors."""
    big = np.full((2, 3), 3e38, F32)
    big[0, 0] = np.inf
    zero = np.zeros((2, 3), F32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):                              # a fresh check, then a memo hit
            y = sonnx.mul(big, big)
            assert np.isinf(y).all()
            assert np.isnan(sonnx.mul(big, zero)[0, 0])
            g = sonnx.gemm(big, np.full((3, 4), 3e38, F32), mode=mode)
            assert np.isinf(g).all()
    i = np.full((2, 3), 2**30, np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (sonnx.mul(i, i) == 0).all() and (sonnx.mul(i, i) == 0).all()


# ---------------------------------------------------------------- the memo, argument by argument
X24 = np.ones((2, 4), F32)
GOOD = {"mul": ((X23, X23), {"opset": 14}),
        "gemm": ((X23, X34, X24), {"alpha": 1.0, "beta": 1.0, "trans_a": 0, "trans_b": 0, "mode": "fast",
                                   "opset": 13})}
# per argument, a value equal to (or shaped like) the good one that gets another verdict
SWAPS = {"mul": [(0, np.ones((2, 3), np.float64)), (1, np.ones((3, 2), F32)), ("opset", 14.0),
                 ("opset", True)],
         "gemm": [(0, np.ones((2, 3), np.float64)), (1, np.ones((3, 2), F32)), (2, np.ones((4,), F32)),
                  (2, np.ones((2, 4), np.float64)), ("alpha", True), ("beta", True), ("trans_a", 0.0),
                  ("trans_b", 0.0), ("trans_b", np.float32(0)),
                  ("trans_b", False + 0j), ("trans_a", np.float64(0)), ("mode", "Fast"), ("opset", 13.0),
                  ("opset", np.float32(13))]}


@pytest.mark.req("GEMM-R5", "PROF-R3")
@pytest.mark.parametrize("op,where,value", [(op, w, v) for op, swaps in SWAPS.items() for w, v in swaps],
                         ids=[f"{op}-{w}-{i}" for op, swaps in SWAPS.items() for i, (w, _) in enumerate(swaps)])
def test_an_accepted_call_never_decides_for_a_different_one(op, where, value):
    """Each argument is part of the memo key, with its type: a call accepted just before, equal
    in every other argument, does not decide the verdict."""
    args, kwargs = GOOD[op]
    args, kwargs = list(args), dict(kwargs)
    if isinstance(where, int):
        args[where] = value
    else:
        kwargs[where] = value
    expected = fresh_verdict((op, tuple(args), kwargs))
    assert expected[0] != "ok"
    fresh_state()
    assert verdict(op, *GOOD[op])[0] == "ok"
    assert verdict(op, tuple(args), kwargs) == expected


@pytest.mark.parametrize("op", ["mul", "gemm"])
@pytest.mark.parametrize("value", [[1.0], {}, NoHash(), EverythingEqualFloat(0.3)],
                         ids=["list", "dict", "NoHash", "EverythingEqualFloat"])
def test_unhashable_or_lying_values_in_any_keyword(op, value):
    args, kwargs = GOOD[op]
    for name in kwargs:
        fresh_state()
        verdict(op, args, kwargs)                   # an accepted call in the memo first
        got = verdict(op, args, {**kwargs, name: value})
        assert got[0] in ("TypeError", "refused", "ValueError"), (name, got)


@pytest.mark.parametrize("op", ["mul", "gemm"])
def test_a_repeated_signature_is_checked_once(op, monkeypatch):
    """The cheap path (issue 17): the second and later calls with the same arguments' types,
    shapes and values take the memo; with C absent as well."""
    module = elementwise if op == "mul" else gemm_op
    calls_made = []
    checked = module.check
    monkeypatch.setattr(module, "check", lambda *a: calls_made.append(1) or checked(*a))
    args, kwargs = GOOD[op]
    fresh_state()
    for _ in range(3):
        getattr(sonnx, op)(*args, **kwargs)
    if op == "gemm":
        for _ in range(3):
            sonnx.gemm(X23, X34, alpha=np.float32(0.5), trans_b=False)
    assert len(calls_made) == (1 if op == "mul" else 2)


def test_integer_mul_does_not_pay_for_errstate(monkeypatch):
    """Integers wrap without floating-point flags: their product skips numpy.errstate (~1 us)."""
    i = np.ones((2, 3), np.int32)
    sonnx.mul(i, i)
    h = X23.astype(np.float16)
    sonnx.mul(h, h)
    monkeypatch.setattr(np, "errstate", None)        # any use would raise TypeError
    assert (sonnx.mul(i, i) == 1).all()
    with pytest.raises(TypeError):      # float16 runs numpy's ufunc, under errstate
        sonnx.mul(h, h)


def test_messages_for_a_wrong_opset_say_what_and_how():
    with pytest.raises(TypeError, match=r"^sonnx.mul: opset must be an integer \(the default-domain "
                                        r"opset version, 1 to 28\), got str$"):
        sonnx.mul(X23, X23, opset="14")
    with pytest.raises(sonnx.ProfileViolation, match=r"^\[PROF-R3\] sonnx.gemm was given opset 29, which the "
                                                     r"profile does not know; use an opset from 1 to 28 \(e.g. "
                                                     r"convert with onnx.version_converter.convert_version\)$"):
        sonnx.gemm(X23, X34, opset=29)


@pytest.mark.req("GEMM-R5")
@pytest.mark.parametrize("value", [True, Decimal(1), "1", 1e300, -1e300], ids=str)
def test_constraints_refuse_alpha_that_is_no_float32_number(value):
    """The validator's path (constraints alone), with warnings as errors: no RuntimeWarning
    from the float32 conversion of a large double either."""
    s = signature.TensorSig((2, 2), "float")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = gemm_op.constraints(s, s, s, alpha=value)
    assert [v.requirement for v in found] == ["GEMM-R5"]


def test_fast_mode_never_runs_the_exact_fold(monkeypatch):
    def no_fold(*args, **kwargs):
        raise AssertionError("the exact fold ran in fast mode")
    monkeypatch.setattr(gemm_op.fold, "fold", no_fold)
    fresh_state()
    # 65 x 64 x 64: above Gemm's size rule (gemm.C_DEFAULT_WORK), where exact mode runs the fold
    big_a, big_b = np.ones((65, 64), np.float32), np.ones((64, 64), np.float32)
    assert big_a.shape[0] * big_b.shape[0] * big_b.shape[1] > gemm_op.C_DEFAULT_WORK
    for _ in range(2):
        assert sonnx.gemm(X23, X34, mode="fast").shape == (2, 4)
        assert sonnx.gemm(big_a, big_b, mode="fast").shape == (65, 64)
    with pytest.raises(AssertionError, match="exact fold ran"):
        sonnx.gemm(big_a, big_b, mode="exact")
