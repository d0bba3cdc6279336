/*
 * ops-back.c - constructors of the ops of training: the gradients SILU_BACK,
 * RMS_NORM_BACK, GET_ROWS_BACK, SOFT_MAX_BACK, the loss
 * CROSS_ENTROPY_LOSS(_BACK) and the optimizer steps OPT_STEP_ADAMW and
 * OPT_STEP_SGD.
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
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_F32, 2, ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_GET_ROWS_BACK;
    result->src[0] = a;
    result->src[1] = b;
    return result;
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
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, a->type, 1, ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_CROSS_ENTROPY_LOSS;
    result->src[0] = a;
    result->src[1] = b;
    return result;
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
