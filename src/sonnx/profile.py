"""Profile-level rules (PROF-R*): they concern the model as a whole, not one operator."""
from __future__ import annotations

from typing import Sequence

from .errors import Violation

PROFILE_OPERATORS = ("Mul", "Gemm")
DEFAULT_DOMAINS = ("", "ai.onnx")
# A flat index must fit a signed 32-bit integer: bounds memory and keeps index arithmetic
# in the range the proofs and the C runtimes handle without overflow.
MAX_ELEMENTS = 2**31 - 1

Dim = int | str | None


def operator_violations(domain: str, op_type: str) -> list[Violation]:
    if domain not in DEFAULT_DOMAINS:
        return [Violation("PROF-R1", f"operator {domain}::{op_type} is outside the default ONNX domain; "
                                     f"the profile admits only {', '.join(PROFILE_OPERATORS)} from ai.onnx")]
    if op_type not in PROFILE_OPERATORS:
        return [Violation("PROF-R1", f"operator {op_type} is not in the SONNX profile; "
                                     f"rewrite the model with {', '.join(PROFILE_OPERATORS)} only")]
    return []


def shape_violations(shape: Sequence[Dim] | None, what: str) -> list[Violation]:
    """PROF-R2: the shape is static, fully known, every dimension positive, size bounded."""
    if shape is None:
        return [Violation("PROF-R2", f"{what} has no known rank; give it a static shape "
                                     "(run shape inference or fix the input's type)")]
    size = 1
    for axis, d in enumerate(shape):
        if isinstance(d, bool) or not isinstance(d, int):
            shown = "unknown" if d is None or d == "" else repr(d)
            return [Violation("PROF-R2", f"{what} has dimension {axis} = {shown}, not a static integer; "
                                         "fix every dimension to a positive constant")]
        if d <= 0:
            return [Violation("PROF-R2", f"{what} has dimension {axis} = {d}; every dimension must be "
                                         "positive (empty tensors are outside the profile)")]
        size *= d
    if size > MAX_ELEMENTS:
        return [Violation("PROF-R2", f"{what} has {size} elements, more than the profile's limit "
                                     f"of {MAX_ELEMENTS}; split the tensor")]
    return []


# PROF-R3: the opset versions the profile knows. For every opset 1..MAX_KNOWN_OPSET the Mul and
# Gemm versions in force are ones whose type sets dtypes.TYPE_SETS holds (checked against the
# installed onnx schemas by the validator's tests); a later opset may redefine them.
MAX_KNOWN_OPSET = 28


def opset_import_violations(imports: Sequence[tuple[str, int]], what: str = "the model",
                            *, require_default: bool = True) -> list[Violation]:
    """PROF-R3: one import of the default domain ('' and 'ai.onnx' are the same), with a known
    version, and no domain imported twice. ``imports`` is the list of (domain, version) pairs."""
    found: list[Violation] = []
    seen: dict[str, int] = {}
    for domain, version in imports:
        key = "" if domain in DEFAULT_DOMAINS else domain
        shown = "the default domain ('' / 'ai.onnx')" if key == "" else f"domain '{domain}'"
        if key in seen:
            found.append(Violation("PROF-R3", f"{what} imports {shown} twice (versions {seen[key]} and "
                                              f"{version}); keep exactly one opset_import entry for it"))
            continue
        seen[key] = version
        if key == "" and not 1 <= version <= MAX_KNOWN_OPSET:
            found.append(Violation("PROF-R3", f"{what} imports the default domain at opset {version}, "
                                              f"which the profile does not know; use an opset from 1 to "
                                              f"{MAX_KNOWN_OPSET} (e.g. convert with "
                                              f"onnx.version_converter.convert_version)"))
    if require_default and "" not in seen:
        found.append(Violation("PROF-R3", f"{what} does not import the default ONNX domain; add one "
                                          f"opset_import entry for domain '' (version 1 to "
                                          f"{MAX_KNOWN_OPSET})"))
    return found
