/* sonnx C kernels: the concrete level of proofs/mul_c.mlw, add_c.mlw, sub_c.mlw, relu_c.mlw
 * and gemm_c.mlw (the latter cloning gemm_c_loop.mlw and gemm_c_tile.mlw), extracted by Why3 (tools/extract-c) into the .c files of the same stems,
 * and the entry points of sonnx_kernels.c, which includes them. Build with
 *   gcc -std=c11 -O2 -ffp-contract=off -msse2 -mfpmath=sse -c sonnx_kernels.c     (link -lm)
 * (never -Ofast/-ffast-math; any flag allowing FP contraction breaks the proved rounding).
 * sonnx_kernels.c includes this header, so a prototype here that differs from its entry points
 * is a compile error (and its own prototypes check the extracted bodies).
 *
 * Floating-point environment: every function below runs in the default one (round to nearest
 * even, subnormals kept, exceptions masked: fesetenv(FE_DFL_ENV)) and restores the caller's on
 * return, so the results are the proved ones whatever rounding mode or FTZ/DAZ setting the
 * calling thread has.
 *
 * Preconditions (the proofs' requires clauses): n, m, k > 0 (n >= 0 for Mul) and every size
 * product at most 2^31 - 1; every pointer valid for its size; y (the output) not overlapping
 * a, b or c. c may be NULL when hasc is 0. Matrices are row-major: a is m x k (k x m when
 * ta), b is k x n (n x k when tb), c and y are m x n. */
#ifndef SONNX_KERNELS_H
#define SONNX_KERNELS_H
#include <stdint.h>
/* the tiles inline the element reads and the row stores they call, so that the compiler sees
 * one tile's accumulators, loads and stores together (and keeps them in vector registers); and
 * each tile stays a function of its own (noinline): inlined into the driver of the tiled loop,
 * GCC 12 kept the tile's row pointers and B's address on the stack, reloaded in every step of
 * the inner loop (issue 32; one thread, CPU time against the llvmlite fold, float32 / float64:
 * 256^3 2.78 / 2.42 -> 1.53 / 1.69, 512^3 2.53 / 2.63 -> 1.58 / 2.06, 1024^3 3.38 / 3.31 ->
 * 2.08 / 2.32). The same operations in the same order: the same bits. */
#if defined(__GNUC__) && !defined(__clang__)
#define SONNX_FLATTEN __attribute__((flatten, noinline))
#else
#define SONNX_FLATTEN
#endif

/* y[p] = the float16 / bfloat16 bits of the float32 whose bits are x[p], rounded to nearest
 * even (overflow to infinity, subnormals kept; a NaN gives numpy's / ml_dtypes' NaN bits):
 * narrow_c.mlw, narrow16_bits / narrowbf16_bits, proved equal to SMT-LIB's conversion
 * (_ to_fp 5 11) / (_ to_fp 8 8) RNE for every non-NaN pattern. Integer code only. */
void sonnx_narrow_f16(uint32_t *x, uint16_t *y, int32_t n);
void sonnx_narrow_bf16(uint32_t *x, uint16_t *y, int32_t n);

/* c[p] = a[p] * b[p], rounded to nearest even (mul.mlw, MulFloat32/MulFloat64) */
void sonnx_mul_f32(float *a, float *b, float *c, int32_t n);
void sonnx_mul_f64(double *a, double *b, double *c, int32_t n);
/* c[p] = a[p] * b[p] modulo 2^32 / 2^64 (mul.mlw, MulUInt32/MulUInt64); signed types: pass
 * their two's-complement bits, the result's bits are the wrapped signed product */
void sonnx_mul_u32(uint32_t *a, uint32_t *b, uint32_t *c, int32_t n);
void sonnx_mul_u64(uint64_t *a, uint64_t *b, uint64_t *c, int32_t n);

/* c[p] = a[p] + b[p] (add.mlw) and c[p] = a[p] - b[p] (sub.mlw), the same way */
void sonnx_add_f32(float *a, float *b, float *c, int32_t n);
void sonnx_add_f64(double *a, double *b, double *c, int32_t n);
void sonnx_add_u32(uint32_t *a, uint32_t *b, uint32_t *c, int32_t n);
void sonnx_add_u64(uint64_t *a, uint64_t *b, uint64_t *c, int32_t n);
void sonnx_sub_f32(float *a, float *b, float *c, int32_t n);
void sonnx_sub_f64(double *a, double *b, double *c, int32_t n);
void sonnx_sub_u32(uint32_t *a, uint32_t *b, uint32_t *c, int32_t n);
void sonnx_sub_u64(uint64_t *a, uint64_t *b, uint64_t *c, int32_t n);

/* y[p] = x[p] <= 0 ? +0 : x[p] (relu.mlw; IEEE <=: a NaN is kept, -0 gives +0) */
void sonnx_relu_f32(float *x, float *y, int32_t n);
void sonnx_relu_f64(double *x, double *y, int32_t n);
void sonnx_relu_i32(int32_t *x, int32_t *y, int32_t n);
void sonnx_relu_i64(int64_t *x, int64_t *y, int32_t n);

/* y = alpha * (ascending sum over l of op(a)[i,l] * op(b)[l,j]) + beta * c[i,j], every
 * operation rounded to nearest even in float/double, no fused multiply-add
 * (gemm.mlw, GemmFloat32/GemmFloat64, exact mode) */
void sonnx_gemm_f32(float *a, float *b, float *c, float *y, int hasc, int ta, int tb,
                    float alpha, float beta, int32_t m, int32_t n, int32_t k);
void sonnx_gemm_f64(double *a, double *b, double *c, double *y, int hasc, int ta, int tb,
                    double alpha, double beta, int32_t m, int32_t n, int32_t k);
/* y = wrap(ascending sum over l of op(a)[i,l] * op(b)[l,j] + c[i,j]) modulo 2^32 / 2^64 with
 * alpha = beta = 1 (C's unsigned + and *; gemm.mlw, UInt32/UInt64); signed int32/int64 run
 * them on their bits (int_route.mlw, GemmRoute) */
void sonnx_gemm_u32(uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *y, int hasc, int ta, int tb,
                    uint32_t alpha, uint32_t beta, int32_t m, int32_t n, int32_t k);
void sonnx_gemm_u64(uint64_t *a, uint64_t *b, uint64_t *c, uint64_t *y, int hasc, int ta, int tb,
                    uint64_t alpha, uint64_t beta, int32_t m, int32_t n, int32_t k);
/* Which copy of the Gemm bodies the four entry points above run (x86-64 built by GCC): mode 1
 * the AVX2 copy when this CPU supports it (the default, unless SONNX_C_AVX2=0 is in the
 * environment at the first call), 0 the SSE2 copy, -1 only asks.
 * Returns 1 when the AVX2 copy runs from now on. Both copies give the same bits. */
int sonnx_gemm_avx2_mode(int mode);
/* internal to gemm_c.c: the loop of proofs/gemm_c_loop.mlw as cloned for float
 * (GemmCFloat32) and double (GemmCFloat64, renamed gemm_loop1 by Why3); the two entry points
 * above call them. Declared so that -Wmissing-prototypes holds and the extracted definitions
 * are checked against these signatures. */
void gemm_loop(float *a, float *b, float *c, float *y, int hasc, int ta, int tb,
               float alpha, float beta, int32_t m, int32_t n, int32_t k);
void gemm_loop1(double *a, double *b, double *c, double *y, int hasc, int ta, int tb,
                double alpha, double beta, int32_t m, int32_t n, int32_t k);
/* the same loop as cloned for uint32_t and uint64_t words (GemmCUInt32/GemmCUInt64, gemm_loop2
 * and gemm_loop3 by Why3's numbering), called by sonnx_gemm_u32/sonnx_gemm_u64 */
void gemm_loop2(uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *y, int hasc, int ta, int tb,
                uint32_t alpha, uint32_t beta, int32_t m, int32_t n, int32_t k);
void gemm_loop3(uint64_t *a, uint64_t *b, uint64_t *c, uint64_t *y, int hasc, int ta, int tb,
                uint64_t alpha, uint64_t beta, int32_t m, int32_t n, int32_t k);

/* A fused chain (sonnx.Session, src/sonnx/run/chain.py): one call runs a planned sequence of the
 * entry points above, each step one of them on the step's arrays and sizes. The dispatcher does
 * no arithmetic of its own: it sets the default floating-point environment once (as each entry
 * point does), calls the proved bodies in order and restores the caller's environment.
 * entry: an index into the dispatcher's table (sonnx_chain_entry_name gives its entry point's
 * name; NULL past the end). Element-wise steps: a, b (binary), y and n; Gemm steps: every field,
 * alpha and beta in the entry's type (_f32 or _f64 field). Each step's preconditions are its
 * entry point's. Returns the number of steps run: count, or the index of the first step whose
 * entry is unknown (nothing after it runs). */
typedef struct sonnx_chain_step {
  int32_t entry, hasc, ta, tb, m, n, k, reserved;
  float alpha_f32, beta_f32;
  double alpha_f64, beta_f64;
  void *a, *b, *c, *y;
} sonnx_chain_step;
int32_t sonnx_chain_run(const sonnx_chain_step *steps, int32_t count);
const char *sonnx_chain_entry_name(int32_t entry);
int32_t sonnx_chain_step_size(void);
/* internal to gemm_c.c: the register-tiled loop of proofs/gemm_c_tile.mlw (GemmCTile8 cloned for
 * float, GemmCTile4 for double; Why3 suffixes the double clones with 1), which the entry points
 * run when neither operand is transposed: the driver, its 4-row and 1-row tiles, its
 * one-element steps and its reads and writes of one element. */
void gemm_set_cell(float *y, int32_t n, int32_t i, int32_t j, float v);
float gemm_get_cell(float *y, int32_t n, int32_t i, int32_t j);
void gemm_set_row(float *y, int32_t n, int32_t i, int32_t j0, float v0, float v1, float v2, float v3,
                  float v4, float v5, float v6, float v7);
void gemm_elem_steps(float *a, float *b, float *y, int32_t n, int32_t k, int32_t i,
                     int32_t j, int32_t k0, int32_t k1);
void gemm_tile_rows(float *a, float *b, float *y, int32_t n, int32_t k, int32_t i0,
                    int32_t j0, int32_t k0, int32_t k1) SONNX_FLATTEN;
void gemm_tile_row(float *a, float *b, float *y, int32_t n, int32_t k, int32_t i0,
                   int32_t j0, int32_t k0, int32_t k1) SONNX_FLATTEN;
void gemm_tiled(float *a, float *b, float *c, float *y, int hasc, float alpha, float beta,
                int32_t m, int32_t n, int32_t k);
void gemm_set_cell1(double *y, int32_t n, int32_t i, int32_t j, double v);
double gemm_get_cell1(double *y, int32_t n, int32_t i, int32_t j);
void gemm_set_row1(double *y, int32_t n, int32_t i, int32_t j0, double v0, double v1, double v2,
                   double v3);
void gemm_elem_steps1(double *a, double *b, double *y, int32_t n, int32_t k, int32_t i,
                      int32_t j, int32_t k0, int32_t k1);
void gemm_tile_rows1(double *a, double *b, double *y, int32_t n, int32_t k, int32_t i0,
                     int32_t j0, int32_t k0, int32_t k1) SONNX_FLATTEN;
void gemm_tile_row1(double *a, double *b, double *y, int32_t n, int32_t k, int32_t i0,
                    int32_t j0, int32_t k0, int32_t k1) SONNX_FLATTEN;
void gemm_tiled1(double *a, double *b, double *c, double *y, int hasc, double alpha, double beta,
                 int32_t m, int32_t n, int32_t k);
#endif
