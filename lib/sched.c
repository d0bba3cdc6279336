/*
 * sched.c - the backend scheduler: runs one graph over several backends.
 *
 * A scheduler owns n backends in priority order (the last is the CPU),
 * one compute buffer type per backend and one multi-buffer gallocr over
 * those types (gallocr buffer id == backend index).  Scheduling a graph:
 *
 *   1. assignment: every tensor of the graph gets a backend index, in the
 *      passes of assign_backends() (pins, location of the data, expansion
 *      to neighbours, upgrade to higher priorities, then the rest);
 *   2. splitting: consecutive nodes of one backend form a split; a source
 *      on another backend whose buffer type the split's backend cannot use
 *      is copied into a tensor of the split's backend (made once per
 *      source and backend), and the reading node's src[] is pointed at the
 *      copy;
 *   3. the scheduler's own graph is built: per split, the input copies
 *      (as op NONE nodes, so that the allocator gives them memory at the
 *      start of the split) then the split's nodes; pipeline copies and
 *      the user's graph leafs are its leafs;
 *   4. the gallocr allocates that graph (reusing its last plan when the
 *      graph fits it);
 *   5. computing walks the splits in order: copy the inputs in, compute
 *      the split's nodes on its backend.
 *
 * Every table grows with the graph: there is no limit on nodes, splits or
 * split inputs.  Each pass is linear in the number of nodes and sources
 * (times the number of backends), so a 10,000-node graph schedules in a
 * few milliseconds.
 *
 * Invariant of the copy tensors: a copy has op NONE and src[0] pointing
 * at the tensor it copies.  src[0] orders the allocator (the original
 * stays alive until the copy is made) and lets the next split restore a
 * rewritten graph to its original sources.
 *
 * Threads: a scheduler is used by one thread at a time.  The entry points
 * that change its state or compute (reserve, reserve_size, split_graph,
 * alloc_graph, graph_compute, graph_compute_async, synchronize, reset,
 * set_eval_callback, set_tensor_backend) claim it with an atomic flag for
 * the length of the call; a call that finds it claimed (another thread,
 * or the evaluation callback calling back in) logs one error and fails.
 * The queries (get_*) read without claiming: they are for the thread that
 * uses the scheduler, and from the evaluation callback.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-impl.h"
#include "backend-private.h"

/* Input copies kept in flight with `parallel` (upstream's value). */
#define SCHED_PIPELINE_COPIES 4

#define NO_BACKEND (-1)

/* Per-tensor state of the graph being scheduled, by hash slot. */
struct tensor_info {
    int32_t backend_id;   /* assigned backend, or NO_BACKEND */
    int32_t copy_block;   /* index of the tensor's block in sched->copies, or -1 */
    bool pinned;          /* backend_id is the caller's pin: no pass moves it */
};

/* A pin made with ggml_backend_sched_set_tensor_backend. */
struct pin {
    struct ggml_tensor *tensor;
    int backend_id;
};

/* A source a split copies in from another backend. */
struct split_input {
    struct ggml_tensor *tensor;  /* the original */
    int32_t from_backend;        /* where the original lives */
    int32_t copy_block;          /* its block in sched->copies */
};

/* A node source to point at a copy once the copies exist. */
struct rewrite {
    int32_t node;        /* index in the user's graph */
    int32_t src;         /* which src[] */
    int32_t copy_block;
    int32_t backend_id;  /* the backend the copy is for */
};

struct split {
    int backend_id;
    int node_start, node_end;    /* the user's nodes [start, end) */
    int input_start, n_inputs;   /* into sched->inputs */
    int graph_start, graph_end;  /* the split's nodes in sched->graph */
};

struct ggml_backend_sched {
    int n_backends;
    ggml_backend_t *backends;
    ggml_backend_buffer_type_t *bufts;
    bool op_offload;

    ggml_gallocr_t galloc;

    /* pipeline copies: n_copies is 1, or SCHED_PIPELINE_COPIES */
    int n_copies;
    int cur_copy;
    int next_copy;
    ggml_backend_event_t *events;  /* [backend * n_copies + copy], NULL entries allowed */

    /* pins, until ggml_backend_sched_reset */
    struct pin *pins;
    size_t n_pins, cap_pins;

    /* the graph being scheduled */
    struct ggml_hash_set tensors;
    struct tensor_info *info;       /* by slot of tensors */
    bool tables_live;               /* tensors/info describe the last split graph */

    /* copies: blocks of n_backends * n_copies tensors, NULL = none,
     * &copy_wanted = to be made */
    struct ggml_tensor **copies;
    size_t n_copy_blocks, cap_copies;

    struct split *splits;
    size_t n_splits, cap_splits;
    struct split_input *inputs;
    size_t n_inputs, cap_inputs;
    struct split_input *graph_inputs;   /* user inputs that get pipeline copies */
    size_t n_graph_inputs, cap_graph_inputs;
    struct rewrite *rewrites;
    size_t n_rewrites, cap_rewrites;

    /* the tensors of the copies (no data: the gallocr places them) */
    struct ggml_context *copy_ctx;

    /* the scheduler's graph: input copies + the user's nodes */
    struct ggml_cgraph graph;
    size_t cap_graph_nodes, cap_graph_leafs;
    int *node_backend_ids, *leaf_backend_ids;
    int *prev_node_backend_ids, *prev_leaf_backend_ids;
    size_t cap_prev_nodes, cap_prev_leafs;
    int prev_n_nodes, prev_n_leafs;

    struct ggml_cgraph *user_graph;     /* the graph split last */
    enum ggml_status split_status;      /* outcome of the last split */
    bool is_alloc;                      /* user_graph is allocated */

    ggml_backend_sched_eval_callback callback;
    void *callback_data;

    atomic_bool busy;                   /* claimed by a call (see the header) */
};

/* Marks a copy that the split wants and that is not made yet. */
static struct ggml_tensor copy_wanted;

#define REQUIRE_SCHED(sched, ret)                                         \
    do {                                                                  \
        if (!ggml__handle_check(GGML__HANDLE_SCHED, (sched), __func__))   \
            return ret;                                                   \
    } while (0)

/* True when the caller may go on with sched, which it then holds until
 * sched_release; false, logged as func, for a bad handle or a scheduler
 * another call holds. */
static bool sched_claim(struct ggml_backend_sched *sched, const char *func)
{
    return ggml__handle_check(GGML__HANDLE_SCHED, sched, func) &&
           ggml__claim(&sched->busy, "the scheduler", func);
}

static void sched_release(struct ggml_backend_sched *sched)
{
    ggml__release(&sched->busy);
}

/* ------------------------------------------------------------ backends */

static bool dev_supports_op(const struct ggml_backend_sched *s, int b, const struct ggml_tensor *op)
{
    ggml_backend_dev_t dev = s->backends[b]->device;
    return dev->iface.supports_op(dev, op);
}

static bool dev_supports_buft(const struct ggml_backend_sched *s, int b, ggml_backend_buffer_type_t buft)
{
    ggml_backend_dev_t dev = s->backends[b]->device;
    return dev->iface.supports_buft(dev, buft);
}

static bool dev_offload_op(const struct ggml_backend_sched *s, int b, const struct ggml_tensor *op)
{
    ggml_backend_dev_t dev = s->backends[b]->device;
    return dev->iface.offload_op != NULL && dev->iface.offload_op(dev, op);
}

/* Index of backend in the scheduler, or NO_BACKEND (logged as func). */
static int backend_index(const struct ggml_backend_sched *s, ggml_backend_t backend, const char *func)
{
    for (int b = 0; b < s->n_backends; b++)
        if (s->backends[b] == backend)
            return b;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "backend %p is not one of the scheduler's %d backends",
                 (void *) backend, s->n_backends);
    return NO_BACKEND;
}

/* Every backend is still live (the caller may have freed one). */
static bool backends_live(const struct ggml_backend_sched *s, const char *func)
{
    for (int b = 0; b < s->n_backends; b++)
        if (!ggml__handle_check(GGML__HANDLE_BACKEND, s->backends[b], func))
            return false;
    return true;
}

static ggml_backend_event_t event_of(const struct ggml_backend_sched *s, int b, int copy)
{
    return s->events ? s->events[b * s->n_copies + copy] : NULL;
}

static void synchronize_all(struct ggml_backend_sched *s)
{
    for (int b = 0; b < s->n_backends; b++)
        ggml_backend_synchronize(s->backends[b]);
}

/* ------------------------------------------------------------ creation */

static void sched_destroy(struct ggml_backend_sched *s)
{
    if (s->events != NULL)
        for (int i = 0; i < s->n_backends * s->n_copies; i++)
            ggml_backend_event_free(s->events[i]);
    ggml_gallocr_free(s->galloc);
    ggml_free(s->copy_ctx);
    ggml__hash_set_free(&s->tensors);
    free(s->info);
    free(s->copies);
    free(s->pins);
    free(s->splits);
    free(s->inputs);
    free(s->graph_inputs);
    free(s->rewrites);
    free(s->graph.nodes);
    free(s->graph.leafs);
    free(s->node_backend_ids);
    free(s->leaf_backend_ids);
    free(s->prev_node_backend_ids);
    free(s->prev_leaf_backend_ids);
    free(s->events);
    free(s->bufts);
    free(s->backends);
    free(s);
}

/* Checks the arguments of ggml_backend_sched_new; logs the first problem. */
static bool check_new_args(ggml_backend_t *backends, ggml_backend_buffer_type_t *bufts, int n_backends,
                           const char *func)
{
    if (backends == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "backends is NULL");
        return false;
    }
    if (n_backends < 1) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "n_backends is %d; at least the CPU backend is needed",
                     n_backends);
        return false;
    }
    for (int b = 0; b < n_backends; b++) {
        if (!ggml__handle_check(GGML__HANDLE_BACKEND, backends[b], func))
            return false;
        ggml_backend_dev_t dev = backends[b]->device;
        if (dev == NULL || dev->iface.supports_op == NULL || dev->iface.supports_buft == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "backend %d (%s) has no device that can answer "
                         "supports_op and supports_buft", b, ggml_backend_name(backends[b]));
            return false;
        }
        ggml_backend_buffer_type_t buft = bufts ? bufts[b] : ggml_backend_get_default_buffer_type(backends[b]);
        if (buft == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "backend %d (%s) has no buffer type", b,
                         ggml_backend_name(backends[b]));
            return false;
        }
        if (!dev->iface.supports_buft(dev, buft)) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "backend %d (%s) cannot use buffer type %s", b,
                         ggml_backend_name(backends[b]), ggml_backend_buft_name(buft));
            return false;
        }
    }
    ggml_backend_dev_t last = backends[n_backends - 1]->device;
    if (last->iface.get_type == NULL || last->iface.get_type(last) != GGML_BACKEND_DEVICE_TYPE_CPU) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the last backend (%s) must be a CPU backend",
                     ggml_backend_name(backends[n_backends - 1]));
        return false;
    }
    return true;
}

ggml_backend_sched_t ggml_backend_sched_new(ggml_backend_t *backends, ggml_backend_buffer_type_t *bufts,
                                            int n_backends, size_t graph_size, bool parallel, bool op_offload)
{
    (void) graph_size; /* a hint only: every table grows with the graph */
    if (!check_new_args(backends, bufts, n_backends, __func__))
        return NULL;

    struct ggml_backend_sched *s = calloc(1, sizeof *s);
    if (s == NULL)
        goto oom;
    s->n_backends = n_backends;
    s->op_offload = op_offload;
    s->n_copies = parallel ? SCHED_PIPELINE_COPIES : 1;
    s->split_status = GGML_STATUS_SUCCESS;
    s->backends = malloc((size_t) n_backends * sizeof *s->backends);
    s->bufts = malloc((size_t) n_backends * sizeof *s->bufts);
    if (s->backends == NULL || s->bufts == NULL)
        goto oom;
    for (int b = 0; b < n_backends; b++) {
        s->backends[b] = backends[b];
        s->bufts[b] = bufts ? bufts[b] : ggml_backend_get_default_buffer_type(backends[b]);
    }

    s->galloc = ggml_gallocr_new_n(s->bufts, n_backends);
    if (s->galloc == NULL) {
        sched_destroy(s);
        return NULL; /* logged */
    }

    if (s->n_copies > 1) {
        s->events = calloc((size_t) n_backends * (size_t) s->n_copies, sizeof *s->events);
        if (s->events == NULL)
            goto oom;
        /* a device without events answers NULL: the copies then wait by
         * synchronizing the backend */
        for (int b = 0; b < n_backends; b++)
            for (int c = 0; c < s->n_copies; c++)
                s->events[b * s->n_copies + c] = ggml_backend_event_new(backends[b]->device);
    }

    if (!ggml__handle_add(GGML__HANDLE_SCHED, s, __func__)) {
        sched_destroy(s);
        return NULL;
    }
    return s;

oom:
    ggml__error("out of memory");
    if (s != NULL)
        sched_destroy(s);
    return NULL;
}

void ggml_backend_sched_free(ggml_backend_sched_t sched)
{
    if (sched == NULL)
        return;
    if (!ggml__handle_remove(GGML__HANDLE_SCHED, sched, __func__))
        return;
    sched_destroy(sched);
}

/* -------------------------------------------------------- tensor tables */

/* The state of t, created (unassigned, no copies) on first use.  The set
 * is sized by size_tables() for every tensor a split touches, and never
 * moves during a split, so the pointer stays valid until the next one. */
static struct tensor_info *info_of(struct ggml_backend_sched *s, struct ggml_tensor *t)
{
    size_t slot = ggml__hash_find(&s->tensors, t);
    GGML_ASSERT(slot != GGML__HASHSET_FULL);
    if (!ggml__bitset_get(s->tensors.used, slot)) {
        ggml__bitset_set(s->tensors.used, slot);
        s->tensors.keys[slot] = t;
        s->info[slot] = (struct tensor_info) { .backend_id = NO_BACKEND, .copy_block = -1, .pinned = false };
    }
    return &s->info[slot];
}

static int backend_of(struct ggml_backend_sched *s, struct ggml_tensor *t)
{
    return info_of(s, t)->backend_id;
}

/*
 * Empties the tables and makes them big enough for graph: a split touches
 * the leafs and their view sources, the nodes, their sources and the view
 * sources of both, and the pinned tensors.
 */
static bool size_tables(struct ggml_backend_sched *s, const struct ggml_cgraph *graph, const char *func)
{
    s->tables_live = false;
    size_t bound = 2 * (size_t) graph->n_leafs + s->n_pins + 1;
    for (int i = 0; i < graph->n_nodes; i++) {
        bound += 2;
        for (int j = 0; j < GGML_MAX_SRC; j++)
            if (graph->nodes[i]->src[j] != NULL)
                bound += 2;
    }
    if (!ggml__hash_table_reserve(&s->tensors, (void **) &s->info, sizeof *s->info, 2 * bound, func))
        return false;
    ggml__hash_set_reset(&s->tensors);
    s->n_copy_blocks = 0;
    s->n_splits = 0;
    s->n_inputs = 0;
    s->n_graph_inputs = 0;
    s->n_rewrites = 0;
    s->tables_live = true;
    return true;
}

/* Grows an array of the scheduler by one item; false (logged) when out of memory. */
#define PUSH(s, array, count, cap, func)                                                 \
    (ggml__grow_array((void **) &(s)->array, &(s)->cap, (s)->count + 1, sizeof *(s)->array) \
         ? true                                                                          \
         : (ggml__log_at(GGML_LOG_LEVEL_ERROR, (func), "out of memory"), false))

/* The copies of t, made on first use (all NULL); NULL when out of memory (logged). */
static struct ggml_tensor **copies_of(struct ggml_backend_sched *s, struct ggml_tensor *t, const char *func)
{
    struct tensor_info *info = info_of(s, t);
    size_t block = (size_t) s->n_backends * (size_t) s->n_copies;
    if (info->copy_block < 0) {
        if (!ggml__grow_array((void **) &s->copies, &s->cap_copies, (s->n_copy_blocks + 1) * block,
                              sizeof *s->copies)) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory");
            return NULL;
        }
        memset(s->copies + s->n_copy_blocks * block, 0, block * sizeof *s->copies);
        info->copy_block = (int32_t) s->n_copy_blocks++;
    }
    return s->copies + (size_t) info->copy_block * block;
}

/* Where the copy number `copy` of the tensor with block copy_block on backend b is kept. */
static struct ggml_tensor **copy_slot(const struct ggml_backend_sched *s, int32_t copy_block, int b, int copy)
{
    size_t block = (size_t) s->n_backends * (size_t) s->n_copies;
    return &s->copies[(size_t) copy_block * block + (size_t) b * (size_t) s->n_copies + (size_t) copy];
}

static struct ggml_tensor *copy_at(const struct ggml_backend_sched *s, int32_t copy_block, int b, int copy)
{
    return *copy_slot(s, copy_block, b, copy);
}

/* ----------------------------------------------------------- assignment */

static bool is_view_op(enum ggml_op op)
{
    return op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE ||
           op == GGML_OP_NONE;
}

/* The buffer holding t's data (its view source's for a view), or NULL. */
static ggml_backend_buffer_t data_buffer(const struct ggml_tensor *t)
{
    return t->view_src ? t->view_src->buffer : t->buffer;
}

/* Highest-priority backend that can use the buffer holding t and run op,
 * or NO_BACKEND (also when t has no buffer). */
static int backend_for_buffer(const struct ggml_backend_sched *s, const struct ggml_tensor *t,
                              const struct ggml_tensor *op)
{
    ggml_backend_buffer_t buffer = data_buffer(t);
    if (buffer == NULL)
        return NO_BACKEND;
    for (int b = 0; b < s->n_backends; b++)
        if (dev_supports_buft(s, b, buffer->buft) && dev_supports_op(s, b, op))
            return b;
    return NO_BACKEND;
}

/* Backend b can read t where it is (or will be, for an assigned tensor). */
static bool can_read(struct ggml_backend_sched *s, struct ggml_tensor *t, int b)
{
    ggml_backend_buffer_t buffer = data_buffer(t);
    ggml_backend_buffer_type_t buft = buffer ? buffer->buft : NULL;
    if (buft == NULL) {
        int tb = backend_of(s, t);
        if (tb == NO_BACKEND && t->view_src != NULL)
            tb = backend_of(s, t->view_src);
        if (tb != NO_BACKEND)
            buft = s->bufts[tb];
    }
    return buft != NULL && dev_supports_buft(s, b, buft);
}

/*
 * Pass 1 for one tensor: where its data or its weights put it.  Sets *out
 * (NO_BACKEND when nothing decides); false (logged as func) for a
 * pre-allocated tensor that no backend can run.
 */
static bool backend_from_location(struct ggml_backend_sched *s, struct ggml_tensor *t, int *out, const char *func)
{
    *out = backend_for_buffer(s, t, t);
    if (*out != NO_BACKEND)
        return true;
    ggml_backend_buffer_t buffer = data_buffer(t);
    if (buffer != NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "tensor '%s' is in a %s buffer, but no backend that can use that buffer runs its op %s",
                     t->name, ggml_backend_buft_name(buffer->buft), ggml_op_desc(t));
        return false;
    }
    if (t->flags & GGML_TENSOR_FLAG_INPUT) {
        *out = s->n_backends - 1;
        return true;
    }
    /* an op reading weights runs where the weights are; ROPE's frequency
     * factors are too small to decide anything */
    if (t->op == GGML_OP_ROPE)
        return true;
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        struct ggml_tensor *src = t->src[j];
        ggml_backend_buffer_t src_buffer = src ? data_buffer(src) : NULL;
        if (src_buffer == NULL || src_buffer->usage != GGML_BACKEND_BUFFER_USAGE_WEIGHTS)
            continue;
        int b = backend_for_buffer(s, src, t);
        if (s->op_offload && b == s->n_backends - 1 && ggml_backend_buft_is_host(src_buffer->buft)) {
            for (int c = 0; c < b; c++) {
                if (dev_supports_op(s, c, t) && dev_offload_op(s, c, t)) {
                    b = c;
                    break;
                }
            }
        }
        *out = b;
        return true;
    }
    return true;
}

/*
 * Pass 2: spreads assignments along the node order.  An unassigned node
 * takes the backend of the last assigned node before it (in the walk's
 * direction) when that backend supports it.  With skip_cpu, the CPU's
 * nodes do not spread (the CPU runs what nothing else can).
 */
static void expand(struct ggml_backend_sched *s, struct ggml_cgraph *graph, bool skip_cpu, bool forward)
{
    int cur = NO_BACKEND;
    const int n = graph->n_nodes;
    for (int k = 0; k < n; k++) {
        struct ggml_tensor *node = graph->nodes[forward ? k : n - 1 - k];
        if (is_view_op(node->op))
            continue;
        struct tensor_info *info = info_of(s, node);
        if (info->backend_id != NO_BACKEND)
            cur = skip_cpu && info->backend_id == s->n_backends - 1 ? NO_BACKEND : info->backend_id;
        else if (cur != NO_BACKEND && dev_supports_op(s, cur, node))
            info->backend_id = cur;
    }
}

/*
 * Pass 3: an assigned node that is not pinned moves up to a higher-priority
 * backend that has the same compute buffer type, runs the op and can read
 * every source; an
 * unassigned node goes to the backend that runs it and can read the most
 * of its (assigned) sources.
 */
static void upgrade(struct ggml_backend_sched *s, struct ggml_cgraph *graph)
{
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor *node = graph->nodes[i];
        if (is_view_op(node->op))
            continue;
        struct tensor_info *info = info_of(s, node);
        if (info->backend_id == NO_BACKEND) {
            int best = -1;
            for (int b = 0; b < s->n_backends; b++) {
                if (!dev_supports_op(s, b, node))
                    continue;
                int n_readable = 0;
                for (int j = 0; j < GGML_MAX_SRC; j++) {
                    struct ggml_tensor *src = node->src[j];
                    if (src == NULL)
                        continue;
                    bool assigned = backend_of(s, src) != NO_BACKEND ||
                                    (src->view_src != NULL && backend_of(s, src->view_src) != NO_BACKEND);
                    if (assigned && can_read(s, src, b))
                        n_readable++;
                }
                if (n_readable > best) {
                    best = n_readable;
                    info->backend_id = b;
                }
            }
            continue;
        }
        if (info->pinned)
            continue;
        for (int b = 0; b < info->backend_id; b++) {
            if (s->bufts[b] != s->bufts[info->backend_id] || !dev_supports_op(s, b, node))
                continue;
            bool readable = true;
            for (int j = 0; j < GGML_MAX_SRC && readable; j++)
                if (node->src[j] != NULL && !can_read(s, node->src[j], b))
                    readable = false;
            if (readable) {
                info->backend_id = b;
                break;
            }
        }
    }
}

/*
 * Pass 4: views follow their source; what is still unassigned goes to the
 * first backend that runs it; sources nobody placed go with their
 * consumer.  False (logged as func) for a node no backend runs.
 */
static bool assign_rest(struct ggml_backend_sched *s, struct ggml_cgraph *graph, const char *func)
{
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor *node = graph->nodes[i];
        struct tensor_info *info = info_of(s, node);
        if (info->backend_id == NO_BACKEND && node->view_src != NULL)
            info->backend_id = backend_of(s, node->view_src);
        for (int b = 0; b < s->n_backends && info->backend_id == NO_BACKEND; b++)
            if (dev_supports_op(s, b, node))
                info->backend_id = b;
        if (info->backend_id == NO_BACKEND) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "no backend supports op %s (node %d, '%s', type %s)",
                         ggml_op_desc(node), i, node->name, ggml_type_name(node->type));
            return false;
        }
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor *src = node->src[j];
            if (src == NULL)
                continue;
            struct tensor_info *src_info = info_of(s, src);
            if (src_info->backend_id != NO_BACKEND)
                continue;
            if (src->view_src != NULL)
                src_info->backend_id = backend_of(s, src->view_src);
            if (src_info->backend_id == NO_BACKEND)
                src_info->backend_id = info->backend_id;
        }
    }
    return true;
}

/* All passes; false (logged as func) when some tensor cannot be placed. */
static bool assign_backends(struct ggml_backend_sched *s, struct ggml_cgraph *graph, const char *func)
{
    for (size_t p = 0; p < s->n_pins; p++) {
        struct tensor_info *info = info_of(s, s->pins[p].tensor);
        info->backend_id = s->pins[p].backend_id;
        info->pinned = true;
    }

    for (int i = 0; i < graph->n_leafs; i++) {
        struct tensor_info *info = info_of(s, graph->leafs[i]);
        if (info->backend_id == NO_BACKEND && !backend_from_location(s, graph->leafs[i], &info->backend_id, func))
            return false;
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        struct tensor_info *info = info_of(s, graph->nodes[i]);
        if (info->backend_id == NO_BACKEND && !backend_from_location(s, graph->nodes[i], &info->backend_id, func))
            return false;
    }

    expand(s, graph, true, true);
    expand(s, graph, true, false);
    expand(s, graph, false, true);
    expand(s, graph, false, false);
    upgrade(s, graph);
    if (!assign_rest(s, graph, func))
        return false;

    /* a leaf nothing reads stays in host memory */
    for (int i = 0; i < graph->n_leafs; i++) {
        struct tensor_info *info = info_of(s, graph->leafs[i]);
        if (info->backend_id == NO_BACKEND)
            info->backend_id = s->n_backends - 1;
    }
    return true;
}

/* ------------------------------------------------------------- splitting */

/* Starts split number n_splits on backend b at node i. */
static bool open_split(struct ggml_backend_sched *s, int b, int i, const char *func)
{
    if (!PUSH(s, splits, n_splits, cap_splits, func))
        return false;
    s->splits[s->n_splits++] = (struct split) {
        .backend_id = b,
        .node_start = i,
        .node_end = i,
        .input_start = (int) s->n_inputs,
        .n_inputs = 0,
    };
    return true;
}

/* A node of the split on backend b reads a WEIGHTS buffer b cannot use:
 * a new split lets the previous weights' copies be freed. */
static bool reads_foreign_weights(struct ggml_backend_sched *s, struct ggml_tensor *node, int b)
{
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        struct ggml_tensor *src = node->src[j];
        ggml_backend_buffer_t buffer = src ? data_buffer(src) : NULL;
        if (buffer != NULL && buffer->usage == GGML_BACKEND_BUFFER_USAGE_WEIGHTS &&
            backend_of(s, src) != b && !can_read(s, src, b))
            return true;
    }
    return false;
}

/*
 * Asks for the copies of src on backend b (made later by make_copies);
 * *is_new tells whether nobody had asked for them yet.  False (logged as
 * func) when out of memory.
 */
static bool want_copies(struct ggml_backend_sched *s, struct ggml_tensor *src, int b, bool *is_new,
                        const char *func)
{
    struct ggml_tensor **copies = copies_of(s, src, func);
    if (copies == NULL)
        return false;
    *is_new = copies[b * s->n_copies] == NULL;
    if (*is_new)
        for (int c = 0; c < s->n_copies; c++)
            copies[b * s->n_copies + c] = &copy_wanted;
    return true;
}

/*
 * Records what node i (on the current split's backend) needs copied: a
 * user input gets its pipeline copies on its own backend; a source the
 * backend cannot read gets a copy on the backend (once per graph) and a
 * rewrite of node->src[j].
 */
static bool collect_inputs(struct ggml_backend_sched *s, struct ggml_tensor *node, int i, const char *func)
{
    struct split *split = &s->splits[s->n_splits - 1];
    const int b = split->backend_id;
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        struct ggml_tensor *src = node->src[j];
        if (src == NULL)
            continue;
        const int from = backend_of(s, src);
        GGML_ASSERT(from != NO_BACKEND); /* assign_rest placed every source */

        bool is_new;
        if ((src->flags & GGML_TENSOR_FLAG_INPUT) && s->n_copies > 1) {
            if (!want_copies(s, src, from, &is_new, func))
                return false;
            if (is_new) {
                if (!PUSH(s, graph_inputs, n_graph_inputs, cap_graph_inputs, func))
                    return false;
                s->graph_inputs[s->n_graph_inputs++] = (struct split_input) {
                    .tensor = src, .from_backend = from, .copy_block = info_of(s, src)->copy_block,
                };
            }
        }

        if (from == b || can_read(s, src, b))
            continue;
        if (!want_copies(s, src, b, &is_new, func))
            return false;
        const int32_t block = info_of(s, src)->copy_block;
        if (is_new) {
            if (!PUSH(s, inputs, n_inputs, cap_inputs, func))
                return false;
            s->inputs[s->n_inputs++] = (struct split_input) {
                .tensor = src, .from_backend = from, .copy_block = block,
            };
            split->n_inputs++;
        }
        if (!PUSH(s, rewrites, n_rewrites, cap_rewrites, func))
            return false;
        s->rewrites[s->n_rewrites++] = (struct rewrite) {
            .node = i, .src = j, .copy_block = block, .backend_id = b,
        };
    }
    return true;
}

/* Cuts the assigned graph into splits and collects their inputs. */
static bool cut_splits(struct ggml_backend_sched *s, struct ggml_cgraph *graph, const char *func)
{
    if (graph->n_nodes == 0)
        return true;
    /* the first split is on the backend of the first node that computes */
    int first = s->n_backends - 1;
    for (int i = 0; i < graph->n_nodes; i++) {
        if (!is_view_op(graph->nodes[i]->op)) {
            first = backend_of(s, graph->nodes[i]);
            break;
        }
    }
    if (!open_split(s, first, 0, func))
        return false;

    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor *node = graph->nodes[i];
        if (is_view_op(node->op))
            continue;
        const int b = backend_of(s, node);
        struct split *split = &s->splits[s->n_splits - 1];
        bool new_split = b != split->backend_id ||
                         (split->n_inputs > 0 && reads_foreign_weights(s, node, b));
        if (new_split) {
            split->node_end = i;
            if (!open_split(s, b, i, func))
                return false;
        }
        if (!collect_inputs(s, node, i, func))
            return false;
    }
    s->splits[s->n_splits - 1].node_end = graph->n_nodes;
    return true;
}

/* A copy of t's layout in the copy context, reading t. */
static struct ggml_tensor *new_copy(struct ggml_backend_sched *s, struct ggml_tensor *t, int b, int c,
                                    const char *func)
{
    struct ggml_tensor *copy = ggml__new_tensor_impl(s->copy_ctx, t->type, GGML_MAX_DIMS, t->ne, NULL, 0, func);
    if (copy == NULL)
        return NULL; /* logged */
    memcpy(copy->nb, t->nb, sizeof copy->nb);
    ggml_format_name(copy, "%s#%s#%d", ggml_backend_name(s->backends[b]), t->name, c);
    if (s->n_copies > 1)
        copy->flags |= GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT;
    return copy;
}

/* Makes the copies the splits asked for, then points the nodes at them. */
static bool make_copies(struct ggml_backend_sched *s, struct ggml_cgraph *graph, const char *func)
{
    size_t n_tensors = (s->n_inputs + s->n_graph_inputs) * (size_t) s->n_copies;
    if (n_tensors == 0)
        return true;
    struct ggml_init_params params = {
        .mem_size = (n_tensors + 1) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    s->copy_ctx = ggml_init(params);
    if (s->copy_ctx == NULL)
        return false; /* logged */

    for (size_t k = 0; k < s->n_graph_inputs; k++) {
        struct split_input *in = &s->graph_inputs[k];
        /* the current copy is the user's tensor itself; the others are
         * its stand-ins for the computations still in flight */
        for (int c = 0; c < s->n_copies; c++) {
            struct ggml_tensor *copy = in->tensor;
            if (c != s->cur_copy && (copy = new_copy(s, in->tensor, in->from_backend, c, func)) == NULL)
                return false;
            copy->flags |= GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT;
            *copy_slot(s, in->copy_block, in->from_backend, c) = copy;
        }
    }
    for (size_t k = 0; k < s->n_splits; k++) {
        struct split *split = &s->splits[k];
        for (int m = 0; m < split->n_inputs; m++) {
            struct split_input *in = &s->inputs[split->input_start + m];
            for (int c = 0; c < s->n_copies; c++) {
                struct ggml_tensor *copy = new_copy(s, in->tensor, split->backend_id, c, func);
                if (copy == NULL)
                    return false;
                copy->src[0] = in->tensor; /* see the invariant at the top */
                *copy_slot(s, in->copy_block, split->backend_id, c) = copy;
            }
        }
    }
    for (size_t k = 0; k < s->n_rewrites; k++) {
        const struct rewrite *r = &s->rewrites[k];
        graph->nodes[r->node]->src[r->src] = copy_at(s, r->copy_block, r->backend_id, s->cur_copy);
    }
    return true;
}

/* Makes sure the scheduler's graph arrays hold n_nodes and n_leafs. */
static bool size_graph(struct ggml_backend_sched *s, size_t n_nodes, size_t n_leafs, const char *func)
{
    size_t cap_nodes = s->cap_graph_nodes, cap_leafs = s->cap_graph_leafs;
    if (!ggml__grow_array((void **) &s->graph.nodes, &cap_nodes, n_nodes, sizeof *s->graph.nodes))
        goto oom;
    cap_nodes = s->cap_graph_nodes;
    if (!ggml__grow_array((void **) &s->node_backend_ids, &cap_nodes, n_nodes, sizeof *s->node_backend_ids))
        goto oom;
    s->cap_graph_nodes = cap_nodes;
    if (!ggml__grow_array((void **) &s->graph.leafs, &cap_leafs, n_leafs, sizeof *s->graph.leafs))
        goto oom;
    cap_leafs = s->cap_graph_leafs;
    if (!ggml__grow_array((void **) &s->leaf_backend_ids, &cap_leafs, n_leafs, sizeof *s->leaf_backend_ids))
        goto oom;
    s->cap_graph_leafs = cap_leafs;
    return true;
oom:
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory");
    return false;
}

/*
 * Builds the scheduler's graph: per split its input copies then its nodes;
 * leafs are the pipeline copies (allocated first, never overwritten) and
 * the user's leafs.  Records which backend each node and leaf belongs to.
 */
static bool build_graph(struct ggml_backend_sched *s, struct ggml_cgraph *graph, const char *func)
{
    size_t n_nodes = (size_t) graph->n_nodes + s->n_inputs;
    size_t n_leafs = (size_t) graph->n_leafs;
    if (s->n_copies > 1)
        n_leafs += (s->n_inputs + s->n_graph_inputs) * (size_t) s->n_copies;
    if (n_nodes > INT32_MAX || n_leafs > INT32_MAX) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the graph is too large to schedule");
        return false;
    }
    if (!size_graph(s, n_nodes, n_leafs, func))
        return false;

    int nn = 0, nl = 0;
    for (size_t k = 0; k < s->n_splits; k++) {
        struct split *split = &s->splits[k];
        for (int m = 0; m < split->n_inputs; m++) {
            const struct split_input *in = &s->inputs[split->input_start + m];
            s->node_backend_ids[nn] = split->backend_id;
            s->graph.nodes[nn++] = copy_at(s, in->copy_block, split->backend_id, s->cur_copy);
        }
        split->graph_start = nn;
        for (int i = split->node_start; i < split->node_end; i++) {
            s->node_backend_ids[nn] = backend_of(s, graph->nodes[i]);
            s->graph.nodes[nn++] = graph->nodes[i];
        }
        split->graph_end = nn;
    }
    if (s->n_copies > 1) {
        for (size_t k = 0; k < s->n_graph_inputs; k++) {
            const struct split_input *in = &s->graph_inputs[k];
            for (int c = 0; c < s->n_copies; c++) {
                s->leaf_backend_ids[nl] = in->from_backend;
                s->graph.leafs[nl++] = copy_at(s, in->copy_block, in->from_backend, c);
            }
        }
        for (size_t k = 0; k < s->n_splits; k++) {
            const struct split *split = &s->splits[k];
            for (int m = 0; m < split->n_inputs; m++) {
                const struct split_input *in = &s->inputs[split->input_start + m];
                for (int c = 0; c < s->n_copies; c++) {
                    s->leaf_backend_ids[nl] = split->backend_id;
                    s->graph.leafs[nl++] = copy_at(s, in->copy_block, split->backend_id, c);
                }
            }
        }
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        s->leaf_backend_ids[nl] = backend_of(s, graph->leafs[i]);
        s->graph.leafs[nl++] = graph->leafs[i];
    }
    s->graph.size = (int) (n_nodes > n_leafs ? n_nodes : n_leafs);
    s->graph.n_nodes = nn;
    s->graph.n_leafs = nl;
    s->graph.order = graph->order;
    s->graph.failed = false;
    return true;
}

/* Takes t out of the scheduler's compute buffers, where an earlier
 * allocation of the same graph put it, or out of a buffer freed since (a
 * scheduler that allocated the graph before and is gone), so that it
 * counts as unallocated. */
static void unplace(struct ggml_backend_sched *s, struct ggml_tensor *t)
{
    if (t->buffer != NULL && (ggml__gallocr_owns_buffer(s->galloc, t->buffer) ||
                              !ggml__handle_is_live(GGML__HANDLE_BUFFER, t->buffer))) {
        t->buffer = NULL;
        t->data = NULL;
    }
}

/*
 * Undoes what an earlier schedule of this same graph left in it: a source
 * that is one of our copies (they live in copy_ctx, still allocated) goes
 * back to the tensor it copies, and tensors the gallocr placed lose their
 * place, to be assigned and placed afresh.  View sources come before their
 * views in the graph, so a view's buffer is still set when it is looked at.
 */
static void forget_previous_schedule(struct ggml_backend_sched *s, struct ggml_cgraph *graph)
{
    for (int i = 0; i < graph->n_leafs; i++)
        unplace(s, graph->leafs[i]);
    const char *lo = s->copy_ctx ? ggml_get_mem_buffer(s->copy_ctx) : NULL;
    const char *hi = s->copy_ctx ? lo + ggml_get_mem_size(s->copy_ctx) : NULL;
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor *node = graph->nodes[i];
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            const char *p = (const char *) node->src[j];
            if (p != NULL && lo != NULL && p >= lo && p < hi && node->src[j]->src[0] != NULL)
                node->src[j] = node->src[j]->src[0];
        }
        unplace(s, node);
    }
}

/* Checks what a split needs of the graph; false without a message for a
 * graph built from a NULL tensor (its constructor said why). */
static bool check_graph(struct ggml_cgraph *graph, const char *func)
{
    if (graph == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "graph is NULL");
        return false;
    }
    if (ggml__graph_failed(graph))
        return false;
    for (int i = 0; i < graph->n_nodes; i++) {
        if (graph->nodes[i] == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "graph node %d is NULL", i);
            return false;
        }
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        if (graph->leafs[i] == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "graph leaf %d is NULL", i);
            return false;
        }
    }
    return true;
}

/*
 * Assigns, splits and builds the scheduler's graph for graph.  On failure
 * (logged as func, except for a NULL-built graph) no split is left and
 * split_status says why.
 */
static bool split_graph(struct ggml_backend_sched *s, struct ggml_cgraph *graph, const char *func)
{
    s->is_alloc = false;
    s->user_graph = NULL;
    s->n_splits = 0;
    s->split_status = GGML_STATUS_FAILED;
    if (!check_graph(graph, func) || !backends_live(s, func))
        return false;

    forget_previous_schedule(s, graph);
    ggml_free(s->copy_ctx);
    s->copy_ctx = NULL;

    s->split_status = GGML_STATUS_ALLOC_FAILED; /* what the table steps fail with */
    if (!size_tables(s, graph, func))
        return false;
    s->split_status = GGML_STATUS_FAILED;
    if (!assign_backends(s, graph, func))
        goto fail;
    s->split_status = GGML_STATUS_ALLOC_FAILED;
    if (!cut_splits(s, graph, func) || !make_copies(s, graph, func) || !build_graph(s, graph, func))
        goto fail;
    s->split_status = GGML_STATUS_SUCCESS;
    s->user_graph = graph;
    return true;

fail:
    s->n_splits = 0;
    return false;
}

/* ------------------------------------------------------------ allocation */

/* Some node or leaf changed to a backend with another buffer type since
 * the last allocation (the gallocr's plan would put it in the wrong pool). */
static bool buffer_ids_changed(const struct ggml_backend_sched *s)
{
    if (s->graph.n_nodes != s->prev_n_nodes || s->graph.n_leafs != s->prev_n_leafs)
        return false; /* a graph of another shape: the gallocr re-plans anyway */
    for (int i = 0; i < s->graph.n_nodes; i++)
        if (s->bufts[s->node_backend_ids[i]] != s->bufts[s->prev_node_backend_ids[i]])
            return true;
    for (int i = 0; i < s->graph.n_leafs; i++)
        if (s->bufts[s->leaf_backend_ids[i]] != s->bufts[s->prev_leaf_backend_ids[i]])
            return true;
    return false;
}

static bool remember_buffer_ids(struct ggml_backend_sched *s, const char *func)
{
    if (!ggml__grow_array((void **) &s->prev_node_backend_ids, &s->cap_prev_nodes, (size_t) s->graph.n_nodes + 1,
                          sizeof *s->prev_node_backend_ids) ||
        !ggml__grow_array((void **) &s->prev_leaf_backend_ids, &s->cap_prev_leafs, (size_t) s->graph.n_leafs + 1,
                          sizeof *s->prev_leaf_backend_ids)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory");
        s->prev_n_nodes = s->prev_n_leafs = -1;
        return false;
    }
    /* an empty graph may never have grown the arrays copied from */
    if (s->graph.n_nodes > 0)
        memcpy(s->prev_node_backend_ids, s->node_backend_ids, (size_t) s->graph.n_nodes * sizeof(int));
    if (s->graph.n_leafs > 0)
        memcpy(s->prev_leaf_backend_ids, s->leaf_backend_ids, (size_t) s->graph.n_leafs * sizeof(int));
    s->prev_n_nodes = s->graph.n_nodes;
    s->prev_n_leafs = s->graph.n_leafs;
    return true;
}

/*
 * Allocates the split graph, re-planning first when the last plan does not
 * fit.  Each allocator call logs its own failure, and a failure is final
 * (one failure, one message).
 */
static bool alloc_splits(struct ggml_backend_sched *s, const char *func)
{
    bool ok = true;
    if (buffer_ids_changed(s) || ggml__gallocr_needs_plan(s->galloc, &s->graph)) {
        /* tensors may move: nothing may still be reading them */
        synchronize_all(s);
        ok = ggml_gallocr_reserve_n(s->galloc, &s->graph, s->node_backend_ids, s->leaf_backend_ids);
    }
    if (!ok || !ggml_gallocr_alloc_graph(s->galloc, &s->graph)) {
        s->prev_n_nodes = s->prev_n_leafs = -1;
        return false;
    }
    return remember_buffer_ids(s, func);
}

static bool sched_alloc(struct ggml_backend_sched *s, struct ggml_cgraph *graph, const char *func)
{
    if (s->is_alloc)
        synchronize_all(s); /* the last graph's computations may still run */
    s->cur_copy = s->next_copy;
    s->next_copy = (s->next_copy + 1) % s->n_copies;
    if (!split_graph(s, graph, func))
        return false;
    if (!alloc_splits(s, func)) {
        s->split_status = GGML_STATUS_ALLOC_FAILED;
        return false;
    }
    s->is_alloc = true;
    return true;
}

/* Forgets the graph and the pins (ggml_backend_sched_reset). */
static void reset_state(struct ggml_backend_sched *s)
{
    if (s->tables_live) {
        ggml__hash_set_reset(&s->tensors);
        s->tables_live = false;
    }
    s->n_pins = 0;
    s->is_alloc = false;
    s->user_graph = NULL;
}

bool ggml_backend_sched_reserve(ggml_backend_sched_t sched, struct ggml_cgraph *measure_graph)
{
    if (!sched_claim(sched, __func__))
        return false;
    synchronize_all(sched);
    bool ok = split_graph(sched, measure_graph, __func__) &&
              ggml_gallocr_reserve_n(sched->galloc, &sched->graph, sched->node_backend_ids,
                                     sched->leaf_backend_ids);
    reset_state(sched);
    sched_release(sched);
    return ok;
}

void ggml_backend_sched_reserve_size(ggml_backend_sched_t sched, struct ggml_cgraph *measure_graph, size_t *sizes)
{
    if (!sched_claim(sched, __func__))
        return;
    if (sizes == NULL) {
        ggml__error("sizes is NULL");
        sched_release(sched);
        return;
    }
    for (int b = 0; b < sched->n_backends; b++)
        sizes[b] = 0;
    if (split_graph(sched, measure_graph, __func__))
        ggml_gallocr_reserve_n_size(sched->galloc, &sched->graph, sched->node_backend_ids,
                                    sched->leaf_backend_ids, sizes);
    reset_state(sched);
    sched_release(sched);
}

void ggml_backend_sched_split_graph(ggml_backend_sched_t sched, struct ggml_cgraph *graph)
{
    if (!sched_claim(sched, __func__))
        return;
    if (sched->is_alloc)
        synchronize_all(sched);
    split_graph(sched, graph, __func__);
    sched_release(sched);
}

bool ggml_backend_sched_alloc_graph(ggml_backend_sched_t sched, struct ggml_cgraph *graph)
{
    if (!sched_claim(sched, __func__))
        return false;
    bool ok = sched_alloc(sched, graph, __func__);
    sched_release(sched);
    return ok;
}

/* ------------------------------------------------------------- computing */

/* Copies the inputs of a split onto its backend. */
static void copy_inputs(struct ggml_backend_sched *s, const struct split *split)
{
    ggml_backend_t backend = s->backends[split->backend_id];
    ggml_backend_event_t event = event_of(s, split->backend_id, s->cur_copy);
    for (int m = 0; m < split->n_inputs; m++) {
        const struct split_input *in = &s->inputs[split->input_start + m];
        struct ggml_tensor *copy = copy_at(s, in->copy_block, split->backend_id, s->cur_copy);
        if (in->tensor->flags & GGML_TENSOR_FLAG_INPUT) {
            /* the caller may change its input as soon as we return: copy
             * now, once the backend is done with this copy slot */
            if (event != NULL)
                ggml_backend_event_synchronize(event);
            else
                ggml_backend_synchronize(backend);
            ggml_backend_tensor_copy(in->tensor, copy);
            continue;
        }
        /* the copy slot must be free before it is written */
        if (event != NULL)
            ggml_backend_event_wait(backend, event);
        else
            ggml_backend_synchronize(backend);
        ggml_backend_t from = s->backends[in->from_backend];
        if (backend->iface.cpy_tensor_async != NULL &&
            backend->iface.cpy_tensor_async(from, backend, in->tensor, copy))
            continue;
        ggml_backend_synchronize(from);
        if (event != NULL)
            ggml_backend_event_synchronize(event);
        else
            ggml_backend_synchronize(backend);
        ggml_backend_tensor_copy(in->tensor, copy);
    }
}

/*
 * Computes nodes of a split in batches that end at a node the eval
 * callback wants to see, and shows it each such node once computed.
 */
static enum ggml_status compute_observed(struct ggml_backend_sched *s, ggml_backend_t backend,
                                         struct ggml_cgraph *split_graph)
{
    const int n = split_graph->n_nodes;
    for (int j0 = 0; j0 < n;) {
        int j1 = j0;
        bool wanted = s->callback(split_graph->nodes[j1], true, s->callback_data);
        while (!wanted && j1 + 1 < n) {
            j1++;
            wanted = s->callback(split_graph->nodes[j1], true, s->callback_data);
        }
        struct ggml_cgraph batch = ggml_graph_view(split_graph, j0, j1 + 1);
        enum ggml_status status = ggml_backend_graph_compute_async(backend, &batch);
        if (status != GGML_STATUS_SUCCESS)
            return status;
        ggml_backend_synchronize(backend);
        if (wanted && !s->callback(split_graph->nodes[j1], false, s->callback_data))
            return GGML_STATUS_ABORTED;
        j0 = j1 + 1;
    }
    return GGML_STATUS_SUCCESS;
}

static enum ggml_status compute_splits(struct ggml_backend_sched *s)
{
    for (size_t k = 0; k < s->n_splits; k++) {
        const struct split *split = &s->splits[k];
        ggml_backend_t backend = s->backends[split->backend_id];
        copy_inputs(s, split);
        struct ggml_cgraph split_graph = ggml_graph_view(&s->graph, split->graph_start, split->graph_end);
        enum ggml_status status;
        if (s->callback != NULL)
            status = compute_observed(s, backend, &split_graph);
        else if (split_graph.n_nodes > 0)
            status = ggml_backend_graph_compute_async(backend, &split_graph);
        else
            status = GGML_STATUS_SUCCESS;
        if (status != GGML_STATUS_SUCCESS)
            return status;
        /* later copies into this slot wait until the split has read it */
        ggml_backend_event_t event = event_of(s, split->backend_id, s->cur_copy);
        if (split->n_inputs > 0 && event != NULL)
            ggml_backend_event_record(event, backend);
    }
    return GGML_STATUS_SUCCESS;
}

/* Allocates graph unless it is the one allocated, then computes it
 * (ggml_backend_sched_graph_compute_async, as func). */
static enum ggml_status compute_graph(struct ggml_backend_sched *s, struct ggml_cgraph *graph, const char *func)
{
    if (!s->is_alloc || s->user_graph != graph) {
        if (!sched_alloc(s, graph, func))
            return s->split_status;
    }
    if (!backends_live(s, func))
        return GGML_STATUS_FAILED;
    return compute_splits(s);
}

/* ggml_backend_sched_synchronize, as func. */
static void synchronize_graph(struct ggml_backend_sched *s, const char *func)
{
    if (!backends_live(s, func))
        return;
    synchronize_all(s);
    /* with nothing allocated, start the next graph at copy 0, so that a
     * sequence of graphs uses the same copies every time */
    if (!s->is_alloc)
        s->next_copy = 0;
}

enum ggml_status ggml_backend_sched_graph_compute_async(ggml_backend_sched_t sched, struct ggml_cgraph *graph)
{
    if (!sched_claim(sched, __func__))
        return GGML_STATUS_FAILED;
    enum ggml_status status = compute_graph(sched, graph, __func__);
    sched_release(sched);
    return status;
}

enum ggml_status ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph *graph)
{
    if (!sched_claim(sched, __func__))
        return GGML_STATUS_FAILED;
    enum ggml_status status = compute_graph(sched, graph, __func__);
    synchronize_graph(sched, __func__);
    sched_release(sched);
    return status;
}

void ggml_backend_sched_synchronize(ggml_backend_sched_t sched)
{
    if (!sched_claim(sched, __func__))
        return;
    synchronize_graph(sched, __func__);
    sched_release(sched);
}

void ggml_backend_sched_reset(ggml_backend_sched_t sched)
{
    if (!sched_claim(sched, __func__))
        return;
    reset_state(sched);
    sched_release(sched);
}

void ggml_backend_sched_set_eval_callback(ggml_backend_sched_t sched, ggml_backend_sched_eval_callback callback,
                                          void *user_data)
{
    if (!sched_claim(sched, __func__))
        return;
    sched->callback = callback;
    sched->callback_data = user_data;
    sched_release(sched);
}

/* --------------------------------------------------------------- queries */

int ggml_backend_sched_get_n_backends(ggml_backend_sched_t sched)
{
    REQUIRE_SCHED(sched, 0);
    return sched->n_backends;
}

ggml_backend_t ggml_backend_sched_get_backend(ggml_backend_sched_t sched, int i)
{
    REQUIRE_SCHED(sched, NULL);
    if (i < 0 || i >= sched->n_backends) {
        ggml__error("backend index %d is outside [0, %d)", i, sched->n_backends);
        return NULL;
    }
    return sched->backends[i];
}

int ggml_backend_sched_get_n_splits(ggml_backend_sched_t sched)
{
    REQUIRE_SCHED(sched, 0);
    return (int) sched->n_splits;
}

int ggml_backend_sched_get_n_copies(ggml_backend_sched_t sched)
{
    REQUIRE_SCHED(sched, 0);
    return sched->n_copies;
}

ggml_backend_buffer_type_t ggml_backend_sched_get_buffer_type(ggml_backend_sched_t sched, ggml_backend_t backend)
{
    REQUIRE_SCHED(sched, NULL);
    int b = backend_index(sched, backend, __func__);
    return b == NO_BACKEND ? NULL : sched->bufts[b];
}

size_t ggml_backend_sched_get_buffer_size(ggml_backend_sched_t sched, ggml_backend_t backend)
{
    REQUIRE_SCHED(sched, 0);
    int b = backend_index(sched, backend, __func__);
    return b == NO_BACKEND ? 0 : ggml_gallocr_get_buffer_size(sched->galloc, b);
}

void ggml_backend_sched_set_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor *node,
                                           ggml_backend_t backend)
{
    if (!sched_claim(sched, __func__))
        return;
    int b = NO_BACKEND;
    if (node == NULL)
        ggml__error("node is NULL");
    else
        b = backend_index(sched, backend, __func__);
    if (b != NO_BACKEND && PUSH(sched, pins, n_pins, cap_pins, __func__))
        sched->pins[sched->n_pins++] = (struct pin) { .tensor = node, .backend_id = b };
    sched_release(sched);
}

ggml_backend_t ggml_backend_sched_get_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor *node)
{
    REQUIRE_SCHED(sched, NULL);
    if (node == NULL) {
        ggml__error("node is NULL");
        return NULL;
    }
    if (sched->tables_live) {
        size_t slot = ggml__hash_find(&sched->tensors, node);
        if (slot != GGML__HASHSET_FULL && ggml__bitset_get(sched->tensors.used, slot) &&
            sched->info[slot].backend_id != NO_BACKEND)
            return sched->backends[sched->info[slot].backend_id];
    }
    /* pinned, not split yet: the latest pin wins */
    for (size_t p = sched->n_pins; p-- > 0;)
        if (sched->pins[p].tensor == node)
            return sched->backends[sched->pins[p].backend_id];
    return NULL;
}
