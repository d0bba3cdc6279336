/*
 * quants-small.c - MXFP4, NVFP4, Q1_0, Q2_0 and IQ4_NL: decoders, reference
 * quantizers, and IQ4_NL's scale search.
 *
 * Bit-identity.  The quantizers of MXFP4, NVFP4, Q1_0 and Q2_0 write the
 * bytes ggml 0.21.0 writes for the same finite input: each repeats ggml's
 * rules exactly (which extreme value wins a tie, which single-precision
 * operations make the scale, how a value picks its code on a tie), stated
 * at each function.  Compile without -ffast-math or contraction (see
 * quants.c).  Where ggml's conversion is undefined (an exponent outside
 * E8M0's range, NaN scaled to an integer) the value saturates instead, as
 * everywhere in the library.  IQ4_NL searches its scale; it promises a
 * squared error no larger than ggml's, not ggml's bytes.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/*
 * Twice the E2M1 numbers of the OCP Microscaling spec v1.0 (code bit 3 is
 * the sign; magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6), so that they are
 * integers; the block scales are halved to match.  Code 8 is -0.
 */
const int8_t ggml__e2m1_doubled[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };

/*
 * IQ4_NL's levels, part of the format's definition: the values of ggml's
 * kvalues_iq4nl table (ggml/src/ggml-common.h, ggml 0.21.0), which GGUF
 * files with IQ4_NL tensors are decoded with.  Ascending.
 */
const int8_t ggml__iq4nl_values[16] = { -127, -104, -83, -65, -49, -35, -22, -10,
                                        1,    13,   25,  38,  53,  69,  89,  113 };

/* ---------------------------------------------------------------- scales */

/*
 * The UE4M3 code of a scale s, by ggml's rule: 0 for s <= 0 and NaN.
 * Below 2^-6 (subnormal codes 0..7): round-half-up of s * 2^9 in single
 * precision, at most 7 (values just under 2^-6 do not round up into the
 * normal range).  Otherwise s (at most 448) is rounded to 4 significant
 * bits, ties away from zero; a result of 2^8 or more (its exponent field
 * would be 15) becomes 0x7e, 448.
 */
static uint8_t ue4m3_from_fp32(float s)
{
    if (!(s > 0.0f))
        return 0;
    if (s > 448.0f)
        s = 448.0f;
    const uint32_t bits = ggml__fp32_bits(s);
    int exponent = (int) ((bits >> 23) & 0xff) - 127 + 7;
    if (exponent <= 0) {
        const int64_t m = ggml__float_to_int(s * 512.0f + 0.5f, 0, 7);
        return (uint8_t) m;
    }
    int mantissa = (int) ((bits >> 20) & 0x07) + (int) ((bits >> 19) & 1);
    if (mantissa == 8) {
        mantissa = 0;
        exponent++;
    }
    if (exponent >= 15)
        return 0x7e;
    return (uint8_t) (exponent << 3 | mantissa);
}

/*
 * The E2M1 code of x for the halved scale d, by ggml's rule: the code
 * whose value ggml__e2m1_doubled[c] * d is nearest to x in single
 * precision, the lowest code on a tie (so zero is code 0, never -0; a
 * magnitude tie goes to the smaller magnitude; NaN gives code 0).  This
 * is the rule itself, one comparison per code.
 */
static uint8_t e2m1_code_by_scan(float x, float d)
{
    uint8_t best = 0;
    float best_err = fabsf((float) ggml__e2m1_doubled[0] * d - x);
    for (uint8_t c = 1; c < 16; c++) {
        const float err = fabsf((float) ggml__e2m1_doubled[c] * d - x);
        if (err < best_err) {
            best_err = err;
            best = c;
        }
    }
    return best;
}

/* The magnitudes ggml__e2m1_doubled[c] * d, c < 8, of a block's scale d
   (m[8]: infinity, above every finite value). */
struct e2m1_magnitudes {
    float d, m[9];
};

static void e2m1_magnitudes(float d, struct e2m1_magnitudes *mag)
{
    mag->d = d;
    for (int c = 0; c < 8; c++)
        mag->m[c] = (float) ggml__e2m1_doubled[c] * d;
    mag->m[8] = INFINITY;
}

/*
 * e2m1_code_by_scan(x, d), found from |x| (d >= 0): a negative x is
 * nearest to the negative of the magnitude code nearest to |x| (the errors
 * are the same numbers; code 0 wins its tie with -0), and for magnitudes
 * m_0 < .. < m_7 the single-precision errors fall up to the last m_k <= |x|
 * and rise after it, so the nearest is m_k or m_(k+1), and the lowest
 * code of equal error is found by stepping down while the error stays the
 * same.  A NaN error (x or a magnitude infinite) takes the scan.
 */
static uint8_t e2m1_code(float x, const struct e2m1_magnitudes *mag)
{
    const float a = fabsf(x);
    const float *m = mag->m;
    const int k = (a >= m[1]) + (a >= m[2]) + (a >= m[3]) + (a >= m[4]) + (a >= m[5]) + (a >= m[6]) + (a >= m[7]);
    const float below = fabsf(m[k] - a), above = fabsf(m[k + 1] - a);
    int best = k + (above < below);
    float err = above < below ? above : below;
    if (err != err)
        return e2m1_code_by_scan(x, mag->d);
    while (best > 0 && fabsf(m[best - 1] - a) == err)
        best--;
    return (uint8_t) (x < 0.0f && best > 0 ? best + 8 : best);
}

/* The largest magnitude of n values (NaN skipped), as ggml finds it. */
static float abs_max(const float *x, int n)
{
    float amax = 0.0f;
    for (int j = 0; j < n; j++)
        if (amax < fabsf(x[j]))
            amax = fabsf(x[j]);
    return amax;
}

/* abs_max of a 32-value block, in eight independent lanes (a maximum of
   magnitudes does not depend on the order). */
static float abs_max32(const float *x)
{
    float lane[8] = { 0 };
    for (int j = 0; j < 32; j += 8)
        for (int k = 0; k < 8; k++)
            lane[k] = fabsf(x[j + k]) > lane[k] ? fabsf(x[j + k]) : lane[k];
    float half[4];
    for (int k = 0; k < 4; k++)
        half[k] = lane[k + 4] > lane[k] ? lane[k + 4] : lane[k];
    const float a = half[2] > half[0] ? half[2] : half[0], b = half[3] > half[1] ? half[3] : half[1];
    return b > a ? b : a;
}

/*
 * e2m1_code(x[j], d) for 32 values, when every magnitude of the block and
 * 12 d are finite: the code's magnitude is the number of midpoints
 * between neighbouring magnitudes that |x| exceeds, so that an exact tie
 * keeps the smaller one.  This is e2m1_code's rule: d is a power of two,
 * so the magnitudes and midpoints (0.25, 0.75, .., 5 in E2M1 units) times
 * d are exact, and the single-precision errors e2m1_code compares are the
 * exact distances (the smaller operand is at least half the larger).
 * NaN exceeds nothing: code 0.
 */
static void e2m1_codes32(const float *x, float d, int32_t q[32])
{
    static const float mid_doubled[7] = { 0.5f, 1.5f, 2.5f, 3.5f, 5.0f, 7.0f, 10.0f };
    float t[7];
    for (int i = 0; i < 7; i++)
        t[i] = mid_doubled[i] * d;
    for (int j = 0; j < 32; j++) {
        const float a = fabsf(x[j]);
        const int32_t m = (a > t[0]) + (a > t[1]) + (a > t[2]) + (a > t[3]) + (a > t[4]) + (a > t[5]) + (a > t[6]);
        q[j] = m | ((x[j] < 0.0f) & (m > 0)) << 3;
    }
}

/* ----------------------------------------------------------------- MXFP4 */

/*
 * The exponent is floor(log2f(amax)) - 2 + 127 with C's single-precision
 * log2f (so an amax just below a large power of two may count as that
 * power, as in ggml), which maps amax into [4, 8) times 2^(e-127), the
 * E2M1 range being up to 6; 0 for an all-zero block.  Saturated to
 * 0..254: ggml's conversion is undefined below amax = 2^-125.
 */
void ggml__quantize_row_mxfp4_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(x, vy, k, QK_MXFP4, __func__);
    block_mxfp4 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK_MXFP4;
        const float amax = abs_max32(xb);
        const uint8_t e = amax > 0.0f ? (uint8_t) ggml__float_to_int(floorf(log2f(amax)) - 2.0f + 127.0f, 0, 254) : 0;
        const float d = ggml__e8m0_half_to_fp32(e);

        y[i].e = e;
        if (amax <= FLT_MAX) {
            /* e <= 252: 12 d <= 12 * 2^124 is finite */
            int32_t q[QK_MXFP4];
            e2m1_codes32(xb, d, q);
            for (int j = 0; j < QK_MXFP4 / 2; j++)
                y[i].qs[j] = (uint8_t) (q[j] | q[j + QK_MXFP4 / 2] << 4);
        } else {
            struct e2m1_magnitudes mag;
            e2m1_magnitudes(d, &mag);
            for (int j = 0; j < QK_MXFP4 / 2; j++)
                y[i].qs[j] = (uint8_t) (e2m1_code(xb[j], &mag) | e2m1_code(xb[j + QK_MXFP4 / 2], &mag) << 4);
        }
    }
}

void ggml__dequantize_row_mxfp4(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_MXFP4, __func__);
    const block_mxfp4 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__e8m0_half_to_fp32(x[i].e);
        float *yb = y + i * QK_MXFP4;
        for (int j = 0; j < QK_MXFP4 / 2; j++) {
            yb[j] = (float) ggml__e2m1_doubled[x[i].qs[j] & 0x0f] * d;
            yb[j + QK_MXFP4 / 2] = (float) ggml__e2m1_doubled[x[i].qs[j] >> 4] * d;
        }
    }
}

/* ----------------------------------------------------------------- NVFP4 */

/* Each sub-block's scale is the UE4M3 code of amax / 6 (single precision). */
void ggml__quantize_row_nvfp4_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(x, vy, k, QK_NVFP4, __func__);
    block_nvfp4 *y = vy;
    enum { HALF = QK_NVFP4_SUB / 2 };

    for (int64_t i = 0; i < nb; i++) {
        for (int s = 0; s < QK_NVFP4 / QK_NVFP4_SUB; s++) {
            const float *xs = x + i * QK_NVFP4 + s * QK_NVFP4_SUB;
            const uint8_t code = ue4m3_from_fp32(abs_max(xs, QK_NVFP4_SUB) / 6.0f);
            struct e2m1_magnitudes mag;
            e2m1_magnitudes(ggml__ue4m3_half_to_fp32(code), &mag);

            y[i].d[s] = code;
            for (int j = 0; j < HALF; j++)
                y[i].qs[s * HALF + j] = (uint8_t) (e2m1_code(xs[j], &mag) | e2m1_code(xs[j + HALF], &mag) << 4);
        }
    }
}

void ggml__dequantize_row_nvfp4(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_NVFP4, __func__);
    const block_nvfp4 *x = vx;
    enum { HALF = QK_NVFP4_SUB / 2 };

    for (int64_t i = 0; i < nb; i++) {
        for (int s = 0; s < QK_NVFP4 / QK_NVFP4_SUB; s++) {
            const float d = ggml__ue4m3_half_to_fp32(x[i].d[s]);
            const uint8_t *qs = x[i].qs + s * HALF;
            float *ys = y + i * QK_NVFP4 + s * QK_NVFP4_SUB;
            for (int j = 0; j < HALF; j++) {
                ys[j] = (float) ggml__e2m1_doubled[qs[j] & 0x0f] * d;
                ys[j + HALF] = (float) ggml__e2m1_doubled[qs[j] >> 4] * d;
            }
        }
    }
}

/* ------------------------------------------------------------------ Q1_0 */

/*
 * d is the mean magnitude: the magnitudes summed in order in single
 * precision, divided by 128.  The bit is set for x >= 0 (also -0; not NaN).
 */
void ggml__quantize_row_q1_0_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(x, vy, k, QK1_0, __func__);
    block_q1_0 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK1_0;
        float sum = 0.0f;
        for (int j = 0; j < QK1_0; j++)
            sum += fabsf(xb[j]);
        y[i].d = ggml__fp32_to_fp16(sum / (float) QK1_0);
        for (int j = 0; j < QK1_0 / 8; j++) {
            uint8_t bits = 0;
            for (int b = 0; b < 8; b++)
                bits |= (uint8_t) ((xb[8 * j + b] >= 0.0f) << b);
            y[i].qs[j] = bits;
        }
    }
}

void ggml__dequantize_row_q1_0(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK1_0, __func__);
    const block_q1_0 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK1_0; j++)
            y[i * QK1_0 + j] = (x[i].qs[j / 8] >> (j % 8)) & 1 ? d : -d;
    }
}

/* ------------------------------------------------------------------ Q2_0 */

/*
 * d is the largest magnitude (NaN skipped); q = roundf(x / d) + 1 computed
 * as roundf(x * (1 / d)), clamped to 0..3 (a zero block gives q = 1).
 */
void ggml__quantize_row_q2_0_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(x, vy, k, QK2_0, __func__);
    block_q2_0 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK2_0;
        float amax = 0.0f;
        for (int j = 0; j < QK2_0; j++)
            if (fabsf(xb[j]) > amax)
                amax = fabsf(xb[j]);
        const float id = amax > 0.0f ? 1.0f / amax : 0.0f;

        y[i].d = ggml__fp32_to_fp16(amax);
        for (int j = 0; j < QK2_0 / 4; j++) {
            uint8_t bits = 0;
            for (int b = 0; b < 4; b++) {
                const int q = ggml__round_level(xb[4 * j + b] * id, -1, 2) + 1;
                bits |= (uint8_t) (q << (2 * b));
            }
            y[i].qs[j] = bits;
        }
    }
}

void ggml__dequantize_row_q2_0(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK2_0, __func__);
    const block_q2_0 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK2_0; j++)
            y[i * QK2_0 + j] = (float) (((x[i].qs[j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
    }
}

/* ---------------------------------------------------------------- IQ4_NL */

void ggml__dequantize_row_iq4_nl(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK4_NL, __func__);
    const block_iq4_nl *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        float *yb = y + i * QK4_NL;
        for (int j = 0; j < QK4_NL / 2; j++) {
            yb[j] = d * (float) ggml__iq4nl_values[x[i].qs[j] & 0x0f];
            yb[j + QK4_NL / 2] = d * (float) ggml__iq4nl_values[x[i].qs[j] >> 4];
        }
    }
}

