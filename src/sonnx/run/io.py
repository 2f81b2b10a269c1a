"""Inputs and outputs of ``sonnx run``: .npy, .npz and hex-float text (run/hexfloat.py).

Every input is checked against the model's declaration of it: known name, every required input
given once, exact shape, exact element type. Nothing is cast or broadcast: an int64 array for a
float input is an error that says what to convert. bfloat16 has no numpy dtype of its own, so
numpy saves an ml_dtypes.bfloat16 array as 2-byte void ('|V2', the raw bits): such an array is
read as bfloat16 bits, for a bfloat16 input only (as sonnx run writes its bfloat16 outputs).
"""
from __future__ import annotations

import hashlib
import json
import os
import re

import numpy as np

from .. import dtypes
from ..validate.text import shown_path
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


def _typed(array: np.ndarray, spec: InputSpec, where: str) -> np.ndarray:
    """``array`` as the input ``spec`` declares it, or InputError (no cast, no broadcast)."""
    want = dtypes.numpy_dtype(spec.dtype)
    dt = array.dtype
    if spec.dtype == "bfloat16" and _is_raw_2_bytes(dt):
        array = array.view(want)                      # numpy's storage of ml_dtypes.bfloat16
    elif dt.byteorder not in ("=", "|") and dt.newbyteorder("=") == want:
        array = array.astype(want)                    # the same values, in this machine's byte order
    elif dt != want:
        got = describe_dtype(dt)
        numbers = dt.kind in "biuf" or dtypes.name_of(dt) in dtypes.NUMERIC_TYPES   # asarray is a cast
        hint = ("an ml_dtypes.bfloat16 array saved with numpy.save, or hex-float text" if spec.dtype == "bfloat16"
                else f"numpy.asarray(x, dtype=numpy.{want.name}) if its values are exact in {spec.dtype}"
                if numbers else f"a numpy.{want.name} array of its values")
        raise InputError(f"{where}: input {spec.name} is declared {spec.dtype}, the file holds {got}; "
                         f"sonnx never casts: save it as {spec.dtype} ({hint})")
    if array.shape != spec.shape:
        raise InputError(f"{where}: input {spec.name} has shape {array.shape}, the model declares "
                         f"{spec.shape}; sonnx never broadcasts or reshapes: save it with shape {spec.shape}")
    return np.ascontiguousarray(array)


def _npy(path: str) -> np.ndarray:
    try:
        array = np.load(path, allow_pickle=False)
    except Exception as exc:   # noqa: BLE001  a corrupt header raises anything numpy's parser meets
        raise InputError(f"{shown_path(path)}: cannot read it as .npy ({_first_line(exc)})") from None
    if not isinstance(array, np.ndarray):
        array.close()
        raise InputError(f"{shown_path(path)}: is a .npz archive, not a .npy file; rename it to .npz")
    return array


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def _npz(path: str) -> dict[str, np.ndarray]:
    try:
        archive = np.load(path, allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):     # numpy reads a .npy whatever its name
            raise InputError(f"{shown_path(path)}: is a .npy file, not a .npz archive; rename it to .npy")
        with archive:
            return {k: archive[k] for k in archive.files}
    except InputError:
        raise
    except Exception as exc:   # noqa: BLE001  zipfile and numpy raise many types on a corrupt archive
        raise InputError(f"{shown_path(path)}: cannot read it as .npz ({_first_line(exc)})") from None


def _text(path: str, spec: InputSpec) -> np.ndarray:
    try:
        # a byte-order mark is not a value; lines end at \n, \r\n or \r (open()'s universal
        # newlines), never at the other characters str.splitlines() breaks at (\f, \v, U+2028...)
        with open(path, encoding="utf-8-sig") as fh:
            lines = fh.read().split("\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{shown_path(path)}: cannot read it as text "
                         f"({getattr(exc, 'strerror', None) or exc})") from None
    while lines and not lines[-1].strip(hexfloat.BLANKS):      # trailing blank lines are no values
        lines.pop()
    count = int(np.prod(spec.shape, dtype=np.int64))
    if len(lines) != count:
        raise InputError(f"{shown_path(path)}: holds {len(lines)} lines, input {spec} needs {count} "
                         "values, one per line (row-major)")
    try:
        flat = hexfloat.parse_lines(lines, spec.dtype)
    except hexfloat.TextError as exc:
        raise InputError(f"{shown_path(path)}: {exc}") from None
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
            for key, array in _npz(path).items():
                put(key, array, f"{shown_path(path)}[{key}]")
            continue
        if name not in specs:
            raise _unknown(name, specs)
        if suffix == ".npy":
            put(name, _npy(path), shown_path(path))
        elif suffix == ".npz":
            arrays = _npz(path)
            if name in arrays:
                key = name
            elif len(arrays) == 1:
                (key,) = arrays
            else:
                raise InputError(f"{shown_path(path)}: holds {sorted(arrays)} but no array named {name}; "
                                 "name the key after the input")
            put(name, arrays[key], f"{shown_path(path)}[{key}]")
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
    and ARM), as .npy stores the data."""
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


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


def write_outputs(directory: str, outputs: dict[str, np.ndarray], summary: dict) -> list[str]:
    """NAME.npy, NAME.hex for each output and run.json; the paths written. OSError when the
    directory cannot be made (its parent must exist) or written."""
    if not os.path.isdir(directory):
        os.mkdir(directory)
    written, taken = [], {"run"}
    for name, a in outputs.items():
        stem = file_stem(name, taken)
        npy, hexf = os.path.join(directory, stem + ".npy"), os.path.join(directory, stem + ".hex")
        np.save(npy, a, allow_pickle=False)
        with open(hexf, "w", encoding="ascii", newline="\n") as fh:
            fh.write(hexfloat.format_array(a))
        summary["outputs"][name].update({"npy": stem + ".npy", "hex": stem + ".hex"})
        written += [npy, hexf]
    path = os.path.join(directory, "run.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=2, sort_keys=True)
        fh.write("\n")
    return written + [path]
