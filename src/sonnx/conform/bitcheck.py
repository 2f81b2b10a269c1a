"""The bit-identity check of ``sonnx conform``: the original model (with the same --dim pins) and
the rewritten one run through onnxruntime on the same seeded inputs, every output compared bit
for bit. Graph optimisations are off and one thread is used, so that each model runs node by
node as written (a fusion must not make two equal models differ, nor hide a difference).

A check that cannot run is reported "not checked" with its reason, never "passed".
"""
from __future__ import annotations

import numpy as np
import onnx

SEEDS = (0, 1, 2, 3)
# seed 0: finite values only; 1, 2: finite values with each edge value at random places; 3: every
# element an edge value (cycled), so that each edge value meets each position of a row


def _edge_values(dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "f":
        fi = np.finfo(dtype)
        sub = fi.smallest_subnormal
        return np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, sub, -sub, sub * 3, fi.smallest_normal,
                         -fi.smallest_normal, fi.max, -fi.max, 1.0, -1.0, fi.eps, 0.5], dtype=dtype)
    if dtype.kind in "iu":
        ii = np.iinfo(dtype)
        return np.array(sorted({ii.min, ii.max, 0, 1, ii.max - 1, ii.min + 1}), dtype=dtype)
    if dtype.kind == "b":
        return np.array([False, True])
    return np.zeros(1, dtype=dtype)


def make_input(dtype: np.dtype, shape: tuple[int, ...], seed: int, index: int) -> np.ndarray:
    """Seeded input ``index`` of a model for ``seed`` (see SEEDS)."""
    rng = np.random.default_rng([seed, index])
    n = int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "f":
        mag = rng.standard_normal(n) * np.exp2(rng.integers(-8, 9, n))
        x = mag.astype(dtype)
    elif dtype.kind in "iu":
        ii = np.iinfo(dtype)
        x = rng.integers(ii.min, ii.max, n, dtype=dtype, endpoint=True)
    elif dtype.kind == "b":
        x = rng.integers(0, 2, n).astype(bool)
    else:
        raise TypeError(f"element type {dtype} has no random input here")
    edges = _edge_values(dtype)
    if seed == 3:
        x = np.resize(edges, n).astype(dtype)
    elif seed in (1, 2) and n:
        # 10% edge values at random places, then every edge value once (when there is room)
        where = rng.random(n) < 0.1
        x[where] = edges[rng.integers(0, len(edges), int(where.sum()))]
        k = min(n, len(edges))
        x[rng.permutation(n)[:k]] = edges[rng.permutation(len(edges))[:k]]
    return x.reshape(shape)


def _session(ort, model: onnx.ModelProto):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] + ("..." if len(text) > 300 else "")


def _feeds_spec(model: onnx.ModelProto):
    """(name, numpy dtype, shape) of each input the caller feeds; ValueError when not static."""
    inits = {t.name for t in model.graph.initializer}
    out = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue        # a default the caller may override: both models keep it as is
        tt = vi.type.tensor_type
        if vi.type.WhichOneof("value") != "tensor_type" or not tt.HasField("shape"):
            raise ValueError(f"graph input '{vi.name}' is not a tensor of known shape")
        shape = []
        for d in tt.shape.dim:
            if d.WhichOneof("value") != "dim_value" or d.dim_value <= 0:
                raise ValueError(f"graph input '{vi.name}' has a dynamic dimension; pin it with --dim")
            shape.append(d.dim_value)
        try:
            dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type))
        except Exception:
            raise ValueError(f"graph input '{vi.name}' has an element type numpy cannot hold") from None
        if dtype.kind not in "fiub" or dtype.fields is not None or dtype.name not in (
                "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                "uint16", "uint32", "uint64", "bool"):
            raise ValueError(f"graph input '{vi.name}' has element type {dtype}, which onnxruntime "
                             "cannot be fed from numpy here")
        out.append((vi.name, dtype, tuple(shape)))
    return out


def _bits(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x)
    if x.dtype == object:
        return x.reshape(-1)
    return x.view(np.uint8).reshape(x.size, x.dtype.itemsize) if x.size else x.reshape(0, 1)


def _hex(v) -> str:
    v = np.asarray(v)
    if v.dtype.kind == "f":
        return float(v).hex() + f" (bits 0x{v.view(f'u{v.dtype.itemsize}').item():0{2 * v.dtype.itemsize}x})"
    return repr(v.item())


def compare(a: np.ndarray, b: np.ndarray) -> dict:
    """Bit-for-bit comparison of one output of the two models."""
    res = {"dtype": str(a.dtype), "shape": list(a.shape), "elements": int(a.size)}
    if a.shape != b.shape or a.dtype != b.dtype:
        res.update(identical=False, differing=None,
                   why=f"the rewritten model gives {b.dtype} {tuple(b.shape)}")
        return res
    ba, bb = _bits(a), _bits(b)
    diff = ~np.all(ba == bb, axis=1) if ba.ndim == 2 else (ba != bb)
    k = int(diff.sum())
    res.update(identical=k == 0, differing=k)
    if k:
        i = int(np.flatnonzero(diff)[0])
        idx = [int(v) for v in np.unravel_index(i, a.shape)] if a.ndim else []
        res["first_difference"] = {"index": idx, "original": _hex(a.reshape(-1)[i]),
                                   "rewritten": _hex(b.reshape(-1)[i])}
    return res


def bit_identity(original: onnx.ModelProto, rewritten: onnx.ModelProto,
                 seeds: tuple[int, ...] = SEEDS, progress=None) -> dict:
    """Run both models on the same inputs; the check's record for the report."""
    record: dict = {"status": "not checked", "runtime": None, "seeds": list(seeds),
                    "optimisations": "disabled (ORT_DISABLE_ALL), 1 thread", "inputs": [],
                    "runs": 0, "outputs": []}
    try:
        import onnxruntime as ort
    except ImportError:
        record["reason"] = ("onnxruntime is not installed (pip install onnxruntime, or the extra "
                            "sonnx[conform]); nothing was run")
        return record
    record["runtime"] = f"onnxruntime {ort.__version__}"
    try:
        spec = _feeds_spec(original)
    except ValueError as exc:
        record["reason"] = f"the original model cannot be fed: {exc}"
        return record
    record["inputs"] = [{"name": n, "dtype": str(d), "shape": list(s)} for n, d, s in spec]
    try:
        s_orig = _session(ort, original)
    except Exception as exc:
        record["reason"] = f"onnxruntime cannot load the original model: {_one_line(exc)}"
        return record
    try:
        s_new = _session(ort, rewritten)
    except Exception as exc:
        record.update(status="failed", reason=f"onnxruntime loads the original model but not the "
                                              f"rewritten one: {_one_line(exc)}")
        return record
    names = [o.name for o in s_orig.get_outputs()]
    if names != [o.name for o in s_new.get_outputs()]:
        record.update(status="failed", reason="the two models have different outputs")
        return record
    per_output: dict[str, dict] = {n: {"name": n, "identical": True, "differing": 0, "elements": 0,
                                       "by_seed": []} for n in names}
    for k, seed in enumerate(seeds):
        if progress is not None:
            progress(f"bit-identity check: seed {seed} ({k + 1}/{len(seeds)})")
        feeds = {n: make_input(d, s, seed, i) for i, (n, d, s) in enumerate(spec)}
        try:
            got_orig = s_orig.run(None, feeds)
        except Exception as exc:
            record["reason"] = f"onnxruntime cannot run the original model (seed {seed}): {_one_line(exc)}"
            record["status"] = "not checked"
            return record
        try:
            got_new = s_new.run(None, feeds)
        except Exception as exc:
            record.update(status="failed", reason=f"onnxruntime runs the original model but not the "
                                                  f"rewritten one (seed {seed}): {_one_line(exc)}")
            return record
        record["runs"] += 1
        for n, a, b in zip(names, got_orig, got_new):
            c = compare(np.asarray(a), np.asarray(b))
            o = per_output[n]
            o["by_seed"].append({"seed": seed, **c})
            o["elements"] += c["elements"]
            o["identical"] = o["identical"] and c["identical"]
            o["differing"] = None if c["differing"] is None or o["differing"] is None else \
                o["differing"] + c["differing"]
    record["outputs"] = list(per_output.values())
    same = all(o["identical"] for o in record["outputs"])
    record["status"] = "passed" if same else "failed"
    if not same:
        record["reason"] = "outputs differ: " + ", ".join(o["name"] for o in record["outputs"]
                                                          if not o["identical"])
    return record
