/*
 * ggml-backend-gguf.h - loading a GGUF file's tensors into backend buffers.
 *
 * An extension of this library: upstream ggml has no such header.
 * Programs that use it do not build against upstream's ggml; test for
 * GGML_BACKEND_GGUF_LOAD to keep a fallback.
 *
 * ggml_backend_gguf_load(3) does the whole job: it reads the metadata and
 * tensor table, allocates one buffer of a buffer type for every tensor and
 * fills it, mapping the file instead of reading it where the buffer type
 * is host memory of a device that reports mmap_support.
 * ggml_backend_gguf_load_tensors(3) fills tensors the caller has already
 * allocated, in any buffers of any devices.  Both read the data section
 * checked against the file's size and report their progress through a
 * callback that may cancel the load.
 */
#ifndef GGML_BACKEND_GGUF_H
#define GGML_BACKEND_GGUF_H

#include <stdbool.h>
#include <stdint.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "gguf.h"

/* Defined when this header's functions are there. */
#define GGML_BACKEND_GGUF_LOAD 1

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Called as a load advances, first with bytes_done 0 and last with
 * bytes_done == bytes_total.  Returning false stops the load, which then
 * fails.
 */
typedef bool (*ggml_backend_gguf_progress_t)(uint64_t bytes_done, uint64_t bytes_total, void * user_data);

/* How ggml_backend_gguf_load works; all zero is the usual choice. */
struct ggml_backend_gguf_load_params {
    ggml_backend_buffer_type_t   buft;          /* where the tensors go; NULL: ggml_backend_cpu_buffer_type() */
    bool                         no_mmap;       /* read the file even where it could be mapped */
    ggml_backend_gguf_progress_t progress;      /* NULL: no reports */
    void *                       progress_data; /* passed to progress */
};

/*
 * Loads fname's tensors into a new buffer.  On success *ctx receives a
 * context holding the file's tensors (named as in the file, allocated in
 * the returned buffer), and *gguf, when gguf is not NULL, the file's
 * metadata.  The caller frees the buffer, then the context, then the
 * gguf context.  NULL (logged; *ctx and *gguf set to NULL) on any error.
 */
GGML_API ggml_backend_buffer_t ggml_backend_gguf_load(const char * fname,
                                                      const struct ggml_backend_gguf_load_params * params,
                                                      struct ggml_context ** ctx,
                                                      struct gguf_context ** gguf);

/*
 * Fills every tensor of ctx whose name is in the table of gguf (which was
 * read from fname) with its data from the file; ctx's other tensors are
 * left alone.  Each such tensor must have the file's type and shape and
 * be allocated in a buffer.  False (logged) on any error; tensors already
 * filled keep their data.
 */
GGML_API bool ggml_backend_gguf_load_tensors(const char * fname,
                                             const struct gguf_context * gguf,
                                             struct ggml_context * ctx,
                                             ggml_backend_gguf_progress_t progress,
                                             void * progress_data);

#ifdef __cplusplus
}
#endif

#endif /* GGML_BACKEND_GGUF_H */
