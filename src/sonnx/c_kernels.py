"""The C kernels extracted from the Why3 proofs, called from Python through ctypes.

Each operator with C kernels says so in its registry record (``Operator.c_binding``,
sonnx/ops/registry.py): the extracted C file, the proof it comes from (``proofs/<stem>_c.mlw``,
the concrete level of the operator written over C pointers and proved to compute what the
operator's own theory specifies, with IEEE round-to-nearest-even operations for float32/float64
and C unsigned (modulo 2^bits) arithmetic for integers), its entry points with their WhyML
function and requirement IDs, and the Python wrapper exported here as ``c_kernels.<stem>``.
``tools/extract-c`` extracts them to the C files of ``sonnx/c/`` (committed; a regenerated file
that differs from the committed one fails that tool), builds them with ``CFLAGS`` and shows that
the object code holds no fused multiply-add. The library is built from ``sonnx_kernels.c`` alone
(hand-written): it includes the extracted files and runs each proved body in the default
floating-point environment (round to nearest even, subnormals kept, the environment the proofs'
RNE means), restoring the caller's after; so a C caller gets the proved bits whatever rounding
mode or flush-to-zero setting its process has (sonnx.fpenv).

Here the same sources are built, with the same flags, into a per-user cache on first use
(``$SONNX_C_CACHE``, else ``$XDG_CACHE_HOME/sonnx`` or ``~/.cache/sonnx``; a folder named by
the hash of sources, flags and compiler, so a stale library is never loaded). Without a C
compiler the rest of sonnx works; asking for a C kernel raises ``CKernelsUnavailable`` with
what to install.

The wrappers run the same checks as the Python kernels (each operator's public ``check``) and
handle what the profile defines through float32 or through the 32-bit kernel; the two generic
ones below serve every operator of a kind: a same-shape binary operator on float16/bfloat16 is
the float32 result rounded once to T and on 8/16-bit integers the 32-bit wrapped result reduced
to T's bits (2^bits divides 2^32); a unary operator that does not round goes through float32 or
int32 exactly. The matrix operators' wrappers live in their own modules (docs/design.md).
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
from .ops.registry import STEMS, CEntry, by_stem, operators

_BINDINGS = [op.c_binding for op in operators().values() if op.c_binding is not None]

# The narrowing float32 -> float16 / bfloat16 (not an operator's kernel: the half-precision
# routes' last step), written on the bits and proved to be halffloat.mlw's f32_to_f16 RNE /
# f32_to_bf16 RNE (proofs/narrow_c.mlw); x: the float32 bits as uint32, y: the result's bits.
NARROW_SOURCE, NARROW_PROOF = "narrow_c.c", "proofs/narrow_c.mlw"
# the requirements it serves, read from the records (this shared module names no operator):
# the result requirement (R3) of each operator whose records list its proof among their theories
NARROW_IDS = tuple(f"{op.prefix}-R3" for op in operators().values() if NARROW_PROOF in op.theories)
NARROW_ENTRIES = (
    CEntry("sonnx_narrow_f16", NARROW_PROOF, "NarrowCF16", NARROW_IDS,
           (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)),
    CEntry("sonnx_narrow_bf16", NARROW_PROOF, "NarrowCBF16", NARROW_IDS,
           (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)))
# its C functions that are not entry points: name -> the module of narrow_c.mlw with that let
NARROW_HELPERS = {"narrow_shr": "Bits32", "narrow_shl": "Bits32", "narrow16_mag": "Narrow16", "narrow16_bits": "Narrow16",
                  "narrowbf16_bits": "NarrowBF16"}

# each C source and the proof file it is extracted from by tools/extract-c (from the records,
# and the narrowing); every one is in the proof step
PROOF_OF = {**{b.source: b.proof for b in _BINDINGS if b.source is not None}, NARROW_SOURCE: NARROW_PROOF}
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
# (The vectoriser's cost model is set in sonnx_kernels.c, for GCC only: see there.)
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
# of that function's goal, from the records; tests/c/test_extraction.py checks this table against
# the committed C, the header and the (* req: ... *) annotations of proofs/, so the trace's code
# sites for these IDs lead from the requirement to the C and its proof.
KERNELS = {e.name: (e.proof, e.theory, e.ids) for b in _BINDINGS for e in b.entries}
KERNELS.update({e.name: (e.proof, e.theory, e.ids) for e in NARROW_ENTRIES})

# C functions that are not entry points (clones the entry points call), each with the proof
# file and module holding the clone and the WhyML function cloned
INTERNAL = {name: where for b in _BINDINGS for name, where in b.internal.items()}

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
    for e in (*(e for b in _BINDINGS for e in b.entries), *NARROW_ENTRIES):
        fn = getattr(lib, e.name)
        fn.argtypes, fn.restype = e.argtypes, None
    # the fused chain's dispatcher (sonnx_kernels.h; run/chain.py)
    lib.sonnx_chain_run.argtypes, lib.sonnx_chain_run.restype = (ctypes.c_void_p, ctypes.c_int32), ctypes.c_int32
    lib.sonnx_chain_entry_name.argtypes, lib.sonnx_chain_entry_name.restype = (ctypes.c_int32,), ctypes.c_char_p
    lib.sonnx_chain_step_size.argtypes, lib.sonnx_chain_step_size.restype = (), ctypes.c_int32


class ChainStep(ctypes.Structure):
    """One step of a fused chain, as ``sonnx_chain_step`` of sonnx_kernels.h lays it out (checked
    against the C's sizeof when the table is read: chain_entries)."""
    _fields_ = [*((f, ctypes.c_int32) for f in ("entry", "hasc", "ta", "tb", "m", "n", "k", "reserved")),
                ("alpha_f32", ctypes.c_float), ("beta_f32", ctypes.c_float),
                ("alpha_f64", ctypes.c_double), ("beta_f64", ctypes.c_double),
                *((f, ctypes.c_void_p) for f in ("a", "b", "c", "y"))]


def chain_entries() -> dict[str, int]:
    """Entry-point name -> its index in the fused-chain dispatcher's table (sonnx_chain_run)."""
    lib = library()
    if lib.sonnx_chain_step_size() != ctypes.sizeof(ChainStep):
        raise CKernelsUnavailable(f"sonnx C kernels: the chain step is {lib.sonnx_chain_step_size()} bytes "
                                  f"in C, {ctypes.sizeof(ChainStep)} in c_kernels.ChainStep")
    names, i = {}, 0
    while (name := lib.sonnx_chain_entry_name(i)) is not None:
        names[name.decode()] = i
        i += 1
    return names


def pointer(x: np.ndarray) -> int:
    """The address of an array's data, for a C entry point."""
    return x.ctypes.data


def __getattr__(name: str):
    """``c_kernels.<stem>``: the C wrapper of that operator's record."""
    if name in STEMS and by_stem(name).c_binding is not None:
        return by_stem(name).c_binding.wrapper
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The element type each entry-point suffix takes as it is (no conversion): an entry point covers
# exactly these arrays for the proved engine (run/proved.py) and the default kernels (below).
SUFFIX_TYPES = {"f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
                "u32": np.dtype(np.uint32), "u64": np.dtype(np.uint64),
                "i32": np.dtype(np.int32), "i64": np.dtype(np.int64)}

_DEFAULT: dict = {}      # (stem, dtype) -> (the library it was looked up in, its entry point or None)


def default_entry(stem: str, dtype: np.dtype):
    """The proved C entry point that the default kernel of operator ``stem`` (``sonnx.<stem>``,
    and the default engine of ``sonnx run`` / ``sonnx.Session``) runs on arrays of ``dtype``: its
    record's binding is the default one (``CBinding.default``) and has an entry taking ``dtype``
    as it is, or on its bits as they are by a proved route (``CRoute.view``). None: the
    operator's numpy kernel runs (another type, or an operator without such
    a binding; or no C compiler here, said once by a RuntimeWarning)."""
    got = _DEFAULT.get((stem, dtype))
    if got is not None and (got[1] is None or got[0] is _LIB):
        return got[1]
    binding = by_stem(stem).c_binding
    fn, lib = None, _LIB
    if binding is not None and binding.default:
        entry = next((e for e in binding.entries if SUFFIX_TYPES.get(e.suffix) == dtype), None)
        if entry is None and np.dtype(dtype).isnative:   # a route passing the bits as they are
            entry = next((binding.entry(r.through) for r in binding.routes      # (int32 on uint32)
                          if r.view and np.dtype(dtype).name in r.types), None)
        name = None if entry is None or not binding.runs_by_default(entry.suffix) else entry.name
        if name is not None:
            try:
                lib = library()
                fn = getattr(lib, name)
            except CKernelsUnavailable as exc:
                import warnings

                from .errors import SlowKernelWarning
                # one line (the command line prints it alone, as the slow-fold notice)
                reason = " ".join(str(exc).split())
                warnings.warn(f"sonnx: {by_stem(stem).name} on {dtype} runs its numpy kernel instead "
                              f"of the proved C kernel (the same bits): {reason}", SlowKernelWarning,
                              stacklevel=3)
    _DEFAULT[(stem, dtype)] = (lib, fn)
    return fn


def _address(x: np.ndarray) -> int:
    """The address of a C-contiguous array's data. ``x.ctypes.data`` costs about 1 us, more
    than a 1K-element kernel; ctypes' view of a writable buffer about 0.3 us."""
    if x.flags.writeable:        # a read-only array (a graph constant) would raise: ~1 us
        try:
            return ctypes.addressof(ctypes.c_char.from_buffer(x))
        except TypeError:
            pass
    return x.ctypes.data


def call_binary(fn, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``fn`` (a same-shape binary entry point) on ``a`` and ``b``, of one dtype and shape (the
    caller has checked them), into a new array: the output never overlaps an input, the
    entry points' precondition (sonnx_kernels.h)."""
    out = np.empty(a.shape, a.dtype)
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    if not b.flags.c_contiguous:
        b = np.ascontiguousarray(b)
    fn(_address(a), _address(b), _address(out), out.size)
    return out


def call_unary(fn, x: np.ndarray) -> np.ndarray:
    """``fn`` (a unary entry point) on ``x`` (checked by the caller) into a new array."""
    out = np.empty(x.shape, x.dtype)
    if not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    fn(_address(x), _address(out), out.size)
    return out


def narrow(x: np.ndarray, name: str) -> np.ndarray:
    """float32 ``x`` rounded once to ``name`` ("float16" or "bfloat16") by the proved C
    narrowing (sonnx_narrow_f16 / sonnx_narrow_bf16, proofs/narrow_c.mlw): the same bits as
    numpy's / ml_dtypes' ``astype`` (tests/conversions/test_narrow_c.py), NaNs included."""
    entry = {"float16": "sonnx_narrow_f16", "bfloat16": "sonnx_narrow_bf16"}[name]
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    out = np.empty(bits.shape, dtype=np.uint16)
    getattr(library(), entry)(_address(bits), _address(out), out.size)
    return out.view(dtypes.numpy_dtype(name))


# The argument types of the generic entry points below, for the records' CEntry rows.
BINARY_ARGS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)   # x, y, out, n
UNARY_ARGS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)                     # x, out, n


# req: @kind:elementwise
@fpenv.guarded     # the C guards itself too; this covers the numpy conversions around it
def binary_same_shape(entry: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C = f(A, B) element by element by the C kernels ``<entry>_f32/_f64/_u32/_u64`` of a
    same-shape binary operator, on operands its ``check`` has accepted."""
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
        getattr(lib, f"{entry}_f{t.itemsize * 8}")(pointer(x), pointer(y), pointer(out), n)
        # float16/bfloat16: the one rounding to T by the proved narrowing (proofs/narrow_c.mlw,
        # f32_to_f16 RNE / f32_to_bf16 RNE on the bits: overflow to inf is the semantics), the
        # bits numpy's / ml_dtypes' astype gives (tests/conversions/test_narrow_c.py)
        return out if t == out_dtype else narrow(out, name)
    # integers: C unsigned arithmetic on the two's-complement bits (sign- or zero-extended to
    # 32 bits for the 8/16-bit types, then reduced to T's bits by astype)
    wide = np.dtype(np.uint64) if dtypes.bits(name) == 64 else np.dtype(np.uint32)
    signed_wide = np.dtype(f"int{wide.itemsize * 8}")
    ext = signed_wide if dtypes.is_signed(name) else wide     # sign- or zero-extension
    x = np.ascontiguousarray(a, dtype=ext).view(wide)
    y = np.ascontiguousarray(b, dtype=ext).view(wide)
    out = np.empty(a.shape, dtype=wide)
    getattr(lib, f"{entry}_u{wide.itemsize * 8}")(pointer(x), pointer(y), pointer(out), n)
    res = out.view(signed_wide) if dtypes.is_signed(name) else out
    return res.astype(out_dtype) if res.dtype != out_dtype else res


# req: @kind:unary
@fpenv.guarded
def unary_exact(entry: str, x: np.ndarray) -> np.ndarray:
    """Y = f(X) element by element by the C kernels ``<entry>_f32/_f64/_i32/_i64`` of a unary
    operator that does not round (float16/bfloat16 through float32 and 8/16-bit integers through
    int32: both conversions are exact), on an operand its ``check`` has accepted."""
    lib = library()
    name = dtypes.name_of(x.dtype)
    out_dtype = dtypes.numpy_dtype(name)
    if dtypes.is_float(name):
        t, suffix = (np.dtype(np.float64), "f64") if name == "double" else (np.dtype(np.float32), "f32")
    else:
        t, suffix = (np.dtype(np.int64), "i64") if name == "int64" else (np.dtype(np.int32), "i32")
    xc = np.ascontiguousarray(x, dtype=t)
    out = np.empty(x.shape, dtype=t)
    getattr(lib, f"{entry}_{suffix}")(pointer(xc), pointer(out), x.size)
    with np.errstate(all="ignore"):          # a NaN narrowed to float16/bfloat16 stays NaN
        return out if t == out_dtype else out.astype(out_dtype)
