/*
 * ggml-rpc.h - devices on other machines, reached over ggml's RPC
 * protocol (version 5.1.0, that of upstream ggml's rpc-server).
 *
 * An endpoint is "host:port" (a name, an IPv4 address, or an IPv6 address
 * in brackets: "[::1]:50052").  Each server serves one or more devices,
 * numbered from 0.  The client is the plugin libggml-rpc.so in the plugin
 * directory; these functions are in the core library and reach it through
 * the registry.  Without the plugin, or when a server cannot be reached,
 * they log an error and return NULL, false or zero sizes.
 *
 * The protocol has no encryption and no authentication of its own: run it
 * on a trusted network or through a tunnel (ggml-rpc-server(1)).
 */
#ifndef GGML_RPC_H
#define GGML_RPC_H

#include "ggml.h"
#include "ggml-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The protocol version spoken (a server must have this major version and
 * at most this minor version). */
#define RPC_PROTO_MAJOR_VERSION 5
#define RPC_PROTO_MINOR_VERSION 1
#define RPC_PROTO_PATCH_VERSION 0

/* The most servers a program is expected to name at once. */
#define GGML_RPC_MAX_SERVERS 16

/* A backend computing on device `device` of the server at endpoint; NULL
 * (logged) when the server cannot be reached or has no such device. */
GGML_BACKEND_API ggml_backend_t ggml_backend_rpc_init(const char *endpoint, uint32_t device);

/* True when backend is an RPC backend. */
GGML_BACKEND_API bool ggml_backend_is_rpc(ggml_backend_t backend);

/* The buffer type of a remote device (buffers live in the server's
 * memory); NULL (logged) as for ggml_backend_rpc_init.  Never freed. */
GGML_BACKEND_API ggml_backend_buffer_type_t ggml_backend_rpc_buffer_type(const char *endpoint, uint32_t device);

/* The free and total memory the server reports for its device; both 0
 * (logged) when it cannot be asked. */
GGML_BACKEND_API void ggml_backend_rpc_get_device_memory(const char *endpoint, uint32_t device, size_t *free,
                                                        size_t *total);

/* Serves devices (all of them: n_devices of devices, or the first CPU
 * device when n_devices is 0) on endpoint until the process ends.
 * cache_dir, when not NULL, holds SET_TENSOR_HASH's cache; n_threads
 * (when not 0) is given to the devices that take a thread count.  Returns
 * (logged) when the plugin, the address or a device cannot be set up. */
GGML_BACKEND_API void ggml_backend_rpc_start_server(const char *endpoint, const char *cache_dir, size_t n_threads,
                                                    size_t n_devices, ggml_backend_dev_t *devices);

/* The registry of the RPC plugin ("RPC", loading the plugin if needed),
 * or NULL.  Its devices are those of the servers named in the environment
 * variable GGML_RPC_SERVERS (a comma-separated list of endpoints). */
GGML_BACKEND_API ggml_backend_reg_t ggml_backend_rpc_reg(void);

/* A registry of the devices of the server at endpoint (the same one for
 * the same endpoint; not registered: pass it to ggml_backend_register to
 * make its devices visible to ggml_backend_dev_by_name and the
 * scheduler's users), or NULL (logged) when the server cannot be reached. */
GGML_BACKEND_API ggml_backend_reg_t ggml_backend_rpc_add_server(const char *endpoint);

#ifdef __cplusplus
}
#endif

#endif /* GGML_RPC_H */
