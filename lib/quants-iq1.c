/*
 * quants-iq1.c - IQ1_S and IQ1_M: decoders, the quantizers' lookup tables
 * and the quantizers.
 *
 * Both formats code every group of 8 values as one of the 2048 points of
 * ggml__iq1_grid (vectors in {-1, 0, +1}^8) plus a shift of +-1/8, times a
 * scale d * (2 s + 1) shared by 32 (IQ1_S) or 16 (IQ1_M) values; IQ1_S
 * shares the shift's sign over 32 values, IQ1_M has one a group.  The
 * decoders compute exactly what ggml's do (single precision: dl = d * (2 s
 * + 1), then dl * (v + delta)), so a block decodes to the same floats
 * everywhere.
 *
 * The quantizers are this library's own.  They minimise the squared error
 * of the decoded values, weighted by the importance weights (by 1 without
 * them).  For one block:
 *   1. every scale unit (32 or 16 values) gets the real scale that fits it
 *      best when each value may take any of the three levels (a scan over
 *      the sorted values: the splits into -1, 0 and +1 that are nearest
 *      levels for some scale, both shifts, with the least-squares scale of
 *      each split);
 *   2. candidate block scales d: the largest unit scale over 15 times 1
 *      and 0.85;
 *   3. for each candidate (rounded to binary16, as stored), every unit
 *      tries the two 3-bit scales just below and above its free scale
 *      (wider windows gave nearly the same blocks on the tests' inputs)
 *      and both shifts; a group's grid point for a scale and shift is the
 *      nearest vector of levels if it lies on the grid, else the best of
 *      its precomputed nearest grid points (a point's error: the sum of
 *      its values' errors at their levels, computed once per group); the
 *      least-squares d of the chosen codes is tried next; the error with
 *      every value at its nearest level bounds a group's error from below,
 *      so choices (and whole candidates) that cannot beat the best found
 *      are dropped early, and a candidate dropped is not refined;
 *   4. the codes of the candidate with the smallest error are stored.
 * Like quants.c this file must be compiled without floating-point
 * contraction.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "quants-iq1-grid.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define IQ1_DELTA (0.125f * (float) IQ1_DELTA_EIGHTHS)
#define GROUP 8

/* ------------------------------------------------------------- decoders */

/* Eight values dl * (v[j] + delta) of grid point index. */
static void decode_group(unsigned index, float dl, float delta, float *y)
{
    const uint16_t code = ggml__iq1_grid[index];
    for (int j = 0; j < GROUP; j++)
        y[j] = dl * ((float) ggml__iq1_grid_value(code, j) + delta);
}

void ggml__dequantize_row_iq1_s(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_iq1_s *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int b = 0; b < QK_K / 32; b++) {
            const unsigned qh = x[i].qh[b];
            const float dl = d * (float) (2 * ((qh >> 12) & 7) + 1);
            const float delta = qh & 0x8000u ? -IQ1_DELTA : IQ1_DELTA;
            for (int l = 0; l < 4; l++) {
                const unsigned index = x[i].qs[4 * b + l] | ((qh >> (3 * l)) & 7) << 8;
                decode_group(index, dl, delta, y + i * QK_K + 32 * b + GROUP * l);
            }
        }
    }
}

void ggml__dequantize_row_iq1_m(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_iq1_m *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(ggml__iq1_m_scale(x[i].scales));
        for (int g = 0; g < QK_K / GROUP; g++) {
            const int h = g / 2;   /* the 16 values of the scale */
            const unsigned word = (unsigned) x[i].scales[2 * (h / 4)] | (unsigned) x[i].scales[2 * (h / 4) + 1] << 8;
            const float dl = d * (float) (2 * ((word >> (3 * (h % 4))) & 7) + 1);
            const unsigned nibble = (x[i].qh[g / 2] >> (4 * (g % 2))) & 0x0f;
            const float delta = nibble & 8 ? -IQ1_DELTA : IQ1_DELTA;
            decode_group(x[i].qs[g] | (nibble & 7) << 8, dl, delta, y + i * QK_K + GROUP * g);
        }
    }
}

/* ---------------------------------------------------------------- tables */

/*
 * The lookup structure over ggml__iq1_grid (quants-grid8.c: level index
 * t[j] + 1 for value level t[j] in {-1, 0, +1}); a vector's neighbour list
 * holds the grid points at squared distance at most one more than the
 * nearest's.
 */
struct iq1_tables {
    struct ggml__grid8 grid;
};

static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static struct iq1_tables *tables;

static_assert(IQ1_GRID_POINTS <= GGML__GRID8_MAX_POINTS, "the IQ1 grid fits the table builder");

static struct iq1_tables *build_tables(void)
{
    struct iq1_tables *tb = malloc(sizeof *tb);
    if (tb != NULL && !ggml__grid8_build(&tb->grid, ggml__iq1_grid, IQ1_GRID_POINTS, 1)) {
        free(tb);
        tb = NULL;
    }
    return tb;
}

bool ggml__iq1_tables_init(void)
{
    pthread_mutex_lock(&tables_lock);
    if (tables == NULL)
        tables = build_tables();
    const bool ok = tables != NULL;
    pthread_mutex_unlock(&tables_lock);
    if (!ok)
        ggml__error("out of memory for the IQ1 quantization tables");
    return ok;
}

void ggml__iq1_tables_free(void)
{
    pthread_mutex_lock(&tables_lock);
    if (tables != NULL) {
        ggml__grid8_release(&tables->grid);
        free(tables);
        tables = NULL;
    }
    pthread_mutex_unlock(&tables_lock);
}

/* ------------------------------------------------------------ quantizers */

/*
 * The grid point for 8 values x with weights w at scale dl > 0 and shift
 * delta, stored in *index; returns the weighted squared error.  The
 * levels nearest to each value (independent of the weights) make the
 * best point when they lie on the grid; otherwise their nearest grid
 * points are tried.
 */
static float best_grid_point(const struct iq1_tables *tb, const float *x, const float *w, float dl, float delta,
                             unsigned *index)
{
    const float inverse = 1.0f / dl;
    int t[GROUP];
    for (int j = 0; j < GROUP; j++) {
        const float z = x[j] * inverse - delta;
        t[j] = z > 0.5f ? 2 : z < -0.5f ? 0 : 1;
    }
    const int32_t entry = tb->grid.map[ggml__grid8_key(t)];
    float level[3];
    for (int l = 0; l < 3; l++)
        level[l] = dl * ((float) (l - 1) + delta);
    if (entry >= 0) {
        float err = 0.0f;
        for (int j = 0; j < GROUP; j++) {
            const float diff = x[j] - level[t[j]];
            err += w[j] * diff * diff;
        }
        *index = (unsigned) entry;
        return err;
    }
    /* each value's error at each level; a point's error is their sum */
    float e[GROUP][4];
    for (int j = 0; j < GROUP; j++) {
        for (int l = 0; l < 3; l++) {
            const float diff = x[j] - level[l];
            e[j][l] = w[j] * diff * diff;
        }
        e[j][3] = 0.0f;
    }
    const uint16_t *list = tb->grid.neighbours + (-1 - (int64_t) entry);
    return ggml__grid8_best(ggml__iq1_grid, list + 1, list[0], e, index);
}

/*
 * The layout-independent description of a block's codes: per scale unit
 * its 3-bit scale, per group its grid index and shift sign.
 */
struct iq1_codes {
    uint8_t scale[QK_K / 16];
    uint16_t index[QK_K / GROUP];
    bool negative[QK_K / GROUP];
};

struct iq1_format {
    int unit;                /* values a 3-bit scale covers: 32 or 16 */
    bool shift_per_group;    /* IQ1_M: each group its own shift sign */
};

/*
 * The smallest weighted squared error of 8 values x (weights w) each at
 * its own nearest level dl (l + delta), l in {-1, 0, +1}: a lower bound
 * of best_grid_point's error, computed the same way term by term.
 */
static float free_levels_error(const float *x, const float *w, float dl, float delta)
{
    float level[3];
    for (int l = 0; l < 3; l++)
        level[l] = dl * ((float) (l - 1) + delta);
    /* the smallest term per value in lanes, then their sum in order */
    float least[GROUP];
    for (int j = 0; j < GROUP; j++) {
        const float d0 = x[j] - level[0], d1 = x[j] - level[1], d2 = x[j] - level[2];
        const float e0 = w[j] * d0 * d0, e1 = w[j] * d1 * d1, e2 = w[j] * d2 * d2;
        const float e01 = e0 < e1 ? e0 : e1;
        least[j] = e2 < e01 ? e2 : e01;
    }
    float err = 0.0f;
    for (int j = 0; j < GROUP; j++)
        err += least[j];
    return err;
}

/* A unit's choices: up to two 3-bit scales, each with both shift signs. */
struct iq1_unit_options {
    int scales;                  /* 1 or 2 */
    uint8_t scale[2];
    float bound[2][2][4];        /* [scale][negative][group]: free_levels_error */
    float least;                 /* the smallest bound of a whole unit */
};

/* The options of a unit (values x, weights w) at the stored scale d: the
   3-bit scales just below and above the unit's free scale, with their
   error bounds. */
static void unit_options(const struct iq1_format *f, const float *x, const float *w, float free_scale, float d,
                         struct iq1_unit_options *o)
{
    const int groups = f->unit / GROUP;
    const float ideal = (free_scale / d - 1.0f) * 0.5f;
    const int below = ideal > 0.0f ? (ideal < 7.0f ? (int) ideal : 7) : 0;
    o->scales = below < 7 ? 2 : 1;
    o->scale[0] = (uint8_t) below;
    o->scale[1] = (uint8_t) (below < 7 ? below + 1 : 7);
    o->least = INFINITY;
    for (int k = 0; k < o->scales; k++) {
        const float dl = d * (float) (2 * o->scale[k] + 1);
        float sum[2] = { 0.0f, 0.0f }, per_group = 0.0f;
        for (int l = 0; l < groups; l++) {
            for (int neg = 0; neg < 2; neg++) {
                o->bound[k][neg][l] = free_levels_error(x + l * GROUP, w + l * GROUP, dl,
                                                        neg ? -IQ1_DELTA : IQ1_DELTA);
                sum[neg] += o->bound[k][neg][l];
            }
            per_group += o->bound[k][0][l] < o->bound[k][1][l] ? o->bound[k][0][l] : o->bound[k][1][l];
        }
        const float least = f->shift_per_group ? per_group : sum[0] < sum[1] ? sum[0] : sum[1];
        o->least = least < o->least ? least : o->least;
    }
}

/*
 * The best codes of one unit (values x, weights w, options o) whose error
 * is below limit, in c (unit u); returns their error, or INFINITY (c
 * unchanged) when no choice gets below limit.  Choices are tried in
 * ascending order of their bounds and dropped as soon as their error so
 * far plus the bounds of their remaining groups reaches the best error
 * found (or limit).
 */
static float unit_codes(const struct iq1_tables *tb, const struct iq1_format *f, const float *x, const float *w,
                        float d, const struct iq1_unit_options *o, float limit, int u, struct iq1_codes *c)
{
    const int groups = f->unit / GROUP;
    /* choice k * 2 + neg; with a shift per group neg is chosen per group */
    const int choices = f->shift_per_group ? o->scales : 2 * o->scales;
    float lower[4][4], total_lower[4];
    for (int ch = 0; ch < choices; ch++) {
        for (int l = 0; l < groups; l++) {
            if (f->shift_per_group) {
                const float b0 = o->bound[ch][0][l], b1 = o->bound[ch][1][l];
                lower[ch][l] = b0 < b1 ? b0 : b1;
            } else {
                lower[ch][l] = o->bound[ch / 2][ch % 2][l];
            }
        }
        /* the bounds of groups l and after, for the test before group l */
        float rest = 0.0f;
        for (int l = groups - 1; l >= 0; l--) {
            rest += lower[ch][l];
            lower[ch][l] = rest;
        }
        total_lower[ch] = rest;
    }
    int rank[4];
    for (int ch = 0; ch < choices; ch++) {
        int at = ch;
        while (at > 0 && total_lower[rank[at - 1]] > total_lower[ch]) {
            rank[at] = rank[at - 1];
            at--;
        }
        rank[at] = ch;
    }
    float best = limit;
    bool found = false;
    for (int r = 0; r < choices; r++) {
        const int ch = rank[r];
        const int k = f->shift_per_group ? ch : ch / 2;
        const float dl = d * (float) (2 * o->scale[k] + 1);
        float err = 0.0f;
        unsigned idx[4];
        bool neg[4];
        int l = 0;
        for (; l < groups && err + lower[ch][l] < best; l++) {
            const float *xg = x + l * GROUP, *wg = w + l * GROUP;
            if (f->shift_per_group) {
                /* the sign with the smaller bound first, the other if it may win */
                const int first = o->bound[k][1][l] < o->bound[k][0][l];
                unsigned i0, i1;
                float e = best_grid_point(tb, xg, wg, dl, first ? -IQ1_DELTA : IQ1_DELTA, &i0);
                neg[l] = first;
                idx[l] = i0;
                if (o->bound[k][!first][l] < e) {
                    const float e1 = best_grid_point(tb, xg, wg, dl, first ? IQ1_DELTA : -IQ1_DELTA, &i1);
                    if (e1 < e) {
                        e = e1;
                        neg[l] = !first;
                        idx[l] = i1;
                    }
                }
                err += e;
            } else {
                neg[l] = ch % 2;
                err += best_grid_point(tb, xg, wg, dl, neg[l] ? -IQ1_DELTA : IQ1_DELTA, &idx[l]);
            }
        }
        if (l < groups || !(err < best))
            continue;
        best = err;
        found = true;
        c->scale[u] = o->scale[k];
        for (int g = 0; g < groups; g++) {
            c->index[u * groups + g] = (uint16_t) idx[g];
            c->negative[u * groups + g] = neg[g];
        }
    }
    return found ? best : INFINITY;
}

/*
 * The best codes for the block x (weights w) at the stored scale d > 0
 * when their weighted squared error is below limit: each unit tries the
 * two 3-bit scales around its free scale free_scale[u] and both shifts
 * (per unit or per group).  Returns the error, or INFINITY when no codes
 * get below limit; *ls_d gets the least-squares d for the chosen codes (0
 * if undefined or none chosen).
 */
static float assign_codes(const struct iq1_tables *tb, const struct iq1_format *f, const float *x, const float *w,
                          const float *free_scale, float d, float limit, struct iq1_codes *c, float *ls_d)
{
    const int units = QK_K / f->unit, groups = f->unit / GROUP;
    struct iq1_unit_options o[QK_K / 16];
    float rest[QK_K / 16 + 1];   /* rest[u]: the bounds of units u and after */
    for (int u = 0; u < units; u++)
        unit_options(f, x + u * f->unit, w + u * f->unit, free_scale[u], d, &o[u]);
    rest[units] = 0.0f;
    for (int u = units - 1; u >= 0; u--)
        rest[u] = rest[u + 1] + o[u].least;
    *ls_d = 0.0f;
    float total = 0.0f;
    for (int u = 0; u < units; u++) {
        if (!(total + rest[u] < limit))
            return INFINITY;
        const float e = unit_codes(tb, f, x + u * f->unit, w + u * f->unit, d, &o[u],
                                   limit - total - rest[u + 1], u, c);
        if (e == INFINITY)
            return INFINITY;
        total += e;
    }
    float sum_xa = 0.0f, sum_aa = 0.0f;
    for (int u = 0; u < units; u++) {
        const float m = (float) (2 * c->scale[u] + 1);
        for (int l = 0; l < groups; l++) {
            const int g = u * groups + l;
            const uint16_t code = ggml__iq1_grid[c->index[g]];
            const float delta = c->negative[g] ? -IQ1_DELTA : IQ1_DELTA;
            for (int j = 0; j < GROUP; j++) {
                const float a = m * ((float) ggml__iq1_grid_value(code, j) + delta);
                const float wx = w[g * GROUP + j] * x[g * GROUP + j];
                sum_xa += wx * a;
                sum_aa += w[g * GROUP + j] * a * a;
            }
        }
    }
    *ls_d = sum_aa > 0.0f && sum_xa > 0.0f ? sum_xa / sum_aa : 0.0f;
    return total;
}

/*
 * The least-squares scale of n values (n at most 32), best over both
 * shifts and every way to put each value at one of the three levels; 0
 * when no way has a positive scale.  The best way puts every value at its
 * level nearest for the best scale itself, so only the ways met while the
 * scale s grows from 0 are scored: a value x > 0 leaves the top level when
 * s passes x / (delta + 1/2), a value x < 0 the bottom level when s passes
 * -x / (1/2 - delta), the others stay at delta.  With the values sorted the
 * positive ones leave in ascending order, the negative ones in descending
 * order, and each step takes whichever of the two comes first: n + 1 ways
 * a shift instead of every split.
 */
static float best_free_scale(const float *x, const float *w, int n)
{
    /* the values padded with +inf to 32, so that the rank loop has a fixed
       length; a value's rank counts the smaller values and its equals
       before it */
    float padded[32];
    for (int i = 0; i < 32; i++)
        padded[i] = i < n ? x[i] : INFINITY;
    float v[32], vw[32];
    for (int i = 0; i < n; i++) {
        int rank = 0;
        for (int j = 0; j < 32; j++)
            rank += (padded[j] < padded[i]) | ((padded[j] == padded[i]) & (j < i));
        v[rank] = x[i];
        vw[rank] = w[i];
    }
    /* prefix sums of w x and w over the sorted values */
    float px[33], pw[33];
    int negatives = 0, positive_from = n;
    px[0] = pw[0] = 0.0f;
    for (int i = 0; i < n; i++) {
        px[i + 1] = px[i] + vw[i] * v[i];
        pw[i + 1] = pw[i] + vw[i];
        negatives += v[i] < 0.0f;
        if (v[i] > 0.0f && positive_from == n)
            positive_from = i;
    }
    float best_gain = 0.0f, best_scale = 0.0f;
    for (int sign = 0; sign < 2; sign++) {
        const float delta = sign ? -IQ1_DELTA : IQ1_DELTA;
        const float lo = delta - 1.0f, hi = delta + 1.0f;
        const float rise_top = 0.5f + delta, rise_bottom = 0.5f - delta;
        /* values [0, i1) at lo, [i1, i2) at delta, [i2, n) at hi */
        int i1 = negatives, i2 = positive_from;
        for (;;) {
            const float sxa = lo * px[i1] + delta * (px[i2] - px[i1]) + hi * (px[n] - px[i2]);
            const float saa = lo * lo * pw[i1] + delta * delta * (pw[i2] - pw[i1]) + hi * hi * (pw[n] - pw[i2]);
            /* sxa^2 / saa > best_gain without the division */
            if (sxa > 0.0f && saa > 0.0f && sxa * sxa > best_gain * saa) {
                best_gain = sxa * sxa / saa;
                best_scale = sxa / saa;
            }
            if (i1 == 0 && i2 == n)
                break;
            if (i1 == 0 || (i2 < n && v[i2] * rise_bottom <= -v[i1 - 1] * rise_top))
                i2++;
            else
                i1--;
        }
    }
    return best_scale;
}

/* The codes of one block (best of the candidates described at the top);
   *d_out gets the stored scale (0 for a block that is all zero). */
static void quantize_block(const struct iq1_tables *tb, const struct iq1_format *f, const float *xin,
                           const float *win, struct iq1_codes *c, ggml_fp16_t *d_out)
{
    /* non-finite and huge inputs are clamped so that no sum overflows */
    float x[QK_K], w[QK_K];
    float amax = 0.0f;
    for (int j = 0; j < QK_K; j++) {
        float v = xin[j];
        v = v != v ? 0.0f : v > 1e6f ? 1e6f : v < -1e6f ? -1e6f : v;
        x[j] = v;
        w[j] = win != NULL ? (win[j] > 0.0f && win[j] < 1e30f ? win[j] : 0.0f) : 1.0f;
        if (fabsf(v) > amax)
            amax = fabsf(v);
    }
    memset(c, 0, sizeof *c);
    *d_out = 0;
    if (amax == 0.0f)
        return;
    float max_scale = 0.0f, free_scale[QK_K / 16];
    for (int u = 0; u < QK_K / f->unit; u++) {
        free_scale[u] = best_free_scale(x + u * f->unit, w + u * f->unit, f->unit);
        if (free_scale[u] > max_scale)
            max_scale = free_scale[u];
    }
    if (max_scale == 0.0f)
        max_scale = amax;   /* all weights zero: any scale; keep the range */

    static const float factors[] = { 1.0f, 0.85f };
    float best = INFINITY;
    struct iq1_codes trial;
    for (size_t fi = 0; fi < sizeof factors / sizeof factors[0]; fi++) {
        float candidate = max_scale / 15.0f * factors[fi];
        ggml_fp16_t tried = 0;
        for (int round = 0; round < 2 && candidate > 0.0f; round++) {
            const ggml_fp16_t h = ggml__fp32_to_fp16(candidate < 65504.0f ? candidate : 65504.0f);
            const float d = ggml__fp16_to_fp32(h);
            if (!(d > 0.0f) || h == tried)   /* the same d gives the same codes */
                break;
            tried = h;
            const float err = assign_codes(tb, f, x, w, free_scale, d, best, &trial, &candidate);
            if (err < best) {
                best = err;
                *c = trial;
                *d_out = h;
            }
        }
    }
}

/* nrows rows of n_per_row values (a multiple of QK_K, checked by the
   caller) into blocks of block_size bytes written by store; returns false
   after logging when the tables cannot be built. */
static bool quantize_rows(const struct iq1_format *f, const float *restrict x, void *restrict vy, int64_t nrows,
                          int64_t n_per_row, const float *imatrix, size_t block_size,
                          void (*store)(const struct iq1_codes *, ggml_fp16_t, void *))
{
    if (!ggml__iq1_tables_init())
        return false;
    const struct iq1_tables *tb = tables;
    char *y = vy;
    for (int64_t r = 0; r < nrows; r++)
        for (int64_t b = 0; b < n_per_row / QK_K; b++) {
            struct iq1_codes c;
            ggml_fp16_t d;
            quantize_block(tb, f, x + r * n_per_row + b * QK_K, imatrix != NULL ? imatrix + b * QK_K : NULL, &c, &d);
            store(&c, d, y + (size_t) (r * (n_per_row / QK_K) + b) * block_size);
        }
    return true;
}

static void store_iq1_s(const struct iq1_codes *c, ggml_fp16_t d, void *out)
{
    block_iq1_s *y = out;
    y->d = d;
    for (int b = 0; b < QK_K / 32; b++) {
        unsigned qh = (unsigned) c->scale[b] << 12 | (c->negative[4 * b] ? 0x8000u : 0u);
        for (int l = 0; l < 4; l++) {
            const unsigned index = c->index[4 * b + l];
            y->qs[4 * b + l] = (uint8_t) (index & 0xff);
            qh |= (index >> 8) << (3 * l);
        }
        y->qh[b] = (uint16_t) qh;
    }
}

static void store_iq1_m(const struct iq1_codes *c, ggml_fp16_t d, void *out)
{
    block_iq1_m *y = out;
    memset(y, 0, sizeof *y);
    for (int g = 0; g < QK_K / GROUP; g++) {
        y->qs[g] = (uint8_t) (c->index[g] & 0xff);
        const unsigned nibble = (unsigned) (c->index[g] >> 8) | (c->negative[g] ? 8u : 0u);
        y->qh[g / 2] |= (uint8_t) (nibble << (4 * (g % 2)));
    }
    for (int w = 0; w < 4; w++) {
        unsigned word = (unsigned) (d >> (4 * w) & 0x0f) << 12;
        for (int h = 0; h < 4; h++)
            word |= (unsigned) c->scale[4 * w + h] << (3 * h);
        y->scales[2 * w] = (uint8_t) (word & 0xff);
        y->scales[2 * w + 1] = (uint8_t) (word >> 8);
    }
}

bool ggml__quantize_iq1_s(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                          const float *imatrix)
{
    if (imatrix == NULL) {
        ggml__error("quantization to iq1_s requires importance weights");
        return false;
    }
    const struct iq1_format f = { 32, false };
    return quantize_rows(&f, x, y, nrows, n_per_row, imatrix, sizeof(block_iq1_s), store_iq1_s);
}

bool ggml__quantize_iq1_m(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                          const float *imatrix)
{
    const struct iq1_format f = { 16, true };
    return quantize_rows(&f, x, y, nrows, n_per_row, imatrix, sizeof(block_iq1_m), store_iq1_m);
}
