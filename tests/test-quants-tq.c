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
 * The inputs are made with the integer generator tq_rng and one single
 * float operation per statement, so the upstream generator program
 * computed exactly the same floats.
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
} tq_rng;

static float tq_uniform(tq_rng *r)   /* [0, 1) */
{
    r->s = r->s * 1664525u + 1013904223u;
    return (float) (r->s >> 8) * (1.0f / 16777216.0f);
}

static float tq_gauss(tq_rng *r)   /* mean 0, variance about 1 */
{
    const float a = tq_uniform(r);
    const float b = tq_uniform(r);
    const float c = tq_uniform(r);
    const float d = tq_uniform(r);
    float s = a + b;
    s = s + c;
    s = s + d;
    s = s - 2.0f;
    return s * 1.7320508f;
}

#define NB 8   /* blocks of the edge-case input */
#define ROWS 8
#define COLS 4096
#define NTYPES 3

/* Blocks: 0-1 random, 2 zeros, 3 one value 1e4, 4 the values -1, -0.5,
   0, 0.5, 1 repeated (ternary ties), 5 all positive, 6 all negative,
   7 tiny (1e-6). */
static void fill_blocks(float *x)
{
    tq_rng r = { 2024u };
    memset(x, 0, NB * QK_K * sizeof *x);
    for (int i = 0; i < 512; i++)
        x[i] = tq_gauss(&r);
    x[3 * 256 + 77] = 10000.0f;
    for (int i = 0; i < 256; i++) {
        const float v = (float) (i % 5 - 2);
        x[4 * 256 + i] = v * 0.5f;
    }
    for (int i = 0; i < 256; i++)
        x[5 * 256 + i] = 2.0f + tq_uniform(&r);
    for (int i = 0; i < 256; i++) {
        const float u = tq_uniform(&r) * 3.0f;
        x[6 * 256 + i] = -1.0f - u;
    }
    for (int i = 0; i < 256; i++)
        x[7 * 256 + i] = tq_gauss(&r) * 1e-6f;
}

static void fill_imatrix(float *w, int n)
{
    for (int j = 0; j < n; j++)
        w[j] = 0.25f + (float) ((j * 37) % 101) * 0.02f;
}

/* Set 0: gaussian; 1: gaussian with every 61st value times 10; 2: skewed (4 u^2 - 0.5). */
static void fill_set(int set, float *x)
{
    tq_rng r = { 555u + (uint32_t) set };
    for (int i = 0; i < ROWS * COLS; i++) {
        float v;
        if (set == 0) {
            v = tq_gauss(&r);
        } else if (set == 1) {
            v = tq_gauss(&r);
            if (i % 61 == 0)
                v = v * 10.0f;
        } else {
            const float u = tq_uniform(&r);
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
    uint8_t blocks[NB][sizeof(block_iq4_xs)];
    float floats[NB][QK_K];
    bool have_block[NB], have_floats[NB];
    uint64_t hash[3];
    bool have_hash[3];
    double rmse[2][3];   /* [weighted][set] */
    bool have_rmse[2][3];
};

static struct upstream_type upstream[NTYPES] = {
    { .name = "tq1_0", .type = GGML_TYPE_TQ1_0 },
    { .name = "tq2_0", .type = GGML_TYPE_TQ2_0 },
    { .name = "iq4_xs", .type = GGML_TYPE_IQ4_XS },
};

static struct upstream_type *upstream_of(const char *name)
{
    for (int i = 0; i < NTYPES; i++)
        if (strcmp(upstream[i].name, name) == 0)
            return &upstream[i];
    return NULL;
}

static int hex_digit(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One "block", "floats", "hash" or "rmse" line (after kind, type, and the
   first number); false when malformed. */
static bool read_line(struct upstream_type *u, const char *kind, const char *p, int index)
{
    if (strcmp(kind, "block") == 0 && index >= 0 && index < NB) {
        const size_t size = ggml_type_size(u->type);
        for (size_t i = 0; i < size; i++) {
            const int hi = hex_digit(p[2 * i]), lo = hi < 0 ? -1 : hex_digit(p[2 * i + 1]);
            if (lo < 0)
                return false;
            u->blocks[index][i] = (uint8_t) (hi << 4 | lo);
        }
        return u->have_block[index] = true;
    }
    if (strcmp(kind, "floats") == 0 && index >= 0 && index < NB) {
        for (int j = 0; j < QK_K; j++) {
            unsigned bits;
            int n;
            if (sscanf(p, "%8x%n", &bits, &n) != 1)
                return false;
            const uint32_t b32 = bits;
            memcpy(&u->floats[index][j], &b32, sizeof b32);
            p += n;
        }
        return u->have_floats[index] = true;
    }
    if (strcmp(kind, "hash") == 0 && index >= 0 && index < 3) {
        unsigned long long h;
        if (sscanf(p, "%llx", &h) != 1)
            return false;
        u->hash[index] = h;
        return u->have_hash[index] = true;
    }
    return false;
}

/* Reads the data file; false (with a diagnostic) when it cannot be read or a line is malformed. */
static bool read_data(void)
{
    const char *srcdir = getenv("top_srcdir");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/tqquants.txt", srcdir != NULL ? srcdir : ".");
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
        if (sscanf(line, "%15s %15s %n", kind, type, &used) != 2) {
            good = false;
            break;
        }
        struct upstream_type *u = upstream_of(type);
        const char *p = line + used;
        if (u == NULL) {
            good = false;
        } else if (strcmp(kind, "rmse") == 0) {
            double e;
            good = sscanf(p, "%15s %d %lf", variant, &index, &e) == 3 && index >= 0 && index < 3;
            if (good) {
                const int w = strcmp(variant, "imat") == 0;
                u->rmse[w][index] = e;
                u->have_rmse[w][index] = true;
            }
        } else {
            good = sscanf(p, "%d %n", &index, &used) == 1 && read_line(u, kind, p + used, index);
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
static void check_decoding(const struct upstream_type *u)
{
    for (int i = 0; i < NB; i++) {
        float y[QK_K];
        bool same = u->have_block[i] && u->have_floats[i];
        if (same) {
            ggml_get_type_traits(u->type)->to_float(u->blocks[i], y, QK_K);
            same = memcmp(y, u->floats[i], sizeof y) == 0;
        }
        ok(same, "%s: upstream's block %d decodes to upstream's floats bit for bit", u->name, i);
    }
}

/* The ternary quantizers write upstream's bytes. */
static void check_ternary_bytes(const struct upstream_type *u, const float *x)
{
    static uint8_t q[NB * sizeof(block_tq2_0)];
    const size_t bs = ggml_type_size(u->type);
    ggml_quantize_chunk(u->type, x, q, 0, NB, QK_K, NULL);
    for (int i = 0; i < NB; i++)
        ok(u->have_block[i] && memcmp(q + i * bs, u->blocks[i], bs) == 0,
           "%s: edge block %d equals upstream's byte for byte", u->name, i);

    static float big[ROWS * COLS];
    static uint8_t qbig[ROWS * COLS];
    for (int set = 0; set < 3; set++) {
        fill_set(set, big);
        const size_t n = ggml_quantize_chunk(u->type, big, qbig, 0, ROWS, COLS, NULL);
        ok(n == ROWS * ggml_row_size(u->type, COLS) && u->have_hash[set] && fnv1a(qbig, n) == u->hash[set],
           "%s: set %d (8 rows of 4096) quantizes to upstream's bytes", u->name, set);
    }
}

static void check_rmse(const struct upstream_type *u)
{
    static float x[ROWS * COLS], y[ROWS * COLS], w[COLS];
    static uint8_t q[ROWS * COLS];
    fill_imatrix(w, COLS);
    for (int weighted = 0; weighted < 2; weighted++) {
        for (int set = 0; set < 3; set++) {
            fill_set(set, x);
            const size_t n = ggml_quantize_chunk(u->type, x, q, 0, ROWS, COLS, weighted ? w : NULL);
            ggml_get_type_traits(u->type)->to_float(q, y, ROWS * COLS);
            const double ours = rmse(x, y, ROWS * COLS, weighted ? w : NULL, COLS);
            const double theirs = u->rmse[weighted][set];
            ok(n == ROWS * ggml_row_size(u->type, COLS) && u->have_rmse[weighted][set] &&
                   ours <= theirs * (1.0 + 1e-6),
               "%s: %s RMSE on set %d: ours %.6e <= upstream %.6e (%+.2f%%)", u->name,
               weighted ? "importance-weighted" : "plain", set, ours, theirs, 100.0 * (ours / theirs - 1.0));
        }
    }
}

/* Our blocks of the edge-case input: no worse than upstream's block by block. */
static void check_edge_blocks(const struct upstream_type *u, const float *x)
{
    static uint8_t q[NB * sizeof(block_iq4_xs)];
    const size_t bs = ggml_type_size(u->type);
    float y[QK_K];
    ggml_quantize_chunk(u->type, x, q, 0, NB, QK_K, NULL);
    for (int i = 0; i < NB; i++) {
        ggml_get_type_traits(u->type)->to_float(q + i * bs, y, QK_K);
        const double ours = rmse(x + i * QK_K, y, QK_K, NULL, 1);
        const double theirs = rmse(x + i * QK_K, u->floats[i], QK_K, NULL, 1);
        ok(u->have_floats[i] && ours <= theirs * (1.0 + 1e-6), "%s: edge block %d: RMSE %.4g, upstream %.4g",
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

static void check_chunk(const struct upstream_type *u)
{
    const enum ggml_type t = u->type;
    const bool weighs = t == GGML_TYPE_IQ4_XS;
    enum { R = 3, C = 512 };
    const size_t row = ggml_row_size(t, C);
    static float x[R * C], w[C];
    static uint8_t whole[R * 272 + 1], parts[R * 272 + 1], ref[R * 272];
    tq_rng r = { 99u };
    for (int i = 0; i < R * C; i++)
        x[i] = tq_gauss(&r);
    fill_imatrix(w, C);

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
static void check_vec_dot(const struct upstream_type *u)
{
    const enum ggml_type t = u->type;
    const struct ggml_type_traits_cpu *cpu = ggml_get_type_traits_cpu(t);
    ok(cpu->vec_dot_type == GGML_TYPE_Q8_K && cpu->vec_dot != NULL && cpu->nrows == 1,
       "%s: CPU traits: vec_dot against q8_K", u->name);
    enum { N = 1024 };
    static float a[N], b[N], da[N], db[N];
    static uint8_t qa[N], qb[N * 2];
    tq_rng r = { 4242u };
    for (int i = 0; i < N; i++) {
        a[i] = tq_gauss(&r);
        b[i] = tq_gauss(&r);
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
            qa[i] = (uint8_t) (tq_uniform(&r) * 256.0f);
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
    static float x[NB * QK_K];
    fill_blocks(x);
    ok(read_data(), "the data file of upstream's blocks reads");

    for (int t = 0; t < NTYPES; t++) {
        const struct upstream_type *u = &upstream[t];
        check_decoding(u);
        if (u->type == GGML_TYPE_IQ4_XS) {
            check_rmse(u);
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
