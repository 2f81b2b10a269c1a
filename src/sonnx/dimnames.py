"""The named (symbolic) dimensions a model's declarations hold, and which of them
`sonnx conform --dim NAME=SIZE` can pin: read by the validator for its hints (PROF-R2) and by
conform's pin rewrite, kept here so that the validator does not load conform's rewrites."""
from __future__ import annotations

import re

# NAME=SIZE as --dim takes it
DIM = re.compile(r"^([^=\s][^=]*)=([+-]?\d+)$")


def declarations(g):
    """(what, ValueInfoProto) for every declaration of graph ``g``."""
    for what, coll in (("graph input", g.input), ("graph output", g.output),
                       ("value_info", g.value_info)):
        for vi in coll:
            yield what, vi


def dims_of(vi) -> list:
    """The dimension messages of a tensor declaration (none for another type or no shape)."""
    if vi.type.WhichOneof("value") != "tensor_type" or not vi.type.tensor_type.HasField("shape"):
        return []
    return list(vi.type.tensor_type.shape.dim)


def symbolic_names(g) -> list[str]:
    """The dim_params of ``g``'s declarations, in order of first appearance."""
    names: dict[str, None] = {}
    for _, vi in declarations(g):
        for d in dims_of(vi):
            if d.WhichOneof("value") == "dim_param" and d.dim_param:
                names[d.dim_param] = None
    return list(names)


def pinnable_names(g) -> frozenset[str]:
    """The named dimensions ``--dim NAME=SIZE`` pins in ``g``: the dim_params its declarations
    hold in the file (whatever they are called: tf2onnx writes unk__N names too; a name onnx's
    inference makes up later is in no declaration of the file) that the option can spell."""
    out = set()
    for n in symbolic_names(g):
        m = DIM.match(f"{n}=1")
        if m is not None and m.group(1).strip() == n and n.isprintable():
            out.add(n)
    return frozenset(out)
