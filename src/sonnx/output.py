"""Where the command line writes: a report to stdout or to the file of -o/--output-file, and
every error to stderr (in every output format, as ruff and mypy do), never as a traceback."""
from __future__ import annotations

import sys

from .output_files import replacing
from .text import neutral, shown_path


def write(stream, text: str) -> None:
    """Write to a terminal or pipe whatever its encoding: a character it cannot encode (an
    ASCII locale, say) is written as an escape rather than raising."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
    else:
        stream.flush()
        buffer.write(text.encode(encoding, "backslashreplace"))
    stream.flush()


def error(prog: str, message: str) -> None:
    """One line on stderr: ``prog: message``, escaped (a path may hold anything)."""
    write(sys.stderr, f"{prog}: {neutral(message)}\n")


def config_input(args) -> list[tuple[str, str]]:
    """The configuration file a command read ([tool.sonnx] in pyproject.toml), as an input that
    no output may overwrite."""
    path = getattr(args, "config_path", None)
    return [("the configuration", str(path))] if path is not None else []


def to_file(prog: str, path: str, text: str) -> bool:
    """Write ``text`` to ``path`` whole or not at all (output_files.replacing); False (the reason
    on stderr) when it cannot be written."""
    try:
        with replacing(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except (OSError, ValueError) as exc:
        error(prog, f"cannot write {shown_path(path)}: {getattr(exc, 'strerror', None) or exc}")
        return False
    return True
