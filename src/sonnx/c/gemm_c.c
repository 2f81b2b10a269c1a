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

void gemm_set_cell(float * y, int32_t n, int32_t i, int32_t j, float v) {
  y[i * n + j] = v;
  return;
}

float gemm_get_cell(float * y, int32_t n, int32_t i, int32_t j) {
  return y[i * n + j];
}

void gemm_elem_steps(float * a, float * b, float * y, int32_t n, int32_t k,
                     int32_t i, int32_t j, int32_t k0, int32_t k1) {
  float s;
  int32_t l, o;
  s = gemm_get_cell(y, n, i, j);
  o = k1 - 1;
  if (k0 <= o) {
    for (l = k0; ; ++l) {
      s = (sonnx_f32_add((SONNX_RNE), s, (sonnx_f32_mul((SONNX_RNE), 
      (gemm_get_cell(a, k, i, l)), (gemm_get_cell(b, n, l, j))))));
      if (l == o) {
        break;
      }
    }
  }
  gemm_set_cell(y, n, i, j, s);
  return;
}

void gemm_set_row(float * y, int32_t n, int32_t i, int32_t j0, float v0,
                  float v1, float v2, float v3, float v4, float v5, float v6,
                  float v7) {
  gemm_set_cell(y, n, i, j0, v0);
  gemm_set_cell(y, n, i, j0 + 1, v1);
  gemm_set_cell(y, n, i, j0 + 2, v2);
  gemm_set_cell(y, n, i, j0 + 3, v3);
  gemm_set_cell(y, n, i, j0 + 4, v4);
  gemm_set_cell(y, n, i, j0 + 5, v5);
  gemm_set_cell(y, n, i, j0 + 6, v6);
  gemm_set_cell(y, n, i, j0 + 7, v7);
  return;
}

void gemm_tile_rows(float * a, float * b, float * y, int32_t n, int32_t k,
                    int32_t i0, int32_t j0, int32_t k0, int32_t k1) {
  float s0_0, s0_1, s0_2, s0_3, s0_4, s0_5, s0_6, s0_7, s1_0, s1_1, s1_2,
        s1_3, s1_4, s1_5, s1_6, s1_7, s2_0, s2_1, s2_2, s2_3, s2_4, s2_5,
        s2_6, s2_7, s3_0, s3_1, s3_2, s3_3, s3_4, s3_5, s3_6, s3_7;
  int32_t l, o;
  float a0, a1, a2, a3, b0, b1, b2, b3, b4, b5, b6, b7;
  s0_0 = gemm_get_cell(y, n, i0, j0);
  s0_1 = gemm_get_cell(y, n, i0, j0 + 1);
  s0_2 = gemm_get_cell(y, n, i0, j0 + 2);
  s0_3 = gemm_get_cell(y, n, i0, j0 + 3);
  s0_4 = gemm_get_cell(y, n, i0, j0 + 4);
  s0_5 = gemm_get_cell(y, n, i0, j0 + 5);
  s0_6 = gemm_get_cell(y, n, i0, j0 + 6);
  s0_7 = gemm_get_cell(y, n, i0, j0 + 7);
  s1_0 = gemm_get_cell(y, n, i0 + 1, j0);
  s1_1 = gemm_get_cell(y, n, i0 + 1, j0 + 1);
  s1_2 = gemm_get_cell(y, n, i0 + 1, j0 + 2);
  s1_3 = gemm_get_cell(y, n, i0 + 1, j0 + 3);
  s1_4 = gemm_get_cell(y, n, i0 + 1, j0 + 4);
  s1_5 = gemm_get_cell(y, n, i0 + 1, j0 + 5);
  s1_6 = gemm_get_cell(y, n, i0 + 1, j0 + 6);
  s1_7 = gemm_get_cell(y, n, i0 + 1, j0 + 7);
  s2_0 = gemm_get_cell(y, n, i0 + 2, j0);
  s2_1 = gemm_get_cell(y, n, i0 + 2, j0 + 1);
  s2_2 = gemm_get_cell(y, n, i0 + 2, j0 + 2);
  s2_3 = gemm_get_cell(y, n, i0 + 2, j0 + 3);
  s2_4 = gemm_get_cell(y, n, i0 + 2, j0 + 4);
  s2_5 = gemm_get_cell(y, n, i0 + 2, j0 + 5);
  s2_6 = gemm_get_cell(y, n, i0 + 2, j0 + 6);
  s2_7 = gemm_get_cell(y, n, i0 + 2, j0 + 7);
  s3_0 = gemm_get_cell(y, n, i0 + 3, j0);
  s3_1 = gemm_get_cell(y, n, i0 + 3, j0 + 1);
  s3_2 = gemm_get_cell(y, n, i0 + 3, j0 + 2);
  s3_3 = gemm_get_cell(y, n, i0 + 3, j0 + 3);
  s3_4 = gemm_get_cell(y, n, i0 + 3, j0 + 4);
  s3_5 = gemm_get_cell(y, n, i0 + 3, j0 + 5);
  s3_6 = gemm_get_cell(y, n, i0 + 3, j0 + 6);
  s3_7 = gemm_get_cell(y, n, i0 + 3, j0 + 7);
  o = k1 - 1;
  if (k0 <= o) {
    for (l = k0; ; ++l) {
      a0 = gemm_get_cell(a, k, i0, l);
      a1 = gemm_get_cell(a, k, i0 + 1, l);
      a2 = gemm_get_cell(a, k, i0 + 2, l);
      a3 = gemm_get_cell(a, k, i0 + 3, l);
      b0 = gemm_get_cell(b, n, l, j0);
      b1 = gemm_get_cell(b, n, l, j0 + 1);
      b2 = gemm_get_cell(b, n, l, j0 + 2);
      b3 = gemm_get_cell(b, n, l, j0 + 3);
      b4 = gemm_get_cell(b, n, l, j0 + 4);
      b5 = gemm_get_cell(b, n, l, j0 + 5);
      b6 = gemm_get_cell(b, n, l, j0 + 6);
      b7 = gemm_get_cell(b, n, l, j0 + 7);
      s0_0 = (sonnx_f32_add((SONNX_RNE), s0_0, (sonnx_f32_mul((SONNX_RNE), a0, b0))));
      s0_1 = (sonnx_f32_add((SONNX_RNE), s0_1, (sonnx_f32_mul((SONNX_RNE), a0, b1))));
      s0_2 = (sonnx_f32_add((SONNX_RNE), s0_2, (sonnx_f32_mul((SONNX_RNE), a0, b2))));
      s0_3 = (sonnx_f32_add((SONNX_RNE), s0_3, (sonnx_f32_mul((SONNX_RNE), a0, b3))));
      s0_4 = (sonnx_f32_add((SONNX_RNE), s0_4, (sonnx_f32_mul((SONNX_RNE), a0, b4))));
      s0_5 = (sonnx_f32_add((SONNX_RNE), s0_5, (sonnx_f32_mul((SONNX_RNE), a0, b5))));
      s0_6 = (sonnx_f32_add((SONNX_RNE), s0_6, (sonnx_f32_mul((SONNX_RNE), a0, b6))));
      s0_7 = (sonnx_f32_add((SONNX_RNE), s0_7, (sonnx_f32_mul((SONNX_RNE), a0, b7))));
      s1_0 = (sonnx_f32_add((SONNX_RNE), s1_0, (sonnx_f32_mul((SONNX_RNE), a1, b0))));
      s1_1 = (sonnx_f32_add((SONNX_RNE), s1_1, (sonnx_f32_mul((SONNX_RNE), a1, b1))));
      s1_2 = (sonnx_f32_add((SONNX_RNE), s1_2, (sonnx_f32_mul((SONNX_RNE), a1, b2))));
      s1_3 = (sonnx_f32_add((SONNX_RNE), s1_3, (sonnx_f32_mul((SONNX_RNE), a1, b3))));
      s1_4 = (sonnx_f32_add((SONNX_RNE), s1_4, (sonnx_f32_mul((SONNX_RNE), a1, b4))));
      s1_5 = (sonnx_f32_add((SONNX_RNE), s1_5, (sonnx_f32_mul((SONNX_RNE), a1, b5))));
      s1_6 = (sonnx_f32_add((SONNX_RNE), s1_6, (sonnx_f32_mul((SONNX_RNE), a1, b6))));
      s1_7 = (sonnx_f32_add((SONNX_RNE), s1_7, (sonnx_f32_mul((SONNX_RNE), a1, b7))));
      s2_0 = (sonnx_f32_add((SONNX_RNE), s2_0, (sonnx_f32_mul((SONNX_RNE), a2, b0))));
      s2_1 = (sonnx_f32_add((SONNX_RNE), s2_1, (sonnx_f32_mul((SONNX_RNE), a2, b1))));
      s2_2 = (sonnx_f32_add((SONNX_RNE), s2_2, (sonnx_f32_mul((SONNX_RNE), a2, b2))));
      s2_3 = (sonnx_f32_add((SONNX_RNE), s2_3, (sonnx_f32_mul((SONNX_RNE), a2, b3))));
      s2_4 = (sonnx_f32_add((SONNX_RNE), s2_4, (sonnx_f32_mul((SONNX_RNE), a2, b4))));
      s2_5 = (sonnx_f32_add((SONNX_RNE), s2_5, (sonnx_f32_mul((SONNX_RNE), a2, b5))));
      s2_6 = (sonnx_f32_add((SONNX_RNE), s2_6, (sonnx_f32_mul((SONNX_RNE), a2, b6))));
      s2_7 = (sonnx_f32_add((SONNX_RNE), s2_7, (sonnx_f32_mul((SONNX_RNE), a2, b7))));
      s3_0 = (sonnx_f32_add((SONNX_RNE), s3_0, (sonnx_f32_mul((SONNX_RNE), a3, b0))));
      s3_1 = (sonnx_f32_add((SONNX_RNE), s3_1, (sonnx_f32_mul((SONNX_RNE), a3, b1))));
      s3_2 = (sonnx_f32_add((SONNX_RNE), s3_2, (sonnx_f32_mul((SONNX_RNE), a3, b2))));
      s3_3 = (sonnx_f32_add((SONNX_RNE), s3_3, (sonnx_f32_mul((SONNX_RNE), a3, b3))));
      s3_4 = (sonnx_f32_add((SONNX_RNE), s3_4, (sonnx_f32_mul((SONNX_RNE), a3, b4))));
      s3_5 = (sonnx_f32_add((SONNX_RNE), s3_5, (sonnx_f32_mul((SONNX_RNE), a3, b5))));
      s3_6 = (sonnx_f32_add((SONNX_RNE), s3_6, (sonnx_f32_mul((SONNX_RNE), a3, b6))));
      s3_7 = (sonnx_f32_add((SONNX_RNE), s3_7, (sonnx_f32_mul((SONNX_RNE), a3, b7))));
      if (l == o) {
        break;
      }
    }
  }
  gemm_set_row(y, n, i0, j0, s0_0, s0_1, s0_2, s0_3, s0_4, s0_5, s0_6, s0_7);
  gemm_set_row(y, n, i0 + 1, j0, s1_0, s1_1, s1_2, s1_3, s1_4, s1_5, s1_6,
  s1_7);
  gemm_set_row(y, n, i0 + 2, j0, s2_0, s2_1, s2_2, s2_3, s2_4, s2_5, s2_6,
  s2_7);
  gemm_set_row(y, n, i0 + 3, j0, s3_0, s3_1, s3_2, s3_3, s3_4, s3_5, s3_6,
  s3_7);
  return;
}

void gemm_tile_row(float * a, float * b, float * y, int32_t n, int32_t k,
                   int32_t i0, int32_t j0, int32_t k0, int32_t k1) {
  float s0_0, s0_1, s0_2, s0_3, s0_4, s0_5, s0_6, s0_7;
  int32_t l, o;
  float a0, b0, b1, b2, b3, b4, b5, b6, b7;
  s0_0 = gemm_get_cell(y, n, i0, j0);
  s0_1 = gemm_get_cell(y, n, i0, j0 + 1);
  s0_2 = gemm_get_cell(y, n, i0, j0 + 2);
  s0_3 = gemm_get_cell(y, n, i0, j0 + 3);
  s0_4 = gemm_get_cell(y, n, i0, j0 + 4);
  s0_5 = gemm_get_cell(y, n, i0, j0 + 5);
  s0_6 = gemm_get_cell(y, n, i0, j0 + 6);
  s0_7 = gemm_get_cell(y, n, i0, j0 + 7);
  o = k1 - 1;
  if (k0 <= o) {
    for (l = k0; ; ++l) {
      a0 = gemm_get_cell(a, k, i0, l);
      b0 = gemm_get_cell(b, n, l, j0);
      b1 = gemm_get_cell(b, n, l, j0 + 1);
      b2 = gemm_get_cell(b, n, l, j0 + 2);
      b3 = gemm_get_cell(b, n, l, j0 + 3);
      b4 = gemm_get_cell(b, n, l, j0 + 4);
      b5 = gemm_get_cell(b, n, l, j0 + 5);
      b6 = gemm_get_cell(b, n, l, j0 + 6);
      b7 = gemm_get_cell(b, n, l, j0 + 7);
      s0_0 = (sonnx_f32_add((SONNX_RNE), s0_0, (sonnx_f32_mul((SONNX_RNE), a0, b0))));
      s0_1 = (sonnx_f32_add((SONNX_RNE), s0_1, (sonnx_f32_mul((SONNX_RNE), a0, b1))));
      s0_2 = (sonnx_f32_add((SONNX_RNE), s0_2, (sonnx_f32_mul((SONNX_RNE), a0, b2))));
      s0_3 = (sonnx_f32_add((SONNX_RNE), s0_3, (sonnx_f32_mul((SONNX_RNE), a0, b3))));
      s0_4 = (sonnx_f32_add((SONNX_RNE), s0_4, (sonnx_f32_mul((SONNX_RNE), a0, b4))));
      s0_5 = (sonnx_f32_add((SONNX_RNE), s0_5, (sonnx_f32_mul((SONNX_RNE), a0, b5))));
      s0_6 = (sonnx_f32_add((SONNX_RNE), s0_6, (sonnx_f32_mul((SONNX_RNE), a0, b6))));
      s0_7 = (sonnx_f32_add((SONNX_RNE), s0_7, (sonnx_f32_mul((SONNX_RNE), a0, b7))));
      if (l == o) {
        break;
      }
    }
  }
  gemm_set_row(y, n, i0, j0, s0_0, s0_1, s0_2, s0_3, s0_4, s0_5, s0_6, s0_7);
  return;
}

void gemm_tiled(float * a, float * b, float * c, float * y, int hasc,
                float alpha, float beta, int32_t m, int32_t n, int32_t k) {
  int32_t i, o, j, o1, k1, i2, j1, o2, i1, o3, i3, o4, j2, o5;
  int32_t k0, i11, j0, i0;
  float r, r1;
  o = m - 1;
  if (0 <= o) {
    for (i = 0; ; ++i) {
      o1 = n - 1;
      if (0 <= o1) {
        for (j = 0; ; ++j) {
          gemm_set_cell(y, n, i, j, (0.0f));
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
  k0 = 0;
  while (k0 < k) {
    if (k - k0 < 256) {
      k1 = k;
    } else {
      k1 = k0 + 256;
    }
    i11 = 0;
    while (i11 < m) {
      if (m - i11 < 128) {
        i2 = m;
      } else {
        i2 = i11 + 128;
      }
      j0 = 0;
      while (n - j0 >= 8) {
        i0 = i11;
        while (i2 - i0 >= 4) {
          gemm_tile_rows(a, b, y, n, k, i0, j0, k0, k1);
          i0 = i0 + 4;
        }
        while (i0 < i2) {
          gemm_tile_row(a, b, y, n, k, i0, j0, k0, k1);
          i0 = i0 + 1;
        }
        j0 = j0 + 8;
      }
      o2 = n - 1;
      if (j0 <= o2) {
        for (j1 = j0; ; ++j1) {
          o3 = i2 - 1;
          if (i11 <= o3) {
            for (i1 = i11; ; ++i1) {
              gemm_elem_steps(a, b, y, n, k, i1, j1, k0, k1);
              if (i1 == o3) {
                break;
              }
            }
          }
          if (j1 == o2) {
            break;
          }
        }
      }
      i11 = i2;
    }
    k0 = k1;
  }
  o4 = m - 1;
  if (0 <= o4) {
    for (i3 = 0; ; ++i3) {
      o5 = n - 1;
      if (0 <= o5) {
        for (j2 = 0; ; ++j2) {
          r = (sonnx_f32_mul((SONNX_RNE), alpha, (y[i3 * n + j2])));
          if (hasc) {
            r1 = (sonnx_f32_add((SONNX_RNE), r, (sonnx_f32_mul((SONNX_RNE), beta, (c[i3 * n + j2])))));
          } else {
            r1 = r;
          }
          gemm_set_cell(y, n, i3, j2, r1);
          if (j2 == o5) {
            break;
          }
        }
      }
      if (i3 == o4) {
        break;
      }
    }
  }
}

void sonnx_gemm_f32(float * a, float * b, float * c, float * y, int hasc,
                    int ta, int tb, float alpha, float beta, int32_t m,
                    int32_t n, int32_t k) {
  if (ta || tb) {
    gemm_loop(a, b, c, y, hasc, ta, tb, alpha, beta, m, n, k);
    return;
  } else {
    gemm_tiled(a, b, c, y, hasc, alpha, beta, m, n, k);
    return;
  }
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

void gemm_set_cell1(double * y, int32_t n, int32_t i, int32_t j, double v) {
  y[i * n + j] = v;
  return;
}

double gemm_get_cell1(double * y, int32_t n, int32_t i, int32_t j) {
  return y[i * n + j];
}

void gemm_elem_steps1(double * a, double * b, double * y, int32_t n,
                      int32_t k, int32_t i, int32_t j, int32_t k0, int32_t k1) {
  double s;
  int32_t l, o;
  s = gemm_get_cell1(y, n, i, j);
  o = k1 - 1;
  if (k0 <= o) {
    for (l = k0; ; ++l) {
      s = (sonnx_f64_add((SONNX_RNE), s, (sonnx_f64_mul((SONNX_RNE), 
      (gemm_get_cell1(a, k, i, l)), (gemm_get_cell1(b, n, l, j))))));
      if (l == o) {
        break;
      }
    }
  }
  gemm_set_cell1(y, n, i, j, s);
  return;
}

void gemm_set_row1(double * y, int32_t n, int32_t i, int32_t j0, double v0,
                   double v1, double v2, double v3) {
  gemm_set_cell1(y, n, i, j0, v0);
  gemm_set_cell1(y, n, i, j0 + 1, v1);
  gemm_set_cell1(y, n, i, j0 + 2, v2);
  gemm_set_cell1(y, n, i, j0 + 3, v3);
  return;
}

void gemm_tile_rows1(double * a, double * b, double * y, int32_t n,
                     int32_t k, int32_t i0, int32_t j0, int32_t k0,
                     int32_t k1) {
  double s0_0, s0_1, s0_2, s0_3, s1_0, s1_1, s1_2, s1_3, s2_0, s2_1, s2_2,
         s2_3, s3_0, s3_1, s3_2, s3_3;
  int32_t l, o;
  double a0, a1, a2, a3, b0, b1, b2, b3;
  s0_0 = gemm_get_cell1(y, n, i0, j0);
  s0_1 = gemm_get_cell1(y, n, i0, j0 + 1);
  s0_2 = gemm_get_cell1(y, n, i0, j0 + 2);
  s0_3 = gemm_get_cell1(y, n, i0, j0 + 3);
  s1_0 = gemm_get_cell1(y, n, i0 + 1, j0);
  s1_1 = gemm_get_cell1(y, n, i0 + 1, j0 + 1);
  s1_2 = gemm_get_cell1(y, n, i0 + 1, j0 + 2);
  s1_3 = gemm_get_cell1(y, n, i0 + 1, j0 + 3);
  s2_0 = gemm_get_cell1(y, n, i0 + 2, j0);
  s2_1 = gemm_get_cell1(y, n, i0 + 2, j0 + 1);
  s2_2 = gemm_get_cell1(y, n, i0 + 2, j0 + 2);
  s2_3 = gemm_get_cell1(y, n, i0 + 2, j0 + 3);
  s3_0 = gemm_get_cell1(y, n, i0 + 3, j0);
  s3_1 = gemm_get_cell1(y, n, i0 + 3, j0 + 1);
  s3_2 = gemm_get_cell1(y, n, i0 + 3, j0 + 2);
  s3_3 = gemm_get_cell1(y, n, i0 + 3, j0 + 3);
  o = k1 - 1;
  if (k0 <= o) {
    for (l = k0; ; ++l) {
      a0 = gemm_get_cell1(a, k, i0, l);
      a1 = gemm_get_cell1(a, k, i0 + 1, l);
      a2 = gemm_get_cell1(a, k, i0 + 2, l);
      a3 = gemm_get_cell1(a, k, i0 + 3, l);
      b0 = gemm_get_cell1(b, n, l, j0);
      b1 = gemm_get_cell1(b, n, l, j0 + 1);
      b2 = gemm_get_cell1(b, n, l, j0 + 2);
      b3 = gemm_get_cell1(b, n, l, j0 + 3);
      s0_0 = (sonnx_f64_add((SONNX_RNE), s0_0, (sonnx_f64_mul((SONNX_RNE), a0, b0))));
      s0_1 = (sonnx_f64_add((SONNX_RNE), s0_1, (sonnx_f64_mul((SONNX_RNE), a0, b1))));
      s0_2 = (sonnx_f64_add((SONNX_RNE), s0_2, (sonnx_f64_mul((SONNX_RNE), a0, b2))));
      s0_3 = (sonnx_f64_add((SONNX_RNE), s0_3, (sonnx_f64_mul((SONNX_RNE), a0, b3))));
      s1_0 = (sonnx_f64_add((SONNX_RNE), s1_0, (sonnx_f64_mul((SONNX_RNE), a1, b0))));
      s1_1 = (sonnx_f64_add((SONNX_RNE), s1_1, (sonnx_f64_mul((SONNX_RNE), a1, b1))));
      s1_2 = (sonnx_f64_add((SONNX_RNE), s1_2, (sonnx_f64_mul((SONNX_RNE), a1, b2))));
      s1_3 = (sonnx_f64_add((SONNX_RNE), s1_3, (sonnx_f64_mul((SONNX_RNE), a1, b3))));
      s2_0 = (sonnx_f64_add((SONNX_RNE), s2_0, (sonnx_f64_mul((SONNX_RNE), a2, b0))));
      s2_1 = (sonnx_f64_add((SONNX_RNE), s2_1, (sonnx_f64_mul((SONNX_RNE), a2, b1))));
      s2_2 = (sonnx_f64_add((SONNX_RNE), s2_2, (sonnx_f64_mul((SONNX_RNE), a2, b2))));
      s2_3 = (sonnx_f64_add((SONNX_RNE), s2_3, (sonnx_f64_mul((SONNX_RNE), a2, b3))));
      s3_0 = (sonnx_f64_add((SONNX_RNE), s3_0, (sonnx_f64_mul((SONNX_RNE), a3, b0))));
      s3_1 = (sonnx_f64_add((SONNX_RNE), s3_1, (sonnx_f64_mul((SONNX_RNE), a3, b1))));
      s3_2 = (sonnx_f64_add((SONNX_RNE), s3_2, (sonnx_f64_mul((SONNX_RNE), a3, b2))));
      s3_3 = (sonnx_f64_add((SONNX_RNE), s3_3, (sonnx_f64_mul((SONNX_RNE), a3, b3))));
      if (l == o) {
        break;
      }
    }
  }
  gemm_set_row1(y, n, i0, j0, s0_0, s0_1, s0_2, s0_3);
  gemm_set_row1(y, n, i0 + 1, j0, s1_0, s1_1, s1_2, s1_3);
  gemm_set_row1(y, n, i0 + 2, j0, s2_0, s2_1, s2_2, s2_3);
  gemm_set_row1(y, n, i0 + 3, j0, s3_0, s3_1, s3_2, s3_3);
  return;
}

void gemm_tile_row1(double * a, double * b, double * y, int32_t n, int32_t k,
                    int32_t i0, int32_t j0, int32_t k0, int32_t k1) {
  double s0_0, s0_1, s0_2, s0_3;
  int32_t l, o;
  double a0, b0, b1, b2, b3;
  s0_0 = gemm_get_cell1(y, n, i0, j0);
  s0_1 = gemm_get_cell1(y, n, i0, j0 + 1);
  s0_2 = gemm_get_cell1(y, n, i0, j0 + 2);
  s0_3 = gemm_get_cell1(y, n, i0, j0 + 3);
  o = k1 - 1;
  if (k0 <= o) {
    for (l = k0; ; ++l) {
      a0 = gemm_get_cell1(a, k, i0, l);
      b0 = gemm_get_cell1(b, n, l, j0);
      b1 = gemm_get_cell1(b, n, l, j0 + 1);
      b2 = gemm_get_cell1(b, n, l, j0 + 2);
      b3 = gemm_get_cell1(b, n, l, j0 + 3);
      s0_0 = (sonnx_f64_add((SONNX_RNE), s0_0, (sonnx_f64_mul((SONNX_RNE), a0, b0))));
      s0_1 = (sonnx_f64_add((SONNX_RNE), s0_1, (sonnx_f64_mul((SONNX_RNE), a0, b1))));
      s0_2 = (sonnx_f64_add((SONNX_RNE), s0_2, (sonnx_f64_mul((SONNX_RNE), a0, b2))));
      s0_3 = (sonnx_f64_add((SONNX_RNE), s0_3, (sonnx_f64_mul((SONNX_RNE), a0, b3))));
      if (l == o) {
        break;
      }
    }
  }
  gemm_set_row1(y, n, i0, j0, s0_0, s0_1, s0_2, s0_3);
  return;
}

void gemm_tiled1(double * a, double * b, double * c, double * y, int hasc,
                 double alpha, double beta, int32_t m, int32_t n, int32_t k) {
  int32_t i, o, j, o1, k1, i2, j1, o2, i1, o3, i3, o4, j2, o5;
  int32_t k0, i11, j0, i0;
  double r, r1;
  o = m - 1;
  if (0 <= o) {
    for (i = 0; ; ++i) {
      o1 = n - 1;
      if (0 <= o1) {
        for (j = 0; ; ++j) {
          gemm_set_cell1(y, n, i, j, (0.0));
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
  k0 = 0;
  while (k0 < k) {
    if (k - k0 < 256) {
      k1 = k;
    } else {
      k1 = k0 + 256;
    }
    i11 = 0;
    while (i11 < m) {
      if (m - i11 < 128) {
        i2 = m;
      } else {
        i2 = i11 + 128;
      }
      j0 = 0;
      while (n - j0 >= 4) {
        i0 = i11;
        while (i2 - i0 >= 4) {
          gemm_tile_rows1(a, b, y, n, k, i0, j0, k0, k1);
          i0 = i0 + 4;
        }
        while (i0 < i2) {
          gemm_tile_row1(a, b, y, n, k, i0, j0, k0, k1);
          i0 = i0 + 1;
        }
        j0 = j0 + 4;
      }
      o2 = n - 1;
      if (j0 <= o2) {
        for (j1 = j0; ; ++j1) {
          o3 = i2 - 1;
          if (i11 <= o3) {
            for (i1 = i11; ; ++i1) {
              gemm_elem_steps1(a, b, y, n, k, i1, j1, k0, k1);
              if (i1 == o3) {
                break;
              }
            }
          }
          if (j1 == o2) {
            break;
          }
        }
      }
      i11 = i2;
    }
    k0 = k1;
  }
  o4 = m - 1;
  if (0 <= o4) {
    for (i3 = 0; ; ++i3) {
      o5 = n - 1;
      if (0 <= o5) {
        for (j2 = 0; ; ++j2) {
          r = (sonnx_f64_mul((SONNX_RNE), alpha, (y[i3 * n + j2])));
          if (hasc) {
            r1 = (sonnx_f64_add((SONNX_RNE), r, (sonnx_f64_mul((SONNX_RNE), beta, (c[i3 * n + j2])))));
          } else {
            r1 = r;
          }
          gemm_set_cell1(y, n, i3, j2, r1);
          if (j2 == o5) {
            break;
          }
        }
      }
      if (i3 == o4) {
        break;
      }
    }
  }
}

void sonnx_gemm_f64(double * a, double * b, double * c, double * y, int hasc,
                    int ta, int tb, double alpha, double beta, int32_t m,
                    int32_t n, int32_t k) {
  if (ta || tb) {
    gemm_loop1(a, b, c, y, hasc, ta, tb, alpha, beta, m, n, k);
    return;
  } else {
    gemm_tiled1(a, b, c, y, hasc, alpha, beta, m, n, k);
    return;
  }
}

void gemm_loop2(uint32_t * a, uint32_t * b, uint32_t * c, uint32_t * y,
                int hasc, int ta, int tb, uint32_t alpha, uint32_t beta,
                int32_t m, int32_t n, int32_t k) {
  int32_t i0;
  int32_t i1, i, o, j, o1, l, o2, i2, o3, j1, o4, j2, o5, i3, o6, j3, o7;
  uint32_t xa, r, r1;
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
            y[i * n + j] = 0U;
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
                  y[i2 * n + j1] = y[i2 * n + j1] + xa * b[j1 * k + l];
                  if (j1 == o4) {
                    break;
                  }
                }
              }
            } else {
              o5 = n - 1;
              if (0 <= o5) {
                for (j2 = 0; ; ++j2) {
                  y[i2 * n + j2] = y[i2 * n + j2] + xa * b[l * n + j2];
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
            r = alpha * y[i3 * n + j3];
            if (hasc) {
              r1 = r + beta * c[i3 * n + j3];
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

void sonnx_gemm_u32(uint32_t * a, uint32_t * b, uint32_t * c, uint32_t * y,
                    int hasc, int ta, int tb, uint32_t alpha, uint32_t beta,
                    int32_t m, int32_t n, int32_t k) {
  gemm_loop2(a, b, c, y, hasc, ta, tb, alpha, beta, m, n, k);
  return;
}

void gemm_loop3(uint64_t * a, uint64_t * b, uint64_t * c, uint64_t * y,
                int hasc, int ta, int tb, uint64_t alpha, uint64_t beta,
                int32_t m, int32_t n, int32_t k) {
  int32_t i0;
  int32_t i1, i, o, j, o1, l, o2, i2, o3, j1, o4, j2, o5, i3, o6, j3, o7;
  uint64_t xa, r, r1;
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
            y[i * n + j] = UINT64_C(0);
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
                  y[i2 * n + j1] = y[i2 * n + j1] + xa * b[j1 * k + l];
                  if (j1 == o4) {
                    break;
                  }
                }
              }
            } else {
              o5 = n - 1;
              if (0 <= o5) {
                for (j2 = 0; ; ++j2) {
                  y[i2 * n + j2] = y[i2 * n + j2] + xa * b[l * n + j2];
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
            r = alpha * y[i3 * n + j3];
            if (hasc) {
              r1 = r + beta * c[i3 * n + j3];
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

void sonnx_gemm_u64(uint64_t * a, uint64_t * b, uint64_t * c, uint64_t * y,
                    int hasc, int ta, int tb, uint64_t alpha, uint64_t beta,
                    int32_t m, int32_t n, int32_t k) {
  gemm_loop3(a, b, c, y, hasc, ta, tb, alpha, beta, m, n, k);
  return;
}
