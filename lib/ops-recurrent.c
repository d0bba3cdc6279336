/*
 * ops-recurrent.c - constructors of the recurrent-model ops: SOLVE_TRI,
 * SSM_CONV, SSM_SCAN, the linear attentions (RWKV_WKV6, GATED_LINEAR_ATTN,
 * RWKV_WKV7) and GATED_DELTA_NET.
 *
 * All work in F32.  Constructors follow the library's rules: a NULL
 * input gives NULL without a message; a bad argument gives NULL and one
 * message.
 */
#include "config.h"

#include <inttypes.h>

#include "ggml-impl.h"

/* Logs as func and returns false unless t is F32. */
static bool check_f32(const struct ggml_tensor *t, const char *what, const char *func)
{
    if (t->type == GGML_TYPE_F32)
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s '%s' must be f32, not %s", what, t->name,
                 ggml_type_name(t->type));
    return false;
}

struct ggml_tensor *ggml_solve_tri(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                   bool left, bool lower, bool uni)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (!check_f32(a, "matrix", __func__) || !check_f32(b, "right-hand side", __func__))
        return NULL;
    if (!left || !lower || uni) {
        ggml__error("only left = true, lower = true, uni = false is supported");
        return NULL;
    }
    if (a->ne[0] != a->ne[1] || b->ne[1] != a->ne[1] || b->ne[2] != a->ne[2] || b->ne[3] != a->ne[3]) {
        ggml__error("'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] must be square and match "
                    "'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] in dims 1..3",
                    a->name, a->ne[0], a->ne[1], a->ne[2], a->ne[3],
                    b->name, b->ne[0], b->ne[1], b->ne[2], b->ne[3]);
        return NULL;
    }
    return ggml__new_op_node(ctx, GGML_OP_SOLVE_TRI, GGML_TYPE_F32, GGML_MAX_DIMS, b->ne, a, b, NULL, 0, __func__);
}

struct ggml_tensor *ggml_ssm_conv(struct ggml_context *ctx, struct ggml_tensor *sx, struct ggml_tensor *c)
{
    if (sx == NULL || c == NULL)
        return NULL;
    if (!check_f32(sx, "input", __func__) || !check_f32(c, "kernel", __func__))
        return NULL;
    const int64_t d_conv = c->ne[0], d_inner = c->ne[1];
    if (!ggml_is_3d(sx) || !ggml_is_matrix(c) || sx->ne[1] != d_inner || sx->ne[0] < d_conv - 1) {
        ggml__error("input '%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] does not fit "
                    "kernel '%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]",
                    sx->name, sx->ne[0], sx->ne[1], sx->ne[2], sx->ne[3],
                    c->name, c->ne[0], c->ne[1], c->ne[2], c->ne[3]);
        return NULL;
    }
    const int64_t ne[4] = { d_inner, sx->ne[0] - d_conv + 1, sx->ne[2], 1 };
    return ggml__new_op_node(ctx, GGML_OP_SSM_CONV, GGML_TYPE_F32, 3, ne, sx, c, NULL, 0, __func__);
}

struct ggml_tensor *ggml_ssm_scan(struct ggml_context *ctx, struct ggml_tensor *s, struct ggml_tensor *x,
                                  struct ggml_tensor *dt, struct ggml_tensor *A, struct ggml_tensor *B,
                                  struct ggml_tensor *C, struct ggml_tensor *ids, int64_t K)
{
    if (s == NULL || x == NULL || dt == NULL || A == NULL || B == NULL || C == NULL || ids == NULL)
        return NULL;
    if (K < 1 || K > INT32_MAX || (A->ne[0] != 1 && K != 1)) {
        ggml__error("K = %" PRId64 " states: want 1 to INT32_MAX, and 1 when A has a decay per state "
                    "(A->ne[0] = %" PRId64 ")", K, A->ne[0]);
        return NULL;
    }
    if (!check_f32(s, "state", __func__) || !check_f32(x, "input", __func__) || !check_f32(dt, "step", __func__) ||
        !check_f32(A, "A", __func__) || !check_f32(B, "B", __func__) || !check_f32(C, "C", __func__))
        return NULL;
    if (ids->type != GGML_TYPE_I32) {
        ggml__error("ids '%s' must be i32, not %s", ids->name, ggml_type_name(ids->type));
        return NULL;
    }
    const int64_t d_state = s->ne[0], head_dim = x->ne[0], n_head = x->ne[1];
    const int64_t n_tokens = x->ne[2], n_seqs = x->ne[3];
    const int64_t n_group = B->ne[1];
    const bool ok = ggml_are_same_shape(B, C) && ggml_is_3d(dt) && dt->ne[0] == n_head && dt->ne[1] == n_tokens &&
                    dt->ne[2] == n_seqs && s->ne[1] == head_dim && s->ne[2] == n_head &&
                    B->ne[0] == d_state && B->ne[2] == n_tokens && B->ne[3] == n_seqs &&
                    n_group > 0 && n_head % n_group == 0 &&
                    ggml_is_vector(ids) && ids->ne[0] == n_seqs &&
                    ggml_is_matrix(A) && A->ne[1] == n_head && (A->ne[0] == 1 || A->ne[0] == d_state);
    if (!ok) {
        ggml__error("shapes do not fit: s [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "], "
                    "x [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "], "
                    "dt [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "], A [%" PRId64 ", %" PRId64 "], "
                    "B [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "], ids [%" PRId64 "]",
                    s->ne[0], s->ne[1], s->ne[2], s->ne[3], x->ne[0], x->ne[1], x->ne[2], x->ne[3],
                    dt->ne[0], dt->ne[1], dt->ne[2], dt->ne[3], A->ne[0], A->ne[1],
                    B->ne[0], B->ne[1], B->ne[2], B->ne[3], ids->ne[0]);
        return NULL;
    }
    /* the outputs y (x's shape), then K states of every sequence: the final ones, then earlier ones */
    const int64_t ne[1] = { ggml_nelements(x) + K * d_state * head_dim * n_head * n_seqs };
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_F32, 1, ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_SSM_SCAN;
    result->src[0] = s;
    result->src[1] = x;
    result->src[2] = dt;
    result->src[3] = A;
    result->src[4] = B;
    result->src[5] = C;
    result->src[6] = ids;
    ggml__set_op_params_i32(result, 0, (int32_t) K);
    return result;
}

/*
 * Checks shared by the RWKV and gated linear attention constructors:
 * every tensor of per_token (count n) is F32 with shape [S, H, n_tokens]
 * taken from the first; state is a contiguous F32 tensor of S*S*H*n_seqs
 * elements with n_seqs = state->ne[1] dividing n_tokens.  Logs as func.
 */
static bool check_linear_attn(struct ggml_tensor *const *per_token, int n, const struct ggml_tensor *state,
                              const char *func)
{
    const struct ggml_tensor *k = per_token[0];
    for (int i = 0; i < n; i++)
        if (!check_f32(per_token[i], "input", func))
            return false;
    if (!check_f32(state, "state", func))
        return false;
    const int64_t S = k->ne[0], H = k->ne[1], n_tokens = k->ne[2];
    for (int i = 0; i < n; i++) {
        const struct ggml_tensor *t = per_token[i];
        if (t->ne[0] != S || t->ne[1] != H || t->ne[2] != n_tokens || t->ne[3] != 1) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                         "'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] must be "
                         "[%" PRId64 ", %" PRId64 ", %" PRId64 ", 1]",
                         t->name, t->ne[0], t->ne[1], t->ne[2], t->ne[3], S, H, n_tokens);
            return false;
        }
    }
    const int64_t n_seqs = state->ne[1];
    if (!ggml_is_contiguous(state) || n_seqs < 1 || ggml_nelements(state) != S * S * H * n_seqs ||
        n_tokens % n_seqs != 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "state '%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] must be contiguous "
                     "with %" PRId64 " elements per sequence (ne[1] sequences dividing %" PRId64 " tokens)",
                     state->name, state->ne[0], state->ne[1], state->ne[2], state->ne[3], S * S * H, n_tokens);
        return false;
    }
    return true;
}

/* The [S*H, n_tokens + S*n_seqs] F32 result: outputs, then the new states. */
static struct ggml_tensor *linear_attn_result(struct ggml_context *ctx, enum ggml_op op,
                                              const struct ggml_tensor *k, const struct ggml_tensor *state,
                                              const char *func)
{
    const int64_t S = k->ne[0], H = k->ne[1], n_tokens = k->ne[2], n_seqs = state->ne[1];
    const int64_t ne[4] = { S * H, n_tokens + S * n_seqs, 1, 1 };
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_F32, 4, ne, NULL, 0, func);
    if (result != NULL)
        result->op = op;
    return result;
}

struct ggml_tensor *ggml_rwkv_wkv6(struct ggml_context *ctx, struct ggml_tensor *k, struct ggml_tensor *v,
                                   struct ggml_tensor *r, struct ggml_tensor *tf, struct ggml_tensor *td,
                                   struct ggml_tensor *state)
{
    if (k == NULL || v == NULL || r == NULL || tf == NULL || td == NULL || state == NULL)
        return NULL;
    struct ggml_tensor *per_token[4] = { k, v, r, td };
    if (!check_linear_attn(per_token, 4, state, __func__) || !check_f32(tf, "bonus", __func__))
        return NULL;
    if (!ggml_is_contiguous(tf) || ggml_nelements(tf) != k->ne[0] * k->ne[1]) {
        ggml__error("bonus '%s' must be contiguous with [%" PRId64 ", %" PRId64 "] elements", tf->name,
                    k->ne[0], k->ne[1]);
        return NULL;
    }
    struct ggml_tensor *result = linear_attn_result(ctx, GGML_OP_RWKV_WKV6, k, state, __func__);
    if (result == NULL)
        return NULL;
    result->src[0] = k;
    result->src[1] = v;
    result->src[2] = r;
    result->src[3] = tf;
    result->src[4] = td;
    result->src[5] = state;
    return result;
}

struct ggml_tensor *ggml_gated_linear_attn(struct ggml_context *ctx, struct ggml_tensor *k, struct ggml_tensor *v,
                                           struct ggml_tensor *q, struct ggml_tensor *g, struct ggml_tensor *state,
                                           float scale)
{
    if (k == NULL || v == NULL || q == NULL || g == NULL || state == NULL)
        return NULL;
    struct ggml_tensor *per_token[4] = { k, v, q, g };
    if (!check_linear_attn(per_token, 4, state, __func__))
        return NULL;
    struct ggml_tensor *result = linear_attn_result(ctx, GGML_OP_GATED_LINEAR_ATTN, k, state, __func__);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_f32(result, 0, scale);
    result->src[0] = k;
    result->src[1] = v;
    result->src[2] = q;
    result->src[3] = g;
    result->src[4] = state;
    return result;
}

struct ggml_tensor *ggml_rwkv_wkv7(struct ggml_context *ctx, struct ggml_tensor *r, struct ggml_tensor *w,
                                   struct ggml_tensor *k, struct ggml_tensor *v, struct ggml_tensor *a,
                                   struct ggml_tensor *b, struct ggml_tensor *state)
{
    if (r == NULL || w == NULL || k == NULL || v == NULL || a == NULL || b == NULL || state == NULL)
        return NULL;
    /* k first: its shape is the one the others must have */
    struct ggml_tensor *per_token[6] = { k, r, w, v, a, b };
    if (!check_linear_attn(per_token, 6, state, __func__))
        return NULL;
    struct ggml_tensor *result = linear_attn_result(ctx, GGML_OP_RWKV_WKV7, k, state, __func__);
    if (result == NULL)
        return NULL;
    result->src[0] = r;
    result->src[1] = w;
    result->src[2] = k;
    result->src[3] = v;
    result->src[4] = a;
    result->src[5] = b;
    result->src[6] = state;
    return result;
}

/* q or k [S, H_qk, n_tokens, n_seqs_qk] of gated_delta_net: heads and sequences broadcast to v's. */
static bool gdn_fits_v(const struct ggml_tensor *t, const struct ggml_tensor *v)
{
    return t->ne[0] == v->ne[0] && t->ne[1] > 0 && v->ne[1] % t->ne[1] == 0 && t->ne[2] == v->ne[2] &&
           t->ne[3] > 0 && v->ne[3] % t->ne[3] == 0 && t->nb[0] == sizeof(float);
}

struct ggml_tensor *ggml_gated_delta_net(struct ggml_context *ctx, struct ggml_tensor *q, struct ggml_tensor *k,
                                         struct ggml_tensor *v, struct ggml_tensor *g, struct ggml_tensor *beta,
                                         struct ggml_tensor *state, int64_t K)
{
    if (q == NULL || k == NULL || v == NULL || g == NULL || beta == NULL || state == NULL)
        return NULL;
    if (!check_f32(q, "query", __func__) || !check_f32(k, "key", __func__) || !check_f32(v, "value", __func__) ||
        !check_f32(g, "gate", __func__) || !check_f32(beta, "beta", __func__) || !check_f32(state, "state", __func__))
        return NULL;
    const int64_t S = v->ne[0], H = v->ne[1], n_tokens = v->ne[2], n_seqs = v->ne[3];
    if (K < 1 || K > INT32_MAX || (S > 0 && n_seqs > 0 && K > INT64_MAX / 2 / S / n_seqs)) {
        ggml__error("K = %" PRId64 " state snapshots: want 1 to INT32_MAX", K);
        return NULL;
    }
    const bool ok = v->nb[0] == sizeof(float) && gdn_fits_v(q, v) && gdn_fits_v(k, v) &&
                    ggml_is_contiguous(g) && (g->ne[0] == 1 || g->ne[0] == S) && g->ne[1] == H &&
                    g->ne[2] == n_tokens && g->ne[3] == n_seqs &&
                    ggml_is_contiguous(beta) && beta->ne[0] == 1 && beta->ne[1] == H && beta->ne[2] == n_tokens &&
                    beta->ne[3] == n_seqs &&
                    ggml_is_contiguous(state) && state->ne[0] == S && state->ne[1] == S && state->ne[2] == H &&
                    state->ne[3] == n_seqs;
    if (!ok) {
        ggml__error("shapes do not fit: v [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] (rows "
                    "contiguous), q [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "], "
                    "k [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] (heads and sequences dividing "
                    "v's, rows contiguous), g [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "], "
                    "beta [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "], "
                    "state [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] (g, beta, state contiguous)",
                    v->ne[0], v->ne[1], v->ne[2], v->ne[3], q->ne[0], q->ne[1], q->ne[2], q->ne[3],
                    k->ne[0], k->ne[1], k->ne[2], k->ne[3], g->ne[0], g->ne[1], g->ne[2], g->ne[3],
                    beta->ne[0], beta->ne[1], beta->ne[2], beta->ne[3],
                    state->ne[0], state->ne[1], state->ne[2], state->ne[3]);
        return NULL;
    }
    /* rows of S*H: the outputs of every token, then K snapshots of every sequence's states */
    const int64_t ne[4] = { S * H, n_tokens * n_seqs + K * S * n_seqs, 1, 1 };
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_F32, 4, ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_GATED_DELTA_NET;
    result->src[0] = q;
    result->src[1] = k;
    result->src[2] = v;
    result->src[3] = g;
    result->src[4] = beta;
    result->src[5] = state;
    ggml__set_op_params_i32(result, 0, (int32_t) K);
    return result;
}
