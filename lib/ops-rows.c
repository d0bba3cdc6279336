/*
 * ops-rows.c - constructors of the row gathers and scatters (GET_ROWS,
 * SET_ROWS), the strided writes into a view (SET, ACC), the causal mask
 * (DIAG_MASK_INF) and the softmax (SOFT_MAX, with its sinks).
 *
 * Shapes, op_params layouts and source slots are upstream ggml's:
 *   GET_ROWS       src[0] rows, src[1] I32 indices
 *   SET_ROWS       src[0] F32 rows, src[1] I32/I64 indices, src[2] the
 *                  destination (the result is a view of it)
 *   SET, ACC       src[0] a, src[1] b; op_params int32
 *                  { nb1, nb2, nb3, offset, inplace }
 *   DIAG_MASK_INF  src[0] a; op_params int32 { n_past }
 *   SOFT_MAX       src[0] a, src[1] mask (optional), src[2] sinks
 *                  (optional); op_params float { scale, max_bias }
 * Constructors follow the library's rules: a NULL input gives NULL without
 * a message; a bad argument gives NULL and one message.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>

#include "ggml-impl.h"

#define SHAPE_FMT "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]"
#define SHAPE_ARGS(t) (t)->ne[0], (t)->ne[1], (t)->ne[2], (t)->ne[3]

/* True when d divides n (an extent of 0 divides only 0). */
static bool divides(int64_t d, int64_t n)
{
    return d > 0 ? n % d == 0 : n == 0;
}

/* ------------------------------------------------------------- get_rows */

struct ggml_tensor *ggml_get_rows(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (b->type != GGML_TYPE_I32) {
        ggml__error("the indices '%s' are %s; they must be i32", b->name, ggml_type_name(b->type));
        return NULL;
    }
    if (a->ne[2] != b->ne[1] || a->ne[3] != b->ne[2] || b->ne[3] != 1) {
        ggml__error("indices '%s' " SHAPE_FMT " do not match the rows '%s' " SHAPE_FMT
                    " (need ne[1] == %" PRId64 ", ne[2] == %" PRId64 ", ne[3] == 1)",
                    b->name, SHAPE_ARGS(b), a->name, SHAPE_ARGS(a), a->ne[2], a->ne[3]);
        return NULL;
    }
    /* rows come out as F32, except I32 rows which are copied as they are */
    const enum ggml_type type = a->type == GGML_TYPE_I32 ? GGML_TYPE_I32 : GGML_TYPE_F32;
    const int64_t ne[4] = { a->ne[0], b->ne[0], b->ne[1], b->ne[2] };
    return ggml__new_op_node(ctx, GGML_OP_GET_ROWS, type, 4, ne, a, b, NULL, 0, __func__);
}

/* ------------------------------------------------------------- set_rows */

struct ggml_tensor *ggml_set_rows(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                  struct ggml_tensor *c)
{
    if (a == NULL || b == NULL || c == NULL)
        return NULL;
    if (b->type != GGML_TYPE_F32 && b->type != GGML_TYPE_F16) {
        ggml__error("the source rows '%s' are %s; they must be f32 or f16", b->name, ggml_type_name(b->type));
        return NULL;
    }
    if (c->type != GGML_TYPE_I64 && c->type != GGML_TYPE_I32) {
        ggml__error("the indices '%s' are %s; they must be i64 or i32", c->name, ggml_type_name(c->type));
        return NULL;
    }
    if (a->ne[0] != b->ne[0] || a->ne[2] != b->ne[2] || a->ne[3] != b->ne[3]) {
        ggml__error("the rows '%s' " SHAPE_FMT " do not fit the destination '%s' " SHAPE_FMT
                    " (ne[0], ne[2] and ne[3] must agree)",
                    b->name, SHAPE_ARGS(b), a->name, SHAPE_ARGS(a));
        return NULL;
    }
    if (b->ne[1] != c->ne[0] || !divides(c->ne[1], b->ne[2]) || !divides(c->ne[2], b->ne[3]) || c->ne[3] != 1) {
        ggml__error("the indices '%s' " SHAPE_FMT " do not match the rows '%s' " SHAPE_FMT
                    " (need ne[0] == %" PRId64 ", ne[1] and ne[2] dividing %" PRId64 " and %" PRId64
                    ", ne[3] == 1)",
                    c->name, SHAPE_ARGS(c), b->name, SHAPE_ARGS(b), b->ne[1], b->ne[2], b->ne[3]);
        return NULL;
    }
    if (!ggml_is_contiguous_rows(a) || !ggml_is_contiguous_rows(b)) {
        ggml__error("the elements of each row of '%s' must be contiguous",
                    ggml_is_contiguous_rows(a) ? b->name : a->name);
        return NULL;
    }
    struct ggml_tensor *result = ggml__view_tensor_impl(ctx, a, __func__);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_SET_ROWS;
    result->src[0] = b;
    result->src[1] = c;
    result->src[2] = a; /* upstream's slot order: the destination comes last */
    return result;
}

/* --------------------------------------------------------------- set, acc */

/*
 * Checks the view of a that SET and ACC write: b's extents with a's element
 * size and the strides nb1..nb3, starting offset bytes into a.  Every
 * parameter must fit the int32 op_params, be a multiple of the element
 * size, and every element of the view must lie inside a.  Logs as func.
 */
static bool check_view_region(const struct ggml_tensor *a, const struct ggml_tensor *b, size_t nb1, size_t nb2,
                              size_t nb3, size_t offset, const char *func)
{
    const size_t es = ggml_type_size(a->type);
    const size_t params[4] = { nb1, nb2, nb3, offset };
    static const char *const names[4] = { "nb1", "nb2", "nb3", "offset" };
    for (int i = 0; i < 4; i++) {
        if (params[i] > INT32_MAX) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s = %zu does not fit in the op parameters (at most %d)",
                         names[i], params[i], INT32_MAX);
            return false;
        }
        if (params[i] % es != 0) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s = %zu is not a multiple of the element size %zu of '%s'",
                         names[i], params[i], es, a->name);
            return false;
        }
    }
    if (ggml_nelements(b) == 0)
        return true;
    const size_t strides[4] = { es, nb1, nb2, nb3 };
    size_t span;
    if (!ggml__extent_bytes(a->type, b->ne, strides, &span) || span > ggml_nbytes(a) ||
        offset > ggml_nbytes(a) - span) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "'%s' " SHAPE_FMT " at offset %zu with strides %zu, %zu, %zu reaches outside '%s' (%zu bytes)",
                     b->name, SHAPE_ARGS(b), offset, nb1, nb2, nb3, a->name, ggml_nbytes(a));
        return false;
    }
    return true;
}

/* The checks SET and ACC share: sizes, layout and the region written. */
static bool check_set_args(const struct ggml_tensor *a, const struct ggml_tensor *b, size_t nb1, size_t nb2,
                           size_t nb3, size_t offset, const char *func)
{
    if (ggml_nelements(b) > ggml_nelements(a)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' has more elements (%" PRId64 ") than '%s' (%" PRId64 ")",
                     b->name, ggml_nelements(b), a->name, ggml_nelements(a));
        return false;
    }
    if (!ggml_is_contiguous(a)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' must be contiguous (the offset and strides address its bytes)",
                     a->name);
        return false;
    }
    return check_view_region(a, b, nb1, nb2, nb3, offset, func);
}

/* A SET or ACC node writing b into the view (nb1, nb2, nb3, offset) of a. */
static struct ggml_tensor *view_write_op(struct ggml_context *ctx, enum ggml_op op, struct ggml_tensor *a,
                                         struct ggml_tensor *b, size_t nb1, size_t nb2, size_t nb3, size_t offset,
                                         bool inplace, const char *func)
{
    struct ggml_tensor *result = inplace ? ggml__view_tensor_impl(ctx, a, func) : ggml__dup_tensor_impl(ctx, a, func);
    if (result == NULL)
        return NULL;
    const int32_t params[5] = { (int32_t) nb1, (int32_t) nb2, (int32_t) nb3, (int32_t) offset, inplace ? 1 : 0 };
    ggml__set_op_params(result, params, sizeof params);
    result->op = op;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

static struct ggml_tensor *set_impl(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                    size_t nb1, size_t nb2, size_t nb3, size_t offset, bool inplace,
                                    const char *func)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (b->type != a->type) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' is %s but '%s' is %s; they must have the same type",
                     b->name, ggml_type_name(b->type), a->name, ggml_type_name(a->type));
        return NULL;
    }
    if (ggml_blck_size(a->type) != 1) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' is quantized (%s); elements cannot be addressed one by one",
                     a->name, ggml_type_name(a->type));
        return NULL;
    }
    if (!check_set_args(a, b, nb1, nb2, nb3, offset, func))
        return NULL;
    return view_write_op(ctx, GGML_OP_SET, a, b, nb1, nb2, nb3, offset, inplace, func);
}

struct ggml_tensor *ggml_set(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b, size_t nb1,
                             size_t nb2, size_t nb3, size_t offset)
{
    return set_impl(ctx, a, b, nb1, nb2, nb3, offset, false, __func__);
}

struct ggml_tensor *ggml_set_inplace(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                     size_t nb1, size_t nb2, size_t nb3, size_t offset)
{
    return set_impl(ctx, a, b, nb1, nb2, nb3, offset, true, __func__);
}

struct ggml_tensor *ggml_set_1d(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                size_t offset)
{
    if (a == NULL || b == NULL)
        return NULL;
    return set_impl(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], offset, false, __func__);
}

struct ggml_tensor *ggml_set_1d_inplace(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                        size_t offset)
{
    if (a == NULL || b == NULL)
        return NULL;
    return set_impl(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], offset, true, __func__);
}

struct ggml_tensor *ggml_set_2d(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b, size_t nb1,
                                size_t offset)
{
    if (a == NULL || b == NULL)
        return NULL;
    return set_impl(ctx, a, b, nb1, a->nb[2], a->nb[3], offset, false, __func__);
}

struct ggml_tensor *ggml_set_2d_inplace(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                        size_t nb1, size_t offset)
{
    if (a == NULL || b == NULL)
        return NULL;
    return set_impl(ctx, a, b, nb1, a->nb[2], a->nb[3], offset, true, __func__);
}

static struct ggml_tensor *acc_impl(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                    size_t nb1, size_t nb2, size_t nb3, size_t offset, bool inplace,
                                    const char *func)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (a->type != GGML_TYPE_F32 || b->type != GGML_TYPE_F32) {
        const struct ggml_tensor *bad = a->type != GGML_TYPE_F32 ? a : b;
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' is %s; both tensors must be f32", bad->name,
                     ggml_type_name(bad->type));
        return NULL;
    }
    if (!check_set_args(a, b, nb1, nb2, nb3, offset, func))
        return NULL;
    return view_write_op(ctx, GGML_OP_ACC, a, b, nb1, nb2, nb3, offset, inplace, func);
}

struct ggml_tensor *ggml_acc(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b, size_t nb1,
                             size_t nb2, size_t nb3, size_t offset)
{
    return acc_impl(ctx, a, b, nb1, nb2, nb3, offset, false, __func__);
}

struct ggml_tensor *ggml_acc_inplace(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                     size_t nb1, size_t nb2, size_t nb3, size_t offset)
{
    return acc_impl(ctx, a, b, nb1, nb2, nb3, offset, true, __func__);
}

/* --------------------------------------------------------- diag_mask_inf */

struct ggml_tensor *ggml__diag_mask_op(struct ggml_context *ctx, enum ggml_op op, struct ggml_tensor *a,
                                       int n_past, bool inplace, const char *func)
{
    if (a == NULL)
        return NULL;
    if (n_past < 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "n_past is %d; it must not be negative", n_past);
        return NULL;
    }
    struct ggml_tensor *result = inplace ? ggml__view_tensor_impl(ctx, a, func) : ggml__dup_tensor_impl(ctx, a, func);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_i32(result, 0, n_past);
    result->op = op;
    result->src[0] = a;
    return result;
}

struct ggml_tensor *ggml_diag_mask_inf(struct ggml_context *ctx, struct ggml_tensor *a, int n_past)
{
    return ggml__diag_mask_op(ctx, GGML_OP_DIAG_MASK_INF, a, n_past, false, __func__);
}

struct ggml_tensor *ggml_diag_mask_inf_inplace(struct ggml_context *ctx, struct ggml_tensor *a, int n_past)
{
    return ggml__diag_mask_op(ctx, GGML_OP_DIAG_MASK_INF, a, n_past, true, __func__);
}

/* -------------------------------------------------------------- soft_max */

/* a's checks, and the mask's when there is one (it is optional). */
static bool check_soft_max_args(const struct ggml_tensor *a, const struct ggml_tensor *mask, float max_bias,
                                const char *func)
{
    if (!ggml_is_contiguous(a)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' must be contiguous", a->name);
        return false;
    }
    if (mask == NULL) {
        if (max_bias > 0.0f) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "max_bias %g (ALiBi) needs a mask", (double) max_bias);
            return false;
        }
        return true;
    }
    if (mask->type != GGML_TYPE_F32 && mask->type != GGML_TYPE_F16) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the mask '%s' is %s; it must be f32 or f16", mask->name,
                     ggml_type_name(mask->type));
        return false;
    }
    if (!ggml_is_contiguous(mask)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the mask '%s' must be contiguous", mask->name);
        return false;
    }
    if (mask->ne[0] != a->ne[0] || mask->ne[1] < a->ne[1] || !divides(mask->ne[2], a->ne[2]) ||
        !divides(mask->ne[3], a->ne[3])) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "the mask '%s' " SHAPE_FMT " does not fit '%s' " SHAPE_FMT
                     " (need the same ne[0], at least as many rows, and ne[2], ne[3] that divide a's)",
                     mask->name, SHAPE_ARGS(mask), a->name, SHAPE_ARGS(a));
        return false;
    }
    return true;
}

static struct ggml_tensor *soft_max_impl(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *mask,
                                         float scale, float max_bias, bool inplace, const char *func)
{
    if (a == NULL)
        return NULL;
    if (!check_soft_max_args(a, mask, max_bias, func))
        return NULL;
    struct ggml_tensor *result = inplace ? ggml__view_tensor_impl(ctx, a, func) : ggml__dup_tensor_impl(ctx, a, func);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_f32(result, 0, scale);
    ggml__set_op_params_f32(result, 1, max_bias);
    result->op = GGML_OP_SOFT_MAX;
    result->src[0] = a;
    result->src[1] = mask;
    return result;
}

struct ggml_tensor *ggml_soft_max(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return soft_max_impl(ctx, a, NULL, 1.0f, 0.0f, false, __func__);
}

struct ggml_tensor *ggml_soft_max_inplace(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return soft_max_impl(ctx, a, NULL, 1.0f, 0.0f, true, __func__);
}

struct ggml_tensor *ggml_soft_max_ext(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *mask,
                                      float scale, float max_bias)
{
    return soft_max_impl(ctx, a, mask, scale, max_bias, false, __func__);
}

struct ggml_tensor *ggml_soft_max_ext_inplace(struct ggml_context *ctx, struct ggml_tensor *a,
                                              struct ggml_tensor *mask, float scale, float max_bias)
{
    return soft_max_impl(ctx, a, mask, scale, max_bias, true, __func__);
}

void ggml_soft_max_add_sinks(struct ggml_tensor *a, struct ggml_tensor *sinks)
{
    if (a == NULL)
        return;
    if (sinks == NULL) {
        a->src[2] = NULL;
        return;
    }
    if (a->op != GGML_OP_SOFT_MAX || a->src[0] == NULL) {
        ggml__error("'%s' is a %s node, not a soft_max node", a->name, ggml_op_name(a->op));
        return;
    }
    if (a->src[2] != NULL) {
        ggml__error("'%s' already has sinks ('%s')", a->name, a->src[2]->name);
        return;
    }
    if (sinks->type != GGML_TYPE_F32) {
        ggml__error("the sinks '%s' are %s; they must be f32", sinks->name, ggml_type_name(sinks->type));
        return;
    }
    if (sinks->ne[0] != a->src[0]->ne[2]) {
        ggml__error("'%s' has %" PRId64 " sinks; the softmax has %" PRId64 " heads (ne[2])", sinks->name,
                    sinks->ne[0], a->src[0]->ne[2]);
        return;
    }
    a->src[2] = sinks;
}
