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
#include "mul_c.c"
#include "add_c.c"
#include "sub_c.c"
#include "relu_c.c"
#include "gemm_c.c"
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

void sonnx_gemm_f32(float *a, float *b, float *c, float *y, int hasc, int ta, int tb,
                    float alpha, float beta, int32_t m, int32_t n, int32_t k)
{ SONNX_IN_DEFAULT_ENV(sonnx_gemm_f32_rne(a, b, c, y, hasc, ta, tb, alpha, beta, m, n, k)); }
void sonnx_gemm_f64(double *a, double *b, double *c, double *y, int hasc, int ta, int tb,
                    double alpha, double beta, int32_t m, int32_t n, int32_t k)
{ SONNX_IN_DEFAULT_ENV(sonnx_gemm_f64_rne(a, b, c, y, hasc, ta, tb, alpha, beta, m, n, k)); }

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
