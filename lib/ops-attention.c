/*
 * ops-attention.c - constructor of the fused attention FLASH_ATTN_EXT and
 * its node settings (precision, sinks).
 *
 * Shapes, op_params layout and source slots are upstream ggml's:
 *   src[0] q     [D_k, n_q,  n_head,    n_seq]
 *   src[1] k     [D_k, n_kv, n_head_kv, n_seq]
 *   src[2] v     [D_v, n_kv, n_head_kv, n_seq]   (rows of V, not transposed)
 *   src[3] mask  [>= n_kv, >= n_q, n_head / r2, n_seq / r3], F16, optional
 *   src[4] sinks [n_head], F32, optional (ggml_flash_attn_ext_add_sinks)
 *   result       [D_v, n_head, n_q, n_seq], F32 (heads and queries swapped)
 *   op_params    float { scale, max_bias, logit_softcap }, int32 [3] the
 *                precision (enum ggml_prec, GGML_PREC_DEFAULT at creation)
 * n_head must be a multiple of n_head_kv (grouped-query attention) and of
 * the mask's ne[2]; n_seq a multiple of the mask's ne[3].  Which element
 * types are computed is the backend's business (the CPU backend's kernel
 * says so through supports_op), as upstream.
 *
 * Constructors follow the library's rules: a NULL input gives NULL without
 * a message; a bad argument gives NULL and one message.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>

#include "ggml-impl.h"

#define SHAPE_FMT "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]"
#define SHAPE_ARGS(t) (t)->ne[0], (t)->ne[1], (t)->ne[2], (t)->ne[3]

/* True when d divides n (an extent of 0 divides only 0). */
static bool divides(int64_t d, int64_t n)
{
    return d > 0 ? n % d == 0 : n == 0;
}

/* q, k and v agree on D_k, n_kv, the head grouping and the sequences. */
static bool check_qkv(const struct ggml_tensor *q, const struct ggml_tensor *k, const struct ggml_tensor *v,
                      const char *func)
{
    if (k->ne[0] != q->ne[0]) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "k '%s' " SHAPE_FMT " and q '%s' " SHAPE_FMT " differ in the head size ne[0]",
                     k->name, SHAPE_ARGS(k), q->name, SHAPE_ARGS(q));
        return false;
    }
    if (v->ne[1] != k->ne[1]) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "v '%s' " SHAPE_FMT " and k '%s' " SHAPE_FMT " differ in the number of keys ne[1]",
                     v->name, SHAPE_ARGS(v), k->name, SHAPE_ARGS(k));
        return false;
    }
    if (!divides(k->ne[2], q->ne[2]) || !divides(v->ne[2], q->ne[2])) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "the %" PRId64 " heads of q '%s' are not a multiple of the %" PRId64
                     " heads of k '%s' and the %" PRId64 " of v '%s'",
                     q->ne[2], q->name, k->ne[2], k->name, v->ne[2], v->name);
        return false;
    }
    if (k->ne[3] != q->ne[3] || v->ne[3] != q->ne[3]) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "q '%s', k '%s' and v '%s' differ in ne[3] (%" PRId64 ", %" PRId64 ", %" PRId64 ")",
                     q->name, k->name, v->name, q->ne[3], k->ne[3], v->ne[3]);
        return false;
    }
    return true;
}

/* The mask covers every (key, query) pair and broadcasts over heads and sequences. */
static bool check_mask(const struct ggml_tensor *q, const struct ggml_tensor *k, const struct ggml_tensor *mask,
                       const char *func)
{
    if (mask->type != GGML_TYPE_F16) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the mask '%s' is %s; it must be f16", mask->name,
                     ggml_type_name(mask->type));
        return false;
    }
    if (!ggml_is_contiguous(mask)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the mask '%s' must be contiguous", mask->name);
        return false;
    }
    const int64_t rows_needed = GGML_PAD(q->ne[1], GGML_KQ_MASK_PAD);
    if (mask->ne[0] < k->ne[1] || mask->ne[1] < rows_needed || !divides(mask->ne[2], q->ne[2]) ||
        !divides(mask->ne[3], q->ne[3])) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "the mask '%s' " SHAPE_FMT " does not fit q '%s' " SHAPE_FMT " and k '%s' " SHAPE_FMT
                     " (need ne[0] >= %" PRId64 ", ne[1] >= %" PRId64 ", and ne[2], ne[3] dividing q's)",
                     mask->name, SHAPE_ARGS(mask), q->name, SHAPE_ARGS(q), k->name, SHAPE_ARGS(k), k->ne[1],
                     rows_needed);
        return false;
    }
    return true;
}

struct ggml_tensor *ggml_flash_attn_ext(struct ggml_context *ctx, struct ggml_tensor *q, struct ggml_tensor *k,
                                        struct ggml_tensor *v, struct ggml_tensor *mask, float scale,
                                        float max_bias, float logit_softcap)
{
    if (q == NULL || k == NULL || v == NULL)
        return NULL;
    if (!check_qkv(q, k, v, __func__))
        return NULL;
    if (mask != NULL && !check_mask(q, k, mask, __func__))
        return NULL;
    if (mask == NULL && max_bias > 0.0f) {
        ggml__error("max_bias %g (ALiBi) needs a mask", (double) max_bias);
        return NULL;
    }
    /* the result has the heads before the queries: permute(0, 2, 1, 3) of [D_v, n_q, n_head, n_seq] */
    const int64_t ne[4] = { v->ne[0], q->ne[2], q->ne[1], q->ne[3] };
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_F32, 4, ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_f32(result, 0, scale);
    ggml__set_op_params_f32(result, 1, max_bias);
    ggml__set_op_params_f32(result, 2, logit_softcap);
    ggml__set_op_params_i32(result, 3, GGML_PREC_DEFAULT);
    result->op = GGML_OP_FLASH_ATTN_EXT;
    result->src[0] = q;
    result->src[1] = k;
    result->src[2] = v;
    result->src[3] = mask;
    return result;
}

/* True for a FLASH_ATTN_EXT node; logs as func otherwise. */
static bool check_attn_node(const struct ggml_tensor *a, const char *func)
{
    if (a->op == GGML_OP_FLASH_ATTN_EXT && a->src[0] != NULL)
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' is a %s node, not a flash_attn_ext node", a->name,
                 ggml_op_name(a->op));
    return false;
}

void ggml_flash_attn_ext_set_prec(struct ggml_tensor *a, enum ggml_prec prec)
{
    if (a == NULL)
        return;
    if (!check_attn_node(a, __func__))
        return;
    if (prec != GGML_PREC_DEFAULT && prec != GGML_PREC_F32) {
        ggml__error("unknown precision %d (GGML_PREC_DEFAULT or GGML_PREC_F32)", (int) prec);
        return;
    }
    ggml__set_op_params_i32(a, 3, (int32_t) prec);
}

enum ggml_prec ggml_flash_attn_ext_get_prec(const struct ggml_tensor *a)
{
    if (a == NULL)
        return GGML_PREC_DEFAULT;
    if (!check_attn_node(a, __func__))
        return GGML_PREC_DEFAULT;
    return (enum ggml_prec) ggml__get_op_params_i32(a, 3);
}

void ggml_flash_attn_ext_add_sinks(struct ggml_tensor *a, struct ggml_tensor *sinks)
{
    if (a == NULL)
        return;
    if (!check_attn_node(a, __func__))
        return;
    if (sinks == NULL) {
        a->src[4] = NULL;
        return;
    }
    if (a->src[4] != NULL) {
        ggml__error("'%s' already has sinks ('%s')", a->name, a->src[4]->name);
        return;
    }
    if (sinks->type != GGML_TYPE_F32) {
        ggml__error("the sinks '%s' are %s; they must be f32", sinks->name, ggml_type_name(sinks->type));
        return;
    }
    if (sinks->ne[0] != a->src[0]->ne[2] || ggml_nelements(sinks) != sinks->ne[0]) {
        ggml__error("the sinks '%s' " SHAPE_FMT " must be a vector of one value per head (%" PRId64 ")",
                    sinks->name, SHAPE_ARGS(sinks), a->src[0]->ne[2]);
        return;
    }
    a->src[4] = sinks;
}
