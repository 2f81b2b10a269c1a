"""text.parses_as_utf8 (a proto3 twin of onnx's schema, parsed by protobuf's C code) against the
field walk it lets the validator skip (text.clean_model): on every shipped example and test model
and on mutated copies (tests/validate/test_fuzz.py's mutations, which put non-UTF-8 bytes inside
names), a model the twin accepts has no text field the walk would report. The converse is not
required (the twin may refuse for other reasons: the walk then runs, as before)."""
from __future__ import annotations

import pathlib
import random

import onnx
from google.protobuf.message import DecodeError

from sonnx import text

from .test_fuzz import mutate

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = sorted([*(ROOT / "examples").glob("*.onnx"), *(ROOT / "tests").rglob("*.onnx")])
CASES = 2000


def _walk_finds(data: bytes) -> list[str] | None:
    try:
        model = onnx.ModelProto.FromString(data)
    except (DecodeError, RuntimeError, ValueError):
        return None   # not a model: the validator refuses it before any text check
    return text.clean_model(model)


def test_the_strict_parse_never_accepts_what_the_walk_reports():
    rng = random.Random(20261128)
    seeds = [p.read_bytes() for p in MODELS]
    assert len(seeds) >= 10
    accepted = refused_bad = 0
    for case in range(len(seeds) + CASES):
        data = seeds[case] if case < len(seeds) else mutate(seeds[case % len(seeds)], rng)
        found = _walk_finds(data)
        if found is None:
            continue
        if text.parses_as_utf8(onnx.ModelProto.DESCRIPTOR, data):
            assert found == [], (case, found)
            accepted += 1
        elif found:
            refused_bad += 1
    # both sides were exercised: models with good text taken by the twin, bad ones refused
    assert accepted > 100 and refused_bad > 20, (accepted, refused_bad)
