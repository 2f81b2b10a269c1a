"""Colour on a terminal only, as ruff and mypy do: `--color auto` (the default) colours a
stream that is a terminal, unless NO_COLOR is set to a non-empty value (https://no-color.org)
or TERM is "dumb"; `--color always` colours anyway (a flag wins over the environment, as
no-color.org allows); `--color never` never does. A file written with -o/--output-file is
never coloured: its stream is not the terminal."""
from __future__ import annotations

import os

CHOICES = ("auto", "always", "never")
_SGR = {"bad": "1;31", "good": "32", "rule": "1;33", "note": "36"}


def wanted(choice: str, stream) -> bool:
    if choice == "never":
        return False
    if choice == "always":
        return True
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def paint(text: str, style: str, on: bool) -> str:
    """``text`` in ``style`` (bad, good, rule, note) when ``on``; the text itself otherwise."""
    return f"\x1b[{_SGR[style]}m{text}\x1b[0m" if on else text
