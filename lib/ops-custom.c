/*
 * ops-custom.c - constructors of the user-defined ops MAP_CUSTOM1,
 * MAP_CUSTOM2, MAP_CUSTOM3 (and their in-place forms) and CUSTOM
 * (ggml_custom_4d, ggml_custom_inplace).
 *
 * op_params hold the callback, the thread count and the user pointer in
 * the layout of upstream's parameter structs: { fun, int n_tasks,
 * userdata } with the compiler's natural padding.  n_tasks is a positive
 * count or GGML_N_TASKS_MAX ("every thread of the computation").
 * Constructors follow the library's rules: a NULL input gives NULL without
 * a message; bad arguments give NULL and one message.
 */
#include "config.h"

#include "ggml-impl.h"

/* Layouts of op_params, as upstream's ggml_map_custom{1,2,3}_op_params and
 * ggml_custom_op_params; lib/cpu/ops/custom.c reads them back. */
struct ggml__custom1_params { ggml_custom1_op_t fun; int n_tasks; void *userdata; };
struct ggml__custom2_params { ggml_custom2_op_t fun; int n_tasks; void *userdata; };
struct ggml__custom3_params { ggml_custom3_op_t fun; int n_tasks; void *userdata; };
struct ggml__custom_params  { ggml_custom_op_t  fun; int n_tasks; void *userdata; };

_Static_assert(sizeof(struct ggml__custom1_params) <= GGML_MAX_OP_PARAMS, "custom op params too large");

/* Checks the callback and the thread count; logs as func when bad. */
static bool check_custom_args(bool has_fun, int n_tasks, const char *func)
{
    if (!has_fun) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "fun is NULL");
        return false;
    }
    if (n_tasks <= 0 && n_tasks != GGML_N_TASKS_MAX) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "n_tasks is %d (expected a positive count or GGML_N_TASKS_MAX)", n_tasks);
        return false;
    }
    return true;
}

/* Result node of a MAP_CUSTOM op over a: a's shape and type, or a view of a. */
static struct ggml_tensor *map_custom_node(struct ggml_context *ctx, enum ggml_op op, struct ggml_tensor *a,
                                           struct ggml_tensor *b, struct ggml_tensor *c, bool inplace,
                                           const void *params, size_t size, const char *func)
{
    struct ggml_tensor *result = inplace ? ggml__view_tensor_impl(ctx, a, func)
                                         : ggml__dup_tensor_impl(ctx, a, func);
    if (result == NULL)
        return NULL;
    ggml__set_op_params(result, params, size);
    result->op = op;
    result->src[0] = a;
    result->src[1] = b;
    result->src[2] = c;
    return result;
}

static struct ggml_tensor *map_custom1(struct ggml_context *ctx, struct ggml_tensor *a, ggml_custom1_op_t fun,
                                       int n_tasks, void *userdata, bool inplace, const char *func)
{
    if (a == NULL)
        return NULL;
    if (!check_custom_args(fun != NULL, n_tasks, func))
        return NULL;
    const struct ggml__custom1_params params = { fun, n_tasks, userdata };
    return map_custom_node(ctx, GGML_OP_MAP_CUSTOM1, a, NULL, NULL, inplace, &params, sizeof params, func);
}

static struct ggml_tensor *map_custom2(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                       ggml_custom2_op_t fun, int n_tasks, void *userdata, bool inplace,
                                       const char *func)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (!check_custom_args(fun != NULL, n_tasks, func))
        return NULL;
    const struct ggml__custom2_params params = { fun, n_tasks, userdata };
    return map_custom_node(ctx, GGML_OP_MAP_CUSTOM2, a, b, NULL, inplace, &params, sizeof params, func);
}

static struct ggml_tensor *map_custom3(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                       struct ggml_tensor *c, ggml_custom3_op_t fun, int n_tasks, void *userdata,
                                       bool inplace, const char *func)
{
    if (a == NULL || b == NULL || c == NULL)
        return NULL;
    if (!check_custom_args(fun != NULL, n_tasks, func))
        return NULL;
    const struct ggml__custom3_params params = { fun, n_tasks, userdata };
    return map_custom_node(ctx, GGML_OP_MAP_CUSTOM3, a, b, c, inplace, &params, sizeof params, func);
}

struct ggml_tensor *ggml_map_custom1(struct ggml_context *ctx, struct ggml_tensor *a, ggml_custom1_op_t fun,
                                     int n_tasks, void *userdata)
{
    return map_custom1(ctx, a, fun, n_tasks, userdata, false, __func__);
}

struct ggml_tensor *ggml_map_custom1_inplace(struct ggml_context *ctx, struct ggml_tensor *a,
                                             ggml_custom1_op_t fun, int n_tasks, void *userdata)
{
    return map_custom1(ctx, a, fun, n_tasks, userdata, true, __func__);
}

struct ggml_tensor *ggml_map_custom2(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                     ggml_custom2_op_t fun, int n_tasks, void *userdata)
{
    return map_custom2(ctx, a, b, fun, n_tasks, userdata, false, __func__);
}

struct ggml_tensor *ggml_map_custom2_inplace(struct ggml_context *ctx, struct ggml_tensor *a,
                                             struct ggml_tensor *b, ggml_custom2_op_t fun, int n_tasks,
                                             void *userdata)
{
    return map_custom2(ctx, a, b, fun, n_tasks, userdata, true, __func__);
}

struct ggml_tensor *ggml_map_custom3(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                     struct ggml_tensor *c, ggml_custom3_op_t fun, int n_tasks, void *userdata)
{
    return map_custom3(ctx, a, b, c, fun, n_tasks, userdata, false, __func__);
}

struct ggml_tensor *ggml_map_custom3_inplace(struct ggml_context *ctx, struct ggml_tensor *a,
                                             struct ggml_tensor *b, struct ggml_tensor *c,
                                             ggml_custom3_op_t fun, int n_tasks, void *userdata)
{
    return map_custom3(ctx, a, b, c, fun, n_tasks, userdata, true, __func__);
}

/*
 * Checks the operand list of a CUSTOM node (at most max_args entries) and
 * the callback.  Sets *has_null when an operand is NULL (the caller then
 * returns NULL silently).  Logs as func when an argument is bad.
 */
static bool check_custom_operands(struct ggml_tensor **args, int n_args, int max_args, bool has_fun,
                                  int n_tasks, bool *has_null, const char *func)
{
    *has_null = false;
    if (n_args < 0 || n_args > max_args) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "n_args is %d (expected 0 to %d)", n_args, max_args);
        return false;
    }
    if (n_args > 0 && args == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "args is NULL but n_args is %d", n_args);
        return false;
    }
    for (int i = 0; i < n_args; i++)
        if (args[i] == NULL)
            *has_null = true;
    if (*has_null)
        return false;
    return check_custom_args(has_fun, n_tasks, func);
}

struct ggml_tensor *ggml_custom_4d(struct ggml_context *ctx, enum ggml_type type, int64_t ne0, int64_t ne1,
                                   int64_t ne2, int64_t ne3, struct ggml_tensor **args, int n_args,
                                   ggml_custom_op_t fun, int n_tasks, void *userdata)
{
    bool has_null;
    /* upstream keeps one source slot free: n_args < GGML_MAX_SRC */
    if (!check_custom_operands(args, n_args, GGML_MAX_SRC - 1, fun != NULL, n_tasks, &has_null, __func__))
        return NULL;
    const int64_t ne[GGML_MAX_DIMS] = { ne0, ne1, ne2, ne3 };
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, type, GGML_MAX_DIMS, ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    const struct ggml__custom_params params = { fun, n_tasks, userdata };
    ggml__set_op_params(result, &params, sizeof params);
    result->op = GGML_OP_CUSTOM;
    for (int i = 0; i < n_args; i++)
        result->src[i] = args[i];
    return result;
}

struct ggml_tensor *ggml_custom_inplace(struct ggml_context *ctx, struct ggml_tensor *a,
                                        struct ggml_tensor **args, int n_args, ggml_custom_op_t fun,
                                        int n_tasks, void *userdata)
{
    if (a == NULL)
        return NULL;
    bool has_null;
    /* a takes src[0]; upstream allows n_args < GGML_MAX_SRC - 1 */
    if (!check_custom_operands(args, n_args, GGML_MAX_SRC - 2, fun != NULL, n_tasks, &has_null, __func__))
        return NULL;
    struct ggml_tensor *result = ggml__view_tensor_impl(ctx, a, __func__);
    if (result == NULL)
        return NULL;
    const struct ggml__custom_params params = { fun, n_tasks, userdata };
    ggml__set_op_params(result, &params, sizeof params);
    result->op = GGML_OP_CUSTOM;
    result->src[0] = a;
    for (int i = 0; i < n_args; i++)
        result->src[i + 1] = args[i];
    return result;
}
