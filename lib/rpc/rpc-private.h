/*
 * rpc/rpc-private.h - the RPC plugin's functions shared between its files.
 *
 * Not installed.
 */
#ifndef GGML_BACKEND_RPC_PRIVATE_H
#define GGML_BACKEND_RPC_PRIVATE_H

#include "ggml-backend.h"
#include "serve.h"
#include "wire.h"

/* listen.c: serve.h's entry, and ggml_backend_rpc_start_server's form of it */
bool ggml__rpc_serve(const struct rpc_serve_options *options);
void ggml__rpc_start_server(const char *endpoint, const char *cache_dir, size_t n_threads, size_t n_devices,
                            ggml_backend_dev_t *devices);

#endif
