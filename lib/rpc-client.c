/*
 * rpc-client.c - the ggml-rpc.h functions: the core library's side of the
 * RPC plugin (lib/rpc/).
 *
 * The protocol is spoken only by the plugin libggml-rpc.so; this file
 * finds it (ggml__plugin_reg, as blas-client.c does) and goes through two
 * proc addresses of its registry: "ggml_backend_rpc_add_server", which
 * gives the registry of one server's devices (device i of that registry
 * is the server's device i), and "ggml_backend_rpc_start_server".  The
 * rest is the device API on those devices.  Identity is the backend's
 * guid, which the plugin stamps on every RPC backend (rpc/rpc-guid.h).
 */
#include "config.h"

#include "ggml-impl.h"
#include "backend-private.h"
#include "registry-private.h"
#include "ggml-rpc.h"

#include "rpc/rpc-guid.h"

static ggml_guid rpc_guid = GGML_RPC_GUID_BYTES;

typedef ggml_backend_reg_t (*add_server_fn)(const char *endpoint);
typedef void (*start_server_fn)(const char *endpoint, const char *cache_dir, size_t n_threads, size_t n_devices,
                                ggml_backend_dev_t *devices);

/* The plugin's proc address name, or NULL (one ERROR, as func). */
static void *rpc_proc(const char *name, const char *func)
{
    ggml_backend_reg_t reg = ggml__plugin_reg(GGML_RPC_NAME, GGML_RPC_PLUGIN_FILE, func);
    if (reg == NULL)
        return NULL;
    void *proc = ggml_backend_reg_get_proc_address(reg, name);
    if (proc == NULL)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the RPC registry does not provide %s", name);
    return proc;
}

/* The server's registry, or NULL (logged, as func). */
static ggml_backend_reg_t server_reg(const char *endpoint, const char *func)
{
    if (endpoint == NULL || endpoint[0] == '\0') {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "endpoint is NULL or empty");
        return NULL;
    }
    add_server_fn add_server = (add_server_fn) rpc_proc(GGML_RPC_ADD_SERVER_PROC, func);
    return add_server != NULL ? add_server(endpoint) : NULL;
}

/* Device `device` of the server, or NULL (logged, as func). */
static ggml_backend_dev_t server_device(const char *endpoint, uint32_t device, const char *func)
{
    ggml_backend_reg_t reg = server_reg(endpoint, func);
    if (reg == NULL)
        return NULL;
    const size_t count = ggml_backend_reg_dev_count(reg);
    if (device >= count) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the server at %s has %zu device%s; there is no device %u", endpoint,
                     count, count == 1 ? "" : "s", (unsigned) device);
        return NULL;
    }
    return ggml_backend_reg_dev_get(reg, device);
}

ggml_backend_reg_t ggml_backend_rpc_reg(void)
{
    return ggml__plugin_reg(GGML_RPC_NAME, GGML_RPC_PLUGIN_FILE, __func__);
}

ggml_backend_reg_t ggml_backend_rpc_add_server(const char *endpoint)
{
    return server_reg(endpoint, __func__);
}

ggml_backend_t ggml_backend_rpc_init(const char *endpoint, uint32_t device)
{
    ggml_backend_dev_t dev = server_device(endpoint, device, __func__);
    return dev != NULL ? ggml_backend_dev_init(dev, NULL) : NULL;
}

bool ggml_backend_is_rpc(ggml_backend_t backend)
{
    if (!ggml__handle_check(GGML__HANDLE_BACKEND, backend, __func__))
        return false;
    return backend->guid != NULL && ggml_guid_matches(backend->guid, &rpc_guid);
}

ggml_backend_buffer_type_t ggml_backend_rpc_buffer_type(const char *endpoint, uint32_t device)
{
    ggml_backend_dev_t dev = server_device(endpoint, device, __func__);
    return dev != NULL ? ggml_backend_dev_buffer_type(dev) : NULL;
}

void ggml_backend_rpc_get_device_memory(const char *endpoint, uint32_t device, size_t *free, size_t *total)
{
    if (free == NULL || total == NULL) {
        ggml__error("free and total must not be NULL");
        return;
    }
    *free = 0;
    *total = 0;
    ggml_backend_dev_t dev = server_device(endpoint, device, __func__);
    if (dev != NULL)
        ggml_backend_dev_memory(dev, free, total);
}

void ggml_backend_rpc_start_server(const char *endpoint, const char *cache_dir, size_t n_threads, size_t n_devices,
                                   ggml_backend_dev_t *devices)
{
    if (endpoint == NULL || endpoint[0] == '\0') {
        ggml__error("endpoint is NULL or empty");
        return;
    }
    if (n_devices > 0 && devices == NULL) {
        ggml__error("devices is NULL but n_devices is %zu", n_devices);
        return;
    }
    start_server_fn start_server = (start_server_fn) rpc_proc(GGML_RPC_START_SERVER_PROC, __func__);
    if (start_server != NULL)
        start_server(endpoint, cache_dir, n_threads, n_devices, devices);
}
