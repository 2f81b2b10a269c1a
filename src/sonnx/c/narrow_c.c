#ifndef SONNX_U32_CMP
#define SONNX_U32_CMP
static inline int sonnx_u32_lt(uint32_t x, uint32_t y) { return x < y; }
static inline int sonnx_u32_le(uint32_t x, uint32_t y) { return x <= y; }
static inline int sonnx_u32_gt(uint32_t x, uint32_t y) { return x > y; }
static inline int sonnx_u32_ge(uint32_t x, uint32_t y) { return x >= y; }
#endif

#ifndef SONNX_U32_TO_U16
#define SONNX_U32_TO_U16
static inline uint16_t sonnx_u32_to_u16(uint32_t x) { return (uint16_t)x; }
#endif

#ifndef SONNX_FP_GUARD
#define SONNX_FP_GUARD
#if defined(__GNUC__) && !defined(__clang__)
/* GCC ignores the standard pragma: build with -ffp-contract=off (the default of -std=c11); tools/extract-c reads the object code for fused instructions */
#else
#pragma STDC FP_CONTRACT OFF
#endif
#ifndef SONNX_DEFAULT_FENV_ENTRY
#error "compile sonnx_kernels.c, which includes this file: its entry points run this code in the default floating-point environment (round to nearest even, subnormals kept) that the proofs' RNE means"
#endif
#include <float.h>
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "sonnx C kernels need FLT_EVAL_METHOD == 0 (no excess precision): build with -msse2 -mfpmath=sse"
#endif
typedef enum { SONNX_RNE } sonnx_rounding;
#endif

#ifndef SONNX_F32_OPS
#define SONNX_F32_OPS
static inline float sonnx_f32_mul(sonnx_rounding m, float x, float y) { (void)m; return x * y; }
static inline float sonnx_f32_add(sonnx_rounding m, float x, float y) { (void)m; return x + y; }
static inline float sonnx_f32_sub(sonnx_rounding m, float x, float y) { (void)m; return x - y; }
static inline int sonnx_f32_le(float x, float y) { return x <= y; }
#endif

#include <stdint.h>


uint32_t narrow_shr(uint32_t x, uint32_t s) {
  return x >> s;
}

uint32_t narrow_shl(uint32_t x, uint32_t s) {
  return x << s;
}

uint32_t narrow16_mag(uint32_t ex, uint32_t mn) {
  uint32_t pl, base, rest, lsb, m, sh, q, mask, rest1, half, lsb1;
  if (ex == 0xFFu) {
    if (mn == 0u) {
      return 0x7C00u;
    } else {
      pl = narrow_shr(mn, 13u);
      if (pl == 0u) {
        return 0x7C01u;
      } else {
        return 0x7C00u | pl;
      }
    }
  } else {
    if ((sonnx_u32_ge(ex, 143u))) {
      return 0x7C00u;
    } else {
      if ((sonnx_u32_ge(ex, 113u))) {
        base = narrow_shl(ex - 112u, 10u) | narrow_shr(mn, 13u);
        rest = mn & 0x1FFFu;
        lsb = base & 1u;
        return base + narrow_shr(rest + (0xFFFu + lsb), 13u);
      } else {
        if ((sonnx_u32_ge(ex, 102u))) {
          m = mn | 0x800000u;
          sh = 126u - ex;
          q = narrow_shr(m, sh);
          mask = narrow_shl(1u, sh) - 1u;
          rest1 = m & mask;
          half = narrow_shl(1u, sh - 1u);
          lsb1 = q & 1u;
          return q + narrow_shr(rest1 + (half - 1u + lsb1), sh);
        } else {
          return 0u;
        }
      }
    }
  }
}

uint16_t narrow16_bits(uint32_t b) {
  uint32_t sign, ex, mn;
  sign = narrow_shr(b, 16u) & 0x8000u;
  ex = narrow_shr(b, 23u) & 0xFFu;
  mn = b & 0x7FFFFFu;
  return (sonnx_u32_to_u16((sign | narrow16_mag(ex, mn))));
}

uint16_t narrowbf16_bits(uint32_t b) {
  uint32_t sign, lsb;
  if ((sonnx_u32_gt((b & 0x7FFFFFFFu), 0x7F800000u))) {
    sign = narrow_shr(b, 16u) & 0x8000u;
    return (sonnx_u32_to_u16((sign | 0x7FC0u)));
  } else {
    lsb = narrow_shr(b, 16u) & 1u;
    return (sonnx_u32_to_u16((narrow_shr(b + (0x7FFFu + lsb), 16u))));
  }
}

void sonnx_narrow_bf16(uint32_t * x, uint16_t * y, int32_t n) {
  int32_t i;
  i = 0;
  while (i < n) {
    y[i] = narrowbf16_bits(x[i]);
    i = i + 1;
  }
}

void sonnx_narrow_f16(uint32_t * x, uint16_t * y, int32_t n) {
  int32_t i;
  i = 0;
  while (i < n) {
    y[i] = narrow16_bits(x[i]);
    i = i + 1;
  }
}
