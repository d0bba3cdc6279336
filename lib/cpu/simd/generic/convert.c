/*
 * simd/generic/convert.c - the generic level's row conversions between
 * F32 and F16, BF16 and I32 (the to_float and from_float entries of those
 * types), in portable C.
 *
 * The loops work in steps of LANES elements with branch-free bodies, so
 * that GCC and Clang vectorize them for the x86-64 baseline; a scalar loop
 * finishes the tail.  Results are exactly those of the scalar conversions
 * of fp16-impl.h (ggml__fp32_to_fp16() and friends), bit for bit, with one
 * assumption the scalar code does not make: fp32 -> fp16 rounds results in
 * the fp16 subnormal range with a floating-point addition, so it needs the
 * default rounding mode (round to nearest).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "generic.h"
#include "lanes.h"

/* Elements per step of the vectorizable conversion loops. */
#define LANES 16

/* ------------------------------------------------------- row conversions */

/* The loops below share one shape: LANES at a time, then the tail. */
#define CONVERT_ROW(n, expr)                                  \
    do {                                                      \
        int64_t i_ = 0;                                       \
        for (; i_ + LANES <= (n); i_ += LANES)                \
            for (int l_ = 0; l_ < LANES; l_++) {              \
                const int64_t i = i_ + l_;                    \
                expr;                                         \
            }                                                 \
        for (; i_ < (n); i_++) {                              \
            const int64_t i = i_;                             \
            expr;                                             \
        }                                                     \
    } while (0)

void ggml__generic_f16_to_f32(const void *restrict vx, float *restrict y, int64_t n)
{
    const uint16_t *x = vx;
    CONVERT_ROW(n, y[i] = f16_to_f32_lane(x[i]));
}

void ggml__generic_f32_to_f16(const float *restrict x, void *restrict vy, int64_t n)
{
    uint16_t *y = vy;
    CONVERT_ROW(n, y[i] = f32_to_f16_lane(x[i]));
}

void ggml__generic_bf16_to_f32(const void *restrict vx, float *restrict y, int64_t n)
{
    const uint16_t *x = vx;
    CONVERT_ROW(n, y[i] = bf16_to_f32_lane(x[i]));
}

void ggml__generic_f32_to_bf16(const float *restrict x, void *restrict vy, int64_t n)
{
    uint16_t *y = vy;
    CONVERT_ROW(n, y[i] = f32_to_bf16_lane(x[i]));
}

void ggml__generic_f32_to_i32(const float *restrict x, void *restrict vy, int64_t n)
{
    int32_t *y = vy;
    CONVERT_ROW(n, y[i] = f32_to_i32_lane(x[i]));
}

void ggml__generic_f32_to_f32(const float *restrict x, void *restrict y, int64_t n)
{
    if (n > 0)
        memcpy(y, x, (size_t) n * sizeof *x);
}
