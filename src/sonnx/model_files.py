"""The identity of a model on disk: the SHA-256 of the .onnx file and of every external-data
file its tensors name, so that a report pins the weights too (editing a model's .onnx.data
changes its outputs without changing the .onnx).

Only the tensors' ``external_data`` entries are read (the model is parsed without its data); a
named file that is missing or outside the model's folder is listed as such, never skipped."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _tensors(graph):
    """Every TensorProto of a graph, its subgraphs included (where external data can be named)."""
    yield from graph.initializer
    for sp in graph.sparse_initializer:
        yield sp.values
        yield sp.indices
    yield from _node_tensors(graph.node)


def _node_tensors(nodes):
    for node in nodes:
        for a in node.attribute:
            if a.HasField("t"):
                yield a.t
            yield from a.tensors
            if a.HasField("g"):
                yield from _tensors(a.g)
            for g in a.graphs:
                yield from _tensors(g)


def locations(model) -> list[str]:
    """The external-data file names the model's tensors give, each once, in order of appearance."""
    seen: list[str] = []
    tensors = [*_tensors(model.graph), *(t for f in model.functions for t in _node_tensors(f.node))]
    for t in tensors:
        for entry in t.external_data:
            if entry.key == "location" and entry.value not in seen:
                seen.append(entry.value)
    return seen


def identity(path: str | os.PathLike) -> dict:
    """{"sha256": of the file (None if unreadable), "external_data": [{location, sha256 or None,
    problem}]} of the model at ``path``."""
    p = Path(path)
    try:
        digest = _sha256(p)
    except OSError:
        return {"sha256": None, "external_data": []}
    try:
        import onnx
        model = onnx.load_model(str(p), load_external_data=False)
    except Exception:       # not a model we can parse: the file's own hash still identifies it
        return {"sha256": digest, "external_data": []}
    base = p.resolve().parent
    out = []
    for loc in locations(model):
        target = (base / loc).resolve()
        entry = {"location": loc, "sha256": None, "problem": None}
        if not target.is_relative_to(base):
            entry["problem"] = "outside the model's folder"
        else:
            try:
                entry["sha256"] = _sha256(target)
            except OSError as exc:
                entry["problem"] = f"unreadable ({exc.strerror or exc})"
        out.append(entry)
    return {"sha256": digest, "external_data": out}
