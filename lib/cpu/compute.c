/*
 * compute.c - the CPU backend's graph engine: plans (threads and scratch
 * memory) and the computation of a graph on a thread pool.
 *
 * Every thread of the job walks the nodes in order and computes its share
 * of each node; a barrier separates nodes, except
 *   - nodes that only reinterpret memory (NONE, VIEW, RESHAPE, PERMUTE,
 *     TRANSPOSE), which have nothing to wait for, and
 *   - consecutive nodes that thread 0 computes alone: tiny nodes (every
 *     operand of at most TINY_NODE_ELEMENTS elements) get one thread, as
 *     a barrier costs more than their work; in program order one thread
 *     sees its own writes, and the other threads are parked at the next
 *     barrier, which comes before the first node they share.
 * All threads derive the same barrier positions from the graph alone.
 * Thread 0 polls the abort callback after each node it computes; once it
 * fires, no thread computes a later node, and every thread leaves at the
 * next barrier, so all stop after the same node.
 */
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "ggml-impl.h"
#include "backend-private.h"
#include "cpu-private.h"

/* Scratch of each thread starts on its own cache line. */
#define CACHE_LINE_SIZE 64

/* The op table: one entry per op family member the backend computes. */
static const struct ggml__op_impl *const op_impls[GGML_OP_COUNT] = {
    [GGML_OP_DUP] = &ggml__op_copy,
    [GGML_OP_CPY] = &ggml__op_copy,
    [GGML_OP_CONT] = &ggml__op_copy,
    [GGML_OP_ADD] = &ggml__op_binary,
    [GGML_OP_SUB] = &ggml__op_binary,
    [GGML_OP_MUL] = &ggml__op_binary,
    [GGML_OP_DIV] = &ggml__op_binary,
    [GGML_OP_ADD1] = &ggml__op_add1,
    [GGML_OP_SCALE] = &ggml__op_scale,
    [GGML_OP_SQR] = &ggml__op_math,
    [GGML_OP_SQRT] = &ggml__op_math,
    [GGML_OP_LOG] = &ggml__op_math,
    [GGML_OP_SIN] = &ggml__op_math,
    [GGML_OP_COS] = &ggml__op_math,
    [GGML_OP_CLAMP] = &ggml__op_clamp,
    [GGML_OP_UNARY] = &ggml__op_unary,
    [GGML_OP_LEAKY_RELU] = &ggml__op_leaky_relu,
    [GGML_OP_GLU] = &ggml__op_glu,
    [GGML_OP_SUM] = &ggml__op_sum,
    [GGML_OP_SUM_ROWS] = &ggml__op_sum_rows,
    [GGML_OP_MEAN] = &ggml__op_mean,
    [GGML_OP_ARGMAX] = &ggml__op_argmax,
    [GGML_OP_COUNT_EQUAL] = &ggml__op_count_equal,
    [GGML_OP_REPEAT] = &ggml__op_repeat,
    [GGML_OP_CONCAT] = &ggml__op_concat,
    [GGML_OP_NORM] = &ggml__op_norm,
    [GGML_OP_RMS_NORM] = &ggml__op_rms_norm,
    [GGML_OP_L2_NORM] = &ggml__op_l2_norm,
    [GGML_OP_GROUP_NORM] = &ggml__op_group_norm,
    [GGML_OP_MUL_MAT] = &ggml__op_mul_mat,
    [GGML_OP_MUL_MAT_ID] = &ggml__op_mul_mat_id,
    [GGML_OP_OUT_PROD] = &ggml__op_out_prod,
    [GGML_OP_GET_ROWS] = &ggml__op_get_rows,
    [GGML_OP_SET_ROWS] = &ggml__op_set_rows,
    [GGML_OP_SET] = &ggml__op_set,
    [GGML_OP_ACC] = &ggml__op_acc,
    [GGML_OP_DIAG_MASK_INF] = &ggml__op_diag_mask_inf,
    [GGML_OP_SOFT_MAX] = &ggml__op_soft_max,
    [GGML_OP_ROPE] = &ggml__op_rope,
    [GGML_OP_ROPE_BACK] = &ggml__op_rope,
    [GGML_OP_ARGSORT] = &ggml__op_argsort,
    [GGML_OP_TOP_K] = &ggml__op_top_k,
    [GGML_OP_FLASH_ATTN_EXT] = &ggml__op_flash_attn_ext,
    [GGML_OP_IM2COL] = &ggml__op_im2col,
    [GGML_OP_IM2COL_3D] = &ggml__op_im2col_3d,
    [GGML_OP_COL2IM_1D] = &ggml__op_col2im_1d,
    [GGML_OP_CONV_2D] = &ggml__op_conv_2d,
    [GGML_OP_CONV_3D] = &ggml__op_conv_3d,
    [GGML_OP_CONV_2D_DW] = &ggml__op_conv_2d_dw,
    [GGML_OP_CONV_TRANSPOSE_1D] = &ggml__op_conv_transpose_1d,
    [GGML_OP_CONV_TRANSPOSE_2D] = &ggml__op_conv_transpose_2d,
    [GGML_OP_POOL_1D] = &ggml__op_pool_1d,
    [GGML_OP_POOL_2D] = &ggml__op_pool_2d,
    [GGML_OP_UPSCALE] = &ggml__op_upscale,
    [GGML_OP_PAD] = &ggml__op_pad,
    [GGML_OP_PAD_REFLECT_1D] = &ggml__op_pad_reflect_1d,
    [GGML_OP_ROLL] = &ggml__op_roll,
    [GGML_OP_WIN_PART] = &ggml__op_win_part,
    [GGML_OP_WIN_UNPART] = &ggml__op_win_unpart,
    [GGML_OP_GET_REL_POS] = &ggml__op_get_rel_pos,
    [GGML_OP_ADD_REL_POS] = &ggml__op_add_rel_pos,
    [GGML_OP_ARANGE] = &ggml__op_arange,
    [GGML_OP_TIMESTEP_EMBEDDING] = &ggml__op_timestep_embedding,
    [GGML_OP_CUMSUM] = &ggml__op_cumsum,
    [GGML_OP_TRI] = &ggml__op_tri,
    [GGML_OP_FILL] = &ggml__op_fill,
    [GGML_OP_DIAG] = &ggml__op_diag,
    [GGML_OP_DIAG_MASK_ZERO] = &ggml__op_diag_mask_zero,
    [GGML_OP_REPEAT_BACK] = &ggml__op_repeat_back,
    [GGML_OP_ADD_ID] = &ggml__op_add_id,
    [GGML_OP_SSM_CONV] = &ggml__op_ssm_conv,
    [GGML_OP_SSM_SCAN] = &ggml__op_ssm_scan,
    [GGML_OP_LIGHTNING_INDEXER] = &ggml__op_lightning_indexer,
    [GGML_OP_DSV4_HC_COMB] = &ggml__op_dsv4_hc_comb,
    [GGML_OP_DSV4_HC_PRE] = &ggml__op_dsv4_hc_pre,
    [GGML_OP_DSV4_HC_POST] = &ggml__op_dsv4_hc_post,
    [GGML_OP_RWKV_WKV6] = &ggml__op_rwkv_wkv6,
    [GGML_OP_RWKV_WKV7] = &ggml__op_rwkv_wkv7,
    [GGML_OP_GATED_DELTA_NET] = &ggml__op_gated_delta_net,
    [GGML_OP_GATED_LINEAR_ATTN] = &ggml__op_gated_linear_attn,
    [GGML_OP_SOLVE_TRI] = &ggml__op_solve_tri,
    [GGML_OP_MAP_CUSTOM1] = &ggml__op_map_custom1,
    [GGML_OP_MAP_CUSTOM2] = &ggml__op_map_custom2,
    [GGML_OP_MAP_CUSTOM3] = &ggml__op_map_custom3,
    [GGML_OP_CUSTOM] = &ggml__op_custom,
    [GGML_OP_SILU_BACK] = &ggml__op_silu_back,
    [GGML_OP_RMS_NORM_BACK] = &ggml__op_rms_norm_back,
    [GGML_OP_GET_ROWS_BACK] = &ggml__op_get_rows_back,
    [GGML_OP_SOFT_MAX_BACK] = &ggml__op_soft_max_back,
    [GGML_OP_IM2COL_BACK] = &ggml__op_im2col_back,
    [GGML_OP_POOL_2D_BACK] = &ggml__op_pool_2d_back,
    [GGML_OP_CROSS_ENTROPY_LOSS] = &ggml__op_cross_entropy_loss,
    [GGML_OP_CROSS_ENTROPY_LOSS_BACK] = &ggml__op_cross_entropy_loss_back,
    [GGML_OP_OPT_STEP_ADAMW] = &ggml__op_opt_step_adamw,
    [GGML_OP_OPT_STEP_SGD] = &ggml__op_opt_step_sgd,
};

const struct ggml__op_impl *ggml__cpu_op_impl(enum ggml_op op)
{
    const struct ggml__op_impl *impl = (int) op >= 0 && op < GGML_OP_COUNT ? op_impls[op] : NULL;
    return impl != NULL && impl->kernel != NULL ? impl : NULL;
}

bool ggml__op_is_noop(enum ggml_op op)
{
    return op == GGML_OP_NONE || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE ||
           op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

/*
 * The number of leading sources every node of op has: its constructor
 * sets src[0..n) (later slots are optional, and the kernels test them).
 * Kernels read those sources without testing them, so a node from
 * elsewhere (the RPC server deserializes graphs) must have them.
 */
static int required_sources(enum ggml_op op)
{
    switch (op) {
    case GGML_OP_NONE:
    case GGML_OP_ARANGE:
    case GGML_OP_CUSTOM:
        return 0;
    case GGML_OP_ADD:
    case GGML_OP_ADD1:
    case GGML_OP_SUB:
    case GGML_OP_MUL:
    case GGML_OP_DIV:
    case GGML_OP_ACC:
    case GGML_OP_SET:
    case GGML_OP_CPY:
    case GGML_OP_COUNT_EQUAL:
    case GGML_OP_CONCAT:
    case GGML_OP_MUL_MAT:
    case GGML_OP_OUT_PROD:
    case GGML_OP_GET_ROWS:
    case GGML_OP_GET_ROWS_BACK:
    case GGML_OP_SET_ROWS:
    case GGML_OP_ROPE:
    case GGML_OP_ROPE_BACK:
    case GGML_OP_IM2COL:
    case GGML_OP_IM2COL_3D:
    case GGML_OP_IM2COL_BACK:
    case GGML_OP_CONV_2D:
    case GGML_OP_CONV_3D:
    case GGML_OP_CONV_2D_DW:
    case GGML_OP_CONV_TRANSPOSE_1D:
    case GGML_OP_CONV_TRANSPOSE_2D:
    case GGML_OP_POOL_2D_BACK:
    case GGML_OP_SOLVE_TRI:
    case GGML_OP_SSM_CONV:
    case GGML_OP_DSV4_HC_PRE:
    case GGML_OP_MAP_CUSTOM2:
    case GGML_OP_SILU_BACK:
    case GGML_OP_RMS_NORM_BACK:
    case GGML_OP_SOFT_MAX_BACK:
    case GGML_OP_CROSS_ENTROPY_LOSS:
        return 2;
    case GGML_OP_MUL_MAT_ID:
    case GGML_OP_FLASH_ATTN_EXT:
    case GGML_OP_ADD_ID:
    case GGML_OP_ADD_REL_POS:
    case GGML_OP_DSV4_HC_COMB:
    case GGML_OP_MAP_CUSTOM3:
    case GGML_OP_CROSS_ENTROPY_LOSS_BACK:
    case GGML_OP_OPT_STEP_SGD:
        return 3;
    case GGML_OP_LIGHTNING_INDEXER:
    case GGML_OP_DSV4_HC_POST:
        return 4;
    case GGML_OP_GATED_LINEAR_ATTN:
    case GGML_OP_OPT_STEP_ADAMW:
        return 5;
    case GGML_OP_RWKV_WKV6:
    case GGML_OP_GATED_DELTA_NET:
        return 6;
    case GGML_OP_SSM_SCAN:
    case GGML_OP_RWKV_WKV7:
        return 7;
    default:
        return 1;
    }
}

/* The op's own support test, once every operand's layout passed: the
   required sources are there, then the op's supports. */
static inline bool impl_accepts(const struct ggml__op_impl *impl, const struct ggml_tensor *node)
{
    if (impl == NULL)
        return false;
    for (int j = 0; j < required_sources(node->op); j++)
        if (node->src[j] == NULL)
            return false;
    return impl->supports == NULL || impl->supports(node);
}

bool ggml__cpu_supports(const struct ggml_tensor *node)
{
    if (ggml__op_is_noop(node->op))
        return true;
    /* every kernel addresses its operands through their strides */
    if (!ggml__layout_in_bounds(node))
        return false;
    for (int j = 0; j < GGML_MAX_SRC; j++)
        if (node->src[j] != NULL && !ggml__layout_in_bounds(node->src[j]))
            return false;
    return impl_accepts(ggml__cpu_op_impl(node->op), node);
}

/* Asks for the cache lines of t the graph walk reads (shape, op, sources,
   data) while it is busy with the node before. */
static inline void prefetch_node(const struct ggml_tensor *t)
{
    const char *p = (const char *) t;
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
    __builtin_prefetch(p + 128);
    __builtin_prefetch(p + 192);
    __builtin_prefetch(p + 256);
}

/* Nodes the engine skips: nothing to compute, or not marked for compute. */
static bool skip_node(const struct ggml_tensor *node)
{
    return ggml__op_is_noop(node->op) || ggml__has_no_elements(node) ||
           !(node->flags & GGML_TENSOR_FLAG_COMPUTE);
}

/*
 * Nodes whose operands all have at most this many elements run on one
 * thread: at most a few microseconds of work, less than a barrier costs.
 */
#define TINY_NODE_ELEMENTS 1024

static bool tiny_tensor(const struct ggml_tensor *t)
{
    return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3] <= TINY_NODE_ELEMENTS;
}

static bool tiny_node(const struct ggml_tensor *node)
{
    if (!tiny_tensor(node))
        return false;
    for (int j = 0; j < GGML_MAX_SRC; j++)
        if (node->src[j] != NULL && !tiny_tensor(node->src[j]))
            return false;
    return true;
}

/*
 * Threads that compute node: the op's own count, or every thread (one for
 * a tiny node).  Kernels that meet at ggml__threadpool_barrier may get
 * one thread: with one thread their barrier is a no-op (the engine passes
 * no pool then).
 */
static int tasks_of(const struct ggml__op_impl *impl, const struct ggml_tensor *node, int n_threads, bool tiny)
{
    int n = impl->n_tasks ? impl->n_tasks(node, n_threads) : tiny ? 1 : n_threads;
    return n < 1 ? 1 : n > n_threads ? n_threads : n;
}

static int node_n_tasks(const struct ggml_tensor *node, int n_threads)
{
    const struct ggml__op_impl *impl = ggml__cpu_op_impl(node->op);
    if (skip_node(node) || impl == NULL)
        return 1;
    return tasks_of(impl, node, n_threads, tiny_node(node));
}

struct ggml_cplan ggml_graph_plan(const struct ggml_cgraph *cgraph, int n_threads, struct ggml_threadpool *threadpool)
{
    struct ggml_cplan plan;
    memset(&plan, 0, sizeof plan);
    if (cgraph == NULL) {
        ggml__error("cgraph is NULL");
        return plan;
    }
    /* a count given wins; the computation caps it at the pool's size */
    if (n_threads <= 0)
        n_threads = threadpool != NULL ? ggml_threadpool_get_n_threads(threadpool) : GGML_DEFAULT_N_THREADS;
    if (n_threads > GGML_MAX_N_THREADS)
        n_threads = GGML_MAX_N_THREADS;

    size_t work_size = 0;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggml_tensor *node = cgraph->nodes[i];
        const struct ggml__op_impl *impl = ggml__cpu_op_impl(node->op);
        /* work_size sees only nodes its kernel accepts; the others fail
         * in ggml_graph_compute */
        if (skip_node(node) || impl == NULL || impl->work_size == NULL || !ggml__cpu_supports(node))
            continue;
        size_t size = impl->work_size(node, node_n_tasks(node, n_threads));
        if (size > work_size)
            work_size = size;
    }
    if (work_size > 0)
        work_size += CACHE_LINE_SIZE * (size_t) n_threads;

    plan.work_size = work_size;
    plan.n_threads = n_threads;
    plan.threadpool = threadpool;
    return plan;
}

/* Shared state of one graph computation. */
struct compute_state {
    struct ggml_cgraph *cgraph;
    const struct ggml_cplan *plan;
    struct ggml_threadpool *pool;
    const uint16_t *node_tasks; /* from ggml__graph_check, or NULL */
    /*
     * Index of the node after which the computation stops (INT_MAX: none).
     * Thread 0 writes it before the node's barrier; every thread reads it
     * after that barrier and compares it with the node it has just passed,
     * so all stop at the same node whatever their speed.
     */
    atomic_int abort_after;
};

/*
 * MIRROR: runs the kernel with the sources that live in replicated weight
 * buffers read from the copy on the thread's node.  The kernel gets private
 * copies of the node and of those sources that differ only in where the
 * sources' data is; dst's data is the shared one, so what it writes is
 * what the other threads see.
 */
static void run_on_local_copies(const struct ggml__op_impl *impl, const struct ggml__compute_params *params,
                                struct ggml_tensor *node, int numa_node)
{
    struct ggml_tensor local_node = *node;
    struct ggml_tensor local_src[GGML_MAX_SRC];
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        void *data = node->src[j] != NULL ? ggml__cpu_buffer_local_data(node->src[j], numa_node) : NULL;
        if (data == NULL)
            continue;
        local_src[j] = *node->src[j];
        local_src[j].data = data;
        local_node.src[j] = &local_src[j];
    }
    impl->kernel(params, &local_node);
}

static void compute_job(void *arg, int ith, int nth)
{
    struct compute_state *state = arg;
    const struct ggml_cplan *plan = state->plan;
    /* the NUMA node whose weight copies this thread reads (0: the primary) */
    const int node_in_mirror = ggml__cpu_mirrored_buffers() > 0 ? ggml__threadpool_thread_node(state->pool, ith) : 0;
    const struct ggml__cpu_kernels *kernels = ggml__kernels();
    /* the last node computed, when the barrier after it is still to pass */
    int unsynced = -1;
    bool unsynced_alone = false; /* ... and thread 0 computed it alone */

    const uint16_t *node_tasks = state->node_tasks;
    for (int i = 0; i < state->cgraph->n_nodes; i++) {
        struct ggml_tensor *node = state->cgraph->nodes[i];
        int n_tasks;
        if (node_tasks != NULL) {
            n_tasks = node_tasks[i] < nth ? node_tasks[i] : nth;
            if (n_tasks == 0)
                continue;
        } else {
            if (skip_node(node))
                continue;
            n_tasks = node_n_tasks(node, nth);
        }
        if (unsynced >= 0 && !(unsynced_alone && n_tasks == 1)) {
            ggml__threadpool_barrier(state->pool);
            if (atomic_load(&state->abort_after) <= unsynced)
                return;
        }
        unsynced = i;
        unsynced_alone = n_tasks == 1;
        if (ith >= n_tasks || atomic_load(&state->abort_after) < i)
            continue;
        const struct ggml__op_impl *impl = ggml__cpu_op_impl(node->op);
        const struct ggml__compute_params params = {
            .ith = ith,
            .nth = n_tasks,
            .wsize = plan->work_size,
            .wdata = plan->work_data,
            /* a node of one thread has no one to meet at a barrier */
            .pool = n_tasks > 1 ? state->pool : NULL,
            .use_ref = plan->use_ref,
            .kernels = kernels,
        };
        if (node_in_mirror > 0)
            run_on_local_copies(impl, &params, node, node_in_mirror);
        else
            impl->kernel(&params, node);
        if (ith == 0 && plan->abort_callback && atomic_load(&state->abort_after) == INT_MAX &&
            plan->abort_callback(plan->abort_callback_data))
            atomic_store(&state->abort_after, i);
    }
}

/* A pool kept for plans that name none, grown on demand. */
static pthread_mutex_t default_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ggml_threadpool *default_pool;

static struct ggml_threadpool *acquire_default_pool(int n_threads)
{
    pthread_mutex_lock(&default_pool_lock);
    if (default_pool == NULL || ggml_threadpool_get_n_threads(default_pool) < n_threads) {
        ggml_threadpool_free(default_pool);
        struct ggml_threadpool_params params = ggml_threadpool_params_default(n_threads);
        default_pool = ggml_threadpool_new(&params);
    }
    struct ggml_threadpool *pool = default_pool;
    if (pool == NULL)
        pthread_mutex_unlock(&default_pool_lock);
    return pool; /* the lock stays held while the pool computes */
}

static void release_default_pool(void)
{
    pthread_mutex_unlock(&default_pool_lock);
}

/*
 * The checks of ggml__cpu_supports (the same predicates, sources the walk
 * accepted just before skipped) and of memory for one node, in one
 * pass over its sources that also tells whether the node is tiny.
 * checked holds the last nodes this walk accepted: a source among them
 * passed all this already (in a chain, every source).  Logs the first
 * problem, in the order: not supported, no memory of the node, no memory
 * of a source.
 */
static bool check_node(const struct ggml_tensor *node, const struct ggml__op_impl *impl, int i,
                       const struct ggml_tensor *const checked[2], struct ggml__live_buffers *live, bool *tiny)
{
    bool supported = impl != NULL && ggml__layout_in_bounds(node);
    int no_memory_src = -1;
    *tiny = tiny_tensor(node);
    for (int j = 0; supported && j < GGML_MAX_SRC; j++) {
        const struct ggml_tensor *src = node->src[j];
        if (src == NULL)
            continue;
        *tiny = *tiny && tiny_tensor(src);
        if (src == checked[0] || src == checked[1])
            continue;
        supported = ggml__layout_in_bounds(src);
        if (no_memory_src < 0 && src->data == NULL && !ggml__has_no_elements(src))
            no_memory_src = j;
        if (live != NULL && !ggml__tensor_buffer_live(live, src))
            return false;
    }
    if (live != NULL && !ggml__tensor_buffer_live(live, node))
        return false;
    if (!supported || !impl_accepts(impl, node)) {
        ggml__error("node %d ('%s', %s %s) is not supported by the CPU backend", i, node->name,
                    ggml_op_desc(node), ggml_type_name(node->type));
        return false;
    }
    if (node->data == NULL) {
        ggml__error("node %d ('%s') has no memory", i, node->name);
        return false;
    }
    if (no_memory_src >= 0) {
        ggml__error("source %d ('%s') of node %d ('%s') has no memory (views need "
                    "ggml_backend_view_init once their source is allocated)",
                    no_memory_src, node->src[no_memory_src]->name, i, node->name);
        return false;
    }
    return true;
}

bool ggml__graph_check(const struct ggml_cgraph *cgraph, int n_threads, size_t *work_size, uint16_t *node_tasks,
                       struct ggml__live_buffers *live)
{
    *work_size = 0;
    const struct ggml_tensor *checked[2] = { NULL, NULL };
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggml_tensor *node = cgraph->nodes[i];
        if (i + 1 < cgraph->n_nodes)
            prefetch_node(cgraph->nodes[i + 1]);
        bool tiny;
        if (skip_node(node)) {
            if (node_tasks != NULL)
                node_tasks[i] = 0;
            continue;
        }
        const struct ggml__op_impl *impl = ggml__cpu_op_impl(node->op);
        if (!check_node(node, impl, i, checked, live, &tiny))
            return false;
        checked[i & 1] = node;
        const int n_tasks = tasks_of(impl, node, n_threads, tiny);
        if (node_tasks != NULL)
            node_tasks[i] = (uint16_t) n_tasks;
        if (impl->work_size != NULL) {
            const size_t size = impl->work_size(node, n_tasks);
            *work_size = size > *work_size ? size : *work_size;
        }
    }
    /* as ggml_graph_plan counts it */
    if (*work_size > 0)
        *work_size += CACHE_LINE_SIZE * (size_t) n_threads;
    return true;
}

enum ggml_status ggml__graph_compute_checked(struct ggml_cgraph *cgraph, const struct ggml_cplan *cplan,
                                             const uint16_t *node_tasks)
{
    struct ggml_threadpool *pool = cplan->threadpool;
    bool own_pool = pool == NULL;
    if (own_pool && (pool = acquire_default_pool(cplan->n_threads)) == NULL)
        return GGML_STATUS_FAILED;

    int n_threads = cplan->n_threads < ggml_threadpool_get_n_threads(pool) ? cplan->n_threads
                                                                             : ggml_threadpool_get_n_threads(pool);
    /* counts made for as many threads as the job has */
    if (n_threads != (cplan->n_threads > GGML_MAX_N_THREADS ? GGML_MAX_N_THREADS : cplan->n_threads))
        node_tasks = NULL;
    struct compute_state state = { .cgraph = cgraph, .plan = cplan, .pool = pool, .node_tasks = node_tasks };
    atomic_init(&state.abort_after, INT_MAX);
    const bool ran = ggml__threadpool_run(pool, n_threads, compute_job, &state);
    if (own_pool)
        release_default_pool();
    if (!ran) {
        ggml__error("the thread pool is computing another graph, from another thread "
                    "(a pool computes one graph at a time)");
        return GGML_STATUS_FAILED;
    }
    return atomic_load(&state.abort_after) == INT_MAX ? GGML_STATUS_SUCCESS : GGML_STATUS_ABORTED;
}

enum ggml_status ggml_graph_compute(struct ggml_cgraph *cgraph, struct ggml_cplan *cplan)
{
    if (cgraph == NULL || cplan == NULL) {
        ggml__error("%s is NULL", cgraph == NULL ? "cgraph" : "cplan");
        return GGML_STATUS_FAILED;
    }
    if (ggml__graph_failed(cgraph)) {
        ggml__error("the graph was built from a NULL tensor (see the first error logged)");
        return GGML_STATUS_FAILED;
    }
    if (cplan->n_threads <= 0) {
        ggml__error("the plan has %d threads; make it with ggml_graph_plan", cplan->n_threads);
        return GGML_STATUS_FAILED;
    }
    /* the thread counts of up to a few hundred nodes on the stack, of
       larger graphs in memory of their own when there is some */
    uint16_t small_tasks[512];
    uint16_t *node_tasks = (size_t) cgraph->n_nodes <= sizeof small_tasks / sizeof small_tasks[0]
                               ? small_tasks
                               : malloc((size_t) cgraph->n_nodes * sizeof *node_tasks);
    size_t need_work;
    enum ggml_status status = GGML_STATUS_FAILED;
    if (!ggml__graph_check(cgraph, cplan->n_threads > GGML_MAX_N_THREADS ? GGML_MAX_N_THREADS : cplan->n_threads,
                           &need_work, node_tasks, NULL))
        ; /* logged */
    else if (need_work > 0 && (cplan->work_data == NULL || cplan->work_size < need_work))
        ggml__error("the plan's work buffer has %zu bytes at %p; this graph needs %zu",
                    cplan->work_size, (void *) cplan->work_data, need_work);
    else
        status = ggml__graph_compute_checked(cgraph, cplan, node_tasks);
    if (node_tasks != small_tasks)
        free(node_tasks);
    return status;
}

enum ggml_status ggml_graph_compute_with_ctx(struct ggml_context *ctx, struct ggml_cgraph *cgraph, int n_threads)
{
    if (ctx == NULL) {
        ggml__error("ctx is NULL");
        return GGML_STATUS_FAILED;
    }
    struct ggml_cplan plan = ggml_graph_plan(cgraph, n_threads, NULL);
    if (plan.n_threads == 0)
        return GGML_STATUS_FAILED;
    if (plan.work_size > 0) {
        plan.work_data = ggml_new_buffer(ctx, plan.work_size);
        if (plan.work_data == NULL)
            return GGML_STATUS_ALLOC_FAILED;
    }
    return ggml_graph_compute(cgraph, &plan);
}
