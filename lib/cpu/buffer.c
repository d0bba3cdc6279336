/*
 * cpu/buffer.c - the CPU buffer types: "CPU" (memory the library allocates,
 * 64-byte aligned) and "CPU_Mapped" (host memory the caller owns, e.g. a
 * mapped model file, wrapped by ggml_backend_cpu_buffer_from_ptr).  Tensor data in both is plain host memory.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ggml-impl.h"
#include "backend-private.h"
#include "cpu-private.h"

/* Alignment of tensor data in CPU buffers: one cache line, enough for AVX-512. */
#define CPU_BUFFER_ALIGNMENT 64
/* Alignment a caller-provided pointer must have (what model files use). */
#define CPU_MAPPED_ALIGNMENT 32

static void *cpu_buffer_get_base(ggml_backend_buffer_t buffer)
{
    return buffer->context;
}

static void cpu_buffer_free(ggml_backend_buffer_t buffer)
{
    free(buffer->context);
}

static void cpu_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor,
                                     uint8_t value, size_t offset, size_t size)
{
    (void) buffer;
    memset((char *) tensor->data + offset, value, size);
}

static void cpu_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor,
                                  const void *data, size_t offset, size_t size)
{
    (void) buffer;
    memcpy((char *) tensor->data + offset, data, size);
}

static void cpu_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor,
                                  void *data, size_t offset, size_t size)
{
    (void) buffer;
    memcpy(data, (const char *) tensor->data + offset, size);
}

/* Copies from any host buffer; other sources are the caller's business. */
static bool cpu_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *src,
                                  struct ggml_tensor *dst)
{
    (void) buffer;
    ggml_backend_buffer_t src_buffer = src->view_src ? src->view_src->buffer : src->buffer;
    if (src_buffer == NULL || !ggml_backend_buffer_is_host(src_buffer))
        return false;
    memcpy(dst->data, src->data, ggml_nbytes(src));
    return true;
}

static void cpu_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value)
{
    memset(buffer->context, value, buffer->size);
}

/* Owned memory: freed with the buffer. */
static const struct ggml_backend_buffer_i cpu_buffer_iface = {
    .free_buffer = cpu_buffer_free,
    .get_base = cpu_buffer_get_base,
    .init_tensor = NULL,
    .memset_tensor = cpu_buffer_memset_tensor,
    .set_tensor = cpu_buffer_set_tensor,
    .get_tensor = cpu_buffer_get_tensor,
    .cpy_tensor = cpu_buffer_cpy_tensor,
    .clear = cpu_buffer_clear,
    .reset = NULL,
};

/* Caller's memory: left alone when the buffer is freed. */
static const struct ggml_backend_buffer_i cpu_mapped_buffer_iface = {
    .free_buffer = NULL,
    .get_base = cpu_buffer_get_base,
    .init_tensor = NULL,
    .memset_tensor = cpu_buffer_memset_tensor,
    .set_tensor = cpu_buffer_set_tensor,
    .get_tensor = cpu_buffer_get_tensor,
    .cpy_tensor = cpu_buffer_cpy_tensor,
    .clear = cpu_buffer_clear,
    .reset = NULL,
};

static const char *cpu_buft_get_name(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return "CPU";
}

static const char *cpu_mapped_buft_get_name(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return "CPU_Mapped";
}

static ggml_backend_buffer_t cpu_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size)
{
    void *data = NULL;
    /* padded so that the last tensor may be read a full vector at a time */
    size_t padded = size + CPU_BUFFER_ALIGNMENT;
    if (size > PTRDIFF_MAX - CPU_BUFFER_ALIGNMENT || posix_memalign(&data, CPU_BUFFER_ALIGNMENT, padded) != 0)
        return NULL; /* ggml_backend_buft_alloc_buffer reports it */
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, cpu_buffer_iface, data, size);
    if (buffer == NULL)
        free(data);
    return buffer;
}

static size_t cpu_buft_get_alignment(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return CPU_BUFFER_ALIGNMENT;
}

static size_t cpu_mapped_buft_get_alignment(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return CPU_MAPPED_ALIGNMENT;
}

static bool cpu_buft_is_host(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return true;
}

static struct ggml_backend_buffer_type cpu_buffer_type = {
    .iface = {
        .get_name = cpu_buft_get_name,
        .alloc_buffer = cpu_buft_alloc_buffer,
        .get_alignment = cpu_buft_get_alignment,
        .get_max_size = NULL,
        .get_alloc_size = NULL,
        .is_host = cpu_buft_is_host,
    },
    .device = &ggml__cpu_device,
    .context = NULL,
};

static struct ggml_backend_buffer_type cpu_mapped_buffer_type = {
    .iface = {
        .get_name = cpu_mapped_buft_get_name,
        /* as upstream: a request for new memory gets ordinary CPU memory */
        .alloc_buffer = cpu_buft_alloc_buffer,
        .get_alignment = cpu_mapped_buft_get_alignment,
        .get_max_size = NULL,
        .get_alloc_size = NULL,
        .is_host = cpu_buft_is_host,
    },
    .device = &ggml__cpu_device,
    .context = NULL,
};

ggml_backend_buffer_type_t ggml_backend_cpu_buffer_type(void)
{
    return &cpu_buffer_type;
}

ggml_backend_buffer_t ggml_backend_cpu_buffer_from_ptr(void *ptr, size_t size)
{
    if (ptr == NULL) {
        ggml__error("ptr is NULL");
        return NULL;
    }
    if ((uintptr_t) ptr % CPU_MAPPED_ALIGNMENT != 0) {
        ggml__error("ptr %p is not aligned to %d bytes", ptr, CPU_MAPPED_ALIGNMENT);
        return NULL;
    }
    return ggml_backend_buffer_init(&cpu_mapped_buffer_type, cpu_mapped_buffer_iface, ptr, size);
}
