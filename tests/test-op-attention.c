/*
 * test-op-attention.c - FLASH_ATTN_EXT: head sizes, key counts, query
 * counts, grouped-query attention, K/V types, the mask (broadcast over
 * heads and sequences, wider and taller than needed), softcap, ALiBi,
 * sinks, K/V read through views of a larger cache, permuted queries,
 * thread counts, reference and tiled kernels, the precision setting, and
 * the constructors' error paths.
 *
 * The reference is the explicit softmax(scale * q k^T [softcapped] +
 * slope * mask) v, with the sink in the normaliser, computed here in
 * double precision from the inputs as stored.
 */
#include <stdio.h>

#include "tap.h"
#include "op-test.h"
#include "ggml-backend.h"

struct attn_case {
    int64_t dk, dv, n_kv, n_q, n_head, n_head_kv, n_seq;
    enum ggml_type tk, tv;
    int mask;                 /* 0 none, 1 random with -INF holes, 2 causal */
    int64_t mask_ne2, mask_ne3;
    float scale, softcap, max_bias;
    bool sinks;
    bool kv_view;             /* K and V are views into a larger cache, as llama.cpp reads them */
    bool q_permuted;          /* q is a permuted view of [dk, n_head, n_q, n_seq] */
};

/* ---------------------------------------------------------------- inputs */

struct attn_inputs {
    struct ggml_tensor *q, *k, *v, *mask, *sinks;
};

/* [d, n_kv, n_head_kv, n_seq], plain or a permuted view of a cache [d * n_head_kv, n_kv + 5, n_seq]. */
static struct ggml_tensor *make_kv(struct ggml_context *ctx, const struct attn_case *c, enum ggml_type type,
                                   int64_t d, uint64_t *seed)
{
    if (!c->kv_view) {
        struct ggml_tensor *t = ggml_new_tensor_4d(ctx, type, d, c->n_kv, c->n_head_kv, c->n_seq);
        optest_fill(t, seed, -1.0, 1.0);
        return t;
    }
    const int64_t cache_rows = c->n_kv + 5, first_row = 2;
    struct ggml_tensor *cache = ggml_new_tensor_3d(ctx, type, d * c->n_head_kv, cache_rows, c->n_seq);
    optest_fill(cache, seed, -1.0, 1.0);
    struct ggml_tensor *view = ggml_view_4d(ctx, cache, d, c->n_head_kv, c->n_kv, c->n_seq, ggml_row_size(type, d),
                                            cache->nb[1], cache->nb[2], first_row * cache->nb[1]);
    return ggml_permute(ctx, view, 0, 2, 1, 3);
}

static void make_inputs(struct ggml_context *ctx, const struct attn_case *c, uint64_t *seed, struct attn_inputs *in)
{
    if (c->q_permuted) {
        struct ggml_tensor *base = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c->dk, c->n_head, c->n_q, c->n_seq);
        optest_fill(base, seed, -1.0, 1.0);
        in->q = ggml_permute(ctx, base, 0, 2, 1, 3);
    } else {
        in->q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c->dk, c->n_q, c->n_head, c->n_seq);
        optest_fill(in->q, seed, -1.0, 1.0);
    }
    in->k = make_kv(ctx, c, c->tk, c->dk, seed);
    in->v = make_kv(ctx, c, c->tv, c->dv, seed);
    in->mask = NULL;
    if (c->mask) {
        /* wider and taller than needed: only the first n_kv values of the first n_q rows count */
        in->mask = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, c->n_kv + 3, c->n_q + 2, c->mask_ne2, c->mask_ne3);
        for (int64_t i3 = 0; i3 < in->mask->ne[3]; i3++)
            for (int64_t i2 = 0; i2 < in->mask->ne[2]; i2++)
                for (int64_t i1 = 0; i1 < in->mask->ne[1]; i1++)
                    for (int64_t i0 = 0; i0 < in->mask->ne[0]; i0++) {
                        double m = optest_uniform(seed, -3.0, 0.0);
                        if (c->mask == 1 && optest_uniform(seed, 0.0, 1.0) < 0.25)
                            m = -INFINITY;
                        if (c->mask == 2 && i0 > c->n_kv - c->n_q + i1)
                            m = -INFINITY;
                        optest_set(in->mask, i0, i1, i2, i3, m);
                    }
    }
    in->sinks = NULL;
    if (c->sinks) {
        in->sinks = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, c->n_head);
        optest_fill(in->sinks, seed, -2.0, 2.0);
    }
}

static struct ggml_tensor *make_op(struct ggml_context *ctx, const struct attn_case *c, const struct attn_inputs *in)
{
    struct ggml_tensor *out = ggml_flash_attn_ext(ctx, in->q, in->k, in->v, in->mask, c->scale, c->max_bias,
                                                  c->softcap);
    if (out != NULL && in->sinks != NULL)
        ggml_flash_attn_ext_add_sinks(out, in->sinks);
    return out;
}

/* ------------------------------------------------------------- reference */

static double alibi_slope(double max_bias, int64_t n_head, int64_t h)
{
    if (!(max_bias > 0.0))
        return 1.0;
    int64_t n = 1;
    while (n * 2 <= n_head)
        n *= 2;
    const double m0 = pow(2.0, -max_bias / (double) n), m1 = pow(2.0, -max_bias / 2.0 / (double) n);
    return h < n ? pow(m0, (double) (h + 1)) : pow(m1, (double) (2 * (h - n) + 1));
}

/* Expected output laid out as dst [dv, n_head, n_q, n_seq], row-major. */
static double *reference(const struct attn_case *c, const struct attn_inputs *in)
{
    const int64_t r2 = c->n_head / c->n_head_kv;
    double *ref = calloc((size_t) (c->dv * c->n_head * c->n_q * c->n_seq), sizeof *ref);
    double *x = malloc((size_t) (c->n_kv + 1) * sizeof *x);
    double *qrow = malloc((size_t) c->dk * sizeof *qrow);
    for (int64_t s = 0; s < c->n_seq; s++)
        for (int64_t h = 0; h < c->n_head; h++) {
            const int64_t hk = h / r2;
            const double slope = alibi_slope(c->max_bias, c->n_head, h);
            for (int64_t i = 0; i < c->n_q; i++) {
                for (int64_t d = 0; d < c->dk; d++)
                    qrow[d] = optest_get(in->q, d, i, h, s);
                double max = -INFINITY;
                for (int64_t j = 0; j < c->n_kv; j++) {
                    double m = 0.0;
                    if (in->mask != NULL)
                        m = slope * optest_get(in->mask, j, i, h % c->mask_ne2, s % c->mask_ne3);
                    if (m == -INFINITY) {
                        x[j] = -INFINITY;
                        continue;
                    }
                    double dot = 0.0;
                    for (int64_t d = 0; d < c->dk; d++)
                        dot += qrow[d] * optest_get(in->k, d, j, hk, s);
                    double score = c->scale * dot;
                    if (c->softcap != 0.0f)
                        score = c->softcap * tanh(score / c->softcap);
                    x[j] = score + m;
                    if (x[j] > max)
                        max = x[j];
                }
                const double sink = in->sinks != NULL ? optest_get(in->sinks, h, 0, 0, 0) : -INFINITY;
                if (sink > max)
                    max = sink;
                double *out = ref + ((s * c->n_q + i) * c->n_head + h) * c->dv;
                if (max == -INFINITY)
                    continue; /* every key masked and no sink: zeros */
                double norm = in->sinks != NULL ? exp(sink - max) : 0.0;
                for (int64_t j = 0; j < c->n_kv; j++) {
                    if (x[j] == -INFINITY)
                        continue;
                    const double w = exp(x[j] - max);
                    norm += w;
                    for (int64_t d = 0; d < c->dv; d++)
                        out[d] += w * optest_get(in->v, d, j, hk, s);
                }
                for (int64_t d = 0; d < c->dv; d++)
                    out[d] /= norm;
            }
        }
    free(x);
    free(qrow);
    return ref;
}

/*
 * Thresholds.  The reference kernel dots q with K dequantized to F32, so
 * its error is F32 rounding over a few hundred terms: NMSE ~1e-13, bound
 * 1e-10.  The tiled kernel converts q to K's vec_dot_type first, as ggml
 * does; that perturbs every score by about scale * sqrt(dk) * |k| * the
 * rounding of q: for F16 (relative 2^-11) the scores move by ~1e-4 and
 * the output, a weighted mean, by a similar relative amount: NMSE ~1e-8,
 * bound 1e-6 (measured up to 7e-8); for BF16 (2^-8) about 64 times
 * more: bound 1e-4 (measured 3e-6); for Q8_0 / Q8_1 (steps of max|q| / 127
 * per block of 32) scores move by ~1e-3: bound 2e-4 (measured 2.5e-5).
 * Values of V are used as stored, in F32.
 */
static double threshold(const struct attn_case *c, bool use_ref)
{
    if (use_ref || c->tk == GGML_TYPE_F32)
        return 1e-10;
    if (c->tk == GGML_TYPE_F16)
        return 1e-6;
    if (c->tk == GGML_TYPE_BF16)
        return 1e-4;
    return 2e-4;
}

static void describe(const struct attn_case *c, char *buf, size_t size)
{
    snprintf(buf, size,
             "dk %lld dv %lld n_kv %lld n_q %lld heads %lld/%lld seq %lld k %s v %s mask %d [%lld,%lld] "
             "softcap %g max_bias %g%s%s%s",
             (long long) c->dk, (long long) c->dv, (long long) c->n_kv, (long long) c->n_q, (long long) c->n_head,
             (long long) c->n_head_kv, (long long) c->n_seq, ggml_type_name(c->tk), ggml_type_name(c->tv), c->mask,
             (long long) c->mask_ne2, (long long) c->mask_ne3, (double) c->softcap, (double) c->max_bias,
             c->sinks ? " sinks" : "", c->kv_view ? " kv-view" : "", c->q_permuted ? " q-permuted" : "");
}

/*
 * Computes the case with 1..4 threads for each kernel; checks the NMSE of
 * every run and that every thread count gives the very same bits as one
 * thread (each row is computed whole by one thread, in the same order).
 */
static void check_case(const struct attn_case *c, uint64_t *seed)
{
    struct ggml_init_params params = { 64u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct attn_inputs in;
    make_inputs(ctx, c, seed, &in);
    double *ref = reference(c, &in);
    char what[256];
    describe(c, what, sizeof what);

    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        double worst = 0.0;
        bool computed = true, same_bits = true;
        void *first = NULL;
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            struct ggml_tensor *out = make_op(ctx, c, &in);
            if (out == NULL || optest_compute(ctx, out, n_threads, use_ref) != GGML_STATUS_SUCCESS) {
                computed = false;
                break;
            }
            const double nmse = optest_nmse(out, ref);
            if (!(nmse <= worst))
                worst = nmse;
            if (first == NULL) {
                first = malloc(ggml_nbytes(out));
                memcpy(first, out->data, ggml_nbytes(out));
            } else if (memcmp(first, out->data, ggml_nbytes(out)) != 0) {
                same_bits = false;
            }
        }
        ok(computed && worst <= threshold(c, use_ref) && same_bits, "%s, %s: nmse %.3g%s", what,
           use_ref ? "reference" : "tiled", worst, same_bits ? "" : " (thread counts disagree)");
        free(first);
    }
    free(ref);
    ggml_free(ctx);
}

/* ---------------------------------------------------------------- sweeps */

static struct attn_case base_case(int64_t d, int64_t n_kv, int64_t n_q, int64_t n_head, int64_t n_head_kv,
                                  enum ggml_type tk, enum ggml_type tv)
{
    struct attn_case c = {
        .dk = d, .dv = d, .n_kv = n_kv, .n_q = n_q, .n_head = n_head, .n_head_kv = n_head_kv, .n_seq = 1,
        .tk = tk, .tv = tv, .mask = 0, .mask_ne2 = 1, .mask_ne3 = 1,
        .scale = 4.0f / sqrtf((float) d), .softcap = 0.0f, .max_bias = 0.0f,
    };
    return c;
}

/* Head sizes x key counts, cycling through query counts, GQA ratios and options. */
static void test_sweep(void)
{
    uint64_t seed = 0xa77e0001;
    const enum ggml_type kv_types[] = { GGML_TYPE_F32, GGML_TYPE_F16 };
    const int64_t dims[] = { 64, 128, 40 };
    const int64_t n_kvs[] = { 1, 7, 33, 257 };
    const int64_t n_qs[] = { 1, 3, 8 };
    const int64_t ratios[] = { 1, 2, 4 };
    int k = 0;
    for (size_t t = 0; t < 2; t++)
        for (size_t di = 0; di < 3; di++)
            for (size_t ni = 0; ni < 4; ni++, k++) {
                const int64_t ratio = ratios[k % 3];
                struct attn_case c = base_case(dims[di], n_kvs[ni], n_qs[(k / 3) % 3], 4, 4 / ratio, kv_types[t],
                                               kv_types[t]);
                c.mask = k % 3;                       /* none, random holes, causal */
                c.mask_ne2 = k % 4 == 1 ? c.n_head : 1;
                c.softcap = k % 5 == 2 ? 3.0f : 0.0f;
                c.max_bias = c.mask && k % 4 == 2 ? 8.0f : 0.0f;
                c.sinks = k % 3 == 1;
                c.kv_view = k % 2 == 1;
                c.q_permuted = k % 4 == 3;
                check_case(&c, &seed);
            }
}

/* Every K/V type pairing the kernel takes, including mixed ones and quantized caches. */
static void test_types(void)
{
    uint64_t seed = 0xa77e0002;
    const struct { enum ggml_type tk, tv; } pairs[] = {
        { GGML_TYPE_BF16, GGML_TYPE_BF16 }, { GGML_TYPE_Q8_0, GGML_TYPE_Q8_0 }, { GGML_TYPE_Q4_0, GGML_TYPE_Q4_0 },
        { GGML_TYPE_Q4_1, GGML_TYPE_Q5_1 }, { GGML_TYPE_Q5_0, GGML_TYPE_F16 },  { GGML_TYPE_Q8_0, GGML_TYPE_F16 },
        { GGML_TYPE_F16, GGML_TYPE_F32 },   { GGML_TYPE_F32, GGML_TYPE_F16 },
    };
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
        for (int variant = 0; variant < 2; variant++) {
            struct attn_case c = base_case(variant ? 128 : 64, variant ? 257 : 33, variant ? 3 : 5, 4,
                                           variant ? 1 : 2, pairs[p].tk, pairs[p].tv);
            c.mask = variant ? 2 : 1;
            c.kv_view = variant == 1;
            c.sinks = p % 2 == 0;
            check_case(&c, &seed);
        }
    /* formats of up to 128 values a block (head size 128), K dotted against Q8_0 */
    const struct { enum ggml_type tk, tv; } small[] = {
        { GGML_TYPE_MXFP4, GGML_TYPE_MXFP4 }, { GGML_TYPE_NVFP4, GGML_TYPE_IQ4_NL }, { GGML_TYPE_Q1_0, GGML_TYPE_Q2_0 },
        { GGML_TYPE_Q2_0, GGML_TYPE_F16 },    { GGML_TYPE_IQ4_NL, GGML_TYPE_Q1_0 },
    };
    for (size_t p = 0; p < sizeof small / sizeof small[0]; p++) {
        struct attn_case c = base_case(128, 65, 3, 4, 1, small[p].tk, small[p].tv);
        c.mask = 1;
        c.sinks = p % 2 == 0;
        check_case(&c, &seed);
    }
}

/* One feature at a time, then llama.cpp's layout, sequences and a head size differing for K and V. */
static void test_features(void)
{
    uint64_t seed = 0xa77e0003;
    struct attn_case c = base_case(64, 33, 4, 8, 2, GGML_TYPE_F16, GGML_TYPE_F16);
    c.softcap = 2.0f;
    check_case(&c, &seed);                          /* softcap alone, no mask */
    c.softcap = 0.0f;
    c.mask = 1;
    c.max_bias = 8.0f;
    check_case(&c, &seed);                          /* ALiBi over 8 heads */
    c.n_head = 6;
    c.n_head_kv = 3;
    check_case(&c, &seed);                          /* ALiBi with a head count not a power of two */
    c.max_bias = 0.0f;
    c.sinks = true;
    check_case(&c, &seed);                          /* sinks alone */
    c.softcap = 1.5f;
    c.max_bias = 4.0f;
    check_case(&c, &seed);                          /* everything at once */

    /* llama.cpp: permuted q, F16 cache views, causal mask, GQA 4, several sequences with their own masks */
    struct attn_case l = base_case(128, 33, 7, 8, 2, GGML_TYPE_F16, GGML_TYPE_F16);
    l.q_permuted = true;
    l.kv_view = true;
    l.mask = 2;
    l.n_seq = 2;
    l.mask_ne3 = 2;
    check_case(&l, &seed);
    l.mask_ne2 = 8;
    l.mask = 1;
    l.n_seq = 3;
    l.mask_ne3 = 1;
    check_case(&l, &seed);

    struct attn_case mla = base_case(64, 33, 3, 4, 4, GGML_TYPE_F32, GGML_TYPE_F32);
    mla.dv = 32;
    mla.mask = 1;
    check_case(&mla, &seed);                        /* D_v != D_k */
    mla.tk = GGML_TYPE_F16;
    mla.tv = GGML_TYPE_F16;
    mla.dk = 40;
    mla.dv = 72;
    mla.n_kv = 257;
    mla.n_q = 1;
    check_case(&mla, &seed);
}

/* A row whose keys are all masked gives zeros, with or without a sink; precision changes no bit. */
static void test_masked_rows_and_precision(void)
{
    uint64_t seed = 0xa77e0004;
    struct ggml_init_params params = { 16u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct attn_case c = base_case(32, 9, 3, 2, 1, GGML_TYPE_F16, GGML_TYPE_F16);
    c.mask = 1;
    c.sinks = true;
    struct attn_inputs in;
    make_inputs(ctx, &c, &seed, &in);
    for (int64_t j = 0; j < in.mask->ne[0]; j++)
        optest_set(in.mask, j, 1, 0, 0, -INFINITY);   /* query 1 sees no key */
    for (int with_sinks = 0; with_sinks <= 1; with_sinks++)
        for (int use_ref = 0; use_ref <= 1; use_ref++) {
            struct ggml_tensor *out = ggml_flash_attn_ext(ctx, in.q, in.k, in.v, in.mask, c.scale, 0.0f, 0.0f);
            if (with_sinks)
                ggml_flash_attn_ext_add_sinks(out, in.sinks);
            bool zeros = optest_compute(ctx, out, 2, use_ref) == GGML_STATUS_SUCCESS;
            bool others_nonzero = true;
            for (int64_t h = 0; h < c.n_head; h++)
                for (int64_t d = 0; d < c.dv; d++) {
                    zeros = zeros && optest_get(out, d, h, 1, 0) == 0.0;
                    others_nonzero = others_nonzero && optest_get(out, d, h, 0, 0) != 0.0;
                }
            ok(zeros && others_nonzero, "a fully masked query row gives zeros (%s sinks, %s)",
               with_sinks ? "with" : "without", use_ref ? "reference" : "tiled");
        }

    struct ggml_tensor *a = ggml_flash_attn_ext(ctx, in.q, in.k, in.v, in.mask, c.scale, 0.0f, 0.0f);
    struct ggml_tensor *b = ggml_flash_attn_ext(ctx, in.q, in.k, in.v, in.mask, c.scale, 0.0f, 0.0f);
    is_int(ggml_flash_attn_ext_get_prec(a), GGML_PREC_DEFAULT, "a new node has the default precision");
    ggml_flash_attn_ext_set_prec(b, GGML_PREC_F32);
    is_int(ggml_flash_attn_ext_get_prec(b), GGML_PREC_F32, "set_prec stores GGML_PREC_F32");
    is_int(b->op_params[3], GGML_PREC_F32, "the precision is op_params[3], as upstream");
    float stored_scale;
    memcpy(&stored_scale, &b->op_params[0], sizeof stored_scale);
    ok(stored_scale == c.scale, "scale stays in op_params[0]");
    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        bool computed = optest_compute(ctx, a, 3, use_ref) == GGML_STATUS_SUCCESS &&
                        optest_compute(ctx, b, 3, use_ref) == GGML_STATUS_SUCCESS;
        ok(computed && memcmp(a->data, b->data, ggml_nbytes(a)) == 0,
           "GGML_PREC_F32 and GGML_PREC_DEFAULT give the same bits on the CPU (%s)",
           use_ref ? "reference" : "tiled");
    }
    is_int(tap_log_errors(), 0, "no error logged on the way");
    ggml_free(ctx);
}

/* ---------------------------------------------------------------- errors */

static void test_errors(void)
{
    struct ggml_init_params params = { 4u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 64, 5, 8, 1);
    struct ggml_tensor *k = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 64, 17, 2, 1);
    struct ggml_tensor *v = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 64, 17, 2, 1);
    struct ggml_tensor *mask = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 17, 5, 1, 1);
    const float scale = 0.125f;
    tap_log_errors();

    ok(ggml_flash_attn_ext(ctx, q, k, v, mask, scale, 0.0f, 0.0f) != NULL, "a good call succeeds");
    is_int(tap_log_errors(), 0, "a good call logs nothing");

    struct ggml_tensor *k32 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 32, 17, 2, 1);
    ok(ggml_flash_attn_ext(ctx, q, k32, v, mask, scale, 0.0f, 0.0f) == NULL, "k and q with different D_k");
    logged_one_error("a D_k mismatch logs one error");

    struct ggml_tensor *v16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 64, 16, 2, 1);
    ok(ggml_flash_attn_ext(ctx, q, k, v16, mask, scale, 0.0f, 0.0f) == NULL, "v with fewer keys than k");
    logged_one_error("an n_kv mismatch logs one error");

    struct ggml_tensor *k3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 64, 17, 3, 1);
    struct ggml_tensor *v3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 64, 17, 3, 1);
    ok(ggml_flash_attn_ext(ctx, q, k3, v3, mask, scale, 0.0f, 0.0f) == NULL, "8 query heads over 3 KV heads");
    logged_one_error("head counts that do not divide log one error");
    ok(ggml_flash_attn_ext(ctx, q, k, v3, mask, scale, 0.0f, 0.0f) == NULL, "8 query heads over 3 V heads");
    logged_one_error("V heads that do not divide log one error");

    struct ggml_tensor *q2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 64, 5, 8, 2);
    ok(ggml_flash_attn_ext(ctx, q2, k, v, mask, scale, 0.0f, 0.0f) == NULL, "q with 2 sequences, k and v with 1");
    logged_one_error("an ne[3] mismatch logs one error");

    struct ggml_tensor *mask32 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 17, 5, 1, 1);
    ok(ggml_flash_attn_ext(ctx, q, k, v, mask32, scale, 0.0f, 0.0f) == NULL, "an f32 mask");
    logged_one_error("a mask of the wrong type logs one error");

    struct ggml_tensor *narrow = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 16, 5, 1, 1);
    ok(ggml_flash_attn_ext(ctx, q, k, v, narrow, scale, 0.0f, 0.0f) == NULL, "a mask with fewer columns than keys");
    logged_one_error("a too narrow mask logs one error");

    struct ggml_tensor *short_mask = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 17, 4, 1, 1);
    ok(ggml_flash_attn_ext(ctx, q, k, v, short_mask, scale, 0.0f, 0.0f) == NULL,
       "a mask with fewer rows than queries");
    logged_one_error("a too short mask logs one error");

    struct ggml_tensor *mask3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 17, 5, 3, 1);
    ok(ggml_flash_attn_ext(ctx, q, k, v, mask3, scale, 0.0f, 0.0f) == NULL, "a mask over 3 heads for 8 heads");
    logged_one_error("a mask that does not broadcast over the heads logs one error");

    struct ggml_tensor *tall = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 5, 17, 1, 1);
    ok(ggml_flash_attn_ext(ctx, q, k, v, ggml_transpose(ctx, tall), scale, 0.0f, 0.0f) == NULL,
       "a transposed mask");
    logged_one_error("a non-contiguous mask logs one error");

    ok(ggml_flash_attn_ext(ctx, q, k, v, NULL, scale, 8.0f, 0.0f) == NULL, "ALiBi without a mask");
    logged_one_error("max_bias without a mask logs one error");

    ok(ggml_flash_attn_ext(ctx, NULL, k, v, mask, scale, 0.0f, 0.0f) == NULL &&
       ggml_flash_attn_ext(ctx, q, NULL, v, mask, scale, 0.0f, 0.0f) == NULL &&
       ggml_flash_attn_ext(ctx, q, k, NULL, mask, scale, 0.0f, 0.0f) == NULL,
       "a NULL q, k or v gives NULL");
    is_int(tap_log_errors(), 0, "a NULL input logs nothing");

    /* the node settings */
    struct ggml_tensor *fa = ggml_flash_attn_ext(ctx, q, k, v, mask, scale, 0.0f, 0.0f);
    struct ggml_tensor *other = ggml_add(ctx, q, q);
    ggml_flash_attn_ext_set_prec(other, GGML_PREC_F32);
    logged_one_error("set_prec on an add node logs one error");
    ggml_flash_attn_ext_set_prec(fa, (enum ggml_prec) 3);
    logged_one_error("set_prec with an unknown precision logs one error");
    is_int(ggml_flash_attn_ext_get_prec(fa), GGML_PREC_DEFAULT, "a refused precision leaves the node as it was");
    is_int(ggml_flash_attn_ext_get_prec(other), GGML_PREC_DEFAULT, "get_prec on an add node gives the default");
    logged_one_error("get_prec on an add node logs one error");
    ggml_flash_attn_ext_set_prec(NULL, GGML_PREC_F32);
    is_int(ggml_flash_attn_ext_get_prec(NULL), GGML_PREC_DEFAULT, "get_prec(NULL) gives the default");
    ggml_flash_attn_ext_add_sinks(NULL, NULL);
    is_int(tap_log_errors(), 0, "NULL nodes are ignored silently");

    struct ggml_tensor *sinks = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    struct ggml_tensor *sinks16 = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 8);
    struct ggml_tensor *sinks4 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_flash_attn_ext_add_sinks(other, sinks);
    logged_one_error("add_sinks on an add node logs one error");
    ggml_flash_attn_ext_add_sinks(fa, sinks16);
    logged_one_error("f16 sinks log one error");
    ggml_flash_attn_ext_add_sinks(fa, sinks4);
    logged_one_error("4 sinks for 8 heads log one error");
    is_ptr(fa->src[4], NULL, "refused sinks are not attached");
    ggml_flash_attn_ext_add_sinks(fa, sinks);
    is_ptr(fa->src[4], sinks, "add_sinks attaches the sinks as src[4]");
    ggml_flash_attn_ext_add_sinks(fa, sinks);
    logged_one_error("adding sinks twice logs one error");
    ggml_flash_attn_ext_add_sinks(fa, NULL);
    is_ptr(fa->src[4], NULL, "add_sinks(NULL) removes them");
    is_int(tap_log_errors(), 0, "removing sinks logs nothing");

    /* what the kernel does not take is refused by the engine, not computed */
    ggml_backend_t cpu = ggml_backend_cpu_init();
    struct ggml_tensor *q16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 64, 5, 8, 1);
    struct ggml_tensor *node = ggml_flash_attn_ext(ctx, q16, k, v, mask, scale, 0.0f, 0.0f);
    ok(node != NULL && !ggml_backend_supports_op(cpu, node), "the CPU kernel does not take an f16 q");
    is_int(optest_compute(ctx, node, 2, false), GGML_STATUS_FAILED, "computing it fails");
    logged_one_error("the engine logs one error for it");
    struct ggml_tensor *ki = ggml_new_tensor_4d(ctx, GGML_TYPE_I32, 64, 17, 2, 1);
    node = ggml_flash_attn_ext(ctx, q, ki, ki, mask, scale, 0.0f, 0.0f);
    ok(node != NULL && !ggml_backend_supports_op(cpu, node), "the CPU kernel does not take i32 keys");
    struct ggml_tensor *kt = ggml_transpose(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 17, 64, 2, 1));
    node = ggml_flash_attn_ext(ctx, q, kt, v, mask, scale, 0.0f, 0.0f);
    ok(node != NULL && !ggml_backend_supports_op(cpu, node), "the CPU kernel does not take keys with strided rows");
    is_int(tap_log_errors(), 0, "building those nodes logged nothing");
    ggml_backend_free(cpu);
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    test_sweep();
    test_types();
    test_features();
    test_masked_rows_and_precision();
    test_errors();
    return tap_done();
}
