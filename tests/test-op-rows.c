/*
 * test-op-rows.c - GET_ROWS, SET_ROWS, SET, ACC, DIAG_MASK_INF and SOFT_MAX:
 * every accepted type, odd shapes, non-contiguous sources, broadcast
 * indices and masks, indices outside the rows, thread counts 1..4 with the
 * reference and the fast kernels, nodes the CPU backend refuses, and the
 * constructors' error paths.
 *
 * References are computed here in double precision from the inputs as
 * stored.  Each numeric case runs 8 times (1..4 threads, use_ref on and
 * off) and reports one line with the worst NMSE of its runs.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "op-test.h"

/* ------------------------------------------------------------------ helpers */

static struct ggml_context *new_ctx(size_t megabytes)
{
    struct ggml_init_params params = { megabytes << 20, NULL, false };
    return ggml_init(params);
}

/* Element value of any type used here; Q8_1 (no to_float) is decoded by hand. */
static double get_value(const struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    if (t->type == GGML_TYPE_Q8_1) {
        /* block: fp16 d, fp16 s, int8 qs[32]; value = d * q */
        const unsigned char *block = (const unsigned char *) t->data + (i0 / 32) * t->nb[0] + i1 * t->nb[1] +
                                     i2 * t->nb[2] + i3 * t->nb[3];
        ggml_fp16_t d;
        memcpy(&d, block, sizeof d);
        return ggml_fp16_to_fp32(d) * (double) (int8_t) block[4 + i0 % 32];
    }
    return optest_get(t, i0, i1, i2, i3);
}

/* NMSE of t against ref (row-major in t's shape), through get_value. */
static double nmse_of(const struct ggml_tensor *t, const double *ref)
{
    double err = 0.0, norm = 0.0;
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++, k++) {
                    const double d = get_value(t, i0, i1, i2, i3) - ref[k];
                    err += d * d;
                    norm += ref[k] * ref[k];
                }
    if (isnan(err))
        return INFINITY;
    return norm > 0.0 ? err / norm : err;
}

/* A copy of a tensor's bytes, to put its inputs back between runs. */
struct saved {
    struct ggml_tensor *t;
    void *bytes;
    size_t size;
};

static struct saved save_data(struct ggml_tensor *t)
{
    struct saved s = { t, malloc(ggml_nbytes(t)), ggml_nbytes(t) };
    memcpy(s.bytes, t->data, s.size);
    return s;
}

static void restore_data(const struct saved *s)
{
    memcpy(s->t->data, s->bytes, s->size);
}

/* Runs 1..4 threads x {fast, reference}; r is the run number 0..7. */
#define FOR_EACH_RUN(r, n_threads, use_ref)                                                         \
    for (int r = 0, n_threads = 1, use_ref = 0; r < 8; r++, n_threads = r % 4 + 1, use_ref = r / 4)

static const char *run_name(int use_ref)
{
    return use_ref ? "reference" : "fast";
}

/* The worst result of the 8 runs of a case. */
struct worst {
    double nmse;
    int n_threads, use_ref;
    bool failed;    /* a compute failed or a check other than the NMSE did */
};

static void worst_update(struct worst *w, double nmse, int n_threads, int use_ref, bool failed)
{
    if (w->failed)
        return; /* the first failure is the one reported */
    if (failed || !(nmse <= w->nmse)) {
        w->nmse = nmse;
        w->n_threads = n_threads;
        w->use_ref = use_ref;
        w->failed = failed;
    }
}

/* nmse -1 so that the first run is always recorded */
#define WORST_INIT { -1.0, 0, 0, false }

static int32_t random_index(uint64_t *seed, int64_t n)
{
    return (int32_t) (optest_next(seed) % (uint64_t) n);
}

/* ---------------------------------------------------------------- get_rows */

struct get_rows_case {
    int64_t n_rows, n_idx, ne2, ne3;
    bool strided_src, strided_idx, out_of_range;
};

/* GET_ROWS is a copy or an exact conversion (to_float is the only way to
 * read a quantized block, and optest_get uses it too): exact, NMSE 0. */
static void check_get_rows(enum ggml_type type, int64_t ne0, const struct get_rows_case *c, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx(16);
    const bool quantized = ggml_is_quantized(type);
    const double lo = type == GGML_TYPE_I32 ? -1000.0 : -4.0, hi = -lo;
    struct ggml_tensor *src;
    if (!c->strided_src) {
        src = ggml_new_tensor_4d(ctx, type, ne0, c->n_rows, c->ne2, c->ne3);
        optest_fill(src, seed, lo, hi);
    } else if (!quantized) {
        struct ggml_tensor *base = ggml_new_tensor_4d(ctx, type, c->n_rows, ne0, c->ne2, c->ne3);
        optest_fill(base, seed, lo, hi);
        src = ggml_transpose(ctx, base); /* elements n_rows apart */
    } else {
        struct ggml_tensor *base = ggml_new_tensor_4d(ctx, type, ne0, c->ne2, c->n_rows, c->ne3);
        optest_fill(base, seed, lo, hi);
        src = ggml_permute(ctx, base, 0, 2, 1, 3); /* rows and matrices interleaved */
    }

    struct ggml_tensor *idx;
    if (c->strided_idx) {
        struct ggml_tensor *base = ggml_new_tensor_3d(ctx, GGML_TYPE_I32, c->ne2, c->n_idx, c->ne3);
        idx = ggml_transpose(ctx, base);
    } else {
        idx = ggml_new_tensor_3d(ctx, GGML_TYPE_I32, c->n_idx, c->ne2, c->ne3);
    }
    static const int32_t outside[4] = { -1, 0 /* n_rows */, INT32_MAX, INT32_MIN };
    for (int64_t i2 = 0; i2 < c->ne3; i2++)
        for (int64_t i1 = 0; i1 < c->ne2; i1++)
            for (int64_t i0 = 0; i0 < c->n_idx; i0++) {
                int32_t v = random_index(seed, c->n_rows);
                if (c->out_of_range && i0 % 3 == 1) {
                    v = outside[(i0 + i1) % 4];
                    if (v == 0)
                        v = (int32_t) c->n_rows;
                }
                optest_set(idx, i0, i1, i2, 0, v);
            }

    const int64_t n_out = ne0 * c->n_idx * c->ne2 * c->ne3;
    double *ref = malloc((size_t) n_out * sizeof *ref);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < c->ne3; i3++)
        for (int64_t i2 = 0; i2 < c->ne2; i2++)
            for (int64_t i1 = 0; i1 < c->n_idx; i1++) {
                const int64_t row = (int64_t) optest_get(idx, i1, i2, i3, 0);
                for (int64_t i0 = 0; i0 < ne0; i0++)
                    ref[k++] = row >= 0 && row < c->n_rows ? optest_get(src, i0, row, i2, i3) : 0.0;
            }

    struct worst w = WORST_INIT;
    const enum ggml_type out_type = type == GGML_TYPE_I32 ? GGML_TYPE_I32 : GGML_TYPE_F32;
    FOR_EACH_RUN(r, n_threads, use_ref) {
        struct ggml_tensor *out = ggml_get_rows(ctx, src, idx);
        const bool built = out != NULL && out->type == out_type && out->op == GGML_OP_GET_ROWS;
        const bool computed = built && optest_compute(ctx, out, n_threads, use_ref) == GGML_STATUS_SUCCESS;
        worst_update(&w, computed ? optest_nmse(out, ref) : INFINITY, n_threads, use_ref, !computed);
    }
    ok(!w.failed && w.nmse == 0.0,
       "get_rows %s [%lld, %lld, %lld, %lld] by %lld indices%s%s%s: worst nmse %.3g (%d threads, %s)",
       ggml_type_name(type), (long long) ne0, (long long) c->n_rows, (long long) c->ne2, (long long) c->ne3,
       (long long) c->n_idx, c->strided_src ? ", strided rows" : "", c->strided_idx ? ", strided indices" : "",
       c->out_of_range ? ", some outside" : "", w.nmse, w.n_threads, run_name(w.use_ref));
    free(ref);
    ggml_free(ctx);
}

static void test_get_rows(void)
{
    uint64_t seed = 0x6e7001;
    const enum ggml_type types[] = {
        GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_I32, GGML_TYPE_Q4_0,
        GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
        GGML_TYPE_MXFP4, GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_IQ4_NL,
        GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,
        GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0, GGML_TYPE_IQ4_XS,
        GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M,
        GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S,
        GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S,
    };
    const int64_t plain_ne0[] = { 1, 3, 31, 33, 257 };
    /* in units of 32 values: whole blocks of every type (Q1_0: 128) */
    const int64_t quant_ne0[] = { 32, 96, 256, 64, 32 };
    const int64_t k_quant_ne0[] = { 256, 512, 256, 768, 256 };   /* 256-value blocks */
    const struct get_rows_case cases[] = {
        { 1, 1, 1, 1, false, false, false },
        { 7, 5, 1, 1, false, false, true },
        { 31, 33, 2, 3, true, true, true },      /* 3-D form: a->ne[2] == b->ne[1] */
        { 3, 17, 3, 1, true, false, false },
        { 33, 4, 2, 2, false, true, true },
    };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const bool quantized = ggml_is_quantized(types[t]);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            check_get_rows(types[t],
                           ggml_blck_size(types[t]) == 256 ? k_quant_ne0[c]
                           : quantized                     ? quant_ne0[c] / 32 * ggml_blck_size(types[t])
                                                           : plain_ne0[c],
                           &cases[c], &seed);
    }
}

/* ---------------------------------------------------------------- set_rows */

struct set_rows_case {
    int64_t n_src_rows, n_dst_rows, ne2, ne3, idx_ne1, idx_ne2;
    enum ggml_type idx_type;
    bool strided, out_of_range;
};

/*
 * The written rows carry the rounding of dst's type; the reference is the
 * F32 source itself.  For values uniform in [-1, 1) (signal power 1/3) the
 * noise power of a uniform rounding step q is q^2 / 12, so NMSE ~ q^2 / 4:
 * 4-bit blocks (q ~ 1/8) about 4e-3, 5-bit about 1e-3, 8-bit about 1.5e-5,
 * F16 (relative q = 2^-10) about 3e-8, BF16 (2^-7) about 1.5e-6.  The
 * thresholds leave 2 to 4 times that.  Rows that are not written must keep
 * their bytes exactly (checked separately), and F32 is exact.
 */
static double set_rows_threshold(enum ggml_type type)
{
    switch (type) {
    case GGML_TYPE_F32:
    case GGML_TYPE_I32:  return 0.0; /* the reference truncates too */
    /* rounding to half a unit in the last place: relative error at most
       2^-11 (F16) or 2^-8 (BF16), so even a single value's NMSE stays
       under 2^-22 or 2^-16 */
    case GGML_TYPE_F16:  return 0x1p-22;
    case GGML_TYPE_BF16: return 0x1p-16;
    case GGML_TYPE_Q4_0:
    case GGML_TYPE_Q4_1:
    case GGML_TYPE_Q4_K: return 1e-2;
    case GGML_TYPE_Q5_0:
    case GGML_TYPE_Q5_1:
    case GGML_TYPE_Q5_K: return 3e-3;
    case GGML_TYPE_Q6_K: return 1e-3;   /* 6 bits: about 2.5e-4 */
    /* 3 and 2 bits: an RMSE of about 0.14 and 0.25 of a unit Gaussian's */
    case GGML_TYPE_Q3_K: return 5e-2;
    case GGML_TYPE_Q2_K: return 0.15;
    /* 4-bit codes on IQ4_NL's uneven grid: measured up to 6e-3 */
    case GGML_TYPE_IQ4_NL:
    case GGML_TYPE_IQ4_XS: return 2e-2;
    /* E2M1 (steps up to 1/3 of the largest level), and MXFP4's power-of-two
       scale puts the largest value between levels 2 and 4 of 6: measured
       up to 1.3e-2 (NVFP4) and 2.3e-2 (MXFP4) */
    case GGML_TYPE_MXFP4:
    case GGML_TYPE_NVFP4: return 6e-2;
    /* one level step of about the largest magnitude (Q2_0), or the sign
       and the mean magnitude only (Q1_0): q ~ 1, about 0.25; measured up
       to 0.33 for a single block */
    case GGML_TYPE_Q1_0:
    case GGML_TYPE_Q2_0:
    /* ternary: -d, 0, d with d the largest magnitude: 1/12 against 1/3, 0.25 */
    case GGML_TYPE_TQ1_0:
    case GGML_TYPE_TQ2_0: return 0.5;
    /* IQ2_S: 2.5 bits a value on a lattice of magnitudes 8, 25, 43:
       measured up to 0.06 */
    case GGML_TYPE_IQ2_S: return 0.15;
    default:             return 4e-5; /* Q8_0, Q8_1 */
    }
}

static void set_index(struct ggml_tensor *idx, int64_t i0, int64_t i1, int64_t i2, int64_t v)
{
    char *p = optest_elem(idx, i0, i1, i2, 0);
    if (idx->type == GGML_TYPE_I64) {
        memcpy(p, &v, sizeof v);
    } else {
        const int32_t v32 = (int32_t) v;
        memcpy(p, &v32, sizeof v32);
    }
}

static void check_set_rows(enum ggml_type type, enum ggml_type src_type, int64_t ne0, const struct set_rows_case *c,
                           uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx(16);
    const int64_t pad = ggml_blck_size(type) * (type == GGML_TYPE_F32 ? 3 : 1);

    /* destination, possibly rows of a wider tensor */
    struct ggml_tensor *dst_base, *dst;
    if (c->strided) {
        dst_base = ggml_new_tensor_4d(ctx, type, ne0 + pad, c->n_dst_rows, c->ne2, c->ne3);
        dst = ggml_view_4d(ctx, dst_base, ne0, c->n_dst_rows, c->ne2, c->ne3, dst_base->nb[1], dst_base->nb[2],
                           dst_base->nb[3], 0);
    } else {
        dst_base = dst = ggml_new_tensor_4d(ctx, type, ne0, c->n_dst_rows, c->ne2, c->ne3);
    }
    /* I32 rows get values that do not all truncate to 0 */
    const double range = type == GGML_TYPE_I32 ? 1000.0 : 1.0;
    optest_fill(dst_base, seed, -range, range);
    const struct saved dst_saved = save_data(dst_base);

    /* source rows, possibly with rows and matrices interleaved */
    struct ggml_tensor *src;
    if (c->strided) {
        struct ggml_tensor *base = ggml_new_tensor_4d(ctx, src_type, ne0, c->ne2, c->n_src_rows, c->ne3);
        optest_fill(base, seed, -range, range);
        src = ggml_permute(ctx, base, 0, 2, 1, 3);
    } else {
        src = ggml_new_tensor_4d(ctx, src_type, ne0, c->n_src_rows, c->ne2, c->ne3);
        optest_fill(src, seed, -range, range);
    }

    /* indices: distinct rows per plane, some outside when asked */
    struct ggml_tensor *idx;
    if (c->strided) {
        struct ggml_tensor *base = ggml_new_tensor_3d(ctx, c->idx_type, c->idx_ne1, c->n_src_rows, c->idx_ne2);
        idx = ggml_transpose(ctx, base);
    } else {
        idx = ggml_new_tensor_3d(ctx, c->idx_type, c->n_src_rows, c->idx_ne1, c->idx_ne2);
    }
    int64_t *perm = malloc((size_t) c->n_dst_rows * sizeof *perm);
    const int64_t outside[4] = { -1, c->n_dst_rows, c->n_dst_rows + 1000,
                                 c->idx_type == GGML_TYPE_I64 ? (int64_t) 1 << 40 : INT32_MIN };
    for (int64_t i2 = 0; i2 < c->idx_ne2; i2++)
        for (int64_t i1 = 0; i1 < c->idx_ne1; i1++) {
            for (int64_t i = 0; i < c->n_dst_rows; i++)
                perm[i] = i;
            for (int64_t i = 0; i < c->n_src_rows; i++) {
                const int64_t j = i + (int64_t) (optest_next(seed) % (uint64_t) (c->n_dst_rows - i));
                const int64_t tmp = perm[i];
                perm[i] = perm[j];
                perm[j] = tmp;
                const int64_t v = c->out_of_range && i % 4 == 1 ? outside[(i / 4 + i1) % 4] : perm[i];
                set_index(idx, i, i1, i2, v);
            }
        }
    free(perm);

    /* reference: the destination as stored, with the written rows replaced */
    const int64_t n_dst = ne0 * c->n_dst_rows * c->ne2 * c->ne3;
    double *ref = malloc((size_t) n_dst * sizeof *ref);
    bool *written = calloc((size_t) (c->n_dst_rows * c->ne2 * c->ne3), sizeof *written);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < c->ne3; i3++)
        for (int64_t i2 = 0; i2 < c->ne2; i2++)
            for (int64_t i1 = 0; i1 < c->n_dst_rows; i1++)
                for (int64_t i0 = 0; i0 < ne0; i0++)
                    ref[k++] = get_value(dst, i0, i1, i2, i3);
    for (int64_t i3 = 0; i3 < c->ne3; i3++)
        for (int64_t i2 = 0; i2 < c->ne2; i2++)
            for (int64_t i = 0; i < c->n_src_rows; i++) {
                const int64_t target = (int64_t) optest_get(idx, i, i2 % c->idx_ne1, i3 % c->idx_ne2, 0);
                if (target < 0 || target >= c->n_dst_rows)
                    continue;
                const int64_t row = (i3 * c->ne2 + i2) * c->n_dst_rows + target;
                written[row] = true;
                for (int64_t i0 = 0; i0 < ne0; i0++) {
                    const double v = optest_get(src, i0, i, i2, i3);
                    ref[row * ne0 + i0] = type == GGML_TYPE_I32 ? trunc(v) : v;
                }
            }

    struct worst w = WORST_INIT;
    void *first_result = malloc(ggml_nbytes(dst_base));
    bool untouched_kept = true, same_bytes = true;
    FOR_EACH_RUN(r, n_threads, use_ref) {
        restore_data(&dst_saved);
        struct ggml_tensor *out = ggml_set_rows(ctx, dst, src, idx);
        const bool built = out != NULL && out->op == GGML_OP_SET_ROWS && out->view_src == dst_base &&
                           out->src[0] == src && out->src[1] == idx && out->src[2] == dst;
        const bool computed = built && optest_compute(ctx, out, n_threads, use_ref) == GGML_STATUS_SUCCESS;
        worst_update(&w, computed ? nmse_of(dst, ref) : INFINITY, n_threads, use_ref, !computed);
        if (!computed)
            continue;
        /* rows not written keep their bytes (padding included) */
        const size_t row_size = ggml_row_size(type, ne0);
        for (int64_t row = 0; row < c->n_dst_rows * c->ne2 * c->ne3; row++) {
            const size_t at = (size_t) row * dst_base->nb[1];
            const size_t span = written[row] ? dst_base->nb[1] - row_size : dst_base->nb[1];
            const size_t from = written[row] ? row_size : 0;
            if (memcmp((char *) dst_base->data + at + from, (char *) dst_saved.bytes + at + from, span) != 0)
                untouched_kept = false;
        }
        /* every run writes the same bytes */
        if (r == 0)
            memcpy(first_result, dst_base->data, ggml_nbytes(dst_base));
        else if (memcmp(first_result, dst_base->data, ggml_nbytes(dst_base)) != 0)
            same_bytes = false;
    }
    ok(!w.failed && w.nmse <= set_rows_threshold(type) && untouched_kept && same_bytes,
       "set_rows %s [%lld, %lld, %lld, %lld] from %lld %s rows, %s indices [%lld, %lld]%s%s: worst nmse %.3g "
       "(%d threads, %s)%s%s",
       ggml_type_name(type), (long long) ne0, (long long) c->n_dst_rows, (long long) c->ne2, (long long) c->ne3,
       (long long) c->n_src_rows, ggml_type_name(src_type), ggml_type_name(c->idx_type), (long long) c->idx_ne1, (long long) c->idx_ne2,
       c->strided ? ", strided" : "", c->out_of_range ? ", some outside" : "", w.nmse, w.n_threads,
       run_name(w.use_ref), untouched_kept ? "" : ", UNWRITTEN ROWS CHANGED",
       same_bytes ? "" : ", RUNS DIFFER");
    free(first_result);
    free(written);
    free(ref);
    free(dst_saved.bytes);
    ggml_free(ctx);
}

/* Repeated indices: the last source row naming a destination row wins. */
static void test_set_rows_repeated(void)
{
    struct ggml_context *ctx = new_ctx(4);
    struct ggml_tensor *dst = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 6);
    struct ggml_tensor *src = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 7);
    struct ggml_tensor *idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I64, 7);
    const int64_t targets[7] = { 2, 4, 2, 0, 4, 2, 9 };
    memcpy(idx->data, targets, sizeof targets);
    for (int i = 0; i < 35; i++)
        ((float *) src->data)[i] = (float) (i / 5 + 1); /* row i holds i + 1 */
    bool all_ok = true;
    FOR_EACH_RUN(r, n_threads, use_ref) {
        for (int i = 0; i < 30; i++)
            ((float *) dst->data)[i] = -1.0f;
        struct ggml_tensor *out = ggml_set_rows(ctx, dst, src, idx);
        if (optest_compute(ctx, out, n_threads, use_ref) != GGML_STATUS_SUCCESS) {
            all_ok = false;
            continue;
        }
        /* rows 0, 2, 4 from sources 3, 5, 4; rows 1, 3, 5 untouched */
        const float want[6] = { 4.0f, -1.0f, 6.0f, -1.0f, 5.0f, -1.0f };
        for (int i = 0; i < 30; i++)
            if (((float *) dst->data)[i] != want[i / 5])
                all_ok = false;
    }
    ok(all_ok, "set_rows: the last of repeated indices wins with 1..4 threads, and 9 (outside) is skipped");
    ggml_free(ctx);
}

/* F32 to I32: toward zero, saturated, NaN as 0 */
static void test_set_rows_i32(void)
{
    struct ggml_context *ctx = new_ctx(4);
    struct ggml_tensor *dst = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 6, 1);
    struct ggml_tensor *src = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 1);
    struct ggml_tensor *idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
    const float in[6] = { -2.7f, 2.7f, 3e9f, -3e9f, NAN, -0.5f };
    const int32_t want[6] = { -2, 2, INT32_MAX, INT32_MIN, 0, 0 };
    memcpy(src->data, in, sizeof in);
    ((int32_t *) idx->data)[0] = 0;
    bool all_ok = true;
    FOR_EACH_RUN(r, n_threads, use_ref) {
        memset(dst->data, 0x55, ggml_nbytes(dst));
        struct ggml_tensor *out = ggml_set_rows(ctx, dst, src, idx);
        all_ok = all_ok && optest_compute(ctx, out, n_threads, use_ref) == GGML_STATUS_SUCCESS &&
                 memcmp(dst->data, want, sizeof want) == 0;
    }
    ok(all_ok, "set_rows into i32 truncates toward zero, saturates, and stores NaN as 0");
    ggml_free(ctx);
}

static void test_set_rows(void)
{
    uint64_t seed = 0x5e7702;
    const enum ggml_type types[] = {
        GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_I32, GGML_TYPE_Q4_0,
        GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1,
        GGML_TYPE_MXFP4, GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_IQ4_NL,
        GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,
        GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0, GGML_TYPE_IQ4_XS,
        GGML_TYPE_IQ2_S,
    };
    const int64_t plain_ne0[] = { 1, 3, 31, 33, 257 };
    /* in units of 32 values: whole blocks of every type (Q1_0: 128) */
    const int64_t quant_ne0[] = { 32, 64, 96, 256, 32 };
    const int64_t k_quant_ne0[] = { 256, 512, 256, 768, 256 };   /* 256-value blocks */
    const struct set_rows_case cases[] = {
        { 1, 1, 1, 1, 1, 1, GGML_TYPE_I64, false, false },
        { 5, 9, 1, 1, 1, 1, GGML_TYPE_I32, false, true },
        { 3, 8, 4, 2, 1, 1, GGML_TYPE_I64, true, false },   /* one index row for every matrix */
        { 7, 33, 4, 2, 2, 2, GGML_TYPE_I32, true, true },   /* indices broadcast over dims 2, 3 */
        { 31, 31, 2, 3, 2, 3, GGML_TYPE_I64, false, true }, /* one index row per matrix */
    };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const bool quantized = ggml_is_quantized(types[t]);
        /* F16 source rows too (copied as bytes into F16, widened for the others) */
        const bool f16_sources = types[t] == GGML_TYPE_F32 || types[t] == GGML_TYPE_F16 ||
                                 types[t] == GGML_TYPE_BF16 || types[t] == GGML_TYPE_Q8_0 || types[t] == GGML_TYPE_Q4_K;
        for (int f16 = 0; f16 <= (int) f16_sources; f16++)
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
                check_set_rows(types[t], f16 ? GGML_TYPE_F16 : GGML_TYPE_F32,
                               ggml_blck_size(types[t]) == 256 ? k_quant_ne0[c]
                               : quantized                     ? quant_ne0[c] / 32 * ggml_blck_size(types[t])
                                                               : plain_ne0[c],
                               &cases[c], &seed);
    }
    test_set_rows_repeated();
    test_set_rows_i32();
}

/* --------------------------------------------------------------- set, acc */

struct view_case {
    enum ggml_type type;
    int64_t a_ne[4], b_ne[4];
    int64_t at[4];        /* position in a of b's first element */
    int64_t row_step;     /* nb1 = row_step rows of a */
    bool transposed_b;
};

/* Expected flat values of a after writing (or adding) b at the view. */
static double *view_reference(const struct ggml_tensor *a, const struct ggml_tensor *b, size_t nb1, size_t nb2,
                              size_t nb3, size_t offset, bool add)
{
    const int64_t n = ggml_nelements(a);
    const size_t es = ggml_type_size(a->type);
    double *ref = malloc((size_t) n * sizeof *ref);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < a->ne[0]; i0++)
                    ref[k++] = optest_get(a, i0, i1, i2, i3);
    for (int64_t i3 = 0; i3 < b->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < b->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < b->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < b->ne[0]; i0++) {
                    const size_t flat = (offset + (size_t) i0 * es + (size_t) i1 * nb1 + (size_t) i2 * nb2 +
                                         (size_t) i3 * nb3) / es;
                    const double v = optest_get(b, i0, i1, i2, i3);
                    ref[flat] = add ? ref[flat] + v : v;
                }
    return ref;
}

enum view_form { FORM_4D, FORM_1D, FORM_2D };

static const char *const form_names[] = { "", "_1d", "_2d" };

/*
 * SET is a copy: exact.  ACC rounds one F32 sum per element, half an ulp
 * (2^-24 relative) at most, so NMSE <= 2^-48 = 3.6e-15; 1e-13 leaves room.
 */
static void check_view_op(const struct view_case *c, bool acc, enum view_form form, bool inplace, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx(8);
    struct ggml_tensor *a = ggml_new_tensor(ctx, c->type, 4, c->a_ne);
    const double range = c->type == GGML_TYPE_I8 ? 100.0 : ggml_is_quantized(c->type) || c->type == GGML_TYPE_F32 ||
                         c->type == GGML_TYPE_F16 || c->type == GGML_TYPE_BF16 || c->type == GGML_TYPE_F64 ? 2.0 : 1000.0;
    optest_fill(a, seed, -range, range);
    struct ggml_tensor *b;
    if (c->transposed_b) {
        const int64_t ne[4] = { c->b_ne[1], c->b_ne[0], c->b_ne[2], c->b_ne[3] };
        b = ggml_transpose(ctx, ggml_new_tensor(ctx, c->type, 4, ne));
    } else {
        b = ggml_new_tensor(ctx, c->type, 4, c->b_ne);
    }
    optest_fill(b, seed, -range, range);
    const struct saved a_saved = save_data(a);

    const size_t es = ggml_type_size(c->type);
    const size_t nb1 = a->nb[1] * (size_t) c->row_step, nb2 = a->nb[2], nb3 = a->nb[3];
    const size_t offset = (size_t) c->at[0] * es + (size_t) c->at[1] * a->nb[1] + (size_t) c->at[2] * nb2 +
                          (size_t) c->at[3] * nb3;
    double *ref = form == FORM_1D ? view_reference(a, b, a->nb[1], a->nb[2], a->nb[3], offset, acc)
                : form == FORM_2D ? view_reference(a, b, nb1, a->nb[2], a->nb[3], offset, acc)
                                  : view_reference(a, b, nb1, nb2, nb3, offset, acc);
    const double threshold = acc ? 1e-13 : 0.0;

    struct worst w = WORST_INIT;
    FOR_EACH_RUN(r, n_threads, use_ref) {
        restore_data(&a_saved);
        struct ggml_tensor *out;
        if (acc)
            out = inplace ? ggml_acc_inplace(ctx, a, b, nb1, nb2, nb3, offset) : ggml_acc(ctx, a, b, nb1, nb2, nb3, offset);
        else if (form == FORM_1D)
            out = inplace ? ggml_set_1d_inplace(ctx, a, b, offset) : ggml_set_1d(ctx, a, b, offset);
        else if (form == FORM_2D)
            out = inplace ? ggml_set_2d_inplace(ctx, a, b, nb1, offset) : ggml_set_2d(ctx, a, b, nb1, offset);
        else
            out = inplace ? ggml_set_inplace(ctx, a, b, nb1, nb2, nb3, offset) : ggml_set(ctx, a, b, nb1, nb2, nb3, offset);
        const bool built = out != NULL && out->op == (acc ? GGML_OP_ACC : GGML_OP_SET) &&
                           (out->view_src == a) == inplace && out->op_params[4] == (inplace ? 1 : 0);
        const bool computed = built && optest_compute(ctx, out, n_threads, use_ref) == GGML_STATUS_SUCCESS;
        /* the non-inplace forms leave a as it was */
        const bool a_kept = inplace || memcmp(a->data, a_saved.bytes, a_saved.size) == 0;
        worst_update(&w, computed ? optest_nmse(out, ref) : INFINITY, n_threads, use_ref, !computed || !a_kept);
    }
    ok(!w.failed && w.nmse <= threshold,
       "%s%s%s %s a [%lld, %lld, %lld, %lld], b [%lld, %lld, %lld, %lld]%s at (%lld, %lld, %lld, %lld), "
       "row step %lld: worst nmse %.3g (%d threads, %s)",
       acc ? "acc" : "set", form_names[form], inplace ? "_inplace" : "", ggml_type_name(c->type),
       (long long) c->a_ne[0], (long long) c->a_ne[1], (long long) c->a_ne[2], (long long) c->a_ne[3],
       (long long) b->ne[0], (long long) b->ne[1], (long long) b->ne[2], (long long) b->ne[3],
       c->transposed_b ? " transposed" : "", (long long) c->at[0], (long long) c->at[1], (long long) c->at[2],
       (long long) c->at[3], (long long) c->row_step, w.nmse, w.n_threads, run_name(w.use_ref));
    free(ref);
    free(a_saved.bytes);
    ggml_free(ctx);
}

static void test_set_acc(void)
{
    uint64_t seed = 0x5e7a03;
    const struct view_case cases[] = {
        { GGML_TYPE_F32, { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 0, 0, 0, 0 }, 1, false },
        { GGML_TYPE_F32, { 31, 9, 3, 2 }, { 17, 4, 2, 1 }, { 5, 1, 1, 1 }, 2, false },
        { GGML_TYPE_F32, { 33, 33, 2, 1 }, { 3, 31, 1, 1 }, { 30, 2, 1, 0 }, 1, true },
        { GGML_TYPE_F32, { 257, 3, 1, 1 }, { 257, 3, 1, 1 }, { 0, 0, 0, 0 }, 1, false },
        { GGML_TYPE_I32, { 31, 9, 3, 2 }, { 17, 4, 2, 1 }, { 5, 1, 1, 1 }, 2, true },
        { GGML_TYPE_F16, { 33, 5, 2, 1 }, { 31, 3, 2, 1 }, { 1, 2, 0, 0 }, 1, false },
        { GGML_TYPE_BF16, { 3, 17, 1, 3 }, { 3, 5, 1, 2 }, { 0, 4, 0, 1 }, 3, true },
        { GGML_TYPE_F64, { 31, 3, 2, 1 }, { 7, 2, 2, 1 }, { 3, 1, 0, 0 }, 1, true },
        { GGML_TYPE_I8, { 33, 4, 1, 1 }, { 31, 2, 1, 1 }, { 1, 1, 0, 0 }, 1, false },
        { GGML_TYPE_I16, { 3, 9, 2, 1 }, { 3, 4, 1, 1 }, { 0, 1, 1, 0 }, 2, true },
        { GGML_TYPE_I64, { 17, 5, 1, 2 }, { 5, 3, 1, 2 }, { 12, 2, 0, 0 }, 1, false },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int inplace = 0; inplace <= 1; inplace++) {
            check_view_op(&cases[c], false, FORM_4D, inplace, &seed);
            if (cases[c].type == GGML_TYPE_F32)
                check_view_op(&cases[c], true, FORM_4D, inplace, &seed);
        }

    /* set_1d: b is a 1-D run of elements; set_2d: rows nb1 apart */
    const struct view_case line = { GGML_TYPE_F32, { 31, 5, 2, 1 }, { 100, 1, 1, 1 }, { 7, 3, 0, 0 }, 1, false };
    const struct view_case block = { GGML_TYPE_I32, { 33, 7, 1, 1 }, { 5, 3, 1, 1 }, { 28, 1, 0, 0 }, 2, true };
    for (int inplace = 0; inplace <= 1; inplace++) {
        check_view_op(&line, false, FORM_1D, inplace, &seed);
        check_view_op(&block, false, FORM_2D, inplace, &seed);
    }
}

/* ----------------------------------------------------------- diag_mask_inf */

static void check_diag_mask_inf(enum ggml_type type, const int64_t ne[4], int n_past, bool transposed, bool inplace,
                                uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx(8);
    struct ggml_tensor *src;
    if (transposed) {
        const int64_t tne[4] = { ne[1], ne[0], ne[2], ne[3] };
        src = ggml_transpose(ctx, ggml_new_tensor(ctx, type, 4, tne));
        optest_fill(src->view_src, seed, -3.0, 3.0);
    } else {
        src = ggml_new_tensor(ctx, type, 4, ne);
        optest_fill(src, seed, -3.0, 3.0);
    }
    struct ggml_tensor *base = src->view_src != NULL ? src->view_src : src;
    const struct saved saved = save_data(base);
    double *values = malloc((size_t) ggml_nelements(src) * sizeof *values);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < ne[3]; i3++)
        for (int64_t i2 = 0; i2 < ne[2]; i2++)
            for (int64_t i1 = 0; i1 < ne[1]; i1++)
                for (int64_t i0 = 0; i0 < ne[0]; i0++)
                    values[k++] = optest_get(src, i0, i1, i2, i3);

    /* exact: kept elements are copied, masked ones are -INF */
    int64_t wrong = 0;
    bool failed = false;
    FOR_EACH_RUN(r, n_threads, use_ref) {
        restore_data(&saved);
        struct ggml_tensor *out = inplace ? ggml_diag_mask_inf_inplace(ctx, src, n_past)
                                          : ggml_diag_mask_inf(ctx, src, n_past);
        if (out == NULL || optest_compute(ctx, out, n_threads, use_ref) != GGML_STATUS_SUCCESS) {
            failed = true;
            continue;
        }
        k = 0;
        for (int64_t i3 = 0; i3 < ne[3]; i3++)
            for (int64_t i2 = 0; i2 < ne[2]; i2++)
                for (int64_t i1 = 0; i1 < ne[1]; i1++)
                    for (int64_t i0 = 0; i0 < ne[0]; i0++, k++) {
                        const double got = optest_get(out, i0, i1, i2, i3);
                        const double want = i0 > n_past + i1 ? -INFINITY : values[k];
                        if (!(got == want))
                            wrong++;
                    }
    }
    ok(!failed && wrong == 0, "diag_mask_inf%s %s [%lld, %lld, %lld, %lld]%s, n_past %d: %lld wrong elements",
       inplace ? "_inplace" : "", ggml_type_name(type), (long long) ne[0], (long long) ne[1], (long long) ne[2],
       (long long) ne[3], transposed ? " transposed" : "", n_past, (long long) wrong);
    free(values);
    free(saved.bytes);
    ggml_free(ctx);
}

static void test_diag_mask_inf(void)
{
    uint64_t seed = 0xd1a904;
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    const int64_t shapes[][4] = {
        { 1, 1, 1, 1 }, { 3, 3, 1, 1 }, { 31, 17, 2, 1 }, { 33, 33, 3, 2 }, { 257, 5, 1, 1 },
    };
    const int n_pasts[] = { 0, 2, 40 };
    int variant = 0;
    for (size_t t = 0; t < 3; t++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t p = 0; p < 3; p++, variant++)
                check_diag_mask_inf(types[t], shapes[s], n_pasts[p], variant % 2 == 1, variant % 3 == 2, &seed);
}

/* ---------------------------------------------------------------- soft_max */

struct soft_max_case {
    int64_t ne[4];
    enum ggml_type mask_type;     /* GGML_TYPE_COUNT: no mask */
    int64_t mask_extra_rows, mask_ne2, mask_ne3;
    float scale, max_bias;
    bool sinks, inplace, masked_rows, big_logits;
};

/* ALiBi slope of head h, as upstream defines it. */
static double alibi_slope(double max_bias, int64_t n_head, int64_t h)
{
    if (!(max_bias > 0.0))
        return 1.0;
    int64_t n_log2 = 1;
    while (n_log2 * 2 <= n_head)
        n_log2 *= 2;
    const double m0 = pow(2.0, -max_bias / (double) n_log2);
    const double m1 = pow(2.0, -(max_bias / 2.0) / (double) n_log2);
    return h < n_log2 ? pow(m0, (double) (h + 1)) : pow(m1, (double) (2 * (h - n_log2) + 1));
}

/* Softmax of one row of z (with an optional sink) into out, in double. */
static void soft_max_reference_row(const double *z, int64_t n, bool has_sink, double sink, double *out)
{
    double max = has_sink ? sink : -INFINITY;
    for (int64_t i = 0; i < n; i++)
        max = z[i] > max ? z[i] : max;
    if (max == -INFINITY) {
        for (int64_t i = 0; i < n; i++)
            out[i] = 0.0; /* fully masked */
        return;
    }
    double sum = has_sink ? exp(sink - max) : 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += exp(z[i] - max);
    for (int64_t i = 0; i < n; i++)
        out[i] = exp(z[i] - max) / sum;
}

/*
 * The kernels compute the logits z in float: each carries an absolute
 * error of about |z| 2^-24, which becomes the relative error of the
 * outputs.  With |z| up to ~20 (ALiBi slopes included) NMSE stays below
 * (20 * 6e-8)^2 ~ 1.4e-12, threshold 1e-10; with logits of 500..1000 below
 * (1000 * 6e-8)^2 ~ 3.6e-9, threshold 1e-8.  Fully masked rows must be
 * exact zeros.
 */
static void check_soft_max(const struct soft_max_case *c, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx(16);
    const int64_t *ne = c->ne;
    struct ggml_tensor *a = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    optest_fill(a, seed, c->big_logits ? 500.0 : -4.0, c->big_logits ? 1000.0 : 4.0);
    const struct saved a_saved = save_data(a);

    struct ggml_tensor *mask = NULL;
    if (c->mask_type != GGML_TYPE_COUNT) {
        mask = ggml_new_tensor_4d(ctx, c->mask_type, ne[0], ne[1] + c->mask_extra_rows, c->mask_ne2, c->mask_ne3);
        optest_fill(mask, seed, -2.0, 2.0);
        /* a causal pattern, and fully masked rows when asked */
        for (int64_t i3 = 0; i3 < mask->ne[3]; i3++)
            for (int64_t i2 = 0; i2 < mask->ne[2]; i2++)
                for (int64_t i1 = 0; i1 < mask->ne[1]; i1++)
                    for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                        const bool all = c->masked_rows && i1 % 3 == 1;
                        if (all || i0 > i1 + ne[0] / 2)
                            optest_set(mask, i0, i1, i2, i3, -INFINITY);
                    }
    }
    struct ggml_tensor *sinks = NULL;
    if (c->sinks) {
        sinks = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ne[2]);
        optest_fill(sinks, seed, -2.0, 2.0);
        if (c->masked_rows)
            ((float *) sinks->data)[0] = -INFINITY; /* head 0: a sink that adds nothing */
    }

    /* reference */
    const int64_t n = ggml_nelements(a);
    double *ref = malloc((size_t) n * sizeof *ref);
    double *z = malloc((size_t) ne[0] * sizeof *z);
    int64_t k = 0, n_zero_rows = 0;
    for (int64_t i3 = 0; i3 < ne[3]; i3++)
        for (int64_t i2 = 0; i2 < ne[2]; i2++)
            for (int64_t i1 = 0; i1 < ne[1]; i1++, k += ne[0]) {
                const double slope = alibi_slope(c->max_bias, ne[2], i2);
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    z[i0] = c->scale * optest_get(a, i0, i1, i2, i3);
                    if (mask != NULL)
                        z[i0] += slope * optest_get(mask, i0, i1, i2 % mask->ne[2], i3 % mask->ne[3]);
                }
                const double sink = sinks != NULL ? optest_get(sinks, i2, 0, 0, 0) : -INFINITY;
                soft_max_reference_row(z, ne[0], sinks != NULL, sink, ref + k);
                n_zero_rows += ref[k] == 0.0 && z[0] == -INFINITY;
            }

    struct worst w = WORST_INIT;
    bool zeros_exact = true;
    FOR_EACH_RUN(r, n_threads, use_ref) {
        restore_data(&a_saved);
        struct ggml_tensor *out;
        if (mask == NULL && c->scale == 1.0f && !c->sinks)
            out = c->inplace ? ggml_soft_max_inplace(ctx, a) : ggml_soft_max(ctx, a);
        else
            out = c->inplace ? ggml_soft_max_ext_inplace(ctx, a, mask, c->scale, c->max_bias)
                             : ggml_soft_max_ext(ctx, a, mask, c->scale, c->max_bias);
        ggml_soft_max_add_sinks(out, sinks);
        const bool built = out != NULL && out->op == GGML_OP_SOFT_MAX && out->src[2] == sinks &&
                           (out->view_src == a) == c->inplace;
        const bool computed = built && optest_compute(ctx, out, n_threads, use_ref) == GGML_STATUS_SUCCESS;
        worst_update(&w, computed ? optest_nmse(out, ref) : INFINITY, n_threads, use_ref, !computed);
        if (!computed)
            continue;
        k = 0;
        for (int64_t i3 = 0; i3 < ne[3]; i3++)
            for (int64_t i2 = 0; i2 < ne[2]; i2++)
                for (int64_t i1 = 0; i1 < ne[1]; i1++)
                    for (int64_t i0 = 0; i0 < ne[0]; i0++, k++)
                        if (ref[k] == 0.0 && optest_get(out, i0, i1, i2, i3) != 0.0)
                            zeros_exact = false;
    }
    ok(!w.failed && w.nmse <= (c->big_logits ? 1e-8 : 1e-10) && zeros_exact,
       "soft_max%s [%lld, %lld, %lld, %lld], mask %s [+%lld rows, %lld, %lld], scale %g, max_bias %g%s%s%s: "
       "worst nmse %.3g (%d threads, %s), %lld fully masked rows%s",
       c->inplace ? "_inplace" : "", (long long) ne[0], (long long) ne[1], (long long) ne[2], (long long) ne[3],
       mask != NULL ? ggml_type_name(c->mask_type) : "none", (long long) c->mask_extra_rows,
       (long long) c->mask_ne2, (long long) c->mask_ne3, (double) c->scale, (double) c->max_bias,
       c->sinks ? ", sinks" : "", c->masked_rows ? ", masked rows" : "", c->big_logits ? ", logits 500..1000" : "",
       w.nmse, w.n_threads, run_name(w.use_ref), (long long) n_zero_rows, zeros_exact ? "" : ", NOT ZERO");
    free(z);
    free(ref);
    free(a_saved.bytes);
    ggml_free(ctx);
}

/* Known slopes: 8 heads, max_bias 8 give 2^-(h+1); 3 heads give 1/16, 1/256, 1/4. */
static void test_alibi_slopes(void)
{
    struct ggml_context *ctx = new_ctx(4);
    const int n_heads[2] = { 8, 3 };
    const double slopes[2][8] = {
        { 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625 },
        { 1.0 / 16, 1.0 / 256, 1.0 / 4 },
    };
    for (int c = 0; c < 2; c++) {
        /* row [0, 0] with mask [0, -1]: y1 = e^-s / (1 + e^-s) */
        struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 2, 1, n_heads[c]);
        struct ggml_tensor *mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 1);
        memset(a->data, 0, ggml_nbytes(a));
        ((float *) mask->data)[0] = 0.0f;
        ((float *) mask->data)[1] = -1.0f;
        struct ggml_tensor *out = ggml_soft_max_ext(ctx, a, mask, 1.0f, 8.0f);
        bool good = optest_compute(ctx, out, 2, false) == GGML_STATUS_SUCCESS;
        double worst = 0.0;
        for (int h = 0; h < n_heads[c]; h++) {
            const double want = exp(-slopes[c][h]) / (1.0 + exp(-slopes[c][h]));
            const double err = fabs(((float *) out->data)[2 * h + 1] - want);
            worst = err > worst ? err : worst;
        }
        ok(good && worst < 1e-6, "soft_max_ext ALiBi slopes with %d heads, max_bias 8: worst error %.3g",
           n_heads[c], worst);
    }
    ggml_free(ctx);
}

static void test_soft_max(void)
{
    uint64_t seed = 0x50f705;
    const enum ggml_type none = GGML_TYPE_COUNT, f32 = GGML_TYPE_F32, f16 = GGML_TYPE_F16;
    const struct soft_max_case cases[] = {
        { { 1, 1, 1, 1 }, none, 0, 1, 1, 1.0f, 0.0f, false, false, false, false },
        { { 3, 5, 1, 1 }, none, 0, 1, 1, 1.0f, 0.0f, false, true, false, false },
        { { 257, 3, 2, 1 }, none, 0, 1, 1, 0.125f, 0.0f, false, false, false, false },
        { { 33, 7, 1, 1 }, none, 0, 1, 1, 1.0f, 0.0f, false, false, false, true },
        { { 31, 9, 3, 2 }, f32, 4, 1, 1, 0.5f, 0.0f, false, false, true, false },
        { { 33, 4, 4, 2 }, f16, 0, 4, 2, 1.0f, 0.0f, false, false, false, false },
        { { 31, 6, 4, 3 }, f32, 1, 2, 3, 0.7f, 0.0f, true, false, true, false },
        { { 64, 5, 8, 1 }, f16, 3, 1, 1, 0.3f, 8.0f, false, false, false, false },
        { { 17, 4, 5, 2 }, f32, 0, 5, 1, 1.0f, 4.0f, true, true, true, false },
        { { 3, 33, 3, 1 }, f16, 0, 1, 1, 2.0f, 1.0f, true, false, false, false },
        { { 257, 2, 2, 2 }, f32, 0, 2, 2, 1.0f, 0.0f, true, true, false, true },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        check_soft_max(&cases[c], &seed);
    test_alibi_slopes();
}

/* ------------------------------------------------------ refused by the CPU */

static void expect_refused(struct ggml_context *ctx, struct ggml_tensor *node, const char *what)
{
    ok(node != NULL && optest_compute(ctx, node, 2, false) == GGML_STATUS_FAILED,
       "%s: the CPU backend refuses the node", what);
    logged_one_error("%s: one error is logged", what);
}

static void test_refused(void)
{
    struct ggml_context *ctx = new_ctx(8);
    struct ggml_tensor *idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
    memset(idx->data, 0, ggml_nbytes(idx));

    /* Q8_1 has no to_float: upstream accepts the node, nothing can compute it */
    struct ggml_tensor *q81 = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_1, 32, 4);
    expect_refused(ctx, ggml_get_rows(ctx, q81, idx), "get_rows from q8_1");

    /* IQ1_M has no from_float_ref yet */
    struct ggml_tensor *iq1m = ggml_new_tensor_2d(ctx, GGML_TYPE_IQ1_M, 256, 4);
    struct ggml_tensor *rows = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 256, 2);
    expect_refused(ctx, ggml_set_rows(ctx, iq1m, rows, idx), "set_rows into iq1_m");

    struct ggml_tensor *h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 8, 2);
    expect_refused(ctx, ggml_soft_max(ctx, h), "soft_max of f16");

    struct ggml_tensor *i = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 8, 2);
    expect_refused(ctx, ggml_diag_mask_inf(ctx, i, 0), "diag_mask_inf of i32");

    /* op_params changed after construction to point outside: refused, not followed */
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 4);
    struct ggml_tensor *b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor *s = ggml_set_1d(ctx, a, b, 0);
    if (s != NULL)
        s->op_params[3] = 30 * 4; /* offset: elements 30..33 of 32 */
    expect_refused(ctx, s, "set with its offset moved outside");
    struct ggml_tensor *acc = ggml_acc(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], 0);
    if (acc != NULL)
        acc->op_params[0] = -4; /* a negative stride */
    expect_refused(ctx, acc, "acc with a negative stride");
    ggml_free(ctx);
}

/* ---------------------------------------------------------- error paths */

#define EXPECT_ERROR(expr, what)                                 \
    do {                                                         \
        ok((expr) == NULL, "%s: gives NULL", what);              \
        logged_one_error("%s: logs one error", what);            \
    } while (0)

static void test_errors(void)
{
    struct ggml_context *ctx = new_ctx(4);
    struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 6, 2);
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 32, 4);
    struct ggml_tensor *i32 = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 2);
    struct ggml_tensor *i64 = ggml_new_tensor_2d(ctx, GGML_TYPE_I64, 3, 2);
    struct ggml_tensor *f = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 2);
    struct ggml_tensor *rows = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 3, 2);
    struct ggml_tensor *at = ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 8)); /* [8, 6] */

    /* get_rows */
    EXPECT_ERROR(ggml_get_rows(ctx, a, f), "get_rows: f32 indices");
    EXPECT_ERROR(ggml_get_rows(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 3)),
                 "get_rows: indices ne[1] != a->ne[2]");
    EXPECT_ERROR(ggml_get_rows(ctx, a, ggml_new_tensor_4d(ctx, GGML_TYPE_I32, 3, 2, 1, 2)),
                 "get_rows: indices with ne[3] != 1");

    /* set_rows */
    EXPECT_ERROR(ggml_set_rows(ctx, a, ggml_new_tensor_3d(ctx, GGML_TYPE_BF16, 8, 3, 2), i64),
                 "set_rows: bf16 source rows");
    EXPECT_ERROR(ggml_set_rows(ctx, a, rows, f), "set_rows: f32 indices");
    EXPECT_ERROR(ggml_set_rows(ctx, a, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 7, 3, 2), i64),
                 "set_rows: rows of another length");
    EXPECT_ERROR(ggml_set_rows(ctx, a, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 3, 1), i64),
                 "set_rows: source ne[2] != destination ne[2]");
    EXPECT_ERROR(ggml_set_rows(ctx, a, rows, ggml_new_tensor_2d(ctx, GGML_TYPE_I64, 4, 2)),
                 "set_rows: index count != source rows");
    struct ggml_tensor *a4 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 6, 4);
    EXPECT_ERROR(ggml_set_rows(ctx, a4, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 3, 4), ggml_new_tensor_2d(ctx, GGML_TYPE_I64, 3, 3)),
                 "set_rows: indices ne[1] that does not divide 4");
    EXPECT_ERROR(ggml_set_rows(ctx, a, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 3, 2, 1), ggml_new_tensor_4d(ctx, GGML_TYPE_I64, 3, 1, 1, 2)),
                 "set_rows: indices with ne[3] != 1");
    struct ggml_tensor *rows_t = ggml_transpose(ctx, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 8, 2));
    EXPECT_ERROR(ggml_set_rows(ctx, a, rows_t, i32), "set_rows: source rows not contiguous");
    EXPECT_ERROR(ggml_set_rows(ctx, at, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 3), ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3)),
                 "set_rows: destination rows not contiguous");

    /* set and acc */
    struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 6);
    struct ggml_tensor *small = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2);
    EXPECT_ERROR(ggml_set(ctx, m, ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 4, 2), m->nb[1], m->nb[2], m->nb[3], 0),
                 "set: b of another type");
    EXPECT_ERROR(ggml_set(ctx, q, ggml_new_tensor_1d(ctx, GGML_TYPE_Q4_0, 32), q->nb[1], q->nb[2], q->nb[3], 0),
                 "set: quantized a");
    EXPECT_ERROR(ggml_set(ctx, small, m, m->nb[1], m->nb[2], m->nb[3], 0), "set: b larger than a");
    EXPECT_ERROR(ggml_set(ctx, m, small, m->nb[1], m->nb[2], m->nb[3], 4 * 44), "set: offset that runs past the end");
    EXPECT_ERROR(ggml_set(ctx, m, small, m->nb[1] * 6, m->nb[2], m->nb[3], 0), "set: row stride that runs past the end");
    EXPECT_ERROR(ggml_set(ctx, m, small, m->nb[1], m->nb[2], m->nb[3], 2), "set: offset not a multiple of the element size");
    EXPECT_ERROR(ggml_set(ctx, m, small, m->nb[1], m->nb[2], m->nb[3], (size_t) 1 << 32), "set: offset beyond int32");
    EXPECT_ERROR(ggml_set(ctx, at, small, at->nb[1], at->nb[2], at->nb[3], 0), "set: non-contiguous a");
    EXPECT_ERROR(ggml_set_inplace(ctx, m, small, m->nb[1], m->nb[2], m->nb[3], 4 * 46), "set_inplace: offset outside");
    EXPECT_ERROR(ggml_set_1d(ctx, m, small, 4 * 41), "set_1d: offset outside");
    EXPECT_ERROR(ggml_set_1d_inplace(ctx, m, small, 4 * 41), "set_1d_inplace: offset outside");
    EXPECT_ERROR(ggml_set_2d(ctx, m, small, m->nb[1], 4 * 37), "set_2d: offset outside");
    EXPECT_ERROR(ggml_set_2d_inplace(ctx, m, small, 4 * 48, 0), "set_2d_inplace: row stride outside");
    EXPECT_ERROR(ggml_acc(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 8, 6), ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 2),
                          32, 32 * 6, 32 * 6, 0),
                 "acc: f16 tensors");
    EXPECT_ERROR(ggml_acc(ctx, m, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 2), m->nb[1], m->nb[2], m->nb[3], 0),
                 "acc: f16 b");
    EXPECT_ERROR(ggml_acc(ctx, m, small, m->nb[1], m->nb[2], m->nb[3], 4 * 45), "acc: offset outside");
    EXPECT_ERROR(ggml_acc_inplace(ctx, m, small, m->nb[1] * 7, m->nb[2], m->nb[3], 0), "acc_inplace: stride outside");
    EXPECT_ERROR(ggml_acc(ctx, at, small, at->nb[1], at->nb[2], at->nb[3], 0), "acc: non-contiguous a");
    ok(ggml_set(ctx, m, small, m->nb[1], m->nb[2], m->nb[3], 4 * 36) != NULL &&
       ggml_acc(ctx, m, small, m->nb[1], m->nb[2], m->nb[3], 4 * 36) != NULL,
       "set, acc: a view that ends on a's last element is accepted");
    is_int(tap_log_errors(), 0, "set, acc: the accepted views log nothing");

    /* diag_mask_inf */
    EXPECT_ERROR(ggml_diag_mask_inf(ctx, a, -1), "diag_mask_inf: negative n_past");
    EXPECT_ERROR(ggml_diag_mask_inf_inplace(ctx, a, -5), "diag_mask_inf_inplace: negative n_past");

    /* soft_max */
    struct ggml_tensor *mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 8, 6);
    EXPECT_ERROR(ggml_soft_max(ctx, at), "soft_max: non-contiguous a");
    EXPECT_ERROR(ggml_soft_max_inplace(ctx, at), "soft_max_inplace: non-contiguous a");
    EXPECT_ERROR(ggml_soft_max_ext(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 8, 6), 1.0f, 0.0f),
                 "soft_max_ext: i32 mask");
    EXPECT_ERROR(ggml_soft_max_ext(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 6), 1.0f, 0.0f),
                 "soft_max_ext: mask rows of another length");
    EXPECT_ERROR(ggml_soft_max_ext(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 5), 1.0f, 0.0f),
                 "soft_max_ext: mask with fewer rows");
    EXPECT_ERROR(ggml_soft_max_ext(ctx, a, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 6, 3), 1.0f, 0.0f),
                 "soft_max_ext: mask ne[2] that does not divide a's");
    EXPECT_ERROR(ggml_soft_max_ext(ctx, m, ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 8)), 1.0f, 0.0f),
                 "soft_max_ext: non-contiguous mask");
    EXPECT_ERROR(ggml_soft_max_ext(ctx, a, NULL, 1.0f, 8.0f), "soft_max_ext: max_bias without a mask");
    EXPECT_ERROR(ggml_soft_max_ext_inplace(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 5), 1.0f, 0.0f),
                 "soft_max_ext_inplace: mask with fewer rows");
    ok(ggml_soft_max_ext(ctx, a, mask, 0.5f, 0.0f) != NULL, "soft_max_ext: an f16 mask broadcast over dim 2");

    /* soft_max_add_sinks: reports, leaves the node as it was */
    struct ggml_tensor *sm = ggml_soft_max_ext(ctx, a, mask, 1.0f, 0.0f);
    struct ggml_tensor *sinks = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    ggml_soft_max_add_sinks(a, sinks);
    ok(a->src[2] == NULL, "soft_max_add_sinks: a non-softmax node is left alone");
    logged_one_error("soft_max_add_sinks: a non-softmax node logs one error");
    ggml_soft_max_add_sinks(sm, ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 2));
    ok(sm->src[2] == NULL, "soft_max_add_sinks: f16 sinks are refused");
    logged_one_error("soft_max_add_sinks: f16 sinks log one error");
    ggml_soft_max_add_sinks(sm, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3));
    ok(sm->src[2] == NULL, "soft_max_add_sinks: a sink count other than the head count is refused");
    logged_one_error("soft_max_add_sinks: a wrong sink count logs one error");
    ggml_soft_max_add_sinks(sm, sinks);
    ok(sm->src[2] == sinks, "soft_max_add_sinks: sets src[2]");
    ggml_soft_max_add_sinks(sm, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2));
    ok(sm->src[2] == sinks, "soft_max_add_sinks: a second set of sinks is refused");
    logged_one_error("soft_max_add_sinks: a second set of sinks logs one error");
    ggml_soft_max_add_sinks(sm, NULL);
    ok(sm->src[2] == NULL, "soft_max_add_sinks: NULL sinks remove them");
    ggml_soft_max_add_sinks(NULL, sinks);
    is_int(tap_log_errors(), 0, "soft_max_add_sinks: NULL arguments log nothing");

    /* NULL inputs propagate silently */
    const bool all_null =
        ggml_get_rows(ctx, NULL, i32) == NULL && ggml_get_rows(ctx, a, NULL) == NULL &&
        ggml_set_rows(ctx, NULL, rows, i64) == NULL && ggml_set_rows(ctx, a, NULL, i64) == NULL &&
        ggml_set_rows(ctx, a, rows, NULL) == NULL &&
        ggml_set(ctx, NULL, small, 0, 0, 0, 0) == NULL && ggml_set(ctx, m, NULL, 0, 0, 0, 0) == NULL &&
        ggml_set_inplace(ctx, NULL, small, 0, 0, 0, 0) == NULL && ggml_set_1d(ctx, NULL, small, 0) == NULL &&
        ggml_set_1d(ctx, m, NULL, 0) == NULL && ggml_set_1d_inplace(ctx, NULL, small, 0) == NULL &&
        ggml_set_2d(ctx, NULL, small, 0, 0) == NULL && ggml_set_2d_inplace(ctx, m, NULL, 0, 0) == NULL &&
        ggml_acc(ctx, NULL, small, 0, 0, 0, 0) == NULL && ggml_acc_inplace(ctx, m, NULL, 0, 0, 0, 0) == NULL &&
        ggml_diag_mask_inf(ctx, NULL, 0) == NULL && ggml_diag_mask_inf_inplace(ctx, NULL, 0) == NULL &&
        ggml_soft_max(ctx, NULL) == NULL && ggml_soft_max_inplace(ctx, NULL) == NULL &&
        ggml_soft_max_ext(ctx, NULL, mask, 1.0f, 0.0f) == NULL &&
        ggml_soft_max_ext_inplace(ctx, NULL, NULL, 1.0f, 0.0f) == NULL;
    ok(all_null, "every constructor gives NULL for a NULL input");
    is_int(tap_log_errors(), 0, "NULL inputs log nothing");

    /* a NULL context, and a full one */
    EXPECT_ERROR(ggml_get_rows(NULL, a, i32), "get_rows: NULL context");
    EXPECT_ERROR(ggml_soft_max(NULL, a), "soft_max: NULL context");
    ggml_free(ctx);

    struct ggml_init_params tiny = { 2 * ggml_tensor_overhead(), NULL, true };
    ctx = ggml_init(tiny);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 4);
    struct ggml_tensor *y = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
    EXPECT_ERROR(ggml_get_rows(ctx, x, y), "get_rows: a full context");
    EXPECT_ERROR(ggml_diag_mask_inf(ctx, x, 0), "diag_mask_inf: a full context");
    EXPECT_ERROR(ggml_set_1d(ctx, x, x, 0), "set_1d: a full context");
    ggml_free(ctx);
}

/* SET and ACC of a source with no elements but 2^40 (empty) rows write
 * nothing, and return at once (an alarm turns a walk of the rows into a
 * failure). */
static void test_set_empty_source(void)
{
    struct ggml_init_params ip = { 1024 * 1024, NULL, false };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 3);
    for (int i = 0; i < 18; i++)
        ggml_set_f32_1d(a, i, (float) i);
    struct ggml_tensor *none = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 0, INT64_C(1) << 40);
    struct ggml_tensor *outs[2] = { ggml_set_2d(ctx, a, none, a->nb[1], 0), ggml_acc(ctx, a, none, a->nb[1], a->nb[2], a->nb[3], 0) };
    for (int k = 0; k < 2; k++) {
        const char *what = k == 0 ? "set_2d" : "acc";
        if (!ok(outs[k] != NULL, "%s of an empty source with 2^40 rows builds", what))
            continue;
        struct ggml_cgraph *g = ggml_new_graph(ctx);
        ggml_build_forward_expand(g, outs[k]);
        alarm(30);
        enum ggml_status st = ggml_graph_compute_with_ctx(ctx, g, 2);
        alarm(0);
        bool same = true;
        for (int i = 0; i < 18; i++)
            same = same && ggml_get_f32_1d(outs[k], i) == (float) i;
        ok(st == GGML_STATUS_SUCCESS && same, "... computes a copy of the destination");
    }
    is_int(tap_log_errors(), 0, "... without a message");
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    test_get_rows();
    test_set_rows();
    test_set_acc();
    test_set_empty_source();
    test_diag_mask_inf();
    test_soft_max();
    test_refused();
    test_errors();
    ggml_quantize_free();   /* the tables of the IQ1 quantizers */
    return tap_done();
}
