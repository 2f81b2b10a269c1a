"""The files a command writes: never over one of its inputs or over another of its outputs, and
never left half-written.

Every sub-command that writes files (validate, conform, run, trace, requirements) names its
outputs and its inputs, each with how the user gave it (``("-o", "m.onnx")``), and calls
``clash`` before doing any work: an output that is the same file as an input or as another
output (the same path spelt differently, a symbolic link to it, a hard link to it) is refused
with one line naming both, and nothing is written. Then each output is written through
``replacing``: into a temporary file in the target's folder, renamed over the target only once
it is complete, so that an interrupted run (an error, Ctrl-C, a full disk) leaves the old file
whole and no temporary file behind.
"""
from __future__ import annotations

import contextlib
import os
import stat
from typing import Iterable, Iterator

from .text import shown_path

Named = tuple[str, str]     # (how the user gave it: "-o", "the model", ...; the path)


def _identity(path: str) -> tuple[int, int] | str:
    """What makes two paths one file: device and inode when the path exists (this sees through
    symbolic links, hard links and any spelling), else the path resolved (symbolic links in
    its existing part followed), for two outputs that do not exist yet."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return os.path.normcase(os.path.realpath(path))
    return (st.st_dev, st.st_ino)


def clash(outputs: Iterable[Named], inputs: Iterable[Named]) -> str | None:
    """Why the outputs cannot be written, as one line, or None. An output must not be the same
    file as an input or as an earlier output. ``inputs`` is only read when some output already
    exists (a path that does not exist is no input's file), so it may be a generator that does
    costly work, such as listing a model's external data files."""
    seen: dict[object, Named] = {}
    for what, path in outputs:
        key = _identity(path)
        if key in seen:
            other_what, other = seen[key]
            return (f"{what} {shown_path(path)} and {other_what} {shown_path(other)} are the same file; "
                    "give each output its own path (nothing was written)")
        seen[key] = (what, path)
    if not any(isinstance(key, tuple) for key in seen):
        return None
    for what, path in inputs:
        key = _identity(path)
        if isinstance(key, tuple) and key in seen:
            out_what, out = seen[key]
            return (f"{out_what} {shown_path(out)} is the same file as {what} {shown_path(path)}; "
                    "writing it would destroy the input: choose another path (nothing was written)")
    return None


def model_inputs(path: str, what: str = "the model") -> Iterator[Named]:
    """The files a model path stands for: the file itself, and the files that hold its weights
    (an ONNX model's external data, read by conform and run; an OpenVINO IR's .bin beside it,
    which validate never opens but the user would lose). Read lazily; a model that is no regular
    file or cannot be parsed yields only its own path (the command that reads it says why)."""
    yield what, path
    weights = f"the weights of {what} {shown_path(path)}"
    if path.lower().endswith(".xml"):
        yield weights, os.path.splitext(path)[0] + ".bin"
        return
    if not os.path.isfile(path):
        return
    try:
        import onnx
        model = onnx.load(path, load_external_data=False)
    except Exception:  # noqa: BLE001 -- unreadable: the command's own reading says why
        return
    base = os.path.dirname(path)
    for location in sorted(_external_locations(model.graph)):
        yield weights, os.path.join(base, location)


def _external_locations(graph) -> set[str]:
    """The external-data file names of every tensor in ``graph`` and its subgraphs."""
    import onnx
    tensors = list(graph.initializer)
    found: set[str] = set()
    for node in graph.node:
        for a in node.attribute:
            tensors += [a.t] if a.HasField("t") else []
            tensors += list(a.tensors)
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                found |= _external_locations(sub)
    for t in tensors:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            found.update(e.value for e in t.external_data if e.key == "location")
    return found


def unwritable(path: str, what: str) -> str | None:
    """Why ``path`` cannot be written (None when it can), checked before any work is done."""
    shown = shown_path(path)
    if os.path.isdir(path):
        return f"{what} {shown} is a directory; give a file name"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return f"{what} {shown}: the folder {shown_path(parent)} does not exist"
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        return f"{what} {shown}: not writable (permission denied)"
    return None


@contextlib.contextmanager
def replacing(path: str, mode: str = "w", **open_args) -> Iterator:
    """A file object (``open(..., mode, **open_args)``) for the new content of ``path``: a
    temporary file in the same folder, renamed over ``path`` when the block ends and removed
    when it raises. A symbolic link is written through, as ``open`` would (the link stays);
    an existing file keeps its permissions. A path that exists and is no regular file
    (/dev/null, a FIFO) cannot be replaced, and /dev/stdout or /proc/self/fd/N stands for a file
    the caller holds open (replacing it would cut the shell's redirection): both are written
    directly."""
    if "w" not in mode:
        raise ValueError(f"replacing writes a whole file: mode {mode!r} has no 'w'")
    target = os.path.realpath(path)
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    stream = os.path.abspath(path).startswith(("/dev/", "/proc/"))   # /dev/stdout: the caller's open file
    if stream or (old is not None and not stat.S_ISREG(old.st_mode)):
        with open(path, mode, **open_args) as fh:
            yield fh
        return
    folder, name = os.path.split(target)
    while True:    # mode "x" creates a new file (0o666 less the umask, as "w" would): never someone else's
        # the name cut so that the temporary fits where the target's name did (255 bytes)
        import secrets      # here: its hashlib and hmac cost every command's start-up 7 ms
        temporary = os.path.join(folder, f".{name[:200]}.{secrets.token_hex(6)}.tmp")
        try:
            fh = open(temporary, mode.replace("w", "x"), **open_args)
            break
        except FileExistsError:
            continue
    try:
        with fh:
            if old is not None:
                os.chmod(temporary, stat.S_IMODE(old.st_mode))
            yield fh
            fh.flush()
            os.fsync(fh.fileno())     # the content is on disk before the name points at it
        os.replace(temporary, target)
    except BaseException:             # Ctrl-C too: the old file stays, the temporary goes
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
