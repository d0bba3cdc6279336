/*
 * backend.c - backends (streams), events, devices, graph plans, and the
 * graph copy / comparison utilities.
 *
 * Wrappers check handles and arguments, then call the interface tables of
 * ggml-backend-impl.h, supplying the documented default for every optional
 * member.  A backend is a live handle from its creation (ggml_backend_dev_init,
 * or ggml_backend_publish for backends a plugin made itself) until
 * ggml_backend_free.
 */
#include "config.h"

#include <stdlib.h>

#include "ggml-impl.h"
#include "ggml-cpu.h"
#include "backend-private.h"

#define REQUIRE_BACKEND(backend, ret)                                        \
    do {                                                                     \
        if (!ggml__handle_check(GGML__HANDLE_BACKEND, (backend), __func__))  \
            return ret;                                                      \
    } while (0)

#define REQUIRE_DEVICE(device, ret)                  \
    do {                                             \
        if ((device) == NULL) {                      \
            ggml__error("device is NULL");           \
            return ret;                              \
        }                                            \
    } while (0)

/* --------------------------------------------------------------- backends */

ggml_guid_t ggml_backend_guid(ggml_backend_t backend)
{
    REQUIRE_BACKEND(backend, NULL);
    return backend->guid;
}

const char *ggml_backend_name(ggml_backend_t backend)
{
    REQUIRE_BACKEND(backend, NULL);
    return backend->iface.get_name(backend);
}

void ggml_backend_free(ggml_backend_t backend)
{
    if (backend == NULL)
        return;
    if (!ggml__handle_remove(GGML__HANDLE_BACKEND, backend, __func__))
        return;
    backend->iface.free(backend);
}

ggml_backend_buffer_type_t ggml_backend_get_default_buffer_type(ggml_backend_t backend)
{
    REQUIRE_BACKEND(backend, NULL);
    return ggml_backend_dev_buffer_type(backend->device);
}

ggml_backend_buffer_t ggml_backend_alloc_buffer(ggml_backend_t backend, size_t size)
{
    REQUIRE_BACKEND(backend, NULL);
    return ggml_backend_buft_alloc_buffer(ggml_backend_get_default_buffer_type(backend), size);
}

size_t ggml_backend_get_alignment(ggml_backend_t backend)
{
    REQUIRE_BACKEND(backend, 0);
    return ggml_backend_buft_get_alignment(ggml_backend_get_default_buffer_type(backend));
}

size_t ggml_backend_get_max_size(ggml_backend_t backend)
{
    REQUIRE_BACKEND(backend, 0);
    return ggml_backend_buft_get_max_size(ggml_backend_get_default_buffer_type(backend));
}

void ggml_backend_tensor_set_async(ggml_backend_t backend, struct ggml_tensor *tensor,
                                   const void *data, size_t offset, size_t size)
{
    REQUIRE_BACKEND(backend, );
    if (size == 0 && tensor != NULL)
        return;
    if (ggml__check_tensor_transfer(tensor, data, offset, size, __func__) == NULL)
        return;
    if (backend->iface.set_tensor_async)
        backend->iface.set_tensor_async(backend, tensor, data, offset, size);
    else
        ggml_backend_tensor_set(tensor, data, offset, size);
}

void ggml_backend_tensor_get_async(ggml_backend_t backend, const struct ggml_tensor *tensor,
                                   void *data, size_t offset, size_t size)
{
    REQUIRE_BACKEND(backend, );
    if (size == 0 && tensor != NULL)
        return;
    if (ggml__check_tensor_transfer(tensor, data, offset, size, __func__) == NULL)
        return;
    if (backend->iface.get_tensor_async)
        backend->iface.get_tensor_async(backend, tensor, data, offset, size);
    else
        ggml_backend_tensor_get(tensor, data, offset, size);
}

void ggml_backend_tensor_set_2d_async(ggml_backend_t backend, struct ggml_tensor *tensor, const void *data,
                                      size_t offset, size_t size, size_t n_copies, size_t stride_tensor,
                                      size_t stride_data)
{
    REQUIRE_BACKEND(backend, );
    if ((size == 0 || n_copies == 0) && tensor != NULL)
        return;
    if (ggml__check_tensor_transfer_2d(tensor, data, offset, size, n_copies, stride_tensor, stride_data,
                                       __func__) == NULL)
        return;
    if (n_copies > 1 && backend->iface.set_tensor_2d_async != NULL)
        backend->iface.set_tensor_2d_async(backend, tensor, data, offset, size, n_copies, stride_tensor,
                                           stride_data);
    else
        for (size_t i = 0; i < n_copies; i++)
            ggml_backend_tensor_set_async(backend, tensor, (const char *) data + i * stride_data,
                                          offset + i * stride_tensor, size);
}

void ggml_backend_tensor_get_2d_async(ggml_backend_t backend, const struct ggml_tensor *tensor, void *data,
                                      size_t offset, size_t size, size_t n_copies, size_t stride_tensor,
                                      size_t stride_data)
{
    REQUIRE_BACKEND(backend, );
    if ((size == 0 || n_copies == 0) && tensor != NULL)
        return;
    if (ggml__check_tensor_transfer_2d(tensor, data, offset, size, n_copies, stride_tensor, stride_data,
                                       __func__) == NULL)
        return;
    if (n_copies > 1 && backend->iface.get_tensor_2d_async != NULL)
        backend->iface.get_tensor_2d_async(backend, tensor, data, offset, size, n_copies, stride_tensor,
                                           stride_data);
    else
        for (size_t i = 0; i < n_copies; i++)
            ggml_backend_tensor_get_async(backend, tensor, (char *) data + i * stride_data,
                                          offset + i * stride_tensor, size);
}

void ggml_backend_synchronize(ggml_backend_t backend)
{
    REQUIRE_BACKEND(backend, );
    if (backend->iface.synchronize)
        backend->iface.synchronize(backend);
}

ggml_backend_graph_plan_t ggml_backend_graph_plan_create(ggml_backend_t backend, struct ggml_cgraph *cgraph)
{
    REQUIRE_BACKEND(backend, NULL);
    if (cgraph == NULL) {
        ggml__error("cgraph is NULL");
        return NULL;
    }
    if (backend->iface.graph_plan_create == NULL) {
        ggml__error("backend %s does not support graph plans", ggml_backend_name(backend));
        return NULL;
    }
    return backend->iface.graph_plan_create(backend, cgraph);
}

void ggml_backend_graph_plan_free(ggml_backend_t backend, ggml_backend_graph_plan_t plan)
{
    REQUIRE_BACKEND(backend, );
    if (plan != NULL && backend->iface.graph_plan_free)
        backend->iface.graph_plan_free(backend, plan);
}

enum ggml_status ggml_backend_graph_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t plan)
{
    REQUIRE_BACKEND(backend, GGML_STATUS_FAILED);
    if (plan == NULL) {
        ggml__error("plan is NULL");
        return GGML_STATUS_FAILED;
    }
    if (backend->iface.graph_plan_compute == NULL) {
        ggml__error("backend %s does not support graph plans", ggml_backend_name(backend));
        return GGML_STATUS_FAILED;
    }
    return backend->iface.graph_plan_compute(backend, plan);
}

bool ggml__buffer_live(struct ggml__live_buffers *known, ggml_backend_buffer_t buffer, const struct ggml_tensor *t)
{
    for (unsigned i = 0; i < known->n; i++)
        if (known->seen[i] == buffer) {
            known->last = buffer;
            return true;
        }
    if (!ggml__handle_is_live(GGML__HANDLE_BUFFER, buffer)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, known->func,
                     "tensor '%s' is in buffer %p, which is not live (freed, with its graph allocator "
                     "or on its own)", t->name, (void *) buffer);
        return false;
    }
    const unsigned capacity = sizeof known->seen / sizeof known->seen[0];
    known->seen[known->next] = buffer;
    known->next = (known->next + 1) % capacity;
    if (known->n < capacity)
        known->n++;
    known->last = buffer;
    return true;
}

bool ggml__graph_buffers_live(const struct ggml_cgraph *graph, const char *func)
{
    struct ggml__live_buffers known = GGML__LIVE_BUFFERS_INIT(func);
    for (int i = 0; i < graph->n_leafs; i++)
        if (!ggml__tensor_buffer_live(&known, graph->leafs[i]))
            return false;
    for (int i = 0; i < graph->n_nodes; i++) {
        const struct ggml_tensor *node = graph->nodes[i];
        if (!ggml__tensor_buffer_live(&known, node))
            return false;
        /* a graph view (a scheduler's split) lists no leafs: read the sources */
        for (int j = 0; node != NULL && j < GGML_MAX_SRC; j++)
            if (!ggml__tensor_buffer_live(&known, node->src[j]))
                return false;
    }
    return true;
}

enum ggml_status ggml_backend_graph_compute_async(ggml_backend_t backend, struct ggml_cgraph *cgraph)
{
    REQUIRE_BACKEND(backend, GGML_STATUS_FAILED);
    if (cgraph == NULL) {
        ggml__error("cgraph is NULL");
        return GGML_STATUS_FAILED;
    }
    if (ggml__graph_failed(cgraph)) {
        ggml__error("the graph was built from a NULL tensor (see the first error logged)");
        return GGML_STATUS_FAILED;
    }
    /* the CPU backend checks the buffers as it walks the graph */
    if (!ggml_backend_is_cpu(backend) && !ggml__graph_buffers_live(cgraph, __func__))
        return GGML_STATUS_FAILED;
    return backend->iface.graph_compute(backend, cgraph);
}

enum ggml_status ggml_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph *cgraph)
{
    enum ggml_status status = ggml_backend_graph_compute_async(backend, cgraph);
    if (status == GGML_STATUS_SUCCESS)
        ggml_backend_synchronize(backend);
    return status;
}

bool ggml_backend_supports_op(ggml_backend_t backend, const struct ggml_tensor *op)
{
    REQUIRE_BACKEND(backend, false);
    return ggml_backend_dev_supports_op(backend->device, op);
}

bool ggml_backend_supports_buft(ggml_backend_t backend, ggml_backend_buffer_type_t buft)
{
    REQUIRE_BACKEND(backend, false);
    return ggml_backend_dev_supports_buft(backend->device, buft);
}

bool ggml_backend_offload_op(ggml_backend_t backend, const struct ggml_tensor *op)
{
    REQUIRE_BACKEND(backend, false);
    return ggml_backend_dev_offload_op(backend->device, op);
}

ggml_backend_dev_t ggml_backend_get_device(ggml_backend_t backend)
{
    REQUIRE_BACKEND(backend, NULL);
    return backend->device;
}

void ggml_backend_tensor_copy_async(ggml_backend_t backend_src, ggml_backend_t backend_dst,
                                    const struct ggml_tensor *src, struct ggml_tensor *dst)
{
    REQUIRE_BACKEND(backend_src, );
    REQUIRE_BACKEND(backend_dst, );
    if (!ggml__check_copy(src, dst, __func__) || src == dst)
        return;
    if (backend_dst->iface.cpy_tensor_async &&
        backend_dst->iface.cpy_tensor_async(backend_src, backend_dst, src, dst))
        return;
    /* what an asynchronous copy would see: both queues drained first */
    ggml_backend_synchronize(backend_src);
    ggml_backend_synchronize(backend_dst);
    ggml_backend_tensor_copy(src, dst);
}

/* ----------------------------------------------------------------- events */

#define REQUIRE_EVENT(event, ret)                                           \
    do {                                                                    \
        if (!ggml__handle_check(GGML__HANDLE_EVENT, (event), __func__))     \
            return ret;                                                     \
    } while (0)

ggml_backend_event_t ggml_backend_event_new(ggml_backend_dev_t device)
{
    REQUIRE_DEVICE(device, NULL);
    /* a device without events answers NULL: that is a capability, not an error */
    if (device->iface.event_new == NULL)
        return NULL;
    ggml_backend_event_t event = device->iface.event_new(device);
    if (event != NULL && !ggml__handle_add(GGML__HANDLE_EVENT, event, __func__)) {
        if (device->iface.event_free)
            device->iface.event_free(device, event);
        return NULL;
    }
    return event;
}

void ggml_backend_event_free(ggml_backend_event_t event)
{
    if (event == NULL)
        return;
    if (!ggml__handle_remove(GGML__HANDLE_EVENT, event, __func__))
        return;
    if (event->device->iface.event_free)
        event->device->iface.event_free(event->device, event);
}

void ggml_backend_event_record(ggml_backend_event_t event, ggml_backend_t backend)
{
    REQUIRE_EVENT(event, );
    REQUIRE_BACKEND(backend, );
    if (backend->iface.event_record)
        backend->iface.event_record(backend, event);
}

void ggml_backend_event_synchronize(ggml_backend_event_t event)
{
    REQUIRE_EVENT(event, );
    if (event->device->iface.event_synchronize)
        event->device->iface.event_synchronize(event->device, event);
}

void ggml_backend_event_wait(ggml_backend_t backend, ggml_backend_event_t event)
{
    REQUIRE_BACKEND(backend, );
    REQUIRE_EVENT(event, );
    if (backend->iface.event_wait)
        backend->iface.event_wait(backend, event);
    else
        ggml_backend_event_synchronize(event);
}

/* ---------------------------------------------------------------- devices */

const char *ggml_backend_dev_name(ggml_backend_dev_t device)
{
    REQUIRE_DEVICE(device, NULL);
    return device->iface.get_name(device);
}

const char *ggml_backend_dev_description(ggml_backend_dev_t device)
{
    REQUIRE_DEVICE(device, NULL);
    return device->iface.get_description(device);
}

void ggml_backend_dev_memory(ggml_backend_dev_t device, size_t *free_bytes, size_t *total_bytes)
{
    size_t free_local = 0, total_local = 0;
    if (device == NULL)
        ggml__error("device is NULL");
    else
        device->iface.get_memory(device, &free_local, &total_local);
    if (free_bytes)
        *free_bytes = free_local;
    if (total_bytes)
        *total_bytes = total_local;
}

enum ggml_backend_dev_type ggml_backend_dev_type(ggml_backend_dev_t device)
{
    REQUIRE_DEVICE(device, GGML_BACKEND_DEVICE_TYPE_CPU);
    return device->iface.get_type(device);
}

void ggml_backend_dev_get_props(ggml_backend_dev_t device, struct ggml_backend_dev_props *props)
{
    if (props == NULL) {
        ggml__error("props is NULL");
        return;
    }
    memset(props, 0, sizeof *props);
    REQUIRE_DEVICE(device, );
    device->iface.get_props(device, props);
}

ggml_backend_reg_t ggml_backend_dev_backend_reg(ggml_backend_dev_t device)
{
    REQUIRE_DEVICE(device, NULL);
    return device->reg;
}

/*
 * Records backend, just made by a plugin or a device, as a live handle and
 * returns it; when that fails (out of memory, logged as func) the backend
 * is freed through its own interface and NULL returned.
 */
static ggml_backend_t publish_backend(ggml_backend_t backend, const char *func)
{
    if (!ggml__handle_add(GGML__HANDLE_BACKEND, backend, func)) {
        backend->iface.free(backend);
        return NULL;
    }
    return backend;
}

ggml_backend_t ggml_backend_publish(ggml_backend_t backend)
{
    return backend != NULL ? publish_backend(backend, __func__) : NULL;
}

ggml_backend_t ggml_backend_dev_init(ggml_backend_dev_t device, const char *params)
{
    REQUIRE_DEVICE(device, NULL);
    const unsigned errors = ggml__errors_logged();
    ggml_backend_t backend = device->iface.init_backend(device, params);
    if (backend == NULL) {
        if (ggml__errors_logged() == errors)
            ggml__error("device %s could not create a backend", ggml_backend_dev_name(device));
        return NULL;
    }
    return publish_backend(backend, __func__);
}

ggml_backend_buffer_type_t ggml_backend_dev_buffer_type(ggml_backend_dev_t device)
{
    REQUIRE_DEVICE(device, NULL);
    return device->iface.get_buffer_type(device);
}

ggml_backend_buffer_type_t ggml_backend_dev_host_buffer_type(ggml_backend_dev_t device)
{
    REQUIRE_DEVICE(device, NULL);
    return device->iface.get_host_buffer_type ? device->iface.get_host_buffer_type(device) : NULL;
}

ggml_backend_buffer_t ggml_backend_dev_buffer_from_host_ptr(ggml_backend_dev_t device, void *ptr,
                                                            size_t size, size_t max_tensor_size)
{
    REQUIRE_DEVICE(device, NULL);
    if (device->iface.buffer_from_host_ptr == NULL) {
        ggml__error("device %s cannot wrap host memory (caps.buffer_from_host_ptr is false)",
                    ggml_backend_dev_name(device));
        return NULL;
    }
    return device->iface.buffer_from_host_ptr(device, ptr, size, max_tensor_size);
}

bool ggml_backend_dev_supports_op(ggml_backend_dev_t device, const struct ggml_tensor *op)
{
    REQUIRE_DEVICE(device, false);
    if (op == NULL)
        return false;
    return device->iface.supports_op(device, op);
}

bool ggml_backend_dev_supports_buft(ggml_backend_dev_t device, ggml_backend_buffer_type_t buft)
{
    REQUIRE_DEVICE(device, false);
    if (buft == NULL)
        return false;
    return device->iface.supports_buft(device, buft);
}

bool ggml_backend_dev_offload_op(ggml_backend_dev_t device, const struct ggml_tensor *op)
{
    REQUIRE_DEVICE(device, false);
    if (op == NULL)
        return false;
    return device->iface.offload_op ? device->iface.offload_op(device, op) : false;
}

/* ------------------------------------------------------------- graph copy */

/* Original tensor -> copy, keyed by the slots of a hash set. */
struct tensor_map {
    struct ggml_hash_set set;
    struct ggml_tensor **copies;
    struct ggml_context *ctx_allocated;
    struct ggml_context *ctx_unallocated;
};

/*
 * Copy of t's metadata (type, shape, strides, op, params, flags, name) and,
 * recursively, of its view source and sources; views go to the context
 * that allocates nothing, since they take their memory from their source.
 */
static struct ggml_tensor *map_tensor(struct tensor_map *map, struct ggml_tensor *t)
{
    size_t slot = ggml__hash_find_or_insert(&map->set, t);
    if (slot == GGML__HASHSET_FULL)
        return NULL;
    if (map->copies[slot] != NULL)
        return map->copies[slot];

    struct ggml_context *ctx = t->view_src ? map->ctx_unallocated : map->ctx_allocated;
    struct ggml_tensor *copy = ggml_new_tensor(ctx, t->type, GGML_MAX_DIMS, t->ne);
    if (copy == NULL)
        return NULL;
    map->copies[slot] = copy;
    memcpy(copy->nb, t->nb, sizeof copy->nb);
    copy->op = t->op;
    memcpy(copy->op_params, t->op_params, sizeof copy->op_params);
    copy->flags = t->flags;
    ggml_set_name(copy, t->name);
    if (t->view_src) {
        copy->view_src = map_tensor(map, t->view_src);
        copy->view_offs = t->view_offs;
        if (copy->view_src == NULL)
            return NULL;
    }
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (t->src[i] == NULL)
            continue;
        copy->src[i] = map_tensor(map, t->src[i]);
        if (copy->src[i] == NULL)
            return NULL;
    }
    return copy;
}

/* Gives copies their memory (views) and data (tensors whose original has any). */
static bool map_init_data(struct tensor_map *map)
{
    for (size_t i = 0; i < map->set.size; i++) {
        if (!ggml__bitset_get(map->set.used, i))
            continue;
        struct ggml_tensor *copy = map->copies[i];
        if (copy->view_src == NULL && copy->buffer == NULL)
            return false;
    }
    for (size_t i = 0; i < map->set.size; i++) {
        if (!ggml__bitset_get(map->set.used, i))
            continue;
        struct ggml_tensor *orig = map->set.keys[i], *copy = map->copies[i];
        if (copy->view_src != NULL) {
            if (ggml_backend_view_init(copy) != GGML_STATUS_SUCCESS)
                return false;
        } else if (orig->data != NULL && (orig->buffer != NULL)) {
            ggml_backend_tensor_copy(orig, copy);
        }
    }
    return true;
}

void ggml_backend_graph_copy_free(struct ggml_backend_graph_copy copy)
{
    ggml_backend_buffer_free(copy.buffer);
    ggml_free(copy.ctx_allocated);
    ggml_free(copy.ctx_unallocated);
}

struct ggml_backend_graph_copy ggml_backend_graph_copy(ggml_backend_t backend, struct ggml_cgraph *graph)
{
    struct ggml_backend_graph_copy result = { NULL, NULL, NULL, NULL };
    REQUIRE_BACKEND(backend, result);
    if (graph == NULL) {
        ggml__error("graph is NULL");
        return result;
    }

    const size_t n_tensors = (size_t) graph->n_nodes + (size_t) graph->n_leafs;
    struct tensor_map map = { .set = ggml__hash_set_new(2 * n_tensors + 1) };
    if (map.set.keys == NULL)
        return result;
    map.copies = calloc(map.set.size, sizeof *map.copies);
    const size_t ctx_size = map.set.size * ggml_tensor_overhead() +
                            ggml_graph_overhead_custom((size_t) (graph->size > 0 ? graph->size : 1), false);
    struct ggml_init_params params = { ctx_size, NULL, true };
    map.ctx_allocated = ggml_init(params);
    map.ctx_unallocated = ggml_init(params);

    bool ok = map.copies && map.ctx_allocated && map.ctx_unallocated;
    struct ggml_cgraph *copy_graph = NULL;
    if (ok)
        copy_graph = ggml_new_graph_custom(map.ctx_allocated, (size_t) (graph->size > 0 ? graph->size : 1), false);
    ok = ok && copy_graph != NULL;
    for (int i = 0; ok && i < graph->n_nodes; i++) {
        struct ggml_tensor *copy = map_tensor(&map, graph->nodes[i]);
        ok = copy != NULL;
        if (ok)
            ggml_graph_add_node(copy_graph, copy);
    }
    for (int i = 0; ok && i < graph->n_leafs; i++)
        ok = map_tensor(&map, graph->leafs[i]) != NULL;
    if (!ok)
        ggml__error("out of memory copying a graph of %d nodes", graph->n_nodes);

    if (ok) {
        result.buffer = ggml_backend_alloc_ctx_tensors(map.ctx_allocated, backend);
        ok = result.buffer != NULL && map_init_data(&map);
        if (!ok)
            ggml__error("cannot allocate the copy of the graph on backend %s", ggml_backend_name(backend));
    }

    if (ok) {
        result.ctx_allocated = map.ctx_allocated;
        result.ctx_unallocated = map.ctx_unallocated;
        result.graph = copy_graph;
    } else {
        ggml_backend_buffer_free(result.buffer);
        result.buffer = NULL;
        ggml_free(map.ctx_allocated);
        ggml_free(map.ctx_unallocated);
    }
    free(map.copies);
    ggml__hash_set_free(&map.set);
    return result;
}

bool ggml_backend_compare_graph_backend(ggml_backend_t backend1, ggml_backend_t backend2,
                                        struct ggml_cgraph *graph, ggml_backend_eval_callback callback,
                                        void *user_data, const struct ggml_tensor *const *test_nodes,
                                        size_t num_test_nodes)
{
    REQUIRE_BACKEND(backend1, false);
    REQUIRE_BACKEND(backend2, false);
    if (graph == NULL || callback == NULL) {
        ggml__error("%s is NULL", graph == NULL ? "graph" : "callback");
        return false;
    }
    struct ggml_backend_graph_copy copy = ggml_backend_graph_copy(backend2, graph);
    if (copy.graph == NULL)
        return false;

    struct ggml_cgraph *g1 = graph, *g2 = copy.graph;
    bool agreed = true;
    if (test_nodes == NULL || num_test_nodes == 0) {
        /* one node at a time, so that each result is seen before it is reused;
           nodes that only reinterpret memory have nothing of their own to compare */
        for (int i = 0; agreed && i < g1->n_nodes; i++) {
            const enum ggml_op op = g1->nodes[i]->op;
            if (op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE)
                continue;
            struct ggml_cgraph v1 = ggml_graph_view(g1, i, i + 1);
            struct ggml_cgraph v2 = ggml_graph_view(g2, i, i + 1);
            if (ggml_backend_graph_compute(backend1, &v1) != GGML_STATUS_SUCCESS ||
                ggml_backend_graph_compute(backend2, &v2) != GGML_STATUS_SUCCESS) {
                agreed = false;
                break;
            }
            agreed = callback(i, g1->nodes[i], g2->nodes[i], user_data);
        }
    } else {
        agreed = ggml_backend_graph_compute(backend1, g1) == GGML_STATUS_SUCCESS &&
                 ggml_backend_graph_compute(backend2, g2) == GGML_STATUS_SUCCESS;
        for (size_t k = 0; agreed && k < num_test_nodes; k++) {
            int index = -1;
            for (int i = 0; i < g1->n_nodes; i++)
                if (g1->nodes[i] == test_nodes[k])
                    index = i;
            if (index < 0) {
                ggml__error("test node %zu is not a node of the graph", k);
                agreed = false;
                break;
            }
            agreed = callback(index, g1->nodes[index], g2->nodes[index], user_data);
        }
    }
    ggml_backend_graph_copy_free(copy);
    return agreed;
}
