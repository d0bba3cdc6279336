/*
 * simd/avx512/gemm.c - the tile of the tiled F32 matrix product at the
 * AVX-512 level: 32 rows of A (two 16-lane vectors) by 12 columns of B,
 * 24 accumulator registers of the 32; per k two loads of A, twelve
 * broadcasts of B (from memory: load-port work only) and 24 fused
 * multiply-adds, enough independent chains to keep both FMA units of a
 * core busy through their latency.  B's panel holds each value once
 * (lanes 1).  Partial tiles store through lane masks.
 */
#include "config.h"

#include "intrin.h"

#include "ggml-impl.h"
#include "avx512.h"

#define MR GGML__AVX512_GEMM_MR
#define NR GGML__AVX512_GEMM_NR

_Static_assert(MR == 32 && NR == 12, "the register tile below is 32 x 12");
_Static_assert(MR <= GGML__GEMM_MR_MAX && NR <= GGML__GEMM_NR_MAX &&
                   NR * GGML__AVX512_GEMM_LANES <= GGML__GEMM_B_MAX,
               "the AVX-512 tile fits the largest shape");

/* The lanes of the two vectors of a column that hold rows (mr of them). */
static inline __mmask16 rows_mask(int mr, int half)
{
    const int n = mr - 16 * half;
    return n >= 16 ? (__mmask16) 0xffff : n <= 0 ? (__mmask16) 0 : (__mmask16) ((1u << n) - 1);
}

/* c[0..mr) (+)= the 32 lanes of lo, hi. */
static inline void store_column(float *c, __m512 lo, __m512 hi, __mmask16 m0, __mmask16 m1, bool accumulate)
{
    if (accumulate) {
        lo = _mm512_add_ps(lo, _mm512_maskz_loadu_ps(m0, c));
        hi = _mm512_add_ps(hi, _mm512_maskz_loadu_ps(m1, c + 16));
    }
    _mm512_mask_storeu_ps(c, m0, lo);
    _mm512_mask_storeu_ps(c + 16, m1, hi);
}

/* One k step: the two vectors of A's column k times B's twelve values. */
#define STEP(j)                                                   \
    do {                                                          \
        const __m512 bj = _mm512_set1_ps(b[j]);                   \
        lo##j = _mm512_fmadd_ps(a0, bj, lo##j);                   \
        hi##j = _mm512_fmadd_ps(a1, bj, hi##j);                   \
    } while (0)

void ggml__avx512_gemm_tile_f32(int kc, const float *restrict apack, const float *restrict bpack, float *const *c,
                                int mr, int nr, bool accumulate)
{
    __m512 lo0 = _mm512_setzero_ps(), lo1 = lo0, lo2 = lo0, lo3 = lo0, lo4 = lo0, lo5 = lo0;
    __m512 lo6 = lo0, lo7 = lo0, lo8 = lo0, lo9 = lo0, lo10 = lo0, lo11 = lo0;
    __m512 hi0 = lo0, hi1 = lo0, hi2 = lo0, hi3 = lo0, hi4 = lo0, hi5 = lo0;
    __m512 hi6 = lo0, hi7 = lo0, hi8 = lo0, hi9 = lo0, hi10 = lo0, hi11 = lo0;
    const float *a = apack, *b = bpack;
    for (int k = 0; k < kc; k++, a += MR, b += NR) {
        const __m512 a0 = _mm512_loadu_ps(a), a1 = _mm512_loadu_ps(a + 16);
        STEP(0);
        STEP(1);
        STEP(2);
        STEP(3);
        STEP(4);
        STEP(5);
        STEP(6);
        STEP(7);
        STEP(8);
        STEP(9);
        STEP(10);
        STEP(11);
    }
    const __m512 lo[NR] = { lo0, lo1, lo2, lo3, lo4, lo5, lo6, lo7, lo8, lo9, lo10, lo11 };
    const __m512 hi[NR] = { hi0, hi1, hi2, hi3, hi4, hi5, hi6, hi7, hi8, hi9, hi10, hi11 };
    const __mmask16 m0 = rows_mask(mr, 0), m1 = rows_mask(mr, 1);
    for (int j = 0; j < nr; j++)
        store_column(c[j], lo[j], hi[j], m0, m1, accumulate);
}
