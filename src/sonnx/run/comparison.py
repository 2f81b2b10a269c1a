"""``sonnx run --compare onnxruntime``: sonnx's results against onnxruntime's, and whether
onnxruntime stays within the profile's stated bounds.

Reported per graph output: the largest ULP distance and the largest absolute difference between
onnxruntime's whole-model result and sonnx's.

The verdict is judged node by node, because the profile's bounds are stated per operator: each
node is run alone in onnxruntime on the inputs *sonnx* computed for it (so errors do not compound
across layers, and each node is held to its own bound), by its operator's record
(``Operator.comparison``):
- "bits": equal bit for bit (a NaN matches any NaN, payloads open), as for the element-wise
  operators (one IEEE 754 rounding);
- "bits, zero sign open": equal, except that onnxruntime may return -0 where the profile gives
  +0 (the unary operator's spec page says where), and a NaN matches any NaN;
- a bound function (the matrix operators: the fast-mode error bound the operator's tests use):
  every element of a float result within it, onnxruntime's and sonnx's own (a wrong sonnx result
  is "outside" too); an integer result is held to "bits" (wrap-around).
A node onnxruntime cannot run (no kernel for the type) or whose operands hold an infinity or
NaN (a bound is stated for finite operands) is "not compared": the verdict is then not "within
bounds".
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import dtypes
from ..ops.registry import operator
from . import executor
from .hexfloat import _UINT   # one table of the unsigned type of each float width
from .io import check_feeds


class CompareError(Exception):
    """onnxruntime is missing or cannot run the model at all."""


@dataclass
class OutputDiff:
    name: str
    dtype: str
    max_ulp: int | None          # None: the NaN positions differ
    max_abs: float
    nan_mismatch: int = 0


@dataclass
class NodeCheck:
    index: int
    name: str
    op_type: str
    status: str                  # "within" | "outside" | "not compared"
    detail: str = ""
    max_ulp: int | None = None   # onnxruntime's node result against sonnx's (None: not measured,
    max_abs: float | None = None  # or NaN positions differ)


@dataclass
class Comparison:
    mode: str
    outputs: list[OutputDiff] = field(default_factory=list)
    nodes: list[NodeCheck] = field(default_factory=list)
    sonnx_outputs: dict = field(default_factory=dict)      # name -> sonnx's result (not in as_dict)

    @property
    def within_bounds(self) -> bool:
        return all(n.status == "within" for n in self.nodes)

    def as_dict(self) -> dict:
        return {"mode": self.mode, "within_bounds": self.within_bounds,
                "outputs": [vars(o) for o in self.outputs], "nodes": [vars(n) for n in self.nodes]}


def _ordered(bits: np.ndarray, width: int) -> np.ndarray:
    """Sign-magnitude float bits as integers ordered like the values (-0 and +0 both 0)."""
    b = bits.astype(object) if width == 64 else bits.astype(np.int64)
    mag = b & ((1 << (width - 1)) - 1)
    return np.where(b >> (width - 1) == 1, -mag, mag)


def output_diff(name: str, ours: np.ndarray, theirs: np.ndarray) -> OutputDiff:
    """Largest ULP distance (for integers: the difference) and absolute difference."""
    kind = dtypes.name_of(ours.dtype)
    a, b = ours.reshape(-1), np.asarray(theirs).reshape(-1)
    if not dtypes.is_float(kind):
        diff = np.abs(a.astype(object) - b.astype(object)) if a.size else np.array([0])
        worst = int(diff.max()) if a.size else 0
        return OutputDiff(name, kind, worst, float(worst))
    with np.errstate(invalid="ignore"):     # a signalling NaN warns when widened
        wa, wb = a.astype(np.float64), b.astype(np.float64)
    nan_a, nan_b = np.isnan(wa), np.isnan(wb)
    mismatch = int(np.count_nonzero(nan_a != nan_b))
    keep = ~(nan_a | nan_b)
    width = 8 * a.dtype.itemsize
    ua, ub = a[keep].view(_UINT[a.dtype.itemsize]), b[keep].view(_UINT[a.dtype.itemsize])
    ulps = np.abs(_ordered(ua, width) - _ordered(ub, width))
    with np.errstate(invalid="ignore"):
        absd = np.where(wa[keep] == wb[keep], 0.0, np.abs(wa[keep] - wb[keep]))
    return OutputDiff(name, kind, None if mismatch else (int(ulps.max()) if ulps.size else 0),
                      float(absd.max()) if absd.size else 0.0, mismatch)


def _session(model):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _node_model(node, args: list[np.ndarray], out: np.ndarray, opset: int, ir_version: int):
    from onnx import TensorProto, helper

    def info(name, a):
        elem = TensorProto.DataType.Value(dtypes.name_of(a.dtype).upper())
        return helper.make_tensor_value_info(name, elem, list(a.shape))
    names = [n for n in node.input if n]
    seen, ins = set(), []
    for n, a in zip(names, args):
        if n not in seen:
            seen.add(n)
            ins.append(info(n, a))
    graph = helper.make_graph([node], "node", ins, [info(node.output[0], out)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)


def _same(y: np.ndarray, ours: np.ndarray, zero_sign_open: bool) -> str:
    """'' when equal under the rule, else where they differ."""
    kind = dtypes.name_of(ours.dtype)
    if y.dtype != ours.dtype or y.shape != ours.shape:
        return f"onnxruntime gave {dtypes.name_of(y.dtype)} {y.shape}, sonnx {kind} {ours.shape}"
    a, b = y.reshape(-1), ours.reshape(-1)
    if dtypes.is_float(kind):
        with np.errstate(invalid="ignore"):
            wa, wb = a.astype(np.float64), b.astype(np.float64)
        both_nan = np.isnan(wa) & np.isnan(wb)
        equal = (wa == wb) if zero_sign_open else (a.view(_UINT[a.dtype.itemsize]) == b.view(_UINT[a.dtype.itemsize]))
        bad = np.flatnonzero(~(equal | both_nan))
    else:
        bad = np.flatnonzero(a != b)
    if bad.size:
        i = int(bad[0])
        return f"{bad.size} element(s) differ, first at flat index {i}: onnxruntime {a[i]!r}, sonnx {b[i]!r}"
    return ""


def check_node(index: int, node, args: list[np.ndarray], ours: np.ndarray, opset: int, ir_version: int,
               tenths=None) -> NodeCheck:
    """One node run alone in onnxruntime on sonnx's inputs, judged by its operator's criterion.
    ``tenths(percent)``: called at each tenth of a long bound check (a record's bound function)."""
    check = NodeCheck(index, node.name, node.op_type, "within")
    try:
        feed = dict(zip([n for n in node.input if n], args))
        (y,) = _session(_node_model(node, args, ours, opset, ir_version)).run(None, feed)
    except Exception as exc:    # onnxruntime's own refusal (no kernel for a type, say)
        check.status, check.detail = "not compared", f"onnxruntime cannot run it: {str(exc).splitlines()[0][:200]}"
        return check
    kind = dtypes.name_of(ours.dtype)
    y_arr = np.asarray(y)
    if y_arr.dtype == ours.dtype and y_arr.shape == ours.shape:     # the node's maxima, for the report
        d = output_diff(node.name, ours, y_arr)
        check.max_ulp, check.max_abs = d.max_ulp, d.max_abs
    record = operator(node.op_type)
    rule = record.comparison
    if callable(rule) and dtypes.is_float(kind):
        names = record.kernel_attributes
        kw = {names[k]: v for k, v in executor.attributes(node).items() if k in names}
        try:
            # sonnx's own result is held to the same bound (exact mode is the bound's centre,
            # fast mode is within it): a wrong sonnx result is never reported as replicated.
            # Both in one call: the bound's work on the operands is done once
            outside, mine = rule((np.asarray(y), ours), args, kw, tenths)
        except ValueError as exc:
            check.status, check.detail = "not compared", str(exc)
            return check
        if outside:
            check.status, check.detail = "outside", outside
        elif mine:
            check.status, check.detail = "outside", f"sonnx's own result: {mine}"
        return check
    if rule not in ("bits", "bits, zero sign open") and not callable(rule):
        raise ValueError(f"{node.op_type}: unknown comparison rule {rule!r}")
    differs = _same(np.asarray(y), ours, zero_sign_open=rule == "bits, zero sign open")
    if differs:
        check.status, check.detail = "outside", differs
    return check


def compare(model_or_path, inputs: dict[str, np.ndarray], mode: str = "exact", progress=None) -> Comparison:
    """Run the model (a path, a ModelProto or a Session, whose mode then counts) with sonnx
    (``mode``) and with onnxruntime on ``inputs``: per-output
    differences and per-node verdicts (module docstring). Raises RunError / InputError as
    sonnx.run does, CompareError when onnxruntime is missing or cannot run the whole model."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        raise CompareError("onnxruntime is not installed; pip install onnxruntime (or run without "
                           "--compare)") from None
    from .session import Session
    session = model_or_path if isinstance(model_or_path, Session) else Session(model_or_path, mode)
    loaded = session.loaded
    feeds = check_feeds(dict(inputs), loaded.inputs)
    values = session.evaluate(feeds, progress, keep_all=True)
    model = loaded.model
    try:
        theirs = _session(model).run(None, feeds)
    except Exception as exc:
        raise CompareError(f"onnxruntime cannot run the model: {str(exc).splitlines()[0][:300]}") from None
    result = Comparison(session.mode, sonnx_outputs={o.name: values[o.name] for o in model.graph.output})
    for out, y in zip(model.graph.output, theirs):
        result.outputs.append(output_diff(out.name, values[out.name], y))
    nodes = list(model.graph.node)
    for i, node in enumerate(nodes):
        tenths = None
        if progress is not None:
            progress(i, len(nodes), node, None)
            tenths = (lambda pct, i=i, node=node: progress(i, len(nodes), node, None, pct))
        args = [values[n] for n in node.input if n]
        result.nodes.append(check_node(i, node, args, values[node.output[0]], loaded.opset, model.ir_version,
                                       tenths))
    return result
