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

/* ------------------------------------------------------------ the data */

static struct qd_upstream upstream[NTYPES] = {
    { .name = "tq1_0", .type = GGML_TYPE_TQ1_0 },
    { .name = "tq2_0", .type = GGML_TYPE_TQ2_0 },
    { .name = "iq4_xs", .type = GGML_TYPE_IQ4_XS },
};

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
        ok(n == ROWS * ggml_row_size(u->type, COLS) && u->have_hash[set] && qd_fnv1a(qbig, n) == u->hash[set],
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
    qd_check_vec_dot(t, u->name, NULL);

    /* every byte but the scale d random: digits and codes no quantizer
       writes (TQ2_0's code 3, +2 d, among them) */
    static float a[QD_DOT_N], db[QD_DOT_N];
    static uint8_t qa[QD_DOT_N * 2], qb[QD_DOT_N * 2];
    qd_rng r = { 77u };
    for (int i = 0; i < QD_DOT_N; i++)
        a[i] = qd_gauss(&r);
    ggml_quantize_chunk(t, a, qa, 0, 1, QD_DOT_N, NULL);
    const size_t bsize = ggml_type_size(t), d_at = t == GGML_TYPE_TQ1_0 ? 52 : t == GGML_TYPE_TQ2_0 ? 64 : 0;
    for (size_t i = 0; i < QD_DOT_N / QK_K * bsize; i++)
        if (i % bsize < d_at || i % bsize >= d_at + 2)
            qa[i] = (uint8_t) (qd_uniform(&r) * 256.0f);
    qd_q8_K_operand(qb, db);
    char what[64];
    snprintf(what, sizeof what, "%s: random code bytes", u->name);
    qd_check_vec_dot_of(t, what, qa, QD_DOT_N, qb, db);
}

int main(void)
{
    tap_capture_log();
    static float x[QD_NB * QK_K];
    qd_fill_edge_blocks_from(x, 2024u, true);   /* the input tqquants.txt was recorded on */
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
        qd_check_chunk(u->type, u->name, u->type == GGML_TYPE_IQ4_XS ? QD_IMATRIX_USED : QD_IMATRIX_IGNORED, true);
        check_vec_dot(u);
    }
    check_validation();
    return tap_done();
}
