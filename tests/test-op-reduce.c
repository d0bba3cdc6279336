/*
 * test-op-reduce.c - SUM, SUM_ROWS, MEAN, ARGMAX, COUNT_EQUAL, REPEAT,
 * CONCAT, NORM, RMS_NORM, L2_NORM and GROUP_NORM: odd shapes, every
 * accepted type, contiguous, padded, transposed and permuted inputs,
 * in-place forms, 1..4 threads, reference and fast kernels, results equal
 * bit for bit across thread counts, and the constructors' error paths.
 *
 * References are computed here in double precision from the inputs as
 * stored (F16/BF16 inputs after their own rounding).  Thresholds (NMSE):
 *   F32 results of sums and norms   1e-13: the kernels accumulate in double
 *       and round once (twice for the fast RMS/L2 scaling: the scale, then
 *       the product), so each element is within 2 ulp, NMSE <= 4 * 2^-48
 *       ~ 1.4e-14; 1e-13 leaves a factor 7.
 *   SUM into F16                    2.5e-7: one rounding to 11 bits, 2^-22.
 *   SUM into BF16                   1.6e-5: one rounding to 8 bits, 2^-16.
 *   ARGMAX, COUNT_EQUAL, REPEAT, CONCAT: exact (0).
 */
#include <stdio.h>

#include "tap.h"
#include "op-test.h"
#include "ggml-backend.h"

#define F32_NMSE 1e-13

/* --------------------------------------------------------------- inputs */

enum layout {
    DENSE,      /* contiguous */
    PADDED,     /* rows contiguous, but apart: a column slice of a wider tensor */
    TRANSPOSED, /* dims 0 and 1 swapped: elements of a row apart */
    PERMUTED,   /* dims 0, 1, 2 rotated: every stride out of order */
};

static const char *layout_name[] = { "dense", "padded", "transposed", "permuted" };

/* A tensor of logical shape ne laid out as asked, filled with uniform values in [lo, hi). */
static struct ggml_tensor *make_input(struct ggml_context *ctx, enum ggml_type type, const int64_t ne[4],
                                      enum layout layout, uint64_t *seed, double lo, double hi)
{
    struct ggml_tensor *base, *t;
    switch (layout) {
    case PADDED:
        base = ggml_new_tensor_4d(ctx, type, ne[0] + 5, ne[1], ne[2], ne[3]);
        t = ggml_view_4d(ctx, base, ne[0], ne[1], ne[2], ne[3], base->nb[1], base->nb[2], base->nb[3], 0);
        break;
    case TRANSPOSED:
        base = ggml_new_tensor_4d(ctx, type, ne[1], ne[0], ne[2], ne[3]);
        t = ggml_transpose(ctx, base);
        break;
    case PERMUTED:
        /* base dim 0 becomes dim 2, base dim 1 dim 0, base dim 2 dim 1 */
        base = ggml_new_tensor_4d(ctx, type, ne[2], ne[0], ne[1], ne[3]);
        t = ggml_permute(ctx, base, 2, 0, 1, 3);
        break;
    default:
        base = t = ggml_new_tensor_4d(ctx, type, ne[0], ne[1], ne[2], ne[3]);
        break;
    }
    optest_fill(base, seed, lo, hi);
    return t;
}

/* Every element of t, row-major in t's logical shape. */
static double *load_all(const struct ggml_tensor *t)
{
    double *v = malloc((size_t) (ggml_nelements(t) > 0 ? ggml_nelements(t) : 1) * sizeof *v);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++)
                    v[k++] = optest_get(t, i0, i1, i2, i3);
    return v;
}

static int64_t flat(const int64_t ne[4], int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return ((i3 * ne[2] + i2) * ne[1] + i1) * ne[0] + i0;
}

/* ------------------------------------------------------------ the runner */

/*
 * Computes out (not an in-place node: it is recomputed) with 1..4 threads,
 * reference and fast kernels, after poisoning its memory; checks the NMSE
 * against ref and that every thread count gives the same bits.
 */
static void check_node(struct ggml_context *ctx, struct ggml_tensor *out, const double *ref, double threshold,
                       const char *label)
{
    if (!ok(out != NULL, "%s: the constructor gives a node", label))
        return;
    const size_t n = (size_t) ggml_nelements(out);
    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        double *first = NULL;
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            memset(out->data, 0xff, ggml_nbytes(out)); /* NaN / -1 where the kernel writes nothing */
            enum ggml_status status = optest_compute(ctx, out, n_threads, use_ref != 0);
            double nmse = optest_nmse(out, ref);
            double *now = load_all(out);
            bool same = true;
            if (first == NULL)
                first = now;
            else {
                same = memcmp(first, now, n * sizeof *now) == 0;
                free(now);
            }
            ok(status == GGML_STATUS_SUCCESS && nmse <= threshold && same,
               "%s, %d threads, %s: nmse %.3g (<= %.3g)%s", label, n_threads, use_ref ? "reference" : "fast",
               nmse, threshold, same ? "" : ", differs from 1 thread");
        }
        free(first);
    }
}

static struct ggml_context *new_ctx(size_t mb)
{
    struct ggml_init_params params = { mb << 20, NULL, false };
    return ggml_init(params);
}

/* --------------------------------------------------------- sums and means */

static const int64_t odd_shapes[][4] = {
    { 1, 1, 1, 1 },
    { 3, 5, 1, 1 },
    { 31, 3, 2, 1 },
    { 33, 2, 3, 2 },
    { 257, 3, 1, 1 },
    { 1, 7, 2, 3 },
};
#define N_ODD (sizeof odd_shapes / sizeof odd_shapes[0])

static double sum_threshold(enum ggml_type type)
{
    return type == GGML_TYPE_F32 ? F32_NMSE : type == GGML_TYPE_F16 ? 2.5e-7 : 1.6e-5;
}

static void test_sum(void)
{
    struct ggml_context *ctx = new_ctx(32);
    uint64_t seed = 0x5e0001;
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    char label[160];
    for (size_t t = 0; t < 3; t++)
        for (size_t s = 0; s < N_ODD; s++)
            for (int layout = DENSE; layout <= PERMUTED; layout++) {
                if (t != 0 && layout != DENSE && layout != (int) (s % 3) + 1)
                    continue; /* every layout for F32, dense and one other for F16 and BF16 */
                const int64_t *ne = odd_shapes[s];
                /* values biased upward so that no sum is near 0 (relative rounding stays meaningful) */
                struct ggml_tensor *a = make_input(ctx, types[t], ne, (enum layout) layout, &seed, -1.0, 2.0);
                double *x = load_all(a), total = 0.0;
                for (int64_t i = 0; i < ggml_nelements(a); i++)
                    total += x[i];
                free(x);
                struct ggml_tensor *out = ggml_sum(ctx, a);
                snprintf(label, sizeof label, "sum %s [%lld,%lld,%lld,%lld] %s", ggml_type_name(types[t]),
                         (long long) ne[0], (long long) ne[1], (long long) ne[2], (long long) ne[3],
                         layout_name[layout]);
                ok(out && out->type == types[t] && ggml_nelements(out) == 1 && out->op == GGML_OP_SUM &&
                       out->src[0] == a,
                   "%s: a 1-element tensor of the input's type", label);
                check_node(ctx, out, &total, sum_threshold(types[t]), label);
            }
    /* many rows (more than the kernel's chunks), one element each */
    const int64_t column[4] = { 1, 1000, 1, 1 };
    struct ggml_tensor *a = make_input(ctx, GGML_TYPE_F32, column, DENSE, &seed, -1.0, 2.0);
    double *x = load_all(a), total = 0.0;
    for (int64_t i = 0; i < 1000; i++)
        total += x[i];
    free(x);
    check_node(ctx, ggml_sum(ctx, a), &total, F32_NMSE, "sum F32 [1,1000] column");
    ggml_free(ctx);
}

static void test_sum_rows_mean(void)
{
    struct ggml_context *ctx = new_ctx(32);
    uint64_t seed = 0x5e0002;
    char label[160];
    for (int mean = 0; mean <= 1; mean++)
        for (size_t s = 0; s < N_ODD; s++)
            for (int layout = DENSE; layout <= PERMUTED; layout++) {
                const int64_t *ne = odd_shapes[s];
                struct ggml_tensor *a = make_input(ctx, GGML_TYPE_F32, ne, (enum layout) layout, &seed, -1.0, 2.0);
                double *x = load_all(a);
                const int64_t nrows = ne[1] * ne[2] * ne[3];
                double *ref = calloc((size_t) nrows, sizeof *ref);
                for (int64_t r = 0; r < nrows; r++) {
                    for (int64_t i = 0; i < ne[0]; i++)
                        ref[r] += x[r * ne[0] + i];
                    if (mean)
                        ref[r] /= (double) ne[0];
                }
                struct ggml_tensor *out = mean ? ggml_mean(ctx, a) : ggml_sum_rows(ctx, a);
                snprintf(label, sizeof label, "%s [%lld,%lld,%lld,%lld] %s", mean ? "mean" : "sum_rows",
                         (long long) ne[0], (long long) ne[1], (long long) ne[2], (long long) ne[3],
                         layout_name[layout]);
                ok(out && out->type == GGML_TYPE_F32 && out->ne[0] == 1 && out->ne[1] == ne[1] &&
                       out->ne[2] == ne[2] && out->ne[3] == ne[3],
                   "%s: shape [1, ne1, ne2, ne3], F32", label);
                check_node(ctx, out, ref, F32_NMSE, label);
                free(ref);
                free(x);
            }
    ggml_free(ctx);
}

/* ------------------------------------------------------------------ argmax */

/* Index of the last largest non-NaN value of n values (0 when none). */
static double ref_argmax(const double *x, int64_t n)
{
    double best = -INFINITY;
    int64_t index = 0;
    for (int64_t i = 0; i < n; i++)
        if (x[i] >= best) {
            best = x[i];
            index = i;
        }
    return (double) index;
}

static void test_argmax(void)
{
    struct ggml_context *ctx = new_ctx(16);
    uint64_t seed = 0x5e0003;
    char label[160];
    const int64_t lengths[] = { 1, 3, 31, 33, 257 };
    for (size_t l = 0; l < 5; l++)
        for (int layout = DENSE; layout <= TRANSPOSED; layout++) {
            const int64_t ne[4] = { lengths[l], 6, 1, 1 };
            struct ggml_tensor *a = make_input(ctx, GGML_TYPE_F32, ne, (enum layout) layout, &seed, -3.0, 3.0);
            double *x = load_all(a), ref[6];
            for (int r = 0; r < 6; r++)
                ref[r] = ref_argmax(x + r * ne[0], ne[0]);
            free(x);
            struct ggml_tensor *out = ggml_argmax(ctx, a);
            snprintf(label, sizeof label, "argmax [%lld,6] %s", (long long) ne[0], layout_name[layout]);
            ok(out && out->type == GGML_TYPE_I32 && out->ne[0] == 6 && ggml_nelements(out) == 6,
               "%s: I32 [ne1]", label);
            check_node(ctx, out, ref, 0.0, label);
        }

    /* ties go to the last index (as upstream); NaNs are never chosen */
    const float rows[4][9] = {
        { 1, 5, 5, 2, -1, 5, 0, 3, 4 },
        { 2, 2, 2, 2, 2, 2, 2, 2, 2 },
        { NAN, 1, 3, NAN, 2, -4, NAN, 0, 1 },
        { -INFINITY, -INFINITY, NAN, -INFINITY, NAN, NAN, NAN, NAN, NAN },
    };
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 9, 4);
    memcpy(a->data, rows, sizeof rows);
    const double ref[4] = { 5, 8, 2, 3 };
    check_node(ctx, ggml_argmax(ctx, a), ref, 0.0, "argmax of ties, NaNs and -inf");
    ggml_free(ctx);
}

/* ------------------------------------------------------------- count_equal */

static void test_count_equal(void)
{
    struct ggml_context *ctx = new_ctx(16);
    uint64_t seed = 0x5e0004;
    char label[160];
    for (size_t s = 0; s < N_ODD; s++)
        for (int layout = DENSE; layout <= PERMUTED; layout++) {
            const int64_t *ne = odd_shapes[s];
            /* values 0..3: about a quarter of the positions agree */
            struct ggml_tensor *a = make_input(ctx, GGML_TYPE_I32, ne, DENSE, &seed, 0.0, 4.0);
            struct ggml_tensor *b = make_input(ctx, GGML_TYPE_I32, ne, (enum layout) layout, &seed, 0.0, 4.0);
            double *x = load_all(a), *y = load_all(b), count = 0.0;
            for (int64_t i = 0; i < ggml_nelements(a); i++)
                count += x[i] == y[i];
            free(x);
            free(y);
            struct ggml_tensor *out = ggml_count_equal(ctx, b, a);
            snprintf(label, sizeof label, "count_equal [%lld,%lld,%lld,%lld] %s", (long long) ne[0],
                     (long long) ne[1], (long long) ne[2], (long long) ne[3], layout_name[layout]);
            ok(out && out->type == GGML_TYPE_I64 && ggml_nelements(out) == 1 && out->src[0] == b &&
                   out->src[1] == a,
               "%s: an I64 scalar", label);
            check_node(ctx, out, &count, 0.0, label);
        }
    ggml_free(ctx);
}

/* ------------------------------------------------------------------ repeat */

static void check_repeat(struct ggml_context *ctx, struct ggml_tensor *a, const int64_t ne[4], bool four_d,
                         const char *what)
{
    char label[200];
    struct ggml_tensor *out;
    if (four_d) {
        out = ggml_repeat_4d(ctx, a, ne[0], ne[1], ne[2], ne[3]);
    } else {
        struct ggml_tensor *shape = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3]);
        out = ggml_repeat(ctx, a, shape);
    }
    snprintf(label, sizeof label, "%s %s [%lld,%lld,%lld,%lld] to [%lld,%lld,%lld,%lld] %s",
             four_d ? "repeat_4d" : "repeat", ggml_type_name(a->type), (long long) a->ne[0], (long long) a->ne[1],
             (long long) a->ne[2], (long long) a->ne[3], (long long) ne[0], (long long) ne[1], (long long) ne[2],
             (long long) ne[3], what);
    const int64_t n = ne[0] * ne[1] * ne[2] * ne[3];
    double *x = load_all(a), *ref = malloc((size_t) n * sizeof *ref);
    for (int64_t i3 = 0; i3 < ne[3]; i3++)
        for (int64_t i2 = 0; i2 < ne[2]; i2++)
            for (int64_t i1 = 0; i1 < ne[1]; i1++)
                for (int64_t i0 = 0; i0 < ne[0]; i0++)
                    ref[flat(ne, i0, i1, i2, i3)] =
                        x[flat(a->ne, i0 % a->ne[0], i1 % a->ne[1], i2 % a->ne[2], i3 % a->ne[3])];
    ok(out && out->type == a->type && out->ne[0] == ne[0] && out->ne[1] == ne[1] && out->ne[2] == ne[2] &&
           out->ne[3] == ne[3] && out->op == GGML_OP_REPEAT,
       "%s: target shape, a's type", label);
    check_node(ctx, out, ref, 0.0, label);
    free(ref);
    free(x);
}

static void test_repeat(void)
{
    struct ggml_context *ctx = new_ctx(32);
    uint64_t seed = 0x5e0005;
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_I32,
                                     GGML_TYPE_I16, GGML_TYPE_I8 };
    const int64_t cases[][2][4] = {
        { { 1, 1, 1, 1 }, { 5, 3, 2, 2 } },      /* a scalar everywhere */
        { { 3, 2, 1, 1 }, { 9, 4, 3, 2 } },      /* factors 3, 2, 3, 2 */
        { { 31, 1, 2, 1 }, { 62, 3, 2, 2 } },
        { { 33, 3, 2, 2 }, { 33, 3, 2, 2 } },    /* factor 1: a copy */
        { { 257, 1, 1, 1 }, { 514, 2, 1, 1 } },
        { { 1, 3, 1, 2 }, { 31, 3, 4, 2 } },
    };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            enum layout layout = (enum layout) ((t + c) % 4);
            struct ggml_tensor *a = make_input(ctx, types[t], cases[c][0], layout, &seed, -50.0, 50.0);
            check_repeat(ctx, a, cases[c][1], (c + t) % 2 == 1, layout_name[layout]);
        }
    ggml_free(ctx);
}

/* ------------------------------------------------------------------ concat */

/* The values of a (shape ne_a, values x) and b (ne_b, y) joined along dim: shape ne. */
static double *concat_reference(const double *x, const int64_t ne_a[4], const double *y, const int64_t ne_b[4],
                                int dim, const int64_t ne[4])
{
    double *ref = malloc((size_t) (ne[0] * ne[1] * ne[2] * ne[3]) * sizeof *ref);
    for (int64_t i3 = 0; i3 < ne[3]; i3++)
        for (int64_t i2 = 0; i2 < ne[2]; i2++)
            for (int64_t i1 = 0; i1 < ne[1]; i1++)
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    int64_t i[4] = { i0, i1, i2, i3 };
                    const bool from_a = i[dim] < ne_a[dim];
                    if (!from_a)
                        i[dim] -= ne_a[dim];
                    ref[flat(ne, i0, i1, i2, i3)] = from_a ? x[flat(ne_a, i[0], i[1], i[2], i[3])]
                                                           : y[flat(ne_b, i[0], i[1], i[2], i[3])];
                }
    return ref;
}

static void test_concat(void)
{
    struct ggml_context *ctx = new_ctx(32);
    uint64_t seed = 0x5e0006;
    char label[200];
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_I32, GGML_TYPE_BF16, GGML_TYPE_I8 };
    const int64_t base[4] = { 31, 3, 2, 2 };
    const int64_t extra[] = { 1, 2, 3, 0 };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (int dim = 0; dim < 4; dim++)
            for (int v = 0; v < 4; v++) {
                int64_t ne_a[4], ne_b[4], ne[4];
                memcpy(ne_a, base, sizeof ne_a);
                memcpy(ne_b, base, sizeof ne_b);
                ne_b[dim] = extra[(dim + v) % 4] ? extra[(dim + v) % 4] : 1;
                if (v == 3)
                    ne_a[dim] = 0; /* an empty a: the result is b */
                const enum layout la = (enum layout) v, lb = (enum layout) ((v + dim + t) % 4);
                struct ggml_tensor *a = make_input(ctx, types[t], ne_a, la, &seed, -60.0, 60.0);
                struct ggml_tensor *b = make_input(ctx, types[t], ne_b, lb, &seed, -60.0, 60.0);
                for (int d = 0; d < 4; d++)
                    ne[d] = d == dim ? ne_a[d] + ne_b[d] : ne_a[d];
                double *x = load_all(a), *y = load_all(b);
                double *ref = concat_reference(x, ne_a, y, ne_b, dim, ne);
                struct ggml_tensor *out = ggml_concat(ctx, a, b, dim);
                snprintf(label, sizeof label, "concat %s dim %d [%lld,%lld,%lld,%lld] %s + [%lld,%lld,%lld,%lld] %s",
                         ggml_type_name(types[t]), dim, (long long) ne_a[0], (long long) ne_a[1],
                         (long long) ne_a[2], (long long) ne_a[3], layout_name[la], (long long) ne_b[0],
                         (long long) ne_b[1], (long long) ne_b[2], (long long) ne_b[3], layout_name[lb]);
                ok(out && out->type == types[t] && out->ne[0] == ne[0] && out->ne[1] == ne[1] &&
                       out->ne[2] == ne[2] && out->ne[3] == ne[3] && out->op_params[0] == dim,
                   "%s: shape, type and op_params[0] = dim", label);
                check_node(ctx, out, ref, 0.0, label);
                free(ref);
                free(x);
                free(y);
            }
    ggml_free(ctx);
}

/*
 * Concat of block types (upstream's CPU joins them too): whole blocks
 * move, so each row must be adjacent blocks; along dim 0 both rows hold
 * whole blocks (ne[0] always does).  Inputs are dense or rows of a larger
 * tensor; the reference is the inputs' dequantized values, joined here.
 */
static void test_concat_blocks(void)
{
    struct ggml_context *ctx = new_ctx(32);
    uint64_t seed = 0x5e0016;
    char label[200];
    const enum ggml_type types[] = { GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_K };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (int dim = 0; dim < 4; dim++)
            for (int v = 0; v < 2; v++) {
                const int64_t blck = ggml_blck_size(types[t]);
                int64_t ne_a[4] = { 2 * blck, 3, 2, 2 }, ne_b[4] = { 2 * blck, 3, 2, 2 }, ne[4];
                ne_b[dim] = dim == 0 ? blck : 1 + v;
                struct ggml_tensor *ab[2];
                const int64_t *shape[2] = { ne_a, ne_b };
                for (int k = 0; k < 2; k++) {
                    const int64_t *n = shape[k];
                    struct ggml_tensor *base = ggml_new_tensor_4d(ctx, types[t], n[0], n[1] + v, n[2], n[3]);
                    optest_fill(base, &seed, -8.0, 8.0);
                    ab[k] = v == 0 ? base
                                   : ggml_view_4d(ctx, base, n[0], n[1], n[2], n[3], base->nb[1], base->nb[2],
                                                  base->nb[3], base->nb[1]);
                }
                for (int d = 0; d < 4; d++)
                    ne[d] = d == dim ? ne_a[d] + ne_b[d] : ne_a[d];
                double *x = load_all(ab[0]), *y = load_all(ab[1]);
                double *ref = concat_reference(x, ne_a, y, ne_b, dim, ne);
                struct ggml_tensor *out = ggml_concat(ctx, ab[0], ab[1], dim);
                snprintf(label, sizeof label, "concat %s dim %d, %s inputs", ggml_type_name(types[t]), dim,
                         v == 0 ? "dense" : "row-view");
                check_node(ctx, out, ref, 0.0, label);
                free(ref);
                free(x);
                free(y);
            }
    ggml_free(ctx);
}

/* ------------------------------------------------------------------- norms */

typedef struct ggml_tensor *(*norm_ctor)(struct ggml_context *, struct ggml_tensor *, float);

static const struct {
    const char *name;
    norm_ctor make, make_inplace;
    enum ggml_op op;
    float eps;
} norms[] = {
    { "norm", ggml_norm, ggml_norm_inplace, GGML_OP_NORM, 1e-5f },
    { "rms_norm", ggml_rms_norm, ggml_rms_norm_inplace, GGML_OP_RMS_NORM, 1e-6f },
    { "l2_norm", ggml_l2_norm, ggml_l2_norm_inplace, GGML_OP_L2_NORM, 1e-12f },
};

/* The normalised rows of x (logical shape ne) by op, in double. */
static double *ref_norm(enum ggml_op op, const double *x, const int64_t ne[4], double eps)
{
    const int64_t n = ne[0], nrows = ne[1] * ne[2] * ne[3];
    double *y = malloc((size_t) (n * nrows > 0 ? n * nrows : 1) * sizeof *y);
    for (int64_t r = 0; r < nrows; r++) {
        const double *xr = x + r * n;
        double *yr = y + r * n;
        double sum = 0.0, sumsq = 0.0, dev = 0.0;
        for (int64_t i = 0; i < n; i++) {
            sum += xr[i];
            sumsq += xr[i] * xr[i];
        }
        const double mean = sum / (double) n;
        for (int64_t i = 0; i < n; i++)
            dev += (xr[i] - mean) * (xr[i] - mean);
        for (int64_t i = 0; i < n; i++) {
            if (op == GGML_OP_NORM)
                yr[i] = (xr[i] - mean) / sqrt(dev / (double) n + eps);
            else if (op == GGML_OP_RMS_NORM)
                yr[i] = xr[i] / sqrt(sumsq / (double) n + eps);
            else
                yr[i] = xr[i] / fmax(sqrt(sumsq), eps);
        }
    }
    return y;
}

static void test_norms(void)
{
    char label[200];
    for (size_t o = 0; o < sizeof norms / sizeof norms[0]; o++) {
        struct ggml_context *ctx = new_ctx(32);
        uint64_t seed = 0x5e0007 + o;
        for (size_t s = 0; s < N_ODD; s++)
            for (int layout = DENSE; layout <= PERMUTED; layout++) {
                const int64_t *ne = odd_shapes[s];
                struct ggml_tensor *a = make_input(ctx, GGML_TYPE_F32, ne, (enum layout) layout, &seed, -2.0, 2.0);
                double *x = load_all(a), *ref = ref_norm(norms[o].op, x, ne, norms[o].eps);
                struct ggml_tensor *out = norms[o].make(ctx, a, norms[o].eps);
                float eps_stored = 0.0f;
                if (out)
                    memcpy(&eps_stored, &out->op_params[0], sizeof eps_stored);
                snprintf(label, sizeof label, "%s [%lld,%lld,%lld,%lld] %s", norms[o].name, (long long) ne[0],
                         (long long) ne[1], (long long) ne[2], (long long) ne[3], layout_name[layout]);
                ok(out && out->op == norms[o].op && out->type == GGML_TYPE_F32 && ggml_are_same_shape(out, a) &&
                       eps_stored == norms[o].eps && out->view_src == NULL,
                   "%s: a new tensor of a's shape, eps in op_params[0]", label);
                check_node(ctx, out, ref, F32_NMSE, label);
                free(ref);
                free(x);
            }

        /* rows far from 0 (NORM must not lose the deviations) and rows the eps dominates (L2) */
        const int64_t ne[4] = { 257, 4, 1, 1 };
        struct ggml_tensor *a = make_input(ctx, GGML_TYPE_F32, ne, DENSE, &seed, 99.0, 101.0);
        double *x = load_all(a), *ref = ref_norm(norms[o].op, x, ne, norms[o].eps);
        snprintf(label, sizeof label, "%s of values near 100", norms[o].name);
        check_node(ctx, norms[o].make(ctx, a, norms[o].eps), ref, F32_NMSE, label);
        free(ref);
        free(x);
        a = make_input(ctx, GGML_TYPE_F32, ne, PADDED, &seed, -1e-6, 1e-6);
        x = load_all(a);
        ref = ref_norm(norms[o].op, x, ne, 1e-2);
        snprintf(label, sizeof label, "%s of tiny values with eps 1e-2", norms[o].name);
        check_node(ctx, norms[o].make(ctx, a, 1e-2f), ref, F32_NMSE, label);
        free(ref);
        free(x);

        /* in place, on a dense and on a transposed tensor */
        for (int layout = DENSE; layout <= TRANSPOSED; layout += TRANSPOSED) {
            const int64_t ne_in[4] = { 33, 5, 2, 1 };
            for (int use_ref = 0; use_ref <= 1; use_ref++) {
                a = make_input(ctx, GGML_TYPE_F32, ne_in, (enum layout) layout, &seed, -2.0, 2.0);
                x = load_all(a);
                ref = ref_norm(norms[o].op, x, ne_in, norms[o].eps);
                struct ggml_tensor *r = norms[o].make_inplace(ctx, a, norms[o].eps);
                ok(r && (r->view_src == a || r->view_src == a->view_src) && r->op == norms[o].op && r->src[0] == a,
                   "%s_inplace on a %s tensor is a view of it", norms[o].name, layout_name[layout]);
                enum ggml_status status = optest_compute(ctx, r, 3, use_ref != 0);
                double nmse = optest_nmse(a, ref);
                ok(status == GGML_STATUS_SUCCESS && nmse <= F32_NMSE, "%s_inplace %s, %s: a overwritten, nmse %.3g",
                   norms[o].name, layout_name[layout], use_ref ? "reference" : "fast", nmse);
                free(ref);
                free(x);
            }
        }
        ggml_free(ctx);
    }
}

/* Group norm of x (shape ne) in double, groups as the op defines them. */
static double *ref_group_norm(const double *x, const int64_t ne[4], int n_groups, double eps)
{
    const int64_t per_group = (ne[2] + n_groups - 1) / n_groups, plane = ne[0] * ne[1];
    double *y = malloc((size_t) (plane * ne[2] * ne[3]) * sizeof *y);
    for (int64_t i3 = 0; i3 < ne[3]; i3++)
        for (int g = 0; g < n_groups; g++) {
            const int64_t c0 = g * per_group, c1 = c0 + per_group < ne[2] ? c0 + per_group : ne[2];
            if (c0 >= c1)
                continue;
            const double *xg = x + (i3 * ne[2] + c0) * plane;
            double *yg = y + (i3 * ne[2] + c0) * plane;
            const int64_t n = plane * (c1 - c0);
            double sum = 0.0, dev = 0.0;
            for (int64_t i = 0; i < n; i++)
                sum += xg[i];
            const double mean = sum / (double) n;
            for (int64_t i = 0; i < n; i++)
                dev += (xg[i] - mean) * (xg[i] - mean);
            for (int64_t i = 0; i < n; i++)
                yg[i] = (xg[i] - mean) / sqrt(dev / (double) n + eps);
        }
    return y;
}

static void test_group_norm(void)
{
    struct ggml_context *ctx = new_ctx(32);
    uint64_t seed = 0x5e0008;
    char label[200];
    const struct {
        int64_t ne[4];
        int n_groups;
    } cases[] = {
        { { 7, 5, 6, 2 }, 3 },   /* 2 channels a group */
        { { 7, 5, 6, 2 }, 4 },   /* ceil(6/4) = 2: groups of 2, 2, 2 and an empty one */
        { { 3, 3, 5, 1 }, 1 },   /* one group */
        { { 31, 1, 6, 1 }, 6 },  /* a group a channel */
        { { 1, 33, 6, 2 }, 8 },  /* more groups than channels */
        { { 257, 2, 4, 1 }, 2 },
        { { 33, 3, 7, 2 }, 3 },  /* groups of 3, 3, 1 */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int layout = DENSE; layout <= PERMUTED; layout++) {
            const int64_t *ne = cases[c].ne;
            struct ggml_tensor *a = make_input(ctx, GGML_TYPE_F32, ne, (enum layout) layout, &seed, -2.0, 3.0);
            double *x = load_all(a), *ref = ref_group_norm(x, ne, cases[c].n_groups, 1e-6);
            struct ggml_tensor *out = ggml_group_norm(ctx, a, cases[c].n_groups, 1e-6f);
            float eps_stored = 0.0f;
            if (out)
                memcpy(&eps_stored, &out->op_params[1], sizeof eps_stored);
            snprintf(label, sizeof label, "group_norm [%lld,%lld,%lld,%lld] %d groups %s", (long long) ne[0],
                     (long long) ne[1], (long long) ne[2], (long long) ne[3], cases[c].n_groups,
                     layout_name[layout]);
            ok(out && out->op == GGML_OP_GROUP_NORM && ggml_are_same_shape(out, a) &&
                   out->op_params[0] == cases[c].n_groups && eps_stored == 1e-6f,
               "%s: a's shape, op_params n_groups then eps", label);
            check_node(ctx, out, ref, F32_NMSE, label);
            free(ref);
            free(x);
        }
    const int64_t ne[4] = { 9, 4, 6, 2 };
    for (int layout = DENSE; layout <= PERMUTED; layout += PERMUTED) {
        struct ggml_tensor *a = make_input(ctx, GGML_TYPE_F32, ne, (enum layout) layout, &seed, -2.0, 3.0);
        double *x = load_all(a), *ref = ref_group_norm(x, ne, 3, 1e-5);
        struct ggml_tensor *r = ggml_group_norm_inplace(ctx, a, 3, 1e-5f);
        ok(r && (r->view_src == a || r->view_src == a->view_src), "group_norm_inplace %s is a view",
           layout_name[layout]);
        enum ggml_status status = optest_compute(ctx, r, 4, false);
        double nmse = optest_nmse(a, ref);
        ok(status == GGML_STATUS_SUCCESS && nmse <= F32_NMSE, "group_norm_inplace %s overwrites a: nmse %.3g",
           layout_name[layout], nmse);
        free(ref);
        free(x);
    }
    ggml_free(ctx);
}

/* ------------------------------------------------------------- empty inputs */

/* Empty sources without memory (as a backend buffer may leave them): no access, defined results. */
static void test_empty(void)
{
    struct ggml_context *ctx = new_ctx(4);
    struct ggml_init_params meta = { 1 << 20, NULL, true };
    struct ggml_context *mctx = ggml_init(meta);
    struct ggml_tensor *e = ggml_new_tensor_2d(mctx, GGML_TYPE_F32, 0, 3);
    struct ggml_tensor *ei = ggml_new_tensor_2d(mctx, GGML_TYPE_I32, 0, 3);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    optest_fill(b, &(uint64_t){ 11 }, -1.0, 1.0);
    const double zeros[12] = { 0 };
    double *x = load_all(b);
    ok(e->data == NULL, "the empty source has no memory");
    check_node(ctx, ggml_sum(ctx, e), zeros, 0.0, "sum of an empty tensor");
    check_node(ctx, ggml_sum_rows(ctx, e), zeros, 0.0, "sum_rows of empty rows");
    check_node(ctx, ggml_argmax(ctx, e), zeros, 0.0, "argmax of empty rows");
    check_node(ctx, ggml_count_equal(ctx, ei, ei), zeros, 0.0, "count_equal of empty tensors");
    check_node(ctx, ggml_concat(ctx, e, b, 0), x, 0.0, "concat of an empty a along dim 0");
    check_node(ctx, ggml_concat(ctx, b, e, 0), x, 0.0, "concat of an empty b along dim 0");
    struct ggml_tensor *m = ggml_mean(ctx, e);
    ok(m && optest_compute(ctx, m, 2, false) == GGML_STATUS_SUCCESS && isnan(optest_get(m, 0, 1, 0, 0)),
       "mean of empty rows is NaN");
    free(x);
    ggml_free(mctx);
    ggml_free(ctx);
}

/* ------------------------------------------------------------------ errors */

#define expect_error(expr, ...)                 \
    do {                                         \
        ok((expr) == NULL, __VA_ARGS__);         \
        logged_one_error(__VA_ARGS__);           \
    } while (0)

static void test_errors(void)
{
    struct ggml_context *ctx = new_ctx(4);
    struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *t3 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2);
    struct ggml_tensor *i32 = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 4, 3);
    struct ggml_tensor *i32b = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 4);
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 32, 2);
    struct ggml_tensor *f16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 3);
    tap_log_errors();

    expect_error(ggml_concat(ctx, m, t3, 0), "concat of shapes differing outside dim");
    expect_error(ggml_concat(ctx, m, m, -1), "concat with dim -1");
    expect_error(ggml_concat(ctx, m, m, 4), "concat with dim 4");
    expect_error(ggml_concat(ctx, m, f16, 1), "concat of different types");
    {
        struct ggml_init_params meta = { 4 * ggml_tensor_overhead(), NULL, true };
        struct ggml_context *mctx = ggml_init(meta);
        const int64_t n = (INT64_C(1) << 62) + (INT64_C(1) << 61);
        struct ggml_tensor *big = ggml_new_tensor_1d(mctx, GGML_TYPE_I8, n);
        expect_error(ggml_concat(mctx, big, big, 0), "concat of more than INT64_MAX rows");
        ggml_free(mctx);
    }
    expect_error(ggml_repeat(ctx, t3, m), "repeat that cannot repeat (target smaller)");
    expect_error(ggml_repeat(ctx, m, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 3)), "repeat by a non-whole factor");
    expect_error(ggml_repeat_4d(ctx, m, 8, 4, 1, 1), "repeat_4d by a non-whole factor");
    expect_error(ggml_repeat_4d(ctx, m, -4, 3, 1, 1), "repeat_4d to a negative extent");
    expect_error(ggml_argmax(ctx, t3), "argmax of a 3D tensor");
    expect_error(ggml_count_equal(ctx, m, m), "count_equal of F32 tensors");
    expect_error(ggml_count_equal(ctx, i32, f16), "count_equal of I32 and F16");
    expect_error(ggml_count_equal(ctx, i32, i32b), "count_equal of different shapes");
    for (size_t o = 0; o < sizeof norms / sizeof norms[0]; o++) {
        expect_error(norms[o].make(ctx, i32, 1e-5f), "%s of an I32 tensor", norms[o].name);
        expect_error(norms[o].make_inplace(ctx, q, 1e-5f), "%s_inplace of a Q4_0 tensor", norms[o].name);
        expect_error(norms[o].make(ctx, m, -1e-5f), "%s with a negative eps", norms[o].name);
        expect_error(norms[o].make(ctx, m, NAN), "%s with a NaN eps", norms[o].name);
    }
    expect_error(ggml_group_norm(ctx, t3, 0, 1e-5f), "group_norm with 0 groups");
    expect_error(ggml_group_norm_inplace(ctx, t3, 2, -1.0f), "group_norm_inplace with a negative eps");
    expect_error(ggml_group_norm(ctx, i32, 1, 1e-5f), "group_norm of an I32 tensor");

    /* argmax refuses rows longer than an I32 index (metadata only) */
    struct ggml_init_params meta = { 1 << 20, NULL, true };
    struct ggml_context *mctx = ggml_init(meta);
    struct ggml_tensor *wide = ggml_new_tensor_2d(mctx, GGML_TYPE_F32, (int64_t) INT32_MAX + 1, 1);
    tap_log_errors();
    expect_error(ggml_argmax(mctx, wide), "argmax of rows longer than INT32_MAX");
    ggml_free(mctx);

    /* a full context is reported under the constructor's name */
    struct ggml_init_params small = { ggml_tensor_overhead() + 64, NULL, false };
    struct ggml_context *sctx = ggml_init(small);
    struct ggml_tensor *tiny = ggml_new_tensor_1d(sctx, GGML_TYPE_F32, 4);
    tap_log_errors();
    ok(tiny != NULL && ggml_sum(sctx, tiny) == NULL && strstr(tap_last_log(), "ggml_sum") != NULL,
       "a full context gives NULL, logged as ggml_sum");
    logged_one_error("a full context logs one error");
    ggml_free(sctx);

    /* NULL inputs propagate without a message */
    ok(ggml_sum(ctx, NULL) == NULL && ggml_sum_rows(ctx, NULL) == NULL && ggml_mean(ctx, NULL) == NULL &&
           ggml_argmax(ctx, NULL) == NULL && ggml_count_equal(ctx, NULL, i32) == NULL &&
           ggml_count_equal(ctx, i32, NULL) == NULL && ggml_repeat(ctx, NULL, m) == NULL &&
           ggml_repeat(ctx, m, NULL) == NULL && ggml_repeat_4d(ctx, NULL, 1, 1, 1, 1) == NULL &&
           ggml_concat(ctx, NULL, m, 0) == NULL && ggml_concat(ctx, m, NULL, 0) == NULL &&
           ggml_norm(ctx, NULL, 1e-5f) == NULL && ggml_norm_inplace(ctx, NULL, 1e-5f) == NULL &&
           ggml_rms_norm(ctx, NULL, 1e-5f) == NULL && ggml_rms_norm_inplace(ctx, NULL, 1e-5f) == NULL &&
           ggml_l2_norm(ctx, NULL, 1e-5f) == NULL && ggml_l2_norm_inplace(ctx, NULL, 1e-5f) == NULL &&
           ggml_group_norm(ctx, NULL, 2, 1e-5f) == NULL && ggml_group_norm_inplace(ctx, NULL, 2, 1e-5f) == NULL,
       "NULL inputs give NULL");
    is_int(tap_log_errors(), 0, "NULL inputs log nothing");
    ggml_free(ctx);
}

/* Nodes the constructors accept but the CPU backend does not compute: refused cleanly. */
static void test_unsupported(void)
{
    struct ggml_context *ctx = new_ctx(4);
    ggml_backend_t cpu = ggml_backend_cpu_init();
    struct ggml_tensor *h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 8, 3);
    struct ggml_tensor *i = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 8, 3);
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 32, 3);
    optest_fill(h, &(uint64_t){ 9 }, -1.0, 1.0);
    memset(i->data, 0, ggml_nbytes(i));
    memset(q->data, 0, ggml_nbytes(q));
    struct {
        const char *what;
        struct ggml_tensor *node;
    } cases[] = {
        { "norm of F16", ggml_norm(ctx, h, 1e-5f) },
        { "rms_norm of F16", ggml_rms_norm(ctx, h, 1e-5f) },
        { "l2_norm of F16", ggml_l2_norm(ctx, h, 1e-5f) },
        { "group_norm of F16", ggml_group_norm(ctx, h, 1, 1e-5f) },
        { "sum_rows of F16", ggml_sum_rows(ctx, h) },
        { "mean of I32", ggml_mean(ctx, i) },
        { "sum of I32", ggml_sum(ctx, i) },
        { "argmax of F16", ggml_argmax(ctx, h) },
        { "repeat of Q8_0", ggml_repeat_4d(ctx, q, 64, 3, 1, 1) },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ok(cases[c].node != NULL, "%s: the constructor accepts it", cases[c].what);
        tap_log_errors();
        if (cases[c].node == NULL)
            continue;
        ok(cpu == NULL || !ggml_backend_supports_op(cpu, cases[c].node), "%s: the CPU backend does not support it",
           cases[c].what);
        is_int(optest_compute(ctx, cases[c].node, 2, false), GGML_STATUS_FAILED,
               "%s: computing it fails", cases[c].what);
        logged_one_error("%s: with one message", cases[c].what);
    }
    /* a norm with a bad eps put into op_params by hand is refused too */
    struct ggml_tensor *f = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    struct ggml_tensor *n = ggml_rms_norm(ctx, f, 1e-5f);
    float bad = -1.0f;
    memcpy(&n->op_params[0], &bad, sizeof bad);
    ok(cpu == NULL || !ggml_backend_supports_op(cpu, n), "rms_norm with eps < 0 in op_params is not supported");
    ggml_backend_free(cpu);
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    test_sum();
    test_sum_rows_mean();
    test_argmax();
    test_count_equal();
    test_repeat();
    test_concat();
    test_concat_blocks();
    test_norms();
    test_group_norm();
    test_empty();
    test_errors();
    test_unsupported();
    return tap_done();
}
