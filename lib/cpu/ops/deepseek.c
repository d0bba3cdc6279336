/*
 * ops/deepseek.c - the DeepSeek V4 ops (constructors, shapes and source
 * slots: lib/ops-deepseek.c).
 *
 * LIGHTNING_INDEXER scores every key for every token of every stream s:
 *     dst[j, t, s] = sum over heads h of max(q[:, h, t, s] . k[:, j, s], 0) w[h, t, s]
 *                    + mask[j, t, s mod n_mask]
 * (the weights come prescaled).  Keys of any type with a decoder are
 * converted a row at a time; threads split the keys.
 *
 * DSV4_HC_COMB makes each token's hc x hc stream-mixing matrix C[dst, src]
 * (element dst + hc src of the result) from its logits
 *     L[dst, src] = mixes[2 hc + dst + hc src] scale[2] + base[2 hc + dst + hc src]:
 * a softmax over dst for each src plus eps, then the columns (over src,
 * for each dst) normalized to sum 1, then n_iter - 1 rounds of
 * normalizing over dst for each src and then over src for each dst
 * (Sinkhorn's iteration toward a doubly stochastic matrix).  Every
 * normalization divides by the sum plus eps.  Threads split the tokens.
 *
 * DSV4_HC_PRE  dst[i, t] = sum over h of x[i, h, t] w[h, t]
 * DSV4_HC_POST dst[i, d, t] = x[i, t] post[d, t] + sum over s of residual[i, s, t] comb[d, s, t]
 * Threads split the output rows.
 *
 * All F32 (keys excepted), any strides; sums in F32 in the order written.
 */
#include "config.h"

#include <math.h>

#include "ggml-impl.h"
#include "cpu-private.h"

/* ---------------------------------------------------- LIGHTNING_INDEXER */

/* Keys other than packed F32 rows are decoded into scratch: one row a thread. */
static bool indexer_decodes_keys(const struct ggml_tensor *k)
{
    return k->type != GGML_TYPE_F32 || k->nb[0] != sizeof(float);
}

static bool indexer_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *k = dst->src[1];
    if (!ggml__deepseek_node_fits(dst))
        return false;
    /* decoded keys are whole rows of adjacent blocks */
    return k->type == GGML_TYPE_F32 ||
           (ggml_get_type_traits(k->type)->to_float != NULL && k->nb[0] == ggml_type_size(k->type));
}

static size_t indexer_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    const struct ggml_tensor *k = dst->src[1];
    return indexer_decodes_keys(k) ? (size_t) n_tasks * (size_t) (k->ne[0] + 16) * sizeof(float) : 0;
}

static void indexer_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *q = dst->src[0], *k = dst->src[1], *w = dst->src[2], *mask = dst->src[3];
    const int64_t n_embd = q->ne[0], n_head = q->ne[1], n_tokens = q->ne[2], n_stream = q->ne[3];
    const int64_t n_kv = k->ne[2];
    const bool decode = indexer_decodes_keys(k);
    const ggml_to_float_t key_to_float = ggml_get_type_traits(k->type)->to_float;
    float *key = decode ? (float *) params->wdata + (size_t) params->ith * (size_t) (n_embd + 16) : NULL;
    int64_t first, last;
    ggml__split_rows(n_kv, params->ith, params->nth, &first, &last);
    for (int64_t s = 0; s < n_stream; s++)
        for (int64_t j = first; j < last; j++) {
            const char *krow = (const char *) k->data + j * k->nb[2] + s * k->nb[3];
            if (decode && k->type == GGML_TYPE_F32)
                ggml__load_row_float(k->type, krow, k->nb[0], n_embd, key);
            else if (decode)
                key_to_float(krow, key, n_embd);
            const float *kv = decode ? key : (const float *) (const void *) krow;
            for (int64_t t = 0; t < n_tokens; t++) {
                float score = 0.0f;
                for (int64_t h = 0; h < n_head; h++) {
                    float qk = 0.0f;
                    for (int64_t i = 0; i < n_embd; i++)
                        qk += ggml__f32_at(q, i, h, t, s) * kv[i];
                    score += (qk > 0.0f ? qk : 0.0f) * ggml__f32_at(w, h, t, 0, s);
                }
                const ggml_fp16_t m = *(const ggml_fp16_t *) (const void *) ((const char *) mask->data +
                                                                           j * mask->nb[0] + t * mask->nb[1] +
                                                                           (s % mask->ne[3]) * mask->nb[3]);
                *(float *) ggml__elem_ptr(dst, j, t, 0, s) = score + ggml_fp16_to_fp32(m);
            }
        }
}

const struct ggml__op_impl ggml__op_lightning_indexer = {
    .kernel = indexer_kernel,
    .supports = indexer_supports,
    .work_size = indexer_work_size,
};

/* --------------------------------------------------------- DSV4_HC_COMB */

/*
 * Divides the hc entries of c at c[first + i * stride] (i < hc) by their
 * sum plus eps.
 */
static void normalize_line(float *c, int64_t hc, int64_t first, int64_t stride, float eps)
{
    float sum = eps;
    for (int64_t i = 0; i < hc; i++)
        sum += c[first + i * stride];
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < hc; i++)
        c[first + i * stride] *= inv;
}

static void hc_comb_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *mixes = dst->src[0], *scale = dst->src[1], *base = dst->src[2];
    const int64_t hc = dst->ne[0], n_tokens = dst->ne[2];
    const float eps = ggml__get_op_params_f32(dst, 0);
    const int32_t n_iter = ggml__get_op_params_i32(dst, 1);
    const float scale_comb = ggml__f32_at(scale, 2, 0, 0, 0);
    int64_t first, last;
    ggml__split_rows(n_tokens, params->ith, params->nth, &first, &last);
    for (int64_t t = first; t < last; t++) {
        float c[GGML__DSV4_HC_MAX * GGML__DSV4_HC_MAX];   /* c[dst + hc src] */
        for (int64_t src = 0; src < hc; src++) {
            float max = -INFINITY;
            for (int64_t d = 0; d < hc; d++) {
                const int64_t at = 2 * hc + d + hc * src;
                c[d + hc * src] = ggml__f32_at(mixes, at, t, 0, 0) * scale_comb + ggml__f32_at(base, at, 0, 0, 0);
                max = c[d + hc * src] > max ? c[d + hc * src] : max;
            }
            float sum = 0.0f;
            for (int64_t d = 0; d < hc; d++) {
                c[d + hc * src] = expf(c[d + hc * src] - max);
                sum += c[d + hc * src];
            }
            const float inv = 1.0f / sum;
            for (int64_t d = 0; d < hc; d++)
                c[d + hc * src] = c[d + hc * src] * inv + eps;
        }
        for (int64_t d = 0; d < hc; d++)
            normalize_line(c, hc, d, hc, eps);            /* over src, for each dst */
        for (int32_t it = 1; it < n_iter; it++) {
            for (int64_t src = 0; src < hc; src++)
                normalize_line(c, hc, hc * src, 1, eps);  /* over dst, for each src */
            for (int64_t d = 0; d < hc; d++)
                normalize_line(c, hc, d, hc, eps);
        }
        for (int64_t src = 0; src < hc; src++)
            for (int64_t d = 0; d < hc; d++)
                *(float *) ggml__elem_ptr(dst, d, src, t, 0) = c[d + hc * src];
    }
}

const struct ggml__op_impl ggml__op_dsv4_hc_comb = {
    .kernel = hc_comb_kernel,
    .supports = ggml__deepseek_node_fits,
};

/* ---------------------------------------------- DSV4_HC_PRE, DSV4_HC_POST */

static void hc_pre_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *x = dst->src[0], *w = dst->src[1];
    const int64_t n_embd = x->ne[0], hc = x->ne[1];
    int64_t first, last;
    ggml__split_rows(dst->ne[1], params->ith, params->nth, &first, &last);
    for (int64_t t = first; t < last; t++)
        for (int64_t i = 0; i < n_embd; i++) {
            float sum = 0.0f;
            for (int64_t h = 0; h < hc; h++)
                sum += ggml__f32_at(x, i, h, t, 0) * ggml__f32_at(w, h, t, 0, 0);
            *(float *) ggml__elem_ptr(dst, i, t, 0, 0) = sum;
        }
}

const struct ggml__op_impl ggml__op_dsv4_hc_pre = {
    .kernel = hc_pre_kernel,
    .supports = ggml__deepseek_node_fits,
};

static void hc_post_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *x = dst->src[0], *residual = dst->src[1], *post = dst->src[2], *comb = dst->src[3];
    const int64_t n_embd = dst->ne[0], hc = dst->ne[1];
    int64_t first, last;
    ggml__split_rows(dst->ne[1] * dst->ne[2], params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const int64_t d = r % hc, t = r / hc;
        const float p = ggml__f32_at(post, d, t, 0, 0);
        for (int64_t i = 0; i < n_embd; i++) {
            float sum = ggml__f32_at(x, i, t, 0, 0) * p;
            for (int64_t s = 0; s < hc; s++)
                sum += ggml__f32_at(residual, i, s, t, 0) * ggml__f32_at(comb, d, s, t, 0);
            *(float *) ggml__elem_ptr(dst, i, d, t, 0) = sum;
        }
    }
}

const struct ggml__op_impl ggml__op_dsv4_hc_post = {
    .kernel = hc_post_kernel,
    .supports = ggml__deepseek_node_fits,
};
