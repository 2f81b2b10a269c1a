"""`sonnx run` reads every numeric field of its inputs bounded, exactly, and says the right
reason: a hex-float mantissa, an exponent or a decimal integer too long for its bound is refused
on its length (before any conversion, so never Python's 4,300-digit int() limit or a traceback),
a value out of range on its range; what is accepted is exact (checked against float.fromhex and
exact rationals, over derandomized hostile lines). Every numpy dtype is described as what it is.
Trailing blank lines are no values; an .npz holding an object array is refused unread."""
from __future__ import annotations

import os
import subprocess
import sys
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sonnx.cli import main
from sonnx.run import hexfloat
from sonnx.run.io import describe_dtype

from .models import MLP_IDS, TensorProto, mlp_path, one_node, save

MODEL = mlp_path(MLP_IDS[0])       # input x: float (2, 8)
GOOD = ["0x1p+0"] * 15             # the first 15 of x's 16 values


def run(args: list[str], capsys) -> tuple[int, str]:
    code = main(["run", *args])
    out, err = capsys.readouterr()
    if code == 2:
        assert out == "" and err.count("\n") == 1 and err.startswith("sonnx run: "), err
    return code, err


def write(path, lines: list[str]) -> str:
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


@pytest.fixture
def int_model(tmp_path) -> str:
    return save(one_node("Add", TensorProto.INT64), tmp_path / "add_int64.onnx")     # A, B: int64 (2, 3)


# ---------------------------------------------------------------- the cases of issue 26, through the CLI
LONG = {   # the 16th line of x -> the words of the reason
    "exponent of 5,000 digits": ("0x1p" + "7" * 5000, "has an exponent of 5000 digits, too long"),
    "negative exponent of 5,000 digits": ("0x1p-" + "7" * 5000, "has an exponent of 5000 digits, too long"),
    "exponent of 5,000 zeros": ("0x1p+" + "0" * 5000, "has an exponent of 5000 digits, too long"),
    "mantissa of 200,000 digits": ("0x1." + "3" * 200000 + "p+0", "has a mantissa of 200001 hex digits, too long"),
    "mantissa of 200,000 zeros": ("0x" + "0" * 200000, "has a mantissa of 200000 hex digits, too long"),
    "exponent out of range": ("0x1p+99999999", "is too large for a double: its exponent is out of range"),
    "negative exponent out of range": ("0x1p-99999999", "not exactly a double (it would be rounded): its "
                                                        "exponent is out of range"),
    "one bit too many": ("0x1.fffffffffffff8p+0", "its 1 bits span 54 binary places, a double holds 53"),
    "a bit below the smallest subnormal": ("0x1.8p-1074", "it has a 1 bit at 2^-1075, a double none below 2^-1074"),
    "a subnormal with a bit too low": ("0x0.00000000000018p-1022", "it has a 1 bit at 2^-1075"),
}


@pytest.mark.parametrize("case", sorted(LONG))
def test_a_hex_float_field_out_of_bounds_is_refused_with_its_reason(tmp_path, capsys, case):
    line, words = LONG[case]
    path = write(tmp_path / "x.txt", GOOD + [line])
    code, err = run([MODEL, "--input", f"x={path}"], capsys)
    assert code == 2 and "line 16: " in err and words in err, err


@pytest.mark.parametrize("line,words", [
    ("7" * 5000, "has 5000 digits, too long: sonnx reads integers of at most 32 digits"),
    ("-" + "7" * 5000, "has 5000 digits, too long"),
    ("0" * 33, "has 33 digits, too long"),
    ("9223372036854775808", "out of int64's range"),
    ("0x10", "is not a decimal integer"),               # integers are decimal only
    ("٣", "is not a decimal integer"),                   # a digit of another script is no ASCII digit
])
def test_a_decimal_integer_out_of_bounds_is_refused_with_its_reason(tmp_path, capsys, int_model, line, words):
    a = write(tmp_path / "a.txt", ["1"] * 5 + [line])
    b = write(tmp_path / "b.txt", ["1"] * 6)
    code, err = run([int_model, "--input", f"A={a}", "--input", f"B={b}"], capsys)
    assert code == 2 and "line 6: " in err and words in err, err


@pytest.mark.parametrize("line", ["0x1p" + "7" * 5000, "0x1p-" + "7" * 5000])
def test_no_traceback_in_a_new_process(tmp_path, line):
    path = write(tmp_path / "x.txt", GOOD + [line])
    p = subprocess.run([sys.executable, "-m", "sonnx", "run", MODEL, "--input", f"x={path}"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == "" and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and "exponent of 5000 digits, too long" in p.stderr


def test_values_within_the_bounds_are_read_exactly(tmp_path, capsys, int_model):
    """Padding zeros within the bounds change nothing: a mantissa of 1,024 digits, an exponent
    of 8, an integer of 32 give the same run as their short forms."""
    pad = {"0x1p+0": "0x1." + "0" * 1023 + "p+0", "0x1.8p+1": "0x1.8p+00000001",
           "-0x1p-149": "-0x0." + "0" * 16 + "1p-00000081", "0x1.fffffep+127": "0x1.fffffe" + "0" * 1017 + "p+127"}
    short, padded = list(pad) * 4, list(pad.values()) * 4
    assert len(padded[0].split("p")[0]) - 3 == 1024                    # "0x1." then 1,023 zeros
    assert {len(v.split("p")[1].lstrip("+-")) for v in padded[1:3]} == {8}
    outs = []
    for lines in (short, padded):
        code = main(["run", MODEL, "--input", f"x={write(tmp_path / 'x.txt', lines)}"])
        out, err = capsys.readouterr()
        assert code == 0 and err == "", err
        outs.append(out)
    assert outs[0] == outs[1]
    assert hexfloat.parse_lines(padded, "float").tobytes() == hexfloat.parse_lines(short, "float").tobytes()
    ints = ["-9223372036854775808", "9223372036854775807", "0" * 12 + "9223372036854775807", "-" + "0" * 32,
            "+" + "0" * 31 + "1", "7"]
    got = hexfloat.parse_lines(ints, "int64").tolist()
    assert got == [-2**63, 2**63 - 1, 2**63 - 1, 0, 1, 7]
    a = write(tmp_path / "a.txt", ints)
    assert run([int_model, "--input", f"A={a}", "--input", f"B={a}"], capsys)[0] == 0


# ---------------------------------------------------------------- derandomized hostile lines
HEX_DIGITS = "0123456789abcdefABCDEF"
LENGTHS = [0, 1, 7, 8, 9, 13, 14, 32, 33, 1023, 1024, 1025, 4300, 4301, 5000]   # around every bound


def digits(alphabet: str):
    """Short random digit strings, or long runs of one digit (lengths around the bounds)."""
    return st.one_of(st.text(alphabet, max_size=16),
                     st.builds(lambda c, n, tail: c * n + tail, st.sampled_from(alphabet),
                               st.sampled_from(LENGTHS), st.text(alphabet, max_size=3)))


BLANK = ["", "", " ", "\t"]
# per part: the well-formed choices, then the hostile ones
PARTS = {"sign": (["", "", "+", "-"], ["+-", "--", "\u2212"]),
         "prefix": (["0x", "0x", "0X"], ["", "x", "0", "0xx"]),
         "p": (["p", "p", "P", ""], ["x", "pp", "e+"]),
         "esign": (["", "+", "-"], ["--", "+-"]),
         "junk": (BLANK, ["g", "\x0c", "\u2028", "\u0663", "\x00", "+", "0x"])}


@st.composite
def near_the_ends(draw):
    """A hex float k * 2^e whose highest or lowest 1 bit lies within 2 places of an end of a
    double's range (2^1023, 2^-1022, 2^-1074) or of 1, with 1 to 60 significant bits."""
    width = draw(st.integers(1, 60))
    k = draw(st.integers(2 ** (width - 1), 2**width - 1)) | 1          # odd: its lowest 1 bit is 2^e
    end, d = draw(st.sampled_from([1023, -1022, -1074, 0])), draw(st.integers(-2, 2))
    e = end + d - (width - 1) if draw(st.booleans()) else end + d       # the highest bit, or the lowest
    sign = draw(st.sampled_from(["", "-"]))
    return sign, "0x", f"{k:x}", False, "", "p", "-" if e < 0 else "+", str(abs(e)), ""


@st.composite
def hex_lines(draw):
    """A hex float, well formed but for one part in about half the lines, or one near the ends."""
    if draw(st.booleans()):
        return draw(near_the_ends())
    hostile = draw(st.sampled_from([None] * 6 + ["sign", "prefix", "p", "esign", "junk", "digits"]))
    part = {k: draw(st.sampled_from(bad if k == hostile else good)) for k, (good, bad) in PARTS.items()}
    whole = draw(st.one_of(st.just("1"), digits(HEX_DIGITS)))
    frac = draw(st.one_of(st.text(HEX_DIGITS, min_size=12, max_size=14), digits(HEX_DIGITS)))  # ~ 53 bits
    point = draw(st.booleans())
    exp = draw(st.one_of(digits("0123456789"), st.integers(0, 1200).map(str),
                         st.integers(1015, 1080).map(str)))       # near the ends of a double's range
    if hostile == "digits":                      # no mantissa digit, or an exponent without digits
        whole, frac, exp, part["p"] = draw(st.sampled_from([("", "", exp, part["p"]), (whole, frac, "", "p")]))
    elif hostile is None:                        # the parts agree: a mantissa digit, an exponent's digits
        whole = whole if whole or (point and frac) else "1"
        exp = exp or "0" if part["p"] else exp
        part["esign"] = part["esign"] if part["p"] else ""
    return part["sign"], part["prefix"], whole, point, frac, part["p"], part["esign"], exp, part["junk"]


def expected(parts) -> tuple[str, object]:
    """What the line must give, from its parts alone (not from the parser): ("value", Fraction or
    signed zero), or ("refused", words of the reason)."""
    sign, prefix, whole, point, frac, p, esign, exp, junk = parts
    frac = frac if point else ""
    if not (p or esign):                     # no exponent: its digits continue the mantissa
        whole, frac, exp = (whole, frac + exp, "") if point else (whole + exp, frac, "")
    well_formed = (sign in ("", "+", "-") and prefix in ("0x", "0X") and (whole or frac)
                   and (p in ("p", "P") and esign in ("", "+", "-") and exp or not (p or esign or exp))
                   and junk in BLANK)
    if not well_formed:
        return "refused", "is not a hex float"
    if len(whole) + len(frac) > 1024:
        return "refused", f"has a mantissa of {len(whole) + len(frac)} hex digits, too long"
    if len(exp) > 8:
        return "refused", f"has an exponent of {len(exp)} digits, too long"
    m, shift = int(whole + frac, 16), int(esign + (exp or "0")) - 4 * len(frac)
    if m == 0:
        return "value", -0.0 if sign == "-" else 0.0
    # far beyond either end no rational is needed: m >= 1 and m < 2^4096
    if shift > 1024:
        return "refused", "is too large for a double"
    if shift < -1074 - 4096:
        return "refused", "is not exactly a double"
    value = Fraction(m) * Fraction(2) ** shift * (-1 if sign == "-" else 1)
    if abs(value) >= 2**1024:
        return "refused", "is too large for a double"
    try:
        nearest = float.fromhex(f"{sign}0x{whole or '0'}.{frac}p{esign}{exp or '0'}")   # Python's own reader
    except OverflowError:                    # rounds up past the largest double: not exact either
        return "refused", "is not exactly a double"
    return ("value", value) if Fraction(nearest) == value else ("refused", "is not exactly a double")


def text_of(parts) -> str:
    sign, prefix, whole, point, frac, p, esign, exp, junk = parts
    return f"{sign}{prefix}{whole}{'.' + frac if point else ''}{p}{esign}{exp}{junk}"


@settings(max_examples=400, deadline=None)
@given(hex_lines())
def test_hostile_hex_lines_are_read_exactly_or_refused_with_the_right_reason(parts):
    kind, want = expected(parts)
    line = text_of(parts)
    if kind == "refused":
        with pytest.raises(hexfloat.TextError) as exc:
            hexfloat.parse_lines([line], "double")
        assert want in str(exc.value) and str(exc.value).startswith("line 1: "), (line[:80], str(exc.value))
        return
    got = hexfloat.parse_lines([line], "double")
    assert got.dtype == np.float64 and got.shape == (1,)
    assert Fraction(float(got[0])) == want and np.signbit(got[0]) == np.signbit(float(want)), line[:80]
    with np.errstate(over="ignore"):        # the same line for a float input: read only if exact
        as_float = np.float32(float(want))
    if np.isfinite(as_float) and Fraction(float(as_float)) == want:
        assert hexfloat.parse_lines([line], "float").view(np.uint32)[0] == as_float.view(np.uint32)
    else:
        with pytest.raises(hexfloat.TextError, match="is not a float value"):
            hexfloat.parse_lines([line], "float")


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False), st.integers(0, 1100), st.integers(0, 8))
def test_any_double_padded_within_the_bounds_reads_back_bit_for_bit(x, zeros, lead):
    """printf("%a")'s text of any double, with trailing zeros added to its mantissa and leading
    zeros to its exponent up to the bounds, gives back the same bits."""
    mantissa, exponent = hexfloat.format_float(x).split("p")
    mantissa += "" if "." in mantissa else "."
    mantissa += "0" * min(zeros, hexfloat.MAX_MANTISSA_DIGITS - len(mantissa.lstrip("-")) + 3)
    exponent = exponent[0] + "0" * min(lead, hexfloat.MAX_EXPONENT_DIGITS - len(exponent) + 1) + exponent[1:]
    got = hexfloat.parse_lines([f"{mantissa}p{exponent}"], "double")
    assert got.view(np.uint64)[0] == np.array(x).view(np.uint64), (x, exponent)


@st.composite
def int_lines(draw):
    sign = draw(st.sampled_from(["", "", "+", "-", "+-"]))
    body = draw(st.one_of(digits("0123456789"), st.integers(-2**70, 2**70).map(lambda v: str(abs(v)))))
    return sign, body, draw(st.sampled_from(BLANK + PARTS["junk"][1]))


@settings(max_examples=300, deadline=None)
@given(int_lines(), st.sampled_from(["int8", "uint8", "int32", "int64", "uint64"]))
def test_hostile_integer_lines_are_read_exactly_or_refused_with_the_right_reason(parts, name):
    sign, body, junk = parts
    line = sign + body + junk
    info = np.iinfo(np.dtype(name))
    if sign not in ("", "+", "-") or not body or junk not in BLANK:
        want = "is not a decimal integer"
    elif len(body) > 32:
        want = f"has {len(body)} digits, too long"
    elif not info.min <= int(sign + body) <= info.max:
        want = f"is out of {name}'s range"
    else:
        assert hexfloat.parse_lines([line], name).tolist() == [int(sign + body)]
        return
    with pytest.raises(hexfloat.TextError) as exc:
        hexfloat.parse_lines([line], name)
    assert want in str(exc.value), (line[:80], str(exc.value))


# ---------------------------------------------------------------- the bounds are what catches them
@pytest.mark.parametrize("bound,line,name", [
    ("MAX_EXPONENT_DIGITS", "0x1p" + "7" * 5000, "double"),
    ("MAX_INTEGER_DIGITS", "7" * 5000, "int64"),
])
def test_a_bound_removed_is_a_traceback_again(monkeypatch, bound, line, name):
    """A planted fault: without the bound, int() meets its 4,300-digit limit (a ValueError that
    is no TextError, the traceback of issue 26)."""
    with pytest.raises(hexfloat.TextError, match="too long"):
        hexfloat.parse_lines([line], name)
    monkeypatch.setattr(hexfloat, bound, 10**9)
    with pytest.raises(ValueError, match="Exceeds the limit") as exc:
        hexfloat.parse_lines([line], name)
    assert not isinstance(exc.value, hexfloat.TextError)


def test_a_mantissa_bound_removed_gives_the_wrong_reason(monkeypatch):
    """A planted fault: without the mantissa bound, 200,000 digits are converted and refused for
    the value, not for the length."""
    line = "0x1." + "3" * 200000 + "p+0"
    monkeypatch.setattr(hexfloat, "MAX_MANTISSA_DIGITS", 10**9)
    with pytest.raises(hexfloat.TextError) as exc:
        hexfloat.parse_lines([line], "double")
    assert "too long" not in str(exc.value) and "not exactly a double" in str(exc.value)


# ---------------------------------------------------------------- lines of a text file
def test_trailing_blank_lines_are_no_values(tmp_path, capsys):
    values = [hexfloat.format_float(float(v)) for v in np.arange(16, dtype=np.float32) / 8]
    assert main(["run", MODEL, "--input", f"x={write(tmp_path / 'plain.txt', values)}"]) == 0
    want = capsys.readouterr().out
    for end, tail in (("\n", "\n"), ("\n", "\n\n\n"), ("\r\n", "\r\n \t\r\n"), ("\n", "  \n\t\n\n"),
                      ("\r", "\r\r"), ("\r\n", "")):     # Windows and old Mac line ends too
        path = tmp_path / "tail.txt"
        path.write_text(end.join(values) + tail, newline="")
        code = main(["run", MODEL, "--input", f"x={path}"])
        out, err = capsys.readouterr()
        assert code == 0 and err == "" and out == want, (tail, err)


@pytest.mark.parametrize("text,words", [
    ("\n".join(GOOD[:8] + [""] + GOOD[8:] + ["0x1p+0"]) + "\n", "holds 17 lines"),   # a blank line inside
    ("\n".join(GOOD[:7] + ["", ""] + GOOD[7:]) + "\n", "holds 17 lines"),
    ("\n".join(GOOD + ["0x1p+0\x0c0x1p+0"]) + "\n", "line 16: '0x1p+0\\x0c0x1p+0' is not"),  # \f ends no line
    ("\n".join(GOOD + ["0x1p+0\u2028"]) + "\n", "line 16: '0x1p+0\\u2028' is not a hex float"),
])
def test_lines_end_at_newlines_only(tmp_path, capsys, text, words):
    path = tmp_path / "x.txt"
    path.write_text(text, newline="")
    code, err = run([MODEL, "--input", f"x={path}"], capsys)
    assert code == 2 and words in err, err


def test_a_blank_line_inside_is_refused_where_the_count_is_right(tmp_path, capsys):
    path = write(tmp_path / "x.txt", GOOD[:8] + [" "] + GOOD[8:])
    code, err = run([MODEL, "--input", f"x={path}"], capsys)
    assert code == 2 and "line 9: '' is not a hex float" in err, err


# ---------------------------------------------------------------- dtypes described as what they are
DTYPES = {   # dtype -> the words of its description
    "V4": "raw 4-byte values (numpy void |V4)",
    "V2": "raw 2-byte values (numpy void |V2, as numpy.save stores ml_dtypes.bfloat16)",
    "[('a', '<i2'), ('b', '<i2')]": "structured records of 4 bytes (a: int16, b: int16)",
    "[('a', '<f4', (2,))]": "structured records of 8 bytes (a: sub-arrays of shape (2,) of float (numpy float32))",
    "<U3": "text strings (numpy <U3)",
    "|S4": "byte strings (numpy |S4)",
    "<M8[s]": "dates and times (numpy <M8[s])",
    "<m8[ms]": "time differences (numpy <m8[ms])",
    "<c8": "complex numbers (numpy <c8)",
    "|b1": "booleans (numpy |b1)",
    ">f8": "double (numpy float64)",
    "<f2": "float16",
    "<i8": "int64",
    "<f16": "float128",
}


@pytest.mark.parametrize("spec", sorted(DTYPES))
def test_every_dtype_is_described_as_what_it_is(tmp_path, capsys, spec):
    dt = np.dtype(eval(spec) if spec.startswith("[") else spec)   # noqa: S307  literals of this table
    np.save(tmp_path / "x.npy", np.zeros((2, 8), dt))
    code, err = run([MODEL, "--input", f"x={tmp_path / 'x.npy'}"], capsys)
    assert code == 2 and f"the file holds {DTYPES[spec]}; sonnx never casts" in err, err


def test_ml_dtypes_and_objects_are_named_not_called_void():
    assert describe_dtype(ml_dtypes.bfloat16) == "bfloat16"
    assert describe_dtype(ml_dtypes.float8_e4m3fn) == "float8_e4m3fn"
    assert describe_dtype(np.dtype(object)) == "Python objects (numpy |O)"
    assert len({describe_dtype(np.dtype(s if not s.startswith("[") else eval(s))) for s in DTYPES}) == len(DTYPES)  # noqa: S307


def test_a_bfloat16_array_for_a_float_input_is_named(capsys):
    import sonnx
    from sonnx.run import InputError
    with pytest.raises(InputError, match="the file holds bfloat16; sonnx never casts"):
        sonnx.run(MODEL, {"x": np.zeros((2, 8), ml_dtypes.bfloat16)})


def test_a_2_byte_record_is_no_bfloat16(tmp_path, capsys):
    """Only plain 2-byte void is numpy's storage of bfloat16; a record of two bytes is refused."""
    model = save(one_node("Relu", TensorProto.BFLOAT16, n_inputs=1), tmp_path / "relu.onnx")
    np.save(tmp_path / "rec.npy", np.zeros((2, 3), [("a", "u1"), ("b", "u1")]))
    np.save(tmp_path / "raw.npy", np.zeros((2, 3), ml_dtypes.bfloat16))
    assert np.load(tmp_path / "raw.npy").dtype == np.dtype("V2")
    code, err = run([model, "--input", f"A={tmp_path / 'rec.npy'}"], capsys)
    assert code == 2 and "structured records of 2 bytes" in err, err
    assert run([model, "--input", f"A={tmp_path / 'raw.npy'}"], capsys)[0] == 0


@pytest.mark.parametrize("named", [True, False])
def test_an_npz_holding_an_object_array_is_refused_unread(tmp_path, capsys, named):
    np.savez(tmp_path / "obj.npz", x=np.array([{"a": 1}] * 16, dtype=object).reshape(2, 8))
    arg = f"x={tmp_path / 'obj.npz'}" if named else str(tmp_path / "obj.npz")
    code, err = run([MODEL, "--input", arg], capsys)
    assert code == 2 and "obj.npz[x]: input x is declared float, the file holds Python objects" in err, err


# ---------------------------------------------------------------- .npy and .npz: the header before the data
def npy_bytes(header: str, data: bytes = b"", version: bytes = b"\x01\x00") -> bytes:
    """A .npy stream with the header dict ``header`` (written by hand: numpy refuses to write
    the hostile ones)."""
    h = header.encode("latin1")
    h += b" " * (63 - (10 + len(h)) % 64) + b"\n"
    return b"\x93NUMPY" + version + len(h).to_bytes(2, "little") + h + data


def header(shape: str, descr: str = "<f4", fortran: str = "False") -> str:
    return f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}"


X = np.arange(16, dtype=np.float32).reshape(2, 8) / 4
HOSTILE_NPY = {   # name -> (.npy bytes, the words of the refusal)
    "a huge dimension": (npy_bytes(header("(2, 10000000000000)")), "has shape (2, 10000000000000), the model declares (2, 8)"),
    "a negative dimension": (npy_bytes(header("(2, -8)")), "has shape (2, -8), the model declares (2, 8)"),
    "a dimension of 5,000 digits": (npy_bytes(header("(2, " + "9" * 5000 + ")")), "cannot read it as"),
    "a shape that is no tuple": (npy_bytes(header("16")), "cannot read it as"),
    "a pickled dtype": (npy_bytes(header("(2, 8)", "|O")), "the file holds Python objects (numpy |O)"),
    "a void dtype of 1 GB": (npy_bytes(header("(2, 8)", "|V1000000000")), "raw 1000000000-byte values"),
    "data cut short": (npy_bytes(header("(2, 8)"), X.tobytes()[:-1]), "declares 64 bytes of data, it holds 63"),
    "data past the end": (npy_bytes(header("(2, 8)"), X.tobytes() + b"\0"), "declares 64 bytes of data, it holds more"),
    "format version 3.0": (npy_bytes(header("(2, 8)"), X.tobytes(), b"\x03\x00"), "format version 3.0"),
    "format version 9.9": (npy_bytes(header("(2, 8)"), X.tobytes(), b"\x09\x09"), "cannot read it as"),
}


def zipped(path, members: dict[str, bytes]) -> str:
    import zipfile
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return str(path)


@pytest.mark.parametrize("case", sorted(HOSTILE_NPY))
@pytest.mark.parametrize("suffix", [".npy", ".npz"])
def test_a_hostile_npy_header_is_refused_before_its_data(tmp_path, capsys, case, suffix):
    data, words = HOSTILE_NPY[case]
    path = tmp_path / f"x{suffix}"
    if suffix == ".npy":
        path.write_bytes(data)
    else:
        zipped(path, {"x.npy": data})
    code, err = run([MODEL, "--input", f"x={path}"], capsys)
    assert code == 2 and words in err, err


def test_the_hand_written_header_is_what_numpy_writes(tmp_path):
    """The helper above writes the bytes numpy.save writes, so the hostile cases differ from a
    real file only where they say."""
    np.save(tmp_path / "x.npy", X)
    assert (tmp_path / "x.npy").read_bytes() == npy_bytes(header("(2, 8)"), X.tobytes())


def test_a_large_member_is_refused_without_reading_it(tmp_path, capsys):
    """A 40 MB array compressed to a few KB (a zip bomb in small) for a (2, 8) input: refused on
    its header; the memory traced while refusing it stays below 2 MB (reading it would take 40)."""
    import tracemalloc
    np.savez_compressed(tmp_path / "big.npz", x=np.zeros((2, 5_000_000), np.float32))
    assert (tmp_path / "big.npz").stat().st_size < 100_000
    tracemalloc.start()
    try:
        code, err = run([MODEL, "--input", f"x={tmp_path / 'big.npz'}"], capsys)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 2 and "has shape (2, 5000000), the model declares (2, 8)" in err, err
    assert peak < 2_000_000, peak


def test_npz_members_that_are_no_arrays_or_named_twice(tmp_path, capsys):
    """A member that is not a .npy (numpy.load would give its bytes) and two members that both
    name x ('x' and 'x.npy'): one line each, no traceback."""
    raw = zipped(tmp_path / "raw.npz", {"x": b"hello"})
    for arg in (f"x={raw}", raw):
        code, err = run([MODEL, "--input", arg], capsys)
        assert code == 2 and "raw.npz[x]: cannot read it as .npz" in err, err
    twice = zipped(tmp_path / "twice.npz", {"x.npy": npy_bytes(header("(2, 8)"), X.tobytes()), "x": b"hello"})
    code, err = run([MODEL, "--input", twice], capsys)
    assert code == 2 and "holds two arrays named 'x'" in err, err


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("suffix", [".npy", ".npz"])
def test_arrays_in_either_order_and_byte_order_read_as_numpy_reads_them(tmp_path, capsys, order, suffix):
    """What numpy.load gives is what sonnx reads: C or Fortran order, either byte order."""
    outs = set()
    for a in (X, X.astype(">f4")):
        a = np.asfortranarray(a) if order == "F" else a
        path = tmp_path / f"x{suffix}"
        np.save(path, a) if suffix == ".npy" else np.savez(path, x=a)
        assert main(["run", MODEL, "--input", f"x={path}"]) == 0
        out, err = capsys.readouterr()
        assert err == ""
        outs.add(out)
    np.save(tmp_path / "plain.npy", X)
    assert main(["run", MODEL, "--input", f"x={tmp_path / 'plain.npy'}"]) == 0
    assert outs == {capsys.readouterr().out}


def test_a_line_over_1_mib_is_refused_unread(tmp_path, capsys):
    """Blanks are allowed around a value, but a line over MAX_LINE_CHARS is refused on its
    length; one of exactly that length (blanks then a value) is read."""
    from sonnx.run.io import MAX_LINE_CHARS
    path = tmp_path / "x.txt"
    path.write_text("\n".join(GOOD + [" " * (MAX_LINE_CHARS - 6) + "0x1p+0"]) + "\n")
    assert main(["run", MODEL, "--input", f"x={path}"]) == 0
    capsys.readouterr()
    path.write_text("\n".join(GOOD + [" " * (MAX_LINE_CHARS - 5) + "0x1p+0"]) + "\n")
    code, err = run([MODEL, "--input", f"x={path}"], capsys)
    assert code == 2 and "line 16 is longer than 1,048,576 characters" in err, err


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this system")
def test_a_text_input_that_never_ends_a_line_is_refused(tmp_path):
    """x.txt a link to /dev/zero (endless, no newline): refused after 1 MiB, in a new process
    (the timeout is only a guard against a hang, never the verdict)."""
    (tmp_path / "x.txt").symlink_to("/dev/zero")
    p = subprocess.run([sys.executable, "-m", "sonnx", "run", MODEL, "--input", f"x={tmp_path / 'x.txt'}"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "line 1 is longer than" in p.stderr, p.stderr
