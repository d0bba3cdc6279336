/*
 * blas-guid.h - the identity of BLAS backends, shared by the plugin (which
 * stamps it on every backend it makes) and the core library (whose
 * ggml_backend_is_blas compares against it).  Not installed.
 */
#ifndef GGML_BLAS_GUID_H
#define GGML_BLAS_GUID_H

#include "ggml.h"

/* Version-4-style random bytes, chosen once for this library. */
#define GGML_BLAS_GUID_BYTES \
    { 0x3d, 0x8a, 0x51, 0xc2, 0x7e, 0x04, 0x4b, 0x96, 0xa1, 0x5f, 0xe8, 0x23, 0x6c, 0xb7, 0x19, 0x40 }

/* Name of the registry and of its one device. */
#define GGML_BLAS_NAME "BLAS"

/* File name of the plugin in the plugin directory. */
#define GGML_BLAS_PLUGIN_FILE "libggml-blas.so"

#endif
