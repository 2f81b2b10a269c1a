"""Violations of the SONNX profile, as values (for the validator) and as an exception (for kernels)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Violation:
    """One broken requirement: the ID from the requirement registry (sonnx.requirements) and what to do instead."""

    requirement: str
    message: str

    def __str__(self) -> str:
        return f"[{self.requirement}] {self.message}"


class SlowKernelWarning(RuntimeWarning):
    """A kernel runs on a fallback that gives the same bits: slower (the matrix operators' exact
    fold without llvmlite) or not the proved C kernel (no C compiler for the element-wise
    defaults). Python callers see a warning they can filter; the command line prints it as one
    line with the install command (cli.main), not as a warning with a source line."""


class ProfileViolation(ValueError):
    """Raised by a kernel when its inputs break a SONNX profile requirement.

    ``requirement`` is the ID of the first violation; ``violations`` holds all of them,
    so a caller fixing its model sees every problem at once.
    """

    def __init__(self, violations: Iterable[Violation]):
        self.violations = tuple(violations)
        if not self.violations:
            raise ValueError("ProfileViolation needs at least one violation")
        self.requirement = self.violations[0].requirement
        super().__init__("; ".join(str(v) for v in self.violations))


def raise_if_any(violations: list[Violation]) -> None:
    if violations:
        raise ProfileViolation(violations)


def wrong_type(fn: str, what: str, expected: str, got: object, way_out: str = "") -> TypeError:
    """The one text of a kernel argument of the wrong Python type: ``sonnx.<fn>: <what> must be
    <expected>, got <type>``, then the way out when there is one. A sequence is also shown
    (bounded): "got tuple" alone does not say which element is wrong."""
    seen = f" {shown(got)}" if type(got).__name__ in ("list", "tuple", "ndarray") else ""
    return TypeError(f"sonnx.{fn}: {what} must be {expected}, got {type(got).__name__}{seen}{way_out}")


def shown(value: object, limit: int = 80) -> str:
    """``repr(value)`` for a message, bounded: an argument is untrusted, and its repr may be huge
    (an int of 10**5000 digits even raises ValueError), or may raise anything."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 -- any failing __repr__: name the type instead
        return f"<{type(value).__name__} object>"
    return text if len(text) <= limit else f"{text[:limit - 3]}..."
