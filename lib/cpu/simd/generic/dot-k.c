/*
 * simd/generic/dot-k.c - the generic level's dot products of the K-quant
 * formats with a row of q8_K activations (vec_dot entries), in portable C.
 *
 * Per 256-value block the sums over the quants are exact integers (int32
 * cannot overflow: at most 8 * 63 * 32 * 31 * 128 for q4_K and q5_K and
 * 16 * 128 * 16 * 32 * 128 for q6_K), and are scaled in single precision:
 *   q4_K  d_y * d_x * sum_s sc[s] * sum_{j in s} q[j] y[j]
 *       - d_y * dmin_x * sum_s mn[s] * (bsums of s's two groups of 16)
 *         (q5_K the same with 5-bit codes)
 *   q6_K  d_y * d_x * sum_s sc[s] * (sum_{j in s} q[j] y[j] - 32 * bsum of s)
 * (the q8_K block's sums of 16 quants stand for the quants' sums: the
 * format keeps them equal)
 * Other levels must produce the same integer sums and combine them with
 * the same float operations (ggml__q4_K_block_dot, ggml__q6_K_block_dot)
 * in the same order: every level's result is then the generic one, bit
 * for bit.  No floating-point contraction here (GCC does none in ISO C
 * mode; clang is told below).
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

/*
 * The integer sums of a q4_K or q5_K block against a q8_K block: the codes
 * times the activations, scaled per sub-block (*scaled), and the
 * sub-block minimums times the activation sums (*mins).  qh holds the
 * fifth bits of q5_K's codes (bit sub of qh[j] for value j of sub-block
 * sub), NULL for q4_K.
 */
static inline void q45_K_block_sums(const uint8_t scales[K_SCALE_BYTES], const uint8_t *qs, const uint8_t *qh,
                                    const block_q8_K *y, int32_t *scaled, int32_t *mins)
{
    *scaled = *mins = 0;
    for (int sub = 0; sub < QK_K / 32; sub++) {
        int sc, mn;
        ggml__q4_K_scale_min(scales, sub, &sc, &mn);
        /* sub-block sub: bytes 32 (sub / 2) .. + 31, low nibbles for even sub */
        const uint8_t *q = qs + 32 * (sub / 2);
        const int8_t *q8 = y->qs + 32 * sub;
        int32_t dot = 0;
        for (int j = 0; j < 32; j++) {
            const int code = ((sub & 1) ? q[j] >> 4 : q[j] & 0x0f) | (qh ? ((qh[j] >> sub) & 1) << 4 : 0);
            dot += code * q8[j];
        }
        *scaled += sc * dot;
        *mins += mn * (y->bsums[2 * sub] + y->bsums[2 * sub + 1]);
    }
}

void ggml__generic_vec_dot_q4_K_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q4_K *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        int32_t scaled, mins;
        q45_K_block_sums(x[b].scales, x[b].qs, NULL, &y[b], &scaled, &mins);
        sum += ggml__q4_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), ggml__fp16_to_fp32(x[b].dmin), scaled, mins);
    }
    *s = sum;
}

void ggml__generic_vec_dot_q5_K_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q5_K *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        int32_t scaled, mins;
        q45_K_block_sums(x[b].scales, x[b].qs, x[b].qh, &y[b], &scaled, &mins);
        sum += ggml__q4_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), ggml__fp16_to_fp32(x[b].dmin), scaled, mins);
    }
    *s = sum;
}

void ggml__generic_vec_dot_q6_K_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q6_K *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        int32_t scaled = 0;
        for (int half = 0; half < 2; half++) {
            const uint8_t *ql = x[b].ql + 64 * half;
            const uint8_t *qh = x[b].qh + 32 * half;
            const int8_t *q8 = y[b].qs + 128 * half;
            /* part p holds values 32 p + l of this half (see block_q6_K) */
            for (int part = 0; part < 4; part++) {
                for (int g = 0; g < 2; g++) {
                    const int sub = 8 * half + 2 * part + g;
                    /* sum_j (code_j - 32) y_j, the offset's share from the group sum */
                    int32_t dot = -32 * y[b].bsums[sub];
                    for (int l = 16 * g; l < 16 * g + 16; l++) {
                        const uint8_t low = ql[l + 32 * (part & 1)];
                        const int code = (part < 2 ? low & 0x0f : low >> 4) | (((qh[l] >> (2 * part)) & 3) << 4);
                        dot += code * q8[32 * part + l];
                    }
                    scaled += x[b].scales[sub] * dot;
                }
            }
        }
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), scaled);
    }
    *s = sum;
}
