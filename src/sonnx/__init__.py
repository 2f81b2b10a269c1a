"""sonnx: verified kernels and a strict-profile validator for the SONNX profile."""
from .errors import ProfileViolation, Violation
from .ops.gemm import gemm
from .ops.mul import mul
from .validate import validate

__all__ = ["ProfileViolation", "Violation", "gemm", "mul", "validate"]
__version__ = "0.1.0"
