# Integer loops of the Mul kernel, in the subset of Python that Why3 1.5.1 verifies.
#
# Proved with:  why3 -C proofs/why3.conf prove -P z3 -a split_vc src/sonnx/ops/intloops.py
# (tools/prove does it and records the results in build/evidence/proofs.json).
# The `#@` comments are the Why3 contracts; CPython ignores them and runs this file
# unchanged. Integers are unbounded in both, so "widen, multiply exactly, reduce
# with %" is literally what runs. No float literals, no imports: the subset has neither.


def pow2(bits: int) -> int:
    #@ requires bits >= 0
    #@ ensures result == pow(2, bits)
    m = 1
    k = 0
    while k < bits:
        #@ variant bits - k
        #@ invariant 0 <= k <= bits
        #@ invariant m == pow(2, k)
        m = m * 2
        k = k + 1
    return m


# req: MUL-R3
def wrap(x: int, bits: int, signed: bool) -> int:
    #@ requires bits >= 1
    #@ ensures signed or 0 <= result < pow(2, bits)
    #@ ensures not signed or -pow(2, bits - 1) <= result < pow(2, bits - 1)
    #@ ensures (result - x) % pow(2, bits) == 0
    m = pow2(bits)
    if signed:
        h = pow2(bits - 1)
        #@ assert m == 2 * h
        r = (x + h) % m
        #@ assert 0 <= r < m
        #@ assert (r - h - x) % m == 0
        return r - h
    return x % m


# req: MUL-R3
def mul_wrap(a: list[int], b: list[int], bits: int, signed: bool) -> list[int]:
    #@ requires len(a) == len(b)
    #@ requires bits >= 1
    #@ ensures len(result) == len(a)
    #@ ensures forall i. 0 <= i < len(a) -> (signed or (0 <= result[i] < pow(2, bits)))
    #@ ensures forall i. 0 <= i < len(a) -> (not signed or (-pow(2, bits - 1) <= result[i] < pow(2, bits - 1)))
    #@ ensures forall i. 0 <= i < len(a) -> (result[i] - a[i] * b[i]) % pow(2, bits) == 0
    c = [0] * len(a)
    i = 0
    while i < len(a):
        #@ variant len(a) - i
        #@ invariant 0 <= i <= len(a) and len(c) == len(a)
        #@ invariant forall j. 0 <= j < i -> (signed or (0 <= c[j] < pow(2, bits)))
        #@ invariant forall j. 0 <= j < i -> (not signed or (-pow(2, bits - 1) <= c[j] < pow(2, bits - 1)))
        #@ invariant forall j. 0 <= j < i -> (c[j] - a[j] * b[j]) % pow(2, bits) == 0
        w = wrap(a[i] * b[i], bits, signed)
        c[i] = w
        i = i + 1
    return c
