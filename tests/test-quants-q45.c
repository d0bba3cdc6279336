/*
 * test-quants-q45.c - q4_0, q4_1, q5_0 and q5_1 through ggml_quantize_chunk
 * against upstream ggml (tests/data/q45quants.txt, see its header), with
 * and without importance weights.
 *
 * Checked:
 *   - without importance weights the chunks are upstream's bytes (an FNV-1a
 *     hash of each of three input sets of 8 rows of 4096);
 *   - with them, our root-mean-square error, weighted by them, is no worse
 *     than upstream's on those sets (relative tolerance 1e-6), and every
 *     block's weighted squared error is no worse than that of the block
 *     the reference quantizer writes without weights;
 *   - ggml_quantize_chunk: chunks at row offsets, importance weights used,
 *     from_float_ref equal to a chunk without weights, degenerate weights,
 *     non-finite input (qd_check_chunk).
 *
 * The inputs are regenerated here (quant-data.h) bit for bit as the
 * upstream generator program made them.
 */
#include "config.h"

#include "ggml-cpu.h"
#include "quants-impl.h"
#include "tap.h"
#include "quant-data.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define SEED 321u   /* the data file's input sets */

static struct qd_upstream upstream[4] = {
    { .name = "q4_0", .type = GGML_TYPE_Q4_0 },
    { .name = "q4_1", .type = GGML_TYPE_Q4_1 },
    { .name = "q5_0", .type = GGML_TYPE_Q5_0 },
    { .name = "q5_1", .type = GGML_TYPE_Q5_1 },
};

enum { ROWS = QD_RMSE_ROWS, COLS = QD_RMSE_COLS, QK = 32 };

/* Without importance weights: upstream's bytes on the three input sets. */
static void check_plain_bytes(const struct qd_upstream *u)
{
    static float x[ROWS * COLS];
    static uint8_t q[ROWS * COLS];
    for (int set = 0; set < 3; set++) {
        qd_fill_rmse_set(set, SEED, x);
        const size_t n = ggml_quantize_chunk(u->type, x, q, 0, ROWS, COLS, NULL);
        ok(n == ROWS * ggml_row_size(u->type, COLS) && u->have_hash[set] && qd_fnv1a(q, n) == u->hash[set],
           "%s: set %d without importance weights quantizes to upstream's bytes", u->name, set);
    }
}

/* Weighted squared error of one decoded block of QK values. */
static double block_error(const float *x, const float *y, const float *w)
{
    double e = 0.0;
    for (int j = 0; j < QK; j++)
        e += w[j] * ((double) y[j] - x[j]) * ((double) y[j] - x[j]);
    return e;
}

/* With importance weights every block is at least as good as the reference block, by its weighted error. */
static void check_against_reference(const struct qd_upstream *u)
{
    static float x[ROWS * COLS], w[COLS], ours[ROWS * COLS], ref[ROWS * COLS];
    static uint8_t q[ROWS * COLS];
    qd_fill_imatrix(w, COLS);
    const ggml_to_float_t to_float = ggml_get_type_traits(u->type)->to_float;
    for (int set = 0; set < 3; set++) {
        qd_fill_rmse_set(set, SEED, x);
        ggml_quantize_chunk(u->type, x, q, 0, ROWS, COLS, w);
        to_float(q, ours, ROWS * COLS);
        ggml_quantize_chunk(u->type, x, q, 0, ROWS, COLS, NULL);
        to_float(q, ref, ROWS * COLS);
        int worse = 0, better = 0;
        for (int b = 0; b < ROWS * COLS / QK; b++) {
            const float *wb = w + (b * QK) % COLS;
            const double e = block_error(x + b * QK, ours + b * QK, wb);
            const double e_ref = block_error(x + b * QK, ref + b * QK, wb);
            worse += e > e_ref * (1.0 + 1e-5);
            better += e < e_ref;
        }
        ok(worse == 0 && better > ROWS * COLS / QK / 2,
           "%s: set %d: with importance weights no block is worse than the reference block (%d worse, %d better)",
           u->name, set, worse, better);
    }
}

int main(void)
{
    tap_capture_log();
    ok(qd_read_data("q45quants.txt", upstream, QD_COUNT(upstream), NULL, 0), "the data file of upstream's results reads");
    for (int t = 0; t < QD_COUNT(upstream); t++) {
        check_plain_bytes(&upstream[t]);
        qd_check_rmse(&upstream[t], SEED, false);
        check_against_reference(&upstream[t]);
        qd_check_chunk(upstream[t].type, upstream[t].name, QD_IMATRIX_USED, true);
    }
    return tap_done();
}
