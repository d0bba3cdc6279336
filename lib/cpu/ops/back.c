/*
 * ops/back.c - kernels of the ops of training: the gradients SILU_BACK,
 * RMS_NORM_BACK, GET_ROWS_BACK, SOFT_MAX_BACK, IM2COL_BACK, POOL_2D_BACK, the loss
 * CROSS_ENTROPY_LOSS(_BACK) and the optimizer steps OPT_STEP_ADAMW and
 * OPT_STEP_SGD (F32 only).
 *
 * Sources and results are F32, F16 or BF16 (GET_ROWS_BACK: F32 result)
 * with any strides: every element is read and written through its byte
 * strides and converted to F32; sums along a row are kept in double.
 * Threads split rows.  The kernels have one path, which is also the
 * reference.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
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

/* ----------------------------------------------------- CROSS_ENTROPY_LOSS */

/* Logits src0 and labels src1 (or src1 and src2 for the gradient) are float tensors of one shape. */
static bool loss_inputs_fit(const struct ggml_tensor *logits, const struct ggml_tensor *labels)
{
    return logits != NULL && labels != NULL && is_float(logits->type) && is_float(labels->type) &&
           ggml_are_same_shape(logits, labels);
}

static bool cross_entropy_loss_supports(const struct ggml_tensor *dst)
{
    return is_float(dst->type) && ggml_is_scalar(dst) && loss_inputs_fit(dst->src[0], dst->src[1]);
}

/* The largest value of row (i1, i2, i3) of t and log(sum(exp(t - max))) over it. */
static void row_log_sum_exp(const struct ggml_tensor *t, int64_t i1, int64_t i2, int64_t i3, double *max,
                            double *log_sum)
{
    double mx = -INFINITY;
    for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
        const double v = load_at(t, i0, i1, i2, i3);
        mx = v > mx ? v : mx;
    }
    double sum = 0.0;
    for (int64_t i0 = 0; i0 < t->ne[0]; i0++)
        sum += exp((double) load_at(t, i0, i1, i2, i3) - mx);
    *max = mx;
    *log_sum = log(sum);
}

/* One double per thread, after room to align them. */
static size_t cross_entropy_loss_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    (void) dst;
    return (size_t) n_tasks * sizeof(double) + sizeof(double);
}

/*
 * dst = -(1 / rows) * sum over rows of sum(labels * log_softmax(logits)).
 * Each thread sums its rows into its slot of the scratch; after a barrier
 * thread 0 adds the slots in thread order.
 */
static void cross_entropy_loss_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *logits = dst->src[0], *labels = dst->src[1];
    const int64_t rows = ggml_nrows(logits);
    double *partial = (double *) (((uintptr_t) params->wdata + sizeof(double) - 1) & ~(uintptr_t) (sizeof(double) - 1));
    double sum = 0.0;
    int64_t first, last;
    /* rows of no elements add nothing (and may be 2^40 of them) */
    ggml__split_rows(ggml_is_empty(logits) ? 0 : rows, params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        row_coords(logits, r, &i1, &i2, &i3);
        double mx, log_sum;
        row_log_sum_exp(logits, i1, i2, i3, &mx, &log_sum);
        for (int64_t i0 = 0; i0 < logits->ne[0]; i0++)
            sum += (double) load_at(labels, i0, i1, i2, i3) * ((double) load_at(logits, i0, i1, i2, i3) - mx - log_sum);
    }
    partial[params->ith] = sum;
    ggml__threadpool_barrier(params->pool);
    if (params->ith == 0) {
        double total = 0.0;
        for (int i = 0; i < params->nth; i++)
            total += partial[i];
        ggml__store_float(dst->type, dst->data, (float) (-total / (double) rows));
    }
}

const struct ggml__op_impl ggml__op_cross_entropy_loss = {
    .kernel = cross_entropy_loss_kernel,
    .supports = cross_entropy_loss_supports,
    .n_tasks = NULL,
    .work_size = cross_entropy_loss_work_size,
};

/* ------------------------------------------------ CROSS_ENTROPY_LOSS_BACK */

static bool cross_entropy_loss_back_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *g = dst->src[0];
    return g != NULL && is_float(g->type) && ggml_is_scalar(g) && is_float(dst->type) &&
           loss_inputs_fit(dst->src[1], dst->src[2]) && ggml_are_same_shape(dst, dst->src[1]);
}

/* dst = (softmax(logits) - labels) * g / rows, row by row; src0 g (one element), src1 logits, src2 labels. */
static void cross_entropy_loss_back_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *g = dst->src[0], *logits = dst->src[1], *labels = dst->src[2];
    const int64_t rows = ggml_nrows(logits);
    const double scale = (double) ggml__load_float(g->type, g->data) / (double) rows;
    int64_t first, last;
    ggml__split_rows(rows, params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        row_coords(logits, r, &i1, &i2, &i3);
        double mx, log_sum;
        row_log_sum_exp(logits, i1, i2, i3, &mx, &log_sum);
        for (int64_t i0 = 0; i0 < logits->ne[0]; i0++) {
            const double p = exp((double) load_at(logits, i0, i1, i2, i3) - mx - log_sum);
            store_at(dst, i0, i1, i2, i3, (float) ((p - (double) load_at(labels, i0, i1, i2, i3)) * scale));
        }
    }
}

const struct ggml__op_impl ggml__op_cross_entropy_loss_back = {
    .kernel = cross_entropy_loss_back_kernel,
    .supports = cross_entropy_loss_back_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* --------------------------------------------------------- OPT_STEP_ADAMW */

/* Weights, and the n_same tensors after them, F32 of one shape; then n_params contiguous F32 values. */
static bool opt_step_fits(const struct ggml_tensor *dst, int n_same, int64_t n_params)
{
    const struct ggml_tensor *w = dst->src[0], *p = dst->src[n_same + 1];
    if (w == NULL || p == NULL || w->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32 ||
        !ggml_are_same_shape(w, dst))
        return false;
    for (int i = 1; i <= n_same; i++)
        if (dst->src[i] == NULL || dst->src[i]->type != GGML_TYPE_F32 || !ggml_are_same_shape(w, dst->src[i]))
            return false;
    return p->type == GGML_TYPE_F32 && ggml_nelements(p) == n_params && ggml_is_contiguous(p);
}

static bool opt_step_adamw_supports(const struct ggml_tensor *dst)
{
    return opt_step_fits(dst, 3, 7);
}

/*
 * Per element, with params { alpha, beta1, beta2, eps, wd, beta1h, beta2h }:
 *   m = beta1 m + (1 - beta1) g,  v = beta2 v + (1 - beta2) g^2,
 *   w = w (1 - alpha wd) - alpha (m beta1h) / (sqrt(v beta2h) + eps)
 * (decoupled weight decay; beta1h, beta2h the bias corrections of this
 * step).  dst is a view of w; m and v are updated in place.
 */
static void opt_step_adamw_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *grad = dst->src[1], *m = dst->src[2], *v = dst->src[3];
    const float *p = (const float *) dst->src[4]->data;
    const float alpha = p[0], beta1 = p[1], beta2 = p[2], eps = p[3], wd = p[4], beta1h = p[5], beta2h = p[6];
    const float keep = 1.0f - alpha * wd;
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const float g = ggml__f32_at(grad, i0, i1, i2, i3);
            float *mp = ggml__elem_ptr(m, i0, i1, i2, i3), *vp = ggml__elem_ptr(v, i0, i1, i2, i3);
            float *wp = ggml__elem_ptr(dst, i0, i1, i2, i3);
            *mp = *mp * beta1 + g * (1.0f - beta1);
            *vp = *vp * beta2 + g * g * (1.0f - beta2);
            const float step = *mp * beta1h / (sqrtf(*vp * beta2h) + eps);
            *wp = *wp * keep - alpha * step;
        }
    }
}

const struct ggml__op_impl ggml__op_opt_step_adamw = {
    .kernel = opt_step_adamw_kernel,
    .supports = opt_step_adamw_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ----------------------------------------------------------- OPT_STEP_SGD */

static bool opt_step_sgd_supports(const struct ggml_tensor *dst)
{
    return opt_step_fits(dst, 1, 2);
}

/* Per element, with params { alpha, wd }: w = w (1 - alpha wd) - alpha g; dst is a view of w. */
static void opt_step_sgd_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *grad = dst->src[1];
    const float *p = (const float *) dst->src[2]->data;
    const float alpha = p[0], keep = 1.0f - p[0] * p[1];
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            float *wp = ggml__elem_ptr(dst, i0, i1, i2, i3);
            *wp = *wp * keep - alpha * ggml__f32_at(grad, i0, i1, i2, i3);
        }
    }
}

const struct ggml__op_impl ggml__op_opt_step_sgd = {
    .kernel = opt_step_sgd_kernel,
    .supports = opt_step_sgd_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ------------------------------------------------------------ IM2COL_BACK */

/* src0 the gradient of the im2col output, src1 the kernel (extents only); dst F32, the input's shape. */
static bool im2col_back_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *grad = dst->src[0];
    return grad != NULL && dst->src[1] != NULL && dst->type == GGML_TYPE_F32 && is_float(grad->type) &&
           ggml__im2col_back_fits(grad, dst->src[1], dst->ne, dst->op_params);
}

/*
 * Each input sample (n, c, y, x) sums the gradients of the im2col entries
 * that read it: kernel tap (ky, kx) reads it at output (oy, ox) when
 * x = ox*s0 - p0 + kx*d0 (and y likewise), in column (c*KH + ky)*KW + kx.
 * Threads split the (n, c) planes.
 */
static void im2col_back_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *grad = dst->src[0], *kernel = dst->src[1];
    const int32_t *op = dst->op_params;
    const int s0 = op[0], s1 = op[1], p0 = op[2], p1 = op[3], d0 = op[4], d1 = op[5];
    const bool is_2d = op[6] != 0;
    const int64_t IW = dst->ne[0], IH = is_2d ? dst->ne[1] : 1;
    const int64_t IC = is_2d ? dst->ne[2] : dst->ne[1], N = is_2d ? dst->ne[3] : dst->ne[2];
    const int64_t KW = kernel->ne[0], KH = is_2d ? kernel->ne[1] : 1;
    const int64_t OW = grad->ne[1], OH = is_2d ? grad->ne[2] : 1;
    int64_t first, last;
    ggml__split_rows(N * IC, params->ith, params->nth, &first, &last);
    for (int64_t plane = first; plane < last; plane++) {
        const int64_t n = plane / IC, c = plane % IC;
        for (int64_t y = 0; y < IH; y++) {
            for (int64_t x = 0; x < IW; x++) {
                double sum = 0.0;
                for (int64_t ky = 0; ky < KH; ky++) {
                    const int64_t ty = y + p1 - ky * d1;
                    if (is_2d && (ty < 0 || ty % s1 != 0 || ty / s1 >= OH))
                        continue;
                    const int64_t oy = is_2d ? ty / s1 : 0;
                    for (int64_t kx = 0; kx < KW; kx++) {
                        const int64_t tx = x + p0 - kx * d0;
                        if (tx < 0 || tx % s0 != 0 || tx / s0 >= OW)
                            continue;
                        const int64_t col = (c * KH + ky) * KW + kx;
                        sum += is_2d ? load_at(grad, col, tx / s0, oy, n) : load_at(grad, col, tx / s0, n, 0);
                    }
                }
                if (is_2d)
                    store_at(dst, x, y, c, n, (float) sum);
                else
                    store_at(dst, x, c, n, 0, (float) sum);
            }
        }
    }
}

const struct ggml__op_impl ggml__op_im2col_back = {
    .kernel = im2col_back_kernel,
    .supports = im2col_back_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ----------------------------------------------------------- POOL_2D_BACK */

/* src0 the gradient of the pooled output, src1 the pooling's input; dst F32 of src1's shape. */
static bool pool_2d_back_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *grad = dst->src[0], *input = dst->src[1];
    const int32_t *p = dst->op_params;
    return grad != NULL && input != NULL && dst->type == GGML_TYPE_F32 && is_float(grad->type) &&
           is_float(input->type) && ggml_are_same_shape(dst, input) && grad->ne[2] == dst->ne[2] &&
           grad->ne[3] == dst->ne[3] && (p[0] == GGML_OP_POOL_MAX || p[0] == GGML_OP_POOL_AVG) && p[1] >= 1 &&
           p[2] >= 1 && p[3] >= 1 && p[4] >= 1;
}

/*
 * Each window (the one that made pooled output (ox, oy)) passes its
 * gradient back: MAX to the first largest input inside the input (the
 * one the forward pass picked), AVG to every input inside it, divided by
 * k0*k1 (the forward divisor, padding included).  Threads split the
 * planes, so windows that overlap add up within one thread.
 */
static void pool_2d_back_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *grad = dst->src[0], *input = dst->src[1];
    const int32_t *p = dst->op_params;
    const bool is_max = p[0] == GGML_OP_POOL_MAX;
    const int k0 = p[1], k1 = p[2], s0 = p[3], s1 = p[4], p0 = p[5], p1 = p[6];
    const int64_t W = dst->ne[0], H = dst->ne[1];
    int64_t first, last;
    ggml__split_rows(dst->ne[2] * dst->ne[3], params->ith, params->nth, &first, &last);
    for (int64_t plane = first; plane < last; plane++) {
        const int64_t i2 = plane % dst->ne[2], i3 = plane / dst->ne[2];
        for (int64_t y = 0; y < H; y++)
            for (int64_t x = 0; x < W; x++)
                store_at(dst, x, y, i2, i3, 0.0f);
        for (int64_t oy = 0; oy < grad->ne[1]; oy++) {
            for (int64_t ox = 0; ox < grad->ne[0]; ox++) {
                const float g = load_at(grad, ox, oy, i2, i3);
                const int64_t x0 = ox * s0 - p0, y0 = oy * s1 - p1;
                const int64_t xb = x0 < 0 ? 0 : x0, xe = x0 + k0 < W ? x0 + k0 : W;
                const int64_t yb = y0 < 0 ? 0 : y0, ye = y0 + k1 < H ? y0 + k1 : H;
                if (is_max) {
                    int64_t bx = -1, by = -1;
                    float best = -FLT_MAX;
                    for (int64_t y = yb; y < ye; y++)
                        for (int64_t x = xb; x < xe; x++) {
                            const float v = load_at(input, x, y, i2, i3);
                            if (bx < 0 || v > best) {
                                best = v;
                                bx = x;
                                by = y;
                            }
                        }
                    if (bx >= 0)
                        store_at(dst, bx, by, i2, i3, load_at(dst, bx, by, i2, i3) + g);
                } else {
                    const float share = g / (float) (k0 * k1);
                    for (int64_t y = yb; y < ye; y++)
                        for (int64_t x = xb; x < xe; x++)
                            store_at(dst, x, y, i2, i3, load_at(dst, x, y, i2, i3) + share);
                }
            }
        }
    }
}

const struct ggml__op_impl ggml__op_pool_2d_back = {
    .kernel = pool_2d_back_kernel,
    .supports = pool_2d_back_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};
