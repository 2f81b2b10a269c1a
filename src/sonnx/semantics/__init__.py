"""The specification helpers, in one place: what an element of a type is (values.py), IEEE
rounding stated and computed in plain Python (floats.py), the tensor value and its row-major
indexing (tensor.py), and the integer loops proved by Why3's Python front-end (intloops.py).

Kernels, their contracts, the CrossHair harnesses and the tests import these; none of them
writes its own copy. Nothing here uses numpy to compute a result (tensor.from_numpy only
converts), so the reference kernels built on it stay independent of the code they check.
"""
