"""The floating-point environment the proofs assume, made to hold while a kernel runs.

Every bit-exactness statement of sonnx (the proofs' ``RNE`` operations, the reference
kernels, the C extracted from the proofs) is about IEEE 754's default environment: round to
nearest even, subnormal inputs and results kept, exceptions masked (non-stop: overflow gives
inf, 0*inf gives NaN). The hardware does what the *thread's* control register says, and any
code in the process can change it: ``fesetround(FE_UPWARD)`` from another library, or the
start-up code of a library built with ``-ffast-math`` (gcc's crtfastmath.o sets flush-to-zero
and denormals-are-zero the moment it is loaded). Then float32(1/3) * 3 gives 0x3f800001, and
2^-70 * 2^-70 gives 0 instead of a subnormal.

``guarded(kernel)`` makes a kernel run in the default environment whatever the caller's: it
reads the calling thread's environment (libc ``fegetenv``); when it is not the default it
switches to it (``fesetenv(FE_DFL_ENV)``), runs the kernel and restores the caller's environment
(``fesetenv``), exception flags included, also when the kernel raises. Nested guarded calls
(one kernel calling another; ``sonnx run`` guards the whole graph) look at a thread-local flag only.
Threads the kernel starts (the matrix operators' exact fold's workers) inherit the switched environment:
POSIX has a new thread inherit its creator's floating-point environment.

What is read, per machine (glibc's ``fenv_t``):
- x86-64: MXCSR (the SSE unit: every float32/float64 operation of numpy, Python, llvmlite code
  and the C kernels). Default: rounding bits 13-14 zero (nearest even), bit 15 (FTZ) and bit 6
  (DAZ) clear, the six exception masks (bits 7-12) set. The x87 control word is not read: on
  x86-64 no float32/float64 operation of these paths uses the x87 unit (the C refuses to compile
  with excess precision); ``FE_DFL_ENV`` resets it too when a switch happens.
- aarch64: FPCR. Default: zero (RMode nearest, FZ/FZ16 off, default-NaN off, no trap enabled).
The check is "equal to the default", so an unknown bit set anywhere in the read part makes a
switch, never a wrong pass.

Elsewhere (not Linux/glibc, or another machine) the environment cannot be read or set here;
``SUPPORTED`` is False and ``guarded`` raises ``FloatingPointEnvironmentError`` at the first call,
rather than return bits it cannot vouch for. The C kernels guard themselves in C
(``src/sonnx/c/sonnx_kernels.c``), for C callers too.
"""
from __future__ import annotations

import ctypes
import functools
import platform
import struct
import threading
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)

_MACHINE = platform.machine().lower()
_GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"
# where the read part of glibc's fenv_t lies, and its default value under the mask
if _MACHINE in ("x86_64", "amd64"):
    _FENV_SIZE, _OFFSET, _MASK, _DEFAULT = 32, 28, 0xFFC0, 0x1F80   # MXCSR; bits 0-5: sticky flags
    _REGISTER = "MXCSR"
elif _MACHINE in ("aarch64", "arm64"):
    _FENV_SIZE, _OFFSET, _MASK, _DEFAULT = 8, 0, 0xFFFFFFFF, 0      # FPCR (FPSR, the flags, follows)
    _REGISTER = "FPCR"
else:
    _FENV_SIZE = 0
    _REGISTER = ""

FE_DFL_ENV = ctypes.c_void_p(-1)     # glibc: ((const fenv_t *) -1)
_CONTROL = struct.Struct("<I")


class FloatingPointEnvironmentError(RuntimeError):
    """The default floating-point environment cannot be established on this platform."""


def _libm():
    """fegetenv(buffer), fesetenv(buffer), fesetenv(pointer) from glibc's libm, or None. The
    prototypes are CFUNCTYPE objects taking a char buffer: about three times cheaper per call
    than ctypes' argtypes conversion (measured: benchmarks/bench_fpenv.py)."""
    if not (_GLIBC and _FENV_SIZE):
        return None
    try:
        lib = ctypes.CDLL("libm.so.6")
    except OSError:
        return None
    with_buffer = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p)
    return (with_buffer(("fegetenv", lib)), with_buffer(("fesetenv", lib)),
            ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(("fesetenv", lib)))


_LIBM = _libm()
SUPPORTED = _LIBM is not None
if SUPPORTED:
    _fegetenv, _fesetenv, _fesetenv_pointer = _LIBM


class _Thread(threading.local):
    """Per thread (the environment is per thread): whether a guarded call is running on it,
    and the buffer its caller's environment is saved in (one is enough: nested calls neither
    read nor switch)."""

    def __init__(self) -> None:
        self.active = False
        self.env = ctypes.create_string_buffer(64)        # room to spare over sizeof(fenv_t)


_thread = _Thread()


def _read() -> ctypes.Array:
    """A new buffer holding the calling thread's environment."""
    env = ctypes.create_string_buffer(64)
    if _fegetenv(env) != 0:
        raise FloatingPointEnvironmentError("sonnx: fegetenv failed; cannot read the floating-point "
                                            "environment")
    return env


def control(env: ctypes.Array) -> int:
    """The control register held in ``env`` (a buffer filled by fegetenv): MXCSR or FPCR."""
    return _CONTROL.unpack_from(env, _OFFSET)[0]


def is_default(env: ctypes.Array) -> bool:
    """True when ``env`` rounds to nearest even, keeps subnormals and masks every exception."""
    return _CONTROL.unpack_from(env, _OFFSET)[0] & _MASK == _DEFAULT


def describe() -> str:
    """The calling thread's environment in one line (for messages and the evidence)."""
    if not SUPPORTED:
        return f"unknown (no glibc fenv support for {_MACHINE or 'this machine'})"
    value = control(_read())
    state = "default" if value & _MASK == _DEFAULT else "NOT the default"
    return f"{_REGISTER}=0x{value:08x} ({state})"


def _refuse() -> None:
    raise FloatingPointEnvironmentError(
        f"sonnx: cannot read or set the floating-point environment on {platform.system()} "
        f"{_MACHINE} (supported: Linux with glibc on x86-64 or aarch64); sonnx's results are "
        "bit-exact only in round-to-nearest-even with subnormals kept, which it cannot establish here")


def guarded(kernel: F) -> F:
    """``kernel`` run in the default floating-point environment, the caller's restored after."""
    @functools.wraps(kernel)
    def run(*args, **kwargs):
        thread = _thread
        if thread.active:                       # nested: the outer call has done it
            return kernel(*args, **kwargs)
        if not SUPPORTED:
            _refuse()
        saved = thread.env
        if _fegetenv(saved) != 0:
            raise FloatingPointEnvironmentError("sonnx: fegetenv failed; cannot read the "
                                                "floating-point environment")
        switch = _CONTROL.unpack_from(saved, _OFFSET)[0] & _MASK != _DEFAULT     # is_default, inlined
        if switch and _fesetenv_pointer(FE_DFL_ENV) != 0:
            raise FloatingPointEnvironmentError("sonnx: fesetenv(FE_DFL_ENV) failed; cannot set the "
                                                "default floating-point environment")
        thread.active = True
        try:
            return kernel(*args, **kwargs)
        finally:
            thread.active = False
            if switch:
                _fesetenv(saved)
    return run  # type: ignore[return-value]
