/*
 * simd/neon/dot.c - dot products of the NEON level (base ARMv8-A).
 *
 * Float rows: four accumulators of 4 lanes (fused multiply-add), 16
 * elements a step, then 4 a step, then a scalar tail and a fixed
 * reduction.  F16 and BF16 are widened to F32 exactly (FCVTL, a shift)
 * before the multiply.  The sums round differently from the generic
 * level's; both are single-precision sums of exact products.
 *
 * Quantized rows (quant-dot.h): the 32 products of a block are int8 x
 * int8 products widened to int16 (exact: |product| <= 2^14) and added
 * pairwise into int32 lanes, so the block's sum is exact.
 */
#include "config.h"

#include <arm_neon.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "neon.h"

/* ------------------------------------------------------------ float rows */

/* Loads of 4 elements widened to F32, from any byte address. */
static inline float32x4_t load_f32(const float *p)
{
    return vreinterpretq_f32_u8(vld1q_u8((const uint8_t *) p));
}

static inline float32x4_t load_f16(const ggml_fp16_t *p)
{
    const uint16x4_t h = vreinterpret_u16_u8(vld1_u8((const uint8_t *) p));
    return vcvt_f32_f16(vreinterpret_f16_u16(h));
}

static inline float32x4_t load_bf16(const uint16_t *p)
{
    const uint16x4_t h = vreinterpret_u16_u8(vld1_u8((const uint8_t *) p));
    return vreinterpretq_f32_u32(vshll_n_u16(h, 16));
}

static inline float f32_value(float v)
{
    return v;
}

static inline float bf16_value(uint16_t h)
{
    return ggml__fp32_from_bits((uint32_t) h << 16);
}

/* The shape of the three float dot products (x_, y_ of type T). */
#define DOT_FLOAT_ROWS(T, load, scalar)                                                        \
    do {                                                                                      \
        const T *x_ = vx, *y_ = vy;                                                           \
        float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;                        \
        int i_ = 0;                                                                           \
        for (; i_ + 16 <= n; i_ += 16) {                                                      \
            a0 = vfmaq_f32(a0, load(x_ + i_), load(y_ + i_));                                 \
            a1 = vfmaq_f32(a1, load(x_ + i_ + 4), load(y_ + i_ + 4));                         \
            a2 = vfmaq_f32(a2, load(x_ + i_ + 8), load(y_ + i_ + 8));                         \
            a3 = vfmaq_f32(a3, load(x_ + i_ + 12), load(y_ + i_ + 12));                       \
        }                                                                                     \
        for (; i_ + 4 <= n; i_ += 4)                                                          \
            a0 = vfmaq_f32(a0, load(x_ + i_), load(y_ + i_));                                 \
        float tail_ = 0.0f;                                                                   \
        for (; i_ < n; i_++)                                                                  \
            tail_ += scalar(x_[i_]) * scalar(y_[i_]);                                         \
        *s = vaddvq_f32(vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3))) + tail_;             \
    } while (0)

void ggml__neon_vec_dot_f32(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    DOT_FLOAT_ROWS(float, load_f32, f32_value);
}

void ggml__neon_vec_dot_f16(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    DOT_FLOAT_ROWS(ggml_fp16_t, load_f16, ggml__fp16_to_fp32);
}

void ggml__neon_vec_dot_bf16(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    DOT_FLOAT_ROWS(uint16_t, load_bf16, bf16_value);
}

/* -------------------------------------------------------- quantized rows */

/* Widening multiplies (SMULL, SMULL2) and pairwise accumulation (SADALP). */
static inline int32x4_t block_isum(int8x16_t x_lo, int8x16_t x_hi, const int8_t y[32])
{
    const int8x16_t y_lo = vld1q_s8(y), y_hi = vld1q_s8(y + 16);
    int32x4_t acc = vpaddlq_s16(vmull_s8(vget_low_s8(x_lo), vget_low_s8(y_lo)));
    acc = vpadalq_s16(acc, vmull_high_s8(x_lo, y_lo));
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(x_hi), vget_low_s8(y_hi)));
    return vpadalq_s16(acc, vmull_high_s8(x_hi, y_hi));
}

#define QDOT_NAME(f) ggml__neon_vec_dot_##f
#include "quant-dot.h"
