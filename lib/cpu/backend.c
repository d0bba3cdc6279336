/*
 * cpu/backend.c - the CPU backend object, its device and its registry.
 *
 * The CPU backend computes graphs with the engine of compute.c on a thread
 * pool: one the caller supplies (ggml_backend_cpu_set_threadpool) or one of
 * its own, made for the current thread count on first use.  Scratch memory
 * for the plans is kept in the backend and grown when a graph needs more.
 *
 * A backend computes for one thread at a time (ggml-backend(7)): the calls
 * that use its pool and scratch claim it with an atomic flag, and a second
 * thread arriving meanwhile gets an error instead of sharing them.  Each
 * failure is logged once, where it happens.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ggml-impl.h"
#include "backend-private.h"
#include "cpu-private.h"

struct cpu_backend_context {
    int n_threads;
    struct ggml_threadpool *threadpool;      /* caller's pool, or NULL */
    struct ggml_threadpool *own_pool;        /* made for n_threads when needed */
    uint8_t *work_data;
    size_t work_size;
    ggml_abort_callback abort_callback;
    void *abort_callback_data;
    bool use_ref;
    atomic_bool busy; /* a thread is computing or planning with it */
    /* each node's thread count (ggml__graph_check), for graphs of up to
       node_tasks_size nodes; grown on demand, NULL when that failed */
    uint16_t *node_tasks;
    size_t node_tasks_size;
};

static ggml_guid cpu_backend_guid = {
    0x6c, 0x69, 0x62, 0x67, 0x67, 0x6d, 0x6c, 0x2d, 0x63, 0x70, 0x75, 0x00, 0x00, 0x00, 0x00, 0x01
};

static const char *cpu_backend_get_name(ggml_backend_t backend)
{
    (void) backend;
    return "CPU";
}

static void cpu_backend_free(ggml_backend_t backend)
{
    struct cpu_backend_context *ctx = backend->context;
    ggml_threadpool_free(ctx->own_pool);
    free(ctx->work_data);
    free(ctx->node_tasks);
    free(ctx);
    free(backend);
}

/* The pool to compute on: the caller's, or our own sized to n_threads. */
static struct ggml_threadpool *cpu_backend_pool(struct cpu_backend_context *ctx)
{
    if (ctx->threadpool)
        return ctx->threadpool;
    if (ctx->own_pool && ggml_threadpool_get_n_threads(ctx->own_pool) != ctx->n_threads) {
        ggml_threadpool_free(ctx->own_pool);
        ctx->own_pool = NULL;
    }
    if (ctx->own_pool == NULL) {
        struct ggml_threadpool_params params = ggml_threadpool_params_default(ctx->n_threads);
        ctx->own_pool = ggml_threadpool_new(&params);
    }
    return ctx->own_pool;
}

/* A plan of ours: the cplan, the graph it was made for, and its scratch. */
struct cpu_plan {
    struct ggml_cplan cplan;
    struct ggml_cgraph cgraph;
};

/* The thread count of ctx's plans (ggml_graph_plan's cap applied). */
static int plan_threads(const struct cpu_backend_context *ctx)
{
    return ctx->n_threads < GGML_MAX_N_THREADS ? ctx->n_threads : GGML_MAX_N_THREADS;
}

/* Plans cgraph on ctx's pool with scratch memory (*owned_work: new memory
 * for the caller; NULL: the backend's); checked_work, when not NULL, is
 * the scratch ggml__graph_check found for ctx->n_threads, so that the
 * graph is not walked again.  False when out of memory, logged once (by
 * ggml_threadpool_new, or here as func). */
static bool cpu_prepare(struct cpu_backend_context *ctx, const struct ggml_cgraph *cgraph,
                        struct ggml_cplan *cplan, uint8_t **owned_work, const size_t *checked_work,
                        const char *func)
{
    struct ggml_threadpool *pool = cpu_backend_pool(ctx);
    if (pool == NULL)
        return false;
    if (checked_work != NULL) {
        memset(cplan, 0, sizeof *cplan);
        cplan->n_threads = plan_threads(ctx);
        cplan->threadpool = pool;
        cplan->work_size = *checked_work;
    } else {
        *cplan = ggml_graph_plan(cgraph, ctx->n_threads, pool);
    }
    cplan->abort_callback = ctx->abort_callback;
    cplan->abort_callback_data = ctx->abort_callback_data;
    cplan->use_ref = ctx->use_ref;
    if (cplan->work_size == 0)
        return true;
    if (owned_work != NULL) {
        *owned_work = malloc(cplan->work_size);
        cplan->work_data = *owned_work;
    } else {
        if (ctx->work_size < cplan->work_size) {
            uint8_t *grown = realloc(ctx->work_data, cplan->work_size);
            if (grown == NULL) {
                cplan->work_data = NULL;
                goto out_of_memory;
            }
            ctx->work_data = grown;
            ctx->work_size = cplan->work_size;
        }
        cplan->work_data = ctx->work_data;
    }
    if (cplan->work_data != NULL)
        return true;
out_of_memory:
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory for %zu bytes of CPU backend scratch memory",
                 cplan->work_size);
    return false;
}

static ggml_backend_graph_plan_t cpu_backend_graph_plan_create(ggml_backend_t backend,
                                                                const struct ggml_cgraph *cgraph)
{
    static const char func[] = "ggml_backend_graph_plan_create";
    struct cpu_backend_context *ctx = backend->context;
    struct cpu_plan *plan = calloc(1, sizeof *plan);
    if (plan == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory");
        return NULL;
    }
    if (!ggml__claim(&ctx->busy, "the CPU backend", func)) {
        free(plan);
        return NULL;
    }
    uint8_t *work = NULL;
    const bool prepared = cpu_prepare(ctx, cgraph, &plan->cplan, &work, NULL, func);
    ggml__release(&ctx->busy);
    if (!prepared) {
        free(work);
        free(plan);
        return NULL;
    }
    plan->cgraph = *cgraph;
    return plan;
}

static void cpu_backend_graph_plan_free(ggml_backend_t backend, ggml_backend_graph_plan_t handle)
{
    (void) backend;
    struct cpu_plan *plan = handle;
    free(plan->cplan.work_data);
    free(plan);
}

static enum ggml_status cpu_backend_graph_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t handle)
{
    (void) backend;
    struct cpu_plan *plan = handle;
    if (!ggml__graph_buffers_live(&plan->cgraph, "ggml_backend_graph_plan_compute"))
        return GGML_STATUS_FAILED;
    return ggml_graph_compute(&plan->cgraph, &plan->cplan);
}

static enum ggml_status cpu_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph *cgraph)
{
    static const char func[] = "ggml_backend_graph_compute";
    struct cpu_backend_context *ctx = backend->context;
    if (!ggml__claim(&ctx->busy, "the CPU backend", func))
        return GGML_STATUS_FAILED;
    /* one walk over the graph checks it, sizes the scratch and counts
       each node's threads (when memory for the counts is short, the
       engine counts them again as it goes) */
    if ((size_t) cgraph->n_nodes > ctx->node_tasks_size) {
        free(ctx->node_tasks);
        ctx->node_tasks = malloc((size_t) cgraph->n_nodes * sizeof *ctx->node_tasks);
        ctx->node_tasks_size = ctx->node_tasks != NULL ? (size_t) cgraph->n_nodes : 0;
    }
    uint16_t *node_tasks = (size_t) cgraph->n_nodes <= ctx->node_tasks_size ? ctx->node_tasks : NULL;
    struct ggml_cplan cplan;
    size_t work_size;
    enum ggml_status status = GGML_STATUS_FAILED;
    /* (ggml_backend_graph_compute_async left the buffers to this walk) */
    struct ggml__live_buffers live = GGML__LIVE_BUFFERS_INIT("ggml_backend_graph_compute_async");
    if (ggml__graph_check(cgraph, plan_threads(ctx), &work_size, node_tasks, &live)) {
        if (cpu_prepare(ctx, cgraph, &cplan, NULL, &work_size, func))
            status = ggml__graph_compute_checked(cgraph, &cplan, node_tasks);
        else
            status = GGML_STATUS_ALLOC_FAILED;
    }
    ggml__release(&ctx->busy);
    return status;
}

static const struct ggml_backend_i cpu_backend_iface = {
    .get_name = cpu_backend_get_name,
    .free = cpu_backend_free,
    .set_tensor_async = NULL,
    .get_tensor_async = NULL,
    .cpy_tensor_async = NULL,
    .synchronize = NULL,
    .graph_plan_create = cpu_backend_graph_plan_create,
    .graph_plan_free = cpu_backend_graph_plan_free,
    .graph_plan_update = NULL,
    .graph_plan_compute = cpu_backend_graph_plan_compute,
    .graph_compute = cpu_backend_graph_compute,
    .event_record = NULL,
    .event_wait = NULL,
    .graph_optimize = NULL,
};

/* ----------------------------------------------------------------- device */

static const char *cpu_dev_get_name(ggml_backend_dev_t dev)
{
    (void) dev;
    return "CPU";
}

static const char *cpu_dev_get_description(ggml_backend_dev_t dev)
{
    (void) dev;
    return ggml__cpu_model_name();
}

static void cpu_dev_get_memory(ggml_backend_dev_t dev, size_t *free_bytes, size_t *total_bytes)
{
    (void) dev;
    long page = sysconf(_SC_PAGESIZE);
    long avail = sysconf(_SC_AVPHYS_PAGES);
    long total = sysconf(_SC_PHYS_PAGES);
    *free_bytes = page > 0 && avail > 0 ? (size_t) avail * (size_t) page : 0;
    *total_bytes = page > 0 && total > 0 ? (size_t) total * (size_t) page : 0;
}

static enum ggml_backend_dev_type cpu_dev_get_type(ggml_backend_dev_t dev)
{
    (void) dev;
    return GGML_BACKEND_DEVICE_TYPE_CPU;
}

static void cpu_dev_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props *props)
{
    props->name = cpu_dev_get_name(dev);
    props->description = cpu_dev_get_description(dev);
    cpu_dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->type = GGML_BACKEND_DEVICE_TYPE_CPU;
    props->device_id = NULL;
    props->caps.async = false;
    props->caps.host_buffer = false;
    props->caps.buffer_from_host_ptr = true;
    props->caps.events = false;
    props->caps.mmap_support = true;
}

static ggml_backend_t cpu_dev_init_backend(ggml_backend_dev_t dev, const char *params)
{
    (void) dev;
    (void) params;
    return ggml_backend_cpu_init();
}

static ggml_backend_buffer_type_t cpu_dev_get_buffer_type(ggml_backend_dev_t dev)
{
    (void) dev;
    return ggml_backend_cpu_buffer_type();
}

static ggml_backend_buffer_t cpu_dev_buffer_from_host_ptr(ggml_backend_dev_t dev, void *ptr, size_t size,
                                                          size_t max_tensor_size)
{
    (void) dev;
    (void) max_tensor_size;
    return ggml_backend_cpu_buffer_from_ptr(ptr, size);
}

/* Host memory, or CPU_REPACK buffers as far as their packed tensors allow. */
static bool cpu_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor *op)
{
    (void) dev;
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor *src = op->src[i];
        if (src == NULL)
            continue;
        ggml_backend_buffer_t buffer = src->view_src ? src->view_src->buffer : src->buffer;
        if (buffer != NULL && !ggml_backend_buft_is_host(buffer->buft) && !ggml__cpu_is_repack_buft(buffer->buft))
            return false;
    }
    return ggml__cpu_repack_allows(op) && ggml__cpu_supports(op);
}

static bool cpu_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft)
{
    (void) dev;
    return ggml_backend_buft_is_host(buft) || ggml__cpu_is_repack_buft(buft);
}

static struct ggml_backend_reg cpu_reg;

/* The interface is written in place: a static initializer in ISO C may not
 * copy another object. */
struct ggml_backend_device ggml__cpu_device = {
    .iface = {
        .get_name = cpu_dev_get_name,
        .get_description = cpu_dev_get_description,
        .get_memory = cpu_dev_get_memory,
        .get_type = cpu_dev_get_type,
        .get_props = cpu_dev_get_props,
        .init_backend = cpu_dev_init_backend,
        .get_buffer_type = cpu_dev_get_buffer_type,
        .get_host_buffer_type = NULL,
        .buffer_from_host_ptr = cpu_dev_buffer_from_host_ptr,
        .supports_op = cpu_dev_supports_op,
        .supports_buft = cpu_dev_supports_buft,
        .offload_op = NULL,
        .event_new = NULL,
        .event_free = NULL,
        .event_synchronize = NULL,
    },
    .reg = &cpu_reg,
    .context = NULL,
};

/* --------------------------------------------------------------- registry */

static const char *cpu_reg_get_name(ggml_backend_reg_t reg)
{
    (void) reg;
    return "CPU";
}

static size_t cpu_reg_get_device_count(ggml_backend_reg_t reg)
{
    (void) reg;
    return 1;
}

static ggml_backend_dev_t cpu_reg_get_device(ggml_backend_reg_t reg, size_t index)
{
    (void) reg;
    return index == 0 ? &ggml__cpu_device : NULL;
}

/* Features of this CPU, as name/value pairs ending with a NULL name. */
static struct ggml_backend_feature *cpu_get_features(ggml_backend_reg_t reg)
{
    (void) reg;
    return ggml__cpu_feature_list();
}

static void *cpu_reg_get_proc_address(ggml_backend_reg_t reg, const char *name)
{
    (void) reg;
    if (strcmp(name, "ggml_backend_set_n_threads") == 0)
        return (void *) ggml_backend_cpu_set_n_threads;
    if (strcmp(name, "ggml_backend_get_features") == 0)
        return (void *) cpu_get_features;
    if (strcmp(name, "ggml_backend_set_abort_callback") == 0)
        return (void *) ggml_backend_cpu_set_abort_callback;
    if (strcmp(name, "ggml_backend_cpu_numa_init") == 0)
        return (void *) ggml_numa_init;
    if (strcmp(name, "ggml_backend_cpu_is_numa") == 0)
        return (void *) ggml_is_numa;
    /* this library's: size_t (*)(int n_threads, char *buf, size_t size), see ggml_numa_init(3) */
    if (strcmp(name, "ggml_backend_cpu_describe_placement") == 0)
        return (void *) ggml__cpu_describe_placement;
    if (strcmp(name, "ggml_backend_dev_get_extra_bufts") == 0)
        return (void *) ggml__cpu_extra_bufts;
    /* this library's: bool (*)(enum ggml_type), for the BLAS plugin */
    if (strcmp(name, "ggml_backend_cpu_integer_products") == 0)
        return (void *) ggml__cpu_integer_products;
    return NULL;
}

static struct ggml_backend_reg cpu_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = {
        .get_name = cpu_reg_get_name,
        .get_device_count = cpu_reg_get_device_count,
        .get_device = cpu_reg_get_device,
        .get_proc_address = cpu_reg_get_proc_address,
    },
    .context = NULL,
};

ggml_backend_reg_t ggml_backend_cpu_reg(void)
{
    ggml_cpu_init();
    return &cpu_reg;
}

/* ---------------------------------------------------------------- backend */

ggml_backend_t ggml_backend_cpu_init(void)
{
    ggml_cpu_init();
    struct cpu_backend_context *ctx = calloc(1, sizeof *ctx);
    ggml_backend_t backend = malloc(sizeof *backend);
    if (ctx == NULL || backend == NULL) {
        ggml__error("out of memory");
        free(ctx);
        free(backend);
        return NULL;
    }
    ctx->n_threads = ggml__cpu_physical_cores();
    *backend = (struct ggml_backend) {
        .guid = &cpu_backend_guid,
        .iface = cpu_backend_iface,
        .device = &ggml__cpu_device,
        .context = ctx,
    };
    if (!ggml__handle_add(GGML__HANDLE_BACKEND, backend, __func__)) {
        free(ctx);
        free(backend);
        return NULL;
    }
    return backend;
}

bool ggml_backend_is_cpu(ggml_backend_t backend)
{
    return backend != NULL && ggml_guid_matches(backend->guid, &cpu_backend_guid);
}

/* The context of a CPU backend, or NULL (logged as func). */
static struct cpu_backend_context *cpu_context(ggml_backend_t backend, const char *func)
{
    if (!ggml__handle_check(GGML__HANDLE_BACKEND, backend, func))
        return NULL;
    if (!ggml_backend_is_cpu(backend)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "backend %s is not a CPU backend", ggml_backend_name(backend));
        return NULL;
    }
    return backend->context;
}

void ggml_backend_cpu_set_n_threads(ggml_backend_t backend_cpu, int n_threads)
{
    struct cpu_backend_context *ctx = cpu_context(backend_cpu, __func__);
    if (ctx == NULL)
        return;
    if (n_threads < 1 || n_threads > GGML_MAX_N_THREADS) {
        ggml__error("n_threads must be 1..%d, got %d", GGML_MAX_N_THREADS, n_threads);
        return;
    }
    ctx->n_threads = n_threads;
}

void ggml_backend_cpu_set_threadpool(ggml_backend_t backend_cpu, ggml_threadpool_t threadpool)
{
    struct cpu_backend_context *ctx = cpu_context(backend_cpu, __func__);
    if (ctx == NULL)
        return;
    ctx->threadpool = threadpool;
    if (threadpool)
        ctx->n_threads = ggml_threadpool_get_n_threads(threadpool);
}

void ggml_backend_cpu_set_abort_callback(ggml_backend_t backend_cpu, ggml_abort_callback abort_callback,
                                         void *abort_callback_data)
{
    struct cpu_backend_context *ctx = cpu_context(backend_cpu, __func__);
    if (ctx == NULL)
        return;
    ctx->abort_callback = abort_callback;
    ctx->abort_callback_data = abort_callback_data;
}

void ggml_backend_cpu_set_use_ref(ggml_backend_t backend_cpu, bool use_ref)
{
    struct cpu_backend_context *ctx = cpu_context(backend_cpu, __func__);
    if (ctx != NULL)
        ctx->use_ref = use_ref;
}
