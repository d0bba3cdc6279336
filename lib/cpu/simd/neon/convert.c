/*
 * simd/neon/convert.c - row conversions and activation encoders of the
 * NEON level.  Every function gives the generic level's result bit for
 * bit; the Q8 encoders for rows without NaN (a block holding a NaN is
 * encoded by rules of its own at each level).  The F16 conversions use
 * the FPCR's rounding mode and need its default (round to nearest, no
 * flush to zero), as the generic level needs round to nearest.
 */
#include "config.h"

#include <arm_neon.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "neon.h"

/* 8 16-bit values and 4 32-bit values, from and to any byte address. */
static inline uint16x8_t load_u16x8(const void *p)
{
    return vreinterpretq_u16_u8(vld1q_u8(p));
}

static inline void store_u16x8(void *p, uint16x8_t v)
{
    vst1q_u8(p, vreinterpretq_u8_u16(v));
}

static inline uint32x4_t load_u32x4(const void *p)
{
    return vreinterpretq_u32_u8(vld1q_u8(p));
}

static inline void store_u32x4(void *p, uint32x4_t v)
{
    vst1q_u8(p, vreinterpretq_u8_u32(v));
}

/* ------------------------------------------------------------ F16, BF16 */

/* FCVTL is exact, subnormals included; a NaN gets the quiet bit and keeps
   its payload, as the generic conversion. */
void ggml__neon_f16_to_f32(const void *restrict vx, float *restrict y, int64_t n)
{
    const ggml_fp16_t *x = vx;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float16x8_t h = vreinterpretq_f16_u16(load_u16x8(x + i));
        store_u32x4(y + i, vreinterpretq_u32_f32(vcvt_f32_f16(vget_low_f16(h))));
        store_u32x4(y + i + 4, vreinterpretq_u32_f32(vcvt_high_f32_f16(h)));
    }
    for (; i < n; i++)
        y[i] = ggml__fp16_to_fp32(x[i]);
}

/*
 * FCVTN rounds to nearest even like the generic conversion and keeps a
 * NaN's upper payload bits, where the generic conversion gives the
 * canonical quiet NaN 0x7e00 with the sign: NaN lanes are made canonical
 * (0x7fc00000 with the sign, which converts to 0x7e00) first.
 */
static inline float32x4_t canonical_nans(float32x4_t v)
{
    const uint32x4_t bits = vreinterpretq_u32_f32(v);
    const uint32x4_t nan = vmvnq_u32(vceqq_f32(v, v));
    const uint32x4_t canonical = vorrq_u32(vandq_u32(bits, vdupq_n_u32(0x80000000u)), vdupq_n_u32(0x7fc00000u));
    return vreinterpretq_f32_u32(vbslq_u32(nan, canonical, bits));
}

void ggml__neon_f32_to_f16(const float *restrict x, void *restrict vy, int64_t n)
{
    ggml_fp16_t *y = vy;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float32x4_t lo = canonical_nans(vreinterpretq_f32_u32(load_u32x4(x + i)));
        const float32x4_t hi = canonical_nans(vreinterpretq_f32_u32(load_u32x4(x + i + 4)));
        const float16x8_t h = vcvt_high_f16_f32(vcvt_f16_f32(lo), hi);
        store_u16x8(y + i, vreinterpretq_u16_f16(h));
    }
    for (; i < n; i++)
        y[i] = ggml__fp32_to_fp16(x[i]);
}

void ggml__neon_bf16_to_f32(const void *restrict vx, float *restrict y, int64_t n)
{
    const uint16_t *x = vx;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint16x8_t h = load_u16x8(x + i);
        store_u32x4(y + i, vshll_n_u16(vget_low_u16(h), 16));
        store_u32x4(y + i + 4, vshll_high_n_u16(h, 16));
    }
    for (; i < n; i++)
        y[i] = ggml__fp32_from_bits((uint32_t) x[i] << 16);
}

/* Round to nearest even on the upper 16 bits, as 32-bit lanes; a NaN keeps
   its upper bits and gets the quiet bit (0x0040 of the result). */
static inline uint32x4_t f32_to_bf16_lanes(uint32x4_t w)
{
    const uint32x4_t odd = vandq_u32(vshrq_n_u32(w, 16), vdupq_n_u32(1));
    const uint32x4_t rounded = vshrq_n_u32(vaddq_u32(vaddq_u32(w, vdupq_n_u32(0x7fff)), odd), 16);
    const uint32x4_t nan = vcgtq_u32(vandq_u32(w, vdupq_n_u32(0x7fffffffu)), vdupq_n_u32(0x7f800000u));
    const uint32x4_t nan_bits = vorrq_u32(vshrq_n_u32(w, 16), vdupq_n_u32(0x0040));
    return vbslq_u32(nan, nan_bits, rounded);
}

void ggml__neon_f32_to_bf16(const float *restrict x, void *restrict vy, int64_t n)
{
    uint16_t *y = vy;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint32x4_t lo = f32_to_bf16_lanes(load_u32x4(x + i));
        const uint32x4_t hi = f32_to_bf16_lanes(load_u32x4(x + i + 4));
        store_u16x8(y + i, vmovn_high_u32(vmovn_u32(lo), hi));   /* lanes are below 0x10000 */
    }
    for (; i < n; i++)
        y[i] = ggml__fp32_to_bf16(x[i]).bits;
}

/* ------------------------------------------------------------ Q8_0, Q8_1 */

static inline float32x4_t load_f32x4(const float *p)
{
    return vreinterpretq_f32_u32(load_u32x4(p));
}

/* Largest |x[j]| of 32 values (NaN: as FMAX orders it). */
static inline float block_absmax32(const float *x)
{
    float32x4_t m = vabsq_f32(load_f32x4(x));
    for (int j = 4; j < 32; j += 4)
        m = vmaxq_f32(m, vabsq_f32(load_f32x4(x + j)));
    return vmaxvq_f32(m);
}

/*
 * Encodes 32 values with scale d (the reference's d = amax / 127 and
 * id = 1 / d or 0) into qs; returns the sum of the 32 codes.  FCVTAS
 * rounds half away from zero (roundf), saturates and gives 0 for NaN;
 * the saturating narrows then clamp to int8's range: the reference's
 * rules (ggml__float_to_int after roundf).
 */
static inline int encode_block32(const float *x, float d, int8_t qs[32])
{
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    int16x8_t h[4];
    for (int k = 0; k < 4; k++) {
        const int32x4_t a = vcvtaq_s32_f32(vmulq_n_f32(load_f32x4(x + 8 * k), id));
        const int32x4_t b = vcvtaq_s32_f32(vmulq_n_f32(load_f32x4(x + 8 * k + 4), id));
        h[k] = vqmovn_high_s32(vqmovn_s32(a), b);
    }
    const int8x16_t lo = vqmovn_high_s16(vqmovn_s16(h[0]), h[1]);
    const int8x16_t hi = vqmovn_high_s16(vqmovn_s16(h[2]), h[3]);
    vst1q_s8(qs, lo);
    vst1q_s8(qs + 16, hi);
    return vaddlvq_s8(lo) + vaddlvq_s8(hi);
}

void ggml__neon_quantize_row_q8_0(const float *restrict x, void *restrict vy, int64_t n)
{
    block_q8_0 *y = vy;
    for (int64_t b = 0; b < n / QK8_0; b++) {
        const float *xb = x + b * QK8_0;
        const float d = block_absmax32(xb) / 127.0f;
        y[b].d = ggml__fp32_to_fp16(d);
        (void) encode_block32(xb, d, y[b].qs);
    }
}

void ggml__neon_quantize_row_q8_1(const float *restrict x, void *restrict vy, int64_t n)
{
    block_q8_1 *y = vy;
    for (int64_t b = 0; b < n / QK8_1; b++) {
        const float *xb = x + b * QK8_1;
        const float d = block_absmax32(xb) / 127.0f;
        y[b].d = ggml__fp32_to_fp16(d);
        const int sum = encode_block32(xb, d, y[b].qs);
        y[b].s = ggml__fp32_to_fp16((float) sum * d);   /* scaled by the unrounded d */
    }
}
