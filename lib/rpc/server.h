/*
 * rpc/server.h - one connection of the RPC server: the requests of ggml's
 * RPC protocol 5.1.0 (wire.h) read from a socket, checked, and carried out
 * on this library's devices.
 *
 * Nothing a peer sends is trusted: every request is checked (wire.h's
 * checks, plus the buffer handles and data ranges of this connection)
 * before anything is read or written for it.  A request that fails its
 * checks, or that the device cannot carry out where the protocol has no
 * way to say so, is logged once and ends the connection (the protocol has
 * no error reply); the server's state stays sound and other connections
 * are not affected.
 *
 * With a token in the configuration, the first request must be AUTH with
 * exactly that token (compared in time that does not depend on where it
 * differs), then HELLO; anything else first ends the connection without a
 * reply.  Without one, AUTH is refused like any unknown request.
 *
 * Buffer handles and base addresses given to the peer are numbers of this
 * connection (handle h has the base h << 40), never the server's pointers.
 *
 * Not installed.
 */
#ifndef GGML_BACKEND_RPC_SERVER_H
#define GGML_BACKEND_RPC_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml-backend.h"

/* What a connection may do. */
struct rpc_server_config {
    ggml_backend_t *backends;      /* the devices served, numbered from 0 */
    uint32_t n_backends;
    uint64_t max_buffer_bytes;     /* all live buffers of one connection together */
    uint64_t max_message_bytes;    /* a GRAPH_COMPUTE payload */
    uint32_t max_nodes;            /* nodes of one graph */
    const char *cache_dir;         /* SET_TENSOR_HASH's cache, NULL for none */
    const char *token;             /* what AUTH must carry first (wire.h; 1 to RPC_WIRE_TOKEN_MAX bytes), NULL: none */
};

/* The defaults of the limits: 64 GiB of buffers, 256 MiB messages, 65536 nodes. */
#define RPC_SERVER_DEFAULT_MAX_BUFFER_BYTES ((uint64_t) 64 << 30)
#define RPC_SERVER_DEFAULT_MAX_MESSAGE_BYTES ((uint64_t) 256 << 20)
#define RPC_SERVER_DEFAULT_MAX_NODES 65536u

/*
 * Serves the connection on fd (a connected socket; not closed here) until
 * the peer closes it or a request is refused; frees everything the
 * connection allocated.  True when the peer ended the connection between
 * requests, false when the server ended it.
 */
bool rpc_server_serve(const struct rpc_server_config *config, int fd);

#endif
