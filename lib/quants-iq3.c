/*
 * quants-iq3.c - the 3-bit codebook formats IQ3_XXS and IQ3_S (layouts in
 * quants-impl.h, codebooks in quants-iq3-grids.h).
 *
 * The decoders compute exactly what ggml's do (single precision, the same
 * products in the same order), so a block decodes to the same floats
 * everywhere.
 *
 * The quantizers are this library's own.  They minimise the squared error
 * of the decoded values, weighted by the importance weights when
 * ggml_quantize_chunk gets them (by 1 otherwise):
 *   1. signs: each value's own sign; IQ3_XXS stores an even number of
 *      negative signs per eight values, so where x has an odd number the
 *      value whose flip costs least (smallest w x^2) gets the other sign
 *      and its magnitude target becomes -|x| (the codebook then picks the
 *      magnitude that hurts least);
 *   2. each sub-block's best real scale: a scan over 12 inverse scales; for
 *      each, every group of four magnitudes is rounded to the per-value
 *      level lattice (8^4 points) and the candidate codebook points listed
 *      for that lattice point (the nearest ones, built once: the lookup
 *      tables) are compared by the weighted error; the least-squares scale
 *      of the chosen points follows, and the scan keeps the scale with the
 *      smallest error, refined by re-rounding with it (a step whose points
 *      equal the previous step's is skipped, a refinement stops at a fixed
 *      point);
 *   3. the block scale d: a few candidates around "largest sub-block scale
 *      / 31" (5 of them), each rounded to binary16; for each, every
 *      sub-block tries the 4-bit scales just below and just above its best
 *      real scale, re-choosing its points with the scale actually stored,
 *      and the candidate with the smallest total error is kept.
 * Non-finite inputs count as 0; a block scale beyond binary16's range
 * saturates at 65504.  Like quants.c this file must be compiled without
 * floating-point contraction.
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
#include "quants-iq3-grids.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define SUB 32                  /* values per sub-block */
#define SUBS (QK_K / SUB)       /* sub-blocks per block */
#define GROUPS (QK_K / 4)       /* codebook points per block */
#define LATTICE 4096            /* 8 levels ^ 4 values */

/* ------------------------------------------------------------- decoders */

/* Magnitude j (0..3) of codebook entry e. */
static inline float grid_value(uint32_t e, int j)
{
    return (float) ((e >> (8 * j)) & 0xffu);
}

void ggml__dequantize_row_iq3_xxs(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_iq3_xxs *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int s = 0; s < SUBS; s++) {
            uint32_t word;
            memcpy(&word, x[i].qs + QK_K / 4 + 4 * s, sizeof word);
            const float scale = d * (0.5f + (float) (word >> 28)) * 0.5f;
            for (int v = 0; v < SUB; v++) {
                const uint32_t e = ggml__iq3_xxs_grid[x[i].qs[8 * s + v / 4]];
                const uint8_t signs = ggml__iq3_xxs_signs(word >> (7 * (v / 8)));
                const float value = scale * grid_value(e, v % 4);
                y[i * QK_K + SUB * s + v] = (signs >> (v % 8)) & 1 ? -value : value;
            }
        }
    }
}

void ggml__dequantize_row_iq3_s(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_iq3_s *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int s = 0; s < SUBS; s++) {
            const int l = (x[i].scales[s / 2] >> (4 * (s % 2))) & 0x0f;
            const float scale = d * (float) (1 + 2 * l);
            for (int v = 0; v < SUB; v++) {
                const int g = 8 * s + v / 4;
                const uint32_t e = ggml__iq3_s_grid[x[i].qs[g] | ((x[i].qh[s] >> (g % 8)) & 1) << 8];
                const float value = scale * grid_value(e, v % 4);
                const int at = SUB * s + v;
                y[i * QK_K + at] = (x[i].signs[at / 8] >> (at % 8)) & 1 ? -value : value;
            }
        }
    }
}

/* ------------------------------------------------------- lookup tables */

/*
 * A codebook and the candidates of each lattice point.  A lattice point
 * is four level numbers (0..7) i_0 + 8 i_1 + 64 i_2 + 512 i_3; its
 * candidates first[p] .. first[p + 1] - 1 in list are the codebook points
 * whose squared distance to it is at most the nearest one's plus one
 * level step squared (nearest first).
 */
struct iq3_codec {
    const uint32_t *grid;
    int grid_size;
    uint8_t levels[8];      /* the magnitudes, increasing */
    float cuts[7];          /* midpoints between consecutive levels */
    int step;               /* the usual distance of consecutive levels */
    uint32_t *first;        /* LATTICE + 1 offsets into list */
    uint16_t *list;
    float *list_values;     /* the four magnitudes of each list entry */
};

static struct iq3_codec xxs_codec = {
    .grid = ggml__iq3_xxs_grid, .grid_size = 256, .levels = { 4, 12, 20, 28, 36, 44, 52, 62 }, .step = 8,
};
static struct iq3_codec s_codec = {
    .grid = ggml__iq3_s_grid, .grid_size = 512, .levels = { 1, 3, 5, 7, 9, 11, 13, 15 }, .step = 2,
};

static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;

static void codec_free(struct iq3_codec *c)
{
    free(c->first);
    free(c->list);
    free(c->list_values);
    c->first = NULL;
    c->list = NULL;
    c->list_values = NULL;
}

/* Builds c's candidate lists; false when memory runs out. */
static bool codec_build(struct iq3_codec *c)
{
    if (c->first != NULL)
        return true;
    for (int i = 0; i < 7; i++)
        c->cuts[i] = 0.5f * (float) (c->levels[i] + c->levels[i + 1]);

    /* the grid's magnitudes by position, and the squared distances, in
       16 bits (at most 4 * 62^2) so that the loops over the grid vectorize */
    int16_t *gv = malloc((size_t) c->grid_size * 4 * sizeof *gv);
    int16_t *dist = malloc((size_t) c->grid_size * sizeof *dist);
    uint16_t *near = malloc((size_t) c->grid_size * sizeof *near);
    uint32_t *first = malloc((LATTICE + 1) * sizeof *first);
    /* first pass counts, second fills */
    uint16_t *list = NULL;
    float *values = NULL;
    bool ok = gv != NULL && dist != NULL && near != NULL && first != NULL;
    for (int j = 0; ok && j < 4; j++)
        for (int e = 0; e < c->grid_size; e++)
            gv[j * c->grid_size + e] = (int16_t) ((c->grid[e] >> (8 * j)) & 0xff);
    for (int pass = 0; ok && pass < 2; pass++) {
        uint32_t n = 0;
        for (int p = 0; p < LATTICE; p++) {
            const int16_t *g0 = gv, *g1 = gv + c->grid_size, *g2 = gv + 2 * c->grid_size,
                          *g3 = gv + 3 * c->grid_size;
            const int16_t l0 = c->levels[p & 7], l1 = c->levels[(p >> 3) & 7], l2 = c->levels[(p >> 6) & 7],
                          l3 = c->levels[(p >> 9) & 7];
            for (int e = 0; e < c->grid_size; e++) {
                const int16_t d0 = (int16_t) (l0 - g0[e]), d1 = (int16_t) (l1 - g1[e]),
                              d2 = (int16_t) (l2 - g2[e]), d3 = (int16_t) (l3 - g3[e]);
                dist[e] = (int16_t) (d0 * d0 + d1 * d1 + d2 * d2 + d3 * d3);
            }
            int16_t best = INT16_MAX;
            for (int e = 0; e < c->grid_size; e++)
                best = dist[e] < best ? dist[e] : best;
            first[p] = n;
            /* the near ones, nearest first (ties by index): insertion sort */
            int count = 0;
            for (int e = 0; e < c->grid_size; e++) {
                if (dist[e] > best + c->step * c->step)
                    continue;
                int at = count++;
                if (pass == 0)
                    continue;   /* counting only */
                while (at > 0 && dist[near[at - 1]] > dist[e]) {
                    near[at] = near[at - 1];
                    at--;
                }
                near[at] = (uint16_t) e;
            }
            if (pass == 1) {
                for (int k = 0; k < count; k++) {
                    list[n + (uint32_t) k] = near[k];
                    for (int j = 0; j < 4; j++)
                        values[4 * (n + (uint32_t) k) + (uint32_t) j] = grid_value(c->grid[near[k]], j);
                }
            }
            n += (uint32_t) count;
        }
        first[LATTICE] = n;
        if (pass == 0) {
            list = malloc((size_t) n * sizeof *list);
            values = malloc((size_t) n * 4 * sizeof *values);
            ok = list != NULL && values != NULL;
        }
    }
    free(gv);
    free(dist);
    free(near);
    if (!ok) {
        free(first);
        free(list);
        free(values);
        ggml__error("out of memory for the IQ3 quantization tables");
        return false;
    }
    c->first = first;
    c->list = list;
    c->list_values = values;
    return true;
}

bool ggml__iq3_tables_init(void)
{
    pthread_mutex_lock(&tables_lock);
    const bool ok = codec_build(&xxs_codec) && codec_build(&s_codec);
    pthread_mutex_unlock(&tables_lock);
    return ok;
}

/* Builds the tables of c alone (the first use of one format). */
static bool codec_init(struct iq3_codec *c)
{
    pthread_mutex_lock(&tables_lock);
    const bool ok = codec_build(c);
    pthread_mutex_unlock(&tables_lock);
    return ok;
}

void ggml__iq3_tables_free(void)
{
    pthread_mutex_lock(&tables_lock);
    codec_free(&xxs_codec);
    codec_free(&s_codec);
    pthread_mutex_unlock(&tables_lock);
}

/* ------------------------------------------------------------ searches */

/*
 * The codebook point for four magnitude targets t (negative: the sign is
 * wrong, see above) with weights w at inverse scale inv: the candidate of
 * the nearest lattice point with the smallest weighted error
 * sum w (t inv - g)^2, returned as its index in c->list; *err gets that
 * error in units of the scale.
 */
static uint32_t best_point(const struct iq3_codec *c, const float *t, const float *w, float inv, float *err)
{
    float u[4];
    int n[4] = { 0, 0, 0, 0 };
    for (int j = 0; j < 4; j++)
        u[j] = t[j] * inv;
    /* the level number: how many cuts lie below (the cuts increase) */
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 7; i++)
            n[j] += u[j] > c->cuts[i];
    const int p = n[0] | n[1] << 3 | n[2] << 6 | n[3] << 9;
    const uint32_t end = c->first[p + 1];
    uint32_t best = c->first[p];
    float best_err = FLT_MAX;
    for (uint32_t k = c->first[p]; k < end; k++) {
        const float *g = c->list_values + 4 * k;
        float sum = 0.0f;
        for (int j = 0; j < 4; j++) {
            const float diff = u[j] - g[j];
            sum += w[j] * diff * diff;
        }
        if (sum < best_err) {
            best_err = sum;
            best = k;
        }
    }
    *err = best_err;
    return best;
}

/*
 * The points of a sub-block (SUB targets, SUB / 4 points) at inverse
 * scale inv, their magnitudes in g; returns the weighted error
 * sum w (t - g / inv)^2 in x units.
 */
static float sub_points(const struct iq3_codec *c, const float *t, const float *w, float inv, uint16_t *points,
                        float *g)
{
    float err = 0.0f;
    for (int q = 0; q < SUB / 4; q++) {
        float e;
        const uint32_t k = best_point(c, t + 4 * q, w + 4 * q, inv, &e);
        points[q] = c->list[k];
        memcpy(g + 4 * q, c->list_values + 4 * k, 4 * sizeof *g);
        err += e;
    }
    return err / (inv * inv);
}

/*
 * The least-squares fit of magnitudes g to the targets: returns its scale
 * tg / gg (0: none) and in *gain tg^2 / gg, by which it lowers the error
 * below sum w t^2 (the larger the better).
 */
static float lsq_fit(const float *t, const float *w, const float *g, float *gain)
{
    float tg[4] = { 0.0f, 0.0f, 0.0f, 0.0f }, gg[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
    for (int v = 0; v < SUB; v += 4)
        for (int j = 0; j < 4; j++) {
            const float wg = w[v + j] * g[v + j];
            tg[j] += wg * t[v + j];
            gg[j] += wg * g[v + j];
        }
    const float stg = (tg[0] + tg[1]) + (tg[2] + tg[3]), sgg = (gg[0] + gg[1]) + (gg[2] + gg[3]);
    if (!(stg > 0.0f && sgg > 0.0f)) {
        *gain = 0.0f;
        return 0.0f;
    }
    const float scale = stg / sgg;
    *gain = scale * stg;
    return scale;
}

/* The real scale that fits a sub-block best (0 when all targets are <= 0). */
static float best_sub_scale(const struct iq3_codec *c, const float *t, const float *w)
{
    float tmax = 0.0f;
    for (int v = 0; v < SUB; v++)
        tmax = t[v] > tmax ? t[v] : tmax;
    if (tmax <= 0.0f)
        return 0.0f;

    uint16_t points[SUB / 4], last[SUB / 4];
    float g[SUB];
    float best_scale = 0.0f, best_gain = 0.0f;
    const float top = (float) c->levels[7];
    for (int i = 0; i < 12; i++) {
        /* the largest target lands between 0.6 and 1.04 of the top level */
        const float inv = top * (0.6f + 0.04f * (float) i) / tmax;
        sub_points(c, t, w, inv, points, g);
        /* the same points as the previous step's: the same refinement */
        if (i > 0 && memcmp(points, last, sizeof points) == 0)
            continue;
        memcpy(last, points, sizeof points);
        float gain;
        float scale = lsq_fit(t, w, g, &gain);
        for (int round = 0; round < 3 && scale > 0.0f; round++) {
            if (gain > best_gain) {
                best_gain = gain;
                best_scale = scale;
            } else if (round > 0) {
                break;
            }
            uint16_t next[SUB / 4];
            sub_points(c, t, w, 1.0f / scale, next, g);
            if (memcmp(next, points, sizeof next) == 0)
                break;   /* a fixed point */
            memcpy(points, next, sizeof next);
            scale = lsq_fit(t, w, g, &gain);
        }
    }
    return best_scale;
}

/*
 * Block quantization common to both formats.  In: t (magnitude targets,
 * see step 1), w (positive weights).  Out: the points, the 4-bit scales
 * and d (binary16).  scale_of(d, l) is the format's sub-block scale
 * exactly as its decoder computes it.
 */
struct block_choice {
    uint16_t points[GROUPS];
    uint8_t l[SUBS];
    ggml_fp16_t d;
};

static float xxs_scale(float d, int l)
{
    return d * (0.5f + (float) l) * 0.5f;
}

static float s_scale(float d, int l)
{
    return d * (float) (1 + 2 * l);
}

static void quantize_block(const struct iq3_codec *c, float (*scale_of)(float, int), float unit, const float *t,
                           const float *w, struct block_choice *out)
{
    memset(out, 0, sizeof *out);
    float best[SUBS], smax = 0.0f;
    for (int s = 0; s < SUBS; s++) {
        best[s] = best_sub_scale(c, t + SUB * s, w + SUB * s);
        if (best[s] > smax)
            smax = best[s];
    }
    if (!(smax > 0.0f))
        return;   /* nothing positive to encode: d = 0 decodes zeros */

    double best_total = DBL_MAX;
    for (int cand = 0; cand < 9; cand += 2) {
        /* the largest sub-block scale would be 4-bit scale 15 at 27, 29 .. 35 */
        const float want = smax / (27.0f + (float) cand) / unit;
        ggml_fp16_t d16 = ggml__fp32_to_fp16(want < 65504.0f ? want : 65504.0f);
        if (ggml__fp16_to_fp32(d16) == 0.0f)
            d16 = 1;   /* the smallest subnormal: tiny blocks keep some signal */
        const float d = ggml__fp16_to_fp32(d16);
        if (cand > 0 && d16 == out->d)
            continue;

        struct block_choice trial;
        trial.d = d16;
        double total = 0.0;
        for (int s = 0; s < SUBS && total < best_total; s++) {
            const float *ts = t + SUB * s, *ws = w + SUB * s;
            /* 2 l + 1 for the best scale; beyond 31 (d saturated, or a
               subnormal d far below a sub-block's scale) the largest l */
            float ideal = best[s] / (d * unit);
            if (!(ideal <= 31.0f))
                ideal = 31.0f;
            const int l0 = (int) floorf((ideal - 1.0f) * 0.5f);
            double sub_best = DBL_MAX;
            for (int l = l0; l <= l0 + 1; l++) {
                if (l < 0 || l > 15)
                    continue;
                uint16_t points[SUB / 4];
                float g[SUB];
                const float scale = scale_of(d, l);
                if (!(scale > 0.0f))
                    continue;
                const double err = sub_points(c, ts, ws, 1.0f / scale, points, g);
                if (err < sub_best) {
                    sub_best = err;
                    trial.l[s] = (uint8_t) l;
                    memcpy(trial.points + (SUB / 4) * s, points, sizeof points);
                }
            }
            if (sub_best == DBL_MAX) {
                /* only when the scale collapses: every l equally bad */
                trial.l[s] = 0;
                memset(trial.points + (SUB / 4) * s, 0, (SUB / 4) * sizeof(uint16_t));
                sub_best = 0.0;
                for (int v = 0; v < SUB; v++)
                    sub_best += (double) ws[v] * ts[v] * ts[v];
            }
            total += sub_best;
        }
        if (total < best_total) {
            best_total = total;
            *out = trial;
        }
    }
}

/* Non-finite values count as 0. */
static inline float finite_or_zero(float v)
{
    return v - v == 0.0f ? v : 0.0f;
}

static void quantize_block_iq3_xxs(const float *x, const float *w, void *vy)
{
    block_iq3_xxs *y = vy;
    float t[QK_K];
    uint8_t negative[QK_K];
    for (int v = 0; v < QK_K; v++) {
        const float xv = finite_or_zero(x[v]);
        t[v] = fabsf(xv);
        negative[v] = xv < 0.0f;
    }
    /* step 1: an even number of negative signs per eight values */
    for (int h = 0; h < QK_K / 8; h++) {
        int count = 0, cheapest = 8 * h;
        for (int j = 8 * h; j < 8 * h + 8; j++) {
            count += negative[j];
            if (w[j] * t[j] * t[j] < w[cheapest] * t[cheapest] * t[cheapest])
                cheapest = j;
        }
        if (count % 2 != 0) {
            negative[cheapest] ^= 1;
            t[cheapest] = -t[cheapest];
        }
    }
    struct block_choice choice;
    quantize_block(&xxs_codec, xxs_scale, 0.25f, t, w, &choice);

    y->d = choice.d;
    for (int g = 0; g < GROUPS; g++)
        y->qs[g] = (uint8_t) choice.points[g];
    for (int s = 0; s < SUBS; s++) {
        uint32_t word = (uint32_t) choice.l[s] << 28;
        for (int h = 0; h < 4; h++)
            for (int j = 0; j < 7; j++)
                word |= (uint32_t) negative[SUB * s + 8 * h + j] << (7 * h + j);
        memcpy(y->qs + QK_K / 4 + 4 * s, &word, sizeof word);
    }
}

static void quantize_block_iq3_s(const float *x, const float *w, void *vy)
{
    block_iq3_s *y = vy;
    float t[QK_K];
    memset(y, 0, sizeof *y);
    for (int v = 0; v < QK_K; v++) {
        const float xv = finite_or_zero(x[v]);
        t[v] = fabsf(xv);
        if (xv < 0.0f)
            y->signs[v / 8] |= (uint8_t) (1u << (v % 8));
    }
    struct block_choice choice;
    quantize_block(&s_codec, s_scale, 1.0f, t, w, &choice);

    y->d = choice.d;
    for (int g = 0; g < GROUPS; g++) {
        y->qs[g] = (uint8_t) (choice.points[g] & 0xff);
        y->qh[g / 8] |= (uint8_t) ((choice.points[g] >> 8) << (g % 8));
    }
    for (int s = 0; s < SUBS; s++)
        y->scales[s / 2] |= (uint8_t) (choice.l[s] << (4 * (s % 2)));
}

/* ------------------------------------------------------------ row entries */

/*
 * Quantizes nrows rows of n_per_row values block by block; the weights of
 * a block are the importance weights of its columns, or 1.  False after
 * logging when the lookup tables cannot be built.
 */
static bool quantize_rows(struct iq3_codec *c, void (*quantize)(const float *, const float *, void *),
                          size_t block_size, const float *x,
                          void *y, int64_t nrows, int64_t n_per_row, const float *imatrix, const char *func)
{
    const int64_t nb = ggml__quant_row_blocks(x, y, n_per_row, QK_K, func);
    if (nb <= 0 || nrows <= 0)
        return true;
    if (!codec_init(c))
        return false;
    char *out = y;
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t i = 0; i < nb; i++) {
            /* a weight that is not a positive number counts (almost) nothing */
            float w[QK_K];
            for (int j = 0; j < QK_K; j++) {
                const float v = imatrix != NULL ? imatrix[i * QK_K + j] : 1.0f;
                w[j] = (v > 0.0f && v <= FLT_MAX ? v : 0.0f) + 1e-30f;
            }
            quantize(x + r * n_per_row + i * QK_K, w, out);
            out += block_size;
        }
    }
    return true;
}

void ggml__quantize_row_iq3_xxs_ref(const float *restrict x, void *restrict y, int64_t k)
{
    quantize_rows(&xxs_codec, quantize_block_iq3_xxs, sizeof(block_iq3_xxs), x, y, 1, k, NULL, __func__);
}

void ggml__quantize_row_iq3_s_ref(const float *restrict x, void *restrict y, int64_t k)
{
    quantize_rows(&s_codec, quantize_block_iq3_s, sizeof(block_iq3_s), x, y, 1, k, NULL, __func__);
}

bool ggml__quantize_iq3_xxs(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                            const float *imatrix)
{
    return quantize_rows(&xxs_codec, quantize_block_iq3_xxs, sizeof(block_iq3_xxs), x, y, nrows, n_per_row, imatrix,
                         __func__);
}

bool ggml__quantize_iq3_s(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                          const float *imatrix)
{
    return quantize_rows(&s_codec, quantize_block_iq3_s, sizeof(block_iq3_s), x, y, nrows, n_per_row, imatrix,
                         __func__);
}
