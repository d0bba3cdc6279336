/*
 * gguf-load.c - a GGUF file's tensors into backend buffers
 * (ggml-backend-gguf.h).
 *
 * The metadata reader (gguf.c) checks the table itself: names, types,
 * shapes, and offsets aligned, in order and not overlapping.  What it
 * cannot know without reading the data is whether the file is long enough;
 * every range this file touches is checked against the file's size, taken
 * once from the open descriptor, before the first byte of data is read or
 * mapped.
 *
 * Two ways in:
 *   - reading: pread straight into tensors whose buffer is host memory,
 *     through a bounded staging block and ggml_backend_tensor_set into any
 *     other buffer (device memory, repacked layouts);
 *   - mapping: the data section mapped copy-on-write and wrapped by the
 *     device's buffer_from_host_ptr, when the caller wants host memory of
 *     a device that reports mmap_support.  The mapping lives as long as
 *     that buffer (ggml__buffer_set_release).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ggml-impl.h"
#include "backend-private.h"
#include "ggml-backend-gguf.h"
#include "ggml-cpu.h"

/* Bytes read per call and per progress report. */
#define LOAD_CHUNK ((size_t) 16 << 20)
/* Mapped tensors' addresses are multiples of the file's alignment; below this, read. */
#define MAP_MIN_ALIGNMENT 32

/* An open file and what the loaders need of it. */
struct data_file {
    const char *name;
    int fd;
    uint64_t size;
};

static bool open_data_file(struct data_file *file, const char *fname, const char *func)
{
    file->name = fname;
    file->fd = open(fname, O_RDONLY | O_CLOEXEC);
    if (file->fd < 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s: cannot open: %s", fname, strerror(errno));
        return false;
    }
    struct stat st;
    if (fstat(file->fd, &st) != 0 || st.st_size < 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s: cannot stat: %s", fname, strerror(errno));
        close(file->fd);
        return false;
    }
    file->size = (uint64_t) st.st_size;
    return true;
}

/*
 * The file position of tensor id's data in *start; false (logged as func)
 * when its bytes do not all lie within the file.
 */
static bool tensor_in_file(const struct data_file *file, const struct gguf_context *gguf, int64_t id,
                           uint64_t *start, const char *func)
{
    const uint64_t data = gguf_get_data_offset(gguf);
    const uint64_t offset = gguf_get_tensor_offset(gguf, id);
    const uint64_t size = gguf_get_tensor_size(gguf, id);
    if (data > file->size || offset > file->size - data || size > file->size - data - offset) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "%s: tensor '%s' needs bytes %" PRIu64 " to %" PRIu64 " of the file, which has %" PRIu64
                     " (truncated?)",
                     file->name, gguf_get_tensor_name(gguf, id), data + offset, data + offset + size, file->size);
        return false;
    }
    *start = data + offset;
    return true;
}

/* Reads size bytes at position into dst; false (logged as func) on an error or a short file. */
static bool read_at(const struct data_file *file, void *dst, size_t size, uint64_t position, const char *func)
{
    uint8_t *at = dst;
    while (size > 0) {
        const ssize_t got = pread(file->fd, at, size, (off_t) position);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s: cannot read at offset %" PRIu64 ": %s", file->name,
                         position, got < 0 ? strerror(errno) : "the file ended (changed while loading?)");
            return false;
        }
        at += got;
        size -= (size_t) got;
        position += (uint64_t) got;
    }
    return true;
}

/* Progress reports; a refusal from the callback is logged once as func. */
struct progress {
    ggml_backend_gguf_progress_t callback;
    void *data;
    uint64_t done, total;
};

static bool report(struct progress *progress, uint64_t more, const char *func)
{
    progress->done += more;
    if (progress->callback == NULL || progress->callback(progress->done, progress->total, progress->data))
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                 "the progress callback stopped the load at %" PRIu64 " of %" PRIu64 " bytes", progress->done,
                 progress->total);
    return false;
}

/*
 * The tensor of ctx that receives file tensor id, or NULL when ctx has
 * none of that name.  *fault is set (logged as func) when there is one
 * but it cannot receive the data.
 */
static struct ggml_tensor *receiver(struct ggml_context *ctx, const struct gguf_context *gguf, int64_t id,
                                    bool *fault, const char *func)
{
    const char *name = gguf_get_tensor_name(gguf, id);
    struct ggml_tensor *t = ggml_get_tensor(ctx, name);
    if (t == NULL)
        return NULL;
    const int64_t *ne = gguf_get_tensor_ne(gguf, id);
    const char *why = NULL;
    if (t->type != gguf_get_tensor_type(gguf, id))
        why = "its type differs from the file's";
    else if (t->ne[0] != ne[0] || t->ne[1] != ne[1] || t->ne[2] != ne[2] || t->ne[3] != ne[3])
        why = "its shape differs from the file's";
    else if (!ggml_is_contiguous(t))
        why = "it is not contiguous";
    else if (t->buffer == NULL && ggml_nbytes(t) > 0)
        why = "it is not allocated in a backend buffer";
    if (why != NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "tensor '%s' cannot receive the file's data: %s", name, why);
        *fault = true;
    }
    return t;
}

/* Copies one tensor's bytes from the file; staging is LOAD_CHUNK bytes or NULL when every buffer is host memory. */
static bool load_one(const struct data_file *file, struct ggml_tensor *t, uint64_t start, uint8_t *staging,
                     struct progress *progress, const char *func)
{
    const size_t size = ggml_nbytes(t);
    const bool host = ggml_backend_buffer_is_host(t->buffer);
    for (size_t at = 0; at < size;) {
        const size_t n = size - at < LOAD_CHUNK ? size - at : LOAD_CHUNK;
        if (host) {
            if (!read_at(file, (uint8_t *) t->data + at, n, start + at, func))
                return false;
        } else {
            if (!read_at(file, staging, n, start + at, func))
                return false;
            ggml_backend_tensor_set(t, staging, at, n);
        }
        at += n;
        if (!report(progress, n, func))
            return false;
    }
    return true;
}

/* A file tensor's receiver in the caller's context and where its bytes start in the file. */
struct placement {
    struct ggml_tensor *t; /* NULL: the context has no tensor of that name, or it is empty */
    uint64_t start;
};

static bool load_tensors(const struct data_file *file, const struct gguf_context *gguf, struct ggml_context *ctx,
                         struct progress *progress, const char *func)
{
    const int64_t n = gguf_get_n_tensors(gguf);
    struct placement *places = calloc(n > 0 ? (size_t) n : 1, sizeof *places);
    if (places == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory for the places of %" PRId64 " tensors", n);
        return false;
    }
    /* every receiver and range checked before the first byte is read */
    bool staging_needed = false, ok = true;
    progress->done = progress->total = 0;
    for (int64_t id = 0; ok && id < n; id++) {
        bool fault = false;
        struct ggml_tensor *t = receiver(ctx, gguf, id, &fault, func);
        ok = !fault && (t == NULL || tensor_in_file(file, gguf, id, &places[id].start, func));
        if (!ok || t == NULL || ggml_nbytes(t) == 0)
            continue;
        places[id].t = t;
        progress->total += ggml_nbytes(t);
        staging_needed = staging_needed || !ggml_backend_buffer_is_host(t->buffer);
    }
    uint8_t *staging = NULL;
    if (ok && staging_needed && (staging = malloc(LOAD_CHUNK)) == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory for a %zu-byte staging block", LOAD_CHUNK);
        ok = false;
    }
    if (ok) {
        posix_fadvise(file->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        ok = report(progress, 0, func);
    }
    for (int64_t id = 0; ok && id < n; id++)
        if (places[id].t != NULL)
            ok = load_one(file, places[id].t, places[id].start, staging, progress, func);
    free(staging);
    free(places);
    return ok;
}

bool ggml_backend_gguf_load_tensors(const char *fname, const struct gguf_context *gguf, struct ggml_context *ctx,
                                    ggml_backend_gguf_progress_t progress, void *progress_data)
{
    if (fname == NULL || gguf == NULL || ctx == NULL) {
        ggml__error("%s is NULL", fname == NULL ? "fname" : gguf == NULL ? "gguf" : "ctx");
        return false;
    }
    struct data_file file;
    if (!open_data_file(&file, fname, __func__))
        return false;
    struct progress reports = { .callback = progress, .data = progress_data };
    const bool ok = load_tensors(&file, gguf, ctx, &reports, __func__);
    close(file.fd);
    return ok;
}

/* ---------------------------------------------------------------- mapping */

struct mapping {
    void *addr;
    size_t length;
};

static void unmap(void *data)
{
    struct mapping *map = data;
    munmap(map->addr, map->length);
    free(map);
}

/* The bytes of all of gguf's tensors, padding left out. */
static uint64_t tensor_bytes(const struct gguf_context *gguf)
{
    uint64_t total = 0;
    for (int64_t id = 0; id < gguf_get_n_tensors(gguf); id++)
        total += gguf_get_tensor_size(gguf, id);
    return total;
}

/* True when the tensors can be mapped rather than read for buft; says nothing either way. */
static bool mappable(ggml_backend_buffer_type_t buft, const struct gguf_context *gguf)
{
    ggml_backend_dev_t dev = ggml_backend_buft_get_device(buft);
    if (dev == NULL || !ggml_backend_buft_is_host(buft) || tensor_bytes(gguf) == 0)
        return false;
    struct ggml_backend_dev_props props;
    ggml_backend_dev_get_props(dev, &props);
    const long page = sysconf(_SC_PAGESIZE);
    const size_t alignment = gguf_get_alignment(gguf);
    return props.caps.mmap_support && props.caps.buffer_from_host_ptr && alignment >= MAP_MIN_ALIGNMENT &&
           page > 0 && alignment <= (size_t) page;
}

/*
 * Maps the data section of file and places ctx's tensors (those of gguf)
 * in a buffer of buft's device wrapping the mapping; NULL (logged as
 * func) on an error.
 */
static ggml_backend_buffer_t map_tensors(const struct data_file *file, const struct gguf_context *gguf,
                                         struct ggml_context *ctx, ggml_backend_buffer_type_t buft,
                                         struct progress *progress, const char *func)
{
    const int64_t n = gguf_get_n_tensors(gguf);
    uint64_t end = gguf_get_data_offset(gguf);
    size_t largest = 0;
    for (int64_t id = 0; id < n; id++) {
        uint64_t start;
        if (!tensor_in_file(file, gguf, id, &start, func))
            return NULL;
        const size_t size = gguf_get_tensor_size(gguf, id);
        end = start + size > end ? start + size : end;
        largest = size > largest ? size : largest;
    }
    const uint64_t data = gguf_get_data_offset(gguf);
    const uint64_t map_start = data - data % (uint64_t) sysconf(_SC_PAGESIZE);
    struct mapping *map = malloc(sizeof *map);
    if (map == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory");
        return NULL;
    }
    map->length = (size_t) (end - map_start);
    map->addr = mmap(NULL, map->length, PROT_READ | PROT_WRITE, MAP_PRIVATE, file->fd, (off_t) map_start);
    if (map->addr == MAP_FAILED) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s: cannot map %zu bytes: %s", file->name, map->length,
                     strerror(errno));
        free(map);
        return NULL;
    }
    uint8_t *base = (uint8_t *) map->addr + (data - map_start);
    ggml_backend_buffer_t buffer = ggml_backend_dev_buffer_from_host_ptr(ggml_backend_buft_get_device(buft), base,
                                                                         (size_t) (end - data), largest);
    if (buffer == NULL || !ggml__buffer_set_release(buffer, unmap, map)) {
        ggml_backend_buffer_free(buffer);
        unmap(map);
        return NULL; /* logged */
    }
    progress->done = 0;
    progress->total = tensor_bytes(gguf);
    bool ok = report(progress, 0, func);
    for (int64_t id = 0; ok && id < n; id++) {
        struct ggml_tensor *t = ggml_get_tensor(ctx, gguf_get_tensor_name(gguf, id));
        ok = t != NULL && ggml_backend_tensor_alloc(buffer, t, base + gguf_get_tensor_offset(gguf, id)) ==
                              GGML_STATUS_SUCCESS;
    }
    if (ok) {
        madvise(map->addr, map->length, MADV_WILLNEED);
        ok = report(progress, progress->total, func);
    }
    if (!ok) {
        ggml_backend_buffer_free(buffer);
        return NULL;
    }
    return buffer;
}

/* ------------------------------------------------------------- the whole job */

ggml_backend_buffer_t ggml_backend_gguf_load(const char *fname, const struct ggml_backend_gguf_load_params *params,
                                             struct ggml_context **ctx, struct gguf_context **gguf)
{
    if (gguf != NULL)
        *gguf = NULL;
    if (fname == NULL || ctx == NULL) {
        ggml__error("%s is NULL", fname == NULL ? "fname" : "ctx");
        return NULL;
    }
    *ctx = NULL;
    const struct ggml_backend_gguf_load_params defaults = { 0 };
    if (params == NULL)
        params = &defaults;
    ggml_backend_buffer_type_t buft = params->buft != NULL ? params->buft : ggml_backend_cpu_buffer_type();

    struct ggml_context *tensors = NULL;
    struct gguf_context *meta = gguf_init_from_file(fname, (struct gguf_init_params) { true, &tensors });
    if (meta == NULL)
        return NULL; /* logged */
    struct data_file file;
    if (!open_data_file(&file, fname, __func__)) {
        ggml_free(tensors);
        gguf_free(meta);
        return NULL;
    }

    struct progress reports = { .callback = params->progress, .data = params->progress_data };
    ggml_backend_buffer_t buffer = NULL;
    if (!params->no_mmap && mappable(buft, meta)) {
        buffer = map_tensors(&file, meta, tensors, buft, &reports, __func__);
    } else {
        buffer = ggml_backend_alloc_ctx_tensors_from_buft(tensors, buft);
        if (buffer == NULL && tensor_bytes(meta) == 0)
            buffer = ggml_backend_buft_alloc_buffer(buft, 0); /* nothing to hold */
        if (buffer != NULL && !load_tensors(&file, meta, tensors, &reports, __func__)) {
            ggml_backend_buffer_free(buffer);
            buffer = NULL;
        }
    }
    close(file.fd);
    if (buffer == NULL) {
        ggml_free(tensors);
        gguf_free(meta);
        return NULL; /* logged */
    }
    ggml_backend_buffer_set_usage(buffer, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    *ctx = tensors;
    if (gguf != NULL)
        *gguf = meta;
    else
        gguf_free(meta);
    return buffer;
}
