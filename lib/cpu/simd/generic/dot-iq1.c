/*
 * simd/generic/dot-iq1.c - the generic level's dot products of IQ1_S and
 * IQ1_M rows with a row of q8_K activations (vec_dot entries), in portable C.
 *
 * A value is dl * (v + delta) with dl = d * (2 s + 1), v in {-1, 0, +1} and
 * delta = +-1/8, so in eighths of dl it is the integer 8 v +- 1.  Per
 * 256-value block the sum over the values is therefore the exact integer
 *     total = sum_units (2 s + 1) * sum_groups (8 * sum v q8 +- sum q8)
 * (|total| <= 15 * 256 * 9 * 128 < 2^24, exact in int32 and in a float),
 * and the block adds ggml__iq1_block_dot: d_y * d_x * (total / 8) in single
 * precision; other levels form the same totals and call the same function.  No
 * floating-point contraction here.
 */
#include "config.h"

#include <stdint.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "generic.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* 8 * sum v[j] q8[j] +- sum q8[j] for grid point index (the sign: negative). */
static inline int32_t group_eighths(unsigned index, bool negative, const int8_t *q8)
{
    const uint16_t code = ggml__iq1_grid[index];
    int32_t dot = 0, sum = 0;
    for (int j = 0; j < 8; j++) {
        dot += ggml__iq1_grid_value(code, j) * q8[j];
        sum += q8[j];
    }
    return IQ1_DELTA_EIGHTHS * 8 * dot + (negative ? -sum : sum);
}

void ggml__generic_vec_dot_iq1_s_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                      const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_iq1_s *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        int32_t total = 0;
        for (int b = 0; b < QK_K / 32; b++) {
            const unsigned qh = x[i].qh[b];
            int32_t unit = 0;
            for (int l = 0; l < 4; l++)
                unit += group_eighths(x[i].qs[4 * b + l] | ((qh >> (3 * l)) & 7) << 8, qh & 0x8000u,
                                      y[i].qs + 32 * b + 8 * l);
            total += (int32_t) (2 * ((qh >> 12) & 7) + 1) * unit;
        }
        sum += ggml__iq1_block_dot(y[i].d, ggml__fp16_to_fp32(x[i].d), total);
    }
    *s = sum;
}

void ggml__generic_vec_dot_iq1_m_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                      const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_iq1_m *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        int32_t total = 0;
        for (int h = 0; h < QK_K / 16; h++) {
            const unsigned word = (unsigned) x[i].scales[2 * (h / 4)] | (unsigned) x[i].scales[2 * (h / 4) + 1] << 8;
            int32_t unit = 0;
            for (int g = 2 * h; g < 2 * h + 2; g++) {
                const unsigned nibble = (x[i].qh[g / 2] >> (4 * (g % 2))) & 0x0f;
                unit += group_eighths(x[i].qs[g] | (nibble & 7) << 8, nibble & 8, y[i].qs + 8 * g);
            }
            total += (int32_t) (2 * ((word >> (3 * (h % 4))) & 7) + 1) * unit;
        }
        sum += ggml__iq1_block_dot(y[i].d, ggml__fp16_to_fp32(ggml__iq1_m_scale(x[i].scales)), total);
    }
    *s = sum;
}
