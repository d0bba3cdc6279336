/*
 * quants-k.c - the K-quant formats of 256-value super-blocks: q8_K (the
 * activations the K-quant dot products take), q4_K, q5_K and q6_K.
 *
 * q8_K is a plain absmax format and its quantizer repeats ggml's float
 * arithmetic (see quants.c on bit-identity): the value of largest
 * magnitude (first one on ties) maps to -127, q = nearest(x * -127 / max)
 * with halves to even, d = 1 / iscale in single precision.
 *
 * q4_K, q5_K and q6_K search their scales.  Their quantizers here are this
 * library's own: they minimise the squared error of the decoded values,
 * weighted by the importance weights when ggml_quantize_chunk gets them
 * (by 1 otherwise), in two steps.  First every sub-block gets the real
 * scale (and, for q4_K and q5_K, minimum) that fits it best: a scan over
 * candidate inverse scales, each giving the levels by rounding, then the
 * least-squares scale for those levels and a few rounds of re-rounding.
 * Then the super-block scales are chosen among a few candidates around
 * "largest sub-block scale / largest code"; for each candidate the codes
 * of each sub-block are searched next to the rounded ones and the values
 * re-rounded with the scale actually stored, and the candidate with the
 * smallest total error is kept.  q4_K and q5_K finally try the
 * least-squares super-block scales for the chosen integer codes.
 *
 * The scale searches and the row loop are shared with q2_K (affine, like
 * q4_K) and q3_K (symmetric, like q6_K) in quants-k23.c, through the
 * ggml__*_k_format descriptions declared in quants-impl.h.
 *
 * The decoders compute exactly what ggml's do (single precision, the same
 * products in the same order), so a block decodes to the same floats
 * everywhere.  Like quants.c this file must be compiled without
 * floating-point contraction.
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
 * The nearest integer to v, halves to even, saturated to [lo, hi]; NaN
 * gives 0.  Inside the range, adding and subtracting 1.5 * 2^23 leaves v
 * rounded to an integer by the addition (round-to-nearest-even, the
 * default mode; |v| < 2^22 here), without a library call.
 */
static inline int round_level(float v, int lo, int hi)
{
    if (!(v > (float) lo))
        return v != v ? 0 : lo;
    if (v >= (float) hi)
        return hi;
    const float shifted = v + 12582912.0f;
    return (int) (shifted - 12582912.0f);
}

/*
 * The scale searches' inner loops work in single precision on LANES
 * independent partial sums (value j goes to sum j % LANES; sub-block
 * lengths are multiples of LANES), written so that the compiler can keep
 * the lanes in vector registers: no integer conversions, no branches, no
 * divisions.  level_of is round_level as a float: the nearest integer to
 * v (halves to even) clamped to [lo, hi]; NaN gives lo.
 */
#define LANES 4

static inline float level_of(float v, float lo, float hi)
{
    v = v > lo ? v : lo;
    v = v < hi ? v : hi;
    return (v + 12582912.0f) - 12582912.0f;
}

/* binary16 rounding of a scale, as the block stores it */
static inline float as_stored(float v)
{
    return ggml__fp16_to_fp32(ggml__fp32_to_fp16(v));
}

/* ------------------------------------------------------------------ q8_K */

void ggml__quantize_row_q8_K(const float *restrict x, void *restrict vy, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(x, vy, k, QK_K, __func__);
    block_q8_K *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK_K;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < QK_K; j++) {
            if (fabsf(xb[j]) > amax) {
                amax = fabsf(xb[j]);
                max = xb[j];
            }
        }
        memset(&y[i], 0, sizeof y[i]);
        if (amax == 0.0f)
            continue;
        const float iscale = -127.0f / max;
        for (int j = 0; j < QK_K; j++)
            y[i].qs[j] = (int8_t) round_level(iscale * xb[j], -128, 127);
        for (int g = 0; g < QK_K / 16; g++) {
            int sum = 0;
            for (int j = 0; j < 16; j++)
                sum += y[i].qs[16 * g + j];
            y[i].bsums[g] = (int16_t) sum;
        }
        y[i].d = 1.0f / iscale;
    }
}

void ggml__dequantize_row_q8_K(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_q8_K *x = vx;

    for (int64_t i = 0; i < nb; i++)
        for (int j = 0; j < QK_K; j++)
            y[i * QK_K + j] = x[i].d * (float) x[i].qs[j];
}

/* ------------------------------------------------------- value positions */

/* The 4-bit code (q5_K: the low four bits) of value v (0..255) of a q4_K block. */
static inline int q4_K_code(const uint8_t *qs, int v)
{
    const uint8_t byte = qs[32 * (v / 64) + v % 32];
    return (v % 64) < 32 ? byte & 0x0f : byte >> 4;
}

/* The 6-bit code (0..63) of value v of a q6_K block. */
static inline int q6_K_code(const block_q6_K *b, int v)
{
    const int half = v / 128, part = (v % 128) / 32, l = v % 32;
    const uint8_t low = b->ql[64 * half + l + 32 * (part & 1)];
    const int low4 = part < 2 ? low & 0x0f : low >> 4;
    const int high2 = (b->qh[32 * half + l] >> (2 * part)) & 3;
    return low4 | (high2 << 4);
}

/* --------------------------------------------------------- dequantizers */

/*
 * The floats of a q4_K or q5_K block into y (QK_K values); qh holds
 * q5_K's fifth bits, NULL for q4_K.
 */
static void dequantize_q45_K_block(ggml_fp16_t d16, ggml_fp16_t dmin16, const uint8_t scales[K_SCALE_BYTES],
                                   const uint8_t *qs, const uint8_t *qh, float *restrict y)
{
    const float d = ggml__fp16_to_fp32(d16);
    const float dmin = ggml__fp16_to_fp32(dmin16);
    for (int s = 0; s < QK_K / 32; s++) {
        int sc, mn;
        ggml__q4_K_scale_min(scales, s, &sc, &mn);
        const float step = d * (float) sc;
        const float offset = dmin * (float) mn;
        for (int j = 32 * s; j < 32 * s + 32; j++) {
            const int code = q4_K_code(qs, j) | (qh ? ((qh[j % 32] >> s) & 1) << 4 : 0);
            y[j] = step * (float) code - offset;
        }
    }
}

void ggml__dequantize_row_q4_K(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_q4_K *x = vx;
    for (int64_t i = 0; i < nb; i++)
        dequantize_q45_K_block(x[i].d, x[i].dmin, x[i].scales, x[i].qs, NULL, y + i * QK_K);
}

void ggml__dequantize_row_q5_K(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_q5_K *x = vx;
    for (int64_t i = 0; i < nb; i++)
        dequantize_q45_K_block(x[i].d, x[i].dmin, x[i].scales, x[i].qs, x[i].qh, y + i * QK_K);
}

void ggml__dequantize_row_q6_K(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_q6_K *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK_K; j++)
            y[i * QK_K + j] = d * (float) x[i].scales[j / 16] * (float) (q6_K_code(&x[i], j) - 32);
    }
}

/* ------------------------------------------------- sub-block scale fits */

/*
 * Symmetric fit of n values (a multiple of LANES) to scale * L, L integer
 * in [f->lo, f->hi], weights w (positive).  Returns the weighted squared
 * error; *scale is the least-squares scale of the chosen levels (0 for an
 * all-zero block).
 */
static double fit_symmetric(const float *x, const float *w, int n, const struct ggml__symmetric_k_format *f,
                            float *scale)
{
    float amax_lanes[LANES] = { 0 }, sxx_lanes[LANES] = { 0 };
    for (int j = 0; j < n; j += LANES) {
        for (int k = 0; k < LANES; k++) {
            const float a = fabsf(x[j + k]);
            amax_lanes[k] = a > amax_lanes[k] ? a : amax_lanes[k];
            sxx_lanes[k] += w[j + k] * x[j + k] * x[j + k];
        }
    }
    const double sxx = ggml__lanes_sum(sxx_lanes, LANES);
    float amax = 0.0f;
    for (int k = 0; k < LANES; k++)
        amax = amax_lanes[k] > amax ? amax_lanes[k] : amax;
    *scale = 0.0f;
    if (amax == 0.0f)
        return sxx;
    /* the first value of the largest magnitude, with its sign */
    int at = 0;
    while (fabsf(x[at]) != amax)
        at++;
    const float max = x[at];

    const float flo = (float) f->lo, fhi = (float) f->hi;
    const int tries = f->fit_tries;
    double best = sxx;
    /* candidate inverse scales map the extreme value near lo (and hi) */
    for (int side = 0; side < f->fit_sides; side++) {
        const float end = side == 0 ? flo : fhi;
        for (int t = 0; t < tries; t++) {
            const float shrink = tries > 1 ? f->fit_spread * (float) t / (float) (tries - 1) : 0.0f;
            const float target = (end < 0 ? end - 0.5f : end + 0.5f) * (1.0f - shrink);
            float iscale = target / max;
            for (int round = 0; round < 2; round++) {
                float sxl_lanes[LANES] = { 0 }, sll_lanes[LANES] = { 0 };
                for (int j = 0; j < n; j += LANES) {
                    for (int k = 0; k < LANES; k++) {
                        const float l = level_of(x[j + k] * iscale, flo, fhi);
                        const float wl = w[j + k] * l;
                        sxl_lanes[k] += wl * x[j + k];
                        sll_lanes[k] += wl * l;
                    }
                }
                const double sxl = ggml__lanes_sum(sxl_lanes, LANES), sll = ggml__lanes_sum(sll_lanes, LANES);
                if (!(sll > 0.0))
                    break;
                const double err = sxx - sxl * sxl / sll;
                if (err < best) {
                    best = err;
                    *scale = (float) (sxl / sll);
                }
                if (sxl == 0.0)
                    break;
                iscale = (float) (sll / sxl);   /* re-round with the fitted scale */
            }
        }
    }
    return best;
}

/*
 * Fit of n values (a multiple of LANES) to step * L + offset, L in
 * [0, nmax], step >= 0, offset <= 0 (the format stores a non-negative
 * minimum that is subtracted).  Sets *step and *offset.
 *
 * Each candidate step gives levels by rounding, then the least-squares
 * line through those levels; the line's error at those levels follows
 * from the sums in closed form (it bounds the error after re-rounding
 * from above), so each round is a single pass over the values.
 */
static void fit_affine(const float *x, const float *w, int n, const struct ggml__affine_k_format *f, float *step,
                       float *offset)
{
    float lo_lanes[LANES], hi_lanes[LANES];
    float sw_lanes[LANES] = { 0 }, sx_lanes[LANES] = { 0 }, sxx_lanes[LANES] = { 0 };
    for (int k = 0; k < LANES; k++) {
        lo_lanes[k] = 0.0f;
        hi_lanes[k] = -FLT_MAX;
    }
    for (int j = 0; j < n; j += LANES) {
        for (int k = 0; k < LANES; k++) {
            const float v = x[j + k];
            lo_lanes[k] = v < lo_lanes[k] ? v : lo_lanes[k];
            hi_lanes[k] = v > hi_lanes[k] ? v : hi_lanes[k];
            sw_lanes[k] += w[j + k];
            sx_lanes[k] += w[j + k] * v;
            sxx_lanes[k] += w[j + k] * v * v;
        }
    }
    float lo = lo_lanes[0], hi = hi_lanes[0];
    for (int k = 1; k < LANES; k++) {
        lo = lo_lanes[k] < lo ? lo_lanes[k] : lo;
        hi = hi_lanes[k] > hi ? hi_lanes[k] : hi;
    }
    *step = 0.0f;
    *offset = lo;
    if (!(hi > lo))
        return;
    const double sw = ggml__lanes_sum(sw_lanes, LANES), sx = ggml__lanes_sum(sx_lanes, LANES);
    const double sxx = ggml__lanes_sum(sxx_lanes, LANES);
    /* every value at the offset lo */
    double best = sxx - 2.0 * lo * sx + (double) lo * lo * sw;
    /* from the smallest step up, a larger step must be better by more than
       rounding noise: of candidates with equal error (a lone value fits
       at any level) the one using the most levels wins */
    const double noise = 1e-6 * sxx;
    const float top = (float) f->nmax;
    for (int t = 0; t < f->fit_steps; t++) {
        float s = (hi - lo) / (top + 0.6f - 1.2f * (float) t / (float) (f->fit_steps - 1));
        float o = lo;
        for (int round = 0; round < f->fit_rounds; round++) {
            /* levels for (s, o), then the least-squares line through them */
            const float inv = 1.0f / s;
            float sl_lanes[LANES] = { 0 }, sll_lanes[LANES] = { 0 }, sxl_lanes[LANES] = { 0 };
            for (int j = 0; j < n; j += LANES) {
                for (int k = 0; k < LANES; k++) {
                    const float l = level_of((x[j + k] - o) * inv, 0.0f, top);
                    const float wl = w[j + k] * l;
                    sl_lanes[k] += wl;
                    sll_lanes[k] += wl * l;
                    sxl_lanes[k] += wl * x[j + k];
                }
            }
            const double sl = ggml__lanes_sum(sl_lanes, LANES), sll = ggml__lanes_sum(sll_lanes, LANES);
            const double sxl = ggml__lanes_sum(sxl_lanes, LANES);
            const double det = sw * sll - sl * sl;
            double a, b;
            if (det > 0.0) {
                a = (sw * sxl - sl * sx) / det;
                b = (sll * sx - sl * sxl) / det;
            } else {
                a = 0.0;
                b = 1.0;
            }
            if (b > 0.0) {   /* the offset may not be positive: fit through 0 */
                b = 0.0;
                a = sll > 0.0 ? sxl / sll : 0.0;
            }
            if (!(a > 0.0))
                break;
            if ((float) a == s && (float) b == o)
                break;   /* the same levels again: converged */
            s = (float) a;
            o = (float) b;
            const double err = sxx - 2.0 * (a * sxl + b * sx) + a * a * sll + 2.0 * a * b * sl + b * b * sw;
            if (err < best - noise) {
                best = err;
                *step = s;
                *offset = o;
            }
        }
    }
}

/* ------------------------------------------------------------ q4_K, q5_K */


/* Stores the 6-bit scale and minimum of sub-block s. */
static void put_scale_min(uint8_t scales[K_SCALE_BYTES], int s, int sc, int mn)
{
    if (s < 4) {
        scales[s] = (uint8_t) ((scales[s] & 0xc0) | sc);
        scales[s + 4] = (uint8_t) ((scales[s + 4] & 0xc0) | mn);
    } else {
        scales[s + 4] = (uint8_t) ((sc & 0x0f) | ((mn & 0x0f) << 4));
        scales[s - 4] = (uint8_t) ((scales[s - 4] & 0x3f) | ((sc >> 4) << 6));
        scales[s] = (uint8_t) ((scales[s] & 0x3f) | ((mn >> 4) << 6));
    }
}

/*
 * Error of the n values x (a multiple of LANES) of a sub-block decoded
 * with the stored step d * sc and offset dmin * mn, as the decoder
 * computes them, with the nearest codes.
 */
static float affine_sub_error(const float *x, const float *w, int n, float top, float step, float offset)
{
    const float inv = step != 0.0f ? 1.0f / step : 0.0f;
    float acc[LANES] = { 0 };
    for (int j = 0; j < n; j += LANES) {
        for (int k = 0; k < LANES; k++) {
            const float l = level_of((x[j + k] + offset) * inv, 0.0f, top);
            const float e = (step * l - offset) - x[j + k];
            acc[k] += w[j + k] * e * e;
        }
    }
    return ggml__lanes_sum(acc, LANES);
}

/* The codes affine_sub_error chooses. */
static void affine_sub_codes(const float *x, int n, int nmax, float step, float offset, uint8_t *q)
{
    const float inv = step != 0.0f ? 1.0f / step : 0.0f;
    for (int j = 0; j < n; j++)
        q[j] = (uint8_t) level_of((x[j] + offset) * inv, 0.0f, (float) nmax);
}

/*
 * For stored super-block scales (d, dmin) and the sub-block fits, the best
 * codes next to the rounded ones; returns the block's total error and
 * fills sc[], mn[] (and q[], when with_q) of *k.  The trials form a cross:
 * the rounded pair, the scale one up and one down, then the minimum one up
 * and one down with the better scale (5 trials, where a 3 x 3 square
 * takes 9 for nearly the same error).
 */
static double affine_codes(const float *x, const float *w, const struct ggml__affine_k_format *f, const float *step,
                           const float *minimum, float d, float dmin, struct ggml__affine_k *k, bool cross,
                           bool with_q)
{
    const int len = f->sub_len, top = f->scale_max;
    const float ftop = (float) f->nmax;
    double total = 0.0;
    for (int s = 0; s < QK_K / len; s++) {
        const float *xs = x + len * s, *ws = w + len * s;
        const int sc0 = d > 0.0f ? round_level(step[s] / d, 0, top) : 0;
        const int mn0 = dmin > 0.0f ? round_level(minimum[s] / dmin, 0, top) : 0;
        int best_sc = sc0, best_mn = mn0;
        float best = affine_sub_error(xs, ws, len, ftop, d * (float) sc0, dmin * (float) mn0);
        for (int move = 0; cross && move < 4; move++) {
            const int a = move < 2 ? sc0 + (move == 0 ? -1 : 1) : best_sc;
            const int b = move < 2 ? mn0 : mn0 + (move == 2 ? -1 : 1);
            if (a < 0 || a > top || b < 0 || b > top)
                continue;
            const float err = affine_sub_error(xs, ws, len, ftop, d * (float) a, dmin * (float) b);
            if (err < best) {
                best = err;
                best_sc = a;
                best_mn = b;
            }
        }
        k->sc[s] = best_sc;
        k->mn[s] = best_mn;
        if (with_q)
            affine_sub_codes(xs, len, f->nmax, d * (float) best_sc, dmin * (float) best_mn, k->q + len * s);
        total += best;
    }
    return total;
}

enum { AFFINE_REFINE_ROUNDS = 1 };

void ggml__quantize_affine_k(const float *x, const float *w, const struct ggml__affine_k_format *f,
                             struct ggml__affine_k *k)
{
    const int len = f->sub_len, nsub = QK_K / f->sub_len;
    float step[QK_K / 16] = { 0 }, minimum[QK_K / 16] = { 0 };
    float max_step = 0.0f, max_min = 0.0f;
    for (int s = 0; s < nsub; s++) {
        float offset;
        fit_affine(x + len * s, w + len * s, len, f, &step[s], &offset);
        minimum[s] = -offset;
        max_step = fmaxf(max_step, step[s]);
        max_min = fmaxf(max_min, minimum[s]);
    }

    /* candidate super-block scales around largest / scale_max, as stored */
    const float top = (float) f->scale_max;
    double best = DBL_MAX;
    k->d = k->dmin = 0.0f;
    for (int a = 0; a < f->n_d_factors; a++) {
        for (int b = 0; b < f->n_min_factors; b++) {
            const float d = as_stored(max_step / top * f->factors[a]);
            const float dmin = as_stored(max_min / top * f->factors[b]);
            const double err = affine_codes(x, w, f, step, minimum, d, dmin, k, false, false);
            if (err < best) {
                best = err;
                k->d = d;
                k->dmin = dmin;
            }
        }
    }
    affine_codes(x, w, f, step, minimum, k->d, k->dmin, k, true, true);

    /* refinement: the least-squares d and dmin for the chosen integers
       (x ~ d * sc q - dmin * mn), kept when the codes they give are better
       (one round: a second one changed the error by less than 0.2% and
       cost a fifth of the time) */
    for (int round = 0; round < AFFINE_REFINE_ROUNDS; round++) {
        /* per sub-block: a = sc q, b = -mn; sums of w a a, w a, w, w a x, w x */
        double saa = 0, sab = 0, sbb = 0, sax = 0, sbx = 0;
        for (int s = 0; s < nsub; s++) {
            const float *xs = x + len * s, *ws = w + len * s;
            const uint8_t *qs = k->q + len * s;
            float qq[LANES] = { 0 }, wq[LANES] = { 0 }, ww[LANES] = { 0 }, wqx[LANES] = { 0 }, wx[LANES] = { 0 };
            for (int j = 0; j < len; j += LANES) {
                for (int l = 0; l < LANES; l++) {
                    const float q = (float) qs[j + l], wl = ws[j + l];
                    qq[l] += wl * q * q;
                    wq[l] += wl * q;
                    ww[l] += wl;
                    wqx[l] += wl * q * xs[j + l];
                    wx[l] += wl * xs[j + l];
                }
            }
            const double sc = k->sc[s], mn = k->mn[s];
            saa += sc * sc * ggml__lanes_sum(qq, LANES);
            sab -= sc * mn * ggml__lanes_sum(wq, LANES);
            sbb += mn * mn * ggml__lanes_sum(ww, LANES);
            sax += sc * ggml__lanes_sum(wqx, LANES);
            sbx -= mn * ggml__lanes_sum(wx, LANES);
        }
        const double det = saa * sbb - sab * sab;
        if (!(det > 0.0))
            break;
        const float d = as_stored((float) ((sbb * sax - sab * sbx) / det));
        const float dmin = as_stored((float) ((saa * sbx - sab * sax) / det));
        if (!(d > 0.0f) || !(dmin >= 0.0f))
            break;
        struct ggml__affine_k trial = *k;
        const double err = affine_codes(x, w, f, step, minimum, d, dmin, &trial, true, true);
        if (!(err < best))
            break;
        best = err;
        trial.d = d;
        trial.dmin = dmin;
        *k = trial;
    }
}

/* q4_K and q5_K: 8 sub-blocks of 32 values, 6-bit scales and minimums */
static const float q45_K_factors[] = { 1.0f, 0.98f, 1.02f };
static const struct ggml__affine_k_format q4_K_format = { 32, 15, 63, q45_K_factors, 3, 2, 7, 3 };
static const struct ggml__affine_k_format q5_K_format = { 32, 31, 63, q45_K_factors, 3, 2, 7, 3 };

/* The scales of *k into a q4_K or q5_K block's d, dmin and scales. */
static void put_affine_scales(const struct ggml__affine_k *k, ggml_fp16_t *d, ggml_fp16_t *dmin,
                              uint8_t scales[K_SCALE_BYTES])
{
    *d = ggml__fp32_to_fp16(k->d);
    *dmin = ggml__fp32_to_fp16(k->dmin);
    memset(scales, 0, K_SCALE_BYTES);
    for (int s = 0; s < QK_K / 32; s++)
        put_scale_min(scales, s, k->sc[s], k->mn[s]);
}

static void quantize_block_q4_K(const float *x, const float *w, block_q4_K *y)
{
    struct ggml__affine_k k;
    ggml__quantize_affine_k(x, w, &q4_K_format, &k);
    memset(y, 0, sizeof *y);
    put_affine_scales(&k, &y->d, &y->dmin, y->scales);
    for (int v = 0; v < QK_K; v++)
        y->qs[32 * (v / 64) + v % 32] |= (uint8_t) ((v % 64) < 32 ? k.q[v] : k.q[v] << 4);
}

static void quantize_block_q5_K(const float *x, const float *w, block_q5_K *y)
{
    struct ggml__affine_k k;
    ggml__quantize_affine_k(x, w, &q5_K_format, &k);
    memset(y, 0, sizeof *y);
    put_affine_scales(&k, &y->d, &y->dmin, y->scales);
    for (int v = 0; v < QK_K; v++) {
        const int low4 = k.q[v] & 0x0f;
        y->qs[32 * (v / 64) + v % 32] |= (uint8_t) ((v % 64) < 32 ? low4 : low4 << 4);
        y->qh[v % 32] |= (uint8_t) ((k.q[v] >> 4) << (v / 32));
    }
}

/* ------------------------------------------- symmetric formats: q6_K */

/* Error of 16 values with the stored step d * sc and the nearest levels in [lo, hi]. */
static inline float symmetric_sub_error(const float *x, const float *w, float lo, float hi, float step)
{
    const float inv = step != 0.0f ? 1.0f / step : 0.0f;
    float acc[LANES] = { 0 };
    for (int j = 0; j < 16; j += LANES) {
        for (int k = 0; k < LANES; k++) {
            const float l = level_of(x[j + k] * inv, lo, hi);
            const float e = step * l - x[j + k];
            acc[k] += w[j + k] * e * e;
        }
    }
    return ggml__lanes_sum(acc, LANES);
}

static double symmetric_codes(const float *x, const float *w, const struct ggml__symmetric_k_format *f,
                              const float *scale, float d, int *sc, int8_t *q)
{
    const float lo = (float) f->lo, hi = (float) f->hi;
    double total = 0.0;
    for (int s = 0; s < QK_K / 16; s++) {
        const float *xs = x + 16 * s, *ws = w + 16 * s;
        const float ratio = d != 0.0f ? scale[s] / d : 0.0f;
        const int sc0 = round_level(ratio, f->scale_lo, f->scale_hi);
        int best_sc = sc0;
        float best = symmetric_sub_error(xs, ws, lo, hi, d * (float) sc0);
        /* the final codes also try the other integer next to the ratio */
        const int other = ratio > (float) sc0 ? sc0 + 1 : sc0 - 1;
        if (q != NULL && other >= f->scale_lo && other <= f->scale_hi) {
            const float err = symmetric_sub_error(xs, ws, lo, hi, d * (float) other);
            if (err < best) {
                best = err;
                best_sc = other;
            }
        }
        sc[s] = best_sc;
        if (q != NULL) {
            const float step = d * (float) best_sc;
            const float inv = step != 0.0f ? 1.0f / step : 0.0f;
            for (int j = 0; j < 16; j++)
                q[16 * s + j] = (int8_t) level_of(xs[j] * inv, lo, hi);
        }
        total += best;
    }
    return total;
}

float ggml__quantize_symmetric_k(const float *x, const float *w, const struct ggml__symmetric_k_format *f,
                                 int sc[QK_K / 16], int8_t q[QK_K])
{
    float scale[QK_K / 16];
    float max = 0.0f, amax = 0.0f;
    for (int s = 0; s < QK_K / 16; s++) {
        fit_symmetric(x + 16 * s, w + 16 * s, 16, f, &scale[s]);
        if (fabsf(scale[s]) > amax) {
            amax = fabsf(scale[s]);
            max = scale[s];
        }
    }

    /* the largest sub-block scale maps near scale_lo (or near scale_hi) */
    float best_d = as_stored(max / (float) f->scale_lo * f->factors[0]);
    if (f->d_sides * f->n_factors > 1) {
        double best = DBL_MAX;
        for (int side = 0; side < f->d_sides; side++) {
            for (int a = 0; a < f->n_factors; a++) {
                const float end = side == 0 ? (float) f->scale_lo : (float) f->scale_hi;
                const float d = as_stored(max / end * f->factors[a]);
                const double err = symmetric_codes(x, w, f, scale, d, sc, NULL);
                if (err < best) {
                    best = err;
                    best_d = d;
                }
            }
        }
    }
    symmetric_codes(x, w, f, scale, best_d, sc, q);
    return best_d;
}

static const float q6_K_factors[] = { 1.0f, 0.99f, 1.01f, 0.98f, 1.02f };
static const struct ggml__symmetric_k_format q6_K_format = { -32, 31, -128, 127, q6_K_factors, 3, 5, 0.1f, 1, 1 };

static void quantize_block_q6_K(const float *x, const float *w, block_q6_K *y)
{
    int sc[QK_K / 16];
    int8_t q[QK_K];
    const float d = ggml__quantize_symmetric_k(x, w, &q6_K_format, sc, q);
    memset(y, 0, sizeof *y);
    y->d = ggml__fp32_to_fp16(d);
    for (int s = 0; s < QK_K / 16; s++)
        y->scales[s] = (int8_t) sc[s];
    /* value 128 h + 32 p + l: low nibble in ql[64 h + 32 (p & 1) + l]
       (high nibble when p >= 2), two high bits at 2 p of qh[32 h + l] */
    for (int half = 0; half < 2; half++) {
        const int8_t *qv = q + 128 * half;
        uint8_t *ql = y->ql + 64 * half, *qh = y->qh + 32 * half;
        for (int l = 0; l < 32; l++) {
            const int c0 = qv[l] + 32, c1 = qv[l + 32] + 32, c2 = qv[l + 64] + 32, c3 = qv[l + 96] + 32;
            ql[l] = (uint8_t) ((c0 & 0x0f) | (c2 & 0x0f) << 4);
            ql[l + 32] = (uint8_t) ((c1 & 0x0f) | (c3 & 0x0f) << 4);
            qh[l] = (uint8_t) (c0 >> 4 | (c1 >> 4) << 2 | (c2 >> 4) << 4 | (c3 >> 4) << 6);
        }
    }
}

/* ------------------------------------------------------------ row entries */

static void quantize_block_q4_K_entry(const float *x, const float *w, void *y)
{
    quantize_block_q4_K(x, w, y);
}

static void quantize_block_q5_K_entry(const float *x, const float *w, void *y)
{
    quantize_block_q5_K(x, w, y);
}

static void quantize_block_q6_K_entry(const float *x, const float *w, void *y)
{
    quantize_block_q6_K(x, w, y);
}

void ggml__quantize_block_rows(ggml__k_block_quantizer quantize, int block_len, size_t block_size, const float *x,
                               void *y, int64_t nrows, int64_t n_per_row, const float *imatrix, const char *func)
{
    const int64_t nb = ggml__quant_row_blocks(x, y, n_per_row, block_len, func);
    if (nb <= 0 || nrows <= 0)
        return;
    char *out = y;
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t i = 0; i < nb; i++) {
            /* a weight that is not a positive number counts (almost) nothing */
            float w[QK_K];
            for (int j = 0; j < block_len; j++) {
                const float v = imatrix != NULL ? imatrix[i * block_len + j] : 1.0f;
                w[j] = (v > 0.0f && v <= FLT_MAX ? v : 0.0f) + 1e-30f;
            }
            quantize(x + r * n_per_row + i * block_len, w, out);
            out += block_size;
        }
    }
}

void ggml__quantize_k_rows(ggml__k_block_quantizer quantize, size_t block_size, const float *x, void *y,
                           int64_t nrows, int64_t n_per_row, const float *imatrix, const char *func)
{
    ggml__quantize_block_rows(quantize, QK_K, block_size, x, y, nrows, n_per_row, imatrix, func);
}

void ggml__quantize_row_q4_K_ref(const float *restrict x, void *restrict y, int64_t k)
{
    ggml__quantize_k_rows(quantize_block_q4_K_entry, sizeof(block_q4_K), x, y, 1, k, NULL, __func__);
}

void ggml__quantize_row_q5_K_ref(const float *restrict x, void *restrict y, int64_t k)
{
    ggml__quantize_k_rows(quantize_block_q5_K_entry, sizeof(block_q5_K), x, y, 1, k, NULL, __func__);
}

void ggml__quantize_q5_K(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                         const float *imatrix)
{
    ggml__quantize_k_rows(quantize_block_q5_K_entry, sizeof(block_q5_K), x, y, nrows, n_per_row, imatrix, __func__);
}

void ggml__quantize_row_q6_K_ref(const float *restrict x, void *restrict y, int64_t k)
{
    ggml__quantize_k_rows(quantize_block_q6_K_entry, sizeof(block_q6_K), x, y, 1, k, NULL, __func__);
}

void ggml__quantize_q4_K(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                         const float *imatrix)
{
    ggml__quantize_k_rows(quantize_block_q4_K_entry, sizeof(block_q4_K), x, y, nrows, n_per_row, imatrix, __func__);
}

void ggml__quantize_q6_K(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                         const float *imatrix)
{
    ggml__quantize_k_rows(quantize_block_q6_K_entry, sizeof(block_q6_K), x, y, nrows, n_per_row, imatrix, __func__);
}
