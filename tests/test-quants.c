/*
 * test-quants.c - the 32-value block formats (q4_0, q4_1, q5_0, q5_1, q8_0,
 * q8_1): golden blocks, round trips, all-zero blocks, ggml_quantize_chunk
 * and its error paths.
 *
 * Golden blocks.  Each input is chosen so that the block's scale is a
 * power of two (or 1) and every scaled value is exact, so the expected
 * bytes follow from the format definition by hand, with no rounding
 * besides the quantizer's own:
 *   q4_0, q5_0  d = max / -8 (resp. -16), where max is the first value of
 *               largest magnitude; q = trunc(x / d + 8.5) (resp. 16.5),
 *               at most 15 (resp. 31) -- halves round up;
 *   q4_1, q5_1  d = (max - min) / 15 (resp. 31), m = min;
 *               q = trunc((x - min) / d + 0.5), q4_1 at most 15;
 *   q8_0, q8_1  d = absmax / 127; q = roundf(x / d) -- halves away from 0;
 *               q8_1 also stores s = d * sum(q).
 * Value j of a block goes to the low nibble of qs[j] for j < 16 and to the
 * high nibble of qs[j - 16] otherwise; bit 4 of the 5-bit values is bit j
 * of the little-endian word qh.  Scales are binary16, little-endian.
 *
 * The decoders below are written from the same definitions and are used
 * both to check the library's to_float functions and to measure the error
 * of round trips (q8_1 has no to_float in ggml).
 */
#include "config.h"

#include <pthread.h>

#include "tap.h"

/* ------------------------------------------------------------- decoders */

static float half(const uint8_t *p)
{
    return ggml_fp16_to_fp32((ggml_fp16_t) (p[0] | (p[1] << 8)));
}

static int nibble(const uint8_t *qs, int j)
{
    return j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4);
}

static int bit4(const uint8_t *qh, int j)
{
    return (qh[j / 8] >> (j % 8)) & 1;
}

/* Decodes nblocks blocks of type t into y. */
static void decode(enum ggml_type t, const uint8_t *x, float *y, int nblocks)
{
    for (int b = 0; b < nblocks; b++) {
        for (int j = 0; j < 32; j++) {
            float v = 0;
            switch (t) {
            case GGML_TYPE_Q4_0:
                v = (float) (nibble(x + 2, j) - 8) * half(x);
                break;
            case GGML_TYPE_Q4_1:
                v = (float) nibble(x + 4, j) * half(x) + half(x + 2);
                break;
            case GGML_TYPE_Q5_0:
                v = (float) ((nibble(x + 6, j) | bit4(x + 2, j) << 4) - 16) * half(x);
                break;
            case GGML_TYPE_Q5_1:
                v = (float) (nibble(x + 8, j) | bit4(x + 4, j) << 4) * half(x) + half(x + 2);
                break;
            case GGML_TYPE_Q8_0:
                v = (float) (int8_t) x[2 + j] * half(x);
                break;
            case GGML_TYPE_Q8_1:
                v = (float) (int8_t) x[4 + j] * half(x);
                break;
            default:
                break;
            }
            y[b * 32 + j] = v;
        }
        x += ggml_type_size(t);
    }
}

static const enum ggml_type block_types[] = {
    GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1,
};
#define N_BLOCK_TYPES ((int) (sizeof block_types / sizeof block_types[0]))

static void dump(const char *what, const uint8_t *p, size_t n)
{
    char line[3 * 64 + 1];
    size_t used = 0;
    for (size_t i = 0; i < n && used + 4 < sizeof line; i++)
        used += (size_t) snprintf(line + used, sizeof line - used, "%02x ", p[i]);
    tap_diag("%s: %s", what, line);
}

/* Quantizes one block with the type's from_float_ref and compares bytes. */
static void check_golden(enum ggml_type t, const float *x, const uint8_t *want, const char *what)
{
    uint8_t got[64];
    memset(got, 0xa5, sizeof got);
    const struct ggml_type_traits *tt = ggml_get_type_traits(t);
    size_t size = ggml_type_size(t);
    tt->from_float_ref(x, got, 32);
    if (!ok(memcmp(got, want, size) == 0 && got[size] == 0xa5, "%s: %s", ggml_type_name(t), what)) {
        dump("got ", got, size);
        dump("want", want, size);
    }

    /* the library's decoder agrees with the one written here */
    if (tt->to_float) {
        float a[32], b[32];
        tt->to_float(want, a, 32);
        decode(t, want, b, 1);
        ok(memcmp(a, b, sizeof a) == 0, "%s: to_float decodes the golden block", ggml_type_name(t));
    }
}

static void check_golden_blocks(void)
{
    /* q8_0 / q8_1: absmax 127 -> d = 1.0 (0x3c00); 2.5 -> 3, -2.5 -> -3,
       -0.5 -> -1 (halves away from zero), 0.49 -> 0, 63.5 -> 64; sum = 63 */
    static const float x8[32] = {
        127.0f, -127.0f, 2.5f, -2.5f, 0.49f, -0.5f, 63.5f, -12.0f, -11.0f, -10.0f, -9.0f,
        -8.0f, -7.0f, -6.0f, -5.0f, -4.0f, -3.0f, -2.0f, -1.0f, 0.0f, 1.0f, 2.0f, 3.0f,
        4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f, 10.0f, 11.0f, 12.0f,
    };
    static const uint8_t q8_0[34] = {
        0x00, 0x3c, 0x7f, 0x81, 0x03, 0xfd, 0x00, 0xff, 0x40, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
        0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
        0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
    };
    /* s = 63.0 = 0x53e0 */
    static const uint8_t q8_1[36] = {
        0x00, 0x3c, 0xe0, 0x53, 0x7f, 0x81, 0x03, 0xfd, 0x00, 0xff, 0x40, 0xf4, 0xf5, 0xf6,
        0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff, 0x00, 0x01, 0x02, 0x03, 0x04,
        0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
    };
    check_golden(GGML_TYPE_Q8_0, x8, q8_0, "golden block (d = 1, roundf halves away from zero)");
    check_golden(GGML_TYPE_Q8_1, x8, q8_1, "golden block (d = 1, s = 63)");

    /* q4_0 A: first largest magnitude -4 -> d = 0.5 (0x3800), 1/d = 2;
       q = trunc(2x + 8.5): 0.25 -> 9, -0.25 -> 8, 3.75 -> 16 -> 15 */
    static const float xa[32] = {
        -4.0f, 3.75f, 3.5f, 0.25f, -0.25f, 0.5f, -0.5f, 1.0f, 0.0f, 0.5f, 1.0f, 1.5f, 2.0f,
        2.5f, 3.0f, 3.5f, -4.0f, -3.5f, -3.0f, -2.5f, -2.0f, -1.5f, -1.0f, -0.5f, 0.0f, 0.5f,
        1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 3.5f,
    };
    static const uint8_t q4_0a[18] = {
        0x00, 0x38, 0x00, 0x1f, 0x2f, 0x39, 0x48, 0x59, 0x67, 0x7a, 0x88, 0x99, 0xaa, 0xbb,
        0xcc, 0xdd, 0xee, 0xff,
    };
    check_golden(GGML_TYPE_Q4_0, xa, q4_0a, "golden block (negative extreme, d = 0.5)");

    /* q4_0 B: +4 comes before -4, so max = +4 and d = -0.5 (0xb800), 1/d = -2;
       -4 -> trunc(16.5) = 16 -> clamped to 15 */
    static const float xb[32] = {
        4.0f, -4.0f, -3.5f, 3.75f, 0.25f, -0.25f, 0.5f, 0.0f, -0.5f, -1.0f, -1.5f, -2.0f,
        -2.5f, -3.0f, -3.5f, -4.0f, 3.5f, 3.0f, 2.5f, 2.0f, 1.5f, 1.0f, 0.5f, 0.0f, -0.5f,
        -1.0f, -1.5f, -2.0f, -2.5f, -3.0f, -3.5f, -4.0f,
    };
    static const uint8_t q4_0b[18] = {
        0x00, 0xb8, 0x10, 0x2f, 0x3f, 0x41, 0x58, 0x69, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc,
        0xdd, 0xee, 0xff, 0xff,
    };
    check_golden(GGML_TYPE_Q4_0, xb, q4_0b, "golden block (positive extreme first, d = -0.5)");

    /* q4_1: min -1 (0xbc00), max 6.5 -> d = 7.5 / 15 = 0.5 (0x3800);
       q = trunc(2(x + 1) + 0.5): -0.75 -> 1, 6.4 -> 15, 0.1 -> 2 */
    static const float x41[32] = {
        -1.0f, 6.5f, -0.75f, 2.0f, 6.4f, 0.1f, 2.0f, 2.5f, 3.0f, 3.5f, 4.0f, 4.5f, 5.0f,
        5.5f, 6.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 3.5f, 4.0f, 4.5f,
        5.0f, 5.5f, 6.0f, -1.0f, -0.5f,
    };
    static const uint8_t q4_1[20] = {
        0x00, 0x38, 0x00, 0xbc, 0x10, 0x2f, 0x31, 0x46, 0x5f, 0x62, 0x76, 0x87, 0x98, 0xa9,
        0xba, 0xcb, 0xdc, 0xed, 0x0e, 0x10,
    };
    check_golden(GGML_TYPE_Q4_1, x41, q4_1, "golden block (d = 0.5, m = -1)");

    /* q5_0: first largest magnitude -4 -> d = 0.25 (0x3400), 1/d = 4;
       q = trunc(4x + 16.5) <= 31: -0.125 -> 16, 0.125 -> 17, 3.875 -> 31 */
    static const float x50[32] = {
        -4.0f, 3.875f, 3.75f, -0.125f, 0.125f, 1.0f, -1.0f, -2.25f, -2.0f, -1.75f, -1.5f,
        -1.25f, -1.0f, -0.75f, -0.5f, -0.25f, 0.0f, 0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f,
        1.75f, 2.0f, 2.25f, 2.5f, 2.75f, 3.0f, 3.25f, 3.5f, 3.75f,
    };
    static const uint8_t q5_0[22] = {
        0x00, 0x34, 0x3e, 0x00, 0xff, 0xff, 0x00, 0x1f, 0x2f, 0x30, 0x41, 0x54, 0x6c, 0x77,
        0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
    };
    check_golden(GGML_TYPE_Q5_0, x50, q5_0, "golden block (d = 0.25)");

    /* q5_1: min 0, max 3.875 -> d = 3.875 / 31 = 0.125 (0x3000), m = 0;
       q = trunc(8x + 0.5): 0.0625 -> 1, 1.9375 -> 16, 3.8 -> 30 */
    static const float x51[32] = {
        0.0f, 3.875f, 0.0625f, 1.9375f, 3.8f, 0.625f, 0.75f, 0.875f, 1.0f, 1.125f, 1.25f,
        1.375f, 1.5f, 1.625f, 1.75f, 1.875f, 2.0f, 2.125f, 2.25f, 2.375f, 2.5f, 2.625f, 2.75f,
        2.875f, 3.0f, 3.125f, 3.25f, 3.375f, 3.5f, 3.625f, 3.75f, 3.875f,
    };
    static const uint8_t q5_1[24] = {
        0x00, 0x30, 0x00, 0x00, 0x1a, 0x00, 0xff, 0xff, 0x00, 0x1f, 0x21, 0x30, 0x4e, 0x55,
        0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
    };
    check_golden(GGML_TYPE_Q5_1, x51, q5_1, "golden block (d = 0.125, m = 0)");
}

/*
 * All-zero blocks.  For q4_0 and q5_0 the scale is max / -8 (or -16) with
 * max = +0, which is -0: ggml stores 0x8000.  A zero scale makes the
 * inverse 0, so every value is quantized as 0 * 0 + 8.5 (16.5): q = 8
 * (16).  The other formats store +0 scales and zero quants.
 */
static void check_zero_blocks(void)
{
    static const uint8_t q4_0[18] = { 0x00, 0x80, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88,
                                      0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88 };
    static const uint8_t q5_0[22] = { 0x00, 0x80, 0xff, 0xff, 0xff, 0xff };   /* qs all 0 */
    static const uint8_t zero[36] = { 0 };
    const struct { enum ggml_type t; const uint8_t *want; } cases[] = {
        { GGML_TYPE_Q4_0, q4_0 }, { GGML_TYPE_Q4_1, zero }, { GGML_TYPE_Q5_0, q5_0 },
        { GGML_TYPE_Q5_1, zero }, { GGML_TYPE_Q8_0, zero }, { GGML_TYPE_Q8_1, zero },
    };
    float x[32] = { 0 };
    for (int i = 16; i < 32; i++)
        x[i] = -0.0f;   /* negative zeros change nothing */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        check_golden(cases[c].t, x, cases[c].want, "all-zero block");
        float y[32];
        decode(cases[c].t, cases[c].want, y, 1);
        int nonzero = 0;
        for (int j = 0; j < 32; j++)
            nonzero += y[j] != 0.0f;
        is_int(nonzero, 0, "%s: an all-zero block decodes to zeros", ggml_type_name(cases[c].t));
    }
}

/* --------------------------------------------------------- round trips */

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static double uniform(void)   /* in [-1, 1) */
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double) (rng_state >> 11) * 0x1p-52 - 1.0;
}

/*
 * Error bounds for values uniform in [-1, 1).  With step size s the
 * rounding error is about uniform in [-s/2, s/2], RMS s / sqrt(12), and
 * the signal's RMS is 1 / sqrt(3), so the relative RMS error is about
 * s / 2.  Steps: q4_0 1/8 (the extreme maps to -8), q4_1 2/15, q5_0 1/16,
 * q5_1 2/31, q8 1/127.  Bounds allow 40% over that (the block extremes
 * are a little inside [-1, 1), which only shrinks the step).
 */
static void check_round_trips(void)
{
    enum { NB = 512, N = NB * 32 };
    static float x[N], y[N], z[N];
    static uint8_t q[NB * 36];
    const double bound[] = { 0.0625 * 1.4, 0.0667 * 1.4, 0.03125 * 1.4, 0.0323 * 1.4,
                             0.0039 * 1.4, 0.0039 * 1.4 };

    for (int i = 0; i < N; i++)
        x[i] = (float) uniform();
    /* some blocks with other magnitudes and offsets */
    for (int i = 0; i < 32; i++) {
        x[i] = (float) (1e-2 * uniform());
        x[32 + i] = (float) (1000.0 + 10.0 * uniform());
        x[64 + i] = (float) (0.5 * uniform() - 3.0);
    }

    for (int k = 0; k < N_BLOCK_TYPES; k++) {
        enum ggml_type t = block_types[k];
        const struct ggml_type_traits *tt = ggml_get_type_traits(t);
        tt->from_float_ref(x, q, N);
        decode(t, q, y, NB);

        double err2 = 0, sig2 = 0, worst = 0;
        for (int i = 0; i < N; i++) {
            double e = (double) y[i] - (double) x[i];
            /* per element: never more than one step from the input */
            int b = i / 32;
            const uint8_t *blk = q + (size_t) b * ggml_type_size(t);
            double step = fabs((double) half(blk));
            if (step > 0)
                worst = fmax(worst, fabs(e) / step);
            if (i >= 96) {
                err2 += e * e;
                sig2 += (double) x[i] * x[i];
            }
        }
        double rel = sqrt(err2 / sig2);
        ok(rel < bound[k], "%s: relative RMS error %.5f < %.5f", ggml_type_name(t), rel, bound[k]);
        /* one step: q4_0/q5_0 clamp the side opposite the extreme a full
           step short; the fp16 scale adds up to 16 * 2^-11 steps */
        ok(worst <= 1.01, "%s: every value within one step (worst %.4f steps)",
           ggml_type_name(t), worst);

        if (tt->to_float) {
            tt->to_float(q, z, N);
            ok(memcmp(y, z, sizeof y) == 0, "%s: to_float equals the reference decoder", ggml_type_name(t));
        }

        /* q8_1's s field is d times the sum of the quants */
        if (t == GGML_TYPE_Q8_1) {
            int bad = 0;
            for (int b = 0; b < NB; b++) {
                const uint8_t *blk = q + (size_t) b * 36;
                int sum = 0;
                for (int j = 0; j < 32; j++)
                    sum += (int8_t) blk[4 + j];
                float want = (float) sum * half(blk);
                /* s is rounded to fp16 from the unrounded d, so it may differ
                   from sum * fp16(d) by |sum| times d's rounding error, plus
                   its own rounding */
                double tol = fabs((double) sum) * (fabs((double) half(blk)) * 0x1p-11 + 0x1p-25)
                             + fabs((double) want) * 0x1p-11 + 0x1p-24;
                bad += fabs((double) half(blk + 2) - want) > tol;
            }
            is_int(bad, 0, "q8_1: s = d * sum(q) in every block");
        }
    }
}

/* ------------------------------------------------------ quantize_chunk */

static void check_chunk(void)
{
    enum { ROWS = 3, PER_ROW = 64 };
    static float src[ROWS * PER_ROW];
    for (int i = 0; i < ROWS * PER_ROW; i++)
        src[i] = (float) uniform() * 4.0f;

    const enum ggml_type types[] = {
        GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
        GGML_TYPE_Q8_1, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_F32,
    };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        enum ggml_type t = types[k];
        const char *name = ggml_type_name(t);
        size_t row = ggml_row_size(t, PER_ROW);
        uint8_t whole[ROWS * PER_ROW * 4 + 16], parts[ROWS * PER_ROW * 4 + 16];
        memset(whole, 0xcd, sizeof whole);
        memset(parts, 0xcd, sizeof parts);

        size_t n = ggml_quantize_chunk(t, src, whole, 0, ROWS, PER_ROW, NULL);
        is_uint(n, ROWS * row, "%s: a chunk of %d rows returns %d row sizes", name, ROWS, ROWS);
        ok(whole[ROWS * row] == 0xcd, "%s: nothing is written past the chunk", name);

        /* row by row at increasing start offsets gives the same bytes */
        size_t total = 0;
        for (int r = 0; r < ROWS; r++) {
            size_t got = ggml_quantize_chunk(t, src, parts, (int64_t) r * PER_ROW, 1, PER_ROW, NULL);
            total += got;
            if (r == 0)
                ok(parts[row] == 0xcd, "%s: a one-row chunk writes only its row", name);
        }
        is_uint(total, ROWS * row, "%s: one-row chunks return one row size each", name);
        ok(memcmp(whole, parts, ROWS * row) == 0, "%s: rows quantized at their start offsets match", name);

        /* the last two rows on their own land at row 1 */
        memset(parts, 0xcd, sizeof parts);
        n = ggml_quantize_chunk(t, src, parts, PER_ROW, 2, PER_ROW, NULL);
        is_uint(n, 2 * row, "%s: a two-row chunk at row 1 returns two row sizes", name);
        ok(parts[0] == 0xcd && parts[row - 1] == 0xcd && memcmp(whole + row, parts + row, 2 * row) == 0,
           "%s: a chunk at row 1 leaves row 0 alone and matches", name);

        /* the importance matrix changes the 4- and 5-bit formats only
           (their weighted search: tests/test-quants-q45.c) */
        static float imatrix[PER_ROW];
        for (int i = 0; i < PER_ROW; i++)
            imatrix[i] = 1.0f + (float) i;
        memset(parts, 0xcd, sizeof parts);
        ggml_quantize_chunk(t, src, parts, 0, ROWS, PER_ROW, imatrix);
        const bool weighted = t == GGML_TYPE_Q4_0 || t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_0 || t == GGML_TYPE_Q5_1;
        ok((memcmp(whole, parts, ROWS * row) != 0) == weighted, "%s: an importance matrix is %s", name,
           weighted ? "used" : "ignored");

        /* the chunk equals the traits' reference quantizer where there is one */
        const struct ggml_type_traits *tt = ggml_get_type_traits(t);
        if (tt->from_float_ref) {
            memset(parts, 0xcd, sizeof parts);
            tt->from_float_ref(src, parts, ROWS * PER_ROW);
            ok(memcmp(whole, parts, ROWS * row) == 0, "%s: chunk equals from_float_ref", name);
        }
    }
    is_int(tap_log_errors(), 0, "valid chunks log nothing");

    uint8_t dst[1024];
    is_uint(ggml_quantize_chunk(GGML_TYPE_Q4_0, src, dst, 0, 0, PER_ROW, NULL), 0,
            "zero rows write nothing");
    is_int(tap_log_errors(), 0, "zero rows are not an error");

    const struct { enum ggml_type t; int64_t start, nrows, per_row; bool null_src; const char *what; } bad[] = {
        { GGML_TYPE_Q4_0, 10, 1, PER_ROW, false, "a start that is not a multiple of the row length" },
        { GGML_TYPE_Q4_0, 32, 1, PER_ROW, false, "a start in the middle of a row" },
        { GGML_TYPE_Q8_0, -64, 1, PER_ROW, false, "a negative start" },
        { GGML_TYPE_Q4_0, 0, 1, 48, false, "a row length that is not whole blocks" },
        { GGML_TYPE_Q4_0, 0, 1, 0, false, "a row length of 0" },
        { GGML_TYPE_Q4_0, 0, -1, PER_ROW, false, "a negative row count" },
        { GGML_TYPE_Q4_0, 0, 1, PER_ROW, true, "a NULL source" },
        { GGML_TYPE_Q4_0, 0, INT64_MAX / 2, PER_ROW, false, "a chunk too large to address" },
        { GGML_TYPE_F64, 0, 1, PER_ROW, false, "a type with no quantizer (f64)" },
        { GGML_TYPE_IQ1_S, 0, 1, 256, false, "iq1_s without the importance matrix it needs" },
        { GGML_TYPE_IQ2_XXS, 0, 1, 256, false, "iq2_xxs without the importance matrix it needs" },
        { GGML_TYPE_I32, 0, 1, PER_ROW, false, "an integer type" },
        { (enum ggml_type) 4, 0, 1, PER_ROW, false, "a removed type" },
        { (enum ggml_type) -3, 0, 1, PER_ROW, false, "a negative type" },
        { GGML_TYPE_COUNT, 0, 1, PER_ROW, false, "GGML_TYPE_COUNT" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(dst, 0xcd, sizeof dst);
        size_t n = ggml_quantize_chunk(bad[i].t, bad[i].null_src ? NULL : src, dst, bad[i].start,
                                       bad[i].nrows, bad[i].per_row, NULL);
        ok(n == 0 && dst[0] == 0xcd, "quantize_chunk rejects %s", bad[i].what);
        logged_one_error("%s logs one error", bad[i].what);
    }
    is_uint(ggml_quantize_chunk(GGML_TYPE_Q8_0, src, NULL, 0, 1, PER_ROW, NULL), 0,
            "quantize_chunk rejects a NULL destination");
    logged_one_error("a NULL destination logs one error");
}

static void check_row_function_errors(void)
{
    float x[64] = { 0 };
    uint8_t y[64];
    memset(y, 0xcd, sizeof y);
    const struct ggml_type_traits *tt = ggml_get_type_traits(GGML_TYPE_Q8_0);
    tt->from_float_ref(x, y, 33);
    ok(y[0] == 0xcd, "from_float_ref with a partial block writes nothing");
    logged_one_error("from_float_ref with a partial block logs one error");
    tt->to_float(y, x, -32);
    logged_one_error("to_float with a negative length logs one error");
    tt->from_float_ref(NULL, y, 32);
    logged_one_error("from_float_ref with a NULL source logs one error");
    tt->from_float_ref(NULL, NULL, 0);
    is_int(tap_log_errors(), 0, "an empty row is not an error");
}

/* ------------------------------------------------------ init and free */

static void *init_many(void *arg)
{
    (void) arg;
    for (int i = 0; i < 1000; i++) {
        ggml_quantize_init(block_types[i % N_BLOCK_TYPES]);
        ggml_quantize_init(GGML_TYPE_IQ2_XXS);
        if (i % 7 == 0)
            ggml_quantize_free();
    }
    return NULL;
}

static void check_init_free(void)
{
    ok(ggml_quantize_requires_imatrix(GGML_TYPE_IQ2_XXS), "iq2_xxs requires an importance matrix");
    ok(ggml_quantize_requires_imatrix(GGML_TYPE_IQ2_XS), "iq2_xs requires an importance matrix");
    ok(ggml_quantize_requires_imatrix(GGML_TYPE_IQ1_S), "iq1_s requires an importance matrix");
    int others = 0;
    for (int t = 0; t < GGML_TYPE_COUNT; t++)
        if (t != GGML_TYPE_IQ2_XXS && t != GGML_TYPE_IQ2_XS && t != GGML_TYPE_IQ1_S)
            others += ggml_quantize_requires_imatrix((enum ggml_type) t);
    is_int(others, 0, "no other type requires one (iq1_m included)");

    pthread_t th[2];
    bool started = pthread_create(&th[0], NULL, init_many, NULL) == 0;
    started = pthread_create(&th[1], NULL, init_many, NULL) == 0 && started;
    init_many(NULL);
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
    ggml_quantize_free();
    ggml_quantize_free();
    ok(started, "init and free from three threads at once, many times over");
    is_int(tap_log_errors(), 0, "init and free of valid types log nothing");

    ggml_quantize_init((enum ggml_type) -1);
    logged_one_error("ggml_quantize_init with an invalid type logs one error");
}

int main(void)
{
    tap_capture_log();

    check_golden_blocks();
    check_zero_blocks();
    check_round_trips();
    check_chunk();
    check_row_function_errors();
    check_init_free();

    return tap_done();
}
