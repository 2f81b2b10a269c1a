"""Test results from the JUnit XML that pytest writes (build/evidence/junit.xml)."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Outcome:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.failed:
            return "failed"
        if self.passed:
            return "passed"
        return "not run"

    def add(self, other: "Outcome") -> None:
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped
        self.failures += other.failures


def read(path: Path) -> dict[tuple[str, str], Outcome]:
    """(classname, function name without parameters) -> outcome of its cases."""
    results: dict[tuple[str, str], Outcome] = {}
    if not path.exists():
        return results
    for case in ET.parse(path).getroot().iter("testcase"):
        classname = case.get("classname", "")
        name = case.get("name", "").split("[", 1)[0]
        out = results.setdefault((classname, name), Outcome())
        if case.find("failure") is not None or case.find("error") is not None:
            out.failed += 1
            out.failures.append(case.get("name", ""))
        elif case.find("skipped") is not None:
            out.skipped += 1
        else:
            out.passed += 1
    return results


def outcome_of(site_name: str, results: dict[tuple[str, str], Outcome]) -> Outcome:
    """Outcome of the tests behind a trace site named ``tests/x/test_y.py::name``.

    ``name`` is a function, a class (all its methods), or ``<module>`` (every test of the file).
    """
    path, _, name = site_name.partition("::")
    module = path[:-3].replace("/", ".") if path.endswith(".py") else path
    total = Outcome()
    for (classname, func), out in results.items():
        if name == "<module>":
            hit = classname == module or classname.startswith(module + ".")
        else:
            hit = (classname == module and func == name) or classname == f"{module}.{name}"
        if hit:
            total.add(out)
    return total
