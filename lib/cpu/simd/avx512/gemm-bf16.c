/*
 * simd/avx512/gemm-bf16.c - the tile of the tiled product in BF16 pairs
 * (kernels.h, gemm_bf16_tile), for processors with AVX512_BF16.
 *
 * The shape is the F32 tile's (gemm.c): 32 rows of A by 12 columns of B,
 * 24 accumulators.  A step takes a pair of k: two loads of A (16 rows'
 * word each), twelve broadcasts of B's words and 24 vdpbf16ps, each of
 * which does the 32 products of two k for 16 rows, where vfmadd231ps
 * does 16.  So the step does twice the F32 tile's multiply-adds with
 * the same instruction count, on operands of half the size.
 */
#include "config.h"

#include <string.h>

#include "intrin.h"

#include "ggml-impl.h"
#include "avx512.h"

#define MR GGML__AVX512_GEMM_MR
#define NR GGML__AVX512_GEMM_NR

_Static_assert(MR == 32 && NR == 12, "the register tile below is 32 x 12");

/* The lanes of the two vectors of a column that hold rows (mr of them). */
static inline __mmask16 rows_mask(int mr, int half)
{
    const int n = mr - 16 * half;
    return n >= 16 ? (__mmask16) 0xffff : n <= 0 ? (__mmask16) 0 : (__mmask16) ((1u << n) - 1);
}

/* One pair step: A's two vectors of words times B's word of column j. */
#define STEP(j)                                                                        \
    do {                                                                               \
        const __m512bh bj = (__m512bh) _mm512_set1_epi32((int) b[j]);                 \
        lo##j = _mm512_dpbf16_ps(lo##j, a0, bj);                                       \
        hi##j = _mm512_dpbf16_ps(hi##j, a1, bj);                                       \
    } while (0)

void ggml__avx512_bf16_gemm_tile(int kp, const uint32_t *restrict apack, const uint32_t *restrict bpack,
                                 float *const *c, int mr, int nr, bool accumulate)
{
    __m512 lo0 = _mm512_setzero_ps(), lo1 = lo0, lo2 = lo0, lo3 = lo0, lo4 = lo0, lo5 = lo0;
    __m512 lo6 = lo0, lo7 = lo0, lo8 = lo0, lo9 = lo0, lo10 = lo0, lo11 = lo0;
    __m512 hi0 = lo0, hi1 = lo0, hi2 = lo0, hi3 = lo0, hi4 = lo0, hi5 = lo0;
    __m512 hi6 = lo0, hi7 = lo0, hi8 = lo0, hi9 = lo0, hi10 = lo0, hi11 = lo0;
    const uint32_t *a = apack, *b = bpack;
    for (int p = 0; p < kp; p++, a += MR, b += NR) {
        const __m512bh a0 = (__m512bh) _mm512_loadu_si512(a), a1 = (__m512bh) _mm512_loadu_si512(a + 16);
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
    for (int j = 0; j < nr; j++) {
        __m512 l = lo[j], h = hi[j];
        if (accumulate) {
            l = _mm512_add_ps(l, _mm512_maskz_loadu_ps(m0, c[j]));
            h = _mm512_add_ps(h, _mm512_maskz_loadu_ps(m1, c[j] + 16));
        }
        _mm512_mask_storeu_ps(c[j], m0, l);
        _mm512_mask_storeu_ps(c[j] + 16, m1, h);
    }
}
