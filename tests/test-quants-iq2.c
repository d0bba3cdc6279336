/*
 * test-quants-iq2.c - the 2-bit lattice formats IQ2_XXS, IQ2_XS and IQ2_S
 * against upstream ggml's blocks (tests/data/iq2quants.txt, see its
 * header), plus ggml_quantize_chunk, validation and the CPU dot products.
 *
 * Checked:
 *   - to_float decodes upstream's blocks (quantized ones and random
 *     bytes) to upstream's floats bit for bit;
 *   - the quantizers: root-mean-square error on three fixed input sets no
 *     worse than upstream's (relative tolerance 1e-6), with importance
 *     weights (the error weighted by them) and, for IQ2_S, without;
 *     IQ2_XXS and IQ2_XS refuse to quantize without weights (as upstream,
 *     which requires them); edge-case blocks quantize to finite values;
 *   - ggml_quantize_chunk (qd_check_chunk): rows at their offsets, NaN
 *     and infinities in a block, degenerate weights, the same blocks after
 *     ggml_quantize_free and ggml_quantize_init; IQ2_S's from_float_ref;
 *   - ggml_validate_row_data refuses non-finite scales;
 *   - the CPU traits: vec_dot_type q8_K, no from_float (as in ggml);
 *     vec_dot within 1e-5 of |products| of a double-precision dot product
 *     of the decoded rows.
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

#define NRAND 4   /* blocks of random bytes */
#define N_TYPES 3

/* ------------------------------------------------------------ the data */

static struct qd_upstream upstream[N_TYPES] = {
    { .name = "iq2_xxs", .type = GGML_TYPE_IQ2_XXS },
    { .name = "iq2_xs", .type = GGML_TYPE_IQ2_XS },
    { .name = "iq2_s", .type = GGML_TYPE_IQ2_S },
};

/* The rows of blocks and floats: the data file's variants. */
static const char *const variants[] = { "imat", "rand" };

/* ----------------------------------------------------------- the checks */

/* Upstream's blocks decode to upstream's floats (quantized blocks and random bytes). */
static void check_decoding(const struct qd_upstream *u)
{
    static const char *const what[2] = { "quantized", "random" };
    for (int v = 0; v < 2; v++)
        for (int i = 0; i < (v ? NRAND : QD_NB); i++) {
            float got[QK_K];
            memset(got, 0xa5, sizeof got);
            ggml_get_type_traits(u->type)->to_float(u->blocks[v][i], got, QK_K);
            ok(u->have_block[v][i] && u->have_floats[v][i] && memcmp(got, u->floats[v][i], sizeof got) == 0,
               "%s: upstream's %s block %d decodes to upstream's floats bit for bit", u->name, what[v], i);
        }
}

/* Non-finite scales are refused, finite ones accepted. */
static void check_validation(const struct qd_upstream *u)
{
    const size_t size = ggml_type_size(u->type);
    uint8_t data[2 * sizeof(block_iq2_s)];
    memcpy(data, u->blocks[1][0], size);
    memcpy(data + size, u->blocks[1][1], size);
    ok(ggml_validate_row_data(u->type, data, 2 * size), "%s: two blocks with finite scales are valid", u->name);
    static const uint16_t bad[2] = { 0x7c00, 0xfe01 };
    for (int b = 0; b < 2; b++) {
        memcpy(data + size, &bad[b], sizeof bad[b]);
        ok(!ggml_validate_row_data(u->type, data, 2 * size), "%s: %s scale in block 1 is refused", u->name,
           b ? "a NaN" : "an infinite");
    }
    ok(!ggml_validate_row_data(u->type, data, size + 1), "%s: a partial block is refused", u->name);
}

/* RMSE on the fixed input sets no worse than upstream's; IQ2_XXS and IQ2_XS refuse a NULL imatrix. */
static void check_rmse(const struct qd_upstream *u)
{
    static float x[QD_RMSE_ROWS * QD_RMSE_COLS];
    static uint8_t q[QD_RMSE_ROWS * QD_RMSE_COLS];
    const bool needs_weights = u->type != GGML_TYPE_IQ2_S;
    ok(ggml_quantize_requires_imatrix(u->type) == needs_weights, "%s: %s an importance matrix (as in ggml)",
       u->name, needs_weights ? "requires" : "does not require");
    for (int v = 0; v < 2; v++) {
        if (v == 0 && needs_weights) {
            qd_fill_rmse_set(0, 777u, x);
            tap_log_errors();
            ok(ggml_quantize_chunk(u->type, x, q, 0, 1, QD_RMSE_COLS, NULL) == 0,
               "%s: ggml_quantize_chunk without importance weights returns 0", u->name);
            logged_one_error("%s: and logs one error", u->name);
            continue;
        }
        for (int set = 0; set < 3; set++) {
            size_t written;
            const double ours = qd_rmse_of_set(u->type, set, 777u, v, &written);
            ok(written == QD_RMSE_ROWS * ggml_row_size(u->type, QD_RMSE_COLS) && u->have_rmse[v][set] &&
                   ours <= u->rmse[v][set] * (1.0 + 1e-6),
               "%s %s set %d: RMSE %.6e, upstream's %.6e", u->name, v ? "weighted" : "plain", set, ours,
               u->rmse[v][set]);
        }
    }
}

/* The edge-case blocks quantize to finite values, each no worse than a zero block would be. */
static void check_edge_blocks(const struct qd_upstream *u, const float *x, const float *w)
{
    static uint8_t q[QD_NB * sizeof(block_iq2_s)];
    static float back[QD_NB * QK_K];
    ggml_quantize_chunk(u->type, x, q, 0, QD_NB, QK_K, w);
    ggml_get_type_traits(u->type)->to_float(q, back, QD_NB * QK_K);
    for (int i = 0; i < QD_NB; i++) {
        bool finite = true;
        double e = 0.0, e0 = 0.0;
        for (int j = 0; j < QK_K; j++) {
            const double d = (double) back[i * QK_K + j] - x[i * QK_K + j];
            finite &= isfinite(back[i * QK_K + j]) != 0;
            e += w[j] * d * d;
            e0 += w[j] * (double) x[i * QK_K + j] * x[i * QK_K + j];
        }
        ok(finite && e <= e0, "%s: edge-case block %d quantizes to finite values, error %.3g (zero block: %.3g)",
           u->name, i, e, e0);
    }
}

/* CPU traits and vec_dot against a double-precision sum over the decoded rows. */
static void check_cpu(const struct qd_upstream *u)
{
    const struct ggml_type_traits_cpu *tr = ggml_get_type_traits_cpu(u->type);
    ok(tr->vec_dot != NULL && tr->vec_dot_type == GGML_TYPE_Q8_K && tr->nrows == 1 && tr->from_float == NULL,
       "%s: CPU traits: vec_dot against q8_K, no from_float (as in ggml)", u->name);
    if (tr->vec_dot == NULL)
        return;
    /* all blocks (upstream's quantized and random ones) in one row */
    enum { n_blocks = QD_NB + NRAND };
    const size_t size = ggml_type_size(u->type);
    static uint8_t x[n_blocks * sizeof(block_iq2_s)];
    for (int i = 0; i < n_blocks; i++)
        memcpy(x + i * size, u->blocks[i >= QD_NB][i % QD_NB], size);
    /* upstream's block 3 holds 1e4 once: keep the row's scale sane by dropping it */
    memcpy(x + 3 * size, u->blocks[0][0], size);
    static float yf[n_blocks * QK_K], xv[n_blocks * QK_K], yv[n_blocks * QK_K];
    static block_q8_K y[n_blocks];
    qd_rng r = { 99u };
    for (int i = 0; i < n_blocks * QK_K; i++)
        yf[i] = qd_gauss(&r);
    ggml_get_type_traits_cpu(GGML_TYPE_Q8_K)->from_float(yf, y, n_blocks * QK_K);
    ggml_get_type_traits(u->type)->to_float(x, xv, n_blocks * QK_K);
    ggml__dequantize_row_q8_K(y, yv, n_blocks * QK_K);
    for (int nb = 1; nb <= n_blocks; nb += 5) {
        double want = 0.0, mag = 0.0;
        for (int i = 0; i < nb * QK_K; i++) {
            want += (double) xv[i] * yv[i];
            mag += fabs((double) xv[i] * yv[i]);
        }
        float got = NAN;
        tr->vec_dot(nb * QK_K, &got, 0, x, 0, y, 0, 1);
        ok(fabs(got - want) <= 1e-5 * mag + 1e-30, "%s: vec_dot of %d blocks %.9g, reference %.9g", u->name, nb,
           got, want);
    }
}

int main(void)
{
    tap_capture_log();
    ok(qd_read_data("iq2quants.txt", upstream, N_TYPES, variants, QD_COUNT(variants)),
       "upstream data read");
    static float x[QD_NB * QK_K], w[QD_RMSE_COLS];
    qd_fill_edge_blocks(x);
    qd_fill_imatrix(w, QD_RMSE_COLS);
    for (int t = 0; t < N_TYPES; t++) {
        check_rmse(&upstream[t]);
        check_edge_blocks(&upstream[t], x, w);
        qd_check_chunk(upstream[t].type, upstream[t].name,
                       upstream[t].type == GGML_TYPE_IQ2_S ? QD_IMATRIX_USED : QD_IMATRIX_REQUIRED,
                       upstream[t].type == GGML_TYPE_IQ2_S);
        check_decoding(&upstream[t]);
        check_validation(&upstream[t]);
        check_cpu(&upstream[t]);
    }
    return tap_done();
}
