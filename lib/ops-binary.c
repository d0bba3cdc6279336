/*
 * ops-binary.c - constructors of the element-wise binary ops ADD, SUB, MUL
 * and DIV (and their in-place and cast forms).
 *
 * b is broadcast over a: each extent of b must divide the matching extent
 * of a (ggml_can_repeat(b, a)).  The result has a's shape, and a's type
 * (ggml_add_cast: the given type); the in-place forms return a view of a.
 * Constructors follow the library's rules: a NULL input gives NULL without
 * a message; bad arguments give NULL and one message.
 */
#include "config.h"

#include <inttypes.h>

#include "ggml-impl.h"

/* Checks that b can be broadcast over a; logs as func otherwise. */
bool ggml__check_broadcast(const struct ggml_tensor *a, const struct ggml_tensor *b, const char *func)
{
    if (ggml_can_repeat(b, a))
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                 "'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] cannot be broadcast over "
                 "'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]",
                 b->name, b->ne[0], b->ne[1], b->ne[2], b->ne[3],
                 a->name, a->ne[0], a->ne[1], a->ne[2], a->ne[3]);
    return false;
}

struct ggml_tensor *ggml__binary_op(struct ggml_context *ctx, enum ggml_op op, struct ggml_tensor *a,
                                    struct ggml_tensor *b, bool inplace, const char *func)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (!ggml__check_broadcast(a, b, func))
        return NULL;
    struct ggml_tensor *result = inplace ? ggml__view_tensor_impl(ctx, a, func)
                                         : ggml__dup_tensor_impl(ctx, a, func);
    if (result == NULL)
        return NULL;
    result->op = op;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor *ggml_add(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    return ggml__binary_op(ctx, GGML_OP_ADD, a, b, false, __func__);
}

struct ggml_tensor *ggml_add_inplace(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    return ggml__binary_op(ctx, GGML_OP_ADD, a, b, true, __func__);
}

struct ggml_tensor *ggml_add_cast(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                  enum ggml_type type)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (!ggml__check_broadcast(a, b, __func__))
        return NULL;
    return ggml__new_op_node(ctx, GGML_OP_ADD, type, GGML_MAX_DIMS, a->ne, a, b, NULL, 0, __func__);
}

struct ggml_tensor *ggml_sub(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    return ggml__binary_op(ctx, GGML_OP_SUB, a, b, false, __func__);
}

struct ggml_tensor *ggml_sub_inplace(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    return ggml__binary_op(ctx, GGML_OP_SUB, a, b, true, __func__);
}

struct ggml_tensor *ggml_mul(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    return ggml__binary_op(ctx, GGML_OP_MUL, a, b, false, __func__);
}

struct ggml_tensor *ggml_mul_inplace(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    return ggml__binary_op(ctx, GGML_OP_MUL, a, b, true, __func__);
}

struct ggml_tensor *ggml_div(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    return ggml__binary_op(ctx, GGML_OP_DIV, a, b, false, __func__);
}

struct ggml_tensor *ggml_div_inplace(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    return ggml__binary_op(ctx, GGML_OP_DIV, a, b, true, __func__);
}
