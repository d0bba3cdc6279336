/*
 * simd/neon/dot-dotprod.c - the NEON level's quantized dot products with
 * the ARMv8.2 dot-product instructions (compiled with +dotprod; in the
 * table only when the CPU has them).  SDOT adds four int8 x int8 products
 * into each int32 lane, so a block's sum is exact.  The loops are
 * quant-dot.h's, shared with dot.c.
 */
#include "config.h"

#include <arm_neon.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "neon.h"

static inline int32x4_t block_isum(int8x16_t x_lo, int8x16_t x_hi, const int8_t y[32])
{
    const int32x4_t sum = vdotq_s32(vdupq_n_s32(0), x_lo, vld1q_s8(y));
    return vdotq_s32(sum, x_hi, vld1q_s8(y + 16));
}

#define QDOT_NAME(f) ggml__neon_dotprod_vec_dot_##f
#include "quant-dot.h"
