/*
 * test-op-recurrent.c - SOLVE_TRI, SSM_CONV, SSM_SCAN, the linear
 * attentions and GATED_DELTA_NET: odd shapes,
 * several heads, groups and sequences, state in and out, non-contiguous
 * inputs, 1..4 threads, reference and fast kernels, and the constructors'
 * error paths.
 *
 * Each reference is computed here in double precision from the inputs as
 * stored.  All ops are F32-only, so the thresholds only cover F32 rounding.
 */
#include <stdio.h>

#include "tap.h"
#include "op-test.h"

static struct ggml_context *new_ctx(void)
{
    struct ggml_init_params params = { 16u << 20, NULL, false };
    return ggml_init(params);
}

/* ------------------------------------------------------------- SOLVE_TRI */

/*
 * Threshold 1e-9: A has diagonal entries of magnitude 1..2 and small
 * off-diagonal entries (|a| <= 1/n), so the system is well conditioned and
 * F32 forward substitution loses only a few ulps (NMSE ~ 1e-13).
 */
static void test_solve_tri_case(int64_t n, int64_t k, int64_t n2, int64_t n3, bool b_permuted, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n, n, n2, n3);
    optest_fill(a, seed, -1.0 / (double) n, 1.0 / (double) n);
    for (int64_t i3 = 0; i3 < n3; i3++)
        for (int64_t i2 = 0; i2 < n2; i2++)
            for (int64_t i = 0; i < n; i++) {
                const double d = optest_uniform(seed, 1.0, 2.0);
                optest_set(a, i, i, i2, i3, optest_uniform(seed, 0.0, 1.0) < 0.5 ? -d : d);
                for (int64_t t = i + 1; t < n; t++) /* the upper triangle must be ignored */
                    optest_set(a, t, i, i2, i3, 1e3);
            }
    struct ggml_tensor *b;
    if (b_permuted) {
        /* stored as [n, k, n2, n3], used transposed: a non-contiguous [k, n] */
        struct ggml_tensor *bs = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n, k, n2, n3);
        optest_fill(bs, seed, -1.0, 1.0);
        b = ggml_permute(ctx, bs, 1, 0, 2, 3);
    } else {
        b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, k, n, n2, n3);
        optest_fill(b, seed, -1.0, 1.0);
    }
    double *ref = malloc((size_t) (k * n * n2 * n3) * sizeof *ref);
    double *x = malloc((size_t) n * sizeof *x);
    for (int64_t i3 = 0; i3 < n3; i3++)
        for (int64_t i2 = 0; i2 < n2; i2++)
            for (int64_t j = 0; j < k; j++) {
                for (int64_t i = 0; i < n; i++) {
                    double sum = optest_get(b, j, i, i2, i3);
                    for (int64_t t = 0; t < i; t++)
                        sum -= optest_get(a, t, i, i2, i3) * x[t];
                    x[i] = sum / optest_get(a, i, i, i2, i3);
                    ref[((i3 * n2 + i2) * n + i) * k + j] = x[i];
                }
            }
    struct ggml_tensor *out = ggml_solve_tri(ctx, a, b, true, true, false);
    ok(out != NULL && out->op == GGML_OP_SOLVE_TRI && out->type == GGML_TYPE_F32 && ggml_are_same_shape(out, b),
       "solve_tri [%lld, %lld] x [%lld, %lld, %lld]: result has b's shape", (long long) n, (long long) n,
       (long long) k, (long long) n2, (long long) n3);
    char what[128];
    snprintf(what, sizeof what, "solve_tri n %lld, k %lld, batch %lldx%lld%s", (long long) n, (long long) k,
             (long long) n2, (long long) n3, b_permuted ? ", b transposed" : "");
    optest_check_all(ctx, out, ref, 1e-9, what);
    free(x);
    free(ref);
    ggml_free(ctx);
}

static void test_solve_tri(void)
{
    uint64_t seed = 0x501e;
    test_solve_tri_case(1, 1, 1, 1, false, &seed);
    test_solve_tri_case(3, 5, 2, 3, false, &seed);
    test_solve_tri_case(31, 33, 1, 2, false, &seed);
    test_solve_tri_case(33, 1, 3, 1, true, &seed);
    test_solve_tri_case(17, 257, 1, 1, true, &seed);
}

/* -------------------------------------------------------------- SSM_CONV */

/*
 * Threshold 1e-11: each output is a dot product of d_conv <= 7 F32
 * products, exact to a few ulps.
 */
static void test_ssm_conv_case(int64_t d_conv, int64_t d_inner, int64_t n_t, int64_t n_s, bool sliced,
                               uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    const int64_t len = d_conv - 1 + n_t;
    struct ggml_tensor *sx;
    if (sliced) {
        /* a view of the first len columns of a wider tensor: rows are not contiguous */
        struct ggml_tensor *wide = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, len + 3, d_inner, n_s);
        optest_fill(wide, seed, -1.0, 1.0);
        sx = ggml_view_3d(ctx, wide, len, d_inner, n_s, wide->nb[1], wide->nb[2], sizeof(float));
    } else {
        sx = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, len, d_inner, n_s);
        optest_fill(sx, seed, -1.0, 1.0);
    }
    /* the kernel comes transposed from a [d_inner, d_conv] tensor: non-contiguous */
    struct ggml_tensor *cs = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, d_inner, d_conv);
    optest_fill(cs, seed, -1.0, 1.0);
    struct ggml_tensor *c = ggml_transpose(ctx, cs);

    double *ref = malloc((size_t) (d_inner * n_t * n_s) * sizeof *ref);
    for (int64_t s = 0; s < n_s; s++)
        for (int64_t t = 0; t < n_t; t++)
            for (int64_t ch = 0; ch < d_inner; ch++) {
                double sum = 0.0;
                for (int64_t j = 0; j < d_conv; j++)
                    sum += optest_get(sx, t + j, ch, s, 0) * optest_get(c, j, ch, 0, 0);
                ref[(s * n_t + t) * d_inner + ch] = sum;
            }
    struct ggml_tensor *out = ggml_ssm_conv(ctx, sx, c);
    ok(out != NULL && out->op == GGML_OP_SSM_CONV && out->ne[0] == d_inner && out->ne[1] == n_t &&
           out->ne[2] == n_s && out->ne[3] == 1,
       "ssm_conv d_conv %lld: result is [%lld, %lld, %lld]", (long long) d_conv, (long long) d_inner,
       (long long) n_t, (long long) n_s);
    char what[128];
    snprintf(what, sizeof what, "ssm_conv d_conv %lld, d_inner %lld, n_t %lld, n_s %lld%s", (long long) d_conv,
             (long long) d_inner, (long long) n_t, (long long) n_s, sliced ? ", sliced input" : "");
    optest_check_all(ctx, out, ref, 1e-11, what);
    free(ref);
    ggml_free(ctx);
}

static void test_ssm_conv(void)
{
    uint64_t seed = 0xc0a7;
    test_ssm_conv_case(1, 1, 1, 1, false, &seed);
    test_ssm_conv_case(4, 3, 5, 2, false, &seed);
    test_ssm_conv_case(4, 33, 1, 3, true, &seed);
    test_ssm_conv_case(3, 257, 7, 1, false, &seed);
    test_ssm_conv_case(7, 31, 3, 2, true, &seed);
}

/* -------------------------------------------------------------- SSM_SCAN */

static double softplus_ref(double v)
{
    return v > 20.0 ? v : log1p(exp(v));
}

/*
 * Threshold 1e-9: the states decay (A < 0, softplus(dt) > 0), so rounding
 * errors do not grow along the tokens; each y is a d_state-term dot product
 * (NMSE ~ 1e-13 observed).
 */
static void test_ssm_scan_case(int64_t d_state, int64_t head_dim, int64_t n_head, int64_t n_group,
                               int64_t n_tokens, int64_t n_seqs, int64_t n_states, bool per_state_decay,
                               bool strided, int64_t n_kept, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *s = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, d_state, head_dim, n_head, n_states);
    struct ggml_tensor *x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, head_dim, n_head, n_tokens, n_seqs);
    struct ggml_tensor *dt = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n_head, n_tokens, n_seqs);
    struct ggml_tensor *A = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, per_state_decay ? d_state : 1, n_head);
    struct ggml_tensor *B, *C;
    if (strided) {
        /* B and C as views into one wider tensor: [d_state, ...] rows with a gap */
        struct ggml_tensor *bc = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2 * d_state + 1, n_group, n_tokens, n_seqs);
        optest_fill(bc, seed, -1.0, 1.0);
        B = ggml_view_4d(ctx, bc, d_state, n_group, n_tokens, n_seqs, bc->nb[1], bc->nb[2], bc->nb[3], 0);
        C = ggml_view_4d(ctx, bc, d_state, n_group, n_tokens, n_seqs, bc->nb[1], bc->nb[2], bc->nb[3],
                         (size_t) (d_state + 1) * sizeof(float));
    } else {
        B = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, d_state, n_group, n_tokens, n_seqs);
        C = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, d_state, n_group, n_tokens, n_seqs);
        optest_fill(B, seed, -1.0, 1.0);
        optest_fill(C, seed, -1.0, 1.0);
    }
    struct ggml_tensor *ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_seqs);
    optest_fill(s, seed, -1.0, 1.0);
    optest_fill(x, seed, -1.0, 1.0);
    optest_fill(dt, seed, -3.0, 3.0);
    optest_fill(A, seed, -2.0, -0.1);
    for (int64_t q = 0; q < n_seqs; q++) /* reversed, so state and sequence indices differ */
        optest_set(ids, q, 0, 0, 0, (double) ((n_seqs - 1 - q) % n_states));
    if (n_seqs > 2)
        optest_set(ids, 1, 0, 0, 0, -1); /* out of range: starts from a zero state */

    const int64_t ny = head_dim * n_head * n_tokens * n_seqs, per_seq = d_state * head_dim * n_head;
    /* n_kept <= n_tokens: every kept state is written */
    double *ref = malloc((size_t) (ny + n_kept * per_seq * n_seqs) * sizeof *ref);
    double *st = malloc((size_t) per_seq * sizeof *st);
    for (int64_t q = 0; q < n_seqs; q++) {
        const int64_t id = (int64_t) optest_get(ids, q, 0, 0, 0);
        for (int64_t h = 0; h < n_head; h++)
            for (int64_t r = 0; r < head_dim; r++)
                for (int64_t i = 0; i < d_state; i++)
                    st[(h * head_dim + r) * d_state + i] = id >= 0 && id < n_states ? optest_get(s, i, r, h, id) : 0.0;
        for (int64_t t = 0; t < n_tokens; t++) {
            for (int64_t h = 0; h < n_head; h++) {
                const int64_t g = h / (n_head / n_group);
                const double d = softplus_ref(optest_get(dt, h, t, q, 0));
                for (int64_t r = 0; r < head_dim; r++) {
                    double y = 0.0;
                    for (int64_t i = 0; i < d_state; i++) {
                        double *v = &st[(h * head_dim + r) * d_state + i];
                        const double a = optest_get(A, per_state_decay ? i : 0, h, 0, 0);
                        *v = *v * exp(d * a) + optest_get(B, i, g, t, q) * optest_get(x, r, h, t, q) * d;
                        y += *v * optest_get(C, i, g, t, q);
                    }
                    ref[((q * n_tokens + t) * n_head + h) * head_dim + r] = y;
                }
            }
            /* after token t: kept state k = n_tokens - 1 - t (0: the final one) */
            const int64_t k = n_tokens - 1 - t;
            if (k < n_kept)
                for (int64_t e = 0; e < per_seq; e++)
                    ref[ny + (k * n_seqs + q) * per_seq + e] = st[e];
        }
    }
    struct ggml_tensor *out = ggml_ssm_scan(ctx, s, x, dt, A, B, C, ids, n_kept);
    ok(out != NULL && out->op == GGML_OP_SSM_SCAN && ggml_n_dims(out) == 1 &&
           out->ne[0] == ny + n_kept * per_seq * n_seqs,
       "ssm_scan: result holds y and %lld x %lld states", (long long) n_kept, (long long) n_seqs);
    char what[160];
    snprintf(what, sizeof what, "ssm_scan %s, d_state %lld, head_dim %lld, heads %lld, groups %lld, tokens %lld, "
             "seqs %lld, %lld states kept%s", per_state_decay ? "mamba-1" : "mamba-2", (long long) d_state,
             (long long) head_dim, (long long) n_head, (long long) n_group, (long long) n_tokens,
             (long long) n_seqs, (long long) n_kept, strided ? ", strided B/C" : "");
    optest_check_all(ctx, out, ref, 1e-9, what);
    free(st);
    free(ref);
    ggml_free(ctx);
}

static void test_ssm_scan(void)
{
    uint64_t seed = 0x55a4;
    test_ssm_scan_case(1, 1, 1, 1, 1, 1, 1, false, false, 1, &seed);
    test_ssm_scan_case(5, 3, 4, 2, 3, 2, 3, false, false, 1, &seed);
    test_ssm_scan_case(16, 1, 33, 1, 5, 3, 4, true, false, 1, &seed);   /* mamba-1 layout */
    test_ssm_scan_case(7, 5, 6, 3, 4, 3, 3, false, true, 1, &seed);
    test_ssm_scan_case(3, 1, 31, 1, 2, 1, 2, true, true, 1, &seed);
    test_ssm_scan_case(5, 3, 4, 2, 3, 2, 3, false, false, 3, &seed);   /* every state kept */
    test_ssm_scan_case(7, 5, 6, 3, 5, 3, 3, false, true, 2, &seed);
}

/* ------------------------------- RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7 */

enum la_op { LA_WKV6, LA_GLA, LA_WKV7 };
static const char *const la_names[] = { "rwkv_wkv6", "gated_linear_attn", "rwkv_wkv7" };

/*
 * A per-token input [S, H, T]: contiguous, or (strided) a permuted view of
 * an [H, S, T] tensor, so that element stride is H floats.
 */
static struct ggml_tensor *la_input(struct ggml_context *ctx, int64_t S, int64_t H, int64_t T, bool strided,
                                    double lo, double hi, uint64_t *seed)
{
    if (!strided) {
        struct ggml_tensor *t = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, S, H, T);
        optest_fill(t, seed, lo, hi);
        return t;
    }
    struct ggml_tensor *t = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, H, S, T);
    optest_fill(t, seed, lo, hi);
    return ggml_permute(ctx, t, 1, 0, 2, 3);
}

/*
 * Threshold 1e-9: decays lie in (0, 1) and inputs are small, so the state
 * stays bounded over the few tokens; every output is an S-term dot
 * product in F32 (NMSE ~ 1e-14 observed).
 */
static void test_la_case(enum la_op op, int64_t S, int64_t H, int64_t T, int64_t n_seqs, bool strided,
                         uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *in[6] = { NULL };
    const int n_in = op == LA_WKV7 ? 6 : 4;
    /* the decay input (WKV6: td, GLA: g, WKV7: w) is in (0.5, 1) */
    const int decay_index = op == LA_WKV7 ? 1 : 3;
    for (int i = 0; i < n_in; i++)
        in[i] = la_input(ctx, S, H, T, strided && i % 2 == 1, i == decay_index ? 0.5 : -0.5,
                         i == decay_index ? 1.0 : 0.5, seed);
    struct ggml_tensor *tf = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, S, H);
    optest_fill(tf, seed, -1.0, 1.0);
    struct ggml_tensor *state = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, S * S * H, n_seqs);
    optest_fill(state, seed, -1.0, 1.0);
    const float scale = 0.75f;

    const int64_t C = S * H, T_seq = T / n_seqs;
    double *ref = malloc((size_t) (C * (T + S * n_seqs)) * sizeof *ref);
    double *M = malloc((size_t) (S * S) * sizeof *M), *sa = malloc((size_t) S * sizeof *sa);
    for (int64_t q = 0; q < n_seqs; q++)
        for (int64_t h = 0; h < H; h++) {
            for (int64_t e = 0; e < S * S; e++)
                M[e] = optest_get(state, h * S * S + e, q, 0, 0);
            for (int64_t tt = 0; tt < T_seq; tt++) {
                const int64_t t = q * T_seq + tt;
#define V(n, i) optest_get(in[n], (i), h, t, 0)
                double *y = ref + t * C + h * S;
                if (op == LA_WKV6) { /* k v r td */
                    for (int64_t j = 0; j < S; j++) {
                        double sum = 0.0;
                        for (int64_t i = 0; i < S; i++)
                            sum += V(2, i) * (optest_get(tf, i, h, 0, 0) * V(0, i) * V(1, j) + M[i * S + j]);
                        y[j] = sum;
                    }
                    for (int64_t i = 0; i < S; i++)
                        for (int64_t j = 0; j < S; j++)
                            M[i * S + j] = V(3, i) * M[i * S + j] + V(0, i) * V(1, j);
                } else if (op == LA_GLA) { /* k v q g */
                    for (int64_t i = 0; i < S; i++)
                        for (int64_t j = 0; j < S; j++)
                            M[i * S + j] = V(3, i) * M[i * S + j] + V(0, i) * V(1, j);
                    for (int64_t j = 0; j < S; j++) {
                        double sum = 0.0;
                        for (int64_t i = 0; i < S; i++)
                            sum += V(2, i) * M[i * S + j];
                        y[j] = (double) scale * sum;
                    }
                } else { /* r w k v a b */
                    for (int64_t i = 0; i < S; i++) {
                        sa[i] = 0.0;
                        for (int64_t j = 0; j < S; j++)
                            sa[i] += V(4, j) * M[i * S + j];
                    }
                    for (int64_t i = 0; i < S; i++) {
                        double sum = 0.0;
                        for (int64_t j = 0; j < S; j++) {
                            M[i * S + j] = V(1, j) * M[i * S + j] + V(3, i) * V(2, j) + sa[i] * V(5, j);
                            sum += V(0, j) * M[i * S + j];
                        }
                        y[i] = sum;
                    }
                }
#undef V
            }
            for (int64_t e = 0; e < S * S; e++)
                ref[C * T + q * S * C + h * S * S + e] = M[e];
        }

    struct ggml_tensor *out;
    if (op == LA_WKV6)
        out = ggml_rwkv_wkv6(ctx, in[0], in[1], in[2], tf, in[3], state);
    else if (op == LA_GLA)
        out = ggml_gated_linear_attn(ctx, in[0], in[1], in[2], in[3], state, scale);
    else
        out = ggml_rwkv_wkv7(ctx, in[0], in[1], in[2], in[3], in[4], in[5], state);
    ok(out != NULL && out->ne[0] == C && out->ne[1] == T + S * n_seqs && out->ne[2] == 1 && out->ne[3] == 1,
       "%s: result is [S*H, n_tokens + S*n_seqs]", la_names[op]);
    char what[160];
    snprintf(what, sizeof what, "%s S %lld, H %lld, tokens %lld, seqs %lld%s", la_names[op], (long long) S,
             (long long) H, (long long) T, (long long) n_seqs, strided ? ", strided inputs" : "");
    optest_check_all(ctx, out, ref, 1e-9, what);
    free(sa);
    free(M);
    free(ref);
    ggml_free(ctx);
}

static void test_linear_attn(void)
{
    uint64_t seed = 0x1a77;
    for (int op = LA_WKV6; op <= LA_WKV7; op++) {
        test_la_case((enum la_op) op, 1, 1, 1, 1, false, &seed);
        test_la_case((enum la_op) op, 3, 2, 6, 2, false, &seed);
        test_la_case((enum la_op) op, 5, 3, 6, 3, true, &seed);
        test_la_case((enum la_op) op, 8, 2, 4, 1, true, &seed);
        test_la_case((enum la_op) op, 33, 1, 3, 3, false, &seed);
    }
}

/* ------------------------------------------------------- GATED_DELTA_NET */

struct gdn_shape {
    int64_t S, H, H_qk, T, n_seqs, n_seqs_qk, K;
    bool gate_per_value; /* g [S, ...] instead of [1, ...] */
    bool qk_strided;     /* q and k permuted views: rows contiguous, heads not adjacent */
};

/* q or k [S, H_qk, T, n_seqs_qk], from a permuted [S, T, H_qk, n_seqs_qk] tensor when strided. */
static struct ggml_tensor *gdn_qk(struct ggml_context *ctx, const struct gdn_shape *p, uint64_t *seed)
{
    struct ggml_tensor *t;
    if (p->qk_strided) {
        t = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, p->S, p->T, p->H_qk, p->n_seqs_qk);
        optest_fill(t, seed, -0.3, 0.3);
        return ggml_permute(ctx, t, 0, 2, 1, 3);
    }
    t = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, p->S, p->H_qk, p->T, p->n_seqs_qk);
    optest_fill(t, seed, -0.3, 0.3);
    return t;
}

/*
 * The gated delta rule in double: dst rows of outputs, then K snapshots of
 * the states (snapshot n after token T-1-n); entries of snapshots never
 * written (n >= T) stay NaN in ref.
 */
static double *gdn_reference(const struct gdn_shape *p, struct ggml_tensor *const in[6])
{
    const int64_t S = p->S, H = p->H, T = p->T, n_seqs = p->n_seqs;
    const size_t n_out = (size_t) (S * H * T * n_seqs), n_snap = (size_t) (S * S * H * n_seqs);
    double *ref = malloc((n_out + (size_t) p->K * n_snap) * sizeof *ref);
    double *M = malloc((size_t) (S * S) * sizeof *M), *d = malloc((size_t) S * sizeof *d);
    for (size_t e = n_out; e < n_out + (size_t) p->K * n_snap; e++)
        ref[e] = NAN;
    for (int64_t s = 0; s < n_seqs; s++)
        for (int64_t h = 0; h < H; h++) {
            const int64_t hqk = h % p->H_qk, sqk = s / (n_seqs / p->n_seqs_qk);
            for (int64_t r = 0; r < S; r++)
                for (int64_t i = 0; i < S; i++)
                    M[r * S + i] = optest_get(in[5], i, r, h, s);
            for (int64_t t = 0; t < T; t++) {
                const double b = optest_get(in[4], 0, h, t, s);
                for (int64_t r = 0; r < S; r++)
                    for (int64_t i = 0; i < S; i++)
                        M[r * S + i] *= exp(optest_get(in[3], p->gate_per_value ? i : 0, h, t, s));
                for (int64_t r = 0; r < S; r++) {
                    double kr = 0.0;
                    for (int64_t i = 0; i < S; i++)
                        kr += M[r * S + i] * optest_get(in[1], i, hqk, t, sqk);
                    d[r] = b * (optest_get(in[2], r, h, t, s) - kr);
                }
                for (int64_t r = 0; r < S; r++) {
                    double y = 0.0;
                    for (int64_t i = 0; i < S; i++) {
                        M[r * S + i] += d[r] * optest_get(in[1], i, hqk, t, sqk);
                        y += M[r * S + i] * optest_get(in[0], i, hqk, t, sqk);
                    }
                    ref[((s * T + t) * H + h) * S + r] = y / sqrt((double) S);
                }
                const int64_t slot = T - 1 - t;
                if (slot < p->K)
                    for (int64_t e = 0; e < S * S; e++)
                        ref[n_out + (size_t) slot * n_snap + (size_t) ((s * H + h) * S * S + e)] = M[e];
            }
        }
    free(d);
    free(M);
    return ref;
}

/*
 * Threshold 1e-9: decays in (0.6, 1), beta in (0, 1) and |k|^2 < 1 keep
 * the delta rule contracting over the few tokens; every value is a sum of
 * S F32 products (NMSE ~ 1e-14 observed).
 */
static void test_gdn_case(const struct gdn_shape *p, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *in[6];
    in[0] = gdn_qk(ctx, p, seed);
    in[1] = gdn_qk(ctx, p, seed);
    in[2] = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, p->S, p->H, p->T, p->n_seqs);
    in[3] = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, p->gate_per_value ? p->S : 1, p->H, p->T, p->n_seqs);
    in[4] = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, p->H, p->T, p->n_seqs);
    in[5] = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, p->S, p->S, p->H, p->n_seqs);
    optest_fill(in[2], seed, -1.0, 1.0);
    optest_fill(in[3], seed, -0.5, 0.0);
    optest_fill(in[4], seed, 0.0, 1.0);
    optest_fill(in[5], seed, -1.0, 1.0);
    double *ref = gdn_reference(p, in);
    struct ggml_tensor *out = ggml_gated_delta_net(ctx, in[0], in[1], in[2], in[3], in[4], in[5], p->K);
    char what[200];
    snprintf(what, sizeof what,
             "gated_delta_net S %lld, H %lld/%lld, tokens %lld, seqs %lld/%lld, K %lld%s%s", (long long) p->S,
             (long long) p->H, (long long) p->H_qk, (long long) p->T, (long long) p->n_seqs,
             (long long) p->n_seqs_qk, (long long) p->K, p->gate_per_value ? ", gate per value" : "",
             p->qk_strided ? ", strided q k" : "");
    const int64_t rows = p->T * p->n_seqs + p->K * p->S * p->n_seqs;
    int32_t stored_K = 0;
    if (out != NULL)
        memcpy(&stored_K, out->op_params, sizeof stored_K);
    ok(out != NULL && out->ne[0] == p->S * p->H && out->ne[1] == rows && out->ne[2] == 1 && out->ne[3] == 1 &&
           stored_K == (int32_t) p->K,
       "%s: result [S*H, T*n_seqs + K*S*n_seqs], K in op_params[0]", what);
    if (p->K <= p->T) {
        optest_check_all(ctx, out, ref, 1e-9, what);
    } else {
        /* snapshots n >= T keep what the memory held: check them byte for byte, the rest by value */
        for (int n_threads = 1; n_threads <= 3; n_threads += 2) {
            memset(out->data, 0x5a, ggml_nbytes(out));
            enum ggml_status status = optest_compute(ctx, out, n_threads, false);
            const float *o = out->data;
            const size_t n = (size_t) ggml_nelements(out);
            double err = 0.0, norm = 0.0;
            bool untouched = true;
            uint32_t bits;
            for (size_t e = 0; e < n; e++) {
                if (isnan(ref[e])) {
                    memcpy(&bits, &o[e], sizeof bits);
                    untouched = untouched && bits == 0x5a5a5a5au;
                } else {
                    err += (o[e] - ref[e]) * (o[e] - ref[e]);
                    norm += ref[e] * ref[e];
                }
            }
            ok(status == GGML_STATUS_SUCCESS && err <= 1e-9 * norm && untouched,
               "%s, %d threads: written values match (nmse %.3g), snapshots past the tokens untouched", what,
               n_threads, norm > 0.0 ? err / norm : err);
        }
    }
    free(ref);
    ggml_free(ctx);
}

static void test_gated_delta_net(void)
{
    uint64_t seed = 0x6d17;
    const struct gdn_shape shapes[] = {
        { 1, 1, 1, 1, 1, 1, 1, false, false },
        { 4, 2, 2, 5, 1, 1, 1, false, false },
        { 5, 4, 2, 3, 2, 1, 1, true, true },   /* heads and sequences broadcast */
        { 8, 3, 1, 6, 2, 2, 3, true, false },  /* three snapshots */
        { 3, 2, 2, 4, 3, 3, 4, false, true },  /* a snapshot per token */
        { 4, 2, 1, 2, 2, 1, 5, true, false },  /* more snapshots than tokens */
        { 33, 2, 2, 3, 1, 1, 2, false, true },
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        test_gdn_case(&shapes[i], &seed);
}

/* ---------------------------------------------------------------- errors */

static void test_errors(void)
{
    struct ggml_context *ctx = new_ctx();

    /* solve_tri */
    struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 4, 2);
    struct ggml_tensor *b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 4, 2);
    struct ggml_tensor *a16 = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 4, 4, 2);
    struct ggml_tensor *rect = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2);
    struct ggml_tensor *b1 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 4, 1);
    ok(ggml_solve_tri(ctx, a, b, true, true, false) != NULL, "solve_tri: valid arguments give a tensor");
    is_int(tap_log_errors(), 0, "solve_tri: valid arguments log nothing");
    ok(ggml_solve_tri(ctx, a16, b, true, true, false) == NULL, "solve_tri: an f16 matrix gives NULL");
    logged_one_error("solve_tri: an f16 matrix logs one error");
    ok(ggml_solve_tri(ctx, rect, b, true, true, false) == NULL, "solve_tri: a non-square matrix gives NULL");
    logged_one_error("solve_tri: a non-square matrix logs one error");
    ok(ggml_solve_tri(ctx, a, b1, true, true, false) == NULL, "solve_tri: mismatched batches give NULL");
    logged_one_error("solve_tri: mismatched batches log one error");
    ok(ggml_solve_tri(ctx, a, b, false, true, false) == NULL, "solve_tri: left = false gives NULL");
    logged_one_error("solve_tri: left = false logs one error");
    ok(ggml_solve_tri(ctx, a, b, true, false, false) == NULL, "solve_tri: lower = false gives NULL");
    logged_one_error("solve_tri: lower = false logs one error");
    ok(ggml_solve_tri(ctx, a, b, true, true, true) == NULL, "solve_tri: uni = true gives NULL");
    logged_one_error("solve_tri: uni = true logs one error");
    ok(ggml_solve_tri(ctx, NULL, b, true, true, false) == NULL && ggml_solve_tri(ctx, a, NULL, true, true, false) == NULL,
       "solve_tri: a NULL input gives NULL");
    is_int(tap_log_errors(), 0, "solve_tri: a NULL input logs nothing");

    /* ssm_conv */
    struct ggml_tensor *sx = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 6, 5, 2);
    struct ggml_tensor *c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5);
    struct ggml_tensor *c16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 5);
    struct ggml_tensor *c_wide = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 6);
    struct ggml_tensor *c_long = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 5);
    struct ggml_tensor *sx4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 5, 2, 2);
    ok(ggml_ssm_conv(ctx, sx, c) != NULL, "ssm_conv: valid arguments give a tensor");
    is_int(tap_log_errors(), 0, "ssm_conv: valid arguments log nothing");
    ok(ggml_ssm_conv(ctx, sx, c16) == NULL, "ssm_conv: an f16 kernel gives NULL");
    logged_one_error("ssm_conv: an f16 kernel logs one error");
    ok(ggml_ssm_conv(ctx, sx, c_wide) == NULL, "ssm_conv: a channel mismatch gives NULL");
    logged_one_error("ssm_conv: a channel mismatch logs one error");
    ok(ggml_ssm_conv(ctx, sx, c_long) == NULL, "ssm_conv: a kernel longer than the input gives NULL");
    logged_one_error("ssm_conv: a kernel longer than the input logs one error");
    ok(ggml_ssm_conv(ctx, sx4, c) == NULL, "ssm_conv: a 4-d input gives NULL");
    logged_one_error("ssm_conv: a 4-d input logs one error");
    ok(ggml_ssm_conv(ctx, NULL, c) == NULL && ggml_ssm_conv(ctx, sx, NULL) == NULL,
       "ssm_conv: a NULL input gives NULL");
    is_int(tap_log_errors(), 0, "ssm_conv: a NULL input logs nothing");

    /* ssm_scan: d_state 4, head_dim 2, 6 heads, 3 groups, 5 tokens, 2 seqs */
    struct ggml_tensor *s = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 2, 6, 3);
    struct ggml_tensor *x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 6, 5, 2);
    struct ggml_tensor *dt = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 6, 5, 2);
    struct ggml_tensor *A = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, 6);
    struct ggml_tensor *B = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 5, 2);
    struct ggml_tensor *C = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 5, 2);
    struct ggml_tensor *ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
    struct ggml_tensor *ids_f = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor *x16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 2, 6, 5, 2);
    struct ggml_tensor *A_bad = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 6);
    struct ggml_tensor *B4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 4, 5, 2);
    struct ggml_tensor *C4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 4, 5, 2);
    struct ggml_tensor *dt_bad = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 6, 4, 2);
    struct ggml_tensor *ids3 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
    ok(ggml_ssm_scan(ctx, s, x, dt, A, B, C, ids, 1) != NULL, "ssm_scan: valid arguments give a tensor");
    is_int(tap_log_errors(), 0, "ssm_scan: valid arguments log nothing");
    ok(ggml_ssm_scan(ctx, s, x16, dt, A, B, C, ids, 1) == NULL, "ssm_scan: an f16 input gives NULL");
    logged_one_error("ssm_scan: an f16 input logs one error");
    ok(ggml_ssm_scan(ctx, s, x, dt, A, B, C, ids_f, 1) == NULL, "ssm_scan: f32 ids give NULL");
    logged_one_error("ssm_scan: f32 ids log one error");
    ok(ggml_ssm_scan(ctx, s, x, dt, A_bad, B, C, ids, 1) == NULL, "ssm_scan: a bad A gives NULL");
    logged_one_error("ssm_scan: a bad A logs one error");
    ok(ggml_ssm_scan(ctx, s, x, dt, A, B4, C4, ids, 1) == NULL, "ssm_scan: groups not dividing heads give NULL");
    logged_one_error("ssm_scan: groups not dividing heads log one error");
    ok(ggml_ssm_scan(ctx, s, x, dt, A, B, C4, ids, 1) == NULL, "ssm_scan: B and C of different shapes give NULL");
    logged_one_error("ssm_scan: B and C of different shapes log one error");
    ok(ggml_ssm_scan(ctx, s, x, dt_bad, A, B, C, ids, 1) == NULL, "ssm_scan: a bad dt gives NULL");
    logged_one_error("ssm_scan: a bad dt logs one error");
    ok(ggml_ssm_scan(ctx, s, x, dt, A, B, C, ids3, 1) == NULL, "ssm_scan: too many ids give NULL");
    logged_one_error("ssm_scan: too many ids log one error");
    ok(ggml_ssm_scan(ctx, s, x, dt, A, B, C, ids, 0) == NULL, "ssm_scan: K = 0 gives NULL");
    logged_one_error("ssm_scan: K = 0 logs one error");
    ok(ggml_ssm_scan(ctx, s, x, dt, A, B, C, ids, (int64_t) INT32_MAX + 1) == NULL, "ssm_scan: K > INT32_MAX gives NULL");
    logged_one_error("ssm_scan: K > INT32_MAX logs one error");
    struct ggml_tensor *A_states = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 6);
    ok(ggml_ssm_scan(ctx, s, x, dt, A_states, B, C, ids, 1) != NULL, "ssm_scan: a decay per state with K = 1 works");
    ok(ggml_ssm_scan(ctx, s, x, dt, A_states, B, C, ids, 2) == NULL, "ssm_scan: a decay per state with K = 2 gives NULL");
    logged_one_error("ssm_scan: a decay per state with K = 2 logs one error");
    struct ggml_tensor *in[7] = { s, x, dt, A, B, C, ids };
    bool all_null = true;
    for (int k = 0; k < 7; k++) {
        struct ggml_tensor *arg[7];
        for (int j = 0; j < 7; j++)
            arg[j] = j == k ? NULL : in[j];
        all_null = all_null && ggml_ssm_scan(ctx, arg[0], arg[1], arg[2], arg[3], arg[4], arg[5], arg[6], 1) == NULL;
    }
    ok(all_null, "ssm_scan: a NULL input gives NULL");
    is_int(tap_log_errors(), 0, "ssm_scan: a NULL input logs nothing");
    /* rwkv_wkv6, gated_linear_attn, rwkv_wkv7: S 4, H 2, 6 tokens, 2 seqs */
    {
        struct ggml_tensor *t[6], *tf = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2);
        for (int i = 0; i < 6; i++)
            t[i] = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 2, 6);
        struct ggml_tensor *st = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, 2);
        struct ggml_tensor *st_bad = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, 4); /* 4 seqs do not divide 6 */
        struct ggml_tensor *st_small = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 31, 2);
        struct ggml_tensor *t16 = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 4, 2, 6);
        struct ggml_tensor *t_short = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 2, 5);
        struct ggml_tensor *tf_bad = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
        ok(ggml_rwkv_wkv6(ctx, t[0], t[1], t[2], tf, t[3], st) != NULL &&
               ggml_gated_linear_attn(ctx, t[0], t[1], t[2], t[3], st, 1.0f) != NULL &&
               ggml_rwkv_wkv7(ctx, t[0], t[1], t[2], t[3], t[4], t[5], st) != NULL,
           "linear attention: valid arguments give tensors");
        is_int(tap_log_errors(), 0, "linear attention: valid arguments log nothing");
        struct ggml_tensor *g = ggml_gated_linear_attn(ctx, t[0], t[1], t[2], t[3], st, 0.5f);
        float stored = 0.0f;
        if (g != NULL)
            memcpy(&stored, g->op_params, sizeof stored);
        ok(g != NULL && stored == 0.5f, "gated_linear_attn stores scale in op_params[0]");
        ok(ggml_rwkv_wkv6(ctx, t[0], t16, t[2], tf, t[3], st) == NULL, "rwkv_wkv6: an f16 input gives NULL");
        logged_one_error("rwkv_wkv6: an f16 input logs one error");
        ok(ggml_rwkv_wkv6(ctx, t[0], t[1], t[2], tf_bad, t[3], st) == NULL, "rwkv_wkv6: a bad bonus gives NULL");
        logged_one_error("rwkv_wkv6: a bad bonus logs one error");
        ok(ggml_rwkv_wkv6(ctx, t[0], t[1], t_short, tf, t[3], st) == NULL, "rwkv_wkv6: a short input gives NULL");
        logged_one_error("rwkv_wkv6: a short input logs one error");
        ok(ggml_gated_linear_attn(ctx, t[0], t[1], t[2], t[3], st_bad, 1.0f) == NULL,
           "gated_linear_attn: sequences not dividing the tokens give NULL");
        logged_one_error("gated_linear_attn: sequences not dividing the tokens log one error");
        ok(ggml_gated_linear_attn(ctx, t[0], t[1], t_short, t[3], st, 1.0f) == NULL,
           "gated_linear_attn: a short input gives NULL");
        logged_one_error("gated_linear_attn: a short input logs one error");
        ok(ggml_rwkv_wkv7(ctx, t[0], t[1], t[2], t[3], t[4], t[5], st_small) == NULL,
           "rwkv_wkv7: a state of the wrong size gives NULL");
        logged_one_error("rwkv_wkv7: a state of the wrong size logs one error");
        ok(ggml_rwkv_wkv7(ctx, t[0], t[1], t[2], t[3], t[4], t16, st) == NULL, "rwkv_wkv7: an f16 input gives NULL");
        logged_one_error("rwkv_wkv7: an f16 input logs one error");
        ok(ggml_rwkv_wkv6(ctx, NULL, t[1], t[2], tf, t[3], st) == NULL &&
               ggml_rwkv_wkv6(ctx, t[0], t[1], t[2], NULL, t[3], st) == NULL &&
               ggml_rwkv_wkv6(ctx, t[0], t[1], t[2], tf, t[3], NULL) == NULL &&
               ggml_gated_linear_attn(ctx, t[0], NULL, t[2], t[3], st, 1.0f) == NULL &&
               ggml_gated_linear_attn(ctx, t[0], t[1], t[2], t[3], NULL, 1.0f) == NULL &&
               ggml_rwkv_wkv7(ctx, t[0], t[1], t[2], t[3], NULL, t[5], st) == NULL &&
               ggml_rwkv_wkv7(ctx, NULL, t[1], t[2], t[3], t[4], t[5], st) == NULL,
           "linear attention: a NULL input gives NULL");
        is_int(tap_log_errors(), 0, "linear attention: a NULL input logs nothing");
    }
    /* gated_delta_net: S 4, H 2, 3 tokens, 2 sequences */
    {
        struct ggml_tensor *q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 2, 3, 2);
        struct ggml_tensor *v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 2, 3, 2);
        struct ggml_tensor *q3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 3, 2); /* 3 heads do not divide 2 */
        struct ggml_tensor *q16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 4, 2, 3, 2);
        struct ggml_tensor *qt = ggml_permute(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 4, 3, 2), 1, 0, 2, 3);
        struct ggml_tensor *g = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, 2, 3, 2);
        struct ggml_tensor *g3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 3, 2);
        struct ggml_tensor *beta = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, 2, 3, 2);
        struct ggml_tensor *st = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 4, 2, 2);
        struct ggml_tensor *st1 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 4, 2, 1);
        ok(ggml_gated_delta_net(ctx, q, q, v, g, beta, st, 1) != NULL && ggml_gated_delta_net(ctx, q, q, v, g, beta, st, 7) != NULL,
           "gated_delta_net: valid arguments give tensors");
        is_int(tap_log_errors(), 0, "gated_delta_net: valid arguments log nothing");
        ok(ggml_gated_delta_net(ctx, q16, q, v, g, beta, st, 1) == NULL, "gated_delta_net: an f16 query gives NULL");
        logged_one_error("gated_delta_net: an f16 query logs one error");
        ok(ggml_gated_delta_net(ctx, q3, q, v, g, beta, st, 1) == NULL,
           "gated_delta_net: query heads not dividing the value heads give NULL");
        logged_one_error("gated_delta_net: query heads not dividing the value heads log one error");
        ok(ggml_gated_delta_net(ctx, q, qt, v, g, beta, st, 1) == NULL,
           "gated_delta_net: a key with non-contiguous rows gives NULL");
        logged_one_error("gated_delta_net: a key with non-contiguous rows logs one error");
        ok(ggml_gated_delta_net(ctx, q, q, v, g3, beta, st, 1) == NULL,
           "gated_delta_net: a gate of 3 values for S 4 gives NULL");
        logged_one_error("gated_delta_net: a gate of 3 values for S 4 logs one error");
        ok(ggml_gated_delta_net(ctx, q, q, v, g, beta, st1, 1) == NULL,
           "gated_delta_net: a state for one sequence of two gives NULL");
        logged_one_error("gated_delta_net: a state for one sequence of two logs one error");
        ok(ggml_gated_delta_net(ctx, q, q, v, g, beta, st, 0) == NULL &&
               ggml_gated_delta_net(ctx, q, q, v, g, beta, st, (int64_t) INT32_MAX + 1) == NULL,
           "gated_delta_net: K = 0 or K > INT32_MAX gives NULL");
        is_int(tap_log_errors(), 2, "gated_delta_net: each bad K logs one error");
        ok(ggml_gated_delta_net(ctx, NULL, q, v, g, beta, st, 1) == NULL &&
               ggml_gated_delta_net(ctx, q, q, v, g, NULL, st, 1) == NULL &&
               ggml_gated_delta_net(ctx, q, q, v, g, beta, NULL, 1) == NULL,
           "gated_delta_net: a NULL input gives NULL");
        is_int(tap_log_errors(), 0, "gated_delta_net: a NULL input logs nothing");
    }
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    test_solve_tri();
    test_ssm_conv();
    test_ssm_scan();
    test_linear_attn();
    test_gated_delta_net();
    test_errors();
    return tap_done();
}
