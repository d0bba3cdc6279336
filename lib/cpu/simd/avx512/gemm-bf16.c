/*
 * simd/avx512/gemm-bf16.c - the tile of the tiled product in BF16 pairs
 * (kernels.h, gemm_bf16_tile), for processors with AVX512_BF16.
 *
 * The register tile is the F32 tile's (tile32x12.h): 32 rows of A by 12
 * columns of B, 24 accumulators.  A step takes a pair of k: two loads of
 * A (16 rows' word each), twelve broadcasts of B's words and 24
 * vdpbf16ps, each of which does the 32 products of two k for 16 rows,
 * where vfmadd231ps does 16.  So the step does twice the F32 tile's multiply-adds with
 * the same instruction count, on operands of half the size.
 */
#include "config.h"

#include "intrin.h"

#include "ggml-impl.h"
#include "avx512.h"
#include "tile32x12.h"

#define MR GGML__AVX512_GEMM_MR
#define NR GGML__AVX512_GEMM_NR

_Static_assert(MR == 32 && NR == 12, "the register tile below is 32 x 12");

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
    TILE32X12_ACCUMULATORS();
    const uint32_t *a = apack, *b = bpack;
    for (int p = 0; p < kp; p++, a += MR, b += NR) {
        const __m512bh a0 = (__m512bh) _mm512_loadu_si512(a), a1 = (__m512bh) _mm512_loadu_si512(a + 16);
        TILE32X12_STEPS();
    }
    TILE32X12_STORE(c, mr, nr, accumulate);
}
