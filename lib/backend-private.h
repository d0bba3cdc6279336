/*
 * backend-private.h - internal declarations shared by the backend modules
 * (buffers, backends, devices, registry, loader, allocator).
 *
 * Not installed.  Include after config.h and ggml-impl.h.
 */
#ifndef GGML_BACKEND_BACKEND_PRIVATE_H
#define GGML_BACKEND_BACKEND_PRIVATE_H

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
 * Backends are special: a plugin may create one through its own init
 * function, which the library never sees.  A backend unknown to the table
 * is adopted on first use, unless it was freed through the library
 * recently (it is then reported as freed).
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
/* True for a live handle; says nothing either way (backends are not adopted). */
bool ggml__handle_is_live(enum ggml__handle_kind kind, const void *handle);
/* True for a live handle; otherwise logs one message as func. */
bool ggml__handle_check(enum ggml__handle_kind kind, const void *handle, const char *func);

/* ------------------------------------------------------------ registry */

/* The plugin directory chosen at configure time (--with-backenddir). */
const char *ggml__backend_dir(void);

/* ------------------------------------------------------------ allocator */

/* buffer is one of the compute buffers galloc allocated (and still holds). */
bool ggml__gallocr_owns_buffer(ggml_gallocr_t galloc, ggml_backend_buffer_t buffer);

/* The last plan of galloc holds graph: ggml_gallocr_alloc_graph needs no new
 * one (so it cannot fail for want of one).  graph is not a failed graph. */
bool ggml__gallocr_plan_fits(ggml_gallocr_t galloc, struct ggml_cgraph *graph);

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
 * range leaves the tensor, data is NULL or the tensor is unallocated.
 */
ggml_backend_buffer_t ggml__check_tensor_transfer(const struct ggml_tensor *tensor, const void *data,
                                                  size_t offset, size_t size, const char *func);

/* Same type, shape and strides (data of one can be copied into the other). */
bool ggml__same_layout(const struct ggml_tensor *a, const struct ggml_tensor *b);

/* Both tensors allocated and of the same layout (else logs as func). */
bool ggml__check_copy(const struct ggml_tensor *src, const struct ggml_tensor *dst, const char *func);

/* Applies the NUMA placement of a CPU buffer's new usage (lib/cpu/buffer.c;
 * called by ggml_backend_buffer_set_usage; other buffers are left alone). */
void ggml__cpu_buffer_usage_changed(ggml_backend_buffer_t buffer);

#endif
