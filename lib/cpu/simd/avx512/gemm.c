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
#include "tile32x12.h"

#define MR GGML__AVX512_GEMM_MR
#define NR GGML__AVX512_GEMM_NR

_Static_assert(MR == 32 && NR == 12, "the register tile below is 32 x 12");
_Static_assert(MR <= GGML__GEMM_MR_MAX && NR <= GGML__GEMM_NR_MAX &&
                   NR * GGML__AVX512_GEMM_LANES <= GGML__GEMM_B_MAX,
               "the AVX-512 tile fits the largest shape");

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
    TILE32X12_ACCUMULATORS();
    const float *a = apack, *b = bpack;
    for (int k = 0; k < kc; k++, a += MR, b += NR) {
        const __m512 a0 = _mm512_loadu_ps(a), a1 = _mm512_loadu_ps(a + 16);
        TILE32X12_STEPS();
    }
    TILE32X12_STORE(c, mr, nr, accumulate);
}
