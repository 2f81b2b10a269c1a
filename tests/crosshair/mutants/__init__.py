"""Planted mutants: each module defines PATCHES ({"module:attribute": replacement}), the one part
of the shipped code it bends, and says in its docstring what is wrong. The campaign sets the
patches in the mutant's own process (common.applied), so the code under test is the shipped
kernel with that part replaced. Each is registered in harnesses.MUTANTS with the cases that must
catch it (a part shared by several operators, e.g. the integer reductions, is registered once per
operator whose cases must catch it); a surviving mutant fails the run. They are not tests (no test_ prefix) and are never
imported by the package."""
