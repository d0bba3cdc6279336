/*
 * backend-private.h - internal declarations shared by the backend modules
 * (buffers, backends, devices, registry, loader, allocator).
 *
 * Not installed.  Include after config.h and ggml-impl.h.
 */
#ifndef GGML_BACKEND_BACKEND_PRIVATE_H
#define GGML_BACKEND_BACKEND_PRIVATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-backend.h"

/* ------------------------------------------------------------ live handles */

/*
 * Handles the library hands out are recorded in a table of live handles,
 * one per kind, so that public entry points can reject a freed, foreign or
 * wrong-kind handle with a message instead of following it.  The table
 * never reads the memory a handle points to, so a double free is detected
 * without touching freed memory.
 *
 * Backends enter the table when ggml_backend_dev_init (and so every
 * ggml_backend_init_* and ggml_backend_blas_init) or ggml_backend_cpu_init
 * returns them, or when a plugin passes one its own functions made to
 * ggml_backend_publish.  A pointer the table does not hold is refused
 * everywhere, ggml_backend_free included: it is never followed nor freed.
 */
enum ggml__handle_kind {
    GGML__HANDLE_BUFFER,
    GGML__HANDLE_BACKEND,
    GGML__HANDLE_EVENT,
    GGML__HANDLE_GALLOCR,
    GGML__HANDLE_SCHED,
    GGML__HANDLE_KIND_COUNT
};

/* Records a new live handle; false (logged as func) when out of memory. */
bool ggml__handle_add(enum ggml__handle_kind kind, const void *handle, const char *func);
/*
 * Forgets a live handle about to be freed.  Returns false, after logging
 * one message as func, when handle is NULL or not live (a double free).
 */
bool ggml__handle_remove(enum ggml__handle_kind kind, const void *handle, const char *func);
/* True for a live handle; says nothing either way. */
bool ggml__handle_is_live(enum ggml__handle_kind kind, const void *handle);
/* True for a live handle; otherwise logs one message as func. */
bool ggml__handle_check(enum ggml__handle_kind kind, const void *handle, const char *func);

/*
 * Makes ggml_backend_buffer_free call release(data) after the buffer's own
 * free_buffer: for memory the buffer only borrows, such as a mapped file
 * wrapped by buffer_from_host_ptr.  One per buffer: false (logged) when
 * buffer is not live or already has one.
 */
bool ggml__buffer_set_release(ggml_backend_buffer_t buffer, void (*release)(void *data), void *data);

/*
 * True when every tensor graph computes or reads (leafs, nodes and the
 * nodes' sources) that lives in a backend buffer (its view source's, for a
 * view) lives in a live one; otherwise logs one message naming the first
 * tensor that does not, as func.  Tensors with data and no buffer are the
 * caller's memory and pass.
 */
bool ggml__graph_buffers_live(const struct ggml_cgraph *graph, const char *func);

/*
 * The same check tensor by tensor, for a backend that walks the graph
 * anyway (the CPU backend, which ggml_backend_graph_compute_async leaves
 * it to).  One struct per walk: it remembers the buffers found live, so
 * that each is looked up in the handle table about once.
 */
struct ggml__live_buffers {
    ggml_backend_buffer_t seen[32];
    unsigned n, next;
    ggml_backend_buffer_t last; /* the buffer of the last tensor that passed */
    const char *func;           /* names the caller in the message */
};
#define GGML__LIVE_BUFFERS_INIT(func_) { .n = 0, .next = 0, .last = NULL, .func = (func_) }

/* ggml__tensor_buffer_live for t in buffer, not known->last. */
bool ggml__buffer_live(struct ggml__live_buffers *known, ggml_backend_buffer_t buffer, const struct ggml_tensor *t);

/* True when t is NULL, in no buffer, or in a live one; logs otherwise. */
static inline bool ggml__tensor_buffer_live(struct ggml__live_buffers *known, const struct ggml_tensor *t)
{
    if (t == NULL)
        return true;
    ggml_backend_buffer_t buffer = t->view_src != NULL ? t->view_src->buffer : t->buffer;
    return buffer == NULL || buffer == known->last || ggml__buffer_live(known, buffer, t);
}

/* ------------------------------------------------ one caller at a time */

/*
 * An object that serves one thread at a time (a CPU backend, a scheduler)
 * holds an atomic busy flag.  ggml__claim sets it and returns true, or,
 * when another call holds the object, logs one message as func naming
 * what ("the scheduler") and returns false.  ggml__release clears it.
 */
bool ggml__claim(atomic_bool *busy, const char *what, const char *func);
void ggml__release(atomic_bool *busy);

/* ------------------------------------------------------------ registry */

/* The plugin directory chosen at configure time (--with-backenddir). */
const char *ggml__backend_dir(void);

/* ------------------------------------------------------------ allocator */

/* buffer is one of the compute buffers galloc allocated (and still holds). */
bool ggml__gallocr_owns_buffer(ggml_gallocr_t galloc, ggml_backend_buffer_t buffer);
/* Whether graph needs a new plan (ggml_gallocr_reserve_n) before
 * ggml_gallocr_alloc_graph can place it; allocates nothing. */
bool ggml__gallocr_needs_plan(ggml_gallocr_t galloc, struct ggml_cgraph *graph);

/* --------------------------------------------------------- tensor data */

/*
 * The buffer holding tensor's data (its view source's for a view), or NULL
 * (logged as func) when the tensor is NULL, unallocated or its buffer is not
 * a live handle.
 */
ggml_backend_buffer_t ggml__tensor_buffer(const struct ggml_tensor *tensor, const char *func);

/*
 * Checks a transfer of size bytes at offset between host memory data and
 * tensor: returns the tensor's buffer, or NULL (logged as func) when the
 * range leaves the tensor (its ggml_nbytes) or the memory its view source
 * owns in the buffer, data is NULL or the tensor is unallocated.
 */
ggml_backend_buffer_t ggml__check_tensor_transfer(const struct ggml_tensor *tensor, const void *data,
                                                  size_t offset, size_t size, const char *func);

/*
 * The same for a transfer of n_copies runs of size bytes (run i at offset
 * + i * stride_tensor in the tensor, data + i * stride_data on the host):
 * every run inside the tensor, the host span not overflowing.  n_copies
 * and size are not 0.
 */
ggml_backend_buffer_t ggml__check_tensor_transfer_2d(const struct ggml_tensor *tensor, const void *data,
                                                     size_t offset, size_t size, size_t n_copies,
                                                     size_t stride_tensor, size_t stride_data, const char *func);

/* Same type, shape and strides (data of one can be copied into the other). */
bool ggml__same_layout(const struct ggml_tensor *a, const struct ggml_tensor *b);

/* Both tensors allocated, of the same layout and each within the memory it
 * owns (else logs as func). */
bool ggml__check_copy(const struct ggml_tensor *src, const struct ggml_tensor *dst, const char *func);

/* Applies the NUMA placement of a CPU buffer's new usage (lib/cpu/buffer.c;
 * called by ggml_backend_buffer_set_usage; other buffers are left alone). */
void ggml__cpu_buffer_usage_changed(ggml_backend_buffer_t buffer);

#endif
