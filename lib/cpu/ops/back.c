/*
 * ops/back.c - kernels of the gradient ops: SILU_BACK, RMS_NORM_BACK,
 * GET_ROWS_BACK and SOFT_MAX_BACK.
 *
 * Sources and results are F32, F16 or BF16 (GET_ROWS_BACK: F32 result)
 * with any strides: every element is read and written through its byte
 * strides and converted to F32; sums along a row are kept in double.
 * Threads split rows.  The kernels have one path, which is also the
 * reference.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "ggml-impl.h"
#include "cpu-private.h"

static bool is_float(enum ggml_type type)
{
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
}

/* dst and its two sources are float tensors of one shape. */
static bool float_pair_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    return a != NULL && b != NULL && is_float(dst->type) && is_float(a->type) && is_float(b->type) &&
           ggml_are_same_shape(a, dst) && ggml_are_same_shape(b, dst);
}

/* Indices (i1, i2, i3) of row r of t, rows counted over dims 1..3. */
static inline void row_coords(const struct ggml_tensor *t, int64_t r, int64_t *i1, int64_t *i2, int64_t *i3)
{
    *i1 = r % t->ne[1];
    *i2 = (r / t->ne[1]) % t->ne[2];
    *i3 = r / (t->ne[1] * t->ne[2]);
}

static inline float load_at(const struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return ggml__load_float(t->type, ggml__elem_ptr(t, i0, i1, i2, i3));
}

static inline void store_at(struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v)
{
    ggml__store_float(t->type, ggml__elem_ptr(t, i0, i1, i2, i3), v);
}

/* ------------------------------------------------------------- SILU_BACK */

/* dx = dy * s * (1 + x * (1 - s)) with s = sigmoid(x); src0 dy, src1 x. */
static void silu_back_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *dy = dst->src[0], *x = dst->src[1];
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const float xv = load_at(x, i0, i1, i2, i3);
            const float s = 1.0f / (1.0f + expf(-xv));
            store_at(dst, i0, i1, i2, i3, load_at(dy, i0, i1, i2, i3) * s * (1.0f + xv * (1.0f - s)));
        }
    }
}

const struct ggml__op_impl ggml__op_silu_back = {
    .kernel = silu_back_kernel,
    .supports = float_pair_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* --------------------------------------------------------- RMS_NORM_BACK */

/*
 * Per row of n values, with m = sum(x^2) / n + eps:
 *   dx = (dy - x * sum(x * dy) / (n * m)) / sqrt(m)
 * src0 dy, src1 x; op_params[0] eps.
 */
static void rms_norm_back_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *dy = dst->src[0], *x = dst->src[1];
    const float eps = ggml__get_op_params_f32(dst, 0);
    const int64_t n = dst->ne[0];
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        double sum_xx = 0.0, sum_xdy = 0.0;
        for (int64_t i0 = 0; i0 < n; i0++) {
            const double xv = load_at(x, i0, i1, i2, i3);
            sum_xx += xv * xv;
            sum_xdy += xv * load_at(dy, i0, i1, i2, i3);
        }
        /* in double: dy and x * proj nearly cancel when eps is small against x^2
           (a row of one value has a gradient of about eps / x^3) */
        const double m = sum_xx / (double) n + eps;
        const double inv_rms = 1.0 / sqrt(m);
        const double proj = sum_xdy / ((double) n * m);
        for (int64_t i0 = 0; i0 < n; i0++) {
            const double xv = load_at(x, i0, i1, i2, i3);
            store_at(dst, i0, i1, i2, i3, (float) (((double) load_at(dy, i0, i1, i2, i3) - xv * proj) * inv_rms));
        }
    }
}

const struct ggml__op_impl ggml__op_rms_norm_back = {
    .kernel = rms_norm_back_kernel,
    .supports = float_pair_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ---------------------------------------------------------- SOFT_MAX_BACK */

/*
 * Per row: dx = scale * y * (dy - dot(y, dy)); src0 dy, src1 y;
 * op_params float { scale, max_bias } (max_bias has no effect on dx).
 * In place (dst a view of dy) each element is read before it is written.
 */
static void soft_max_back_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *dy = dst->src[0], *y = dst->src[1];
    const float scale = ggml__get_op_params_f32(dst, 0);
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        double dot = 0.0;
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++)
            dot += (double) load_at(y, i0, i1, i2, i3) * load_at(dy, i0, i1, i2, i3);
        const float dotf = (float) dot;
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const float yv = load_at(y, i0, i1, i2, i3);
            store_at(dst, i0, i1, i2, i3, scale * yv * (load_at(dy, i0, i1, i2, i3) - dotf));
        }
    }
}

const struct ggml__op_impl ggml__op_soft_max_back = {
    .kernel = soft_max_back_kernel,
    .supports = float_pair_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ---------------------------------------------------------- GET_ROWS_BACK */

/*
 * dst [n, n_rows] F32: row t is the sum of the rows i of src0 (gradients)
 * with src1[i] == t, zero where no index names it.  Indices outside
 * [0, n_rows) are skipped.  Each thread owns a range of dst rows and scans
 * all indices, so no two threads add into one row.
 */
static bool get_rows_back_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    return a != NULL && b != NULL && dst->type == GGML_TYPE_F32 && is_float(a->type) && b->type == GGML_TYPE_I32 &&
           ggml_is_matrix(a) && ggml_is_vector(b) && ggml_is_matrix(dst) && a->ne[0] == dst->ne[0] &&
           b->ne[0] <= a->ne[1];
}

static void get_rows_back_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *grad = dst->src[0], *idx = dst->src[1];
    const int64_t n = dst->ne[0];
    int64_t first, last;
    ggml__split_rows(dst->ne[1], params->ith, params->nth, &first, &last);
    for (int64_t t = first; t < last; t++)
        for (int64_t i0 = 0; i0 < n; i0++)
            *(float *) ggml__elem_ptr(dst, i0, t, 0, 0) = 0.0f;
    for (int64_t i = 0; i < idx->ne[0]; i++) {
        const int64_t t = *(const int32_t *) ggml__elem_ptr(idx, i, 0, 0, 0);
        if (t < first || t >= last)
            continue;
        for (int64_t i0 = 0; i0 < n; i0++)
            *(float *) ggml__elem_ptr(dst, i0, t, 0, 0) += load_at(grad, i0, i, 0, 0);
    }
}

const struct ggml__op_impl ggml__op_get_rows_back = {
    .kernel = get_rows_back_kernel,
    .supports = get_rows_back_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};
