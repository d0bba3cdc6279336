/*
 * conv.c - CPU kernels of IM2COL, IM2COL_3D and COL2IM_1D.
 *
 * IM2COL: dst row (ow, oh, n) holds, for every input channel c, kernel row kh and
 * kernel column kw (in that nesting), the input sample at
 * x = ow*s0 + kw*d0 - p0, y = oh*s1 + kh*d1 - p1 of channel c, batch n, or
 * 0 when (x, y) falls outside the input.  In 1-d mode there is no y (one
 * kernel row, one output row) and the batch is b's dimension 2.  The
 * input may be F32 or F16 with any strides; dst is F32 or F16 and
 * contiguous.  Threads share the dst rows.
 */
#include "config.h"

#include <string.h>

#include "cpu-private.h"
#include "ggml-impl.h"

struct im2col_geometry {
    int32_t s0, s1, p0, p1, d0, d1;
    int64_t N, IC, IH, IW, KH, KW, OH, OW;
    size_t nb_w, nb_h, nb_c, nb_n;       /* input strides in bytes */
};

static struct im2col_geometry im2col_geometry(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *kernel = dst->src[0];
    const struct ggml_tensor *input = dst->src[1];
    const int32_t *op = (const int32_t *) dst->op_params;
    const bool is_2d = op[6] != 0;
    struct im2col_geometry g = {
        .s0 = op[0], .s1 = op[1], .p0 = op[2], .p1 = op[3], .d0 = op[4], .d1 = op[5],
        .N = is_2d ? input->ne[3] : input->ne[2],
        .IC = is_2d ? input->ne[2] : input->ne[1],
        .IH = is_2d ? input->ne[1] : 1,
        .IW = input->ne[0],
        .KH = is_2d ? kernel->ne[1] : 1,
        .KW = kernel->ne[0],
        .OH = is_2d ? dst->ne[2] : 1,
        .OW = dst->ne[1],
        .nb_w = input->nb[0],
        .nb_h = is_2d ? input->nb[1] : 0,
        .nb_c = is_2d ? input->nb[2] : input->nb[1],
        .nb_n = is_2d ? input->nb[3] : input->nb[2],
    };
    return g;
}

static bool im2col_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *input = dst->src[1];
    if (dst->src[0] == NULL || input == NULL)
        return false;
    if (dst->type != GGML_TYPE_F32 && dst->type != GGML_TYPE_F16)
        return false;
    if (input->type != GGML_TYPE_F32 && input->type != GGML_TYPE_F16)
        return false;
    /* dst must have exactly the rows the geometry describes */
    const struct im2col_geometry g = im2col_geometry(dst);
    const bool is_2d = ((const int32_t *) dst->op_params)[6] != 0;
    if (dst->ne[0] != g.IC * g.KH * g.KW || (is_2d ? dst->ne[3] != g.N : dst->ne[2] != g.N || dst->ne[3] != 1))
        return false;
    return ggml_is_contiguous(dst);
}

/* Fast path scratch: one F32 row of dst per thread. */
static size_t im2col_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    return (size_t) n_tasks * ((size_t) dst->ne[0] * sizeof(float) + 64);
}

/* Fills row (ow, oh, n) of the unfolded input into out[0 .. IC*KH*KW). */
static void im2col_row_f32(const struct im2col_geometry *g, const float *src_base, int64_t n, int64_t oh,
                           int64_t ow, float *out)
{
    const size_t sw = g->nb_w / sizeof(float);
    const size_t sh = g->nb_h / sizeof(float);
    const size_t sc = g->nb_c / sizeof(float);
    const size_t sn = g->nb_n / sizeof(float);
    for (int64_t c = 0; c < g->IC; c++) {
        const float *plane = src_base + (size_t) n * sn + (size_t) c * sc;
        for (int64_t kh = 0; kh < g->KH; kh++) {
            float *o = out + (c * g->KH + kh) * g->KW;
            const int64_t y = oh * g->s1 + kh * g->d1 - g->p1;
            if (y < 0 || y >= g->IH) {
                memset(o, 0, (size_t) g->KW * sizeof(float));
                continue;
            }
            const float *line = plane + (size_t) y * sh;
            const int64_t x0 = ow * g->s0 - g->p0;
            for (int64_t kw = 0; kw < g->KW; kw++) {
                const int64_t x = x0 + kw * g->d0;
                o[kw] = (x >= 0 && x < g->IW) ? line[(size_t) x * sw] : 0.0f;
            }
        }
    }
}

static void im2col_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *input = dst->src[1];
    const struct im2col_geometry g = im2col_geometry(dst);
    const int64_t row_len = dst->ne[0];
    const int64_t n_rows = g.N * g.OH * g.OW;
    int64_t first, last;
    ggml__split_rows(n_rows, params->ith, params->nth, &first, &last);

    const bool fast = !params->use_ref && input->type == GGML_TYPE_F32 && g.nb_w % sizeof(float) == 0 &&
                      g.nb_h % sizeof(float) == 0 && g.nb_c % sizeof(float) == 0 && g.nb_n % sizeof(float) == 0;
    float *scratch = NULL;
    if (fast && dst->type != GGML_TYPE_F32)
        scratch = (float *) ((char *) params->wdata + (size_t) params->ith * ((size_t) row_len * sizeof(float) + 64));

    for (int64_t r = first; r < last; r++) {
        const int64_t ow = r % g.OW;
        const int64_t oh = (r / g.OW) % g.OH;
        const int64_t n = r / (g.OW * g.OH);
        char *drow = (char *) dst->data + (size_t) r * dst->nb[1];
        if (fast) {
            float *out = dst->type == GGML_TYPE_F32 ? (float *) drow : scratch;
            im2col_row_f32(&g, (const float *) input->data, n, oh, ow, out);
            if (out == scratch) {
                ggml_fp16_t *h = (ggml_fp16_t *) drow;
                for (int64_t i = 0; i < row_len; i++)
                    h[i] = ggml__fp32_to_fp16(scratch[i]);
            }
            continue;
        }
        /* reference: one element at a time through the generic loaders */
        const size_t dsz = ggml_type_size(dst->type);
        for (int64_t c = 0; c < g.IC; c++)
            for (int64_t kh = 0; kh < g.KH; kh++)
                for (int64_t kw = 0; kw < g.KW; kw++) {
                    const int64_t x = ow * g.s0 + kw * g.d0 - g.p0;
                    const int64_t y = oh * g.s1 + kh * g.d1 - g.p1;
                    float v = 0.0f;
                    if (x >= 0 && x < g.IW && y >= 0 && y < g.IH)
                        v = ggml__load_float(input->type, (const char *) input->data + (size_t) n * g.nb_n +
                                             (size_t) c * g.nb_c + (size_t) y * g.nb_h + (size_t) x * g.nb_w);
                    ggml__store_float(dst->type, drow + (size_t) ((c * g.KH + kh) * g.KW + kw) * dsz, v);
                }
    }
}

const struct ggml__op_impl ggml__op_im2col = {
    .kernel = im2col_kernel,
    .supports = im2col_supports,
    .work_size = im2col_work_size,
};

/*
 * IM2COL_3D: input [IW, IH, ID, N*IC (+ channels not read)] (channel c of
 * batch n at index n*IC + c of dimension 3), dst [IC*KD*KH*KW, OW, OH, OD*N] with row
 * (ow, oh, n*OD + od) holding, channel-major then depth, row, column of the
 * kernel, the sample at (ow*s0 + kw*d0 - p0, oh*s1 + kh*d1 - p1,
 * od*s2 + kd*d2 - p2) or 0 in the padding.  One generic path serves both
 * use_ref settings.
 */
static bool im2col_3d_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *kernel = dst->src[0], *input = dst->src[1];
    if (kernel == NULL || input == NULL)
        return false;
    if (dst->type != GGML_TYPE_F32 && dst->type != GGML_TYPE_F16)
        return false;
    if (input->type != GGML_TYPE_F32 && input->type != GGML_TYPE_F16)
        return false;
    const int32_t IC = ((const int32_t *) dst->op_params)[9];
    if (IC <= 0 || dst->ne[0] != kernel->ne[0] * kernel->ne[1] * kernel->ne[2] * IC)
        return false;
    /* an input of no batches gives an empty result, which is never computed */
    const int64_t N = input->ne[3] / IC;
    return (N > 0 ? dst->ne[3] % N == 0 : dst->ne[3] == 0) && ggml_is_contiguous(dst);
}

static void im2col_3d_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *kernel = dst->src[0], *input = dst->src[1];
    const int32_t *op = (const int32_t *) dst->op_params;
    const int64_t s0 = op[0], s1 = op[1], s2 = op[2], p0 = op[3], p1 = op[4], p2 = op[5];
    const int64_t d0 = op[6], d1 = op[7], d2 = op[8], IC = op[9];
    const int64_t KW = kernel->ne[0], KH = kernel->ne[1], KD = kernel->ne[2];
    const int64_t IW = input->ne[0], IH = input->ne[1], ID = input->ne[2];
    const int64_t OW = dst->ne[1], OH = dst->ne[2];
    const int64_t N = input->ne[3] / IC;
    const int64_t OD = dst->ne[3] / N;
    const size_t dsz = ggml_type_size(dst->type);
    int64_t first, last;
    ggml__split_rows(N * OD * OH * OW, params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const int64_t ow = r % OW, oh = (r / OW) % OH, od = (r / (OW * OH)) % OD, n = r / (OW * OH * OD);
        char *drow = (char *) dst->data + (size_t) r * dst->nb[1];
        int64_t i = 0;
        for (int64_t c = 0; c < IC; c++)
            for (int64_t kd = 0; kd < KD; kd++)
                for (int64_t kh = 0; kh < KH; kh++)
                    for (int64_t kw = 0; kw < KW; kw++, i++) {
                        const int64_t x = ow * s0 + kw * d0 - p0;
                        const int64_t y = oh * s1 + kh * d1 - p1;
                        const int64_t z = od * s2 + kd * d2 - p2;
                        float v = 0.0f;
                        if (x >= 0 && x < IW && y >= 0 && y < IH && z >= 0 && z < ID)
                            v = ggml__load_float(input->type, (const char *) input->data + (size_t) x * input->nb[0] +
                                                 (size_t) y * input->nb[1] + (size_t) z * input->nb[2] +
                                                 (size_t) (n * IC + c) * input->nb[3]);
                        ggml__store_float(dst->type, drow + (size_t) i * dsz, v);
                    }
    }
}

const struct ggml__op_impl ggml__op_im2col_3d = {
    .kernel = im2col_3d_kernel,
    .supports = im2col_3d_supports,
};

/*
 * COL2IM_1D: columns [K*OC, T_in] (row oc*K + k, column t) overlap-added
 * into dst [T_out, OC]: dst[t, oc] sums col[oc*K + k, t_in] over every
 * (t_in, k) with t_in*s0 + k == t + p0.  Written as a gather, one output
 * sample at a time, accumulating in F32; dst has the columns' type (F32,
 * F16 or BF16) and is contiguous.  Threads share the output samples.
 */
static bool col2im_1d_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *col = dst->src[0];
    if (col == NULL || col->type != dst->type || !ggml_is_contiguous(dst))
        return false;
    if (dst->type != GGML_TYPE_F32 && dst->type != GGML_TYPE_F16 && dst->type != GGML_TYPE_BF16)
        return false;
    const int32_t *op = (const int32_t *) dst->op_params;
    return op[0] > 0 && op[1] > 0 && col->ne[0] % op[1] == 0 && dst->ne[1] == op[1];
}

static void col2im_1d_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *col = dst->src[0];
    const int32_t *op = (const int32_t *) dst->op_params;
    const int64_t s0 = op[0], OC = op[1], p0 = op[2];
    const int64_t K = col->ne[0] / OC, T_in = col->ne[1], T_out = dst->ne[0];
    int64_t first, last;
    ggml__split_rows(T_out, params->ith, params->nth, &first, &last);
    for (int64_t oc = 0; oc < OC; oc++)
        for (int64_t t = first; t < last; t++) {
            const int64_t pos = t + p0;
            /* t_in ranges over the inputs whose window [t_in*s0, t_in*s0 + K) holds pos */
            int64_t t_lo = pos - K + 1 <= 0 ? 0 : (pos - K + 1 + s0 - 1) / s0;
            int64_t t_hi = pos / s0;
            if (t_hi > T_in - 1)
                t_hi = T_in - 1;
            float sum = 0.0f;
            for (int64_t ti = t_lo; ti <= t_hi; ti++) {
                const int64_t k = pos - ti * s0;
                sum += ggml__load_float(col->type, (const char *) col->data + (size_t) (oc * K + k) * col->nb[0] +
                                        (size_t) ti * col->nb[1]);
            }
            ggml__store_float(dst->type, (char *) dst->data + (size_t) t * dst->nb[0] + (size_t) oc * dst->nb[1], sum);
        }
}

const struct ggml__op_impl ggml__op_col2im_1d = {
    .kernel = col2im_1d_kernel,
    .supports = col2im_1d_supports,
};
