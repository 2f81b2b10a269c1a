"""Small OpenVINO IR documents for the tests, written as text (as OpenVINO's serializer writes
them: ports with precision and dims, edges by layer and port id)."""
from __future__ import annotations

from xml.sax.saxutils import quoteattr


def _port(pid: int, dims, precision: str | None, names: str | None = None) -> str:
    """A port; a dynamic dimension is -1 there, as OpenVINO's serializer writes it."""
    attrs = f' id="{pid}"' + (f' precision="{precision}"' if precision else "") + (
        f" names={quoteattr(names)}" if names else "")
    return f"<port{attrs}>" + "".join(f"<dim>{d if isinstance(d, int) else -1}</dim>" for d in dims) + "</port>"


def layer(lid: int, kind: str, *, name: str | None = None, data: dict | None = None, inputs=(),
          outputs=(), version: str = "opset1", precision: str | None = "FP32",
          in_precisions=None) -> str:
    """One <layer>: input ports get ids 0..n-1, output ports n, n+1, ...; every port has
    ``precision`` unless ``in_precisions`` gives the input ports' one by one."""
    in_precisions = in_precisions or [precision] * len(inputs)
    out = [f'<layer id="{lid}" name={quoteattr(name or f"{kind.lower()}_{lid}")} '
           f'type="{kind}" version="{version}">']
    if data:
        out.append("<data " + " ".join(f"{k}={quoteattr(str(v))}" for k, v in data.items()) + "/>")
    if inputs:
        out.append("<input>" + "".join(_port(i, d, q) for i, (d, q) in enumerate(zip(inputs, in_precisions))) + "</input>")
    if outputs:
        out.append("<output>" + "".join(_port(len(inputs) + i, d, precision)
                                        for i, d in enumerate(outputs)) + "</output>")
    out.append("</layer>")
    return "".join(out)


def net(layers, edges, *, version="11", head: str = '<?xml version="1.0"?>\n') -> bytes:
    body = "".join(layers)
    links = "".join(f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>'
                    for a, b, c, d in edges)
    return (f'{head}<net name="test" version="{version}"><layers>{body}</layers>'
            f"<edges>{links}</edges></net>").encode()


_PREC = {"f32": "FP32", "f16": "FP16", "f64": "FP64", "bf16": "BF16", "boolean": "BOOL", "u1": "BIN"}


def port_precision(etype: str) -> str:
    """The spelling OpenVINO's serializer gives a port of element type ``etype``."""
    return _PREC.get(etype, etype.upper())


def parameter(lid: int, dims, etype: str = "f32", name: str | None = None) -> str:
    shape = ",".join(str(d) for d in dims)
    return layer(lid, "Parameter", name=name, data={"shape": shape, "element_type": etype},
                 outputs=[dims], precision=port_precision(etype))


def binary(kind: str, a, b, out=None, *, data=None, etypes=("f32", "f32"), out_type=None,
           version: str = "opset1") -> bytes:
    """Parameter a, Parameter b -> layer ``kind`` (id 2) -> Result (id 3)."""
    out = a if out is None else out
    prec = port_precision(out_type or etypes[0])
    layers = [parameter(0, a, etypes[0], "a"), parameter(1, b, etypes[1], "b"),
              layer(2, kind, name="op", data=data, inputs=[a, b], outputs=[out], version=version,
                    precision=prec, in_precisions=[port_precision(t) for t in etypes]),
              layer(3, "Result", name="out", inputs=[out], precision=prec)]
    return net(layers, [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)])


def unary(kind: str, a, *, etype="f32", data=None) -> bytes:
    """Parameter a -> layer ``kind`` (id 1) -> Result (id 2)."""
    prec = port_precision(etype)
    layers = [parameter(0, a, etype, "a"),
              layer(1, kind, name="op", data=data, inputs=[a], outputs=[a], precision=prec),
              layer(2, "Result", name="out", inputs=[a], precision=prec)]
    return net(layers, [(0, 0, 1, 0), (1, 1, 2, 0)])
