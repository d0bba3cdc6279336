/*
 * test-op-deepseek.c - LIGHTNING_INDEXER, DSV4_HC_COMB, DSV4_HC_PRE and
 * DSV4_HC_POST: odd shapes, several streams, broadcast masks, F16 and Q8_0
 * keys, non-contiguous inputs, 1..4 threads, and the constructors' error
 * paths.
 *
 * Each reference is computed here in double precision from the inputs as
 * stored (keys as they decode).  Thresholds: F32 sums of at most a few
 * hundred products (NMSE ~1e-14 observed); the indexer's ReLU makes a
 * score whose terms nearly cancel at 0 sensitive to rounding, so its
 * threshold allows for a term flipping (1e-9, still far below a wrong
 * index or sign, which shows as 1e-2 or more).
 */
#include <math.h>
#include <stdio.h>

#include "tap.h"
#include "op-test.h"

static struct ggml_context *new_ctx(void)
{
    struct ggml_init_params params = { 16u << 20, NULL, false };
    return ggml_init(params);
}

/* ----------------------------------------------------- LIGHTNING_INDEXER */

static void test_indexer_case(enum ggml_type k_type, int64_t n_embd, int64_t n_head, int64_t n_tokens, int64_t n_kv,
                              int64_t n_stream, int64_t n_mask, bool q_permuted, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *q;
    if (q_permuted) {
        /* stored [n_embd, n_tokens, n_head, n_stream], used as [n_embd, n_head, n_tokens, n_stream] */
        struct ggml_tensor *qs = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n_embd, n_tokens, n_head, n_stream);
        optest_fill(qs, seed, -1.0, 1.0);
        q = ggml_permute(ctx, qs, 0, 2, 1, 3);
    } else {
        q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n_embd, n_head, n_tokens, n_stream);
        optest_fill(q, seed, -1.0, 1.0);
    }
    struct ggml_tensor *kf = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n_embd, 1, n_kv, n_stream);
    optest_fill(kf, seed, -1.0, 1.0);
    struct ggml_tensor *k = kf;
    if (k_type != GGML_TYPE_F32) {
        k = ggml_new_tensor_4d(ctx, k_type, n_embd, 1, n_kv, n_stream);
        ggml_quantize_chunk(k_type, (const float *) kf->data, k->data, 0, ggml_nrows(kf), n_embd, NULL);
    }
    struct ggml_tensor *w = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n_head, n_tokens, 1, n_stream);
    optest_fill(w, seed, 0.0, 0.5);
    struct ggml_tensor *mask = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, n_kv, n_tokens, 1, n_mask);
    optest_fill(mask, seed, -2.0, 0.0);
    for (int64_t t = 0; t < n_tokens && n_kv > 1; t++) /* a masked key in every row with others left */
        optest_set(mask, t % n_kv, t, 0, 0, -INFINITY);

    /* the keys as the kernel reads them: decoded */
    double *key = malloc((size_t) n_embd * sizeof *key);
    float *row = malloc((size_t) n_embd * sizeof *row);
    double *ref = malloc((size_t) (n_kv * n_tokens * n_stream) * sizeof *ref);
    for (int64_t s = 0; s < n_stream; s++)
        for (int64_t j = 0; j < n_kv; j++) {
            if (k_type == GGML_TYPE_F32)
                for (int64_t i = 0; i < n_embd; i++)
                    key[i] = optest_get(k, i, 0, j, s);
            else {
                ggml_get_type_traits(k_type)->to_float((const char *) k->data + j * k->nb[2] + s * k->nb[3], row,
                                                       n_embd);
                for (int64_t i = 0; i < n_embd; i++)
                    key[i] = row[i];
            }
            for (int64_t t = 0; t < n_tokens; t++) {
                double score = 0.0;
                for (int64_t h = 0; h < n_head; h++) {
                    double qk = 0.0;
                    for (int64_t i = 0; i < n_embd; i++)
                        qk += optest_get(q, i, h, t, s) * key[i];
                    score += (qk > 0.0 ? qk : 0.0) * optest_get(w, h, t, 0, s);
                }
                ref[(s * n_tokens + t) * n_kv + j] = score + optest_get(mask, j, t, 0, s % n_mask);
            }
        }
    struct ggml_tensor *out = ggml_lightning_indexer(ctx, q, k, w, mask);
    ok(out != NULL && out->op == GGML_OP_LIGHTNING_INDEXER && out->type == GGML_TYPE_F32 && out->ne[0] == n_kv &&
           out->ne[1] == n_tokens && out->ne[2] == 1 && out->ne[3] == n_stream,
       "lightning_indexer: result [n_kv, n_tokens, 1, n_stream]");
    /* masked entries are -inf in both: compare the finite ones through the NMSE, the others here */
    bool masked_right = out != NULL;
    char what[160];
    snprintf(what, sizeof what, "lightning_indexer %s keys, n_embd %lld, heads %lld, tokens %lld, keys %lld, "
             "streams %lld, masks %lld%s", ggml_type_name(k_type), (long long) n_embd, (long long) n_head,
             (long long) n_tokens, (long long) n_kv, (long long) n_stream, (long long) n_mask,
             q_permuted ? ", permuted q" : "");
    if (out != NULL) {
        for (int use_ref = 0; use_ref <= 1; use_ref++)
            for (int n_threads = 1; n_threads <= 4; n_threads++) {
                memset(out->data, 0xff, ggml_nbytes(out));
                enum ggml_status status = optest_compute(ctx, out, n_threads, use_ref);
                double err = 0.0, norm = 0.0;
                for (int64_t e = 0; e < n_kv * n_tokens * n_stream; e++) {
                    const double got = ((const float *) out->data)[e];
                    if (isinf(ref[e])) {
                        masked_right = masked_right && isinf(got) && got < 0;
                        continue;
                    }
                    err += (got - ref[e]) * (got - ref[e]);
                    norm += ref[e] * ref[e];
                }
                ok(status == GGML_STATUS_SUCCESS && err / norm <= 1e-9, "%s, %d threads, %s: nmse %.3g", what,
                   n_threads, use_ref ? "reference" : "fast", err / norm);
            }
    }
    ok(masked_right, "%s: masked keys score -inf", what);
    free(key);
    free(row);
    free(ref);
    ggml_free(ctx);
}

static void test_indexer(void)
{
    uint64_t seed = 0x1d3e;
    test_indexer_case(GGML_TYPE_F32, 1, 1, 1, 1, 1, 1, false, &seed);
    test_indexer_case(GGML_TYPE_F32, 33, 4, 5, 17, 2, 1, false, &seed);
    test_indexer_case(GGML_TYPE_F32, 16, 3, 7, 31, 4, 2, true, &seed);
    test_indexer_case(GGML_TYPE_F16, 64, 2, 3, 9, 1, 1, false, &seed);
    test_indexer_case(GGML_TYPE_Q8_0, 64, 5, 4, 13, 2, 2, true, &seed);
}

/* ---------------------------------------------------------- DSV4_HC_COMB */

/* One token's matrix c[dst + hc src] from its logits, as ggml_dsv4_hc_comb(3) defines it. */
static void reference_comb(double *c, int64_t hc, double eps, int n_iter)
{
    for (int64_t src = 0; src < hc; src++) {
        double max = -INFINITY, sum = 0.0;
        for (int64_t d = 0; d < hc; d++)
            max = fmax(max, c[d + hc * src]);
        for (int64_t d = 0; d < hc; d++)
            sum += c[d + hc * src] = exp(c[d + hc * src] - max);
        for (int64_t d = 0; d < hc; d++)
            c[d + hc * src] = c[d + hc * src] / sum + eps;
    }
    for (int round = 0; round < n_iter; round++) {
        if (round > 0)
            for (int64_t src = 0; src < hc; src++) {
                double sum = eps;
                for (int64_t d = 0; d < hc; d++)
                    sum += c[d + hc * src];
                for (int64_t d = 0; d < hc; d++)
                    c[d + hc * src] /= sum;
            }
        for (int64_t d = 0; d < hc; d++) {
            double sum = eps;
            for (int64_t src = 0; src < hc; src++)
                sum += c[d + hc * src];
            for (int64_t src = 0; src < hc; src++)
                c[d + hc * src] /= sum;
        }
    }
}

static void test_comb_case(int64_t hc, int64_t n_tokens, float eps, int n_iter, bool strided, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    const int64_t width = (2 + hc) * hc;
    struct ggml_tensor *mixes;
    if (strided) {
        struct ggml_tensor *wide = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, width + 3, n_tokens);
        optest_fill(wide, seed, -2.0, 2.0);
        mixes = ggml_view_2d(ctx, wide, width, n_tokens, wide->nb[1], 2 * sizeof(float));
    } else {
        mixes = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, width, n_tokens);
        optest_fill(mixes, seed, -2.0, 2.0);
    }
    struct ggml_tensor *scale = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    optest_fill(scale, seed, 0.5, 1.5);
    struct ggml_tensor *base = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, width);
    optest_fill(base, seed, -1.0, 1.0);
    double *ref = malloc((size_t) (hc * hc * n_tokens) * sizeof *ref);
    for (int64_t t = 0; t < n_tokens; t++) {
        double *c = ref + t * hc * hc;
        for (int64_t src = 0; src < hc; src++)
            for (int64_t d = 0; d < hc; d++) {
                const int64_t at = 2 * hc + d + hc * src;
                c[d + hc * src] = optest_get(mixes, at, t, 0, 0) * optest_get(scale, 2, 0, 0, 0) +
                                  optest_get(base, at, 0, 0, 0);
            }
        reference_comb(c, hc, eps, n_iter);
    }
    struct ggml_tensor *out = ggml_dsv4_hc_comb(ctx, mixes, scale, base, eps, n_iter);
    ok(out != NULL && out->op == GGML_OP_DSV4_HC_COMB && out->ne[0] == hc && out->ne[1] == hc &&
           out->ne[2] == n_tokens,
       "dsv4_hc_comb: result [hc, hc, n_tokens]");
    char what[128];
    snprintf(what, sizeof what, "dsv4_hc_comb hc %lld, tokens %lld, eps %g, %d iterations%s", (long long) hc,
             (long long) n_tokens, eps, n_iter, strided ? ", strided mixes" : "");
    if (out != NULL)
        optest_check_all(ctx, out, ref, 1e-11, what);
    free(ref);
    ggml_free(ctx);
}

static void test_comb(void)
{
    uint64_t seed = 0xc0b;
    test_comb_case(4, 1, 1e-6f, 1, false, &seed);
    test_comb_case(4, 33, 1e-6f, 20, false, &seed);
    test_comb_case(4, 7, 0.01f, 3, true, &seed);
    test_comb_case(1, 5, 0.0f, 2, false, &seed);
    test_comb_case(3, 9, 1e-3f, 5, true, &seed);
}

/* ----------------------------------------------- DSV4_HC_PRE, DSV4_HC_POST */

static void test_pre_case(int64_t n_embd, int64_t hc, int64_t n_tokens, bool permuted, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *x;
    if (permuted) {
        struct ggml_tensor *xs = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, hc, n_embd, n_tokens);
        optest_fill(xs, seed, -1.0, 1.0);
        x = ggml_permute(ctx, xs, 1, 0, 2, 3);
    } else {
        x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n_embd, hc, n_tokens);
        optest_fill(x, seed, -1.0, 1.0);
    }
    struct ggml_tensor *w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, hc, n_tokens);
    optest_fill(w, seed, -1.0, 1.0);
    double *ref = malloc((size_t) (n_embd * n_tokens) * sizeof *ref);
    for (int64_t t = 0; t < n_tokens; t++)
        for (int64_t i = 0; i < n_embd; i++) {
            double sum = 0.0;
            for (int64_t h = 0; h < hc; h++)
                sum += optest_get(x, i, h, t, 0) * optest_get(w, h, t, 0, 0);
            ref[t * n_embd + i] = sum;
        }
    struct ggml_tensor *out = ggml_dsv4_hc_pre(ctx, x, w);
    ok(out != NULL && out->op == GGML_OP_DSV4_HC_PRE && out->ne[0] == n_embd && out->ne[1] == n_tokens &&
           out->ne[2] == 1,
       "dsv4_hc_pre: result [n_embd, n_tokens]");
    char what[128];
    snprintf(what, sizeof what, "dsv4_hc_pre n_embd %lld, hc %lld, tokens %lld%s", (long long) n_embd,
             (long long) hc, (long long) n_tokens, permuted ? ", permuted x" : "");
    if (out != NULL)
        optest_check_all(ctx, out, ref, 1e-11, what);
    free(ref);
    ggml_free(ctx);
}

static void test_post_case(int64_t n_embd, int64_t hc, int64_t n_tokens, bool permuted, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n_embd, n_tokens);
    optest_fill(x, seed, -1.0, 1.0);
    struct ggml_tensor *residual;
    if (permuted) {
        struct ggml_tensor *rs = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, hc, n_embd, n_tokens);
        optest_fill(rs, seed, -1.0, 1.0);
        residual = ggml_permute(ctx, rs, 1, 0, 2, 3);
    } else {
        residual = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n_embd, hc, n_tokens);
        optest_fill(residual, seed, -1.0, 1.0);
    }
    struct ggml_tensor *post = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, hc, n_tokens);
    optest_fill(post, seed, -1.0, 1.0);
    struct ggml_tensor *comb = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, hc, hc, n_tokens);
    optest_fill(comb, seed, 0.0, 1.0);
    double *ref = malloc((size_t) (n_embd * hc * n_tokens) * sizeof *ref);
    for (int64_t t = 0; t < n_tokens; t++)
        for (int64_t d = 0; d < hc; d++)
            for (int64_t i = 0; i < n_embd; i++) {
                double sum = optest_get(x, i, t, 0, 0) * optest_get(post, d, t, 0, 0);
                for (int64_t s = 0; s < hc; s++)
                    sum += optest_get(residual, i, s, t, 0) * optest_get(comb, d, s, t, 0);
                ref[(t * hc + d) * n_embd + i] = sum;
            }
    struct ggml_tensor *out = ggml_dsv4_hc_post(ctx, x, residual, post, comb);
    ok(out != NULL && out->op == GGML_OP_DSV4_HC_POST && out->ne[0] == n_embd && out->ne[1] == hc &&
           out->ne[2] == n_tokens,
       "dsv4_hc_post: result [n_embd, hc, n_tokens]");
    char what[128];
    snprintf(what, sizeof what, "dsv4_hc_post n_embd %lld, hc %lld, tokens %lld%s", (long long) n_embd,
             (long long) hc, (long long) n_tokens, permuted ? ", permuted residual" : "");
    if (out != NULL)
        optest_check_all(ctx, out, ref, 1e-11, what);
    free(ref);
    ggml_free(ctx);
}

static void test_pre_post(void)
{
    uint64_t seed = 0x9a5;
    test_pre_case(1, 1, 1, false, &seed);
    test_pre_case(33, 4, 7, false, &seed);
    test_pre_case(257, 3, 2, true, &seed);
    test_post_case(1, 1, 1, false, &seed);
    test_post_case(33, 4, 7, false, &seed);
    test_post_case(31, 5, 3, true, &seed);
}

/* ------------------------------------------------------------ errors */

static void test_errors(void)
{
    struct ggml_context *ctx = new_ctx();
    tap_log_errors();
    struct ggml_tensor *q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 2, 3, 1);
    struct ggml_tensor *k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 1, 5, 1);
    struct ggml_tensor *w = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 3, 1, 1);
    struct ggml_tensor *mask = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 5, 3, 1, 1);
    struct ggml_tensor *mask32 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 3, 1, 1);
    struct ggml_tensor *k_i32 = ggml_new_tensor_4d(ctx, GGML_TYPE_I32, 8, 1, 5, 1);
    struct ggml_tensor *w_bad = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 1, 1);
    ok(ggml_lightning_indexer(ctx, q, k, w, mask) != NULL && tap_log_errors() == 0,
       "lightning_indexer: valid arguments, no message");
    ok(ggml_lightning_indexer(ctx, q, k, w, mask32) == NULL, "lightning_indexer: an f32 mask gives NULL");
    logged_one_error("lightning_indexer: an f32 mask logs one error");
    ok(ggml_lightning_indexer(ctx, q, k_i32, w, mask) == NULL, "lightning_indexer: i32 keys give NULL");
    logged_one_error("lightning_indexer: i32 keys log one error");
    ok(ggml_lightning_indexer(ctx, q, k, w_bad, mask) == NULL, "lightning_indexer: weights for 3 heads give NULL");
    logged_one_error("lightning_indexer: weights for 3 heads log one error");
    ok(ggml_lightning_indexer(ctx, q, NULL, w, mask) == NULL && tap_log_errors() == 0,
       "lightning_indexer: a NULL input gives NULL quietly");

    struct ggml_tensor *mixes = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 24, 3);
    struct ggml_tensor *mixes_bad = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 23, 3);
    struct ggml_tensor *scale = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    struct ggml_tensor *scale2 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor *base = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 24);
    ok(ggml_dsv4_hc_comb(ctx, mixes, scale, base, 1e-6f, 1) != NULL && tap_log_errors() == 0,
       "dsv4_hc_comb: valid arguments, no message");
    ok(ggml_dsv4_hc_comb(ctx, mixes_bad, scale, base, 1e-6f, 1) == NULL,
       "dsv4_hc_comb: 23 mixes (no hc) give NULL");
    logged_one_error("dsv4_hc_comb: 23 mixes log one error");
    ok(ggml_dsv4_hc_comb(ctx, mixes, scale2, base, 1e-6f, 1) == NULL, "dsv4_hc_comb: a short scale gives NULL");
    logged_one_error("dsv4_hc_comb: a short scale logs one error");
    ok(ggml_dsv4_hc_comb(ctx, mixes, scale, base, 1e-6f, 0) == NULL, "dsv4_hc_comb: n_iter 0 gives NULL");
    logged_one_error("dsv4_hc_comb: n_iter 0 logs one error");

    struct ggml_tensor *x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 4, 3);
    struct ggml_tensor *hw = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *hw_bad = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2);
    ok(ggml_dsv4_hc_pre(ctx, x, hw) != NULL && tap_log_errors() == 0, "dsv4_hc_pre: valid arguments, no message");
    ok(ggml_dsv4_hc_pre(ctx, x, hw_bad) == NULL, "dsv4_hc_pre: weights for 2 tokens give NULL");
    logged_one_error("dsv4_hc_pre: weights for 2 tokens log one error");

    struct ggml_tensor *xt = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 3);
    struct ggml_tensor *comb = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 4, 3);
    struct ggml_tensor *comb_bad = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 3);
    struct ggml_tensor *x16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 8, 3);
    ok(ggml_dsv4_hc_post(ctx, xt, x, hw, comb) != NULL && tap_log_errors() == 0,
       "dsv4_hc_post: valid arguments, no message");
    ok(ggml_dsv4_hc_post(ctx, xt, x, hw, comb_bad) == NULL, "dsv4_hc_post: a 4 x 3 comb gives NULL");
    logged_one_error("dsv4_hc_post: a 4 x 3 comb logs one error");
    ok(ggml_dsv4_hc_post(ctx, x16, x, hw, comb) == NULL, "dsv4_hc_post: an f16 input gives NULL");
    logged_one_error("dsv4_hc_post: an f16 input logs one error");
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    test_indexer();
    test_comb();
    test_pre_post();
    test_errors();
    return tap_done();
}
