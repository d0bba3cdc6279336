/*
 * test-foreign-nodes.c - the CPU backend holds a node to what its
 * constructor could make before it computes it.
 *
 * Graphs can come from elsewhere than the op constructors (the RPC server
 * deserializes them from the network), so ggml_backend_supports_op must
 * refuse a node whose required sources are missing or whose shape, type or
 * op parameters no constructor gives, wherever a kernel indexes, divides or
 * loops by them.  Each case builds a node with its constructor (supported),
 * changes one field (refused, without a message), restores it (supported
 * again).  The last case computes a graph holding such a node: an error
 * status with one message, and the backend stays usable.
 */
#include "config.h"

#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "tap.h"
#include "dense-strides.h"

static ggml_backend_dev_t cpu;

static bool supported(const struct ggml_tensor *t)
{
    return ggml_backend_dev_supports_op(cpu, t);
}

/* Refused with op_params[i] = value, supported again once restored. */
static bool refuses_param(struct ggml_tensor *t, int i, int32_t value)
{
    int32_t *p = (int32_t *) t->op_params;
    const int32_t kept = p[i];
    p[i] = value;
    const bool refused = !supported(t);
    p[i] = kept;
    return refused && supported(t);
}

/* Refused with extent d = value (dense strides), supported again once restored. */
static bool refuses_extent(struct ggml_tensor *t, int d, int64_t value)
{
    const int64_t kept = t->ne[d];
    t->ne[d] = value;
    dense_strides(t);
    const bool refused = !supported(t);
    t->ne[d] = kept;
    dense_strides(t);
    return refused && supported(t);
}

/* Refused with source j = value (NULL: missing), supported again once restored. */
static bool refuses_source(struct ggml_tensor *t, int j, struct ggml_tensor *value)
{
    struct ggml_tensor *kept = t->src[j];
    t->src[j] = value;
    const bool refused = !supported(t);
    t->src[j] = kept;
    return refused && supported(t);
}

/* Refused with stride d = value, supported again once restored. */
static bool refuses_stride(struct ggml_tensor *t, int d, size_t value)
{
    const size_t kept = t->nb[d];
    t->nb[d] = value;
    const bool refused = !supported(t);
    t->nb[d] = kept;
    return refused && supported(t);
}

/* Every one of the first n sources is required. */
static bool requires_sources(struct ggml_tensor *t, int n)
{
    bool all = true;
    for (int j = 0; j < n; j++)
        all = all && refuses_source(t, j, NULL);
    return all;
}

static struct ggml_tensor *f32(struct ggml_context *ctx, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    return ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne0, ne1, ne2, ne3);
}

static void test_required_sources(struct ggml_context *ctx)
{
    struct ggml_tensor *a = f32(ctx, 8, 4, 1, 1), *b = f32(ctx, 8, 3, 1, 1);
    struct ggml_tensor *mm = ggml_mul_mat(ctx, a, b);
    ok(mm != NULL && supported(mm) && requires_sources(mm, 2), "mul_mat: both sources required");
    struct ggml_tensor *add = ggml_add(ctx, a, a);
    ok(add != NULL && supported(add) && requires_sources(add, 2), "add: both sources required");
    struct ggml_tensor *q = f32(ctx, 8, 2, 2, 1), *k = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 4, 2, 1);
    struct ggml_tensor *v = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 4, 2, 1);
    struct ggml_tensor *fa = ggml_flash_attn_ext(ctx, q, k, v, NULL, 1.0f, 0.0f, 0.0f);
    ok(fa != NULL && supported(fa) && requires_sources(fa, 3), "flash_attn_ext: q, k and v required, the mask not");
    struct ggml_tensor *sm = ggml_soft_max_ext(ctx, a, NULL, 1.0f, 0.0f);
    ok(sm != NULL && supported(sm) && requires_sources(sm, 1), "soft_max_ext: the input required, the mask not");
}

static void test_block_concat(struct ggml_context *ctx)
{
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 3);
    struct ggml_tensor *cat = ggml_concat(ctx, a, a, 1);
    const size_t block = ggml_type_size(GGML_TYPE_Q8_0);
    ok(cat != NULL && supported(cat) && refuses_stride(cat, 0, 2 * block),
       "concat of Q8_0: supported with adjacent blocks, refused when the output's blocks are apart");
    const size_t kept = a->nb[0];
    a->nb[0] = 2 * block;
    const bool refused = cat != NULL && !supported(cat);
    a->nb[0] = kept;
    ok(refused && supported(cat), "concat of Q8_0: refused when a source's blocks are apart");
}

static void test_image_ops(struct ggml_context *ctx)
{
    struct ggml_tensor *pad = ggml_pad_ext(ctx, f32(ctx, 4, 3, 2, 1), 1, 2, 0, 1, 0, 0, 0, 0);
    ok(pad != NULL && supported(pad) && refuses_param(pad, 0, -1) && refuses_extent(pad, 0, 8) &&
           refuses_extent(pad, 1, 3),
       "pad: a negative padding, extents other than the padded source's refused");
    struct ggml_tensor *refl = ggml_pad_reflect_1d(ctx, f32(ctx, 5, 2, 1, 1), 1, 2);
    ok(refl != NULL && supported(refl) && refuses_param(refl, 0, -1) && refuses_param(refl, 1, 5) &&
           refuses_extent(refl, 1, 3) && refuses_extent(refl, 0, 9),
       "pad_reflect_1d: paddings outside [0, extent), other extents refused");
    struct ggml_tensor *roll = ggml_roll(ctx, f32(ctx, 4, 3, 1, 1), 1, -1, 0, 0);
    ok(roll != NULL && supported(roll) && refuses_param(roll, 0, 4) && refuses_param(roll, 1, -3) &&
           refuses_extent(roll, 0, 5),
       "roll: shifts not smaller than the extent, another shape than the source's refused");
    struct ggml_tensor *part = ggml_win_part(ctx, f32(ctx, 3, 5, 5, 1), 2);
    ok(part != NULL && supported(part) && refuses_param(part, 2, 0) && refuses_param(part, 0, 2) &&
           refuses_extent(part, 3, 10) && refuses_stride(part, 0, 0),
       "win_part: window 0, a wrong window count, another output shape, output elements 0 bytes apart refused");
    struct ggml_tensor *unpart = ggml_win_unpart(ctx, f32(ctx, 3, 2, 2, 9), 5, 5, 2);
    ok(unpart != NULL && supported(unpart) && refuses_param(unpart, 0, 0) && refuses_param(unpart, 0, 3) &&
           refuses_extent(unpart, 1, 7),
       "win_unpart: window 0 or 3, a plane the source's windows do not cover refused");
    struct ggml_tensor *rel = ggml_get_rel_pos(ctx, f32(ctx, 4, 5, 1, 1), 3, 3);
    ok(rel != NULL && supported(rel) && refuses_extent(rel, 1, 2) && refuses_extent(rel, 2, 4),
       "get_rel_pos: kh != qh, a table of other than 2*qh - 1 rows refused");
    struct ggml_tensor *pw = f32(ctx, 2, 2, 3, 2), *ph = f32(ctx, 2, 2, 3, 2);
    struct ggml_tensor *arp = ggml_add_rel_pos(ctx, f32(ctx, 4, 6, 2, 1), pw, ph);
    ok(arp != NULL && supported(arp) && requires_sources(arp, 3) && refuses_source(arp, 1, f32(ctx, 3, 2, 3, 2)) &&
           refuses_extent(arp, 1, 5),
       "add_rel_pos: all three sources required, a table of another width, another output shape refused");
    struct ggml_tensor *p1 = ggml_pool_1d(ctx, f32(ctx, 8, 3, 1, 1), GGML_OP_POOL_MAX, 2, 2, 0);
    ok(p1 != NULL && supported(p1) && refuses_param(p1, 1, 0) && refuses_param(p1, 0, 7) &&
           refuses_extent(p1, 1, 4),
       "pool_1d: kernel 0, an unknown pooling, more rows than the source's refused");
    struct ggml_tensor *p2 = ggml_pool_2d(ctx, f32(ctx, 8, 8, 2, 1), GGML_OP_POOL_AVG, 2, 2, 2, 2, 0, 0);
    ok(p2 != NULL && supported(p2) && refuses_extent(p2, 2, 3) && refuses_param(p2, 4, 0),
       "pool_2d: more planes than the source's, stride 0 refused");
}

static void test_im2col_back(struct ggml_context *ctx)
{
    /* input [5, 5, 2, 1], kernel 3 x 3 over 2 channels, stride 1: output 3 x 3 */
    struct ggml_tensor *grad = f32(ctx, 18, 3, 3, 1), *kernel = f32(ctx, 3, 3, 2, 4);
    int64_t ne[4] = { 5, 5, 2, 1 };
    struct ggml_tensor *r = ggml_im2col_back(ctx, grad, kernel, ne, 1, 1, 0, 0, 1, 1, true);
    ok(r != NULL && supported(r) && requires_sources(r, 2) && refuses_param(r, 0, 0) && refuses_param(r, 4, 0) &&
           refuses_param(r, 2, -1) && refuses_param(r, 6, 2) && refuses_extent(r, 0, 6) && refuses_extent(r, 2, 3),
       "im2col_back: stride 0, dilation 0, padding -1, is_2D 2, an input the gradient does not fit refused");
}

static void test_deepseek_ops(struct ggml_context *ctx)
{
    struct ggml_tensor *q = f32(ctx, 4, 2, 3, 1), *k = f32(ctx, 4, 1, 5, 1), *w = f32(ctx, 2, 3, 1, 1);
    struct ggml_tensor *mask = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 5, 3, 1, 1);
    struct ggml_tensor *li = ggml_lightning_indexer(ctx, q, k, w, mask);
    ok(li != NULL && supported(li) && requires_sources(li, 4) && refuses_extent(li, 0, 6) &&
           refuses_source(li, 3, f32(ctx, 5, 3, 1, 1)) && refuses_source(li, 1, f32(ctx, 4, 1, 6, 1)),
       "lightning_indexer: every source required; another output shape, an F32 mask, more keys than the mask's "
       "refused");
    struct ggml_tensor *comb = ggml_dsv4_hc_comb(ctx, f32(ctx, 8, 3, 1, 1), f32(ctx, 3, 1, 1, 1), f32(ctx, 8, 1, 1, 1),
                                                 1e-6f, 2);
    ok(comb != NULL && supported(comb) && requires_sources(comb, 3) && refuses_param(comb, 1, 0) &&
           refuses_extent(comb, 2, 4) && refuses_source(comb, 0, f32(ctx, 9, 3, 1, 1)),
       "dsv4_hc_comb: n_iter 0, another token count, mixes not (2 + hc) hc a token refused");
    struct ggml_tensor *pre = ggml_dsv4_hc_pre(ctx, f32(ctx, 4, 2, 3, 1), f32(ctx, 2, 3, 1, 1));
    ok(pre != NULL && supported(pre) && requires_sources(pre, 2) && refuses_extent(pre, 1, 4) &&
           refuses_source(pre, 1, f32(ctx, 3, 3, 1, 1)),
       "dsv4_hc_pre: another output shape, weights of other than hc values a token refused");
    struct ggml_tensor *post = ggml_dsv4_hc_post(ctx, f32(ctx, 4, 3, 1, 1), f32(ctx, 4, 2, 3, 1), f32(ctx, 2, 3, 1, 1),
                                                 f32(ctx, 2, 2, 3, 1));
    ok(post != NULL && supported(post) && requires_sources(post, 4) && refuses_extent(post, 1, 3) &&
           refuses_source(post, 3, f32(ctx, 3, 2, 3, 1)),
       "dsv4_hc_post: another output shape, a comb of another hc refused");
}

/* A graph holding a refused node computes to an error with one message;
   the backend computes the repaired graph afterwards. */
static void test_compute_refuses(void)
{
    struct ggml_init_params ip = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(ip);
    ggml_backend_t backend = ggml_backend_cpu_init();
    struct ggml_tensor *a = f32(ctx, 3, 5, 5, 1);
    struct ggml_tensor *part = ggml_win_part(ctx, a, 2);
    struct ggml_cgraph *gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, part);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    if (!ok(buf != NULL, "win_part graph allocated")) {
        ggml_backend_free(backend);
        ggml_free(ctx);
        return;
    }
    float values[75];
    for (int i = 0; i < 75; i++)
        values[i] = (float) i;
    ggml_backend_tensor_set(a, values, 0, sizeof values);
    ((int32_t *) part->op_params)[2] = 0; /* window 0: the kernel would divide by it */
    tap_log_errors();
    enum ggml_status st = ggml_backend_graph_compute(backend, gf);
    ok(st != GGML_STATUS_SUCCESS, "a graph with a window-0 win_part node does not compute (%s)",
       ggml_status_to_string(st));
    logged_one_error("... and logs one message");
    ((int32_t *) part->op_params)[2] = 2;
    st = ggml_backend_graph_compute(backend, gf);
    float out[3 * 2 * 2 * 9];
    ggml_backend_tensor_get(part, out, 0, sizeof out);
    /* window 4 (px 1, py 1) row (1, 1) is source row (3, 3): channel 0 at 3*3 + 3*15 */
    const float want = (float) (3 * 3 + 3 * 15);
    ok(st == GGML_STATUS_SUCCESS && out[((4 * 2 + 1) * 2 + 1) * 3] == want,
       "the repaired graph computes on the same backend (%g, want %g)", out[((4 * 2 + 1) * 2 + 1) * 3],
       (double) want);
    is_int(tap_log_errors(), 0, "... without a message");
    ggml_backend_buffer_free(buf);
    ggml_backend_free(backend);
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (!ok(cpu != NULL, "the CPU device is registered"))
        return tap_done();
    struct ggml_init_params ip = { 128 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(ip);
    test_required_sources(ctx);
    test_image_ops(ctx);
    test_block_concat(ctx);
    test_im2col_back(ctx);
    test_deepseek_ops(ctx);
    is_int(tap_log_errors(), 0, "refusals of foreign nodes log nothing");
    ggml_free(ctx);
    test_compute_refuses();
    return tap_done();
}
