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

int main(void)
{
    tap_capture_log();
    static float x[QD_NB * QK_K], w[QD_DOT_N];
    qd_fill_edge_blocks(x);
    qd_fill_imatrix(w, QD_DOT_N);
    ok(qd_read_data("iq1quants.txt", upstream, 2, variants, QD_COUNT(variants)),
       "the data file of upstream's blocks reads");
    for (int t = 0; t < 2; t++) {
        check_decoding(&upstream[t]);
        qd_check_rmse(&upstream[t], 777u, first_variant(&upstream[t]) == 1);
        check_edge_blocks(&upstream[t], x);
        const enum ggml_type type = upstream[t].type;
        qd_check_chunk(type, upstream[t].name, type == GGML_TYPE_IQ1_S ? QD_IMATRIX_REQUIRED : QD_IMATRIX_USED,
                       false);
        qd_check_vec_dot(type, upstream[t].name, w);
    }
    check_validation();
    ggml_quantize_free();
    return tap_done();
}
