/*
 * simd/generic/lanes.h - one-element conversions of the generic level,
 * written without branches so that loops over them vectorize.
 *
 * Not installed.  Include after config.h, ggml-impl.h and fp16-impl.h.
 */
#ifndef GGML_BACKEND_SIMD_GENERIC_LANES_H
#define GGML_BACKEND_SIMD_GENERIC_LANES_H

#include <stdbool.h>
#include <stdint.h>

/* ----------------------------------------------------- one-lane conversions */

/*
 * The lane functions are branch-free so that loops over them vectorize.
 * A choice involving a floating-point result is written with select_u32()
 * rather than ?: because the compiler will not turn a conditional
 * floating-point operation into an unconditional one (it might trap).
 */
static inline uint32_t select_u32(bool cond, uint32_t if_true, uint32_t if_false)
{
    const uint32_t mask = 0u - (uint32_t) cond;
    return (if_true & mask) | (if_false & ~mask);
}

/*
 * binary16 -> binary32.  Normal numbers are rebiased in place; infinity
 * and NaN get the all-ones exponent (NaN also the quiet bit).  A subnormal
 * is its 10-bit integer m times 2^-24: converting m to float is exact and
 * normalizes it, and subtracting 24 from the exponent field scales it.
 */
static inline float f16_to_f32_lane(uint16_t h)
{
    const uint32_t em = h & 0x7fffu;
    const uint32_t sign = (uint32_t) (h & 0x8000u) << 16;
    const uint32_t normal = (em << 13) + (112u << 23);
    const uint32_t special = ((em << 13) + (224u << 23)) | (em > 0x7c00u ? 0x00400000u : 0u);
    const uint32_t tiny = select_u32(em == 0, 0u, ggml__fp32_bits((float) (int32_t) em) - (24u << 23));
    uint32_t bits = em >= 0x7c00u ? special : normal;
    bits = select_u32(em < 0x0400u, tiny, bits);
    return ggml__fp32_from_bits(bits | sign);
}

/*
 * binary32 -> binary16, round to nearest even.  Results in the fp16
 * subnormal range come from adding 0.5f: the sum's last mantissa bit is
 * then worth 2^-24, the fp16 subnormal step, so the addition rounds
 * exactly as required and the low bits of the sum are the result.
 * Everything else is the integer rounding of fp16-impl.h.
 */
static inline uint16_t f32_to_f16_lane(float f)
{
    const uint32_t w = ggml__fp32_bits(f);
    const uint32_t sign = (w >> 16) & 0x8000u;
    const uint32_t a = w & 0x7fffffffu;
    const uint32_t r = a - (112u << 23);
    const uint32_t normal = (r + 0x0fffu + ((r >> 13) & 1u)) >> 13;
    const uint32_t subnormal = ggml__fp32_bits(ggml__fp32_from_bits(a) + 0.5f) - 0x3f000000u;
    uint32_t h = select_u32(a < 0x38800000u, subnormal, normal);
    h = select_u32(a >= 0x477ff000u, 0x7c00u, h);     /* rounds past 65504: infinity */
    h = select_u32(a > 0x7f800000u, 0x7e00u, h);      /* NaN */
    return (uint16_t) (h | sign);
}

/* binary32 -> bfloat16, round to nearest even; NaN stays NaN (quiet). */
static inline uint16_t f32_to_bf16_lane(float f)
{
    const uint32_t w = ggml__fp32_bits(f);
    const uint32_t rounded = (w + 0x7fffu + ((w >> 16) & 1u)) >> 16;
    const uint32_t nan = (w >> 16) | 0x0040u;
    return (uint16_t) select_u32((w & 0x7fffffffu) > 0x7f800000u, nan, rounded);
}

static inline float bf16_to_f32_lane(uint16_t h)
{
    return ggml__fp32_from_bits((uint32_t) h << 16);
}

/* Truncated toward zero, saturated; NaN gives 0 (ggml__float_to_int). */
static inline int32_t f32_to_i32_lane(float f)
{
    return (int32_t) ggml__float_to_int(f, INT32_MIN, INT32_MAX);
}

#endif
