/*
 * test-quants-iq1.c - the IQ1_S and IQ1_M formats against upstream ggml's
 * blocks (tests/data/iq1quants.txt, see its header), plus
 * ggml_quantize_chunk, validation, the lookup tables' life cycle and the
 * CPU dot products.
 *
 * Checked:
 *   - to_float decodes upstream's blocks (with and without importance
 *     weights) to upstream's floats bit for bit;
 *   - our quantizer's root-mean-square error on three fixed input sets is
 *     no worse than upstream's (relative tolerance 1e-6), with importance
 *     weights (the error weighted by them) and, for IQ1_M, without; on the
 *     edge-case blocks (zeros, one huge value, all positive, all negative,
 *     tiny) no worse than upstream's either;
 *   - ggml_quantize_chunk: IQ1_S refuses to run without importance weights
 *     (ggml_quantize_requires_imatrix), chunks at row offsets, degenerate
 *     weights and non-finite input, before and after ggml_quantize_init /
 *     ggml_quantize_free;
 *   - ggml_validate_row_data: non-finite scales are refused (IQ1_M's
 *     scale gathered from its four nibbles);
 *   - the CPU traits: vec_dot_type q8_K, vec_dot within 1e-5 of |products|
 *     of a double-precision dot product of the decoded rows.
 *
 * The inputs are the same as test-quants-k's (qd_rng and single float
 * operations one per statement, no contraction possible), so the upstream
 * generator program computed exactly the same floats.
 */
#include "config.h"

#include <float.h>

#include "ggml-cpu.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "tap.h"
#include "quant-data.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* ------------------------------------------------------------ the data */

static struct qd_upstream upstream[2] = {
    { .name = "iq1_s", .type = GGML_TYPE_IQ1_S },
    { .name = "iq1_m", .type = GGML_TYPE_IQ1_M },
};

/* The rows of blocks and floats: the data file's variants. */
static const char *const variants[] = { "ref", "imat" };

/* ------------------------------------------------------------- helpers */

static void to_float(enum ggml_type t, const void *x, float *y, int64_t n)
{
    ggml_get_type_traits(t)->to_float(x, y, n);
}

/* The variants upstream recorded: IQ1_S only with importance weights. */
static int first_variant(const struct qd_upstream *u)
{
    return u->type == GGML_TYPE_IQ1_S ? 1 : 0;
}

/* ----------------------------------------------------------- the checks */

/* Upstream's blocks decode to upstream's floats. */
static void check_decoding(const struct qd_upstream *u)
{
    for (int v = first_variant(u); v < 2; v++)
        for (int i = 0; i < QD_NB; i++) {
            float y[QK_K];
            bool same = u->have_block[v][i] && u->have_floats[v][i];
            if (same) {
                to_float(u->type, u->blocks[v][i], y, QK_K);
                same = memcmp(y, u->floats[v][i], sizeof y) == 0;
            }
            ok(same, "%s: upstream's %s block %d decodes to upstream's floats bit for bit", u->name,
               v ? "imat" : "ref", i);
        }
}

/* Our blocks of the edge-case input: no worse than upstream's block by block. */
static void check_edge_blocks(const struct qd_upstream *u, const float *x)
{
    static uint8_t q[QD_NB * 256];
    static float w[QK_K];
    float y[QK_K];
    qd_fill_imatrix(w, QK_K);
    for (int v = first_variant(u); v < 2; v++) {
        ggml_quantize_chunk(u->type, x, q, 0, QD_NB, QK_K, v ? w : NULL);
        for (int i = 0; i < QD_NB; i++) {
            to_float(u->type, q + i * ggml_type_size(u->type), y, QK_K);
            const double ours = qd_rmse(x + i * QK_K, y, QK_K, v ? w : NULL, QK_K);
            const double theirs = qd_rmse(x + i * QK_K, u->floats[v][i], QK_K, v ? w : NULL, QK_K);
            ok(u->have_floats[v][i] && ours <= theirs * (1.0 + 1e-6), "%s: %s edge block %d: RMSE %.4g, upstream %.4g",
               u->name, v ? "imat" : "ref", i, ours, theirs);
        }
        /* the zero block is zero; the lone huge value keeps most of its size
           (not all: the shift of 1/8 step puts each of the 255 zeros of its
           block 1/8 step away, so the best step is smaller than 1e4) */
        to_float(u->type, q + 2 * ggml_type_size(u->type), y, QK_K);
        bool zero = true;
        for (int j = 0; j < QK_K; j++)
            zero = zero && y[j] == 0.0f;
        ok(zero, "%s: a zero block decodes to zeros", u->name);
        to_float(u->type, q + 3 * ggml_type_size(u->type), y, QK_K);
        ok(y[77] >= 5000.0f, "%s: a lone 1e4 decodes as %.6g, at least half of it", u->name, y[77]);
    }
}

static void check_chunk(const struct qd_upstream *u)
{
    const enum ggml_type t = u->type;
    const char *name = u->name;
    enum { ROWS = 3, COLS = 512 };
    const size_t row = ggml_row_size(t, COLS);
    static float x[ROWS * COLS], w[COLS];
    static uint8_t whole[ROWS * 256 + 1], parts[ROWS * 256 + 1];
    qd_rng r = { 99u };
    for (int i = 0; i < ROWS * COLS; i++)
        x[i] = qd_gauss(&r);
    qd_fill_imatrix(w, COLS);

    memset(whole, 0xcd, sizeof whole);
    memset(parts, 0xcd, sizeof parts);
    const size_t n = ggml_quantize_chunk(t, x, whole, 0, ROWS, COLS, w);
    ok(n == ROWS * row && whole[ROWS * row] == 0xcd, "%s: chunk writes %zu bytes and no more", name, n);
    for (int i = 0; i < ROWS; i++)
        ggml_quantize_chunk(t, x, parts, (int64_t) i * COLS, 1, COLS, w);
    ok(memcmp(whole, parts, ROWS * row) == 0, "%s: rows quantized at their start offsets match", name);
    ok(ggml_get_type_traits(t)->from_float_ref == NULL, "%s: no from_float_ref (as in ggml)", name);

    const size_t unweighted = ggml_quantize_chunk(t, x, parts, 0, ROWS, COLS, NULL);
    if (t == GGML_TYPE_IQ1_S) {
        ok(unweighted == 0, "%s: a chunk without importance weights is refused", name);
        logged_one_error("%s: the missing weights are reported", name);
        ok(ggml_quantize_requires_imatrix(t), "%s: importance matrix required", name);
    } else {
        ok(unweighted == ROWS * row && memcmp(whole, parts, ROWS * row) != 0,
           "%s: without importance weights: other blocks", name);
        ok(!ggml_quantize_requires_imatrix(t), "%s: no importance matrix required", name);
    }

    /* the tables rebuilt after ggml_quantize_free, and built by ggml_quantize_init */
    ggml_quantize_free();
    ggml_quantize_chunk(t, x, parts, 0, ROWS, COLS, w);
    ok(memcmp(whole, parts, ROWS * row) == 0, "%s: same blocks after ggml_quantize_free", name);
    ggml_quantize_free();
    ggml_quantize_init(t);
    ggml_quantize_chunk(t, x, parts, 0, ROWS, COLS, w);
    ok(memcmp(whole, parts, ROWS * row) == 0, "%s: same blocks after ggml_quantize_init", name);

    /* weights that are zero, negative or NaN: blocks still finite and valid */
    static float bad_w[COLS];
    for (int j = 0; j < COLS; j++)
        bad_w[j] = j % 3 == 0 ? 0.0f : j % 3 == 1 ? -1.0f : NAN;
    ggml_quantize_chunk(t, x, parts, 0, ROWS, COLS, bad_w);
    ok(ggml_validate_row_data(t, parts, ROWS * row), "%s: degenerate weights still give valid blocks", name);
    for (int j = 0; j < COLS; j++)
        bad_w[j] = 0.0f;
    ggml_quantize_chunk(t, x, parts, 0, ROWS, COLS, bad_w);
    ok(ggml_validate_row_data(t, parts, ROWS * row), "%s: all-zero weights still give valid blocks", name);
    ggml_quantize_chunk(t, x, parts, 0, 1, COLS - 1, w);
    logged_one_error("%s: a row length that is not a multiple of 256 is refused", name);

    /* non-finite and huge input: quantized without a fault, valid, and
       the finite blocks after it are unaffected */
    static float odd[2 * QK_K];
    memcpy(odd, x, sizeof odd);
    odd[3] = NAN;
    odd[100] = INFINITY;
    odd[101] = -3e38f;
    const size_t n_odd = ggml_quantize_chunk(t, odd, parts, 0, 1, 2 * QK_K, w);
    ggml_quantize_chunk(t, x, whole, 0, 1, 2 * QK_K, w);
    const size_t bsize = ggml_type_size(t);
    ok(n_odd == 2 * bsize && memcmp(parts + bsize, whole + bsize, bsize) == 0 &&
           ggml_validate_row_data(t, parts, 2 * bsize),
       "%s: NaN, infinity and -3e38 in a block: quantized, valid, the next block unchanged", name);
}

static void check_validation(void)
{
    block_iq1_s s;
    block_iq1_m m;
    memset(&s, 0, sizeof s);
    memset(&m, 0, sizeof m);
    ok(ggml_validate_row_data(GGML_TYPE_IQ1_S, &s, sizeof s), "iq1_s: a zero block is valid");
    s.d = 0x7e00;   /* NaN */
    ok(!ggml_validate_row_data(GGML_TYPE_IQ1_S, &s, sizeof s), "iq1_s: a NaN d is refused");
    logged_one_error("iq1_s: the bad block is reported");
    ok(ggml_validate_row_data(GGML_TYPE_IQ1_M, &m, sizeof m), "iq1_m: a zero block is valid");
    /* every other bit of the scales words set: the sub-block scales are not the block scale */
    for (int i = 0; i < 8; i += 2) {
        m.scales[i] = 0xff;
        m.scales[i + 1] = 0x0f;
    }
    ok(ggml_validate_row_data(GGML_TYPE_IQ1_M, &m, sizeof m), "iq1_m: the 3-bit scales never make d invalid");
    /* d = 0x7c00 (inf): nibbles 0, 0, 0xc, 0x7 in words 0..3 */
    m.scales[5] |= 0xc0;
    m.scales[7] |= 0x70;
    ok(ggml__fp16_to_fp32(ggml__iq1_m_scale(m.scales)) == INFINITY, "iq1_m: the scale gathers from four nibbles");
    ok(!ggml_validate_row_data(GGML_TYPE_IQ1_M, &m, sizeof m), "iq1_m: an infinite d is refused");
    logged_one_error("iq1_m: the bad block is reported");
}

/* The CPU traits' vec_dot against the decoded rows' product in double. */
static void check_vec_dot(const struct qd_upstream *u)
{
    const enum ggml_type t = u->type;
    const struct ggml_type_traits_cpu *cpu = ggml_get_type_traits_cpu(t);
    ok(cpu->vec_dot_type == GGML_TYPE_Q8_K && cpu->vec_dot != NULL && cpu->nrows == 1,
       "%s: CPU traits: vec_dot against q8_K", u->name);
    enum { N = 1024 };
    static float a[N], b[N], da[N], db[N], w[N];
    static uint8_t qa[N], qb[N * 2];
    qd_rng r = { 4242u };
    for (int i = 0; i < N; i++) {
        a[i] = qd_gauss(&r);
        b[i] = qd_gauss(&r);
    }
    a[3] = 40.0f;   /* an outlier */
    qd_fill_imatrix(w, N);
    ggml_quantize_chunk(t, a, qa, 0, 1, N, w);
    ggml_get_type_traits_cpu(GGML_TYPE_Q8_K)->from_float(b, qb, N);
    to_float(t, qa, da, N);
    ggml__dequantize_row_q8_K(qb, db, N);
    double want = 0.0, mag = 0.0;
    for (int i = 0; i < N; i++) {
        want += (double) da[i] * db[i];
        mag += fabs((double) da[i] * db[i]);
    }
    float got = NAN;
    cpu->vec_dot(N, &got, 0, qa, 0, qb, 0, 1);
    ok(fabs(got - want) <= 1e-5 * mag, "%s: vec_dot %.7g, reference %.7g", u->name, got, want);
}

int main(void)
{
    tap_capture_log();
    static float x[QD_NB * QK_K];
    qd_fill_edge_blocks(x);
    ok(qd_read_data("iq1quants.txt", upstream, 2, variants, QD_COUNT(variants)),
       "the data file of upstream's blocks reads");
    for (int t = 0; t < 2; t++) {
        check_decoding(&upstream[t]);
        qd_check_rmse(&upstream[t], 777u, first_variant(&upstream[t]) == 1);
        check_edge_blocks(&upstream[t], x);
        check_chunk(&upstream[t]);
        check_vec_dot(&upstream[t]);
    }
    check_validation();
    ggml_quantize_free();
    return tap_done();
}
