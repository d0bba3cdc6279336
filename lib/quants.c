/*
 * quants.c - reference quantizers for the 32-value block formats, and the
 * public quantization entry points.
 *
 * Bit-identity.  Model files made by this library must be byte-for-byte
 * the files ggml makes, so each reference quantizer repeats ggml's float
 * arithmetic exactly: the same comparisons when searching the block's
 * extreme values (they decide which of several equal magnitudes wins, and
 * what a NaN does), the same single-precision operations in the same order,
 * and the same conversion of the scaled value to an integer (truncation of
 * x + 0.5 or x + 8.5, or roundf, as noted at each type).  This file must be
 * compiled without -ffast-math and without floating-point contraction
 * (GCC's default in ISO C mode), or results may change in the last bit.
 *
 * Non-finite input.  C leaves converting NaN, an infinity or a value
 * beyond the integer type undefined, and ggml converts its scaled values
 * without a check (only NaN or infinite input, or a block whose scale
 * overflows, gets there).  Here every conversion goes through
 * ggml__float_to_int into the range of quant levels it stores: such a
 * value saturates to the lowest or highest level and NaN gives level 0.
 * Inside that range this is C's truncation, so finite input quantizes
 * exactly as ggml quantizes it.
 */
#include "config.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "kernels.h"

/* GCC does not contract in ISO C mode; clang needs to be told. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* ------------------------------------------------------------ conversions */

/* The quant level of a scaled value v, truncated, in [0, hi]: as
   ggml__trunc_level(v, 0, hi) (NaN fails the first test and gives 0). */
static inline int level(float v, int hi)
{
    v = v > 0.0f ? v : 0.0f;
    v = v < (float) hi ? v : (float) hi;
    return (int) v;
}

/*
 * Checks a row call.  Returns the number of blocks, or -1 after logging
 * (as func) when k is negative or not a multiple of qk, or a pointer is
 * NULL while there is work to do.
 */
int64_t ggml__quant_row_blocks(const void *x, const void *y, int64_t k, int64_t qk, const char *func)
{
    if (k < 0 || k % qk != 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "row length %" PRId64 " is not a multiple of the block size %" PRId64, k, qk);
        return -1;
    }
    if (k > 0 && (x == NULL || y == NULL)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "NULL %s",
                     x == NULL ? "source" : "destination");
        return -1;
    }
    return k / qk;
}

static inline int64_t row_blocks(const void *x, const void *y, int64_t k, int64_t qk, const char *func)
{
    return ggml__quant_row_blocks(x, y, k, qk, func);
}

/* ------------------------------------------------------- symmetric 4/5-bit */

/*
 * The loops below work on fixed 32-value blocks in LANES independent lanes
 * (so that the compiler can keep them in vector registers without
 * reordering a floating-point sum), and the results do not depend on the
 * order: a maximum or minimum is the same value whichever equal element
 * wins, except for the sign of a zero, which is settled afterwards.
 */
enum { LANES = 8 };

/* The largest of the lanes (none NaN), as a tree. */
static inline float lanes_max(const float a[LANES])
{
    float b[LANES / 2];
    for (int k = 0; k < LANES / 2; k++)
        b[k] = a[k + LANES / 2] > a[k] ? a[k + LANES / 2] : a[k];
    const float c0 = b[2] > b[0] ? b[2] : b[0], c1 = b[3] > b[1] ? b[3] : b[1];
    return c1 > c0 ? c1 : c0;
}

/* The smallest of the lanes (none NaN), as a tree. */
static inline float lanes_min(const float a[LANES])
{
    float b[LANES / 2];
    for (int k = 0; k < LANES / 2; k++)
        b[k] = a[k + LANES / 2] < a[k] ? a[k + LANES / 2] : a[k];
    const float c0 = b[2] < b[0] ? b[2] : b[0], c1 = b[3] < b[1] ? b[3] : b[1];
    return c1 < c0 ? c1 : c0;
}

/* Packs 32 codes (< 16 after masking) as nibbles: value j low, j + 16 high. */
static inline void pack_nibbles(const int32_t q[32], uint8_t qs[16])
{
    for (int j = 0; j < 16; j++)
        qs[j] = (uint8_t) ((q[j] & 0x0f) | (q[j + 16] & 0x0f) << 4);
}

/* Bit 4 of each of 32 codes, as bit j of the little-endian word qh. */
static inline void pack_fifth_bits(const int32_t q[32], uint8_t qh[4])
{
    static const uint32_t bit_of[32] = {
        1u << 0,  1u << 1,  1u << 2,  1u << 3,  1u << 4,  1u << 5,  1u << 6,  1u << 7,
        1u << 8,  1u << 9,  1u << 10, 1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15,
        1u << 16, 1u << 17, 1u << 18, 1u << 19, 1u << 20, 1u << 21, 1u << 22, 1u << 23,
        1u << 24, 1u << 25, 1u << 26, 1u << 27, 1u << 28, 1u << 29, 1u << 30, 1u << 31,
    };
    uint32_t bits = 0;
    for (int j = 0; j < 32; j++)
        bits |= (0u - (((uint32_t) q[j] >> 4) & 1u)) & bit_of[j];
    memcpy(qh, &bits, sizeof bits);
}

/*
 * The value of largest magnitude, first one wins on ties; NaN never wins.
 * Its sign matters: the scale is chosen so that this value maps exactly to
 * the most negative quant (-8 or -16), giving the other side one more level.
 * The largest positive value and the largest negated negative one are
 * found lane by lane; only when they are equal (and not 0) does the first
 * of them decide.
 */
static inline float signed_absmax(const float *x)
{
    float pos[LANES] = { 0 }, neg[LANES] = { 0 };
    for (int j = 0; j < 32; j += LANES) {
        for (int k = 0; k < LANES; k++) {
            const float v = x[j + k], minus = -x[j + k];
            pos[k] = v > pos[k] ? v : pos[k];
            neg[k] = minus > neg[k] ? minus : neg[k];
        }
    }
    return ggml__signed_absmax_of(x, lanes_max(pos), lanes_max(neg));
}

/* Codes trunc(x[j] * id + bias) in [0, hi] (NaN: 0), as ggml__trunc_level. */
static inline void truncated_codes(const float *x, float id, float bias, int hi, int32_t q[32])
{
    for (int j = 0; j < 32; j++)
        q[j] = level(x[j] * id + bias, hi);
}

void ggml__quantize_row_q4_0_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    int64_t nb = row_blocks(x, vy, k, QK4_0, __func__);
    block_q4_0 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK4_0;
        const float max = signed_absmax(xb);
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int32_t q[QK4_0];

        y[i].d = ggml__fp32_to_fp16(d);
        /* trunc(v + 8.5) rounds v half-up into 0..16; 16 is clamped */
        truncated_codes(xb, id, 8.5f, 15, q);
        pack_nibbles(q, y[i].qs);
    }
}

void ggml__quantize_row_q5_0_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    int64_t nb = row_blocks(x, vy, k, QK5_0, __func__);
    block_q5_0 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK5_0;
        const float max = signed_absmax(xb);
        const float d = max / -16.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int32_t q[QK5_0];

        y[i].d = ggml__fp32_to_fp16(d);
        truncated_codes(xb, id, 16.5f, 31, q);
        pack_nibbles(q, y[i].qs);
        pack_fifth_bits(q, y[i].qh);
    }
}

/* ------------------------------------------------------ 4/5-bit with a min */

/* Smallest and largest values of a 32-value block (NaN is skipped by both
   tests); the first one wins a tie, which only a zero's sign can show. */
static inline __attribute__((always_inline)) void block_min_max(const float *x, float *minp, float *maxp)
{
    float lo[LANES], hi[LANES];
    for (int k = 0; k < LANES; k++) {
        lo[k] = FLT_MAX;
        hi[k] = -FLT_MAX;
    }
    for (int j = 0; j < 32; j += LANES) {
        for (int k = 0; k < LANES; k++) {
            lo[k] = x[j + k] < lo[k] ? x[j + k] : lo[k];
            hi[k] = x[j + k] > hi[k] ? x[j + k] : hi[k];
        }
    }
    const float min = lanes_min(lo), max = lanes_max(hi);
    *minp = min == 0.0f ? ggml__first_equal(x, 0.0f) : min;
    *maxp = max == 0.0f ? ggml__first_equal(x, 0.0f) : max;
}

/* Codes trunc((x[j] - min) * id + 0.5) in [0, hi] (NaN: 0). */
static inline void offset_codes(const float *x, float min, float id, int hi, int32_t q[32])
{
    for (int j = 0; j < 32; j++)
        q[j] = level((x[j] - min) * id + 0.5f, hi);
}

void ggml__quantize_row_q4_1_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    int64_t nb = row_blocks(x, vy, k, QK4_1, __func__);
    block_q4_1 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK4_1;
        float min, max;
        block_min_max(xb, &min, &max);
        const float d = (max - min) / 15.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int32_t q[QK4_1];

        y[i].d = ggml__fp32_to_fp16(d);
        y[i].m = ggml__fp32_to_fp16(min);
        offset_codes(xb, min, id, 15, q);
        pack_nibbles(q, y[i].qs);
    }
}

void ggml__quantize_row_q5_1_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    int64_t nb = row_blocks(x, vy, k, QK5_1, __func__);
    block_q5_1 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK5_1;
        float min, max;
        block_min_max(xb, &min, &max);
        const float d = (max - min) / 31.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int32_t q[QK5_1];

        y[i].d = ggml__fp32_to_fp16(d);
        y[i].m = ggml__fp32_to_fp16(min);
        /* upstream does not clamp: finite input never exceeds 31 */
        offset_codes(xb, min, id, 31, q);
        pack_nibbles(q, y[i].qs);
        pack_fifth_bits(q, y[i].qh);
    }
}

/* ------------------------------------------- 4/5-bit with importance weights */

/*
 * Q4_0, Q4_1, Q5_0 and Q5_1 with importance weights (ggml_quantize_chunk
 * given an imatrix; without one it writes the reference blocks above, as
 * ggml does).  Each block of 32 values x_j with weights w_j gets the scale
 * d (and minimum m) and codes that give the least weighted squared error
 *     E = sum_j w_j (x_j - decoded_j)^2
 * among the candidates below.  The search runs on the block scaled to
 * largest magnitude 1 and largest weight 1 (E only changes by a factor), so
 * no sum can overflow whatever the input; NaN counts as 0 and infinities as
 * +-FLT_MAX.
 *
 * Candidates: inverse scales s that stretch the block's range over the
 * levels with a margin of t levels (t in margins[]): the values are rounded
 * to the nearest levels for s, and the levels get their least-squares d
 * (and m).  The best of them is refined by rounding again for its d (and m)
 * and refitting, while that lowers E.  Last, d and m are rounded to
 * binary16 and the codes chosen again for the stored numbers; the
 * neighbouring binary16 scales are tried too, and the zero block.
 */

/* Margins in levels: negative ones clip the extreme values. */
static const float margins[] = { -0.5f, -0.3f, -0.1f, 0.1f, 0.3f, 0.5f, 0.7f, 1.0f };
static const float affine_margins[] = { -2.0f, -1.7f, -1.4f, -1.2f, -1.0f, -0.9f, -0.8f, -0.7f, -0.6f, -0.5f, -0.4f, -0.3f, -0.2f, -0.1f, 0.0f,
                                        0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f };
enum { N_MARGINS = sizeof margins / sizeof margins[0], N_AFFINE_MARGINS = sizeof affine_margins / sizeof affine_margins[0],
       N_REFITS = 4 };

/* A block prepared for the search: x scaled by 1 / amax, w by 1 / max w. */
struct wblock {
    float x[QK4_0], w[QK4_0];
    float amax;
};

/* v rounded to the nearest integer in [lo, hi] (lo <= 0; NaN gives lo). */
static inline float nearest_level(float v, float lo, float hi)
{
    v = v > lo ? v : lo;
    v = v < hi ? v : hi;
    return (float) (int) (v - lo + 0.5f) + lo;
}

/* Prepares b from x and the positive weights w; false for a zero block. */
static bool wblock_prepare(const float *x, const float *w, struct wblock *b)
{
    float amax = 0.0f, wmax = 0.0f;
    for (int j = 0; j < QK4_0; j++) {
        float v = x[j] == x[j] ? x[j] : 0.0f;
        v = v > -FLT_MAX ? v : -FLT_MAX;
        v = v < FLT_MAX ? v : FLT_MAX;
        b->x[j] = v;
        amax = fabsf(v) > amax ? fabsf(v) : amax;
        wmax = w[j] > wmax ? w[j] : wmax;
    }
    if (amax == 0.0f)
        return false;
    const float iw = 1.0f / wmax;
    for (int j = 0; j < QK4_0; j++) {
        b->x[j] = b->x[j] / amax;
        b->w[j] = w[j] * iw;
    }
    b->amax = amax;
    return true;
}

/* binary16 of v, saturated to the largest finite magnitude (NaN: 0). */
static ggml_fp16_t stored_half(float v)
{
    if (!(fabsf(v) <= 65504.0f))
        v = v != v ? 0.0f : v > 0.0f ? 65504.0f : -65504.0f;
    return ggml__fp32_to_fp16(v);
}

/* The binary16 scales tried around h: h and its finite neighbours of the same sign. */
static int half_neighbours(ggml_fp16_t h, ggml_fp16_t out[3])
{
    int n = 0;
    for (int k = -1; k <= 1; k++) {
        const ggml_fp16_t c = (ggml_fp16_t) (h + k);
        if ((c & 0x7c00) != 0x7c00 && ((c ^ h) & 0x8000) == 0)
            out[n++] = c;
    }
    return n;
}

/* ---- symmetric: x = d * l, l in [-n, n - 1] */

/* sum w x l and sum w l^2 for the levels l of inverse scale s. */
static inline void symmetric_sums(const struct wblock *b, float s, float lo, float hi, float *sxl, float *sll)
{
    float a[LANES] = { 0 }, c[LANES] = { 0 };
    for (int j = 0; j < QK4_0; j += LANES) {
        for (int k = 0; k < LANES; k++) {
            const float l = nearest_level(b->x[j + k] * s, lo, hi);
            const float wl = b->w[j + k] * l;
            a[k] += wl * b->x[j + k];
            c[k] += wl * l;
        }
    }
    *sxl = ggml__lanes_sum(a, LANES);
    *sll = ggml__lanes_sum(c, LANES);
}

/* The error of scale d with the nearest levels, and those levels (+ n) in q. */
static float symmetric_error(const struct wblock *b, float d, float lo, float hi, int32_t q[QK4_0])
{
    const float s = 1.0f / d;
    float e[LANES] = { 0 };
    for (int j = 0; j < QK4_0; j += LANES) {
        for (int k = 0; k < LANES; k++) {
            const float l = nearest_level(b->x[j + k] * s, lo, hi);
            const float r = b->x[j + k] - d * l;
            e[k] += b->w[j + k] * (r * r);
            q[j + k] = (int32_t) (l - lo);
        }
    }
    return ggml__lanes_sum(e, LANES);
}

/*
 * The symmetric search for levels -n .. n - 1: returns the binary16 d and
 * fills q with the codes l + n.
 */
static ggml_fp16_t symmetric_search(const float *x, const float *w, int n, int32_t q[QK4_0])
{
    struct wblock b;
    for (int j = 0; j < QK4_0; j++)
        q[j] = n;
    if (!wblock_prepare(x, w, &b))
        return 0;
    const float lo = (float) -n, hi = (float) (n - 1);

    /* the extreme value (|x| = 1, the first one) at either end of the levels */
    float xm = 0.0f;
    for (int j = QK4_0 - 1; j >= 0; j--)
        xm = fabsf(b.x[j]) == 1.0f ? b.x[j] : xm;
    float best_xl = 0.0f, best_ll = 1.0f;   /* the least-squares error is sum w x^2 - xl^2 / ll */
    for (int end = 0; end < 2; end++) {
        for (int i = 0; i < N_MARGINS; i++) {
            const float s = end == 0 ? -((float) n + margins[i]) / xm : ((float) (n - 1) + margins[i]) / xm;
            float xl, ll;
            symmetric_sums(&b, s, lo, hi, &xl, &ll);
            if (ll > 0.0f && xl * xl * best_ll > best_xl * best_xl * ll) {
                best_xl = xl;
                best_ll = ll;
            }
        }
    }
    for (int r = 0; r < N_REFITS && best_xl != 0.0f; r++) {
        float xl, ll;
        symmetric_sums(&b, best_ll / best_xl, lo, hi, &xl, &ll);
        if (!(ll > 0.0f && xl * xl * best_ll > best_xl * best_xl * ll))
            break;
        best_xl = xl;
        best_ll = ll;
    }

    /* the stored scale and its neighbours, the reference quantizer's scale
       and the zero block */
    float best = 0.0f;
    for (int j = 0; j < QK4_0; j++)
        best += b.w[j] * (b.x[j] * b.x[j]);
    ggml_fp16_t best_h = 0, tries[4];
    int n_tries = best_xl != 0.0f ? half_neighbours(stored_half(best_xl / best_ll * b.amax), tries) : 0;
    tries[n_tries++] = stored_half(xm * b.amax / (float) -n);
    int32_t codes[QK4_0];
    for (int i = 0; i < n_tries; i++) {
        const float d = ggml__fp16_to_fp32(tries[i]) / b.amax;
        const float e = d != 0.0f ? symmetric_error(&b, d, lo, hi, codes) : best;
        if (e < best) {
            best = e;
            best_h = tries[i];
            memcpy(q, codes, sizeof codes);
        }
    }
    return best_h;
}

/* ---- affine: x = d * l + m, l in [0, n] */

/* Weighted sums of a set of levels. */
struct affine_sums {
    float l, ll, lx;   /* sum w l, sum w l^2, sum w l x */
};

/* The sums for the levels l = (x - m) s rounded. */
static inline struct affine_sums affine_level_sums(const struct wblock *b, float s, float m, float hi)
{
    float sl[LANES] = { 0 }, sll[LANES] = { 0 }, slx[LANES] = { 0 };
    for (int j = 0; j < QK4_1; j += LANES) {
        for (int k = 0; k < LANES; k++) {
            const float l = nearest_level((b->x[j + k] - m) * s, 0.0f, hi);
            const float wl = b->w[j + k] * l;
            sl[k] += wl;
            sll[k] += wl * l;
            slx[k] += wl * b->x[j + k];
        }
    }
    const struct affine_sums r = { ggml__lanes_sum(sl, LANES), ggml__lanes_sum(sll, LANES),
                                   ggml__lanes_sum(slx, LANES) };
    return r;
}

/* The least-squares d and m of levels with sums a (w1 = sum w, wx = sum w x)
   and the error they take off sum w x^2; 0 when the levels are all equal. */
static inline float affine_fit(struct affine_sums a, float w1, float wx, float *d, float *m)
{
    const float det = a.ll * w1 - a.l * a.l;
    if (!(det > 0.0f))
        return 0.0f;
    *d = (w1 * a.lx - a.l * wx) / det;
    *m = (a.ll * wx - a.l * a.lx) / det;
    return *d * a.lx + *m * wx;
}

/* The error of d and m with the nearest levels, and those levels in q. */
static float affine_error(const struct wblock *b, float d, float m, float hi, int32_t q[QK4_1])
{
    const float s = 1.0f / d;
    float e[LANES] = { 0 };
    for (int j = 0; j < QK4_1; j += LANES) {
        for (int k = 0; k < LANES; k++) {
            const float l = nearest_level((b->x[j + k] - m) * s, 0.0f, hi);
            const float r = b->x[j + k] - (d * l + m);
            e[k] += b->w[j + k] * (r * r);
            q[j + k] = (int32_t) l;
        }
    }
    return ggml__lanes_sum(e, LANES);
}

/* The affine search for levels 0 .. n: fills the binary16 d and m and the codes q. */
static void affine_search(const float *x, const float *w, int n, ggml_fp16_t *dp, ggml_fp16_t *mp,
                          int32_t q[QK4_1])
{
    struct wblock b;
    memset(q, 0, QK4_1 * sizeof *q);
    *dp = *mp = 0;
    if (!wblock_prepare(x, w, &b))
        return;
    const float hi = (float) n;

    float min = b.x[0], max = b.x[0], w1 = 0.0f, wx = 0.0f, wxx = 0.0f;
    for (int j = 0; j < QK4_1; j++) {
        min = b.x[j] < min ? b.x[j] : min;
        max = b.x[j] > max ? b.x[j] : max;
        w1 += b.w[j];
        wx += b.w[j] * b.x[j];
        wxx += b.w[j] * (b.x[j] * b.x[j]);
    }

    /* a constant block: d = 0, m = the value */
    float best_gain = 0.0f, best_d = 0.0f, best_m = min;
    if (max > min) {
        for (int i = 0; i < N_AFFINE_MARGINS; i++) {
            const float s = ((float) n + affine_margins[i]) / (max - min);
            float d = 0.0f, m = 0.0f;
            const float gain = affine_fit(affine_level_sums(&b, s, min, hi), w1, wx, &d, &m);
            if (gain > best_gain) {
                best_gain = gain;
                best_d = d;
                best_m = m;
            }
        }
        for (int r = 0; r < N_REFITS && best_d != 0.0f; r++) {
            float d = 0.0f, m = 0.0f;
            const float gain = affine_fit(affine_level_sums(&b, 1.0f / best_d, best_m, hi), w1, wx, &d, &m);
            if (!(gain > best_gain))
                break;
            best_gain = gain;
            best_d = d;
            best_m = m;
        }
    }

    /* the stored numbers (the scale and its neighbours), the reference
       quantizer's and d = m = 0 */
    float best = wxx;
    ggml_fp16_t tries[4], mins[4];
    int n_tries = half_neighbours(stored_half(best_d * b.amax), tries);
    for (int i = 0; i < n_tries; i++)
        mins[i] = stored_half(best_m * b.amax);
    float ref_min, ref_max;
    block_min_max(x, &ref_min, &ref_max);
    tries[n_tries] = stored_half((ref_max - ref_min) / (float) n);
    mins[n_tries++] = stored_half(ref_min);
    int32_t codes[QK4_1];
    for (int i = 0; i < n_tries; i++) {
        const float d = ggml__fp16_to_fp32(tries[i]) / b.amax, m = ggml__fp16_to_fp32(mins[i]) / b.amax;
        float e;
        if (d != 0.0f) {
            e = affine_error(&b, d, m, hi, codes);
        } else {
            e = 0.0f;
            for (int j = 0; j < QK4_1; j++)
                e += b.w[j] * ((b.x[j] - m) * (b.x[j] - m));
            memset(codes, 0, sizeof codes);
        }
        if (e < best) {
            best = e;
            *dp = tries[i];
            *mp = mins[i];
            memcpy(q, codes, sizeof codes);
        }
    }
}

/* ---- the four formats */

static void q4_0_weighted_block(const float *x, const float *w, void *vy)
{
    block_q4_0 *y = vy;
    int32_t q[QK4_0];
    y->d = symmetric_search(x, w, 8, q);
    pack_nibbles(q, y->qs);
}

static void q5_0_weighted_block(const float *x, const float *w, void *vy)
{
    block_q5_0 *y = vy;
    int32_t q[QK5_0];
    y->d = symmetric_search(x, w, 16, q);
    pack_nibbles(q, y->qs);
    pack_fifth_bits(q, y->qh);
}

static void q4_1_weighted_block(const float *x, const float *w, void *vy)
{
    block_q4_1 *y = vy;
    int32_t q[QK4_1];
    affine_search(x, w, 15, &y->d, &y->m, q);
    pack_nibbles(q, y->qs);
}

static void q5_1_weighted_block(const float *x, const float *w, void *vy)
{
    block_q5_1 *y = vy;
    int32_t q[QK5_1];
    affine_search(x, w, 31, &y->d, &y->m, q);
    pack_nibbles(q, y->qs);
    pack_fifth_bits(q, y->qh);
}

/*
 * The importance-weighted block quantizers of the formats whose plain
 * quantizer (no importance matrix) is their reference one, or NULL.
 */
static ggml__k_block_quantizer weighted_block_quantizer(enum ggml_type type)
{
    switch (type) {
    case GGML_TYPE_Q4_0: return q4_0_weighted_block;
    case GGML_TYPE_Q4_1: return q4_1_weighted_block;
    case GGML_TYPE_Q5_0: return q5_0_weighted_block;
    case GGML_TYPE_Q5_1: return q5_1_weighted_block;
    default:             return NULL;
    }
}

/* ------------------------------------------------------------------ 8-bit */

/*
 * Largest magnitude, computed as upstream's MAX(amax, |x|) macro does:
 * a NaN replaces the running value and is itself replaced by the next
 * element, so only a NaN in the last position survives.
 */
static inline float block_absmax(const float *x, int n)
{
    float amax = 0.0f;
    for (int j = 0; j < n; j++) {
        const float a = fabsf(x[j]);
        amax = amax > a ? amax : a;
    }
    return amax;
}

void ggml__quantize_row_q8_0_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    int64_t nb = row_blocks(x, vy, k, QK8_0, __func__);
    block_q8_0 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK8_0;
        const float d = block_absmax(xb, QK8_0) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;

        y[i].d = ggml__fp32_to_fp16(d);
        for (int j = 0; j < QK8_0; j++)
            y[i].qs[j] = (int8_t) ggml__round_level(xb[j] * id, INT8_MIN, INT8_MAX);   /* halves away from zero */
    }
}

void ggml__quantize_row_q8_1_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    int64_t nb = row_blocks(x, vy, k, QK8_1, __func__);
    block_q8_1 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK8_1;
        const float d = block_absmax(xb, QK8_1) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int sum = 0;

        y[i].d = ggml__fp32_to_fp16(d);
        for (int j = 0; j < QK8_1; j++) {
            y[i].qs[j] = (int8_t) ggml__round_level(xb[j] * id, INT8_MIN, INT8_MAX);
            sum += y[i].qs[j];
        }
        /* the sum is scaled by the unrounded d, in single precision */
        y[i].s = ggml__fp32_to_fp16((float) sum * d);
    }
}

/* ---------------------------------------------------------- dequantizers */

void ggml__dequantize_row_q4_0(const void *restrict vx, float *restrict y, int64_t k)
{
    int64_t nb = row_blocks(vx, y, k, QK4_0, __func__);
    const block_q4_0 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        float *yb = y + i * QK4_0;
        for (int j = 0; j < QK4_0 / 2; j++) {
            yb[j] = (float) ((x[i].qs[j] & 0x0f) - 8) * d;
            yb[j + QK4_0 / 2] = (float) ((x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void ggml__dequantize_row_q4_1(const void *restrict vx, float *restrict y, int64_t k)
{
    int64_t nb = row_blocks(vx, y, k, QK4_1, __func__);
    const block_q4_1 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        const float m = ggml__fp16_to_fp32(x[i].m);
        float *yb = y + i * QK4_1;
        for (int j = 0; j < QK4_1 / 2; j++) {
            yb[j] = (float) (x[i].qs[j] & 0x0f) * d + m;
            yb[j + QK4_1 / 2] = (float) (x[i].qs[j] >> 4) * d + m;
        }
    }
}

/* The 5-bit value j of a q5 block: four low bits from qs, bit 4 from qh. */
static inline int q5_value(const uint8_t *qs, uint32_t qh, int j)
{
    const int low = j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4);
    return low | (int) (((qh >> j) & 1u) << 4);
}

void ggml__dequantize_row_q5_0(const void *restrict vx, float *restrict y, int64_t k)
{
    int64_t nb = row_blocks(vx, y, k, QK5_0, __func__);
    const block_q5_0 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        uint32_t qh;
        memcpy(&qh, x[i].qh, sizeof qh);
        for (int j = 0; j < QK5_0; j++)
            y[i * QK5_0 + j] = (float) (q5_value(x[i].qs, qh, j) - 16) * d;
    }
}

void ggml__dequantize_row_q5_1(const void *restrict vx, float *restrict y, int64_t k)
{
    int64_t nb = row_blocks(vx, y, k, QK5_1, __func__);
    const block_q5_1 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        const float m = ggml__fp16_to_fp32(x[i].m);
        uint32_t qh;
        memcpy(&qh, x[i].qh, sizeof qh);
        for (int j = 0; j < QK5_1; j++)
            y[i * QK5_1 + j] = (float) q5_value(x[i].qs, qh, j) * d + m;
    }
}

void ggml__dequantize_row_q8_0(const void *restrict vx, float *restrict y, int64_t k)
{
    int64_t nb = row_blocks(vx, y, k, QK8_0, __func__);
    const block_q8_0 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK8_0; j++)
            y[i * QK8_0 + j] = (float) x[i].qs[j] * d;
    }
}

void ggml__dequantize_row_q8_1(const void *restrict vx, float *restrict y, int64_t k)
{
    int64_t nb = row_blocks(vx, y, k, QK8_1, __func__);
    const block_q8_1 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK8_1; j++)
            y[i * QK8_1 + j] = (float) x[i].qs[j] * d;
    }
}

/* ------------------------------------------------------- public interface */

/*
 * Lookup tables that some quantizers build on first use are created and
 * released under this lock (the IQ1, IQ2 and IQ3 quantizers build theirs
 * on first use too); init and free may be called any number of times from
 * any thread.
 */
static pthread_mutex_t quant_lock = PTHREAD_MUTEX_INITIALIZER;

void ggml_quantize_init(enum ggml_type type)
{
    if (!ggml__type_is_valid(type)) {
        ggml__error("invalid type %d", (int) type);
        return;
    }
    pthread_mutex_lock(&quant_lock);
    if (type == GGML_TYPE_IQ1_S || type == GGML_TYPE_IQ1_M)
        ggml__iq1_tables_init();
    if (type == GGML_TYPE_IQ2_XXS || type == GGML_TYPE_IQ2_XS || type == GGML_TYPE_IQ2_S)
        ggml__iq2_tables_init(type);
    if (type == GGML_TYPE_IQ3_XXS || type == GGML_TYPE_IQ3_S)
        ggml__iq3_tables_init();
    pthread_mutex_unlock(&quant_lock);
}

void ggml_quantize_free(void)
{
    pthread_mutex_lock(&quant_lock);
    ggml__iq1_tables_free();
    ggml__iq2_tables_free();
    ggml__iq3_tables_free();
    pthread_mutex_unlock(&quant_lock);
}

bool ggml_quantize_requires_imatrix(enum ggml_type type)
{
    return type == GGML_TYPE_IQ2_XXS || type == GGML_TYPE_IQ2_XS || type == GGML_TYPE_IQ1_S;
}

static void f32_copy_row(const float *restrict x, void *restrict y, int64_t k)
{
    memcpy(y, x, (size_t) k * sizeof(float));
}

static void f16_row(const float *restrict x, void *restrict y, int64_t k)
{
    ggml_fp16_t *h = y;
    for (int64_t i = 0; i < k; i++)
        h[i] = ggml__fp32_to_fp16(x[i]);
}

static void bf16_row(const float *restrict x, void *restrict y, int64_t k)
{
    ggml_bf16_t *h = y;
    for (int64_t i = 0; i < k; i++)
        h[i] = ggml__fp32_to_bf16(x[i]);
}

/* The row quantizer ggml_quantize_chunk uses for type, or NULL. */
static ggml_from_float_t chunk_quantizer(enum ggml_type type)
{
    switch (type) {
    case GGML_TYPE_F32:  return f32_copy_row;
    case GGML_TYPE_F16:  return f16_row;
    case GGML_TYPE_BF16: return bf16_row;
    case GGML_TYPE_Q4_0: return ggml__quantize_row_q4_0_ref;
    case GGML_TYPE_Q4_1: return ggml__quantize_row_q4_1_ref;
    case GGML_TYPE_Q5_0: return ggml__quantize_row_q5_0_ref;
    case GGML_TYPE_Q5_1: return ggml__quantize_row_q5_1_ref;
    case GGML_TYPE_Q8_0: return ggml__quantize_row_q8_0_ref;
    case GGML_TYPE_Q8_1: return ggml__quantize_row_q8_1_ref;
    case GGML_TYPE_MXFP4: return ggml__quantize_row_mxfp4_ref;
    case GGML_TYPE_NVFP4: return ggml__quantize_row_nvfp4_ref;
    case GGML_TYPE_Q1_0: return ggml__quantize_row_q1_0_ref;
    case GGML_TYPE_Q2_0: return ggml__quantize_row_q2_0_ref;
    case GGML_TYPE_IQ4_NL: return ggml__quantize_row_iq4_nl_ref;
    case GGML_TYPE_Q4_K: return ggml__quantize_row_q4_K_ref;
    case GGML_TYPE_Q5_K: return ggml__quantize_row_q5_K_ref;
    case GGML_TYPE_Q6_K: return ggml__quantize_row_q6_K_ref;
    case GGML_TYPE_Q2_K: return ggml__quantize_row_q2_K_ref;
    case GGML_TYPE_Q3_K: return ggml__quantize_row_q3_K_ref;
    case GGML_TYPE_TQ1_0: return ggml__quantize_row_tq1_0_ref;
    case GGML_TYPE_TQ2_0: return ggml__quantize_row_tq2_0_ref;
    case GGML_TYPE_IQ4_XS: return ggml__quantize_row_iq4_xs_ref;
    case GGML_TYPE_IQ3_XXS: return ggml__quantize_row_iq3_xxs_ref;
    case GGML_TYPE_IQ3_S: return ggml__quantize_row_iq3_s_ref;
    case GGML_TYPE_IQ2_S: return ggml__quantize_row_iq2_s_ref;
    default:             return NULL;
    }
}

/*
 * The encoder of chunks quantized without importance weights: the CPU
 * kernel level's encoder where it has one for the format (the reference
 * quantizer's bytes, kernels.h), else the reference quantizer.
 */
static ggml_from_float_t plain_chunk_quantizer(enum ggml_type type)
{
    switch (type) {
    case GGML_TYPE_Q4_0:
    case GGML_TYPE_Q4_1:
    case GGML_TYPE_Q5_0:
    case GGML_TYPE_Q5_1:
        return ggml__kernels()->from_float[type];
    default:
        return chunk_quantizer(type);
    }
}

/* The quantizer of the formats that use importance weights, or NULL. */
static void (*weighted_chunk_quantizer(enum ggml_type type))(const float *restrict, void *restrict, int64_t,
                                                               int64_t, const float *)
{
    switch (type) {
    case GGML_TYPE_Q4_K: return ggml__quantize_q4_K;
    case GGML_TYPE_Q5_K: return ggml__quantize_q5_K;
    case GGML_TYPE_Q6_K: return ggml__quantize_q6_K;
    case GGML_TYPE_Q2_K: return ggml__quantize_q2_K;
    case GGML_TYPE_Q3_K: return ggml__quantize_q3_K;
    case GGML_TYPE_IQ4_XS: return ggml__quantize_iq4_xs;
    case GGML_TYPE_IQ2_XXS: return ggml__quantize_iq2_xxs;
    case GGML_TYPE_IQ2_XS: return ggml__quantize_iq2_xs;
    case GGML_TYPE_IQ2_S: return ggml__quantize_iq2_s;
    default:             return NULL;
    }
}

/*
 * The quantizer of the formats whose lookup tables are built on first use
 * (false: they could not be, logged), or NULL.
 */
typedef bool (*ggml__fallible_quantizer)(const float *restrict, void *restrict, int64_t, int64_t, const float *);
static ggml__fallible_quantizer fallible_chunk_quantizer(enum ggml_type type)
{
    switch (type) {
    case GGML_TYPE_IQ1_S:   return ggml__quantize_iq1_s;
    case GGML_TYPE_IQ1_M:   return ggml__quantize_iq1_m;
    case GGML_TYPE_IQ3_XXS: return ggml__quantize_iq3_xxs;
    case GGML_TYPE_IQ3_S:   return ggml__quantize_iq3_s;
    default:                return NULL;
    }
}

/*
 * Arguments: type    the format to write;
 *            src     nrows * n_per_row values are read from src + start;
 *            dst     the whole destination tensor: rows are written from
 *                    row start / n_per_row on;
 *            start   index of the first value, a multiple of n_per_row;
 *            nrows, n_per_row  the chunk's shape; n_per_row a multiple of
 *                    the type's block size;
 *            imatrix importance weights of the n_per_row columns (NULL:
 *                    none): the K-quants, IQ4_NL, IQ4_XS and the
 *                    lattice (IQ1, IQ2, IQ3) formats minimise the error
 *                    weighted by them (IQ1_S, IQ2_XXS and IQ2_XS require
 *                    them, as in ggml); the other formats ignore them, as
 *                    ggml's do.
 * Returns:   bytes written (nrows * ggml_row_size(type, n_per_row)), or 0
 *            after logging one error.
 */
size_t ggml_quantize_chunk(enum ggml_type type, const float *src, void *dst, int64_t start,
                           int64_t nrows, int64_t n_per_row, const float *imatrix)
{
    if (!ggml__type_is_valid(type)) {
        ggml__error("invalid type %d", (int) type);
        return 0;
    }
    ggml_from_float_t quantize = chunk_quantizer(type);
    const ggml__fallible_quantizer fallible = fallible_chunk_quantizer(type);
    if (quantize == NULL && fallible == NULL && weighted_chunk_quantizer(type) == NULL) {
        ggml__error("quantization to %s is not implemented", ggml_type_name(type));
        return 0;
    }
    if (imatrix == NULL && ggml_quantize_requires_imatrix(type)) {
        ggml__error("quantization to %s requires an importance matrix", ggml_type_name(type));
        return 0;
    }

    const int64_t blck = ggml_blck_size(type);
    const size_t type_size = ggml_type_size(type);

    if (n_per_row <= 0 || nrows < 0) {
        ggml__error("bad chunk shape: %" PRId64 " rows of %" PRId64 " values", nrows, n_per_row);
        return 0;
    }
    if (n_per_row % blck != 0) {
        ggml__error("row length %" PRId64 " is not a multiple of the %s block size %" PRId64,
                    n_per_row, ggml_type_name(type), blck);
        return 0;
    }
    if (start < 0 || start % n_per_row != 0) {
        ggml__error("start %" PRId64 " is not a non-negative multiple of the row length %" PRId64,
                    start, n_per_row);
        return 0;
    }
    if (nrows == 0)
        return 0;
    if (src == NULL || dst == NULL) {
        ggml__error("NULL %s", src == NULL ? "source" : "destination");
        return 0;
    }

    /* every size below must fit: n values, the byte offset and the result */
    const uint64_t blocks_per_row = (uint64_t) (n_per_row / blck);
    const uint64_t start_row = (uint64_t) (start / n_per_row);
    if ((uint64_t) nrows > (uint64_t) INT64_MAX / (uint64_t) n_per_row ||
        (uint64_t) start > (uint64_t) INT64_MAX - (uint64_t) nrows * (uint64_t) n_per_row ||
        blocks_per_row > SIZE_MAX / type_size ||
        start_row + (uint64_t) nrows > SIZE_MAX / (blocks_per_row * type_size)) {
        ggml__error("chunk of %" PRId64 " rows of %" PRId64 " values at %" PRId64 " is too large",
                    nrows, n_per_row, start);
        return 0;
    }

    const size_t row_size = (size_t) blocks_per_row * type_size;
    char *out = (char *) dst + (size_t) start_row * row_size;
    if (fallible != NULL) {
        if (!fallible(src + start, out, nrows, n_per_row, imatrix))
            return 0;
    } else if (type == GGML_TYPE_IQ4_NL && imatrix != NULL)
        ggml__quantize_rows_iq4_nl(src + start, out, nrows, n_per_row, imatrix);
    else if (imatrix != NULL && weighted_block_quantizer(type) != NULL)
        ggml__quantize_block_rows(weighted_block_quantizer(type), (int) blck, type_size, src + start, out, nrows,
                                  n_per_row, imatrix, __func__);
    else if (weighted_chunk_quantizer(type) != NULL)
        weighted_chunk_quantizer(type)(src + start, out, nrows, n_per_row, imatrix);
    else
        plain_chunk_quantizer(type)(src + start, out, nrows * n_per_row);
    return (size_t) nrows * row_size;
}
