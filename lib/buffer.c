/*
 * buffer.c - buffer types, buffers, multi-buffers, and moving tensor data
 * in and out of buffers.
 *
 * The public wrappers check their arguments and handles, supply the
 * default of every optional interface member, and then call the backend's
 * table.  A buffer is a live handle from ggml_backend_buffer_init until
 * ggml_backend_buffer_free.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "ggml-impl.h"
#include "backend-private.h"

/* ------------------------------------------------------------ buffer types */

#define REQUIRE_BUFT(buft, ret)                       \
    do {                                              \
        if ((buft) == NULL) {                         \
            ggml__error("buffer type is NULL");       \
            return ret;                               \
        }                                             \
    } while (0)

const char *ggml_backend_buft_name(ggml_backend_buffer_type_t buft)
{
    REQUIRE_BUFT(buft, NULL);
    return buft->iface.get_name(buft);
}

/* The object returned for a request of 0 bytes: valid, empty, no memory. */
static ggml_backend_buffer_t empty_buffer(ggml_backend_buffer_type_t buft)
{
    static const struct ggml_backend_buffer_i no_memory = { 0 };
    return ggml_backend_buffer_init(buft, no_memory, NULL, 0);
}

ggml_backend_buffer_t ggml_backend_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size)
{
    REQUIRE_BUFT(buft, NULL);
    if (size == 0)
        return empty_buffer(buft);
    const unsigned errors = ggml__errors_logged();
    ggml_backend_buffer_t buffer = buft->iface.alloc_buffer(buft, size);
    if (buffer == NULL && ggml__errors_logged() == errors)
        ggml__error("buffer type %s could not allocate %zu bytes", ggml_backend_buft_name(buft), size);
    return buffer;
}

size_t ggml_backend_buft_get_alignment(ggml_backend_buffer_type_t buft)
{
    REQUIRE_BUFT(buft, 0);
    return buft->iface.get_alignment ? buft->iface.get_alignment(buft) : GGML_MEM_ALIGN;
}

size_t ggml_backend_buft_get_max_size(ggml_backend_buffer_type_t buft)
{
    REQUIRE_BUFT(buft, 0);
    return buft->iface.get_max_size ? buft->iface.get_max_size(buft) : SIZE_MAX;
}

size_t ggml_backend_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor *tensor)
{
    REQUIRE_BUFT(buft, 0);
    if (tensor == NULL) {
        ggml__error("tensor is NULL");
        return 0;
    }
    return buft->iface.get_alloc_size ? buft->iface.get_alloc_size(buft, tensor) : ggml_nbytes(tensor);
}

bool ggml_backend_buft_is_host(ggml_backend_buffer_type_t buft)
{
    REQUIRE_BUFT(buft, false);
    return buft->iface.is_host ? buft->iface.is_host(buft) : false;
}

ggml_backend_dev_t ggml_backend_buft_get_device(ggml_backend_buffer_type_t buft)
{
    REQUIRE_BUFT(buft, NULL);
    return buft->device;
}

/* ---------------------------------------------------------------- buffers */

/*
 * Every buffer handle is the first member of one of these, allocated by
 * ggml_backend_buffer_init (the table of live handles holds no other
 * buffers), so the library can keep what plugins never see next to it.
 */
struct buffer_record {
    struct ggml_backend_buffer buffer; /* first: the handle points here */
    void (*release)(void *data);       /* ggml__buffer_set_release's, or NULL */
    void *release_data;
};

ggml_backend_buffer_t ggml_backend_buffer_init(ggml_backend_buffer_type_t buft,
                                               struct ggml_backend_buffer_i iface,
                                               void *context, size_t size)
{
    REQUIRE_BUFT(buft, NULL);
    struct buffer_record *record = malloc(sizeof *record);
    if (record == NULL) {
        ggml__error("out of memory");
        return NULL;
    }
    *record = (struct buffer_record) {
        .buffer = {
            .iface = iface,
            .buft = buft,
            .context = context,
            .size = size,
            .usage = GGML_BACKEND_BUFFER_USAGE_ANY,
        },
    };
    if (!ggml__handle_add(GGML__HANDLE_BUFFER, &record->buffer, __func__)) {
        free(record);
        return NULL;
    }
    return &record->buffer;
}

#define REQUIRE_BUFFER(buffer, ret)                                           \
    do {                                                                      \
        if (!ggml__handle_check(GGML__HANDLE_BUFFER, (buffer), __func__))     \
            return ret;                                                       \
    } while (0)

const char *ggml_backend_buffer_name(ggml_backend_buffer_t buffer)
{
    REQUIRE_BUFFER(buffer, NULL);
    return ggml_backend_buft_name(buffer->buft);
}

void ggml_backend_buffer_free(ggml_backend_buffer_t buffer)
{
    if (buffer == NULL)
        return;
    if (!ggml__handle_remove(GGML__HANDLE_BUFFER, buffer, __func__))
        return;
    struct buffer_record *record = (struct buffer_record *) buffer;
    if (buffer->iface.free_buffer)
        buffer->iface.free_buffer(buffer);
    if (record->release != NULL)
        record->release(record->release_data);
    free(record);
}

bool ggml__buffer_set_release(ggml_backend_buffer_t buffer, void (*release)(void *data), void *data)
{
    if (!ggml__handle_check(GGML__HANDLE_BUFFER, buffer, __func__))
        return false;
    struct buffer_record *record = (struct buffer_record *) buffer;
    if (record->release != NULL) {
        ggml__error("the %s buffer already releases other memory", ggml_backend_buft_name(buffer->buft));
        return false;
    }
    record->release = release;
    record->release_data = data;
    return true;
}

size_t ggml_backend_buffer_get_size(ggml_backend_buffer_t buffer)
{
    REQUIRE_BUFFER(buffer, 0);
    return buffer->size;
}

void *ggml_backend_buffer_get_base(ggml_backend_buffer_t buffer)
{
    REQUIRE_BUFFER(buffer, NULL);
    if (buffer->size == 0)
        return NULL;
    if (buffer->iface.get_base == NULL) {
        ggml__error("%s buffer has no base address", ggml_backend_buft_name(buffer->buft));
        return NULL;
    }
    void *base = buffer->iface.get_base(buffer);
    if (base == NULL)
        ggml__error("%s buffer returned a NULL base address", ggml_backend_buft_name(buffer->buft));
    return base;
}

enum ggml_status ggml_backend_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor)
{
    REQUIRE_BUFFER(buffer, GGML_STATUS_FAILED);
    if (tensor == NULL) {
        ggml__error("tensor is NULL");
        return GGML_STATUS_FAILED;
    }
    return buffer->iface.init_tensor ? buffer->iface.init_tensor(buffer, tensor) : GGML_STATUS_SUCCESS;
}

size_t ggml_backend_buffer_get_alignment(ggml_backend_buffer_t buffer)
{
    REQUIRE_BUFFER(buffer, 0);
    return ggml_backend_buft_get_alignment(buffer->buft);
}

size_t ggml_backend_buffer_get_max_size(ggml_backend_buffer_t buffer)
{
    REQUIRE_BUFFER(buffer, 0);
    return ggml_backend_buft_get_max_size(buffer->buft);
}

size_t ggml_backend_buffer_get_alloc_size(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor)
{
    REQUIRE_BUFFER(buffer, 0);
    return ggml_backend_buft_get_alloc_size(buffer->buft, tensor);
}

void ggml_backend_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value)
{
    REQUIRE_BUFFER(buffer, );
    if (buffer->size == 0)
        return;
    if (buffer->iface.clear == NULL) {
        ggml__error("%s buffer cannot be cleared", ggml_backend_buft_name(buffer->buft));
        return;
    }
    buffer->iface.clear(buffer, value);
}

bool ggml_backend_buffer_is_host(ggml_backend_buffer_t buffer)
{
    REQUIRE_BUFFER(buffer, false);
    return ggml_backend_buft_is_host(buffer->buft);
}

void ggml_backend_buffer_set_usage(ggml_backend_buffer_t buffer, enum ggml_backend_buffer_usage usage)
{
    REQUIRE_BUFFER(buffer, );
    buffer->usage = usage;
    if (ggml_backend_buffer_is_multi_buffer(buffer))
        ggml_backend_multi_buffer_set_usage(buffer, usage);
    else
        ggml__cpu_buffer_usage_changed(buffer); /* NUMA placement of CPU buffers */
}

enum ggml_backend_buffer_usage ggml_backend_buffer_get_usage(ggml_backend_buffer_t buffer)
{
    REQUIRE_BUFFER(buffer, GGML_BACKEND_BUFFER_USAGE_ANY);
    return buffer->usage;
}

ggml_backend_buffer_type_t ggml_backend_buffer_get_type(ggml_backend_buffer_t buffer)
{
    REQUIRE_BUFFER(buffer, NULL);
    return buffer->buft;
}

void ggml_backend_buffer_reset(ggml_backend_buffer_t buffer)
{
    REQUIRE_BUFFER(buffer, );
    if (buffer->iface.reset)
        buffer->iface.reset(buffer);
}

/* ----------------------------------------------------------- multi-buffers */

/* A multi-buffer owns its parts; its context is this header. */
struct multi_buffer {
    size_t n_buffers;
    ggml_backend_buffer_t buffers[];
};

static void multi_buffer_free(ggml_backend_buffer_t buffer)
{
    struct multi_buffer *multi = buffer->context;
    for (size_t i = 0; i < multi->n_buffers; i++)
        ggml_backend_buffer_free(multi->buffers[i]);
    free(multi);
}

static void multi_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value)
{
    struct multi_buffer *multi = buffer->context;
    for (size_t i = 0; i < multi->n_buffers; i++)
        ggml_backend_buffer_clear(multi->buffers[i], value);
}

static const struct ggml_backend_buffer_i multi_buffer_iface = {
    .free_buffer = multi_buffer_free,
    .clear = multi_buffer_clear,
};

ggml_backend_buffer_t ggml_backend_multi_buffer_alloc_buffer(ggml_backend_buffer_t *buffers, size_t n_buffers)
{
    if (buffers == NULL || n_buffers == 0) {
        ggml__error("a multi-buffer needs at least one buffer");
        return NULL;
    }
    size_t total = 0;
    for (size_t i = 0; i < n_buffers; i++) {
        if (!ggml__handle_check(GGML__HANDLE_BUFFER, buffers[i], __func__))
            return NULL;
        total += buffers[i]->size;
    }
    struct multi_buffer *multi = malloc(sizeof *multi + n_buffers * sizeof multi->buffers[0]);
    if (multi == NULL) {
        ggml__error("out of memory");
        return NULL;
    }
    multi->n_buffers = n_buffers;
    memcpy(multi->buffers, buffers, n_buffers * sizeof buffers[0]);
    ggml_backend_buffer_t result = ggml_backend_buffer_init(buffers[0]->buft, multi_buffer_iface, multi, total);
    if (result == NULL)
        free(multi);
    return result;
}

bool ggml_backend_buffer_is_multi_buffer(ggml_backend_buffer_t buffer)
{
    REQUIRE_BUFFER(buffer, false);
    return buffer->iface.free_buffer == multi_buffer_free;
}

void ggml_backend_multi_buffer_set_usage(ggml_backend_buffer_t buffer, enum ggml_backend_buffer_usage usage)
{
    REQUIRE_BUFFER(buffer, );
    if (buffer->iface.free_buffer != multi_buffer_free) {
        ggml__error("buffer %p is not a multi-buffer", (void *) buffer);
        return;
    }
    struct multi_buffer *multi = buffer->context;
    buffer->usage = usage;
    for (size_t i = 0; i < multi->n_buffers; i++)
        ggml_backend_buffer_set_usage(multi->buffers[i], usage);
}

/* ------------------------------------------------------------ tensor data */

ggml_backend_buffer_t ggml__tensor_buffer(const struct ggml_tensor *tensor, const char *func)
{
    if (tensor == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "tensor is NULL");
        return NULL;
    }
    ggml_backend_buffer_t buffer = tensor->view_src ? tensor->view_src->buffer : tensor->buffer;
    if (buffer == NULL || tensor->data == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "tensor '%s' is not allocated in a backend buffer",
                     tensor->name);
        return NULL;
    }
    if (!ggml__handle_check(GGML__HANDLE_BUFFER, buffer, func))
        return NULL;
    return buffer;
}

/*
 * Bytes from tensor's data to the end of the memory it may touch in buffer:
 * what its view source (the tensor itself when it is not a view) spans,
 * clipped to the buffer's own memory; 0 when its data lies outside both.
 * ggml_nbytes of the tensor is no such bound: by that formula a transposed
 * or permuted view of a block-quantized tensor spans more than its source.
 */
static size_t owned_bytes_from_data(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor)
{
    const struct ggml_tensor *owner = tensor->view_src ? tensor->view_src : tensor;
    const uintptr_t start = (uintptr_t) tensor->data;
    uintptr_t lo = (uintptr_t) owner->data;
    const size_t owner_bytes = ggml__nbytes(owner);
    uintptr_t hi = lo + (owner_bytes < UINTPTR_MAX - lo ? owner_bytes : UINTPTR_MAX - lo);
    if (buffer->iface.get_base != NULL) {
        /* (the caller checked that the buffer is live) */
        const uintptr_t base = buffer->size == 0 ? 0 : (uintptr_t) buffer->iface.get_base(buffer);
        const uintptr_t end = base + (buffer->size < UINTPTR_MAX - base ? buffer->size : UINTPTR_MAX - base);
        lo = lo > base ? lo : base;
        hi = hi < end ? hi : end;
    }
    return start >= lo && start < hi ? hi - start : 0;
}

/* The tensor's buffer when size bytes at offset lie in the tensor and in
 * the memory it owns (else NULL, logged as func). */
static ggml_backend_buffer_t check_tensor_range(const struct ggml_tensor *tensor, size_t offset,
                                                size_t size, const char *func)
{
    ggml_backend_buffer_t buffer = ggml__tensor_buffer(tensor, func);
    if (buffer == NULL)
        return NULL;
    size_t nbytes = ggml__nbytes(tensor);
    if (offset > nbytes || size > nbytes - offset) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "%zu bytes at offset %zu are outside tensor '%s' (%zu bytes)",
                     size, offset, tensor->name, nbytes);
        return NULL;
    }
    size_t owned = owned_bytes_from_data(buffer, tensor);
    if (offset > owned || size > owned - offset) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "%zu bytes at offset %zu of tensor '%s' reach beyond the memory of '%s' "
                     "(%zu bytes from the tensor's start)",
                     size, offset, tensor->name, tensor->view_src ? tensor->view_src->name : tensor->name,
                     owned);
        return NULL;
    }
    return buffer;
}

ggml_backend_buffer_t ggml__check_tensor_transfer(const struct ggml_tensor *tensor, const void *data,
                                            size_t offset, size_t size, const char *func)
{
    ggml_backend_buffer_t buffer = check_tensor_range(tensor, offset, size, func);
    if (buffer == NULL)
        return NULL;
    if (data == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "data is NULL");
        return NULL;
    }
    return buffer;
}

/* (n_copies - 1) * stride + size: the bytes n_copies runs span, SIZE_MAX when that overflows. */
static size_t runs_span(size_t size, size_t n_copies, size_t stride)
{
    const size_t steps = n_copies - 1;
    if (stride != 0 && steps > (SIZE_MAX - size) / stride)
        return SIZE_MAX;
    return steps * stride + size;
}

ggml_backend_buffer_t ggml__check_tensor_transfer_2d(const struct ggml_tensor *tensor, const void *data,
                                                     size_t offset, size_t size, size_t n_copies,
                                                     size_t stride_tensor, size_t stride_data, const char *func)
{
    if (runs_span(size, n_copies, stride_data) == SIZE_MAX) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%zu runs of %zu bytes, %zu bytes apart, overflow the host memory",
                     n_copies, size, stride_data);
        return NULL;
    }
    /* the runs lie between the first's start and the last's end */
    return ggml__check_tensor_transfer(tensor, data, offset, runs_span(size, n_copies, stride_tensor), func);
}

void ggml_backend_tensor_set(struct ggml_tensor *tensor, const void *data, size_t offset, size_t size)
{
    if (size == 0 && tensor != NULL)
        return;
    ggml_backend_buffer_t buffer = ggml__check_tensor_transfer(tensor, data, offset, size, __func__);
    if (buffer)
        buffer->iface.set_tensor(buffer, tensor, data, offset, size);
}

void ggml_backend_tensor_get(const struct ggml_tensor *tensor, void *data, size_t offset, size_t size)
{
    if (size == 0 && tensor != NULL)
        return;
    ggml_backend_buffer_t buffer = ggml__check_tensor_transfer(tensor, data, offset, size, __func__);
    if (buffer)
        buffer->iface.get_tensor(buffer, tensor, data, offset, size);
}

void ggml_backend_tensor_set_2d(struct ggml_tensor *tensor, const void *data, size_t offset, size_t size,
                                size_t n_copies, size_t stride_tensor, size_t stride_data)
{
    if ((size == 0 || n_copies == 0) && tensor != NULL)
        return;
    ggml_backend_buffer_t buffer =
        ggml__check_tensor_transfer_2d(tensor, data, offset, size, n_copies, stride_tensor, stride_data, __func__);
    if (buffer == NULL)
        return;
    if (n_copies > 1 && buffer->iface.set_tensor_2d != NULL) {
        buffer->iface.set_tensor_2d(buffer, tensor, data, offset, size, n_copies, stride_tensor, stride_data);
        return;
    }
    for (size_t i = 0; i < n_copies; i++)
        buffer->iface.set_tensor(buffer, tensor, (const char *) data + i * stride_data, offset + i * stride_tensor,
                                 size);
}

void ggml_backend_tensor_get_2d(const struct ggml_tensor *tensor, void *data, size_t offset, size_t size,
                                size_t n_copies, size_t stride_tensor, size_t stride_data)
{
    if ((size == 0 || n_copies == 0) && tensor != NULL)
        return;
    ggml_backend_buffer_t buffer =
        ggml__check_tensor_transfer_2d(tensor, data, offset, size, n_copies, stride_tensor, stride_data, __func__);
    if (buffer == NULL)
        return;
    if (n_copies > 1 && buffer->iface.get_tensor_2d != NULL) {
        buffer->iface.get_tensor_2d(buffer, tensor, data, offset, size, n_copies, stride_tensor, stride_data);
        return;
    }
    for (size_t i = 0; i < n_copies; i++)
        buffer->iface.get_tensor(buffer, tensor, (char *) data + i * stride_data, offset + i * stride_tensor, size);
}

void ggml_backend_tensor_memset(struct ggml_tensor *tensor, uint8_t value, size_t offset, size_t size)
{
    if (size == 0 && tensor != NULL)
        return;
    /* any non-NULL pointer: memset reads no host data */
    ggml_backend_buffer_t buffer = ggml__check_tensor_transfer(tensor, &value, offset, size, __func__);
    if (buffer == NULL)
        return;
    if (buffer->iface.memset_tensor == NULL) {
        ggml__error("%s buffers cannot memset tensors", ggml_backend_buft_name(buffer->buft));
        return;
    }
    buffer->iface.memset_tensor(buffer, tensor, value, offset, size);
}

/* Same type, shape and strides: the data of one can be copied into the other. */
bool ggml__same_layout(const struct ggml_tensor *a, const struct ggml_tensor *b)
{
    if (a->type != b->type)
        return false;
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i])
            return false;
    return true;
}

bool ggml__check_copy(const struct ggml_tensor *src, const struct ggml_tensor *dst, const char *func)
{
    if (src == NULL || dst == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s is NULL", src == NULL ? "src" : "dst");
        return false;
    }
    if (!ggml__same_layout(src, dst)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' and '%s' differ in type, shape or strides",
                     src->name, dst->name);
        return false;
    }
    /* the same layout spans the same ggml_nbytes on both sides */
    const size_t nbytes = ggml_nbytes(src);
    return check_tensor_range(src, 0, nbytes, func) != NULL && check_tensor_range(dst, 0, nbytes, func) != NULL;
}

bool ggml_backend_buffer_copy_tensor(const struct ggml_tensor *src, struct ggml_tensor *dst)
{
    if (src == NULL) {
        ggml__error("src is NULL");
        return false;
    }
    if (!ggml__check_copy(src, dst, __func__))
        return false;
    ggml_backend_buffer_t dst_buffer = dst->view_src ? dst->view_src->buffer : dst->buffer;
    return dst_buffer->iface.cpy_tensor ? dst_buffer->iface.cpy_tensor(dst_buffer, src, dst) : false;
}

void ggml_backend_tensor_copy(const struct ggml_tensor *src, struct ggml_tensor *dst)
{
    if (!ggml__check_copy(src, dst, __func__) || src == dst)
        return;
    const size_t nbytes = ggml_nbytes(src);
    if (ggml_backend_buffer_is_host(ggml__tensor_buffer(src, __func__))) {
        ggml_backend_tensor_set(dst, src->data, 0, nbytes);
    } else if (ggml_backend_buffer_is_host(ggml__tensor_buffer(dst, __func__))) {
        ggml_backend_tensor_get(src, dst->data, 0, nbytes);
    } else if (!ggml_backend_buffer_copy_tensor(src, dst)) {
        /* neither side can reach the other: stage through host memory */
        void *staging = malloc(nbytes ? nbytes : 1);
        if (staging == NULL) {
            ggml__error("out of memory staging %zu bytes from '%s' to '%s'", nbytes, src->name, dst->name);
            return;
        }
        ggml_backend_tensor_get(src, staging, 0, nbytes);
        ggml_backend_tensor_set(dst, staging, 0, nbytes);
        free(staging);
    }
}

/* -------------------------------------------------------------- placement */

enum ggml_status ggml_backend_tensor_alloc(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, void *addr)
{
    REQUIRE_BUFFER(buffer, GGML_STATUS_FAILED);
    if (tensor == NULL || addr == NULL) {
        ggml__error("%s is NULL", tensor == NULL ? "tensor" : "addr");
        return GGML_STATUS_FAILED;
    }
    if (tensor->buffer != NULL || tensor->data != NULL || tensor->view_src != NULL) {
        ggml__error("tensor '%s' already has %s", tensor->name,
                    tensor->view_src ? "a view source (use ggml_backend_view_init)" : "data");
        return GGML_STATUS_FAILED;
    }
    if (buffer->size == 0 || buffer->iface.get_base == NULL) {
        ggml__error("%s buffer %p has no memory of its own to place tensor '%s' in",
                    ggml_backend_buft_name(buffer->buft), (void *) buffer, tensor->name);
        return GGML_STATUS_FAILED;
    }
    char *base = ggml_backend_buffer_get_base(buffer);
    const size_t size = ggml_backend_buffer_get_alloc_size(buffer, tensor);
    const uintptr_t start = (uintptr_t) addr, lo = (uintptr_t) base;
    if (base == NULL || start < lo || start - lo > buffer->size || size > buffer->size - (start - lo)) {
        ggml__error("%zu bytes for tensor '%s' at %p do not fit in buffer [%p, +%zu)",
                    size, tensor->name, addr, (void *) base, buffer->size);
        return GGML_STATUS_FAILED;
    }
    tensor->buffer = buffer;
    tensor->data = addr;
    return ggml_backend_buffer_init_tensor(buffer, tensor);
}

enum ggml_status ggml_backend_view_init(struct ggml_tensor *tensor)
{
    if (tensor == NULL || tensor->view_src == NULL) {
        ggml__error("%s", tensor == NULL ? "tensor is NULL" : "tensor is not a view");
        return GGML_STATUS_FAILED;
    }
    const struct ggml_tensor *src = tensor->view_src;
    if (tensor->buffer != NULL) {
        ggml__error("view '%s' is already initialized in a buffer", tensor->name);
        return GGML_STATUS_FAILED;
    }
    if (src->buffer == NULL || src->data == NULL) {
        ggml__error("the source of view '%s' is not allocated", tensor->name);
        return GGML_STATUS_FAILED;
    }
    if (!ggml__handle_check(GGML__HANDLE_BUFFER, src->buffer, __func__))
        return GGML_STATUS_FAILED;
    tensor->buffer = src->buffer;
    tensor->data = (char *) src->data + tensor->view_offs;
    return ggml_backend_buffer_init_tensor(tensor->buffer, tensor);
}
