/*
 * test-op-rope.c - ROPE (every mode, YaRN, frequency factors, in-place
 * forms, views of a KV cache), ggml_rope_yarn_corr_dims, and the sorts
 * ARGSORT, TOP_K and ggml_argsort_top_k: thread counts, reference and fast
 * kernels, and the constructors' error paths.
 *
 * The rope reference is computed here in double precision from the inputs
 * as stored (F16 inputs after their own rounding), straight from the
 * definition of the rotation; the sort references are a stable insertion
 * sort written here.
 */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "op-test.h"

/* ============================================================== rope */

struct rope_setting {
    int n_dims, mode;
    int sections[4];
    int n_ctx_orig;
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    int n_offs;   /* ggml_rope_set_offset */
};

/* The YaRN correction band [lo, hi] in pairs, from its definition. */
static void reference_corr_dims(int n_dims, int n_ctx_orig, double base, double beta_fast, double beta_slow,
                                double band[2])
{
    const double pi = 3.14159265358979323846;
    const double lo = floor(n_dims * log(n_ctx_orig / (beta_fast * 2 * pi)) / (2 * log(base)));
    const double hi = ceil(n_dims * log(n_ctx_orig / (beta_slow * 2 * pi)) / (2 * log(base)));
    band[0] = lo > 0 ? lo : 0;
    band[1] = hi < n_dims - 1 ? hi : n_dims - 1;
}

/*
 * For pair i of a multi-section mode: the position stream (0..3) and the
 * exponent of the frequency.  MROPE: consecutive sections t, h, w, e
 * repeated over the pairs.  IMROPE: t, h, w interleaved (pair i takes
 * stream i % 3 while that stream has pairs left, else e).  VISION: like
 * MROPE, but the exponent counts from the start of the section.
 */
static void reference_stream(const struct rope_setting *s, int64_t i, int *stream, int64_t *exponent)
{
    const int *sec = s->sections;
    const int64_t total = sec[0] + sec[1] + sec[2] + sec[3];
    const int64_t sector = i % total;
    const int64_t start[4] = { 0, sec[0], sec[0] + sec[1], sec[0] + sec[1] + sec[2] };
    *exponent = i;
    if (s->mode == GGML_ROPE_TYPE_IMROPE) {
        const int64_t r = sector % 3;
        *stream = sector < 3 * (int64_t) sec[r] ? (int) r : 3;
        return;
    }
    int k = 3;
    while (k > 0 && sector < start[k])
        k--;
    *stream = k;
    if (s->mode == GGML_ROPE_TYPE_VISION)
        *exponent = sector - start[k];
}

/* Expected result of rope(a) (row-major in a's shape). */
static double *reference_rope(const struct ggml_tensor *a, const struct ggml_tensor *pos,
                              const struct ggml_tensor *ff, const struct rope_setting *s)
{
    const int64_t ne0 = a->ne[0], n_tokens = a->ne[2];
    const bool multi = (s->mode & GGML_ROPE_TYPE_MROPE) != 0;
    const bool vision = s->mode == GGML_ROPE_TYPE_VISION;
    const int64_t n_pairs = vision ? s->n_dims : s->n_dims / 2;
    double band[2];
    reference_corr_dims(s->n_dims, s->n_ctx_orig, s->freq_base, s->beta_fast, s->beta_slow, band);
    double mscale = s->attn_factor;
    if (s->ext_factor != 0.0f)
        mscale *= 1.0 + 0.1 * log(1.0 / s->freq_scale);

    double *ref = malloc((size_t) ggml_nelements(a) * sizeof *ref);
    double *x = malloc((size_t) ne0 * sizeof *x);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < n_tokens; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1]; i1++, k += ne0) {
                for (int64_t i0 = 0; i0 < ne0; i0++)
                    x[i0] = optest_get(a, i0, i1, i2, i3);
                memcpy(ref + k, x, (size_t) ne0 * sizeof *x);
                for (int64_t i = 0; i < n_pairs; i++) {
                    int stream = 0;
                    int64_t e = i;
                    if (multi)
                        reference_stream(s, i, &stream, &e);
                    const double p = optest_get(pos, i2 + stream * n_tokens, 0, 0, 0);
                    const double f = ff ? optest_get(ff, i, 0, 0, 0) : 1.0;
                    const double extrap = p * pow(s->freq_base, -2.0 * (double) e / s->n_dims) / f;
                    const double interp = s->freq_scale * extrap;
                    double theta = interp;
                    if (s->ext_factor != 0.0f) {
                        double y = (i - band[0]) / fmax(0.001, band[1] - band[0]);
                        y = y < 0 ? 0 : y > 1 ? 1 : y;
                        const double mix = (1.0 - y) * s->ext_factor;
                        theta = interp * (1.0 - mix) + extrap * mix;
                    }
                    int64_t j0, j1;
                    if (s->mode == GGML_ROPE_TYPE_NORMAL) {
                        j0 = 2 * i;
                        j1 = 2 * i + 1;
                    } else {
                        j0 = i;
                        j1 = i + (vision ? s->n_dims : s->n_dims / 2);
                    }
                    j0 += s->n_offs;
                    j1 += s->n_offs;
                    ref[k + j0] = mscale * (x[j0] * cos(theta) - x[j1] * sin(theta));
                    ref[k + j1] = mscale * (x[j0] * sin(theta) + x[j1] * cos(theta));
                }
            }
    free(x);
    return ref;
}

/*
 * Tolerance: the kernel takes its angles in double precision and rotates
 * in F32, so F32 results carry a few F32 roundings (NMSE ~1e-14; any
 * mistake in an angle or a pair shows as 1e-4 or more).  F16 results are
 * rounded to F16 (relative 2^-11 per value, NMSE ~1e-7).
 */
static double rope_threshold(enum ggml_type type)
{
    return type == GGML_TYPE_F32 ? 1e-11 : 1e-6;
}

enum rope_layout { LAYOUT_CONTIGUOUS, LAYOUT_KV_VIEW, LAYOUT_PERMUTED };

static const char *layout_name[] = { "contiguous", "kv-cache view", "permuted" };

/* a tensor of shape ne laid out as asked, filled with values in [-1, 1) */
static struct ggml_tensor *rope_input(struct ggml_context *ctx, enum ggml_type type, const int64_t ne[4],
                                      enum rope_layout layout, uint64_t *seed)
{
    struct ggml_tensor *a;
    if (layout == LAYOUT_KV_VIEW) {
        /* a cache with two more heads and five more cells; take a window */
        struct ggml_tensor *cache = ggml_new_tensor_4d(ctx, type, ne[0], ne[1] + 2, ne[2] + 5, ne[3]);
        optest_fill(cache, seed, -1.0, 1.0);
        a = ggml_view_4d(ctx, cache, ne[0], ne[1], ne[2], ne[3], cache->nb[1], cache->nb[2], cache->nb[3],
                         1 * cache->nb[1] + 3 * cache->nb[2]);
    } else if (layout == LAYOUT_PERMUTED) {
        /* stored head-major: values of a row are n_head elements apart */
        struct ggml_tensor *base = ggml_new_tensor_4d(ctx, type, ne[1], ne[0], ne[2], ne[3]);
        optest_fill(base, seed, -1.0, 1.0);
        a = ggml_permute(ctx, base, 1, 0, 2, 3);
    } else {
        a = ggml_new_tensor(ctx, type, 4, ne);
        optest_fill(a, seed, -1.0, 1.0);
    }
    return a;
}

static struct ggml_tensor *rope_positions(struct ggml_context *ctx, const struct rope_setting *s,
                                          int64_t n_tokens, uint64_t *seed)
{
    const int64_t n = (s->mode & GGML_ROPE_TYPE_MROPE) ? 4 * n_tokens : n_tokens;
    struct ggml_tensor *pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n);
    for (int64_t i = 0; i < n; i++)
        optest_set(pos, i, 0, 0, 0, floor(optest_uniform(seed, -3.0, 3000.0)));
    return pos;
}

static struct ggml_tensor *rope_make(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *pos,
                                     struct ggml_tensor *ff, struct rope_setting *s, bool inplace)
{
    struct ggml_tensor *r;
    if (s->mode & GGML_ROPE_TYPE_MROPE)
        r = (inplace ? ggml_rope_multi_inplace : ggml_rope_multi)(
            ctx, a, pos, ff, s->n_dims, s->sections, s->mode, s->n_ctx_orig, s->freq_base, s->freq_scale,
            s->ext_factor, s->attn_factor, s->beta_fast, s->beta_slow);
    else
        r = (inplace ? ggml_rope_ext_inplace : ggml_rope_ext)(
            ctx, a, pos, ff, s->n_dims, s->mode, s->n_ctx_orig, s->freq_base, s->freq_scale, s->ext_factor,
            s->attn_factor, s->beta_fast, s->beta_slow);
    return s->n_offs != 0 ? ggml_rope_set_offset(r, s->n_offs) : r;
}

static const char *mode_name(int mode)
{
    switch (mode) {
    case GGML_ROPE_TYPE_NORMAL: return "normal";
    case GGML_ROPE_TYPE_NEOX:   return "neox";
    case GGML_ROPE_TYPE_MROPE:  return "mrope";
    case GGML_ROPE_TYPE_VISION: return "vision";
    default:                    return "imrope";
    }
}

static void check_rope(enum ggml_type type, const int64_t ne[4], struct rope_setting s, bool with_ff,
                       enum rope_layout layout, uint64_t *seed)
{
    struct ggml_init_params params = { 16u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = rope_input(ctx, type, ne, layout, seed);
    struct ggml_tensor *pos = rope_positions(ctx, &s, ne[2], seed);
    struct ggml_tensor *ff = NULL;
    if (with_ff) {
        ff = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ne[0]);
        optest_fill(ff, seed, 1.0, 4.0);
    }
    double *ref = reference_rope(a, pos, ff, &s);
    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            struct ggml_tensor *out = rope_make(ctx, a, pos, ff, &s, false);
            enum ggml_status status = out ? optest_compute(ctx, out, n_threads, use_ref) : GGML_STATUS_FAILED;
            double nmse = out ? optest_nmse(out, ref) : INFINITY;
            ok(status == GGML_STATUS_SUCCESS && nmse <= rope_threshold(type),
               "rope %s %s [%lld,%lld,%lld,%lld] n_dims %d%s%s, %s, %d threads, %s: nmse %.3g",
               mode_name(s.mode), ggml_type_name(type), (long long) ne[0], (long long) ne[1],
               (long long) ne[2], (long long) ne[3], s.n_dims, s.ext_factor != 0.0f ? " yarn" : "",
               with_ff ? " freq-factors" : "", layout_name[layout], n_threads,
               use_ref ? "reference" : "fast", nmse);
        }
    }
    free(ref);
    ggml_free(ctx);
}

static struct rope_setting plain_setting(int n_dims, int mode)
{
    struct rope_setting s = { n_dims, mode, { 0, 0, 0, 0 }, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0 };
    return s;
}

/* YaRN with a band inside the rotated pairs, and a magnitude correction */
static struct rope_setting yarn_setting(int n_dims, int mode, float freq_scale, float ext_factor)
{
    struct rope_setting s = { n_dims, mode, { 0, 0, 0, 0 }, 4096, 10000.0f, freq_scale, ext_factor, 0.9f, 32.0f,
                              1.0f, 0 };
    return s;
}

static void test_rope_numerics(void)
{
    uint64_t seed = 0x5eed0401;
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16 };
    const int modes[] = { GGML_ROPE_TYPE_NORMAL, GGML_ROPE_TYPE_NEOX };
    for (int t = 0; t < 2; t++) {
        for (int m = 0; m < 2; m++) {
            const int mode = modes[m];
            /* full rotation, plain parameters */
            check_rope(types[t], (const int64_t[4]) { 64, 3, 7, 1 }, plain_setting(64, mode), false,
                       LAYOUT_CONTIGUOUS, &seed);
            /* part of the row rotated, YaRN and frequency factors, a window of a KV cache */
            check_rope(types[t], (const int64_t[4]) { 32, 5, 31, 2 }, yarn_setting(16, mode, 0.25f, 1.0f), true,
                       LAYOUT_KV_VIEW, &seed);
            /* tiny rows with a partial YaRN mix, values n_head apart */
            struct rope_setting s = yarn_setting(4, mode, 0.5f, 0.5f);
            s.freq_base = 500000.0f;
            check_rope(types[t], (const int64_t[4]) { 6, 1, 3, 1 }, s, true, LAYOUT_PERMUTED, &seed);
            /* linear scaling without YaRN, magnitude from attn_factor */
            s = plain_setting(96, mode);
            s.freq_scale = 0.125f;
            s.attn_factor = 2.0f;
            check_rope(types[t], (const int64_t[4]) { 128, 1, 33, 1 }, s, false, LAYOUT_CONTIGUOUS, &seed);
            /* one pair per row, many heads; and n_dims 0 (a copy) */
            check_rope(types[t], (const int64_t[4]) { 2, 257, 1, 1 }, plain_setting(2, mode), true,
                       LAYOUT_KV_VIEW, &seed);
            check_rope(types[t], (const int64_t[4]) { 8, 3, 3, 1 }, plain_setting(0, mode), false,
                       LAYOUT_CONTIGUOUS, &seed);
        }
        /* multi-section modes */
        struct rope_setting s = plain_setting(32, GGML_ROPE_TYPE_MROPE);
        memcpy(s.sections, (const int[4]) { 4, 6, 6, 0 }, sizeof s.sections);
        check_rope(types[t], (const int64_t[4]) { 32, 3, 5, 1 }, s, false, LAYOUT_CONTIGUOUS, &seed);
        s = yarn_setting(16, GGML_ROPE_TYPE_MROPE, 0.25f, 1.0f);
        memcpy(s.sections, (const int[4]) { 2, 2, 1, 1 }, sizeof s.sections);  /* 8 pairs wrap around 6 */
        check_rope(types[t], (const int64_t[4]) { 20, 3, 7, 1 }, s, true, LAYOUT_KV_VIEW, &seed);
        s = yarn_setting(24, GGML_ROPE_TYPE_IMROPE, 0.5f, 1.0f);
        memcpy(s.sections, (const int[4]) { 4, 4, 3, 0 }, sizeof s.sections);
        check_rope(types[t], (const int64_t[4]) { 32, 3, 5, 1 }, s, true, LAYOUT_CONTIGUOUS, &seed);
        s = plain_setting(16, GGML_ROPE_TYPE_VISION);
        memcpy(s.sections, (const int[4]) { 8, 8, 0, 0 }, sizeof s.sections);
        check_rope(types[t], (const int64_t[4]) { 32, 3, 5, 1 }, s, true, LAYOUT_CONTIGUOUS, &seed);
        /* rotated values starting at an offset (ggml_rope_set_offset) */
        s = yarn_setting(8, GGML_ROPE_TYPE_NEOX, 0.25f, 1.0f);
        s.n_offs = 6;
        check_rope(types[t], (const int64_t[4]) { 20, 3, 5, 1 }, s, true, LAYOUT_KV_VIEW, &seed);
        s = plain_setting(10, GGML_ROPE_TYPE_NORMAL);
        s.n_offs = 2;
        check_rope(types[t], (const int64_t[4]) { 12, 2, 7, 1 }, s, false, LAYOUT_PERMUTED, &seed);
        s = plain_setting(16, GGML_ROPE_TYPE_MROPE);
        memcpy(s.sections, (const int[4]) { 2, 3, 3, 0 }, sizeof s.sections);
        s.n_offs = 4;
        check_rope(types[t], (const int64_t[4]) { 24, 3, 5, 1 }, s, false, LAYOUT_CONTIGUOUS, &seed);
        s = plain_setting(16, GGML_ROPE_TYPE_VISION);
        s.freq_base = 100.0f;
        memcpy(s.sections, (const int[4]) { 4, 4, 4, 4 }, sizeof s.sections);
        check_rope(types[t], (const int64_t[4]) { 32, 1, 31, 1 }, s, false, LAYOUT_PERMUTED, &seed);
    }
}

/* The in-place forms write into a (contiguous or a window of a cache). */
static void test_rope_inplace(void)
{
    uint64_t seed = 0x5eed0402;
    const int64_t ne[4] = { 16, 3, 5, 1 };
    for (int layout = LAYOUT_CONTIGUOUS; layout <= LAYOUT_KV_VIEW; layout++) {
        for (int use_ref = 0; use_ref <= 1; use_ref++) {
            for (int form = 0; form < 4; form++) {
                struct ggml_init_params params = { 4u << 20, NULL, false };
                struct ggml_context *ctx = ggml_init(params);
                struct rope_setting s = yarn_setting(12, form % 2 ? GGML_ROPE_TYPE_NEOX : GGML_ROPE_TYPE_NORMAL,
                                                     0.5f, 1.0f);
                if (form == 0)
                    s = plain_setting(12, GGML_ROPE_TYPE_NORMAL);
                if (form == 3) {
                    s.mode = GGML_ROPE_TYPE_MROPE;
                    memcpy(s.sections, (const int[4]) { 2, 2, 2, 0 }, sizeof s.sections);
                }
                struct ggml_tensor *a = rope_input(ctx, GGML_TYPE_F32, ne, (enum rope_layout) layout, &seed);
                struct ggml_tensor *pos = rope_positions(ctx, &s, ne[2], &seed);
                double *ref = reference_rope(a, pos, NULL, &s);
                struct ggml_tensor *r;
                const char *name;
                if (form == 0) {
                    r = ggml_rope_inplace(ctx, a, pos, s.n_dims, s.mode);
                    name = "ggml_rope_inplace";
                } else if (form == 1) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
                    r = ggml_rope_custom_inplace(ctx, a, pos, s.n_dims, s.mode, s.n_ctx_orig, s.freq_base,
                                                 s.freq_scale, s.ext_factor, s.attn_factor, s.beta_fast,
                                                 s.beta_slow);
#pragma GCC diagnostic pop
                    name = "ggml_rope_custom_inplace";
                } else {
                    r = rope_make(ctx, a, pos, NULL, &s, true);
                    name = form == 2 ? "ggml_rope_ext_inplace" : "ggml_rope_multi_inplace";
                }
                ok(r != NULL && r->op == GGML_OP_ROPE && r->view_src != NULL && r->data == a->data &&
                   r->src[0] == a && r->src[1] == pos,
                   "%s on a %s is a view of a", name, layout_name[layout]);
                enum ggml_status status = optest_compute(ctx, r, 3, use_ref);
                double nmse = optest_nmse(a, ref);
                ok(status == GGML_STATUS_SUCCESS && nmse <= rope_threshold(GGML_TYPE_F32),
                   "%s on a %s writes into a (%s): nmse %.3g", name, layout_name[layout],
                   use_ref ? "reference" : "fast", nmse);
                free(ref);
                ggml_free(ctx);
            }
        }
    }
}

/* ggml_rope and ggml_rope_custom are ggml_rope_ext with fixed or without factors. */
static void test_rope_forms(void)
{
    uint64_t seed = 0x5eed0403;
    struct ggml_init_params params = { 4u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    const int64_t ne[4] = { 8, 2, 3, 1 };
    struct ggml_tensor *a = rope_input(ctx, GGML_TYPE_F32, ne, LAYOUT_CONTIGUOUS, &seed);
    struct rope_setting s = plain_setting(8, GGML_ROPE_TYPE_NEOX);
    struct ggml_tensor *pos = rope_positions(ctx, &s, ne[2], &seed);

    struct ggml_tensor *r = ggml_rope(ctx, a, pos, 8, GGML_ROPE_TYPE_NEOX);
    const double *ref = reference_rope(a, pos, NULL, &s);
    ok(r && optest_compute(ctx, r, 2, false) == GGML_STATUS_SUCCESS && optest_nmse(r, ref) <= 1e-11,
       "ggml_rope uses base 10000 and no scaling");
    free((void *) ref);
    ok(r && r->op == GGML_OP_ROPE && r->op_params[0] == 0 && r->op_params[1] == 8 &&
       r->op_params[2] == GGML_ROPE_TYPE_NEOX && r->op_params[3] == 0 && r->op_params[4] == 0,
       "rope op_params: n_past 0, n_dims, mode, n_ctx 0, n_ctx_orig");

    s = yarn_setting(8, GGML_ROPE_TYPE_NORMAL, 0.25f, 1.0f);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    struct ggml_tensor *c = ggml_rope_custom(ctx, a, pos, s.n_dims, s.mode, s.n_ctx_orig, s.freq_base,
                                             s.freq_scale, s.ext_factor, s.attn_factor, s.beta_fast, s.beta_slow);
#pragma GCC diagnostic pop
    ref = reference_rope(a, pos, NULL, &s);
    ok(c && optest_compute(ctx, c, 2, true) == GGML_STATUS_SUCCESS && optest_nmse(c, ref) <= 1e-11,
       "ggml_rope_custom is ggml_rope_ext without frequency factors");
    free((void *) ref);
    const float want_f[6] = { 10000.0f, 0.25f, 1.0f, 0.9f, 32.0f, 1.0f };
    bool floats_ok = c != NULL && c->op_params[4] == 4096;
    for (int i = 0; i < 6 && c; i++) {
        float f;
        memcpy(&f, &c->op_params[5 + i], sizeof f);
        floats_ok = floats_ok && f == want_f[i];
    }
    ok(floats_ok && c->op_params[11] == 0 && c->op_params[14] == 0,
       "rope op_params: n_ctx_orig, then freq_base .. beta_slow as floats in slots 5..10, sections zero");

    struct rope_setting m = plain_setting(8, GGML_ROPE_TYPE_MROPE);
    memcpy(m.sections, (const int[4]) { 1, 1, 1, 1 }, sizeof m.sections);
    struct ggml_tensor *mpos = rope_positions(ctx, &m, ne[2], &seed);
    struct ggml_tensor *mr = rope_make(ctx, a, mpos, NULL, &m, false);
    ok(mr && mr->op_params[11] == 1 && mr->op_params[12] == 1 && mr->op_params[13] == 1 && mr->op_params[14] == 1,
       "rope_multi op_params: the sections in slots 11..14");
    int sections[4] = { 2, 0, 0, 0 };
    struct ggml_tensor *nm = ggml_rope_multi(ctx, a, pos, NULL, 8, sections, GGML_ROPE_TYPE_NEOX, 0, 10000.0f,
                                             1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    ok(nm && nm->op_params[11] == 0, "rope_multi with a single-stream mode ignores the sections");
    ggml_free(ctx);
}

static void test_rope_corr_dims(void)
{
    const struct {
        int n_dims, n_ctx_orig;
        float base, beta_fast, beta_slow;
    } cases[] = {
        { 128, 4096, 10000.0f, 32.0f, 1.0f },    /* inside the pairs */
        { 16, 4096, 100.0f, 32.0f, 0.001f },     /* the end is clamped to n_dims - 1 */
        { 64, 4096, 10000.0f, 1e6f, 1.0f },      /* the start is clamped to 0 */
        { 128, 8192, 500000.0f, 32.0f, 1.0f },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float dims[2] = { -1, -1 };
        double band[2];
        ggml_rope_yarn_corr_dims(cases[i].n_dims, cases[i].n_ctx_orig, cases[i].base, cases[i].beta_fast,
                                 cases[i].beta_slow, dims);
        reference_corr_dims(cases[i].n_dims, cases[i].n_ctx_orig, cases[i].base, cases[i].beta_fast,
                            cases[i].beta_slow, band);
        ok(dims[0] == band[0] && dims[1] == band[1],
           "ggml_rope_yarn_corr_dims(%d, %d, %g, %g, %g) = [%g, %g] (want [%g, %g])",
           cases[i].n_dims, cases[i].n_ctx_orig, cases[i].base, cases[i].beta_fast, cases[i].beta_slow,
           dims[0], dims[1], band[0], band[1]);
    }
    ggml_rope_yarn_corr_dims(128, 4096, 10000.0f, 32.0f, 1.0f, NULL);
    logged_one_error("ggml_rope_yarn_corr_dims with NULL dims logs one error");
}

static struct ggml_tensor *ext(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                               struct ggml_tensor *c, int n_dims, int mode)
{
    return ggml_rope_ext(ctx, a, b, c, n_dims, mode, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
}

static struct ggml_tensor *multi(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                 int n_dims, int sections[4], int mode)
{
    return ggml_rope_multi(ctx, a, b, NULL, n_dims, sections, mode, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f,
                           1.0f);
}

static void test_rope_errors(void)
{
    struct ggml_init_params params = { 1u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 2, 3);
    struct ggml_tensor *pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
    struct ggml_tensor *pos4 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 12);
    struct ggml_tensor *fpos = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    struct ggml_tensor *pos2d = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 1 + 1);
    struct ggml_tensor *short_pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
    struct ggml_tensor *ai = ggml_new_tensor_3d(ctx, GGML_TYPE_I32, 8, 2, 3);
    struct ggml_tensor *ff = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor *ff16 = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 4);
    struct ggml_tensor *ff_short = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    memset(pos->data, 0, ggml_nbytes(pos));
    memset(pos4->data, 0, ggml_nbytes(pos4));
    optest_fill(a, &(uint64_t) { 9 }, -1.0, 1.0);
    optest_fill(ff, &(uint64_t) { 10 }, 1.0, 2.0);

    ok(ext(ctx, a, pos, ff, 8, GGML_ROPE_TYPE_NEOX) != NULL && tap_log_errors() == 0,
       "a valid rope_ext builds without a message");

    struct ggml_tensor *r4 = ext(ctx, a, pos, NULL, 4, GGML_ROPE_TYPE_NEOX);
    ok(ggml_rope_set_offset(r4, 4) == r4 && tap_log_errors() == 0, "set_offset 4 of 4 rotated values in rows of 8");
    ok(ggml_rope_set_offset(r4, 6) == NULL, "set_offset past the row gives NULL");
    logged_one_error("set_offset past the row logs one error");
    ok(ggml_rope_set_offset(r4, 3) == NULL, "an odd offset gives NULL");
    logged_one_error("an odd offset logs one error");
    ok(ggml_rope_set_offset(r4, -2) == NULL, "a negative offset gives NULL");
    logged_one_error("a negative offset logs one error");
    ok(ggml_rope_set_offset(a, 2) == NULL, "set_offset of a tensor that is not a ROPE node gives NULL");
    logged_one_error("set_offset of a non-ROPE node logs one error");
    ok(ggml_rope_set_offset(NULL, 2) == NULL && tap_log_errors() == 0, "set_offset(NULL) gives NULL quietly");
    struct ggml_tensor *av = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 2, 3);
    struct ggml_tensor *vis = multi(ctx, av, pos4, 4, (int[4]) { 2, 2, 0, 0 }, GGML_ROPE_TYPE_VISION);
    ok(vis != NULL && ggml_rope_set_offset(vis, 2) == NULL, "set_offset of a vision rope gives NULL");
    logged_one_error("set_offset of a vision rope logs one error");

    ok(ext(ctx, a, fpos, NULL, 8, 0) == NULL, "positions that are not i32 give NULL");
    logged_one_error("f32 positions log one error");
    ok(ext(ctx, a, short_pos, NULL, 8, 0) == NULL, "too few positions give NULL");
    logged_one_error("a position count that is not ne[2] logs one error");
    ok(ext(ctx, a, pos2d, NULL, 8, 0) == NULL, "positions that are not a vector give NULL");
    logged_one_error("2-d positions log one error");
    {
        /* 4 positions a row for 2^61 rows: the count overflows int64_t */
        struct ggml_init_params meta = { 4 * ggml_tensor_overhead(), NULL, true };
        struct ggml_context *mctx = ggml_init(meta);
        struct ggml_tensor *tall = ggml_new_tensor_3d(mctx, GGML_TYPE_F16, 2, 1, INT64_C(1) << 61);
        struct ggml_tensor *four = ggml_new_tensor_1d(mctx, GGML_TYPE_I32, 4);
        ok(tall != NULL && four != NULL && tap_log_errors() == 0, "the tall operand exists (metadata only)");
        int sections[GGML_MROPE_SECTIONS] = { 1, 0, 0, 0 };
        ok(ggml_rope_multi(mctx, tall, four, NULL, 2, sections, GGML_ROPE_TYPE_MROPE, 0, 10000.0f, 1.0f, 0.0f, 1.0f,
                           32.0f, 1.0f) == NULL, "rope_multi needing more than INT64_MAX positions gives NULL");
        logged_one_error("an overflowing position count logs one error");
        ggml_free(mctx);
    }
    ok(ext(ctx, a, pos, NULL, 7, 0) == NULL, "an odd n_dims gives NULL");
    logged_one_error("an odd n_dims logs one error");
    ok(ext(ctx, a, pos, NULL, 10, 0) == NULL, "n_dims larger than a row gives NULL");
    logged_one_error("n_dims > ne0 logs one error");
    ok(ext(ctx, a, pos, NULL, -2, 0) == NULL, "a negative n_dims gives NULL");
    logged_one_error("a negative n_dims logs one error");
    ok(ext(ctx, a, pos, NULL, 8, 1) == NULL, "mode bit 0 gives NULL");
    logged_one_error("mode 1 logs one error");
    ok(ext(ctx, a, pos, NULL, 8, 4) == NULL, "an unknown mode gives NULL");
    logged_one_error("mode 4 logs one error");
    ok(ext(ctx, ai, pos, NULL, 8, 0) == NULL, "i32 values give NULL");
    logged_one_error("i32 values log one error");
    ok(ext(ctx, a, pos, ff16, 8, 0) == NULL, "f16 frequency factors give NULL");
    logged_one_error("f16 frequency factors log one error");
    ok(ext(ctx, a, pos, ff_short, 8, 0) == NULL, "too few frequency factors give NULL");
    logged_one_error("3 factors for 4 pairs log one error");
    ok(ext(ctx, a, pos4, NULL, 8, GGML_ROPE_TYPE_MROPE) == NULL, "rope_ext in a multi-section mode gives NULL");
    logged_one_error("a multi-section mode without sections logs one error");

    int zero[4] = { 0, 0, 0, 3 }, negative[4] = { 2, -1, 1, 0 }, wide[4] = { 4, 4, 1, 0 }, fine[4] = { 2, 1, 1, 0 };
    ok(multi(ctx, a, pos4, 8, fine, GGML_ROPE_TYPE_MROPE) != NULL && tap_log_errors() == 0,
       "a valid rope_multi builds without a message");
    ok(multi(ctx, a, pos, 8, fine, GGML_ROPE_TYPE_MROPE) == NULL,
       "rope_multi with one position per token gives NULL");
    logged_one_error("a multi-section mode needs 4 positions per token: one error");
    ok(multi(ctx, a, pos4, 8, zero, GGML_ROPE_TYPE_MROPE) == NULL, "empty t, h, w sections give NULL");
    logged_one_error("sections without t, h or w log one error");
    ok(multi(ctx, a, pos4, 8, negative, GGML_ROPE_TYPE_IMROPE) == NULL, "a negative section gives NULL");
    logged_one_error("a negative section logs one error");
    ok(multi(ctx, a, pos4, 8, wide, GGML_ROPE_TYPE_MROPE) == NULL, "sections wider than a row give NULL");
    logged_one_error("sections adding up past ne0 log one error");
    ok(multi(ctx, a, pos4, 8, fine, GGML_ROPE_TYPE_VISION) == NULL, "vision with n_dims != ne0 / 2 gives NULL");
    logged_one_error("vision with n_dims == ne0 logs one error");
    ok(multi(ctx, a, pos4, 4, fine, GGML_ROPE_TYPE_VISION) != NULL && tap_log_errors() == 0,
       "vision with n_dims == ne0 / 2 builds");

    /* NULL inputs propagate silently through every form */
    int sec[4] = { 1, 1, 1, 1 };
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    ok(ggml_rope(ctx, NULL, pos, 8, 0) == NULL && ggml_rope(ctx, a, NULL, 8, 0) == NULL &&
       ggml_rope_inplace(ctx, NULL, pos, 8, 0) == NULL && ggml_rope_inplace(ctx, a, NULL, 8, 0) == NULL &&
       ext(ctx, NULL, pos, ff, 8, 0) == NULL && ext(ctx, a, NULL, ff, 8, 0) == NULL &&
       ggml_rope_ext_inplace(ctx, NULL, pos, NULL, 8, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL &&
       ggml_rope_ext_inplace(ctx, a, NULL, NULL, 8, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL &&
       multi(ctx, NULL, pos4, 8, sec, GGML_ROPE_TYPE_MROPE) == NULL &&
       multi(ctx, a, NULL, 8, sec, GGML_ROPE_TYPE_MROPE) == NULL &&
       ggml_rope_multi_inplace(ctx, NULL, pos4, NULL, 8, sec, 8, 0, 1e4f, 1, 0, 1, 0, 0) == NULL &&
       ggml_rope_multi_inplace(ctx, a, NULL, NULL, 8, sec, 8, 0, 1e4f, 1, 0, 1, 0, 0) == NULL &&
       ggml_rope_custom(ctx, NULL, pos, 8, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL &&
       ggml_rope_custom(ctx, a, NULL, 8, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL &&
       ggml_rope_custom_inplace(ctx, NULL, pos, 8, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL &&
       ggml_rope_custom_inplace(ctx, a, NULL, 8, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL,
       "every rope form gives NULL for a NULL input");
#pragma GCC diagnostic pop
    is_int(tap_log_errors(), 0, "a NULL input logs nothing");

    /* built, but not computed by the CPU backend: bf16 values */
    struct ggml_tensor *ab = ggml_new_tensor_3d(ctx, GGML_TYPE_BF16, 8, 2, 3);
    memset(ab->data, 0, ggml_nbytes(ab));
    struct ggml_tensor *rb = ext(ctx, ab, pos, NULL, 8, 0);
    ok(rb != NULL && tap_log_errors() == 0, "rope of bf16 values builds");
    ok(rb && optest_compute(ctx, rb, 2, false) != GGML_STATUS_SUCCESS, "the CPU backend refuses rope of bf16");
    logged_one_error("the refusal logs one error");
    ggml_free(ctx);
}

/* ============================================================ sorting */

/* Stable order of the indices of row (i1, i2, i3) of a. */
static void reference_order(const struct ggml_tensor *a, int64_t i1, int64_t i2, int64_t i3, bool desc,
                            int32_t *idx, double *v)
{
    const int64_t n = a->ne[0];
    for (int64_t i = 0; i < n; i++)
        v[i] = optest_get(a, i, i1, i2, i3);
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i;
        while (j > 0 && (desc ? v[i] > v[idx[j - 1]] : v[i] < v[idx[j - 1]])) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = (int32_t) i;
    }
}

static int cmp_i32(const void *x, const void *y)
{
    const int32_t a = *(const int32_t *) x, b = *(const int32_t *) y;
    return (a > b) - (a < b);
}

/* a [n, 3, 2, 1] of values in [-2, 2); ties when quantized to quarters */
static struct ggml_tensor *sort_input(struct ggml_context *ctx, int64_t n, bool transposed, bool ties,
                                      uint64_t *seed)
{
    const int64_t rows = 3, mats = 2;
    struct ggml_tensor *a;
    if (transposed) {
        struct ggml_tensor *base = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, rows, n, mats, 1);
        a = ggml_permute(ctx, base, 1, 0, 2, 3);
    } else {
        a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n, rows, mats, 1);
    }
    for (int64_t i2 = 0; i2 < mats; i2++)
        for (int64_t i1 = 0; i1 < rows; i1++)
            for (int64_t i0 = 0; i0 < n; i0++) {
                double x = optest_uniform(seed, -2.0, 2.0);
                x = ties ? floor(x * 4.0) / 4.0 : x;
                /* ties: -0 and +0 (equal), and both infinities, among them */
                if (ties && i0 % 7 == 0)
                    x = -0.0;
                else if (ties && i0 % 11 == 0)
                    x = 0.0;
                else if (ties && i0 % 13 == 5)
                    x = (double) INFINITY;
                else if (ties && i0 % 17 == 3)
                    x = -(double) INFINITY;
                optest_set(a, i0, i1, i2, 0, x);
            }
    return a;
}

/* The stable order of every row of a (rows in order, n indices each). */
static int32_t *reference_orders(const struct ggml_tensor *a, bool desc)
{
    const int64_t n = a->ne[0], rows = a->ne[1] * a->ne[2];
    int32_t *orders = malloc((size_t) (n * rows) * sizeof *orders);
    double *v = malloc((size_t) n * sizeof *v);
    for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
        for (int64_t i1 = 0; i1 < a->ne[1]; i1++)
            reference_order(a, i1, i2, 0, desc, orders + (i2 * a->ne[1] + i1) * n, v);
    free(v);
    return orders;
}

/*
 * Number of rows of out whose k indices differ from the first k of the
 * stable orders (compared as sets when as_set).
 */
static int64_t order_mismatches(const struct ggml_tensor *out, const int32_t *orders, int64_t n, int64_t k,
                                bool as_set)
{
    int32_t *want = malloc((size_t) (k + 1) * sizeof *want), *got = malloc((size_t) (k + 1) * sizeof *got);
    int64_t bad = 0;
    for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
        for (int64_t i1 = 0; i1 < out->ne[1]; i1++) {
            memcpy(want, orders + (i2 * out->ne[1] + i1) * n, (size_t) k * sizeof *want);
            for (int64_t i = 0; i < k; i++)
                got[i] = (int32_t) optest_get(out, i, i1, i2, 0);
            if (as_set) {
                qsort(want, (size_t) k, sizeof *want, cmp_i32);
                qsort(got, (size_t) k, sizeof *got, cmp_i32);
            }
            bad += memcmp(want, got, (size_t) k * sizeof *want) != 0;
        }
    free(want);
    free(got);
    return bad;
}

static void test_sort_numerics(void)
{
    uint64_t seed = 0x5eed0404;
    const int64_t lengths[] = { 1, 3, 31, 257, 1000 };
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        const int64_t n = lengths[l];
        for (int variant = 0; variant < 3; variant++) {
            const bool transposed = variant == 2, ties = variant >= 1;
            struct ggml_init_params params = { 8u << 20, NULL, false };
            struct ggml_context *ctx = ggml_init(params);
            struct ggml_tensor *a = sort_input(ctx, n, transposed, ties, &seed);
            const char *what = transposed ? "transposed, ties" : ties ? "ties" : "distinct";
            int32_t *orders[2] = { reference_orders(a, false), reference_orders(a, true) };
            const int64_t ks[] = { 1, 2, n / 2, n };
            for (int use_ref = 0; use_ref <= 1; use_ref++) {
                for (int n_threads = 1; n_threads <= 4; n_threads++) {
                    for (int desc = 0; desc <= 1; desc++) {
                        struct ggml_tensor *out =
                            ggml_argsort(ctx, a, desc ? GGML_SORT_ORDER_DESC : GGML_SORT_ORDER_ASC);
                        enum ggml_status status = optest_compute(ctx, out, n_threads, use_ref);
                        int64_t bad = order_mismatches(out, orders[desc], n, n, false);
                        ok(status == GGML_STATUS_SUCCESS && bad == 0,
                           "argsort %s rows of %lld (%s), %d threads, %s: %lld rows differ from the stable order",
                           desc ? "desc" : "asc", (long long) n, what, n_threads, use_ref ? "reference" : "fast",
                           (long long) bad);
                    }
                    for (size_t j = 0; j < 4; j++) {
                        const int64_t k = ks[j];
                        bool seen = false;
                        for (size_t i = 0; i < j; i++)
                            seen = seen || ks[i] == k;
                        if (k < 1 || k > n || seen)
                            continue;
                        struct ggml_tensor *out = ggml_top_k(ctx, a, (int) k);
                        enum ggml_status status = optest_compute(ctx, out, n_threads, use_ref);
                        int64_t bad = order_mismatches(out, orders[1], n, k, true);
                        ok(status == GGML_STATUS_SUCCESS && bad == 0 && out->ne[0] == k && out->ne[1] == 3 &&
                           out->ne[2] == 2,
                           "top_k %lld of %lld (%s), %d threads, %s: %lld rows select another set",
                           (long long) k, (long long) n, what, n_threads, use_ref ? "reference" : "fast",
                           (long long) bad);
                    }
                }
            }
            /* argsort_top_k: the first k of the descending argsort, in order */
            const int k = (int) (n + 1) / 2;
            struct ggml_tensor *out = ggml_argsort_top_k(ctx, a, k);
            enum ggml_status status = optest_compute(ctx, out, 2, false);
            ok(out && out->op == GGML_OP_VIEW && out->src[0]->op == GGML_OP_ARGSORT && out->ne[0] == k &&
               status == GGML_STATUS_SUCCESS && order_mismatches(out, orders[1], n, k, false) == 0,
               "argsort_top_k %d of %lld (%s) is a view of the descending argsort", k, (long long) n, what);
            free(orders[0]);
            free(orders[1]);
            ggml_free(ctx);
        }
    }
}

static void test_sort_forms(void)
{
    struct ggml_init_params params = { 1u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 2);
    const float v[10] = { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3 };
    memcpy(a->data, v, sizeof v);

    struct ggml_tensor *s = ggml_argsort(ctx, a, GGML_SORT_ORDER_DESC);
    ok(s && s->op == GGML_OP_ARGSORT && s->type == GGML_TYPE_I32 && ggml_are_same_shape(s, a) &&
       s->op_params[0] == GGML_SORT_ORDER_DESC, "argsort: i32 of a's shape, the order in op_params[0]");
    ok(s && optest_compute(ctx, s, 1, false) == GGML_STATUS_SUCCESS && ((int32_t *) s->data)[0] == 4 &&
       ((int32_t *) s->data)[3] == 1 && ((int32_t *) s->data)[4] == 3 && ((int32_t *) s->data)[5] == 0 &&
       ((int32_t *) s->data)[8] == 4 && ((int32_t *) s->data)[9] == 1,
       "argsort keeps equal values in index order");

    struct ggml_tensor *t = ggml_top_k(ctx, a, 3);
    ok(t && t->op == GGML_OP_TOP_K && t->type == GGML_TYPE_I32 && t->ne[0] == 3 && t->ne[1] == 2,
       "top_k: i32 [k, ne1, ne2, ne3] with op TOP_K");
    /* row 0 = 3 1 4 1 5: the best three are 4, 2, 0 (largest first) */
    ok(t && optest_compute(ctx, t, 1, false) == GGML_STATUS_SUCCESS && ((int32_t *) t->data)[0] == 2 &&
       ((int32_t *) t->data)[1] == 4 && ((int32_t *) t->data)[2] == 0,
       "top_k gives largest first with the first two exchanged, like upstream");
    struct ggml_tensor *z = ggml_top_k(ctx, a, 0);
    ok(z && z->ne[0] == 0 && optest_compute(ctx, z, 2, false) == GGML_STATUS_SUCCESS, "top_k with k = 0 is empty");

    struct ggml_tensor *ai = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 5);
    ok(ggml_argsort(ctx, a, (enum ggml_sort_order) 2) == NULL, "an unknown sort order gives NULL");
    logged_one_error("an unknown sort order logs one error");
    ok(ggml_argsort(ctx, ai, GGML_SORT_ORDER_ASC) == NULL, "argsort of i32 gives NULL");
    logged_one_error("argsort of i32 logs one error");
    ok(ggml_top_k(ctx, a, 6) == NULL, "top_k with k larger than the row gives NULL");
    logged_one_error("k > ne0 logs one error");
    ok(ggml_top_k(ctx, a, -1) == NULL, "top_k with a negative k gives NULL");
    logged_one_error("k < 0 logs one error");
    ok(ggml_top_k(ctx, ai, 1) == NULL, "top_k of i32 gives NULL");
    logged_one_error("top_k of i32 logs one error");
    ok(ggml_argsort_top_k(ctx, a, 6) == NULL, "argsort_top_k with k larger than the row gives NULL");
    logged_one_error("argsort_top_k with k > ne0 logs one error");
    ok(ggml_argsort(ctx, NULL, GGML_SORT_ORDER_ASC) == NULL && ggml_top_k(ctx, NULL, 1) == NULL &&
       ggml_argsort_top_k(ctx, NULL, 1) == NULL, "the sorts give NULL for a NULL input");
    is_int(tap_log_errors(), 0, "a NULL input logs nothing");

    /* built, but not computed by the CPU backend: f16 values */
    struct ggml_tensor *ah = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 5);
    memset(ah->data, 0, ggml_nbytes(ah));
    struct ggml_tensor *sh = ggml_argsort(ctx, ah, GGML_SORT_ORDER_ASC);
    ok(sh != NULL && optest_compute(ctx, sh, 1, false) != GGML_STATUS_SUCCESS,
       "the CPU backend refuses argsort of f16");
    logged_one_error("the refusal logs one error");
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    test_rope_numerics();
    test_rope_inplace();
    test_rope_forms();
    test_rope_corr_dims();
    test_rope_errors();
    test_sort_numerics();
    test_sort_forms();
    return tap_done();
}
