"""Hex-float text (sonnx.run.hexfloat): every value round-trips bit for bit (NaN: sign kept,
payload not, as documented), C's strtod/strtof read what we write, glibc's printf("%a") writes
the same text, and lines that are not exactly a value of the type are refused."""
from __future__ import annotations

import ctypes
import ctypes.util

import ml_dtypes
import numpy as np
import pytest

from sonnx.run import hexfloat

# random bit patterns hold signalling NaNs, which numpy warns about when it widens them
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")
UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
TYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float": np.float32, "double": np.float64}


def mismatches(a: np.ndarray, name: str) -> np.ndarray:
    """Indices where writing then reading ``a`` does not give its bits back (a NaN must come back
    a NaN of the same sign)."""
    back = hexfloat.parse_lines(hexfloat.format_array(a).splitlines(), name)
    u = UINT[a.dtype.itemsize]
    ba, bb = a.view(u), back.view(u)
    nan = np.isnan(a.astype(np.float64))
    same = (ba == bb) | (nan & np.isnan(back.astype(np.float64)) & (np.signbit(a.astype(np.float64))
                                                                       == np.signbit(back.astype(np.float64))))
    return np.flatnonzero(~same)


def every_16_bit(name: str) -> np.ndarray:
    return np.arange(65536, dtype=np.uint16).view(TYPES[name])


def edges_and_random(name: str, n: int = 20000) -> np.ndarray:
    dt = TYPES[name]
    u = UINT[np.dtype(dt).itemsize]
    rng = np.random.default_rng(15)
    info = np.finfo(dt)
    edges = np.array([0.0, -0.0, 1.0, -1.0, info.max, -info.max, info.tiny, -info.tiny,
                      info.smallest_subnormal, -info.smallest_subnormal, 3 * info.smallest_subnormal,
                      info.eps, 1 / 3, np.inf, -np.inf], dtype=dt)
    bits = rng.integers(0, np.iinfo(u).max, size=n, dtype=u, endpoint=True)
    return np.concatenate([edges, bits.view(dt)])


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_every_16_bit_value_round_trips(name):
    assert mismatches(every_16_bit(name), name).size == 0


@pytest.mark.parametrize("name", ["float", "double"])
def test_edge_and_random_values_round_trip(name):
    values = edges_and_random(name)
    assert np.count_nonzero(np.isnan(values.astype(np.float64))) > 0     # random bits hold NaNs
    assert mismatches(values, name).size == 0


def test_nan_keeps_its_sign_and_loses_its_payload():
    a = np.array([0x7FC00001, 0xFFC00000, 0x7F800001], np.uint32).view(np.float32)
    assert hexfloat.format_array(a) == "nan\n-nan\nnan\n"
    back = hexfloat.parse_lines(["nan", "-nan"], "float").view(np.uint32)
    assert back.tolist() == [0x7FC00000, 0xFFC00000]


def test_the_round_trip_check_catches_a_writer_that_rounds_through_float32(monkeypatch):
    """A planted fault: a writer that passes every value through float32 first."""
    values = edges_and_random("double", 2000)
    assert mismatches(values, "double").size == 0
    real = hexfloat.format_float
    monkeypatch.setattr(hexfloat, "format_float", lambda x: real(float(np.float32(x))))
    with np.errstate(over="ignore"):
        assert mismatches(values, "double").size > 1000


# ---------------------------------------------------------------- C reads and writes the same text
def _libc():
    name = ctypes.util.find_library("c")
    if name is None:
        pytest.skip("no C library found by ctypes.util.find_library('c')")
    libc = ctypes.CDLL(name)
    libc.strtod.restype, libc.strtod.argtypes = ctypes.c_double, [ctypes.c_char_p, ctypes.c_void_p]
    libc.strtof.restype, libc.strtof.argtypes = ctypes.c_float, [ctypes.c_char_p, ctypes.c_void_p]
    return libc


@pytest.mark.parametrize("name,fn", [("double", "strtod"), ("float", "strtof")])
def test_c_strtod_and_strtof_read_what_we_write(name, fn):
    libc = _libc()
    values = edges_and_random(name, 5000)
    u = UINT[values.dtype.itemsize]
    read = getattr(libc, fn)
    for v, line in zip(values, hexfloat.format_array(values).splitlines()):
        got = np.array(read(line.encode(), None), dtype=values.dtype)
        if np.isnan(v):
            assert np.isnan(got) and np.signbit(got) == np.signbit(v), line
        else:
            assert got.view(u) == np.array(v).view(u), (line, v, got)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_c_strtod_reads_every_16_bit_value_exactly(name):
    libc = _libc()
    values = every_16_bit(name)
    finite = values[np.isfinite(values.astype(np.float64))]
    for v, line in zip(finite, hexfloat.format_array(finite).splitlines()):
        assert libc.strtod(line.encode(), None) == float(v) and \
            np.signbit(libc.strtod(line.encode(), None)) == np.signbit(float(v)), line


def test_we_write_what_glibc_printf_a_writes():
    libc = _libc()
    buf = ctypes.create_string_buffer(64)
    libc.snprintf.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_double]
    values = edges_and_random("double", 3000)
    for v in values[np.isfinite(values)]:
        libc.snprintf(buf, 64, b"%a", ctypes.c_double(float(v)))
        assert hexfloat.format_float(float(v)) == buf.value.decode(), v


# ---------------------------------------------------------------- refusals: never a rounding
@pytest.mark.parametrize("line,name,words", [
    ("0x1.0000001p+0", "float", "would be rounded"),          # between two floats
    ("0x1p-150", "float", "would be rounded"),                # below float's smallest subnormal
    ("0x1p+128", "float", "would be rounded"),                # overflows float
    ("0x1.00000000000001p+0", "double", "not exactly a double"),
    ("0x1p-1075", "double", "not exactly a double"),
    ("0x1p+1024", "double", "too large"),
    ("0x1.002p+0", "bfloat16", "would be rounded"),
    ("1.5", "float", "is not a hex float"),
    ("0x", "float", "is not a hex float"),
    ("0xg", "float", "is not a hex float"),
    ("", "float", "is not a hex float"),
    ("1.5", "int32", "not a decimal integer"),
    ("2147483648", "int32", "out of int32's range"),
    ("-1", "uint8", "out of uint8's range"),
])
def test_a_line_that_is_not_exactly_a_value_is_refused(line, name, words):
    with pytest.raises(hexfloat.TextError, match=words) as exc:
        hexfloat.parse_lines(["0x1p+0" if "int" not in name else "1", line], name)
    assert str(exc.value).startswith("line 2: ")


def test_integers_are_decimal_and_exact():
    got = hexfloat.parse_lines(["18446744073709551615", "0", " 7 "], "uint64")
    assert got.tolist() == [2**64 - 1, 0, 7]
    assert hexfloat.format_array(got) == "18446744073709551615\n0\n7\n"
    assert hexfloat.parse_lines(["-9223372036854775808"], "int64").tolist() == [-2**63]
