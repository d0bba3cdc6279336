/*
 * test-quants-k.c - the K-quant formats q8_K, q4_K, q5_K and q6_K against
 * upstream ggml's blocks (tests/data/kquants.txt, see its header), plus
 * ggml_quantize_chunk, validation and the CPU dot products.
 *
 * Checked:
 *   - q8_K: the CPU encoder gives upstream's reference blocks byte for
 *     byte; the decoder gives upstream's floats bit for bit;
 *   - q4_K, q5_K, q6_K: to_float decodes upstream's blocks to upstream's floats
 *     bit for bit; our quantizer's root-mean-square error on three fixed
 *     input sets is no worse than upstream's (relative tolerance 1e-6),
 *     without importance weights and with them (the error then weighted
 *     by them); on the edge-case blocks (zeros, one huge value, all
 *     positive, all negative, tiny) the error is no worse than upstream's
 *     either, or the block is decoded exactly;
 *   - ggml_quantize_chunk: chunks at row offsets, importance weights used,
 *     from_float_ref equal to a chunk without weights;
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

/* ------------------------------------------------------------ the data */

static struct qd_upstream upstream[4] = {
    { .name = "q8_K", .type = GGML_TYPE_Q8_K },
    { .name = "q4_K", .type = GGML_TYPE_Q4_K },
    { .name = "q5_K", .type = GGML_TYPE_Q5_K },
    { .name = "q6_K", .type = GGML_TYPE_Q6_K },
};

/* The rows of blocks and floats: the data file's variants. */
static const char *const variants[] = { "ref" };

static enum ggml_type type_named(const char *name)
{
    return strcmp(name, "q8_K") == 0   ? GGML_TYPE_Q8_K
         : strcmp(name, "q4_K") == 0 ? GGML_TYPE_Q4_K
         : strcmp(name, "q5_K") == 0 ? GGML_TYPE_Q5_K
                                     : GGML_TYPE_Q6_K;
}

/* ------------------------------------------------------------- helpers */

static void to_float(enum ggml_type t, const void *x, float *y, int64_t n)
{
    if (t == GGML_TYPE_Q8_K)
        ggml__dequantize_row_q8_K(x, y, n);
    else
        ggml_get_type_traits(t)->to_float(x, y, n);
}

/* ----------------------------------------------------------- the checks */

static void check_q8_K_blocks(const float *x)
{
    const struct qd_upstream *u = qd_find(upstream, 4, "q8_K");
    static block_q8_K ours[QD_NB];
    memset(ours, 0xa5, sizeof ours);
    ggml_get_type_traits_cpu(GGML_TYPE_Q8_K)->from_float(x, ours, QD_NB * QK_K);
    for (int i = 0; i < QD_NB; i++)
        ok(u->have_block[0][i] && memcmp(&ours[i], u->blocks[0][i], sizeof ours[i]) == 0,
           "q8_K: block %d equals upstream's quantize_row_q8_K_ref byte for byte", i);
    ok(ggml_get_type_traits(GGML_TYPE_Q8_K)->to_float == NULL &&
           ggml_get_type_traits(GGML_TYPE_Q8_K)->from_float_ref == NULL,
       "q8_K: no public converters (as in ggml)");
    ok(ggml_get_type_traits_cpu(GGML_TYPE_Q8_K)->vec_dot_type == GGML_TYPE_Q8_K,
       "q8_K: its own vec_dot_type in the CPU traits");
}

/* Upstream's blocks decode to upstream's floats. */
static void check_decoding(const char *name)
{
    const struct qd_upstream *u = qd_find(upstream, 4, name);
    const enum ggml_type t = type_named(name);
    for (int i = 0; i < QD_NB; i++) {
        float y[QK_K];
        bool same = u->have_block[0][i] && u->have_floats[0][i];
        if (same) {
            to_float(t, u->blocks[0][i], y, QK_K);
            same = memcmp(y, u->floats[0][i], sizeof y) == 0;
        }
        ok(same, "%s: upstream's block %d decodes to upstream's floats bit for bit", name, i);
    }
}

/* Our blocks of the edge-case input: no worse than upstream's block by block. */
static void check_edge_blocks(const char *name, const float *x)
{
    const struct qd_upstream *u = qd_find(upstream, 4, name);
    const enum ggml_type t = type_named(name);
    static uint8_t q[QD_NB * 256];
    float y[QK_K];
    ggml_quantize_chunk(t, x, q, 0, QD_NB, QK_K, NULL);
    for (int i = 0; i < QD_NB; i++) {
        to_float(t, q + i * ggml_type_size(t), y, QK_K);
        const double ours = qd_rmse(x + i * QK_K, y, QK_K, NULL, 1);
        const double theirs = qd_rmse(x + i * QK_K, u->floats[0][i], QK_K, NULL, 1);
        ok(u->have_floats[0][i] && ours <= theirs * (1.0 + 1e-6),
           "%s: edge block %d: RMSE %.4g, upstream %.4g", name, i, ours, theirs);
    }
    /* the zero block is zero, the huge value comes back within its step */
    to_float(t, q + 2 * ggml_type_size(t), y, QK_K);
    bool zero = true;
    for (int j = 0; j < QK_K; j++)
        zero = zero && y[j] == 0.0f;
    ok(zero, "%s: a zero block decodes to zeros", name);
    to_float(t, q + 3 * ggml_type_size(t), y, QK_K);
    ok(fabsf(y[77] - 10000.0f) <= 10.0f, "%s: a lone 1e4 decodes as %.6g", name, y[77]);
}

static void check_validation(void)
{
    block_q4_K b4;
    block_q6_K b6;
    block_q8_K b8;
    memset(&b4, 0, sizeof b4);
    memset(&b6, 0, sizeof b6);
    memset(&b8, 0, sizeof b8);
    ok(ggml_validate_row_data(GGML_TYPE_Q4_K, &b4, sizeof b4), "q4_K: a zero block is valid");
    b4.dmin = 0x7e00;   /* NaN */
    ok(!ggml_validate_row_data(GGML_TYPE_Q4_K, &b4, sizeof b4), "q4_K: a NaN dmin is refused");
    logged_one_error("q4_K: the bad block is reported");
    b4.dmin = 0;
    b4.d = 0x7c00;   /* inf */
    ok(!ggml_validate_row_data(GGML_TYPE_Q4_K, &b4, sizeof b4), "q4_K: an infinite d is refused");
    logged_one_error("q4_K: the bad block is reported");
    block_q5_K b5;
    memset(&b5, 0, sizeof b5);
    ok(ggml_validate_row_data(GGML_TYPE_Q5_K, &b5, sizeof b5), "q5_K: a zero block is valid");
    b5.d = 0x7e00;
    ok(!ggml_validate_row_data(GGML_TYPE_Q5_K, &b5, sizeof b5), "q5_K: a NaN d is refused");
    logged_one_error("q5_K: the bad block is reported");
    ok(ggml_validate_row_data(GGML_TYPE_Q6_K, &b6, sizeof b6), "q6_K: a zero block is valid");
    b6.d = 0xfc00;
    ok(!ggml_validate_row_data(GGML_TYPE_Q6_K, &b6, sizeof b6), "q6_K: an infinite d is refused");
    logged_one_error("q6_K: the bad block is reported");
    b8.d = NAN;
    ok(!ggml_validate_row_data(GGML_TYPE_Q8_K, &b8, sizeof b8), "q8_K: a NaN d is refused");
    logged_one_error("q8_K: the bad block is reported");
}

int main(void)
{
    tap_capture_log();
    static float x[QD_NB * QK_K];
    qd_fill_edge_blocks(x);
    ok(qd_read_data("kquants.txt", upstream, 4, variants, QD_COUNT(variants)),
       "the data file of upstream's blocks reads");

    check_q8_K_blocks(x);
    check_decoding("q8_K");
    static const char *const types[] = { "q4_K", "q5_K", "q6_K" };
    for (int t = 0; t < 3; t++) {
        check_decoding(types[t]);
        qd_check_rmse(qd_find(upstream, 4, types[t]), 777u, false);
        check_edge_blocks(types[t], x);
        qd_check_chunk(type_named(types[t]), types[t], QD_IMATRIX_USED, true);
        qd_check_vec_dot(type_named(types[t]), types[t], NULL);
        qd_check_dot_bias(types[t], type_named(types[t]), 0.02);
    }
    check_validation();
    return tap_done();
}
