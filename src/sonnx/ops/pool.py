"""The shared layer of the pooling operators (kind "pool"): window geometry, the attribute
checks every pooling operator states under its own requirement IDs, the strided tap views the
numpy kernels fold over, and the plain-Python window walk the reference kernels fold over.

Names no operator: each operator module passes its op_type, version and rule IDs in.

Geometry, per spatial axis i (d input length, k kernel, s stride, e dilation, pb/pe the explicit
pads at the beginning and end): the window of output position o has the k taps
``o*s - pb + j*e`` for j = 0..k-1; a tap in [0, d) reads the input, any other reads padding.
The output length is ``floor((d + pb + pe - ((k-1)*e + 1)) / s) + 1``; with ceil_mode, the
ceiling instead, less one when the last window would start at or after ``d + pb`` (it must
start inside the input or the left padding: onnx.reference's MaxPool and onnxruntime's rule).
A window is the product of its axes' taps, walked in row-major order of (j0, j1, ...): the
"window order" the operators' results are defined by.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from ..deferred import numpy as np  # imported on first use: the validator needs no numpy

from ..errors import Violation


@dataclass(frozen=True)
class Geometry:
    """An accepted pooling window over an input of shape (N, C, d0, ...)."""
    shape: tuple[int, ...]              # the input's shape
    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    begins: tuple[int, ...]             # pads at the beginning of each spatial axis
    ends: tuple[int, ...]               # pads at the end of each spatial axis
    out: tuple[int, ...]                # the output's spatial shape

    @property
    def spatial(self) -> tuple[int, ...]:
        return self.shape[2:]

    @property
    def out_shape(self) -> tuple[int, ...]:
        return self.shape[:2] + self.out

    def taps(self) -> list[tuple[int, ...]]:
        """The kernel offsets (j0, j1, ...) in window order (row-major)."""
        return list(itertools.product(*(range(k) for k in self.kernel)))

    def positions(self, axis: int, o: int) -> list[int]:
        """The input coordinates of output position ``o``'s taps along ``axis`` (may be
        outside [0, d): padding)."""
        s, e, pb = self.strides[axis], self.dilations[axis], self.begins[axis]
        return [o * s - pb + j * e for j in range(self.kernel[axis])]


def out_length(d: int, k: int, s: int, e: int, pb: int, pe: int, ceil_mode: int) -> int:
    """The output length along one axis (the module docstring's rule); <= 0: no window fits."""
    span = d + pb + pe - ((k - 1) * e + 1)
    if span < 0:
        return 0
    if not ceil_mode:
        return span // s + 1
    o = -(-span // s) + 1
    if (o - 1) * s >= d + pb:       # the last window would start in the end padding
        o -= 1
    return o


AUTO_PADS = ("SAME_UPPER", "SAME_LOWER", "VALID")     # the auto_pad values that mean pads


# req: @attributes
def auto_pads(mode: str, spatial: tuple[int, ...], kernel: tuple[int, ...], strides=None, dilations=None,
              ceil_mode: int = 0) -> tuple[int, ...] | str:
    """The explicit pads (the begins, then the ends: ONNX's layout) that auto_pad ``mode`` means
    over the static ``spatial`` shape, or a str saying why no explicit pads are known to give
    the same windows (``sonnx conform`` writes them; its bit check runs the model both ways).

    ONNX's text (MaxPool-22, AveragePool-22, Conv-22), per axis, k_e = (k - 1) * e + 1: VALID
    pads nothing, and gives floor((d - k_e) / s) + 1 outputs with or without ceil_mode;
    SAME_UPPER and SAME_LOWER give ceil(d / s) outputs and pad (out - 1) * s + k_e - d in
    total, half each side, the odd one at the end (SAME_UPPER) or the beginning (SAME_LOWER).
    Left as written, with the reason: a negative total (the profile's pads are >= 0; onnxruntime
    then moves the windows), a dilation > 1 under SAME (onnxruntime 1.32 refuses it for Conv and
    leaves the dilation out of the pools' pads, so no runtime confirms ONNX's formula), and an
    explicit output length (out_length, with ceil_mode) that is not ONNX's auto_pad length
    (VALID with ceil_mode 1 where s does not divide d - k_e: onnxruntime takes the partial
    window, ONNX's text does not)."""
    n = len(spatial)
    strides = tuple(strides) if strides is not None else (1,) * n
    dilations = tuple(dilations) if dilations is not None else (1,) * n
    if mode not in AUTO_PADS:
        return f"auto_pad={mode!r} is none of {', '.join(AUTO_PADS)}"
    if not (len(kernel) == len(strides) == len(dilations) == n) or n == 0:
        return (f"kernel_shape ({len(kernel)} entries), strides ({len(strides)}) and dilations "
                f"({len(dilations)}) do not have one entry per spatial axis of the input ({n})")
    if min(kernel + strides + dilations) < 1 or min(spatial) < 1:
        return "kernel_shape, strides, dilations and the spatial dimensions must be at least 1"
    begins, ends = [], []
    for i, (d, k, s, e) in enumerate(zip(spatial, kernel, strides, dilations)):
        span = (k - 1) * e + 1
        if mode == "VALID":
            if d < span:
                return f"along spatial axis {i} the window ({span}) is longer than the input ({d})"
            out, total = (d - span) // s + 1, 0
        else:
            if e != 1:
                return (f"dilation {e} along spatial axis {i} under {mode}: onnxruntime 1.32 refuses it "
                        "for a convolution and leaves the dilation out of a pooling window's pads, so "
                        "no runtime confirms ONNX's formula: write the pads explicitly")
            out = -(-d // s)
            total = (out - 1) * s + span - d
            if total < 0:
                return (f"along spatial axis {i} ONNX's formula gives a negative total pad ({total}: "
                        f"input {d}, kernel {k}, stride {s}); the profile's pads are at least 0")
        small, big = total // 2, total - total // 2
        b, t = (small, big) if mode != "SAME_LOWER" else (big, small)
        if out_length(d, k, s, e, b, t, ceil_mode) != out:
            return (f"along spatial axis {i} the pads ({b}, {t}) with ceil_mode={ceil_mode} give "
                    f"{out_length(d, k, s, e, b, t, ceil_mode)} outputs where ONNX's text for {mode} "
                    f"gives {out} (onnxruntime takes the partial last window, ONNX's text does not)")
        begins.append(b)
        ends.append(t)
    return tuple(begins + ends)


def _spatial_axes(inputs: tuple, attrs: dict) -> int | str:
    """How many spatial axes the node has: kernel_shape's length, else the input's rank - 2."""
    kernel = attrs.get("kernel_shape")
    if isinstance(kernel, (list, tuple)) and kernel:
        return len(kernel)
    x = inputs[0] if inputs else None
    if x is not None and len(x) >= 3:
        return len(x) - 2
    return "the number of spatial axes is unknown (no kernel_shape, no input rank)"


def default_strides(inputs: tuple, attrs: dict, opset: int, constants: tuple = ()) -> list[int] | str:
    """ONNX's default strides (ConformRule.defaults): 1 along each spatial axis."""
    n = _spatial_axes(inputs, attrs)
    return n if isinstance(n, str) else [1] * n


def default_pads(inputs: tuple, attrs: dict, opset: int, constants: tuple = ()) -> list[int] | str:
    """ONNX's default pads with auto_pad NOTSET (ConformRule.defaults): 0 at each end of each
    spatial axis."""
    n = _spatial_axes(inputs, attrs)
    return n if isinstance(n, str) else [0] * (2 * n)


# the window attributes conform writes with ONNX's default (the registry's ConformRule.defaults)
DEFAULTS = {"strides": default_strides, "pads": default_pads}


def empty_windows(d: int, k: int, s: int, e: int, pb: int, o_len: int) -> list[int]:
    """The output positions along one axis whose window has no tap in [0, d)."""
    return [o for o in range(o_len) if not any(0 <= o * s - pb + j * e < d for j in range(k))]


def _ints(value: object) -> tuple[int, ...] | None:
    """An INTS attribute as a tuple of ints, or None when it is not one."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, np.ndarray)):
        return None
    out = []
    for v in value:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            return None
        out.append(int(v))
    return tuple(out)


def _int(value: object) -> int | None:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)


def auto_pad_text(value: object) -> str | None:
    """auto_pad as text (the validator reads STRING attributes as str, onnx.helper gives bytes)."""
    if isinstance(value, bytes):
        try:
            return value.decode("ascii")
        except UnicodeDecodeError:
            return None
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Rules:
    """The requirement IDs one operator states the shared checks under."""
    window: str          # kernel_shape, strides, pads, dilations, ceil_mode, auto_pad, geometry


# req: @attributes
def window_violations(node: str, shape: tuple | None, attrs: dict, rules: Rules, *,
                      dilations: bool, ceil: bool) -> tuple[list[Violation], Geometry | None]:
    """Every violation of the window attributes of a pooling node (``node`` names it, e.g.
    "<op>-<version>") on an input of ``shape`` (None or not static: only the attributes are
    judged), and the geometry when there is none. ``dilations`` / ``ceil``: the version has
    those attributes.

    Decisions: kernel_shape, strides and pads are required (GR4: they decide the result, and a
    reader should not need ONNX's defaults); dilations (default all 1) and ceil_mode (default 0)
    may be omitted, read as the plain window; auto_pad must be NOTSET (or omitted)."""
    r = rules.window
    found: list[Violation] = []
    got = {}
    for name in ("kernel_shape", "strides", "pads"):
        value = attrs.get(name)
        if value is None:
            way = {"kernel_shape": "ONNX requires it",
                   "strides": "write strides=[1, ...] for ONNX's default (`sonnx conform` writes it)",
                   "pads": "write pads=[0, ...] for ONNX's default (`sonnx conform` writes it, or the "
                           "pads an auto_pad means)"}[name]
            found.append(Violation(r, f"{node} does not write its {name} attribute; the profile reads "
                                      f"no default for an attribute that decides the window: {way}"))
            continue
        got[name] = _ints(value)
        if got[name] is None:
            found.append(Violation(r, f"{node} has {name}={value!r}; it must be a list of integers (INTS)"))
    if dilations and attrs.get("dilations") is not None:
        got["dilations"] = _ints(attrs["dilations"])
        if got["dilations"] is None:
            found.append(Violation(r, f"{node} has dilations={attrs['dilations']!r}; it must be a list of integers (INTS)"))
    elif not dilations and attrs.get("dilations") is not None:
        found.append(Violation(r, f"{node} has no dilations attribute; import a later opset"))
    ceil_mode = 0
    if attrs.get("ceil_mode") is not None:
        ceil_mode = _int(attrs["ceil_mode"])
        if not ceil:
            found.append(Violation(r, f"{node} has no ceil_mode attribute; import opset 10 or later"))
        elif ceil_mode not in (0, 1):
            found.append(Violation(r, f"{node} has ceil_mode={attrs['ceil_mode']!r}; it must be 0 or 1"))
    pad_mode = attrs.get("auto_pad")
    if pad_mode is not None and auto_pad_text(pad_mode) != "NOTSET":
        found.append(Violation(r, f"{node} has auto_pad={pad_mode!r}; the profile takes explicit pads "
                                  "only (auto_pad NOTSET): write the pads that SAME_UPPER, SAME_LOWER or "
                                  "VALID mean for this input's shape, with auto_pad omitted or NOTSET "
                                  "(`sonnx conform` writes them for a static input shape, except for a "
                                  "dilation > 1 under SAME or a partial last window under ceil_mode)"))
    if found or got.get("kernel_shape") is None:
        return found, None
    kernel = got["kernel_shape"]
    n = len(kernel)
    strides, pads = got["strides"], got["pads"]
    dil = got.get("dilations") or (1,) * n
    if n == 0:
        found.append(Violation(r, f"{node} has an empty kernel_shape; it needs one entry per spatial axis"))
    if len(strides) != n or len(dil) != n or len(pads) != 2 * n:
        found.append(Violation(r, f"{node} has kernel_shape of {n} entries, strides of {len(strides)}, "
                                  f"dilations of {len(dil)} and pads of {len(pads)}; they need n, n, n and 2n "
                                  "entries for n spatial axes"))
    for name, vals, low in (("kernel_shape", kernel, 1), ("strides", strides, 1), ("dilations", dil, 1),
                            ("pads", pads, 0)):
        if any(v < low for v in vals):
            found.append(Violation(r, f"{node} has {name}={list(vals)}; every entry must be at least {low}"))
    if found:
        return found, None
    static = shape is not None and all(isinstance(d, int) and not isinstance(d, bool) for d in shape)
    if not static:
        return [], None
    if len(shape) != n + 2:
        return [Violation(r, f"{node} has a kernel of {n} spatial axes on an input of rank {len(shape)}; "
                             f"the input must be (N, C, d1, ..., d{n}), rank {n + 2}")], None
    begins, ends = pads[:n], pads[n:]
    out = []
    for i in range(n):
        d = shape[2 + i]
        o = out_length(d, kernel[i], strides[i], dil[i], begins[i], ends[i], ceil_mode)
        if o <= 0:
            found.append(Violation(r, f"{node}: along spatial axis {i} the window ((kernel-1)*dilation+1 = "
                                      f"{(kernel[i] - 1) * dil[i] + 1}) is longer than the padded input "
                                      f"({d} + {begins[i]} + {ends[i]}); no output position exists"))
            continue
        empty = empty_windows(d, kernel[i], strides[i], dil[i], begins[i], o)
        if empty:
            found.append(Violation(r, f"{node}: along spatial axis {i} the windows at output positions "
                                      f"{empty[:5]} read padding only (pads {begins[i]}, {ends[i]}, "
                                      f"kernel {kernel[i]}, dilation {dil[i]}, stride {strides[i]}); the profile "
                                      "defines no result for a window without an input element: reduce the pads"))
        out.append(o)
    if found:
        return found, None
    return [], Geometry(tuple(shape), kernel, strides, dil, begins, ends, tuple(out))


# ---------------------------------------------------------------- numpy: the taps as strided views
def padded(x: np.ndarray, g: Geometry, fill) -> np.ndarray:
    """x extended along each spatial axis to cover every tap of every window: ``fill`` at
    the positions outside the input (the caller's masks or fill decide what they mean)."""
    widths = [(0, 0), (0, 0)]
    for i, d in enumerate(g.spatial):
        last = (g.out[i] - 1) * g.strides[i] - g.begins[i] + (g.kernel[i] - 1) * g.dilations[i]
        widths.append((g.begins[i], max(0, last + 1 - d)))
    if all(w == (0, 0) for w in widths):
        return x
    return np.pad(x, widths, mode="constant", constant_values=fill)


def tap_view(p: np.ndarray, g: Geometry, tap: tuple[int, ...]) -> np.ndarray:
    """The (N, C, *out) view of the padded input read by kernel offset ``tap`` in every window."""
    index = [slice(None), slice(None)]
    for i, j in enumerate(tap):
        start = j * g.dilations[i]
        index.append(slice(start, start + (g.out[i] - 1) * g.strides[i] + 1, g.strides[i]))
    return p[tuple(index)]


def axis_inside(g: Geometry, axis: int, j: int, lo: int = 0, hi: int | None = None) -> np.ndarray:
    """For kernel offset ``j`` along ``axis``: which output positions' tap lies in [lo, hi)
    (default [0, d), the input), as a boolean vector of the output length."""
    hi = g.spatial[axis] if hi is None else hi
    pos = np.arange(g.out[axis]) * g.strides[axis] - g.begins[axis] + j * g.dilations[axis]
    return (pos >= lo) & (pos < hi)


# ---------------------------------------------------------------- plain Python: the window walk
def window_values(data: list, g: Geometry, nc: int, out_index: tuple[int, ...]) -> list:
    """The input values of one window, in window order, padding taps left out: ``data`` is the
    flat row-major input, ``nc`` the flat (n, c) plane index, ``out_index`` the window's
    spatial position."""
    plane = 1
    for d in g.spatial:
        plane *= d
    vals = []
    for tap in g.taps():
        coords = [o * g.strides[i] - g.begins[i] + j * g.dilations[i]
                  for i, (o, j) in enumerate(zip(out_index, tap))]
        if all(0 <= c < d for c, d in zip(coords, g.spatial)):
            flat = 0
            for c, d in zip(coords, g.spatial):
                flat = flat * d + c
            vals.append(data[nc * plane + flat])
    return vals


def windows_with_padding_count(g: Geometry, out_index: tuple[int, ...]) -> int:
    """The taps of a window inside the input or the explicit pads (not beyond the end pad, where
    ceil_mode's last window may reach)."""
    count = 1
    for i, o in enumerate(out_index):
        d, pb, pe = g.spatial[i], g.begins[i], g.ends[i]
        count *= sum(1 for c in g.positions(i, o) if -pb <= c < d + pe)
    return count


# ---------------------------------------------------------------- averages (the fold, then one division)
def counts(g: Geometry, include_pad: bool) -> np.ndarray:
    """Each window's divisor, shaped (1, 1, *out): its input taps, or with ``include_pad`` its
    taps inside the input or the explicit pads (not those beyond the end pad, which ceil_mode's
    last window may reach)."""
    n = len(g.kernel)
    total = np.ones((1, 1) + g.out, dtype=np.int64)
    for i in range(n):
        lo, hi = (-g.begins[i], g.spatial[i] + g.ends[i]) if include_pad else (0, g.spatial[i])
        per = sum(axis_inside(g, i, j, lo, hi).astype(np.int64) for j in range(g.kernel[i]))
        total = total * per.reshape((1, 1) + tuple(len(per) if a == i else 1 for a in range(n)))
    return total


# req: @rounding
def divide_once(acc: np.ndarray, count: np.ndarray) -> np.ndarray:
    """acc / T(count), rounded once to nearest even in T (T = acc's type). For float16,
    bfloat16 and float the quotient of two T values is computed in binary64 and rounded to T:
    binary64 has at least 2p + 2 bits for their p, so this double rounding gives T's correctly
    rounded quotient (Figueroa, "When is double rounding innocuous?", 1995)."""
    divisor = count.astype(acc.dtype)                       # T(count): exact up to 2^p
    if acc.dtype == np.float64:
        return acc / divisor
    with np.errstate(all="ignore"):
        return (acc.astype(np.float64) / divisor.astype(np.float64)).astype(acc.dtype)


# req: @rounding
def window_sums(x: np.ndarray, g: Geometry) -> np.ndarray:
    """Each window's sum of its input taps in window order, each addition rounded in T, the
    fold starting at the first input tap (no start value is added): the (N, C, *out) array.

    Computed as the plain fold over every tap with the padding filled with -0: under round to
    nearest even, s + (-0) is s for every s (-0 + -0 = -0, +0 + -0 = +0, NaN stays NaN) and
    -0 + v is v for every v, so a padding tap, before or after the first input tap, changes no
    bit (proofs/averagepool.mlw, minus_zero_adds_nothing); x's byte order is native here."""
    p = padded(x, g, -0.0)
    taps = g.taps()
    acc = np.array(tap_view(p, g, taps[0]))
    with np.errstate(all="ignore"):
        for tap in taps[1:]:
            np.add(acc, tap_view(p, g, tap), out=acc)
    return acc


def average(x: np.ndarray, g: Geometry, include_pad: bool) -> np.ndarray:
    """The numpy kernel of an average over windows: window_sums, then divide_once."""
    x = x.astype(x.dtype.newbyteorder("="), copy=False)
    return divide_once(window_sums(x, g), counts(g, include_pad))


def reference_average(values: list, count: int, round_to) -> float:
    """One window's average in plain Python: the fold s = v0, s = round_to(s + v) over the
    window's input values in window order, then round_to(s / round_to(count)). Python's float
    sum or quotient of two float16/bfloat16/float values, rounded again to T, is T's correctly
    rounded one (binary64 has >= 2p + 2 bits); for double round_to is the identity."""
    s = values[0]
    for v in values[1:]:
        s = round_to(s + v)
    return round_to(s / round_to(float(count)))


def outside_order_bound(y: np.ndarray, x: np.ndarray, g: Geometry, include_pad: bool, unit: float,
                        tiny: float) -> str:
    """How run --compare judges another runtime's average (summed in its own order): "" when
    every element is within (2n + 2) * u * (sum of |x| over the window) / count + (n + 1) * tiny
    of the binary64 average (n the window's taps, u the unit roundoff of T, tiny its smallest
    subnormal), else the first element outside. A sum in any order is within (n - 1) * u * sum|x|
    of the exact one, the division adds u, and binary64's own error is far below."""
    x64 = x.astype(np.float64)
    sums = window_sums(x64, g)
    abs_sums = window_sums(np.abs(x64), g)
    c = counts(g, include_pad).astype(np.float64)
    taps = float(np.prod(g.kernel))
    exact = sums / c
    bound = (2 * taps + 2) * unit * abs_sums / c + (taps + 1) * tiny
    theirs = y.astype(np.float64)
    with np.errstate(invalid="ignore"):
        same_nan = np.isnan(theirs) & np.isnan(exact)
        inf_same = np.isinf(exact) & (theirs == exact)
        ok = same_nan | inf_same | (np.abs(theirs - exact) <= bound)
    bad = np.flatnonzero(~ok.reshape(-1))
    if bad.size == 0:
        return ""
    i = int(bad[0])
    return (f"element {i}: {theirs.reshape(-1)[i]!r} is {abs(theirs.reshape(-1)[i] - exact.reshape(-1)[i]):.3g} "
            f"from the average {exact.reshape(-1)[i]!r}, bound {bound.reshape(-1)[i]:.3g} (any summation order)")


def ulp_distance(a: np.ndarray, b: np.ndarray) -> int:
    """The largest distance in units in the last place between two arrays of one float type
    (NaN against NaN: 0; the two zeros: 0)."""
    width = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia = np.ascontiguousarray(a).view(width).astype(np.int64)
    ib = np.ascontiguousarray(b).view(width).astype(np.int64)
    top = np.int64(1) << (8 * a.dtype.itemsize - 1)
    ia = np.where(ia < 0, -(ia + top), ia)                # sign-magnitude to a monotone integer line
    ib = np.where(ib < 0, -(ib + top), ib)
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    d = np.abs(ia - ib)
    d = np.where(np.isnan(fa) & np.isnan(fb), 0, d)
    return int(d.max()) if d.size else 0
