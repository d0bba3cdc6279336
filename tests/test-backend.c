/*
 * test-backend.c - backends (streams), events and devices through the
 * public wrappers: names and GUIDs, default buffer type and allocation,
 * the asynchronous transfers and their synchronous fallbacks, tensor copies
 * between backends, synchronize, graph plans, graph computation, the
 * support queries, events, every ggml_backend_dev_* wrapper, graph copies
 * and ggml_backend_compare_graph_backend, and the handle checks (NULL,
 * freed and double-freed backends and events).
 *
 * The test defines one registry "TestReg" with two devices of its own:
 *
 *   "TestMin0"   every optional member of the device and backend tables
 *                NULL (host buffer type, buffer_from_host_ptr, offload_op,
 *                events, async transfers, cpy_tensor_async, synchronize,
 *                graph plans, event_record/event_wait), so that each
 *                default the library documents is exercised;
 *   "TestFull0"  every member present and counted, so that each wrapper is
 *                seen to call it.
 *
 * Each device has a non-host buffer type whose bytes live in a private
 * storage block behind a poisoned base address: data can only move through
 * set_tensor/get_tensor.  The backends "compute" F32 CPY, CONT and DUP nodes
 * (view ops and leafs need no work) by reading that storage directly.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "tap.h"

#define POISON 0xCC
#define MAX_RECORDED 64

/* Calls of the members of the in-test tables since the last reset_calls(). */
static struct {
    int init_backend, backend_free;
    int set_async, get_async, set_2d_async, get_2d_async, cpy_async, synchronize;
    int plan_create, plan_free, plan_update, plan_compute, graph_compute;
    int event_record, event_wait, event_new, event_free, event_sync;
    int supports_op, supports_buft, offload_op, host_buft, from_host_ptr;
    int buffer_alloc, buffer_free;
} calls;

static void reset_calls(void)
{
    memset(&calls, 0, sizeof calls);
}

/* ---------------------------------------------------- in-test buffer type */

struct tk_buffer {
    unsigned char *storage;  /* the bytes */
    unsigned char *base;     /* poisoned block handed out as the base */
    size_t size;
};

static int violations; /* ranges outside a test buffer seen by its members */

static unsigned char *tk_locate(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor,
                                size_t offset, size_t size)
{
    struct tk_buffer *kb = buffer->context;
    uintptr_t at = (uintptr_t) tensor->data, lo = (uintptr_t) kb->base;
    if (at < lo || at - lo > kb->size) {
        violations++;
        return NULL;
    }
    size_t room = kb->size - (size_t) (at - lo);
    if (offset > room || size > room - offset) {
        violations++;
        return NULL;
    }
    return kb->storage + (at - lo) + offset;
}

static void tk_buffer_free(ggml_backend_buffer_t buffer)
{
    struct tk_buffer *kb = buffer->context;
    calls.buffer_free++;
    free(kb->storage);
    free(kb->base);
    free(kb);
}

static void *tk_buffer_get_base(ggml_backend_buffer_t buffer)
{
    return ((struct tk_buffer *) buffer->context)->base;
}

static void tk_buffer_memset(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, uint8_t value,
                             size_t offset, size_t size)
{
    unsigned char *p = tk_locate(buffer, tensor, offset, size);
    if (p)
        memset(p, value, size);
}

static void tk_buffer_set(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, const void *data,
                          size_t offset, size_t size)
{
    unsigned char *p = tk_locate(buffer, tensor, offset, size);
    if (p)
        memcpy(p, data, size);
}

static void tk_buffer_get(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor, void *data,
                          size_t offset, size_t size)
{
    unsigned char *p = tk_locate(buffer, tensor, offset, size);
    if (p)
        memcpy(data, p, size);
}

static void tk_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value)
{
    struct tk_buffer *kb = buffer->context;
    memset(kb->storage, value, kb->size);
}

static const struct ggml_backend_buffer_i tk_buffer_iface = {
    .free_buffer = tk_buffer_free,
    .get_base = tk_buffer_get_base,
    .memset_tensor = tk_buffer_memset,
    .set_tensor = tk_buffer_set,
    .get_tensor = tk_buffer_get,
    .clear = tk_buffer_clear,
};

static const char *tk_buft_name(ggml_backend_buffer_type_t buft)
{
    return (const char *) buft->context;
}

static ggml_backend_buffer_t tk_buft_alloc(ggml_backend_buffer_type_t buft, size_t size)
{
    calls.buffer_alloc++;
    struct tk_buffer *kb = calloc(1, sizeof *kb);
    if (kb == NULL)
        return NULL;
    kb->size = size;
    kb->storage = calloc(1, size);
    kb->base = malloc(size);
    if (kb->storage == NULL || kb->base == NULL) {
        free(kb->storage);
        free(kb->base);
        free(kb);
        return NULL;
    }
    memset(kb->base, POISON, size);
    return ggml_backend_buffer_init(buft, tk_buffer_iface, kb, size);
}

static bool is_test_buffer(ggml_backend_buffer_t buffer)
{
    return buffer != NULL && buffer->buft->iface.alloc_buffer == tk_buft_alloc;
}

/* Where t's bytes really are: storage for test buffers, data otherwise. */
static unsigned char *host_ptr(const struct ggml_tensor *t)
{
    ggml_backend_buffer_t b = t->view_src ? t->view_src->buffer : t->buffer;
    if (is_test_buffer(b)) {
        struct tk_buffer *kb = b->context;
        return kb->storage + ((unsigned char *) t->data - kb->base);
    }
    return t->data;
}

/* --------------------------------------------------------- in-test backend */

/* State of one in-test backend (stream). */
struct tk_backend {
    int graph_compute;                            /* graph_compute calls */
    int n_computed;                               /* nodes computed, in order */
    const struct ggml_tensor *computed[MAX_RECORDED];
    int largest_graph;                            /* most nodes in one call */
    bool cpy_async_accepts;                       /* cpy_tensor_async answer (full) */
};

struct tk_device {
    const char *name;
    const char *description;
    enum ggml_backend_dev_type type;
    bool full;
    bool fail_init;
    bool fail_init_logged;   /* fail after a library call that logged its error */
    const char *last_params;
    struct ggml_backend_buffer_type buft;
};

static ggml_guid min_guid = { 0x6d, 0x69, 0x6e, 1 };
static ggml_guid full_guid = { 0x66, 0x75, 0x6c, 2 };

static struct tk_backend *kb_of(ggml_backend_t backend)
{
    return backend->context;
}

static const char *tk_backend_name(ggml_backend_t backend)
{
    return ((struct tk_device *) backend->device->context)->full ? "TestFull" : "TestMin";
}

static void tk_backend_free(ggml_backend_t backend)
{
    calls.backend_free++;
    free(backend->context);
    free(backend);
}

/* Element k (in row-major logical order) of an F32 tensor at bytes p. */
static float *f32_at(const struct ggml_tensor *t, unsigned char *p, int64_t k)
{
    int64_t i0 = k % t->ne[0], r = k / t->ne[0];
    int64_t i1 = r % t->ne[1];
    r /= t->ne[1];
    int64_t i2 = r % t->ne[2], i3 = r / t->ne[2];
    return (float *) (p + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3]);
}

static enum ggml_status tk_compute(ggml_backend_t backend, struct ggml_cgraph *cgraph)
{
    struct tk_backend *kb = kb_of(backend);
    int n = ggml_graph_n_nodes(cgraph);
    if (n > kb->largest_graph)
        kb->largest_graph = n;
    for (int i = 0; i < n; i++) {
        struct ggml_tensor *node = ggml_graph_node(cgraph, i);
        switch (node->op) {
        case GGML_OP_NONE:
        case GGML_OP_VIEW:
        case GGML_OP_RESHAPE:
        case GGML_OP_PERMUTE:
        case GGML_OP_TRANSPOSE:
            break;
        case GGML_OP_CPY:
        case GGML_OP_CONT:
        case GGML_OP_DUP: {
            const struct ggml_tensor *src = node->src[0];
            if (src->type != GGML_TYPE_F32 || node->type != GGML_TYPE_F32 ||
                ggml_nelements(src) != ggml_nelements(node))
                return GGML_STATUS_FAILED;
            unsigned char *from = host_ptr(src), *to = host_ptr(node);
            for (int64_t k = 0; k < ggml_nelements(node); k++)
                *f32_at(node, to, k) = *f32_at(src, from, k);
            break;
        }
        default:
            return GGML_STATUS_FAILED;
        }
        if (kb->n_computed < MAX_RECORDED)
            kb->computed[kb->n_computed++] = node;
    }
    return GGML_STATUS_SUCCESS;
}

static enum ggml_status tk_graph_compute(ggml_backend_t backend, struct ggml_cgraph *cgraph)
{
    calls.graph_compute++;
    kb_of(backend)->graph_compute++;
    return tk_compute(backend, cgraph);
}

static void tk_set_async(ggml_backend_t backend, struct ggml_tensor *tensor, const void *data,
                         size_t offset, size_t size)
{
    (void) backend;
    calls.set_async++;
    ggml_backend_buffer_t b = tensor->view_src ? tensor->view_src->buffer : tensor->buffer;
    b->iface.set_tensor(b, tensor, data, offset, size);
}

static void tk_get_async(ggml_backend_t backend, const struct ggml_tensor *tensor, void *data,
                         size_t offset, size_t size)
{
    (void) backend;
    calls.get_async++;
    ggml_backend_buffer_t b = tensor->view_src ? tensor->view_src->buffer : tensor->buffer;
    b->iface.get_tensor(b, tensor, data, offset, size);
}

/* The 2-D forms: the runs one by one through the buffer, counted once a call. */
static void tk_set_2d_async(ggml_backend_t backend, struct ggml_tensor *tensor, const void *data, size_t offset,
                            size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data)
{
    (void) backend;
    calls.set_2d_async++;
    ggml_backend_buffer_t b = tensor->view_src ? tensor->view_src->buffer : tensor->buffer;
    for (size_t i = 0; i < n_copies; i++)
        b->iface.set_tensor(b, tensor, (const char *) data + i * stride_data, offset + i * stride_tensor, size);
}

static void tk_get_2d_async(ggml_backend_t backend, const struct ggml_tensor *tensor, void *data, size_t offset,
                            size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data)
{
    (void) backend;
    calls.get_2d_async++;
    ggml_backend_buffer_t b = tensor->view_src ? tensor->view_src->buffer : tensor->buffer;
    for (size_t i = 0; i < n_copies; i++)
        b->iface.get_tensor(b, tensor, (char *) data + i * stride_data, offset + i * stride_tensor, size);
}

static bool tk_cpy_async(ggml_backend_t backend_src, ggml_backend_t backend_dst,
                         const struct ggml_tensor *src, struct ggml_tensor *dst)
{
    (void) backend_src;
    calls.cpy_async++;
    if (!kb_of(backend_dst)->cpy_async_accepts)
        return false;
    memcpy(host_ptr(dst), host_ptr(src), ggml_nbytes(src));
    return true;
}

static void tk_synchronize(ggml_backend_t backend)
{
    (void) backend;
    calls.synchronize++;
}

struct tk_plan {
    struct ggml_cgraph *graph;
};

static ggml_backend_graph_plan_t tk_plan_create(ggml_backend_t backend, const struct ggml_cgraph *cgraph)
{
    (void) backend;
    calls.plan_create++;
    struct tk_plan *plan = malloc(sizeof *plan);
    if (plan)
        plan->graph = (struct ggml_cgraph *) cgraph;
    return plan;
}

static void tk_plan_free(ggml_backend_t backend, ggml_backend_graph_plan_t plan)
{
    (void) backend;
    calls.plan_free++;
    free(plan);
}

static void tk_plan_update(ggml_backend_t backend, ggml_backend_graph_plan_t plan, const struct ggml_cgraph *cgraph)
{
    (void) backend;
    calls.plan_update++;
    ((struct tk_plan *) plan)->graph = (struct ggml_cgraph *) cgraph;
}

static enum ggml_status tk_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t plan)
{
    calls.plan_compute++;
    return tk_compute(backend, ((struct tk_plan *) plan)->graph);
}

static void tk_event_record(ggml_backend_t backend, ggml_backend_event_t event)
{
    (void) backend;
    (void) event;
    calls.event_record++;
}

static void tk_event_wait(ggml_backend_t backend, ggml_backend_event_t event)
{
    (void) backend;
    (void) event;
    calls.event_wait++;
}

static void tk_graph_optimize(ggml_backend_t backend, struct ggml_cgraph *cgraph)
{
    (void) backend;
    (void) cgraph;
}

static const struct ggml_backend_i min_backend_iface = {
    .get_name = tk_backend_name,
    .free = tk_backend_free,
    .graph_compute = tk_graph_compute,
};

static const struct ggml_backend_i full_backend_iface = {
    .get_name = tk_backend_name,
    .free = tk_backend_free,
    .set_tensor_async = tk_set_async,
    .get_tensor_async = tk_get_async,
    .set_tensor_2d_async = tk_set_2d_async,
    .get_tensor_2d_async = tk_get_2d_async,
    .cpy_tensor_async = tk_cpy_async,
    .synchronize = tk_synchronize,
    .graph_plan_create = tk_plan_create,
    .graph_plan_free = tk_plan_free,
    .graph_plan_update = tk_plan_update,
    .graph_plan_compute = tk_plan_compute,
    .graph_compute = tk_graph_compute,
    .event_record = tk_event_record,
    .event_wait = tk_event_wait,
    .graph_optimize = tk_graph_optimize,
};

/* ---------------------------------------------------------- in-test device */

static struct tk_device *kd_of(ggml_backend_dev_t dev)
{
    return dev->context;
}

static const char *tk_dev_name(ggml_backend_dev_t dev)
{
    return kd_of(dev)->name;
}

static const char *tk_dev_description(ggml_backend_dev_t dev)
{
    return kd_of(dev)->description;
}

static void tk_dev_memory(ggml_backend_dev_t dev, size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = kd_of(dev)->full ? 3000 : 1000;
    *total_bytes = kd_of(dev)->full ? 4000 : 2000;
}

static enum ggml_backend_dev_type tk_dev_type(ggml_backend_dev_t dev)
{
    return kd_of(dev)->type;
}

/* The minimal device fills the basic fields only: the wrapper must have
 * zeroed the rest (device_id, caps). */
static void tk_dev_props_min(ggml_backend_dev_t dev, struct ggml_backend_dev_props *props)
{
    props->name = tk_dev_name(dev);
    props->description = tk_dev_description(dev);
    tk_dev_memory(dev, &props->memory_free, &props->memory_total);
    props->type = tk_dev_type(dev);
}

static void tk_dev_props_full(ggml_backend_dev_t dev, struct ggml_backend_dev_props *props)
{
    tk_dev_props_min(dev, props);
    props->device_id = "0000:3b:00.0";
    props->caps.async = true;
    props->caps.host_buffer = true;
    props->caps.buffer_from_host_ptr = true;
    props->caps.events = true;
}

static ggml_backend_t tk_dev_init(ggml_backend_dev_t dev, const char *params)
{
    struct tk_device *kd = kd_of(dev);
    calls.init_backend++;
    kd->last_params = params;
    if (kd->fail_init)
        return NULL;
    if (kd->fail_init_logged) {
        ggml_backend_buft_alloc_buffer(NULL, 1); /* refused: logs one error */
        return NULL;
    }
    ggml_backend_t backend = calloc(1, sizeof *backend);
    struct tk_backend *kb = calloc(1, sizeof *kb);
    if (backend == NULL || kb == NULL) {
        free(backend);
        free(kb);
        return NULL;
    }
    backend->guid = kd->full ? &full_guid : &min_guid;
    backend->iface = kd->full ? full_backend_iface : min_backend_iface;
    backend->device = dev;
    backend->context = kb;
    return backend;
}

static ggml_backend_buffer_type_t tk_dev_buft(ggml_backend_dev_t dev)
{
    return &kd_of(dev)->buft;
}

static ggml_backend_buffer_type_t tk_dev_host_buft(ggml_backend_dev_t dev)
{
    (void) dev;
    calls.host_buft++;
    return ggml_backend_cpu_buffer_type();
}

static size_t last_from_ptr_size, last_from_ptr_max;

static ggml_backend_buffer_t tk_dev_from_host_ptr(ggml_backend_dev_t dev, void *ptr, size_t size,
                                                  size_t max_tensor_size)
{
    (void) dev;
    calls.from_host_ptr++;
    last_from_ptr_size = size;
    last_from_ptr_max = max_tensor_size;
    return ggml_backend_cpu_buffer_from_ptr(ptr, size);
}

static bool tk_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor *op)
{
    (void) dev;
    calls.supports_op++;
    return op->op == GGML_OP_CPY || op->op == GGML_OP_CONT || op->op == GGML_OP_DUP || op->op == GGML_OP_NONE;
}

static bool tk_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft)
{
    calls.supports_buft++;
    return buft == &kd_of(dev)->buft;
}

static bool tk_dev_offload_op(ggml_backend_dev_t dev, const struct ggml_tensor *op)
{
    (void) dev;
    calls.offload_op++;
    return op->op == GGML_OP_CPY;
}

static ggml_backend_event_t tk_event_new(ggml_backend_dev_t dev)
{
    calls.event_new++;
    ggml_backend_event_t event = calloc(1, sizeof *event);
    if (event)
        event->device = dev;
    return event;
}

static void tk_event_free(ggml_backend_dev_t dev, ggml_backend_event_t event)
{
    (void) dev;
    calls.event_free++;
    free(event);
}

static void tk_event_sync(ggml_backend_dev_t dev, ggml_backend_event_t event)
{
    (void) dev;
    (void) event;
    calls.event_sync++;
}

/* TestMin0: the required members only (a macro, so it can initialize a static). */
#define MIN_DEV_IFACE { \
    .get_name = tk_dev_name, \
    .get_description = tk_dev_description, \
    .get_memory = tk_dev_memory, \
    .get_type = tk_dev_type, \
    .get_props = tk_dev_props_min, \
    .init_backend = tk_dev_init, \
    .get_buffer_type = tk_dev_buft, \
    .supports_op = tk_dev_supports_op, \
    .supports_buft = tk_dev_supports_buft, \
}

/* TestFull0: every member. */
#define FULL_DEV_IFACE { \
    .get_name = tk_dev_name, \
    .get_description = tk_dev_description, \
    .get_memory = tk_dev_memory, \
    .get_type = tk_dev_type, \
    .get_props = tk_dev_props_full, \
    .init_backend = tk_dev_init, \
    .get_buffer_type = tk_dev_buft, \
    .get_host_buffer_type = tk_dev_host_buft, \
    .buffer_from_host_ptr = tk_dev_from_host_ptr, \
    .supports_op = tk_dev_supports_op, \
    .supports_buft = tk_dev_supports_buft, \
    .offload_op = tk_dev_offload_op, \
    .event_new = tk_event_new, \
    .event_free = tk_event_free, \
    .event_synchronize = tk_event_sync, \
}

static struct ggml_backend_reg test_reg;

static struct ggml_backend_device dev_min, dev_full;

static struct tk_device min_kd = {
    .name = "TestMin0", .description = "minimal in-test device", .type = GGML_BACKEND_DEVICE_TYPE_GPU,
    .full = false,
    .buft = { .iface = { .get_name = tk_buft_name, .alloc_buffer = tk_buft_alloc }, .device = &dev_min,
              .context = "TestMinBuf" },
};
static struct tk_device full_kd = {
    .name = "TestFull0", .description = "complete in-test device", .type = GGML_BACKEND_DEVICE_TYPE_ACCEL,
    .full = true,
    .buft = { .iface = { .get_name = tk_buft_name, .alloc_buffer = tk_buft_alloc }, .device = &dev_full,
              .context = "TestFullBuf" },
};

static struct ggml_backend_device dev_min = { .iface = MIN_DEV_IFACE, .reg = &test_reg, .context = &min_kd };
static struct ggml_backend_device dev_full = { .iface = FULL_DEV_IFACE, .reg = &test_reg, .context = &full_kd };

static const char *tk_reg_name(ggml_backend_reg_t reg)
{
    (void) reg;
    return "TestReg";
}

static size_t tk_reg_count(ggml_backend_reg_t reg)
{
    (void) reg;
    return 2;
}

static ggml_backend_dev_t tk_reg_device(ggml_backend_reg_t reg, size_t index)
{
    (void) reg;
    return index == 0 ? &dev_min : index == 1 ? &dev_full : NULL;
}

static struct ggml_backend_reg test_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = { .get_name = tk_reg_name, .get_device_count = tk_reg_count, .get_device = tk_reg_device },
    .context = NULL,
};

/* ---------------------------------------------------------------- helpers */

static struct ggml_context *ctx;

static struct ggml_tensor *new_f32(int64_t n, const char *name)
{
    struct ggml_tensor *t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
    if (t)
        ggml_set_name(t, name);
    return t;
}

/* Places t at the next 64-byte slot of buffer (*next is the running offset). */
static bool place(ggml_backend_buffer_t buffer, struct ggml_tensor *t, size_t *next)
{
    char *base = ggml_backend_buffer_get_base(buffer);
    if (base == NULL || ggml_backend_tensor_alloc(buffer, t, base + *next) != GGML_STATUS_SUCCESS)
        return false;
    *next += (ggml_nbytes(t) + 63) / 64 * 64;
    return true;
}

static void set_floats(struct ggml_tensor *t, float first)
{
    float v[64];
    int64_t n = ggml_nelements(t);
    for (int64_t i = 0; i < n && i < 64; i++)
        v[i] = first + (float) i;
    ggml_backend_tensor_set(t, v, 0, (size_t) n * sizeof(float));
}

/* True when t holds first, first+1, ... */
static bool has_floats(const struct ggml_tensor *t, float first)
{
    float v[64];
    int64_t n = ggml_nelements(t);
    if (n > 64)
        return false;
    memset(v, 0, sizeof v);
    ggml_backend_tensor_get(t, v, 0, (size_t) n * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        if (v[i] != first + (float) i)
            return false;
    return true;
}

/* The graph a -> cont b -> cpy(b, d) = c, allocated in a fresh buffer of backend. */
struct small_graph {
    struct ggml_tensor *a, *b, *c, *d;
    struct ggml_cgraph *gf;
    ggml_backend_buffer_t buffer;
};

static bool build_small_graph(ggml_backend_t backend, struct small_graph *g)
{
    memset(g, 0, sizeof *g);
    g->a = new_f32(8, "a");
    ggml_set_input(g->a);
    g->b = ggml_cont(ctx, g->a);
    ggml_set_name(g->b, "b");
    g->d = new_f32(8, "d");
    g->c = ggml_cpy(ctx, g->b, g->d);
    ggml_set_name(g->c, "c");
    g->gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(g->gf, g->c);
    g->buffer = ggml_backend_alloc_buffer(backend, 1024);
    size_t next = 0;
    if (g->buffer == NULL || !place(g->buffer, g->a, &next) || !place(g->buffer, g->b, &next) ||
        !place(g->buffer, g->d, &next) || ggml_backend_view_init(g->c) != GGML_STATUS_SUCCESS)
        return false;
    set_floats(g->a, 1.0f);
    set_floats(g->b, -50.0f);
    set_floats(g->d, 100.0f);
    return ggml_graph_n_nodes(g->gf) == 2;
}

/* ---------------------------------------------------------------- devices */

static void test_device_wrappers(void)
{
    tap_log_errors();
    reset_calls();
    struct ggml_backend_dev_props props;

    is_str(ggml_backend_dev_name(&dev_min), "TestMin0", "dev_name");
    is_str(ggml_backend_dev_description(&dev_min), "minimal in-test device", "dev_description");
    size_t f = 1, t = 1;
    ggml_backend_dev_memory(&dev_min, &f, &t);
    ok(f == 1000 && t == 2000, "dev_memory: free %zu, total %zu", f, t);
    is_int(ggml_backend_dev_type(&dev_min), GGML_BACKEND_DEVICE_TYPE_GPU, "dev_type min");
    is_int(ggml_backend_dev_type(&dev_full), GGML_BACKEND_DEVICE_TYPE_ACCEL, "dev_type full");
    is_ptr(ggml_backend_dev_backend_reg(&dev_min), &test_reg, "dev_backend_reg");

    memset(&props, 0xFF, sizeof props);
    ggml_backend_dev_get_props(&dev_min, &props);
    is_str(props.name, "TestMin0", "props(min): name");
    is_str(props.description, "minimal in-test device", "props(min): description");
    is_uint(props.memory_free, 1000, "props(min): memory_free");
    is_uint(props.memory_total, 2000, "props(min): memory_total");
    is_int(props.type, GGML_BACKEND_DEVICE_TYPE_GPU, "props(min): type");
    is_ptr(props.device_id, NULL, "props(min): device_id left by the device is zeroed (NULL)");
    ok(!props.caps.async && !props.caps.host_buffer && !props.caps.buffer_from_host_ptr && !props.caps.events &&
           !props.caps.mmap_support,
       "props(min): caps left by the device are zeroed (false)");

    memset(&props, 0, sizeof props);
    ggml_backend_dev_get_props(&dev_full, &props);
    is_str(props.name, "TestFull0", "props(full): name");
    is_str(props.description, "complete in-test device", "props(full): description");
    is_uint(props.memory_free, 3000, "props(full): memory_free");
    is_uint(props.memory_total, 4000, "props(full): memory_total");
    is_int(props.type, GGML_BACKEND_DEVICE_TYPE_ACCEL, "props(full): type");
    is_str(props.device_id, "0000:3b:00.0", "props(full): device_id");
    ok(props.caps.async && props.caps.host_buffer && props.caps.buffer_from_host_ptr && props.caps.events,
       "props(full): every cap");
    is_int(tap_log_errors(), 0, "device queries log nothing");

    is_ptr(ggml_backend_dev_buffer_type(&dev_min), &min_kd.buft, "dev_buffer_type");
    is_ptr(ggml_backend_buft_get_device(ggml_backend_dev_buffer_type(&dev_min)), &dev_min, "buffer type's device");
    is_ptr(ggml_backend_dev_host_buffer_type(&dev_min), NULL, "get_host_buffer_type absent: NULL");
    is_int(tap_log_errors(), 0, "... without a message");
    is_ptr(ggml_backend_dev_host_buffer_type(&dev_full), ggml_backend_cpu_buffer_type(), "get_host_buffer_type present");
    is_int(calls.host_buft, 1, "get_host_buffer_type called once");

    static _Alignas(64) unsigned char host_mem[256];
    is_ptr(ggml_backend_dev_buffer_from_host_ptr(&dev_min, host_mem, 256, 128), NULL,
           "buffer_from_host_ptr absent: NULL");
    ok(tap_log_errors() <= 1, "... with at most one message");
    ggml_backend_buffer_t hb = ggml_backend_dev_buffer_from_host_ptr(&dev_full, host_mem, 256, 128);
    ok(hb != NULL, "buffer_from_host_ptr present: buffer");
    is_int(calls.from_host_ptr, 1, "buffer_from_host_ptr called once");
    ok(last_from_ptr_size == 256 && last_from_ptr_max == 128, "buffer_from_host_ptr gets size and max_tensor_size");
    if (hb) {
        is_ptr(ggml_backend_buffer_get_base(hb), host_mem, "buffer_from_host_ptr wraps the pointer");
        ggml_backend_buffer_free(hb);
    }

    struct ggml_tensor *x = new_f32(4, "x");
    struct ggml_tensor *y = new_f32(4, "y");
    struct ggml_tensor *cpy = ggml_cpy(ctx, x, y);
    struct ggml_tensor *unsupported = ggml_transpose(ctx, ggml_reshape_2d(ctx, x, 2, 2)); /* an op the device lacks */
    reset_calls();
    ok(ggml_backend_dev_supports_op(&dev_min, cpy), "dev_supports_op: CPY yes");
    ok(!ggml_backend_dev_supports_op(&dev_min, unsupported), "dev_supports_op: TRANSPOSE no");
    is_int(calls.supports_op, 2, "dev_supports_op calls the member");
    ok(ggml_backend_dev_supports_buft(&dev_min, &min_kd.buft), "dev_supports_buft: own type");
    ok(!ggml_backend_dev_supports_buft(&dev_min, ggml_backend_cpu_buffer_type()), "dev_supports_buft: cpu type no");
    is_int(calls.supports_buft, 2, "dev_supports_buft calls the member");
    ok(!ggml_backend_dev_offload_op(&dev_min, cpy), "offload_op absent: false");
    ok(ggml_backend_dev_offload_op(&dev_full, cpy), "offload_op present: its answer (true)");
    ok(!ggml_backend_dev_offload_op(&dev_full, unsupported), "offload_op present: its answer (false)");
    is_int(calls.offload_op, 2, "offload_op called for the full device only");
    is_int(tap_log_errors(), 0, "support queries log nothing");

    /* NULL device */
    is_ptr(ggml_backend_dev_name(NULL), NULL, "dev_name(NULL) is NULL");
    logged_one_error("dev_name(NULL) logs one error");
    is_ptr(ggml_backend_dev_init(NULL, NULL), NULL, "dev_init(NULL) is NULL");
    logged_one_error("dev_init(NULL) logs one error");
    ggml_backend_dev_memory(NULL, &f, &t);
    logged_one_error("dev_memory(NULL) logs one error");
    ggml_backend_dev_get_props(NULL, &props);
    logged_one_error("dev_get_props(NULL) logs one error");
}

static void test_dev_init(void)
{
    tap_log_errors();
    reset_calls();
    static const char params[] = "threads=2";
    ggml_backend_t b = ggml_backend_dev_init(&dev_full, params);
    ok(b != NULL, "dev_init: backend");
    is_int(calls.init_backend, 1, "dev_init calls init_backend once");
    is_ptr(full_kd.last_params, params, "dev_init passes params through");
    ggml_backend_free(b);
    ggml_backend_t m = ggml_backend_dev_init(&dev_min, NULL);
    ok(m != NULL, "dev_init with NULL params");
    is_ptr(min_kd.last_params, NULL, "dev_init passes NULL params");
    ggml_backend_free(m);
    is_int(tap_log_errors(), 0, "dev_init logs nothing");

    full_kd.fail_init = true;
    is_ptr(ggml_backend_dev_init(&dev_full, NULL), NULL, "a failing init_backend gives NULL");
    logged_one_error("a failing init_backend logs one error");
    full_kd.fail_init = false;
    full_kd.fail_init_logged = true;
    is_ptr(ggml_backend_dev_init(&dev_full, NULL), NULL, "an init_backend failing on a logged error gives NULL");
    logged_one_error("... and that error is the only one");
    full_kd.fail_init_logged = false;
}

/* --------------------------------------------------------------- backends */

static void test_backend_basics(void)
{
    tap_log_errors();
    reset_calls();
    ggml_backend_t b = ggml_backend_dev_init(&dev_min, NULL);
    if (!ok(b != NULL, "basics: backend"))
        return;
    ok(ggml_guid_matches(ggml_backend_guid(b), &min_guid), "backend_guid");
    ok(!ggml_guid_matches(ggml_backend_guid(b), &full_guid), "backend_guid differs from another implementation's");
    is_str(ggml_backend_name(b), "TestMin", "backend_name");
    is_ptr(ggml_backend_get_device(b), &dev_min, "backend_get_device");
    is_ptr(ggml_backend_get_default_buffer_type(b), &min_kd.buft, "default buffer type is the device's");
    is_uint(ggml_backend_get_alignment(b), GGML_MEM_ALIGN, "backend alignment: its type's (default)");
    is_uint(ggml_backend_get_max_size(b), SIZE_MAX, "backend max size: its type's (default)");
    ggml_backend_buffer_t buf = ggml_backend_alloc_buffer(b, 64);
    ok(buf != NULL, "backend_alloc_buffer");
    is_int(calls.buffer_alloc, 1, "backend_alloc_buffer uses the type's alloc_buffer");
    if (buf) {
        is_ptr(ggml_backend_buffer_get_type(buf), &min_kd.buft, "... of the default type");
        is_uint(ggml_backend_buffer_get_size(buf), 64, "... and the size asked");
        ggml_backend_buffer_free(buf);
    }

    struct ggml_tensor *x = new_f32(4, "x");
    struct ggml_tensor *cpy = ggml_cpy(ctx, x, new_f32(4, "y"));
    reset_calls();
    ok(ggml_backend_supports_op(b, cpy), "backend_supports_op delegates (true)");
    ok(!ggml_backend_supports_op(b, ggml_transpose(ctx, ggml_reshape_2d(ctx, x, 2, 2))), "backend_supports_op delegates (false)");
    is_int(calls.supports_op, 2, "backend_supports_op calls the device");
    ok(ggml_backend_supports_buft(b, &min_kd.buft), "backend_supports_buft delegates (true)");
    ok(!ggml_backend_supports_buft(b, &full_kd.buft), "backend_supports_buft delegates (false)");
    is_int(calls.supports_buft, 2, "backend_supports_buft calls the device");
    ok(!ggml_backend_offload_op(b, cpy), "backend_offload_op: device default false");
    ggml_backend_t fb = ggml_backend_dev_init(&dev_full, NULL);
    ok(fb && ggml_backend_offload_op(fb, cpy), "backend_offload_op delegates to the device member");
    is_int(calls.offload_op, 1, "... called once");
    is_int(tap_log_errors(), 0, "basics: no messages");

    ggml_backend_synchronize(b);
    is_int(tap_log_errors(), 0, "synchronize absent: silent no-op");
    reset_calls();
    ggml_backend_synchronize(fb);
    is_int(calls.synchronize, 1, "synchronize present: called once");

    reset_calls();
    ggml_backend_free(b);
    ggml_backend_free(fb);
    is_int(calls.backend_free, 2, "backend_free calls free");
    is_int(tap_log_errors(), 0, "backend_free is silent");
}

static void test_async_transfers(void)
{
    tap_log_errors();
    ggml_backend_t mb = ggml_backend_dev_init(&dev_min, NULL);
    ggml_backend_t fb = ggml_backend_dev_init(&dev_full, NULL);
    ggml_backend_buffer_t buf = ggml_backend_alloc_buffer(mb, 256);
    struct ggml_tensor *t = new_f32(8, "async");
    size_t next = 0;
    if (!ok(mb && fb && buf && place(buf, t, &next), "async: backends and tensor"))
        return;
    float in[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, out[8];

    reset_calls();
    ggml_backend_tensor_set_async(mb, t, in, 0, sizeof in);
    ggml_backend_synchronize(mb);
    memset(out, 0, sizeof out);
    ggml_backend_tensor_get_async(mb, t, out, 0, sizeof out);
    ggml_backend_synchronize(mb);
    ok(memcmp(in, out, sizeof in) == 0, "async absent: blocking set/get round trip");
    is_int(tap_log_errors(), 0, "async absent: silent");

    float in2[4] = { 9, 10, 11, 12 };
    ggml_backend_tensor_set_async(fb, t, in2, 16, sizeof in2);
    is_int(calls.set_async, 1, "set_tensor_async present: called once");
    memset(out, 0, sizeof out);
    ggml_backend_tensor_get_async(fb, t, out, 0, sizeof out);
    is_int(calls.get_async, 1, "get_tensor_async present: called once");
    ggml_backend_synchronize(fb);
    ok(out[0] == 1 && out[3] == 4 && out[4] == 9 && out[7] == 12, "async present: data at the offset");
    is_int(tap_log_errors(), 0, "async present: silent");

    /* errors: nothing reaches the member */
    ggml_backend_tensor_set_async(fb, t, in, 16, sizeof in);
    logged_one_error("set_async past the end logs one error");
    ggml_backend_tensor_get_async(fb, t, out, 4, sizeof out);
    logged_one_error("get_async past the end logs one error");
    ggml_backend_tensor_set_async(mb, t, in, 16, sizeof in);
    logged_one_error("set_async past the end (fallback) logs one error");
    struct ggml_tensor *un = new_f32(8, "unallocated");
    ggml_backend_tensor_set_async(fb, un, in, 0, sizeof in);
    logged_one_error("set_async of an unallocated tensor logs one error");
    ggml_backend_tensor_set_async(NULL, t, in, 0, sizeof in);
    logged_one_error("set_async on a NULL backend logs one error");
    ggml_backend_tensor_get_async(NULL, t, out, 0, sizeof out);
    logged_one_error("get_async on a NULL backend logs one error");
    is_int(calls.set_async, 1, "bad set_async calls never reached the member");
    is_int(calls.get_async, 1, "bad get_async calls never reached the member");
    ggml_backend_tensor_get(t, out, 0, sizeof out);
    ok(out[0] == 1 && out[4] == 9 && out[7] == 12, "bad calls wrote nothing");

    /* 2-D: elements 1 and 5 (two runs of one float, 16 bytes apart) from a packed pair; t holds
       1 2 3 4 9 10 11 12 */
    const float pair[2] = { -1, -5 };
    float got[4] = { 0, 0, 0, 0 };
    reset_calls();
    ggml_backend_tensor_set_2d_async(fb, t, pair, sizeof(float), sizeof(float), 2, 4 * sizeof(float), sizeof(float));
    ggml_backend_tensor_get_2d_async(fb, t, got, 0, 2 * sizeof(float), 2, 4 * sizeof(float), 2 * sizeof(float));
    ggml_backend_synchronize(fb);
    is_int(calls.set_2d_async, 1, "set_tensor_2d_async present: one call for two runs");
    is_int(calls.get_2d_async, 1, "get_tensor_2d_async present: one call for two runs");
    ok(got[0] == 1 && got[1] == -1 && got[2] == 9 && got[3] == -5, "2-D async present: the runs at their strides");
    const float back[2] = { 2, 6 };
    ggml_backend_tensor_set_2d_async(mb, t, back, sizeof(float), sizeof(float), 2, 4 * sizeof(float), sizeof(float));
    ggml_backend_tensor_get_2d_async(mb, t, got, 0, 2 * sizeof(float), 2, 4 * sizeof(float), 2 * sizeof(float));
    ggml_backend_synchronize(mb);
    ok(got[0] == 1 && got[1] == 2 && got[2] == 9 && got[3] == 6, "2-D async absent: one transfer a run");
    is_int(tap_log_errors(), 0, "2-D async: silent");
    ggml_backend_tensor_set_2d_async(fb, t, back, sizeof(float), sizeof(float), 3, 4 * sizeof(float), sizeof(float));
    logged_one_error("set_2d_async whose last run leaves the tensor logs one error");
    ggml_backend_tensor_get_2d_async(NULL, t, got, 0, 4, 2, 16, 8);
    logged_one_error("get_2d_async on a NULL backend logs one error");
    is_int(calls.set_2d_async + calls.get_2d_async, 2, "bad 2-D calls never reached the members");

    ggml_backend_buffer_free(buf);
    ggml_backend_free(mb);
    ggml_backend_free(fb);
}

static void test_copy_async(void)
{
    tap_log_errors();
    ggml_backend_t m1 = ggml_backend_dev_init(&dev_min, NULL);
    ggml_backend_t m2 = ggml_backend_dev_init(&dev_min, NULL);
    ggml_backend_t fb = ggml_backend_dev_init(&dev_full, NULL);
    ggml_backend_buffer_t b1 = ggml_backend_alloc_buffer(m1, 256);
    ggml_backend_buffer_t b2 = ggml_backend_alloc_buffer(m2, 256);
    ggml_backend_buffer_t bf = ggml_backend_alloc_buffer(fb, 256);
    struct ggml_tensor *s = new_f32(8, "s"), *d = new_f32(8, "d"), *e = new_f32(8, "e");
    struct ggml_tensor *shorter = new_f32(4, "shorter");
    size_t n1 = 0, n2 = 0, nf = 0;
    if (!ok(m1 && m2 && fb && place(b1, s, &n1) && place(b2, d, &n2) && place(bf, e, &nf) &&
            place(b1, shorter, &n1), "copy_async: setup"))
        return;

    set_floats(s, 10);
    set_floats(d, 0);
    reset_calls();
    ggml_backend_tensor_copy_async(m1, m2, s, d);
    ggml_backend_synchronize(m2);
    ok(has_floats(d, 10), "cpy_tensor_async absent: a blocking copy");
    is_int(tap_log_errors(), 0, "... silent");

    kb_of(fb)->cpy_async_accepts = true;
    set_floats(s, 20);
    reset_calls();
    ggml_backend_tensor_copy_async(m1, fb, s, e);
    is_int(calls.cpy_async, 1, "cpy_tensor_async of the destination is called");
    is_int(calls.synchronize, 0, "an accepted async copy needs no synchronization");
    ggml_backend_synchronize(fb);
    ok(has_floats(e, 20), "accepted async copy: data");

    kb_of(fb)->cpy_async_accepts = false;
    set_floats(s, 30);
    reset_calls();
    ggml_backend_tensor_copy_async(m1, fb, s, e);
    is_int(calls.cpy_async, 1, "refusing cpy_tensor_async is asked once");
    ok(calls.synchronize >= 1, "refused: the destination is synchronized before the blocking copy");
    ok(has_floats(e, 30), "refused: data copied anyway");
    is_int(tap_log_errors(), 0, "copy_async: no messages");

    reset_calls();
    ggml_backend_tensor_copy_async(m1, fb, shorter, e);
    logged_one_error("copy_async of different shapes logs one error");
    is_int(calls.cpy_async, 0, "... without calling the member");
    ok(has_floats(e, 30), "... writing nothing");
    ggml_backend_tensor_copy_async(NULL, fb, s, e);
    logged_one_error("copy_async with a NULL source backend logs one error");
    ggml_backend_tensor_copy_async(m1, NULL, s, e);
    logged_one_error("copy_async with a NULL destination backend logs one error");

    ggml_backend_buffer_free(b1);
    ggml_backend_buffer_free(b2);
    ggml_backend_buffer_free(bf);
    ggml_backend_free(m1);
    ggml_backend_free(m2);
    ggml_backend_free(fb);
}

static void test_graph_compute(void)
{
    tap_log_errors();
    ggml_backend_t mb = ggml_backend_dev_init(&dev_min, NULL);
    ggml_backend_t fb = ggml_backend_dev_init(&dev_full, NULL);
    struct small_graph g, h;
    if (!ok(mb && fb && build_small_graph(mb, &g) && build_small_graph(fb, &h), "compute: graphs"))
        return;
    is_int(tap_log_errors(), 0, "compute: setup silent");

    reset_calls();
    is_int(ggml_backend_graph_compute(mb, g.gf), GGML_STATUS_SUCCESS, "graph_compute: success");
    is_int(kb_of(mb)->graph_compute, 1, "graph_compute calls the member once");
    ok(has_floats(g.b, 1) && has_floats(g.d, 1), "graph_compute: cont and cpy results");

    reset_calls();
    is_int(ggml_backend_graph_compute(fb, h.gf), GGML_STATUS_SUCCESS, "full graph_compute: success");
    is_int(calls.synchronize, 1, "graph_compute synchronizes after computing");
    ok(has_floats(h.d, 1), "full graph_compute: result");
    set_floats(h.a, 5);
    reset_calls();
    is_int(ggml_backend_graph_compute_async(fb, h.gf), GGML_STATUS_SUCCESS, "graph_compute_async: success");
    is_int(calls.graph_compute, 1, "graph_compute_async calls the member once");
    is_int(calls.synchronize, 0, "graph_compute_async does not synchronize");
    ggml_backend_synchronize(fb);
    ok(has_floats(h.d, 5), "graph_compute_async: result after synchronize");
    is_int(tap_log_errors(), 0, "compute: no messages");

    /* a graph built from a NULL tensor */
    struct ggml_cgraph *bad = ggml_new_graph(ctx);
    ggml_build_forward_expand(bad, NULL);
    tap_log_errors();
    reset_calls();
    is_int(ggml_backend_graph_compute(mb, bad), GGML_STATUS_FAILED, "failed graph: GGML_STATUS_FAILED");
    logged_one_error("failed graph: one error");
    is_int(calls.graph_compute, 0, "failed graph: the backend is not called");
    is_int(ggml_backend_graph_compute_async(mb, bad), GGML_STATUS_FAILED, "failed graph (async): FAILED");
    logged_one_error("failed graph (async): one error");
    is_int(calls.graph_compute, 0, "failed graph (async): the backend is not called");
    is_int(ggml_backend_graph_compute(mb, NULL), GGML_STATUS_FAILED, "NULL graph: FAILED");
    logged_one_error("NULL graph: one error");
    is_int(ggml_backend_graph_compute(NULL, g.gf), GGML_STATUS_FAILED, "NULL backend: FAILED");
    logged_one_error("NULL backend: one error");
    is_int(calls.graph_compute, 0, "bad calls never reach the backend");

    /* graph plans */
    reset_calls();
    is_ptr(ggml_backend_graph_plan_create(mb, g.gf), NULL, "plans absent: plan_create is NULL");
    logged_one_error("plans absent: plan_create logs one error");
    static int not_a_plan;
    is_int(ggml_backend_graph_plan_compute(mb, &not_a_plan), GGML_STATUS_FAILED, "plans absent: plan_compute FAILED");
    logged_one_error("plans absent: plan_compute logs one error");
    ggml_backend_graph_plan_free(mb, &not_a_plan);
    is_int(tap_log_errors(), 0, "plans absent: plan_free does nothing");

    set_floats(h.a, 40);
    ggml_backend_graph_plan_t plan = ggml_backend_graph_plan_create(fb, h.gf);
    ok(plan != NULL, "plans present: plan made");
    is_int(calls.plan_create, 1, "plan_create calls the member once");
    is_int(ggml_backend_graph_plan_compute(fb, plan), GGML_STATUS_SUCCESS, "plan_compute: success");
    is_int(calls.plan_compute, 1, "plan_compute calls the member once");
    ok(has_floats(h.d, 40), "plan_compute: result");
    ggml_backend_graph_plan_free(fb, plan);
    is_int(calls.plan_free, 1, "plan_free calls the member once");
    is_int(tap_log_errors(), 0, "plans present: no messages");
    is_ptr(ggml_backend_graph_plan_create(fb, NULL), NULL, "plan_create(NULL graph) is NULL");
    logged_one_error("plan_create(NULL graph) logs one error");
    is_int(calls.plan_create, 1, "... without calling the member");

    ggml_backend_buffer_free(g.buffer);
    ggml_backend_buffer_free(h.buffer);
    ggml_backend_free(mb);
    ggml_backend_free(fb);
}

/* Computing after the memory of the graph's tensors was freed: the
 * wrappers refuse it with one message, and never touch that memory. */
static void test_freed_buffers(void)
{
    ggml_backend_t cpu = ggml_backend_cpu_init();
    struct ggml_init_params params = { 16 * ggml_tensor_overhead() + 2 * ggml_graph_overhead(), NULL, true };
    struct ggml_context *weights = ggml_init(params), *graph_ctx = ggml_init(params);
    if (!ok(cpu != NULL && weights != NULL && graph_ctx != NULL, "freed buffers: setup"))
        return;
    struct ggml_tensor *a = ggml_set_name(ggml_new_tensor_1d(weights, GGML_TYPE_F32, 16), "weights-a");
    struct ggml_tensor *b = ggml_set_name(ggml_new_tensor_1d(weights, GGML_TYPE_F32, 16), "weights-b");
    struct ggml_tensor *sum = ggml_set_name(ggml_add(graph_ctx, a, b), "sum");
    struct ggml_tensor *out = ggml_set_name(ggml_scale(graph_ctx, sum, 0.5f), "out");
    struct ggml_cgraph *graph = ggml_new_graph(graph_ctx);
    ggml_build_forward_expand(graph, out);
    ggml_backend_buffer_t buffer = ggml_backend_alloc_ctx_tensors(weights, cpu);
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(cpu));
    ok(buffer != NULL && galloc != NULL && ggml_gallocr_alloc_graph(galloc, graph), "freed buffers: allocated");
    ggml_backend_buffer_clear(buffer, 0);
    is_int(ggml_backend_graph_compute(cpu, graph), GGML_STATUS_SUCCESS, "freed buffers: computes while live");
    ggml_backend_graph_plan_t plan = ggml_backend_graph_plan_create(cpu, graph);
    is_int(tap_log_errors(), 0, "freed buffers: no message while live");

    ggml_gallocr_free(galloc);
    is_int(ggml_backend_graph_compute(cpu, graph), GGML_STATUS_FAILED, "after ggml_gallocr_free: compute FAILED");
    logged_one_error("after ggml_gallocr_free: one message");
    ok(strstr(tap_last_log(), "'sum'") != NULL, "after ggml_gallocr_free: the message names the tensor: %s",
       tap_last_log());
    is_int(ggml_backend_graph_compute_async(cpu, graph), GGML_STATUS_FAILED,
           "after ggml_gallocr_free: compute_async FAILED");
    logged_one_error("after ggml_gallocr_free: compute_async, one message");
    is_int(ggml_backend_graph_plan_compute(cpu, plan), GGML_STATUS_FAILED,
           "after ggml_gallocr_free: plan_compute FAILED");
    logged_one_error("after ggml_gallocr_free: plan_compute, one message");

    /* the weights alone, in a graph of their own */
    struct ggml_cgraph *weights_only = ggml_new_graph(graph_ctx);
    ggml_build_forward_expand(weights_only, ggml_add(graph_ctx, a, b));
    ggml_backend_buffer_free(buffer);
    is_int(ggml_backend_graph_compute(cpu, weights_only), GGML_STATUS_FAILED,
           "after ggml_backend_buffer_free of the weights: compute FAILED");
    logged_one_error("after ggml_backend_buffer_free of the weights: one message");
    ok(strstr(tap_last_log(), "'weights-a'") != NULL,
       "after ggml_backend_buffer_free of the weights: the message names the tensor: %s", tap_last_log());

    ggml_backend_graph_plan_free(cpu, plan);
    ggml_free(graph_ctx);
    ggml_free(weights);
    ggml_backend_free(cpu);
}

/* ----------------------------------------------------------------- events */

static void test_events(void)
{
    tap_log_errors();
    reset_calls();
    ggml_backend_t mb = ggml_backend_dev_init(&dev_min, NULL);
    ggml_backend_t fb = ggml_backend_dev_init(&dev_full, NULL);
    if (!ok(mb && fb, "events: backends"))
        return;

    is_ptr(ggml_backend_event_new(&dev_min), NULL, "events absent: event_new is NULL");
    is_int(tap_log_errors(), 0, "events absent: no message (a capability, not an error)");

    ggml_backend_event_t ev = ggml_backend_event_new(&dev_full);
    ok(ev != NULL, "event_new: event");
    is_int(calls.event_new, 1, "event_new calls the member once");
    if (!ev)
        return;
    ggml_backend_event_record(ev, fb);
    is_int(calls.event_record, 1, "event_record calls the backend member");
    ggml_backend_event_synchronize(ev);
    is_int(calls.event_sync, 1, "event_synchronize calls the device member");
    ggml_backend_event_wait(fb, ev);
    is_int(calls.event_wait, 1, "event_wait calls the backend member");
    ggml_backend_event_record(ev, mb);
    is_int(calls.event_record, 1, "event_record absent: nothing called");
    ggml_backend_event_wait(mb, ev);
    is_int(calls.event_wait, 1, "event_wait absent: the backend member is not there");
    is_int(calls.event_sync, 2, "event_wait absent: defaults to synchronizing the event");
    is_int(tap_log_errors(), 0, "events: no messages");

    ggml_backend_event_free(ev);
    is_int(calls.event_free, 1, "event_free calls the member once");
    ggml_backend_event_free(NULL);
    is_int(tap_log_errors(), 0, "event_free(NULL) is a silent no-op");
    ggml_backend_event_free(ev);
    logged_one_error("double event_free logs one error");
    is_int(calls.event_free, 1, "double event_free does not call the member again");
    ggml_backend_event_synchronize(ev);
    logged_one_error("event_synchronize of a freed event logs one error");
    ggml_backend_event_record(ev, fb);
    logged_one_error("event_record of a freed event logs one error");
    ggml_backend_event_wait(fb, ev);
    logged_one_error("event_wait on a freed event logs one error");
    is_int(calls.event_sync + calls.event_record + calls.event_wait, 2 + 1 + 1, "freed events reach no member");
    ggml_backend_event_new(NULL);
    ok(tap_log_errors() <= 1, "event_new(NULL) returns without crashing");

    ggml_backend_free(mb);
    ggml_backend_free(fb);
}

/* ---------------------------------------------------------------- handles */

/*
 * A backend made outside ggml_backend_dev_init, as a plugin's own
 * constructor makes one, is not a handle of the library until it is
 * published: every entry point refuses it without following it.
 */
static void test_unpublished_backend(void)
{
    ggml_backend_t mb = ggml_backend_dev_init(&dev_min, NULL);
    struct small_graph g;
    if (!ok(mb != NULL && build_small_graph(mb, &g), "unpublished: a graph to compute"))
        return;
    ggml_backend_t own = dev_min.iface.init_backend(&dev_min, NULL);
    if (!ok(own != NULL, "unpublished: a backend made by the device's own function"))
        return;
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_t pair[2] = { own, cpu };

    tap_log_errors();
    reset_calls();
    is_int(ggml_backend_graph_compute(own, g.gf), GGML_STATUS_FAILED, "compute on an unpublished backend fails");
    logged_one_error("... with one error");
    ok(strstr(tap_last_log(), "ggml_backend_publish") != NULL, "which names ggml_backend_publish");
    is_int(kb_of(own)->graph_compute, 0, "... and does not call the backend");
    is_ptr(ggml_backend_sched_new(pair, NULL, 2, 64, false, false), NULL,
           "sched_new with an unpublished backend fails");
    logged_one_error("... with one error");
    ggml_backend_free(own);
    logged_one_error("freeing an unpublished backend logs one error");
    is_int(calls.backend_free, 0, "... and frees nothing");

    is_ptr(ggml_backend_publish(own), own, "publish returns the backend");
    is_ptr(ggml_backend_publish(own), own, "publishing it again changes nothing");
    is_ptr(ggml_backend_publish(NULL), NULL, "publish(NULL) is NULL");
    is_int(tap_log_errors(), 0, "publishing logs nothing");
    is_int(ggml_backend_graph_compute(own, g.gf), GGML_STATUS_SUCCESS, "a published backend computes");
    is_int(kb_of(own)->graph_compute, 1, "... through its own member");
    ggml_backend_sched_t sched = ggml_backend_sched_new(pair, NULL, 2, 64, false, false);
    ok(sched != NULL, "sched_new accepts it");
    ggml_backend_sched_free(sched);
    is_int(tap_log_errors(), 0, "... silently");
    ggml_backend_free(own);
    is_int(calls.backend_free, 1, "it is freed through the library");
    is_int(tap_log_errors(), 0, "... silently");
    ggml_backend_free(own);
    logged_one_error("a second free logs one error");
    is_int(calls.backend_free, 1, "... and frees nothing");

    ggml_backend_free(cpu);
    ggml_backend_free(mb);
    ggml_backend_buffer_free(g.buffer);
}

/*
 * However many backends were freed since, a freed backend stays refused;
 * its memory is never read (the sanitizer build checks that).
 */
static void test_long_freed_backend(void)
{
    enum { MANY = 100 };
    ggml_backend_t many[MANY];
    ggml_backend_t mb = ggml_backend_dev_init(&dev_min, NULL);
    struct small_graph g;
    if (!ok(mb != NULL && build_small_graph(mb, &g), "long freed: a graph to compute"))
        return;
    tap_log_errors();
    int made = 0;
    for (int i = 0; i < MANY; i++)
        made += (many[i] = ggml_backend_dev_init(&dev_min, NULL)) != NULL;
    if (!ok(made == MANY, "long freed: %d backends at once", MANY))
        return;
    /* many[0] first, so that MANY - 1 frees follow it */
    reset_calls();
    for (int i = 0; i < MANY; i++)
        ggml_backend_free(many[i]);
    is_int(calls.backend_free, MANY, "each is freed");
    is_int(tap_log_errors(), 0, "... silently");

    is_ptr(ggml_backend_name(many[0]), NULL, "the backend freed %d frees ago is refused", MANY - 1);
    logged_one_error("... with one error");
    is_int(ggml_backend_graph_compute(many[0], g.gf), GGML_STATUS_FAILED, "computing on it fails");
    logged_one_error("... with one error");
    ggml_backend_free(many[0]);
    logged_one_error("freeing it again logs one error");
    is_int(calls.backend_free, MANY, "... and frees nothing");

    ggml_backend_free(mb);
    ggml_backend_buffer_free(g.buffer);
}


static void test_backend_handles(void)
{
    tap_log_errors();
    reset_calls();
    ggml_backend_free(NULL);
    is_int(tap_log_errors(), 0, "backend_free(NULL) is a silent no-op");
    ggml_backend_name(NULL);
    logged_one_error("backend_name(NULL) logs one error");
    is_ptr(ggml_backend_get_device(NULL), NULL, "get_device(NULL) is NULL");
    logged_one_error("get_device(NULL) logs one error");
    ggml_backend_synchronize(NULL);
    logged_one_error("synchronize(NULL) logs one error");

    ggml_backend_t b = ggml_backend_dev_init(&dev_full, NULL);
    if (!ok(b != NULL, "handles: backend"))
        return;
    ggml_backend_free(b);
    is_int(calls.backend_free, 1, "free calls the member");
    ggml_backend_free(b);
    logged_one_error("double backend_free logs one error");
    is_int(calls.backend_free, 1, "double backend_free does not call the member again");
    is_ptr(ggml_backend_name(b), NULL, "name of a freed backend is NULL");
    logged_one_error("name of a freed backend logs one error");
    ggml_backend_synchronize(b);
    logged_one_error("synchronize of a freed backend logs one error");
    is_int(calls.synchronize, 0, "... and calls nothing");
    is_ptr(ggml_backend_alloc_buffer(b, 16), NULL, "alloc_buffer on a freed backend is NULL");
    logged_one_error("alloc_buffer on a freed backend logs one error");

    test_unpublished_backend();
    test_long_freed_backend();
}

/* ------------------------------------------------------------- graph copy */

static void test_graph_copy(void)
{
    tap_log_errors();
    ggml_backend_t mb = ggml_backend_dev_init(&dev_min, NULL);
    ggml_backend_t fb = ggml_backend_dev_init(&dev_full, NULL);
    struct small_graph g;
    if (!ok(mb && fb && build_small_graph(mb, &g), "graph_copy: source graph"))
        return;
    tap_log_errors();
    reset_calls();
    struct ggml_backend_graph_copy copy = ggml_backend_graph_copy(fb, g.gf);
    ok(copy.buffer && copy.graph && copy.ctx_allocated && copy.ctx_unallocated, "graph_copy: every member set");
    is_int(tap_log_errors(), 0, "graph_copy: no messages");
    if (!copy.graph)
        return;
    is_ptr(ggml_backend_buffer_get_type(copy.buffer), &full_kd.buft, "graph_copy: buffer of the target backend");
    is_int(ggml_graph_n_nodes(copy.graph), ggml_graph_n_nodes(g.gf), "graph_copy: same number of nodes");
    for (int i = 0; i < ggml_graph_n_nodes(g.gf) && i < ggml_graph_n_nodes(copy.graph); i++) {
        struct ggml_tensor *n1 = ggml_graph_node(g.gf, i), *n2 = ggml_graph_node(copy.graph, i);
        ok(n1 != n2, "node %d: a new tensor", i);
        is_str(n2->name, n1->name, "node %d: name", i);
        is_int(n2->op, n1->op, "node %d: op", i);
        is_int(n2->type, n1->type, "node %d: type", i);
        ok(memcmp(n1->ne, n2->ne, sizeof n1->ne) == 0 && memcmp(n1->nb, n2->nb, sizeof n1->nb) == 0,
           "node %d: shape and strides", i);
        ggml_backend_buffer_t nb2 = n2->view_src ? n2->view_src->buffer : n2->buffer;
        is_ptr(nb2, copy.buffer, "node %d: data in the copy's buffer", i);
    }
    struct ggml_tensor *b2 = ggml_graph_node(copy.graph, 0), *c2 = ggml_graph_node(copy.graph, 1);
    struct ggml_tensor *a2 = b2->src[0];
    ok(a2 != NULL && a2 != g.a, "the leaf a is copied");
    if (a2) {
        is_str(a2->name, "a", "leaf copy: name");
        ok(a2->flags & GGML_TENSOR_FLAG_INPUT, "leaf copy: input flag kept");
        is_ptr(a2->buffer, copy.buffer, "leaf copy: in the copy's buffer");
        ok(has_floats(a2, 1), "leaf copy: data copied");
    }
    ok(c2->view_src != NULL && c2->view_src != g.d, "the view's source is copied");
    if (c2->view_src) {
        is_str(c2->view_src->name, "d", "view source copy: name");
        ok(has_floats(c2->view_src, 100), "view source copy: data copied");
        is_ptr(c2->buffer, copy.buffer, "view copy: initialized in the copy's buffer");
        ok(has_floats(c2, 100), "view copy reads its source's data");
    }
    ok(has_floats(g.a, 1) && has_floats(g.d, 100), "graph_copy leaves the source data alone");

    is_int(ggml_backend_graph_compute(fb, copy.graph), GGML_STATUS_SUCCESS, "the copy computes on the target");
    ok(c2->view_src && has_floats(c2->view_src, 1), "... with the expected result");
    ok(has_floats(g.d, 100), "... leaving the original alone");

    reset_calls();
    ggml_backend_graph_copy_free(copy);
    is_int(calls.buffer_free, 1, "graph_copy_free frees the buffer");
    is_int(tap_log_errors(), 0, "graph_copy_free: no messages");

    struct ggml_backend_graph_copy none = ggml_backend_graph_copy(NULL, g.gf);
    ok(!none.buffer && !none.graph && !none.ctx_allocated && !none.ctx_unallocated, "graph_copy(NULL backend): all NULL");
    logged_one_error("graph_copy(NULL backend) logs one error");
    none = ggml_backend_graph_copy(fb, NULL);
    ok(!none.buffer && !none.graph && !none.ctx_allocated && !none.ctx_unallocated, "graph_copy(NULL graph): all NULL");
    logged_one_error("graph_copy(NULL graph) logs one error");

    ggml_backend_buffer_free(g.buffer);
    ggml_backend_free(mb);
    ggml_backend_free(fb);
}

/* --------------------------------------------------------- graph compare */

struct compare_log {
    int calls;
    int indices[16];
    int stop_at;              /* return false at this call (0-based), or -1 */
    ggml_backend_t backend1, backend2;
    int computed1[16], computed2[16];
    bool pairs_ok;            /* names match, t1 is graph node, data agree */
    struct ggml_cgraph *graph;
};

static bool compare_cb(int node_index, struct ggml_tensor *t1, struct ggml_tensor *t2, void *user_data)
{
    struct compare_log *log = user_data;
    int k = log->calls++;
    if (k < 16) {
        log->indices[k] = node_index;
        log->computed1[k] = kb_of(log->backend1)->n_computed;
        log->computed2[k] = kb_of(log->backend2)->n_computed;
    }
    float v1[8], v2[8];
    bool same = ggml_nelements(t1) == 8 && ggml_nelements(t2) == 8;
    if (same) {
        ggml_backend_tensor_get(t1, v1, 0, sizeof v1);
        ggml_backend_tensor_get(t2, v2, 0, sizeof v2);
        same = memcmp(v1, v2, sizeof v1) == 0 && v1[0] == 1.0f;
    }
    if (t1 != ggml_graph_node(log->graph, node_index) || strcmp(t1->name, t2->name) != 0 || t1 == t2 || !same)
        log->pairs_ok = false;
    return k != log->stop_at;
}

/* a -> cont b -> cont e -> cpy(e, d) = c, on backend's buffer */
static struct ggml_cgraph *chain_graph(ggml_backend_t backend, ggml_backend_buffer_t *buf, struct ggml_tensor **last)
{
    struct ggml_tensor *a = new_f32(8, "a");
    struct ggml_tensor *b = ggml_cont(ctx, a);
    ggml_set_name(b, "b");
    struct ggml_tensor *e = ggml_cont(ctx, b);
    ggml_set_name(e, "e");
    struct ggml_tensor *d = new_f32(8, "d");
    struct ggml_tensor *c = ggml_cpy(ctx, e, d);
    ggml_set_name(c, "c");
    struct ggml_cgraph *gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, c);
    *buf = ggml_backend_alloc_buffer(backend, 1024);
    size_t next = 0;
    if (!*buf || !place(*buf, a, &next) || !place(*buf, b, &next) || !place(*buf, e, &next) ||
        !place(*buf, d, &next) || ggml_backend_view_init(c) != GGML_STATUS_SUCCESS)
        return NULL;
    set_floats(a, 1);
    set_floats(b, -10);
    set_floats(e, -20);
    set_floats(d, -30);
    *last = c;
    return gf;
}

static void new_pair(ggml_backend_t *b1, ggml_backend_t *b2)
{
    *b1 = ggml_backend_dev_init(&dev_min, NULL);
    *b2 = ggml_backend_dev_init(&dev_min, NULL);
}

static void test_compare(void)
{
    tap_log_errors();
    ggml_backend_t b1, b2;
    ggml_backend_buffer_t buf;
    struct ggml_tensor *last;

    /* every node pair, one node at a time */
    new_pair(&b1, &b2);
    struct ggml_cgraph *gf = chain_graph(b1, &buf, &last);
    if (!ok(b1 && b2 && gf && ggml_graph_n_nodes(gf) == 3, "compare: graph of 3 nodes"))
        return;
    struct compare_log log = { .stop_at = -1, .backend1 = b1, .backend2 = b2, .pairs_ok = true, .graph = gf };
    ok(ggml_backend_compare_graph_backend(b1, b2, gf, compare_cb, &log, NULL, 0), "compare: true when every callback agrees");
    is_int(tap_log_errors(), 0, "compare: no messages");
    is_int(log.calls, 3, "compare: the callback sees every node pair");
    ok(log.indices[0] == 0 && log.indices[1] == 1 && log.indices[2] == 2, "compare: indices 0, 1, 2 in order");
    ok(log.pairs_ok, "compare: each pair is (graph node, its copy) with equal computed data");
    ok(log.computed1[0] == 1 && log.computed1[1] == 2 && log.computed1[2] == 3 &&
       log.computed2[0] == 1 && log.computed2[1] == 2 && log.computed2[2] == 3,
       "compare: node i is computed on both backends just before callback i");
    is_int(kb_of(b1)->largest_graph, 1, "compare: backend1 computes one node at a time");
    is_int(kb_of(b2)->largest_graph, 1, "compare: backend2 computes one node at a time");
    ok(has_floats(last, 1), "compare: backend1 computed the graph");
    ggml_backend_buffer_free(buf);
    ggml_backend_free(b1);
    ggml_backend_free(b2);

    /* the callback stops the comparison */
    new_pair(&b1, &b2);
    gf = chain_graph(b1, &buf, &last);
    struct compare_log stop = { .stop_at = 1, .backend1 = b1, .backend2 = b2, .pairs_ok = true, .graph = gf };
    ok(!ggml_backend_compare_graph_backend(b1, b2, gf, compare_cb, &stop, NULL, 0),
       "compare: false when a callback returns false");
    is_int(stop.calls, 2, "compare: returning false stops early");
    is_int(kb_of(b1)->n_computed, 2, "compare: nodes after the stop are not computed");
    ggml_backend_buffer_free(buf);
    ggml_backend_free(b1);
    ggml_backend_free(b2);

    /* test_nodes: the whole graph, then only those nodes */
    new_pair(&b1, &b2);
    gf = chain_graph(b1, &buf, &last);
    struct compare_log sel = { .stop_at = -1, .backend1 = b1, .backend2 = b2, .pairs_ok = true, .graph = gf };
    const struct ggml_tensor *const wanted[1] = { last };
    ggml_backend_compare_graph_backend(b1, b2, gf, compare_cb, &sel, wanted, 1);
    is_int(sel.calls, 1, "test_nodes: one callback");
    is_int(sel.indices[0], 2, "test_nodes: for the node asked (index 2)");
    is_int(sel.computed1[0], 3, "test_nodes: the whole graph computed first");
    ok(sel.pairs_ok, "test_nodes: the pair agrees");
    ggml_backend_buffer_free(buf);
    ggml_backend_free(b1);
    ggml_backend_free(b2);

    /* view ops are computed but not compared */
    new_pair(&b1, &b2);
    struct ggml_tensor *a = new_f32(8, "a");
    struct ggml_tensor *r = ggml_reshape_2d(ctx, a, 4, 2);
    ggml_set_name(r, "r");
    struct ggml_tensor *c = ggml_cont(ctx, r);
    ggml_set_name(c, "c");
    gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, c);
    buf = ggml_backend_alloc_buffer(b1, 512);
    size_t next = 0;
    ok(ggml_graph_n_nodes(gf) == 2 && buf && place(buf, a, &next) && place(buf, c, &next) &&
       ggml_backend_view_init(r) == GGML_STATUS_SUCCESS, "view graph: reshape + cont");
    set_floats(a, 1);
    struct compare_log views = { .stop_at = -1, .backend1 = b1, .backend2 = b2, .pairs_ok = true, .graph = gf };
    ggml_backend_compare_graph_backend(b1, b2, gf, compare_cb, &views, NULL, 0);
    is_int(views.calls, 1, "compare: view-op nodes (RESHAPE) are not passed to the callback");
    is_int(views.indices[0], 1, "compare: the CONT node (index 1) is");
    ggml_backend_buffer_free(buf);
    ggml_backend_free(b1);
    ggml_backend_free(b2);

    /* errors */
    new_pair(&b1, &b2);
    gf = chain_graph(b1, &buf, &last);
    struct compare_log err = { .stop_at = -1, .backend1 = b1, .backend2 = b2, .pairs_ok = true, .graph = gf };
    tap_log_errors();
    ok(!ggml_backend_compare_graph_backend(NULL, b2, gf, compare_cb, &err, NULL, 0), "compare(NULL backend1) is false");
    logged_one_error("compare(NULL backend1) logs one error");
    ok(!ggml_backend_compare_graph_backend(b1, NULL, gf, compare_cb, &err, NULL, 0), "compare(NULL backend2) is false");
    logged_one_error("compare(NULL backend2) logs one error");
    ok(!ggml_backend_compare_graph_backend(b1, b2, NULL, compare_cb, &err, NULL, 0), "compare(NULL graph) is false");
    logged_one_error("compare(NULL graph) logs one error");
    is_int(err.calls, 0, "failed comparisons call no callback");
    ggml_backend_buffer_free(buf);
    ggml_backend_free(b1);
    ggml_backend_free(b2);
}

int main(void)
{
    tap_capture_log();
    struct ggml_init_params params = { 512 * ggml_tensor_overhead() + 8 * ggml_graph_overhead(), NULL, true };
    ctx = ggml_init(params);
    if (!ctx) {
        printf("Bail out! cannot create a context\n");
        return 1;
    }

    test_device_wrappers();
    test_dev_init();
    test_backend_basics();
    test_async_transfers();
    test_copy_async();
    test_graph_compute();
    test_freed_buffers();
    test_events();
    test_backend_handles();
    test_graph_copy();
    test_compare();

    is_int(violations, 0, "the library never passed the test buffers a range outside them");
    ggml_free(ctx);
    return tap_done();
}
