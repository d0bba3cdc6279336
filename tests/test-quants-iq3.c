/*
 * test-quants-iq3.c - the 3-bit codebook formats IQ3_XXS and IQ3_S against
 * upstream ggml's blocks (tests/data/iq3quants.txt, see its header), plus
 * ggml_quantize_chunk, the quantization tables, validation and the CPU dot
 * products.
 *
 * Checked:
 *   - to_float decodes upstream's blocks (its quantizer's, with and without
 *     importance weights, and pseudo-random bytes) to upstream's floats bit
 *     for bit;
 *   - our quantizer's root-mean-square error on three fixed input sets is
 *     no worse than upstream's (relative tolerance 1e-6), without
 *     importance weights and with them (the error then weighted by them);
 *     on the edge-case blocks (zeros, one huge value, signed extremes, all
 *     positive, all negative, tiny) no worse than upstream's either;
 *   - ggml_quantize_chunk: chunks at row offsets, importance weights used,
 *     from_float_ref equal to a chunk without weights, the same blocks with
 *     and without ggml_quantize_init and after ggml_quantize_free,
 *     degenerate weights and non-finite input;
 *   - ggml_validate_row_data: non-finite scales are refused;
 *   - the CPU traits: vec_dot_type q8_K, vec_dot within 1e-5 of |products|
 *     of a double-precision dot product of the decoded rows.
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

/* Block i (0..3) of pseudo-random bytes, with a small finite scale. */
static void fill_random(uint8_t *q, size_t size, int i)
{
    qd_rng r = { 4242u + (uint32_t) i };
    for (size_t j = 0; j < size; j++)
        q[j] = (uint8_t) (qd_next(&r) >> 24);
    q[0] = (uint8_t) (i * 17);
    q[1] = (uint8_t) (0x30 + i);
}

/* ------------------------------------------------------------ the data */

#define NRAND 4
#define MAX_BLOCK 110
enum { REF, IMAT, RAND };

static struct qd_upstream upstream[2] = {
    { .name = "iq3_xxs", .type = GGML_TYPE_IQ3_XXS },
    { .name = "iq3_s", .type = GGML_TYPE_IQ3_S },
};

/* The rows of blocks and floats: the data file's variants. */
static const char *const variants[] = { "ref", "imat", "rand" };

/* ------------------------------------------------------------- helpers */

static void to_float(enum ggml_type t, const void *x, float *y, int64_t n)
{
    ggml_get_type_traits(t)->to_float(x, y, n);
}

/* ----------------------------------------------------------- the checks */

/* Upstream's blocks decode to upstream's floats. */
static void check_decoding(const struct qd_upstream *u)
{
    static const char *const variant_names[3] = { "quantized", "weighted", "random" };
    for (int v = 0; v < 3; v++) {
        for (int i = 0; i < (v == RAND ? NRAND : QD_NB); i++) {
            float y[QK_K];
            bool same = u->have_block[v][i] && u->have_floats[v][i];
            if (same) {
                to_float(u->type, u->blocks[v][i], y, QK_K);
                same = memcmp(y, u->floats[v][i], sizeof y) == 0;
            }
            ok(same, "%s: upstream's %s block %d decodes to upstream's floats bit for bit", u->name, variant_names[v],
               i);
        }
    }
    /* the random bytes were made as the generator made them */
    for (int i = 0; i < NRAND; i++) {
        uint8_t q[MAX_BLOCK];
        fill_random(q, ggml_type_size(u->type), i);
        ok(memcmp(q, u->blocks[RAND][i], ggml_type_size(u->type)) == 0, "%s: random block %d regenerated", u->name,
           i);
    }
}

/* Our blocks of the edge-case input: no worse than upstream's block by block. */
static void check_edge_blocks(const struct qd_upstream *u, const float *x)
{
    const enum ggml_type t = u->type;
    static uint8_t q[QD_NB * MAX_BLOCK];
    float y[QK_K];
    ggml_quantize_chunk(t, x, q, 0, QD_NB, QK_K, NULL);
    for (int i = 0; i < QD_NB; i++) {
        to_float(t, q + i * ggml_type_size(t), y, QK_K);
        const double ours = qd_rmse(x + i * QK_K, y, QK_K, NULL, 1);
        const double theirs = qd_rmse(x + i * QK_K, u->floats[REF][i], QK_K, NULL, 1);
        ok(u->have_floats[REF][i] && ours <= theirs * (1.0 + 1e-6), "%s: edge block %d: RMSE %.4g, upstream %.4g",
           u->name, i, ours, theirs);
    }
    to_float(t, q + 2 * ggml_type_size(t), y, QK_K);
    bool zero = true;
    for (int j = 0; j < QK_K; j++)
        zero = zero && y[j] == 0.0f;
    ok(zero, "%s: a zero block decodes to zeros", u->name);
}

static void check_validation(const struct qd_upstream *u)
{
    uint8_t b[MAX_BLOCK];
    const size_t size = ggml_type_size(u->type);
    memset(b, 0, sizeof b);
    ok(ggml_validate_row_data(u->type, b, size), "%s: a zero block is valid", u->name);
    b[0] = 0x00, b[1] = 0x7e;   /* NaN */
    ok(!ggml_validate_row_data(u->type, b, size), "%s: a NaN d is refused", u->name);
    logged_one_error("%s: the bad block is reported", u->name);
    b[0] = 0x00, b[1] = 0xfc;   /* -inf */
    ok(!ggml_validate_row_data(u->type, b, size), "%s: an infinite d is refused", u->name);
    logged_one_error("%s: the bad block is reported", u->name);
}

/* The CPU traits' vec_dot against the decoded rows' product in double. */
static void check_vec_dot(const struct qd_upstream *u)
{
    qd_check_vec_dot(u->type, u->name, NULL);
    ok(ggml_get_type_traits_cpu(u->type)->from_float == NULL, "%s: no CPU from_float (as in ggml)", u->name);

    /* upstream's random blocks (every codebook index and sign pattern
       likely) against the same operand */
    static uint8_t qb[QD_DOT_N * 2];
    static float db[QD_DOT_N];
    qd_q8_K_operand(qb, db);
    for (int i = 0; i < NRAND; i++) {
        char what[64];
        snprintf(what, sizeof what, "%s: random block %d", u->name, i);
        qd_check_vec_dot_of(u->type, what, u->blocks[RAND][i], QK_K, qb, db);
    }
}

int main(void)
{
    tap_capture_log();
    static float x[QD_NB * QK_K];
    qd_fill_edge_blocks(x);
    ok(qd_read_data("iq3quants.txt", upstream, 2, variants, QD_COUNT(variants)),
       "the data file of upstream's blocks reads");

    for (int t = 0; t < 2; t++) {
        check_decoding(&upstream[t]);
        check_validation(&upstream[t]);
        check_vec_dot(&upstream[t]);
        qd_check_rmse(&upstream[t], 777u, false);
        check_edge_blocks(&upstream[t], x);
        qd_check_chunk(upstream[t].type, upstream[t].name, QD_IMATRIX_USED, true);
    }
    ggml_quantize_free();
    return tap_done();
}
