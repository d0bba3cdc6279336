/*
 * test-op-conv-direct.c - CONV_TRANSPOSE_1D, CONV_TRANSPOSE_2D, CONV_2D_DW,
 * CONV_2D and CONV_3D: strides, paddings, dilations, channels, batches, odd
 * sizes, F32 and F16 kernels, transposed and channels-last inputs, 1..4
 * threads, reference and default kernels, and the constructors' errors.
 *
 * The reference is a direct double-precision convolution written here,
 * computed from the inputs as stored (F16 kernels after their rounding).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "op-test.h"

enum conv_kind { CT1D, CT2D, DW, C2D, C3D };
static const char *const kind_names[] = { "conv_transpose_1d", "conv_transpose_2d_p0", "conv_2d_dw_direct",
                                          "conv_2d_direct", "conv_3d_direct" };

/* layouts of an input: contiguous, dims 0 and 1 swapped in memory, channels (dim 2) innermost */
enum layout { CONTIG, TRANSPOSED, CHANNELS_LAST };

static struct ggml_tensor *make_input(struct ggml_context *ctx, enum ggml_type type, const int64_t ne[4],
                                      enum layout layout, uint64_t *seed)
{
    struct ggml_tensor *t;
    if (layout == TRANSPOSED) {
        t = ggml_new_tensor_4d(ctx, type, ne[1], ne[0], ne[2], ne[3]);
        optest_fill(t, seed, -1.0, 1.0);
        return ggml_transpose(ctx, t);
    }
    if (layout == CHANNELS_LAST) {
        t = ggml_new_tensor_4d(ctx, type, ne[2], ne[0], ne[1], ne[3]);
        optest_fill(t, seed, -1.0, 1.0);
        return ggml_permute(ctx, t, 2, 0, 1, 3);
    }
    t = ggml_new_tensor(ctx, type, 4, ne);
    optest_fill(t, seed, -1.0, 1.0);
    return t;
}

static struct ggml_tensor *build(struct ggml_context *ctx, enum conv_kind kind, struct ggml_tensor *a,
                                 struct ggml_tensor *b, const int *p)
{
    switch (kind) {
    case CT1D: return ggml_conv_transpose_1d(ctx, a, b, p[0], 0, 1);
    case CT2D: return ggml_conv_transpose_2d_p0(ctx, a, b, p[0]);
    case DW:   return ggml_conv_2d_dw_direct(ctx, a, b, p[0], p[1], p[2], p[3], p[4], p[5]);
    case C2D:  return ggml_conv_2d_direct(ctx, a, b, p[0], p[1], p[2], p[3], p[4], p[5]);
    default:   return ggml_conv_3d_direct(ctx, a, b, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8],
                                          p[9], p[10], p[11]);
    }
}

/* input index feeding output o through tap k of a transposed convolution, or -1 */
static int64_t ref_transposed(int64_t o, int64_t k, int64_t s, int64_t n_in)
{
    if (o - k < 0 || (o - k) % s != 0 || (o - k) / s >= n_in)
        return -1;
    return (o - k) / s;
}

/* the expected out, row-major in out's shape */
static double *reference(enum conv_kind kind, const struct ggml_tensor *out, const struct ggml_tensor *a,
                         const struct ggml_tensor *b, const int *p)
{
    double *ref = calloc((size_t) ggml_nelements(out), sizeof *ref);
    int64_t k = 0;
    for (int64_t o3 = 0; o3 < out->ne[3]; o3++)
        for (int64_t o2 = 0; o2 < out->ne[2]; o2++)
            for (int64_t o1 = 0; o1 < out->ne[1]; o1++)
                for (int64_t o0 = 0; o0 < out->ne[0]; o0++, k++) {
                    double sum = 0.0;
                    if (kind == CT1D) {
                        for (int64_t kx = 0; kx < a->ne[0]; kx++) {
                            const int64_t l = ref_transposed(o0, kx, p[0], b->ne[0]);
                            for (int64_t ic = 0; l >= 0 && ic < a->ne[2]; ic++)
                                sum += optest_get(a, kx, o1, ic, 0) * optest_get(b, l, ic, 0, 0);
                        }
                    } else if (kind == CT2D) {
                        for (int64_t ky = 0; ky < a->ne[1]; ky++)
                            for (int64_t kx = 0; kx < a->ne[0]; kx++) {
                                const int64_t ix = ref_transposed(o0, kx, p[0], b->ne[0]);
                                const int64_t iy = ref_transposed(o1, ky, p[0], b->ne[1]);
                                for (int64_t ic = 0; ix >= 0 && iy >= 0 && ic < a->ne[3]; ic++)
                                    sum += optest_get(a, kx, ky, o2, ic) * optest_get(b, ix, iy, ic, o3);
                            }
                    } else if (kind == DW || kind == C2D) {
                        const int64_t n_ic = kind == DW ? 1 : a->ne[2];
                        for (int64_t ic = 0; ic < n_ic; ic++)
                            for (int64_t ky = 0; ky < a->ne[1]; ky++)
                                for (int64_t kx = 0; kx < a->ne[0]; kx++) {
                                    const int64_t ix = o0 * p[0] - p[2] + kx * p[4];
                                    const int64_t iy = o1 * p[1] - p[3] + ky * p[5];
                                    if (ix < 0 || iy < 0 || ix >= b->ne[0] || iy >= b->ne[1])
                                        continue;
                                    if (kind == DW)
                                        sum += optest_get(a, kx, ky, 0, o2) * optest_get(b, ix, iy, o2, o3);
                                    else
                                        sum += optest_get(a, kx, ky, ic, o2) * optest_get(b, ix, iy, ic, o3);
                                }
                    } else {
                        const int64_t n_ic = p[9], n_oc = p[11], oc = o3 % n_oc, n = o3 / n_oc;
                        for (int64_t ic = 0; ic < n_ic; ic++)
                            for (int64_t kz = 0; kz < a->ne[2]; kz++)
                                for (int64_t ky = 0; ky < a->ne[1]; ky++)
                                    for (int64_t kx = 0; kx < a->ne[0]; kx++) {
                                        const int64_t ix = o0 * p[0] - p[3] + kx * p[6];
                                        const int64_t iy = o1 * p[1] - p[4] + ky * p[7];
                                        const int64_t iz = o2 * p[2] - p[5] + kz * p[8];
                                        if (ix < 0 || iy < 0 || iz < 0 || ix >= b->ne[0] || iy >= b->ne[1] ||
                                            iz >= b->ne[2])
                                            continue;
                                        sum += optest_get(a, kx, ky, kz, oc * n_ic + ic) *
                                               optest_get(b, ix, iy, iz, n * n_ic + ic);
                                    }
                    }
                    ref[k] = sum;
                }
    return ref;
}

/*
 * Threshold: the kernel accumulates at most a few hundred products of
 * values in [-1, 1] in float, a relative error of ~1e-7 per sum, so the
 * NMSE stays below 1e-12; 1e-10 leaves margin and still catches any wrong
 * tap or index (which gives an NMSE of order 1e-2 or more).
 */
#define NMSE_MAX 1e-10

static void check_case(enum conv_kind kind, enum ggml_type ta, const int64_t ne_a[4], enum layout la,
                       const int64_t ne_b[4], enum layout lb, const int *p, uint64_t *seed)
{
    struct ggml_init_params params = { 32u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = make_input(ctx, ta, ne_a, la, seed);
    struct ggml_tensor *b = make_input(ctx, GGML_TYPE_F32, ne_b, lb, seed);
    struct ggml_tensor *probe = build(ctx, kind, a, b, p);
    if (probe == NULL) {
        ok(false, "%s: constructor failed", kind_names[kind]);
        ggml_free(ctx);
        return;
    }
    double *ref = reference(kind, probe, a, b, p);
    for (int use_ref = 0; use_ref <= 1; use_ref++)
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            struct ggml_tensor *out = build(ctx, kind, a, b, p);
            enum ggml_status status = optest_compute(ctx, out, n_threads, use_ref);
            double nmse = optest_nmse(out, ref);
            ok(status == GGML_STATUS_SUCCESS && nmse <= NMSE_MAX,
               "%s %s a[%lld,%lld,%lld,%lld]%s b[%lld,%lld,%lld,%lld]%s -> [%lld,%lld,%lld,%lld], "
               "%d threads, %s: nmse %.3g", kind_names[kind], ggml_type_name(ta),
               (long long) ne_a[0], (long long) ne_a[1], (long long) ne_a[2], (long long) ne_a[3],
               la == TRANSPOSED ? " transposed" : "",
               (long long) ne_b[0], (long long) ne_b[1], (long long) ne_b[2], (long long) ne_b[3],
               lb == TRANSPOSED ? " transposed" : lb == CHANNELS_LAST ? " channels-last" : "",
               (long long) out->ne[0], (long long) out->ne[1], (long long) out->ne[2], (long long) out->ne[3],
               n_threads, use_ref ? "reference" : "default", nmse);
        }
    free(ref);
    ggml_free(ctx);
}

static void test_conv_transpose_1d(uint64_t *seed)
{
    /* a [K, OC, IC], b [L, IC]; params: stride */
    const struct { int64_t a[4], b[4]; int s; } cases[] = {
        { { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, 1 },
        { { 3, 5, 4, 1 }, { 31, 4, 1, 1 }, 1 },
        { { 5, 3, 2, 1 }, { 33, 2, 1, 1 }, 2 },
        { { 4, 2, 3, 1 }, { 257, 3, 1, 1 }, 3 },
        { { 2, 7, 1, 1 }, { 9, 1, 1, 1 }, 5 },  /* stride larger than the kernel: gaps */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int p[1] = { cases[i].s };
        check_case(CT1D, GGML_TYPE_F32, cases[i].a, CONTIG, cases[i].b, CONTIG, p, seed);
        check_case(CT1D, GGML_TYPE_F16, cases[i].a, i % 2 ? TRANSPOSED : CONTIG, cases[i].b,
                   i % 2 ? CONTIG : TRANSPOSED, p, seed);
    }
}

static void test_conv_transpose_2d(uint64_t *seed)
{
    /* a [KW, KH, OC, IC], b [W, H, IC, N]; params: stride */
    const struct { int64_t a[4], b[4]; int s; } cases[] = {
        { { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, 1 },
        { { 3, 3, 2, 3 }, { 5, 7, 3, 2 }, 2 },
        { { 2, 3, 3, 2 }, { 31, 3, 2, 1 }, 1 },
        { { 3, 2, 1, 4 }, { 6, 5, 4, 3 }, 3 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int p[1] = { cases[i].s };
        check_case(CT2D, GGML_TYPE_F32, cases[i].a, CONTIG, cases[i].b, i % 2 ? CHANNELS_LAST : CONTIG, p, seed);
        check_case(CT2D, GGML_TYPE_F16, cases[i].a, i % 2 ? CONTIG : TRANSPOSED, cases[i].b,
                   i % 2 ? TRANSPOSED : CONTIG, p, seed);
    }
}

static void test_conv_2d_dw(uint64_t *seed)
{
    /* a [KW, KH, 1, C], b [W, H, C, N]; params: s0, s1, p0, p1, d0, d1 */
    const struct { int64_t a[4], b[4]; int p[6]; } cases[] = {
        { { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 1, 1, 0, 0, 1, 1 } },
        { { 3, 3, 1, 4 }, { 8, 7, 4, 2 }, { 1, 1, 1, 1, 1, 1 } },
        { { 3, 5, 1, 3 }, { 33, 9, 3, 1 }, { 2, 1, 0, 2, 1, 1 } },
        { { 2, 3, 1, 5 }, { 31, 11, 5, 3 }, { 3, 2, 2, 1, 2, 3 } },
        { { 5, 1, 1, 2 }, { 257, 1, 2, 1 }, { 1, 1, 2, 0, 1, 1 } },
        /* dilated rows overhanging the padded input by 4 < the stride 5: one output row, as in ggml */
        { { 3, 3, 1, 4 }, { 17, 1, 4, 2 }, { 3, 5, 5, 2, 2, 4 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_case(DW, GGML_TYPE_F32, cases[i].a, CONTIG, cases[i].b, CONTIG, cases[i].p, seed);
        check_case(DW, GGML_TYPE_F32, cases[i].a, TRANSPOSED, cases[i].b, CHANNELS_LAST, cases[i].p, seed);
    }
    /* ggml's extent, (in + 2p - d(k-1) - 1) / s + 1 with C's truncating division */
    struct ggml_init_params ip = { 16 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 1, 4);
    struct ggml_tensor *x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 17, 1, 4, 2);
    struct ggml_tensor *r = ggml_conv_2d_dw_direct(ctx, k, x, 3, 5, 5, 2, 2, 4);
    ok(r != NULL && r->ne[0] == (17 + 10 - 4 - 1) / 3 + 1 && r->ne[1] == 1,
       "conv_2d_dw_direct: %d x %d output for a kernel overhanging by less than a stride",
       r ? (int) r->ne[0] : -1, r ? (int) r->ne[1] : -1);
    r = ggml_conv_2d_dw_direct(ctx, k, x, 3, 4, 5, 2, 2, 4);
    ok(r == NULL && tap_log_errors() == 1, "... and refused when it overhangs by the stride (4) or more");
    ggml_free(ctx);
}

static void test_conv_2d(uint64_t *seed)
{
    /* a [KW, KH, IC, OC], b [W, H, IC, N]; params: s0, s1, p0, p1, d0, d1 */
    const struct { int64_t a[4], b[4]; int p[6]; } cases[] = {
        { { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 1, 1, 0, 0, 1, 1 } },
        { { 3, 3, 2, 4 }, { 9, 7, 2, 2 }, { 1, 1, 1, 1, 1, 1 } },
        { { 3, 2, 3, 2 }, { 33, 6, 3, 1 }, { 2, 1, 0, 1, 2, 1 } },
        { { 2, 3, 1, 3 }, { 31, 10, 1, 3 }, { 3, 2, 2, 0, 1, 3 } },
        { { 3, 3, 2, 3 }, { 11, 1, 2, 1 }, { 3, 5, 5, 2, 2, 4 } }, /* overhang < stride: one row */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_case(C2D, GGML_TYPE_F32, cases[i].a, CONTIG, cases[i].b, i % 2 ? CHANNELS_LAST : CONTIG,
                   cases[i].p, seed);
        check_case(C2D, GGML_TYPE_F16, cases[i].a, TRANSPOSED, cases[i].b, i % 2 ? CONTIG : TRANSPOSED,
                   cases[i].p, seed);
    }
}

static void test_conv_3d(uint64_t *seed)
{
    /* a [KW, KH, KD, IC*OC], b [W, H, D, IC*N];
     * params: s0, s1, s2, p0, p1, p2, d0, d1, d2, IC, N, OC */
    const struct { int64_t a[4], b[4]; int p[12]; } cases[] = {
        { { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1 } },
        { { 3, 3, 3, 6 }, { 7, 6, 5, 4 }, { 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3 } },
        { { 2, 3, 2, 3 }, { 9, 8, 7, 3 }, { 2, 1, 3, 0, 1, 1, 2, 1, 2, 1, 3, 3 } },
        { { 3, 1, 2, 4 }, { 31, 3, 4, 2 }, { 3, 1, 1, 2, 0, 1, 1, 1, 2, 2, 1, 2 } },
        { { 3, 3, 1, 2 }, { 9, 1, 2, 2 }, { 2, 5, 1, 1, 2, 0, 1, 4, 1, 1, 2, 2 } }, /* overhang < stride */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_case(C3D, GGML_TYPE_F32, cases[i].a, CONTIG, cases[i].b, CONTIG, cases[i].p, seed);
        check_case(C3D, GGML_TYPE_F16, cases[i].a, TRANSPOSED, cases[i].b, TRANSPOSED, cases[i].p, seed);
    }
}

/* the result of ggml_conv_2d_dw_direct keeps a channels-last input's layout */
static void test_dw_layout(void)
{
    struct ggml_init_params params = { 1u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 1, 4);
    struct ggml_tensor *cwhn = ggml_permute(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 5, 6, 2), 2, 0, 1, 3);
    struct ggml_tensor *r = ggml_conv_2d_dw_direct(ctx, a, cwhn, 1, 1, 1, 1, 1, 1);
    ok(r != NULL && r->ne[0] == 5 && r->ne[1] == 6 && r->ne[2] == 4 && r->ne[3] == 2 &&
       ggml_is_contiguous_channels(r), "conv_2d_dw_direct: a channels-last input gives a channels-last result");
    struct ggml_tensor *whcn = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 6, 4, 2);
    r = ggml_conv_2d_dw_direct(ctx, a, whcn, 2, 1, 0, 0, 1, 1);
    ok(r != NULL && ggml_is_contiguous(r) && r->ne[0] == 2 && r->ne[1] == 4 && r->op == GGML_OP_CONV_2D_DW &&
       r->op_params[0] == 2 && r->op_params[1] == 1 && r->op_params[4] == 1,
       "conv_2d_dw_direct: contiguous result and upstream's op_params");
    ggml_free(ctx);
}

static void test_errors(void)
{
    struct ggml_init_params params = { 1u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *k1 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 2, 4);
    struct ggml_tensor *x1 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 10, 4);
    struct ggml_tensor *x3 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 10, 4, 2);
    struct ggml_tensor *x1bad = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 10, 3);
    struct ggml_tensor *r = ggml_conv_transpose_1d(ctx, k1, x1, 2, 0, 1);
    ok(r != NULL && r->ne[0] == 9 * 2 + 3 && r->ne[1] == 2 && r->type == GGML_TYPE_F32 &&
       r->op_params[0] == 2 && r->op_params[1] == 0 && r->op_params[2] == 1, "conv_transpose_1d: shape, params");
    ok(ggml_conv_transpose_1d(ctx, k1, x3, 1, 0, 1) == NULL, "conv_transpose_1d: 3-d input gives NULL");
    logged_one_error("conv_transpose_1d: 3-d input logs one error");
    ok(ggml_conv_transpose_1d(ctx, k1, x1bad, 1, 0, 1) == NULL, "conv_transpose_1d: channel mismatch");
    logged_one_error("conv_transpose_1d: channel mismatch logs one error");
    ok(ggml_conv_transpose_1d(ctx, k1, x1, 1, 1, 1) == NULL, "conv_transpose_1d: padding != 0");
    logged_one_error("conv_transpose_1d: padding logs one error");
    ok(ggml_conv_transpose_1d(ctx, k1, x1, 1, 0, 2) == NULL, "conv_transpose_1d: dilation != 1");
    logged_one_error("conv_transpose_1d: dilation logs one error");
    ok(ggml_conv_transpose_1d(ctx, k1, x1, 0, 0, 1) == NULL, "conv_transpose_1d: stride 0");
    logged_one_error("conv_transpose_1d: stride 0 logs one error");

    struct ggml_tensor *k2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 3, 3, 2, 4);
    struct ggml_tensor *x2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 6, 4, 2);
    struct ggml_tensor *x2bad = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 6, 3, 2);
    r = ggml_conv_transpose_2d_p0(ctx, k2, x2, 2);
    ok(r != NULL && r->ne[0] == 11 && r->ne[1] == 13 && r->ne[2] == 2 && r->ne[3] == 2 && r->op_params[0] == 2,
       "conv_transpose_2d_p0: shape, params");
    ok(ggml_conv_transpose_2d_p0(ctx, k2, x2bad, 1) == NULL, "conv_transpose_2d_p0: channel mismatch");
    logged_one_error("conv_transpose_2d_p0: channel mismatch logs one error");
    ok(ggml_conv_transpose_2d_p0(ctx, k2, x2, 0) == NULL, "conv_transpose_2d_p0: stride 0");
    logged_one_error("conv_transpose_2d_p0: stride 0 logs one error");
    {
        struct ggml_init_params meta = { 4 * ggml_tensor_overhead(), NULL, true };
        struct ggml_context *mctx = ggml_init(meta);
        struct ggml_tensor *wide = ggml_new_tensor_4d(mctx, GGML_TYPE_F32, INT64_C(1) << 40, 1, 4, 1);
        ok(ggml_conv_transpose_2d_p0(mctx, k2, wide, INT32_MAX) == NULL,
           "conv_transpose_2d_p0: an output wider than INT64_MAX is refused");
        logged_one_error("conv_transpose_2d_p0: an overflowing output logs one error");
        ggml_free(mctx);
    }

    struct ggml_tensor *kdw = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 1, 4);
    {
        /* an input INT64_MAX high (a no_alloc context holds its 2^64 - 2
         * bytes): its padded extent overflows int64_t, which must not wrap
         * (UBSan); the result is refused with one error */
        struct ggml_init_params meta = { 4 * ggml_tensor_overhead(), NULL, true };
        struct ggml_context *mctx = ggml_init(meta);
        struct ggml_tensor *kernel = ggml_new_tensor_4d(mctx, GGML_TYPE_F16, 1, 3, 1, 1);
        struct ggml_tensor *tall = ggml_new_tensor_4d(mctx, GGML_TYPE_F16, 1, INT64_MAX, 1, 1);
        tap_log_errors();
        struct ggml_tensor *e = ggml_conv_2d_direct(mctx, kernel, tall, 1, 1, 0, 3, 1, 1);
        ok(tall != NULL && e == NULL, "conv_2d_direct of an input INT64_MAX high, padded, is refused");
        logged_one_error("... with one error");
        ggml_free(mctx);
    }
    struct ggml_tensor *kdw2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 2, 4);
    struct ggml_tensor *kbig = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 9, 3, 1, 4);
    ok(ggml_conv_2d_dw_direct(ctx, kdw2, x2, 1, 1, 0, 0, 1, 1) == NULL, "conv_2d_dw_direct: kernel ne[2] != 1");
    logged_one_error("conv_2d_dw_direct: kernel shape logs one error");
    ok(ggml_conv_2d_dw_direct(ctx, kdw, x2bad, 1, 1, 0, 0, 1, 1) == NULL, "conv_2d_dw_direct: channel mismatch");
    logged_one_error("conv_2d_dw_direct: channel mismatch logs one error");
    ok(ggml_conv_2d_dw_direct(ctx, kdw, x2, 1, 0, 0, 0, 1, 1) == NULL, "conv_2d_dw_direct: stride 0");
    logged_one_error("conv_2d_dw_direct: stride 0 logs one error");
    ok(ggml_conv_2d_dw_direct(ctx, kdw, x2, 1, 1, -1, 0, 1, 1) == NULL, "conv_2d_dw_direct: negative padding");
    logged_one_error("conv_2d_dw_direct: negative padding logs one error");
    ok(ggml_conv_2d_dw_direct(ctx, kbig, x2, 1, 1, 0, 0, 1, 1) == NULL, "conv_2d_dw_direct: kernel too large");
    logged_one_error("conv_2d_dw_direct: kernel too large logs one error");

    struct ggml_tensor *kc = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 4, 5);
    struct ggml_tensor *kcbig = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 7, 4, 5);
    r = ggml_conv_2d_direct(ctx, kc, x2, 2, 1, 1, 0, 1, 2);
    ok(r != NULL && r->ne[0] == 3 && r->ne[1] == 2 && r->ne[2] == 5 && r->ne[3] == 2 && r->op == GGML_OP_CONV_2D &&
       r->op_params[0] == 2 && r->op_params[2] == 1 && r->op_params[5] == 2, "conv_2d_direct: shape, params");
    ok(ggml_conv_2d_direct(ctx, kc, x2bad, 1, 1, 0, 0, 1, 1) == NULL, "conv_2d_direct: channel mismatch");
    logged_one_error("conv_2d_direct: channel mismatch logs one error");
    ok(ggml_conv_2d_direct(ctx, kc, x2, 1, 1, 0, 0, 0, 1) == NULL, "conv_2d_direct: dilation 0");
    logged_one_error("conv_2d_direct: dilation 0 logs one error");
    ok(ggml_conv_2d_direct(ctx, kcbig, x2, 1, 1, 0, 0, 1, 1) == NULL, "conv_2d_direct: kernel too large");
    logged_one_error("conv_2d_direct: kernel too large logs one error");

    struct ggml_tensor *k3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 2, 2, 6);
    struct ggml_tensor *x3d = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 5, 5, 4);
    r = ggml_conv_3d_direct(ctx, k3, x3d, 1, 2, 1, 0, 0, 1, 1, 1, 2, 2, 2, 3);
    ok(r != NULL && r->ne[0] == 4 && r->ne[1] == 2 && r->ne[2] == 5 && r->ne[3] == 6 && r->op == GGML_OP_CONV_3D &&
       r->op_params[9] == 2 && r->op_params[10] == 2 && r->op_params[11] == 3, "conv_3d_direct: shape, params");
    ok(ggml_conv_3d_direct(ctx, k3, x3d, 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 2, 2) == NULL,
       "conv_3d_direct: kernel ne[3] != IC*OC");
    logged_one_error("conv_3d_direct: channel mismatch logs one error");
    ok(ggml_conv_3d_direct(ctx, k3, x3d, 1, 1, 1, 0, -2, 0, 1, 1, 1, 2, 2, 3) == NULL,
       "conv_3d_direct: negative padding");
    logged_one_error("conv_3d_direct: negative padding logs one error");

    ok(ggml_conv_transpose_1d(ctx, NULL, x1, 1, 0, 1) == NULL && ggml_conv_transpose_1d(ctx, k1, NULL, 1, 0, 1) == NULL &&
       ggml_conv_transpose_2d_p0(ctx, NULL, x2, 1) == NULL && ggml_conv_transpose_2d_p0(ctx, k2, NULL, 1) == NULL &&
       ggml_conv_2d_dw_direct(ctx, NULL, x2, 1, 1, 0, 0, 1, 1) == NULL &&
       ggml_conv_2d_dw_direct(ctx, kdw, NULL, 1, 1, 0, 0, 1, 1) == NULL &&
       ggml_conv_2d_direct(ctx, NULL, x2, 1, 1, 0, 0, 1, 1) == NULL &&
       ggml_conv_2d_direct(ctx, kc, NULL, 1, 1, 0, 0, 1, 1) == NULL &&
       ggml_conv_3d_direct(ctx, NULL, x3d, 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 2, 3) == NULL &&
       ggml_conv_3d_direct(ctx, k3, NULL, 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 2, 3) == NULL,
       "a NULL input gives NULL");
    is_int(tap_log_errors(), 0, "a NULL input logs nothing");

    /* types the kernels do not take are refused by the engine, not computed */
    struct ggml_tensor *kbf = ggml_new_tensor_3d(ctx, GGML_TYPE_BF16, 3, 2, 4);
    r = ggml_conv_transpose_1d(ctx, kbf, x1, 1, 0, 1);
    ok(r != NULL && !ggml_backend_dev_supports_op(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU), r),
       "conv_transpose_1d: a BF16 kernel is not supported");
    struct ggml_tensor *x2h = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 5, 6, 4, 2);
    r = ggml_conv_2d_dw_direct(ctx, kdw, x2h, 1, 1, 0, 0, 1, 1);
    ok(r != NULL && r->type == GGML_TYPE_F16 &&
       !ggml_backend_dev_supports_op(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU), r),
       "conv_2d_dw_direct: F16 data is not supported");
    r = ggml_conv_2d_direct(ctx, k2, x2, 1, 1, 0, 0, 1, 1);
    ok(r == NULL, "conv_2d_direct: k2 has 2 input channels, x2 4");
    logged_one_error("conv_2d_direct: mismatch logs one error");
    struct ggml_tensor *kh = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 3, 3, 4, 5);
    r = ggml_conv_2d_direct(ctx, kh, x2, 1, 1, 1, 1, 1, 1);
    ok(r != NULL && ggml_backend_dev_supports_op(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU), r),
       "conv_2d_direct: an F16 kernel is supported");
    tap_log_errors();
    ggml_free(ctx);
}

/*
 * Nodes that no constructor makes (a graph from elsewhere, such as the RPC
 * server's, found by its fuzzer: a CONV_3D with 0 output channels divided
 * by zero): the CPU device refuses each, and accepts the constructor's.
 */
static void test_foreign_nodes(void)
{
    struct ggml_init_params ip = { 64 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(ip);
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    struct ggml_tensor *k3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 2, 2, 6), *x3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 5, 5, 4);
    struct ggml_tensor *r = ggml_conv_3d_direct(ctx, k3, x3, 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 2, 3);
    bool good = r != NULL && ggml_backend_dev_supports_op(cpu, r);
    int32_t *p = r != NULL ? (int32_t *) r->op_params : NULL;
    if (good) {
        p[11] = 0;   /* OC */
        good = !ggml_backend_dev_supports_op(cpu, r);
        p[11] = 3, p[9] = 5;   /* IC past the operands' channels */
        good = good && !ggml_backend_dev_supports_op(cpu, r);
        p[9] = 2, p[0] = 0;   /* stride 0 */
        good = good && !ggml_backend_dev_supports_op(cpu, r);
        p[0] = 1, p[6] = 2;   /* dilation 2: not the shape the output has */
        good = good && !ggml_backend_dev_supports_op(cpu, r);
        p[6] = 1;
        good = good && ggml_backend_dev_supports_op(cpu, r);
    }
    ok(good, "conv_3d: nodes with 0 output channels, too many input channels, stride 0 or a dilation that does not "
             "give the output's shape are not supported; the constructor's node is");
    struct ggml_tensor *k1 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 2, 4), *x1 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 4);
    r = ggml_conv_transpose_1d(ctx, k1, x1, 2, 0, 1);
    good = r != NULL && ggml_backend_dev_supports_op(cpu, r);
    if (good) {
        ((int32_t *) r->op_params)[0] = 0;
        good = !ggml_backend_dev_supports_op(cpu, r);
        ((int32_t *) r->op_params)[0] = 2;
        r->src[1] = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 3);   /* 3 channels for a kernel of 4 */
        good = good && !ggml_backend_dev_supports_op(cpu, r);
    }
    ok(good, "conv_transpose_1d: stride 0 and an input of too few channels are not supported");
    struct ggml_tensor *k2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 4, 5), *x2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 6, 4, 2);
    r = ggml_conv_2d_direct(ctx, k2, x2, 1, 1, 0, 0, 1, 1);
    good = r != NULL && ggml_backend_dev_supports_op(cpu, r);
    if (good) {
        ((int32_t *) r->op_params)[4] = 0;   /* dilation 0 */
        good = !ggml_backend_dev_supports_op(cpu, r);
        ((int32_t *) r->op_params)[4] = 1;
        r->ne[2] = 6;   /* more output channels than the kernel has */
        good = good && !ggml_backend_dev_supports_op(cpu, r);
    }
    ok(good, "conv_2d_direct: dilation 0 and more output channels than the kernel's are not supported");
    is_int(tap_log_errors(), 0, "refusals of foreign nodes log nothing");
    ggml_free(ctx);
}

/* A transposed convolution of an empty input is zeros, made without walking
 * every kernel tap for every output element (2^34 steps here: the alarm
 * turns such a walk into a failure). */
static void test_conv_transpose_empty_input(void)
{
    struct ggml_init_params ip = { 4 * 1024 * 1024, NULL, false };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *a = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 4, 65536, 1, 1);
    struct ggml_tensor *b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 0, 65536, 1, 1);
    memset(a->data, 0x3c, ggml_nbytes(a)); /* F16 1.0 */
    struct ggml_tensor *r = ggml_conv_transpose_2d_p0(ctx, a, b, 3);
    if (ok(r != NULL && ggml_nelements(r) == 262141, "conv_transpose_2d_p0 of an empty input: 262141 outputs")) {
        memset(r->data, 0x7f, ggml_nbytes(r));
        struct ggml_cgraph *g = ggml_new_graph(ctx);
        ggml_build_forward_expand(g, r);
        alarm(30);
        enum ggml_status st = ggml_graph_compute_with_ctx(ctx, g, 2);
        alarm(0);
        bool zeros = true;
        for (int64_t i = 0; i < ggml_nelements(r); i++)
            zeros = zeros && ((const float *) r->data)[i] == 0.0f;
        ok(st == GGML_STATUS_SUCCESS && zeros, "... computes zeros");
    }
    is_int(tap_log_errors(), 0, "... without a message");
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    uint64_t seed = 0xc0a7d1ec;
    test_conv_transpose_1d(&seed);
    test_conv_transpose_2d(&seed);
    test_conv_2d_dw(&seed);
    test_conv_2d(&seed);
    test_conv_3d(&seed);
    test_dw_layout();
    test_conv_transpose_empty_input();
    test_foreign_nodes();
    test_errors();
    return tap_done();
}
