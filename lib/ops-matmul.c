/*
 * ops-matmul.c - constructors of the matrix products MUL_MAT, MUL_MAT_ID
 * and OUT_PROD, and the op_params setters of MUL_MAT.
 *
 * Shapes (ne[0] first; every result is F32 and contiguous):
 *   ggml_mul_mat(a, b)         a [K, M, A2, A3], b [K, N, B2, B3]
 *                              -> [M, N, B2, B3], a repeated over b's
 *                              dims 2 and 3 (B2 % A2 == 0, B3 % A3 == 0)
 *   ggml_mul_mat_id(as, b, ids) as [K, M, n_as], b [K, nb, T],
 *                              ids I32 [n_used, T], n_used % nb == 0
 *                              -> [M, n_used, T]
 *   ggml_out_prod(a, b)        a [P, K, A2, A3], b [Q, K, B2, B3]
 *                              -> [P, Q, B2, B3], a repeated as above
 * The left operand must not be transposed (nb[0] <= nb[1], unless its
 * rows are empty).  MUL_MAT's
 * op_params: [0] the requested precision (enum ggml_prec), [1] a hint
 * (enum ggml_op_hint), as upstream lays them out.
 */
#include "config.h"

#include <inttypes.h>

#include "ggml-impl.h"

#define SHAPE_FMT "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]"
#define SHAPE_ARGS(t) (t)->ne[0], (t)->ne[1], (t)->ne[2], (t)->ne[3]

/* True when extent n of the result can be made by repeating extent d. */
static bool repeats(int64_t n, int64_t d)
{
    return d == 0 ? n == 0 : n % d == 0;
}

/*
 * Logs (as func) and returns false when a is transposed.  Rows of no
 * elements (ne[0] = 0) have nb[1] = 0 and so look transposed; they are
 * accepted, since nothing is read from them.
 */
static bool check_not_transposed(const struct ggml_tensor *a, const char *func)
{
    if (a->ne[0] == 0 || !ggml_is_transposed(a))
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                 "'%s' is transposed (nb[0] = %zu > nb[1] = %zu); make it contiguous with ggml_cont",
                 a->name, a->nb[0], a->nb[1]);
    return false;
}

/* Logs (as func) and returns false when a cannot be repeated over b in dims 2 and 3. */
static bool check_batches(const struct ggml_tensor *a, const struct ggml_tensor *b, const char *func)
{
    if (repeats(b->ne[2], a->ne[2]) && repeats(b->ne[3], a->ne[3]))
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                 "'%s' " SHAPE_FMT " cannot be repeated over the batches of '%s' " SHAPE_FMT
                 " (dims 2 and 3 must divide)", a->name, SHAPE_ARGS(a), b->name, SHAPE_ARGS(b));
    return false;
}

struct ggml_tensor *ggml_mul_mat(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (a->ne[0] != b->ne[0]) {
        ggml__error("'%s' " SHAPE_FMT " and '%s' " SHAPE_FMT " differ in dim 0 (the shared length)",
                    a->name, SHAPE_ARGS(a), b->name, SHAPE_ARGS(b));
        return NULL;
    }
    if (!check_batches(a, b, __func__) || !check_not_transposed(a, __func__))
        return NULL;
    const int64_t ne[4] = { a->ne[1], b->ne[1], b->ne[2], b->ne[3] };
    return ggml__new_op_node(ctx, GGML_OP_MUL_MAT, GGML_TYPE_F32, 4, ne, a, b, NULL, 0, __func__);
}

/* Logs (as func) and returns false when a is not a MUL_MAT node. */
static bool check_mul_mat_node(const struct ggml_tensor *a, const char *func)
{
    if (a->op == GGML_OP_MUL_MAT)
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' is a %s node, not MUL_MAT", a->name, ggml_op_name(a->op));
    return false;
}

void ggml_mul_mat_set_prec(struct ggml_tensor *a, enum ggml_prec prec)
{
    if (a == NULL || !check_mul_mat_node(a, __func__))
        return;
    if (prec != GGML_PREC_DEFAULT && prec != GGML_PREC_F32) {
        ggml__error("unknown precision %d", (int) prec);
        return;
    }
    ggml__set_op_params_i32(a, 0, (int32_t) prec);
}

void ggml_mul_mat_set_hint(struct ggml_tensor *a, enum ggml_op_hint hint)
{
    if (a == NULL || !check_mul_mat_node(a, __func__))
        return;
    if (hint != GGML_HINT_NONE && hint != GGML_HINT_SRC0_IS_HADAMARD) {
        ggml__error("unknown hint %d", (int) hint);
        return;
    }
    ggml__set_op_params_i32(a, 1, (int32_t) hint);
}

struct ggml_tensor *ggml_mul_mat_id(struct ggml_context *ctx, struct ggml_tensor *as, struct ggml_tensor *b,
                                    struct ggml_tensor *ids)
{
    if (as == NULL || b == NULL || ids == NULL)
        return NULL;
    if (ids->type != GGML_TYPE_I32) {
        ggml__error("ids '%s' is %s; it must be I32", ids->name, ggml_type_name(ids->type));
        return NULL;
    }
    if (as->ne[3] != 1 || b->ne[3] != 1 || ids->ne[2] != 1 || ids->ne[3] != 1) {
        ggml__error("as '%s' " SHAPE_FMT " and b '%s' " SHAPE_FMT " must be 3-d and ids '%s' " SHAPE_FMT " 2-d",
                    as->name, SHAPE_ARGS(as), b->name, SHAPE_ARGS(b), ids->name, SHAPE_ARGS(ids));
        return NULL;
    }
    if (as->ne[0] != b->ne[0]) {
        ggml__error("as '%s' " SHAPE_FMT " and b '%s' " SHAPE_FMT " differ in dim 0 (the shared length)",
                    as->name, SHAPE_ARGS(as), b->name, SHAPE_ARGS(b));
        return NULL;
    }
    if (ids->ne[1] != b->ne[2]) {
        ggml__error("ids '%s' " SHAPE_FMT " must have one column per token of b '%s' " SHAPE_FMT,
                    ids->name, SHAPE_ARGS(ids), b->name, SHAPE_ARGS(b));
        return NULL;
    }
    if (!repeats(ids->ne[0], b->ne[1])) {
        ggml__error("b '%s' " SHAPE_FMT ": dim 1 must divide the %" PRId64 " experts used per token",
                    b->name, SHAPE_ARGS(b), ids->ne[0]);
        return NULL;
    }
    if (!check_not_transposed(as, __func__))
        return NULL;
    const int64_t ne[4] = { as->ne[1], ids->ne[0], b->ne[2], 1 };
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_F32, 4, ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_MUL_MAT_ID;
    result->src[0] = as;
    result->src[1] = b;
    result->src[2] = ids;
    return result;
}

struct ggml_tensor *ggml_out_prod(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (a->ne[1] != b->ne[1]) {
        ggml__error("'%s' " SHAPE_FMT " and '%s' " SHAPE_FMT " differ in dim 1 (the shared length)",
                    a->name, SHAPE_ARGS(a), b->name, SHAPE_ARGS(b));
        return NULL;
    }
    if (!check_batches(a, b, __func__) || !check_not_transposed(a, __func__))
        return NULL;
    const int64_t ne[4] = { a->ne[0], b->ne[0], b->ne[2], b->ne[3] };
    return ggml__new_op_node(ctx, GGML_OP_OUT_PROD, GGML_TYPE_F32, 4, ne, a, b, NULL, 0, __func__);
}
