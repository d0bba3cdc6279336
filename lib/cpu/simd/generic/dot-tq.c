/*
 * simd/generic/dot-tq.c - the generic level's dot products of TQ1_0,
 * TQ2_0 and IQ4_XS rows with a row of q8_K activations (vec_dot entries).
 *
 * Per 256-value block the sums are exact integers (int32 cannot
 * overflow: at most 256 * 3 * 128 for the ternary formats and
 * 8 * 32 * 32 * 127 * 128 for IQ4_XS):
 *   TQ1_0, TQ2_0  sum_j t[j] y[j] - sum_g bsums[g]   (the codes less 1)
 *   IQ4_XS        sum_s (ls[s] - 32) * sum_{j in s} level[q[j]] y[j]
 * scaled by d_y * d_x in single precision with ggml__q6_K_block_dot.
 * Other levels must produce the same integer sums and scale them the same
 * way in the same order: every level's result is then the generic one,
 * bit for bit.  No floating-point contraction here.
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

/* The sum of the 256 activations of a q8_K block (from its group sums). */
static int32_t q8_K_total(const block_q8_K *y)
{
    int32_t total = 0;
    for (int g = 0; g < QK_K / 16; g++)
        total += y->bsums[g];
    return total;
}

/* sum_j trit[j] * y[j] over the digits of `bytes` trit bytes starting with
   value value0 (layout: block_tq1_0). */
static int32_t tq1_group_dot(const uint8_t *bytes, int nbytes, int digits, const int8_t *y)
{
    static const uint8_t pow3[5] = { 1, 3, 9, 27, 81 };
    int32_t dot = 0;
    for (int n = 0; n < digits; n++)
        for (int m = 0; m < nbytes; m++)
            dot += (((uint8_t) (bytes[m] * pow3[n]) * 3) >> 8) * y[m + n * nbytes];
    return dot;
}

void ggml__generic_vec_dot_tq1_0_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                      const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_tq1_0 *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        const int32_t dot = tq1_group_dot(x[b].qs, 32, 5, y[b].qs) + tq1_group_dot(x[b].qs + 32, 16, 5, y[b].qs + 160) +
                            tq1_group_dot(x[b].qh, 4, 4, y[b].qs + 240) - q8_K_total(&y[b]);
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), dot);
    }
    *s = sum;
}

void ggml__generic_vec_dot_tq2_0_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                      const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_tq2_0 *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        int32_t dot = -q8_K_total(&y[b]);
        for (int v = 0; v < QK_K; v++)
            dot += ((x[b].qs[32 * (v / 128) + v % 32] >> (2 * ((v % 128) / 32))) & 3) * y[b].qs[v];
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), dot);
    }
    *s = sum;
}

void ggml__generic_vec_dot_iq4_xs_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                       const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_iq4_xs *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        int32_t scaled = 0;
        for (int sub = 0; sub < QK_K / 32; sub++) {
            const uint8_t *qs = x[b].qs + 16 * sub;
            const int8_t *q8 = y[b].qs + 32 * sub;
            int32_t dot = 0;
            for (int j = 0; j < 16; j++)
                dot += ggml__iq4nl_values[qs[j] & 0x0f] * q8[j] + ggml__iq4nl_values[qs[j] >> 4] * q8[j + 16];
            scaled += (ggml__iq4_xs_scale(&x[b], sub) - 32) * dot;
        }
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), scaled);
    }
    *s = sum;
}
