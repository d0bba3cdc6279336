/*
 * simd/generic/dot-k23.c - the generic level's dot products of q2_K and
 * q3_K with a row of q8_K activations (vec_dot entries), in portable C.
 *
 * Per 256-value block the sums over the codes are exact integers (int32
 * cannot overflow: at most 16 * 15 * 16 * 3 * 128 for q2_K and
 * 16 * 32 * 16 * 4 * 128 for q3_K), and are scaled in single precision:
 *   q2_K  d_y * d_x * sum_s sc[s] * sum_{j in s} q[j] y[j]
 *       - d_y * dmin_x * sum_s mn[s] * bsum of s
 *   q3_K  d_y * d_x * sum_s (sc[s] - 32) * sum_{j in s} q[j] y[j]
 * through ggml__q4_K_block_dot and ggml__q6_K_block_dot.  Other levels
 * must produce the same integer sums and combine them the same way, in
 * block order: their results are then the generic ones bit for bit.  No
 * floating-point contraction here (GCC does none in ISO C mode; clang is
 * told below).
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

void ggml__generic_vec_dot_q2_K_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q2_K *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        int32_t scaled = 0, mins = 0;
        for (int sub = 0; sub < QK_K / 16; sub++) {
            /* values 16 sub + j: byte 32 (sub / 8) + 16 (sub % 2) + j, bits 2 ((sub % 8) / 2) */
            const uint8_t *q = x[b].qs + 32 * (sub / 8) + 16 * (sub % 2);
            const int shift = 2 * ((sub % 8) / 2);
            const int8_t *q8 = y[b].qs + 16 * sub;
            int32_t dot = 0;
            for (int j = 0; j < 16; j++)
                dot += ((q[j] >> shift) & 3) * q8[j];
            scaled += (x[b].scales[sub] & 0x0f) * dot;
            mins += (x[b].scales[sub] >> 4) * y[b].bsums[sub];
        }
        sum += ggml__q4_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), ggml__fp16_to_fp32(x[b].dmin), scaled, mins);
    }
    *s = sum;
}

void ggml__generic_vec_dot_q3_K_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q3_K *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        int32_t scaled = 0;
        for (int sub = 0; sub < QK_K / 16; sub++) {
            /* as q2_K, plus the third bit of value 16 sub + j at bit sub / 2 of hmask[16 (sub % 2) + j] */
            const uint8_t *q = x[b].qs + 32 * (sub / 8) + 16 * (sub % 2);
            const uint8_t *hm = x[b].hmask + 16 * (sub % 2);
            const int shift = 2 * ((sub % 8) / 2), bit = sub / 2;
            const int8_t *q8 = y[b].qs + 16 * sub;
            int32_t dot = 0;
            for (int j = 0; j < 16; j++) {
                const int code = (((q[j] >> shift) & 3) | (((hm[j] >> bit) & 1) << 2)) - 4;
                dot += code * q8[j];
            }
            scaled += (ggml__q3_K_scale(x[b].scales, sub) - 32) * dot;
        }
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), scaled);
    }
    *s = sum;
}
