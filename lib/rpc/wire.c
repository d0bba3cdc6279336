/*
 * rpc/wire.c - the messages of ggml's RPC protocol 5.1.0 and the checks
 * of what a peer sent (contracts: wire.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "wire.h"

/* Byte offsets of the fields of a tensor record. */
enum {
    AT_ID = 0,
    AT_TYPE = 8,
    AT_BUFFER = 12,
    AT_NE = 20,
    AT_NB = 36,
    AT_OP = 52,
    AT_OP_PARAMS = 56,
    AT_FLAGS = 120,
    AT_SRC = 124,
    AT_VIEW_SRC = 204,
    AT_VIEW_OFFS = 212,
    AT_DATA = 220,
    AT_NAME = 228,
    AT_USE_COUNT = 292
};

_Static_assert(AT_USE_COUNT + 4 == RPC_WIRE_TENSOR_SIZE, "the record's fields fill its 296 bytes");
_Static_assert(AT_SRC + 8 * GGML_MAX_SRC == AT_VIEW_SRC, "ten sources");

/* Every flag bit ggml defines. */
#define KNOWN_FLAGS                                                                       \
    (GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT | GGML_TENSOR_FLAG_PARAM |          \
     GGML_TENSOR_FLAG_LOSS | GGML_TENSOR_FLAG_COMPUTE)

static const char *const cmd_names[RPC_WIRE_CMD_COUNT] = {
    "ALLOC_BUFFER", "GET_ALIGNMENT", "GET_MAX_SIZE", "BUFFER_GET_BASE", "FREE_BUFFER", "BUFFER_CLEAR",
    "SET_TENSOR", "SET_TENSOR_HASH", "GET_TENSOR", "COPY_TENSOR", "GRAPH_COMPUTE", "GET_DEVICE_MEMORY",
    "INIT_TENSOR", "GET_ALLOC_SIZE", "HELLO", "DEVICE_COUNT", "GRAPH_RECOMPUTE", "MEMSET_TENSOR",
};

/* Request payload sizes; SET_TENSOR and GRAPH_COMPUTE give their least. */
static const uint64_t request_sizes[RPC_WIRE_CMD_COUNT] = {
    [RPC_WIRE_ALLOC_BUFFER] = 4 + 8,
    [RPC_WIRE_GET_ALIGNMENT] = 4,
    [RPC_WIRE_GET_MAX_SIZE] = 4,
    [RPC_WIRE_BUFFER_GET_BASE] = 8,
    [RPC_WIRE_FREE_BUFFER] = 8,
    [RPC_WIRE_BUFFER_CLEAR] = 8 + 1,
    [RPC_WIRE_SET_TENSOR] = RPC_WIRE_TENSOR_SIZE + 8,
    [RPC_WIRE_SET_TENSOR_HASH] = RPC_WIRE_TENSOR_SIZE + 8 + 8,
    [RPC_WIRE_GET_TENSOR] = RPC_WIRE_TENSOR_SIZE + 8 + 8,
    [RPC_WIRE_COPY_TENSOR] = 2 * RPC_WIRE_TENSOR_SIZE,
    [RPC_WIRE_GRAPH_COMPUTE] = 4 + 4 + 4,
    [RPC_WIRE_GET_DEVICE_MEMORY] = 4,
    [RPC_WIRE_INIT_TENSOR] = RPC_WIRE_TENSOR_SIZE,
    [RPC_WIRE_GET_ALLOC_SIZE] = 4 + (1 + GGML_MAX_SRC) * RPC_WIRE_TENSOR_SIZE,
    [RPC_WIRE_HELLO] = RPC_WIRE_CAPS_SIZE,
    [RPC_WIRE_DEVICE_COUNT] = 0,
    [RPC_WIRE_GRAPH_RECOMPUTE] = 4,
    [RPC_WIRE_MEMSET_TENSOR] = RPC_WIRE_TENSOR_SIZE + 8 + 8 + 1,
};

/* Reply payload sizes: -1 none, -2 as the request asks. */
static const int64_t reply_sizes[RPC_WIRE_CMD_COUNT] = {
    [RPC_WIRE_ALLOC_BUFFER] = 16,
    [RPC_WIRE_GET_ALIGNMENT] = 8,
    [RPC_WIRE_GET_MAX_SIZE] = 8,
    [RPC_WIRE_BUFFER_GET_BASE] = 8,
    [RPC_WIRE_FREE_BUFFER] = 0,
    [RPC_WIRE_BUFFER_CLEAR] = 0,
    [RPC_WIRE_SET_TENSOR] = -1,
    [RPC_WIRE_SET_TENSOR_HASH] = 1,
    [RPC_WIRE_GET_TENSOR] = -2,
    [RPC_WIRE_COPY_TENSOR] = 1,
    [RPC_WIRE_GRAPH_COMPUTE] = -1,
    [RPC_WIRE_GET_DEVICE_MEMORY] = 16,
    [RPC_WIRE_INIT_TENSOR] = 0,
    [RPC_WIRE_GET_ALLOC_SIZE] = 8,
    [RPC_WIRE_HELLO] = 4 + RPC_WIRE_CAPS_SIZE,
    [RPC_WIRE_DEVICE_COUNT] = 4,
    [RPC_WIRE_GRAPH_RECOMPUTE] = -1,
    [RPC_WIRE_MEMSET_TENSOR] = 0,
};

/* AUTH, this library's extension, lies outside the tables. */
const char *rpc_wire_cmd_name(unsigned cmd)
{
    if (cmd == RPC_WIRE_AUTH)
        return "AUTH";
    return cmd < RPC_WIRE_CMD_COUNT ? cmd_names[cmd] : "unknown";
}

bool rpc_wire_request_size_ok(unsigned cmd, uint64_t size)
{
    if (cmd == RPC_WIRE_AUTH)
        return size >= 1 && size <= RPC_WIRE_TOKEN_MAX;
    if (cmd >= RPC_WIRE_CMD_COUNT)
        return false;
    if (cmd == RPC_WIRE_SET_TENSOR || cmd == RPC_WIRE_GRAPH_COMPUTE)
        return size >= request_sizes[cmd];
    return size == request_sizes[cmd];
}

int64_t rpc_wire_reply_size(unsigned cmd)
{
    if (cmd == RPC_WIRE_AUTH)
        return 1;
    return cmd < RPC_WIRE_CMD_COUNT ? reply_sizes[cmd] : -1;
}

uint32_t rpc_wire_get_u32(const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

uint64_t rpc_wire_get_u64(const uint8_t *p)
{
    return (uint64_t) rpc_wire_get_u32(p) | (uint64_t) rpc_wire_get_u32(p + 4) << 32;
}

void rpc_wire_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

void rpc_wire_put_u64(uint8_t *p, uint64_t v)
{
    rpc_wire_put_u32(p, (uint32_t) v);
    rpc_wire_put_u32(p + 4, (uint32_t) (v >> 32));
}

void rpc_wire_put_tensor(uint8_t *out, const struct rpc_wire_tensor *t)
{
    rpc_wire_put_u64(out + AT_ID, t->id);
    rpc_wire_put_u32(out + AT_TYPE, t->type);
    rpc_wire_put_u64(out + AT_BUFFER, t->buffer);
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        rpc_wire_put_u32(out + AT_NE + 4 * i, t->ne[i]);
        rpc_wire_put_u32(out + AT_NB + 4 * i, t->nb[i]);
    }
    rpc_wire_put_u32(out + AT_OP, t->op);
    for (size_t i = 0; i < GGML_MAX_OP_PARAMS / sizeof(int32_t); i++)
        rpc_wire_put_u32(out + AT_OP_PARAMS + 4 * i, (uint32_t) t->op_params[i]);
    rpc_wire_put_u32(out + AT_FLAGS, (uint32_t) t->flags);
    for (int i = 0; i < GGML_MAX_SRC; i++)
        rpc_wire_put_u64(out + AT_SRC + 8 * i, t->src[i]);
    rpc_wire_put_u64(out + AT_VIEW_SRC, t->view_src);
    rpc_wire_put_u64(out + AT_VIEW_OFFS, t->view_offs);
    rpc_wire_put_u64(out + AT_DATA, t->data);
    memcpy(out + AT_NAME, t->name, GGML_MAX_NAME);
    rpc_wire_put_u32(out + AT_USE_COUNT, (uint32_t) t->use_count);
}

void rpc_wire_get_tensor(struct rpc_wire_tensor *t, const uint8_t *in)
{
    t->id = rpc_wire_get_u64(in + AT_ID);
    t->type = rpc_wire_get_u32(in + AT_TYPE);
    t->buffer = rpc_wire_get_u64(in + AT_BUFFER);
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        t->ne[i] = rpc_wire_get_u32(in + AT_NE + 4 * i);
        t->nb[i] = rpc_wire_get_u32(in + AT_NB + 4 * i);
    }
    t->op = rpc_wire_get_u32(in + AT_OP);
    for (size_t i = 0; i < GGML_MAX_OP_PARAMS / sizeof(int32_t); i++)
        t->op_params[i] = (int32_t) rpc_wire_get_u32(in + AT_OP_PARAMS + 4 * i);
    t->flags = (int32_t) rpc_wire_get_u32(in + AT_FLAGS);
    for (int i = 0; i < GGML_MAX_SRC; i++)
        t->src[i] = rpc_wire_get_u64(in + AT_SRC + 8 * i);
    t->view_src = rpc_wire_get_u64(in + AT_VIEW_SRC);
    t->view_offs = rpc_wire_get_u64(in + AT_VIEW_OFFS);
    t->data = rpc_wire_get_u64(in + AT_DATA);
    memcpy(t->name, in + AT_NAME, GGML_MAX_NAME);
    t->use_count = (int32_t) rpc_wire_get_u32(in + AT_USE_COUNT);
}

/* *sum = a * b + c, false on overflow. */
static bool mul_add_u64(uint64_t a, uint64_t b, uint64_t c, uint64_t *sum)
{
    if (b != 0 && a > UINT64_MAX / b)
        return false;
    const uint64_t product = a * b;
    if (product > UINT64_MAX - c)
        return false;
    *sum = product + c;
    return true;
}

#define WHY(...) (snprintf(why, RPC_WIRE_WHY_SIZE, __VA_ARGS__), false)

static bool is_custom_op(uint32_t op)
{
    return op == GGML_OP_MAP_CUSTOM1 || op == GGML_OP_MAP_CUSTOM2 || op == GGML_OP_MAP_CUSTOM3 ||
           op == GGML_OP_CUSTOM;
}

bool rpc_wire_tensor_check(const struct rpc_wire_tensor *t, uint64_t *extent, char *why)
{
    if (t->type >= GGML_TYPE_COUNT)
        return WHY("tensor %#llx: type %u is not a ggml type", (unsigned long long) t->id, t->type);
    const struct ggml_type_traits *traits = ggml_get_type_traits((enum ggml_type) t->type);
    if (traits == NULL || traits->blck_size <= 0 || traits->type_size == 0)
        return WHY("tensor %#llx: type %u has no block size (a removed type)", (unsigned long long) t->id, t->type);
    const uint64_t block = (uint64_t) traits->blck_size;
    if (t->ne[0] % block != 0)
        return WHY("tensor %#llx: %u values per row is not a multiple of %s's block of %llu",
                   (unsigned long long) t->id, t->ne[0], traits->type_name, (unsigned long long) block);
    if (memchr(t->name, '\0', GGML_MAX_NAME) == NULL)
        return WHY("tensor %#llx: the name has no terminating NUL within %d bytes", (unsigned long long) t->id,
                   GGML_MAX_NAME);
    if (t->op >= GGML_OP_COUNT)
        return WHY("tensor %#llx: op %u is not a ggml op", (unsigned long long) t->id, t->op);
    if (is_custom_op(t->op))
        return WHY("tensor %#llx: custom ops are refused (their parameters are the sender's function pointers)",
                   (unsigned long long) t->id);
    if (((uint32_t) t->flags & ~(uint32_t) KNOWN_FLAGS) != 0)
        return WHY("tensor %#llx: flags %#x has undefined bits", (unsigned long long) t->id, (unsigned) t->flags);
    if (t->buffer == 0 && t->data != 0)
        return WHY("tensor %#llx: data without a buffer", (unsigned long long) t->id);

    /*
     * Natural alignment: the largest power of two dividing the type's size
     * (at most 8) divides its alignment as a C object, so the data and every
     * stride used must be multiples of it (the kernels load elements whole).
     */
    uint64_t align = 1;
    while (align < 8 && traits->type_size % (2 * align) == 0)
        align *= 2;
    if (t->data % align != 0)
        return WHY("tensor %#llx: data at %#llx is not aligned to %llu bytes for %s", (unsigned long long) t->id,
                   (unsigned long long) t->data, (unsigned long long) align, traits->type_name);
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        if (t->ne[i] > (i == 0 ? block : 1) && t->nb[i] % align != 0)
            return WHY("tensor %#llx: stride %d of %u bytes is not aligned to %llu bytes for %s",
                       (unsigned long long) t->id, i, t->nb[i], (unsigned long long) align, traits->type_name);

    /* ggml's own bound on a shape: with empty extents counted as 1, the
       contiguous size fits size_t and the element count int64_t */
    uint64_t size = traits->type_size, count = block;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        const uint64_t step = i == 0 ? (t->ne[0] / block > 0 ? t->ne[0] / block : 1) : (t->ne[i] > 0 ? t->ne[i] : 1);
        if (size > SIZE_MAX / step || count > (uint64_t) INT64_MAX / step)
            return WHY("tensor %#llx: %ux%ux%ux%u elements are more than ggml counts", (unsigned long long) t->id,
                       t->ne[0], t->ne[1], t->ne[2], t->ne[3]);
        size *= step;
        count *= step;
    }

    /* the end of the last element: type_size past the largest offset of a block */
    uint64_t end = 0;
    bool empty = false;
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        empty = empty || t->ne[i] == 0;
    if (!empty) {
        bool fits = mul_add_u64(t->ne[0] / block - 1, t->nb[0], traits->type_size, &end);
        for (int i = 1; i < GGML_MAX_DIMS && fits; i++)
            fits = mul_add_u64((uint64_t) t->ne[i] - 1, t->nb[i], end, &end);
        if (!fits)
            return WHY("tensor %#llx: its extent overflows 64 bits", (unsigned long long) t->id);
    }
    *extent = end;
    return true;
}

bool rpc_wire_range_ok(uint64_t base, uint64_t buffer_size, uint64_t start, uint64_t offset, uint64_t size)
{
    if (base > UINT64_MAX - buffer_size || start < base || offset > UINT64_MAX - start)
        return false;
    const uint64_t from = start + offset, buffer_end = base + buffer_size;
    return from <= buffer_end && size <= buffer_end - from;
}

bool rpc_wire_graph_parse(const uint8_t *msg, uint64_t len, uint32_t max_nodes, struct rpc_wire_graph *g,
                          char *why)
{
    if (len < 8)
        return WHY("GRAPH_COMPUTE: %llu bytes cannot hold the device and node count", (unsigned long long) len);
    g->device = rpc_wire_get_u32(msg);
    g->n_nodes = rpc_wire_get_u32(msg + 4);
    if (g->n_nodes == 0 || g->n_nodes > max_nodes)
        return WHY("GRAPH_COMPUTE: %u nodes (1 to %u allowed)", g->n_nodes, max_nodes);
    const uint64_t at_count = 8 + 8 * (uint64_t) g->n_nodes;
    if (len < at_count + 4)
        return WHY("GRAPH_COMPUTE: %llu bytes cannot hold %u node ids and the tensor count",
                   (unsigned long long) len, g->n_nodes);
    g->node_ids = msg + 8;
    g->n_tensors = rpc_wire_get_u32(msg + at_count);
    if (g->n_tensors == 0 || g->n_tensors > 2 * (uint64_t) max_nodes)
        return WHY("GRAPH_COMPUTE: %u tensors (1 to %llu allowed)", g->n_tensors,
                   (unsigned long long) 2 * max_nodes);
    const uint64_t want = at_count + 4 + (uint64_t) g->n_tensors * RPC_WIRE_TENSOR_SIZE;
    if (len != want)
        return WHY("GRAPH_COMPUTE: %llu bytes where %u nodes and %u tensors take %llu", (unsigned long long) len,
                   g->n_nodes, g->n_tensors, (unsigned long long) want);
    g->tensors = msg + at_count + 4;
    return true;
}

static int entry_order(const void *a, const void *b)
{
    const uint64_t x = ((const struct rpc_wire_entry *) a)->id, y = ((const struct rpc_wire_entry *) b)->id;
    return (x > y) - (x < y);
}

int64_t rpc_wire_index_find(const struct rpc_wire_index *index, uint64_t id)
{
    size_t lo = 0, hi = index->n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (index->entries[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < index->n && index->entries[lo].id == id ? (int64_t) index->entries[lo].at : -1;
}

void rpc_wire_index_free(struct rpc_wire_index *index)
{
    free(index->entries);
    index->entries = NULL;
    index->n = 0;
}

/* The links of a tensor: its ten sources, then its view source. */
#define N_LINKS (GGML_MAX_SRC + 1)

static uint64_t link_id(const uint8_t *record, int k)
{
    return rpc_wire_get_u64(record + (k < GGML_MAX_SRC ? AT_SRC + 8 * k : AT_VIEW_SRC));
}

/*
 * Depth-first walk over the links from every tensor, iterative (a crafted
 * graph cannot exhaust the stack): false when a link reaches a tensor
 * still on the walk's path.  state[i]: 0 not seen, 1 on the path, 2 done.
 */
static bool acyclic(const struct rpc_wire_graph *g, const struct rpc_wire_index *index, uint8_t *state,
                    uint32_t *path, uint8_t *next_link, char *why)
{
    for (uint32_t root = 0; root < g->n_tensors; root++) {
        if (state[root] != 0)
            continue;
        uint32_t depth = 0;
        path[0] = root;
        next_link[0] = 0;
        state[root] = 1;
        while (true) {
            const uint32_t at = path[depth];
            if (next_link[depth] == N_LINKS) {
                state[at] = 2;
                if (depth == 0)
                    break;
                depth--;
                continue;
            }
            const uint64_t id = link_id(g->tensors + (size_t) at * RPC_WIRE_TENSOR_SIZE, next_link[depth]++);
            if (id == 0)
                continue;
            const uint32_t to = (uint32_t) rpc_wire_index_find(index, id);   /* found: checked before */
            if (state[to] == 1)
                return WHY("GRAPH_COMPUTE: tensor %#llx depends on itself", (unsigned long long) id);
            if (state[to] == 0) {
                state[to] = 1;
                depth++;
                path[depth] = to;
                next_link[depth] = 0;
            }
        }
    }
    return true;
}

bool rpc_wire_graph_check(const struct rpc_wire_graph *g, struct rpc_wire_index *index, char *why)
{
    index->n = g->n_tensors;
    index->entries = malloc((size_t) g->n_tensors * sizeof *index->entries);
    uint8_t *state = calloc(g->n_tensors, 1);
    uint32_t *path = malloc((size_t) g->n_tensors * sizeof *path);
    uint8_t *next_link = malloc(g->n_tensors);
    bool ok = index->entries != NULL && state != NULL && path != NULL && next_link != NULL;
    if (!ok)
        (void) WHY("GRAPH_COMPUTE: out of memory for the index of %u tensors", g->n_tensors);

    for (uint32_t i = 0; ok && i < g->n_tensors; i++) {
        struct rpc_wire_tensor t;
        uint64_t extent;
        rpc_wire_get_tensor(&t, g->tensors + (size_t) i * RPC_WIRE_TENSOR_SIZE);
        ok = rpc_wire_tensor_check(&t, &extent, why);
        if (ok && t.id == 0)
            ok = WHY("GRAPH_COMPUTE: tensor %u has id 0", i);
        index->entries[i].id = t.id;
        index->entries[i].at = i;
    }
    if (ok) {
        qsort(index->entries, g->n_tensors, sizeof *index->entries, entry_order);
        for (uint32_t i = 1; ok && i < g->n_tensors; i++)
            if (index->entries[i].id == index->entries[i - 1].id)
                ok = WHY("GRAPH_COMPUTE: two tensors have id %#llx", (unsigned long long) index->entries[i].id);
    }
    for (uint32_t i = 0; ok && i < g->n_tensors; i++) {
        const uint8_t *record = g->tensors + (size_t) i * RPC_WIRE_TENSOR_SIZE;
        for (int k = 0; ok && k < N_LINKS; k++) {
            const uint64_t id = link_id(record, k);
            if (id != 0 && rpc_wire_index_find(index, id) < 0)
                ok = WHY("GRAPH_COMPUTE: tensor %#llx names %s %#llx, which the message lacks",
                         (unsigned long long) rpc_wire_get_u64(record + AT_ID), k < GGML_MAX_SRC ? "source" : "view source",
                         (unsigned long long) id);
        }
    }
    /* nodes: present, each once (state doubles as the seen mark, then is reset) */
    for (uint32_t i = 0; ok && i < g->n_nodes; i++) {
        const uint64_t id = rpc_wire_get_u64(g->node_ids + 8 * (size_t) i);
        const int64_t at = rpc_wire_index_find(index, id);
        if (at < 0)
            ok = WHY("GRAPH_COMPUTE: node %u (id %#llx) is not among the tensors", i, (unsigned long long) id);
        else if (state[at] != 0)
            ok = WHY("GRAPH_COMPUTE: node %u (id %#llx) is listed twice", i, (unsigned long long) id);
        else
            state[at] = 1;
    }
    if (ok) {
        memset(state, 0, g->n_tensors);
        ok = acyclic(g, index, state, path, next_link, why);
    }
    free(state);
    free(path);
    free(next_link);
    if (!ok)
        rpc_wire_index_free(index);
    return ok;
}

bool rpc_wire_parse_endpoint(const char *endpoint, char *host, size_t host_size, uint16_t *port, char *why)
{
    const char *colon = endpoint != NULL ? strrchr(endpoint, ':') : NULL;
    if (colon == NULL) {
        snprintf(why, RPC_WIRE_WHY_SIZE, "endpoint '%s' is not host:port", endpoint != NULL ? endpoint : "(null)");
        return false;
    }
    const char *start = endpoint, *end = colon;
    if (endpoint[0] == '[') {
        if (end - start < 2 || end[-1] != ']') {
            snprintf(why, RPC_WIRE_WHY_SIZE, "endpoint '%s': an IPv6 address needs its brackets closed", endpoint);
            return false;
        }
        start++, end--;
    } else if (memchr(endpoint, ':', (size_t) (colon - endpoint)) != NULL) {
        snprintf(why, RPC_WIRE_WHY_SIZE, "endpoint '%s': an IPv6 address goes in brackets", endpoint);
        return false;
    }
    const size_t len = (size_t) (end - start);
    if (len == 0 || len >= host_size) {
        snprintf(why, RPC_WIRE_WHY_SIZE, "endpoint '%s': the host is empty or too long", endpoint);
        return false;
    }
    unsigned long value = 0;
    const char *digit = colon + 1;
    for (; *digit >= '0' && *digit <= '9' && value <= 65535; digit++)
        value = value * 10 + (unsigned long) (*digit - '0');
    if (digit == colon + 1 || *digit != '\0' || value == 0 || value > 65535) {
        snprintf(why, RPC_WIRE_WHY_SIZE, "endpoint '%s': the port is not a number from 1 to 65535", endpoint);
        return false;
    }
    memcpy(host, start, len);
    host[len] = '\0';
    *port = (uint16_t) value;
    return true;
}

uint64_t rpc_wire_fnv1a_more(uint64_t hash, const void *data, size_t size)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < size; i++) {
        hash ^= p[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

uint64_t rpc_wire_fnv1a(const void *data, size_t size)
{
    return rpc_wire_fnv1a_more(RPC_WIRE_FNV1A_START, data, size);
}
