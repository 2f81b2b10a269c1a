"""Hex-float text: one value per line, bit-exact, as C writes and reads it.

Floats are written as glibc's ``printf("%a", (double)x)`` writes them (``0x1.8p+1``, ``-0x0p+0``,
``0x1p-149``, ``inf``, ``-inf``, ``nan``, ``-nan``): every float16, bfloat16, float and double
value is a double, so the text is its exact value and ``strtod`` (then a conversion to the type,
exact because the value is representable) or ``strtof`` gives back the same bits. What the text
does not keep: a NaN's payload (its sign is kept; reading ``nan`` gives the type's default quiet
NaN). The .npy files keep every bit. Integers are decimal.

Reading is strict, never a rounding: a line must be a hex float (or inf/nan), or for an integer
type a decimal integer, and its value must be exactly one of the type's values; otherwise
``TextError`` names the line. Every numeric field is bounded on its text before any conversion
(so no line, however long, reaches Python's 4,300-digit ``int()`` limit or a huge shift), and
the value of an accepted line is computed exactly from its digits, never through a rounding
reader. The grammar (surrounding spaces and tabs ignored, case-insensitive):

    hex float  [+-]? 0x MANTISSA (p [+-]? EXPONENT)?     MANTISSA: H* (. H*)?, >= 1 hex digit
    special    [+-]? (inf | infinity | nan)
    integer    [+-]? D+                                    (integer types only)

MANTISSA holds at most ``MAX_MANTISSA_DIGITS`` hex digits (both sides of the point, leading and
trailing zeros counted), EXPONENT at most ``MAX_EXPONENT_DIGITS`` decimal digits and an integer
at most ``MAX_INTEGER_DIGITS`` (leading zeros counted in both). Within those, any text whose
value is exactly one of the type's values is read, e.g. ``0x1.8000p+0001`` or
``0x0.0000000000001p-1022``.
"""
from __future__ import annotations

import math
import re

import numpy as np

from .. import dtypes

_HEX = re.compile(r"([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?)([0-9]+))?")
_INT = re.compile(r"[+-]?([0-9]+)")
# The bounds, on the text, before any conversion. A double written in fixed point (exponent 0)
# needs at most 256 hex digits before the point (2^1023) and 269 after it (2^-1074), so 1,024
# leave room for padding zeros; such a mantissa needs exponents up to about 4 * 1,024 + 1,074,
# 8 digits leave room for leading zeros; a 64-bit integer has at most 20 digits.
MAX_MANTISSA_DIGITS = 1024
MAX_EXPONENT_DIGITS = 8
MAX_INTEGER_DIGITS = 32
BLANKS = " \t"          # around a value; any other character is part of the line
# a double: significand of 53 bits, largest bit 2^1023, smallest 2^-1074 (the smallest subnormal)
_DOUBLE_BITS, _DOUBLE_TOP, _DOUBLE_LOW = 53, 1023, -1074
_SPECIAL = {"inf": np.inf, "+inf": np.inf, "infinity": np.inf, "+infinity": np.inf,
            "-inf": -np.inf, "-infinity": -np.inf}
# the default quiet NaN of each type, as bits (what reading "nan" gives; "-nan" sets the sign)
_QNAN = {"float16": 0x7E00, "bfloat16": 0x7FC0, "float": 0x7FC00000, "double": 0x7FF8000000000000}
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


class TextError(ValueError):
    """A line that is not a value of the expected type."""


def format_float(x: float) -> str:
    """``x`` as glibc's printf("%a") writes a double."""
    if x != x:
        return "-nan" if np.signbit(x) else "nan"
    if x in (np.inf, -np.inf):
        return "inf" if x > 0 else "-inf"
    sign, rest = ("-", x.hex()[1:]) if x.hex().startswith("-") else ("", x.hex())
    mantissa, exponent = rest[2:].split("p")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{sign}0x{mantissa}p{exponent}"


def format_array(a: np.ndarray) -> str:
    """Every element of ``a`` in row-major order, one per line (text ends with a newline)."""
    name = dtypes.name_of(a.dtype)
    flat = np.ascontiguousarray(a).reshape(-1)
    if dtypes.is_float(name):
        with np.errstate(invalid="ignore"):    # a signalling NaN warns when widened; it stays a NaN
            lines = map(format_float, flat.astype(np.float64).tolist())   # exact: every value is a double
    else:
        lines = map(str, flat.tolist())
    return "".join(line + "\n" for line in lines)


def _hex_value(text: str) -> float:
    """The double a hex-float literal denotes, refusing any that a double cannot hold exactly.
    The fields' lengths are checked first; the value is then built from the digits, exactly."""
    m = _HEX.fullmatch(text)
    if m is None or not (m.group(2) or m.group(3)):
        raise TextError("is not a hex float (write values as C's printf(\"%a\") does, e.g. 0x1.8p+1, "
                        "-0x0p+0, inf, nan)")
    sign, whole, frac, exp_sign, exp_digits = m.group(1), m.group(2), m.group(3) or "", m.group(4), m.group(5)
    if len(whole) + len(frac) > MAX_MANTISSA_DIGITS:
        raise TextError(f"has a mantissa of {len(whole) + len(frac)} hex digits, too long: sonnx reads at most "
                        f"{MAX_MANTISSA_DIGITS} (a double needs 14, as printf(\"%a\") writes it)")
    if exp_digits is not None and len(exp_digits) > MAX_EXPONENT_DIGITS:
        raise TextError(f"has an exponent of {len(exp_digits)} digits, too long: sonnx reads at most "
                        f"{MAX_EXPONENT_DIGITS} (printf(\"%a\") writes at most 4)")
    digits = int(whole + frac, 16)              # at most 1,024 hex digits: no int() limit for base 16
    exponent = int(exp_sign + exp_digits) if exp_digits is not None else 0    # at most 8 digits
    if digits == 0:
        return -0.0 if sign == "-" else 0.0
    shift = exponent - 4 * len(frac)            # value = digits * 2^shift
    low_zeros = (digits & -digits).bit_length() - 1
    top, low = shift + digits.bit_length() - 1, shift + low_zeros   # its highest and lowest 1 bits
    if top > _DOUBLE_TOP:
        raise TextError(f"is too large for a double: its exponent is out of range (2^{top}; the "
                        f"largest double is below 2^{_DOUBLE_TOP + 1})")
    if top < _DOUBLE_LOW:
        raise TextError(f"is not exactly a double (it would be rounded): its exponent is out of range "
                        f"(below 2^{_DOUBLE_LOW}, the smallest positive double); sonnx never rounds an input")
    if low < _DOUBLE_LOW:
        raise TextError(f"is not exactly a double (it would be rounded): it has a 1 bit at 2^{low}, a "
                        f"double none below 2^{_DOUBLE_LOW}; sonnx never rounds an input")
    if top - low + 1 > _DOUBLE_BITS:
        raise TextError(f"is not exactly a double (it would be rounded): its 1 bits span {top - low + 1} "
                        f"binary places, a double holds {_DOUBLE_BITS}; sonnx never rounds an input")
    value = math.ldexp(float(digits >> low_zeros), low)   # < 2^53 times a power of 2 in range: exact
    return -value if sign == "-" else value


def _float_line(text: str, name: str) -> float:
    low = text.lower()
    if low in _SPECIAL:
        return _SPECIAL[low]
    if low in ("nan", "+nan", "-nan"):
        return np.nan if low != "-nan" else -np.nan
    return _hex_value(text)


def parse_lines(lines: list[str], name: str) -> np.ndarray:
    """The values of ``lines`` (one per line, surrounding spaces and tabs ignored) as a flat array of the
    ONNX type ``name``; TextError("line N: ...") for the first line that is not one of its values."""
    dt = dtypes.numpy_dtype(name)
    if dtypes.is_float(name):
        values, nan_signs = [], {}
        for i, line in enumerate(lines, 1):
            text = line.strip(BLANKS)
            try:
                v = _float_line(text, name)
            except TextError as exc:
                raise TextError(f"line {i}: {text[:40]!r} {exc}") from None
            if v != v:
                nan_signs[i - 1] = text.startswith("-")
            values.append(v)
        wide = np.array(values, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            out = wide.astype(dt)
            back = out.astype(np.float64)
        bad = np.flatnonzero(~((back == wide) | np.isnan(wide)))
        if bad.size:
            i = int(bad[0])
            raise TextError(f"line {i + 1}: {lines[i].strip(BLANKS)[:40]!r} is not a {name} value (it would be "
                            f"rounded to {format_float(float(back[i]))}); sonnx never rounds an input")
        if nan_signs:
            bits = out.view(_UINT[dt.itemsize])
            top = 1 << (8 * dt.itemsize - 1)
            for i, negative in nan_signs.items():
                bits[i] = _QNAN[name] | (top if negative else 0)
        return out
    info = np.iinfo(dt)
    values = []
    for i, line in enumerate(lines, 1):
        text = line.strip(BLANKS)
        m = _INT.fullmatch(text)
        if m is None:
            raise TextError(f"line {i}: {text[:40]!r} is not a decimal integer (the input is {name})")
        if len(m.group(1)) > MAX_INTEGER_DIGITS:
            raise TextError(f"line {i}: {text[:40]!r} has {len(m.group(1))} digits, too long: sonnx reads "
                            f"integers of at most {MAX_INTEGER_DIGITS} digits ({name}'s range is "
                            f"[{info.min}, {info.max}])")
        v = int(text)                              # at most 32 digits: far below int()'s limit
        if not info.min <= v <= info.max:
            raise TextError(f"line {i}: {text[:40]!r} is out of {name}'s range [{info.min}, {info.max}]")
        values.append(v)
    return np.array(values, dtype=dt)
