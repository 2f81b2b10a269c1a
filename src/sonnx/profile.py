"""Profile-level rules (PROF-R*): they concern the model as a whole, not one operator."""
from __future__ import annotations

import numbers
from typing import Container, Sequence

from .errors import Violation, raise_if_any, shown, wrong_type

DEFAULT_DOMAINS = ("", "ai.onnx")
# A flat index must fit a signed 32-bit integer: bounds memory and keeps index arithmetic
# in the range the proofs and the C runtimes handle without overflow.
MAX_ELEMENTS = 2**31 - 1

Dim = int | str | None


def shape_violations(shape: Sequence[Dim] | None, what: str,
                     pinnable: Container[str] = frozenset()) -> list[Violation]:
    """PROF-R2: the shape is static, fully known, every dimension positive, size bounded.
    ``pinnable``: the dimension names `sonnx conform --dim` can pin (conform.rewrite.pinnable_names
    of the model as written), which the message then names."""
    if shape is None:
        return [Violation("PROF-R2", f"{what} has no known rank; give it a static shape "
                                     "(run shape inference or fix the input's type)")]
    size = 1
    for axis, d in enumerate(shape):
        if isinstance(d, bool) or not isinstance(d, int):
            text = "unknown" if d is None or d == "" else shown(d)
            # a dimension named in the file can be pinned without re-exporting; one without a
            # name, or with a name onnx's inference made up, cannot
            pin = (f" (`sonnx conform MODEL -o OUT --dim {d}=SIZE` pins it)"
                   if isinstance(d, str) and d in pinnable else "")
            return [Violation("PROF-R2", f"{what} has dimension {axis} = {text}, not a static integer; "
                                         f"fix every dimension to a positive constant{pin}")]
        if d <= 0:
            return [Violation("PROF-R2", f"{what} has dimension {axis} = {d}; every dimension must be "
                                         "positive (empty tensors are outside the profile)")]
        size *= d
    if size > MAX_ELEMENTS:
        return [Violation("PROF-R2", f"{what} has {size} elements, more than the profile's limit "
                                     f"of {MAX_ELEMENTS}; split the tensor")]
    return []


# PROF-R3: the opset versions the profile knows. For every opset 1..MAX_KNOWN_OPSET the version
# in force of each registered operator is one whose type set its module holds (checked against
# the installed onnx schemas by tests/test_dtypes.py); a later opset may redefine them.
MAX_KNOWN_OPSET = 28


def opset_range_violations(version: int, subject: str) -> list[Violation]:
    """PROF-R3, the one check of the opset range, shared by the validator (an opset_import) and
    the kernels (their ``opset`` argument); ``subject`` starts the message ("... which")."""
    if 1 <= version <= MAX_KNOWN_OPSET:
        return []
    return [Violation("PROF-R3", f"{subject} the profile does not know; use an opset from 1 to "
                                 f"{MAX_KNOWN_OPSET} (e.g. convert with "
                                 "onnx.version_converter.convert_version)")]


def kernel_opset(opset: object, op: str) -> int:
    """A kernel's ``opset`` argument as an int: TypeError for anything but an integer (a bool
    or a string is a mistake, not a version), ProfileViolation (PROF-R3) outside the range."""
    if isinstance(opset, bool) or not isinstance(opset, numbers.Integral):
        raise wrong_type(op, "opset", f"an integer (the default-domain opset version, 1 to {MAX_KNOWN_OPSET})",
                         opset)
    version = int(opset)
    raise_if_any(opset_range_violations(version, f"sonnx.{op} was given opset {shown(version)}, which"))
    return version


def opset_import_violations(imports: Sequence[tuple[str, int]], what: str = "the model",
                            *, require_default: bool = True) -> list[Violation]:
    """PROF-R3: one import of the default domain ('' and 'ai.onnx' are the same), with a known
    version, and no domain imported twice. ``imports`` is the list of (domain, version) pairs."""
    found: list[Violation] = []
    seen: dict[str, int] = {}
    for domain, version in imports:
        key = "" if domain in DEFAULT_DOMAINS else domain
        named = "the default domain ('' / 'ai.onnx')" if key == "" else f"domain '{domain}'"
        if key in seen:
            found.append(Violation("PROF-R3", f"{what} imports {named} twice (versions {seen[key]} and "
                                              f"{version}); keep exactly one opset_import entry for it"))
            continue
        seen[key] = version
        if key == "":
            found.extend(opset_range_violations(version, f"{what} imports the default domain at opset "
                                                         f"{version}, which"))
    if require_default and "" not in seen:
        found.append(Violation("PROF-R3", f"{what} does not import the default ONNX domain; add one "
                                          f"opset_import entry for domain '' (version 1 to "
                                          f"{MAX_KNOWN_OPSET})"))
    return found
