/*
 * ops-seq.c - constructors of the sequence and miscellaneous ops: ARANGE,
 * TIMESTEP_EMBEDDING, CUMSUM, TRI, FILL, DIAG, DIAG_MASK_ZERO, REPEAT_BACK
 * and ADD_ID.
 *
 * Shapes, types and op_params follow upstream ggml.  Constructors follow
 * the library's rules: a NULL input gives NULL without a message; a bad
 * argument gives NULL and one message.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>

#include "ggml-impl.h"

/* True when t is F32; logs as func otherwise. */
static bool check_f32(const struct ggml_tensor *t, const char *func)
{
    if (t->type == GGML_TYPE_F32)
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' is %s; it must be f32", t->name, ggml_type_name(t->type));
    return false;
}

/* True when t is contiguous; logs as func otherwise. */
static bool check_contiguous(const struct ggml_tensor *t, const char *func)
{
    if (ggml_is_contiguous(t))
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' must be contiguous", t->name);
    return false;
}

/* ---------------------------------------------------------------- arange */

/* op_params (f32): start, stop, step.  Length ceil((stop - start) / step). */
struct ggml_tensor *ggml_arange(struct ggml_context *ctx, float start, float stop, float step)
{
    if (!isfinite(start) || !isfinite(stop) || !isfinite(step) || !(step > 0.0f) || !(stop > start)) {
        ggml__error("arange(%g, %g, %g) is empty or not finite: it needs stop > start and step > 0",
                    (double) start, (double) stop, (double) step);
        return NULL;
    }
    const double steps = ceil(((double) stop - (double) start) / (double) step);
    if (steps > (double) INT64_MAX / 8) {
        ggml__error("arange(%g, %g, %g) has too many elements", (double) start, (double) stop, (double) step);
        return NULL;
    }
    /* upstream's count, in single precision (it can overflow where the check did not) */
    const int64_t ne[1] = { ggml__float_to_int(ceilf((stop - start) / step), 0, INT64_MAX) };
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_F32, 1, ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_f32(result, 0, start);
    ggml__set_op_params_f32(result, 1, stop);
    ggml__set_op_params_f32(result, 2, step);
    result->op = GGML_OP_ARANGE;
    return result;
}

/* ---------------------------------------------------- timestep_embedding */

/* op_params (i32): dim, max_period.  Result F32 [dim, timesteps->ne[0]]. */
struct ggml_tensor *ggml_timestep_embedding(struct ggml_context *ctx, struct ggml_tensor *timesteps, int dim,
                                            int max_period)
{
    if (timesteps == NULL)
        return NULL;
    if (!check_f32(timesteps, __func__))
        return NULL;
    if (timesteps->ne[1] != 1 || timesteps->ne[2] != 1 || timesteps->ne[3] != 1) {
        ggml__error("the timesteps '%s' must be a vector", timesteps->name);
        return NULL;
    }
    if (dim <= 0 || max_period <= 0) {
        ggml__error("dim %d and max_period %d must be positive", dim, max_period);
        return NULL;
    }
    const int64_t ne[2] = { dim, timesteps->ne[0] };
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_F32, 2, ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_i32(result, 0, dim);
    ggml__set_op_params_i32(result, 1, max_period);
    result->op = GGML_OP_TIMESTEP_EMBEDDING;
    result->src[0] = timesteps;
    return result;
}

/* ---------------------------------------------------------------- cumsum */

struct ggml_tensor *ggml_cumsum(struct ggml_context *ctx, struct ggml_tensor *a)
{
    if (a == NULL)
        return NULL;
    if (!check_f32(a, __func__))
        return NULL;
    struct ggml_tensor *result = ggml__dup_tensor_impl(ctx, a, __func__);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_CUMSUM;
    result->src[0] = a;
    return result;
}

/* ------------------------------------------------------------------- tri */

/* op_params (i32): type. */
struct ggml_tensor *ggml_tri(struct ggml_context *ctx, struct ggml_tensor *a, enum ggml_tri_type type)
{
    if (a == NULL)
        return NULL;
    if (!check_f32(a, __func__) || !check_contiguous(a, __func__))
        return NULL;
    if (a->ne[0] != a->ne[1]) {
        ggml__error("'%s' is %" PRId64 " x %" PRId64 "; it must be square", a->name, a->ne[1], a->ne[0]);
        return NULL;
    }
    if ((int) type < GGML_TRI_TYPE_UPPER_DIAG || (int) type > GGML_TRI_TYPE_LOWER) {
        ggml__error("unknown triangle type %d", (int) type);
        return NULL;
    }
    struct ggml_tensor *result = ggml__dup_tensor_impl(ctx, a, __func__);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_i32(result, 0, (int32_t) type);
    result->op = GGML_OP_TRI;
    result->src[0] = a;
    return result;
}

/* ------------------------------------------------------------------ fill */

/* op_params (f32): c. */
static struct ggml_tensor *fill_impl(struct ggml_context *ctx, struct ggml_tensor *a, float c, bool inplace,
                                     const char *func)
{
    if (a == NULL)
        return NULL;
    if (!check_f32(a, func) || !check_contiguous(a, func))
        return NULL;
    struct ggml_tensor *result = inplace ? ggml__view_tensor_impl(ctx, a, func) : ggml__dup_tensor_impl(ctx, a, func);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_f32(result, 0, c);
    result->op = GGML_OP_FILL;
    result->src[0] = a;
    return result;
}

struct ggml_tensor *ggml_fill(struct ggml_context *ctx, struct ggml_tensor *a, float c)
{
    return fill_impl(ctx, a, c, false, __func__);
}

struct ggml_tensor *ggml_fill_inplace(struct ggml_context *ctx, struct ggml_tensor *a, float c)
{
    return fill_impl(ctx, a, c, true, __func__);
}

/* ------------------------------------------------------------------ diag */

/* a [n, 1, ne2, ne3] gives [n, n, ne2, ne3], a's type. */
struct ggml_tensor *ggml_diag(struct ggml_context *ctx, struct ggml_tensor *a)
{
    if (a == NULL)
        return NULL;
    if (a->ne[1] != 1) {
        ggml__error("'%s' has %" PRId64 " rows; it must have one", a->name, a->ne[1]);
        return NULL;
    }
    const int64_t ne[4] = { a->ne[0], a->ne[0], a->ne[2], a->ne[3] };
    return ggml__new_op_node(ctx, GGML_OP_DIAG, a->type, 4, ne, a, NULL, NULL, 0, __func__);
}

/* -------------------------------------------------------- diag_mask_zero */

struct ggml_tensor *ggml_diag_mask_zero(struct ggml_context *ctx, struct ggml_tensor *a, int n_past)
{
    return ggml__diag_mask_op(ctx, GGML_OP_DIAG_MASK_ZERO, a, n_past, false, __func__);
}

struct ggml_tensor *ggml_diag_mask_zero_inplace(struct ggml_context *ctx, struct ggml_tensor *a, int n_past)
{
    return ggml__diag_mask_op(ctx, GGML_OP_DIAG_MASK_ZERO, a, n_past, true, __func__);
}

/* ----------------------------------------------------------- repeat_back */

/* Result: b's shape, a's type; b must tile a (ggml_can_repeat(b, a)). */
struct ggml_tensor *ggml_repeat_back(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (!ggml__check_broadcast(a, b, __func__))
        return NULL;
    return ggml__new_op_node(ctx, GGML_OP_REPEAT_BACK, a->type, GGML_MAX_DIMS, b->ne, a, NULL, NULL, 0, __func__);
}

/* ---------------------------------------------------------------- add_id */

/* a [ne0, n_used, n_tokens], b [ne0, n_rows], ids I32 [n_used, n_tokens]. */
struct ggml_tensor *ggml_add_id(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                struct ggml_tensor *ids)
{
    if (a == NULL || b == NULL || ids == NULL)
        return NULL;
    if (ids->type != GGML_TYPE_I32) {
        ggml__error("the ids '%s' are %s; they must be i32", ids->name, ggml_type_name(ids->type));
        return NULL;
    }
    if (a->ne[0] != b->ne[0] || a->ne[1] != ids->ne[0] || a->ne[2] != ids->ne[1]) {
        ggml__error("'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 "] does not match '%s' [%" PRId64 ", ...] "
                    "and the ids '%s' [%" PRId64 ", %" PRId64 "]",
                    a->name, a->ne[0], a->ne[1], a->ne[2], b->name, b->ne[0], ids->name, ids->ne[0], ids->ne[1]);
        return NULL;
    }
    struct ggml_tensor *result = ggml__dup_tensor_impl(ctx, a, __func__);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_ADD_ID;
    result->src[0] = a;
    result->src[1] = b;
    result->src[2] = ids;
    return result;
}
