/*
 * rpc/server.c - one connection of the RPC server (contract: server.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "plugin-log.h"
#include "server.h"
#include "wire.h"

/* Data moves through a bounce buffer of this size, never a whole message. */
#define CHUNK_BYTES ((size_t) 1 << 20)
/* Buffer handle h has the base address h << BASE_SHIFT; a buffer is smaller than 1 << BASE_SHIFT. */
#define BASE_SHIFT 40
#define MAX_HANDLES (((uint64_t) 1 << (64 - BASE_SHIFT)) - 1)

struct served_buffer {
    uint64_t handle;               /* 0: a free slot */
    ggml_backend_buffer_t buffer;
    uint64_t base;                 /* the peer's address of the first byte */
    uint64_t size;
};

/* The last graph computed on a device, for GRAPH_RECOMPUTE. */
struct stored_graph {
    struct ggml_context *ctx;
    struct ggml_cgraph *graph;
};

struct conn {
    const struct rpc_server_config *cfg;
    int fd;
    struct served_buffer *buffers;
    uint32_t n_buffers;            /* slots in use or free */
    uint64_t next_handle;
    uint64_t bytes;                /* of the live buffers */
    struct stored_graph *graphs;   /* one per device */
    uint8_t *chunk;                /* CHUNK_BYTES */
    char why[RPC_WIRE_WHY_SIZE];
};

#define rpc_log ggml__plugin_log

/* Sets the reason a request is refused; always false. */
static bool refuse(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool refuse(struct conn *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    return false;
}

/* ------------------------------------------------------------------ I/O */

/* Reads exactly n bytes; false at the end of the stream or on an error. */
static bool read_full(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n > 0) {
        const ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        p += got;
        n -= (size_t) got;
    }
    return true;
}

static bool write_full(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n > 0) {
        ssize_t put = send(fd, p, n, MSG_NOSIGNAL);
        if (put < 0 && errno == ENOTSOCK)
            put = write(fd, p, n);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return false;
        p += put;
        n -= (size_t) put;
    }
    return true;
}

/* The size that starts a reply. */
static bool reply_head(struct conn *c, uint64_t size)
{
    uint8_t head[8];
    rpc_wire_put_u64(head, size);
    return write_full(c->fd, head, sizeof head);
}

/* A reply: its size, then the payload. */
static bool reply(struct conn *c, const void *payload, uint64_t size)
{
    return reply_head(c, size) && (size == 0 || write_full(c->fd, payload, (size_t) size));
}

/* ---------------------------------------------------------------- buffers */

static struct served_buffer *find_buffer(struct conn *c, uint64_t handle)
{
    for (uint32_t i = 0; handle != 0 && i < c->n_buffers; i++)
        if (c->buffers[i].handle == handle)
            return &c->buffers[i];
    return NULL;
}

static void forget_graphs(struct conn *c)
{
    for (uint32_t d = 0; d < c->cfg->n_backends; d++) {
        ggml_free(c->graphs[d].ctx);
        c->graphs[d].ctx = NULL;
        c->graphs[d].graph = NULL;
    }
}

/* ---------------------------------------------------------------- tensors */

/*
 * The tensor of record t in ctx (a no_alloc context): checked, its buffer
 * one of this connection's (required when need_data), all its bytes inside
 * that buffer.  The record's view and source links are not followed here.
 */
static struct ggml_tensor *make_tensor(struct conn *c, struct ggml_context *ctx, const struct rpc_wire_tensor *t,
                                       bool need_data)
{
    uint64_t extent;
    if (!rpc_wire_tensor_check(t, &extent, c->why))
        return NULL;
    struct served_buffer *b = NULL;
    if (t->buffer != 0 && (b = find_buffer(c, t->buffer)) == NULL)
        return refuse(c, "tensor %#" PRIx64 ": buffer %#" PRIx64 " is not one of this connection's", t->id, t->buffer),
               NULL;
    if (b == NULL && need_data)
        return refuse(c, "tensor %#" PRIx64 " has no buffer", t->id), NULL;
    if (b != NULL && !rpc_wire_range_ok(b->base, b->size, t->data, 0, extent))
        return refuse(c, "tensor %#" PRIx64 ": its %" PRIu64 " bytes at %#" PRIx64 " are not inside its buffer", t->id,
                      extent, t->data),
               NULL;
    struct ggml_tensor *x = ggml_new_tensor_4d(ctx, (enum ggml_type) t->type, t->ne[0], t->ne[1], t->ne[2], t->ne[3]);
    if (x == NULL)
        return refuse(c, "tensor %#" PRIx64 " cannot be built", t->id), NULL;
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        x->nb[i] = t->nb[i];
    x->op = (enum ggml_op) t->op;
    memcpy(x->op_params, t->op_params, sizeof x->op_params);
    x->flags = t->flags;
    ggml_set_name(x, t->name);
    /* ggml_nbytes counts a whole stride for a row's last block: inside the buffer too */
    if (b != NULL && !rpc_wire_range_ok(b->base, b->size, t->data, 0, ggml_nbytes(x)))
        return refuse(c, "tensor %#" PRIx64 ": its %zu bytes at %#" PRIx64 " are not inside its buffer", t->id,
                      ggml_nbytes(x), t->data),
               NULL;
    if (b != NULL) {
        x->buffer = b->buffer;
        /* an empty buffer may have no base (then the tensor has no bytes) */
        char *base = ggml_backend_buffer_get_base(b->buffer);
        x->data = base != NULL ? base + (t->data - b->base) : NULL;
    }
    return x;
}

/* A scratch context for n tensors. */
static struct ggml_context *scratch(size_t n)
{
    struct ggml_init_params params = { n * ggml_tensor_overhead(), NULL, true };
    return ggml_init(params);
}

/* Whether [offset, offset + size) is inside x's bytes; refused as cmd's otherwise. */
static bool range_in_tensor(struct conn *c, unsigned cmd, const struct ggml_tensor *x, uint64_t offset, uint64_t size)
{
    const uint64_t n = ggml_nbytes(x);
    return (offset <= n && size <= n - offset) ||
           refuse(c, "%s: %" PRIu64 " bytes at offset %" PRIu64 " pass the tensor's %" PRIu64, rpc_wire_cmd_name(cmd),
                  size, offset, n);
}

/* ------------------------------------------------------------- commands */

static bool do_hello_again(struct conn *c)
{
    return refuse(c, "HELLO after the first request");
}

static bool do_device_count(struct conn *c)
{
    uint8_t out[4];
    rpc_wire_put_u32(out, c->cfg->n_backends);
    return reply(c, out, sizeof out);
}

/* The device of a request, checked. */
static bool device_of(struct conn *c, const uint8_t *in, uint32_t *device)
{
    *device = rpc_wire_get_u32(in);
    return *device < c->cfg->n_backends || refuse(c, "device %u of %u", *device, c->cfg->n_backends);
}

static bool do_alloc_buffer(struct conn *c, const uint8_t *in)
{
    uint32_t device;
    if (!device_of(c, in, &device))
        return false;
    const uint64_t size = rpc_wire_get_u64(in + 4);
    uint8_t out[16] = { 0 };
    ggml_backend_buffer_type_t buft = ggml_backend_get_default_buffer_type(c->cfg->backends[device]);
    ggml_backend_buffer_t buffer = NULL;
    if (size < ((uint64_t) 1 << BASE_SHIFT) && c->bytes < c->cfg->max_buffer_bytes &&
        size <= c->cfg->max_buffer_bytes - c->bytes && c->next_handle < MAX_HANDLES)
        buffer = ggml_backend_buft_alloc_buffer(buft, (size_t) size);
    else
        rpc_log(GGML_LOG_LEVEL_WARN, __func__, "a buffer of %" PRIu64 " bytes passes this connection's limit", size);
    if (buffer != NULL) {
        struct served_buffer *slot = NULL;
        for (uint32_t i = 0; slot == NULL && i < c->n_buffers; i++)
            if (c->buffers[i].handle == 0)
                slot = &c->buffers[i];
        if (slot == NULL) {
            struct served_buffer *grown = realloc(c->buffers, (c->n_buffers + 1) * sizeof *grown);
            if (grown == NULL) {
                ggml_backend_buffer_free(buffer);
                return refuse(c, "out of memory for the buffer table");
            }
            c->buffers = grown;
            slot = &c->buffers[c->n_buffers++];
        }
        slot->handle = c->next_handle++;
        slot->buffer = buffer;
        slot->base = slot->handle << BASE_SHIFT;
        slot->size = ggml_backend_buffer_get_size(buffer);
        c->bytes += slot->size;
        rpc_wire_put_u64(out, slot->handle);
        rpc_wire_put_u64(out + 8, slot->size);
    }
    /* a failed allocation is answered with handle 0, as the protocol has it */
    return reply(c, out, sizeof out);
}

static bool do_device_u64(struct conn *c, const uint8_t *in, unsigned cmd)
{
    uint32_t device;
    if (!device_of(c, in, &device))
        return false;
    ggml_backend_t backend = c->cfg->backends[device];
    ggml_backend_buffer_type_t buft = ggml_backend_get_default_buffer_type(backend);
    uint8_t out[16];
    if (cmd == RPC_WIRE_GET_ALIGNMENT) {
        rpc_wire_put_u64(out, ggml_backend_buft_get_alignment(buft));
        return reply(c, out, 8);
    }
    if (cmd == RPC_WIRE_GET_MAX_SIZE) {
        const uint64_t max = ggml_backend_buft_get_max_size(buft);
        rpc_wire_put_u64(out, max < ((uint64_t) 1 << BASE_SHIFT) - 1 ? max : ((uint64_t) 1 << BASE_SHIFT) - 1);
        return reply(c, out, 8);
    }
    size_t free_bytes = 0, total_bytes = 0;
    ggml_backend_dev_t dev = ggml_backend_get_device(backend);
    if (dev != NULL)
        ggml_backend_dev_memory(dev, &free_bytes, &total_bytes);
    rpc_wire_put_u64(out, free_bytes);
    rpc_wire_put_u64(out + 8, total_bytes);
    return reply(c, out, 16);
}

/* The buffer a request names by handle, checked. */
static bool buffer_of(struct conn *c, const uint8_t *in, struct served_buffer **b)
{
    const uint64_t handle = rpc_wire_get_u64(in);
    *b = find_buffer(c, handle);
    return *b != NULL || refuse(c, "buffer %#" PRIx64 " is not one of this connection's", handle);
}

static bool do_buffer_get_base(struct conn *c, const uint8_t *in)
{
    struct served_buffer *b;
    if (!buffer_of(c, in, &b))
        return false;
    uint8_t out[8];
    rpc_wire_put_u64(out, b->base);
    return reply(c, out, sizeof out);
}

static bool do_free_buffer(struct conn *c, const uint8_t *in)
{
    struct served_buffer *b;
    if (!buffer_of(c, in, &b))
        return false;
    forget_graphs(c);   /* a stored graph may point into the buffer */
    ggml_backend_buffer_free(b->buffer);
    c->bytes -= b->size;
    memset(b, 0, sizeof *b);
    return reply(c, NULL, 0);
}

static bool do_buffer_clear(struct conn *c, const uint8_t *in)
{
    struct served_buffer *b;
    if (!buffer_of(c, in, &b))
        return false;
    ggml_backend_buffer_clear(b->buffer, in[8]);
    return reply(c, NULL, 0);
}

/* A request's leading tensor record, built in ctx with its data. */
static struct ggml_tensor *tensor_of(struct conn *c, struct ggml_context *ctx, const uint8_t *in)
{
    struct rpc_wire_tensor t;
    rpc_wire_get_tensor(&t, in);
    return make_tensor(c, ctx, &t, true);
}

/* Opens the cache file of hash: for reading, or a new temporary one for writing (its name in tmp). */
static int open_cached(const struct conn *c, uint64_t hash, bool for_writing, char *tmp, size_t tmp_size)
{
    if (!for_writing) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%016" PRIx64, c->cfg->cache_dir, hash);
        return open(path, O_RDONLY | O_CLOEXEC);
    }
    snprintf(tmp, tmp_size, "%s/.incoming.XXXXXX", c->cfg->cache_dir);
    return mkstemp(tmp);
}

/* The bytes of the next chunk when left bytes remain to move. */
static size_t chunk_bytes(uint64_t left)
{
    return (size_t) (left < CHUNK_BYTES ? left : CHUNK_BYTES);
}

/*
 * Streams size bytes read from from_fd (the peer, or a cache file) into x
 * at offset through the chunk buffer, and into cache_fd (when >= 0) with
 * their hash in *hash.  False, without a message, when from_fd ends or
 * fails first.
 */
static bool stream_into(struct conn *c, int from_fd, struct ggml_tensor *x, uint64_t offset, uint64_t size,
                        int cache_fd, uint64_t *hash)
{
    for (uint64_t done = 0; done < size;) {
        const size_t n = chunk_bytes(size - done);
        if (!read_full(from_fd, c->chunk, n))
            return false;
        ggml_backend_tensor_set(x, c->chunk, (size_t) (offset + done), n);
        if (cache_fd >= 0) {
            *hash = rpc_wire_fnv1a_more(*hash, c->chunk, n);
            if (write(cache_fd, c->chunk, n) != (ssize_t) n)
                rpc_log(GGML_LOG_LEVEL_WARN, __func__, "cannot write the cache: %s", strerror(errno));
        }
        done += n;
    }
    return true;
}

static bool do_set_tensor(struct conn *c, uint64_t payload)
{
    uint8_t head[RPC_WIRE_TENSOR_SIZE + 8];
    if (!read_full(c->fd, head, sizeof head))
        return refuse(c, "the peer closed the connection inside SET_TENSOR");
    struct ggml_context *ctx = scratch(1);
    struct ggml_tensor *x = ctx != NULL ? tensor_of(c, ctx, head) : NULL;
    const uint64_t offset = rpc_wire_get_u64(head + RPC_WIRE_TENSOR_SIZE), size = payload - sizeof head;
    bool ok = x != NULL && range_in_tensor(c, RPC_WIRE_SET_TENSOR, x, offset, size);
    if (ok) {
        char tmp[4096];
        int cache_fd = c->cfg->cache_dir != NULL && size > RPC_WIRE_HASH_MIN_BYTES
                           ? open_cached(c, 0, true, tmp, sizeof tmp)
                           : -1;
        uint64_t hash = RPC_WIRE_FNV1A_START;
        ok = stream_into(c, c->fd, x, offset, size, cache_fd, &hash) ||
             refuse(c, "the peer closed the connection inside SET_TENSOR's data");
        if (cache_fd >= 0) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%016" PRIx64, c->cfg->cache_dir, hash);
            if (close(cache_fd) != 0 || !ok || rename(tmp, path) != 0)
                unlink(tmp);
        }
    }
    ggml_free(ctx);
    return ok;   /* no reply */
}

static bool do_set_tensor_hash(struct conn *c, const uint8_t *in)
{
    struct ggml_context *ctx = scratch(1);
    struct ggml_tensor *x = ctx != NULL ? tensor_of(c, ctx, in) : NULL;
    const uint64_t offset = rpc_wire_get_u64(in + RPC_WIRE_TENSOR_SIZE);
    const uint64_t hash = rpc_wire_get_u64(in + RPC_WIRE_TENSOR_SIZE + 8);
    bool ok = x != NULL;
    uint8_t found = 0;
    int fd = ok && c->cfg->cache_dir != NULL ? open_cached(c, hash, false, NULL, 0) : -1;
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= 0) {
        const uint64_t size = (uint64_t) st.st_size;
        ok = range_in_tensor(c, RPC_WIRE_SET_TENSOR_HASH, x, offset, size);
        found = ok && stream_into(c, fd, x, offset, size, -1, NULL);
        if (ok && !found)
            rpc_log(GGML_LOG_LEVEL_WARN, __func__, "cannot read the cached %016" PRIx64, hash);
    }
    if (fd >= 0)
        close(fd);
    ggml_free(ctx);
    return ok && reply(c, &found, 1);
}

static bool do_get_tensor(struct conn *c, const uint8_t *in)
{
    struct ggml_context *ctx = scratch(1);
    struct ggml_tensor *x = ctx != NULL ? tensor_of(c, ctx, in) : NULL;
    const uint64_t offset = rpc_wire_get_u64(in + RPC_WIRE_TENSOR_SIZE);
    const uint64_t size = rpc_wire_get_u64(in + RPC_WIRE_TENSOR_SIZE + 8);
    bool ok = x != NULL && range_in_tensor(c, RPC_WIRE_GET_TENSOR, x, offset, size);
    ok = ok && reply_head(c, size);
    for (uint64_t done = 0; ok && done < size;) {
        const size_t n = chunk_bytes(size - done);
        ggml_backend_tensor_get(x, c->chunk, (size_t) (offset + done), n);
        ok = write_full(c->fd, c->chunk, n);
        done += n;
    }
    ggml_free(ctx);
    return ok;
}

static bool do_copy_tensor(struct conn *c, const uint8_t *in)
{
    struct ggml_context *ctx = scratch(2);
    struct ggml_tensor *src = ctx != NULL ? tensor_of(c, ctx, in) : NULL;
    struct ggml_tensor *dst = src != NULL ? tensor_of(c, ctx, in + RPC_WIRE_TENSOR_SIZE) : NULL;
    uint8_t copied = 0;
    if (dst != NULL && src->type == dst->type && ggml_are_same_shape(src, dst) && ggml_are_same_stride(src, dst)) {
        ggml_backend_tensor_copy(src, dst);
        copied = 1;
    }
    ggml_free(ctx);
    /* tensors that are both valid but differ in layout: "not copied", and the peer copies another way */
    return dst != NULL && reply(c, &copied, 1);
}

static bool do_init_tensor(struct conn *c, const uint8_t *in)
{
    struct ggml_context *ctx = scratch(1);
    struct ggml_tensor *x = ctx != NULL ? tensor_of(c, ctx, in) : NULL;
    bool ok = x != NULL;
    if (ok && ggml_backend_buffer_init_tensor(x->buffer, x) != GGML_STATUS_SUCCESS)
        ok = refuse(c, "INIT_TENSOR: the buffer refused tensor '%s'", x->name);
    if (ok && x->extra != NULL)
        ok = refuse(c, "INIT_TENSOR: the device keeps per-tensor state, which cannot be served");
    ggml_free(ctx);
    return ok && reply(c, NULL, 0);
}

static bool do_get_alloc_size(struct conn *c, const uint8_t *in)
{
    uint32_t device;
    if (!device_of(c, in, &device))
        return false;
    struct ggml_context *ctx = scratch(1 + GGML_MAX_SRC);
    struct rpc_wire_tensor t;
    rpc_wire_get_tensor(&t, in + 4);
    struct ggml_tensor *x = ctx != NULL ? make_tensor(c, ctx, &t, false) : NULL;
    bool ok = x != NULL;
    for (int i = 0; ok && i < GGML_MAX_SRC; i++) {
        struct rpc_wire_tensor s;
        rpc_wire_get_tensor(&s, in + 4 + (size_t) (1 + i) * RPC_WIRE_TENSOR_SIZE);
        if (s.id != 0)
            ok = (x->src[i] = make_tensor(c, ctx, &s, false)) != NULL;
    }
    uint8_t out[8];
    if (ok) {
        ggml_backend_buffer_type_t buft = x->buffer != NULL ? ggml_backend_buffer_get_type(x->buffer)
                                                            : ggml_backend_get_default_buffer_type(c->cfg->backends[device]);
        rpc_wire_put_u64(out, ggml_backend_buft_get_alloc_size(buft, x));
    }
    ggml_free(ctx);
    return ok && reply(c, out, sizeof out);
}

static bool do_memset_tensor(struct conn *c, const uint8_t *in)
{
    struct ggml_context *ctx = scratch(1);
    struct ggml_tensor *x = ctx != NULL ? tensor_of(c, ctx, in) : NULL;
    const uint64_t offset = rpc_wire_get_u64(in + RPC_WIRE_TENSOR_SIZE);
    const uint64_t size = rpc_wire_get_u64(in + RPC_WIRE_TENSOR_SIZE + 8);
    bool ok = x != NULL && range_in_tensor(c, RPC_WIRE_MEMSET_TENSOR, x, offset, size);
    if (ok)
        ggml_backend_tensor_memset(x, in[RPC_WIRE_TENSOR_SIZE + 16], (size_t) offset, (size_t) size);
    ggml_free(ctx);
    return ok && reply(c, NULL, 0);
}

/* Computes graph on device; a failure ends the connection (GRAPH_COMPUTE has no reply to carry it). */
static bool compute(struct conn *c, uint32_t device, struct ggml_cgraph *graph)
{
    const enum ggml_status status = ggml_backend_graph_compute(c->cfg->backends[device], graph);
    return status == GGML_STATUS_SUCCESS || refuse(c, "the device's compute failed (status %d)", (int) status);
}

/* t has memory for its elements (a tensor without a buffer has none). */
static bool has_memory(const struct ggml_tensor *t)
{
    return t->data != NULL || ggml_nelements(t) == 0;
}

/* A node that computes has memory, and so have its sources (devices
   report a graph without it as an error of their own).  Leaves and layout
   ops compute nothing (the plugin sees only the public headers, so the
   list is spelled out here). */
static bool operands_have_memory(const struct ggml_tensor *node)
{
    if (node->op == GGML_OP_NONE || node->op == GGML_OP_VIEW || node->op == GGML_OP_RESHAPE ||
        node->op == GGML_OP_PERMUTE || node->op == GGML_OP_TRANSPOSE)
        return true;
    if (!has_memory(node))
        return false;
    for (int k = 0; k < GGML_MAX_SRC; k++)
        if (node->src[k] != NULL && !has_memory(node->src[k]))
            return false;
    return true;
}

/* Builds the graph of a checked GRAPH_COMPUTE payload in a new context of its own. */
static bool build_graph(struct conn *c, const struct rpc_wire_graph *g, const struct rpc_wire_index *index,
                        struct stored_graph *out)
{
    const size_t bytes = (size_t) g->n_tensors * ggml_tensor_overhead() + ggml_graph_overhead_custom(g->n_nodes, false);
    struct ggml_init_params params = { bytes, NULL, true };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor **made = calloc(g->n_tensors, sizeof *made);
    bool ok = ctx != NULL && made != NULL;
    if (!ok)
        refuse(c, "out of memory for a graph of %u tensors", g->n_tensors);
    struct rpc_wire_tensor t;
    for (uint32_t i = 0; ok && i < g->n_tensors; i++) {
        rpc_wire_get_tensor(&t, g->tensors + (size_t) i * RPC_WIRE_TENSOR_SIZE);
        ok = (made[i] = make_tensor(c, ctx, &t, false)) != NULL;
    }
    for (uint32_t i = 0; ok && i < g->n_tensors; i++) {
        rpc_wire_get_tensor(&t, g->tensors + (size_t) i * RPC_WIRE_TENSOR_SIZE);
        for (int k = 0; k < GGML_MAX_SRC; k++)
            made[i]->src[k] = t.src[k] != 0 ? made[rpc_wire_index_find(index, t.src[k])] : NULL;
        if (t.view_src != 0) {
            struct ggml_tensor *base = made[rpc_wire_index_find(index, t.view_src)];
            if (base->data == NULL || made[i]->buffer != base->buffer ||
                (uintptr_t) made[i]->data - (uintptr_t) base->data != t.view_offs)
                ok = refuse(c, "tensor %#" PRIx64 ": a view whose data is not its source's at offset %" PRIu64, t.id,
                            t.view_offs);
            made[i]->view_src = base;
            made[i]->view_offs = (size_t) t.view_offs;
        }
    }
    struct ggml_cgraph *graph = ok ? ggml_new_graph_custom(ctx, g->n_nodes, false) : NULL;
    if (ok && graph == NULL)
        ok = refuse(c, "a graph of %u nodes cannot be built", g->n_nodes);
    for (uint32_t i = 0; ok && i < g->n_nodes; i++) {
        struct ggml_tensor *node = made[rpc_wire_index_find(index, rpc_wire_get_u64(g->node_ids + 8 * (size_t) i))];
        if (node->op != GGML_OP_NONE && !ggml_backend_supports_op(c->cfg->backends[g->device], node))
            ok = refuse(c, "node '%s' (%s) is not supported by the device", node->name, ggml_op_desc(node));
        else if (!operands_have_memory(node))
            ok = refuse(c, "node '%s' (%s) or one of its sources has elements but no buffer", node->name,
                        ggml_op_desc(node));
        else
            ggml_graph_add_node(graph, node);
    }
    free(made);
    if (!ok) {
        ggml_free(ctx);
        return false;
    }
    out->ctx = ctx;
    out->graph = graph;
    return true;
}

static bool do_graph_compute(struct conn *c, uint64_t payload)
{
    if (payload > c->cfg->max_message_bytes)
        return refuse(c, "GRAPH_COMPUTE of %" PRIu64 " bytes passes the limit of %" PRIu64, payload,
                      c->cfg->max_message_bytes);
    uint8_t *msg = malloc((size_t) payload);
    if (msg == NULL)
        return refuse(c, "out of memory for a GRAPH_COMPUTE of %" PRIu64 " bytes", payload);
    bool ok = read_full(c->fd, msg, (size_t) payload) ||
              refuse(c, "the peer closed the connection inside GRAPH_COMPUTE");
    struct rpc_wire_graph g;
    struct rpc_wire_index index = { 0, NULL };
    ok = ok && rpc_wire_graph_parse(msg, payload, c->cfg->max_nodes, &g, c->why) &&
         (g.device < c->cfg->n_backends || refuse(c, "device %u of %u", g.device, c->cfg->n_backends)) &&
         rpc_wire_graph_check(&g, &index, c->why);
    struct stored_graph built = { NULL, NULL };
    ok = ok && build_graph(c, &g, &index, &built);
    rpc_wire_index_free(&index);
    free(msg);
    if (!ok)
        return false;
    ggml_free(c->graphs[g.device].ctx);
    c->graphs[g.device] = built;
    return compute(c, g.device, built.graph);   /* no reply */
}

static bool do_graph_recompute(struct conn *c, const uint8_t *in)
{
    uint32_t device;
    if (!device_of(c, in, &device))
        return false;
    if (c->graphs[device].graph == NULL)
        return refuse(c, "GRAPH_RECOMPUTE without a graph on device %u", device);
    return compute(c, device, c->graphs[device].graph);   /* no reply */
}

/* ------------------------------------------------------------ the loop */

/* Requests whose payload is read whole before they run (at most GET_ALLOC_SIZE's 3260 bytes). */
#define SMALL_REQUEST_MAX (4 + (1 + GGML_MAX_SRC) * RPC_WIRE_TENSOR_SIZE)

static bool serve_request(struct conn *c, unsigned cmd, uint64_t size)
{
    if (cmd == RPC_WIRE_AUTH)
        return refuse(c, "AUTH after HELLO (a token is sent once, as the first request)");
    if (!rpc_wire_request_size_ok(cmd, size))
        return refuse(c, "%s with a payload of %" PRIu64 " bytes", rpc_wire_cmd_name(cmd), size);
    if (cmd == RPC_WIRE_SET_TENSOR)
        return do_set_tensor(c, size);
    if (cmd == RPC_WIRE_GRAPH_COMPUTE)
        return do_graph_compute(c, size);
    uint8_t in[SMALL_REQUEST_MAX];
    if (!read_full(c->fd, in, (size_t) size))
        return refuse(c, "the peer closed the connection inside %s", rpc_wire_cmd_name(cmd));
    switch (cmd) {
    case RPC_WIRE_HELLO:             return do_hello_again(c);
    case RPC_WIRE_DEVICE_COUNT:      return do_device_count(c);
    case RPC_WIRE_ALLOC_BUFFER:      return do_alloc_buffer(c, in);
    case RPC_WIRE_GET_ALIGNMENT:
    case RPC_WIRE_GET_MAX_SIZE:
    case RPC_WIRE_GET_DEVICE_MEMORY: return do_device_u64(c, in, cmd);
    case RPC_WIRE_BUFFER_GET_BASE:   return do_buffer_get_base(c, in);
    case RPC_WIRE_FREE_BUFFER:       return do_free_buffer(c, in);
    case RPC_WIRE_BUFFER_CLEAR:      return do_buffer_clear(c, in);
    case RPC_WIRE_SET_TENSOR_HASH:   return do_set_tensor_hash(c, in);
    case RPC_WIRE_GET_TENSOR:        return do_get_tensor(c, in);
    case RPC_WIRE_COPY_TENSOR:       return do_copy_tensor(c, in);
    case RPC_WIRE_INIT_TENSOR:       return do_init_tensor(c, in);
    case RPC_WIRE_GET_ALLOC_SIZE:    return do_get_alloc_size(c, in);
    case RPC_WIRE_MEMSET_TENSOR:     return do_memset_tensor(c, in);
    case RPC_WIRE_GRAPH_RECOMPUTE:   return do_graph_recompute(c, in);
    default:                         return refuse(c, "command %u", cmd);
    }
}

/*
 * Whether the token received (n bytes) is the configured one: every byte
 * of the longer of the two is compared, without an exit on the first
 * difference, so the time taken does not tell how much of a guess was
 * right.
 */
static bool same_token(const uint8_t *got, size_t n, const char *token)
{
    const size_t want = strlen(token), longer = n > want ? n : want;
    unsigned diff = n != want;
    for (size_t i = 0; i < longer; i++)
        diff |= (unsigned) ((i < n ? got[i] : 0) ^ (i < want ? (uint8_t) token[i] : 0));
    return diff == 0;
}

/* A server with a token: the first request must be AUTH with it, answered with the byte 1. */
static bool authenticate(struct conn *c)
{
    uint8_t head[9], got[RPC_WIRE_TOKEN_MAX];
    if (!read_full(c->fd, head, sizeof head))
        return refuse(c, "the peer closed the connection before sending the token (AUTH)");
    const uint64_t size = rpc_wire_get_u64(head + 1);
    if (head[0] != RPC_WIRE_AUTH)
        return refuse(c, "the first request is %s, not AUTH with this server's token (a client without the token, "
                         "or upstream's, which cannot send one?)", rpc_wire_cmd_name(head[0]));
    if (!rpc_wire_request_size_ok(RPC_WIRE_AUTH, size))
        return refuse(c, "AUTH with a token of %" PRIu64 " bytes (1 to %d)", size, RPC_WIRE_TOKEN_MAX);
    if (!read_full(c->fd, got, (size_t) size))
        return refuse(c, "the peer closed the connection inside AUTH's token");
    if (!same_token(got, (size_t) size, c->cfg->token))
        return refuse(c, "AUTH with a wrong token");
    const uint8_t accepted = 1;
    return reply(c, &accepted, 1);
}

/* HELLO, first (or right after AUTH): answered with the protocol version and no transport capabilities. */
static bool hello(struct conn *c)
{
    uint8_t head[9], caps[RPC_WIRE_CAPS_SIZE];
    const char *first = c->cfg->token != NULL ? "the request after AUTH" : "the first request";
    if (!read_full(c->fd, head, sizeof head))
        return refuse(c, "the peer closed the connection before HELLO");
    const uint64_t size = rpc_wire_get_u64(head + 1);
    if (head[0] == RPC_WIRE_AUTH)
        return refuse(c, c->cfg->token != NULL ? "AUTH twice (a token is sent once, before HELLO)"
                                               : "AUTH, but this server takes no token (started without one)");
    if (head[0] != RPC_WIRE_HELLO || size != RPC_WIRE_CAPS_SIZE)
        return refuse(c, "%s is %s with %" PRIu64 " bytes, not HELLO with %d (a client of another protocol "
                         "version?)", first, rpc_wire_cmd_name(head[0]), size, RPC_WIRE_CAPS_SIZE);
    if (!read_full(c->fd, caps, sizeof caps))
        return refuse(c, "the peer closed the connection inside HELLO");
    uint8_t out[4 + RPC_WIRE_CAPS_SIZE] = { RPC_WIRE_MAJOR, RPC_WIRE_MINOR, RPC_WIRE_PATCH, 0 };
    return reply(c, out, sizeof out);   /* caps all zero: plain TCP */
}

bool rpc_server_serve(const struct rpc_server_config *config, int fd)
{
    struct conn c;
    memset(&c, 0, sizeof c);
    c.cfg = config;
    c.fd = fd;
    c.next_handle = 1;
    c.graphs = calloc(config->n_backends > 0 ? config->n_backends : 1, sizeof *c.graphs);
    c.chunk = malloc(CHUNK_BYTES);
    bool peer_ended = false;
    if (c.graphs == NULL || c.chunk == NULL) {
        refuse(&c, "out of memory for a connection");
    } else if ((config->token == NULL || authenticate(&c)) && hello(&c)) {
        while (true) {
            uint8_t head[9];
            if (!read_full(fd, head, 1)) {
                peer_ended = true;
                break;
            }
            if (!read_full(fd, head + 1, 8)) {
                refuse(&c, "the peer closed the connection inside a request's size");
                break;
            }
            if (!serve_request(&c, head[0], rpc_wire_get_u64(head + 1)))
                break;
        }
    }
    if (!peer_ended && c.why[0] != '\0')
        rpc_log(GGML_LOG_LEVEL_WARN, "rpc_server", "%s; closing the connection", c.why);
    if (c.graphs != NULL)
        forget_graphs(&c);
    for (uint32_t i = 0; i < c.n_buffers; i++)
        if (c.buffers[i].handle != 0)
            ggml_backend_buffer_free(c.buffers[i].buffer);
    free(c.buffers);
    free(c.graphs);
    free(c.chunk);
    return peer_ended;
}
