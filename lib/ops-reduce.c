/*
 * ops-reduce.c - constructors of the reductions (SUM, SUM_ROWS, MEAN,
 * ARGMAX, COUNT_EQUAL), of REPEAT and CONCAT, and of the normalisations
 * (NORM, RMS_NORM, L2_NORM, GROUP_NORM).
 *
 * Result shapes and types, as upstream makes them:
 *   SUM          [1], a's type
 *   SUM_ROWS     [1, ne1, ne2, ne3], a's type
 *   MEAN         [1, ne1, ne2, ne3], F32
 *   ARGMAX       [ne1], I32 (a must be a matrix)
 *   COUNT_EQUAL  [1], I64 (a and b I32 of the same shape)
 *   REPEAT       the target shape, a's type
 *   CONCAT       a's shape with ne[dim] = a->ne[dim] + b->ne[dim], a's type
 *   the norms    a's shape and type; the in-place forms return a view of a
 *
 * op_params, as upstream lays them out (32-bit slots):
 *   CONCAT                   [0] dim
 *   NORM, RMS_NORM, L2_NORM  [0] eps (float)
 *   GROUP_NORM               [0] n_groups, [1] eps (float)
 *
 * Checks follow upstream's assertions (argmax of a matrix, count_equal of
 * equal shapes, repeat by whole multiples, concat of equal types and
 * extents); beyond them, these constructors refuse what no backend can
 * give a meaning to: count_equal of anything but I32, a norm of an integer
 * or quantized tensor, a negative or NaN eps, fewer than one group.  Which
 * of the remaining types a backend computes is its business (supports_op).
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>

#include "ggml-impl.h"

/* --------------------------------------------------------------- helpers */

static bool is_float_type(enum ggml_type type)
{
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16 ||
           type == GGML_TYPE_F64;
}

/* eps must be a number >= 0 (upstream's kernels assert eps >= 0). */
static bool check_eps(float eps, const char *func)
{
    if (eps >= 0.0f)
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "eps must be >= 0 (got %g)", (double) eps);
    return false;
}

/* A normalisation works on real numbers: refuses integer and quantized tensors. */
static bool check_norm_type(const struct ggml_tensor *a, const char *func)
{
    if (is_float_type(a->type))
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' has type %s; a normalisation needs a floating-point tensor",
                 a->name, ggml_type_name(a->type));
    return false;
}

/* ------------------------------------------------------------ reductions */

struct ggml_tensor *ggml_sum(struct ggml_context *ctx, struct ggml_tensor *a)
{
    if (a == NULL)
        return NULL;
    const int64_t ne[GGML_MAX_DIMS] = { 1, 1, 1, 1 };
    return ggml__new_op_node(ctx, GGML_OP_SUM, a->type, GGML_MAX_DIMS, ne, a, NULL, NULL, 0, __func__);
}

struct ggml_tensor *ggml_sum_rows(struct ggml_context *ctx, struct ggml_tensor *a)
{
    if (a == NULL)
        return NULL;
    const int64_t ne[GGML_MAX_DIMS] = { 1, a->ne[1], a->ne[2], a->ne[3] };
    return ggml__new_op_node(ctx, GGML_OP_SUM_ROWS, a->type, GGML_MAX_DIMS, ne, a, NULL, NULL, 0, __func__);
}

struct ggml_tensor *ggml_mean(struct ggml_context *ctx, struct ggml_tensor *a)
{
    if (a == NULL)
        return NULL;
    const int64_t ne[GGML_MAX_DIMS] = { 1, a->ne[1], a->ne[2], a->ne[3] };
    return ggml__new_op_node(ctx, GGML_OP_MEAN, GGML_TYPE_F32, GGML_MAX_DIMS, ne, a, NULL, NULL, 0, __func__);
}

struct ggml_tensor *ggml_argmax(struct ggml_context *ctx, struct ggml_tensor *a)
{
    if (a == NULL)
        return NULL;
    if (a->ne[2] != 1 || a->ne[3] != 1) {
        ggml__error("'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] is not a matrix "
                    "(dimensions 2 and 3 must be 1)",
                    a->name, a->ne[0], a->ne[1], a->ne[2], a->ne[3]);
        return NULL;
    }
    if (a->ne[0] > INT32_MAX) {
        ggml__error("rows of '%s' have %" PRId64 " elements; an I32 index reaches %d at most",
                    a->name, a->ne[0], INT32_MAX);
        return NULL;
    }
    const int64_t ne[GGML_MAX_DIMS] = { a->ne[1], 1, 1, 1 };
    return ggml__new_op_node(ctx, GGML_OP_ARGMAX, GGML_TYPE_I32, GGML_MAX_DIMS, ne, a, NULL, NULL, 0, __func__);
}

struct ggml_tensor *ggml_count_equal(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (a->type != GGML_TYPE_I32 || b->type != GGML_TYPE_I32) {
        ggml__error("'%s' (%s) and '%s' (%s) must both be I32", a->name, ggml_type_name(a->type), b->name,
                    ggml_type_name(b->type));
        return NULL;
    }
    if (!ggml_are_same_shape(a, b)) {
        ggml__error("'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] and "
                    "'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] differ in shape",
                    a->name, a->ne[0], a->ne[1], a->ne[2], a->ne[3],
                    b->name, b->ne[0], b->ne[1], b->ne[2], b->ne[3]);
        return NULL;
    }
    const int64_t ne[GGML_MAX_DIMS] = { 1, 1, 1, 1 };
    struct ggml_tensor *result = ggml__new_op_node(ctx, GGML_OP_COUNT_EQUAL, GGML_TYPE_I64, GGML_MAX_DIMS, ne,
                                                   a, NULL, NULL, 0, __func__);
    if (result != NULL)
        result->src[1] = b;
    return result;
}

/* ------------------------------------------------------- repeat, concat */

/*
 * True when a tiles the shape ne by whole repetitions in every dimension
 * (an empty a tiles only an empty shape); logs as func otherwise.
 */
static bool check_repeat(const struct ggml_tensor *a, const int64_t ne[GGML_MAX_DIMS], const char *func)
{
    bool ok = true;
    bool target_empty = false;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (ne[i] < 0)
            ok = false;
        if (ne[i] == 0)
            target_empty = true;
    }
    if (ok && ggml_is_empty(a))
        ok = target_empty;
    else if (ok)
        for (int i = 0; i < GGML_MAX_DIMS; i++)
            if (ne[i] % a->ne[i] != 0)
                ok = false;
    if (!ok)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] cannot be repeated to "
                     "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] (each extent must be a whole "
                     "multiple of a's)",
                     a->name, a->ne[0], a->ne[1], a->ne[2], a->ne[3], ne[0], ne[1], ne[2], ne[3]);
    return ok;
}

struct ggml_tensor *ggml_repeat(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (!check_repeat(a, b->ne, __func__))
        return NULL;
    return ggml__new_op_node(ctx, GGML_OP_REPEAT, a->type, GGML_MAX_DIMS, b->ne, a, NULL, NULL, 0, __func__);
}

struct ggml_tensor *ggml_repeat_4d(struct ggml_context *ctx, struct ggml_tensor *a, int64_t ne0, int64_t ne1,
                                   int64_t ne2, int64_t ne3)
{
    if (a == NULL)
        return NULL;
    const int64_t ne[GGML_MAX_DIMS] = { ne0, ne1, ne2, ne3 };
    if (!check_repeat(a, ne, __func__))
        return NULL;
    return ggml__new_op_node(ctx, GGML_OP_REPEAT, a->type, GGML_MAX_DIMS, ne, a, NULL, NULL, 0, __func__);
}

struct ggml_tensor *ggml_concat(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b, int dim)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (dim < 0 || dim >= GGML_MAX_DIMS) {
        ggml__error("dim %d is out of range (0 to %d)", dim, GGML_MAX_DIMS - 1);
        return NULL;
    }
    if (a->type != b->type) {
        ggml__error("'%s' (%s) and '%s' (%s) differ in type", a->name, ggml_type_name(a->type), b->name,
                    ggml_type_name(b->type));
        return NULL;
    }
    int64_t ne[GGML_MAX_DIMS];
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        if (d != dim && a->ne[d] != b->ne[d]) {
            ggml__error("'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] and "
                        "'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] differ in dimension %d "
                        "(only dimension %d may differ)",
                        a->name, a->ne[0], a->ne[1], a->ne[2], a->ne[3],
                        b->name, b->ne[0], b->ne[1], b->ne[2], b->ne[3], d, dim);
            return NULL;
        }
        ne[d] = a->ne[d];
        if (d == dim && __builtin_add_overflow(a->ne[d], b->ne[d], &ne[d])) {
            ggml__error("'%s' and '%s' joined along dimension %d would have more than INT64_MAX rows", a->name,
                        b->name, dim);
            return NULL;
        }
    }
    struct ggml_tensor *result = ggml__new_op_node(ctx, GGML_OP_CONCAT, a->type, GGML_MAX_DIMS, ne,
                                                   a, NULL, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_i32(result, 0, dim);
    result->src[1] = b;
    return result;
}

/* -------------------------------------------------------- normalisations */

/* NORM, RMS_NORM or L2_NORM of a with eps in op_params[0]. */
static struct ggml_tensor *norm_node(struct ggml_context *ctx, enum ggml_op op, struct ggml_tensor *a,
                                     float eps, bool inplace, const char *func)
{
    if (a == NULL)
        return NULL;
    if (!check_norm_type(a, func) || !check_eps(eps, func))
        return NULL;
    struct ggml_tensor *result = inplace ? ggml__view_tensor_impl(ctx, a, func)
                                         : ggml__dup_tensor_impl(ctx, a, func);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_f32(result, 0, eps);
    result->op = op;
    result->src[0] = a;
    return result;
}

struct ggml_tensor *ggml_norm(struct ggml_context *ctx, struct ggml_tensor *a, float eps)
{
    return norm_node(ctx, GGML_OP_NORM, a, eps, false, __func__);
}

struct ggml_tensor *ggml_norm_inplace(struct ggml_context *ctx, struct ggml_tensor *a, float eps)
{
    return norm_node(ctx, GGML_OP_NORM, a, eps, true, __func__);
}

struct ggml_tensor *ggml_rms_norm(struct ggml_context *ctx, struct ggml_tensor *a, float eps)
{
    return norm_node(ctx, GGML_OP_RMS_NORM, a, eps, false, __func__);
}

struct ggml_tensor *ggml_rms_norm_inplace(struct ggml_context *ctx, struct ggml_tensor *a, float eps)
{
    return norm_node(ctx, GGML_OP_RMS_NORM, a, eps, true, __func__);
}

struct ggml_tensor *ggml_l2_norm(struct ggml_context *ctx, struct ggml_tensor *a, float eps)
{
    return norm_node(ctx, GGML_OP_L2_NORM, a, eps, false, __func__);
}

struct ggml_tensor *ggml_l2_norm_inplace(struct ggml_context *ctx, struct ggml_tensor *a, float eps)
{
    return norm_node(ctx, GGML_OP_L2_NORM, a, eps, true, __func__);
}

static struct ggml_tensor *group_norm_node(struct ggml_context *ctx, struct ggml_tensor *a, int n_groups,
                                           float eps, bool inplace, const char *func)
{
    if (a == NULL)
        return NULL;
    if (!check_norm_type(a, func) || !check_eps(eps, func))
        return NULL;
    if (n_groups < 1) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "n_groups must be at least 1 (got %d)", n_groups);
        return NULL;
    }
    struct ggml_tensor *result = inplace ? ggml__view_tensor_impl(ctx, a, func)
                                         : ggml__dup_tensor_impl(ctx, a, func);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_i32(result, 0, n_groups);
    ggml__set_op_params_f32(result, 1, eps);
    result->op = GGML_OP_GROUP_NORM;
    result->src[0] = a;
    return result;
}

struct ggml_tensor *ggml_group_norm(struct ggml_context *ctx, struct ggml_tensor *a, int n_groups, float eps)
{
    return group_norm_node(ctx, a, n_groups, eps, false, __func__);
}

struct ggml_tensor *ggml_group_norm_inplace(struct ggml_context *ctx, struct ggml_tensor *a, int n_groups,
                                            float eps)
{
    return group_norm_node(ctx, a, n_groups, eps, true, __func__);
}
