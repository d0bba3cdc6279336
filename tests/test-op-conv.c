/*
 * test-op-conv.c - IM2COL and the convolution helpers built on it
 * (ggml_conv_1d, _ph, _dw, _dw_ph, ggml_conv_2d, _sk_p0, _s1_ph, _dw)
 * against a direct double-precision evaluation from the stored inputs.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tap.h"
#include "op-test.h"

/* ------------------------------------------------------------ im2col */

/* dst element (i0, i1, i2, i3) of im2col, by the index formula. */
static double im2col_expected(const struct ggml_tensor *a, const struct ggml_tensor *b, bool is_2d,
                              const int p[6], int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    const int64_t KW = a->ne[0], KH = is_2d ? a->ne[1] : 1;
    const int64_t kw = i0 % KW, kh = (i0 / KW) % KH, c = i0 / (KW * KH);
    const int64_t x = i1 * p[0] + kw * p[4] - p[2];
    const int64_t y = is_2d ? i2 * p[1] + kh * p[5] - p[3] : 0;
    const int64_t IH = is_2d ? b->ne[1] : 1;
    if (x < 0 || x >= b->ne[0] || y < 0 || y >= IH)
        return 0.0;
    return is_2d ? optest_get(b, x, y, c, i3) : optest_get(b, x, c, i2, 0);
}

/* A view of a fresh tensor whose rows are wider than ne0, so it is not contiguous. */
static struct ggml_tensor *new_input(struct ggml_context *ctx, enum ggml_type type, const int64_t ne[4], bool strided,
                                     uint64_t *seed)
{
    struct ggml_tensor *t;
    if (strided) {
        struct ggml_tensor *base = ggml_new_tensor_4d(ctx, type, ne[0] + 3, ne[1], ne[2], ne[3]);
        optest_fill(base, seed, -1, 1);
        t = ggml_view_4d(ctx, base, ne[0], ne[1], ne[2], ne[3], base->nb[1], base->nb[2], base->nb[3], 0);
    } else {
        t = ggml_new_tensor(ctx, type, 4, ne);
        optest_fill(t, seed, -1, 1);
    }
    return t;
}

/*
 * NMSE thresholds.  F32 output copies stored values, so it is exact
 * (1e-12 allows nothing but zero in practice).  F16 output rounds each
 * value once (relative error <= 2^-11, NMSE <= ~2.4e-7): 1e-6.
 */
static void test_im2col(void)
{
    static const struct {
        bool is_2d;
        int64_t ka[4], nb[4];
        int p[6];                                    /* s0 s1 p0 p1 d0 d1 */
    } cases[] = {
        { false, { 3, 2, 5, 1 }, { 31, 2, 3, 1 }, { 1, 0, 0, 0, 1, 0 } },
        { false, { 5, 3, 1, 1 }, { 33, 3, 2, 1 }, { 2, 0, 3, 0, 2, 0 } },
        { false, { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 1, 0, 0, 0, 1, 0 } },
        { false, { 4, 1, 2, 1 }, { 257, 1, 1, 1 }, { 3, 0, 1, 0, 3, 0 } },
        { true, { 3, 3, 2, 4 }, { 9, 7, 2, 3 }, { 1, 1, 1, 1, 1, 1 } },
        { true, { 2, 3, 3, 1 }, { 31, 5, 3, 2 }, { 2, 1, 0, 2, 3, 1 } },
        { true, { 5, 1, 1, 1 }, { 33, 3, 1, 1 }, { 3, 2, 4, 1, 1, 2 } },
        { true, { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 1, 1, 0, 0, 1, 1 } },
    };
    static const enum ggml_type types[2] = { GGML_TYPE_F32, GGML_TYPE_F16 };
    uint64_t seed = 1234;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int ti = 0; ti < 2; ti++)
            for (int di = 0; di < 2; di++)
                for (int strided = 0; strided < 2; strided++) {
                    struct ggml_init_params ip = { 64 * 1024 * 1024, NULL, false };
                    struct ggml_context *ctx = ggml_init(ip);
                    const int *p = cases[ci].p;
                    struct ggml_tensor *a = ggml_new_tensor(ctx, GGML_TYPE_F16, 4, cases[ci].ka);
                    struct ggml_tensor *b = new_input(ctx, types[ti], cases[ci].nb, strided, &seed);
                    struct ggml_tensor *out = ggml_im2col(ctx, a, b, p[0], p[1], p[2], p[3], p[4], p[5],
                                                          cases[ci].is_2d, types[di]);
                    if (!ok(out != NULL && out->op == GGML_OP_IM2COL, "im2col case %zu builds", ci)) {
                        ggml_free(ctx);
                        continue;
                    }
                    double *ref = malloc((size_t) ggml_nelements(out) * sizeof *ref);
                    int64_t k = 0;
                    for (int64_t i3 = 0; i3 < out->ne[3]; i3++)
                        for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
                            for (int64_t i1 = 0; i1 < out->ne[1]; i1++)
                                for (int64_t i0 = 0; i0 < out->ne[0]; i0++)
                                    ref[k++] = im2col_expected(a, b, cases[ci].is_2d, p, i0, i1, i2, i3);
                    const double thr = types[di] == GGML_TYPE_F32 ? 1e-12 : 1e-6;
                    for (int nt = 1; nt <= 4; nt++)
                        for (int use_ref = 0; use_ref < 2; use_ref++) {
                            enum ggml_status st = optest_compute(ctx, out, nt, use_ref);
                            double nmse = optest_nmse(out, ref);
                            ok(st == GGML_STATUS_SUCCESS && nmse <= thr,
                               "im2col case %zu %s->%s%s threads %d ref %d (nmse %g)", ci,
                               ggml_type_name(types[ti]), ggml_type_name(types[di]), strided ? " strided" : "",
                               nt, use_ref, nmse);
                        }
                    free(ref);
                    ggml_free(ctx);
                }
}

/* ------------------------------------------------------ convolutions */

enum helper { CONV_1D, CONV_1D_PH, CONV_1D_DW, CONV_1D_DW_PH, CONV_2D, CONV_2D_SK_P0, CONV_2D_S1_PH, CONV_2D_DW };
static const char *const helper_names[] = {
    "conv_1d", "conv_1d_ph", "conv_1d_dw", "conv_1d_dw_ph", "conv_2d", "conv_2d_sk_p0", "conv_2d_s1_ph", "conv_2d_dw",
};

/*
 * Direct convolution of the stored values.  2-d: a [KW, KH, IC, OC] (depthwise: [KW, KH, 1, C]),
 * b [W, H, IC, N], out [OW, OH, OC, N].  1-d: a [K, IC, OC] (depthwise [K, 1, C]), b [L, IC, N],
 * out [OL, OC, N]; handled as 2-d with H = KH = 1.
 */
static double *reference_conv(const struct ggml_tensor *a, const struct ggml_tensor *b,
                              const struct ggml_tensor *out, bool is_2d, bool depthwise, const int p[6])
{
    double *ref = malloc((size_t) ggml_nelements(out) * sizeof *ref);
    const int64_t OW = out->ne[0], OH = is_2d ? out->ne[1] : 1;
    const int64_t OC = is_2d ? out->ne[2] : out->ne[1], N = is_2d ? out->ne[3] : out->ne[2];
    const int64_t KW = a->ne[0], KH = is_2d ? a->ne[1] : 1;
    const int64_t IC = depthwise ? 1 : (is_2d ? a->ne[2] : a->ne[1]);
    const int64_t W = b->ne[0], H = is_2d ? b->ne[1] : 1;
    /* ggml_conv_1d (as upstream composes it) stores its product as [OL, N, OC] under
       the shape [OL, OC, N]: the reference follows that memory order */
    const bool batch_inner = !is_2d && !depthwise;
    int64_t k = 0;
    for (int64_t outer = 0; outer < (batch_inner ? OC : N); outer++)
        for (int64_t inner = 0; inner < (batch_inner ? N : OC); inner++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    const int64_t n = batch_inner ? inner : outer, oc = batch_inner ? outer : inner;
                    double sum = 0;
                    for (int64_t ic = 0; ic < IC; ic++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                const int64_t x = ow * p[0] + kw * p[4] - p[2];
                                const int64_t y = oh * p[1] + kh * p[5] - p[3];
                                if (x < 0 || x >= W || y < 0 || y >= H)
                                    continue;
                                const int64_t c = depthwise ? oc : ic;
                                double av = is_2d ? optest_get(a, kw, kh, depthwise ? 0 : ic, oc)
                                                  : optest_get(a, kw, depthwise ? 0 : ic, oc, 0);
                                double bv = is_2d ? optest_get(b, x, y, c, n) : optest_get(b, x, c, n, 0);
                                sum += av * bv;
                            }
                    ref[k++] = sum;
                }
    return ref;
}

static struct ggml_tensor *make_helper(struct ggml_context *ctx, enum helper h, struct ggml_tensor *a,
                                       struct ggml_tensor *b, const int p[6])
{
    switch (h) {
    case CONV_1D:       return ggml_conv_1d(ctx, a, b, p[0], p[2], p[4]);
    case CONV_1D_PH:    return ggml_conv_1d_ph(ctx, a, b, p[0], p[4]);
    case CONV_1D_DW:    return ggml_conv_1d_dw(ctx, a, b, p[0], p[2], p[4]);
    case CONV_1D_DW_PH: return ggml_conv_1d_dw_ph(ctx, a, b, p[0], p[4]);
    case CONV_2D:       return ggml_conv_2d(ctx, a, b, p[0], p[1], p[2], p[3], p[4], p[5]);
    case CONV_2D_SK_P0: return ggml_conv_2d_sk_p0(ctx, a, b);
    case CONV_2D_S1_PH: return ggml_conv_2d_s1_ph(ctx, a, b);
    default:            return ggml_conv_2d_dw(ctx, a, b, p[0], p[1], p[2], p[3], p[4], p[5]);
    }
}

/* The parameters each helper really uses (for the reference). */
static void effective_params(enum helper h, const struct ggml_tensor *a, const int in[6], int out[6])
{
    for (int i = 0; i < 6; i++)
        out[i] = in[i];
    switch (h) {
    case CONV_1D_PH: case CONV_1D_DW_PH: out[2] = (int) (a->ne[0] / 2); break;
    case CONV_2D_SK_P0:
        out[0] = (int) a->ne[0]; out[1] = (int) a->ne[1]; out[2] = out[3] = 0; out[4] = out[5] = 1; break;
    case CONV_2D_S1_PH:
        out[0] = out[1] = 1; out[2] = (int) (a->ne[0] / 2); out[3] = (int) (a->ne[1] / 2); out[4] = out[5] = 1; break;
    default: break;
    }
}

/*
 * NMSE threshold 1e-5: the helpers round the unfolded input to F16 (and
 * F16 kernels are rounded on storage, which the reference sees), so each
 * product carries a relative error up to ~2^-11; sums of a few dozen
 * such terms stay well under 1e-5 in NMSE while a wrong index gives ~1.
 */
static void test_helpers(void)
{
    static const struct {
        enum helper h;
        int64_t ka[4], nb[4];
        int p[6];
    } cases[] = {
        { CONV_1D, { 3, 2, 5, 1 }, { 31, 2, 3, 1 }, { 1, 0, 1, 0, 1, 0 } },
        { CONV_1D, { 5, 3, 2, 1 }, { 33, 3, 1, 1 }, { 2, 0, 3, 0, 2, 0 } },
        { CONV_1D, { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 1, 0, 0, 0, 1, 0 } },
        { CONV_1D_PH, { 3, 4, 3, 1 }, { 17, 4, 2, 1 }, { 1, 0, 0, 0, 1, 0 } },
        { CONV_1D_PH, { 4, 1, 2, 1 }, { 257, 1, 1, 1 }, { 3, 0, 0, 0, 2, 0 } },
        { CONV_1D_DW, { 3, 1, 5, 1 }, { 31, 5, 1, 1 }, { 1, 0, 1, 0, 1, 0 } },
        { CONV_1D_DW, { 5, 1, 3, 1 }, { 33, 3, 1, 1 }, { 2, 0, 2, 0, 3, 0 } },
        { CONV_1D_DW_PH, { 3, 1, 4, 1 }, { 13, 4, 1, 1 }, { 1, 0, 0, 0, 1, 0 } },
        { CONV_2D, { 3, 3, 2, 4 }, { 9, 7, 2, 3 }, { 1, 1, 1, 1, 1, 1 } },
        { CONV_2D, { 2, 3, 3, 2 }, { 31, 5, 3, 2 }, { 2, 1, 0, 2, 3, 1 } },
        { CONV_2D, { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 1, 1, 0, 0, 1, 1 } },
        { CONV_2D_SK_P0, { 2, 2, 3, 5 }, { 8, 7, 3, 2 }, { 0 } },
        { CONV_2D_S1_PH, { 3, 5, 2, 3 }, { 11, 9, 2, 1 }, { 0 } },
        { CONV_2D_DW, { 3, 3, 1, 4 }, { 10, 9, 4, 2 }, { 1, 1, 1, 1, 1, 1 } },
        { CONV_2D_DW, { 2, 3, 1, 3 }, { 33, 6, 3, 1 }, { 2, 2, 1, 0, 2, 1 } },
    };
    static const enum ggml_type types[2] = { GGML_TYPE_F32, GGML_TYPE_F16 };
    uint64_t seed = 99;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int ti = 0; ti < 2; ti++) {
            const enum helper h = cases[ci].h;
            struct ggml_init_params ip = { 64 * 1024 * 1024, NULL, false };
            struct ggml_context *ctx = ggml_init(ip);
            struct ggml_tensor *a = ggml_new_tensor(ctx, types[ti], 4, cases[ci].ka);
            optest_fill(a, &seed, -1, 1);
            struct ggml_tensor *b = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, cases[ci].nb);
            optest_fill(b, &seed, -1, 1);
            struct ggml_tensor *out = make_helper(ctx, h, a, b, cases[ci].p);
            if (!ok(out != NULL, "%s case %zu %s builds", helper_names[h], ci, ggml_type_name(types[ti]))) {
                ggml_free(ctx);
                continue;
            }
            if (h == CONV_2D_DW && types[ti] == GGML_TYPE_F32) {
                /* as upstream: an F32 kernel times the F16 unfolded input is a MUL_MAT
                   the CPU backend does not take (src1 must be F32 or src0's dot type) */
                ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
                struct ggml_tensor *prod = out->src[0];
                ok(prod != NULL && prod->op == GGML_OP_MUL_MAT && !ggml_backend_dev_supports_op(cpu, prod),
                   "%s case %zu: CPU refuses the F32 x F16 product", helper_names[h], ci);
                ggml_free(ctx);
                continue;
            }
            int p[6];
            effective_params(h, a, cases[ci].p, p);
            const bool is_2d = h >= CONV_2D;
            const bool dw = h == CONV_1D_DW || h == CONV_1D_DW_PH || h == CONV_2D_DW;
            double *ref = reference_conv(a, b, out, is_2d, dw, p);
            for (int nt = 1; nt <= 4; nt++)
                for (int use_ref = 0; use_ref < 2; use_ref++) {
                    enum ggml_status st = optest_compute(ctx, out, nt, use_ref);
                    double nmse = optest_nmse(out, ref);
                    ok(st == GGML_STATUS_SUCCESS && nmse <= 1e-5, "%s case %zu kernel %s threads %d ref %d (nmse %g)",
                       helper_names[h], ci, ggml_type_name(types[ti]), nt, use_ref, nmse);
                }
            free(ref);
            ggml_free(ctx);
        }
}

/* ------------------------------------------------------------ errors */

static void test_errors(void)
{
    struct ggml_init_params ip = { 16 * 1024 * 1024, NULL, false };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *k1 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 2, 4);     /* [K, IC, OC] */
    struct ggml_tensor *x1 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 10, 2, 1);
    struct ggml_tensor *x1_bad = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 10, 3, 1);
    struct ggml_tensor *x1_4d = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 10, 2, 1, 2);
    struct ggml_tensor *k2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 2, 4);  /* [KW, KH, IC, OC] */
    struct ggml_tensor *x2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 8, 2, 1);
    struct ggml_tensor *x2_bad = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 8, 3, 1);
    struct ggml_tensor *x2_small = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 2, 2, 1);
    tap_log_errors();

    ok(ggml_im2col(ctx, k1, x1_bad, 1, 0, 0, 0, 1, 0, false, GGML_TYPE_F32) == NULL, "im2col 1-d: channel mismatch");
    logged_one_error("im2col 1-d channel mismatch logs one error");
    ok(ggml_im2col(ctx, k1, x1_4d, 1, 0, 0, 0, 1, 0, false, GGML_TYPE_F32) == NULL, "im2col 1-d: ne[3] != 1");
    logged_one_error("im2col 1-d ne[3] logs one error");
    ok(ggml_im2col(ctx, k2, x2_bad, 1, 1, 0, 0, 1, 1, true, GGML_TYPE_F32) == NULL, "im2col 2-d: channel mismatch");
    logged_one_error("im2col 2-d channel mismatch logs one error");
    ok(ggml_im2col(ctx, k2, x2_small, 1, 1, 0, 0, 1, 1, true, GGML_TYPE_F32) == NULL, "im2col 2-d: input too small");
    logged_one_error("im2col too small logs one error");
    ok(ggml_im2col(ctx, k1, x1, 1, 0, 0, 0, 5, 0, false, GGML_TYPE_F16) == NULL, "im2col 1-d: dilated kernel too wide");
    logged_one_error("im2col too wide logs one error");
    ok(ggml_im2col(ctx, k1, x1, 0, 0, 0, 0, 1, 0, false, GGML_TYPE_F32) == NULL, "im2col: zero stride");
    logged_one_error("im2col zero stride logs one error");
    ok(ggml_im2col(ctx, k2, x2, 1, 1, 0, 0, 1, 0, true, GGML_TYPE_F32) == NULL, "im2col 2-d: zero dilation");
    logged_one_error("im2col zero dilation logs one error");

    struct ggml_tensor *r = ggml_im2col(ctx, k2, x2, 2, 1, 1, 0, 1, 2, true, GGML_TYPE_F16);
    const int32_t *op = r ? (const int32_t *) r->op_params : NULL;
    ok(r && r->type == GGML_TYPE_F16 && r->ne[0] == 18 && r->ne[1] == 4 && r->ne[2] == 4 && r->ne[3] == 1 &&
       op[0] == 2 && op[1] == 1 && op[2] == 1 && op[3] == 0 && op[4] == 1 && op[5] == 2 && op[6] == 1 &&
       r->src[0] == k2 && r->src[1] == x2, "im2col shape and op_params");

    ok(ggml_conv_1d(ctx, k1, x1_bad, 1, 0, 1) == NULL, "conv_1d: channel mismatch");
    logged_one_error("conv_1d channel mismatch logs one error");
    ok(ggml_conv_2d(ctx, k2, x2_bad, 1, 1, 0, 0, 1, 1) == NULL, "conv_2d: channel mismatch");
    logged_one_error("conv_2d channel mismatch logs one error");
    ok(ggml_conv_2d_sk_p0(ctx, k2, x2_bad) == NULL, "conv_2d_sk_p0: channel mismatch");
    logged_one_error("conv_2d_sk_p0 logs one error");
    ok(ggml_conv_2d_s1_ph(ctx, k2, x2_bad) == NULL, "conv_2d_s1_ph: channel mismatch");
    logged_one_error("conv_2d_s1_ph logs one error");
    ok(ggml_conv_1d_ph(ctx, k1, x1, 0, 1) == NULL, "conv_1d_ph: zero stride");
    logged_one_error("conv_1d_ph logs one error");
    struct ggml_tensor *kdw = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 1, 2);
    ok(ggml_conv_1d_dw(ctx, kdw, x1, 1, 0, 20) == NULL, "conv_1d_dw: kernel too wide");
    logged_one_error("conv_1d_dw logs one error");
    ok(ggml_conv_1d_dw_ph(ctx, kdw, x1, 0, 1) == NULL, "conv_1d_dw_ph: zero stride");
    logged_one_error("conv_1d_dw_ph logs one error");
    ok(ggml_conv_2d_dw(ctx, k2, x2_small, 1, 1, 0, 0, 1, 1) == NULL, "conv_2d_dw: input too small");
    logged_one_error("conv_2d_dw logs one error");

    ok(ggml_im2col(ctx, NULL, x1, 1, 0, 0, 0, 1, 0, false, GGML_TYPE_F32) == NULL &&
       ggml_im2col(ctx, k1, NULL, 1, 0, 0, 0, 1, 0, false, GGML_TYPE_F32) == NULL &&
       ggml_conv_1d(ctx, NULL, x1, 1, 0, 1) == NULL && ggml_conv_1d(ctx, k1, NULL, 1, 0, 1) == NULL &&
       ggml_conv_1d_ph(ctx, NULL, x1, 1, 1) == NULL && ggml_conv_1d_ph(ctx, k1, NULL, 1, 1) == NULL &&
       ggml_conv_1d_dw(ctx, NULL, x1, 1, 0, 1) == NULL && ggml_conv_1d_dw(ctx, kdw, NULL, 1, 0, 1) == NULL &&
       ggml_conv_1d_dw_ph(ctx, NULL, x1, 1, 1) == NULL && ggml_conv_1d_dw_ph(ctx, kdw, NULL, 1, 1) == NULL &&
       ggml_conv_2d(ctx, NULL, x2, 1, 1, 0, 0, 1, 1) == NULL && ggml_conv_2d(ctx, k2, NULL, 1, 1, 0, 0, 1, 1) == NULL &&
       ggml_conv_2d_sk_p0(ctx, NULL, x2) == NULL && ggml_conv_2d_sk_p0(ctx, k2, NULL) == NULL &&
       ggml_conv_2d_s1_ph(ctx, NULL, x2) == NULL && ggml_conv_2d_s1_ph(ctx, k2, NULL) == NULL &&
       ggml_conv_2d_dw(ctx, NULL, x2, 1, 1, 0, 0, 1, 1) == NULL &&
       ggml_conv_2d_dw(ctx, k2, NULL, 1, 1, 0, 0, 1, 1) == NULL,
       "NULL inputs give NULL");
    ok(tap_log_errors() == 0, "NULL inputs log nothing");

    /* the CPU device refuses im2col into a type the kernel cannot write */
    struct ggml_tensor *q = ggml_im2col(ctx, k1, x1, 1, 0, 0, 0, 1, 0, false, GGML_TYPE_I32);
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    ok(q != NULL && cpu != NULL && !ggml_backend_dev_supports_op(cpu, q), "CPU refuses im2col to I32");
    tap_log_errors();
    ggml_free(ctx);
}

/* ------------------------------------------------------- 3-d variants */

/*
 * im2col_3d against the index formula (thresholds as for im2col: exact in
 * F32, 1e-6 for one F16 rounding) and conv_3d against a direct 3-d
 * convolution (1e-5: the F16 kernel case rounds the unfolded input; the
 * F32 case is exact up to summation order).
 */
static void test_3d(void)
{
    static const struct {
        int64_t ka[4], nb[4], ic;
        int p[9];                                    /* s0 s1 s2 p0 p1 p2 d0 d1 d2 */
    } cases[] = {
        { { 3, 2, 2, 6 }, { 7, 5, 4, 4 }, 2, { 1, 1, 1, 1, 0, 1, 1, 1, 1 } },
        { { 2, 3, 1, 3 }, { 9, 8, 3, 3 }, 3, { 2, 1, 1, 0, 2, 0, 3, 2, 1 } },
        { { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, 1, { 1, 1, 1, 0, 0, 0, 1, 1, 1 } },
        { { 2, 2, 2, 2 }, { 5, 4, 6, 2 }, 1, { 1, 2, 2, 1, 1, 1, 2, 1, 2 } },
        /* IC 2 does not divide 5 input channels: 2 batches, channel 4 not read (as in ggml) */
        { { 2, 2, 1, 3 }, { 5, 4, 3, 5 }, 2, { 1, 1, 1, 0, 0, 0, 1, 1, 1 } },
        /* rows dilated past the padded input by 4 < the stride 5: one output row (C's division) */
        { { 3, 3, 1, 2 }, { 6, 1, 2, 2 }, 1, { 2, 5, 1, 1, 2, 0, 1, 4, 1 } },
    };
    static const enum ggml_type types[2] = { GGML_TYPE_F32, GGML_TYPE_F16 };
    uint64_t seed = 7;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int ti = 0; ti < 2; ti++)
            for (int strided = 0; strided < 2; strided++) {
                struct ggml_init_params ip = { 64 * 1024 * 1024, NULL, false };
                struct ggml_context *ctx = ggml_init(ip);
                const int *p = cases[ci].p;
                const int64_t IC = cases[ci].ic;
                struct ggml_tensor *a = ggml_new_tensor(ctx, types[ti], 4, cases[ci].ka);
                optest_fill(a, &seed, -1, 1);
                struct ggml_tensor *b = new_input(ctx, types[ti], cases[ci].nb, strided, &seed);
                struct ggml_tensor *cols = ggml_im2col_3d(ctx, a, b, IC, p[0], p[1], p[2], p[3], p[4], p[5],
                                                          p[6], p[7], p[8], types[ti]);
                if (!ok(cols != NULL && cols->op == GGML_OP_IM2COL_3D, "im2col_3d case %zu builds", ci)) {
                    ggml_free(ctx);
                    continue;
                }
                const int64_t KW = a->ne[0], KH = a->ne[1], KD = a->ne[2];
                const int64_t N = b->ne[3] / IC, OW = cols->ne[1], OH = cols->ne[2], OD = cols->ne[3] / N;
                double *ref = malloc((size_t) ggml_nelements(cols) * sizeof *ref);
                int64_t k = 0;
                for (int64_t i3 = 0; i3 < cols->ne[3]; i3++)
                    for (int64_t oh = 0; oh < OH; oh++)
                        for (int64_t ow = 0; ow < OW; ow++)
                            for (int64_t i0 = 0; i0 < cols->ne[0]; i0++) {
                                const int64_t kw = i0 % KW, kh = (i0 / KW) % KH, kd = (i0 / (KW * KH)) % KD;
                                const int64_t c = i0 / (KW * KH * KD), od = i3 % OD, n = i3 / OD;
                                const int64_t x = ow * p[0] + kw * p[6] - p[3];
                                const int64_t y = oh * p[1] + kh * p[7] - p[4];
                                const int64_t z = od * p[2] + kd * p[8] - p[5];
                                ref[k++] = x < 0 || x >= b->ne[0] || y < 0 || y >= b->ne[1] || z < 0 || z >= b->ne[2]
                                               ? 0.0 : optest_get(b, x, y, z, n * IC + c);
                            }
                for (int nt = 1; nt <= 4; nt++)
                    for (int use_ref = 0; use_ref < 2; use_ref++) {
                        enum ggml_status st = optest_compute(ctx, cols, nt, use_ref);
                        double nmse = optest_nmse(cols, ref);
                        ok(st == GGML_STATUS_SUCCESS && nmse <= 1e-12, "im2col_3d case %zu %s%s threads %d ref %d (nmse %g)",
                           ci, ggml_type_name(types[ti]), strided ? " strided" : "", nt, use_ref, nmse);
                    }
                free(ref);

                /* conv_3d needs contiguous inputs (it reshapes) and whole batches of IC channels */
                if (b->ne[3] % IC != 0 || a->ne[3] % IC != 0) {
                    tap_log_errors();
                    ok(ggml_conv_3d(ctx, a, b, IC, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]) == NULL &&
                           tap_log_errors() == 1,
                       "conv_3d case %zu: IC does not divide the channels: refused with one error", ci);
                    ggml_free(ctx);
                    continue;
                }
                struct ggml_tensor *bc = ggml_cont(ctx, b);
                struct ggml_tensor *out = ggml_conv_3d(ctx, a, bc, IC, p[0], p[1], p[2], p[3], p[4], p[5],
                                                       p[6], p[7], p[8]);
                if (!ok(out != NULL && out->ne[0] == OW && out->ne[1] == OH && out->ne[2] == OD &&
                        out->ne[3] == (a->ne[3] / IC) * N, "conv_3d case %zu builds", ci)) {
                    ggml_free(ctx);
                    continue;
                }
                const int64_t OC = a->ne[3] / IC;
                ref = malloc((size_t) ggml_nelements(out) * sizeof *ref);
                k = 0;
                for (int64_t i3 = 0; i3 < OC * N; i3++)
                    for (int64_t od = 0; od < OD; od++)
                        for (int64_t oh = 0; oh < OH; oh++)
                            for (int64_t ow = 0; ow < OW; ow++) {
                                const int64_t oc = i3 % OC, n = i3 / OC;
                                double sum = 0;
                                for (int64_t c = 0; c < IC; c++)
                                    for (int64_t kd = 0; kd < KD; kd++)
                                        for (int64_t kh = 0; kh < KH; kh++)
                                            for (int64_t kw = 0; kw < KW; kw++) {
                                                const int64_t x = ow * p[0] + kw * p[6] - p[3];
                                                const int64_t y = oh * p[1] + kh * p[7] - p[4];
                                                const int64_t z = od * p[2] + kd * p[8] - p[5];
                                                if (x < 0 || x >= b->ne[0] || y < 0 || y >= b->ne[1] || z < 0 ||
                                                    z >= b->ne[2])
                                                    continue;
                                                sum += optest_get(a, kw, kh, kd, oc * IC + c) *
                                                       optest_get(b, x, y, z, n * IC + c);
                                            }
                                ref[k++] = sum;
                            }
                for (int nt = 1; nt <= 4; nt++)
                    for (int use_ref = 0; use_ref < 2; use_ref++) {
                        enum ggml_status st = optest_compute(ctx, out, nt, use_ref);
                        double nmse = optest_nmse(out, ref);
                        ok(st == GGML_STATUS_SUCCESS && nmse <= 1e-5, "conv_3d case %zu %s%s threads %d ref %d (nmse %g)",
                           ci, ggml_type_name(types[ti]), strided ? " strided" : "", nt, use_ref, nmse);
                    }
                free(ref);
                ggml_free(ctx);
            }

    struct ggml_init_params ip = { 16 * 1024 * 1024, NULL, false };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 2, 2, 6);
    struct ggml_tensor *b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 5, 5, 4);
    tap_log_errors();
    ok(ggml_im2col_3d(ctx, a, b, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, GGML_TYPE_F32) == NULL, "im2col_3d: IC 0");
    logged_one_error("im2col_3d IC 0 logs one error");
    ok(ggml_im2col_3d(ctx, a, b, 2, 1, 0, 1, 0, 0, 0, 1, 1, 1, GGML_TYPE_F32) == NULL, "im2col_3d: zero stride");
    logged_one_error("im2col_3d zero stride logs one error");
    ok(ggml_im2col_3d(ctx, a, b, 2, 1, 1, 1, 0, 0, 0, 1, 1, 9, GGML_TYPE_F32) == NULL, "im2col_3d: too small");
    logged_one_error("im2col_3d too small logs one error");
    {
        /* an input of no batches: an empty result, and a graph that computes */
        struct ggml_tensor *none = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 5, 5, 0);
        struct ggml_tensor *cols = ggml_im2col_3d(ctx, a, none, 2, 1, 1, 1, 0, 0, 0, 1, 1, 1, GGML_TYPE_F32);
        ok(cols != NULL && ggml_is_empty(cols), "im2col_3d of an input of no batches is empty");
        if (cols != NULL) {
            ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
            ok(cpu != NULL && ggml_backend_dev_supports_op(cpu, cols), "... the CPU device supports it");
            struct ggml_cgraph *g = ggml_new_graph(ctx);
            ggml_build_forward_expand(g, cols);
            is_int(ggml_graph_compute_with_ctx(ctx, g, 2), GGML_STATUS_SUCCESS, "... and computes");
        }
        is_int(tap_log_errors(), 0, "... without a message");
    }
    ok(ggml_conv_3d(ctx, a, b, 3, 1, 1, 1, 0, 0, 0, 1, 1, 1) == NULL, "conv_3d: IC does not divide");
    logged_one_error("conv_3d logs one error");

    /* Extents near the int64_t range (metadata only): refused, not overflowed. */
    struct ggml_init_params meta = { 1024 * 1024, NULL, true };
    struct ggml_context *mctx = ggml_init(meta);
    const int64_t big = INT64_C(1) << 20;
    struct ggml_tensor *ka = ggml_new_tensor_4d(mctx, GGML_TYPE_F32, big, big, big, 0);
    struct ggml_tensor *xb = ggml_new_tensor_4d(mctx, GGML_TYPE_F32, big, big, big, 0);
    tap_log_errors();
    ok(ggml_im2col_3d(mctx, ka, xb, INT64_C(1) << 30, 1, 1, 1, 0, 0, 0, 1, 1, 1, GGML_TYPE_F32) == NULL,
       "im2col_3d: columns of 2^90 elements are refused");
    logged_one_error("im2col_3d with too many columns logs one error");
    struct ggml_tensor *wide = ggml_new_tensor_2d(mctx, GGML_TYPE_F32, INT64_C(1) << 40, 1);
    struct ggml_tensor *row = ggml_new_tensor_2d(mctx, GGML_TYPE_F32, 8, 1);
    tap_log_errors();
    ok(ggml_im2col(mctx, wide, row, 1, 0, 0, 0, INT32_MAX, 0, false, GGML_TYPE_F32) == NULL,
       "im2col: a dilated kernel span beyond int64_t is refused");
    logged_one_error("im2col with an overflowing kernel span logs one error");
    ggml_free(mctx);
    struct ggml_tensor *r = ggml_im2col_3d(ctx, a, b, 2, 1, 2, 1, 1, 0, 1, 1, 1, 2, GGML_TYPE_F16);
    const int32_t *op = r ? (const int32_t *) r->op_params : NULL;
    ok(r && r->type == GGML_TYPE_F16 && r->ne[0] == 16 && r->ne[1] == 6 && r->ne[2] == 2 && r->ne[3] == 10 &&
       op[0] == 1 && op[1] == 2 && op[2] == 1 && op[3] == 1 && op[4] == 0 && op[5] == 1 && op[6] == 1 &&
       op[7] == 1 && op[8] == 2 && op[9] == 2, "im2col_3d shape and op_params");
    ok(ggml_im2col_3d(ctx, NULL, b, 2, 1, 1, 1, 0, 0, 0, 1, 1, 1, GGML_TYPE_F32) == NULL &&
       ggml_im2col_3d(ctx, a, NULL, 2, 1, 1, 1, 0, 0, 0, 1, 1, 1, GGML_TYPE_F32) == NULL &&
       ggml_conv_3d(ctx, NULL, b, 2, 1, 1, 1, 0, 0, 0, 1, 1, 1) == NULL &&
       ggml_conv_3d(ctx, a, NULL, 2, 1, 1, 1, 0, 0, 0, 1, 1, 1) == NULL, "3-d: NULL inputs give NULL");
    ok(tap_log_errors() == 0, "3-d: NULL inputs log nothing");
    ggml_free(ctx);
}

/* ---------------------------------------------------------- col2im_1d */

/*
 * col2im_1d against a scatter-add in double.  NMSE thresholds: F32 sums
 * a few floats (relative error ~1e-7): 1e-10; F16 rounds the result once
 * (2^-11): 1e-6; BF16 rounds once (2^-8, NMSE up to ~1.5e-5): 1e-4.
 */
static void test_col2im_1d(void)
{
    static const struct { int64_t K, OC, T_in; int s0, p0; } cases[] = {
        { 4, 3, 7, 2, 1 }, { 3, 1, 1, 1, 0 }, { 1, 1, 1, 1, 0 }, { 5, 2, 33, 3, 2 }, { 16, 4, 31, 8, 4 },
        { 2, 5, 257, 2, 0 }, { 3, 2, 9, 5, 0 },
    };
    static const enum ggml_type types[3] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    uint64_t seed = 31;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int ti = 0; ti < 3; ti++)
            for (int strided = 0; strided < 2; strided++) {
                struct ggml_init_params ip = { 16 * 1024 * 1024, NULL, false };
                struct ggml_context *ctx = ggml_init(ip);
                const int64_t K = cases[ci].K, OC = cases[ci].OC, T_in = cases[ci].T_in;
                const int64_t ne[4] = { K * OC, T_in, 1, 1 };
                struct ggml_tensor *col = new_input(ctx, types[ti], ne, strided, &seed);
                struct ggml_tensor *out = ggml_col2im_1d(ctx, col, cases[ci].s0, (int) OC, cases[ci].p0);
                const int64_t T_out = (T_in - 1) * cases[ci].s0 + K - 2 * cases[ci].p0;
                if (!ok(out != NULL && out->type == types[ti] && out->ne[0] == T_out && out->ne[1] == OC &&
                        out->op == GGML_OP_COL2IM_1D, "col2im_1d case %zu builds", ci)) {
                    ggml_free(ctx);
                    continue;
                }
                double *ref = calloc((size_t) (T_out * OC), sizeof *ref);
                for (int64_t ti2 = 0; ti2 < T_in; ti2++)
                    for (int64_t oc = 0; oc < OC; oc++)
                        for (int64_t k = 0; k < K; k++) {
                            const int64_t t = ti2 * cases[ci].s0 + k - cases[ci].p0;
                            if (t >= 0 && t < T_out)
                                ref[oc * T_out + t] += optest_get(col, oc * K + k, ti2, 0, 0);
                        }
                const double thr = types[ti] == GGML_TYPE_F32 ? 1e-10 : types[ti] == GGML_TYPE_F16 ? 1e-6 : 1e-4;
                for (int nt = 1; nt <= 4; nt++)
                    for (int use_ref = 0; use_ref < 2; use_ref++) {
                        enum ggml_status st = optest_compute(ctx, out, nt, use_ref);
                        double nmse = optest_nmse(out, ref);
                        ok(st == GGML_STATUS_SUCCESS && nmse <= thr, "col2im_1d case %zu %s%s threads %d ref %d (nmse %g)",
                           ci, ggml_type_name(types[ti]), strided ? " strided" : "", nt, use_ref, nmse);
                    }
                free(ref);
                ggml_free(ctx);
            }

    struct ggml_init_params ip = { 16 * 1024 * 1024, NULL, false };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *col = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 12, 5);
    struct ggml_tensor *col3 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 12, 5, 2);
    tap_log_errors();
    ok(ggml_col2im_1d(ctx, col, 2, 5, 0) == NULL, "col2im_1d: oc does not divide");
    logged_one_error("col2im_1d oc logs one error");
    ok(ggml_col2im_1d(ctx, col, 0, 3, 0) == NULL, "col2im_1d: zero stride");
    logged_one_error("col2im_1d stride logs one error");
    ok(ggml_col2im_1d(ctx, col, 2, 0, 0) == NULL, "col2im_1d: zero channels");
    logged_one_error("col2im_1d channels logs one error");
    ok(ggml_col2im_1d(ctx, col, 2, 3, -1) == NULL, "col2im_1d: negative padding");
    logged_one_error("col2im_1d negative padding logs one error");
    ok(ggml_col2im_1d(ctx, col, 1, 3, 5) == NULL, "col2im_1d: padding eats the output");
    logged_one_error("col2im_1d padding logs one error");
    ok(ggml_col2im_1d(ctx, col3, 2, 3, 0) == NULL, "col2im_1d: 3-d columns");
    logged_one_error("col2im_1d 3-d logs one error");
    struct ggml_tensor *r = ggml_col2im_1d(ctx, col, 3, 4, 1);
    const int32_t *op = r ? (const int32_t *) r->op_params : NULL;
    ok(r && r->ne[0] == 13 && r->ne[1] == 4 && op[0] == 3 && op[1] == 4 && op[2] == 1 && r->src[0] == col,
       "col2im_1d shape and op_params");
    ok(ggml_col2im_1d(ctx, NULL, 2, 3, 0) == NULL && tap_log_errors() == 0, "col2im_1d: NULL gives NULL silently");
    ggml_free(ctx);
}

/* The composite convolutions (the helpers and conv_3d) in a context that
 * fills up at each of their steps in turn: a refusal logs exactly one
 * message, a result none. */
static void composite_operands(struct ggml_context *ctx, int op, struct ggml_tensor **k, struct ggml_tensor **x)
{
    if (op == CONV_1D || op == CONV_1D_PH || op == CONV_1D_DW || op == CONV_1D_DW_PH) {
        *k = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, op == CONV_1D_DW || op == CONV_1D_DW_PH ? 1 : 2, 2);
        *x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 10, 2, 1);
    } else if (op == CONV_2D || op == CONV_2D_SK_P0 || op == CONV_2D_S1_PH || op == CONV_2D_DW) {
        *k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, op == CONV_2D_DW ? 1 : 2, 2);
        *x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 8, 2, 1);
    } else {
        *k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 2, 2, 4);
        *x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 5, 5, 2);
    }
}

static struct ggml_tensor *composite(struct ggml_context *ctx, int op, struct ggml_tensor *k, struct ggml_tensor *x)
{
    switch (op) {
    case CONV_1D: return ggml_conv_1d(ctx, k, x, 1, 1, 1);
    case CONV_1D_PH: return ggml_conv_1d_ph(ctx, k, x, 1, 1);
    case CONV_1D_DW: return ggml_conv_1d_dw(ctx, k, x, 1, 1, 1);
    case CONV_1D_DW_PH: return ggml_conv_1d_dw_ph(ctx, k, x, 1, 1);
    case CONV_2D: return ggml_conv_2d(ctx, k, x, 1, 1, 1, 1, 1, 1);
    case CONV_2D_SK_P0: return ggml_conv_2d_sk_p0(ctx, k, x);
    case CONV_2D_S1_PH: return ggml_conv_2d_s1_ph(ctx, k, x);
    case CONV_2D_DW: return ggml_conv_2d_dw(ctx, k, x, 1, 1, 1, 1, 1, 1);
    default: return ggml_conv_3d(ctx, k, x, 2, 1, 1, 1, 0, 0, 0, 1, 1, 1);
    }
}

static void test_full_context(void)
{
    const int n_helpers = (int) (sizeof helper_names / sizeof helper_names[0]);
    for (int op = 0; op <= n_helpers; op++) {
        int bad = -1, bad_errors = 0;
        bool built = false;
        for (size_t room = 0; room <= 24 && !built; room++) {
            struct ggml_init_params params = { (2 + room) * ggml_tensor_overhead(), NULL, true };
            struct ggml_context *ctx = ggml_init(params);
            struct ggml_tensor *k, *x;
            composite_operands(ctx, op, &k, &x);
            tap_log_errors();
            struct ggml_tensor *r = composite(ctx, op, k, x);
            int errors = tap_log_errors();
            built = r != NULL;
            if (bad < 0 && errors != (built ? 0 : 1)) {
                bad = (int) room;
                bad_errors = errors;
            }
            ggml_free(ctx);
        }
        ok(built && bad < 0, "%s in a context that fills at each step: one error per refusal (room %d: %d errors)",
           op < n_helpers ? helper_names[op] : "conv_3d", bad, bad_errors);
    }
}

int main(void)
{
    tap_capture_log();
    test_im2col();
    test_helpers();
    test_errors();
    test_3d();
    test_col2im_1d();
    test_full_context();
    return tap_done();
}
