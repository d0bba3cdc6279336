/*
 * quants-tq.c - the ternary formats TQ1_0 and TQ2_0 and the 4-bit
 * non-linear formats IQ4_XS (super-blocks) and IQ4_NL (blocks of 32):
 * decoders, quantizers.
 *
 * Bit-identity.  The TQ quantizers write the bytes ggml 0.21.0 writes for
 * the same finite input: d is the largest magnitude (NaN skipped) stored
 * as binary16, and each value's trit is roundf(x * (1 / d)) + 1 in single
 * precision (halves away from zero; a zero block gives trit 1).  Where
 * ggml's conversion is undefined (NaN scaled to an integer) the trit is 1.
 * IQ4_XS and IQ4_NL search their scales; they promise a squared error
 * (weighted by the importance weights when given) no larger than ggml's,
 * not ggml's bytes.
 *
 * The decoders compute what ggml's do (single precision, the same products
 * in the same order).  Compile without floating-point contraction.
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

/* ------------------------------------------------------- TQ1_0, TQ2_0 */

/* d and 1 / d (0 for a zero block) of a ternary block, as ggml makes them. */
static float ternary_scale(const float *x, float *inverse)
{
    float amax = 0.0f;
    for (int j = 0; j < QK_K; j++)
        if (fabsf(x[j]) > amax)
            amax = fabsf(x[j]);
    *inverse = amax != 0.0f ? 1.0f / amax : 0.0f;
    return amax;
}

/*
 * The trits 0..2 of a block's values for the inverse scale id:
 * roundf(x * id) (halves away from zero) clamped to -1..1, plus 1, by
 * compares against +-1/2, which give exactly that for every product (NaN:
 * trit 1).
 */
static void ternary_trits(const float *x, float id, uint8_t trits[QK_K])
{
    for (int j = 0; j < QK_K; j++) {
        const float v = x[j] * id;
        trits[j] = (uint8_t) (1 + (v >= 0.5f) - (v <= -0.5f));
    }
}

/*
 * TQ1_0's byte groups (see block_tq1_0): the bytes of a group starting at
 * byte `first` of the block (qs, then qh at 48) hold `digits` trits each;
 * digit n of byte first + m is value `value0 + m + n * bytes`.
 */
static const struct {
    int first, bytes, value0, digits;
} tq1_groups[3] = { { 0, 32, 0, 5 }, { 32, 16, 160, 5 }, { 48, 4, 240, 4 } };

static const uint8_t pow3[5] = { 1, 3, 9, 27, 81 };

/* Byte i (0..51) of a TQ1_0 block's trit bytes. */
static uint8_t *tq1_byte(block_tq1_0 *b, int i)
{
    return i < 48 ? &b->qs[i] : &b->qh[i - 48];
}

void ggml__quantize_row_tq1_0_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(x, vy, k, QK_K, __func__);
    block_tq1_0 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK_K;
        float id;
        uint8_t trits[QK_K];
        y[i].d = ggml__fp32_to_fp16(ternary_scale(xb, &id));
        ternary_trits(xb, id, trits);
        for (int g = 0; g < 3; g++) {
            for (int m = 0; m < tq1_groups[g].bytes; m++) {
                /* five base-3 digits, the first most significant; unused ones 0 */
                unsigned number = 0;
                for (int n = 0; n < 5; n++) {
                    const int v = tq1_groups[g].value0 + m + n * tq1_groups[g].bytes;
                    number = 3 * number + (n < tq1_groups[g].digits ? trits[v] : 0u);
                }
                *tq1_byte(&y[i], tq1_groups[g].first + m) = (uint8_t) ((number * 256 + 242) / 243);
            }
        }
    }
}

void ggml__dequantize_row_tq1_0(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_tq1_0 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        float *yb = y + i * QK_K;
        for (int g = 0; g < 3; g++) {
            for (int m = 0; m < tq1_groups[g].bytes; m++) {
                const int at = tq1_groups[g].first + m;
                const uint8_t byte = at < 48 ? x[i].qs[at] : x[i].qh[at - 48];
                for (int n = 0; n < tq1_groups[g].digits; n++) {
                    const int trit = ((uint8_t) (byte * pow3[n]) * 3) >> 8;
                    yb[tq1_groups[g].value0 + m + n * tq1_groups[g].bytes] = (float) (trit - 1) * d;
                }
            }
        }
    }
}

void ggml__quantize_row_tq2_0_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(x, vy, k, QK_K, __func__);
    block_tq2_0 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK_K;
        float id;
        uint8_t trits[QK_K];
        y[i].d = ggml__fp32_to_fp16(ternary_scale(xb, &id));
        ternary_trits(xb, id, trits);
        /* value 128 h + 32 p + l at bits 2 p of qs[32 h + l] */
        for (int h = 0; h < 2; h++) {
            const uint8_t *t = trits + 128 * h;
            for (int l = 0; l < 32; l++)
                y[i].qs[32 * h + l] = (uint8_t) (t[l] | t[l + 32] << 2 | t[l + 64] << 4 | t[l + 96] << 6);
        }
    }
}

void ggml__dequantize_row_tq2_0(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_tq2_0 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int v = 0; v < QK_K; v++) {
            const int q = (x[i].qs[32 * (v / 128) + v % 32] >> (2 * ((v % 128) / 32))) & 3;
            y[i * QK_K + v] = (float) (q - 1) * d;
        }
    }
}

/* ---------------------------------------------------------------- IQ4_XS */

void ggml__dequantize_row_iq4_xs(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_iq4_xs *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int s = 0; s < QK_K / 32; s++) {
            const float step = d * (float) (ggml__iq4_xs_scale(&x[i], s) - 32);
            const uint8_t *qs = x[i].qs + 16 * s;
            float *ys = y + i * QK_K + 32 * s;
            for (int j = 0; j < 16; j++) {
                ys[j] = step * (float) ggml__iq4nl_values[qs[j] & 0x0f];
                ys[j + 16] = step * (float) ggml__iq4nl_values[qs[j] >> 4];
            }
        }
    }
}

/* Midpoints between neighbouring levels of ggml__iq4nl_values (ascending;
   all exact in binary). */
static const float level_midpoints[15] = { -115.5f, -93.5f, -74.0f, -57.0f, -42.0f, -28.5f, -16.0f, -4.5f,
                                           7.0f,    19.0f,  31.5f,  45.5f,  61.0f,  79.0f,  101.0f };

/* The code of the level nearest to v (the lower on a tie; NaN gives 0):
   the number of midpoints below v, by binary search. */
static uint8_t level_code(float v)
{
    int c = v > level_midpoints[7] ? 8 : 0;
    c += v > level_midpoints[c + 3] ? 4 : 0;
    c += v > level_midpoints[c + 1] ? 2 : 0;
    c += v > level_midpoints[c] ? 1 : 0;
    return (uint8_t) c;
}

/*
 * The searches below work in single precision on LANES independent
 * partial sums (value j goes to sum j % LANES), written so that the
 * compiler can keep the lanes in vector registers: the level nearest to a
 * value is built from compares against the midpoints (no table look-up,
 * no branches), the code itself is only looked up for the final choice.
 */
#define LANES 8

/* ggml__iq4nl_values as floats. */
static const float level_values[16] = { -127.0f, -104.0f, -83.0f, -65.0f, -49.0f, -35.0f, -22.0f, -10.0f,
                                        1.0f,    13.0f,   25.0f,  38.0f,  53.0f,  69.0f,  89.0f,  113.0f };

/* Differences of neighbouring level_values (exact): level c is level 0 plus the first c of them. */
static const float level_steps[15] = { 23.0f, 21.0f, 18.0f, 16.0f, 14.0f, 13.0f, 12.0f, 11.0f,
                                       12.0f, 12.0f, 13.0f, 15.0f, 16.0f, 20.0f, 24.0f };

/*
 * The levels (values of ggml__iq4nl_values) of codes level_code(inv * x[k]),
 * k < LANES: level 0 plus the steps of the midpoints below the value, a
 * sum of small integers, so exact in any order; branch-free and without a
 * table look-up, so that the lanes vectorize.
 */
static inline void nearest_levels(const float *x, float inv, float level[LANES])
{
#define STEP_ABOVE(i) (v > level_midpoints[i] ? level_steps[i] : 0.0f)
    for (int k = 0; k < LANES; k++) {
        const float v = inv * x[k];
        /* a tree of sums, so that the additions do not wait on each other */
        const float low = ((STEP_ABOVE(0) + STEP_ABOVE(1)) + (STEP_ABOVE(2) + STEP_ABOVE(3))) +
                          ((STEP_ABOVE(4) + STEP_ABOVE(5)) + (STEP_ABOVE(6) + STEP_ABOVE(7)));
        const float high = ((STEP_ABOVE(8) + STEP_ABOVE(9)) + (STEP_ABOVE(10) + STEP_ABOVE(11))) +
                           ((STEP_ABOVE(12) + STEP_ABOVE(13)) + STEP_ABOVE(14));
        level[k] = level_values[0] + (low + high);
    }
#undef STEP_ABOVE
}

/*
 * The levels of the 32 values x for the inverse scale inv, and the
 * least-squares scale for those levels (sum w v x / sum w v^2, 0 when no
 * weight falls on a nonzero level); returns the error reduction that
 * scale gives, (sum w v x)^2 / sum w v^2.
 */
static double sub_fit(const float *x, const float *w, float inv, double *scale)
{
    float svx_lanes[LANES] = { 0 }, svv_lanes[LANES] = { 0 };
    for (int j = 0; j < 32; j += LANES) {
        float v[LANES];
        nearest_levels(x + j, inv, v);
        for (int k = 0; k < LANES; k++) {
            const float wv = w[j + k] * v[k];
            svx_lanes[k] += wv * x[j + k];
            svv_lanes[k] += wv * v[k];
        }
    }
    const double svx = ggml__lanes_sum(svx_lanes, LANES), svv = ggml__lanes_sum(svv_lanes, LANES);
    *scale = svv > 0.0 ? svx / svv : 0.0;
    return svv > 0.0 ? svx * svx / svv : 0.0;
}

/*
 * The best real scale of one sub-block: the value of largest magnitude
 * mapped near either end of the level table (inverse scales c / max, c
 * in -136..-118 and 104..122 by sixes), each candidate's levels refitted,
 * then the best re-leveled with its own scale while that helps.  (Finer
 * steps of c change the error by less than 0.01%: the re-leveling
 * converges to the same scales.)
 */
static double sub_scale(const float *x, const float *w)
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; j++) {
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    if (!(amax > 0.0f))
        return 0.0;
    double best = -1.0, best_scale = 0.0, scale;
    for (int end = 0; end < 2; end++) {
        for (int t = 0; t <= 18; t += 6) {
            const double c = (end == 0 ? -136.0 : 104.0) + 1.0 * t;
            const double gain = sub_fit(x, w, (float) (c / max), &scale);
            if (gain > best) {
                best = gain;
                best_scale = scale;
            }
        }
    }
    for (int iter = 0; iter < 8 && best_scale != 0.0; iter++) {
        const double gain = sub_fit(x, w, (float) (1.0 / best_scale), &scale);
        if (!(gain > best))
            break;
        best = gain;
        best_scale = scale;
    }
    return best_scale;
}

/*
 * Error sum w (x - y)^2 of a sub-block decoded with the stored step
 * d * l (as the decoder computes it), with the nearest levels for that
 * step.
 */
static float sub_error(const float *x, const float *w, float d, int l)
{
    const float step = d * (float) l;
    const float inv = step != 0.0f ? 1.0f / step : 0.0f;
    float acc[LANES] = { 0 };
    for (int j = 0; j < 32; j += LANES) {
        float v[LANES];
        nearest_levels(x + j, inv, v);
        for (int k = 0; k < LANES; k++) {
            const float e = x[j + k] - step * v[k];
            acc[k] += w[j + k] * e * e;
        }
    }
    return ggml__lanes_sum(acc, LANES);
}

/* The codes sub_error chooses. */
static void sub_codes(const float *x, float d, int l, uint8_t *codes)
{
    const float step = d * (float) l;
    const float inv = step != 0.0f ? 1.0f / step : 0.0f;
    for (int j = 0; j < 32; j++)
        codes[j] = level_code(inv * x[j]);
}

/* binary16 rounding of a scale, saturated to the largest finite value. */
static float stored_scale(double v)
{
    const float f = (float) v;
    if (!(fabsf(f) <= 65504.0f))
        return f != f ? 0.0f : copysignf(65504.0f, f);
    return ggml__fp16_to_fp32(ggml__fp32_to_fp16(f));
}

/*
 * For the super-block scale d, the best integer l[s] in -32..31 near
 * scale[s] / d for each sub-block; returns the block's total error, or
 * stops early with a partial total of at least bound once the total
 * cannot come under it (the errors are sums of non-negative terms).
 */
static double xs_levels(const float *x, const float *w, const double *scale, float d, int *l, double bound)
{
    double total = 0.0;
    for (int s = 0; s < QK_K / 32 && total < bound; s++) {
        const int l0 = d != 0.0f ? (int) ggml__float_to_int(nearbyint(scale[s] / d), -32, 31) : 0;
        double best = DBL_MAX;
        for (int a = l0 - 1; a <= l0 + 1; a++) {
            if (a < -32 || a > 31)
                continue;
            const double err = sub_error(x + 32 * s, w + 32 * s, d, a);
            if (err < best) {
                best = err;
                l[s] = a;
            }
        }
        total += best;
    }
    return total;
}

/* The values the searches see: NaN as 0, infinities as +-FLT_MAX. */
static void finite_values(const float *in, float *x, int n)
{
    for (int j = 0; j < n; j++)
        x[j] = in[j] != in[j] ? 0.0f : fmaxf(-FLT_MAX, fminf(FLT_MAX, in[j]));
}

/*
 * One block.  Each sub-block's best real scale is found first; the
 * super-block scale d then maps the largest of them (by magnitude) to a
 * multiplier 24, 26, .., 32 of either sign (not +32), each candidate d
 * as stored in binary16, and every sub-block takes the multiplier near
 * its own scale that gives the least error with that d.  The
 * least-squares d for the chosen multipliers and codes is tried last.
 * The zero block (d = 0) is a candidate too, so the error is never
 * worse than decoding to zeros.  Non-finite input: NaN counts as 0,
 * infinities as +-FLT_MAX.
 */
static void iq4_xs_block(const float *xin, const float *w, void *vy)
{
    block_iq4_xs *y = vy;
    float x[QK_K];
    finite_values(xin, x, QK_K);

    double scale[QK_K / 32], max_scale = 0.0;
    for (int s = 0; s < QK_K / 32; s++) {
        scale[s] = sub_scale(x + 32 * s, w + 32 * s);
        if (fabs(scale[s]) > fabs(max_scale))
            max_scale = scale[s];
    }

    float best_d = 0.0f;
    int l[QK_K / 32], best_l[QK_K / 32] = { 0 };
    double best = 0.0;
    for (int j = 0; j < QK_K; j++)
        best += w[j] * (double) x[j] * x[j];
    for (int m = 24; m <= 32 && max_scale != 0.0; m += 2) {
        for (int sign = -1; sign <= 1; sign += 2) {
            if (m == 32 && sign > 0)
                continue;
            const float d = stored_scale(max_scale / (sign * m));
            const double err = xs_levels(x, w, scale, d, l, best);
            if (err < best) {
                best = err;
                best_d = d;
                memcpy(best_l, l, sizeof l);
            }
        }
    }

    uint8_t codes[QK_K];
    for (int s = 0; s < QK_K / 32; s++)
        sub_codes(x + 32 * s, best_d, best_l[s], codes + 32 * s);

    /* least squares over d for these multipliers and codes */
    double sax = 0.0, saa = 0.0;
    for (int j = 0; j < QK_K; j++) {
        const double a = (double) best_l[j / 32] * ggml__iq4nl_values[codes[j]];
        sax += w[j] * a * x[j];
        saa += w[j] * a * a;
    }
    if (saa > 0.0) {
        const float d = stored_scale(sax / saa);
        const double err = xs_levels(x, w, scale, d, l, best);
        if (err < best) {
            best = err;
            best_d = d;
            memcpy(best_l, l, sizeof l);
            for (int s = 0; s < QK_K / 32; s++)
                sub_codes(x + 32 * s, best_d, best_l[s], codes + 32 * s);
        }
    }

    memset(y, 0, sizeof *y);
    y->d = ggml__fp32_to_fp16(best_d);
    for (int s = 0; s < QK_K / 32; s++) {
        const int ls = best_l[s] + 32;
        y->scales_l[s / 2] |= (uint8_t) ((ls & 0x0f) << (4 * (s % 2)));
        y->scales_h |= (uint16_t) ((ls >> 4) << (2 * s));
        for (int j = 0; j < 16; j++)
            y->qs[16 * s + j] = (uint8_t) (codes[32 * s + j] | codes[32 * s + j + 16] << 4);
    }
}

void ggml__quantize_iq4_xs(const float *restrict x, void *restrict vy, int64_t nrows, int64_t n_per_row,
                           const float *imatrix)
{
    ggml__quantize_block_rows(iq4_xs_block, QK_K, sizeof(block_iq4_xs), x, vy, nrows, n_per_row, imatrix, __func__);
}

void ggml__quantize_row_iq4_xs_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    ggml__quantize_block_rows(iq4_xs_block, QK_K, sizeof(block_iq4_xs), x, vy, 1, k, NULL, __func__);
}

/* ------------------------------------------------------------------ IQ4_NL */

/*
 * One block of 32 values: the best real scale found as for an IQ4_XS
 * sub-block, stored in binary16 (saturated), then that scale or one of its
 * two binary16 neighbours of the same sign, whichever decodes with the
 * least error (the codes being the nearest levels for it); the zero block
 * when none beats decoding to zeros.  Non-finite input as for IQ4_XS.
 */
static void iq4_nl_block(const float *xin, const float *w, void *vy)
{
    block_iq4_nl *y = vy;
    float x[QK4_NL];
    finite_values(xin, x, QK4_NL);
    const float d0 = stored_scale(sub_scale(x, w));
    const ggml_fp16_t h = ggml__fp32_to_fp16(d0);

    float best_d = 0.0f;
    double best = 0.0;
    for (int j = 0; j < QK4_NL; j++)
        best += w[j] * (double) x[j] * x[j];
    for (int n = -1; n <= 1 && d0 != 0.0f; n++) {
        const ggml_fp16_t c = (ggml_fp16_t) (h + n);
        if ((c & 0x7c00) == 0x7c00 || ((c ^ h) & 0x8000) != 0)
            continue;
        const float d = ggml__fp16_to_fp32(c);
        const double err = sub_error(x, w, d, 1);
        if (err < best) {
            best = err;
            best_d = d;
        }
    }

    uint8_t codes[QK4_NL];
    sub_codes(x, best_d, 1, codes);
    y->d = ggml__fp32_to_fp16(best_d);
    for (int j = 0; j < QK4_NL / 2; j++)
        y->qs[j] = (uint8_t) (codes[j] | codes[j + QK4_NL / 2] << 4);
}

void ggml__quantize_rows_iq4_nl(const float *restrict x, void *restrict vy, int64_t nrows, int64_t n_per_row,
                                const float *imatrix)
{
    ggml__quantize_block_rows(iq4_nl_block, QK4_NL, sizeof(block_iq4_nl), x, vy, nrows, n_per_row, imatrix,
                              __func__);
}

void ggml__quantize_row_iq4_nl_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    ggml__quantize_block_rows(iq4_nl_block, QK4_NL, sizeof(block_iq4_nl), x, vy, 1, k, NULL, __func__);
}
