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
 *    scan over starting factors amax / L, each followed by rounds of "best
 *    point of every group for this sigma" and "least-squares sigma for
 *    these points".  The best point of a group is found by exhaustive
 *    search over the format's point list (the squared error of a point is
 *    the sum of four lookups in tables of per-coordinate-pair errors), so
 *    no lookup structure is needed.
 * 2. The block's d is chosen among a few candidates around
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

/* The chosen encoding of a group of 8: point index, the value given the
   wrong sign (-1: none), the weighted squared error. */
struct group_fit {
    int index;
    int flip;
    float err;
};

/*
 * What a group's search reuses for every factor sigma.  The weighted
 * squared error of point p at sigma is
 *     sum w t^2 - 2 sigma sum w t p + sigma^2 sum w p^2,
 * so with dot[v][i] = sum w t p (t: the magnitudes, the value flip[v]
 * negated) and norm[i] = sum w p^2 for every point i, a search at one
 * sigma is two products per point.  Variant 0 is the signs as they are;
 * under the parity rule with an odd number of negatives the variants are
 * the two candidate flips instead.
 */
enum { MAX_POINTS = 1024 };

struct group_tables {
    int n_variants;
    int flip[2];
    float base;                  /* sum w t^2 */
    float dot[2][MAX_POINTS];
    float norm[MAX_POINTS];
};

/* Fills dot (target magnitudes a, value flip negated) or, when a is NULL, norm, from pair tables. */
static void point_sums(const struct iq2_format *f, const float *a, const float *w, int flip, float *restrict out)
{
    float pair[4][16];
    for (int k = 0; k < 4; k++) {
        float c[2][4];
        for (int h = 0; h < 2; h++) {
            const int j = 2 * k + h;
            const float t = a == NULL ? 1.0f : (j == flip ? -a[j] : a[j]);
            for (int l = 0; l < 3; l++) {
                const float lv = iq2_levels[l];
                c[h][l] = a == NULL ? w[j] * lv * lv : w[j] * t * lv;
            }
            c[h][3] = 0.0f;   /* not a level of any point */
        }
        for (int code = 0; code < 16; code++)
            pair[k][code] = c[0][code & 3] + c[1][code >> 2];
    }
    const uint16_t *pts = f->points;
    for (int i = 0; i < f->n_points; i++) {
        const unsigned p = pts[i];
        out[i] = pair[0][p & 15] + pair[1][(p >> 4) & 15] + pair[2][(p >> 8) & 15] + pair[3][p >> 12];
    }
}

/* Prepares the search tables of group (values x[8], magnitudes a[8], weights w[8]). */
static void group_tables_init(const struct iq2_format *f, const float *x, const float *a, const float *w,
                              struct group_tables *g)
{
    g->base = 0.0f;
    int negatives = 0;
    for (int j = 0; j < 8; j++) {
        g->base += w[j] * a[j] * a[j];
        negatives += x[j] < 0.0f;
    }
    point_sums(f, NULL, w, -1, g->norm);
    if (!f->parity || negatives % 2 == 0) {
        g->n_variants = 1;
        g->flip[0] = -1;
    } else {
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
        g->n_variants = 2;
        g->flip[0] = c0;
        g->flip[1] = c1;
    }
    for (int v = 0; v < g->n_variants; v++)
        point_sums(f, a, w, g->flip[v], g->dot[v]);
}

/* Best encoding of a group at sigma; *dot gets sum w t p of the chosen point, *norm sum w p^2. */
static struct group_fit fit_group(const struct iq2_format *f, const struct group_tables *g, float sigma,
                                  float *dot, float *norm)
{
    const float s2 = sigma * sigma, t2 = 2.0f * sigma;
    const int n = f->n_points;
    struct group_fit best = { 0, -1, FLT_MAX };
    for (int v = 0; v < g->n_variants; v++) {
        const float *restrict dv = g->dot[v], *restrict nv = g->norm;
        /* 8 lanes of running minima, then the lane holding the least one
           is searched again for its first index */
        float m[8];
        for (int l = 0; l < 8; l++)
            m[l] = FLT_MAX;
        for (int i = 0; i < n; i += 8)
            for (int l = 0; l < 8; l++) {
                const float e = s2 * nv[i + l] - t2 * dv[i + l];
                m[l] = e < m[l] ? e : m[l];
            }
        int lane = 0;
        for (int l = 1; l < 8; l++)
            lane = m[l] < m[lane] ? l : lane;
        if (!(m[lane] < best.err))
            continue;
        int idx = lane;
        for (int i = lane; i < n; i += 8)
            if (s2 * nv[i] - t2 * dv[i] == m[lane]) {
                idx = i;
                break;
            }
        best.err = m[lane];
        best.index = idx;
        best.flip = g->flip[v];
        *dot = dv[idx];
        *norm = nv[idx];
    }
    best.err += g->base;
    return best;
}

/*
 * Fits the n groups of one unit (tables g) at sigma into fit[]; returns
 * the total error and the least-squares factor for the chosen points in
 * *refit (sigma itself when undefined).
 */
static float fit_unit(const struct iq2_format *f, const struct group_tables *g, int n, float sigma,
                      struct group_fit *fit, float *refit)
{
    float err = 0.0f, num = 0.0f, den = 0.0f;
    for (int k = 0; k < n; k++) {
        float dot = 0.0f, norm = 0.0f;
        fit[k] = fit_group(f, &g[k], sigma, &dot, &norm);
        err += fit[k].err;
        num += dot;
        den += norm;
    }
    *refit = den > 0.0f && num > 0.0f ? num / den : sigma;
    return err;
}

/* Step 1: the best unconstrained factor of a unit (magnitudes a, tables g). */
static float best_unit_sigma(const struct iq2_format *f, const float *a, const struct group_tables *g, int n)
{
    float amax = 0.0f;
    for (int j = 0; j < 8 * n; j++)
        amax = a[j] > amax ? a[j] : amax;
    if (!(amax > 0.0f) || !(amax <= FLT_MAX))
        return amax > 0.0f ? amax / 43.0f : 0.0f;
    struct group_fit fit[4];
    float best = amax / 43.0f, best_err = FLT_MAX;
    for (int t = 0; t < 5; t++) {
        float sigma = amax / (43.0f - 5.0f * (float) t), refit;
        for (int round = 0; round < 3; round++) {
            const float err = fit_unit(f, g, n, sigma, fit, &refit);
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

/*
 * Quantizes one block of QK_K values x with weights w into *out (the
 * format's fields are written by the caller).  The tables of a unit are
 * built twice (steps 1 and 2) rather than kept for the whole block, so
 * they stay in the first-level cache.
 */
static void fit_block(const struct iq2_format *f, const float *x, const float *w, struct block_fit *out)
{
    float a[QK_K];
    for (int j = 0; j < QK_K; j++)
        a[j] = fabsf(x[j]);
    const int n = f->unit_groups, n_units = QK_K / 8 / n;
    struct group_tables g[4];
    float sigma[16], sigma_max = 0.0f;
    for (int u = 0; u < n_units; u++) {
        for (int k = 0; k < n; k++)
            group_tables_init(f, x + 8 * (n * u + k), a + 8 * (n * u + k), w + 8 * (n * u + k), &g[k]);
        sigma[u] = best_unit_sigma(f, a + 8 * n * u, g, n);
        sigma_max = sigma[u] > sigma_max ? sigma[u] : sigma_max;
    }
    memset(out, 0, sizeof *out);
    if (!(sigma_max > 0.0f))
        return;   /* all zero (or weightless): d = 0, every value 0 */

    /* Step 2, unit by unit: every candidate d, the two nearest scales. */
    enum { N_D = 5 };
    static const float d_factors[N_D] = { 1.0f, 0.94f, 1.06f, 0.88f, 1.12f };
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
        for (int k = 0; k < n; k++)
            group_tables_init(f, x + 8 * (n * u + k), a + 8 * (n * u + k), w + 8 * (n * u + k), &g[k]);
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
                const float err = fit_unit(f, g, n, scale_factor(d, s), fit, &refit);
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

static void quantize_block(int format, const float *x, const float *w, void *dst)
{
    const struct iq2_format *f = &iq2_formats[format];
    struct block_fit fit;
    fit_block(f, x, w, &fit);
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
            quantize_block(format, xb, w, out);
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
