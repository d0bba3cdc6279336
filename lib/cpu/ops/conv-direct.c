/*
 * conv-direct.c - CPU kernels of the direct convolutions CONV_TRANSPOSE_1D,
 * CONV_TRANSPOSE_2D, CONV_2D_DW, CONV_2D and CONV_3D.
 *
 * Every kernel computes each output element as a gather over the inputs
 * (no scatter), so the threads split the output rows freely and any thread
 * count gives the same results.  Inputs are read through their byte
 * strides, so permuted and channels-last layouts work as they are.
 * Kernels (src[0]) may be F32 or F16, except for CONV_2D_DW (F32 only);
 * data (src[1]) and results are F32.  Sums are accumulated in float.
 *
 * params->use_ref selects the element-by-element path.  CONV_2D and
 * CONV_2D_DW also have a default path that accumulates a whole output row
 * per kernel tap in per-thread scratch (contiguous and vectorizable for
 * stride 1), adding each element's terms in the reference order.
 */
#include "config.h"

#include "ggml-impl.h"
#include "cpu-private.h"

/* Element (i0, i1, i2, i3) of a float-type tensor, as F32. */
static inline float elem(const struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return ggml__load_float(t->type, ggml__elem_ptr(t, i0, i1, i2, i3));
}

/* kernel F32 or F16, data and result F32 */
static bool supports_kernel_f16_f32(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    return (a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16) && b->type == GGML_TYPE_F32 &&
           dst->type == GGML_TYPE_F32;
}

/* everything F32 */
static bool supports_all_f32(const struct ggml_tensor *dst)
{
    return dst->src[0]->type == GGML_TYPE_F32 && dst->src[1]->type == GGML_TYPE_F32 &&
           dst->type == GGML_TYPE_F32;
}

/*
 * The node checks below hold a node to what its constructor in
 * lib/ops-conv-direct.c makes (operand shapes, parameters, the output's
 * shape), because the kernels index by them: a graph can also come from
 * elsewhere than the constructors (the RPC server deserializes them).
 */

/* strides and dilations >= 1, paddings >= 0: op_params s[0..n), p[0..n), d[0..n) at the given indices */
static bool conv_params_ok(const struct ggml_tensor *dst, int s_at, int p_at, int d_at, int n)
{
    for (int i = 0; i < n; i++)
        if (ggml__get_op_params_i32(dst, s_at + i) < 1 || ggml__get_op_params_i32(dst, p_at + i) < 0 ||
            ggml__get_op_params_i32(dst, d_at + i) < 1)
            return false;
    return true;
}

/* dst's extents 0..n-1 are the convolution's output extents of b by a with those parameters */
static bool conv_out_ok(const struct ggml_tensor *dst, const struct ggml_tensor *a, const struct ggml_tensor *b,
                        int s_at, int p_at, int d_at, int n)
{
    for (int i = 0; i < n; i++) {
        const int64_t out = ggml__conv_out_size(b->ne[i], a->ne[i], ggml__get_op_params_i32(dst, s_at + i),
                                                ggml__get_op_params_i32(dst, p_at + i),
                                                ggml__get_op_params_i32(dst, d_at + i));
        if (out < 1 || out == GGML__CONV_OUT_OVERFLOW || dst->ne[i] != out)
            return false;
    }
    return true;
}

/* dst [OL, OC, N, 1]: a [K, OC, IC, 1], b [L, IC, N, 1]; stride >= 1, padding 0, dilation 1 */
static bool supports_conv_transpose_1d(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int s = ggml__get_op_params_i32(dst, 0);
    int64_t out;
    return supports_kernel_f16_f32(dst) && s >= 1 && ggml__get_op_params_i32(dst, 1) == 0 &&
           ggml__get_op_params_i32(dst, 2) == 1 && a->ne[3] == 1 && b->ne[3] == 1 && a->ne[2] == b->ne[1] &&
           !__builtin_mul_overflow(b->ne[0] - 1, (int64_t) s, &out) && !__builtin_add_overflow(out, a->ne[0], &out) &&
           dst->ne[0] == out && dst->ne[1] == a->ne[1] && dst->ne[2] == b->ne[2] && dst->ne[3] == 1;
}

/* dst [OW, OH, OC, N]: a [KW, KH, OC, IC], b [W, H, IC, N]; stride >= 1 */
static bool supports_conv_transpose_2d(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int s = ggml__get_op_params_i32(dst, 0);
    if (!supports_kernel_f16_f32(dst) || s < 1 || a->ne[3] != b->ne[2] || dst->ne[2] != a->ne[2] ||
        dst->ne[3] != b->ne[3])
        return false;
    for (int i = 0; i < 2; i++) {
        int64_t out;
        if (__builtin_mul_overflow(b->ne[i] - 1, (int64_t) s, &out) || __builtin_add_overflow(out, a->ne[i], &out) ||
            dst->ne[i] != out)
            return false;
    }
    return true;
}

/* dst [OW, OH, C, N]: a [KW, KH, 1, C], b [W, H, C, N]; op_params s0 s1 p0 p1 d0 d1 */
static bool supports_conv_2d_dw(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    return supports_all_f32(dst) && a->ne[2] == 1 && a->ne[3] == b->ne[2] && conv_params_ok(dst, 0, 2, 4, 2) &&
           conv_out_ok(dst, a, b, 0, 2, 4, 2) && dst->ne[2] == b->ne[2] && dst->ne[3] == b->ne[3];
}

/* dst [OW, OH, OC, N]: a [KW, KH, IC, OC], b [W, H, IC, N]; op_params s0 s1 p0 p1 d0 d1 */
static bool supports_conv_2d(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    return supports_kernel_f16_f32(dst) && a->ne[2] == b->ne[2] && conv_params_ok(dst, 0, 2, 4, 2) &&
           conv_out_ok(dst, a, b, 0, 2, 4, 2) && dst->ne[2] == a->ne[3] && dst->ne[3] == b->ne[3];
}

/* dst [OW, OH, OD, OC*N]: a [KW, KH, KD, IC*OC], b [W, H, D, IC*N]; op_params s0-2 p0-2 d0-2 IC N OC */
static bool supports_conv_3d(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t ic = ggml__get_op_params_i32(dst, 9), n = ggml__get_op_params_i32(dst, 10),
                  oc = ggml__get_op_params_i32(dst, 11);
    return supports_kernel_f16_f32(dst) && ic >= 1 && n >= 1 && oc >= 1 && a->ne[3] == ic * oc &&
           b->ne[3] == ic * n && dst->ne[3] == oc * n && conv_params_ok(dst, 0, 3, 6, 3) &&
           conv_out_ok(dst, a, b, 0, 3, 6, 3);
}

/* index of the input position feeding output o through tap k, or -1 */
static inline int64_t transposed_source(int64_t o, int64_t k, int s, int p, int d, int64_t n_in)
{
    const int64_t j = o + p - k * d;
    if (j < 0 || j % s != 0)
        return -1;
    return j / s < n_in ? j / s : -1;
}

/* dst [OL, OC, N]: a [K, OC, IC], b [L, IC, N] */
static void conv_transpose_1d_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int s0 = ggml__get_op_params_i32(dst, 0), p0 = ggml__get_op_params_i32(dst, 1),
              d0 = ggml__get_op_params_i32(dst, 2);
    const int64_t K = a->ne[0], IC = a->ne[2], L = b->ne[0];
    const int64_t rows = dst->ne[1] * dst->ne[2] * dst->ne[3];
    /* an empty kernel or input contributes nothing: zeros, without walking the taps */
    const int64_t taps = ggml_is_empty(a) || ggml_is_empty(b) ? 0 : K;
    int64_t first, last;
    ggml__split_rows(rows, params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const int64_t oc = r % dst->ne[1], n = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
        for (int64_t o = 0; o < dst->ne[0]; o++) {
            float sum = 0.0f;
            for (int64_t k = 0; k < taps; k++) {
                const int64_t l = transposed_source(o, k, s0, p0, d0, L);
                if (l < 0)
                    continue;
                for (int64_t ic = 0; ic < IC; ic++)
                    sum += elem(a, k, oc, ic, 0) * elem(b, l, ic, n, i3);
            }
            *(float *) ggml__elem_ptr(dst, o, oc, n, i3) = sum;
        }
    }
}

/* dst [OW, OH, OC, N]: a [KW, KH, OC, IC], b [W, H, IC, N], stride s, no padding */
static void conv_transpose_2d_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int s = ggml__get_op_params_i32(dst, 0);
    const int64_t KW = a->ne[0], IC = a->ne[3], W = b->ne[0], H = b->ne[1];
    /* an empty kernel or input contributes nothing: zeros, without walking the taps */
    const int64_t KH = ggml_is_empty(a) || ggml_is_empty(b) ? 0 : a->ne[1];
    const int64_t rows = dst->ne[1] * dst->ne[2] * dst->ne[3];
    int64_t first, last;
    ggml__split_rows(rows, params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const int64_t oy = r % dst->ne[1], oc = (r / dst->ne[1]) % dst->ne[2], n = r / (dst->ne[1] * dst->ne[2]);
        for (int64_t ox = 0; ox < dst->ne[0]; ox++) {
            float sum = 0.0f;
            for (int64_t ky = 0; ky < KH; ky++) {
                const int64_t iy = transposed_source(oy, ky, s, 0, 1, H);
                if (iy < 0)
                    continue;
                for (int64_t kx = 0; kx < KW; kx++) {
                    const int64_t ix = transposed_source(ox, kx, s, 0, 1, W);
                    if (ix < 0)
                        continue;
                    for (int64_t ic = 0; ic < IC; ic++)
                        sum += elem(a, kx, ky, oc, ic) * elem(b, ix, iy, ic, n);
                }
            }
            *(float *) ggml__elem_ptr(dst, ox, oy, oc, n) = sum;
        }
    }
}

/*
 * Default path of the 2-d convolutions, one kernel tap on one input row:
 * acc[ox] += w * row[ox*s0 - p0 + offset] for every output column whose
 * input column lies in [0, W).  row is F32, nb0 bytes between columns.
 * Each output element receives its terms in the order the caller visits
 * the taps, the order of the reference path.
 */
static void accumulate_tap(float *restrict acc, int64_t OW, const char *row, size_t nb0, int64_t W, int s0,
                           int p0, int64_t offset, float w)
{
    const int64_t lo_num = p0 - offset, hi_num = W - 1 + p0 - offset;
    if (hi_num < 0)
        return;
    const int64_t lo = lo_num <= 0 ? 0 : (lo_num + s0 - 1) / s0;
    const int64_t hi = hi_num / s0 + 1 < OW ? hi_num / s0 + 1 : OW;
    if (lo >= hi)
        return;
    const int64_t first = lo * s0 - p0 + offset;
    if (s0 == 1 && nb0 == sizeof(float)) {
        const float *restrict in = (const float *) row + first;
        float *restrict out = acc + lo;
        for (int64_t i = 0; i < hi - lo; i++)
            out[i] += w * in[i];
    } else {
        for (int64_t ox = lo; ox < hi; ox++)
            acc[ox] += w * *(const float *) (row + (size_t) (first + (ox - lo) * s0) * nb0);
    }
}

/* scratch of the default 2-d paths: one output row of floats per thread */
static size_t conv_2d_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    return (size_t) n_tasks * ((size_t) dst->ne[0] + 16) * sizeof(float);
}

static float *thread_row(const struct ggml__compute_params *params, const struct ggml_tensor *dst)
{
    return (float *) params->wdata + (size_t) params->ith * ((size_t) dst->ne[0] + 16);
}

static void store_row(struct ggml_tensor *dst, const float *acc, int64_t i1, int64_t i2, int64_t i3)
{
    for (int64_t ox = 0; ox < dst->ne[0]; ox++)
        *(float *) ggml__elem_ptr(dst, ox, i1, i2, i3) = acc[ox];
}

/* dst [OW, OH, C, N]: a [KW, KH, 1, C], b [W, H, C, N], any strides */
static void conv_2d_dw_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int s0 = ggml__get_op_params_i32(dst, 0), s1 = ggml__get_op_params_i32(dst, 1),
              p0 = ggml__get_op_params_i32(dst, 2), p1 = ggml__get_op_params_i32(dst, 3),
              d0 = ggml__get_op_params_i32(dst, 4), d1 = ggml__get_op_params_i32(dst, 5);
    const int64_t KW = a->ne[0], KH = a->ne[1], W = b->ne[0], H = b->ne[1];
    const int64_t rows = dst->ne[1] * dst->ne[2] * dst->ne[3];
    int64_t first, last;
    ggml__split_rows(rows, params->ith, params->nth, &first, &last);
    if (!params->use_ref && params->wdata != NULL) {
        float *acc = thread_row(params, dst);
        for (int64_t r = first; r < last; r++) {
            const int64_t oy = r % dst->ne[1], c = (r / dst->ne[1]) % dst->ne[2], n = r / (dst->ne[1] * dst->ne[2]);
            for (int64_t ox = 0; ox < dst->ne[0]; ox++)
                acc[ox] = 0.0f;
            for (int64_t ky = 0; ky < KH; ky++) {
                const int64_t iy = oy * s1 - p1 + ky * d1;
                if (iy < 0 || iy >= H)
                    continue;
                const char *row = (const char *) b->data + iy * b->nb[1] + c * b->nb[2] + n * b->nb[3];
                for (int64_t kx = 0; kx < KW; kx++)
                    accumulate_tap(acc, dst->ne[0], row, b->nb[0], W, s0, p0, kx * d0, elem(a, kx, ky, 0, c));
            }
            store_row(dst, acc, oy, c, n);
        }
        return;
    }
    for (int64_t r = first; r < last; r++) {
        const int64_t oy = r % dst->ne[1], c = (r / dst->ne[1]) % dst->ne[2], n = r / (dst->ne[1] * dst->ne[2]);
        for (int64_t ox = 0; ox < dst->ne[0]; ox++) {
            float sum = 0.0f;
            for (int64_t ky = 0; ky < KH; ky++) {
                const int64_t iy = oy * s1 - p1 + ky * d1;
                if (iy < 0 || iy >= H)
                    continue;
                for (int64_t kx = 0; kx < KW; kx++) {
                    const int64_t ix = ox * s0 - p0 + kx * d0;
                    if (ix < 0 || ix >= W)
                        continue;
                    sum += elem(a, kx, ky, 0, c) * elem(b, ix, iy, c, n);
                }
            }
            *(float *) ggml__elem_ptr(dst, ox, oy, c, n) = sum;
        }
    }
}

/* dst [OW, OH, OC, N]: a [KW, KH, IC, OC], b [W, H, IC, N] */
static void conv_2d_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int s0 = ggml__get_op_params_i32(dst, 0), s1 = ggml__get_op_params_i32(dst, 1),
              p0 = ggml__get_op_params_i32(dst, 2), p1 = ggml__get_op_params_i32(dst, 3),
              d0 = ggml__get_op_params_i32(dst, 4), d1 = ggml__get_op_params_i32(dst, 5);
    const int64_t KW = a->ne[0], KH = a->ne[1], IC = a->ne[2], W = b->ne[0], H = b->ne[1];
    const int64_t rows = dst->ne[1] * dst->ne[2] * dst->ne[3];
    int64_t first, last;
    ggml__split_rows(rows, params->ith, params->nth, &first, &last);
    if (!params->use_ref && params->wdata != NULL) {
        float *acc = thread_row(params, dst);
        for (int64_t r = first; r < last; r++) {
            const int64_t oy = r % dst->ne[1], oc = (r / dst->ne[1]) % dst->ne[2], n = r / (dst->ne[1] * dst->ne[2]);
            for (int64_t ox = 0; ox < dst->ne[0]; ox++)
                acc[ox] = 0.0f;
            for (int64_t ic = 0; ic < IC; ic++)
                for (int64_t ky = 0; ky < KH; ky++) {
                    const int64_t iy = oy * s1 - p1 + ky * d1;
                    if (iy < 0 || iy >= H)
                        continue;
                    const char *row = (const char *) b->data + iy * b->nb[1] + ic * b->nb[2] + n * b->nb[3];
                    for (int64_t kx = 0; kx < KW; kx++)
                        accumulate_tap(acc, dst->ne[0], row, b->nb[0], W, s0, p0, kx * d0,
                                       elem(a, kx, ky, ic, oc));
                }
            store_row(dst, acc, oy, oc, n);
        }
        return;
    }
    for (int64_t r = first; r < last; r++) {
        const int64_t oy = r % dst->ne[1], oc = (r / dst->ne[1]) % dst->ne[2], n = r / (dst->ne[1] * dst->ne[2]);
        for (int64_t ox = 0; ox < dst->ne[0]; ox++) {
            float sum = 0.0f;
            for (int64_t ic = 0; ic < IC; ic++)
                for (int64_t ky = 0; ky < KH; ky++) {
                    const int64_t iy = oy * s1 - p1 + ky * d1;
                    if (iy < 0 || iy >= H)
                        continue;
                    for (int64_t kx = 0; kx < KW; kx++) {
                        const int64_t ix = ox * s0 - p0 + kx * d0;
                        if (ix < 0 || ix >= W)
                            continue;
                        sum += elem(a, kx, ky, ic, oc) * elem(b, ix, iy, ic, n);
                    }
                }
            *(float *) ggml__elem_ptr(dst, ox, oy, oc, n) = sum;
        }
    }
}

/* dst [OW, OH, OD, OC*N]: a [KW, KH, KD, IC*OC] (index oc*IC + ic), b [W, H, D, IC*N] (index n*IC + ic) */
static void conv_3d_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    int32_t p[12];
    for (int i = 0; i < 12; i++)
        p[i] = ggml__get_op_params_i32(dst, i);
    const int64_t IC = p[9], OC = p[11];
    const int64_t KW = a->ne[0], KH = a->ne[1], KD = a->ne[2], W = b->ne[0], H = b->ne[1], D = b->ne[2];
    const int64_t rows = dst->ne[1] * dst->ne[2] * dst->ne[3];
    int64_t first, last;
    ggml__split_rows(rows, params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const int64_t oy = r % dst->ne[1], oz = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
        const int64_t oc = i3 % OC, n = i3 / OC;
        for (int64_t ox = 0; ox < dst->ne[0]; ox++) {
            float sum = 0.0f;
            for (int64_t ic = 0; ic < IC; ic++)
                for (int64_t kz = 0; kz < KD; kz++) {
                    const int64_t iz = oz * p[2] - p[5] + kz * p[8];
                    if (iz < 0 || iz >= D)
                        continue;
                    for (int64_t ky = 0; ky < KH; ky++) {
                        const int64_t iy = oy * p[1] - p[4] + ky * p[7];
                        if (iy < 0 || iy >= H)
                            continue;
                        for (int64_t kx = 0; kx < KW; kx++) {
                            const int64_t ix = ox * p[0] - p[3] + kx * p[6];
                            if (ix < 0 || ix >= W)
                                continue;
                            sum += elem(a, kx, ky, kz, oc * IC + ic) * elem(b, ix, iy, iz, n * IC + ic);
                        }
                    }
                }
            *(float *) ggml__elem_ptr(dst, ox, oy, oz, i3) = sum;
        }
    }
}

const struct ggml__op_impl ggml__op_conv_transpose_1d = {
    .kernel = conv_transpose_1d_kernel,
    .supports = supports_conv_transpose_1d,
};

const struct ggml__op_impl ggml__op_conv_transpose_2d = {
    .kernel = conv_transpose_2d_kernel,
    .supports = supports_conv_transpose_2d,
};

const struct ggml__op_impl ggml__op_conv_2d_dw = {
    .kernel = conv_2d_dw_kernel,
    .supports = supports_conv_2d_dw,
    .work_size = conv_2d_work_size,
};

const struct ggml__op_impl ggml__op_conv_2d = {
    .kernel = conv_2d_kernel,
    .supports = supports_conv_2d,
    .work_size = conv_2d_work_size,
};

const struct ggml__op_impl ggml__op_conv_3d = {
    .kernel = conv_3d_kernel,
    .supports = supports_conv_3d,
};
