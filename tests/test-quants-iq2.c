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
 *   - ggml_quantize_chunk at a row offset, with NaN and infinities in a
 *     block (no fault, the next block unchanged); IQ2_S's from_float_ref;
 *   - ggml_validate_row_data refuses non-finite scales;
 *   - the CPU traits: vec_dot_type q8_K, no from_float (as in ggml);
 *     vec_dot within 1e-5 of |products| of a double-precision dot product
 *     of the decoded rows.
 *
 * The inputs are made here with the integer generator kq_rng and single
 * float operations one per statement (no contraction possible), so the
 * upstream generator program computed exactly the same floats.
 */
#include "config.h"

#include <float.h>

#include "ggml-cpu.h"
#include "quants-impl.h"
#include "tap.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* ------------------------------------------------------------- inputs */

typedef struct {
    uint32_t s;
} kq_rng;

static float kq_uniform(kq_rng *r)   /* [0, 1) */
{
    r->s = r->s * 1664525u + 1013904223u;
    return (float) (r->s >> 8) * (1.0f / 16777216.0f);
}

static float kq_gauss(kq_rng *r)   /* mean 0, variance about 1 */
{
    const float a = kq_uniform(r);
    const float b = kq_uniform(r);
    const float c = kq_uniform(r);
    const float d = kq_uniform(r);
    float s = a + b;
    s = s + c;
    s = s + d;
    s = s - 2.0f;
    return s * 1.7320508f;
}

#define NB 8      /* blocks of the edge-case input */
#define NRAND 4   /* blocks of random bytes */
#define RMSE_ROWS 8
#define RMSE_COLS 4096
#define N_TYPES 3

/* Blocks: 0-1 random, 2 zeros, 3 one value 1e4, 4 signed extremes,
   5 all positive, 6 all negative, 7 tiny (1e-6). */
static void fill_blocks(float *x)
{
    kq_rng r = { 12345u };
    memset(x, 0, NB * QK_K * sizeof *x);
    for (int i = 0; i < 512; i++)
        x[i] = kq_gauss(&r);
    x[3 * 256 + 77] = 10000.0f;
    for (int i = 0; i < 256; i++)
        x[4 * 256 + i] = kq_gauss(&r) * 0.5f;
    x[4 * 256 + 5] = -3.5f;
    x[4 * 256 + 200] = 3.0f;
    for (int i = 0; i < 256; i++)
        x[5 * 256 + i] = 2.0f + kq_uniform(&r);
    for (int i = 0; i < 256; i++) {
        const float u = kq_uniform(&r) * 3.0f;
        x[6 * 256 + i] = -1.0f - u;
    }
    for (int i = 0; i < 256; i++)
        x[7 * 256 + i] = kq_gauss(&r) * 1e-6f;
}

static void fill_imatrix(float *w, int n)
{
    for (int j = 0; j < n; j++)
        w[j] = 0.25f + (float) ((j * 37) % 101) * 0.02f;
}

/* Set 0: gaussian; 1: gaussian with every 61st value times 10; 2: skewed (4 u^2 - 0.5). */
static void fill_rmse_set(int set, float *x)
{
    kq_rng r = { 777u + (uint32_t) set };
    for (int i = 0; i < RMSE_ROWS * RMSE_COLS; i++) {
        float v;
        if (set == 0) {
            v = kq_gauss(&r);
        } else if (set == 1) {
            v = kq_gauss(&r);
            if (i % 61 == 0)
                v = v * 10.0f;
        } else {
            const float u = kq_uniform(&r);
            v = u * u;
            v = v * 4.0f;
            v = v - 0.5f;
        }
        x[i] = v;
    }
}

/* ------------------------------------------------------------ the data */

struct upstream_type {
    const char *name;
    enum ggml_type type;
    uint8_t blocks[2][NB][sizeof(block_iq2_s)];   /* [imat, rand] */
    float floats[2][NB][QK_K];
    bool have_block[2][NB], have_floats[2][NB];
    double rmse[2][3];   /* [weighted][set] */
    bool have_rmse[2][3];
};

static struct upstream_type upstream[N_TYPES] = {
    { .name = "iq2_xxs", .type = GGML_TYPE_IQ2_XXS },
    { .name = "iq2_xs", .type = GGML_TYPE_IQ2_XS },
    { .name = "iq2_s", .type = GGML_TYPE_IQ2_S },
};

static struct upstream_type *upstream_of(const char *name)
{
    for (int i = 0; i < N_TYPES; i++)
        if (strcmp(upstream[i].name, name) == 0)
            return &upstream[i];
    return NULL;
}

static int hex_digit(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Reads the data file; false (with a diagnostic) when it cannot be read or a line is malformed. */
static bool read_data(void)
{
    const char *srcdir = getenv("top_srcdir");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/iq2quants.txt", srcdir != NULL ? srcdir : ".");
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        tap_diag("cannot open %s", path);
        return false;
    }
    static char line[8192];
    bool good = true;
    while (good && fgets(line, sizeof line, f) != NULL) {
        char kind[16], type[16], variant[16];
        int index, used;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "%15s %15s %15s %d %n", kind, type, variant, &index, &used) != 4) {
            good = false;
            break;
        }
        struct upstream_type *u = upstream_of(type);
        const char *p = line + used;
        const int v = strcmp(variant, "rand") == 0;
        if (u == NULL || index < 0 || index >= NB) {
            good = false;
        } else if (strcmp(kind, "block") == 0) {
            const size_t size = ggml_type_size(u->type);
            for (size_t i = 0; good && i < size; i++) {
                const int hi = hex_digit(p[2 * i]), lo = hi < 0 ? -1 : hex_digit(p[2 * i + 1]);
                good = lo >= 0;
                if (good)
                    u->blocks[v][index][i] = (uint8_t) (hi << 4 | lo);
            }
            u->have_block[v][index] = good;
        } else if (strcmp(kind, "floats") == 0) {
            for (int j = 0; good && j < QK_K; j++) {
                unsigned bits;
                int n;
                good = sscanf(p, "%8x%n", &bits, &n) == 1;
                if (good) {
                    const uint32_t b32 = bits;
                    memcpy(&u->floats[v][index][j], &b32, sizeof b32);
                    p += n;
                }
            }
            u->have_floats[v][index] = good;
        } else if (strcmp(kind, "rmse") == 0 && index < 3) {
            const int w = strcmp(variant, "imat") == 0;
            good = sscanf(p, "%lf", &u->rmse[w][index]) == 1;
            u->have_rmse[w][index] = good;
        } else {
            good = false;
        }
    }
    fclose(f);
    if (!good)
        tap_diag("malformed line in %s: %.60s", path, line);
    return good;
}

/* ------------------------------------------------------------- helpers */

/* Weighted (w NULL: plain) root-mean-square error of y against x over n values, w indexed modulo period. */
static double rmse(const float *x, const float *y, int64_t n, const float *w, int64_t period)
{
    double e = 0.0, ws = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double wi = w != NULL ? w[i % period] : 1.0, d = (double) y[i] - x[i];
        e += wi * d * d;
        ws += wi;
    }
    return sqrt(e / ws);
}

/* ----------------------------------------------------------- the checks */

/* Upstream's blocks decode to upstream's floats (quantized blocks and random bytes). */
static void check_decoding(const struct upstream_type *u)
{
    static const char *const what[2] = { "quantized", "random" };
    for (int v = 0; v < 2; v++)
        for (int i = 0; i < (v ? NRAND : NB); i++) {
            float got[QK_K];
            memset(got, 0xa5, sizeof got);
            ggml_get_type_traits(u->type)->to_float(u->blocks[v][i], got, QK_K);
            ok(u->have_block[v][i] && u->have_floats[v][i] && memcmp(got, u->floats[v][i], sizeof got) == 0,
               "%s: upstream's %s block %d decodes to upstream's floats bit for bit", u->name, what[v], i);
        }
}

/* Non-finite scales are refused, finite ones accepted. */
static void check_validation(const struct upstream_type *u)
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
static void check_rmse(const struct upstream_type *u, const float *w)
{
    static float x[RMSE_ROWS * RMSE_COLS], back[RMSE_ROWS * RMSE_COLS];
    static uint8_t q[RMSE_ROWS * RMSE_COLS];
    const bool needs_weights = u->type != GGML_TYPE_IQ2_S;
    ok(ggml_quantize_requires_imatrix(u->type) == needs_weights, "%s: %s an importance matrix (as in ggml)",
       u->name, needs_weights ? "requires" : "does not require");
    for (int v = 0; v < 2; v++) {
        if (v == 0 && needs_weights) {
            fill_rmse_set(0, x);
            tap_log_errors();
            ok(ggml_quantize_chunk(u->type, x, q, 0, 1, RMSE_COLS, NULL) == 0,
               "%s: ggml_quantize_chunk without importance weights returns 0", u->name);
            logged_one_error("%s: and logs one error", u->name);
            continue;
        }
        for (int set = 0; set < 3; set++) {
            fill_rmse_set(set, x);
            const size_t written = ggml_quantize_chunk(u->type, x, q, 0, RMSE_ROWS, RMSE_COLS, v ? w : NULL);
            ggml_get_type_traits(u->type)->to_float(q, back, RMSE_ROWS * RMSE_COLS);
            const double ours = rmse(x, back, RMSE_ROWS * RMSE_COLS, v ? w : NULL, RMSE_COLS);
            ok(written == RMSE_ROWS * ggml_row_size(u->type, RMSE_COLS) && u->have_rmse[v][set] &&
                   ours <= u->rmse[v][set] * (1.0 + 1e-6),
               "%s %s set %d: RMSE %.6e, upstream's %.6e", u->name, v ? "weighted" : "plain", set, ours,
               u->rmse[v][set]);
        }
    }
}

/* The edge-case blocks quantize to finite values, each no worse than a zero block would be. */
static void check_edge_blocks(const struct upstream_type *u, const float *x, const float *w)
{
    static uint8_t q[NB * sizeof(block_iq2_s)];
    static float back[NB * QK_K];
    ggml_quantize_chunk(u->type, x, q, 0, NB, QK_K, w);
    ggml_get_type_traits(u->type)->to_float(q, back, NB * QK_K);
    for (int i = 0; i < NB; i++) {
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

/*
 * Chunks: a chunk at a row offset writes the bytes of the whole-tensor
 * call there; non-finite values in one block leave the next block as it
 * is alone; IQ2_S's from_float_ref is the chunk without weights.
 */
static void check_chunks(const struct upstream_type *u, const float *x, const float *w)
{
    const size_t row = ggml_row_size(u->type, 2 * QK_K);
    static uint8_t whole[4 * 2 * sizeof(block_iq2_s)], part[4 * 2 * sizeof(block_iq2_s)];
    memset(part, 0, sizeof part);
    ggml_quantize_chunk(u->type, x, whole, 0, 4, 2 * QK_K, w);
    const size_t written = ggml_quantize_chunk(u->type, x, part, 2 * 2 * QK_K, 2, 2 * QK_K, w);
    ok(written == 2 * row && memcmp(part + 2 * row, whole + 2 * row, 2 * row) == 0 &&
           memcmp(part, (uint8_t[2 * 2 * sizeof(block_iq2_s)]) { 0 }, 2 * row) == 0,
       "%s: a chunk of rows 2-3 writes the whole call's bytes there and nothing before", u->name);

    float bad[2 * QK_K];
    memcpy(bad, x, sizeof bad);
    bad[3] = NAN;
    bad[100] = INFINITY;
    bad[200] = -INFINITY;
    uint8_t q[2 * sizeof(block_iq2_s)], alone[sizeof(block_iq2_s)];
    const size_t bs = ggml_type_size(u->type);
    ggml_quantize_chunk(u->type, bad, q, 0, 1, 2 * QK_K, w);
    ggml_quantize_chunk(u->type, bad + QK_K, alone, 0, 1, QK_K, w + QK_K);
    ok(memcmp(q + bs, alone, bs) == 0, "%s: NaN and infinities in block 0 quantize without a fault, block 1 unchanged",
       u->name);

    if (u->type == GGML_TYPE_IQ2_S) {
        uint8_t ref[2 * sizeof(block_iq2_s)], chunk[2 * sizeof(block_iq2_s)];
        ggml_get_type_traits(u->type)->from_float_ref(x, ref, 2 * QK_K);
        ggml_quantize_chunk(u->type, x, chunk, 0, 1, 2 * QK_K, NULL);
        ok(memcmp(ref, chunk, 2 * bs) == 0, "%s: from_float_ref equals the chunk without weights", u->name);
    } else {
        ok(ggml_get_type_traits(u->type)->from_float_ref == NULL, "%s: no from_float_ref (as in ggml)", u->name);
    }
}

/* CPU traits and vec_dot against a double-precision sum over the decoded rows. */
static void check_cpu(const struct upstream_type *u)
{
    const struct ggml_type_traits_cpu *tr = ggml_get_type_traits_cpu(u->type);
    ok(tr->vec_dot != NULL && tr->vec_dot_type == GGML_TYPE_Q8_K && tr->nrows == 1 && tr->from_float == NULL,
       "%s: CPU traits: vec_dot against q8_K, no from_float (as in ggml)", u->name);
    if (tr->vec_dot == NULL)
        return;
    /* all blocks (upstream's quantized and random ones) in one row */
    enum { n_blocks = NB + NRAND };
    const size_t size = ggml_type_size(u->type);
    static uint8_t x[n_blocks * sizeof(block_iq2_s)];
    for (int i = 0; i < n_blocks; i++)
        memcpy(x + i * size, u->blocks[i >= NB][i % NB], size);
    /* upstream's block 3 holds 1e4 once: keep the row's scale sane by dropping it */
    memcpy(x + 3 * size, u->blocks[0][0], size);
    static float yf[n_blocks * QK_K], xv[n_blocks * QK_K], yv[n_blocks * QK_K];
    static block_q8_K y[n_blocks];
    kq_rng r = { 99u };
    for (int i = 0; i < n_blocks * QK_K; i++)
        yf[i] = kq_gauss(&r);
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
    ok(read_data(), "upstream data read");
    static float x[NB * QK_K], w[RMSE_COLS];
    fill_blocks(x);
    fill_imatrix(w, RMSE_COLS);
    for (int t = 0; t < N_TYPES; t++) {
        check_rmse(&upstream[t], w);
        check_edge_blocks(&upstream[t], x, w);
        check_chunks(&upstream[t], x, w);
        check_decoding(&upstream[t]);
        check_validation(&upstream[t]);
        check_cpu(&upstream[t]);
    }
    return tap_done();
}
