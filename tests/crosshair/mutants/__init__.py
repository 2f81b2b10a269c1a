"""Planted mutants: each module defines KERNELS (replacement kernels, by name, see
tests/crosshair/harnesses.py) and is registered in harnesses.MUTANTS. CrossHair must catch
every one of them on the harness cases the registry names; a surviving mutant fails the run.
They are not tests (no test_ prefix) and are never imported by the package."""
