/*
 * simd/generic/dot-iq2.c - the generic level's dot products of IQ2_XXS,
 * IQ2_XS and IQ2_S rows with a row of q8_K activations (vec_dot entries).
 *
 * Per 256-value block the sum
 *     sum_g (2 s_g + 1) * sum_j point_g[j] * sign_g,j * q8[8g + j]
 * is an exact integer (at most 32 * 31 * 8 * 43 * 128 < 2^31), scaled by
 * ggml__iq2_block_dot (d_x * d_y * sum / 8).  Other levels must form the
 * same sums and call the same function: results then agree bit for bit.
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

/* One group's contribution: (2 s + 1) * sum_j +-point[j] * q8[j]. */
static inline int32_t group_sum(struct ggml__iq2_group grp, const int8_t *q8)
{
    int32_t dot = 0;
    for (int j = 0; j < 8; j++) {
        const int32_t v = ggml__iq2_coord(grp.point, j) * q8[j];
        dot += (grp.signs >> j) & 1 ? -v : v;
    }
    return (2 * grp.scale + 1) * dot;
}

/* The three formats differ only in how a group is unpacked. */
#define IQ2_VEC_DOT(name, block_type, unpack)                                                            \
    void ggml__generic_vec_dot_##name##_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, \
                                              size_t bx, const void *restrict vy, size_t by, int nrc)      \
    {                                                                                                    \
        (void) bs, (void) bx, (void) by, (void) nrc;                                                     \
        const block_type *x = vx;                                                                        \
        const block_q8_K *y = vy;                                                                        \
        float sum = 0.0f;                                                                                \
        for (int b = 0; b < n / QK_K; b++) {                                                             \
            int32_t isum = 0;                                                                            \
            for (int g = 0; g < QK_K / 8; g++)                                                           \
                isum += group_sum(unpack(&x[b], g), y[b].qs + 8 * g);                                    \
            sum += ggml__iq2_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), isum);                        \
        }                                                                                                \
        *s = sum;                                                                                        \
    }

IQ2_VEC_DOT(iq2_xxs, block_iq2_xxs, ggml__iq2_xxs_group)
IQ2_VEC_DOT(iq2_xs, block_iq2_xs, ggml__iq2_xs_group)
IQ2_VEC_DOT(iq2_s, block_iq2_s, ggml__iq2_s_group)
