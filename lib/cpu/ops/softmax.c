/*
 * ops/softmax.c - SOFT_MAX: the softmax of each row of src0 (F32) after
 * scaling it and adding an optional mask times the head's ALiBi slope:
 *
 *     z[i] = scale * x[i] + slope(h) * mask[i]
 *     y[i] = exp(z[i] - m) / (sum_j exp(z[j] - m) + exp(sink[h] - m))
 *
 * where h = i2 (the head is dimension 2), m is the largest of the z[i] and
 * of the sink, and the sink term is there only when src[2] holds sinks (one
 * F32 logit per head, which joins the normalisation but has no output).
 * The mask (F32 or F16) row is the row of src0 (the mask may have more
 * rows than src0); its dimensions 2 and 3 are broadcast (i2 % ne12,
 * i3 % ne13).  slope(h) is 1 unless max_bias > 0; then, with
 * n = 2^floor(log2(n_head)), m0 = 2^(-max_bias / n) and
 * m1 = 2^(-max_bias / 2 / n), it is m0^(h + 1) for h < n and
 * m1^(2 (h - n) + 1) otherwise.
 *
 * A row whose z[i] are all -INF (fully masked) and that has no finite sink
 * comes out as zeros (upstream leaves NaN there).  Threads split the rows.
 * The reference path works in double precision in per-thread scratch; the
 * other path works in float in the destination row, accumulating the sum
 * in double, with the kernel table's reduce_max, softmax_exp_sum and scale
 * rows (simd/kernels.h).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "cpu-private.h"

/* Extra scratch per thread so that threads do not share a cache line. */
#define SCRATCH_PAD 16

static bool divides(int64_t d, int64_t n)
{
    return d > 0 ? n % d == 0 : n == 0;
}

static bool soft_max_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0], *mask = dst->src[1], *sinks = dst->src[2];
    if (src == NULL || src->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32 ||
        !ggml_are_same_shape(src, dst) || !ggml_is_contiguous_rows(src) || !ggml_is_contiguous_rows(dst))
        return false;
    if (mask != NULL &&
        ((mask->type != GGML_TYPE_F32 && mask->type != GGML_TYPE_F16) || !ggml_is_contiguous_rows(mask) ||
         mask->ne[0] != src->ne[0] || mask->ne[1] < src->ne[1] || !divides(mask->ne[2], src->ne[2]) ||
         !divides(mask->ne[3], src->ne[3])))
        return false;
    if (sinks != NULL && (sinks->type != GGML_TYPE_F32 || sinks->ne[0] != src->ne[2]))
        return false;
    return true;
}

static size_t soft_max_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    return (size_t) n_tasks * (size_t) (dst->ne[0] + SCRATCH_PAD) * sizeof(double);
}

/* What one row needs besides its data. */
struct soft_max_row {
    int64_t n;
    const float *x;
    float *y;                /* may be x (in place) */
    const void *mask;        /* NULL when there is none */
    bool mask_f16;
    float scale, slope;
    bool has_sink;
    float sink;
};

static void soft_max_row_ref(const struct soft_max_row *row, double *z)
{
    double max = -INFINITY;
    for (int64_t i = 0; i < row->n; i++) {
        double v = (double) row->x[i] * row->scale;
        if (row->mask != NULL) {
            const double m = row->mask_f16 ? ggml__fp16_to_fp32(((const ggml_fp16_t *) row->mask)[i])
                                           : ((const float *) row->mask)[i];
            v += (double) row->slope * m;
        }
        z[i] = v;
        if (v > max)
            max = v;
    }
    if (row->has_sink && row->sink > max)
        max = row->sink;
    if (max == -INFINITY) {
        for (int64_t i = 0; i < row->n; i++)
            row->y[i] = 0.0f;
        return;
    }
    double sum = row->has_sink ? exp(row->sink - max) : 0.0;
    for (int64_t i = 0; i < row->n; i++) {
        z[i] = exp(z[i] - max);
        sum += z[i];
    }
    for (int64_t i = 0; i < row->n; i++)
        row->y[i] = (float) (z[i] / sum);
}

static void soft_max_row_fast(const struct ggml__cpu_kernels *k, const struct soft_max_row *row)
{
    const int64_t n = row->n;
    const float *x = row->x;
    float *y = row->y;
    const float scale = row->scale, slope = row->slope;

    if (row->mask == NULL) {
        k->scale(n, y, x, scale);
    } else if (row->mask_f16) {
        const ggml_fp16_t *m = row->mask;
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] * scale + slope * ggml__fp16_to_fp32(m[i]);
    } else {
        const float *m = row->mask;
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] * scale + slope * m[i];
    }
    float max = k->reduce_max(n, y);
    if (row->has_sink && row->sink > max)
        max = row->sink;
    if (max == -INFINITY) {
        memset(y, 0, (size_t) n * sizeof *y);
        return;
    }
    double sum = row->has_sink ? (double) expf(row->sink - max) : 0.0;
    sum += k->softmax_exp_sum(n, y, y, max);
    k->scale(n, y, y, (float) (1.0 / sum));
}

static void soft_max_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0], *mask = dst->src[1], *sinks = dst->src[2];
    const float scale = ggml__get_op_params_f32(dst, 0);
    const float max_bias = ggml__get_op_params_f32(dst, 1);

    /* ALiBi: slopes of the heads (dimension 2) */
    const uint32_t n_head = (uint32_t) src->ne[2];
    uint32_t n_head_log2 = 1u; /* the largest power of two <= n_head (1 when n_head is 0) */
    while (n_head_log2 <= n_head / 2)
        n_head_log2 *= 2;
    const float m0 = powf(2.0f, -max_bias / (float) n_head_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / (float) n_head_log2);

    double *scratch = (double *) params->wdata + (size_t) params->ith * (size_t) (src->ne[0] + SCRATCH_PAD);

    int64_t first, last;
    ggml__split_rows(ggml_nrows(src), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const int64_t i1 = r % src->ne[1], i2 = (r / src->ne[1]) % src->ne[2], i3 = r / (src->ne[1] * src->ne[2]);
        const uint32_t h = (uint32_t) i2;
        struct soft_max_row row = {
            .n = src->ne[0],
            .x = (const float *) ((const char *) src->data + i1 * src->nb[1] + i2 * src->nb[2] + i3 * src->nb[3]),
            .y = (float *) ((char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3]),
            .mask = NULL,
            .mask_f16 = false,
            .scale = scale,
            .slope = 1.0f,
            .has_sink = sinks != NULL,
            .sink = sinks != NULL ? *(const float *) ((const char *) sinks->data + i2 * sinks->nb[0]) : 0.0f,
        };
        if (max_bias > 0.0f)
            row.slope = h < n_head_log2 ? powf(m0, (float) (h + 1)) : powf(m1, (float) (2 * (h - n_head_log2) + 1));
        if (mask != NULL) {
            row.mask = (const char *) mask->data + i1 * mask->nb[1] + (i2 % mask->ne[2]) * mask->nb[2] +
                       (i3 % mask->ne[3]) * mask->nb[3];
            row.mask_f16 = mask->type == GGML_TYPE_F16;
        }
        if (params->use_ref)
            soft_max_row_ref(&row, scratch);
        else
            soft_max_row_fast(params->kernels, &row);
    }
}

const struct ggml__op_impl ggml__op_soft_max = {
    .kernel = soft_max_kernel,
    .supports = soft_max_supports,
    .n_tasks = NULL,
    .work_size = soft_max_work_size,
};
