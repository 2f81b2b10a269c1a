"""`[tool.sonnx]` in pyproject.toml, found as ruff finds `[tool.ruff]`: the closest
pyproject.toml with such a table, from the current directory upwards (a pyproject.toml
without one is passed over). Options given on the command line win over it. An unknown key,
a value of the wrong type or a file that is not TOML is an error (exit 2), never ignored:
a misspelt `selct` would otherwise check every rule while the user believes otherwise.

    [tool.sonnx]
    color = "auto"                     # auto | always | never

    [tool.sonnx.validate]
    select = ["MUL", "PROF"]           # requirement IDs or prefixes (default: every rule)
    ignore = ["ONNX-IR"]
    format = "text"                    # text | json | sarif
    exit-zero = false
    help-base = "https://host/org/sonnx/blob/main/"   # SARIF: each rule's helpUri base

    [tool.sonnx.trace]
    format = "md"                      # comma-separated: html, md, json, csv, reqif, lobster
"""
from __future__ import annotations

import tomllib
from pathlib import Path

COLOR_CHOICES = ("auto", "always", "never")
VALIDATE_FORMATS = ("json", "sarif", "text")

# table -> key -> (type, allowed values or None); one place says what each table may hold
SCHEMA: dict[str, dict[str, tuple[type, tuple[str, ...] | None]]] = {
    "": {"color": (str, COLOR_CHOICES)},
    "validate": {"select": (list, None), "ignore": (list, None),
                 "format": (str, VALIDATE_FORMATS), "exit-zero": (bool, None),
                 "help-base": (str, None)},
    "trace": {"format": (str, None)},
}


class ConfigError(Exception):
    """The configuration file cannot be used; the message names the file and the key."""


def find(start: Path) -> Path | None:
    """The closest pyproject.toml holding a [tool.sonnx] table, from ``start`` upwards."""
    for d in (start, *start.parents):
        candidate = d / "pyproject.toml"
        if candidate.is_file() and "sonnx" in _read(candidate).get("tool", {}):
            return candidate
    return None


def _read(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read as TOML ({exc})") from None


def _check(path: Path, table: str, values: object) -> dict:
    name = "[tool.sonnx" + (f".{table}]" if table else "]")
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: {name} must be a table")
    allowed = SCHEMA[table]
    subtables = {t for t in SCHEMA if t} if not table else set()
    for key, value in values.items():
        if key in subtables:
            continue
        if key not in allowed:
            known = sorted(set(allowed) | {f"[{t}]" for t in subtables})
            raise ConfigError(f"{path}: {name} has an unknown key {key!r}; known: {', '.join(known)}")
        kind, choices = allowed[key]
        if not isinstance(value, kind) or (kind is list and not all(isinstance(v, str) for v in value)):
            what = "a list of strings" if kind is list else {str: "a string", bool: "true or false"}[kind]
            raise ConfigError(f"{path}: {name} {key} must be {what}, not {value!r}")
        if choices is not None and value not in choices:
            raise ConfigError(f"{path}: {name} {key} = {value!r}; choose from {', '.join(choices)}")
    return {k: v for k, v in values.items() if k not in subtables}


def load(path: Path) -> dict[str, dict]:
    """Every table of [tool.sonnx] in ``path``, checked: {"": {...}, "validate": {...}, ...}."""
    tool = _read(path).get("tool", {}).get("sonnx", {})
    out = {"": _check(path, "", tool)}
    for table in SCHEMA:
        if table:
            out[table] = _check(path, table, tool.get(table, {}))
    return out


def settings(start: Path | None = None) -> tuple[Path | None, dict[str, dict]]:
    """The configuration that applies in ``start`` (default: the current directory)."""
    path = find((start or Path.cwd()).resolve())
    if path is None:
        return None, {table: {} for table in SCHEMA}
    return path, load(path)
