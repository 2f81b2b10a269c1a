"""Bounded byte-level mutation fuzz over the shipped example models (issue 11): whatever the
bytes, `sonnx validate` gives exit status 0, 1 or 2 in every output format, never a traceback,
and never hides a defect of its own behind "could not validate"."""
from __future__ import annotations

import collections
import json
import pathlib
import random

import pytest

from sonnx.cli import main
from sonnx.validate import validate
from sonnx.validate.cli import exit_status
from sonnx.validate.formats import FORMATS

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parents[2] / "examples").glob("*.onnx"))
CASES = 3000          # mutated models, each judged once and rendered in every format
CLI_EVERY = 100       # every 100th case also goes through the whole command line
SEED = 20261123


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to three edits of kinds that reach the parser's corners: bit flips, special bytes
    (lengths, tags, field numbers, escapes), insertions, deletions, truncation, duplicated
    chunks, and control or non-UTF-8 bytes inside text. Length-keeping edits are the most
    frequent: most others break protobuf framing, and the point is to get past the parser."""
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        if not b:
            break
        kind = rng.choice((0, 0, 0, 1, 1, 1, 2, 3, 4, 5, 6, 6, 6))
        i = rng.randrange(len(b))
        if kind == 6:  # a byte inside a name or other text: framing stays intact
            letters = [k for k, c in enumerate(b) if 0x61 <= c <= 0x7A]
            if letters:
                b[rng.choice(letters)] = rng.choice((0xFF, 0xC3, 0x1B, 0x0A, 0x0D, 0x00, 0x5C))
        elif kind == 0:
            b[i] ^= 1 << rng.randrange(8)
        elif kind == 1:
            b[i] = rng.choice((0x00, 0x01, 0x02, 0x7F, 0x80, 0xFF, 0x1B, 0x0A, 0xFE, 0x30))
        elif kind == 2:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif kind == 3:
            del b[i:i + rng.randint(1, 8)]
        elif kind == 4:
            del b[i:]
        else:
            j = rng.randrange(len(b))
            b[i:i] = b[j:j + rng.randint(1, 32)]
    return bytes(b)


def judge(path: pathlib.Path) -> int:
    report = validate(path)
    assert report.error is None or "could not validate" not in report.error, report.error
    for fmt, render in FORMATS.items():
        out = render([report])
        if fmt == "text":
            assert all(line.isprintable() for line in out.splitlines()), out
        else:
            json.loads(out)
    status = exit_status([report])
    assert status in (0, 1, 2)
    return status


def test_byte_mutations_of_the_examples(tmp_path, capsys):
    rng = random.Random(SEED)
    seeds = [p.read_bytes() for p in EXAMPLES]
    statuses = collections.Counter()
    path = tmp_path / "fuzzed.onnx"
    for case in range(CASES):
        data = mutate(seeds[case % len(seeds)], rng)
        path.write_bytes(data)
        status = judge(path)
        statuses[status] += 1
        if case % CLI_EVERY == 0:
            for fmt in FORMATS:
                assert main(["validate", "--format", fmt, str(path)]) == status
            out, err = capsys.readouterr()
            assert "Traceback" not in out + err
    print(f"fuzzed cases: {CASES}, exit statuses: {dict(sorted(statuses.items()))}")
    assert len(statuses) == 3  # the mutations reach every verdict


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_examples_themselves_judge_cleanly(example):
    assert judge(example) in (0, 1)
