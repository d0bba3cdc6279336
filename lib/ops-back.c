/*
 * ops-back.c - constructors of the ops of training: the gradients SILU_BACK,
 * RMS_NORM_BACK, GET_ROWS_BACK, SOFT_MAX_BACK, IM2COL_BACK, POOL_2D_BACK,
 * the loss CROSS_ENTROPY_LOSS(_BACK) and the optimizer steps
 * OPT_STEP_ADAMW and OPT_STEP_SGD.
 *
 * Operand order and op_params are upstream ggml's: the incoming gradient
 * first, then what the forward op saw or produced.  Constructors follow
 * the library's rules: a NULL input gives NULL without a message; a bad
 * argument gives NULL and one message.
 */
#include "config.h"

#include <inttypes.h>

#include "ggml-impl.h"

#define SHAPE_FMT "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]"
#define SHAPE_ARGS(t) (t)->ne[0], (t)->ne[1], (t)->ne[2], (t)->ne[3]

static bool is_float(enum ggml_type type)
{
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
}

/*
 * Logs as func and returns false unless the gradient a and the forward
 * tensor b are float tensors (F32, F16, BF16) of the same shape.
 */
static bool check_pair(const struct ggml_tensor *a, const struct ggml_tensor *b, const char *func)
{
    if (!is_float(a->type) || !is_float(b->type)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' (%s) and '%s' (%s) must be f32, f16 or bf16", a->name,
                     ggml_type_name(a->type), b->name, ggml_type_name(b->type));
        return false;
    }
    if (!ggml_are_same_shape(a, b)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' " SHAPE_FMT " and '%s' " SHAPE_FMT " differ in shape",
                     a->name, SHAPE_ARGS(a), b->name, SHAPE_ARGS(b));
        return false;
    }
    return true;
}

/* A node of op over (a, b), a new tensor of a's shape and type, or a view of a when inplace. */
static struct ggml_tensor *pair_node(struct ggml_context *ctx, enum ggml_op op, struct ggml_tensor *a,
                                     struct ggml_tensor *b, bool inplace, const char *func)
{
    struct ggml_tensor *result = inplace ? ggml__view_tensor_impl(ctx, a, func) : ggml__dup_tensor_impl(ctx, a, func);
    if (result == NULL)
        return NULL;
    result->op = op;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor *ggml_silu_back(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (!check_pair(a, b, __func__))
        return NULL;
    return pair_node(ctx, GGML_OP_SILU_BACK, a, b, false, __func__);
}

/* op_params: float eps */
struct ggml_tensor *ggml_rms_norm_back(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                       float eps)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (!check_pair(a, b, __func__))
        return NULL;
    if (!(eps >= 0.0f)) {
        ggml__error("eps must be >= 0 (got %g)", (double) eps);
        return NULL;
    }
    struct ggml_tensor *result = pair_node(ctx, GGML_OP_RMS_NORM_BACK, a, b, false, __func__);
    if (result != NULL)
        ggml__set_op_params_f32(result, 0, eps);
    return result;
}

/*
 * The result is F32 [c->ne[0], c->ne[1]]; c only gives the shape and is
 * not a source.  Any type of a is accepted (as upstream does); the CPU
 * backend computes F32, F16 and BF16 gradients.
 */
struct ggml_tensor *ggml_get_rows_back(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                       struct ggml_tensor *c)
{
    if (a == NULL || b == NULL || c == NULL)
        return NULL;
    if (b->type != GGML_TYPE_I32) {
        ggml__error("the indices '%s' are %s; they must be i32", b->name, ggml_type_name(b->type));
        return NULL;
    }
    if (!ggml_is_matrix(a) || !ggml_is_vector(b) || !ggml_is_matrix(c) || a->ne[0] != c->ne[0] ||
        b->ne[0] > a->ne[1]) {
        ggml__error("gradients '%s' " SHAPE_FMT ", indices '%s' " SHAPE_FMT " and rows '%s' " SHAPE_FMT
                    " do not fit (want matrices a and c of equal rows, a vector b of at most a->ne[1] indices)",
                    a->name, SHAPE_ARGS(a), b->name, SHAPE_ARGS(b), c->name, SHAPE_ARGS(c));
        return NULL;
    }
    const int64_t ne[2] = { c->ne[0], c->ne[1] };
    return ggml__new_op_node(ctx, GGML_OP_GET_ROWS_BACK, GGML_TYPE_F32, 2, ne, a, b, NULL, 0, __func__);
}

/*
 * op_params: float { scale, max_bias }.  max_bias (ALiBi) only shifts the
 * masked input by a constant the gradient does not depend on: it is
 * recorded, not used.
 */
static struct ggml_tensor *soft_max_back_node(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                              float scale, float max_bias, bool inplace, const char *func)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (!check_pair(a, b, func))
        return NULL;
    if (!(max_bias >= 0.0f)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "max_bias must be >= 0 (got %g)", (double) max_bias);
        return NULL;
    }
    struct ggml_tensor *result = pair_node(ctx, GGML_OP_SOFT_MAX_BACK, a, b, inplace, func);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_f32(result, 0, scale);
    ggml__set_op_params_f32(result, 1, max_bias);
    return result;
}

struct ggml_tensor *ggml_soft_max_ext_back(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                           float scale, float max_bias)
{
    return soft_max_back_node(ctx, a, b, scale, max_bias, false, __func__);
}

struct ggml_tensor *ggml_soft_max_ext_back_inplace(struct ggml_context *ctx, struct ggml_tensor *a,
                                                   struct ggml_tensor *b, float scale, float max_bias)
{
    return soft_max_back_node(ctx, a, b, scale, max_bias, true, __func__);
}

/* ------------------------------------------------------------ losses */

/*
 * A 1-element tensor of a's type: minus the mean over the rows of
 * sum(b * log_softmax(a)), a the logits and b the labels (one shape).
 */
struct ggml_tensor *ggml_cross_entropy_loss(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (!check_pair(a, b, __func__))
        return NULL;
    const int64_t ne[1] = { 1 };
    return ggml__new_op_node(ctx, GGML_OP_CROSS_ENTROPY_LOSS, a->type, 1, ne, a, b, NULL, 0, __func__);
}

/*
 * Gradient of the loss with respect to the logits b, labels c, a the
 * 1-element gradient of the loss: (softmax(b) - c) * a / rows, of b's
 * shape and type.
 */
struct ggml_tensor *ggml_cross_entropy_loss_back(struct ggml_context *ctx, struct ggml_tensor *a,
                                                 struct ggml_tensor *b, struct ggml_tensor *c)
{
    if (a == NULL || b == NULL || c == NULL)
        return NULL;
    if (!check_pair(b, c, __func__))
        return NULL;
    if (!ggml_is_scalar(a) || !is_float(a->type)) {
        ggml__error("the loss gradient '%s' %s " SHAPE_FMT " must be one f32, f16 or bf16 element", a->name,
                    ggml_type_name(a->type), SHAPE_ARGS(a));
        return NULL;
    }
    struct ggml_tensor *result = ggml__dup_tensor_impl(ctx, b, __func__);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_CROSS_ENTROPY_LOSS_BACK;
    result->src[0] = a;
    result->src[1] = b;
    result->src[2] = c;
    return result;
}

/* ---------------------------------------------------- optimizer steps */

/*
 * Logs as func and returns false unless the weights a are a trainable
 * (ggml_set_param) F32 tensor, each of the n_same others is an F32 tensor of
 * a's shape, and params is an F32 tensor of n_params elements.
 */
static bool check_opt_step(const struct ggml_tensor *a, const struct ggml_tensor *const *same, int n_same,
                           const struct ggml_tensor *params, int64_t n_params, const char *func)
{
    if (!(a->flags & GGML_TENSOR_FLAG_PARAM)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' is not trainable (see ggml_set_param)", a->name);
        return false;
    }
    if (a->type != GGML_TYPE_F32) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the weights '%s' are %s; they must be f32", a->name,
                     ggml_type_name(a->type));
        return false;
    }
    for (int i = 0; i < n_same; i++)
        if (same[i]->type != GGML_TYPE_F32 || !ggml_are_same_shape(a, same[i])) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' %s " SHAPE_FMT " must be f32 of the weights' shape "
                         SHAPE_FMT, same[i]->name, ggml_type_name(same[i]->type), SHAPE_ARGS(same[i]), SHAPE_ARGS(a));
            return false;
        }
    if (params->type != GGML_TYPE_F32 || ggml_nelements(params) != n_params || !ggml_is_contiguous(params)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the parameters '%s' %s " SHAPE_FMT " must be %" PRId64
                     " contiguous f32 values", params->name, ggml_type_name(params->type), SHAPE_ARGS(params),
                     n_params);
        return false;
    }
    return true;
}

/*
 * One AdamW step, in place: updates a, m and v; returns a view of a.
 * adamw_params: F32 { alpha, beta1, beta2, eps, wd, beta1h, beta2h }.
 */
struct ggml_tensor *ggml_opt_step_adamw(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *grad,
                                        struct ggml_tensor *m, struct ggml_tensor *v,
                                        struct ggml_tensor *adamw_params)
{
    if (a == NULL || grad == NULL || m == NULL || v == NULL || adamw_params == NULL)
        return NULL;
    const struct ggml_tensor *same[3] = { grad, m, v };
    if (!check_opt_step(a, same, 3, adamw_params, 7, __func__))
        return NULL;
    struct ggml_tensor *result = ggml__view_tensor_impl(ctx, a, __func__);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_OPT_STEP_ADAMW;
    result->src[0] = a;
    result->src[1] = grad;
    result->src[2] = m;
    result->src[3] = v;
    result->src[4] = adamw_params;
    return result;
}

/* One SGD step with weight decay, in place; sgd_params: F32 { alpha, wd }. */
struct ggml_tensor *ggml_opt_step_sgd(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *grad,
                                      struct ggml_tensor *sgd_params)
{
    if (a == NULL || grad == NULL || sgd_params == NULL)
        return NULL;
    const struct ggml_tensor *same[1] = { grad };
    if (!check_opt_step(a, same, 1, sgd_params, 2, __func__))
        return NULL;
    struct ggml_tensor *result = ggml__view_tensor_impl(ctx, a, __func__);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_OPT_STEP_SGD;
    result->src[0] = a;
    result->src[1] = grad;
    result->src[2] = sgd_params;
    return result;
}

/* ------------------------------------------------- IM2COL_BACK, POOL_2D_BACK */

bool ggml__im2col_back_fits(const struct ggml_tensor *a, const struct ggml_tensor *b, const int64_t ne[4],
                            const int32_t params[7])
{
    const int s0 = params[0], s1 = params[1], p0 = params[2], p1 = params[3], d0 = params[4], d1 = params[5];
    const bool is_2D = params[6] != 0;
    if (s0 <= 0 || d0 <= 0 || p0 < 0 || (is_2D && (s1 <= 0 || d1 <= 0 || p1 < 0)) || (params[6] & ~1) != 0)
        return false;
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        if (ne[i] < 1 || ne[i] > INT32_MAX)
            return false;
    const int64_t IC = is_2D ? ne[2] : ne[1], N = is_2D ? ne[3] : ne[2];
    const int64_t KW = b->ne[0], KH = is_2D ? b->ne[1] : 1;
    const int64_t OW = ggml__conv_out_size(ne[0], KW, s0, p0, d0);
    const int64_t OH = is_2D ? ggml__conv_out_size(ne[1], KH, s1, p1, d1) : 1;
    int64_t cols;
    if (OW < 1 || OH < 1 || OW == GGML__CONV_OUT_OVERFLOW || OH == GGML__CONV_OUT_OVERFLOW ||
        __builtin_mul_overflow(IC, KH, &cols) || __builtin_mul_overflow(cols, KW, &cols))
        return false;
    return a->ne[0] == cols && a->ne[1] == OW &&
           (is_2D ? a->ne[2] == OH && a->ne[3] == N : a->ne[2] == N && a->ne[3] == 1 && ne[3] == 1);
}

/*
 * op_params: i32 { s0, s1, p0, p1, d0, d1, is_2D } as IM2COL.  As in
 * upstream's backward pass and kernel, a is the gradient of the im2col
 * output ([IC*KH*KW, OW, OH, N], 1-d [IC*KW, OW, N]) and b the kernel,
 * read for its extents only.  The result is F32 of shape ne, the im2col
 * input ([IW, IH, IC, N], 1-d [IW, IC, N]).
 */
struct ggml_tensor *ggml_im2col_back(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                     int64_t *ne, int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (ne == NULL) {
        ggml__error("ne is NULL");
        return NULL;
    }
    if (!is_float(a->type)) {
        ggml__error("the gradient '%s' is %s; want f32, f16 or bf16", a->name, ggml_type_name(a->type));
        return NULL;
    }
    const int32_t params[] = { s0, s1, p0, p1, d0, d1, is_2D ? 1 : 0 };
    if (!ggml__im2col_back_fits(a, b, ne, params)) {
        ggml__error("gradient '%s' " SHAPE_FMT " is not the im2col of kernel '%s' " SHAPE_FMT " over input "
                    "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] (%s, s0 %d, s1 %d, p0 %d, p1 %d, d0 %d, "
                    "d1 %d; strides and dilations must be positive, paddings >= 0, extents 1..2^31-1)",
                    a->name, SHAPE_ARGS(a), b->name, SHAPE_ARGS(b), ne[0], ne[1], ne[2], ne[3],
                    is_2D ? "2-d" : "1-d", s0, s1, p0, p1, d0, d1);
        return NULL;
    }
    return ggml__new_op_node(ctx, GGML_OP_IM2COL_BACK, GGML_TYPE_F32, 4, ne,
                             a, b, params, GGML__COUNT(params), __func__);
}

/*
 * op_params: i32 { op, k0, k1, s0, s1, p0, p1 } as POOL_2D (paddings
 * truncated to int).  a is the gradient of the pooled output, af the
 * pooling's input; the result is F32 of af's shape.
 */
struct ggml_tensor *ggml_pool_2d_back(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *af,
                                      enum ggml_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1)
{
    if (a == NULL || af == NULL)
        return NULL;
    if (op != GGML_OP_POOL_MAX && op != GGML_OP_POOL_AVG) {
        ggml__error("unknown pooling function %d", (int) op);
        return NULL;
    }
    if (!is_float(a->type) || !is_float(af->type)) {
        ggml__error("'%s' (%s) and '%s' (%s) must be f32, f16 or bf16", a->name, ggml_type_name(a->type),
                    af->name, ggml_type_name(af->type));
        return NULL;
    }
    if (k0 <= 0 || k1 <= 0 || s0 <= 0 || s1 <= 0 || !(p0 >= 0.0f && p0 < 65536.0f) ||
        !(p1 >= 0.0f && p1 < 65536.0f)) {
        ggml__error("kernel %dx%d and stride %dx%d must be positive, paddings %g, %g in [0, 65536)", k0, k1, s0,
                    s1, (double) p0, (double) p1);
        return NULL;
    }
    /* the output extents as ggml_pool_2d computes them (from the float paddings) */
    const int ip0 = (int) p0, ip1 = (int) p1;
    const double span0 = (double) af->ne[0] + 2.0 * p0 - k0, span1 = (double) af->ne[1] + 2.0 * p1 - k1;
    const int64_t ow = (int64_t) span0 / s0 + 1, oh = (int64_t) span1 / s1 + 1;
    if (span0 < 0.0 || span1 < 0.0 || a->ne[0] != ow ||
        a->ne[1] != oh || a->ne[2] != af->ne[2] || a->ne[3] != af->ne[3]) {
        ggml__error("gradient '%s' " SHAPE_FMT " is not the pooled shape of '%s' " SHAPE_FMT, a->name,
                    SHAPE_ARGS(a), af->name, SHAPE_ARGS(af));
        return NULL;
    }
    const int32_t params[] = { (int32_t) op, k0, k1, s0, s1, ip0, ip1 };
    return ggml__new_op_node(ctx, GGML_OP_POOL_2D_BACK, GGML_TYPE_F32, 4, af->ne,
                             a, af, params, GGML__COUNT(params), __func__);
}
