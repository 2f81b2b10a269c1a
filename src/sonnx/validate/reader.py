"""From a path or a ModelProto to an inferred model: size checks, parse, ONNX checker, one strict
shape inference. Nothing here applies a profile rule; failures of onnx's own checks become
findings (ONNX-CHECKER, ONNX-INFERENCE), failures to read become ``Unreadable``."""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field

from .. import onnx_proto as onnx  # onnx's classes and checker without its package start-up
from google.protobuf.message import DecodeError

from ..dimnames import pinnable_names
from .. import text
from . import declarations, graph, propagate
from .report import ONNX_CHECKER, ONNX_INFERENCE, ONNX_IR, Finding

MAX_BYTES = 2**31 - 1  # protobuf cannot hold a message of 2 GiB or more


class Unreadable(Exception):
    """The input is not something the validator can judge (missing, empty, too big, not ONNX)."""


@dataclass
class Loaded:
    model: onnx.ModelProto          # inferred when inference ran, else as parsed
    inferred: bool                  # True when value_info holds onnx's inferred types
    findings: list[Finding] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    declared: list[Finding] = field(default_factory=list)  # PROF-R2 on declarations as written
    pinnable: frozenset[str] = frozenset()  # dimension names --dim pins (named in the file)
    # main-graph value -> signature, when the validator's own propagation decided every shape
    # (propagate.py) and onnx's inference did not run; None: types come from value_info
    main_types: dict | None = None


def read_bytes(path: str | os.PathLike, *, kind: str = "an ONNX model", limit: int = MAX_BYTES) -> bytes:
    """The file's bytes, refusing a missing, empty or oversized file before parsing it
    (``kind`` and ``limit``: what the file should be, for the OpenVINO IR reader too)."""
    shown = text.shown_path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise Unreadable(f"{shown}: no such file") from None
    except ValueError:  # the OS cannot name it: a NUL byte in the path
        raise Unreadable(f"{shown}: not a valid path (it contains a NUL byte)") from None
    except OSError as exc:
        raise Unreadable(f"{shown}: cannot access: {exc.strerror or exc}") from None
    if not os.path.isfile(path):
        raise Unreadable(f"{shown}: not a regular file")
    if st.st_size == 0:
        raise Unreadable(f"{shown}: empty file, not {kind}")
    if st.st_size > limit and limit != MAX_BYTES:
        raise Unreadable(f"{shown}: {st.st_size} bytes, over the {limit} bytes sonnx reads as {kind}")
    if st.st_size > MAX_BYTES:
        raise Unreadable(f"{shown}: {st.st_size} bytes, over the 2 GiB limit of a protobuf ONNX "
                         "model; store the weights as external data (onnx.save(..., "
                         "save_as_external_data=True))")
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise Unreadable(f"{shown}: cannot read: {exc.strerror or exc}") from None


def parse(data: bytes, shown: str) -> onnx.ModelProto:
    """Parse serialized bytes; weights stored as external data are never read."""
    try:
        model = onnx.load_model_from_string(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise Unreadable(f"{shown}: not an ONNX model (protobuf parse failed: {exc})") from None
    if not model.HasField("graph"):
        raise Unreadable(f"{shown}: not an ONNX model (parsed as protobuf, but holds no graph)")
    return model


_NODE_IN_MESSAGE = re.compile(r"\(op_type:([\w.]+), node name: ([^)]*)\)")
_CHECKER_NODE = re.compile(r"(?i)name:\s*(\S*)\s+OpType:\s*([\w.]+)")


def _onnx_finding(rule: str, exc: BaseException, what: str) -> Finding:
    text = " ".join(str(exc).split())
    node_name = op_type = None
    m = _NODE_IN_MESSAGE.search(text) or _CHECKER_NODE.search(text)
    if m:
        op_type, node_name = m.group(1), m.group(2) or None
        if m.re is _CHECKER_NODE:
            node_name, op_type = m.group(1) or None, m.group(2)
    return Finding(rule, f"{what}: {text}; fix the model so that onnx accepts it",
                   graph="main", node_name=node_name, op_type=op_type)


def check_and_infer(data: bytes, path: str | None = None, text_ok: bool = False) -> Loaded:
    """Run the ONNX checker and one strict shape inference on serialized ``data``.

    With ``path`` the checker reads the file itself, so that it resolves external-data
    locations next to the model (it checks that they exist; the weights are not loaded). A path
    onnx cannot take as text (not UTF-8) is checked from ``data``: declarations.check covers the
    external data then. ``text_ok``: every text field of ``data`` is known to be UTF-8."""
    timings: dict[str, float] = {}
    findings: list[Finding] = []
    if path is not None:
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            path = None
    t = time.perf_counter()
    checked = True
    try:
        onnx.checker.check_model(path if path is not None else data)
    except Exception as exc:  # ValidationError, or a C++ error surfaced as another type
        checked = False
        findings.append(_onnx_finding(ONNX_CHECKER, exc, "the ONNX checker rejects the model"))
    timings["check"] = time.perf_counter() - t

    t = time.perf_counter()
    # a profile model whose shapes follow from its declarations: the validator's propagation
    # decides them (it takes a model only where inference would accept it, with these types)
    parsed = onnx.load_model_from_string(data)
    main_types = propagate.profile_types(parsed, onnx.defs.onnx_opset_version())
    timings["propagate"] = time.perf_counter() - t
    if not text_ok:
        text.clean_model(parsed)
    # the graph rules (PROF-R4..R6) read the structure as written, on every model, whichever
    # way its shapes are decided (propagation or onnx's inference); an accepted checker
    # vouches for the order (graph.findings)
    t = time.perf_counter()
    findings.extend(graph.findings(parsed, checked=checked,
                                   unread=getattr(main_types, "unread", None)))
    timings["graph"] = time.perf_counter() - t
    if main_types is not None:
        timings["infer"] = 0.0
        return Loaded(parsed, True, findings, timings, main_types=main_types)
    parsed = None
    t = time.perf_counter()
    inferred: onnx.ModelProto | None = None
    try:
        inferred = onnx.shape_inference.infer_shapes(data, check_type=True, strict_mode=True,
                                                     data_prop=True)
    except Exception as exc:
        findings.append(_onnx_finding(ONNX_INFERENCE, exc,
                                      "ONNX shape and type inference fails"))
        try:  # keep whatever types onnx can still infer, so every other rule can be checked
            inferred = onnx.shape_inference.infer_shapes(data, check_type=False,
                                                         strict_mode=False, data_prop=True)
        except Exception:
            inferred = None
    timings["infer"] = time.perf_counter() - t
    if inferred is None:  # parse again rather than keep a second copy alive during inference
        inferred, known = onnx.load_model_from_string(data), False
    else:
        known = True
    if not text_ok:  # reported by written_findings; here only made readable
        text.clean_model(inferred)
    return Loaded(inferred, known, findings, timings)


def written_findings(data: bytes, shown: str, base_dir: str | None) -> tuple[list, list, bool, frozenset]:
    """Findings on the model as written (text that is not UTF-8, declarations, loadability),
    from a parse of ``data`` that is dropped afterwards: the two lists of declarations.check,
    whether every text field is UTF-8, and the dimension names --dim can pin (those of the
    file: onnx's inference adds names of its own later)."""
    # the strict parse first, and dropped: it and the model are never alive together
    known_utf8 = text.parses_as_utf8(onnx.ModelProto.DESCRIPTOR, data)
    model = parse(data, shown)
    bad = [] if known_utf8 else text.clean_model(model, data)
    found = []
    if bad:
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        found.append(Finding(ONNX_IR, f"{len(bad)} text field(s) are not UTF-8 ({', '.join(bad[:3])}"
                                      f"{more}); protobuf text must be UTF-8, and tools disagree on "
                                      "how to read the rest: re-encode the names", graph="model"))
    findings, declared = declarations.check(model, base_dir)
    return found + findings, declared, not bad, pinnable_names(model.graph)


def load(model_or_path) -> tuple[str, Loaded]:
    """(display name, loaded model) for a path or an onnx.ModelProto."""
    timings: dict[str, float] = {}
    t = time.perf_counter()
    if isinstance(model_or_path, onnx.ModelProto):
        shown = "<ModelProto>"
        model = model_or_path
        if not model.HasField("graph"):
            raise Unreadable("the ModelProto holds no graph")
        size = model.ByteSize()
        if size > MAX_BYTES:
            raise Unreadable(f"the ModelProto serializes to {size} bytes, over the 2 GiB limit; "
                             "keep the weights as external data")
        data = model.SerializeToString()
    elif isinstance(model_or_path, (str, os.PathLike)):
        shown = text.shown_path(model_or_path)
        data = read_bytes(model_or_path)
    else:
        raise TypeError("sonnx.validate: expected a path (str or os.PathLike) or an "
                        f"onnx.ModelProto, got {type(model_or_path).__name__}")
    timings["load"] = time.perf_counter() - t
    model = None  # only the serialized bytes stay alive through the checker and inference
    path = None if isinstance(model_or_path, onnx.ModelProto) else os.fsdecode(model_or_path)
    # refuses what is not an ONNX model (Unreadable) before any check runs
    t = time.perf_counter()
    written, loaded_declared, text_ok, pinnable = written_findings(
        data, shown, None if path is None else os.path.dirname(path) or ".")
    timings["written"] = time.perf_counter() - t
    loaded = check_and_infer(data, path, text_ok)
    loaded.findings[:0] = written
    loaded.declared = loaded_declared
    loaded.pinnable = pinnable
    loaded.timings = {**timings, **loaded.timings}
    return shown, loaded
