/*
 * context.c - contexts: arenas that hold tensor metadata, graphs and, unless
 * no_alloc is set, tensor data.
 *
 * Layout of the arena: objects one after another, each a struct ggml_object
 * header followed by its payload.  Offsets and sizes are multiples of
 * GGML_MEM_ALIGN, so a tensor costs exactly ggml_tensor_overhead() bytes of
 * metadata plus its data padded to GGML_MEM_ALIGN.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "ggml-impl.h"

_Static_assert(GGML__OBJECT_SIZE % GGML_MEM_ALIGN == 0,
               "object headers keep payloads aligned");
_Static_assert(sizeof(struct ggml_tensor) % GGML_MEM_ALIGN == 0,
               "tensor data following the struct stays aligned");

/* Alignment of arenas the library allocates itself (a cache line). */
#define CONTEXT_BUFFER_ALIGN 64

struct ggml_context *ggml_init(struct ggml_init_params params)
{
    size_t mem_size = params.mem_size;

    if (mem_size == 0)
        mem_size = GGML_MEM_ALIGN;
    if (params.mem_buffer == NULL) {
        if (mem_size > SIZE_MAX - GGML_MEM_ALIGN) {
            ggml__error("mem_size %zu is too large", params.mem_size);
            return NULL;
        }
        mem_size = GGML_PAD(mem_size, GGML_MEM_ALIGN);
    } else if ((uintptr_t) params.mem_buffer % GGML_MEM_ALIGN != 0) {
        ggml__error("mem_buffer %p is not aligned to GGML_MEM_ALIGN (%d bytes)",
                    params.mem_buffer, GGML_MEM_ALIGN);
        return NULL;
    }

    struct ggml_context *ctx = malloc(sizeof *ctx);
    if (ctx == NULL) {
        ggml__error("out of memory allocating a context");
        return NULL;
    }

    void *buffer = params.mem_buffer;
    if (buffer == NULL) {
        if (posix_memalign(&buffer, CONTEXT_BUFFER_ALIGN, mem_size) != 0) {
            ggml__error("cannot allocate %zu bytes for the context's memory pool", mem_size);
            free(ctx);
            return NULL;
        }
    }

    *ctx = (struct ggml_context) {
        .mem_size = mem_size,
        .mem_buffer = buffer,
        .mem_buffer_owned = params.mem_buffer == NULL,
        .no_alloc = params.no_alloc,
        .n_objects = 0,
        .objects_begin = NULL,
        .objects_end = NULL,
    };
    return ctx;
}

void ggml_reset(struct ggml_context *ctx)
{
    if (ctx == NULL)
        return;
    ctx->n_objects = 0;
    ctx->objects_begin = NULL;
    ctx->objects_end = NULL;
}

void ggml_free(struct ggml_context *ctx)
{
    if (ctx == NULL)
        return;
    if (ctx->mem_buffer_owned)
        free(ctx->mem_buffer);
    free(ctx);
}

size_t ggml_used_mem(const struct ggml_context *ctx)
{
    if (ctx == NULL) {
        ggml__error("ctx is NULL");
        return 0;
    }
    return ctx->objects_end ? ctx->objects_end->offs + ctx->objects_end->size : 0;
}

bool ggml_get_no_alloc(struct ggml_context *ctx)
{
    if (ctx == NULL) {
        ggml__error("ctx is NULL");
        return false;
    }
    return ctx->no_alloc;
}

void ggml_set_no_alloc(struct ggml_context *ctx, bool no_alloc)
{
    if (ctx == NULL) {
        ggml__error("ctx is NULL");
        return;
    }
    ctx->no_alloc = no_alloc;
}

void *ggml_get_mem_buffer(const struct ggml_context *ctx)
{
    if (ctx == NULL) {
        ggml__error("ctx is NULL");
        return NULL;
    }
    return ctx->mem_buffer;
}

size_t ggml_get_mem_size(const struct ggml_context *ctx)
{
    if (ctx == NULL) {
        ggml__error("ctx is NULL");
        return 0;
    }
    return ctx->mem_size;
}

size_t ggml_tensor_overhead(void)
{
    return GGML__OBJECT_SIZE + GGML_PAD(sizeof(struct ggml_tensor), GGML_MEM_ALIGN);
}

/*
 * Appends an object with a payload of at least size bytes.  Returns NULL
 * after logging (on behalf of func) when the arena cannot hold it.
 */
struct ggml_object *ggml__new_object(struct ggml_context *ctx, enum ggml_object_type type,
                                     size_t size, const char *func)
{
    const size_t cur_end = ctx->objects_end ? ctx->objects_end->offs + ctx->objects_end->size : 0;

    if (size > SIZE_MAX - GGML_MEM_ALIGN - GGML__OBJECT_SIZE - cur_end) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "object of %zu bytes is too large", size);
        return NULL;
    }
    const size_t size_needed = GGML_PAD(size, GGML_MEM_ALIGN);
    if (cur_end + GGML__OBJECT_SIZE + size_needed > ctx->mem_size) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "context is full: needs %zu more bytes, %zu of %zu in use",
                     GGML__OBJECT_SIZE + size_needed, cur_end, ctx->mem_size);
        return NULL;
    }

    struct ggml_object *obj = (struct ggml_object *) ((char *) ctx->mem_buffer + cur_end);
    *obj = (struct ggml_object) {
        .offs = cur_end + GGML__OBJECT_SIZE,
        .size = size_needed,
        .next = NULL,
        .type = type,
    };
    if (ctx->objects_end)
        ctx->objects_end->next = obj;
    else
        ctx->objects_begin = obj;
    ctx->objects_end = obj;
    ctx->n_objects++;
    return obj;
}

void *ggml_new_buffer(struct ggml_context *ctx, size_t nbytes)
{
    if (ctx == NULL) {
        ggml__error("ctx is NULL");
        return NULL;
    }
    struct ggml_object *obj = ggml__new_object(ctx, GGML_OBJECT_TYPE_WORK_BUFFER, nbytes, __func__);
    return obj ? (char *) ctx->mem_buffer + obj->offs : NULL;
}

/* ------------------------------------------------------------ enumeration */

static struct ggml_tensor *object_tensor(const struct ggml_context *ctx, const struct ggml_object *obj)
{
    return (struct ggml_tensor *) ((char *) ctx->mem_buffer + obj->offs);
}

static struct ggml_tensor *first_tensor_from(const struct ggml_context *ctx, const struct ggml_object *obj)
{
    for (; obj != NULL; obj = obj->next)
        if (obj->type == GGML_OBJECT_TYPE_TENSOR)
            return object_tensor(ctx, obj);
    return NULL;
}

struct ggml_tensor *ggml_get_first_tensor(const struct ggml_context *ctx)
{
    if (ctx == NULL) {
        ggml__error("ctx is NULL");
        return NULL;
    }
    return first_tensor_from(ctx, ctx->objects_begin);
}

struct ggml_tensor *ggml_get_next_tensor(const struct ggml_context *ctx, struct ggml_tensor *tensor)
{
    if (ctx == NULL || tensor == NULL) {
        ggml__error("%s is NULL", ctx == NULL ? "ctx" : "tensor");
        return NULL;
    }
    const struct ggml_object *obj =
        (const struct ggml_object *) ((const char *) tensor - GGML__OBJECT_SIZE);
    return first_tensor_from(ctx, obj->next);
}

struct ggml_tensor *ggml_get_tensor(struct ggml_context *ctx, const char *name)
{
    if (ctx == NULL || name == NULL) {
        ggml__error("%s is NULL", ctx == NULL ? "ctx" : "name");
        return NULL;
    }
    for (struct ggml_tensor *t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t))
        if (strcmp(t->name, name) == 0)
            return t;
    return NULL;
}

size_t ggml_get_max_tensor_size(const struct ggml_context *ctx)
{
    if (ctx == NULL) {
        ggml__error("ctx is NULL");
        return 0;
    }
    size_t max_size = 0;
    for (struct ggml_tensor *t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        size_t bytes = ggml_nbytes(t);
        if (bytes > max_size)
            max_size = bytes;
    }
    return max_size;
}

static const char *object_type_name(enum ggml_object_type type)
{
    switch (type) {
    case GGML_OBJECT_TYPE_TENSOR:      return "tensor";
    case GGML_OBJECT_TYPE_GRAPH:       return "graph";
    case GGML_OBJECT_TYPE_WORK_BUFFER: return "buffer";
    }
    return "unknown";
}

void ggml_print_object(const struct ggml_object *obj)
{
    if (obj == NULL) {
        ggml__error("obj is NULL");
        return;
    }
    ggml__log_raw(GGML_LOG_LEVEL_INFO, " - %s object: offset = %zu, size = %zu, next = %p\n",
                  object_type_name(obj->type), obj->offs, obj->size, (const void *) obj->next);
}

void ggml_print_objects(const struct ggml_context *ctx)
{
    if (ctx == NULL) {
        ggml__error("ctx is NULL");
        return;
    }
    ggml__log_raw(GGML_LOG_LEVEL_INFO, "context %p: %d objects, %zu of %zu bytes used\n",
                  (const void *) ctx, ctx->n_objects, ggml_used_mem(ctx), ctx->mem_size);
    for (const struct ggml_object *obj = ctx->objects_begin; obj; obj = obj->next)
        ggml_print_object(obj);
}
