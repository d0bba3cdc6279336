/*
 * quant-data.h - what the quantization tests (tests/test-quants-*.c) share:
 * the deterministic inputs upstream's blocks were recorded on, the error
 * measure, and the reader of the recorded data files (the files under tests/data).
 *
 * The inputs must stay bit-identical to those the upstream generator
 * programs computed (the data files' headers describe them): the integer
 * generator below and one single float operation per statement, so no
 * contraction can change a value.  Do not rewrite these expressions.
 *
 * Data files: lines starting with '#' and empty lines are comments; a
 * record is "KIND TYPE [VARIANT] INDEX DATA" where KIND is
 *   block   DATA = the block's bytes in lowercase hex, no separators;
 *   floats  DATA = QK_K decoded floats as 8-digit hex bit patterns;
 *   hash    DATA = a 64-bit hex hash, qd_fnv1a (INDEX: the input set);
 *   rmse    DATA = a decimal error (INDEX: the input set; VARIANT "ref"
 *           without importance weights, "imat" with them; always present).
 * VARIANT is present on block and floats lines when the reader is given
 * variant names (it picks the row of blocks/floats), absent otherwise.
 */
#ifndef GGML_TESTS_QUANT_DATA_H
#define GGML_TESTS_QUANT_DATA_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-cpu.h"
#include "quants-impl.h"
#include "tap.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* ------------------------------------------------------------- inputs */

#define QD_NB 8   /* blocks of the edge-case input */
#define QD_RMSE_ROWS 8
#define QD_RMSE_COLS 4096

typedef struct {
    uint32_t s;
} qd_rng;

/* The generator's next state (a 32-bit linear congruential step). */
static inline uint32_t qd_next(qd_rng *r)
{
    r->s = r->s * 1664525u + 1013904223u;
    return r->s;
}

static inline float qd_uniform(qd_rng *r)   /* [0, 1) */
{
    return (float) (qd_next(r) >> 8) * (1.0f / 16777216.0f);
}

static inline float qd_gauss(qd_rng *r)   /* mean 0, variance about 1 */
{
    const float a = qd_uniform(r);
    const float b = qd_uniform(r);
    const float c = qd_uniform(r);
    const float d = qd_uniform(r);
    float s = a + b;
    s = s + c;
    s = s + d;
    s = s - 2.0f;
    return s * 1.7320508f;
}

/* QD_NB blocks of QK_K from seed: 0-1 random, 2 zeros, 3 one value 1e4,
   4 signed extremes (ternary: the values -1, -0.5, 0, 0.5, 1 in turn),
   5 all positive, 6 all negative, 7 tiny (1e-6). */
static inline void qd_fill_edge_blocks_from(float *x, uint32_t seed, bool ternary)
{
    qd_rng r = { seed };
    memset(x, 0, QD_NB * QK_K * sizeof *x);
    for (int i = 0; i < 512; i++)
        x[i] = qd_gauss(&r);
    x[3 * 256 + 77] = 10000.0f;
    if (ternary) {
        for (int i = 0; i < 256; i++)
            x[4 * 256 + i] = (float) (i % 5 - 2) * 0.5f;
    } else {
        for (int i = 0; i < 256; i++)
            x[4 * 256 + i] = qd_gauss(&r) * 0.5f;
        x[4 * 256 + 5] = -3.5f;
        x[4 * 256 + 200] = 3.0f;
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

/* The edge-case input most data files were recorded on. */
static inline void qd_fill_edge_blocks(float *x)
{
    qd_fill_edge_blocks_from(x, 12345u, false);
}

/* The importance weights of the recorded "imat" variants. */
static inline void qd_fill_imatrix(float *w, int n)
{
    for (int j = 0; j < n; j++)
        w[j] = 0.25f + (float) ((j * 37) % 101) * 0.02f;
}

/* QD_RMSE_ROWS * QD_RMSE_COLS values of input set 0 (gaussian), 1 (gaussian
   with every 61st value times 10) or 2 (skewed: 4 u^2 - 0.5), from the
   generator seeded with seed + set. */
static inline void qd_fill_rmse_set(int set, uint32_t seed, float *x)
{
    qd_rng r = { seed + (uint32_t) set };
    for (int i = 0; i < QD_RMSE_ROWS * QD_RMSE_COLS; i++) {
        float v;
        if (set == 0) {
            v = qd_gauss(&r);
        } else if (set == 1) {
            v = qd_gauss(&r);
            if (i % 61 == 0)
                v = v * 10.0f;
        } else {
            const float u = qd_uniform(&r);
            v = u * u;
            v = v * 4.0f;
            v = v - 0.5f;
        }
        x[i] = v;
    }
}

/* Weighted (w NULL: plain) root-mean-square error of y against x over n values, w indexed modulo period. */
static inline double qd_rmse(const float *x, const float *y, int64_t n, const float *w, int64_t period)
{
    double e = 0.0, ws = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double wi = w != NULL ? w[i % period] : 1.0, d = (double) y[i] - x[i];
        e += wi * d * d;
        ws += wi;
    }
    return sqrt(e / ws);
}

/* The 64-bit FNV-1a hash of n bytes (the "hash" records of the data files). */
static inline uint64_t qd_fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

/* ----------------------------------------------------------- data files */

/* tests/data/NAME under the environment's top_srcdir (default "."), opened
   for reading; NULL (with a diagnostic) when it cannot be. */
static inline FILE *qd_open_data(const char *name)
{
    const char *srcdir = getenv("top_srcdir");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/%s", srcdir != NULL ? srcdir : ".", name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        tap_diag("cannot open %s", path);
    return f;
}

static inline int qd_hex_digit(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* n bytes from 2n lowercase hex digits at p; false when a digit is missing. */
static inline bool qd_read_hex(const char *p, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const int hi = qd_hex_digit(p[2 * i]), lo = hi < 0 ? -1 : qd_hex_digit(p[2 * i + 1]);
        if (lo < 0)
            return false;
        out[i] = (uint8_t) (hi << 4 | lo);
    }
    return true;
}

/* n floats from their bit patterns, whitespace-separated hex words at p. */
static inline bool qd_read_float_bits(const char *p, float *out, int n)
{
    for (int j = 0; j < n; j++) {
        unsigned bits;
        int used;
        if (sscanf(p, "%8x%n", &bits, &used) != 1)
            return false;
        const uint32_t b32 = bits;
        memcpy(&out[j], &b32, sizeof b32);
        p += used;
    }
    return true;
}

#define QD_VARIANTS 3      /* rows of blocks/floats a type can have */
#define QD_MAX_BLOCK sizeof(block_q8_K)   /* bytes of the largest recorded block */

/* What a data file records about one type (name and type set by the test). */
struct qd_upstream {
    const char *name;
    enum ggml_type type;
    uint8_t blocks[QD_VARIANTS][QD_NB][QD_MAX_BLOCK];   /* [variant][index] */
    float floats[QD_VARIANTS][QD_NB][QK_K];
    bool have_block[QD_VARIANTS][QD_NB], have_floats[QD_VARIANTS][QD_NB];
    uint64_t hash[3];   /* [set] */
    bool have_hash[3];
    double rmse[2][3];   /* [weighted][set] */
    bool have_rmse[2][3];
};

/* Elements of an array. */
#define QD_COUNT(a) ((int) (sizeof(a) / sizeof((a)[0])))

static inline struct qd_upstream *qd_find(struct qd_upstream *types, int n_types, const char *name)
{
    for (int i = 0; i < n_types; i++)
        if (strcmp(types[i].name, name) == 0)
            return &types[i];
    return NULL;
}

/* Row of a variant name among n names; -1 when not one of them. */
static inline int qd_variant(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

/* One record after KIND and TYPE (p at the rest); false when malformed. */
static inline bool qd_read_record(struct qd_upstream *u, const char *kind, const char *p,
                                  const char *const *variants, int n_variants)
{
    char variant[16];
    int index, used, v = 0;
    if (strcmp(kind, "rmse") == 0) {
        double e;
        if (sscanf(p, "%15s %d %lf", variant, &index, &e) != 3 || index < 0 || index >= 3)
            return false;
        const int w = strcmp(variant, "imat") == 0;
        if (!w && strcmp(variant, "ref") != 0)
            return false;
        u->rmse[w][index] = e;
        return u->have_rmse[w][index] = true;
    }
    if (variants != NULL) {
        if (sscanf(p, "%15s %n", variant, &used) != 1)
            return false;
        v = qd_variant(variants, n_variants, variant);
        p += used;
    }
    if (v < 0 || sscanf(p, "%d %n", &index, &used) != 1 || index < 0 || index >= QD_NB)
        return false;
    p += used;
    if (strcmp(kind, "block") == 0)
        return u->have_block[v][index] = ggml_type_size(u->type) <= QD_MAX_BLOCK &&
                                         qd_read_hex(p, u->blocks[v][index], ggml_type_size(u->type));
    if (strcmp(kind, "floats") == 0)
        return u->have_floats[v][index] = qd_read_float_bits(p, u->floats[v][index], QK_K);
    if (strcmp(kind, "hash") == 0 && index < 3) {
        unsigned long long h;
        if (sscanf(p, "%llx", &h) != 1)
            return false;
        u->hash[index] = h;
        return u->have_hash[index] = true;
    }
    return false;
}

/* Reads tests/data/NAME into the n_types types (variants: the names of the
   block/floats rows, NULL when those lines carry no variant); false (with a
   diagnostic) when it cannot be read, a line is malformed or names a type
   not listed. */
static inline bool qd_read_data(const char *name, struct qd_upstream *types, int n_types,
                                const char *const *variants, int n_variants)
{
    FILE *f = qd_open_data(name);
    if (f == NULL)
        return false;
    static char line[8192];
    bool good = true;
    while (good && fgets(line, sizeof line, f) != NULL) {
        char kind[16], type[16];
        int used;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        struct qd_upstream *u = NULL;
        good = sscanf(line, "%15s %15s %n", kind, type, &used) == 2 && (u = qd_find(types, n_types, type)) != NULL &&
               qd_read_record(u, kind, line + used, variants, n_variants);
    }
    fclose(f);
    if (!good)
        tap_diag("malformed line in tests/data/%s: %.60s", name, line);
    return good;
}


/* ------------------------------------------------------- error checks */

/* Quantizes input set `set` (generator seed, see qd_fill_rmse_set) as t,
   with the importance weights of qd_fill_imatrix or without, decodes it
   with t's to_float and returns the (weighted) RMSE; *written gets what
   ggml_quantize_chunk returned.  For formats of at most one byte a value. */
static inline double qd_rmse_of_set(enum ggml_type t, int set, uint32_t seed, bool weighted, size_t *written)
{
    static float x[QD_RMSE_ROWS * QD_RMSE_COLS], y[QD_RMSE_ROWS * QD_RMSE_COLS], w[QD_RMSE_COLS];
    static uint8_t q[QD_RMSE_ROWS * QD_RMSE_COLS];
    qd_fill_imatrix(w, QD_RMSE_COLS);
    qd_fill_rmse_set(set, seed, x);
    *written = ggml_quantize_chunk(t, x, q, 0, QD_RMSE_ROWS, QD_RMSE_COLS, weighted ? w : NULL);
    ggml_get_type_traits(t)->to_float(q, y, QD_RMSE_ROWS * QD_RMSE_COLS);
    return qd_rmse(x, y, QD_RMSE_ROWS * QD_RMSE_COLS, weighted ? w : NULL, QD_RMSE_COLS);
}

/* Our RMSE on the three input sets (seed) no worse than upstream's recorded
   one (relative tolerance 1e-6), without importance weights unless
   only_weighted, and with them. */
static inline void qd_check_rmse(const struct qd_upstream *u, uint32_t seed, bool only_weighted)
{
    for (int weighted = only_weighted; weighted < 2; weighted++) {
        for (int set = 0; set < 3; set++) {
            size_t n;
            const double ours = qd_rmse_of_set(u->type, set, seed, weighted, &n);
            const double theirs = u->rmse[weighted][set];
            ok(n == QD_RMSE_ROWS * ggml_row_size(u->type, QD_RMSE_COLS) && u->have_rmse[weighted][set] &&
                   ours <= theirs * (1.0 + 1e-6),
               "%s: %s RMSE on set %d: ours %.6e <= upstream %.6e (%+.2f%%)", u->name,
               weighted ? "importance-weighted" : "plain", set, ours, theirs, 100.0 * (ours / theirs - 1.0));
        }
    }
}

/*
 * The bias of a quantized dot product: rows a_i = 0.1 + 2 cos(i) and b_i
 * = 0.1 + 2 cos(i + 1), i < 4096 (smooth, every sub-block alike, so
 * rounding errors that lean one way add up instead of cancelling), a
 * through t's CPU from_float, b through its vec_dot_type's; |vec_dot -
 * the exact dot product in double| / 4096 must stay under limit (ggml's
 * own acceptance figures: 0.02, 0.04 for the 2-bit formats).
 */
static inline void qd_check_dot_bias(const char *name, enum ggml_type t, double limit)
{
    enum { N = 4096 };
    static float a[N], b[N];
    static uint8_t qa[N * 2], qb[N * 2];
    double want = 0.0;
    for (int i = 0; i < N; i++) {
        a[i] = (float) (0.1 + 2.0 * cos((double) i));
        b[i] = (float) (0.1 + 2.0 * cos((double) i + 1.0));
        want += (double) a[i] * b[i];
    }
    const struct ggml_type_traits_cpu *cpu = ggml_get_type_traits_cpu(t);
    const struct ggml_type_traits_cpu *dot = ggml_get_type_traits_cpu(cpu->vec_dot_type);
    float got = NAN;
    if (cpu->from_float != NULL && dot->from_float != NULL && cpu->vec_dot != NULL) {
        cpu->from_float(a, qa, N);
        dot->from_float(b, qb, N);
        cpu->vec_dot(N, &got, 0, qa, 0, qb, 0, 1);
    }
    const double bias = fabs((double) got - want) / N;
    ok(bias < limit, "%s: dot product bias on cosine rows %.5f < %.2f", name, bias, limit);
}

/* ------------------------------------------------------ shared checks */

/* How ggml_quantize_chunk of a type uses an importance matrix. */
enum qd_imatrix_use {
    QD_IMATRIX_USED,       /* optional; it changes the blocks */
    QD_IMATRIX_IGNORED,    /* optional; the blocks are the same without */
    QD_IMATRIX_REQUIRED,   /* a chunk without one is refused */
};

/*
 * ggml_quantize_chunk of block type t (named name; blocks of QK_K values or
 * fewer) on 3 rows of 512 Gaussian values: it writes exactly the rows' bytes, rows quantized at
 * their own start offsets give the same blocks, ggml_quantize_init/free
 * change nothing, the importance matrix is used as `use` says (IGNORED:
 * the type's bytes are upstream's reference quantizer's) and
 * ggml_quantize_requires_imatrix agrees, from_float_ref (when has_ref; else
 * it must be NULL, as in ggml) equals a chunk without weights, the blocks
 * are valid also for zero, negative or NaN weights, a row length that is
 * not a multiple of the block size is refused with one error, and NaN,
 * infinity and -3e38 in a block neither fault nor change the other blocks.
 */
static inline void qd_check_chunk(enum ggml_type t, const char *name, enum qd_imatrix_use use, bool has_ref)
{
    enum { ROWS = 3, COLS = 512, ROOM = ROWS * COLS * 2 };   /* every type has < 2 bytes per value */
    const size_t row = ggml_row_size(t, COLS);
    const int64_t blck = ggml_blck_size(t);
    static float x[ROWS * COLS], w[COLS], bad_w[COLS];
    static uint8_t whole[ROOM + 1], parts[ROOM + 1], ref[ROOM];
    qd_rng r = { 99u };
    for (int i = 0; i < ROWS * COLS; i++)
        x[i] = qd_gauss(&r);
    qd_fill_imatrix(w, COLS);
    tap_log_errors();   /* the error checks below count only this check's messages */

    memset(whole, 0xcd, sizeof whole);
    memset(parts, 0xcd, sizeof parts);
    const size_t n = ggml_quantize_chunk(t, x, whole, 0, ROWS, COLS, w);
    ok(n == ROWS * row && whole[ROWS * row] == 0xcd, "%s: chunk writes %zu bytes and no more", name, n);
    for (int i = 0; i < ROWS; i++)
        ggml_quantize_chunk(t, x, parts, (int64_t) i * COLS, 1, COLS, w);
    ok(memcmp(whole, parts, ROWS * row) == 0, "%s: rows quantized at their start offsets match", name);
    ok(ggml_validate_row_data(t, whole, ROWS * row), "%s: quantized blocks are valid", name);

    /* tables (where a type has any) rebuilt after free, built by init */
    ggml_quantize_free();
    ggml_quantize_chunk(t, x, parts, 0, ROWS, COLS, w);
    ok(memcmp(whole, parts, ROWS * row) == 0, "%s: same blocks after ggml_quantize_free", name);
    ggml_quantize_free();
    ggml_quantize_init(t);
    ggml_quantize_init(t);
    ggml_quantize_chunk(t, x, parts, 0, ROWS, COLS, w);
    ok(memcmp(whole, parts, ROWS * row) == 0, "%s: same blocks after ggml_quantize_init", name);

    const size_t unweighted = ggml_quantize_chunk(t, x, parts, 0, ROWS, COLS, NULL);
    if (use == QD_IMATRIX_REQUIRED) {
        ok(unweighted == 0, "%s: a chunk without importance weights is refused", name);
        logged_one_error("%s: the missing weights are reported", name);
    } else {
        ok(unweighted == ROWS * row && (memcmp(whole, parts, ROWS * row) != 0) == (use == QD_IMATRIX_USED),
           "%s: the importance matrix %s the blocks", name, use == QD_IMATRIX_USED ? "changes" : "does not change");
    }
    ok(ggml_quantize_requires_imatrix(t) == (use == QD_IMATRIX_REQUIRED), "%s: importance matrix %s", name,
       use == QD_IMATRIX_REQUIRED ? "required" : "optional");
    const ggml_from_float_t from_float_ref = ggml_get_type_traits(t)->from_float_ref;
    if (has_ref) {
        if (from_float_ref != NULL)
            from_float_ref(x, ref, ROWS * COLS);
        ok(from_float_ref != NULL && memcmp(ref, parts, ROWS * row) == 0,
           "%s: from_float_ref equals a chunk without weights", name);
    } else {
        ok(from_float_ref == NULL, "%s: no from_float_ref (as in ggml)", name);
    }

    for (int j = 0; j < COLS; j++)
        bad_w[j] = j % 3 == 0 ? 0.0f : j % 3 == 1 ? -1.0f : NAN;
    ggml_quantize_chunk(t, x, parts, 0, ROWS, COLS, bad_w);
    ok(ggml_validate_row_data(t, parts, ROWS * row), "%s: degenerate weights still give valid blocks", name);
    memset(bad_w, 0, sizeof bad_w);
    ggml_quantize_chunk(t, x, parts, 0, ROWS, COLS, bad_w);
    ok(ggml_validate_row_data(t, parts, ROWS * row), "%s: all-zero weights still give valid blocks", name);
    ggml_quantize_chunk(t, x, parts, 0, 1, COLS - 1, w);
    logged_one_error("%s: a row length that is not a multiple of %d is refused", name, (int) blck);

    static float odd[2 * QK_K];
    memcpy(odd, x, sizeof odd);
    odd[3] = NAN;
    odd[100] = INFINITY;
    odd[101] = -3e38f;
    const size_t n_odd = ggml_quantize_chunk(t, odd, parts, 0, 1, 2 * QK_K, w);
    ggml_quantize_chunk(t, x, whole, 0, 1, 2 * QK_K, w);
    const size_t bsize = ggml_type_size(t);
    /* every block without a bad value is the same as without them */
    bool others_same = true;
    for (int64_t b = 0; b < 2 * QK_K / blck; b++) {
        const bool bad = b == 3 / blck || b == 100 / blck || b == 101 / blck;
        others_same = others_same && (bad || memcmp(parts + b * bsize, whole + b * bsize, bsize) == 0);
    }
    /* the formats without weights keep upstream's bytes, whose scale is
       infinite here: their block need not be valid */
    const bool valid = use == QD_IMATRIX_IGNORED || ggml_validate_row_data(t, parts, n_odd);
    ok(n_odd == ggml_row_size(t, 2 * QK_K) && others_same && valid,
       "%s: NaN, infinity and -3e38 in a block: quantized%s, the other blocks unchanged", name,
       use == QD_IMATRIX_IGNORED ? "" : ", valid");
}

/* The Q8_K operand of the vec_dot checks: QD_DOT_N Gaussian values quantized into qb, decoded into db. */
enum { QD_DOT_N = 1024 };
static inline void qd_q8_K_operand(uint8_t qb[QD_DOT_N * 2], float db[QD_DOT_N])
{
    static float b[QD_DOT_N];
    qd_rng r = { 4243u };
    for (int i = 0; i < QD_DOT_N; i++)
        b[i] = qd_gauss(&r);
    b[700] = -60.0f;   /* an outlier */
    ggml_get_type_traits_cpu(GGML_TYPE_Q8_K)->from_float(b, qb, QD_DOT_N);
    ggml__dequantize_row_q8_K(qb, db, QD_DOT_N);   /* no public to_float, as in ggml */
}

/* t's vec_dot of row qa (n values, n <= QD_DOT_N) with the Q8_K row qb (decoded: db) equals the
   decoded rows' product in double to 1e-5 of the sum of |products|; what names the row. */
static inline void qd_check_vec_dot_of(enum ggml_type t, const char *what, const void *qa, int n,
                                       const uint8_t *qb, const float *db)
{
    static float da[QD_DOT_N];
    ggml_get_type_traits(t)->to_float(qa, da, n);
    double want = 0.0, mag = 0.0;
    for (int i = 0; i < n; i++) {
        want += (double) da[i] * db[i];
        mag += fabs((double) da[i] * db[i]);
    }
    float got = NAN;
    const struct ggml_type_traits_cpu *cpu = ggml_get_type_traits_cpu(t);
    if (cpu->vec_dot != NULL)
        cpu->vec_dot(n, &got, 0, qa, 0, qb, 0, 1);
    ok(fabs(got - want) <= 1e-5 * mag, "%s: vec_dot %.7g, reference %.7g", what, got, want);
}

/* t's CPU traits: vec_dot against Q8_K, one row at a time; and the vec_dot of
   QD_DOT_N Gaussian values with an outlier (quantized with weights w, or none
   when w is NULL) against the Q8_K operand (qd_check_vec_dot_of). */
static inline void qd_check_vec_dot(enum ggml_type t, const char *name, const float *w)
{
    const struct ggml_type_traits_cpu *cpu = ggml_get_type_traits_cpu(t);
    ok(cpu->vec_dot_type == GGML_TYPE_Q8_K && cpu->vec_dot != NULL && cpu->nrows == 1,
       "%s: CPU traits: vec_dot against q8_K", name);
    static float a[QD_DOT_N], db[QD_DOT_N];
    static uint8_t qa[QD_DOT_N * 2], qb[QD_DOT_N * 2];
    qd_rng r = { 4242u };
    for (int i = 0; i < QD_DOT_N; i++)
        a[i] = qd_gauss(&r);
    a[3] = 40.0f;   /* an outlier */
    ggml_quantize_chunk(t, a, qa, 0, 1, QD_DOT_N, w);
    qd_q8_K_operand(qb, db);
    qd_check_vec_dot_of(t, name, qa, QD_DOT_N, qb, db);
}

#endif
