/*
 * rpc/plugin.c - the RPC plugin's registry, "RPC": the only module that
 * speaks ggml's RPC protocol.  So far it serves (serve.h): its proc
 * addresses "ggml_backend_rpc_serve" and "ggml_backend_rpc_start_server";
 * it has no devices of its own yet (the client side is to come).
 */
#include "config.h"

#include <string.h>

#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "rpc-private.h"

static const char *rpc_reg_name(ggml_backend_reg_t reg)
{
    (void) reg;
    return "RPC";
}

static size_t rpc_reg_device_count(ggml_backend_reg_t reg)
{
    (void) reg;
    return 0;
}

static ggml_backend_dev_t rpc_reg_device(ggml_backend_reg_t reg, size_t index)
{
    (void) reg, (void) index;
    return NULL;
}

static void *rpc_reg_proc_address(ggml_backend_reg_t reg, const char *name)
{
    (void) reg;
    if (name != NULL && strcmp(name, RPC_SERVE_PROC) == 0)
        return (void *) ggml__rpc_serve;
    if (name != NULL && strcmp(name, "ggml_backend_rpc_start_server") == 0)
        return (void *) ggml__rpc_start_server;
    return NULL;
}

static struct ggml_backend_reg rpc_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = {
        .get_name = rpc_reg_name,
        .get_device_count = rpc_reg_device_count,
        .get_device = rpc_reg_device,
        .get_proc_address = rpc_reg_proc_address,
    },
    .context = NULL,
};

static ggml_backend_reg_t rpc_reg_get(void)
{
    return &rpc_reg;
}

GGML_BACKEND_DL_IMPL(rpc_reg_get)
