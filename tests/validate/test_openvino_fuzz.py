"""Bounded mutation fuzz over the IR examples (examples/openvino/*.xml): whatever the XML,
`sonnx validate` gives exit 0, 1 or 2 in every output format, never a traceback, and never
hides a defect of its own behind "could not validate". Byte-level edits (test_fuzz.mutate) and
XML-aware ones: numbers in dims, ids and ports replaced, lines dropped or duplicated,
attribute values swapped, a DTD with entities put in front."""
from __future__ import annotations

import collections
import pathlib
import random
import re

from sonnx.cli import main
from sonnx.validate.formats import FORMATS

from .test_fuzz import judge, mutate

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parents[2] / "examples" / "openvino").glob("*.xml"))
CASES = 1500
CLI_EVERY = 100
SEED = 20261123
_NUMBER = re.compile(rb"-?[0-9]+")
_VALUE = re.compile(rb'="[^"]*"')
_REPLACEMENTS = (b"-1", b"0", b"1", b"2", b"7", b"?", b"1..3", b"99999999999999999999999",
                 b"x", b"", b"3.5", b"-5")
_ATTRS = (b'"none"', b'"numpy"', b'"pdpd"', b'"true"', b'"u1"', b'"f64"', b'"BOOL"', b'""',
          b'"opset99"', b'"extension"', b'"Relu"', b'"Divide"', b'"&x;"')


def mutate_xml(data: bytes, rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:
        spots = list(_NUMBER.finditer(data))
        if spots:
            m = rng.choice(spots)
            return data[:m.start()] + rng.choice(_REPLACEMENTS) + data[m.end():]
    if kind == 1:
        spots = list(_VALUE.finditer(data))
        if spots:
            m = rng.choice(spots)
            return data[:m.start() + 1] + rng.choice(_ATTRS) + data[m.end():]
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    if kind == 2:
        del lines[i]
    elif kind == 3:
        lines.insert(i, lines[rng.randrange(len(lines))])
    elif kind == 4:
        return (b'<?xml version="1.0"?><!DOCTYPE net [<!ENTITY x "' + b"y" * rng.randint(1, 9)
                + b'">]>' + data.split(b"?>", 1)[-1])
    else:
        return mutate(data, rng)
    return b"\n".join(lines)


def cases() -> list[bytes]:
    rng = random.Random(SEED)
    seeds = [p.read_bytes() for p in EXAMPLES]
    out = []
    for case in range(CASES):
        data = seeds[case % len(seeds)]
        for _ in range(rng.choice((1, 1, 2, 3))):
            data = mutate_xml(data, rng)
        out.append(data)
    return out


def test_mutations_of_the_ir_examples(tmp_path, capsys):
    path = tmp_path / "fuzzed.xml"
    fuzzed = cases()
    got = []
    for data in fuzzed:
        path.write_bytes(data)
        got.append(judge(path))             # every format rendered, no "could not validate"
    statuses = collections.Counter(got)
    # every CLI_EVERY-th case through the whole command line too, in every format
    for data, status in zip(fuzzed[::CLI_EVERY], got[::CLI_EVERY]):
        path.write_bytes(data)
        assert {main(["validate", "--format", fmt, str(path)]) for fmt in FORMATS} == {status}
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
    print(f"fuzzed IR cases: {CASES}, exit statuses: {dict(sorted(statuses.items()))}")
    assert len(statuses) == 3  # the mutations reach every verdict
