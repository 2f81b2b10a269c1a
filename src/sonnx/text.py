"""Untrusted text: names and paths read from a model or a command line.

Three jobs, one place: (1) protobuf hands a text field that is not UTF-8 back as ``bytes``;
``clean_model`` finds every such field (the model is then not conformant: ONNX-IR) and replaces
it with a decoded copy, so that nothing downstream ever meets ``bytes``. (2) ``shown_path``
turns a path that is not UTF-8 (Python keeps its bytes as lone surrogates) into printable text.
(3) ``neutral`` escapes what a terminal would interpret (control characters, bidi marks, line
separators), so that one finding is one line and a name can never forge a line of output.
"""
from __future__ import annotations

import os
import unicodedata
import urllib.parse

from google.protobuf.descriptor import FieldDescriptor

_STRING, _MESSAGE = FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE


def decode(value: str | bytes) -> str:
    """A protobuf text field as str: bytes that are not UTF-8 become \\xNN escapes."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return value


def _clean(msg, where: str, bad: list[str]) -> None:
    # ListFields yields only the fields that are set (one C call per message, the hot path of a
    # 1M-node model); numeric and bytes fields (tensor data) are skipped: weights stay untouched
    for fd, v in msg.ListFields():
        if fd.type == _STRING:
            if not fd.is_repeated:
                if isinstance(v, bytes):
                    setattr(msg, fd.name, decode(v))
                    bad.append(f"{where}.{fd.name} = '{decode(v)}'")
                continue
            try:  # join refuses bytes: one C call proves a whole list is text
                "".join(v)
                continue
            except TypeError:
                pass
            for i, x in enumerate(v):
                if isinstance(x, bytes):
                    v[i] = decode(x)
                    bad.append(f"{where}.{fd.name}[{i}] = '{v[i]}'")
        elif fd.type == _MESSAGE:
            if not fd.is_repeated:
                _clean(v, f"{where}.{fd.name}", bad)
                continue
            for i, x in enumerate(v):
                _clean(x, f"{where}.{fd.name}[{i}]", bad)


_STRICT: dict[str, object] = {}   # message full name -> its strict twin's class, or None


def _strict_twin(descriptor):
    """The class of a twin of ``descriptor``'s message type with the same fields and numbers,
    declared in proto3 syntax in a pool of its own: protobuf's parser then checks every string
    field of a message, at every depth, for UTF-8 as it reads it (C code, no Python per field),
    where the proto2 original hands bad text back as bytes. None when the file cannot be
    restated so (a required field, an import): the caller walks the fields instead."""
    name = descriptor.full_name
    if name not in _STRICT:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
        twin = None
        try:
            fdp = descriptor_pb2.FileDescriptorProto()
            descriptor.file.CopyToProto(fdp)
            fdp.syntax = "proto3"
            todo = list(fdp.message_type)
            while todo:
                m = todo.pop()
                todo.extend(m.nested_type)
                for f in m.field:
                    if f.label == descriptor_pb2.FieldDescriptorProto.LABEL_REQUIRED:
                        raise ValueError(f.name)
                    f.ClearField("default_value")  # proto3 has none; defaults hold no text
            if fdp.dependency or fdp.extension:
                raise ValueError("imports or extensions")
            pool = descriptor_pool.DescriptorPool()
            pool.Add(fdp)
            twin = message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
        except Exception:  # noqa: BLE001 - any failure only costs the walk
            twin = None
        _STRICT[name] = twin
    return _STRICT[name]


def parses_as_utf8(descriptor, data: bytes) -> bool:
    """True when ``data`` parses as the strict twin (_strict_twin): every text field it holds
    is UTF-8, and clean_model has nothing to do. False means "not known" (bad text, or anything
    else the twin refuses): clean_model walks. Call it before parsing ``data`` for real, so that
    the twin (as large as the model) is freed before the model is built: peak memory."""
    twin = _strict_twin(descriptor)
    if twin is None:
        return False
    try:
        twin.FromString(data)
    except Exception:  # noqa: BLE001 - DecodeError on bad text; the walk then finds where
        return False
    return True


def _any_bytes(msg) -> bool:
    """Whether any text field of ``msg`` (at any depth) is bytes: the same fields _clean visits,
    read the same way, without the field paths it builds (a 1M-node model has no bad field in
    the common case: only then is the path of each one needed, by _clean)."""
    for fd, v in msg.ListFields():
        kind = fd.type
        if kind == _STRING:
            if fd.is_repeated:
                try:  # join refuses bytes: one C call proves a whole list is text
                    "".join(v)
                except TypeError:
                    return True
            elif isinstance(v, bytes):
                return True
        elif kind == _MESSAGE:
            if fd.is_repeated:
                if any(map(_any_bytes, v)):
                    return True
            elif _any_bytes(v):
                return True
    return False


def clean_model(model, data: bytes | None = None) -> list[str]:
    """Replace every text field of ``model`` that protobuf returned as bytes (not UTF-8) by its
    decoded text, in place; return where they were (field paths). With ``data`` (the serialized
    model) a model whose bytes are all ASCII is known clean without a walk. (Bytes that decode
    as UTF-8 as a whole would not do: a field ending in a lead byte such as 0xC3 followed by a
    field tag 0xA0 (AttributeProto.type) reads as the valid pair "\\xc3\\xa0".)"""
    if data is not None and data.isascii():
        return []
    if not _any_bytes(model):  # the common case, decided without building a field path per node
        return []
    bad: list[str] = []
    _clean(model, "model", bad)
    return bad


def shown_path(path: str | os.PathLike) -> str:
    """A path as printable text: bytes that are not UTF-8 appear as \\xNN."""
    raw = os.fsencode(path)
    return raw.decode("utf-8", "backslashreplace")


def path_uri(path: str) -> str:
    """A path as an RFC 3986 URI reference for SARIF: absolute paths as file:// URIs, relative
    ones as relative references; every byte outside the unreserved set is percent-encoded (a
    ':' too, so that a first segment is never read as a scheme)."""
    raw = os.fsencode(path)
    quoted = urllib.parse.quote(raw, safe="/")
    return "file://" + quoted if raw.startswith(b"/") else quoted


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _needs_escape(ch: str) -> bool:
    # C*: control, format (bidi marks, zero-width), surrogate, private, unassigned; Z[lp]:
    # line and paragraph separators (a terminal or an editor may break the line there)
    return unicodedata.category(ch)[0] == "C" or unicodedata.category(ch) in ("Zl", "Zp")


def neutral(s: str) -> str:
    """``s`` with every character a terminal could act on written as an escape (\\xNN,
    \\uNNNN, the same form as bytes that are not UTF-8): printable text is kept as is."""
    if s.isprintable():
        return s  # fast path: isprintable() is False for every character _needs_escape accepts
    return "".join(_escape(ch) if _needs_escape(ch) else ch for ch in s)
