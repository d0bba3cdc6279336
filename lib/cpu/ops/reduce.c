/*
 * ops/reduce.c - the reductions SUM, SUM_ROWS, MEAN, ARGMAX, COUNT_EQUAL,
 * the copies REPEAT and CONCAT, and the normalisations NORM, RMS_NORM,
 * L2_NORM and GROUP_NORM.
 *
 * Types (upstream's CPU set, see each supports function):
 *   SUM          F32, F16, BF16 (result of the same type)
 *   SUM_ROWS     F32
 *   MEAN         F32
 *   ARGMAX       F32 matrix -> I32
 *   COUNT_EQUAL  I32 x I32 -> I64
 *   REPEAT       any type with one element per block (not quantized)
 *   CONCAT       same, a, b and the result of one type
 *   the norms    F32
 * Every source and destination may have any strides (transposed and
 * permuted views, in-place views of them).  Sums and the statistics of the
 * norms are accumulated in double; a sum is rounded once to its result
 * type, a normalised element once (the fast RMS/L2 path: twice, the scale
 * and then the product, both in F32).
 *
 * Threads split rows (group norm: (group, batch) pairs; sum: a fixed set
 * of row chunks), and every row or chunk is summed by one thread in a
 * fixed order: results do not depend on the number of threads, bit for
 * bit.  The reference kernels (use_ref) load every element through its
 * strides; the fast kernels take over for rows stored contiguously, with
 * the kernel table's sum, sum_sq, sum_sq_dev and scale rows
 * (simd/kernels.h: double lanes at every level).
 */
#include "config.h"

#include <math.h>

#include "ggml-impl.h"
#include "cpu-private.h"
#include "fp16-impl.h"

/* --------------------------------------------------------------- helpers */

/* Indices (i1, i2, i3) of row r of t, rows counted in t's own shape. */
static inline void row_coords(const struct ggml_tensor *t, int64_t r, int64_t i[4])
{
    i[0] = 0;
    i[1] = r % t->ne[1];
    i[2] = (r / t->ne[1]) % t->ne[2];
    i[3] = r / (t->ne[1] * t->ne[2]);
}

static inline char *row_at(const struct ggml_tensor *t, int64_t i1, int64_t i2, int64_t i3)
{
    return (char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

/* True when the elements of each row of t are adjacent. */
static inline bool dense_rows(const struct ggml_tensor *t)
{
    return t->nb[0] == ggml_type_size(t->type);
}

static inline bool same_shape(const struct ggml_tensor *a, const struct ggml_tensor *b)
{
    return a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] && a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3];
}

/* dst has shape [1, ne1, ne2, ne3] of src. */
static inline bool row_reduced_shape(const struct ggml_tensor *dst, const struct ggml_tensor *src)
{
    return dst->ne[0] == 1 && dst->ne[1] == src->ne[1] && dst->ne[2] == src->ne[2] && dst->ne[3] == src->ne[3];
}

/* ------------------------------------------------------------ row sums */

/* Sum of n elements of type at stride nb0, one at a time, in double. */
static double sum_strided(enum ggml_type type, const char *x, size_t nb0, int64_t n)
{
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += ggml__load_float(type, x + i * nb0);
    return sum;
}

/* Sum of squares of n elements of type at stride nb0, in double. */
static double sumsq_strided(enum ggml_type type, const char *x, size_t nb0, int64_t n)
{
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double v = ggml__load_float(type, x + i * nb0);
        sum += v * v;
    }
    return sum;
}

/* Sum of (x - mean)^2 over n F32 elements at stride nb0, in double. */
static double sumdev_strided(const char *x, size_t nb0, int64_t n, double mean)
{
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double d = (double) *(const float *) (x + i * nb0) - mean;
        sum += d * d;
    }
    return sum;
}

/* Sum of row (i1, i2, i3) of an F32/F16/BF16 tensor, by the fast path when allowed. */
static double row_sum(const struct ggml__compute_params *params, const struct ggml_tensor *t, const char *row)
{
    if (!params->use_ref && t->type == GGML_TYPE_F32 && dense_rows(t))
        return params->kernels->sum(t->ne[0], (const float *) row);
    return sum_strided(t->type, row, t->nb[0], t->ne[0]);
}

/* ------------------------------------------------------------------ SUM */

/*
 * The rows are cut into at most SUM_CHUNKS chunks, a number that does not
 * depend on the threads; threads take chunks in turn and leave one double
 * per chunk in the scratch, and thread 0 adds them up in chunk order.
 */
#define SUM_CHUNKS 256

static bool sum_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && (src->type == GGML_TYPE_F32 || src->type == GGML_TYPE_F16 ||
                           src->type == GGML_TYPE_BF16) &&
           dst->type == src->type && ggml_nelements(dst) == 1;
}

static size_t sum_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    (void) dst;
    (void) n_tasks;
    return SUM_CHUNKS * sizeof(double);
}

static void sum_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    /* an empty source (which may have no memory) sums to 0 */
    const int64_t nrows = ggml_is_empty(src) ? 0 : ggml_nrows(src);
    const int64_t n_chunks = nrows < SUM_CHUNKS ? nrows : SUM_CHUNKS;
    double *partial = params->wdata;

    for (int64_t c = params->ith; c < n_chunks; c += params->nth) {
        const int64_t first = c * nrows / n_chunks, last = (c + 1) * nrows / n_chunks;
        double sum = 0.0;
        for (int64_t r = first; r < last; r++) {
            int64_t i[4];
            row_coords(src, r, i);
            sum += row_sum(params, src, row_at(src, i[1], i[2], i[3]));
        }
        partial[c] = sum;
    }
    ggml__threadpool_barrier(params->pool);
    if (params->ith != 0)
        return;
    double total = 0.0;
    for (int64_t c = 0; c < n_chunks; c++)
        total += partial[c];
    ggml__store_float(dst->type, dst->data, (float) total);
}

const struct ggml__op_impl ggml__op_sum = {
    .kernel = sum_kernel,
    .supports = sum_supports,
    .n_tasks = NULL, /* every thread: the kernel meets at a barrier */
    .work_size = sum_work_size,
};

/* ------------------------------------------------------- SUM_ROWS, MEAN */

static bool sum_rows_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && src->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 &&
           row_reduced_shape(dst, src);
}

/* dst[0, i1, i2, i3] = sum (SUM_ROWS) or mean (MEAN) of row (i1, i2, i3). */
static void sum_rows_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const bool mean = dst->op == GGML_OP_MEAN;
    int64_t first, last;
    ggml__split_rows(ggml_nrows(src), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i[4];
        row_coords(src, r, i);
        double sum = src->ne[0] > 0 ? row_sum(params, src, row_at(src, i[1], i[2], i[3])) : 0.0;
        if (mean)
            sum /= (double) src->ne[0];
        *(float *) row_at(dst, i[1], i[2], i[3]) = (float) sum;
    }
}

const struct ggml__op_impl ggml__op_sum_rows = {
    .kernel = sum_rows_kernel,
    .supports = sum_rows_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

const struct ggml__op_impl ggml__op_mean = {
    .kernel = sum_rows_kernel,
    .supports = sum_rows_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* --------------------------------------------------------------- ARGMAX */

static bool argmax_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && src->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_I32 && src->ne[2] == 1 &&
           src->ne[3] == 1 && src->ne[0] <= INT32_MAX && dst->ne[0] == src->ne[1] && dst->ne[1] == 1 &&
           dst->ne[2] == 1 && dst->ne[3] == 1;
}

/*
 * Index of the largest of n values at stride nb0; among equal largest
 * values the last (as upstream); NaNs are never chosen; 0 for a row of NaNs
 * or an empty row.
 */
static int32_t argmax_strided(const char *x, size_t nb0, int64_t n)
{
    float best = -INFINITY;
    int32_t index = 0;
    for (int64_t i = 0; i < n; i++) {
        const float v = *(const float *) (x + i * nb0);
        if (v >= best) {
            best = v;
            index = (int32_t) i;
        }
    }
    return index;
}

/* Same contract on adjacent values: a vectorizable maximum, then a search back for it. */
static int32_t argmax_f32(const float *x, int64_t n)
{
    float best = -INFINITY;
    for (int64_t i = 0; i < n; i++)
        best = x[i] > best ? x[i] : best;
    for (int64_t i = n - 1; i >= 0; i--)
        if (x[i] == best)
            return (int32_t) i;
    return 0;
}

static void argmax_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const bool fast = !params->use_ref && dense_rows(src);
    int64_t first, last;
    ggml__split_rows(src->ne[1], params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int32_t index = 0; /* an empty row (which may have no memory) gives 0 */
        if (src->ne[0] > 0) {
            const char *row = row_at(src, r, 0, 0);
            index = fast ? argmax_f32((const float *) row, src->ne[0]) : argmax_strided(row, src->nb[0], src->ne[0]);
        }
        *(int32_t *) ((char *) dst->data + r * dst->nb[0]) = index;
    }
}

const struct ggml__op_impl ggml__op_argmax = {
    .kernel = argmax_kernel,
    .supports = argmax_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ---------------------------------------------------------- COUNT_EQUAL */

/* Each thread's count sits on its own cache line of the scratch. */
#define COUNT_SLOT (64 / sizeof(int64_t))

static bool count_equal_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    return a != NULL && b != NULL && a->type == GGML_TYPE_I32 && b->type == GGML_TYPE_I32 &&
           same_shape(a, b) && dst->type == GGML_TYPE_I64 && ggml_nelements(dst) == 1;
}

static size_t count_equal_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    (void) dst;
    return (size_t) n_tasks * COUNT_SLOT * sizeof(int64_t);
}

static void count_equal_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t n = a->ne[0];
    const bool fast = !params->use_ref && dense_rows(a) && dense_rows(b);
    int64_t *counts = params->wdata;
    int64_t count = 0;

    int64_t first, last;
    ggml__split_rows(ggml_is_empty(a) ? 0 : ggml_nrows(a), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i[4];
        row_coords(a, r, i);
        const char *x = row_at(a, i[1], i[2], i[3]), *y = row_at(b, i[1], i[2], i[3]);
        if (fast) {
            const int32_t *xs = (const int32_t *) x, *ys = (const int32_t *) y;
            int64_t row_count = 0;
            for (int64_t k = 0; k < n; k++)
                row_count += xs[k] == ys[k];
            count += row_count;
        } else {
            for (int64_t k = 0; k < n; k++)
                count += *(const int32_t *) (x + k * a->nb[0]) == *(const int32_t *) (y + k * b->nb[0]);
        }
    }
    counts[params->ith * COUNT_SLOT] = count;
    ggml__threadpool_barrier(params->pool);
    if (params->ith != 0)
        return;
    int64_t total = 0;
    for (int t = 0; t < params->nth; t++)
        total += counts[t * COUNT_SLOT];
    *(int64_t *) dst->data = total;
}

const struct ggml__op_impl ggml__op_count_equal = {
    .kernel = count_equal_kernel,
    .supports = count_equal_supports,
    .n_tasks = NULL, /* every thread: the kernel meets at a barrier */
    .work_size = count_equal_work_size,
};

/* --------------------------------------------------------------- REPEAT */

/* Types copied element by element as bytes: every type with 1-element blocks. */
static bool plain_type(enum ggml_type type)
{
    return ggml__type_is_valid(type) && ggml_blck_size(type) == 1;
}

static bool repeat_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && plain_type(src->type) && dst->type == src->type && ggml_can_repeat(src, dst);
}

/* Copies n elements of size ts from x (stride sx) to y (stride sy). */
static void copy_strided(char *y, size_t sy, const char *x, size_t sx, int64_t n, size_t ts)
{
    for (int64_t i = 0; i < n; i++)
        memmove(y + i * sy, x + i * sx, ts);
}

/* Row (i1, i2, i3) of dst is row (i1 % ne01, i2 % ne02, i3 % ne03) of src, tiled ne0 / ne00 times. */
static void repeat_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const size_t ts = ggml_type_size(src->type);
    const int64_t ne00 = src->ne[0], n_tiles = dst->ne[0] / ne00;
    const bool fast = !params->use_ref && dense_rows(src) && dense_rows(dst);
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i[4];
        row_coords(dst, r, i);
        const char *x = row_at(src, i[1] % src->ne[1], i[2] % src->ne[2], i[3] % src->ne[3]);
        char *y = row_at(dst, i[1], i[2], i[3]);
        for (int64_t t = 0; t < n_tiles; t++) {
            if (fast)
                memmove(y + (size_t) (t * ne00) * ts, x, (size_t) ne00 * ts);
            else
                copy_strided(y + t * ne00 * dst->nb[0], dst->nb[0], x, src->nb[0], ne00, ts);
        }
    }
}

const struct ggml__op_impl ggml__op_repeat = {
    .kernel = repeat_kernel,
    .supports = repeat_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* --------------------------------------------------------------- CONCAT */

static bool concat_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int32_t dim = ggml__get_op_params_i32(dst, 0);
    if (a == NULL || b == NULL || dim < 0 || dim >= GGML_MAX_DIMS)
        return false;
    if (!ggml__type_is_valid(a->type) || b->type != a->type || dst->type != a->type)
        return false;
    /* blocks are copied whole: rows of adjacent blocks (their counts are whole, as ne[0] is) */
    if (ggml_blck_size(a->type) > 1 && !(dense_rows(a) && dense_rows(b) && dense_rows(dst)))
        return false;
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        const int64_t want = d == dim ? a->ne[d] + b->ne[d] : a->ne[d];
        if ((d != dim && b->ne[d] != a->ne[d]) || dst->ne[d] != want)
            return false;
    }
    return true;
}

/*
 * Along dim 0 a row of dst is a row of a followed by the same row of b;
 * along dim 1..3 each row of dst is a whole row of a (index below
 * a->ne[dim]) or of b (the index less a->ne[dim]).  Rows of a block type
 * are adjacent blocks (concat_supports), moved as bytes.
 */
static void concat_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int32_t dim = ggml__get_op_params_i32(dst, 0);
    const size_t ts = ggml_type_size(dst->type);
    const bool blocks = ggml_blck_size(dst->type) > 1;
    const bool fast = blocks || (!params->use_ref && dense_rows(a) && dense_rows(b) && dense_rows(dst));
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i[4];
        row_coords(dst, r, i);
        char *y = row_at(dst, i[1], i[2], i[3]);
        /* up to two pieces: the tensor, its row, and where the row starts in y */
        const struct ggml_tensor *src[2] = { a, b };
        const char *row[2];
        int64_t at[2] = { 0, a->ne[0] };
        int n_pieces = 2;
        if (dim == 0) {
            row[0] = a->ne[0] > 0 ? row_at(a, i[1], i[2], i[3]) : NULL;
            row[1] = b->ne[0] > 0 ? row_at(b, i[1], i[2], i[3]) : NULL;
        } else {
            if (i[dim] >= a->ne[dim]) {
                src[0] = b;
                i[dim] -= a->ne[dim];
            }
            row[0] = row_at(src[0], i[1], i[2], i[3]);
            at[0] = 0;
            n_pieces = 1;
        }
        for (int p = 0; p < n_pieces; p++) {
            const int64_t len = src[p]->ne[0];
            if (len == 0)
                continue; /* an empty a or b may have no memory at all */
            if (fast)
                memmove(y + ggml_row_size(dst->type, at[p]), row[p], ggml_row_size(dst->type, len));
            else
                copy_strided(y + at[p] * (int64_t) dst->nb[0], dst->nb[0], row[p], src[p]->nb[0], len, ts);
        }
    }
}

const struct ggml__op_impl ggml__op_concat = {
    .kernel = concat_kernel,
    .supports = concat_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ------------------------------------------- NORM, RMS_NORM, L2_NORM */

static bool norm_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && src->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && same_shape(src, dst) &&
           ggml__get_op_params_f32(dst, 0) >= 0.0f;
}

/*
 * Per row x of n elements, with eps from op_params[0]:
 *   NORM      y = (x - mean(x)) / sqrt(var(x) + eps)   (var: mean of squared deviations)
 *   RMS_NORM  y = x / sqrt(mean(x^2) + eps)
 *   L2_NORM   y = x / max(sqrt(sum(x^2)), eps)
 * The statistics are computed in double (the variance from the deviations,
 * in a second pass) before anything is written, so dst may be src itself.
 * NORM's output is written in single precision by three row kernels
 * (subtracting the mean's two float halves, then scaling), within an ulp
 * or two of a loop in double and three times faster (4096 x 512 on Zen
 * 5: 0.23 against 0.70 ms).
 */
static void norm_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const double eps = ggml__get_op_params_f32(dst, 0);
    const int64_t n = src->ne[0];
    const size_t sx = src->nb[0], sy = dst->nb[0];
    const bool fast = !params->use_ref && dense_rows(src) && dense_rows(dst);
    const struct ggml__cpu_kernels *kt = params->kernels;
    int64_t first, last;
    ggml__split_rows(ggml_nrows(src), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i[4];
        row_coords(src, r, i);
        const char *x = row_at(src, i[1], i[2], i[3]);
        char *y = row_at(dst, i[1], i[2], i[3]);
        const float *xf = (const float *) x;
        float *yf = (float *) y;

        if (dst->op == GGML_OP_NORM) {
            const double mean = (fast ? kt->sum(n, xf) : sum_strided(GGML_TYPE_F32, x, sx, n)) / (double) n;
            const double var = (fast ? kt->sum_sq_dev(n, xf, mean) : sumdev_strided(x, sx, n, mean)) / (double) n;
            const double scale = 1.0 / sqrt(var + eps);
            if (fast) {
                /* (x - mean) * scale by the level's row kernels, the mean as two floats: x - hi is exact
                   near the mean (no deviation lost to its rounding), lo the small rest */
                const float hi = (float) mean, lo = (float) (mean - (double) hi);
                kt->binary_scalar[GGML__BINARY_SUB](n, yf, xf, hi);
                kt->binary_scalar[GGML__BINARY_SUB](n, yf, yf, lo);
                kt->scale(n, yf, yf, (float) scale);
            } else {
                for (int64_t k = 0; k < n; k++)
                    *(float *) (y + k * sy) = (float) (((double) *(const float *) (x + k * sx) - mean) * scale);
            }
            continue;
        }

        const double sumsq = fast ? kt->sum_sq(n, xf) : sumsq_strided(GGML_TYPE_F32, x, sx, n);
        const double scale = dst->op == GGML_OP_RMS_NORM ? 1.0 / sqrt(sumsq / (double) n + eps)
                                                         : 1.0 / fmax(sqrt(sumsq), eps);
        if (fast) {
            kt->scale(n, yf, xf, (float) scale);
        } else {
            for (int64_t k = 0; k < n; k++)
                *(float *) (y + k * sy) = (float) ((double) *(const float *) (x + k * sx) * scale);
        }
    }
}

const struct ggml__op_impl ggml__op_norm = {
    .kernel = norm_kernel,
    .supports = norm_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

const struct ggml__op_impl ggml__op_rms_norm = {
    .kernel = norm_kernel,
    .supports = norm_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

const struct ggml__op_impl ggml__op_l2_norm = {
    .kernel = norm_kernel,
    .supports = norm_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ----------------------------------------------------------- GROUP_NORM */

static bool group_norm_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && src->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && same_shape(src, dst) &&
           ggml__get_op_params_i32(dst, 0) >= 1 && ggml__get_op_params_f32(dst, 1) >= 0.0f;
}

/*
 * Channels (dimension 2) fall into n_groups groups of ceil(ne2 / n_groups)
 * consecutive channels (the last ones shorter or empty, as upstream); each
 * group of each batch (dimension 3) is normalised like NORM over all its
 * ne0 * ne1 * channels elements.  A thread takes whole (group, batch) units.
 */
static void group_norm_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t n_groups = ggml__get_op_params_i32(dst, 0);
    const double eps = ggml__get_op_params_f32(dst, 1);
    const int64_t ne0 = src->ne[0], ne1 = src->ne[1], ne2 = src->ne[2];
    const size_t sx = src->nb[0], sy = dst->nb[0];
    const bool fast = !params->use_ref && dense_rows(src) && dense_rows(dst);
    const int64_t per_group = (ne2 + n_groups - 1) / n_groups;
    /* groups that hold at least one channel */
    const int64_t n_used = per_group > 0 ? (ne2 + per_group - 1) / per_group : 0;

    int64_t first, last;
    ggml__split_rows(n_used * src->ne[3], params->ith, params->nth, &first, &last);
    for (int64_t u = first; u < last; u++) {
        const int64_t i3 = u / n_used, c0 = (u % n_used) * per_group;
        const int64_t c1 = c0 + per_group < ne2 ? c0 + per_group : ne2;
        const double count = (double) ne0 * (double) ne1 * (double) (c1 - c0);

        double sum = 0.0;
        for (int64_t i2 = c0; i2 < c1; i2++)
            for (int64_t i1 = 0; i1 < ne1; i1++) {
                const char *x = row_at(src, i1, i2, i3);
                sum += fast ? params->kernels->sum(ne0, (const float *) x) : sum_strided(GGML_TYPE_F32, x, sx, ne0);
            }
        const double mean = sum / count;
        double dev = 0.0;
        for (int64_t i2 = c0; i2 < c1; i2++)
            for (int64_t i1 = 0; i1 < ne1; i1++) {
                const char *x = row_at(src, i1, i2, i3);
                dev += fast ? params->kernels->sum_sq_dev(ne0, (const float *) x, mean) : sumdev_strided(x, sx, ne0, mean);
            }
        const double scale = 1.0 / sqrt(dev / count + eps);

        for (int64_t i2 = c0; i2 < c1; i2++)
            for (int64_t i1 = 0; i1 < ne1; i1++) {
                const char *x = row_at(src, i1, i2, i3);
                char *y = row_at(dst, i1, i2, i3);
                if (fast) {
                    const float *xf = (const float *) x;
                    float *yf = (float *) y;
                    for (int64_t k = 0; k < ne0; k++)
                        yf[k] = (float) (((double) xf[k] - mean) * scale);
                } else {
                    for (int64_t k = 0; k < ne0; k++)
                        *(float *) (y + k * sy) =
                            (float) (((double) *(const float *) (x + k * sx) - mean) * scale);
                }
            }
    }
}

const struct ggml__op_impl ggml__op_group_norm = {
    .kernel = group_norm_kernel,
    .supports = group_norm_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};
