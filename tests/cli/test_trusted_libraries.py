"""Pieces once written by hand, now done by a maintained library: the baseline TOML written by
tomli-w (every key and value read back as written, control characters included) and JUnit XML
read through defusedxml (entity declarations refused whatever expat is linked)."""
from __future__ import annotations

import tomllib

import pytest

from sonnx.trace import baseline, junit

AWKWARD = ['code:src\\x.py:f"g"', "tab\there", "nul\x00byte", "bell\x07", "esc\x1b[2J", "del\x7f",
           "line\nbreak", "cr\rlf", "unicode \u00e9\u2028sep", "'single'", "# not a comment", "[table]"]


@pytest.mark.parametrize("text", AWKWARD)
def test_baseline_keys_and_values_round_trip(text):
    written = baseline.dump({"MUL-R1": {text: text}, "GEMM-R1": {"k": "v"}})
    assert tomllib.loads(written) == {"GEMM-R1": {"k": "v"}, "MUL-R1": {text: text}}
    assert written.startswith("# Reviewed fingerprints")
    # one entry per line: a control character never breaks a line of the file (TOML's own
    # line ends are \n and \r\n; U+2028 is text to it)
    lines = written.rstrip("\n").split("\n")
    assert len(lines) == 8 and "\r" not in written and lines[-1].count(" = ") >= 1


def test_baseline_is_sorted_whatever_the_order_given():
    a = baseline.dump({"MUL-R1": {"b": "2", "a": "1"}, "GEMM-R1": {"z": "9"}})
    b = baseline.dump({"GEMM-R1": {"z": "9"}, "MUL-R1": {"a": "1", "b": "2"}})
    assert a == b and a.index("GEMM-R1") < a.index("MUL-R1") and a.index("a = ") < a.index("b = ")


BOMB = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<testsuites><testsuite name="s"><testcase classname="c" name="&lol2;"/></testsuite></testsuites>
"""
EXTERNAL = """<?xml version="1.0"?>
<!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<testsuites><testsuite name="s"><testcase classname="c" name="&x;"/></testsuite></testsuites>
"""


@pytest.mark.parametrize("xml", [BOMB, EXTERNAL], ids=["entity-expansion", "external-entity"])
def test_junit_with_entity_declarations_is_refused(tmp_path, xml):
    path = tmp_path / "junit.xml"
    path.write_text(xml)
    with pytest.raises(junit.JUnitError, match=r"XML refused \(EntitiesForbidden"):
        junit.parse(path)


def test_plain_junit_still_reads(tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text('<testsuites><testsuite name="s"><testcase classname="tests.a" name="test_b"/>'
                    "</testsuite></testsuites>")
    assert len(junit.parse(path).cases) == 1
