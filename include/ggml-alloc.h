/*
 * ggml-alloc.h - placing tensors in backend buffers.
 *
 * ggml_tallocr hands out consecutive aligned addresses of one buffer.
 * ggml_gallocr places the tensors of a graph in one buffer per buffer type,
 * reusing memory of intermediate results once nothing reads them any more
 * and computing in place where the operation allows it.
 */
#ifndef GGML_ALLOC_H
#define GGML_ALLOC_H

#include "ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ggml_backend_buffer_type * ggml_backend_buffer_type_t;
typedef struct      ggml_backend_buffer * ggml_backend_buffer_t;
typedef struct             ggml_backend * ggml_backend_t;

/* Linear allocator over one buffer. */
struct ggml_tallocr {
    ggml_backend_buffer_t buffer;    /* buffer allocated from */
    void * base;                     /* its base address */
    size_t alignment;                /* alignment of every placement */
    size_t offset;                   /* next free offset from base */
};

/* Allocator starting at the beginning of buffer. */
GGML_API struct ggml_tallocr ggml_tallocr_new(ggml_backend_buffer_t buffer);
/* Places tensor at the next aligned offset and initializes it in the buffer;
 * GGML_STATUS_ALLOC_FAILED (logged) when it does not fit. */
GGML_API enum ggml_status    ggml_tallocr_alloc(struct ggml_tallocr * talloc, struct ggml_tensor * tensor);

/*
 * Graph allocator.  Tensors flagged with ggml_set_input() are placed first
 * and never share memory; tensors flagged with ggml_set_output() are never
 * freed or overwritten within the graph.
 */
typedef struct ggml_gallocr * ggml_gallocr_t;

/* Allocator with one buffer of type buft; NULL (logged) on failure. */
GGML_API ggml_gallocr_t ggml_gallocr_new(ggml_backend_buffer_type_t buft);
/* Allocator with one buffer per entry of bufts[0..n_bufs). */
GGML_API ggml_gallocr_t ggml_gallocr_new_n(ggml_backend_buffer_type_t * bufts, int n_bufs);
/* Frees the allocator and its buffers; NULL is a no-op. */
GGML_API void           ggml_gallocr_free(ggml_gallocr_t galloc);

/* Sizes and allocates the buffers for a worst-case graph without touching
 * the graph; false when a buffer could not be allocated. */
GGML_API bool ggml_gallocr_reserve(ggml_gallocr_t galloc, struct ggml_cgraph * graph);
/* As ggml_gallocr_reserve, placing node i in buffer node_buffer_ids[i] and
 * leaf i in buffer leaf_buffer_ids[i]. */
GGML_API bool ggml_gallocr_reserve_n(
    ggml_gallocr_t galloc,
    struct ggml_cgraph * graph,
    const int * node_buffer_ids,
    const int * leaf_buffer_ids);
/* Computes into sizes[0..n_bufs) the bytes each buffer would need for the
 * graph, allocating nothing. */
GGML_API void ggml_gallocr_reserve_n_size(
    ggml_gallocr_t galloc,
    struct ggml_cgraph * graph,
    const int * node_buffer_ids,
    const int * leaf_buffer_ids,
    size_t * sizes);

/* Assigns memory to every unallocated tensor of the graph, growing a single
 * buffer when needed; false when that fails or when several buffers would
 * need a new reservation (call ggml_gallocr_reserve_n first). */
GGML_API bool ggml_gallocr_alloc_graph(ggml_gallocr_t galloc, struct ggml_cgraph * graph);

/* Current size of buffer buffer_id (0 when not allocated). */
GGML_API size_t ggml_gallocr_get_buffer_size(ggml_gallocr_t galloc, int buffer_id);

/* Bytes of a buft buffer able to hold every unallocated tensor of ctx. */
GGML_API size_t ggml_backend_alloc_ctx_tensors_from_buft_size(struct ggml_context * ctx, ggml_backend_buffer_type_t buft);
/* Allocates one buffer (or a multi-buffer when the type's maximum size
 * requires it) holding every unallocated tensor of ctx; NULL when there is
 * nothing to allocate or allocation fails. */
GGML_API struct ggml_backend_buffer * ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, ggml_backend_buffer_type_t buft);
/* As above with the backend's default buffer type. */
GGML_API struct ggml_backend_buffer * ggml_backend_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_t backend);

#ifdef __cplusplus
}
#endif

#endif /* GGML_ALLOC_H */
