/*
 * ggml-blas.h - the BLAS accelerator device.
 *
 * Matrix products of large F32/F16 operands run through OpenBLAS.  The
 * device itself is the plugin libggml-blas.so in the plugin directory;
 * these functions are in the core library and reach it through the
 * registry.  Without the plugin they log an error and return NULL/false.
 */
#ifndef GGML_BLAS_H
#define GGML_BLAS_H

#include "ggml.h"
#include "ggml-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* New BLAS backend; NULL (logged) when the plugin is unavailable. */
GGML_BACKEND_API ggml_backend_t ggml_backend_blas_init(void);

/* True when backend is a BLAS backend. */
GGML_BACKEND_API bool ggml_backend_is_blas(ggml_backend_t backend);

/* Threads used for converting operands to float and, with OpenBLAS, by the
 * BLAS library itself. */
GGML_BACKEND_API void ggml_backend_blas_set_n_threads(ggml_backend_t backend_blas, int n_threads);

/* Registry of the BLAS device (loading the plugin if needed), or NULL. */
GGML_BACKEND_API ggml_backend_reg_t ggml_backend_blas_reg(void);

#ifdef __cplusplus
}
#endif

#endif /* GGML_BLAS_H */
