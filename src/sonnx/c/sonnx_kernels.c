/* sonnx C kernels: the entry points (hand-written; the bodies are the C extracted from the
 * proofs, included below). Compile this one file:
 *   gcc -std=c11 -O2 -ffp-contract=off -msse2 -mfpmath=sse -c sonnx_kernels.c
 *
 * Why a wrapper: the proofs speak of IEEE operations rounded to nearest even (RNE) with
 * subnormals kept, but C's + and * round as the calling thread's floating-point environment
 * says, and any code in the process may change it (fesetround, or the start-up code of a
 * library built with -ffast-math, which sets flush-to-zero and denormals-are-zero). So every
 * entry point saves the caller's environment (fegetenv), runs the proved body in the default
 * one (fesetenv(FE_DFL_ENV): glibc's default is round to nearest, every exception masked and,
 * on x86-64, MXCSR 0x1f80: FTZ and DAZ clear; on aarch64 FPCR 0), and restores the caller's
 * (fesetenv), exception flags included. The extracted files refuse to compile outside this
 * file (SONNX_DEFAULT_FENV_ENTRY), so no body runs without it.
 *
 * The bodies are renamed *_rne and kept out of line (noipa): a call of an opaque function that
 * writes memory cannot be moved across fesetenv, whatever the optimiser assumes about the
 * environment (GCC does not implement #pragma STDC FENV_ACCESS). */
#if defined(__GNUC__) && !defined(__clang__)
/* GCC 12's -O2 cost model ("very-cheap") vectorises no loop that needs a scalar remainder or
 * an overlap check, i.e. none of the element-wise loops; "cheap" lets it version them (the
 * packed loop when the output overlaps no input, the scalar loop otherwise). Every function of
 * this file gets it (so inlining is unaffected); the same object code as the command-line flag,
 * which clang would refuse. Vectorising changes no bit: each element is still its one IEEE
 * operation, and nothing allows reassociation. tools/extract-c checks the packed loops. */
#pragma GCC optimize("vect-cost-model=cheap")
#endif
#define SONNX_DEFAULT_FENV_ENTRY 1
#include <fenv.h>
#include <stdlib.h>
#include <stdint.h>
#include "sonnx_kernels.h"

#if defined(__GNUC__) && !defined(__clang__)
#define SONNX_BODY static __attribute__((noipa))
#else
#pragma STDC FENV_ACCESS ON
#define SONNX_BODY static __attribute__((noinline))
#endif

#define SONNX_EW_BODIES(op)                                                                  \
  SONNX_BODY void sonnx_##op##_f32_rne(float *a, float *b, float *c, int32_t n);             \
  SONNX_BODY void sonnx_##op##_f64_rne(double *a, double *b, double *c, int32_t n);          \
  SONNX_BODY void sonnx_##op##_u32_rne(uint32_t *a, uint32_t *b, uint32_t *c, int32_t n);    \
  SONNX_BODY void sonnx_##op##_u64_rne(uint64_t *a, uint64_t *b, uint64_t *c, int32_t n);
SONNX_EW_BODIES(mul)
SONNX_EW_BODIES(add)
SONNX_EW_BODIES(sub)
SONNX_BODY void sonnx_relu_f32_rne(float *x, float *y, int32_t n);
SONNX_BODY void sonnx_relu_f64_rne(double *x, double *y, int32_t n);
SONNX_BODY void sonnx_relu_i32_rne(int32_t *x, int32_t *y, int32_t n);
SONNX_BODY void sonnx_relu_i64_rne(int64_t *x, int64_t *y, int32_t n);
SONNX_BODY void sonnx_gemm_f32_rne(float *a, float *b, float *c, float *y, int hasc, int ta, int tb,
                                   float alpha, float beta, int32_t m, int32_t n, int32_t k);
SONNX_BODY void sonnx_gemm_f64_rne(double *a, double *b, double *c, double *y, int hasc, int ta,
                                   int tb, double alpha, double beta, int32_t m, int32_t n, int32_t k);
SONNX_BODY void sonnx_gemm_u32_rne(uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *y, int hasc, int ta,
                                   int tb, uint32_t alpha, uint32_t beta, int32_t m, int32_t n, int32_t k);
SONNX_BODY void sonnx_gemm_u64_rne(uint64_t *a, uint64_t *b, uint64_t *c, uint64_t *y, int hasc, int ta,
                                   int tb, uint64_t alpha, uint64_t beta, int32_t m, int32_t n, int32_t k);

/* float32 -> float16 / bfloat16 on the bits (proofs/narrow_c.mlw): integer code only, no
 * floating-point operation, so the environment cannot change it; its helpers get internal
 * linkage here (a definition without storage class takes it from these) */
SONNX_BODY void sonnx_narrow_f16_rne(uint32_t *x, uint16_t *y, int32_t n);
SONNX_BODY void sonnx_narrow_bf16_rne(uint32_t *x, uint16_t *y, int32_t n);
static uint32_t narrow_shr(uint32_t x, uint32_t s);
static uint32_t narrow_shl(uint32_t x, uint32_t s);
static uint32_t narrow16_mag(uint32_t ex, uint32_t mn);
static uint16_t narrow16_bits(uint32_t b);
static uint16_t narrowbf16_bits(uint32_t b);

#define sonnx_mul_f32 sonnx_mul_f32_rne
#define sonnx_mul_f64 sonnx_mul_f64_rne
#define sonnx_mul_u32 sonnx_mul_u32_rne
#define sonnx_mul_u64 sonnx_mul_u64_rne
#define sonnx_add_f32 sonnx_add_f32_rne
#define sonnx_add_f64 sonnx_add_f64_rne
#define sonnx_add_u32 sonnx_add_u32_rne
#define sonnx_add_u64 sonnx_add_u64_rne
#define sonnx_sub_f32 sonnx_sub_f32_rne
#define sonnx_sub_f64 sonnx_sub_f64_rne
#define sonnx_sub_u32 sonnx_sub_u32_rne
#define sonnx_sub_u64 sonnx_sub_u64_rne
#define sonnx_relu_f32 sonnx_relu_f32_rne
#define sonnx_relu_f64 sonnx_relu_f64_rne
#define sonnx_relu_i32 sonnx_relu_i32_rne
#define sonnx_relu_i64 sonnx_relu_i64_rne
#define sonnx_gemm_f32 sonnx_gemm_f32_rne
#define sonnx_gemm_f64 sonnx_gemm_f64_rne
#define sonnx_gemm_u32 sonnx_gemm_u32_rne
#define sonnx_gemm_u64 sonnx_gemm_u64_rne
#define sonnx_narrow_f16 sonnx_narrow_f16_rne
#define sonnx_narrow_bf16 sonnx_narrow_bf16_rne
#include "mul_c.c"
#include "add_c.c"
#include "sub_c.c"
#include "relu_c.c"
#include "gemm_c.c"
#include "narrow_c.c"
#undef sonnx_narrow_f16
#undef sonnx_narrow_bf16
#undef sonnx_mul_f32
#undef sonnx_mul_f64
#undef sonnx_mul_u32
#undef sonnx_mul_u64
#undef sonnx_add_f32
#undef sonnx_add_f64
#undef sonnx_add_u32
#undef sonnx_add_u64
#undef sonnx_sub_f32
#undef sonnx_sub_f64
#undef sonnx_sub_u32
#undef sonnx_sub_u64
#undef sonnx_relu_f32
#undef sonnx_relu_f64
#undef sonnx_relu_i32
#undef sonnx_relu_i64
#undef sonnx_gemm_f32
#undef sonnx_gemm_f64
#undef sonnx_gemm_u32
#undef sonnx_gemm_u64

/* Gemm a second time, the same extracted C compiled for AVX2 (x86-64, GCC): 256-bit registers,
 * twice the lanes of SSE2, for the register tiles of gemm_c_tile.mlw. AVX2 does not enable FMA
 * (a separate target feature, not named here) and -ffp-contract=off holds for these functions
 * too, so each element is still its own IEEE multiply and add: the same bits as the SSE2 copy
 * (tests/c/test_gemm_c_tile.py runs both on this machine; tools/extract-c reads every copy's
 * instructions for fused ones). The entry points run this copy when the CPU (and the OS, which
 * must save the 256-bit registers) supports AVX2 and sonnx_gemm_avx2_mode has not turned it off. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SONNX_GEMM_AVX2 1
#pragma GCC push_options
#pragma GCC target("avx2")
#define gemm_loop gemm_loop_avx2
#define gemm_loop1 gemm_loop1_avx2
#define gemm_set_cell gemm_set_cell_avx2
#define gemm_set_row gemm_set_row_avx2
#define gemm_set_row1 gemm_set_row1_avx2
#define gemm_set_cell1 gemm_set_cell1_avx2
#define gemm_get_cell gemm_get_cell_avx2
#define gemm_get_cell1 gemm_get_cell1_avx2
#define gemm_elem_steps gemm_elem_steps_avx2
#define gemm_elem_steps1 gemm_elem_steps1_avx2
#define gemm_tile_rows gemm_tile_rows_avx2
#define gemm_tile_rows1 gemm_tile_rows1_avx2
#define gemm_tile_row gemm_tile_row_avx2
#define gemm_tile_row1 gemm_tile_row1_avx2
#define gemm_tiled gemm_tiled_avx2
#define gemm_tiled1 gemm_tiled1_avx2
#define sonnx_gemm_f32 sonnx_gemm_f32_avx2
#define sonnx_gemm_f64 sonnx_gemm_f64_avx2
#define gemm_loop2 gemm_loop2_avx2
#define gemm_loop3 gemm_loop3_avx2
#define sonnx_gemm_u32 sonnx_gemm_u32_avx2
#define sonnx_gemm_u64 sonnx_gemm_u64_avx2
/* internal linkage for the copy (a definition without storage class takes it from these) */
static void gemm_loop(float *a, float *b, float *c, float *y, int hasc, int ta, int tb,
                      float alpha, float beta, int32_t m, int32_t n, int32_t k);
static void gemm_loop1(double *a, double *b, double *c, double *y, int hasc, int ta, int tb,
                       double alpha, double beta, int32_t m, int32_t n, int32_t k);
static void gemm_set_cell(float *y, int32_t n, int32_t i, int32_t j, float v);
static float gemm_get_cell(float *y, int32_t n, int32_t i, int32_t j);
static void gemm_set_cell1(double *y, int32_t n, int32_t i, int32_t j, double v);
static double gemm_get_cell1(double *y, int32_t n, int32_t i, int32_t j);
static void gemm_set_row(float *y, int32_t n, int32_t i, int32_t j0, float v0, float v1, float v2,
                         float v3, float v4, float v5, float v6, float v7);
static void gemm_set_row1(double *y, int32_t n, int32_t i, int32_t j0, double v0, double v1,
                          double v2, double v3);
static void gemm_elem_steps(float *a, float *b, float *y, int32_t n, int32_t k, int32_t i,
                            int32_t j, int32_t k0, int32_t k1);
static void gemm_tile_rows(float *a, float *b, float *y, int32_t n, int32_t k, int32_t i0,
                           int32_t j0, int32_t k0, int32_t k1) SONNX_FLATTEN;
static void gemm_tile_row(float *a, float *b, float *y, int32_t n, int32_t k, int32_t i0,
                          int32_t j0, int32_t k0, int32_t k1) SONNX_FLATTEN;
static void gemm_tiled(float *a, float *b, float *c, float *y, int hasc, float alpha, float beta,
                       int32_t m, int32_t n, int32_t k);
static void gemm_elem_steps1(double *a, double *b, double *y, int32_t n, int32_t k, int32_t i,
                             int32_t j, int32_t k0, int32_t k1);
static void gemm_tile_rows1(double *a, double *b, double *y, int32_t n, int32_t k, int32_t i0,
                            int32_t j0, int32_t k0, int32_t k1) SONNX_FLATTEN;
static void gemm_tile_row1(double *a, double *b, double *y, int32_t n, int32_t k, int32_t i0,
                           int32_t j0, int32_t k0, int32_t k1) SONNX_FLATTEN;
static void gemm_tiled1(double *a, double *b, double *c, double *y, int hasc, double alpha,
                        double beta, int32_t m, int32_t n, int32_t k);
SONNX_BODY void sonnx_gemm_f32(float *a, float *b, float *c, float *y, int hasc, int ta, int tb,
                               float alpha, float beta, int32_t m, int32_t n, int32_t k);
static void gemm_loop2(uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *y, int hasc, int ta, int tb,
                       uint32_t alpha, uint32_t beta, int32_t m, int32_t n, int32_t k);
static void gemm_loop3(uint64_t *a, uint64_t *b, uint64_t *c, uint64_t *y, int hasc, int ta, int tb,
                       uint64_t alpha, uint64_t beta, int32_t m, int32_t n, int32_t k);
SONNX_BODY void sonnx_gemm_f64(double *a, double *b, double *c, double *y, int hasc, int ta,
                               int tb, double alpha, double beta, int32_t m, int32_t n, int32_t k);
SONNX_BODY void sonnx_gemm_u32(uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *y, int hasc, int ta,
                               int tb, uint32_t alpha, uint32_t beta, int32_t m, int32_t n, int32_t k);
SONNX_BODY void sonnx_gemm_u64(uint64_t *a, uint64_t *b, uint64_t *c, uint64_t *y, int hasc, int ta,
                               int tb, uint64_t alpha, uint64_t beta, int32_t m, int32_t n, int32_t k);
#include "gemm_c.c"
#undef gemm_loop
#undef gemm_loop1
#undef gemm_set_cell
#undef gemm_set_row
#undef gemm_set_row1
#undef gemm_set_cell1
#undef gemm_get_cell
#undef gemm_get_cell1
#undef gemm_elem_steps
#undef gemm_elem_steps1
#undef gemm_tile_rows
#undef gemm_tile_rows1
#undef gemm_tile_row
#undef gemm_tile_row1
#undef gemm_tiled
#undef gemm_tiled1
#undef gemm_loop2
#undef gemm_loop3
#undef sonnx_gemm_f32
#undef sonnx_gemm_f64
#undef sonnx_gemm_u32
#undef sonnx_gemm_u64
#pragma GCC pop_options
#endif

/* The default environment around one body call. fegetenv/fesetenv cannot fail on glibc for a
 * valid fenv_t or FE_DFL_ENV (they return 0); a failure elsewhere would leave the caller's
 * environment, which tests/c/test_fpenv.py would see as wrong bits. */
#define SONNX_IN_DEFAULT_ENV(call)        \
  do {                                    \
    fenv_t caller;                        \
    (void)fegetenv(&caller);              \
    (void)fesetenv(FE_DFL_ENV);           \
    call;                                 \
    (void)fesetenv(&caller);              \
  } while (0)

#define SONNX_EW_ENTRIES(op)                                                                   \
  void sonnx_##op##_f32(float *a, float *b, float *c, int32_t n)                               \
  { SONNX_IN_DEFAULT_ENV(sonnx_##op##_f32_rne(a, b, c, n)); }                                  \
  void sonnx_##op##_f64(double *a, double *b, double *c, int32_t n)                            \
  { SONNX_IN_DEFAULT_ENV(sonnx_##op##_f64_rne(a, b, c, n)); }                                  \
  void sonnx_##op##_u32(uint32_t *a, uint32_t *b, uint32_t *c, int32_t n)                      \
  { SONNX_IN_DEFAULT_ENV(sonnx_##op##_u32_rne(a, b, c, n)); }                                  \
  void sonnx_##op##_u64(uint64_t *a, uint64_t *b, uint64_t *c, int32_t n)                      \
  { SONNX_IN_DEFAULT_ENV(sonnx_##op##_u64_rne(a, b, c, n)); }
SONNX_EW_ENTRIES(mul)
SONNX_EW_ENTRIES(add)
SONNX_EW_ENTRIES(sub)

void sonnx_relu_f32(float *x, float *y, int32_t n) { SONNX_IN_DEFAULT_ENV(sonnx_relu_f32_rne(x, y, n)); }
void sonnx_relu_f64(double *x, double *y, int32_t n) { SONNX_IN_DEFAULT_ENV(sonnx_relu_f64_rne(x, y, n)); }
void sonnx_relu_i32(int32_t *x, int32_t *y, int32_t n) { SONNX_IN_DEFAULT_ENV(sonnx_relu_i32_rne(x, y, n)); }
void sonnx_relu_i64(int64_t *x, int64_t *y, int32_t n) { SONNX_IN_DEFAULT_ENV(sonnx_relu_i64_rne(x, y, n)); }

/* the proved narrowing: integer operations only, so no environment switch is needed */
void sonnx_narrow_f16(uint32_t *x, uint16_t *y, int32_t n) { sonnx_narrow_f16_rne(x, y, n); }
void sonnx_narrow_bf16(uint32_t *x, uint16_t *y, int32_t n) { sonnx_narrow_bf16_rne(x, y, n); }

#ifdef SONNX_GEMM_AVX2
/* 1: the AVX2 copy runs (the CPU supports it), 0: the SSE2 one; -1: not yet asked (then
 * SONNX_C_AVX2=0 in the environment chooses the SSE2 one). A race
 * between two first calls writes the same value. */
static int sonnx_avx2 = -1;
static int sonnx_avx2_ok(void) { return __builtin_cpu_supports("avx2") ? 1 : 0; }
int sonnx_gemm_avx2_mode(int mode)
{
  if (mode >= 0)
    sonnx_avx2 = mode && sonnx_avx2_ok();
  else if (sonnx_avx2 < 0) {     /* SONNX_C_AVX2=0 in the environment: the SSE2 copy */
    const char *env = getenv("SONNX_C_AVX2");
    sonnx_avx2 = env != NULL && env[0] == '0' ? 0 : sonnx_avx2_ok();
  }
  return sonnx_avx2;
}
#define SONNX_GEMM_CALL(body, ...) \
  SONNX_IN_DEFAULT_ENV(if (sonnx_gemm_avx2_mode(-1)) body##_avx2(__VA_ARGS__); else body##_rne(__VA_ARGS__))
#else
int sonnx_gemm_avx2_mode(int mode) { (void)mode; return 0; }
#define SONNX_GEMM_CALL(body, ...) SONNX_IN_DEFAULT_ENV(body##_rne(__VA_ARGS__))
#endif

void sonnx_gemm_f32(float *a, float *b, float *c, float *y, int hasc, int ta, int tb,
                    float alpha, float beta, int32_t m, int32_t n, int32_t k)
{ SONNX_GEMM_CALL(sonnx_gemm_f32, a, b, c, y, hasc, ta, tb, alpha, beta, m, n, k); }
void sonnx_gemm_f64(double *a, double *b, double *c, double *y, int hasc, int ta, int tb,
                    double alpha, double beta, int32_t m, int32_t n, int32_t k)
{ SONNX_GEMM_CALL(sonnx_gemm_f64, a, b, c, y, hasc, ta, tb, alpha, beta, m, n, k); }
/* integer Gemm: C's unsigned + and * (no rounding; the environment is set as for every entry) */
void sonnx_gemm_u32(uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *y, int hasc, int ta, int tb,
                    uint32_t alpha, uint32_t beta, int32_t m, int32_t n, int32_t k)
{ SONNX_GEMM_CALL(sonnx_gemm_u32, a, b, c, y, hasc, ta, tb, alpha, beta, m, n, k); }
void sonnx_gemm_u64(uint64_t *a, uint64_t *b, uint64_t *c, uint64_t *y, int hasc, int ta, int tb,
                    uint64_t alpha, uint64_t beta, int32_t m, int32_t n, int32_t k)
{ SONNX_GEMM_CALL(sonnx_gemm_u64, a, b, c, y, hasc, ta, tb, alpha, beta, m, n, k); }

/* The fused chain (sonnx_kernels.h): the table of the entry points a step may name, each with
 * the form of its call (binary element-wise, unary element-wise, Gemm), and the loop calling the
 * proved bodies in the default environment, set once for the whole chain. The loop is a body
 * like the others (kept out of line) so that no call moves across fesetenv. */
#define SONNX_CHAIN_ENTRIES(X)                                              \
  X(sonnx_mul_f32, BIN, float) X(sonnx_mul_f64, BIN, double)                \
  X(sonnx_mul_u32, BIN, uint32_t) X(sonnx_mul_u64, BIN, uint64_t)           \
  X(sonnx_add_f32, BIN, float) X(sonnx_add_f64, BIN, double)                \
  X(sonnx_add_u32, BIN, uint32_t) X(sonnx_add_u64, BIN, uint64_t)           \
  X(sonnx_sub_f32, BIN, float) X(sonnx_sub_f64, BIN, double)                \
  X(sonnx_sub_u32, BIN, uint32_t) X(sonnx_sub_u64, BIN, uint64_t)           \
  X(sonnx_relu_f32, UN, float) X(sonnx_relu_f64, UN, double)                \
  X(sonnx_relu_i32, UN, int32_t) X(sonnx_relu_i64, UN, int64_t)             \
  X(sonnx_gemm_f32, GEMM_F32, float) X(sonnx_gemm_f64, GEMM_F64, double)

#define SONNX_CHAIN_INDEX(name, form, type) SONNX_CHAIN_##name,
enum { SONNX_CHAIN_ENTRIES(SONNX_CHAIN_INDEX) SONNX_CHAIN_COUNT };

#define SONNX_CALL_BIN(name, type) name##_rne((type *)s->a, (type *)s->b, (type *)s->y, s->n)
#define SONNX_CALL_UN(name, type) name##_rne((type *)s->a, (type *)s->y, s->n)
#define SONNX_CALL_GEMM_F32(name, type)                                                  \
  name##_rne((type *)s->a, (type *)s->b, (type *)s->c, (type *)s->y, s->hasc, s->ta, s->tb, \
             s->alpha_f32, s->beta_f32, s->m, s->n, s->k)
#define SONNX_CALL_GEMM_F64(name, type)                                                  \
  name##_rne((type *)s->a, (type *)s->b, (type *)s->c, (type *)s->y, s->hasc, s->ta, s->tb, \
             s->alpha_f64, s->beta_f64, s->m, s->n, s->k)
#define SONNX_CHAIN_CASE(name, form, type) \
  case SONNX_CHAIN_##name: SONNX_CALL_##form(name, type); break;

SONNX_BODY int32_t sonnx_chain_steps(const sonnx_chain_step *steps, int32_t count);
SONNX_BODY int32_t sonnx_chain_steps(const sonnx_chain_step *steps, int32_t count)
{
  int32_t i;
  for (i = 0; i < count; ++i) {
    const sonnx_chain_step *s = &steps[i];
    switch (s->entry) {
      SONNX_CHAIN_ENTRIES(SONNX_CHAIN_CASE)
      default: return i;
    }
  }
  return count;
}

int32_t sonnx_chain_run(const sonnx_chain_step *steps, int32_t count)
{
  int32_t done = 0;
  SONNX_IN_DEFAULT_ENV(done = sonnx_chain_steps(steps, count));
  return done;
}

#define SONNX_CHAIN_NAME(name, form, type) #name,
static const char *const sonnx_chain_names[SONNX_CHAIN_COUNT] = { SONNX_CHAIN_ENTRIES(SONNX_CHAIN_NAME) };

const char *sonnx_chain_entry_name(int32_t entry)
{
  return entry >= 0 && entry < SONNX_CHAIN_COUNT ? sonnx_chain_names[entry] : 0;
}

int32_t sonnx_chain_step_size(void) { return (int32_t)sizeof(sonnx_chain_step); }
