# Integer loops of the Mul kernel, in the subset of Python that Why3 1.5.1 verifies.
#
# Proved with:  why3 -C proofs/why3.conf prove -P cvc5 -a split_vc src/sonnx/semantics/intloops.py
# (tools/prove does it, with z3 and z3noauto as fall-backs, records every VC in
# build/evidence/proofs.json and fails when one is not proved).
# The `#@` comments are the Why3 contracts and ghost statements; CPython ignores them and
# runs this file unchanged. Integers are unbounded in both, so "widen, multiply exactly,
# reduce with %" is literally what runs. No float literals, no imports: the subset has neither.
#
# Proof structure (what made every VC go through, see proofs/mul.md):
# - the modulus is computed once (`pow2`) and passed down as `m` (and `h = m / 2`), so the
#   reduction helpers never see `pow`;
# - `wrap_unsigned` proves "x % m - x is a multiple of m" by explicit steps (the quotient,
#   then the multiple of m, then its remainder); `wrap_signed` reuses it on x + h;
# - the loop of `mul_wrap` states its per-element facts through the predicates `cong`,
#   `in_u`, `in_s` (opaque to the provers' arithmetic until needed) and asserts them for
#   the new element before and after the list update.

#@ predicate cong(r: int, x: int, m: int) = (r - x) % m == 0

#@ predicate in_u(r: int, m: int) = 0 <= r < m

#@ predicate in_s(r: int, h: int) = -h <= r < h


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


def wrap_unsigned(x: int, m: int) -> int:
    # The representative of x modulo m in [0, m).
    #@ requires m > 0
    #@ ensures 0 <= result < m
    #@ ensures (result - x) % m == 0
    #@ assert x == m * (x // m) + x % m
    #@ assert x % m - x == (0 - x // m) * m
    #@ assert ((0 - x // m) * m) // m == 0 - x // m
    #@ assert ((0 - x // m) * m) % m == 0
    return x % m


def wrap_signed(x: int, m: int, h: int) -> int:
    # The representative of x modulo m = 2h in [-h, h).
    #@ requires h > 0 and m == 2 * h
    #@ ensures -h <= result < h
    #@ ensures (result - x) % m == 0
    r = wrap_unsigned(x + h, m)
    #@ assert (r - (x + h)) % m == 0
    #@ assert r - h - x == r - (x + h)
    return r - h


# req: @rounding
def wrap(x: int, bits: int, signed: bool) -> int:
    #@ requires bits >= 1
    #@ ensures signed or 0 <= result < pow(2, bits)
    #@ ensures not signed or -pow(2, bits - 1) <= result < pow(2, bits - 1)
    #@ ensures (result - x) % pow(2, bits) == 0
    m = pow2(bits)
    if signed:
        h = pow2(bits - 1)
        #@ assert m == 2 * h
        return wrap_signed(x, m, h)
    return wrap_unsigned(x, m)


# req: MUL-R3
def mul_wrap(a: list[int], b: list[int], bits: int, signed: bool) -> list[int]:
    #@ requires len(a) == len(b)
    #@ requires bits >= 1
    #@ ensures len(result) == len(a)
    #@ ensures forall i. 0 <= i < len(a) -> (signed or (0 <= result[i] < pow(2, bits)))
    #@ ensures forall i. 0 <= i < len(a) -> (not signed or (-pow(2, bits - 1) <= result[i] < pow(2, bits - 1)))
    #@ ensures forall i. 0 <= i < len(a) -> (result[i] - a[i] * b[i]) % pow(2, bits) == 0
    m = pow2(bits)
    h = pow2(bits - 1)
    #@ assert m == 2 * h
    c = [0] * len(a)
    i = 0
    while i < len(a):
        #@ variant len(a) - i
        #@ invariant 0 <= i <= len(a) and len(c) == len(a)
        #@ invariant forall j. 0 <= j < i -> (signed or in_u(c[j], m))
        #@ invariant forall j. 0 <= j < i -> (not signed or in_s(c[j], h))
        #@ invariant forall j. 0 <= j < i -> cong(c[j], a[j] * b[j], m)
        p = a[i] * b[i]
        w = 0
        if signed:
            w = wrap_signed(p, m, h)
        else:
            w = wrap_unsigned(p, m)
        #@ assert cong(w, p, m)
        #@ assert signed or in_u(w, m)
        #@ assert not signed or in_s(w, h)
        c[i] = w
        #@ assert c[i] == w
        #@ assert cong(c[i], a[i] * b[i], m)
        i = i + 1
    return c


# --- Gemm (integer T) -----------------------------------------------------------------------
# `dot` is the specification only: the exact (unbounded) sum of the first l products
# x[0]*y[0] + ... + x[l-1]*y[l-1]. `#@ function` makes Why3 read it as a logic function (a
# `let rec function` with the variant below); CPython can call it too, but no kernel does.

#@ function
def dot(x: list[int], y: list[int], l: int) -> int:
    #@ requires 0 <= l <= len(x) and len(x) == len(y)
    #@ variant l
    return dot(x, y, l - 1) + x[l - 1] * y[l - 1] if l > 0 else 0


# req: GEMM-R7
def dot_wrap(x: list[int], y: list[int], c: int, bits: int, signed: bool) -> int:
    # One Gemm entry for integer T: x is the row A'[i, :], y the column B'[:, j], c is C[i, j]
    # (0 when C is absent); alpha = beta = 1 for integer T (GEMM-R6). The products are summed
    # exactly in Python's unbounded integers (l ascending) and the sum plus c is reduced once
    # into T's range: "widen, compute exactly, reduce", as mul_wrap does. spec/gemm.md's fold
    # (every product and sum reduced modulo 2**bits) has the same value, arithmetic modulo
    # 2**bits being a ring: proofs/gemm.mlw proves that equality (lemmas dot_wrap and
    # entry_wrap: the wrapped fold = wrap(exact sum + C)); this function is proved to compute
    # wrap(exact sum + c): in T's range and congruent to it modulo 2**bits.
    # (A fold that wraps at every step, proved here directly, left the provers at "unknown"
    # on the congruence steps through Python's %: proofs/gemm.md.)
    #@ requires len(x) == len(y)
    #@ requires bits >= 1
    #@ ensures signed or 0 <= result < pow(2, bits)
    #@ ensures not signed or -pow(2, bits - 1) <= result < pow(2, bits - 1)
    #@ ensures (result - (dot(x, y, len(x)) + c)) % pow(2, bits) == 0
    e = 0
    l = 0
    #@ assert dot(x, y, 0) == 0
    while l < len(x):
        #@ variant len(x) - l
        #@ invariant 0 <= l <= len(x)
        #@ invariant e == dot(x, y, l)
        #@ assert dot(x, y, l + 1) == dot(x, y, l) + x[l] * y[l]
        e = e + x[l] * y[l]
        l = l + 1
    return wrap(e + c, bits, signed)
