"""The replication report of `sonnx run --compare`: the criterion between the trained model
(as onnxruntime computes it) and sonnx's implementation, stated, measured and judged, in a form a
certifier can file (ARP6983 / ED-324 ask for such a criterion: exact, or approximate with a
stated epsilon and metric).

Criteria (``--criterion``):
- ``bounds`` (default): every node within the profile's per-operator bound (comparison.py);
- ``exact``: every output equal bit for bit (a NaN matches a NaN), nodes within their bounds;
- ``ulp:N``: every output within N units in the last place, nodes within their bounds;
- ``abs:EPS``: every output within EPS in absolute value, nodes within their bounds.
The node check is part of every criterion: an output within epsilon over a node outside its
bound would be luck, not replication.

Report: JSON (schema ``sonnx-replication/1``, spec/replication-report.schema.json) and a page
(HTML): criterion, reference runtime and version, the model's bytes (file and external data),
the data set (each input's SHA-256 and one hash of them all), per output and per node the maxima
and the verdict.
"""
from __future__ import annotations

import hashlib
import html
import math
from dataclasses import dataclass

SCHEMA = "sonnx-replication/1"


class CriterionError(ValueError):
    pass


@dataclass(frozen=True)
class Criterion:
    name: str                 # bounds | exact | ulp | abs
    epsilon: float | None = None

    @property
    def text(self) -> str:
        if self.name == "bounds":
            return "every node within the profile's per-operator bound"
        if self.name == "exact":
            return "every output equal bit for bit, every node within its bound"
        if self.name == "ulp":
            return f"every output within {self.epsilon} ULP, every node within its bound"
        return f"every output within {self.epsilon!r} in absolute value, every node within its bound"

    def holds(self, out) -> bool:
        """Whether one output (comparison.OutputDiff) meets the criterion."""
        if self.name == "bounds":
            return True
        if out.max_ulp is None or out.nan_mismatch:     # NaN positions differ: never replicated
            return False
        if self.name == "exact":
            return out.max_ulp == 0
        if self.name == "ulp":
            return out.max_ulp <= self.epsilon
        return out.max_abs <= self.epsilon


def parse(text: str) -> Criterion:
    name, _, value = text.partition(":")
    if name in ("bounds", "exact") and not value:
        return Criterion(name)
    if name in ("ulp", "abs") and value:
        try:
            eps = int(value) if name == "ulp" else float(value)
        except ValueError:
            eps = None
        if eps is not None and math.isfinite(eps) and eps >= 0:
            return Criterion(name, eps)
    raise CriterionError(f"--criterion {text!r}: give bounds, exact, ulp:N (N a whole number >= 0) or "
                         "abs:EPS (EPS a finite number >= 0)")


def data_set_sha256(inputs: dict) -> str:
    """One hash of the data set: each input's name and the SHA-256 of its bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(inputs):
        h.update(name.encode("utf-8", "surrogatepass") + b"\0" + inputs[name]["sha256"].encode() + b"\n")
    return h.hexdigest()


def report(result, criterion: Criterion, *, model: str, model_files: dict, inputs: dict,
           reference: dict, sonnx_version: str) -> dict:
    outputs = [dict(vars(o), verdict="met" if criterion.holds(o) else "not met") for o in result.outputs]
    nodes = [vars(n) for n in result.nodes]
    replicated = all(o["verdict"] == "met" for o in outputs) and result.within_bounds
    return {"schema": SCHEMA, "sonnx": sonnx_version, "reference": reference,
            "criterion": {"name": criterion.name, "epsilon": criterion.epsilon,
                          "metric": {"ulp": "ULP", "abs": "absolute difference"}.get(criterion.name),
                          "statement": criterion.text},
            "model": model, "model_files": model_files, "mode": result.mode,
            "data_set": {"sha256": data_set_sha256(inputs), "inputs": inputs},
            "verdict": "replicated" if replicated else "not replicated",
            # kept from the comparison record that came before this report
            "within_bounds": result.within_bounds, "outputs": outputs, "nodes": nodes}


def page(rep: dict) -> str:
    """The report as a page a person reads and files."""
    e = html.escape
    good = rep["verdict"] == "replicated"
    outs = "".join(f"<tr><td>{e(o['name'])}</td><td>{e(o['dtype'])}</td><td>{o['max_ulp'] if o['max_ulp'] is not None else 'NaN positions differ'}</td>"
                   f"<td>{o['max_abs']:.6g}</td><td>{o['nan_mismatch']}</td><td class='{'ok' if o['verdict'] == 'met' else 'bad'}'>{e(o['verdict'])}</td></tr>"
                   for o in rep["outputs"])
    nodes = "".join(f"<tr><td>{n['index']}</td><td>{e(n['name'])}</td><td>{e(n['op_type'])}</td>"
                    f"<td>{'-' if n['max_ulp'] is None else n['max_ulp']}</td>"
                    f"<td>{'-' if n['max_abs'] is None else format(n['max_abs'], '.6g')}</td>"
                    f"<td class='{'ok' if n['status'] == 'within' else 'bad'}'>{e(n['status'])}</td><td>{e(n['detail'])}</td></tr>"
                    for n in rep["nodes"])
    ext = "".join(f"<li>{e(x['location'])}: {e(x['sha256'] or x['problem'] or '')}</li>"
                  for x in rep["model_files"].get("external_data", []))
    ins = "".join(f"<li>{e(k)}: {e(v['dtype'])} {e(str(tuple(v['shape'])))} sha256 {e(v['sha256'])}</li>"
                  for k, v in rep["data_set"]["inputs"].items())
    c = rep["criterion"]
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Replication report</title><style>"
            "body{font-family:system-ui,sans-serif;margin:2rem}td,th{padding:.3rem .7rem;border-bottom:1px solid #ddd;"
            "text-align:left}.ok{color:#0d6b2c;font-weight:600}.bad{color:#9b1c1c;font-weight:600}</style></head><body>"
            f"<h1>Replication report: <span class='{'ok' if good else 'bad'}'>{e(rep['verdict'])}</span></h1>"
            f"<p>Criterion: <b>{e(c['name'])}</b>{'' if c['epsilon'] is None else ' ' + e(repr(c['epsilon']))}: {e(c['statement'])}.</p>"
            f"<p>Model {e(rep['model'])} (sha256 {e(str(rep['model_files'].get('sha256')))})"
            + (f"; external data:<ul>{ext}</ul>" if ext else ".") + "</p>"
            f"<p>Reference: {e(rep['reference']['runtime'])} {e(rep['reference']['version'])}; "
            f"sonnx {e(rep['sonnx'])}, {e(rep['mode'])} mode.</p>"
            f"<p>Data set sha256 {e(rep['data_set']['sha256'])}:<ul>{ins}</ul></p>"
            "<h2>Outputs</h2><table><tr><th>output</th><th>type</th><th>max ULP</th><th>max |diff|</th>"
            f"<th>NaN mismatches</th><th>criterion</th></tr>{outs}</table>"
            "<h2>Nodes</h2><p>Each node run alone in the reference on sonnx's inputs, held to its "
            "operator's bound.</p><table><tr><th>#</th><th>node</th><th>operator</th><th>max ULP</th>"
            f"<th>max |diff|</th><th>status</th><th>detail</th></tr>{nodes}</table></body></html>\n")
