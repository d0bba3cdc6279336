/*
 * ops-deepseek.c - constructors of the DeepSeek V4 ops: the sparse
 * attention's lightning indexer (LIGHTNING_INDEXER) and the
 * hyper-connection ops (DSV4_HC_COMB, DSV4_HC_PRE, DSV4_HC_POST).
 *
 * Shapes, source slots and op_params are upstream ggml 0.21.0's:
 *   LIGHTNING_INDEXER  src q [n_embd, n_head, n_tokens, n_stream] F32,
 *       k [n_embd, 1, n_kv, n_stream] (F32 or any type with a decoder),
 *       weights [n_head, n_tokens, 1, n_stream] F32, mask [n_kv, n_tokens,
 *       1, n_mask] F16 with n_stream % n_mask == 0; result F32
 *       [n_kv, n_tokens, 1, n_stream].
 *   DSV4_HC_COMB  src mixes [(2 + hc) hc, n_tokens], scale [>= 3],
 *       base [(2 + hc) hc], all F32; op_params { float eps, int32 n_iter };
 *       result F32 [hc, hc, n_tokens].
 *   DSV4_HC_PRE   src x [n_embd, hc, n_tokens], weights [hc, n_tokens];
 *       result F32 [n_embd, n_tokens].
 *   DSV4_HC_POST  src x [n_embd, n_tokens], residual [n_embd, hc,
 *       n_tokens], post [hc, n_tokens], comb [hc, hc, n_tokens]; result
 *       F32 [n_embd, hc, n_tokens].
 * What each computes: lib/cpu/ops/deepseek.c.  Constructors follow the
 * library's rules: a NULL input gives NULL without a message; a bad
 * argument gives NULL and one message.
 */
#include "config.h"

#include <inttypes.h>

#include "ggml-impl.h"

#define SHAPE_FMT "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]"
#define SHAPE_ARGS(t) (t)->ne[0], (t)->ne[1], (t)->ne[2], (t)->ne[3]

/* Logs as func and returns false unless t has type want. */
static bool check_type(const struct ggml_tensor *t, enum ggml_type want, const char *what, const char *func)
{
    if (t->type == want)
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s '%s' must be %s, not %s", what, t->name, ggml_type_name(want),
                 ggml_type_name(t->type));
    return false;
}

/* Logs as func that the shapes of the listed tensors do not fit; returns NULL. */
static struct ggml_tensor *shapes_do_not_fit(const char *func, const struct ggml_tensor *const *t, int n)
{
    char text[512];
    int used = 0;
    for (int i = 0; i < n && used < (int) sizeof text; i++)
        used += snprintf(text + used, sizeof text - (size_t) used, "%s'%s' " SHAPE_FMT, i ? ", " : "",
                         t[i]->name, SHAPE_ARGS(t[i]));
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "shapes do not fit: %s", text);
    return NULL;
}

/*
 * The shape rules of the four ops, shared by the constructors and by
 * ggml__deepseek_node_fits (nodes that came from elsewhere than the
 * constructors, for the CPU backend's kernels, which index by them).
 */
static bool indexer_fits(const struct ggml_tensor *q, const struct ggml_tensor *k, const struct ggml_tensor *weights,
                         const struct ggml_tensor *mask)
{
    return q->ne[0] == k->ne[0] && k->ne[1] == 1 && mask->ne[0] == k->ne[2] && q->ne[1] == weights->ne[0] &&
           q->ne[2] == weights->ne[1] && weights->ne[2] == 1 && mask->ne[1] == q->ne[2] && mask->ne[2] == 1 &&
           q->ne[3] == k->ne[3] && k->ne[3] == weights->ne[3] && mask->ne[3] > 0 &&
           weights->ne[3] % mask->ne[3] == 0 && ggml_blck_size(k->type) > 0 &&
           k->ne[0] % ggml_blck_size(k->type) == 0;
}

static void indexer_shape(const struct ggml_tensor *q, const struct ggml_tensor *k, int64_t ne[4])
{
    ne[0] = k->ne[2];
    ne[1] = q->ne[2];
    ne[2] = 1;
    ne[3] = q->ne[3];
}

/* The hc with (2 + hc) hc == n, or 0. */
static int64_t hyper_connections_of(int64_t n)
{
    for (int64_t hc = 1; (2 + hc) * hc <= n; hc++)
        if ((2 + hc) * hc == n)
            return hc;
    return 0;
}

/* The hyper-connection count of fitting DSV4_HC_COMB operands, or 0. */
static int64_t hc_comb_fits(const struct ggml_tensor *mixes, const struct ggml_tensor *scale,
                            const struct ggml_tensor *base)
{
    const int64_t hc = hyper_connections_of(mixes->ne[0]);
    const bool fit = hc > 0 && hc <= GGML__DSV4_HC_MAX && mixes->ne[2] == 1 && mixes->ne[3] == 1 &&
                     scale->ne[0] >= 3 && ggml_nrows(scale) == 1 && base->ne[0] == mixes->ne[0] &&
                     ggml_nrows(base) == 1;
    return fit ? hc : 0;
}

static bool hc_pre_fits(const struct ggml_tensor *x, const struct ggml_tensor *weights)
{
    return x->ne[1] > 0 && x->ne[3] == 1 && weights->ne[0] == x->ne[1] && weights->ne[1] == x->ne[2] &&
           weights->ne[2] == 1 && weights->ne[3] == 1;
}

static bool hc_post_fits(const struct ggml_tensor *x, const struct ggml_tensor *residual,
                         const struct ggml_tensor *post, const struct ggml_tensor *comb)
{
    const int64_t n_embd = x->ne[0], n_tokens = x->ne[1], hc = residual->ne[1];
    return hc > 0 && x->ne[2] == 1 && x->ne[3] == 1 && residual->ne[0] == n_embd && residual->ne[2] == n_tokens &&
           residual->ne[3] == 1 && post->ne[0] == hc && post->ne[1] == n_tokens && post->ne[2] == 1 &&
           post->ne[3] == 1 && comb->ne[0] == hc && comb->ne[1] == hc && comb->ne[2] == n_tokens &&
           comb->ne[3] == 1;
}

static bool all_f32(const struct ggml_tensor *node, int n_src)
{
    for (int j = 0; j < n_src; j++)
        if (node->src[j] == NULL || node->src[j]->type != GGML_TYPE_F32)
            return false;
    return node->type == GGML_TYPE_F32;
}

static bool shape_is(const struct ggml_tensor *t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    return t->ne[0] == ne0 && t->ne[1] == ne1 && t->ne[2] == ne2 && t->ne[3] == ne3;
}

bool ggml__deepseek_node_fits(const struct ggml_tensor *node)
{
    const struct ggml_tensor *const *src = (const struct ggml_tensor *const *) node->src;
    switch (node->op) {
    case GGML_OP_LIGHTNING_INDEXER: {
        if (src[0] == NULL || src[1] == NULL || src[2] == NULL || src[3] == NULL ||
            src[0]->type != GGML_TYPE_F32 || src[2]->type != GGML_TYPE_F32 || src[3]->type != GGML_TYPE_F16 ||
            node->type != GGML_TYPE_F32 || !indexer_fits(src[0], src[1], src[2], src[3]))
            return false;
        int64_t ne[4];
        indexer_shape(src[0], src[1], ne);
        return shape_is(node, ne[0], ne[1], ne[2], ne[3]);
    }
    case GGML_OP_DSV4_HC_COMB: {
        if (!all_f32(node, 3) || ggml__get_op_params_i32(node, 1) < 1)
            return false;
        const int64_t hc = hc_comb_fits(src[0], src[1], src[2]);
        return hc > 0 && shape_is(node, hc, hc, src[0]->ne[1], 1);
    }
    case GGML_OP_DSV4_HC_PRE:
        return all_f32(node, 2) && hc_pre_fits(src[0], src[1]) && shape_is(node, src[0]->ne[0], src[0]->ne[2], 1, 1);
    case GGML_OP_DSV4_HC_POST:
        return all_f32(node, 4) && hc_post_fits(src[0], src[1], src[2], src[3]) &&
               shape_is(node, src[0]->ne[0], src[1]->ne[1], src[0]->ne[1], 1);
    default:
        return false;
    }
}

struct ggml_tensor *ggml_lightning_indexer(struct ggml_context *ctx, struct ggml_tensor *q, struct ggml_tensor *k,
                                           struct ggml_tensor *weights, struct ggml_tensor *mask)
{
    if (q == NULL || k == NULL || weights == NULL || mask == NULL)
        return NULL;
    if (!check_type(q, GGML_TYPE_F32, "query", __func__) || !check_type(weights, GGML_TYPE_F32, "weights", __func__) ||
        !check_type(mask, GGML_TYPE_F16, "mask", __func__))
        return NULL;
    if (k->type != GGML_TYPE_F32 && ggml_get_type_traits(k->type)->to_float == NULL) {
        ggml__error("keys '%s' of type %s cannot be read as floats", k->name, ggml_type_name(k->type));
        return NULL;
    }
    if (!indexer_fits(q, k, weights, mask)) {
        const struct ggml_tensor *all[4] = { q, k, weights, mask };
        return shapes_do_not_fit(__func__, all, 4);
    }
    int64_t ne[4];
    indexer_shape(q, k, ne);
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_F32, 4, ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_LIGHTNING_INDEXER;
    result->src[0] = q;
    result->src[1] = k;
    result->src[2] = weights;
    result->src[3] = mask;
    return result;
}


struct ggml_tensor *ggml_dsv4_hc_comb(struct ggml_context *ctx, struct ggml_tensor *mixes, struct ggml_tensor *scale,
                                      struct ggml_tensor *base, float eps, int32_t n_iter)
{
    if (mixes == NULL || scale == NULL || base == NULL)
        return NULL;
    if (!check_type(mixes, GGML_TYPE_F32, "mixes", __func__) || !check_type(scale, GGML_TYPE_F32, "scale", __func__) ||
        !check_type(base, GGML_TYPE_F32, "base", __func__))
        return NULL;
    if (n_iter < 1) {
        ggml__error("n_iter = %d: at least one normalization is made", (int) n_iter);
        return NULL;
    }
    const int64_t hc = hc_comb_fits(mixes, scale, base);
    if (hc == 0) {
        ggml__error("mixes '%s' " SHAPE_FMT " must hold (2 + hc) hc values a token (hc up to %d), scale '%s' "
                    SHAPE_FMT " at least 3 values, base '%s' " SHAPE_FMT " one row like a token's mixes",
                    mixes->name, SHAPE_ARGS(mixes), GGML__DSV4_HC_MAX, scale->name, SHAPE_ARGS(scale), base->name,
                    SHAPE_ARGS(base));
        return NULL;
    }
    const int64_t ne[3] = { hc, hc, mixes->ne[1] };
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_F32, 3, ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_f32(result, 0, eps);
    ggml__set_op_params_i32(result, 1, n_iter);
    result->op = GGML_OP_DSV4_HC_COMB;
    result->src[0] = mixes;
    result->src[1] = scale;
    result->src[2] = base;
    return result;
}

struct ggml_tensor *ggml_dsv4_hc_pre(struct ggml_context *ctx, struct ggml_tensor *x, struct ggml_tensor *weights)
{
    if (x == NULL || weights == NULL)
        return NULL;
    if (!check_type(x, GGML_TYPE_F32, "input", __func__) || !check_type(weights, GGML_TYPE_F32, "weights", __func__))
        return NULL;
    if (!hc_pre_fits(x, weights)) {
        const struct ggml_tensor *all[2] = { x, weights };
        return shapes_do_not_fit(__func__, all, 2);
    }
    const int64_t ne[2] = { x->ne[0], x->ne[2] };
    return ggml__new_op_node(ctx, GGML_OP_DSV4_HC_PRE, GGML_TYPE_F32, 2, ne, x, weights, NULL, 0, __func__);
}

struct ggml_tensor *ggml_dsv4_hc_post(struct ggml_context *ctx, struct ggml_tensor *x, struct ggml_tensor *residual,
                                      struct ggml_tensor *post, struct ggml_tensor *comb)
{
    if (x == NULL || residual == NULL || post == NULL || comb == NULL)
        return NULL;
    if (!check_type(x, GGML_TYPE_F32, "input", __func__) ||
        !check_type(residual, GGML_TYPE_F32, "residual", __func__) ||
        !check_type(post, GGML_TYPE_F32, "post", __func__) || !check_type(comb, GGML_TYPE_F32, "comb", __func__))
        return NULL;
    const int64_t n_embd = x->ne[0], n_tokens = x->ne[1], hc = residual->ne[1];
    if (!hc_post_fits(x, residual, post, comb)) {
        const struct ggml_tensor *all[4] = { x, residual, post, comb };
        return shapes_do_not_fit(__func__, all, 4);
    }
    const int64_t ne[3] = { n_embd, hc, n_tokens };
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_F32, 3, ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_DSV4_HC_POST;
    result->src[0] = x;
    result->src[1] = residual;
    result->src[2] = post;
    result->src[3] = comb;
    return result;
}
