/*
 * simd/neon/gemm.c - the tile of the tiled F32 matrix product at the NEON
 * level: 16 rows of A (four 4-lane vectors) by 6 columns of B, 24
 * accumulator registers.  Per k: four loads of A, one 4-value and one
 * 2-value load of B, and 24 fused multiply-adds by lane, each taking its
 * B value from a lane of those two loads.  B's panel holds each value once
 * (lanes 1).  32 vector registers hold the 24 accumulators, A and B.
 */
#include "config.h"

#include <arm_neon.h>

#include "ggml-impl.h"
#include "neon.h"

#define MR GGML__NEON_GEMM_MR
#define NR GGML__NEON_GEMM_NR

_Static_assert(MR == 16 && NR == 6, "the register tile below is 16 x 6");
_Static_assert(MR <= GGML__GEMM_MR_MAX && NR <= GGML__GEMM_NR_MAX && NR * GGML__NEON_GEMM_LANES <= GGML__GEMM_B_MAX,
               "the NEON tile fits the largest shape");

/* c[0..mr) (+)= the 16 lanes of v[0..4). */
static inline void store_column(float *c, const float32x4_t v[4], int mr, bool accumulate)
{
    if (mr == MR) {
        for (int q = 0; q < 4; q++)
            vst1q_f32(c + 4 * q, accumulate ? vaddq_f32(v[q], vld1q_f32(c + 4 * q)) : v[q]);
        return;
    }
    float tmp[MR];
    for (int q = 0; q < 4; q++)
        vst1q_f32(tmp + 4 * q, v[q]);
    if (accumulate)
        for (int i = 0; i < mr; i++)
            c[i] += tmp[i];
    else
        for (int i = 0; i < mr; i++)
            c[i] = tmp[i];
}

void ggml__neon_gemm_tile_f32(int kc, const float *restrict apack, const float *restrict bpack, float *const *c,
                              int mr, int nr, bool accumulate)
{
    float32x4_t acc[NR][4];
    for (int j = 0; j < NR; j++)
        for (int q = 0; q < 4; q++)
            acc[j][q] = vdupq_n_f32(0.0f);
    const float *a = apack, *b = bpack;
    for (int k = 0; k < kc; k++, a += MR, b += NR) {
        const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4), a2 = vld1q_f32(a + 8), a3 = vld1q_f32(a + 12);
        const float32x4_t b03 = vld1q_f32(b);
        const float32x2_t b45 = vld1_f32(b + 4);
#define COLUMN_BY_LANEQ(j)                                    \
    acc[j][0] = vfmaq_laneq_f32(acc[j][0], a0, b03, j);       \
    acc[j][1] = vfmaq_laneq_f32(acc[j][1], a1, b03, j);       \
    acc[j][2] = vfmaq_laneq_f32(acc[j][2], a2, b03, j);       \
    acc[j][3] = vfmaq_laneq_f32(acc[j][3], a3, b03, j)
#define COLUMN_BY_LANE(j)                                     \
    acc[j][0] = vfmaq_lane_f32(acc[j][0], a0, b45, j - 4);    \
    acc[j][1] = vfmaq_lane_f32(acc[j][1], a1, b45, j - 4);    \
    acc[j][2] = vfmaq_lane_f32(acc[j][2], a2, b45, j - 4);    \
    acc[j][3] = vfmaq_lane_f32(acc[j][3], a3, b45, j - 4)
        COLUMN_BY_LANEQ(0);
        COLUMN_BY_LANEQ(1);
        COLUMN_BY_LANEQ(2);
        COLUMN_BY_LANEQ(3);
        COLUMN_BY_LANE(4);
        COLUMN_BY_LANE(5);
#undef COLUMN_BY_LANEQ
#undef COLUMN_BY_LANE
    }
    for (int j = 0; j < nr; j++)
        store_column(c[j], acc[j], mr, accumulate);
}
