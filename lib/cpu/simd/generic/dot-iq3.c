/*
 * simd/generic/dot-iq3.c - the generic level's dot products of IQ3_XXS and
 * IQ3_S with a row of q8_K activations (vec_dot entries), in portable C.
 *
 * Per 256-value block the sum over the values is an exact integer:
 *   sum_s (2 l_s + 1) * sum_{v in s} sign_v * grid_v * y_v
 * (int32 cannot overflow: at most 8 * 31 * 32 * 62 * 128), scaled in
 * single precision by ggml__q6_K_block_dot(d_y, d_x', sum) with
 * d_x' = d_x / 4 for IQ3_XXS (its values are d (l + 1/2) / 2 * grid:
 * exact power-of-two scaling) and d_x for IQ3_S.  Other levels must
 * produce the same integer sums and combine them in the same order.  No
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

/* sum_j sign_j * grid_j * q8_j over the four values of codebook entry e;
   bit j of signs negates value j. */
static inline int32_t point_dot(uint32_t e, unsigned signs, const int8_t *q8)
{
    int32_t dot = 0;
    for (int j = 0; j < 4; j++) {
        const int32_t g = (int32_t) ((e >> (8 * j)) & 0xffu);
        dot += ((signs >> j) & 1u ? -g : g) * q8[j];
    }
    return dot;
}

void ggml__generic_vec_dot_iq3_xxs_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                        const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_iq3_xxs *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        int32_t scaled = 0;
        for (int sub = 0; sub < QK_K / 32; sub++) {
            uint32_t word;
            memcpy(&word, x[b].qs + QK_K / 4 + 4 * sub, sizeof word);
            int32_t dot = 0;
            for (int g = 0; g < 8; g++) {
                const unsigned signs = ggml__iq3_xxs_signs(word >> (7 * (g / 2)));
                dot += point_dot(ggml__iq3_xxs_grid[x[b].qs[8 * sub + g]], signs >> (4 * (g % 2)),
                                 y[b].qs + 32 * sub + 4 * g);
            }
            scaled += (int32_t) (2 * (word >> 28) + 1) * dot;
        }
        sum += ggml__q6_K_block_dot(y[b].d, 0.25f * ggml__fp16_to_fp32(x[b].d), scaled);
    }
    *s = sum;
}

void ggml__generic_vec_dot_iq3_s_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                      const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_iq3_s *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        int32_t scaled = 0;
        for (int sub = 0; sub < QK_K / 32; sub++) {
            int32_t dot = 0;
            for (int g = 0; g < 8; g++) {
                const int index = x[b].qs[8 * sub + g] | ((x[b].qh[sub] >> g) & 1) << 8;
                const unsigned signs = x[b].signs[4 * sub + g / 2] >> (4 * (g % 2));
                dot += point_dot(ggml__iq3_s_grid[index], signs, y[b].qs + 32 * sub + 4 * g);
            }
            scaled += (2 * ((x[b].scales[sub / 2] >> (4 * (sub % 2))) & 0x0f) + 1) * dot;
        }
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), scaled);
    }
    *s = sum;
}
