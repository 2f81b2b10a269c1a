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
  int32_t i0;
  int32_t i1, i, o, j, o1, l, o2, i2, o3, j1, o4, j2, o5, i3, o6, j3, o7;
  float xa, r, r1;
  i0 = 0;
  while (i0 < m) {
    if (m - i0 < 8) {
      i1 = m;
    } else {
      i1 = i0 + 8;
    }
    o = i1 - 1;
    if (i0 <= o) {
      for (i = i0; ; ++i) {
        o1 = n - 1;
        if (0 <= o1) {
          for (j = 0; ; ++j) {
            y[i * n + j] = (0.0f);
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
    o2 = k - 1;
    if (0 <= o2) {
      for (l = 0; ; ++l) {
        o3 = i1 - 1;
        if (i0 <= o3) {
          for (i2 = i0; ; ++i2) {
            if (ta) {
              xa = a[l * m + i2];
            } else {
              xa = a[i2 * k + l];
            }
            if (tb) {
              o4 = n - 1;
              if (0 <= o4) {
                for (j1 = 0; ; ++j1) {
                  y[i2 * n + j1] = (sonnx_f32_add((SONNX_RNE), (y[i2 * n + j1]), (sonnx_f32_mul((SONNX_RNE), xa, (b[j1 * k + l])))));
                  if (j1 == o4) {
                    break;
                  }
                }
              }
            } else {
              o5 = n - 1;
              if (0 <= o5) {
                for (j2 = 0; ; ++j2) {
                  y[i2 * n + j2] = (sonnx_f32_add((SONNX_RNE), (y[i2 * n + j2]), (sonnx_f32_mul((SONNX_RNE), xa, (b[l * n + j2])))));
                  if (j2 == o5) {
                    break;
                  }
                }
              }
            }
            if (i2 == o3) {
              break;
            }
          }
        }
        if (l == o2) {
          break;
        }
      }
    }
    o6 = i1 - 1;
    if (i0 <= o6) {
      for (i3 = i0; ; ++i3) {
        o7 = n - 1;
        if (0 <= o7) {
          for (j3 = 0; ; ++j3) {
            r = (sonnx_f32_mul((SONNX_RNE), alpha, (y[i3 * n + j3])));
            if (hasc) {
              r1 = (sonnx_f32_add((SONNX_RNE), r, (sonnx_f32_mul((SONNX_RNE), beta, (c[i3 * n + j3])))));
            } else {
              r1 = r;
            }
            y[i3 * n + j3] = r1;
            if (j3 == o7) {
              break;
            }
          }
        }
        if (i3 == o6) {
          break;
        }
      }
    }
    i0 = i1;
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
  int32_t i0;
  int32_t i1, i, o, j, o1, l, o2, i2, o3, j1, o4, j2, o5, i3, o6, j3, o7;
  double xa, r, r1;
  i0 = 0;
  while (i0 < m) {
    if (m - i0 < 8) {
      i1 = m;
    } else {
      i1 = i0 + 8;
    }
    o = i1 - 1;
    if (i0 <= o) {
      for (i = i0; ; ++i) {
        o1 = n - 1;
        if (0 <= o1) {
          for (j = 0; ; ++j) {
            y[i * n + j] = (0.0);
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
    o2 = k - 1;
    if (0 <= o2) {
      for (l = 0; ; ++l) {
        o3 = i1 - 1;
        if (i0 <= o3) {
          for (i2 = i0; ; ++i2) {
            if (ta) {
              xa = a[l * m + i2];
            } else {
              xa = a[i2 * k + l];
            }
            if (tb) {
              o4 = n - 1;
              if (0 <= o4) {
                for (j1 = 0; ; ++j1) {
                  y[i2 * n + j1] = (sonnx_f64_add((SONNX_RNE), (y[i2 * n + j1]), (sonnx_f64_mul((SONNX_RNE), xa, (b[j1 * k + l])))));
                  if (j1 == o4) {
                    break;
                  }
                }
              }
            } else {
              o5 = n - 1;
              if (0 <= o5) {
                for (j2 = 0; ; ++j2) {
                  y[i2 * n + j2] = (sonnx_f64_add((SONNX_RNE), (y[i2 * n + j2]), (sonnx_f64_mul((SONNX_RNE), xa, (b[l * n + j2])))));
                  if (j2 == o5) {
                    break;
                  }
                }
              }
            }
            if (i2 == o3) {
              break;
            }
          }
        }
        if (l == o2) {
          break;
        }
      }
    }
    o6 = i1 - 1;
    if (i0 <= o6) {
      for (i3 = i0; ; ++i3) {
        o7 = n - 1;
        if (0 <= o7) {
          for (j3 = 0; ; ++j3) {
            r = (sonnx_f64_mul((SONNX_RNE), alpha, (y[i3 * n + j3])));
            if (hasc) {
              r1 = (sonnx_f64_add((SONNX_RNE), r, (sonnx_f64_mul((SONNX_RNE), beta, (c[i3 * n + j3])))));
            } else {
              r1 = r;
            }
            y[i3 * n + j3] = r1;
            if (j3 == o7) {
              break;
            }
          }
        }
        if (i3 == o6) {
          break;
        }
      }
    }
    i0 = i1;
  }
}

void sonnx_gemm_f64(double * a, double * b, double * c, double * y, int hasc,
                    int ta, int tb, double alpha, double beta, int32_t m,
                    int32_t n, int32_t k) {
  gemm_loop1(a, b, c, y, hasc, ta, tb, alpha, beta, m, n, k);
  return;
}
