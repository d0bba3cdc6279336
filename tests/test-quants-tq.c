/*
 * test-quants-tq.c - the formats TQ1_0, TQ2_0 and IQ4_XS against upstream
 * ggml's blocks (tests/data/tqquants.txt, see its header), plus
 * ggml_quantize_chunk, validation and the CPU dot products.
 *
 * Checked:
 *   - every type: to_float decodes upstream's blocks to upstream's floats
 *     bit for bit;
 *   - tq1_0, tq2_0: our quantizer writes upstream's blocks byte for byte
 *     on the edge-case input and on three sets of 8 rows of 4096 values
 *     (compared through upstream's FNV-1a hash of the bytes);
 *   - iq4_xs: our root-mean-square error on those three sets is no worse
 *     than upstream's (relative tolerance 1e-6), without importance
 *     weights and with them (the error then weighted by them); on the
 *     edge-case blocks too, block by block;
 *   - ggml_quantize_chunk: chunks at row offsets, importance weights
 *     (used by iq4_xs, ignored by the ternary formats), from_float_ref
 *     equal to a chunk without weights, non-finite input;
 *   - ggml_validate_row_data: non-finite scales are refused;
 *   - the CPU traits: vec_dot_type q8_K, vec_dot within 1e-5 of |products|
 *     of a double-precision dot product of the decoded rows.
 *
 * The inputs are made with the integer generator qd_rng and one single
 * float operation per statement, so the upstream generator program
 * computed exactly the same floats.
 */
#include "config.h"

#include <float.h>

#include "ggml-cpu.h"
#include "quants-impl.h"
#include "tap.h"
#include "quant-data.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* ------------------------------------------------------------- inputs */

#define ROWS QD_RMSE_ROWS
#define COLS QD_RMSE_COLS
#define NTYPES 3

/* Blocks: 0-1 random, 2 zeros, 3 one value 1e4, 4 the values -1, -0.5,
   0, 0.5, 1 repeated (ternary ties), 5 all positive, 6 all negative,
   7 tiny (1e-6). */
static void fill_blocks(float *x)
{
    qd_rng r = { 2024u };
    memset(x, 0, QD_NB * QK_K * sizeof *x);
    for (int i = 0; i < 512; i++)
        x[i] = qd_gauss(&r);
    x[3 * 256 + 77] = 10000.0f;
    for (int i = 0; i < 256; i++) {
        const float v = (float) (i % 5 - 2);
        x[4 * 256 + i] = v * 0.5f;
    }
    for (int i = 0; i < 256; i++)
        x[5 * 256 + i] = 2.0f + qd_uniform(&r);
    for (int i = 0; i < 256; i++) {
        const float u = qd_uniform(&r) * 3.0f;
        x[6 * 256 + i] = -1.0f - u;
    }
    for (int i = 0; i < 256; i++)
        x[7 * 256 + i] = qd_gauss(&r) * 1e-6f;
}

/* ------------------------------------------------------------ the data */

static struct qd_upstream upstream[NTYPES] = {
    { .name = "tq1_0", .type = GGML_TYPE_TQ1_0 },
    { .name = "tq2_0", .type = GGML_TYPE_TQ2_0 },
    { .name = "iq4_xs", .type = GGML_TYPE_IQ4_XS },
};

/* ------------------------------------------------------------- helpers */

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

/* ----------------------------------------------------------- the checks */

/* Upstream's blocks decode to upstream's floats. */
static void check_decoding(const struct qd_upstream *u)
{
    for (int i = 0; i < QD_NB; i++) {
        float y[QK_K];
        bool same = u->have_block[0][i] && u->have_floats[0][i];
        if (same) {
            ggml_get_type_traits(u->type)->to_float(u->blocks[0][i], y, QK_K);
            same = memcmp(y, u->floats[0][i], sizeof y) == 0;
        }
        ok(same, "%s: upstream's block %d decodes to upstream's floats bit for bit", u->name, i);
    }
}

/* The ternary quantizers write upstream's bytes. */
static void check_ternary_bytes(const struct qd_upstream *u, const float *x)
{
    static uint8_t q[QD_NB * sizeof(block_tq2_0)];
    const size_t bs = ggml_type_size(u->type);
    ggml_quantize_chunk(u->type, x, q, 0, QD_NB, QK_K, NULL);
    for (int i = 0; i < QD_NB; i++)
        ok(u->have_block[0][i] && memcmp(q + i * bs, u->blocks[0][i], bs) == 0,
           "%s: edge block %d equals upstream's byte for byte", u->name, i);

    static float big[ROWS * COLS];
    static uint8_t qbig[ROWS * COLS];
    for (int set = 0; set < 3; set++) {
        qd_fill_rmse_set(set, 555u, big);
        const size_t n = ggml_quantize_chunk(u->type, big, qbig, 0, ROWS, COLS, NULL);
        ok(n == ROWS * ggml_row_size(u->type, COLS) && u->have_hash[set] && fnv1a(qbig, n) == u->hash[set],
           "%s: set %d (8 rows of 4096) quantizes to upstream's bytes", u->name, set);
    }
}

/* Our blocks of the edge-case input: no worse than upstream's block by block. */
static void check_edge_blocks(const struct qd_upstream *u, const float *x)
{
    static uint8_t q[QD_NB * sizeof(block_iq4_xs)];
    const size_t bs = ggml_type_size(u->type);
    float y[QK_K];
    ggml_quantize_chunk(u->type, x, q, 0, QD_NB, QK_K, NULL);
    for (int i = 0; i < QD_NB; i++) {
        ggml_get_type_traits(u->type)->to_float(q + i * bs, y, QK_K);
        const double ours = qd_rmse(x + i * QK_K, y, QK_K, NULL, 1);
        const double theirs = qd_rmse(x + i * QK_K, u->floats[0][i], QK_K, NULL, 1);
        ok(u->have_floats[0][i] && ours <= theirs * (1.0 + 1e-6), "%s: edge block %d: RMSE %.4g, upstream %.4g",
           u->name, i, ours, theirs);
    }
    ggml_get_type_traits(u->type)->to_float(q + 2 * bs, y, QK_K);
    bool zero = true;
    for (int j = 0; j < QK_K; j++)
        zero = zero && y[j] == 0.0f;
    ok(zero, "%s: a zero block decodes to zeros", u->name);
    ggml_get_type_traits(u->type)->to_float(q + 3 * bs, y, QK_K);
    /* the zeros around it decode to the step times level 1 or -10 (no
       level is 0), so the least error puts the step a little lower */
    ok(fabsf(y[77] - 10000.0f) <= 100.0f, "%s: a lone 1e4 decodes as %.6g (within 1%%)", u->name, y[77]);
}

static void check_chunk(const struct qd_upstream *u)
{
    const enum ggml_type t = u->type;
    const bool weighs = t == GGML_TYPE_IQ4_XS;
    enum { R = 3, C = 512 };
    const size_t row = ggml_row_size(t, C);
    static float x[R * C], w[C];
    static uint8_t whole[R * 272 + 1], parts[R * 272 + 1], ref[R * 272];
    qd_rng r = { 99u };
    for (int i = 0; i < R * C; i++)
        x[i] = qd_gauss(&r);
    qd_fill_imatrix(w, C);

    memset(whole, 0xcd, sizeof whole);
    memset(parts, 0xcd, sizeof parts);
    const size_t n = ggml_quantize_chunk(t, x, whole, 0, R, C, w);
    ok(n == R * row && whole[R * row] == 0xcd, "%s: chunk writes %zu bytes and no more", u->name, n);
    for (int i = 0; i < R; i++)
        ggml_quantize_chunk(t, x, parts, (int64_t) i * C, 1, C, w);
    ok(memcmp(whole, parts, R * row) == 0, "%s: rows quantized at their start offsets match", u->name);

    ggml_quantize_chunk(t, x, parts, 0, R, C, NULL);
    ok((memcmp(whole, parts, R * row) != 0) == weighs, "%s: the importance matrix %s the blocks", u->name,
       weighs ? "changes" : "does not change");
    ggml_get_type_traits(t)->from_float_ref(x, ref, R * C);
    ok(memcmp(ref, parts, R * row) == 0, "%s: from_float_ref equals a chunk without weights", u->name);
    ok(!ggml_quantize_requires_imatrix(t), "%s: no importance matrix required", u->name);

    /* weights that are zero, negative or NaN: blocks still finite and valid */
    static float bad_w[C];
    for (int j = 0; j < C; j++)
        bad_w[j] = j % 3 == 0 ? 0.0f : j % 3 == 1 ? -1.0f : NAN;
    ggml_quantize_chunk(t, x, parts, 0, R, C, bad_w);
    ok(ggml_validate_row_data(t, parts, R * row), "%s: degenerate weights still give valid blocks", u->name);
    ggml_quantize_chunk(t, x, parts, 0, 1, C - 1, NULL);
    logged_one_error("%s: a row length that is not a multiple of 256 is refused", u->name);

    /* non-finite and huge input: quantized without a fault, and the
       finite blocks after it are unaffected */
    static float odd[2 * QK_K];
    memcpy(odd, x, sizeof odd);
    odd[3] = NAN;
    odd[100] = INFINITY;
    odd[101] = -3e38f;
    const size_t n_odd = ggml_quantize_chunk(t, odd, parts, 0, 1, 2 * QK_K, NULL);
    ggml_quantize_chunk(t, x, whole, 0, 1, 2 * QK_K, NULL);
    const size_t bsize = ggml_type_size(t);
    ok(n_odd == 2 * bsize && memcmp(parts + bsize, whole + bsize, bsize) == 0,
       "%s: NaN, infinity and -3e38 in a block: quantized, the next block unchanged", u->name);
}

static void check_validation(void)
{
    block_tq1_0 b1;
    block_tq2_0 b2;
    block_iq4_xs b4;
    memset(&b1, 0, sizeof b1);
    memset(&b2, 0, sizeof b2);
    memset(&b4, 0xff, sizeof b4);
    b4.d = 0x3c00;
    ok(ggml_validate_row_data(GGML_TYPE_TQ1_0, &b1, sizeof b1), "tq1_0: a zero block is valid");
    b1.d = 0x7e00;   /* NaN */
    ok(!ggml_validate_row_data(GGML_TYPE_TQ1_0, &b1, sizeof b1), "tq1_0: a NaN d is refused");
    logged_one_error("tq1_0: the bad block is reported");
    ok(ggml_validate_row_data(GGML_TYPE_TQ2_0, &b2, sizeof b2), "tq2_0: a zero block is valid");
    b2.d = 0xfc00;   /* -inf */
    ok(!ggml_validate_row_data(GGML_TYPE_TQ2_0, &b2, sizeof b2), "tq2_0: an infinite d is refused");
    logged_one_error("tq2_0: the bad block is reported");
    ok(ggml_validate_row_data(GGML_TYPE_IQ4_XS, &b4, sizeof b4), "iq4_xs: a block of 0xff codes and scales is valid");
    b4.d = 0x7c00;
    ok(!ggml_validate_row_data(GGML_TYPE_IQ4_XS, &b4, sizeof b4), "iq4_xs: an infinite d is refused");
    logged_one_error("iq4_xs: the bad block is reported");
    ok(!ggml_validate_row_data(GGML_TYPE_IQ4_XS, &b4, sizeof b4 - 1), "iq4_xs: a partial block is refused");
    logged_one_error("iq4_xs: the partial block is reported");
}

/* The CPU traits' vec_dot against the decoded rows' product in double. */
static void check_vec_dot(const struct qd_upstream *u)
{
    const enum ggml_type t = u->type;
    const struct ggml_type_traits_cpu *cpu = ggml_get_type_traits_cpu(t);
    ok(cpu->vec_dot_type == GGML_TYPE_Q8_K && cpu->vec_dot != NULL && cpu->nrows == 1,
       "%s: CPU traits: vec_dot against q8_K", u->name);
    enum { N = 1024 };
    static float a[N], b[N], da[N], db[N];
    static uint8_t qa[N], qb[N * 2];
    qd_rng r = { 4242u };
    for (int i = 0; i < N; i++) {
        a[i] = qd_gauss(&r);
        b[i] = qd_gauss(&r);
    }
    a[3] = 40.0f;   /* an outlier */
    ggml_quantize_chunk(t, a, qa, 0, 1, N, NULL);
    if (t == GGML_TYPE_TQ2_0)   /* code 3 (+2 d), which only other writers produce */
        qa[5] |= 0x30;
    ggml_get_type_traits_cpu(GGML_TYPE_Q8_K)->from_float(b, qb, N);
    ggml_get_type_traits(t)->to_float(qa, da, N);
    ggml__dequantize_row_q8_K(qb, db, N);
    double want = 0.0, mag = 0.0;
    for (int i = 0; i < N; i++) {
        want += (double) da[i] * db[i];
        mag += fabs((double) da[i] * db[i]);
    }
    float got = NAN;
    cpu->vec_dot(N, &got, 0, qa, 0, qb, 0, 1);
    ok(fabs(got - want) <= 1e-5 * mag, "%s: vec_dot %.7g, reference %.7g", u->name, got, want);

    /* every byte but the scale d random: digits and codes no quantizer writes */
    const size_t bsize = ggml_type_size(t), d_at = t == GGML_TYPE_TQ1_0 ? 52 : t == GGML_TYPE_TQ2_0 ? 64 : 0;
    for (size_t i = 0; i < N / QK_K * bsize; i++)
        if (i % bsize < d_at || i % bsize >= d_at + 2)
            qa[i] = (uint8_t) (qd_uniform(&r) * 256.0f);
    ggml_get_type_traits(t)->to_float(qa, da, N);
    want = mag = 0.0;
    for (int i = 0; i < N; i++) {
        want += (double) da[i] * db[i];
        mag += fabs((double) da[i] * db[i]);
    }
    cpu->vec_dot(N, &got, 0, qa, 0, qb, 0, 1);
    ok(fabs(got - want) <= 1e-5 * mag, "%s: vec_dot of random code bytes %.7g, reference %.7g", u->name, got, want);
}

int main(void)
{
    tap_capture_log();
    static float x[QD_NB * QK_K];
    fill_blocks(x);
    ok(qd_read_data("tqquants.txt", upstream, NTYPES, NULL, 0),
       "the data file of upstream's blocks reads");

    for (int t = 0; t < NTYPES; t++) {
        const struct qd_upstream *u = &upstream[t];
        check_decoding(u);
        if (u->type == GGML_TYPE_IQ4_XS) {
            qd_check_rmse(u, 555u, false);
            check_edge_blocks(u, x);
        } else {
            check_ternary_bytes(u, x);
        }
        check_chunk(u);
        check_vec_dot(u);
    }
    check_validation();
    return tap_done();
}
