/*
 * simd/generic/vector.c - the generic level's vector updates (the axpy
 * entries), in portable C written in steps of LANES so that compilers
 * vectorize them at -O2.
 */
#include "config.h"

#include <stdint.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "generic.h"
#include "lanes.h"

#define LANES 8

void ggml__generic_axpy_f32(int64_t n, float *restrict acc, const void *restrict vx, float w)
{
    const float *x = vx;
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++)
            acc[i + l] += w * x[i + l];
    for (; i < n; i++)
        acc[i] += w * x[i];
}

void ggml__generic_axpy_f16(int64_t n, float *restrict acc, const void *restrict vx, float w)
{
    const uint16_t *x = vx;
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++)
            acc[i + l] += w * f16_to_f32_lane(x[i + l]);
    for (; i < n; i++)
        acc[i] += w * f16_to_f32_lane(x[i]);
}
