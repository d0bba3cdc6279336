/*
 * simd/generic/dot-small.c - generic vec_dot entries of the formats whose
 * vec_dot_type is Q8_0 and whose codes are small integers: MXFP4, NVFP4,
 * Q1_0, Q2_0, IQ4_NL.
 *
 * Each Q8_0 block of y (32 values, one binary16 scale) meets the weights'
 * 32 values of the same positions.  Their codes stand for small integers
 * (doubled E2M1 values -12..12, +-1, -1..2, IQ4_NL's levels -127..113),
 * so a Q8_0 block's products are summed exactly as an int32 (at most
 * 32 * 127 * 128 in magnitude), and the float sum then gets, per Q8_0
 * block in order, (float) isum * dx * dy, multiplied left to right (NVFP4:
 * one such term per 16-value sub-block, both with the block's dy).  Other
 * levels must keep this order to give the same bits.
 */
#include "config.h"

#include <stdint.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "generic.h"

/* the float operations are the contract: never fused */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define ONE_ROW_ONLY() ((void) bs, (void) bx, (void) by, (void) nrc)

/* sum over j < 16 of table[low nibble of q[j]] * y[j] + table[high] * y[j + 16] */
static inline int32_t nibble_dot(const int8_t table[16], const uint8_t *q, const int8_t *y)
{
    int32_t isum = 0;
    for (int j = 0; j < 16; j++)
        isum += table[q[j] & 0x0f] * y[j] + table[q[j] >> 4] * y[j + 16];
    return isum;
}

void ggml__generic_vec_dot_mxfp4_q8_0(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                      const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_mxfp4 *x = vx;
    const block_q8_0 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_MXFP4; b++) {
        const int32_t isum = nibble_dot(ggml__e2m1_doubled, x[b].qs, y[b].qs);
        sum += (float) isum * ggml__e8m0_half_to_fp32(x[b].e) * ggml__fp16_to_fp32(y[b].d);
    }
    *s = sum;
}

void ggml__generic_vec_dot_iq4_nl_q8_0(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                       const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_iq4_nl *x = vx;
    const block_q8_0 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK4_NL; b++) {
        const int32_t isum = nibble_dot(ggml__iq4nl_values, x[b].qs, y[b].qs);
        sum += (float) isum * ggml__fp16_to_fp32(x[b].d) * ggml__fp16_to_fp32(y[b].d);
    }
    *s = sum;
}

/* An NVFP4 sub-block (16 values: low nibbles then high nibbles of q[0..7]) against y[0..15]. */
static inline int32_t nvfp4_sub_dot(const uint8_t *q, const int8_t *y)
{
    int32_t isum = 0;
    for (int j = 0; j < QK_NVFP4_SUB / 2; j++)
        isum += ggml__e2m1_doubled[q[j] & 0x0f] * y[j] + ggml__e2m1_doubled[q[j] >> 4] * y[j + QK_NVFP4_SUB / 2];
    return isum;
}

void ggml__generic_vec_dot_nvfp4_q8_0(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                      const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_nvfp4 *x = vx;
    const block_q8_0 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK8_0; b++) {
        const block_nvfp4 *xb = &x[b / 2];
        const int s0 = (b % 2) * 2; /* the first of this Q8_0 block's two sub-blocks */
        const float dy = ggml__fp16_to_fp32(y[b].d);
        for (int h = 0; h < 2; h++) {
            const int32_t isum = nvfp4_sub_dot(xb->qs + (s0 + h) * (QK_NVFP4_SUB / 2), y[b].qs + h * QK_NVFP4_SUB);
            sum += (float) isum * ggml__ue4m3_half_to_fp32(xb->d[s0 + h]) * dy;
        }
    }
    *s = sum;
}

void ggml__generic_vec_dot_q1_0_q8_0(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_q1_0 *x = vx;
    const block_q8_0 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK8_0; b++) {
        const block_q1_0 *xb = &x[b / (QK1_0 / QK8_0)];
        const uint8_t *bits = xb->qs + (b % (QK1_0 / QK8_0)) * (QK8_0 / 8);
        int32_t isum = 0;
        for (int j = 0; j < QK8_0; j++)
            isum += (bits[j / 8] >> (j % 8)) & 1 ? y[b].qs[j] : -y[b].qs[j];
        sum += (float) isum * ggml__fp16_to_fp32(xb->d) * ggml__fp16_to_fp32(y[b].d);
    }
    *s = sum;
}

void ggml__generic_vec_dot_q2_0_q8_0(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_q2_0 *x = vx;
    const block_q8_0 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK8_0; b++) {
        const block_q2_0 *xb = &x[b / (QK2_0 / QK8_0)];
        const uint8_t *codes = xb->qs + (b % (QK2_0 / QK8_0)) * (QK8_0 / 4);
        int32_t isum = 0;
        for (int j = 0; j < QK8_0; j++)
            isum += (((codes[j / 4] >> (2 * (j % 4))) & 3) - 1) * y[b].qs[j];
        sum += (float) isum * ggml__fp16_to_fp32(xb->d) * ggml__fp16_to_fp32(y[b].d);
    }
    *s = sum;
}
