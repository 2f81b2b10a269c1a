"""Inputs and outputs of ``sonnx run``: .npy, .npz and hex-float text (run/hexfloat.py).

Every input is checked against the model's declaration of it: known name, every required input
given once, exact shape, exact element type. Nothing is cast or broadcast: an int64 array for a
float input is an error that says what to convert. bfloat16 has no numpy dtype of its own, so
numpy saves an ml_dtypes.bfloat16 array as 2-byte void ('|V2', the raw bits): such an array is
read as bfloat16 bits, for a bfloat16 input only (as sonnx run writes its bfloat16 outputs).

Reading is bounded before anything is converted: a .npy (alone or as an .npz member) is read
through its header first (numpy's parser, at most 10,000 bytes, no code evaluated), its type and
shape checked against the model, then exactly the declared bytes are read (so a header that
declares terabytes, or a compressed member of many megabytes, costs nothing); a pickled (object)
array is named, never unpickled. Hex-float text is bounded field by field in run/hexfloat.py.
Every dtype in a message is named by ``describe_dtype``.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import zipfile

import numpy as np

from .. import dtypes
from ..output_files import replacing
from ..text import shown_path
from . import hexfloat
from .executor import InputSpec

TEXT_SUFFIXES = (".txt", ".hex")


class InputError(ValueError):
    """An input file that cannot be used; the message is one line saying what to do."""


def describe_dtype(dtype) -> str:
    """What an array of ``dtype`` holds, in words, for messages: a profile type by its ONNX name
    (numpy's added where it differs), anything else by what numpy stores in it. The one place
    that names a dtype in an input message, so no kind (a void, a record) is named as another."""
    dt = np.dtype(dtype)
    if dt.fields is not None:
        fields = ", ".join(f"{n}: {describe_dtype(dt.fields[n][0])}" for n in dt.names)
        return f"structured records of {dt.itemsize} bytes ({fields})"
    if dt.subdtype is not None:
        base, shape = dt.subdtype
        return f"sub-arrays of shape {shape} of {describe_dtype(base)}"
    if dt.type is np.void:              # ml_dtypes' types are kind 'V' too, but not np.void
        how = ", as numpy.save stores ml_dtypes.bfloat16" if dt.itemsize == 2 else ""
        return f"raw {dt.itemsize}-byte values (numpy void {dt.str}{how})"
    words = {"O": "Python objects", "U": "text strings", "S": "byte strings", "M": "dates and times",
             "m": "time differences", "c": "complex numbers", "b": "booleans"}.get(dt.kind)
    if words:
        return f"{words} (numpy {dt.str})"
    name, native = dtypes.name_of(dt), dt.newbyteorder("=") if dt.byteorder not in ("=", "|") else dt
    return name if name == native.name else f"{name} (numpy {native.name})"


def _is_raw_2_bytes(dt: np.dtype) -> bool:
    """Plain 2-byte void ('|V2'): what numpy.save writes for an ml_dtypes.bfloat16 array (a
    2-byte record or sub-array is something else)."""
    return dt.type is np.void and dt.itemsize == 2 and dt.fields is None and dt.subdtype is None


def _check(dt: np.dtype, shape: tuple, spec: InputSpec, where: str) -> None:
    """InputError unless an array of ``dt`` and ``shape`` is the input ``spec`` declares (no cast,
    no broadcast): for an array, and for a .npy header before any of its data is read."""
    want = dtypes.numpy_dtype(spec.dtype)
    same = (dt == want or (spec.dtype == "bfloat16" and _is_raw_2_bytes(dt))   # numpy's bfloat16 storage
            or (dt.byteorder not in ("=", "|") and dt.newbyteorder("=") == want))   # other byte order
    if not same:
        got = describe_dtype(dt)
        numbers = dt.kind in "biuf" or dtypes.name_of(dt) in dtypes.NUMERIC_TYPES   # asarray is a cast
        hint = ("an ml_dtypes.bfloat16 array saved with numpy.save, or hex-float text" if spec.dtype == "bfloat16"
                else f"numpy.asarray(x, dtype=numpy.{want.name}) if its values are exact in {spec.dtype}"
                if numbers else f"a numpy.{want.name} array of its values")
        raise InputError(f"{where}: input {spec.name} is declared {spec.dtype}, the file holds {got}; "
                         f"sonnx never casts: save it as {spec.dtype} ({hint})")
    if shape != spec.shape:
        raise InputError(f"{where}: input {spec.name} has shape {shape}, the model declares "
                         f"{spec.shape}; sonnx never broadcasts or reshapes: save it with shape {spec.shape}")


def _typed(array: np.ndarray, spec: InputSpec, where: str) -> np.ndarray:
    """``array`` as the input ``spec`` declares it, or InputError (no cast, no broadcast)."""
    _check(array.dtype, array.shape, spec, where)
    want = dtypes.numpy_dtype(spec.dtype)
    if array.dtype != want:        # bfloat16 bits, or the same values in the other byte order
        array = array.view(want) if _is_raw_2_bytes(array.dtype) else array.astype(want)
    return np.ascontiguousarray(array)


_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")          # a zip with members, an empty zip
_NPY_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def _read_npy(fp, spec: InputSpec, where: str, what: str) -> np.ndarray:
    """The array of the .npy stream ``fp``. Its header (at most numpy's 10,000 bytes, parsed
    without evaluating code) is checked against ``spec`` first, so a header that declares another
    type or shape, however large, allocates nothing; then exactly the declared bytes are read."""
    try:
        version = np.lib.format.read_magic(fp)
        if version not in _NPY_HEADERS:
            raise ValueError(f"format version {version[0]}.{version[1]}; numpy.save writes 1.0 (2.0 for a "
                             "header over 64 KiB)")
        shape, fortran, dt = _NPY_HEADERS[version](fp)
    except Exception as exc:   # noqa: BLE001  a corrupt header raises anything numpy's parser meets
        raise InputError(f"{where}: cannot read it as {what} ({_first_line(exc)})") from None
    _check(dt, shape, spec, where)
    size = int(np.prod(shape, dtype=np.int64)) * dt.itemsize      # the model's shape: a sane size
    data = fp.read(size + 1)
    if len(data) != size:
        raise InputError(f"{where}: cannot read it as {what} (its header declares {size} bytes of data, "
                         f"it holds {'more' if len(data) > size else len(data)})")
    return np.frombuffer(bytearray(data), dtype=dt).reshape(shape, order="F" if fortran else "C")


def _magic(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(6)


def _npy(path: str, spec: InputSpec) -> np.ndarray:
    where = shown_path(path)
    try:
        if _magic(path).startswith(_ZIP_MAGIC):
            raise InputError(f"{where}: is a .npz archive, not a .npy file; rename it to .npz")
        with open(path, "rb") as fh:
            return _read_npy(fh, spec, where, ".npy")
    except OSError as exc:
        raise InputError(f"{where}: cannot read it as .npy ({exc.strerror or exc})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


class _Npz:
    """A .npz archive read member by member, as numpy.load names them (a member 'x.npy' is the
    array 'x'); only the members asked for are read, each through _read_npy."""

    def __init__(self, path: str):
        self.path, self.where = path, shown_path(path)
        try:
            if _magic(path) == _NPY_MAGIC:        # numpy.load reads a .npy whatever its name
                raise InputError(f"{self.where}: is a .npy file, not a .npz archive; rename it to .npy")
            self.zip = zipfile.ZipFile(path)
        except InputError:
            raise
        except Exception as exc:   # noqa: BLE001  zipfile raises many types on a corrupt archive
            raise InputError(f"{self.where}: cannot read it as .npz ({_first_line(exc)})") from None
        self.members: dict[str, str] = {}
        for member in self.zip.namelist():
            key = member[:-4] if member.endswith(".npy") else member
            if key in self.members:
                self.zip.close()
                raise InputError(f"{self.where}: holds two arrays named {key!r}; keep one")
            self.members[key] = member

    def array(self, key: str, spec: InputSpec) -> np.ndarray:
        where = f"{self.where}[{key}]"
        try:
            with self.zip.open(self.members[key]) as fp:
                return _read_npy(fp, spec, where, ".npz")
        except InputError:
            raise
        except Exception as exc:   # noqa: BLE001  a corrupt member: zlib, CRC, truncation...
            raise InputError(f"{where}: cannot read it as .npz ({_first_line(exc)})") from None

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        self.zip.close()


# A line of text holds one value: 1,024 mantissa digits and an 8-digit exponent make about 1,040
# characters; a line over 1 MiB is refused unread (its blanks, or no newline at all, as in a
# device file), so the memory a text input takes is bounded by its number of values.
MAX_LINE_CHARS = 1 << 20


def _text(path: str, spec: InputSpec) -> np.ndarray:
    where, count = shown_path(path), int(np.prod(spec.shape, dtype=np.int64))
    kept, lines, last = [], 0, 0        # the first `count` lines; lines read; the last one not blank
    try:
        # a byte-order mark is not a value; lines end at \n, \r\n or \r (open()'s universal
        # newlines), never at the other characters str.splitlines() breaks at (\f, \v, U+2028...)
        with open(path, encoding="utf-8-sig") as fh:
            while line := fh.readline(MAX_LINE_CHARS + 1):
                lines += 1
                if len(line) > MAX_LINE_CHARS and not line.endswith("\n"):
                    raise InputError(f"{where}: line {lines} is longer than {MAX_LINE_CHARS:,} characters; "
                                     "a value needs at most about 1,040")
                line = line.removesuffix("\n")
                if line.strip(hexfloat.BLANKS):
                    last = lines
                if lines <= count:
                    kept.append(line)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{where}: cannot read it as text "
                         f"({getattr(exc, 'strerror', None) or exc})") from None
    if last != count:                   # trailing blank lines are no values
        raise InputError(f"{where}: holds {last} lines, input {spec} needs {count} "
                         "values, one per line (row-major)")
    try:
        flat = hexfloat.parse_lines(kept, spec.dtype)
    except hexfloat.TextError as exc:
        raise InputError(f"{where}: {exc}") from None
    return flat.reshape(spec.shape)


def _suffix(path: str) -> str:
    return os.path.splitext(path)[1].lower()


def _unknown(name: str, specs: dict[str, InputSpec]) -> InputError:
    known = ", ".join(str(s) for s in specs.values())
    return InputError(f"the model has no input {name!r}; its inputs: {known}")


def read_inputs(args: list[str], specs: dict[str, InputSpec]) -> dict[str, np.ndarray]:
    """The feeds of the ``--input`` arguments: ``NAME=FILE`` (.npy, .npz, .txt/.hex) or ``FILE.npz``
    (each key an input name). InputError for anything that does not match the model."""
    feeds: dict[str, np.ndarray] = {}

    def put(name: str, array: np.ndarray, where: str) -> None:
        if name not in specs:
            raise _unknown(name, specs)
        if name in feeds:
            raise InputError(f"input {name} is given twice (the second time by {where}); give it once")
        feeds[name] = _typed(array, specs[name], where)

    for arg in args:
        # NAME=FILE: NAME the longest input name the argument starts with (ONNX names and paths
        # may both hold '='); otherwise an existing file is FILE.npz, else NAME is unknown
        named = [n for n in specs if arg.startswith(n + "=")]
        if named:
            name = max(named, key=len)
            path = arg[len(name) + 1:]
        elif os.path.exists(arg) or "=" not in arg:
            name, path = "", arg
        else:
            name, _, path = arg.partition("=")
        if not path:
            raise InputError(f"--input {arg!r}: give NAME=FILE, or FILE.npz whose keys are input names")
        if not os.path.exists(path):
            raise InputError(f"{shown_path(path)}: no such file")
        if os.path.isdir(path):
            raise InputError(f"{shown_path(path)}: is a directory, not an input file")
        suffix = _suffix(path)
        if not name:
            if suffix != ".npz":
                raise InputError(f"--input {shown_path(path)}: name the input (NAME=FILE); only a .npz "
                                 "maps its keys to input names by itself")
            with _Npz(path) as archive:
                for key in archive.members:
                    if key not in specs:
                        raise _unknown(key, specs)
                    put(key, archive.array(key, specs[key]), f"{shown_path(path)}[{key}]")
            continue
        if name not in specs:
            raise _unknown(name, specs)
        if suffix == ".npy":
            put(name, _npy(path, specs[name]), shown_path(path))
        elif suffix == ".npz":
            with _Npz(path) as archive:
                if name in archive.members:
                    key = name
                elif len(archive.members) == 1:
                    (key,) = archive.members
                else:
                    raise InputError(f"{shown_path(path)}: holds {sorted(archive.members)} but no array named "
                                     f"{name}; name the key after the input")
                put(name, archive.array(key, specs[name]), f"{shown_path(path)}[{key}]")
        elif suffix in TEXT_SUFFIXES:
            put(name, _text(path, specs[name]), shown_path(path))
        else:
            raise InputError(f"{shown_path(path)}: unknown input format {suffix or '(no suffix)'!r}; "
                             "use .npy, .npz, or hex-float text .txt/.hex")
    return check_feeds(feeds, specs)


def check_feeds(feeds: dict, specs: dict[str, InputSpec]) -> dict[str, np.ndarray]:
    """The feeds checked against the model: known names, required inputs present, exact type and
    shape (the same rules for the Python API's arrays as for files)."""
    out = {}
    for name, value in feeds.items():
        if not isinstance(name, str) or name not in specs:
            raise _unknown(str(name), specs)
        if not isinstance(value, np.ndarray):
            raise InputError(f"input {name}: give a numpy.ndarray, not {type(value).__name__}")
        out[name] = _typed(value, specs[name], "input")
    missing = [str(s) for s in specs.values() if s.name not in out and not s.has_default]
    if missing:
        raise InputError(f"missing input{'s' if len(missing) > 1 else ''} {', '.join(missing)}; "
                         "give each with --input NAME=FILE")
    return out


def sha256(a: np.ndarray) -> str:
    """SHA-256 of the array's bytes: row-major, this machine's byte order (little-endian on x86
    and ARM), as .npy stores the data (hashed in place: no copy of a contiguous array)."""
    return hashlib.sha256(np.ascontiguousarray(a).reshape(-1).view(np.uint8)).hexdigest()


def describe(outputs: dict[str, np.ndarray]) -> dict:
    return {name: {"shape": list(a.shape), "dtype": dtypes.name_of(a.dtype), "sha256": sha256(a)}
            for name, a in outputs.items()}


def file_stem(name: str, taken: set[str]) -> str:
    """A file name for an output name (any string in ONNX): unsafe characters become '_', and a
    name already used gets a suffix."""
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "output"
    base, k = stem, 1
    while stem.lower() in taken:
        k += 1
        stem = f"{base}_{k}"
    taken.add(stem.lower())
    return stem


RUN_JSON, COMPARE_JSON, COMPARE_HTML = "run.json", "compare.json", "compare.html"     # beside the outputs' files in -o DIR


def output_files(directory: str, names, hex_text: bool = False) -> dict[str, tuple[str, ...]]:
    """Where write_outputs puts each output, in the order of ``names`` (the graph's outputs):
    {name: (DIR/STEM.npy,)}, with DIR/STEM.hex after it when ``hex_text``. The command line
    checks these paths against its inputs before it runs the model."""
    taken = {os.path.splitext(RUN_JSON)[0]}
    suffixes = (".npy", ".hex") if hex_text else (".npy",)
    return {name: tuple(os.path.join(directory, stem + x) for x in suffixes)
            for name in names for stem in [file_stem(name, taken)]}


HEX_CHUNK = 1 << 16      # elements formatted at a time: the text in memory stays a few MB


def write_hex(fh, a: np.ndarray) -> None:
    """hexfloat.format_array(a) written to ``fh`` a chunk at a time (the same text: one line per
    element, row-major), so that memory is bounded by the array, not by its text."""
    flat = np.ascontiguousarray(a).reshape(-1)
    for start in range(0, flat.size, HEX_CHUNK):
        fh.write(hexfloat.format_array(flat[start:start + HEX_CHUNK]))


def write_outputs(directory: str, outputs: dict[str, np.ndarray], summary: dict,
                  hex_text: bool = False) -> list[str]:
    """NAME.npy for each output (and NAME.hex, hex-float text, with ``hex_text``) and run.json;
    the paths written, each written whole or not at all (output_files.replacing), each array
    streamed to its file (numpy.save writes the array's own buffer). OSError when the directory
    cannot be made (its parent must exist) or written."""
    if not os.path.isdir(directory):
        os.mkdir(directory)
    written = []
    for name, paths in output_files(directory, outputs, hex_text).items():
        a = outputs[name]
        with replacing(paths[0], "wb") as fh:
            np.save(fh, a, allow_pickle=False)
        summary["outputs"][name]["npy"] = os.path.basename(paths[0])
        if hex_text:
            with replacing(paths[1], "w", encoding="ascii", newline="\n") as fh:
                write_hex(fh, a)
            summary["outputs"][name]["hex"] = os.path.basename(paths[1])
        written += paths
    path = os.path.join(directory, RUN_JSON)
    with replacing(path, "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=2, sort_keys=True)
        fh.write("\n")
    return written + [path]
