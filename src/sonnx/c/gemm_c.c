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


void gemm_loop(float * a, float * b, float * c, float * y, int hasc, int ta,
               int tb, float alpha, float beta, int32_t m, int32_t n,
               int32_t k) {
  int32_t i, o, j, o1, l, o2;
  float s;
  float xa, xb, r, r1;
  o = m - 1;
  if (0 <= o) {
    for (i = 0; ; ++i) {
      o1 = n - 1;
      if (0 <= o1) {
        for (j = 0; ; ++j) {
          s = (0.0f);
          o2 = k - 1;
          if (0 <= o2) {
            for (l = 0; ; ++l) {
              if (ta) {
                xa = a[l * m + i];
              } else {
                xa = a[i * k + l];
              }
              if (tb) {
                xb = b[j * k + l];
              } else {
                xb = b[l * n + j];
              }
              s = (sonnx_f32_add((SONNX_RNE), s, (sonnx_f32_mul((SONNX_RNE), xa, xb))));
              if (l == o2) {
                break;
              }
            }
          }
          r = (sonnx_f32_mul((SONNX_RNE), alpha, s));
          if (hasc) {
            r1 = (sonnx_f32_add((SONNX_RNE), r, (sonnx_f32_mul((SONNX_RNE), beta, (c[i * n + j])))));
          } else {
            r1 = r;
          }
          y[i * n + j] = r1;
          if (j == o1) {
            break;
          }
        }
      }
      if (i == o) {
        break;
      }
    }
  }
}

void sonnx_gemm_f32(float * a, float * b, float * c, float * y, int hasc,
                    int ta, int tb, float alpha, float beta, int32_t m,
                    int32_t n, int32_t k) {
  gemm_loop(a, b, c, y, hasc, ta, tb, alpha, beta, m, n, k);
  return;
}

void gemm_loop1(double * a, double * b, double * c, double * y, int hasc,
                int ta, int tb, double alpha, double beta, int32_t m,
                int32_t n, int32_t k) {
  int32_t i, o, j, o1, l, o2;
  double s;
  double xa, xb, r, r1;
  o = m - 1;
  if (0 <= o) {
    for (i = 0; ; ++i) {
      o1 = n - 1;
      if (0 <= o1) {
        for (j = 0; ; ++j) {
          s = (0.0);
          o2 = k - 1;
          if (0 <= o2) {
            for (l = 0; ; ++l) {
              if (ta) {
                xa = a[l * m + i];
              } else {
                xa = a[i * k + l];
              }
              if (tb) {
                xb = b[j * k + l];
              } else {
                xb = b[l * n + j];
              }
              s = (sonnx_f64_add((SONNX_RNE), s, (sonnx_f64_mul((SONNX_RNE), xa, xb))));
              if (l == o2) {
                break;
              }
            }
          }
          r = (sonnx_f64_mul((SONNX_RNE), alpha, s));
          if (hasc) {
            r1 = (sonnx_f64_add((SONNX_RNE), r, (sonnx_f64_mul((SONNX_RNE), beta, (c[i * n + j])))));
          } else {
            r1 = r;
          }
          y[i * n + j] = r1;
          if (j == o1) {
            break;
          }
        }
      }
      if (i == o) {
        break;
      }
    }
  }
}

void sonnx_gemm_f64(double * a, double * b, double * c, double * y, int hasc,
                    int ta, int tb, double alpha, double beta, int32_t m,
                    int32_t n, int32_t k) {
  gemm_loop1(a, b, c, y, hasc, ta, tb, alpha, beta, m, n, k);
  return;
}
