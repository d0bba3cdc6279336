/*
 * ops-unary.c - constructors of the element-wise unary ops: ADD1, SCALE,
 * SQR, SQRT, LOG, SIN, COS, CLAMP, LEAKY_RELU, the UNARY functions
 * (ggml_abs ... ggml_xielu) and the gated linear units (GLU).
 *
 * Every op but GLU gives a result of a's shape and type; the in-place forms
 * (and ggml_clamp, which is always in place) return a view of a, so that
 * computing the node overwrites a.  A GLU halves dimension 0 of a (fused
 * form: value and gate side by side in each row) or keeps a's shape (split
 * form: value a, gate b).
 *
 * op_params, as upstream lays them out (32-bit slots):
 *   SCALE       [0] s (float), [1] bias (float)
 *   CLAMP       [0] min (float), [1] max (float)
 *   LEAKY_RELU  [0] negative slope (float)
 *   UNARY       [0] enum ggml_unary_op; XIELU also [1] alpha_n' = beta +
 *               softplus(alpha_n), [2] alpha_p' = softplus(alpha_p),
 *               [3] beta, [4] eps (floats)
 *   GLU         [0] enum ggml_glu_op, [1] swapped (0 or 1); SWIGLU_OAI also
 *               [2] alpha, [3] limit (floats)
 *
 * Checks follow upstream's assertions: ADD1 needs a scalar b, ADD1 and SCALE
 * need a with packed dimensions 1..3 (rows may not be strided inside), the
 * UNARY and GLU ops need rows of a stored contiguously (ggml_is_contiguous_1),
 * a split GLU needs a and b of the same shape and type.  The fused GLU also
 * refuses an odd ne0 (upstream silently drops the last column).  Which types
 * can be computed is the backend's business (supports_op), not checked here.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>

#include "ggml-impl.h"

/* --------------------------------------------------------------- helpers */

/* Rows packed one after another inside each matrix and batch (upstream's is_padded_1d). */
static bool rows_packed(const struct ggml_tensor *t)
{
    return t->nb[0] == ggml_type_size(t->type) && t->nb[2] == t->nb[1] * (size_t) t->ne[1] &&
           t->nb[3] == t->nb[2] * (size_t) t->ne[2];
}

static bool check_rows_packed(const struct ggml_tensor *a, const char *func)
{
    if (rows_packed(a))
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                 "'%s' must have contiguous elements and packed rows (strides %zu, %zu, %zu, %zu)",
                 a->name, a->nb[0], a->nb[1], a->nb[2], a->nb[3]);
    return false;
}

static bool check_contiguous_rows(const struct ggml_tensor *a, const char *func)
{
    if (ggml_is_contiguous_rows(a))
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' must have contiguous rows (strides %zu, %zu, %zu, %zu)", a->name,
                 a->nb[0], a->nb[1], a->nb[2], a->nb[3]);
    return false;
}

static bool check_contiguous_1(const struct ggml_tensor *a, const char *func)
{
    if (ggml_is_contiguous_1(a))
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                 "'%s' must have contiguous rows with dimensions 2 and 3 packed (strides %zu, %zu, %zu, %zu)",
                 a->name, a->nb[0], a->nb[1], a->nb[2], a->nb[3]);
    return false;
}

/*
 * A node of op over a: a view of a when inplace, else a new tensor of a's
 * shape and type.  NULL (logged as func) when the context is full.
 */
static struct ggml_tensor *elementwise_node(struct ggml_context *ctx, enum ggml_op op, struct ggml_tensor *a,
                                            bool inplace, const char *func)
{
    struct ggml_tensor *result = inplace ? ggml__view_tensor_impl(ctx, a, func)
                                         : ggml__dup_tensor_impl(ctx, a, func);
    if (result == NULL)
        return NULL;
    result->op = op;
    result->src[0] = a;
    return result;
}

/* ------------------------------------------------------------------ ADD1 */

static struct ggml_tensor *add1_impl(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                     bool inplace, const char *func)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (!ggml_is_scalar(b)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] is not a scalar",
                     b->name, b->ne[0], b->ne[1], b->ne[2], b->ne[3]);
        return NULL;
    }
    if (!check_rows_packed(a, func))
        return NULL;
    struct ggml_tensor *result = elementwise_node(ctx, GGML_OP_ADD1, a, inplace, func);
    if (result != NULL)
        result->src[1] = b;
    return result;
}

struct ggml_tensor *ggml_add1(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    return add1_impl(ctx, a, b, false, __func__);
}

struct ggml_tensor *ggml_add1_inplace(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    return add1_impl(ctx, a, b, true, __func__);
}

/* ----------------------------------------------------------------- SCALE */

static struct ggml_tensor *scale_impl(struct ggml_context *ctx, struct ggml_tensor *a, float s, float b,
                                      bool inplace, const char *func)
{
    if (a == NULL)
        return NULL;
    if (!check_rows_packed(a, func))
        return NULL;
    struct ggml_tensor *result = elementwise_node(ctx, GGML_OP_SCALE, a, inplace, func);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_f32(result, 0, s);
    ggml__set_op_params_f32(result, 1, b);
    return result;
}

struct ggml_tensor *ggml_scale(struct ggml_context *ctx, struct ggml_tensor *a, float s)
{
    return scale_impl(ctx, a, s, 0.0f, false, __func__);
}

struct ggml_tensor *ggml_scale_inplace(struct ggml_context *ctx, struct ggml_tensor *a, float s)
{
    return scale_impl(ctx, a, s, 0.0f, true, __func__);
}

struct ggml_tensor *ggml_scale_bias(struct ggml_context *ctx, struct ggml_tensor *a, float s, float b)
{
    return scale_impl(ctx, a, s, b, false, __func__);
}

struct ggml_tensor *ggml_scale_bias_inplace(struct ggml_context *ctx, struct ggml_tensor *a, float s, float b)
{
    return scale_impl(ctx, a, s, b, true, __func__);
}

/* -------------------------------------------------- SQR, SQRT, LOG, SIN, COS */

static struct ggml_tensor *math_impl(struct ggml_context *ctx, enum ggml_op op, struct ggml_tensor *a,
                                     bool inplace, const char *func)
{
    if (a == NULL)
        return NULL;
    return elementwise_node(ctx, op, a, inplace, func);
}

struct ggml_tensor *ggml_sqr(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return math_impl(ctx, GGML_OP_SQR, a, false, __func__);
}

struct ggml_tensor *ggml_sqr_inplace(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return math_impl(ctx, GGML_OP_SQR, a, true, __func__);
}

struct ggml_tensor *ggml_sqrt(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return math_impl(ctx, GGML_OP_SQRT, a, false, __func__);
}

struct ggml_tensor *ggml_sqrt_inplace(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return math_impl(ctx, GGML_OP_SQRT, a, true, __func__);
}

struct ggml_tensor *ggml_log(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return math_impl(ctx, GGML_OP_LOG, a, false, __func__);
}

struct ggml_tensor *ggml_log_inplace(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return math_impl(ctx, GGML_OP_LOG, a, true, __func__);
}

struct ggml_tensor *ggml_sin(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return math_impl(ctx, GGML_OP_SIN, a, false, __func__);
}

struct ggml_tensor *ggml_sin_inplace(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return math_impl(ctx, GGML_OP_SIN, a, true, __func__);
}

struct ggml_tensor *ggml_cos(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return math_impl(ctx, GGML_OP_COS, a, false, __func__);
}

struct ggml_tensor *ggml_cos_inplace(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return math_impl(ctx, GGML_OP_COS, a, true, __func__);
}

/* ----------------------------------------------------- CLAMP, LEAKY_RELU */

struct ggml_tensor *ggml_clamp(struct ggml_context *ctx, struct ggml_tensor *a, float min, float max)
{
    if (a == NULL)
        return NULL;
    struct ggml_tensor *result = elementwise_node(ctx, GGML_OP_CLAMP, a, true, __func__);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_f32(result, 0, min);
    ggml__set_op_params_f32(result, 1, max);
    return result;
}

struct ggml_tensor *ggml_leaky_relu(struct ggml_context *ctx, struct ggml_tensor *a, float negative_slope,
                                    bool inplace)
{
    if (a == NULL)
        return NULL;
    struct ggml_tensor *result = elementwise_node(ctx, GGML_OP_LEAKY_RELU, a, inplace, __func__);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_f32(result, 0, negative_slope);
    return result;
}

/* ----------------------------------------------------------------- UNARY */

static struct ggml_tensor *unary_impl(struct ggml_context *ctx, struct ggml_tensor *a, enum ggml_unary_op op,
                                      bool inplace, const char *func)
{
    if (a == NULL)
        return NULL;
    if ((int) op < 0 || op >= GGML_UNARY_OP_COUNT) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%d is not a unary op", (int) op);
        return NULL;
    }
    if (!check_contiguous_rows(a, func))
        return NULL;
    struct ggml_tensor *result = elementwise_node(ctx, GGML_OP_UNARY, a, inplace, func);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_i32(result, 0, (int32_t) op);
    return result;
}

struct ggml_tensor *ggml_unary(struct ggml_context *ctx, struct ggml_tensor *a, enum ggml_unary_op op)
{
    return unary_impl(ctx, a, op, false, __func__);
}

struct ggml_tensor *ggml_unary_inplace(struct ggml_context *ctx, struct ggml_tensor *a, enum ggml_unary_op op)
{
    return unary_impl(ctx, a, op, true, __func__);
}

/* One named function and its in-place form for each unary op. */
#define NAMED_UNARY(name, OP)                                                                     \
    struct ggml_tensor *ggml_##name(struct ggml_context *ctx, struct ggml_tensor *a)              \
    {                                                                                             \
        return unary_impl(ctx, a, OP, false, __func__);                                           \
    }                                                                                             \
    struct ggml_tensor *ggml_##name##_inplace(struct ggml_context *ctx, struct ggml_tensor *a)    \
    {                                                                                             \
        return unary_impl(ctx, a, OP, true, __func__);                                            \
    }

NAMED_UNARY(abs, GGML_UNARY_OP_ABS)
NAMED_UNARY(sgn, GGML_UNARY_OP_SGN)
NAMED_UNARY(neg, GGML_UNARY_OP_NEG)
NAMED_UNARY(step, GGML_UNARY_OP_STEP)
NAMED_UNARY(tanh, GGML_UNARY_OP_TANH)
NAMED_UNARY(elu, GGML_UNARY_OP_ELU)
NAMED_UNARY(relu, GGML_UNARY_OP_RELU)
NAMED_UNARY(sigmoid, GGML_UNARY_OP_SIGMOID)
NAMED_UNARY(gelu, GGML_UNARY_OP_GELU)
NAMED_UNARY(gelu_erf, GGML_UNARY_OP_GELU_ERF)
NAMED_UNARY(gelu_quick, GGML_UNARY_OP_GELU_QUICK)
NAMED_UNARY(silu, GGML_UNARY_OP_SILU)
NAMED_UNARY(exp, GGML_UNARY_OP_EXP)
NAMED_UNARY(expm1, GGML_UNARY_OP_EXPM1)
NAMED_UNARY(softplus, GGML_UNARY_OP_SOFTPLUS)
NAMED_UNARY(floor, GGML_UNARY_OP_FLOOR)
NAMED_UNARY(ceil, GGML_UNARY_OP_CEIL)
NAMED_UNARY(round, GGML_UNARY_OP_ROUND)
NAMED_UNARY(trunc, GGML_UNARY_OP_TRUNC)

#undef NAMED_UNARY

/* Upstream has no in-place forms of these two. */
struct ggml_tensor *ggml_hardswish(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return unary_impl(ctx, a, GGML_UNARY_OP_HARDSWISH, false, __func__);
}

struct ggml_tensor *ggml_hardsigmoid(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return unary_impl(ctx, a, GGML_UNARY_OP_HARDSIGMOID, false, __func__);
}

/* log(1 + e^x) in float, as the stored constants of XIELU are computed upstream. */
static float softplus_f32(float x)
{
    return x > 20.0f ? x : log1pf(expf(x));
}

struct ggml_tensor *ggml_xielu(struct ggml_context *ctx, struct ggml_tensor *a, float alpha_n, float alpha_p,
                               float beta, float eps)
{
    if (a == NULL)
        return NULL;
    /* upstream builds this node without the contiguity check of ggml_unary */
    struct ggml_tensor *result = elementwise_node(ctx, GGML_OP_UNARY, a, false, __func__);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_i32(result, 0, (int32_t) GGML_UNARY_OP_XIELU);
    ggml__set_op_params_f32(result, 1, beta + softplus_f32(alpha_n));
    ggml__set_op_params_f32(result, 2, softplus_f32(alpha_p));
    ggml__set_op_params_f32(result, 3, beta);
    ggml__set_op_params_f32(result, 4, eps);
    return result;
}

/* ------------------------------------------------------------------- GLU */

/*
 * A GLU node.  b == NULL: fused form, each row of a holds the value half
 * and the gate half (the value first unless swapped); the result has
 * ne0 / 2 columns.  Otherwise value a and gate b, same shape and type.
 */
static struct ggml_tensor *glu_impl(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                    enum ggml_glu_op op, bool swapped, const char *func)
{
    if ((int) op < 0 || op >= GGML_GLU_OP_COUNT) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%d is not a GLU op", (int) op);
        return NULL;
    }
    if (!check_contiguous_1(a, func))
        return NULL;
    int64_t ne[GGML_MAX_DIMS];
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        ne[i] = a->ne[i];
    if (b != NULL) {
        if (!check_contiguous_1(b, func))
            return NULL;
        if (!ggml_are_same_shape(a, b)) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                         "value '%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] and gate "
                         "'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] differ in shape",
                         a->name, a->ne[0], a->ne[1], a->ne[2], a->ne[3],
                         b->name, b->ne[0], b->ne[1], b->ne[2], b->ne[3]);
            return NULL;
        }
        if (a->type != b->type) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "value '%s' is %s but gate '%s' is %s", a->name,
                         ggml_type_name(a->type), b->name, ggml_type_name(b->type));
            return NULL;
        }
    } else {
        /* the two halves of ne[0] / 2 columns; an odd last column is not read */
        ne[0] = a->ne[0] / 2;
    }
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, a->type, GGML_MAX_DIMS, ne, NULL, 0, func);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_i32(result, 0, (int32_t) op);
    ggml__set_op_params_i32(result, 1, swapped ? 1 : 0);
    result->op = GGML_OP_GLU;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor *ggml_glu(struct ggml_context *ctx, struct ggml_tensor *a, enum ggml_glu_op op, bool swapped)
{
    if (a == NULL)
        return NULL;
    return glu_impl(ctx, a, NULL, op, swapped, __func__);
}

struct ggml_tensor *ggml_glu_split(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                   enum ggml_glu_op op)
{
    if (a == NULL || b == NULL)
        return NULL;
    return glu_impl(ctx, a, b, op, false, __func__);
}

/* The fused, fused-swapped and split constructors of one GLU op. */
#define NAMED_GLU(name, OP)                                                                          \
    struct ggml_tensor *ggml_##name(struct ggml_context *ctx, struct ggml_tensor *a)                 \
    {                                                                                                \
        return a == NULL ? NULL : glu_impl(ctx, a, NULL, OP, false, __func__);                       \
    }                                                                                                \
    struct ggml_tensor *ggml_##name##_swapped(struct ggml_context *ctx, struct ggml_tensor *a)       \
    {                                                                                                \
        return a == NULL ? NULL : glu_impl(ctx, a, NULL, OP, true, __func__);                        \
    }                                                                                                \
    struct ggml_tensor *ggml_##name##_split(struct ggml_context *ctx, struct ggml_tensor *a,         \
                                            struct ggml_tensor *b)                                   \
    {                                                                                                \
        return a == NULL || b == NULL ? NULL : glu_impl(ctx, a, b, OP, false, __func__);             \
    }

NAMED_GLU(reglu, GGML_GLU_OP_REGLU)
NAMED_GLU(geglu, GGML_GLU_OP_GEGLU)
NAMED_GLU(swiglu, GGML_GLU_OP_SWIGLU)
NAMED_GLU(geglu_erf, GGML_GLU_OP_GEGLU_ERF)
NAMED_GLU(geglu_quick, GGML_GLU_OP_GEGLU_QUICK)

#undef NAMED_GLU

/*
 * b may be NULL, as upstream allows: the fused form over a (value first).
 * A NULL a gives NULL.
 */
struct ggml_tensor *ggml_swiglu_oai(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                    float alpha, float limit)
{
    if (a == NULL)
        return NULL;
    struct ggml_tensor *result = glu_impl(ctx, a, b, GGML_GLU_OP_SWIGLU_OAI, false, __func__);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_f32(result, 2, alpha);
    ggml__set_op_params_f32(result, 3, limit);
    return result;
}
