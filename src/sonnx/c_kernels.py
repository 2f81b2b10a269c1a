"""The C kernels extracted from the Why3 proofs, called from Python through ctypes.

proofs/mul_c.mlw, add_c.mlw, sub_c.mlw, relu_c.mlw and gemm_c.mlw are the concrete level of
Mul, Add, Sub, Relu and Gemm (exact mode)
written over C pointers and proved to compute what mul.mlw and gemm.mlw specify, with IEEE
round-to-nearest-even operations for float32/float64 and C unsigned (modulo 2^bits) arithmetic
for integers. ``tools/extract-c`` extracts them to the C files of ``sonnx/c/`` (committed; a
regenerated file that differs from the committed one fails that tool), builds them with
``CFLAGS`` and shows that the object code holds no fused multiply-add. The library is built
from ``sonnx_kernels.c`` alone (hand-written): it includes the extracted files and runs each
proved body in the default floating-point environment (round to nearest even, subnormals kept,
the environment the proofs' RNE means), restoring the caller's after; so a C caller gets the
proved bits whatever rounding mode or flush-to-zero setting its process has (sonnx.fpenv).

Here the same sources are built, with the same flags, into a per-user cache on first use
(``$SONNX_C_CACHE``, else ``$XDG_CACHE_HOME/sonnx`` or ``~/.cache/sonnx``; a folder named by
the hash of sources, flags and compiler, so a stale library is never loaded). Without a C
compiler the rest of sonnx works; asking for a C kernel raises ``CKernelsUnavailable`` with
what to install.

The wrappers run the same checks as the Python kernels (the operator modules' constraint
functions) and handle what the profile defines through float32 or through the 32-bit kernel:
float16/bfloat16 Mul/Add/Sub is the float32 result rounded once to T,
float16/bfloat16 Gemm is the float32 exact mode rounded once to T (docs/design.md), and 8/16-bit
integer Mul/Add/Sub is the 32-bit wrapped result reduced to T's bits (2^bits divides 2^32).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

import numpy as np

from . import dtypes, fpenv
from .ops import elementwise
from .ops import gemm as gemm_op
from .ops import matmul as matmul_op
from .ops import relu as relu_op

# each C source and the proof file it is extracted from by tools/extract-c; every one is in the
# proof step (Gemm's: gemm_c.mlw, instances of the pointer loop proved in gemm_c_loop.mlw)
PROOF_OF = {"mul_c.c": "proofs/mul_c.mlw", "add_c.c": "proofs/add_c.mlw", "sub_c.c": "proofs/sub_c.mlw",
            "relu_c.c": "proofs/relu_c.mlw", "gemm_c.c": "proofs/gemm_c.mlw"}
SOURCES = tuple(PROOF_OF)
HEADER = "sonnx_kernels.h"            # hand-written: the entry points' prototypes
# hand-written: the one file compiled. It includes the extracted SOURCES with their functions
# renamed *_rne (checked against its own prototypes: a differing signature fails to compile)
# and defines each entry point as that body run in the default floating-point environment
# (round to nearest even, subnormals kept), the caller's restored after; the extracted files
# refuse to compile alone (their prelude, proofs/drivers/c_ieee.drv)
ENTRY = "sonnx_kernels.c"
LIBRARY = "libsonnx_kernels.so"

# x86: SSE2 arithmetic, never the x87 unit (its excess precision rounds twice; the extracted C
# also refuses to compile unless FLT_EVAL_METHOD == 0).
_ARCH = ("-msse2", "-mfpmath=sse") if platform.machine().lower() in ("x86_64", "amd64", "i386",
                                                                     "i686") else ()
# -ffp-contract=off: no a*b+c fused into one rounding (the proofs speak of two); never -Ofast or
# -ffast-math (flush-to-zero, reassociation). -fno-semantic-interposition keeps the kernels'
# helpers inlined in the shared object, where tools/extract-c reads the instructions.
CFLAGS = ("-std=c11", "-O2", "-ffp-contract=off", *_ARCH, "-fno-semantic-interposition",
          "-Wall", "-Wextra", "-Werror", "-Wmissing-prototypes", "-fPIC", "-shared")

# fused multiply-add instructions (x86 FMA3/FMA4, AArch64, POWER): none may appear in the library
FUSED_MNEMONICS = ("vfmadd", "vfmsub", "vfnmadd", "vfnmsub", "vfmaddsub", "vfmsubadd",
                   "fmadd", "fmsub", "fnmadd", "fnmsub", "fmla", "fmls", "xsmadd", "xsmsub")


class CKernelsUnavailable(RuntimeError):
    """The C kernels were asked for and cannot be built or loaded here."""


def source_dir() -> Path:
    """The folder of the committed C sources (inside the installed package)."""
    return Path(str(resources.files("sonnx") / "c"))


def compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if not cc:
        raise CKernelsUnavailable("sonnx C kernels: no C compiler found; install gcc "
                                  "(Debian: apt-get install gcc) or set CC, or use the Python kernels")
    return cc


def build(out_dir: Path, src: Path | None = None, cc: str | None = None,
          flags: tuple[str, ...] = CFLAGS) -> Path:
    """Compile the C kernels of ``src`` (default: the package's; ENTRY, which includes the
    extracted SOURCES) into ``out_dir``/LIBRARY."""
    src = source_dir() if src is None else Path(src)
    cc = compiler() if cc is None else cc
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    lib = out_dir / LIBRARY
    cmd = [cc, *flags, "-o", str(lib), str(src / ENTRY), "-lm"]     # -lm: fegetenv/fesetenv
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise CKernelsUnavailable(f"sonnx C kernels: cannot run the C compiler {cc!r}: {e}; install gcc "
                                  "or set CC to a C compiler") from e
    if r.returncode != 0:
        raise CKernelsUnavailable(f"sonnx C kernels: {' '.join(cmd)} failed:\n{r.stderr.strip()}")
    return lib


def _cache_dir() -> Path:
    base = os.environ.get("SONNX_C_CACHE")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "sonnx"


def _fingerprint(src: Path, cc: str) -> str:
    h = hashlib.sha256()
    for name in (HEADER, ENTRY, *SOURCES):
        h.update(name.encode() + b"\0" + (src / name).read_bytes())
    h.update("\0".join(CFLAGS).encode())
    try:
        ver = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    except OSError as e:
        raise CKernelsUnavailable(f"sonnx C kernels: cannot run the C compiler {cc!r}: {e}; install gcc "
                                  "or set CC to a C compiler") from e
    h.update(cc.encode() + b"\0" + ver.encode())
    return h.hexdigest()[:20]


# Each C function, the WhyML function it is extracted from (same name) and the requirement IDs
# of that function's goal; tests/c/test_manifest.py checks this table against the committed C,
# the header and the (* req: ... *) annotations of proofs/, so the trace's code sites for these
# IDs lead from the requirement to the C and its proof.
KERNELS = {
    "sonnx_mul_f32": ("proofs/mul_c.mlw", "MulCFloat32", ("MUL-R1", "MUL-R3")),
    "sonnx_mul_f64": ("proofs/mul_c.mlw", "MulCFloat64", ("MUL-R1", "MUL-R3")),
    "sonnx_mul_u32": ("proofs/mul_c.mlw", "MulCUInt32", ("MUL-R1", "MUL-R3")),
    "sonnx_mul_u64": ("proofs/mul_c.mlw", "MulCUInt64", ("MUL-R1", "MUL-R3")),
    "sonnx_add_f32": ("proofs/add_c.mlw", "AddCFloat32", ("ADD-R1", "ADD-R3")),
    "sonnx_add_f64": ("proofs/add_c.mlw", "AddCFloat64", ("ADD-R1", "ADD-R3")),
    "sonnx_add_u32": ("proofs/add_c.mlw", "AddCUInt32", ("ADD-R1", "ADD-R3")),
    "sonnx_add_u64": ("proofs/add_c.mlw", "AddCUInt64", ("ADD-R1", "ADD-R3")),
    "sonnx_sub_f32": ("proofs/sub_c.mlw", "SubCFloat32", ("SUB-R1", "SUB-R3")),
    "sonnx_sub_f64": ("proofs/sub_c.mlw", "SubCFloat64", ("SUB-R1", "SUB-R3")),
    "sonnx_sub_u32": ("proofs/sub_c.mlw", "SubCUInt32", ("SUB-R1", "SUB-R3")),
    "sonnx_sub_u64": ("proofs/sub_c.mlw", "SubCUInt64", ("SUB-R1", "SUB-R3")),
    "sonnx_relu_f32": ("proofs/relu_c.mlw", "ReluCFloat32", ("RELU-R3",)),
    "sonnx_relu_f64": ("proofs/relu_c.mlw", "ReluCFloat64", ("RELU-R3",)),
    "sonnx_relu_i32": ("proofs/relu_c.mlw", "ReluCInt32", ("RELU-R3",)),
    "sonnx_relu_i64": ("proofs/relu_c.mlw", "ReluCInt64", ("RELU-R3",)),
    "sonnx_gemm_f32": ("proofs/gemm_c.mlw", "GemmCFloat32", ("GEMM-R1", "GEMM-R3", "GEMM-R4", "GEMM-R7")),
    "sonnx_gemm_f64": ("proofs/gemm_c.mlw", "GemmCFloat64", ("GEMM-R1", "GEMM-R3", "GEMM-R4", "GEMM-R7")),
}

# C functions that are not entry points: the clones of proofs/gemm_c_loop.mlw's [gemm_loop]
# that sonnx_gemm_f32/f64 call (Why3 names the second clone gemm_loop1), each with the proof
# file and module holding the clone and the WhyML function cloned (GemmCLoop's, proved there)
INTERNAL = {
    "gemm_loop": ("proofs/gemm_c.mlw", "GemmCFloat32", "gemm_loop"),
    "gemm_loop1": ("proofs/gemm_c.mlw", "GemmCFloat64", "gemm_loop"),
}

_LIB: ctypes.CDLL | None = None


def library() -> ctypes.CDLL:
    """The loaded C kernels, built into the cache on first use."""
    global _LIB
    if _LIB is not None:
        return _LIB
    src, cc = source_dir(), compiler()
    final = _cache_dir() / f"c-{_fingerprint(src, cc)}" / LIBRARY
    if not final.exists():
        final.parent.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=final.parent.parent) as tmp:
            built = build(Path(tmp), src, cc)
            final.parent.mkdir(exist_ok=True)
            os.replace(built, final)        # atomic: a concurrent user sees all of it or none
    try:
        lib = ctypes.CDLL(str(final))
    except OSError as e:
        raise CKernelsUnavailable(f"sonnx C kernels: cannot load {final}: {e}; delete it to rebuild") from e
    _declare(lib)
    _LIB = lib
    return lib


def _declare(lib: ctypes.CDLL) -> None:
    i32, vp = ctypes.c_int32, ctypes.c_void_p
    for name in (f"sonnx_{op}_{t}" for op in _ELEMENTWISE for t in ("f32", "f64", "u32", "u64")):
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = (vp, vp, vp, i32), None
    for name in ("sonnx_relu_f32", "sonnx_relu_f64", "sonnx_relu_i32", "sonnx_relu_i64"):
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = (vp, vp, i32), None
    for name, real in (("sonnx_gemm_f32", ctypes.c_float), ("sonnx_gemm_f64", ctypes.c_double)):
        fn = getattr(lib, name)
        fn.argtypes = (vp, vp, vp, vp, ctypes.c_int, ctypes.c_int, ctypes.c_int, real, real, i32, i32, i32)
        fn.restype = None


def _ptr(x: np.ndarray) -> int:
    return x.ctypes.data


_ELEMENTWISE = {"mul": ("Mul", "MUL", 14), "add": ("Add", "ADD", 14), "sub": ("Sub", "SUB", 14)}


@fpenv.guarded     # the C guards itself too; this covers the numpy conversions around it
def _elementwise(op: str, a: np.ndarray, b: np.ndarray, opset: int) -> np.ndarray:
    """C = op(A, B) by the C kernel ``sonnx_<op>_<type>``, after the operator's own checks."""
    name_op, prefix, _latest = _ELEMENTWISE[op]
    elementwise._check(name_op, prefix, a, b, opset)
    lib = library()
    name = dtypes.name_of(a.dtype)
    out_dtype = dtypes.numpy_dtype(name)
    n = a.size
    if dtypes.is_float(name):
        # float16/bfloat16 through float32, then one rounding to T (docs/design.md)
        t = np.dtype(np.float64) if name == "double" else np.dtype(np.float32)
        x = np.ascontiguousarray(a, dtype=t)
        y = np.ascontiguousarray(b, dtype=t)
        out = np.empty(a.shape, dtype=t)
        getattr(lib, f"sonnx_{op}_f{t.itemsize * 8}")(_ptr(x), _ptr(y), _ptr(out), n)
        with np.errstate(all="ignore"):     # overflow to inf in the rounding to T is the semantics
            return out if t == out_dtype else out.astype(out_dtype)
    # integers: C unsigned arithmetic on the two's-complement bits (sign- or zero-extended to
    # 32 bits for the 8/16-bit types, then reduced to T's bits by astype)
    wide = np.dtype(np.uint64) if dtypes.bits(name) == 64 else np.dtype(np.uint32)
    signed_wide = np.dtype(f"int{wide.itemsize * 8}")
    ext = signed_wide if dtypes.is_signed(name) else wide     # sign- or zero-extension
    x = np.ascontiguousarray(a, dtype=ext).view(wide)
    y = np.ascontiguousarray(b, dtype=ext).view(wide)
    out = np.empty(a.shape, dtype=wide)
    getattr(lib, f"sonnx_{op}_u{wide.itemsize * 8}")(_ptr(x), _ptr(y), _ptr(out), n)
    res = out.view(signed_wide) if dtypes.is_signed(name) else out
    return res.astype(out_dtype) if res.dtype != out_dtype else res


# req: MUL-R1, MUL-R3, MUL-R4
def mul(a: np.ndarray, b: np.ndarray, *, opset: int = 14) -> np.ndarray:
    """ONNX Mul under the SONNX profile, computed by the C kernel extracted from
    proofs/mul_c.mlw. The same checks and refusals as ``sonnx.mul``; the same bits."""
    return _elementwise("mul", a, b, opset)


# req: ADD-R1, ADD-R3, ADD-R4
def add(a: np.ndarray, b: np.ndarray, *, opset: int = 14) -> np.ndarray:
    """ONNX Add under the SONNX profile, computed by the C kernel extracted from
    proofs/add_c.mlw. The same checks and refusals as ``sonnx.add``; the same bits."""
    return _elementwise("add", a, b, opset)


# req: SUB-R1, SUB-R3, SUB-R4
def sub(a: np.ndarray, b: np.ndarray, *, opset: int = 14) -> np.ndarray:
    """ONNX Sub under the SONNX profile, computed by the C kernel extracted from
    proofs/sub_c.mlw. The same checks and refusals as ``sonnx.sub``; the same bits."""
    return _elementwise("sub", a, b, opset)


# req: RELU-R3
@fpenv.guarded
def relu(x: np.ndarray, *, opset: int = relu_op.LATEST) -> np.ndarray:
    """ONNX Relu under the SONNX profile, computed by the C kernel extracted from
    proofs/relu_c.mlw (float16/bfloat16 through float32 and 8/16-bit integers through int32:
    both conversions are exact and Relu does not round). The same checks and refusals as
    ``sonnx.relu``; the same bits."""
    relu_op._check(x, opset)
    lib = library()
    name = dtypes.name_of(x.dtype)
    out_dtype = dtypes.numpy_dtype(name)
    if dtypes.is_float(name):
        t, fn = (np.dtype(np.float64), lib.sonnx_relu_f64) if name == "double" else (np.dtype(np.float32), lib.sonnx_relu_f32)
    else:
        t, fn = (np.dtype(np.int64), lib.sonnx_relu_i64) if name == "int64" else (np.dtype(np.int32), lib.sonnx_relu_i32)
    xc = np.ascontiguousarray(x, dtype=t)
    out = np.empty(x.shape, dtype=t)
    fn(_ptr(xc), _ptr(out), x.size)
    with np.errstate(all="ignore"):          # a NaN narrowed to float16/bfloat16 stays NaN
        return out if t == out_dtype else out.astype(out_dtype)


# req: GEMM-R1, GEMM-R7
@fpenv.guarded
def gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None, *, alpha: float = 1.0,
         beta: float = 1.0, trans_a: bool = False, trans_b: bool = False,
         opset: int = gemm_op.LATEST) -> np.ndarray:
    """ONNX Gemm under the SONNX profile in exact mode (GEMM-R7), computed by the C kernel
    extracted from proofs/gemm_c.mlw, for float types. The same checks and refusals as
    ``sonnx.gemm``; the same bits as its exact mode. Integer T is not in the C kernels yet:
    CKernelsUnavailable names ``sonnx.gemm`` for it."""
    plan = gemm_op._check(a, b, c, alpha, beta, trans_a, trans_b, "exact", opset)
    if plan.acc is None:
        raise CKernelsUnavailable(f"sonnx C kernels: Gemm on {dtypes.name_of(a.dtype)} is not in the "
                                  "C kernels (float types only); use sonnx.gemm")
    lib = library()
    acc = plan.acc
    m, k = (a.shape[1], a.shape[0]) if plan.ta else a.shape
    n = b.shape[0] if plan.tb else b.shape[1]
    x = np.ascontiguousarray(a, dtype=acc)   # widening float16/bfloat16 -> float32 is exact
    y = np.ascontiguousarray(b, dtype=acc)
    cc = None if c is None else np.ascontiguousarray(c, dtype=acc)
    out = np.empty((m, n), dtype=acc)
    fn = lib.sonnx_gemm_f32 if acc.itemsize == 4 else lib.sonnx_gemm_f64
    fn(_ptr(x), _ptr(y), None if cc is None else _ptr(cc), _ptr(out), int(cc is not None),
       int(plan.ta), int(plan.tb), float(alpha), float(beta), m, n, k)
    with np.errstate(all="ignore"):         # the single final RNE rounding to T (may overflow to inf)
        return out if acc == plan.out else out.astype(plan.out)


# req: MATMUL-R1
def matmul(a: np.ndarray, b: np.ndarray, *, opset: int = matmul_op.LATEST) -> np.ndarray:
    """ONNX MatMul under the SONNX profile (rank 2), computed by the C Gemm kernel: MatMul is
    Gemm with alpha = 1, no C and no transposes (proofs/matmul.mlw proves it refines Gemm;
    proofs/gemm_c.mlw proves the C computes Gemm's exact mode). The same checks and refusals as
    ``sonnx.matmul``; the same bits as its exact mode. Float types only."""
    matmul_op._check(a, b, "exact", opset)
    return gemm(a, b, None, **matmul_op.gemm_arguments())
