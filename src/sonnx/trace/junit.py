"""Test results from the JUnit XML that pytest writes (build/evidence/junit.xml).

Read as pytest writes it and in its common variants: namespaced or capitalised element names,
testsuites nested in testsuites, and the rerun/flaky elements of the surefire schema. A case is
failed when it carries any failure or error element, flaky or rerun ones included (a test that
failed once has not shown the requirement), skipped when it carries ``skipped``, passed
otherwise. The run's input hash (``sonnx_inputs`` property, see tests/conftest.py) is returned
with the results so that the trace can tell a result made on another tree.
"""
from __future__ import annotations

import fnmatch
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import parse as defused_parse

from .files import check_regular

INPUTS_PROPERTY = "sonnx_inputs"
_FAILED = {"failure", "error", "rerunfailure", "rerunerror", "flakyfailure", "flakyerror"}


class JUnitError(ValueError):
    """The file is not a JUnit report that can be judged."""


@dataclass
class Outcome:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)
    skips: list[str] = field(default_factory=list)      # "classname::name" of each skipped case

    @property
    def status(self) -> str:
        """failed > skipped > passed: a skipped case has shown nothing, so it is never green."""
        if self.failed:
            return "failed"
        if self.skipped:
            return "skipped"
        if self.passed:
            return "passed"
        return "not run"

    def add(self, other: "Outcome") -> None:
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped
        self.failures += other.failures
        self.skips += other.skips

    def without(self, justified: set[str]) -> "Outcome":
        """This outcome with the skipped cases listed in ``justified`` counted as passed
        (reviewed skips, spec/trace-justifications.toml); a case that only skipped, and was
        justified, shows nothing: it counts as neither."""
        kept = [c for c in self.skips if c not in justified]
        waived = len(self.skips) - len(kept)
        return Outcome(self.passed + (waived if self.passed else 0), self.failed, len(kept),
                       list(self.failures), kept)


@dataclass
class Report:
    cases: dict[tuple[str, str], Outcome]
    inputs: str | None       # the sonnx_inputs property, None when absent


def _tag(el: ET.Element) -> str:
    """Local name, lower case: ``{ns}TestCase`` -> ``testcase``."""
    return el.tag.rsplit("}", 1)[-1].lower() if isinstance(el.tag, str) else ""


def parse(path: Path) -> Report:
    """The cases of a JUnit file. JUnitError when it is no regular file (a FIFO or device is
    refused before any read: it could block), is not XML, or is not a JUnit report."""
    try:
        check_regular(path, "JUnit")
    except ValueError as exc:
        raise JUnitError(str(exc)) from None
    try:
        # defusedxml: entity expansion and external references refused whatever expat is linked
        root = defused_parse(path).getroot()
    except (ET.ParseError, UnicodeDecodeError) as exc:
        raise JUnitError(f"{path}: not well-formed XML ({exc})") from None
    except DefusedXmlException as exc:   # a DTD entity or external reference: no test report has one
        raise JUnitError(f"{path}: XML refused ({type(exc).__name__}: {exc})") from None
    if _tag(root) not in ("testsuites", "testsuite"):
        raise JUnitError(f"{path}: root element <{root.tag}> is neither testsuites nor testsuite")
    cases: dict[tuple[str, str], Outcome] = {}
    inputs = None
    for el in root.iter():
        tag = _tag(el)
        if tag == "property" and el.get("name") == INPUTS_PROPERTY:
            inputs = el.get("value")
        if tag != "testcase":
            continue
        full, classname = el.get("name"), el.get("classname")
        if not full or classname is None:
            raise JUnitError(f"{path}: a testcase without name or classname")
        out = cases.setdefault((classname, full.split("[", 1)[0]), Outcome())
        kinds = {_tag(child) for child in el}
        if kinds & _FAILED:
            out.failed += 1
            out.failures.append(full)
        elif "skipped" in kinds:
            out.skipped += 1
            out.skips.append(f"{classname}::{full}")
        else:
            out.passed += 1
    return Report(cases, inputs)


def _names(classname: str, func: str, module: str) -> list[str] | None:
    """The names a case answers to inside ``module``: ``func`` at module level; ``Class`` and
    ``Class.func`` for a method; None when the case is not in the module."""
    if classname == module:
        return [func]
    if classname.startswith(module + "."):
        cls = classname[len(module) + 1:]
        return [cls, f"{cls}.{func}"]
    return None


def matches(site_name: str, classname: str, func: str) -> bool:
    """Whether the case (classname, func) is one of the tests behind a trace site named
    ``tests/x/test_y.py::name``: ``name`` is a function, a class (all its methods),
    ``Class.method``, ``<module>`` (every test of the file) or an fnmatch pattern over these
    (declared supports)."""
    path, _, pattern = site_name.partition("::")
    module = path[:-3].replace("/", ".") if path.endswith(".py") else path
    pattern = "*" if pattern == "<module>" else pattern
    names = _names(classname, func, module)
    return names is not None and any(fnmatch.fnmatchcase(n, pattern) for n in names)


def outcome_of(site_name: str, results: dict[tuple[str, str], Outcome]) -> Outcome:
    """Outcome of the tests behind a trace site (see ``matches``)."""
    total = Outcome()
    for (classname, func), out in results.items():
        if matches(site_name, classname, func):
            total.add(out)
    return total
