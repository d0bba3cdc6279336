/*
 * test-quants-k23.c - the K-quant formats q2_K and q3_K against upstream
 * ggml's blocks (tests/data/k23quants.txt, see its header), plus
 * ggml_quantize_chunk, validation and the CPU dot products.
 *
 * Checked:
 *   - to_float decodes upstream's blocks (quantized with and without
 *     importance weights) to upstream's floats bit for bit;
 *   - our quantizer's root-mean-square error on three fixed input sets is
 *     no worse than upstream's (relative tolerance 1e-6), without
 *     importance weights and with them (the error then weighted by them);
 *     on the edge-case blocks (zeros, one huge value, signed extremes, all
 *     positive, all negative, tiny) no worse than upstream's either;
 *   - ggml_quantize_chunk: chunks at row offsets, importance weights used,
 *     from_float_ref equal to a chunk without weights, degenerate weights,
 *     non-finite input;
 *   - ggml_validate_row_data: non-finite scales are refused;
 *   - the CPU traits: vec_dot_type q8_K, vec_dot within 1e-5 of |products|
 *     of a double-precision dot product of the decoded rows; the bias of
 *     from_float and vec_dot on smooth rows (qd_check_dot_bias).
 *
 * The inputs are made here with the integer generator qd_rng and single
 * float operations one per statement (no contraction possible), so the
 * upstream generator program computed exactly the same floats.
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

#define MAX_BLOCK 110   /* bytes of the larger block (q3_K) */

/* ------------------------------------------------------------ the data */

static struct qd_upstream upstream[2] = {
    { .name = "q2_K", .type = GGML_TYPE_Q2_K },
    { .name = "q3_K", .type = GGML_TYPE_Q3_K },
};

/* The rows of blocks and floats: the data file's variants. */
static const char *const variants[] = { "ref", "imat" };

/* ------------------------------------------------------------- helpers */

static void to_float(enum ggml_type t, const void *x, float *y, int64_t n)
{
    ggml_get_type_traits(t)->to_float(x, y, n);
}

/* ----------------------------------------------------------- the checks */

/* Upstream's blocks decode to upstream's floats (all blocks without weights, those recorded with). */
static void check_decoding(const struct qd_upstream *u)
{
    for (int w = 0; w < 2; w++) {
        int checked = 0;
        for (int i = 0; i < QD_NB; i++) {
            if (w && !u->have_block[w][i])
                continue;
            float y[QK_K];
            bool same = u->have_block[w][i] && u->have_floats[w][i];
            if (same) {
                to_float(u->type, u->blocks[w][i], y, QK_K);
                same = memcmp(y, u->floats[w][i], sizeof y) == 0;
            }
            ok(same, "%s: upstream's %s block %d decodes to upstream's floats bit for bit", u->name,
               w ? "importance-weighted" : "plain", i);
            checked++;
        }
        ok(checked >= 2, "%s: %d %s blocks of upstream's checked", u->name, checked, w ? "weighted" : "plain");
    }
}

/* Our blocks of the edge-case input: no worse than upstream's block by block. */
static void check_edge_blocks(const struct qd_upstream *u, const float *x)
{
    const enum ggml_type t = u->type;
    const size_t bsize = ggml_type_size(t);
    static uint8_t q[QD_NB * MAX_BLOCK];
    float y[QK_K];
    ggml_quantize_chunk(t, x, q, 0, QD_NB, QK_K, NULL);
    for (int i = 0; i < QD_NB; i++) {
        to_float(t, q + i * bsize, y, QK_K);
        const double ours = qd_rmse(x + i * QK_K, y, QK_K, NULL, 1);
        const double theirs = qd_rmse(x + i * QK_K, u->floats[0][i], QK_K, NULL, 1);
        ok(u->have_floats[0][i] && ours <= theirs * (1.0 + 1e-6), "%s: edge block %d: RMSE %.4g, upstream %.4g",
           u->name, i, ours, theirs);
    }
    /* the zero block is zero, the huge value comes back within its step */
    to_float(t, q + 2 * bsize, y, QK_K);
    bool zero = true;
    for (int j = 0; j < QK_K; j++)
        zero = zero && y[j] == 0.0f;
    ok(zero, "%s: a zero block decodes to zeros", u->name);
    to_float(t, q + 3 * bsize, y, QK_K);
    ok(fabsf(y[77] - 10000.0f) <= 10.0f, "%s: a lone 1e4 decodes as %.6g", u->name, y[77]);
}

static void check_validation(void)
{
    block_q2_K b2;
    block_q3_K b3;
    memset(&b2, 0, sizeof b2);
    memset(&b3, 0, sizeof b3);
    ok(ggml_validate_row_data(GGML_TYPE_Q2_K, &b2, sizeof b2), "q2_K: a zero block is valid");
    b2.dmin = 0x7e00;   /* NaN */
    ok(!ggml_validate_row_data(GGML_TYPE_Q2_K, &b2, sizeof b2), "q2_K: a NaN dmin is refused");
    logged_one_error("q2_K: the bad block is reported");
    b2.dmin = 0;
    b2.d = 0x7c00;   /* inf */
    ok(!ggml_validate_row_data(GGML_TYPE_Q2_K, &b2, sizeof b2), "q2_K: an infinite d is refused");
    logged_one_error("q2_K: the bad block is reported");
    memset(b3.hmask, 0xff, sizeof b3.hmask);
    memset(b3.scales, 0xff, sizeof b3.scales);
    ok(ggml_validate_row_data(GGML_TYPE_Q3_K, &b3, sizeof b3), "q3_K: any codes and scales are valid");
    b3.d = 0xfc00;   /* -inf */
    ok(!ggml_validate_row_data(GGML_TYPE_Q3_K, &b3, sizeof b3), "q3_K: an infinite d is refused");
    logged_one_error("q3_K: the bad block is reported");
    b3.d = 0x7e01;   /* NaN */
    ok(!ggml_validate_row_data(GGML_TYPE_Q3_K, &b3, sizeof b3), "q3_K: a NaN d is refused");
    logged_one_error("q3_K: the bad block is reported");
}

int main(void)
{
    tap_capture_log();
    static float x[QD_NB * QK_K];
    qd_fill_edge_blocks(x);
    ok(qd_read_data("k23quants.txt", upstream, 2, variants, QD_COUNT(variants)),
       "the data file of upstream's blocks reads");

    for (int t = 0; t < 2; t++) {
        check_decoding(&upstream[t]);
        qd_check_rmse(&upstream[t], 777u, false);
        check_edge_blocks(&upstream[t], x);
        qd_check_chunk(upstream[t].type, upstream[t].name, QD_IMATRIX_USED, true);
        qd_check_vec_dot(upstream[t].type, upstream[t].name, NULL);
        qd_check_dot_bias(upstream[t].name, upstream[t].type, upstream[t].type == GGML_TYPE_Q2_K ? 0.04 : 0.02);
    }
    check_validation();
    return tap_done();
}
