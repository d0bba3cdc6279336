/*
 * cpu/buffer.c - the CPU buffer types: "CPU" (memory the library allocates,
 * 64-byte aligned) and "CPU_Mapped" (host memory the caller owns, e.g. a
 * mapped model file, wrapped by ggml_backend_cpu_buffer_from_ptr).  Tensor
 * data in both is plain host memory, placed on NUMA nodes as the layout of
 * ggml_numa_init plans (numa-plan.h).
 */
#include "config.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-impl.h"
#include "backend-private.h"
#include "cpu-private.h"

/* Alignment of tensor data in CPU buffers: one cache line, enough for AVX-512. */
#define CPU_BUFFER_ALIGNMENT 64
/* Alignment a caller-provided pointer must have (what model files use). */
#define CPU_MAPPED_ALIGNMENT 32

/*
 * A CPU buffer.  Tensor data always points into copies[0]; under MIRROR a
 * WEIGHTS buffer also holds copies[1..n_copies) on the other nodes of the
 * layout, kept equal to copies[0] by every write made through the buffer
 * interface (and refreshed by setting the usage to WEIGHTS again).
 */
enum cpu_memory_origin {
    CPU_MEMORY_HEAP,   /* posix_memalign, freed with free */
    CPU_MEMORY_PAGES,  /* untouched pages (ggml__numa_alloc_pages), placed by policy */
    CPU_MEMORY_CALLER, /* ggml_backend_cpu_buffer_from_ptr: the caller's, never freed here */
};

struct cpu_buffer {
    size_t size; /* bytes of each copy */
    enum cpu_memory_origin origin;
    int n_copies;
    void *copies[GGML__NUMA_MAX_NODES];
};

static atomic_int mirrored_buffers;

int ggml__cpu_mirrored_buffers(void)
{
    return atomic_load(&mirrored_buffers);
}

static void *cpu_buffer_get_base(ggml_backend_buffer_t buffer)
{
    const struct cpu_buffer *b = buffer->context;
    return b->copies[0];
}

static void drop_copies(struct cpu_buffer *b)
{
    if (b->n_copies <= 1)
        return;
    for (int i = 1; i < b->n_copies; i++)
        ggml__numa_free_pages(b->copies[i], b->size);
    b->n_copies = 1;
    atomic_fetch_sub(&mirrored_buffers, 1);
}

/* Gives back size bytes at data as its origin says (the caller's memory
 * is left alone). */
static void release_memory(void *data, size_t size, enum cpu_memory_origin origin)
{
    if (origin == CPU_MEMORY_HEAP)
        free(data);
    else if (origin == CPU_MEMORY_PAGES)
        ggml__numa_free_pages(data, size);
}

static void cpu_buffer_free(ggml_backend_buffer_t buffer)
{
    struct cpu_buffer *b = buffer->context;
    drop_copies(b);
    release_memory(b->copies[0], b->size, b->origin);
    free(b);
}

size_t ggml__cpu_buffer_offset(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor)
{
    const struct cpu_buffer *b = buffer->context;
    return (size_t) ((const char *) tensor->data - (const char *) b->copies[0]);
}

static void cpu_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor,
                                     uint8_t value, size_t offset, size_t size)
{
    const struct cpu_buffer *b = buffer->context;
    const size_t at = ggml__cpu_buffer_offset(buffer, tensor) + offset;
    for (int i = 0; i < b->n_copies; i++)
        memset((char *) b->copies[i] + at, value, size);
}

/*
 * data may lie in the buffer itself (a tensor copied onto one that
 * overlaps it, or set from its own buffer's memory): memmove, and the
 * first copy, which tensors' data points into, written last, so that the
 * other copies still read the bytes as they were.
 */
void ggml__cpu_buffer_write(ggml_backend_buffer_t buffer, size_t at, const void *data, size_t size)
{
    const struct cpu_buffer *b = buffer->context;
    for (int i = b->n_copies - 1; i >= 0; i--)
        memmove((char *) b->copies[i] + at, data, size);
}

static void cpu_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor,
                                  const void *data, size_t offset, size_t size)
{
    ggml__cpu_buffer_write(buffer, ggml__cpu_buffer_offset(buffer, tensor) + offset, data, size);
}

static void cpu_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor,
                                  void *data, size_t offset, size_t size)
{
    (void) buffer;
    memmove(data, (const char *) tensor->data + offset, size);   /* data may lie in the buffer too */
}

/* Copies from any host buffer; other sources are the caller's business. */
static bool cpu_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *src,
                                  struct ggml_tensor *dst)
{
    ggml_backend_buffer_t src_buffer = src->view_src ? src->view_src->buffer : src->buffer;
    if (src_buffer == NULL || !ggml_backend_buffer_is_host(src_buffer))
        return false;
    cpu_buffer_set_tensor(buffer, dst, src->data, 0, ggml_nbytes(src));
    return true;
}

static void cpu_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value)
{
    const struct cpu_buffer *b = buffer->context;
    for (int i = 0; i < b->n_copies; i++)
        memset(b->copies[i], value, buffer->size);
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

/* Caller's memory: left alone when the buffer is freed (cpu_buffer_free
 * frees only the bookkeeping and any per-node copies). */
static const struct ggml_backend_buffer_i cpu_mapped_buffer_iface = {
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

/* Wraps memory in a buffer; on failure nothing is kept (the memory too is
 * released unless it is the caller's). */
static ggml_backend_buffer_t wrap_memory(ggml_backend_buffer_type_t buft, struct ggml_backend_buffer_i iface,
                                        void *data, size_t size, size_t alloc_size, enum cpu_memory_origin origin)
{
    struct cpu_buffer *b = calloc(1, sizeof *b);
    ggml_backend_buffer_t buffer = NULL;
    if (b != NULL) {
        *b = (struct cpu_buffer) { .size = alloc_size, .origin = origin, .n_copies = 1, .copies = { data } };
        buffer = ggml_backend_buffer_init(buft, iface, b, size);
    }
    if (buffer == NULL) {
        free(b);
        release_memory(data, alloc_size, origin);
    }
    return buffer;
}

/*
 * New memory follows the NUMA layout: with DISTRIBUTE, ISOLATE or MIRROR
 * it is fresh pages, bound to the caller's node (ISOLATE) or left for the
 * threads that first write them; otherwise (DISABLED, NUMACTL) it comes
 * from the heap under the process's own memory policy.  Either way a
 * buffer of GGML__HUGE_PAGE_BYTES or more is asked to sit on huge pages
 * (cpu-private.h).
 */
ggml_backend_buffer_t ggml__cpu_buffer_alloc(ggml_backend_buffer_type_t buft, struct ggml_backend_buffer_i iface,
                                             size_t size)
{
    /* padded so that the last tensor may be read a full vector at a time */
    if (size > PTRDIFF_MAX - CPU_BUFFER_ALIGNMENT)
        return NULL; /* ggml_backend_buft_alloc_buffer reports it */
    const size_t padded = size + CPU_BUFFER_ALIGNMENT;
    const struct ggml__numa_layout *layout = ggml__numa_layout();
    if (layout->strategy == GGML_NUMA_STRATEGY_DISABLED || layout->strategy == GGML_NUMA_STRATEGY_NUMACTL) {
        void *data = NULL;
        const size_t alignment = padded >= GGML__HUGE_PAGE_BYTES ? GGML__HUGE_PAGE_BYTES : CPU_BUFFER_ALIGNMENT;
        if (posix_memalign(&data, alignment, padded) != 0)
            return NULL;
        ggml__advise_huge_pages(data, padded);
        return wrap_memory(buft, iface, data, size, padded, CPU_MEMORY_HEAP);
    }
    void *pages = ggml__numa_alloc_pages(padded);
    if (pages == NULL)
        return NULL;
    ggml__numa_place_memory(pages, padded, ggml__numa_plan_buffer(layout, GGML_BACKEND_BUFFER_USAGE_ANY), false);
    return wrap_memory(buft, iface, pages, size, padded, CPU_MEMORY_PAGES);
}

static ggml_backend_buffer_t cpu_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size)
{
    return ggml__cpu_buffer_alloc(buft, cpu_buffer_iface, size);
}

struct ggml_backend_buffer_i ggml__cpu_buffer_iface(void)
{
    return cpu_buffer_iface;
}

/* MIRROR: one copy per node of the layout, refreshed from copies[0] when
 * they exist already.  Out of memory: logged, the buffer keeps one copy. */
static void make_copies(struct cpu_buffer *b, const struct ggml__numa_layout *layout)
{
    if (b->n_copies == layout->n_nodes) {
        for (int i = 1; i < b->n_copies; i++)
            memcpy(b->copies[i], b->copies[0], b->size);
        return;
    }
    drop_copies(b);
    if (b->origin != CPU_MEMORY_CALLER)
        ggml__numa_place_memory(b->copies[0], b->size, (struct ggml__buffer_place) { GGML__MEM_BIND, 0 }, true);
    for (int i = 1; i < layout->n_nodes; i++) {
        void *copy = ggml__numa_alloc_pages(b->size);
        if (copy == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_buffer_set_usage",
                         "out of memory for the copy of %zu bytes of weights on NUMA node %d; "
                         "the buffer keeps a single copy", b->size, i);
            for (int j = 1; j < i; j++)
                ggml__numa_free_pages(b->copies[j], b->size);
            return;
        }
        ggml__numa_place_memory(copy, b->size, (struct ggml__buffer_place) { GGML__MEM_BIND, i }, false);
        memcpy(copy, b->copies[0], b->size);
        b->copies[i] = copy;
    }
    b->n_copies = layout->n_nodes;
    atomic_fetch_add(&mirrored_buffers, 1);
}

static bool is_cpu_buffer(ggml_backend_buffer_t buffer)
{
    return buffer != NULL && buffer->iface.get_base == cpu_buffer_get_base;
}

void ggml__cpu_buffer_usage_changed(ggml_backend_buffer_t buffer)
{
    if (!is_cpu_buffer(buffer))
        return;
    struct cpu_buffer *b = buffer->context;
    const struct ggml__numa_layout *layout = ggml__numa_layout();
    const struct ggml__buffer_place place = ggml__numa_plan_buffer(layout, buffer->usage);
    if (place.policy == GGML__MEM_REPLICATE) {
        make_copies(b, layout);
        return;
    }
    drop_copies(b);
    if (place.policy == GGML__MEM_INTERLEAVE && b->origin != CPU_MEMORY_CALLER)
        ggml__numa_place_memory(b->copies[0], b->size, place, true);
}

void *ggml__cpu_buffer_local_data(const struct ggml_tensor *t, int node)
{
    ggml_backend_buffer_t buffer = t->view_src != NULL ? t->view_src->buffer : t->buffer;
    if (node <= 0 || t->data == NULL || !is_cpu_buffer(buffer))
        return NULL;
    const struct cpu_buffer *b = buffer->context;
    if (node >= b->n_copies)
        return NULL;
    return (char *) b->copies[node] + ggml__cpu_buffer_offset(buffer, t);
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
    const unsigned errors = ggml__errors_logged();
    ggml_backend_buffer_t buffer =
        wrap_memory(&cpu_mapped_buffer_type, cpu_mapped_buffer_iface, ptr, size, size, CPU_MEMORY_CALLER);
    if (buffer == NULL && ggml__errors_logged() == errors)
        ggml__error("out of memory for the buffer of %zu bytes at %p", size, ptr);
    return buffer;
}
