/*
 * rpc/wire.h - the messages of ggml's RPC protocol, version 5.1.0 (the
 * protocol of upstream ggml's rpc-server), and the checks a server makes
 * before it believes one.
 *
 * Framing, all integers little-endian:
 *   request  | command (1 byte) | payload size (8 bytes) | payload |
 *   reply    | payload size (8 bytes) | payload |
 * SET_TENSOR, GRAPH_COMPUTE and GRAPH_RECOMPUTE have no reply.  The
 * protocol has no error reply: a server that refuses a request closes the
 * connection.  The first request of a connection is HELLO.
 *
 * An extension of this library, not of the protocol: AUTH, a command
 * byte outside upstream's numbers, carries a pre-shared token (1 to
 * RPC_WIRE_TOKEN_MAX bytes, sent in clear) and is answered with the one
 * byte 1.  A server given a token takes AUTH with exactly that token as
 * the first request of a connection, then HELLO; a server without one
 * refuses AUTH.  Upstream's peers know nothing of it: a server with a
 * token serves this library's clients only.
 *
 * A tensor travels as a 296-byte record (rpc_wire_put_tensor gives the
 * offsets); its id, buffer, data, src and view_src fields are handles the
 * client chose (its pointers) or the server handed out (buffer handles
 * and base addresses), never trusted as addresses by this library.
 *
 * Everything here is pure: no sockets, no allocation but the graph's
 * index, no logging.  A check that fails writes why into a caller's
 * buffer of RPC_WIRE_WHY_SIZE bytes.
 *
 * Not installed.
 */
#ifndef GGML_BACKEND_RPC_WIRE_H
#define GGML_BACKEND_RPC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml.h"

#define RPC_WIRE_MAJOR 5
#define RPC_WIRE_MINOR 1
#define RPC_WIRE_PATCH 0

/* Bytes of a tensor record, of HELLO's connection capabilities. */
#define RPC_WIRE_TENSOR_SIZE 296
#define RPC_WIRE_CAPS_SIZE 24
/* The most bytes of AUTH's token. */
#define RPC_WIRE_TOKEN_MAX 256
/* Room for the reason a check gives. */
#define RPC_WIRE_WHY_SIZE 160

/* The command bytes, numbered as the protocol numbers them. */
enum rpc_wire_cmd {
    RPC_WIRE_ALLOC_BUFFER = 0,
    RPC_WIRE_GET_ALIGNMENT = 1,
    RPC_WIRE_GET_MAX_SIZE = 2,
    RPC_WIRE_BUFFER_GET_BASE = 3,
    RPC_WIRE_FREE_BUFFER = 4,
    RPC_WIRE_BUFFER_CLEAR = 5,
    RPC_WIRE_SET_TENSOR = 6,
    RPC_WIRE_SET_TENSOR_HASH = 7,
    RPC_WIRE_GET_TENSOR = 8,
    RPC_WIRE_COPY_TENSOR = 9,
    RPC_WIRE_GRAPH_COMPUTE = 10,
    RPC_WIRE_GET_DEVICE_MEMORY = 11,
    RPC_WIRE_INIT_TENSOR = 12,
    RPC_WIRE_GET_ALLOC_SIZE = 13,
    RPC_WIRE_HELLO = 14,
    RPC_WIRE_DEVICE_COUNT = 15,
    RPC_WIRE_GRAPH_RECOMPUTE = 16,
    RPC_WIRE_MEMSET_TENSOR = 17,
    RPC_WIRE_CMD_COUNT,            /* upstream's commands: those below */
    RPC_WIRE_AUTH = 0x80           /* this library's extension (above) */
};

/* A tensor record, decoded.  name holds the 64 bytes as sent (maybe without a NUL). */
struct rpc_wire_tensor {
    uint64_t id;
    uint32_t type;
    uint64_t buffer;
    uint32_t ne[GGML_MAX_DIMS];
    uint32_t nb[GGML_MAX_DIMS];
    uint32_t op;
    int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)];
    int32_t flags;
    uint64_t src[GGML_MAX_SRC];
    uint64_t view_src;
    uint64_t view_offs;
    uint64_t data;
    char name[GGML_MAX_NAME];
    int32_t use_count;
};

/* The command's name ("ALLOC_BUFFER", ..., "AUTH"), "unknown" for other bytes. */
const char *rpc_wire_cmd_name(unsigned cmd);

/*
 * Whether a request payload of size bytes is well formed for cmd: the
 * exact size of the fixed-size requests; at least a tensor and an offset
 * for SET_TENSOR (the data follows); at least the counts for
 * GRAPH_COMPUTE (rpc_wire_graph_parse checks the rest); 1 to
 * RPC_WIRE_TOKEN_MAX bytes for AUTH.  False for other command bytes.
 */
bool rpc_wire_request_size_ok(unsigned cmd, uint64_t size);

/* The payload size of cmd's reply; -1 for no reply, -2 for a size that
   depends on the request (GET_TENSOR: the bytes asked for). */
int64_t rpc_wire_reply_size(unsigned cmd);

/* Little-endian loads and stores at any alignment. */
uint32_t rpc_wire_get_u32(const uint8_t *p);
uint64_t rpc_wire_get_u64(const uint8_t *p);
void rpc_wire_put_u32(uint8_t *p, uint32_t v);
void rpc_wire_put_u64(uint8_t *p, uint64_t v);

/* A tensor record to and from its 296 bytes. */
void rpc_wire_put_tensor(uint8_t *out, const struct rpc_wire_tensor *t);
void rpc_wire_get_tensor(struct rpc_wire_tensor *t, const uint8_t *in);

/*
 * Whether the record describes a tensor this library can build: a type
 * with a block size, a first dimension a multiple of it, a NUL-terminated
 * name, an op below GGML_OP_COUNT that is not one of the custom ops (their
 * op_params carry the sender's function pointers), only the defined flag
 * bits, data and strides aligned for the type (to the largest power of two
 * dividing its size, at most 8), a shape within ggml's bounds (with empty extents counted as 1, the
 * contiguous size fits size_t and the element count int64_t), and an extent (the bytes from data to its last element's end)
 * that does not overflow; *extent receives it.  A record with buffer 0
 * must have data 0.
 */
bool rpc_wire_tensor_check(const struct rpc_wire_tensor *t, uint64_t *extent, char *why);

/*
 * Whether [start + offset, start + offset + size) lies inside the buffer
 * [base, base + buffer_size), without overflow anywhere.  size 0 needs
 * start + offset inside the buffer or at its end.
 */
bool rpc_wire_range_ok(uint64_t base, uint64_t buffer_size, uint64_t start, uint64_t offset, uint64_t size);

/* A GRAPH_COMPUTE payload, parsed in place (pointers into the message). */
struct rpc_wire_graph {
    uint32_t device;
    uint32_t n_nodes;
    const uint8_t *node_ids;     /* n_nodes ids of 8 bytes */
    uint32_t n_tensors;
    const uint8_t *tensors;      /* n_tensors records */
};

/*
 * Parses msg (len bytes): the sizes must match the counts exactly, and
 * neither count may pass max_nodes.
 */
bool rpc_wire_graph_parse(const uint8_t *msg, uint64_t len, uint32_t max_nodes, struct rpc_wire_graph *g,
                          char *why);

/*
 * The graph's tensors sorted by id, for lookups: entries[i].at is the
 * position in the message of the tensor with the i-th smallest id.
 * rpc_wire_graph_check builds it.
 */
struct rpc_wire_entry {
    uint64_t id;
    uint32_t at;
};

struct rpc_wire_index {
    uint32_t n;
    struct rpc_wire_entry *entries;
};

/* The index of the tensor with this id in the message, or -1. */
int64_t rpc_wire_index_find(const struct rpc_wire_index *index, uint64_t id);
void rpc_wire_index_free(struct rpc_wire_index *index);

/*
 * Checks a parsed graph: every tensor record passes rpc_wire_tensor_check,
 * ids are nonzero and distinct, every node id and every nonzero src and
 * view_src names a tensor of the message, nodes are not repeated, and the
 * src and view_src links have no cycle.  On success *index is the graph's
 * index (rpc_wire_index_free releases it); false when the index cannot be
 * allocated too.
 */
bool rpc_wire_graph_check(const struct rpc_wire_graph *g, struct rpc_wire_index *index, char *why);

/*
 * Splits an endpoint, "host:port", into its host (a name or an IPv4
 * address, or an IPv6 address in brackets, "[::1]:50052", given without
 * them) and its port, 1 to 65535.  host_size bytes at host receive the
 * NUL-terminated host, which must be non-empty and fit.
 */
bool rpc_wire_parse_endpoint(const char *endpoint, char *host, size_t host_size, uint16_t *port, char *why);

/*
 * The FNV-1a 64-bit hash of data (SET_TENSOR_HASH names a cached blob by
 * it); rpc_wire_fnv1a_more continues a hash over more bytes, starting
 * from RPC_WIRE_FNV1A_START.
 */
#define RPC_WIRE_FNV1A_START 0xcbf29ce484222325ull
uint64_t rpc_wire_fnv1a(const void *data, size_t size);
uint64_t rpc_wire_fnv1a_more(uint64_t hash, const void *data, size_t size);

/* Data of more bytes than this is offered by hash first (SET_TENSOR_HASH),
   and kept in a server's cache, as upstream's client and server do. */
#define RPC_WIRE_HASH_MIN_BYTES ((uint64_t) 10 << 20)

#endif
