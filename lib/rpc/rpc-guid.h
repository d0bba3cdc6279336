/*
 * rpc/rpc-guid.h - what the core library and the RPC plugin agree on: the
 * identity stamped on every RPC backend, the registry's name, the plugin's
 * file name and the proc addresses the core library calls.  Not installed.
 */
#ifndef GGML_RPC_GUID_H
#define GGML_RPC_GUID_H

#include "ggml.h"

/* Version-4-style random bytes, chosen once for this library. */
#define GGML_RPC_GUID_BYTES \
    { 0x5e, 0x21, 0x9c, 0x07, 0xb3, 0x4d, 0x4f, 0x18, 0x8a, 0x66, 0x0d, 0xf2, 0x91, 0x3b, 0xc4, 0x7a }

/* Name of the plugin's own registry. */
#define GGML_RPC_NAME "RPC"

/* File name of the plugin in the plugin directory. */
#define GGML_RPC_PLUGIN_FILE "libggml-rpc.so"

/* Proc addresses of the plugin's registry, with ggml-rpc.h's signatures. */
#define GGML_RPC_ADD_SERVER_PROC "ggml_backend_rpc_add_server"
#define GGML_RPC_START_SERVER_PROC "ggml_backend_rpc_start_server"

#endif
