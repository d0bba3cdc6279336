/*
 * rpc/serve.h - the RPC plugin's server entry: connections accepted on a
 * TCP address and served one after another (server.h serves each).
 *
 * The plugin's registry gives it as the proc address "ggml_backend_rpc_serve"
 * (type rpc_serve_fn); the server program, tools/ggml-rpc-server.c, calls
 * it.  ggml_backend_rpc_start_server's form of it (upstream's arguments)
 * is the proc address "ggml_backend_rpc_start_server".
 *
 * Not installed.
 */
#ifndef GGML_BACKEND_RPC_SERVE_H
#define GGML_BACKEND_RPC_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml-backend.h"

struct rpc_serve_options {
    const char *host;              /* numeric address or name; NULL: 127.0.0.1 */
    uint16_t port;
    ggml_backend_dev_t *devices;   /* served as devices 0, 1, ...; none: the first CPU device */
    size_t n_devices;
    size_t n_threads;              /* of the devices that take a thread count; 0: theirs */
    const char *cache_dir;         /* SET_TENSOR_HASH's cache; NULL: none */
    const char *const *allow;      /* numeric client addresses accepted; none: every client */
    size_t n_allow;
    const char *token;             /* a client's first request must be AUTH with it (server.h); NULL: none */
    uint64_t max_buffer_bytes;     /* 0: server.h's defaults */
    uint64_t max_message_bytes;
    uint32_t max_nodes;
    int io_timeout_seconds;        /* a connection's wait for one read or write; 0: none */
    int max_connections;           /* served before returning; 0: without end */
};

/* Serves until max_connections were served; false (logged) when the address, a device or the token cannot be set up. */
typedef bool (*rpc_serve_fn)(const struct rpc_serve_options *options);

#define RPC_SERVE_PROC "ggml_backend_rpc_serve"
#define RPC_DEFAULT_PORT 50052

#endif
