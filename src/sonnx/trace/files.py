"""Reading an evidence file safely: only a regular file (a FIFO or device could block the read
or never end), and for JSON only an object. ValueError with the path on anything else."""
from __future__ import annotations

import json
from pathlib import Path


def check_regular(path: Path, kind: str) -> None:
    if not path.is_file():      # stat only: never opens a FIFO
        raise ValueError(f"{path}: {kind} evidence is not a regular file")


def read_json_object(path: Path, kind: str) -> dict:
    check_regular(path, kind)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: {kind} evidence is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: {kind} evidence is not a JSON object")
    return data
