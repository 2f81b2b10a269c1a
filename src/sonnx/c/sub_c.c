#include <stdint.h>

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

#ifndef SONNX_F64_OPS
#define SONNX_F64_OPS
static inline double sonnx_f64_mul(sonnx_rounding m, double x, double y) { (void)m; return x * y; }
static inline double sonnx_f64_add(sonnx_rounding m, double x, double y) { (void)m; return x + y; }
static inline double sonnx_f64_sub(sonnx_rounding m, double x, double y) { (void)m; return x - y; }
static inline int sonnx_f64_le(double x, double y) { return x <= y; }
#endif


void sonnx_sub_f32(float * a, float * b, float * c, int32_t n) {
  int32_t i, o;
  o = n - 1;
  if (0 <= o) {
    for (i = 0; ; ++i) {
      c[i] = (sonnx_f32_sub((SONNX_RNE), (a[i]), (b[i])));
      if (i == o) {
        break;
      }
    }
  }
}

void sonnx_sub_f64(double * a, double * b, double * c, int32_t n) {
  int32_t i, o;
  o = n - 1;
  if (0 <= o) {
    for (i = 0; ; ++i) {
      c[i] = (sonnx_f64_sub((SONNX_RNE), (a[i]), (b[i])));
      if (i == o) {
        break;
      }
    }
  }
}

void sonnx_sub_u32(uint32_t * a, uint32_t * b, uint32_t * c, int32_t n) {
  int32_t i, o;
  o = n - 1;
  if (0 <= o) {
    for (i = 0; ; ++i) {
      c[i] = a[i] - b[i];
      if (i == o) {
        break;
      }
    }
  }
}

void sonnx_sub_u64(uint64_t * a, uint64_t * b, uint64_t * c, int32_t n) {
  int32_t i, o;
  o = n - 1;
  if (0 <= o) {
    for (i = 0; ; ++i) {
      c[i] = a[i] - b[i];
      if (i == o) {
        break;
      }
    }
  }
}
