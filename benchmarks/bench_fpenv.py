"""Benchmark: what running every kernel in the default floating-point environment costs
(sonnx.fpenv for the Python kernels, the entry points of src/sonnx/c/sonnx_kernels.c for C).

Not a test: it prints figures. Each ratio compares, in this process and in the same round, the
guarded call with the same kernel unguarded: ``sonnx.mul.__wrapped__`` (the numpy kernel
without sonnx.fpenv.guarded) and, for C, a library built here from a copy of the sources whose
entry points run the body directly. Both when the caller's environment is the default (the
guard only reads it) and when it is not (FTZ and DAZ set: the guard switches and restores).
"""
from __future__ import annotations

import ctypes
import tempfile
from pathlib import Path

import numpy as np

import sonnx
import sonnx.c_kernels as ck
from sonnx import fpenv

from timing import fmt_range, load_average, machine, ratio_spread, rounds_of, spread, write_figures

# FTZ and DAZ in the control register (MXCSR bits 15 and 6; FPCR.FZ on aarch64)
_FLUSH = 0x8040 if fpenv._REGISTER == "MXCSR" else 1 << 24


def _set_flush(on: bool) -> None:
    env = fpenv._read()
    value = fpenv.control(env)
    value = value | _FLUSH if on else value & ~_FLUSH
    env[fpenv._OFFSET:fpenv._OFFSET + 4] = value.to_bytes(4, "little")
    assert fpenv._fesetenv(env) == 0


def _unguarded_c_library() -> ctypes.CDLL:
    """The C kernels with entry points that run the body in the caller's environment."""
    src = Path(tempfile.mkdtemp(prefix="sonnx-bench-fpenv-"))
    for f in ck.source_dir().iterdir():
        (src / f.name).write_bytes(f.read_bytes())
    text = (src / ck.ENTRY).read_text()
    bare = text.replace("#define SONNX_IN_DEFAULT_ENV(call)        \\", "#define SONNX_IN_DEFAULT_ENV(call) call\n#define SONNX_UNUSED(call)        \\")
    assert bare != text
    (src / ck.ENTRY).write_text(bare)
    lib = ctypes.CDLL(str(ck.build(src / "build", src)))
    ck._declare(lib)
    return lib


def main() -> None:
    if not fpenv.SUPPORTED:
        print("bench_fpenv: sonnx.fpenv is not supported on this machine; nothing to measure")
        return
    rng = np.random.default_rng(0)
    guarded_c, bare_c = ck.library(), _unguarded_c_library()
    figures, rows = {"machine": machine(), "load_before": load_average()}, []
    for n, reps in ((4, 20000), (1 << 20, 30)):
        a = rng.standard_normal(n, dtype=np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        out = np.empty_like(a)
        pa, pb, po = a.ctypes.data, b.ctypes.data, out.ctypes.data
        fns = {"guarded": lambda: sonnx.mul(a, b), "plain": lambda: sonnx.mul.__wrapped__(a, b),
               "c_guarded": lambda: guarded_c.sonnx_mul_f32(pa, pb, po, n),
               "c_plain": lambda: bare_c.sonnx_mul_f32(pa, pb, po, n)}
        for env in ("default", "FTZ+DAZ"):
            _set_flush(env != "default")
            try:
                seen = rounds_of(fns, reps, rounds=7)
            finally:
                _set_flush(False)
            key = f"mul float32 n={n} caller={env}"
            figures[key] = {k: spread(v) for k, v in seen.items()}
            figures[key]["ratio"] = ratio_spread(seen, "guarded", "plain")
            figures[key]["c_ratio"] = ratio_spread(seen, "c_guarded", "c_plain")
            extra_us = spread(g - p for g, p in zip(seen["guarded"], seen["plain"]))
            c_extra_ns = spread(g - p for g, p in zip(seen["c_guarded"], seen["c_plain"]))
            figures[key]["extra_us"], figures[key]["c_extra_ns"] = extra_us, c_extra_ns
            rows.append((key, fmt_range(figures[key]["ratio"]), f"{extra_us['median'] * 1e6:.2f} us",
                         fmt_range(figures[key]["c_ratio"]), f"{c_extra_ns['median'] * 1e9:.0f} ns"))
    figures["load_after"] = load_average()
    head = ("| call | sonnx.mul guarded / unguarded | added per call | C entry guarded / bare | added per call |\n"
            "|---|---|---|---|---|\n")
    md = head + "".join(f"| {' | '.join(r)} |\n" for r in rows)
    md += (f"\nmedian (min - max) of 7 rounds; load average {figures['load_before']} before, "
           f"{figures['load_after']} after; {figures['machine'].get('cpu')}\n")
    print(md)
    write_figures("fpenv", figures, md)


if __name__ == "__main__":
    main()
