/*
 * rpc/plugin.c - the RPC plugin's registry, "RPC": the only module that
 * speaks ggml's RPC protocol.
 *
 * Its devices are those of the servers named in GGML_RPC_SERVERS
 * (client.c), so that programs loading every plugin see them.  Its proc
 * addresses, also given by each server's registry "RPC[endpoint]":
 *   ggml_backend_rpc_add_server    ggml-rpc.h's, client.c
 *   ggml_backend_rpc_start_server  ggml-rpc.h's, listen.c
 *   ggml_backend_rpc_serve         serve.h's, listen.c
 */
#include "config.h"

#include <string.h>

#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "rpc-guid.h"
#include "rpc-private.h"

static const char *rpc_reg_name(ggml_backend_reg_t reg)
{
    (void) reg;
    return GGML_RPC_NAME;
}

static size_t rpc_reg_device_count(ggml_backend_reg_t reg)
{
    (void) reg;
    return ggml__rpc_env_device_count();
}

static ggml_backend_dev_t rpc_reg_device(ggml_backend_reg_t reg, size_t index)
{
    (void) reg;
    return ggml__rpc_env_device(index);
}

void *ggml__rpc_reg_proc_address(ggml_backend_reg_t reg, const char *name)
{
    (void) reg;
    if (name == NULL)
        return NULL;
    if (strcmp(name, GGML_RPC_ADD_SERVER_PROC) == 0)
        return (void *) ggml__rpc_add_server;
    if (strcmp(name, GGML_RPC_START_SERVER_PROC) == 0)
        return (void *) ggml__rpc_start_server;
    if (strcmp(name, RPC_SERVE_PROC) == 0)
        return (void *) ggml__rpc_serve;
    return NULL;
}

static struct ggml_backend_reg rpc_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = {
        .get_name = rpc_reg_name,                          /* "RPC" */
        .get_device_count = rpc_reg_device_count,          /* the devices of GGML_RPC_SERVERS */
        .get_device = rpc_reg_device,
        .get_proc_address = ggml__rpc_reg_proc_address,    /* add_server, start_server, serve */
    },
    .context = NULL,
};

static ggml_backend_reg_t rpc_reg_get(void)
{
    return &rpc_reg;
}

GGML_BACKEND_DL_IMPL(rpc_reg_get)
