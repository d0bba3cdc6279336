/*
 * quants-iq2.c - the 2-bit lattice formats IQ2_XXS, IQ2_XS and IQ2_S
 * (layouts: quants-impl.h): decoders and quantizers.
 *
 * The decoders compute what ggml's do, in single precision with the same
 * operations in the same order: the sub-block factor d * (0.5 + s) * 0.25,
 * times the point's coordinate, negated for a set sign.  So a block
 * decodes to the same floats everywhere.  Like quants.c this file must be
 * compiled without floating-point contraction.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* the point lists (format data) */
#include "iq2-grids.h"

/* ----------------------------------------------------------- decoders */

/* Writes the 8 values of group (scale factor of the sub-block: d * (0.5 + s) / 4). */
static void decode_group(float d, struct ggml__iq2_group grp, float *restrict y)
{
    const float factor = d * (0.5f + (float) grp.scale) * 0.25f;
    for (int j = 0; j < 8; j++) {
        const float v = factor * (float) ggml__iq2_coord(grp.point, j);
        y[j] = (grp.signs >> j) & 1 ? -v : v;
    }
}

void ggml__dequantize_row_iq2_xxs(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_iq2_xxs *x = vx;
    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int g = 0; g < QK_K / 8; g++)
            decode_group(d, ggml__iq2_xxs_group(&x[i], g), y + i * QK_K + 8 * g);
    }
}

void ggml__dequantize_row_iq2_xs(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_iq2_xs *x = vx;
    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int g = 0; g < QK_K / 8; g++)
            decode_group(d, ggml__iq2_xs_group(&x[i], g), y + i * QK_K + 8 * g);
    }
}

void ggml__dequantize_row_iq2_s(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_iq2_s *x = vx;
    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int g = 0; g < QK_K / 8; g++)
            decode_group(d, ggml__iq2_s_group(&x[i], g), y + i * QK_K + 8 * g);
    }
}

/* --------------------------------------------------------- quantizers */

/*
 * The quantizers are this library's own.  They minimise the squared error
 * of the decoded values, weighted by the importance weights when
 * ggml_quantize_chunk gets them (by 1 otherwise), in two steps.
 *
 * 1. Every unit of values sharing a 4-bit scale (32 values in IQ2_XXS, 16
 *    in IQ2_XS and IQ2_S) gets the real factor sigma that fits it best: a
 *    scan over three starting factors amax / L, each followed by rounds
 *    of "best point of every group for this sigma" and "least-squares
 *    sigma for these points".  The best point of a group: each value
 *    rounded to its nearest level gives the best vector of levels (the
 *    error is a sum over the values); if that vector is a point it is the
 *    answer, else the best of its precomputed nearest points (struct
 *    ggml__grid8, built once per format; without it, of every point).
 * 2. The block's d is chosen among three candidates around
 *    8 max(sigma) / 31; for each candidate (rounded to binary16 as
 *    stored) every unit tries the two nearest 4-bit scales with the factor
 *    the decoder will use, and the candidate with the smallest total error
 *    is kept.
 *
 * Signs: a value's sign is its own, except that IQ2_XXS and IQ2_XS store
 * an even number of negatives per group of 8: when a group has an odd
 * number, one value takes the wrong sign, chosen (among the two with the
 * smallest weighted magnitude) together with the point that then fits
 * best.
 */

enum { IQ2_XXS, IQ2_XS, IQ2_S };

struct iq2_format {
    const uint16_t *points;
    int n_points;
    int unit_groups;   /* groups of 8 sharing a scale */
    bool parity;       /* signs stored as 7 bits plus parity */
};

static const struct iq2_format iq2_formats[3] = {
    [IQ2_XXS] = { ggml__iq2xxs_points, 256, 4, true },
    [IQ2_XS] = { ggml__iq2xs_points, 512, 2, true },
    [IQ2_S] = { ggml__iq2s_points, 1024, 2, false },
};

static const float iq2_levels[3] = { 8.0f, 25.0f, 43.0f };

/* ------------------------------------------------------------- tables */

/*
 * Extra squared level distance over the nearest point's that a level
 * vector's neighbour list admits, per format.  The three grids' points
 * all have level sums of one parity, so 1 admits the nearest points only
 * (on average 4, 5 and 8 of them); 2 makes the lists of IQ2_XXS and IQ2_XS
 * about 18 and 30 points long for a smaller error, and IQ2_S's (58) too
 * slow for what they gain.
 */
static const int iq2_slack[3] = { [IQ2_XXS] = 2, [IQ2_XS] = 2, [IQ2_S] = 1 };

static_assert(sizeof ggml__iq2s_points / sizeof ggml__iq2s_points[0] <= GGML__GRID8_MAX_POINTS,
              "the IQ2 grids fit the table builder");

static const char *const iq2_names[3] = { "iq2_xxs", "iq2_xs", "iq2_s" };

static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ggml__grid8 *tables[3];

/* The tables of format, built on first use; NULL after logging when memory runs out. */
static const struct ggml__grid8 *format_tables(int format)
{
    pthread_mutex_lock(&tables_lock);
    if (tables[format] == NULL) {
        struct ggml__grid8 *g = malloc(sizeof *g);
        const struct iq2_format *f = &iq2_formats[format];
        if (g != NULL && !ggml__grid8_build(g, f->points, f->n_points, iq2_slack[format])) {
            free(g);
            g = NULL;
        }
        tables[format] = g;
    }
    const struct ggml__grid8 *g = tables[format];
    pthread_mutex_unlock(&tables_lock);
    if (g == NULL)
        ggml__error("out of memory for the %s quantization tables (searching every point instead)",
                    iq2_names[format]);
    return g;
}

bool ggml__iq2_tables_init(enum ggml_type type)
{
    const int format = type == GGML_TYPE_IQ2_XXS ? IQ2_XXS : type == GGML_TYPE_IQ2_XS ? IQ2_XS : IQ2_S;
    return format_tables(format) != NULL;
}

void ggml__iq2_tables_free(void)
{
    pthread_mutex_lock(&tables_lock);
    for (int format = 0; format < 3; format++)
        if (tables[format] != NULL) {
            ggml__grid8_release(tables[format]);
            free(tables[format]);
            tables[format] = NULL;
        }
    pthread_mutex_unlock(&tables_lock);
}

/* ---------------------------------------------------------- searches */

/* The chosen encoding of a group of 8: point index, the value given the
   wrong sign (-1: none), the weighted squared error. */
struct group_fit {
    int index;
    int flip;
    float err;
};

/* The sign variants of a group: the signs as they are (flip -1) or, under
   the parity rule with an odd number of negatives, the two candidate
   values to give the wrong sign. */
struct group_signs {
    int n_variants;
    int flip[2];
};

static struct group_signs group_signs(const struct iq2_format *f, const float *x, const float *a, const float *w)
{
    int negatives = 0;
    for (int j = 0; j < 8; j++)
        negatives += x[j] < 0.0f;
    struct group_signs s = { 1, { -1, -1 } };
    if (!f->parity || negatives % 2 == 0)
        return s;
    /* the two values of smallest weighted magnitude are the candidates */
    int c0 = -1, c1 = -1;
    for (int j = 0; j < 8; j++) {
        const float m = w[j] * a[j];
        if (c0 < 0 || m < w[c0] * a[c0]) {
            c1 = c0;
            c0 = j;
        } else if (c1 < 0 || m < w[c1] * a[c1]) {
            c1 = j;
        }
    }
    s.n_variants = 2;
    s.flip[0] = c0;
    s.flip[1] = c1;
    return s;
}

/*
 * The best point at factor sigma > 0 for targets a (magnitudes, value flip
 * negated) with weights w: its index in *index, the weighted squared error
 * returned.  Rounding each target to its nearest level gives the best
 * vector of levels (the error is a sum over the values); when that is not
 * a point, the best of its neighbour list is taken (of every point
 * without tables).
 */
static float best_point(const struct iq2_format *f, const struct ggml__grid8 *tb, const float *a, const float *w,
                        int flip, float sigma, unsigned *index)
{
    const float inverse = 1.0f / sigma;
    float level[3];
    for (int l = 0; l < 3; l++)
        level[l] = sigma * iq2_levels[l];
    float v[8];
    int t[8];
    for (int j = 0; j < 8; j++) {
        v[j] = j == flip ? -a[j] : a[j];
        const float z = v[j] * inverse;
        t[j] = z > 34.0f ? 2 : z > 16.5f ? 1 : 0;   /* the midpoints of 8, 25, 43 */
    }
    const int32_t entry = tb != NULL ? tb->map[ggml__grid8_key(t)] : -1;
    if (entry >= 0) {
        float err = 0.0f;
        for (int j = 0; j < 8; j++) {
            const float diff = v[j] - level[t[j]];
            err += w[j] * diff * diff;
        }
        *index = (unsigned) entry;
        return err;
    }
    float e[8][4];
    for (int j = 0; j < 8; j++) {
        for (int l = 0; l < 3; l++) {
            const float diff = v[j] - level[l];
            e[j][l] = w[j] * diff * diff;
        }
        e[j][3] = 0.0f;
    }
    if (tb == NULL)
        return ggml__grid8_best(f->points, NULL, f->n_points, e, index);
    const uint16_t *list = tb->neighbours + (-1 - (int64_t) entry);
    return ggml__grid8_best(f->points, list + 1, list[0], e, index);
}

/* Best encoding of a group at sigma; *dot gets sum w t p of the chosen point, *norm sum w p^2. */
static struct group_fit fit_group(const struct iq2_format *f, const struct ggml__grid8 *tb, const float *a,
                                  const float *w, struct group_signs signs, float sigma, float *dot, float *norm)
{
    struct group_fit best = { 0, -1, INFINITY };
    for (int v = 0; v < signs.n_variants; v++) {
        unsigned index;
        const float err = best_point(f, tb, a, w, signs.flip[v], sigma, &index);
        if (v == 0 || err < best.err) {
            best.index = (int) index;
            best.flip = signs.flip[v];
            best.err = err;
        }
    }
    float sum_tp = 0.0f, sum_pp = 0.0f;
    const uint16_t point = f->points[best.index];
    for (int j = 0; j < 8; j++) {
        const float p = iq2_levels[ggml__grid8_level(point, j)];
        const float wp = w[j] * p;
        sum_tp += wp * (j == best.flip ? -a[j] : a[j]);
        sum_pp += wp * p;
    }
    *dot = sum_tp;
    *norm = sum_pp;
    return best;
}

/* One unit's groups: their targets, weights and sign variants. */
struct unit {
    const float *a, *w;
    const struct group_signs *signs;
};

/*
 * Fits the n groups of unit at sigma into fit[]; returns the total error
 * and the least-squares factor for the chosen points in *refit (sigma
 * itself when undefined).
 */
static float fit_unit(const struct iq2_format *f, const struct ggml__grid8 *tb, struct unit u, int n, float sigma,
                      struct group_fit *fit, float *refit)
{
    float err = 0.0f, num = 0.0f, den = 0.0f;
    for (int k = 0; k < n; k++) {
        float dot = 0.0f, norm = 0.0f;
        fit[k] = fit_group(f, tb, u.a + 8 * k, u.w + 8 * k, u.signs[k], sigma, &dot, &norm);
        err += fit[k].err;
        num += dot;
        den += norm;
    }
    *refit = den > 0.0f && num > 0.0f ? num / den : sigma;
    return err;
}

/* Step 1: the best unconstrained factor of a unit of n groups. */
static float best_unit_sigma(const struct iq2_format *f, const struct ggml__grid8 *tb, struct unit u, int n)
{
    float amax = 0.0f;
    for (int j = 0; j < 8 * n; j++)
        amax = u.a[j] > amax ? u.a[j] : amax;
    if (!(amax > 0.0f) || !(amax <= FLT_MAX))
        return amax > 0.0f ? amax / 43.0f : 0.0f;
    struct group_fit fit[4];
    float best = amax / 43.0f, best_err = FLT_MAX;
    for (int t = 0; t < 3; t++) {
        float sigma = amax / (43.0f - 5.0f * (float) t), refit;
        for (int round = 0; round < 3; round++) {
            const float err = fit_unit(f, tb, u, n, sigma, fit, &refit);
            if (err < best_err) {
                best_err = err;
                best = sigma;
            }
            if (refit == sigma)
                break;
            sigma = refit;
        }
    }
    return best;
}

/* The decoder's factor of scale s under d (see decode_group). */
static inline float scale_factor(float d, int s)
{
    return d * (0.5f + (float) s) * 0.25f;
}

/* One block's encoding: d, the scale of each unit, the fit of each group. */
struct block_fit {
    float d;
    uint8_t scale[16];
    struct group_fit group[32];
};

/* Quantizes one block of QK_K values x with weights w into *out (the
   format's fields are written by the caller). */
static void fit_block(const struct iq2_format *f, const struct ggml__grid8 *tb, const float *x, const float *w,
                      struct block_fit *out)
{
    float a[QK_K];
    for (int j = 0; j < QK_K; j++)
        a[j] = fabsf(x[j]);
    struct group_signs signs[QK_K / 8];
    for (int g = 0; g < QK_K / 8; g++)
        signs[g] = group_signs(f, x + 8 * g, a + 8 * g, w + 8 * g);
    const int n = f->unit_groups, n_units = QK_K / 8 / n;
    float sigma[16], sigma_max = 0.0f;
    for (int u = 0; u < n_units; u++) {
        const struct unit unit = { a + 8 * n * u, w + 8 * n * u, signs + n * u };
        sigma[u] = best_unit_sigma(f, tb, unit, n);
        sigma_max = sigma[u] > sigma_max ? sigma[u] : sigma_max;
    }
    memset(out, 0, sizeof *out);
    if (!(sigma_max > 0.0f))
        return;   /* all zero (or weightless): d = 0, every value 0 */

    /* Step 2, unit by unit: every candidate d, the two nearest scales. */
    enum { N_D = 3 };
    static const float d_factors[N_D] = { 1.0f, 0.94f, 1.06f };
    struct block_fit trial[N_D];
    float total[N_D];
    bool valid[N_D];
    for (int c = 0; c < N_D; c++) {
        const float d = ggml__fp16_to_fp32(ggml__fp32_to_fp16(sigma_max * 8.0f / 31.0f * d_factors[c]));
        valid[c] = d > 0.0f && d <= FLT_MAX;
        memset(&trial[c], 0, sizeof trial[c]);
        trial[c].d = d;
        total[c] = 0.0f;
    }
    for (int u = 0; u < n_units; u++) {
        const struct unit unit = { a + 8 * n * u, w + 8 * n * u, signs + n * u };
        for (int c = 0; c < N_D; c++) {
            if (!valid[c])
                continue;
            const float d = trial[c].d;
            /* s with d (2 s + 1) / 8 = sigma: its two neighbours */
            float ideal = (sigma[u] * 8.0f / d - 1.0f) * 0.5f;
            ideal = ideal >= 0.0f ? (ideal <= 15.0f ? ideal : 15.0f) : 0.0f;
            const int lo = (int) ideal, hi = lo < 15 ? lo + 1 : 15;
            float unit_best = FLT_MAX;
            for (int s = lo; s <= hi; s++) {
                struct group_fit fit[4];
                float refit;
                const float err = fit_unit(f, tb, unit, n, scale_factor(d, s), fit, &refit);
                if (err < unit_best) {
                    unit_best = err;
                    trial[c].scale[u] = (uint8_t) s;
                    memcpy(&trial[c].group[n * u], fit, (size_t) n * sizeof fit[0]);
                }
            }
            total[c] += unit_best;
        }
    }
    float best_err = FLT_MAX;
    for (int c = 0; c < N_D; c++)
        if (valid[c] && total[c] < best_err) {
            best_err = total[c];
            *out = trial[c];
        }
}

/* The sign bits of group g as stored: bit j set when value j is stored negative. */
static unsigned stored_signs(const float *x, const struct group_fit *fit)
{
    unsigned signs = 0;
    for (int j = 0; j < 8; j++)
        signs |= (unsigned) (x[j] < 0.0f) << j;
    if (fit->flip >= 0)
        signs ^= 1u << fit->flip;
    return signs;
}

static void quantize_block(int format, const struct ggml__grid8 *tb, const float *x, const float *w, void *dst)
{
    const struct iq2_format *f = &iq2_formats[format];
    struct block_fit fit;
    fit_block(f, tb, x, w, &fit);
    const ggml_fp16_t d = ggml__fp32_to_fp16(fit.d);
    switch (format) {
    case IQ2_XXS: {
        block_iq2_xxs *y = dst;
        y->d = d;
        for (int b = 0; b < QK_K / 32; b++) {
            uint32_t words[2] = { 0, (uint32_t) fit.scale[b] << 28 };
            for (int l = 0; l < 4; l++) {
                const int g = 4 * b + l;
                words[0] |= (uint32_t) fit.group[g].index << (8 * l);
                words[1] |= (uint32_t) (stored_signs(x + 8 * g, &fit.group[g]) & 0x7fu) << (7 * l);
            }
            memcpy(y->qs + 4 * b, words, sizeof words);
        }
        break;
    }
    case IQ2_XS: {
        block_iq2_xs *y = dst;
        y->d = d;
        for (int g = 0; g < QK_K / 8; g++)
            y->qs[g] = (uint16_t) (fit.group[g].index | (stored_signs(x + 8 * g, &fit.group[g]) & 0x7fu) << 9);
        for (int b = 0; b < QK_K / 32; b++)
            y->scales[b] = (uint8_t) (fit.scale[2 * b] | fit.scale[2 * b + 1] << 4);
        break;
    }
    default: {
        block_iq2_s *y = dst;
        y->d = d;
        memset(y->qh, 0, sizeof y->qh);
        for (int g = 0; g < QK_K / 8; g++) {
            y->qs[g] = (uint8_t) (fit.group[g].index & 0xff);
            y->qh[g / 4] |= (uint8_t) ((fit.group[g].index >> 8) << (2 * (g % 4)));
            y->qs[QK_K / 8 + g] = (uint8_t) stored_signs(x + 8 * g, &fit.group[g]);
        }
        for (int b = 0; b < QK_K / 32; b++)
            y->scales[b] = (uint8_t) (fit.scale[2 * b] | fit.scale[2 * b + 1] << 4);
        break;
    }
    }
}

/* nrows rows of n_per_row values (a multiple of QK_K); imatrix may be NULL (weights 1). */
static void quantize_rows(int format, size_t block_size, const float *restrict x, void *restrict y, int64_t nrows,
                          int64_t n_per_row, const float *imatrix)
{
    const struct ggml__grid8 *tb = format_tables(format);
    char *out = y;
    for (int64_t r = 0; r < nrows; r++)
        for (int64_t b = 0; b < n_per_row / QK_K; b++) {
            const float *xb = x + r * n_per_row + b * QK_K;
            float w[QK_K];
            float w_sum = 0.0f;
            for (int j = 0; j < QK_K; j++) {
                w[j] = imatrix != NULL ? imatrix[b * QK_K + j] : 1.0f;
                w[j] = w[j] > 0.0f ? w[j] : 0.0f;   /* negative or NaN weights count as 0 */
                w_sum += w[j];
            }
            if (!(w_sum > 0.0f))
                for (int j = 0; j < QK_K; j++)
                    w[j] = 1.0f;
            quantize_block(format, tb, xb, w, out);
            out += block_size;
        }
}

void ggml__quantize_iq2_xxs(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                            const float *imatrix)
{
    quantize_rows(IQ2_XXS, sizeof(block_iq2_xxs), x, y, nrows, n_per_row, imatrix);
}

void ggml__quantize_iq2_xs(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                           const float *imatrix)
{
    quantize_rows(IQ2_XS, sizeof(block_iq2_xs), x, y, nrows, n_per_row, imatrix);
}

void ggml__quantize_iq2_s(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                          const float *imatrix)
{
    quantize_rows(IQ2_S, sizeof(block_iq2_s), x, y, nrows, n_per_row, imatrix);
}

void ggml__quantize_row_iq2_s_ref(const float *restrict x, void *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(x, y, k, QK_K, __func__);
    if (nb > 0)
        quantize_rows(IQ2_S, sizeof(block_iq2_s), x, y, 1, nb * QK_K, NULL);
}
