/*
 * simd/generic/gemm.c - the tile of the tiled F32 matrix product at the
 * generic level: 8 rows of A by 6 columns of B.
 *
 * Every value of B comes repeated 4 times in its panel, so that each
 * accumulator row is a pair of 4-lane multiply-adds of A's packed values
 * by a packed group of B: loops the compiler turns into vector code
 * without shuffles at the baseline (SSE2) level.
 */
#include "config.h"

#include "ggml-impl.h"
#include "generic.h"

#define MR GGML__GENERIC_GEMM_MR
#define NR GGML__GENERIC_GEMM_NR
#define LANES GGML__GENERIC_GEMM_LANES

_Static_assert(MR == 2 * LANES, "a tile row is two groups of lanes");
_Static_assert(MR <= GGML__GEMM_MR_MAX && NR <= GGML__GEMM_NR_MAX && NR * LANES <= GGML__GEMM_B_MAX,
               "the generic tile fits the largest shape");

static inline void store_tile_row(float *restrict c, const float *restrict acc, int mr, bool accumulate)
{
    if (accumulate)
        for (int i = 0; i < mr; i++)
            c[i] += acc[i];
    else
        for (int i = 0; i < mr; i++)
            c[i] = acc[i];
}

void ggml__generic_gemm_tile_f32(int kc, const float *restrict apack, const float *restrict bpack, float *const *c,
                                 int mr, int nr, bool accumulate)
{
    float acc0[MR] = { 0 }, acc1[MR] = { 0 }, acc2[MR] = { 0 };
    float acc3[MR] = { 0 }, acc4[MR] = { 0 }, acc5[MR] = { 0 };
    for (int k = 0; k < kc; k++) {
        const float *a = apack + k * MR;
        const float *b = bpack + k * NR * LANES;
#define TILE_ROW(j)                                                   \
        for (int l = 0; l < LANES; l++)                               \
            acc##j[l] += a[l] * b[(j) * LANES + l];                   \
        for (int l = 0; l < LANES; l++)                               \
            acc##j[LANES + l] += a[LANES + l] * b[(j) * LANES + l];
        TILE_ROW(0) TILE_ROW(1) TILE_ROW(2) TILE_ROW(3) TILE_ROW(4) TILE_ROW(5)
#undef TILE_ROW
    }
    const float *const acc[NR] = { acc0, acc1, acc2, acc3, acc4, acc5 };
    for (int j = 0; j < nr; j++)
        store_tile_row(c[j], acc[j], mr, accumulate);
}
