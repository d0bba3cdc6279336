/*
 * simd/avx2/gemm.c - the tile of the tiled F32 matrix product at the AVX2
 * level: 16 rows of A (two 8-lane vectors) by 6 columns of B, twelve
 * accumulator registers; per k two loads of A, six broadcasts of B and
 * twelve fused multiply-adds.  B's panel holds each value once (lanes 1).
 */
#include "config.h"

#include <immintrin.h>

#include "ggml-impl.h"
#include "avx2.h"

#define MR GGML__AVX2_GEMM_MR
#define NR GGML__AVX2_GEMM_NR

_Static_assert(MR == 16 && NR == 6, "the register tile below is 16 x 6");
_Static_assert(MR <= GGML__GEMM_MR_MAX && NR <= GGML__GEMM_NR_MAX && NR * GGML__AVX2_GEMM_LANES <= GGML__GEMM_B_MAX,
               "the AVX2 tile fits the largest shape");

/* c[0..mr) (+)= the 16 lanes of lo, hi. */
static inline void store_column(float *c, __m256 lo, __m256 hi, int mr, bool accumulate)
{
    if (mr == MR) {
        if (accumulate) {
            lo = _mm256_add_ps(lo, _mm256_loadu_ps(c));
            hi = _mm256_add_ps(hi, _mm256_loadu_ps(c + 8));
        }
        _mm256_storeu_ps(c, lo);
        _mm256_storeu_ps(c + 8, hi);
        return;
    }
    float tmp[MR];
    _mm256_storeu_ps(tmp, lo);
    _mm256_storeu_ps(tmp + 8, hi);
    if (accumulate)
        for (int i = 0; i < mr; i++)
            c[i] += tmp[i];
    else
        for (int i = 0; i < mr; i++)
            c[i] = tmp[i];
}

void ggml__avx2_gemm_tile_f32(int kc, const float *restrict apack, const float *restrict bpack, float *const *c,
                              int mr, int nr, bool accumulate)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c10 = _mm256_setzero_ps();
    __m256 c11 = _mm256_setzero_ps(), c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps(), c40 = _mm256_setzero_ps();
    __m256 c41 = _mm256_setzero_ps(), c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    const float *a = apack, *b = bpack;
    for (int k = 0; k < kc; k++, a += MR, b += NR) {
        const __m256 a0 = _mm256_loadu_ps(a), a1 = _mm256_loadu_ps(a + 8);
        __m256 bj = _mm256_broadcast_ss(b);
        c00 = _mm256_fmadd_ps(a0, bj, c00);
        c01 = _mm256_fmadd_ps(a1, bj, c01);
        bj = _mm256_broadcast_ss(b + 1);
        c10 = _mm256_fmadd_ps(a0, bj, c10);
        c11 = _mm256_fmadd_ps(a1, bj, c11);
        bj = _mm256_broadcast_ss(b + 2);
        c20 = _mm256_fmadd_ps(a0, bj, c20);
        c21 = _mm256_fmadd_ps(a1, bj, c21);
        bj = _mm256_broadcast_ss(b + 3);
        c30 = _mm256_fmadd_ps(a0, bj, c30);
        c31 = _mm256_fmadd_ps(a1, bj, c31);
        bj = _mm256_broadcast_ss(b + 4);
        c40 = _mm256_fmadd_ps(a0, bj, c40);
        c41 = _mm256_fmadd_ps(a1, bj, c41);
        bj = _mm256_broadcast_ss(b + 5);
        c50 = _mm256_fmadd_ps(a0, bj, c50);
        c51 = _mm256_fmadd_ps(a1, bj, c51);
    }
    const __m256 lo[NR] = { c00, c10, c20, c30, c40, c50 }, hi[NR] = { c01, c11, c21, c31, c41, c51 };
    for (int j = 0; j < nr; j++)
        store_column(c[j], lo[j], hi[j], mr, accumulate);
}
