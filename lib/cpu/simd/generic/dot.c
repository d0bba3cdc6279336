/*
 * simd/generic/dot.c - the generic level's dot products (the vec_dot
 * entries), in portable C.
 *
 * Float rows are multiplied in single precision with 16 partial sums.  A
 * quantized row is multiplied with a row of its vec_dot_type (Q8_0 or
 * Q8_1) block by block in integer arithmetic, as ggml's block formats
 * intend, and each block's integer sum is scaled by the two blocks'
 * scales.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "generic.h"
#include "lanes.h"

/* ------------------------------------------------------ float dot products */

/* Every vec_dot here computes one dot product: nrc is 1 and the strides
   of further rows are unused. */
#define ONE_ROW_ONLY() ((void) bs, (void) bx, (void) by, (void) nrc)

/*
 * The float dot products share one shape: two groups of 8 partial sums
 * (four vector registers of SSE width, enough to hide the adder's
 * latency), then the tail, then a fixed pairwise reduction.
 */
#define DOT_ROW(n, load_x, load_y)                                            \
    do {                                                                      \
        float lo_[8] = { 0 }, hi_[8] = { 0 };                                 \
        int64_t i_ = 0;                                                       \
        for (; i_ + 16 <= (n); i_ += 16) {                                    \
            for (int l_ = 0; l_ < 8; l_++)                                    \
                lo_[l_] += load_x(i_ + l_) * load_y(i_ + l_);                 \
            for (int l_ = 0; l_ < 8; l_++)                                    \
                hi_[l_] += load_x(i_ + 8 + l_) * load_y(i_ + 8 + l_);         \
        }                                                                     \
        float tail_ = 0.0f;                                                   \
        for (; i_ < (n); i_++)                                                \
            tail_ += load_x(i_) * load_y(i_);                                 \
        for (int l_ = 0; l_ < 8; l_++)                                        \
            lo_[l_] += hi_[l_];                                               \
        for (int w_ = 4; w_ >= 1; w_ /= 2)                                    \
            for (int l_ = 0; l_ < w_; l_++)                                   \
                lo_[l_] += lo_[l_ + w_];                                      \
        *s = lo_[0] + tail_;                                                  \
    } while (0)

void ggml__generic_vec_dot_f32(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                               const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const float *x = vx, *y = vy;
#define LOAD_X(i) x[i]
#define LOAD_Y(i) y[i]
    DOT_ROW(n, LOAD_X, LOAD_Y);
#undef LOAD_X
#undef LOAD_Y
}

void ggml__generic_vec_dot_f16(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                               const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const uint16_t *x = vx, *y = vy;
#define LOAD_X(i) f16_to_f32_lane(x[i])
#define LOAD_Y(i) f16_to_f32_lane(y[i])
    DOT_ROW(n, LOAD_X, LOAD_Y);
#undef LOAD_X
#undef LOAD_Y
}

void ggml__generic_vec_dot_bf16(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const uint16_t *x = vx, *y = vy;
#define LOAD_X(i) bf16_to_f32_lane(x[i])
#define LOAD_Y(i) bf16_to_f32_lane(y[i])
    DOT_ROW(n, LOAD_X, LOAD_Y);
#undef LOAD_X
#undef LOAD_Y
}

/* -------------------------------------------------- quantized dot products */

/*
 * Each function takes n values (a multiple of 32) of a quantized row x and
 * of a row y in the type's vec_dot_type, and adds up, block by block,
 *     d_x * d_y * sum_j q_x[j] * q_y[j]        (symmetric formats)
 *   + m_x * s_y                                (formats with a minimum)
 * where s_y = d_y * sum_j q_y[j] is stored in the Q8_1 block.  The sums
 * over j are exact integers.
 */

static inline uint32_t load_qh(const uint8_t qh[4])
{
    uint32_t v;
    memcpy(&v, qh, sizeof v);   /* little-endian, as everywhere in ggml */
    return v;
}

void ggml__generic_vec_dot_q4_0_q8_0(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_q4_0 *x = vx;
    const block_q8_0 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK4_0; b++) {
        int32_t isum = 0;
        for (int j = 0; j < QK4_0 / 2; j++) {
            const int lo = (x[b].qs[j] & 0x0f) - 8;
            const int hi = (x[b].qs[j] >> 4) - 8;
            isum += lo * y[b].qs[j] + hi * y[b].qs[j + QK4_0 / 2];
        }
        sum += (float) isum * ggml__fp16_to_fp32(x[b].d) * ggml__fp16_to_fp32(y[b].d);
    }
    *s = sum;
}

void ggml__generic_vec_dot_q4_1_q8_1(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_q4_1 *x = vx;
    const block_q8_1 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK4_1; b++) {
        int32_t isum = 0;
        for (int j = 0; j < QK4_1 / 2; j++)
            isum += (x[b].qs[j] & 0x0f) * y[b].qs[j] + (x[b].qs[j] >> 4) * y[b].qs[j + QK4_1 / 2];
        sum += ggml__fp16_to_fp32(x[b].d) * ggml__fp16_to_fp32(y[b].d) * (float) isum +
               ggml__fp16_to_fp32(x[b].m) * ggml__fp16_to_fp32(y[b].s);
    }
    *s = sum;
}

/* Value j (0..31) of a 5-bit block without its offset: 0..31. */
#define Q5_VALUE(qs, qh, j) \
    ((((j) < 16 ? (qs)[(j)] & 0x0f : (qs)[(j) - 16] >> 4)) | (int) ((((qh) >> (j)) & 1u) << 4))

void ggml__generic_vec_dot_q5_0_q8_0(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_q5_0 *x = vx;
    const block_q8_0 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK5_0; b++) {
        const uint32_t qh = load_qh(x[b].qh);
        int32_t isum = 0;
        for (int j = 0; j < QK5_0; j++)
            isum += (Q5_VALUE(x[b].qs, qh, j) - 16) * y[b].qs[j];
        sum += (float) isum * ggml__fp16_to_fp32(x[b].d) * ggml__fp16_to_fp32(y[b].d);
    }
    *s = sum;
}

void ggml__generic_vec_dot_q5_1_q8_1(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_q5_1 *x = vx;
    const block_q8_1 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK5_1; b++) {
        const uint32_t qh = load_qh(x[b].qh);
        int32_t isum = 0;
        for (int j = 0; j < QK5_1; j++)
            isum += Q5_VALUE(x[b].qs, qh, j) * y[b].qs[j];
        sum += ggml__fp16_to_fp32(x[b].d) * ggml__fp16_to_fp32(y[b].d) * (float) isum +
               ggml__fp16_to_fp32(x[b].m) * ggml__fp16_to_fp32(y[b].s);
    }
    *s = sum;
}

void ggml__generic_vec_dot_q8_0_q8_0(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_q8_0 *x = vx;
    const block_q8_0 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK8_0; b++) {
        int32_t isum = 0;
        for (int j = 0; j < QK8_0; j++)
            isum += x[b].qs[j] * y[b].qs[j];
        sum += (float) isum * ggml__fp16_to_fp32(x[b].d) * ggml__fp16_to_fp32(y[b].d);
    }
    *s = sum;
}
