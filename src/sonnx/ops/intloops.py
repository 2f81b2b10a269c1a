"""Integer loops of the reference kernels (to be proved with Why3's Python front-end)."""


def wrap(x: int, bits: int, signed: bool) -> int:
    """x reduced modulo 2**bits into the range of the integer type (two's complement)."""
    m = 2 ** bits
    r = x % m
    if signed and r >= m // 2:
        r = r - m
    return r


def mul_wrap(a: list[int], b: list[int], bits: int, signed: bool) -> list[int]:
    c = [0] * len(a)
    for i in range(len(a)):
        c[i] = wrap(a[i] * b[i], bits, signed)
    return c
