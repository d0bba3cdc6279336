/*
 * ops-conv-direct.c - constructors of the convolutions computed directly
 * (without im2col): CONV_TRANSPOSE_1D, CONV_TRANSPOSE_2D, CONV_2D_DW,
 * CONV_2D and CONV_3D.
 *
 * Shapes, op_params and results follow upstream ggml.  A NULL input gives
 * NULL without a message; a bad shape or parameter gives NULL and one
 * message.
 */
#include "config.h"

#include <inttypes.h>

#include "ggml-impl.h"

/* Checks strides >= 1, dilations >= 1, paddings >= 0; logs as func. */
static bool check_conv_params(const int *s, const int *p, const int *d, int n, const char *func)
{
    for (int i = 0; i < n; i++) {
        if (s[i] < 1 || d[i] < 1 || p[i] < 0) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                         "bad parameters in dimension %d: stride %d, padding %d, dilation %d "
                         "(need stride >= 1, padding >= 0, dilation >= 1)", i, s[i], p[i], d[i]);
            return false;
        }
    }
    return true;
}

/* Checks that every output extent is at least 1 and did not overflow;
 * logs as func. */
static bool check_out_shape(const int64_t *ne, int n, const char *func)
{
    for (int i = 0; i < n; i++) {
        if (ne[i] == GGML__CONV_OUT_OVERFLOW) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                         "the padded input is longer than INT64_MAX in dimension %d", i);
            return false;
        }
        if (ne[i] < 1) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                         "the kernel does not fit the input: output extent %" PRId64 " in dimension %d",
                         ne[i], i);
            return false;
        }
    }
    return true;
}

struct ggml_tensor *ggml_conv_transpose_1d(struct ggml_context *ctx, struct ggml_tensor *a,
                                           struct ggml_tensor *b, int s0, int p0, int d0)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (!ggml_is_matrix(b)) {
        ggml__error("'%s' must be a matrix [L, IC]", b->name);
        return NULL;
    }
    if (a->ne[2] != b->ne[1] || a->ne[3] != 1) {
        ggml__error("kernel '%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] must be [K, OC, %" PRId64
                    ", 1] for input '%s'", a->name, a->ne[0], a->ne[1], a->ne[2], a->ne[3], b->ne[1], b->name);
        return NULL;
    }
    if (s0 < 1 || p0 != 0 || d0 != 1) {
        ggml__error("stride %d, padding %d, dilation %d: need stride >= 1, padding 0 and dilation 1",
                    s0, p0, d0);
        return NULL;
    }
    const int64_t ne[4] = { (b->ne[0] - 1) * s0 + (a->ne[0] - 1) * d0 - 2 * (int64_t) p0 + 1, a->ne[1],
                            b->ne[2], 1 };
    const int32_t params[3] = { s0, p0, d0 };
    return ggml__new_op_node(ctx, GGML_OP_CONV_TRANSPOSE_1D, GGML_TYPE_F32, 4, ne,
                             a, b, params, GGML__COUNT(params), __func__);
}

struct ggml_tensor *ggml_conv_transpose_2d_p0(struct ggml_context *ctx, struct ggml_tensor *a,
                                              struct ggml_tensor *b, int stride)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (a->ne[3] != b->ne[2]) {
        ggml__error("kernel '%s' has %" PRId64 " input channels (ne[3]), input '%s' has %" PRId64 " (ne[2])",
                    a->name, a->ne[3], b->name, b->ne[2]);
        return NULL;
    }
    if (stride < 1) {
        ggml__error("stride %d: need stride >= 1", stride);
        return NULL;
    }
    int64_t ne[4] = { 0, 0, a->ne[2], b->ne[3] };
    for (int d = 0; d < 2; d++) {
        if (__builtin_mul_overflow(b->ne[d] - 1, (int64_t) stride, &ne[d]) ||
            __builtin_add_overflow(ne[d], a->ne[d], &ne[d])) {
            ggml__error("the output of input '%s' with stride %d has more than INT64_MAX columns", b->name, stride);
            return NULL;
        }
    }
    const int32_t params[1] = { stride };
    return ggml__new_op_node(ctx, GGML_OP_CONV_TRANSPOSE_2D, GGML_TYPE_F32, 4, ne,
                             a, b, params, GGML__COUNT(params), __func__);
}

struct ggml_tensor *ggml_conv_2d_dw_direct(struct ggml_context *ctx, struct ggml_tensor *a,
                                           struct ggml_tensor *b, int stride0, int stride1, int pad0,
                                           int pad1, int dilation0, int dilation1)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (a->ne[2] != 1 || a->ne[3] != b->ne[2]) {
        ggml__error("kernel '%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] must be [KW, KH, 1, %"
                    PRId64 "] for input '%s'", a->name, a->ne[0], a->ne[1], a->ne[2], a->ne[3], b->ne[2],
                    b->name);
        return NULL;
    }
    const int s[2] = { stride0, stride1 }, p[2] = { pad0, pad1 }, d[2] = { dilation0, dilation1 };
    if (!check_conv_params(s, p, d, 2, __func__))
        return NULL;
    if (ggml_blck_size(b->type) != 1) {
        ggml__error("input '%s' has block type %s; need a float type", b->name, ggml_type_name(b->type));
        return NULL;
    }
    const int64_t ne[4] = { ggml__conv_out_size(b->ne[0], a->ne[0], stride0, pad0, dilation0),
                            ggml__conv_out_size(b->ne[1], a->ne[1], stride1, pad1, dilation1), b->ne[2], b->ne[3] };
    if (!check_out_shape(ne, 2, __func__))
        return NULL;
    const int32_t params[6] = { stride0, stride1, pad0, pad1, dilation0, dilation1 };
    struct ggml_tensor *result = ggml__new_op_node(ctx, GGML_OP_CONV_2D_DW, b->type, 4, ne,
                                                   a, b, params, GGML__COUNT(params), __func__);
    if (result != NULL && ggml_is_contiguous_channels(b)) {
        /* channels-last input: the result is laid out the same way (C, W, H, N in memory) */
        const size_t ts = ggml_type_size(result->type);
        result->nb[0] = (size_t) result->ne[2] * ts;
        result->nb[1] = (size_t) result->ne[0] * result->nb[0];
        result->nb[2] = ts;
    }
    return result;
}

struct ggml_tensor *ggml_conv_2d_direct(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                        int s0, int s1, int p0, int p1, int d0, int d1)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (a->ne[2] != b->ne[2]) {
        ggml__error("kernel '%s' has %" PRId64 " input channels (ne[2]), input '%s' has %" PRId64,
                    a->name, a->ne[2], b->name, b->ne[2]);
        return NULL;
    }
    const int s[2] = { s0, s1 }, p[2] = { p0, p1 }, d[2] = { d0, d1 };
    if (!check_conv_params(s, p, d, 2, __func__))
        return NULL;
    const int64_t ne[4] = { ggml__conv_out_size(b->ne[0], a->ne[0], s0, p0, d0),
                            ggml__conv_out_size(b->ne[1], a->ne[1], s1, p1, d1), a->ne[3], b->ne[3] };
    if (!check_out_shape(ne, 2, __func__))
        return NULL;
    const int32_t params[6] = { s0, s1, p0, p1, d0, d1 };
    return ggml__new_op_node(ctx, GGML_OP_CONV_2D, b->type, 4, ne, a, b, params, GGML__COUNT(params), __func__);
}

struct ggml_tensor *ggml_conv_3d_direct(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                        int s0, int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2,
                                        int n_channels, int n_batch, int n_channels_out)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (n_channels < 1 || n_batch < 1 || n_channels_out < 1 ||
        a->ne[3] != (int64_t) n_channels * n_channels_out || b->ne[3] != (int64_t) n_channels * n_batch) {
        ggml__error("channels %d, batch %d, output channels %d do not match kernel '%s' ne[3] = %" PRId64
                    " (IC*OC) and input '%s' ne[3] = %" PRId64 " (IC*N)", n_channels, n_batch, n_channels_out,
                    a->name, a->ne[3], b->name, b->ne[3]);
        return NULL;
    }
    const int s[3] = { s0, s1, s2 }, p[3] = { p0, p1, p2 }, d[3] = { d0, d1, d2 };
    if (!check_conv_params(s, p, d, 3, __func__))
        return NULL;
    const int64_t ne[4] = { ggml__conv_out_size(b->ne[0], a->ne[0], s0, p0, d0),
                            ggml__conv_out_size(b->ne[1], a->ne[1], s1, p1, d1),
                            ggml__conv_out_size(b->ne[2], a->ne[2], s2, p2, d2),
                            (int64_t) n_channels_out * n_batch };
    if (!check_out_shape(ne, 3, __func__))
        return NULL;
    const int32_t params[12] = { s0, s1, s2, p0, p1, p2, d0, d1, d2, n_channels, n_batch, n_channels_out };
    return ggml__new_op_node(ctx, GGML_OP_CONV_3D, GGML_TYPE_F32, 4, ne, a, b, params, GGML__COUNT(params), __func__);
}
