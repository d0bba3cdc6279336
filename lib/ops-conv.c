/*
 * ops-conv.c - constructors of IM2COL, IM2COL_3D and COL2IM_1D, and of the
 * convolution helpers built on the unfoldings (ggml_conv_1d, ggml_conv_2d,
 * ggml_conv_3d and their variants).
 *
 * ggml_im2col unfolds the receptive fields of an input into rows: every
 * output position (ow, oh, batch) gets one row holding the input samples
 * under the kernel window, channel-major then kernel-row then kernel-column,
 * zero where the window reaches into the padding.  The convolution helpers
 * multiply those rows by the flattened kernel with ggml_mul_mat and reshape
 * the product, exactly as upstream ggml composes them, so they produce the
 * same graph nodes.  Constructors follow the library's rules: a NULL input
 * gives NULL without a message; bad arguments give NULL and one message.
 */
#include "config.h"

#include <inttypes.h>

#include "ggml-impl.h"

struct ggml_tensor *ggml_im2col(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D,
                                enum ggml_type dst_type)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (s0 <= 0 || d0 <= 0 || (is_2D && (s1 <= 0 || d1 <= 0))) {
        ggml__error("strides and dilations must be positive (s0 %d, s1 %d, d0 %d, d1 %d)", s0, s1, d0, d1);
        return NULL;
    }
    if (is_2D) {
        if (a->ne[2] != b->ne[2]) {
            ggml__error("kernel '%s' has %" PRId64 " channels, input '%s' has %" PRId64,
                        a->name, a->ne[2], b->name, b->ne[2]);
            return NULL;
        }
    } else {
        if (a->ne[1] != b->ne[1]) {
            ggml__error("kernel '%s' has %" PRId64 " channels, input '%s' has %" PRId64,
                        a->name, a->ne[1], b->name, b->ne[1]);
            return NULL;
        }
        if (b->ne[3] != 1) {
            ggml__error("1-d input '%s' must have ne[3] == 1, not %" PRId64, b->name, b->ne[3]);
            return NULL;
        }
    }
    const int64_t OH = is_2D ? ggml__conv_out_size(b->ne[1], a->ne[1], s1, p1, d1) : 0;
    const int64_t OW = ggml__conv_out_size(b->ne[0], a->ne[0], s0, p0, d0);
    if (OW <= 0 || (is_2D && OH <= 0)) {
        ggml__error("input '%s' is too small for kernel '%s' (output %" PRId64 " x %" PRId64 ")",
                    b->name, a->name, OW, OH);
        return NULL;
    }
    const int64_t ne[4] = {
        is_2D ? a->ne[2] * a->ne[1] * a->ne[0] : a->ne[1] * a->ne[0],
        OW,
        is_2D ? OH : b->ne[2],
        is_2D ? b->ne[3] : 1,
    };
    const int32_t params[7] = { s0, s1, p0, p1, d0, d1, is_2D ? 1 : 0 };
    return ggml__new_op_node(ctx, GGML_OP_IM2COL, dst_type, 4, ne, a, b, params, GGML__COUNT(params), __func__);
}

struct ggml_tensor *ggml_conv_1d(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                 int s0, int p0, int d0)
{
    /* im2col: [IC*K, OL, N]; kernel [K, IC, OC] seen as [IC*K, OC] */
    struct ggml_tensor *cols = ggml_im2col(ctx, a, b, s0, 0, p0, 0, d0, 0, false, GGML_TYPE_F16);
    if (cols == NULL)
        return NULL;
    /* each step stops the chain on NULL: one failure, one message */
    struct ggml_tensor *lhs = ggml_reshape_2d(ctx, cols, cols->ne[0], cols->ne[2] * cols->ne[1]);
    if (lhs == NULL)
        return NULL;
    struct ggml_tensor *prod = ggml_mul_mat(ctx, lhs, ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1], a->ne[2]));
    if (prod == NULL)
        return NULL;
    return ggml_reshape_3d(ctx, prod, cols->ne[1], a->ne[2], cols->ne[2]);
}

struct ggml_tensor *ggml_conv_1d_ph(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                    int s, int d)
{
    if (a == NULL || b == NULL)
        return NULL;
    return ggml_conv_1d(ctx, a, b, s, (int) (a->ne[0] / 2), d);
}

struct ggml_tensor *ggml_conv_1d_dw(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                    int s0, int p0, int d0)
{
    if (a == NULL || b == NULL)
        return NULL;
    /* every channel becomes a batch entry of one channel */
    struct ggml_tensor *per_channel = ggml_reshape_4d(ctx, b, b->ne[0], 1, b->ne[1], b->ne[2]);
    struct ggml_tensor *cols = ggml_im2col(ctx, a, per_channel, s0, 0, p0, 0, d0, 0, false, GGML_TYPE_F16);
    struct ggml_tensor *prod = ggml_mul_mat(ctx, cols, a);
    if (prod == NULL)
        return NULL;
    return ggml_reshape_3d(ctx, prod, prod->ne[0], prod->ne[2], 1);
}

struct ggml_tensor *ggml_conv_1d_dw_ph(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                       int s0, int d0)
{
    if (a == NULL || b == NULL)
        return NULL;
    return ggml_conv_1d_dw(ctx, a, b, s0, (int) (a->ne[0] / 2), d0);
}

struct ggml_tensor *ggml_conv_2d(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                 int s0, int s1, int p0, int p1, int d0, int d1)
{
    /* im2col: [IC*KH*KW, OW, OH, N]; kernel [KW, KH, IC, OC] seen as [IC*KH*KW, OC] */
    struct ggml_tensor *cols = ggml_im2col(ctx, a, b, s0, s1, p0, p1, d0, d1, true, a ? a->type : GGML_TYPE_F32);
    if (cols == NULL)
        return NULL;
    struct ggml_tensor *lhs = ggml_reshape_2d(ctx, cols, cols->ne[0], cols->ne[3] * cols->ne[2] * cols->ne[1]);
    if (lhs == NULL)
        return NULL;
    struct ggml_tensor *prod = ggml_mul_mat(ctx, lhs, ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1] * a->ne[2], a->ne[3]));
    if (prod == NULL)
        return NULL;
    /* [OW, OH, N, OC] -> [OW, OH, OC, N] */
    struct ggml_tensor *out = ggml_reshape_4d(ctx, prod, cols->ne[1], cols->ne[2], cols->ne[3], a->ne[3]);
    return ggml_cont(ctx, ggml_permute(ctx, out, 0, 1, 3, 2));
}

struct ggml_tensor *ggml_conv_2d_sk_p0(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    return ggml_conv_2d(ctx, a, b, (int) a->ne[0], (int) a->ne[1], 0, 0, 1, 1);
}

struct ggml_tensor *ggml_conv_2d_s1_ph(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    return ggml_conv_2d(ctx, a, b, 1, 1, (int) (a->ne[0] / 2), (int) (a->ne[1] / 2), 1, 1);
}

struct ggml_tensor *ggml_conv_2d_dw(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                    int s0, int s1, int p0, int p1, int d0, int d1)
{
    if (a == NULL || b == NULL)
        return NULL;
    /* kernel [KW, KH, 1, C]; input channels become batch entries of one channel */
    struct ggml_tensor *kernel = ggml_reshape_4d(ctx, a, a->ne[0], a->ne[1], 1, a->ne[2] * a->ne[3]);
    if (kernel == NULL)
        return NULL;
    struct ggml_tensor *input = ggml_reshape_4d(ctx, b, b->ne[0], b->ne[1], 1, b->ne[2] * b->ne[3]);
    struct ggml_tensor *cols = ggml_im2col(ctx, kernel, input, s0, s1, p0, p1, d0, d1, true, GGML_TYPE_F16);
    if (cols == NULL)
        return NULL;
    struct ggml_tensor *rows = ggml_reshape_4d(ctx, cols, cols->ne[0], cols->ne[2] * cols->ne[1], b->ne[2], b->ne[3]);
    if (rows == NULL)
        return NULL;
    struct ggml_tensor *flat = ggml_reshape_4d(ctx, kernel, kernel->ne[0] * kernel->ne[1], kernel->ne[2],
                                               kernel->ne[3], 1);
    struct ggml_tensor *prod = ggml_mul_mat(ctx, flat, rows);
    if (prod == NULL)
        return NULL;
    return ggml_reshape_4d(ctx, prod, cols->ne[1], cols->ne[2], b->ne[2], b->ne[3]);
}

struct ggml_tensor *ggml_im2col_3d(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                   int64_t IC, int s0, int s1, int s2, int p0, int p1, int p2,
                                   int d0, int d1, int d2, enum ggml_type dst_type)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (s0 <= 0 || s1 <= 0 || s2 <= 0 || d0 <= 0 || d1 <= 0 || d2 <= 0) {
        ggml__error("strides and dilations must be positive");
        return NULL;
    }
    if (IC <= 0 || IC > INT32_MAX) {
        ggml__error("IC %" PRId64 " must be in 1 .. INT32_MAX", IC);
        return NULL;
    }
    /* as in ggml: N whole batches of IC channels (input channels past them are not read; N may be 0) */
    const int64_t N = b->ne[3] / IC;
    const int64_t OD = ggml__conv_out_size(b->ne[2], a->ne[2], s2, p2, d2);
    const int64_t OH = ggml__conv_out_size(b->ne[1], a->ne[1], s1, p1, d1);
    const int64_t OW = ggml__conv_out_size(b->ne[0], a->ne[0], s0, p0, d0);
    if (OD <= 0 || OH <= 0 || OW <= 0) {
        ggml__error("input '%s' is too small for kernel '%s'", b->name, a->name);
        return NULL;
    }
    /* a's extents multiply within int64_t (a tensor invariant); IC and N may not */
    int64_t ne[4] = { 0, OW, OH, 0 };
    if (__builtin_mul_overflow(a->ne[0] * a->ne[1] * a->ne[2], IC, &ne[0]) || __builtin_mul_overflow(OD, N, &ne[3])) {
        ggml__error("the columns of input '%s' for kernel '%s' would have more than INT64_MAX elements", b->name,
                    a->name);
        return NULL;
    }
    const int32_t params[10] = { s0, s1, s2, p0, p1, p2, d0, d1, d2, (int32_t) IC };
    return ggml__new_op_node(ctx, GGML_OP_IM2COL_3D, dst_type, 4, ne, a, b, params, GGML__COUNT(params), __func__);
}

struct ggml_tensor *ggml_conv_3d(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                 int64_t IC, int s0, int s1, int s2, int p0, int p1, int p2,
                                 int d0, int d1, int d2)
{
    /* im2col: [IC*KD*KH*KW, OW, OH, OD*N]; kernel [KW, KH, KD, OC*IC] seen as [IC*KD*KH*KW, OC] */
    if (a == NULL || b == NULL)
        return NULL;
    if (IC <= 0 || b->ne[3] % IC != 0 || a->ne[3] % IC != 0 || b->ne[3] == 0) {
        ggml__error("IC %" PRId64 " must divide ne[3] of kernel '%s' (%" PRId64 ") and input '%s' (%" PRId64 ", not 0)",
                    IC, a->name, a->ne[3], b->name, b->ne[3]);
        return NULL;
    }
    struct ggml_tensor *cols = ggml_im2col_3d(ctx, a, b, IC, s0, s1, s2, p0, p1, p2, d0, d1, d2, a->type);
    if (cols == NULL)
        return NULL;
    const int64_t OC = a->ne[3] / IC;
    const int64_t N = b->ne[3] / IC;
    const int64_t OD = cols->ne[3] / N;
    struct ggml_tensor *lhs = ggml_reshape_2d(ctx, cols, cols->ne[0], cols->ne[3] * cols->ne[2] * cols->ne[1]);
    if (lhs == NULL)
        return NULL;
    struct ggml_tensor *prod = ggml_mul_mat(ctx, lhs, ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1] * a->ne[2] * IC, OC));
    if (prod == NULL)
        return NULL;
    /* [OW*OH, OD, N, OC] -> [OW*OH, OD, OC, N] -> [OW, OH, OD, OC*N] */
    struct ggml_tensor *out = ggml_reshape_4d(ctx, prod, cols->ne[1] * cols->ne[2], OD, N, OC);
    out = ggml_cont(ctx, ggml_permute(ctx, out, 0, 1, 3, 2));
    if (out == NULL)
        return NULL;
    return ggml_reshape_4d(ctx, out, cols->ne[1], cols->ne[2], OD, OC * N);
}

struct ggml_tensor *ggml_col2im_1d(struct ggml_context *ctx, struct ggml_tensor *a, int s0, int oc, int p0)
{
    if (a == NULL)
        return NULL;
    if (s0 <= 0 || oc <= 0 || p0 < 0) {
        ggml__error("stride (%d) and channel count (%d) must be positive, padding (%d) not negative", s0, oc, p0);
        return NULL;
    }
    if (a->ne[0] % oc != 0 || a->ne[2] != 1 || a->ne[3] != 1) {
        ggml__error("columns '%s' must be a matrix [K*%d, T_in], not [%" PRId64 ", %" PRId64 ", %" PRId64
                    ", %" PRId64 "]", a->name, oc, a->ne[0], a->ne[1], a->ne[2], a->ne[3]);
        return NULL;
    }
    const int64_t K = a->ne[0] / oc;
    const int64_t T_out = (a->ne[1] - 1) * s0 + K - 2 * (int64_t) p0;
    if (T_out <= 0) {
        ggml__error("padding %d leaves no output samples", p0);
        return NULL;
    }
    const int64_t ne[2] = { T_out, oc };
    const int32_t params[3] = { s0, oc, p0 };
    return ggml__new_op_node(ctx, GGML_OP_COL2IM_1D, a->type, 2, ne, a, NULL, params, GGML__COUNT(params), __func__);
}
