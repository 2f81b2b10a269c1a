/* Independent integer-arithmetic reference for the half-precision conversions sonnx runs
 * (numpy astype float32 <-> float16, ml_dtypes float32 <-> bfloat16), used by
 * tests/conversions/test_half_conversions.py. No floating-point operation here: the expected
 * bits are computed from the input's bits alone, so no rounding mode or flush-to-zero setting
 * of the process can change them.
 *
 * Narrowing float32 -> T (T with M stored mantissa bits and exponent bias B): round to nearest,
 * ties to even, subnormals of T produced (never flushed), overflow to a signed infinity, NaN to
 * a NaN (the profile lets a NaN match any NaN: its sign and payload are counted, not required).
 */
#include <stdint.h>

uint32_t ref_narrow(uint32_t x, int M, int B);
uint64_t count_narrow(uint32_t start, uint32_t n, const uint16_t *got, int M, int B,
                      uint32_t *first_bad, uint64_t *nan_sign_kept, uint64_t *nans);
uint32_t ref_widen_f16(uint32_t h);

/* NaN inputs give the marker 0xFFFFFFFF (checked as a class by count_narrow). */
uint32_t ref_narrow(uint32_t x, int M, int B) {
    uint32_t sign = (x >> 31) << (M + (B == 127 ? 8 : 5));
    int e = (int)((x >> 23) & 0xFF);
    uint32_t m = x & 0x7FFFFF;
    uint32_t inf = (uint32_t)(2 * B + 1) << M;
    if (e == 0xFF) return m ? 0xFFFFFFFFu : sign | inf;
    uint64_t sig = e ? (m | 0x800000u) : m;        /* value = sig * 2^exp2 */
    int exp2 = (e ? e : 1) - 150;
    int et = e - 127 + B;                           /* T's biased exponent of the value's binade */
    if (et < 1) et = 1;                             /* below T's normals: T's subnormal quantum */
    int q = et - B - M;                             /* T's quantum (unit in the last place) there */
    int s = q - exp2;                               /* bits of sig below T's quantum (>= 13 or 16) */
    uint64_t r;
    if (s > 40) r = 0;                              /* below half the smallest subnormal of T */
    else {
        r = sig >> s;
        uint64_t rem = sig & ((1ull << s) - 1), half = 1ull << (s - 1);
        if (rem > half || (rem == half && (r & 1))) r++;       /* nearest, ties to even */
    }
    uint64_t bits = ((uint64_t)(et - 1) << M) + r;  /* a carry out of the mantissa moves up a binade */
    if (bits >= inf) bits = inf;                    /* overflow: signed infinity */
    return sign | (uint32_t)bits;
}

/* Mismatches of got[i] against ref_narrow(start + i) for i < n; the first one's input in
 * *first_bad. NaN inputs: got must be a NaN of T; nans and nan_sign_kept count them. */
uint64_t count_narrow(uint32_t start, uint32_t n, const uint16_t *got, int M, int B,
                      uint32_t *first_bad, uint64_t *nan_sign_kept, uint64_t *nans) {
    uint64_t bad = 0;
    uint32_t inf = (uint32_t)(2 * B + 1) << M, mant = (1u << M) - 1, top = 1u << (M + (B == 127 ? 8 : 5));
    for (uint32_t i = 0; i < n; i++) {
        uint32_t x = start + i, want = ref_narrow(x, M, B), g = got[i];
        int ok;
        if (want == 0xFFFFFFFFu) {
            ok = (g & inf) == inf && (g & mant) != 0;
            *nans += 1;
            *nan_sign_kept += ((g & top) != 0) == ((x >> 31) != 0);
        } else ok = g == want;
        if (!ok && bad++ == 0) *first_bad = x;
    }
    return bad;
}

/* float16 bits -> float32 bits, exactly (NaN: 0xFFFFFFFF, checked as a class). */
uint32_t ref_widen_f16(uint32_t h) {
    uint32_t sign = (h >> 15) << 31, e = (h >> 10) & 0x1F, m = h & 0x3FF;
    if (e == 0x1F) return m ? 0xFFFFFFFFu : sign | 0x7F800000u;
    if (e) return sign | ((e - 15 + 127) << 23) | (m << 13);
    if (!m) return sign;
    int k = 9;                                      /* m * 2^-24 with m's leading bit at k */
    while (!(m >> k)) k--;
    return sign | ((uint32_t)(k - 24 + 127) << 23) | ((m << (23 - k)) & 0x7FFFFF);
}
