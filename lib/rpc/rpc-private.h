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

/* client.c: ggml_backend_rpc_add_server's form (the registry of one
   server's devices, the same for the same endpoint string; NULL, logged,
   when the server cannot be used), and the devices of the servers named
   in GGML_RPC_SERVERS, enumerated on the first call of either function. */
ggml_backend_reg_t ggml__rpc_add_server(const char *endpoint);
size_t ggml__rpc_env_device_count(void);
ggml_backend_dev_t ggml__rpc_env_device(size_t index);

/* plugin.c: the proc addresses of the plugin's registry, given by every
   server's registry too. */
void *ggml__rpc_reg_proc_address(ggml_backend_reg_t reg, const char *name);

#endif
