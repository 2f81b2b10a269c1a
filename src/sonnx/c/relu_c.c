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


void sonnx_relu_f32(float * x, float * y, int32_t n) {
  int32_t i;
  float v;
  i = 0;
  while (i < n) {
    v = x[i];
    y[i] = (sonnx_f32_le(v, (0.0f))) ? (0.0f) : v;
    i = i + 1;
  }
}

void sonnx_relu_f64(double * x, double * y, int32_t n) {
  int32_t i;
  double v;
  i = 0;
  while (i < n) {
    v = x[i];
    y[i] = (sonnx_f64_le(v, (0.0))) ? (0.0) : v;
    i = i + 1;
  }
}

void sonnx_relu_i32(int32_t * x, int32_t * y, int32_t n) {
  int32_t i;
  int32_t v;
  i = 0;
  while (i < n) {
    v = x[i];
    y[i] = v <= 0 ? 0 : v;
    i = i + 1;
  }
}

void sonnx_relu_i64(int64_t * x, int64_t * y, int32_t n) {
  int32_t i;
  int64_t v;
  i = 0;
  while (i < n) {
    v = x[i];
    y[i] = v <= INT64_C(0) ? INT64_C(0) : v;
    i = i + 1;
  }
}
