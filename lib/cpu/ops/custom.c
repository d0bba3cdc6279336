/*
 * custom.c - CPU kernels of MAP_CUSTOM1/2/3 and CUSTOM: they hand the node
 * to the user's callback on the threads it asked for.
 *
 * n_tasks (stored by the constructor) decides how many threads run the
 * callback: min(n_tasks, n_threads), or all n_threads for
 * GGML_N_TASKS_MAX.  Each of those threads calls it exactly once with its
 * own ith and nth = that count; splitting the work is the callback's job.
 * The callback is the user's code, so the reference and fast paths are the
 * same.
 */
#include "config.h"

#include "ggml-impl.h"
#include "cpu-private.h"

/* op_params layouts written by lib/ops-custom.c (upstream's structs). */
struct custom1_params { ggml_custom1_op_t fun; int n_tasks; void *userdata; };
struct custom2_params { ggml_custom2_op_t fun; int n_tasks; void *userdata; };
struct custom3_params { ggml_custom3_op_t fun; int n_tasks; void *userdata; };
struct custom_params  { ggml_custom_op_t  fun; int n_tasks; void *userdata; };

/* Every layout puts n_tasks at the same offset (a function pointer first). */
_Static_assert(offsetof(struct custom1_params, n_tasks) == offsetof(struct custom_params, n_tasks),
               "custom op params differ");

/* Threads that run the callback of dst on a computation of n_threads. */
static int custom_n_tasks(const struct ggml_tensor *dst, int n_threads)
{
    struct custom_params p;
    memcpy(&p, dst->op_params, sizeof p);
    if (p.n_tasks == GGML_N_TASKS_MAX || p.n_tasks > n_threads)
        return n_threads;
    return p.n_tasks;
}

/* A node is computable when it carries a callback. */
static bool custom_supports(const struct ggml_tensor *dst)
{
    struct custom_params p;
    memcpy(&p, dst->op_params, sizeof p);
    return p.fun != NULL && (p.n_tasks > 0 || p.n_tasks == GGML_N_TASKS_MAX);
}

static void map_custom1_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    struct custom1_params p;
    memcpy(&p, dst->op_params, sizeof p);
    p.fun(dst, dst->src[0], params->ith, params->nth, p.userdata);
}

static void map_custom2_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    struct custom2_params p;
    memcpy(&p, dst->op_params, sizeof p);
    p.fun(dst, dst->src[0], dst->src[1], params->ith, params->nth, p.userdata);
}

static void map_custom3_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    struct custom3_params p;
    memcpy(&p, dst->op_params, sizeof p);
    p.fun(dst, dst->src[0], dst->src[1], dst->src[2], params->ith, params->nth, p.userdata);
}

static void custom_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    struct custom_params p;
    memcpy(&p, dst->op_params, sizeof p);
    p.fun(dst, params->ith, params->nth, p.userdata);
}

const struct ggml__op_impl ggml__op_map_custom1 = {
    .kernel = map_custom1_kernel,
    .supports = custom_supports,
    .n_tasks = custom_n_tasks,
};

const struct ggml__op_impl ggml__op_map_custom2 = {
    .kernel = map_custom2_kernel,
    .supports = custom_supports,
    .n_tasks = custom_n_tasks,
};

const struct ggml__op_impl ggml__op_map_custom3 = {
    .kernel = map_custom3_kernel,
    .supports = custom_supports,
    .n_tasks = custom_n_tasks,
};

const struct ggml__op_impl ggml__op_custom = {
    .kernel = custom_kernel,
    .supports = custom_supports,
    .n_tasks = custom_n_tasks,
};
