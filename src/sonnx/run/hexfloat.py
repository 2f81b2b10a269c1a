"""Hex-float text: one value per line, bit-exact, as C writes and reads it.

Floats are written as glibc's ``printf("%a", (double)x)`` writes them (``0x1.8p+1``, ``-0x0p+0``,
``0x1p-149``, ``inf``, ``-inf``, ``nan``, ``-nan``): every float16, bfloat16, float and double
value is a double, so the text is its exact value and ``strtod`` (then a conversion to the type,
exact because the value is representable) or ``strtof`` gives back the same bits. What the text
does not keep: a NaN's payload (its sign is kept; reading ``nan`` gives the type's default quiet
NaN). The .npy files keep every bit. Integers are decimal.

Reading is strict, never a rounding: a line must be a hex float (or inf/nan), or for an integer
type a decimal integer, and its value must be exactly one of the type's values; otherwise
``TextError`` names the line.
"""
from __future__ import annotations

import re

import numpy as np

from .. import dtypes

_HEX = re.compile(r"([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?[0-9]+))?")
_INT = re.compile(r"[+-]?[0-9]+")
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
    """The double a hex-float literal denotes, refusing any that a double cannot hold exactly."""
    m = _HEX.fullmatch(text)
    if m is None or not (m.group(2) or m.group(3)):
        raise TextError("is not a hex float (write values as C's printf(\"%a\") does, e.g. 0x1.8p+1, "
                        "-0x0p+0, inf, nan)")
    whole, frac, exp = m.group(2), m.group(3) or "", m.group(4) or "0"
    digits = int(whole + frac or "0", 16)
    shift = int(exp) - 4 * len(frac)
    if abs(shift) > 100000:
        raise TextError("has an exponent far out of range")
    try:
        value = float.fromhex(text)
    except OverflowError:
        raise TextError("is too large for a double") from None
    # float.fromhex rounds quietly (too many digits, underflow); the input must be exact
    num, den = abs(value).as_integer_ratio()
    exact = (digits * den << shift == num) if shift >= 0 else (digits * den == num << -shift)
    if not exact:
        raise TextError("is not exactly a double (it would be rounded); sonnx never rounds an input")
    return value      # float.fromhex keeps the sign, of a zero too


def _float_line(text: str, name: str) -> float:
    low = text.lower()
    if low in _SPECIAL:
        return _SPECIAL[low]
    if low in ("nan", "+nan", "-nan"):
        return np.nan if low != "-nan" else -np.nan
    return _hex_value(text)


def parse_lines(lines: list[str], name: str) -> np.ndarray:
    """The values of ``lines`` (one per line, surrounding blanks ignored) as a flat array of the
    ONNX type ``name``; TextError("line N: ...") for the first line that is not one of its values."""
    dt = dtypes.numpy_dtype(name)
    if dtypes.is_float(name):
        values, nan_signs = [], {}
        for i, line in enumerate(lines, 1):
            text = line.strip()
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
            raise TextError(f"line {i + 1}: {lines[i].strip()[:40]!r} is not a {name} value (it would be "
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
        text = line.strip()
        if _INT.fullmatch(text) is None:
            raise TextError(f"line {i}: {text[:40]!r} is not a decimal integer (the input is {name})")
        v = int(text)
        if not info.min <= v <= info.max:
            raise TextError(f"line {i}: {text[:40]!r} is out of {name}'s range [{info.min}, {info.max}]")
        values.append(v)
    return np.array(values, dtype=dt)
