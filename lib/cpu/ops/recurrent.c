/*
 * ops/recurrent.c - SOLVE_TRI, SSM_CONV, SSM_SCAN, the linear attentions
 * and GATED_DELTA_NET kernels (F32 only).
 *
 * Every source may have any strides (byte offsets are computed from nb);
 * the results are written contiguously.  The reference paths read every
 * element through its strides; the fast paths take rows directly when
 * the innermost stride is sizeof(float).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "ggml-impl.h"
#include "cpu-private.h"

static bool all_f32(const struct ggml_tensor *dst, int n_src)
{
    if (dst->type != GGML_TYPE_F32 || !ggml_is_contiguous(dst))
        return false;
    for (int i = 0; i < n_src; i++)
        if (dst->src[i] == NULL || dst->src[i]->type != GGML_TYPE_F32)
            return false;
    return true;
}

/* ------------------------------------------------------------- SOLVE_TRI */

/*
 * dst = X with A X = B, A [n, n] lower triangular (element (t, i) is row i,
 * column t), B and X [k, n]; one system per index of dims 2 and 3.
 */
static bool solve_tri_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    return all_f32(dst, 2) && a->ne[0] == a->ne[1] && b->ne[1] == a->ne[1] && b->ne[2] == a->ne[2] &&
           b->ne[3] == a->ne[3] && ggml_are_same_shape(b, dst);
}

static void solve_tri_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t n = a->ne[1], k = b->ne[0], n_batch = b->ne[2] * b->ne[3];
    const bool fast = !params->use_ref && a->nb[0] == sizeof(float) && b->nb[0] == sizeof(float);

    if (!fast) {
        /* one unit per column of one system: forward substitution in F32 */
        int64_t first, last;
        ggml__split_rows(n_batch * k, params->ith, params->nth, &first, &last);
        for (int64_t u = first; u < last; u++) {
            const int64_t j = u % k, ib = u / k, i2 = ib % b->ne[2], i3 = ib / b->ne[2];
            for (int64_t i = 0; i < n; i++) {
                float sum = ggml__f32_at(b, j, i, i2, i3);
                for (int64_t t = 0; t < i; t++)
                    sum -= ggml__f32_at(a, t, i, i2, i3) * ggml__f32_at(dst, j, t, i2, i3);
                *(float *) ggml__elem_ptr(dst, j, i, i2, i3) = sum / ggml__f32_at(a, i, i, i2, i3);
            }
        }
        return;
    }
    /* fast: one unit per system; whole rows of X are updated at a time */
    int64_t first, last;
    ggml__split_rows(n_batch, params->ith, params->nth, &first, &last);
    for (int64_t ib = first; ib < last; ib++) {
        const int64_t i2 = ib % b->ne[2], i3 = ib / b->ne[2];
        const char *abase = (const char *) a->data + i2 * a->nb[2] + i3 * a->nb[3];
        const char *bbase = (const char *) b->data + i2 * b->nb[2] + i3 * b->nb[3];
        char *xbase = (char *) dst->data + i2 * dst->nb[2] + i3 * dst->nb[3];
        for (int64_t i = 0; i < n; i++) {
            const float *arow = (const float *) (abase + i * a->nb[1]);
            float *restrict xi = (float *) (xbase + i * dst->nb[1]);
            memcpy(xi, bbase + i * b->nb[1], (size_t) k * sizeof(float));
            for (int64_t t = 0; t < i; t++) {
                const float f = arow[t];
                const float *restrict xt = (const float *) (xbase + t * dst->nb[1]);
                for (int64_t j = 0; j < k; j++)
                    xi[j] -= f * xt[j];
            }
            const float inv = 1.0f / arow[i];
            for (int64_t j = 0; j < k; j++)
                xi[j] *= inv;
        }
    }
}

const struct ggml__op_impl ggml__op_solve_tri = {
    .kernel = solve_tri_kernel,
    .supports = solve_tri_supports,
};

/* -------------------------------------------------------------- SSM_CONV */

/*
 * dst[ch, t, s] = sum over j < d_conv of sx[t + j, ch, s] * c[j, ch], with
 * sx [d_conv - 1 + n_t, d_inner, n_s], c [d_conv, d_inner].
 */
static bool ssm_conv_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *sx = dst->src[0], *c = dst->src[1];
    return all_f32(dst, 2) && ggml_is_3d(sx) && ggml_is_matrix(c) && sx->ne[1] == c->ne[1] &&
           dst->ne[0] == c->ne[1] && dst->ne[1] == sx->ne[0] - c->ne[0] + 1 && dst->ne[2] == sx->ne[2] &&
           dst->ne[3] == 1;
}

static void ssm_conv_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *sx = dst->src[0], *c = dst->src[1];
    const int64_t d_conv = c->ne[0], d_inner = c->ne[1], n_t = dst->ne[1], n_s = dst->ne[2];
    const bool fast = !params->use_ref && sx->nb[0] == sizeof(float) && c->nb[0] == sizeof(float);

    int64_t first, last;
    ggml__split_rows(d_inner * n_s, params->ith, params->nth, &first, &last);
    for (int64_t u = first; u < last; u++) {
        const int64_t ch = u % d_inner, s = u / d_inner;
        float *out = (float *) dst->data + s * n_t * d_inner + ch;
        if (fast) {
            const float *restrict w = (const float *) ((const char *) c->data + ch * c->nb[1]);
            const float *restrict in = (const float *) ((const char *) sx->data + ch * sx->nb[1] + s * sx->nb[2]);
            for (int64_t t = 0; t < n_t; t++) {
                float sum = 0.0f;
                for (int64_t j = 0; j < d_conv; j++)
                    sum += in[t + j] * w[j];
                out[t * d_inner] = sum;
            }
            continue;
        }
        for (int64_t t = 0; t < n_t; t++) {
            float sum = 0.0f;
            for (int64_t j = 0; j < d_conv; j++)
                sum += ggml__f32_at(sx, t + j, ch, s, 0) * ggml__f32_at(c, j, ch, 0, 0);
            out[t * d_inner] = sum;
        }
    }
}

const struct ggml__op_impl ggml__op_ssm_conv = {
    .kernel = ssm_conv_kernel,
    .supports = ssm_conv_supports,
};

/* -------------------------------------------------------------- SSM_SCAN */

/*
 * Selective scan.  Sources: s [d_state, head_dim, n_head, n_states],
 * x [head_dim, n_head, n_tokens, n_seqs], dt [n_head, n_tokens, n_seqs],
 * A [d_state or 1, n_head], B and C [d_state, n_group, n_tokens, n_seqs],
 * ids [n_seqs] (I32: the state each sequence starts from).  For each
 * sequence, token, head h (group h / (n_head / n_group)), row r and state
 * element i:
 *     d = softplus(dt[h]),  state = state * exp(d * A[i or 0, h]) + B[i, g] * x[r, h] * d
 *     y[r, h] = sum over i of state * C[i, g]
 * dst holds y (x's shape) and then n_kept (op_params[0], ggml_ssm_scan's
 * K) blocks of states [d_state, head_dim, n_head, n_seqs]: the final
 * states, then those 1, 2, ... tokens before the end.  An id outside
 * [0, n_states) starts from a zero state.
 */
static bool ssm_scan_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *s = dst->src[0], *x = dst->src[1], *dt = dst->src[2], *A = dst->src[3];
    const struct ggml_tensor *B = dst->src[4], *C = dst->src[5], *ids = dst->src[6];
    if (!all_f32(dst, 6) || ids == NULL || ids->type != GGML_TYPE_I32)
        return false;
    const int64_t d_state = s->ne[0], head_dim = x->ne[0], n_head = x->ne[1];
    const int64_t n_tokens = x->ne[2], n_seqs = x->ne[3];
    const int64_t n_kept = ggml__get_op_params_i32(dst, 0);   /* K of ggml_ssm_scan */
    return ggml_are_same_shape(B, C) && ggml_is_3d(dt) && dt->ne[0] == n_head && dt->ne[1] == n_tokens &&
           dt->ne[2] == n_seqs && s->ne[1] == head_dim && s->ne[2] == n_head && B->ne[0] == d_state &&
           B->ne[2] == n_tokens && B->ne[3] == n_seqs && B->ne[1] > 0 && n_head % B->ne[1] == 0 &&
           ggml_is_vector(ids) && ids->ne[0] == n_seqs && ggml_is_matrix(A) && A->ne[1] == n_head &&
           (A->ne[0] == 1 || A->ne[0] == d_state) && n_kept >= 1 && (A->ne[0] == 1 || n_kept == 1) &&
           ggml_nelements(dst) == ggml_nelements(x) + n_kept * d_state * head_dim * n_head * n_seqs;
}

static inline float softplus(float v)
{
    return v > 20.0f ? v : log1pf(expf(v));
}

static void ssm_scan_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *s = dst->src[0], *x = dst->src[1], *dt = dst->src[2], *A = dst->src[3];
    const struct ggml_tensor *B = dst->src[4], *C = dst->src[5], *ids = dst->src[6];
    const int64_t d_state = s->ne[0], head_dim = x->ne[0], n_head = x->ne[1];
    const int64_t n_tokens = x->ne[2], n_seqs = x->ne[3], heads_per_group = n_head / B->ne[1];
    const bool scalar_decay = A->ne[0] == 1;
    const bool fast = !params->use_ref && B->nb[0] == sizeof(float) && C->nb[0] == sizeof(float) &&
                      (scalar_decay || A->nb[0] == sizeof(float));
    const int64_t n_kept = ggml__get_op_params_i32(dst, 0);
    float *y_all = (float *) dst->data;
    float *states = y_all + ggml_nelements(x);   /* [d_state, head_dim, n_head, n_seqs] n_kept times */
    const int64_t state_floats = d_state * head_dim * n_head * n_seqs;

    /* one unit per (sequence, head): its state rows evolve independently */
    int64_t first, last;
    ggml__split_rows(n_seqs * n_head, params->ith, params->nth, &first, &last);
    for (int64_t u = first; u < last; u++) {
        const int64_t h = u % n_head, seq = u / n_head, g = h / heads_per_group;
        const int32_t id = *(const int32_t *) ((const char *) ids->data + seq * ids->nb[0]);
        const bool have_state = id >= 0 && id < s->ne[3];
        float *st = states + ((seq * n_head + h) * head_dim) * d_state; /* [d_state, head_dim] */
        for (int64_t r = 0; r < head_dim; r++)
            for (int64_t i = 0; i < d_state; i++)
                st[r * d_state + i] = have_state ? ggml__f32_at(s, i, r, h, id) : 0.0f;
        for (int64_t t = 0; t < n_tokens; t++) {
            const float d = softplus(ggml__f32_at(dt, h, t, seq, 0));
            float *y = y_all + ((seq * n_tokens + t) * n_head + h) * head_dim;
            for (int64_t r = 0; r < head_dim; r++) {
                const float xd = ggml__f32_at(x, r, h, t, seq) * d;
                float *restrict sr = st + r * d_state;
                float sum = 0.0f;
                if (fast) {
                    const float *restrict bv = (const float *) ((const char *) B->data + g * B->nb[1] + t * B->nb[2] + seq * B->nb[3]);
                    const float *restrict cv = (const float *) ((const char *) C->data + g * C->nb[1] + t * C->nb[2] + seq * C->nb[3]);
                    const float *av = (const float *) ((const char *) A->data + h * A->nb[1]);
                    if (scalar_decay) {
                        const float decay = expf(d * av[0]);
                        for (int64_t i = 0; i < d_state; i++) {
                            sr[i] = sr[i] * decay + bv[i] * xd;
                            sum += sr[i] * cv[i];
                        }
                    } else {
                        for (int64_t i = 0; i < d_state; i++) {
                            sr[i] = sr[i] * expf(d * av[i]) + bv[i] * xd;
                            sum += sr[i] * cv[i];
                        }
                    }
                } else {
                    for (int64_t i = 0; i < d_state; i++) {
                        const float decay = expf(d * ggml__f32_at(A, scalar_decay ? 0 : i, h, 0, 0));
                        sr[i] = sr[i] * decay + ggml__f32_at(B, i, g, t, seq) * xd;
                        sum += sr[i] * ggml__f32_at(C, i, g, t, seq);
                    }
                }
                y[r] = sum;
            }
            /* state k (1 <= k < n_kept) is the one k tokens before the end; state 0, the final
               one, is st itself.  States before the first token are not written. */
            const int64_t k = n_tokens - 1 - t;
            if (k > 0 && k < n_kept)
                memcpy(st + k * state_floats, st, (size_t) (head_dim * d_state) * sizeof *st);
        }
    }
}

const struct ggml__op_impl ggml__op_ssm_scan = {
    .kernel = ssm_scan_kernel,
    .supports = ssm_scan_supports,
};

/* ------------------------------- RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7 */

/*
 * The three ops share a layout: per-token vectors [S, H, n_tokens] (any
 * strides), a contiguous state of n_seqs blocks [S, S, H] (element (j, i, h)
 * is row i, column j of head h's matrix), the tokens split evenly between
 * the sequences, and dst [S*H, n_tokens + S*n_seqs]: the outputs, then the
 * final states in the state's layout.  One unit of work is one head of one
 * sequence; its tokens are walked in order.  Per token, with M the head's
 * matrix before the token and M' after it:
 *   WKV6: y[j] = sum_i r[i] (tf[i] k[i] v[j] + M[i][j]),  M'[i][j] = td[i] M[i][j] + k[i] v[j]
 *   GLA:  M'[i][j] = g[i] M[i][j] + k[i] v[j],  y[j] = scale * sum_i q[i] M'[i][j]
 *   WKV7: sa[i] = sum_j a[j] M[i][j],  M'[i][j] = w[j] M[i][j] + v[i] k[j] + sa[i] b[j],
 *         y[i] = sum_j r[j] M'[i][j]
 */
enum { LA_MAX_VECS = 6 };

/* Which sources are per-token vectors, for each op (the state is the last source). */
static int linear_attn_layout(enum ggml_op op, int vec_src[LA_MAX_VECS], int *state_src)
{
    switch (op) {
    case GGML_OP_RWKV_WKV6: /* k v r td; tf (src 3) is per head */
        vec_src[0] = 0; vec_src[1] = 1; vec_src[2] = 2; vec_src[3] = 4;
        *state_src = 5;
        return 4;
    case GGML_OP_GATED_LINEAR_ATTN: /* k v q g */
        for (int i = 0; i < 4; i++)
            vec_src[i] = i;
        *state_src = 4;
        return 4;
    default: /* RWKV_WKV7: r w k v a b */
        for (int i = 0; i < 6; i++)
            vec_src[i] = i;
        *state_src = 6;
        return 6;
    }
}

static bool linear_attn_supports(const struct ggml_tensor *dst)
{
    int vec_src[LA_MAX_VECS], state_src;
    const int n = linear_attn_layout(dst->op, vec_src, &state_src);
    if (!all_f32(dst, state_src + 1))
        return false;
    const struct ggml_tensor *first = dst->src[vec_src[0]], *state = dst->src[state_src];
    const int64_t S = first->ne[0], H = first->ne[1], T = first->ne[2], n_seqs = state->ne[1];
    for (int i = 0; i < n; i++) {
        const struct ggml_tensor *t = dst->src[vec_src[i]];
        if (t->ne[0] != S || t->ne[1] != H || t->ne[2] != T || t->ne[3] != 1)
            return false;
    }
    if (dst->op == GGML_OP_RWKV_WKV6 && (!ggml_is_contiguous(dst->src[3]) || ggml_nelements(dst->src[3]) != S * H))
        return false;
    return ggml_is_contiguous(state) && n_seqs >= 1 && ggml_nelements(state) == S * S * H * n_seqs &&
           T % n_seqs == 0 && dst->ne[0] == S * H && dst->ne[1] == T + S * n_seqs && dst->ne[2] == 1 &&
           dst->ne[3] == 1;
}

static size_t linear_attn_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    /* per thread: LA_MAX_VECS gathered vectors and one of sa, each S floats */
    const int64_t S = dst->src[2]->ne[0];
    return (size_t) n_tasks * (LA_MAX_VECS + 1) * (size_t) (S + 16) * sizeof(float);
}

/* The S elements of vector (., h, t) of t_src: directly when contiguous, else gathered into buf. */
static const float *token_vector(const struct ggml_tensor *src, int64_t h, int64_t t, bool direct, float *buf)
{
    const char *p = (const char *) src->data + h * src->nb[1] + t * src->nb[2];
    if (direct && src->nb[0] == sizeof(float))
        return (const float *) p;
    for (int64_t i = 0; i < src->ne[0]; i++)
        buf[i] = *(const float *) (p + i * src->nb[0]);
    return buf;
}

static void linear_attn_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    int vec_src[LA_MAX_VECS], state_src;
    const int n_vecs = linear_attn_layout(dst->op, vec_src, &state_src);
    const struct ggml_tensor *state_in = dst->src[state_src];
    const int64_t S = dst->src[vec_src[0]]->ne[0], H = dst->src[vec_src[0]]->ne[1];
    const int64_t T = dst->src[vec_src[0]]->ne[2], n_seqs = state_in->ne[1], T_seq = T / n_seqs;
    const int64_t C = S * H;
    const bool direct = !params->use_ref;
    float *bufs = (float *) params->wdata + (size_t) params->ith * (LA_MAX_VECS + 1) * (size_t) (S + 16);
    float *sa = bufs + LA_MAX_VECS * (S + 16);
    float scale = 1.0f;
    if (dst->op == GGML_OP_GATED_LINEAR_ATTN)
        memcpy(&scale, dst->op_params, sizeof scale);

    int64_t first, last;
    ggml__split_rows(n_seqs * H, params->ith, params->nth, &first, &last);
    for (int64_t u = first; u < last; u++) {
        const int64_t h = u % H, seq = u / H;
        float *M = (float *) dst->data + C * T + seq * S * C + h * S * S;
        memcpy(M, (const float *) state_in->data + seq * S * C + h * S * S, (size_t) (S * S) * sizeof(float));
        for (int64_t tt = 0; tt < T_seq; tt++) {
            const int64_t t = seq * T_seq + tt;
            const float *vec[LA_MAX_VECS];
            for (int i = 0; i < n_vecs; i++)
                vec[i] = token_vector(dst->src[vec_src[i]], h, t, direct, bufs + i * (S + 16));
            float *restrict y = (float *) dst->data + t * C + h * S;
            if (dst->op == GGML_OP_RWKV_WKV6) {
                const float *k = vec[0], *v = vec[1], *r = vec[2], *td = vec[3];
                const float *tf = (const float *) dst->src[3]->data + h * S;
                for (int64_t j = 0; j < S; j++)
                    y[j] = 0.0f;
                for (int64_t i = 0; i < S; i++) {
                    float *restrict Mi = M + i * S;
                    const float ki = k[i], ri = r[i], tfi = tf[i], tdi = td[i];
                    for (int64_t j = 0; j < S; j++) {
                        const float kv = ki * v[j];
                        y[j] += ri * (tfi * kv + Mi[j]);
                        Mi[j] = tdi * Mi[j] + kv;
                    }
                }
            } else if (dst->op == GGML_OP_GATED_LINEAR_ATTN) {
                const float *k = vec[0], *v = vec[1], *q = vec[2], *g = vec[3];
                for (int64_t j = 0; j < S; j++)
                    y[j] = 0.0f;
                for (int64_t i = 0; i < S; i++) {
                    float *restrict Mi = M + i * S;
                    const float ki = k[i], qi = q[i] * scale, gi = g[i];
                    for (int64_t j = 0; j < S; j++) {
                        Mi[j] = gi * Mi[j] + ki * v[j];
                        y[j] += qi * Mi[j];
                    }
                }
            } else {
                const float *r = vec[0], *w = vec[1], *k = vec[2], *v = vec[3], *a = vec[4], *b = vec[5];
                for (int64_t i = 0; i < S; i++) {
                    const float *Mi = M + i * S;
                    float sum = 0.0f;
                    for (int64_t j = 0; j < S; j++)
                        sum += a[j] * Mi[j];
                    sa[i] = sum;
                }
                for (int64_t i = 0; i < S; i++) {
                    float *restrict Mi = M + i * S;
                    const float vi = v[i], sai = sa[i];
                    float sum = 0.0f;
                    for (int64_t j = 0; j < S; j++) {
                        Mi[j] = w[j] * Mi[j] + vi * k[j] + sai * b[j];
                        sum += r[j] * Mi[j];
                    }
                    y[i] = sum;
                }
            }
        }
    }
}

const struct ggml__op_impl ggml__op_rwkv_wkv6 = {
    .kernel = linear_attn_kernel,
    .supports = linear_attn_supports,
    .work_size = linear_attn_work_size,
};

const struct ggml__op_impl ggml__op_gated_linear_attn = {
    .kernel = linear_attn_kernel,
    .supports = linear_attn_supports,
    .work_size = linear_attn_work_size,
};

const struct ggml__op_impl ggml__op_rwkv_wkv7 = {
    .kernel = linear_attn_kernel,
    .supports = linear_attn_supports,
    .work_size = linear_attn_work_size,
};

/* ------------------------------------------------------- GATED_DELTA_NET */

/*
 * Sources q, k [S, H_qk, T, n_seqs_qk] (rows contiguous; head h reads head
 * h mod H_qk, sequence s reads sequence s / (n_seqs / n_seqs_qk)), v [S, H,
 * T, n_seqs] (rows contiguous), gate g [1 or S, H, T, n_seqs], beta [1, H,
 * T, n_seqs] and the initial states [S, S, H, n_seqs] (all contiguous).
 * Row r of a head's [S, S] state block (S adjacent floats) belongs to output
 * element r.  Per token, with the block's rows R[r]:
 *   R[r][i] *= exp(g[i])   (or exp(g[0]) for all i with a one-value gate)
 *   d[r]     = beta * (v[r] - R[r] . k)
 *   R[r]    += d[r] * k
 *   y[r]     = (R[r] . q) / sqrt(S)
 * dst [S*H, T*n_seqs + K*S*n_seqs]: y of token t of sequence s, head h at
 * row s*T + t, floats h*S..; then K snapshots of every sequence's states,
 * each in the states' layout: snapshot n is the state after token T-1-n
 * (snapshot 0 the final one).  Snapshots n >= T are not written.  A unit of
 * work is one head of one sequence.
 */
static bool gated_delta_net_supports(const struct ggml_tensor *dst)
{
    if (!all_f32(dst, 6))
        return false;
    const struct ggml_tensor *v = dst->src[2], *g = dst->src[3], *beta = dst->src[4], *state = dst->src[5];
    const int64_t S = v->ne[0], H = v->ne[1], T = v->ne[2], n_seqs = v->ne[3];
    const int64_t K = ggml__get_op_params_i32(dst, 0);
    for (int i = 0; i < 2; i++) { /* q, k */
        const struct ggml_tensor *qk = dst->src[i];
        if (qk->ne[0] != S || qk->ne[1] < 1 || H % qk->ne[1] != 0 || qk->ne[2] != T || qk->ne[3] < 1 ||
            n_seqs % qk->ne[3] != 0 || qk->nb[0] != sizeof(float))
            return false;
    }
    return v->nb[0] == sizeof(float) && ggml_is_contiguous(g) && (g->ne[0] == 1 || g->ne[0] == S) &&
           g->ne[1] == H && g->ne[2] == T && g->ne[3] == n_seqs && ggml_is_contiguous(beta) && beta->ne[0] == 1 &&
           beta->ne[1] == H && beta->ne[2] == T && beta->ne[3] == n_seqs && ggml_is_contiguous(state) &&
           state->ne[0] == S && state->ne[1] == S && state->ne[2] == H && state->ne[3] == n_seqs && K >= 1 &&
           dst->ne[0] == S * H && dst->ne[1] == T * n_seqs + K * S * n_seqs;
}

/* Per thread: the gate's exponentials and d (S floats each), and with K > 1 a working state. */
static size_t gated_delta_net_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    const int64_t S = dst->src[2]->ne[0], K = ggml__get_op_params_i32(dst, 0);
    const size_t per_thread = 2 * (size_t) (S + 16) + (K > 1 ? (size_t) (S * S) : 0);
    return (size_t) n_tasks * per_thread * sizeof(float);
}

static const float *gdn_row(const struct ggml_tensor *t, int64_t i1, int64_t i2, int64_t i3)
{
    return (const float *) ggml__elem_ptr(t, 0, i1, i2, i3);
}

static float gdn_dot(const float *restrict a, const float *restrict b, int64_t n)
{
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++)
        sum += a[i] * b[i];
    return sum;
}

static void gated_delta_net_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *q = dst->src[0], *k = dst->src[1], *v = dst->src[2];
    const struct ggml_tensor *g = dst->src[3], *beta = dst->src[4], *state_in = dst->src[5];
    const int64_t S = v->ne[0], H = v->ne[1], T = v->ne[2], n_seqs = v->ne[3];
    const int64_t K = ggml__get_op_params_i32(dst, 0);
    const bool gate_per_value = g->ne[0] == S && S > 1;
    const float scale = 1.0f / sqrtf((float) S);
    const size_t block = (size_t) (S * S), snapshot = block * (size_t) (H * n_seqs);
    float *scratch = (float *) params->wdata +
                     (size_t) params->ith * (2 * (size_t) (S + 16) + (K > 1 ? block : 0));
    float *decay = scratch, *d = scratch + S + 16;
    float *states_out = (float *) dst->data + (size_t) (S * H * T * n_seqs);

    int64_t first, last;
    ggml__split_rows(H * n_seqs, params->ith, params->nth, &first, &last);
    for (int64_t u = first; u < last; u++) {
        const int64_t h = u % H, s = u / H;
        const int64_t hq = h % q->ne[1], sq = s / (n_seqs / q->ne[3]);
        const int64_t hk = h % k->ne[1], sk = s / (n_seqs / k->ne[3]);
        const size_t block_offset = (size_t) (s * H + h) * block;
        float *M = K > 1 ? d + S + 16 : states_out + block_offset;
        memcpy(M, (const float *) state_in->data + block_offset, block * sizeof(float));
        for (int64_t t = 0; t < T; t++) {
            const float *qt = gdn_row(q, hq, t, sq), *kt = gdn_row(k, hk, t, sk), *vt = gdn_row(v, h, t, s);
            const float *gt = gdn_row(g, h, t, s);
            const float b = *gdn_row(beta, h, t, s);
            float *restrict y = (float *) dst->data + (size_t) ((s * T + t) * H + h) * (size_t) S;
            if (gate_per_value) {
                for (int64_t i = 0; i < S; i++)
                    decay[i] = expf(gt[i]);
                for (int64_t r = 0; r < S; r++) {
                    float *restrict R = M + r * S;
                    for (int64_t i = 0; i < S; i++)
                        R[i] *= decay[i];
                }
            } else {
                const float e = expf(gt[0]);
                for (size_t i = 0; i < block; i++)
                    M[i] *= e;
            }
            for (int64_t r = 0; r < S; r++)
                d[r] = b * (vt[r] - gdn_dot(M + r * S, kt, S));
            for (int64_t r = 0; r < S; r++) {
                float *restrict R = M + r * S;
                const float dr = d[r];
                for (int64_t i = 0; i < S; i++)
                    R[i] += dr * kt[i];
                y[r] = gdn_dot(R, qt, S) * scale;
            }
            const int64_t slot = T - 1 - t;
            if (K > 1 && slot < K)
                memcpy(states_out + (size_t) slot * snapshot + block_offset, M, block * sizeof(float));
        }
    }
}

const struct ggml__op_impl ggml__op_gated_delta_net = {
    .kernel = gated_delta_net_kernel,
    .supports = gated_delta_net_supports,
    .work_size = gated_delta_net_work_size,
};
